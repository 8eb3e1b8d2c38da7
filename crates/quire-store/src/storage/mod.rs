//! A project directory on disk:
//!
//! ```text
//! project.toml     id, name, createdAt, format version, the epoch reached
//! scene.json       snapshot { epoch, sum, scene }, written atomically
//! ops.log          frames since the snapshot, one JSON line each
//! blobs/ab/cdef…   content-addressed blobs
//! exports/ID.json  what an XLIFF or PO export said of each segment, the
//!                  base a file coming back is merged against
//! .lock            the exclusive lock of the process that has it open
//! ```
//!
//! Nothing here is silent about damage: the snapshot and every log line
//! carry a checksum, and `project.toml` records an epoch the log has
//! reached, so a deleted `ops.log` is noticed instead of opening the
//! project at an older snapshot. Every file is created readable by its
//! owner only (0600, directories 0700): a project holds someone's work.

pub mod journal;
pub mod lock;
pub mod log;
pub mod writer;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use quire_model::error::{CoreError, CoreResult};
use quire_model::history::Stacks;
use quire_model::ids::ProjectId;
use quire_model::scene::{NodeKind, Scene};

/// Bumped when the on-disk layout changes incompatibly. 2: `scene.json`
/// carries a checksum and `project.toml` an epoch (quire 0.1.0 wrote 1,
/// which this version still reads).
pub const FORMAT_VERSION: u32 = 2;

/// The prefix of every temporary file quire writes into a project; what a
/// crash leaves behind is removed at the next open.
const TEMP_PREFIX: &str = ".quire-tmp-";

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
    /// Where the bases of XLIFF and PO exports are kept.
    pub fn exports(&self) -> PathBuf {
        self.dir.join("exports")
    }
    pub fn history_json(&self) -> PathBuf {
        self.dir.join("history.json")
    }
    /// Every change, who made it and what it changed (`journal.rs`).
    pub fn journal(&self) -> PathBuf {
        self.dir.join("journal.jsonl")
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
    /// An epoch the project is known to have reached: written once the
    /// first frame after each snapshot is durable. If `scene.json` and
    /// `ops.log` together reach less, changes were lost (e.g. `ops.log`
    /// was deleted) and the project is not opened. Absent in 0.1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
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
        write_atomic(path, self.encode()?.as_bytes())
    }

    pub fn encode(&self) -> CoreResult<String> {
        toml::to_string(self)
            .map_err(|e| CoreError::internal(format!("cannot encode project.toml: {e}")))
    }
}

/// The scene at an epoch: the shape of `scene.json` (which adds a
/// checksum), of the JSON export and of `GET /scene.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SnapshotFile {
    pub epoch: u64,
    pub scene: Scene,
}

/// `scene.json` as stored: `sum` is BLAKE3 over the epoch and the exact
/// bytes of `scene`, as for log frames. 0.1.0 wrote no `sum`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredSnapshot<'a> {
    epoch: u64,
    #[serde(default)]
    sum: Option<&'a str>,
    #[serde(borrow)]
    scene: &'a serde_json::value::RawValue,
}

impl SnapshotFile {
    /// `Ok(None)` when the file does not exist.
    pub fn read(path: &Path) -> CoreResult<Option<Self>> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CoreError::io(path, e)),
        };
        let corrupt = |line: Option<usize>, message: String| CoreError::Corrupt {
            file: path.to_path_buf(),
            line,
            message,
        };
        let stored: StoredSnapshot<'_> =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(Some(e.line()), e.to_string()))?;
        let raw = stored.scene.get();
        if let Some(sum) = stored.sum
            && log::checksum(stored.epoch, raw) != sum
        {
            return Err(corrupt(
                None,
                "checksum mismatch: the file was changed or damaged".into(),
            ));
        }
        let mut scene: Scene =
            serde_json::from_str(raw).map_err(|e| corrupt(None, e.to_string()))?;
        // A 0.1.0 scene has no translation states: they are inferred.
        for page in &mut scene.pages {
            if page
                .nodes
                .iter()
                .any(|n| matches!(n.kind, NodeKind::Text { state: None, .. }))
            {
                std::sync::Arc::make_mut(page).infer_states();
            }
        }
        Ok(Some(SnapshotFile {
            epoch: stored.epoch,
            scene,
        }))
    }

    /// The bytes of `scene.json`, checksum included: serialized once into
    /// one buffer, the checksum's place filled in last.
    pub fn encode(&self) -> CoreResult<Vec<u8>> {
        log::checksummed(self.epoch, "scene", |out| {
            serde_json::to_writer(out, &self.scene)
                .map_err(|e| CoreError::internal(format!("cannot encode scene: {e}")))
        })
    }
}

