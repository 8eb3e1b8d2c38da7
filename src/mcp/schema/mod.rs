//! How the tools' JSON Schemas are presented: generated from the Rust types
//! (schemars, draft 2020-12), then rewritten into the vocabulary every
//! model provider reads (`05-mcp.md`, "Schemas that every model provider
//! accepts"): OpenAI's strict function calling and Gemini's function
//! declarations convert them without a fallback, and strict Ajv compiles
//! them.
//!
//! The rewrite keeps what a value may be; it only changes how that is said:
//! `oneOf` becomes `anyOf` (the variants of quire's unions are told apart
//! by their `type` tag, so at most one can match either way), a `const`
//! becomes a one-value `enum`, non-standard `format`s (`uint64`, `double`)
//! are dropped (the `minimum` beside them stays), and annotations no
//! provider reads (`$schema`, `examples`) go.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

mod locate;
pub use locate::locate;

/// The keywords a presented schema may use: plain draft 2020-12 that
/// Gemini's `JSONSchema` accepts (and OpenAI's strict mode reads).
pub const KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "default",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "additionalProperties",
    "anyOf",
    "uniqueItems",
    "$ref",
    "$defs",
];

/// Formats of draft 2020-12 (section 7.3) that a value may carry.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The presented input schema of `T`, as an MCP tool schema object.
///
/// Every byte of `tools/list` is in a model's context on every turn, so
/// what says nothing to a model goes: the root's `title` and
/// `description` (a Rust type name and a note for programmers; the tool's
/// description speaks to the model), defaults that are `null`, objects or
/// arrays (an absent field is null, an unplaced box or empty), definitions of
/// plain values (ids, hashes, enums), which are written in place instead,
/// and `additionalProperties: false` (a stray field is still refused, as
/// `invalid_arguments` naming it, and OpenAI's strict mode closes every
/// object itself). Fields quire fills in itself ([`RECORDED`]) are left
/// out too: an op may carry them, but a model never needs to. Ids and
/// blob hashes are plain strings (no `uuid` format, no hex pattern): a
/// model copies them from results and never makes one up, and the server
/// checks every one it is sent.
pub fn of<T: JsonSchema>() -> Arc<JsonObject> {
    let mut value = refs_for_strict_mode(merge_identical_definitions(inline_plain_definitions(
        without_structured_defaults(without_left_out_kinds(without_recorded(open_objects(
            plain_ids(portable(generate::<T>())),
        )))),
    )));
    // A definition's description documents a Rust type; the properties
    // that use it carry their own.
    if let Some(Value::Object(defs)) = value.get_mut("$defs") {
        for def in defs.values_mut() {
            if let Value::Object(d) = def {
                d.remove("description");
            }
        }
    }
    if let Value::Object(map) = &mut value {
        map.remove("title");
        map.remove("description");
    }
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

/// The presented output schema of `T`: its top-level properties with
/// their types, nested objects and arrays as `object` and `array` only.
/// Clients validate results against it (every result does validate); the
/// model reads the result itself, and the full shapes would double
/// `tools/list`.
pub fn output_of<T: JsonSchema>() -> Arc<JsonObject> {
    let value = shallow(&portable(generate::<T>()));
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

/// Properties quire fills in itself, which a model never needs to write: a
/// translation's `origin` (who wrote it, when; recorded on every edit), a
/// subtitle cue's `timing` (from the imported file), a rendered image's
/// `renderedFrom` (the `render` engine's digest) and a text node's `region`
/// (the balloon outline the `detect` engine finds). An op may still carry
/// them.
pub const RECORDED: &[&str] = &["origin", "timing", "renderedFrom", "region"];

/// Project settings a person makes at the desk (the spelling word list,
/// the subtitle profile) and an operator's export (an archive with its
/// history), left out of the tools' schemas to keep
/// `tools/list` within its 16 KiB; an op may still carry them.
pub const LEFT_OUT: &[&str] = &["addWords", "removeWords", "subtitleProfile", "history"];

/// Node kinds left out of the tools' schemas for the same reason: image
/// and mask nodes come from imports and engines, and a model adds or edits
/// text. An op may still carry them.
pub const LEFT_OUT_KINDS: &[&str] = &["image", "mask"];

/// The tag a union variant is told apart by: its `type` property's one
/// value.
fn variant_tag(schema: &Value) -> Option<&str> {
    let tag = schema.get("properties")?.get("type")?;
    match tag.get("enum").or_else(|| tag.get("const"))? {
        Value::Array(values) if values.len() == 1 => values[0].as_str(),
        Value::String(value) => Some(value),
        _ => None,
    }
}

/// `anyOf` without the variants of [`LEFT_OUT_KINDS`]; a union left with
/// one variant becomes that variant, and a union of a union and `null`
/// one flat union.
fn without_left_out_kinds(schema: Value) -> Value {
    map_subschemas(schema, &|s| match s {
        Value::Object(mut map) => {
            let Some(Value::Array(variants)) = map.remove("anyOf") else {
                return Value::Object(map);
            };
            let mut kept = Vec::new();
            for variant in variants {
                if variant_tag(&variant).is_some_and(|t| LEFT_OUT_KINDS.contains(&t)) {
                    continue;
                }
                match variant {
                    // Flattened: `anyOf[anyOf[a, b], null]` is `anyOf[a, b, null]`.
                    Value::Object(inner) if inner.len() == 1 && inner.contains_key("anyOf") => {
                        if let Some(Value::Array(vs)) = inner.into_iter().next().map(|(_, v)| v) {
                            kept.extend(vs);
                        }
                    }
                    other => kept.push(other),
                }
            }
            if kept.len() == 1
                && let Some(Value::Object(only)) = kept.pop()
            {
                for (key, value) in only {
                    map.entry(key).or_insert(value);
                }
            } else {
                map.insert("anyOf".into(), Value::Array(kept));
            }
            Value::Object(map)
        }
        other => other,
    })
}

fn plain_ids(schema: Value) -> Value {
    map_subschemas(schema, &|s| match s {
        Value::Object(mut map) => {
            if map.get("format").and_then(Value::as_str) == Some("uuid") {
                map.remove("format");
            }
            if map
                .get("pattern")
                .and_then(Value::as_str)
                .is_some_and(|p| p.starts_with("^[0-9a-f]"))
            {
                map.remove("pattern");
            }
            Value::Object(map)
        }
        other => other,
    })
}

fn without_recorded(schema: Value) -> Value {
    let mut schema = map_subschemas(schema, &|s| match s {
        Value::Object(mut map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for name in RECORDED.iter().chain(LEFT_OUT) {
                    props.remove(*name);
                }
            }
            Value::Object(map)
        }
        other => other,
    });
    // Definitions only those properties used are gone with them.
    loop {
        let Some(Value::Object(defs)) = schema.get("$defs") else {
            return schema;
        };
        let text = schema.to_string();
        let unused: Vec<String> = defs
            .keys()
            .filter(|name| !text.contains(&format!("\"#/$defs/{name}\"")))
            .cloned()
            .collect();
        if unused.is_empty() {
            return schema;
        }
        if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
            for name in unused {
                defs.remove(&name);
            }
        }
    }
}

