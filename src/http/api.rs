//! Route registration that records the OpenAPI document's operations as
//! it builds the router: a route cannot exist without its documentation,
//! and the document cannot list a route that does not exist. The document
//! itself is written when it is first asked for ([`OpenApi::document`]):
//! generating every schema took start-up time and memory that a server
//! nobody asks for it would never use.
//!
//! Schemas come from the same Rust types the handlers (de)serialize, via
//! schemars (JSON Schema 2020-12, which OpenAPI 3.1 uses as is).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter};
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

/// How a body's JSON Schema is made: [`json()`] for a Rust type's, [`object()`]
/// for any JSON object. A function, so that a [`Doc`] is a constant beside
/// its handler.
pub type SchemaOf = fn(&mut SchemaGenerator) -> Schema;

/// The schema of `T`, registered in the document's components.
pub fn json<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// Any JSON object (the configuration, the OpenAPI document itself).
pub fn object(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "object" })
}

/// What a request or response body is.
pub enum Body {
    None,
    /// JSON of a Rust type (its schema).
    Json(SchemaOf),
    /// Plain text.
    Text,
    /// Bytes of the given media type(s).
    Bytes(&'static [&'static str]),
    /// multipart/form-data file upload (what its files are), or the given
    /// JSON as an alternative.
    MultipartOr(&'static str, SchemaOf),
    /// text/event-stream.
    Events,
}

/// The documentation of one operation.
pub struct Doc {
    /// The `operationId` (what a generated client names the call).
    pub id: &'static str,
    /// The group it is listed under.
    pub tag: &'static str,
    pub summary: &'static str,
    pub request: Body,
    pub response: Body,
    /// Error statuses this operation can answer (besides the common ones);
    /// 304 (not modified), for an operation with an `ETag`, is listed here
    /// too.
    pub errors: &'static [u16],
    /// Optional query parameters.
    pub queries: &'static [QueryParam],
}

/// An optional query parameter.
pub struct QueryParam {
    pub name: &'static str,
    pub description: &'static str,
    /// Its JSON Schema, as JSON text.
    pub schema: &'static str,
}

pub struct Api<S> {
    routes: BTreeMap<String, MethodRouter<S>>,
    operations: Vec<Operation>,
    /// Added to every `operationId` (see [`Api::with_id_suffix`]).
    id_suffix: &'static str,
}

/// A documented route, as registered.
struct Operation {
    path: String,
    method: &'static str,
    doc: Doc,
    id_suffix: &'static str,
}

/// The OpenAPI document of the registered routes, written once, when first
/// asked for.
pub struct OpenApi {
    version: String,
    operations: Vec<Operation>,
    written: OnceLock<Value>,
}

impl<S: Clone + Send + Sync + 'static> Default for Api<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Clone + Send + Sync + 'static> Api<S> {
    pub fn new() -> Self {
        Api {
            routes: BTreeMap::new(),
            operations: Vec::new(),
            id_suffix: "",
        }
    }

    /// Registers the routes `add` adds with `suffix` on their
    /// `operationId`s (the same routes under another prefix).
    pub fn with_id_suffix(&mut self, suffix: &'static str, add: impl FnOnce(&mut Self)) {
        let before = std::mem::replace(&mut self.id_suffix, suffix);
        add(self);
        self.id_suffix = before;
    }

    /// Adds `handler` for `method` at `path` (axum syntax, `{param}`).
    pub fn route<H, T>(&mut self, method: &str, path: &str, doc: Doc, handler: H)
    where
        H: Handler<T, S>,
        T: 'static,
    {
        let (filter, method) = match method {
            "GET" => (MethodFilter::GET, "get"),
            "POST" => (MethodFilter::POST, "post"),
            "PUT" => (MethodFilter::PUT, "put"),
            "DELETE" => (MethodFilter::DELETE, "delete"),
            other => panic!("unsupported method {other}"),
        };
        let entry = self
            .routes
            .remove(path)
            .unwrap_or_default()
            .on(filter, handler);
        self.routes.insert(path.to_owned(), entry);
        self.operations.push(Operation {
            path: path.to_owned(),
            method,
            doc,
            id_suffix: self.id_suffix,
        });
    }

