//! `quire config show`: the effective config, secrets redacted, optionally
//! with the layer that set each value.

use serde_json::json;

use super::load::Loaded;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Toml,
    Json,
}

/// One effective value with the layer that set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub value: toml::Value,
    pub origin: String,
}

/// Every leaf of the effective config, in schema order. Tables with no
/// entries (e.g. `providers` when none is configured) are listed as leaves.
pub fn entries(loaded: &Loaded) -> Vec<Entry> {
    let mut out = Vec::new();
    flatten("", &loaded.config.effective(), loaded, &mut out);
    // A secret read through `<key>_env` or `<key>_file` was set by that key.
    let indirect: Vec<(String, String)> = out
        .iter()
        .filter_map(|e| {
            let base = e
                .key
                .strip_suffix("_env")
                .or_else(|| e.key.strip_suffix("_file"))?;
            Some((base.to_owned(), format!("via {} ({})", e.key, e.origin)))
        })
        .collect();
    for (base, origin) in indirect {
        if let Some(entry) = out.iter_mut().find(|e| e.key == base) {
            entry.origin = origin;
        }
    }
    out
}

/// A table as `dotted.key = value` lines (used for mode overlays).
pub fn dotted_lines(table: &toml::Table) -> Vec<String> {
    fn walk(prefix: &str, table: &toml::Table, out: &mut Vec<String>) {
        for (k, v) in table {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(t) if !t.is_empty() => walk(&key, t, out),
                other => out.push(format!("{key} = {}", inline(other))),
            }
        }
    }
    let mut out = Vec::new();
    walk("", table, &mut out);
    out
}

fn flatten(prefix: &str, table: &toml::Table, loaded: &Loaded, out: &mut Vec<Entry>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) if !t.is_empty() => flatten(&key, t, loaded, out),
            _ => out.push(Entry {
                origin: loaded.origin_of(&key),
                key,
                value: v.clone(),
            }),
        }
    }
}

pub fn render(loaded: &Loaded, format: Format, origin: bool) -> String {
    match (format, origin) {
        (Format::Toml, false) => toml::to_string(&loaded.config.effective()).unwrap_or_default(),
        (Format::Json, false) => {
            let mut s =
                serde_json::to_string_pretty(&loaded.config.effective()).unwrap_or_default();
            s.push('\n');
            s
        }
        (Format::Toml, true) => {
            let lines: Vec<(String, String)> = entries(loaded)
                .into_iter()
                .map(|e| (format!("{} = {}", e.key, inline(&e.value)), e.origin))
                .collect();
            let width = lines.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
            lines
                .into_iter()
                .map(|(line, origin)| format!("{line:<width$} # {origin}\n"))
                .collect()
        }
        (Format::Json, true) => {
            let map: serde_json::Map<String, serde_json::Value> = entries(loaded)
                .into_iter()
                .map(|e| {
                    let value = serde_json::to_value(&e.value).unwrap_or(serde_json::Value::Null);
                    (e.key, json!({ "value": value, "origin": e.origin }))
                })
                .collect();
            let mut s = serde_json::to_string_pretty(&map).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}

/// A value written as TOML on one line.
fn inline(value: &toml::Value) -> String {
    match value {
        toml::Value::Table(t) if t.is_empty() => "{}".to_owned(),
        other => other.to_string(),
    }
}
