//! The bases of XLIFF and PO exports: what each export said of each
//! segment (its source, translation and state), kept in the project
//! directory as `exports/<id>.json` under the id the file carries, so
//! that the file, coming back, is merged three ways
//! ([`super::translations`]). The newest [`KEPT`] are kept; a file from an
//! older export is merged as a file without a base.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use quire_model::error::CoreResult;
use quire_model::ids::NodeId;
use quire_model::scene::{NodeKind, Scene, TextState};
use quire_store::storage::{self, now_rfc3339};

/// How many bases a project keeps.
pub const KEPT: usize = 64;

/// What one export said of its segments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Base {
    pub id: String,
    /// RFC 3339.
    pub at: String,
    pub segments: HashMap<NodeId, Segment>,
}

/// One exported segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    pub source: String,
    /// `None`: no translation (an empty one is the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation: Option<String>,
    pub state: TextState,
    /// Whether an engine wrote the translation and no one has reviewed
    /// it (PO `fuzzy`).
    #[serde(default)]
    pub machine: bool,
}

impl Base {
    /// A new export's base: every text node of `scene` (the pages the
    /// export holds), under a new time-ordered id.
    pub fn of(scene: &Scene) -> Base {
        let segments = scene
            .pages
            .iter()
            .flat_map(|p| &p.nodes)
            .filter_map(|n| match &n.kind {
                NodeKind::Text {
                    text, translation, ..
                } => Some((
                    n.id,
                    Segment {
                        source: text.clone().unwrap_or_default(),
                        translation: translation.clone().filter(|t| !t.is_empty()),
                        state: n.kind.state().unwrap_or(TextState::Initial),
                        machine: n.kind.is_machine_work(),
                    },
                )),
                _ => None,
            })
            .collect();
        Base {
            id: Uuid::now_v7().to_string(),
            at: now_rfc3339(),
            segments,
        }
    }

    /// Writes it durably into `dir` (a project's `exports`), then removes
    /// all but the newest [`KEPT`].
    pub fn save(&self, dir: &Path) -> CoreResult<()> {
        storage::private_dir(dir)?;
        let json = serde_json::to_vec(self).map_err(|e| {
            quire_model::error::CoreError::internal(format!("cannot encode an export base: {e}"))
        })?;
        storage::write_atomic(&dir.join(format!("{}.json", self.id)), &json)?;
        // Ids are time-ordered (UUIDv7): the smallest names are the oldest.
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.strip_suffix(".json").is_some_and(is_id))
            .collect();
        names.sort_unstable();
        let extra = names.len().saturating_sub(KEPT);
        for name in &names[..extra] {
            // A base that cannot be removed only takes room; the export
            // itself succeeded.
            let _ = std::fs::remove_file(dir.join(name));
        }
        Ok(())
    }

    /// The base `id` names in `dir`, if the project still has it. An id
    /// that is not one quire writes names nothing (it comes from a file).
    pub fn load(dir: &Path, id: &str) -> CoreResult<Option<Base>> {
        if !is_id(id) {
            return Ok(None);
        }
        let path = dir.join(format!("{id}.json"));
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(quire_model::error::CoreError::io(&path, e)),
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            quire_model::error::CoreError::internal(format!("{} is damaged: {e}", path.display()))
        })
    }
}

/// Whether `s` is an export id as [`Base::of`] makes them.
fn is_id(s: &str) -> bool {
    Uuid::parse_str(s).is_ok_and(|u| u.hyphenated().to_string() == s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_and_names_nothing_outside_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene::new("base", "2026-12-03T00:00:00Z");
        let mut ids = Vec::new();
        for _ in 0..KEPT + 3 {
            let base = Base::of(&scene);
            base.save(dir.path()).unwrap();
            ids.push(base.id);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), KEPT);
        assert!(Base::load(dir.path(), &ids[0]).unwrap().is_none());
        let newest = Base::load(dir.path(), ids.last().unwrap()).unwrap();
        assert_eq!(newest.map(|b| b.id).as_ref(), ids.last());
        for id in ["../scene", "x", ""] {
            assert!(Base::load(dir.path(), id).unwrap().is_none(), "{id}");
        }
    }
}