    /// The router and the OpenAPI document, as it reads without a token
    /// ([`secured`] adds what a token changes).
    pub fn finish(self, version: &str) -> (Router<S>, OpenApi) {
        let router = self
            .routes
            .into_iter()
            .fold(Router::new(), |r, (path, mr)| r.route(&path, mr));
        let openapi = OpenApi {
            version: version.to_owned(),
            operations: self.operations,
            written: OnceLock::new(),
        };
        (router, openapi)
    }
}

impl OpenApi {
    /// The document (written on the first call).
    pub fn document(&self) -> &Value {
        self.written.get_or_init(|| self.write())
    }

    fn write(&self) -> Value {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.definitions_path = "#/components/schemas".into();
        });
        let mut generator = settings.into_generator();
        let mut paths: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
        for op in &self.operations {
            let written = operation(&op.path, &op.doc, op.id_suffix, &mut generator);
            paths
                .entry(&op.path)
                .or_default()
                .insert(op.method.to_owned(), written);
        }
        let mut schemas: Map<String, Value> =
            generator.take_definitions(true).into_iter().collect();
        name_union_variants(&mut schemas);
        schemas.insert("Error".into(), error_schema());
        let components = json!({
            "schemas": schemas,
            "responses": {
                "Error": {
                    "description": "An error: a status and a JSON body naming what was wrong",
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
                }
            }
        });
        json!({
            "openapi": "3.1.0",
            "info": {
                "title": "quire HTTP API",
                "version": self.version,
                "description": "The headless quire workbench. Un-addressed routes act on the current session; the same routes under /api/v1/sessions/{sessionId} act on that session."
            },
            "paths": paths,
            "components": components,
        })
    }
}

/// The OpenAPI document of a server with a token (or users): every
/// operation but `GET /healthz` needs one, and may answer 401 (a wrong
/// token), 403 (a role that does not allow it) or 429 (an address refused
/// after too many failures). Applied per request, as a reload may add or
/// remove the token.
pub fn secured(open: &Value) -> Value {
    let mut doc = open.clone();
    if let Some(paths) = doc["paths"].as_object_mut() {
        for (path, ops) in paths.iter_mut() {
            if path == "/healthz" {
                continue;
            }
            for op in ops.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                op["security"] = json!([{ "bearer": [] }]);
                for status in ["401", "403", "429"] {
                    op["responses"][status] = json!({ "$ref": "#/components/responses/Error" });
                }
            }
        }
    }
    doc["components"]["securitySchemes"] =
        json!({ "bearer": { "type": "http", "scheme": "bearer" } });
    doc
}

/// Gives each variant of a tagged union (an inline object whose `type`
/// property is one constant) its own component, `{Union}{Tag}`, and makes
/// the union refer to them. Generated clients (e.g. openapi-python-client)
/// cannot read a recursive union of inline variants (`Op`'s `Batch` holds
/// `Op`s); named variants they can.
fn name_union_variants(schemas: &mut Map<String, Value>) {
    let unions: Vec<String> = schemas
        .iter()
        .filter(|(_, s)| {
            s.get("oneOf")
                .and_then(Value::as_array)
                .is_some_and(|vs| vs.iter().all(|v| tag_of(v).is_some()))
        })
        .map(|(name, _)| name.clone())
        .collect();
    for name in unions {
        let Some(Value::Array(variants)) = schemas
            .get_mut(&name)
            .and_then(|s| s.get_mut("oneOf"))
            .map(std::mem::take)
        else {
            continue;
        };
        let mut refs = Vec::with_capacity(variants.len());
        for variant in variants {
            let tag = tag_of(&variant).unwrap_or_default();
            let mut chars = tag.chars();
            let tag: String = chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
                .collect();
            let variant_name = format!("{name}{tag}");
            refs.push(json!({ "$ref": format!("#/components/schemas/{variant_name}") }));
            schemas.insert(variant_name, variant);
        }
        if let Some(union) = schemas.get_mut(&name) {
            union["oneOf"] = Value::Array(refs);
        }
    }
}

