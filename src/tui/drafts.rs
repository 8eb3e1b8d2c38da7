//! Drafts kept on disk while they are typed, so that a killed TUI or a
//! closed terminal loses none: one JSON file per project under
//! `<data_dir>/drafts/`, each draft by its node. A draft goes when it is
//! saved or dropped on purpose; opening its node again offers it back.
//! They are the person's own, so they live with this TUI's data (also
//! when it is attached to a server elsewhere), not in the project.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use quire_model::ids::{NodeId, PageId, ProjectId};

/// A draft as kept: where it goes, what was typed, and the translation it
/// started from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptDraft {
    pub page: PageId,
    pub text: String,
    pub based_on: Option<String>,
}

/// A project's kept drafts, by node.
pub type Kept = BTreeMap<NodeId, KeptDraft>;

/// The drafts directory, and the order writes were asked in: a write
/// asked before one already done is skipped, so the file always ends with
/// the last keystroke's text.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    written: Arc<Mutex<u64>>,
}

impl Store {
    pub fn new(dir: PathBuf) -> Store {
        Store {
            dir,
            written: Arc::new(Mutex::new(0)),
        }
    }

    fn file(&self, project: ProjectId) -> PathBuf {
        self.dir.join(format!("{project}.json"))
    }

    pub fn load(&self, project: ProjectId) -> Kept {
        read(&self.file(project))
    }

    /// Sets (or, with `None`, forgets) the draft of `node`, if no later
    /// write (`seq`) has been made.
    pub fn put(
        &self,
        seq: u64,
        project: ProjectId,
        node: NodeId,
        draft: Option<KeptDraft>,
    ) -> std::io::Result<()> {
        let Ok(mut written) = self.written.lock() else {
            return Ok(());
        };
        if seq < *written {
            return Ok(());
        }
        *written = seq;
        let path = self.file(project);
        let mut kept = read(&path);
        match draft {
            Some(d) => kept.insert(node, d),
            None => kept.remove(&node),
        };
        if kept.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        // Owner-only, as the projects they belong to are.
        quire_store::storage::private_dir(&self.dir).map_err(std::io::Error::other)?;
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(&kept).map_err(std::io::Error::other)?;
        let mut file = quire_store::storage::private_file()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        std::io::Write::write_all(&mut file, &text)?;
        std::fs::rename(&tmp, &path)
    }
}

fn read(path: &Path) -> Kept {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_write_wins_and_an_emptied_file_goes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = Store::new(dir.path().join("drafts"));
        let (project, node, page) = (ProjectId::new(), NodeId::new(), PageId::new());
        let draft = |text: &str| KeptDraft {
            page,
            text: text.into(),
            based_on: None,
        };
        store
            .put(2, project, node, Some(draft("second")))
            .unwrap_or_else(|e| panic!("{e}"));
        store
            .put(1, project, node, Some(draft("first")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.load(project)[&node].text, "second");
        store
            .put(3, project, node, None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(store.load(project).is_empty());
        assert!(!store.file(project).exists());
    }
}
