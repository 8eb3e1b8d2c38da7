//! `quire models list`: the model files the configuration names (every
//! engine's, as its settings list them: `Settings::models`), each with its
//! size, its sha256 (to compare with what its publisher lists) and whether
//! it loads as what it is for.
//! quire ships and downloads no model; this says what it would use.

use std::io::{Read, Write};
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::write_failed;
use crate::config::Loaded;
use crate::error::Failure;
use quire_core::engines::ppocr::Helper;
use quire_core::engines::settings::ModelRole;

/// One configured model file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Model {
    /// The config key that names it.
    key: String,
    /// What it is loaded as.
    kind: &'static str,
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
    /// `ok`, or why it does not load.
    loads: String,
}

pub fn list(loaded: &Loaded, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let models: Vec<Model> = loaded
        .config
        .engine_settings
        .models()
        .into_iter()
        .map(|(table, file)| describe(format!("{table}.{}", file.key), &file.path, file.role))
        .collect();
    if json {
        let text = serde_json::to_string_pretty(&models)
            .map_err(|e| Failure::Runtime(anyhow::Error::new(e)))?;
        return writeln!(out, "{text}").map_err(write_failed);
    }
    if models.is_empty() {
        return writeln!(
            out,
            "no model files are configured (the onnx backends of detect, ocr and clean take them: docs/comics.md)"
        )
        .map_err(write_failed);
    }
    let rows: Vec<[String; 6]> = models
        .into_iter()
        .map(|m| {
            [
                m.key.to_owned(),
                m.kind.to_owned(),
                m.path,
                m.bytes.map_or_else(|| "-".to_owned(), |b| b.to_string()),
                m.sha256.unwrap_or_else(|| "-".to_owned()),
                m.loads,
            ]
        })
        .collect();
    super::table(
        out,
        ["KEY", "KIND", "PATH", "BYTES", "SHA256", "LOADS"],
        &rows,
    )
}

fn describe(key: String, path: &Path, role: ModelRole) -> Model {
    let mut model = Model {
        key,
        kind: role.name(),
        path: path.display().to_string(),
        bytes: None,
        sha256: None,
        loads: String::new(),
    };
    match sha256(path) {
        Ok((bytes, digest)) => {
            model.bytes = Some(bytes);
            model.sha256 = Some(digest);
        }
        Err(e) => {
            model.loads = format!("cannot be read: {e}");
            return model;
        }
    }
    // Loading a model takes seconds; a helper that takes this long is
    // stuck.
    let deadline = quire_core::engines::ppocr::Deadline {
        within: std::time::Duration::from_secs(120),
        setting: "what quire allows for loading a model",
    };
    let loaded = Helper::start_models(&role.models(path), deadline).map(|h| {
        h.characters()
            .map_or_else(String::new, |n| format!(" ({n} characters)"))
    });
    model.loads = match loaded {
        Ok(more) => format!("ok{more}"),
        Err(e) => e,
    };
    model
}

/// The file's size and sha256, read in pieces.
fn sha256(path: &Path) -> std::io::Result<(u64, String)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        hasher.update(&buffer[..n]);
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((bytes, digest))
}