/// The constant `type` of a tagged union's inline variant.
fn tag_of(variant: &Value) -> Option<String> {
    if variant.get("type")? != "object" {
        return None;
    }
    let tag = variant.get("properties")?.get("type")?;
    tag.get("const")
        .or_else(|| tag.get("enum").and_then(|e| e.get(0)))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": { "type": "string" },
                    "message": { "type": "string" },
                    "stale": {
                        "description": "With code `conflict` for an edit whose `basedOn` no longer holds: what it was made from and what the node says now (null: nothing)",
                        "type": "object",
                        "required": ["pageId", "nodeId", "field", "basedOn", "current"],
                        "properties": {
                            "pageId": { "type": "string", "format": "uuid" },
                            "nodeId": { "type": "string", "format": "uuid" },
                            "field": { "type": "string", "enum": ["text", "translation"] },
                            "basedOn": { "type": ["string", "null"] },
                            "current": { "type": ["string", "null"] }
                        }
                    }
                }
            }
        }
    })
}

fn content(body: &Body, generator: &mut SchemaGenerator) -> Option<Value> {
    match body {
        Body::None => None,
        Body::Json(schema) => Some(json!({ "application/json": { "schema": schema(generator) } })),
        Body::Text => Some(json!({ "text/plain": { "schema": { "type": "string" } } })),
        Body::Bytes(types) => {
            let mut map = Map::new();
            for t in *types {
                // A JSON body is a JSON value (here an object), not a string.
                let schema = if *t == "application/json" {
                    json!({ "type": "object" })
                } else {
                    json!({ "type": "string", "contentMediaType": t })
                };
                map.insert((*t).to_owned(), json!({ "schema": schema }));
            }
            Some(Value::Object(map))
        }
        Body::MultipartOr(files, schema) => Some(json!({
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "description": files,
                    "properties": { "file": { "type": "array", "items": { "type": "string", "contentMediaType": "application/octet-stream" } } }
                }
            },
            "application/json": { "schema": schema(generator) }
        })),
        Body::Events => Some(json!({
            "text/event-stream": {
                // One event, as OpenAPI 3.2's `itemSchema` and schemathesis
                // read an event stream's schema.
                "schema": {
                    "type": "object",
                    "description": "Server-sent events: id = seq, event = the variant name, data = the event JSON",
                    "properties": {
                        "id": { "type": "string" },
                        "event": { "type": "string" },
                        "data": { "type": "string", "contentMediaType": "application/json" }
                    },
                    "required": ["event", "data"]
                }
            }
        })),
    }
}

fn operation(path: &str, doc: &Doc, id_suffix: &str, generator: &mut SchemaGenerator) -> Value {
    let mut op = Map::new();
    op.insert(
        "operationId".into(),
        json!(format!("{}{id_suffix}", doc.id)),
    );
    op.insert("tags".into(), json!([doc.tag]));
    op.insert("summary".into(), json!(doc.summary));
    let queries = doc.queries.iter().map(|q| {
        let schema: Value = serde_json::from_str(q.schema)
            .unwrap_or_else(|e| panic!("the schema of query `{}`: {e}", q.name));
        json!({ "name": q.name, "in": "query", "required": false, "description": q.description, "schema": schema })
    });
    let params: Vec<Value> = path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
        .chain(queries)
        .collect();
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    if let Some(content) = content(&doc.request, generator) {
        op.insert(
            "requestBody".into(),
            json!({ "required": true, "content": content }),
        );
    }
    let mut responses = Map::new();
    let mut ok = json!({ "description": "Success" });
    if let Some(content) = content(&doc.response, generator) {
        ok["content"] = content;
    }
    responses.insert("200".into(), ok);
    // 401 is added by `finish` when a token is configured.
    for status in doc.errors.iter().chain(&[403, 500]) {
        let response = if *status == 304 {
            // Not an error: the client's cached copy (its ETag) is current.
            json!({ "description": "Not modified: the ETag sent in If-None-Match is current" })
        } else {
            json!({ "$ref": "#/components/responses/Error" })
        };
        responses.insert(status.to_string(), response);
    }
    op.insert("responses".into(), Value::Object(responses));
    Value::Object(op)
}
