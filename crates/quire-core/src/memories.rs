//! Imported translation memories: TMX files read once
//! ([`quire_formats::tmx`]) and kept as `<memory dir>/NAME.json`, whose
//! units join the projects' reviewed and final translations in every
//! [`super::tm::Memory`] whose languages they have; and a project's
//! segments written as TMX.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Core;
use super::tm::Remembered;
use quire_formats::tmx;
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::SessionId;
use quire_model::scene::{Author, NodeKind};
use quire_store::storage::{self, now_rfc3339};

/// The most a TMX file may hold, in bytes.
pub const MAX_TMX_BYTES: usize = 256 << 20;

/// What `quire tm import` and its routes report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TmxReport {
    /// The memory's name (its file's, without `.tmx`).
    pub name: String,
    /// Translation units kept.
    pub units: usize,
    /// The languages they are in, as the file writes them.
    pub languages: Vec<String>,
    /// Whether a memory of that name was there and is replaced.
    pub replaced: bool,
}

/// A TMX file given inline (the HTTP route's JSON body).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TmxImport {
    /// The file's name (`client.tmx`): the memory's.
    pub name: String,
    /// Its text.
    pub content: String,
}

/// An imported memory as it is kept.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    name: String,
    imported_at: String,
    units: Vec<StoredUnit>,
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredUnit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changed: Option<String>,
    /// `(language, text)` per variant.
    variants: Vec<(String, String)>,
}

/// Whether a file's language tag can stand for `wanted`: the same tag
/// (case aside), or one a region or script narrower (`en-US` for `en`).
fn fits(tag: &str, wanted: &str) -> bool {
    let (tag, wanted) = (tag.to_ascii_lowercase(), wanted.to_ascii_lowercase());
    tag == wanted
        || tag.starts_with(&format!("{wanted}-"))
        || wanted.starts_with(&format!("{tag}-"))
}

/// A memory name from a file name: its stem, letters, digits, spaces,
/// `-`, `_` and `.` only, not starting with `.`.
fn name_of(file: &str) -> CoreResult<String> {
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ok = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ');
    if stem.is_empty() || stem.starts_with('.') || !stem.chars().all(ok) || stem.len() > 100 {
        return Err(CoreError::InvalidInput(format!(
            "`{file}`: a memory is named after its file, which must be letters, digits, spaces, \
             `-`, `_` or `.` (at most 100)"
        )));
    }
    Ok(stem)
}

