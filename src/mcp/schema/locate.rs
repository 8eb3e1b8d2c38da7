//! Which field of a tool's arguments is wrong: the first place where a value
//! breaks its schema, as a path (`op.page.width`).

use serde_json::{Map, Value};

/// Where `value` first breaks the presented `schema`, as serde names a
/// field (`op.page.nodes[0].kind`); `None` if nothing the schema says is
/// broken (an unknown field, say, which serde names itself). A union is
/// read by its `type` tag, as the server reads it.
pub fn locate(schema: &Value, value: &Value) -> Option<String> {
    let defs = schema.get("$defs").and_then(Value::as_object);
    let mut path = String::new();
    broken(schema, value, defs, &mut path).then_some(path)
}

/// Whether `value` breaks `schema`; `path` is left at the broken place.
pub(super) fn broken(
    schema: &Value,
    value: &Value,
    defs: Option<&Map<String, Value>>,
    path: &mut String,
) -> bool {
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs?.get(name))
    {
        return broken(target, value, defs, path);
    }
    if let Some(variants) = schema.get("anyOf").and_then(Value::as_array) {
        return broken_union(variants, value, defs, path);
    }
    let fits_type = match schema.get("type") {
        Some(Value::String(t)) => is_type(t, value),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| is_type(t, value)),
        _ => true,
    };
    let number = value.as_f64();
    let length = value
        .as_str()
        .map(|s| s.chars().count())
        .or(value.as_array().map(Vec::len));
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let out_of_bounds = number.is_some_and(|n| {
        bound("minimum").is_some_and(|m| n < m) || bound("maximum").is_some_and(|m| n > m)
    }) || length.is_some_and(|l| {
        let l = l as f64;
        ["minLength", "minItems"]
            .iter()
            .any(|k| bound(k).is_some_and(|m| l < m))
            || ["maxLength", "maxItems"]
                .iter()
                .any(|k| bound(k).is_some_and(|m| l > m))
    });
    let not_listed = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|values| !values.contains(value));
    if !fits_type || out_of_bounds || not_listed {
        return true;
    }
    if let Value::Object(fields) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str().filter(|n| !fields.contains_key(*n)) {
                push_key(path, name);
                return true;
            }
        }
        for (name, field) in fields {
            if let Some(sub) = properties.and_then(|p| p.get(name)) {
                let at = path.len();
                push_key(path, name);
                if broken(sub, field, defs, path) {
                    return true;
                }
                path.truncate(at);
            }
        }
    }
    if let (Value::Array(items), Some(sub)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            let at = path.len();
            path.push_str(&format!("[{i}]"));
            if broken(sub, item, defs, path) {
                return true;
            }
            path.truncate(at);
        }
    }
    false
}

/// A union: the variant the value's `type` tag names, else the one that
/// fits, else where the variant broken deepest breaks.
pub(super) fn broken_union(
    variants: &[Value],
    value: &Value,
    defs: Option<&Map<String, Value>>,
    path: &mut String,
) -> bool {
    let at = path.len();
    let mut deepest: Option<String> = None;
    for variant in variants {
        let mut tried = path.clone();
        if !broken(variant, value, defs, &mut tried) {
            return false;
        }
        if deepest.as_ref().is_none_or(|d| tried.len() > d.len()) {
            deepest = Some(tried);
        }
    }
    path.truncate(at);
    if let Some(deepest) = deepest {
        *path = deepest;
    }
    true
}

pub(super) fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

pub(super) fn is_type(t: &str, value: &Value) -> bool {
    match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}
