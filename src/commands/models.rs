//! `quire models list`: the models the configuration names (every
//! engine's, as its settings list them: `Settings::models`): a file with
//! its size, its sha256 (to compare with what its publisher lists) and
//! whether it loads as what it is for; a model on a backend with its
//! server's URL and whether it is ready and fits (spec 17, rule 7), and
//! each backend no key names. Exit 1 when any is not usable.
//! quire ships and downloads no model; this says what it would use.

use std::io::{Read, Write};
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::write_failed;
use crate::config::Loaded;
use crate::error::Failure;
use quire_core::engines::backends::{Backends, Need, need_of};
use quire_core::engines::ppocr::Helper;
use quire_core::engines::settings::{ModelRef, ModelRole};

/// One configured model file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Model {
    /// The config key that names it.
    key: String,
    /// What it is loaded as.
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// The `[backends.NAME]` it runs on, its URL, model and version.
    #[serde(skip_serializing_if = "Option::is_none")]
    backend: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
    /// `ok` (a file) or `ready` (a backend), or why it cannot be used.
    loads: String,
}

impl Model {
    fn usable(&self) -> bool {
        self.loads.starts_with("ok") || self.loads.starts_with("ready")
    }
}

pub fn list(loaded: &Loaded, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let files = loaded.config.engine_settings.models();
    let mut models = Vec::new();
    let mut remote = Vec::new();
    for (table, file) in files {
        let key = format!("{table}.{}", file.key);
        match &file.source {
            ModelRef::File(path) => models.push(describe(key, path, file.role)),
            ModelRef::Backend(name) => {
                remote.push((key, file.role.name(), name.clone(), need_of(file.role)));
            }
        }
    }
    let named: Vec<String> = remote.iter().map(|(_, _, name, _)| name.clone()).collect();
    for name in loaded.config.backends.keys() {
        if !named.contains(name) {
            remote.push((format!("backends.{name}"), "backend", name.clone(), None));
        }
    }
    models.extend(on_backends(loaded, remote)?);
    let unusable = models.iter().filter(|m| !m.usable()).count();
    if json {
        let text = serde_json::to_string_pretty(&models)
            .map_err(|e| Failure::Runtime(anyhow::Error::new(e)))?;
        writeln!(out, "{text}").map_err(write_failed)?;
        return finish(unusable);
    }
    if models.is_empty() {
        return writeln!(
            out,
            "no model files or backends are configured (the onnx backends of detect, ocr and clean take them: docs/comics.md)"
        )
        .map_err(write_failed);
    }
    let rows: Vec<[String; 6]> = models
        .into_iter()
        .map(|m| {
            let place = match (&m.path, &m.backend) {
                (Some(path), _) => path.clone(),
                (None, Some(name)) => format!(
                    "backend {name}: {} model {}{}",
                    m.url.as_deref().unwrap_or("-"),
                    m.model.as_deref().unwrap_or("-"),
                    m.version
                        .as_deref()
                        .filter(|v| !v.is_empty())
                        .map(|v| format!(" version {v}"))
                        .unwrap_or_default()
                ),
                (None, None) => "-".to_owned(),
            };
            [
                m.key.to_owned(),
                m.kind.to_owned(),
                place,
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
    )?;
    finish(unusable)
}

/// Exit 1 when a model or backend cannot be used (each said why).
fn finish(unusable: usize) -> Result<(), Failure> {
    match unusable {
        0 => Ok(()),
        1 => Err(Failure::Runtime(anyhow::anyhow!(
            "1 model cannot be used (its line says why)"
        ))),
        n => Err(Failure::Runtime(anyhow::anyhow!(
            "{n} models cannot be used (each line says why)"
        ))),
    }
}

/// The models on backends (key, kind, backend, what it must serve), each
/// asked of its server.
fn on_backends(
    loaded: &Loaded,
    remote: Vec<(String, &'static str, String, Option<Need>)>,
) -> Result<Vec<Model>, Failure> {
    if remote.is_empty() {
        return Ok(Vec::new());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(anyhow::Error::new(e)))?;
    let process = Backends::default();
    let backends = crate::launch::core_backends(&loaded.config);
    Ok(runtime.block_on(async {
        let mut models = Vec::new();
        for (key, kind, name, need) in remote {
            let Some(backend) = backends.get(&name) else {
                continue;
            };
            let loads = match process.check(&name, backend, need).await {
                Ok(note) => note,
                Err(why) => why,
            };
            models.push(Model {
                key,
                kind,
                path: None,
                backend: Some(name),
                url: Some(backend.url.clone()),
                model: Some(backend.model.clone()),
                version: Some(backend.version.clone()),
                bytes: None,
                sha256: None,
                loads,
            });
        }
        models
    }))
}

fn describe(key: String, path: &Path, role: ModelRole) -> Model {
    let mut model = Model {
        key,
        kind: role.name(),
        path: Some(path.display().to_string()),
        backend: None,
        url: None,
        model: None,
        version: None,
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