/// The translations the memories in `dir` hold from `source` into
/// `target`: each unit with a variant in both.
pub(super) fn remembered(dir: &Path, source: &str, target: &str) -> CoreResult<Vec<Remembered>> {
    let mut out = Vec::new();
    for stored in read_all(dir)? {
        let origin = format!("tmx {}", stored.name);
        for unit in stored.units {
            let side = |lang: &str| {
                unit.variants
                    .iter()
                    .find(|(l, _)| fits(l, lang))
                    .map(|(_, t)| t.clone())
            };
            if let (Some(s), Some(t)) = (side(source), side(target)) {
                out.push(Remembered {
                    source: s,
                    target: t,
                    locked: false,
                    changed: unit.changed.clone().unwrap_or_default(),
                    origin: origin.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// Every memory in `dir`, by name (a missing directory holds none).
fn read_all(dir: &Path) -> CoreResult<Vec<Stored>> {
    let mut names: Vec<_> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CoreError::io(dir, e)),
    };
    names.sort();
    names
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).map_err(|e| CoreError::io(&path, e))?;
            serde_json::from_slice(&bytes)
                .map_err(|e| CoreError::internal(format!("{} is damaged: {e}", path.display())))
        })
        .collect()
}

impl Core {
    /// Where imported memories are kept.
    pub fn memory_dir(&self) -> &Path {
        &self.inner.memory_dir
    }

    /// Reads a TMX file (`file` names it) into the memories, replacing
    /// one of the same name. A file that is not TMX, holds no unit with
    /// text, or is too big changes nothing and says why.
    pub async fn import_tmx(&self, file: &str, bytes: Vec<u8>) -> CoreResult<TmxReport> {
        let name = name_of(file)?;
        if bytes.len() > MAX_TMX_BYTES {
            return Err(CoreError::InvalidInput(format!(
                "`{file}` is {} bytes; a TMX file may have at most {MAX_TMX_BYTES}",
                bytes.len()
            )));
        }
        let dir = self.memory_dir().to_path_buf();
        super::blocking(move || {
            let text = quire_formats::xml::decode(&bytes).map_err(|e| {
                CoreError::InvalidInput(format!("not a TMX file quire can read: {e}"))
            })?;
            let read = tmx::parse(&text)?;
            let mut languages: Vec<String> = Vec::new();
            let units: Vec<StoredUnit> = read
                .units
                .into_iter()
                .map(|u| StoredUnit {
                    changed: u.changed,
                    variants: u
                        .variants
                        .into_iter()
                        .filter(|v| !v.text.trim().is_empty())
                        .map(|v| (v.lang, v.text))
                        .collect(),
                })
                .filter(|u| u.variants.len() >= 2)
                .collect();
            for unit in &units {
                for (lang, _) in &unit.variants {
                    if !languages.iter().any(|l| l.eq_ignore_ascii_case(lang)) {
                        languages.push(lang.clone());
                    }
                }
            }
            if units.is_empty() {
                return Err(CoreError::InvalidInput(format!(
                    "`{name}`: the TMX file has no translation unit with text in two languages"
                )));
            }
            storage::private_dir(&dir)?;
            let path = dir.join(format!("{name}.json"));
            let replaced = path.exists();
            let report = TmxReport {
                name: name.clone(),
                units: units.len(),
                languages,
                replaced,
            };
            let stored = Stored {
                name,
                imported_at: now_rfc3339(),
                units,
            };
            let json = serde_json::to_vec(&stored)
                .map_err(|e| CoreError::internal(format!("cannot encode a memory: {e}")))?;
            storage::write_atomic(&path, &json)?;
            Ok(report)
        })
        .await
    }

    /// The session's reviewed and final segments as a TMX 1.4b file in
    /// the project's source and target languages, each unit with its
    /// node id, its translation's date and who wrote it.
    pub async fn export_tmx(&self, session: SessionId) -> CoreResult<Vec<u8>> {
        let snapshot = self.scene(session).await?;
        tmx_of(&snapshot.scene)
    }
}

/// A scene's reviewed and final segments as TMX: see [`Core::export_tmx`].
pub fn tmx_of(scene: &quire_model::scene::Scene) -> CoreResult<Vec<u8>> {
    tmx_of_all(std::slice::from_ref(scene))
}

/// The reviewed and final segments of several scenes as one TMX file in
/// the first one's source language; each needs both its languages.
pub fn tmx_of_all(scenes: &[quire_model::scene::Scene]) -> CoreResult<Vec<u8>> {
    let mut units = Vec::new();
    for scene in scenes {
        units.extend(units_of(scene)?);
    }
    let source = scenes
        .first()
        .and_then(|s| s.project.source_language.clone())
        .unwrap_or_else(|| "*all*".to_owned());
    Ok(tmx::write(&source, &units).into_bytes())
}

/// A scene's reviewed and final segments as TMX units.
fn units_of(scene: &quire_model::scene::Scene) -> CoreResult<Vec<tmx::Unit>> {
    let project = &scene.project;
    let (Some(source), Some(target)) = (&project.source_language, &project.target_language) else {
        return Err(CoreError::InvalidInput(
            "a TMX file needs the project's source and target languages: set them first".to_owned(),
        ));
    };
    let units: Vec<tmx::Unit> = super::tm::remembered_nodes(scene)
        .into_iter()
        .map(|(node, r)| {
            let origin = match &node.kind {
                NodeKind::Text { origin, .. } => origin.as_deref(),
                _ => None,
            };
            let creator = origin.map(|o| match (&o.by, &o.client, &o.engine) {
                (Author::Agent, Some(client), _) => client.clone(),
                (Author::Engine, _, Some(engine)) => engine.clone(),
                (Author::Human, ..) => "person".to_owned(),
                (Author::Agent, ..) => "agent".to_owned(),
                (Author::Engine, ..) => "engine".to_owned(),
            });
            tmx::Unit {
                id: Some(format!("n{}", node.id)),
                changed: Some(r.changed).filter(|c| !c.is_empty()),
                created: None,
                creator,
                variants: vec![
                    tmx::Variant {
                        lang: source.clone(),
                        text: r.source,
                    },
                    tmx::Variant {
                        lang: target.clone(),
                        text: r.target,
                    },
                ],
            }
        })
        .collect();
    Ok(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_tags_fit_by_prefix_only_at_a_subtag() {
        assert!(fits("EN-us", "en"));
        assert!(fits("en", "en-GB"));
        assert!(fits("fr-CA", "FR-ca"));
        assert!(!fits("pt-PT", "pt-BR"));
        assert!(!fits("eng", "en"));
    }

    #[test]
    fn names_come_from_file_names() {
        assert_eq!(name_of("/tmp/Client TM.tmx").unwrap(), "Client TM");
        assert!(name_of("what?.tmx").is_err());
        assert_eq!(name_of("/tmp/client-tm_2.tmx").unwrap(), "client-tm_2");
        assert!(name_of("../.tmx").is_err());
    }
}
