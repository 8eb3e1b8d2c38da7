//! Route registration that writes the OpenAPI document as it builds the
//! router: a route cannot exist without its documentation, and the
//! document cannot list a route that does not exist.
//!
//! Schemas come from the same Rust types the handlers (de)serialize, via
//! schemars (JSON Schema 2020-12, which OpenAPI 3.1 uses as is).

use std::collections::BTreeMap;

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter};
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

/// What a request or response body is.
pub enum Body {
    None,
    /// JSON of a Rust type (its schema).
    Json(Schema),
    /// Plain text.
    Text,
    /// Bytes of the given media type(s).
    Bytes(&'static [&'static str]),
    /// multipart/form-data file upload, or the given JSON as an alternative.
    MultipartOr(Schema),
    /// text/event-stream.
    Events,
}

/// The documentation of one operation.
pub struct Doc {
    pub summary: &'static str,
    pub request: Body,
    pub response: Body,
    /// Error statuses this operation can answer (besides the common ones).
    pub errors: &'static [u16],
}

pub struct Api<S> {
    routes: BTreeMap<String, MethodRouter<S>>,
    paths: BTreeMap<String, Map<String, Value>>,
    generator: SchemaGenerator,
}

impl<S: Clone + Send + Sync + 'static> Default for Api<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Clone + Send + Sync + 'static> Api<S> {
    pub fn new() -> Self {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.definitions_path = "#/components/schemas".into();
        });
        Api {
            routes: BTreeMap::new(),
            paths: BTreeMap::new(),
            generator: settings.into_generator(),
        }
    }

    /// The schema of `T`, registered in the document's components.
    pub fn schema<T: JsonSchema>(&mut self) -> Schema {
        self.generator.subschema_for::<T>()
    }

    /// Adds `handler` for `method` at `path` (axum syntax, `{param}`).
    pub fn route<H, T>(&mut self, method: &str, path: &str, doc: Doc, handler: H)
    where
        H: Handler<T, S>,
        T: 'static,
    {
        let filter = match method {
            "GET" => MethodFilter::GET,
            "POST" => MethodFilter::POST,
            "PUT" => MethodFilter::PUT,
            "DELETE" => MethodFilter::DELETE,
            other => panic!("unsupported method {other}"),
        };
        let entry = self
            .routes
            .remove(path)
            .unwrap_or_default()
            .on(filter, handler);
        self.routes.insert(path.to_owned(), entry);
        let op = operation(path, &doc);
        self.paths
            .entry(path.to_owned())
            .or_default()
            .insert(method.to_ascii_lowercase(), op);
    }

    /// The router and the OpenAPI document.
    pub fn finish(mut self, version: &str) -> (Router<S>, Value) {
        let schemas: Map<String, Value> =
            self.generator.take_definitions(true).into_iter().collect();
        let doc = json!({
            "openapi": "3.1.0",
            "info": {
                "title": "quire HTTP API",
                "version": version,
                "description": "The headless quire workbench. Un-addressed routes act on the current session; the same routes under /api/v1/sessions/{sessionId} act on that session."
            },
            "paths": self.paths,
            "components": {
                "schemas": schemas,
                "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
                "responses": {
                    "Error": {
                        "description": "An error: a status and a JSON body naming what was wrong",
                        "content": { "application/json": { "schema": error_schema() } }
                    }
                }
            },
            "security": [ { "bearer": [] } ]
        });
        let router = self
            .routes
            .into_iter()
            .fold(Router::new(), |r, (path, mr)| r.route(&path, mr));
        (router, doc)
    }
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
                    "message": { "type": "string" }
                }
            }
        }
    })
}

fn content(body: &Body) -> Option<Value> {
    match body {
        Body::None => None,
        Body::Json(schema) => Some(json!({ "application/json": { "schema": schema } })),
        Body::Text => Some(json!({ "text/plain": { "schema": { "type": "string" } } })),
        Body::Bytes(types) => {
            let mut map = Map::new();
            for t in *types {
                map.insert(
                    (*t).to_owned(),
                    json!({ "schema": { "type": "string", "contentMediaType": t } }),
                );
            }
            Some(Value::Object(map))
        }
        Body::MultipartOr(schema) => Some(json!({
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "description": "One or more image files (PNG, JPEG, WebP); one page each, in natural file name order",
                    "properties": { "file": { "type": "array", "items": { "type": "string", "contentMediaType": "application/octet-stream" } } }
                }
            },
            "application/json": { "schema": schema }
        })),
        Body::Events => Some(json!({
            "text/event-stream": {
                "schema": { "type": "string", "description": "Server-sent events: id = seq, event = the variant name, data = the event JSON" }
            }
        })),
    }
}

fn operation(path: &str, doc: &Doc) -> Value {
    let mut op = Map::new();
    op.insert("summary".into(), json!(doc.summary));
    let params: Vec<Value> = path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
        .collect();
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    if let Some(content) = content(&doc.request) {
        op.insert(
            "requestBody".into(),
            json!({ "required": true, "content": content }),
        );
    }
    let mut responses = Map::new();
    let mut ok = json!({ "description": "Success" });
    if let Some(content) = content(&doc.response) {
        ok["content"] = content;
    }
    responses.insert("200".into(), ok);
    for status in doc.errors.iter().chain(&[401, 403, 500]) {
        responses.insert(
            status.to_string(),
            json!({ "$ref": "#/components/responses/Error" }),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
    Value::Object(op)
}