fn generate<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    serde_json::to_value(schema).unwrap_or_default()
}

/// Applies `f` to every subschema of `schema` (bottom-up), not to
/// property or definition names.
fn map_subschemas(schema: Value, f: &impl Fn(Value) -> Value) -> Value {
    let Value::Object(map) = schema else {
        return f(schema);
    };
    let mut out = Map::new();
    for (key, value) in map {
        let value = match key.as_str() {
            "properties" | "$defs" => match value {
                Value::Object(m) => Value::Object(
                    m.into_iter()
                        .map(|(k, v)| (k, map_subschemas(v, f)))
                        .collect(),
                ),
                other => other,
            },
            "anyOf" => match value {
                Value::Array(vs) => {
                    Value::Array(vs.into_iter().map(|v| map_subschemas(v, f)).collect())
                }
                other => other,
            },
            "items" | "additionalProperties" => map_subschemas(value, f),
            _ => value,
        };
        out.insert(key, value);
    }
    f(Value::Object(out))
}

fn open_objects(schema: Value) -> Value {
    map_subschemas(schema, &|mut s| {
        if let Value::Object(map) = &mut s
            && map.get("additionalProperties") == Some(&Value::Bool(false))
        {
            map.remove("additionalProperties");
        }
        s
    })
}

fn without_structured_defaults(schema: Value) -> Value {
    map_subschemas(schema, &|mut s| {
        if let Value::Object(map) = &mut s
            && matches!(
                map.get("default"),
                Some(Value::Null | Value::Object(_) | Value::Array(_))
            )
        {
            map.remove("default");
        }
        s
    })
}

