//! A project directory on disk:
//!
//! ```text
//! project.toml     id, name, createdAt, format version
//! scene.json       snapshot { epoch, scene }, written atomically
//! ops.log          frames since the snapshot, one JSON line each
//! blobs/ab/cdef…   content-addressed blobs
//! .lock            the exclusive lock of the process that has it open
//! ```

pub mod lock;
pub mod log;
pub mod writer;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{CoreError, CoreResult};
use super::ids::ProjectId;
use super::scene::Scene;

/// Bumped when the on-disk layout changes incompatibly.
pub const FORMAT_VERSION: u32 = 1;

/// The paths of one project directory.
#[derive(Debug, Clone)]
pub struct ProjectFiles {
    pub dir: PathBuf,
}

impl ProjectFiles {
    pub fn new(dir: PathBuf) -> Self {
        ProjectFiles { dir }
    }
    pub fn project_toml(&self) -> PathBuf {
        self.dir.join("project.toml")
    }
    pub fn scene_json(&self) -> PathBuf {
        self.dir.join("scene.json")
    }
    pub fn ops_log(&self) -> PathBuf {
        self.dir.join("ops.log")
    }
    pub fn lock(&self) -> PathBuf {
        self.dir.join(".lock")
    }
}

/// `project.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectToml {
    pub id: ProjectId,
    pub name: String,
    pub created_at: String,
    pub format_version: u32,
}

impl ProjectToml {
    pub fn read(path: &Path) -> CoreResult<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => CoreError::InvalidInput(format!(
                "{} is not a quire project (no project.toml)",
                path.parent().unwrap_or(path).display()
            )),
            _ => CoreError::Corrupt {
                file: path.to_path_buf(),
                line: None,
                message: format!("cannot read: {e}"),
            },
        })?;
        let parsed: ProjectToml = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            CoreError::Corrupt {
                file: path.to_path_buf(),
                line,
                message: e.message().trim().to_owned(),
            }
        })?;
        if parsed.format_version > FORMAT_VERSION {
            return Err(CoreError::Corrupt {
                file: path.to_path_buf(),
                line: None,
                message: format!(
                    "format version {} is newer than this quire understands ({FORMAT_VERSION}); upgrade quire",
                    parsed.format_version
                ),
            });
        }
        Ok(parsed)
    }

    pub fn write(&self, path: &Path) -> CoreResult<()> {
        let text = toml::to_string(self)
            .map_err(|e| CoreError::Io(format!("cannot encode project.toml: {e}")))?;
        write_atomic(path, text.as_bytes())
    }
}

/// `scene.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SnapshotFile {
    pub epoch: u64,
    pub scene: Scene,
}

impl SnapshotFile {
    /// `Ok(None)` when the file does not exist.
    pub fn read(path: &Path) -> CoreResult<Option<Self>> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CoreError::io(path.display(), e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| CoreError::Corrupt {
                file: path.to_path_buf(),
                line: Some(e.line()),
                message: e.to_string(),
            })
    }

    pub fn encode(&self) -> CoreResult<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| CoreError::Io(format!("cannot encode scene: {e}")))
    }
}

/// Writes a file so that readers see the old or the new content, never a
/// mix, and the new content survives a crash once this returns: temp file
/// in the same directory, fsync, rename, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> CoreResult<()> {
    let dir = path
        .parent()
        .ok_or_else(|| CoreError::Io(format!("{} has no parent directory", path.display())))?;
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| CoreError::io(dir.display(), e))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| CoreError::io(path.display(), e))?;
    tmp.persist(path)
        .map_err(|e| CoreError::io(path.display(), e.error))?;
    fsync_dir(dir)
}

/// Makes a directory's entries (a rename, a new file) durable.
pub fn fsync_dir(dir: &Path) -> CoreResult<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| CoreError::io(dir.display(), e))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Now, as RFC 3339 with milliseconds.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}