/// `history.json`: the undo and redo stacks at a snapshot's epoch, with a
/// checksum as `scene.json` has. Written just before `scene.json`, so it is
/// never older than the snapshot unless a crash came between the two.
pub struct HistoryFile {
    pub epoch: u64,
    pub stacks: Stacks,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredHistory<'a> {
    epoch: u64,
    sum: &'a str,
    #[serde(borrow)]
    history: &'a serde_json::value::RawValue,
}

impl HistoryFile {
    /// `Ok(None)` when the file does not exist (a 0.1.0 project).
    pub fn read(path: &Path) -> CoreResult<Option<Self>> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CoreError::io(path, e)),
        };
        let corrupt = |message: String| CoreError::Corrupt {
            file: path.to_path_buf(),
            line: None,
            message,
        };
        let stored: StoredHistory<'_> =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        let raw = stored.history.get();
        if log::checksum(stored.epoch, raw) != stored.sum {
            return Err(corrupt("checksum mismatch".into()));
        }
        let stacks = serde_json::from_str(raw).map_err(|e| corrupt(e.to_string()))?;
        Ok(Some(HistoryFile {
            epoch: stored.epoch,
            stacks,
        }))
    }

    pub fn encode(&self) -> CoreResult<Vec<u8>> {
        log::checksummed(self.epoch, "history", |out| {
            serde_json::to_writer(out, &self.stacks)
                .map_err(|e| CoreError::internal(format!("cannot encode history: {e}")))
        })
    }
}

/// Options that create a file only its owner can read or write (0600).
pub fn private_file() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Writes `bytes` to a new or truncated owner-only file (not atomically).
pub fn write_private(path: &Path, bytes: &[u8]) -> CoreResult<()> {
    private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| CoreError::io(path, e))
}

/// Creates `dir` owner-only (0700) if it does not exist, and so every
/// missing directory above it (the data and projects directories quire
/// makes hold someone's work too); existing ones are left as they are.
pub fn private_dir(dir: &Path) -> CoreResult<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(CoreError::io(dir, e)),
    }
}

/// Makes an existing file or directory of a project owner-only, for
/// projects written before quire did so (0.1.0 left `ops.log` and `.lock`
/// 0644).
pub fn tighten(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            let wanted = if meta.is_dir() { 0o700 } else { 0o600 };
            if mode & 0o077 != 0 && !meta.file_type().is_symlink() {
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// A temporary file beside `path`'s final place, owner-only, named so that
/// `remove_temp_files` recognises it.
pub fn temp_file_in(dir: &Path) -> CoreResult<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| CoreError::io(dir, e))
}

/// Housekeeping at open: removes the temporary files a crash left (in the
/// project directory and the blob shards) and makes quire's own files and
/// directories owner-only. Returns how many bytes were freed.
pub fn tidy(files: &ProjectFiles) -> u64 {
    let blobs = files.dir.join("blobs");
    let shards = std::fs::read_dir(&blobs)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path());
    let freed = std::iter::once(files.dir.clone())
        .chain(std::iter::once(files.exports()).filter(|d| d.is_dir()))
        .chain(shards)
        .map(|d| remove_temp_files(&d))
        .sum();
    for path in [
        files.dir.clone(),
        files.ops_log(),
        files.lock(),
        files.scene_json(),
        files.history_json(),
        files.project_toml(),
        blobs,
    ] {
        tighten(&path);
    }
    freed
}

/// Removes the temporary files a crash left in `dir`: quire's own, and the
/// `.tmpXXXXXX` files of 0.1.0's snapshot writer. Returns how many bytes
/// were freed.
fn remove_temp_files(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut freed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let old_style = name.len() == 10
            && name.starts_with(".tmp")
            && name[4..].chars().all(|c| c.is_ascii_alphanumeric());
        if !(name.starts_with(TEMP_PREFIX) || old_style) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() && std::fs::remove_file(entry.path()).is_ok() {
            freed += meta.len();
        }
    }
    freed
}

/// Writes a file so that readers see the old or the new content, never a
/// mix, and the new content survives a crash once this returns: temp file
/// in the same directory, fsync, rename, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> CoreResult<()> {
    let dir = path.parent().ok_or_else(|| {
        CoreError::internal(format!("{} has no parent directory", path.display()))
    })?;
    let mut tmp = temp_file_in(dir)?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| CoreError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| CoreError::io(path, e.error))?;
    fsync_dir(dir)
}

/// Makes a directory's entries (a rename, a new file) durable.
pub fn fsync_dir(dir: &Path) -> CoreResult<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| CoreError::io(dir, e))
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