/// A definition that is a plain value: no properties, items or variants.
fn is_plain(schema: &Value) -> bool {
    schema.as_object().is_some_and(|m| {
        !m.contains_key("properties")
            && !m.contains_key("items")
            && !m.contains_key("anyOf")
            && !m.contains_key("$ref")
    })
}

/// Writes every `$ref` to a plain definition in place (without the
/// definition's description), an optional one (`anyOf [ref, null]`) as
/// the value with `null` added to its type; drops the definitions.
fn inline_plain_definitions(mut schema: Value) -> Value {
    let plain: Map<String, Value> = schema
        .get("$defs")
        .and_then(Value::as_object)
        .map(|defs| {
            defs.iter()
                .filter(|(_, d)| is_plain(d))
                .map(|(name, d)| {
                    let mut d = d.clone();
                    if let Value::Object(m) = &mut d {
                        m.remove("description");
                    }
                    (format!("#/$defs/{name}"), d)
                })
                .collect()
        })
        .unwrap_or_default();
    if plain.is_empty() {
        return schema;
    }
    let mut none_left = false;
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        defs.retain(|name, _| !plain.contains_key(&format!("#/$defs/{name}")));
        none_left = defs.is_empty();
    }
    if none_left && let Value::Object(root) = &mut schema {
        root.remove("$defs");
    }
    map_subschemas(schema, &|s| inline_one(s, &plain))
}

fn inline_one(schema: Value, plain: &Map<String, Value>) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let target = |v: &Value| {
        v.get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| plain.get(r))
            .cloned()
    };
    if let Some(resolved) = map
        .get("$ref")
        .and_then(|_| target(&Value::Object(map.clone())))
    {
        map.remove("$ref");
        let mut out = resolved.as_object().cloned().unwrap_or_default();
        out.extend(map);
        return Value::Object(out);
    }
    // `anyOf: [ plain, { type: null } ]`: an optional plain value (its
    // reference was written in place just before, children first).
    if let Some(Value::Array(variants)) = map.get("anyOf")
        && variants.len() == 2
        && variants[1] == serde_json::json!({ "type": "null" })
        && is_plain(&variants[0])
        && variants[0].get("type").is_some()
    {
        let mut out = variants[0].as_object().cloned().unwrap_or_default();
        map.remove("anyOf");
        add_null(&mut out);
        out.extend(map);
        return Value::Object(out);
    }
    Value::Object(map)
}

fn add_null(schema: &mut Map<String, Value>) {
    match schema.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            schema.insert("type".into(), serde_json::json!([t, "null"]));
        }
        Some(Value::Array(ts)) if !ts.contains(&Value::Null) => {
            ts.push(Value::String("null".into()));
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Definitions that read the same once presented (`Style` and
/// `StylePatch`: every field optional in both) are written once; references
/// to the others point at the first.
fn merge_identical_definitions(mut schema: Value) -> Value {
    let Some(Value::Object(defs)) = schema.get("$defs") else {
        return schema;
    };
    let mut first_by_body: Vec<(String, &Value)> = Vec::new();
    let mut renamed: Map<String, Value> = Map::new();
    for (name, body) in defs {
        match first_by_body.iter().find(|(_, b)| *b == body) {
            Some((first, _)) => {
                renamed.insert(
                    format!("#/$defs/{name}"),
                    Value::String(format!("#/$defs/{first}")),
                );
            }
            None => first_by_body.push((name.clone(), body)),
        }
    }
    if renamed.is_empty() {
        return schema;
    }
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        defs.retain(|name, _| !renamed.contains_key(&format!("#/$defs/{name}")));
    }
    map_subschemas(schema, &|mut s| {
        if let Value::Object(map) = &mut s
            && let Some(target) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| renamed.get(r))
        {
            map.insert("$ref".into(), target.clone());
        }
        s
    })
}

