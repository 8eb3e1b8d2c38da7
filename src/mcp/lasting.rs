//! Session ids that outlive their `quire mcp stdio` process (`05-mcp.md`,
//! "A session id outlives its stdio process").
//!
//! Some clients start a new `quire mcp stdio` for every tool call
//! (langchain-mcp-adapters does by default), so a `sessionId` one process
//! returned must mean the same project to the next. Each project opened
//! over stdio is recorded as `<data dir>/mcp-sessions/<session id>.json`
//! (its directory); a later process that is handed an id it has not open
//! reopens that directory under the same id. `quire_close_project` removes
//! the record, and the id is unknown from then on. A record is one small
//! file written whole (`storage::write_atomic`), so processes running at
//! once never see half of one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use quire_model::ids::SessionId;

/// The records of one data directory.
#[derive(Debug, Clone)]
pub struct LastingSessions {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct Record {
    /// The project's directory.
    path: PathBuf,
}

impl LastingSessions {
    /// The records under `data_dir`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        LastingSessions {
            dir: data_dir.join("mcp-sessions"),
        }
    }

    fn file(&self, id: SessionId) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Records that session `id` is the project at `path`. A failure is
    /// logged, not returned: the session works in this process either way.
    pub fn record(&self, id: SessionId, path: &Path) {
        let text = serde_json::to_vec(&Record {
            path: path.to_path_buf(),
        })
        .unwrap_or_default();
        let written = std::fs::create_dir_all(&self.dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                quire_store::storage::write_atomic(&self.file(id), &text).map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            tracing::warn!("cannot record session {id} for later processes: {e}");
        }
    }

    /// The project directory of session `id`, if one was recorded.
    pub fn lookup(&self, id: SessionId) -> Option<PathBuf> {
        let bytes = std::fs::read(self.file(id)).ok()?;
        serde_json::from_slice::<Record>(&bytes)
            .ok()
            .map(|r| r.path)
    }

    /// Forgets session `id` (it was closed).
    pub fn forget(&self, id: SessionId) {
        match std::fs::remove_file(self.file(id)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("cannot forget session {id}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_found_until_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let lasting = LastingSessions::in_data_dir(dir.path());
        let id = SessionId::new();
        assert_eq!(lasting.lookup(id), None);
        lasting.record(id, Path::new("/srv/chapter 1"));
        assert_eq!(
            lasting.lookup(id).as_deref(),
            Some(Path::new("/srv/chapter 1"))
        );
        assert_eq!(lasting.lookup(SessionId::new()), None);
        lasting.forget(id);
        assert_eq!(lasting.lookup(id), None);
        lasting.forget(id);
    }
}