/// What OpenAI's strict conversion needs of references, as the Agents SDK
/// runs it for MCP tools (`_reject_open_objects=True`): it refuses a
/// `$ref` standing alone (it has not checked the target), expands one
/// with a sibling, and so cannot follow recursion; and it refuses an
/// object with no properties unless it is closed.
///
/// So the one recursion, a `Batch` of ops, says what it holds one level
/// down: its `ops` are `Step`s, every op but `Batch` (the server still
/// takes a nested batch). A definition used once is written in place; a
/// reference to one used more than once carries the definition's name
/// as its `title`. No object says `additionalProperties`: Gemini's MCP
/// converter crashes on a boolean there, so every argument object declares
/// at least one property (see [`crate::mcp::tools::ListArgs`]).
fn refs_for_strict_mode(mut schema: Value) -> Value {
    split_batch(&mut schema);
    while let Some(Value::Object(defs)) = schema.get("$defs") {
        let text = schema.to_string();
        // One at a time: a body written in place may hold the next.
        let once: Map<String, Value> = defs
            .iter()
            .filter(|(name, _)| text.matches(&format!("\"#/$defs/{name}\"")).count() == 1)
            .take(1)
            .map(|(name, body)| (format!("#/$defs/{name}"), body.clone()))
            .collect();
        if once.is_empty() {
            break;
        }
        if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
            defs.retain(|name, _| !once.contains_key(&format!("#/$defs/{name}")));
        }
        schema = map_subschemas(schema, &|s| match s {
            Value::Object(mut map) => {
                if let Some(Value::Object(body)) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| once.get(r))
                {
                    map.remove("$ref");
                    for (key, value) in body {
                        map.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                }
                Value::Object(map)
            }
            other => other,
        });
    }
    let schema = map_subschemas(schema, &|s| match s {
        Value::Object(mut map) => {
            if map.len() == 1
                && let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix("#/$defs/"))
            {
                let name = name.to_owned();
                map.insert("title".into(), Value::String(name));
            }
            Value::Object(map)
        }
        other => other,
    });
    let mut schema = schema;
    if let Value::Object(map) = &mut schema
        && map
            .get("$defs")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
    {
        map.remove("$defs");
    }
    schema
}

/// Gives `Batch`'s ops the definition `Step`: the `Op` union without
/// `Batch` (see [`refs_for_strict_mode`]).
fn split_batch(schema: &mut Value) {
    let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
        return;
    };
    let Some(Value::Array(variants)) = defs.get_mut("Op").and_then(|op| op.get_mut("anyOf")) else {
        return;
    };
    let is_batch = |v: &Value| v.pointer("/properties/type/enum/0") == Some(&Value::from("Batch"));
    let Some(at) = variants.iter().position(is_batch) else {
        return;
    };
    let mut batch = variants.remove(at);
    let steps = std::mem::take(variants);
    if let Some(items) = batch.pointer_mut("/properties/ops/items") {
        *items = serde_json::json!({ "$ref": "#/$defs/Step" });
    }
    *variants = vec![serde_json::json!({ "$ref": "#/$defs/Step" }), batch];
    defs.insert("Step".into(), serde_json::json!({ "anyOf": steps }));
}

/// `schema`'s top level with each property's type only (see [`output_of`]).
fn shallow(schema: &Value) -> Value {
    let defs = schema.get("$defs").cloned().unwrap_or_default();
    let resolve = |s: &Value| -> Value {
        match s.get("$ref").and_then(Value::as_str) {
            Some(r) => r
                .strip_prefix("#/$defs/")
                .and_then(|name| defs.get(name))
                .cloned()
                .unwrap_or_default(),
            None => s.clone(),
        }
    };
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    // No `required`: which fields a result has is the tool's business, and
    // a client validating against this only needs their types.
    let properties: Map<String, Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| (name.clone(), type_only(&resolve(p), &resolve)))
                .collect()
        })
        .unwrap_or_default();
    out.insert("properties".into(), Value::Object(properties));
    Value::Object(out)
}

/// What a value is, without its inner shape: its `type` (with `null` when
/// optional) and, for a plain value, its `enum`.
fn type_only(schema: &Value, resolve: &impl Fn(&Value) -> Value) -> Value {
    if let Some(Value::Array(variants)) = schema.get("anyOf") {
        let mut types: Vec<Value> = Vec::new();
        for v in variants {
            let v = resolve(v);
            let inner = type_only(&v, resolve);
            match inner.get("type") {
                Some(Value::String(t)) => types.push(Value::String(t.clone())),
                Some(Value::Array(ts)) => types.extend(ts.iter().cloned()),
                _ => return Value::Object(Map::new()),
            }
        }
        let mut unique: Vec<Value> = Vec::new();
        for t in types {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        return match unique.as_slice() {
            [one] => serde_json::json!({ "type": one }),
            _ => serde_json::json!({ "type": unique }),
        };
    }
    let mut out = Map::new();
    for key in ["type", "enum"] {
        if let Some(v) = schema.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// Rewrites a schemars schema into the portable vocabulary.
pub fn portable(schema: Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(portable_object(map)),
        other => other,
    }
}

fn portable_object(map: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            // Maps of name → schema.
            "properties" | "$defs" => {
                let inner = match value {
                    Value::Object(m) => {
                        Value::Object(m.into_iter().map(|(k, v)| (k, portable(v))).collect())
                    }
                    other => other,
                };
                out.insert(key, inner);
            }
            // Lists of schemas.
            "anyOf" | "oneOf" => {
                let variants = match value {
                    Value::Array(vs) => Value::Array(vs.into_iter().map(portable).collect()),
                    other => other,
                };
                merge_any_of(&mut out, variants);
            }
            // One schema.
            "items" | "additionalProperties" => {
                out.insert(key, portable(value));
            }
            "const" => {
                out.insert("enum".into(), Value::Array(vec![value]));
            }
            "format"
                if value
                    .as_str()
                    .is_some_and(|f| STANDARD_FORMATS.contains(&f)) =>
            {
                out.insert(key, value);
            }
            "format" => {}
            // A doc comment's line breaks are where the source wrapped.
            "description" => {
                let joined = value
                    .as_str()
                    .map(unwrap_lines)
                    .map_or(value, Value::String);
                out.insert(key, joined);
            }
            k if KEYWORDS.contains(&k) => {
                out.insert(key, value);
            }
            // `$schema`, `examples`, `readOnly`, …: annotations only.
            _ => {}
        }
    }
    out
}

/// Joins the lines of a paragraph; blank lines stay paragraph breaks.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `anyOf` and `oneOf` on one schema (schemars never writes both, but the
/// rewrite must not lose either) become one `anyOf`.
fn merge_any_of(out: &mut Map<String, Value>, variants: Value) {
    match (out.get_mut("anyOf"), variants) {
        (Some(Value::Array(existing)), Value::Array(more)) => existing.extend(more),
        (_, variants) => {
            out.insert("anyOf".into(), variants);
        }
    }
}

/// Every keyword `schema` uses (outside property and definition names)
/// that is not in [`KEYWORDS`]; empty for a presented schema.
pub fn foreign_keywords(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    collect_foreign(schema, &mut found);
    found
}

fn collect_foreign(schema: &Value, found: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map {
        match key.as_str() {
            "properties" | "$defs" => {
                if let Value::Object(m) = value {
                    m.values().for_each(|v| collect_foreign(v, found));
                }
            }
            "anyOf" => {
                if let Value::Array(vs) = value {
                    vs.iter().for_each(|v| collect_foreign(v, found));
                }
            }
            "items" | "additionalProperties" => collect_foreign(value, found),
            "format"
                if !value
                    .as_str()
                    .is_some_and(|f| STANDARD_FORMATS.contains(&f)) =>
            {
                found.push(format!("format {value}"));
            }
            k if KEYWORDS.contains(&k) => {}
            other => found.push(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_rewrite_keeps_meaning_and_leaves_only_portable_keywords() {
        let generated = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "epoch": { "type": "integer", "format": "uint64", "minimum": 0 },
                "id": { "type": "string", "format": "uuid" },
                "op": { "oneOf": [
                    { "type": "object", "properties": { "type": { "type": "string", "const": "A" } }, "required": ["type"] },
                    { "type": "object", "properties": { "type": { "type": "string", "const": "B" } }, "required": ["type"] }
                ] }
            },
            "$defs": { "X": { "type": "number", "format": "double", "examples": [1.5] } }
        });
        let presented = portable(generated);
        assert_eq!(foreign_keywords(&presented), Vec::<String>::new());
        assert_eq!(
            presented["properties"]["epoch"],
            json!({ "type": "integer", "minimum": 0 })
        );
        assert_eq!(presented["properties"]["id"]["format"], "uuid");
        let variants = presented["properties"]["op"]["anyOf"].as_array().unwrap();
        assert_eq!(variants[1]["properties"]["type"]["enum"], json!(["B"]));
        assert_eq!(presented["$defs"]["X"], json!({ "type": "number" }));
        // A property named like a keyword is a name, not a keyword.
        let named = portable(json!({ "properties": { "const": { "type": "string" } } }));
        assert_eq!(named["properties"]["const"], json!({ "type": "string" }));
    }

    #[test]
    fn foreign_keywords_are_found_anywhere() {
        let schema = json!({ "anyOf": [{ "items": { "not": {} } }], "format": "uint" });
        let mut found = foreign_keywords(&schema);
        found.sort();
        assert_eq!(found, vec!["format \"uint\"".to_owned(), "not".to_owned()]);
    }
}
