//! A consistent copy of a project directory, taken while a server may be
//! writing it (`quire backup`): the snapshot, the undo history and the log
//! since the snapshot, as one moment of the project, with its blobs and
//! its export bases.
//!
//! No lock is taken and no server is asked. The files are made to be read
//! this way: blobs never change once written; the log is only appended to
//! (a frame is acknowledged once it is whole and synced) until a snapshot
//! replaces `history.json`, then `scene.json`, then empties the log. So
//! the copy reads the snapshot and the history, then the log, then the
//! snapshot and the history again: if either changed, a snapshot came in
//! between and the copy starts over. A last line still being appended is
//! left out (it was not acknowledged when it was read). The copy is then
//! checked as an open would check it (checksums, epochs that follow on)
//! before it counts.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use quire_model::error::{CoreError, CoreResult};
use quire_store::storage::{self, HistoryFile, ProjectFiles, ProjectToml, SnapshotFile, log};

/// How often a copy is tried again when a snapshot came in between.
const ATTEMPTS: usize = 20;

/// A project copied: its id and name, and the epoch the copy holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Copied {
    pub id: quire_model::ids::ProjectId,
    pub name: String,
    pub epoch: u64,
    pub blobs: usize,
}

/// Copies the project in `src` into `dst` (which must not exist yet).
pub fn copy_project(src: &Path, dst: &Path) -> CoreResult<Copied> {
    let from = ProjectFiles::new(src.to_path_buf());
    let project = ProjectToml::read(&from.project_toml())?;
    if dst.exists() {
        return Err(CoreError::InvalidInput(format!(
            "{} already exists",
            dst.display()
        )));
    }
    let (scene, history, mut ops) = consistent_read(&from)?;
    // A last line being written when it was read is not acknowledged yet.
    let whole = ops.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    ops.truncate(whole);
    let parent = dst
        .parent()
        .ok_or_else(|| CoreError::InvalidInput(format!("{} has no parent", dst.display())))?;
    storage::private_dir(parent)?;
    // Built beside its place, then renamed into it: an interrupted copy
    // leaves no project that looks whole.
    let building = parent.join(format!(
        ".quire-backup-{}",
        dst.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("project")
    ));
    if building.exists() {
        std::fs::remove_dir_all(&building).map_err(|e| CoreError::io(&building, e))?;
    }
    storage::private_dir(&building)?;
    let to = ProjectFiles::new(building.clone());
    let write =
        |path: PathBuf, bytes: &[u8]| -> CoreResult<()> { storage::write_atomic(&path, bytes) };
    write(
        to.project_toml(),
        &std::fs::read(from.project_toml()).map_err(|e| CoreError::io(from.project_toml(), e))?,
    )?;
    if let Some(scene) = &scene {
        write(to.scene_json(), scene)?;
    }
    if let Some(history) = &history {
        write(to.history_json(), history)?;
    }
    write(to.ops_log(), &ops)?;
    let blobs = copy_tree(&src.join("blobs"), &building.join("blobs"))?;
    copy_tree(&from.exports(), &to.exports())?;
    let epoch = check(&to)?;
    std::fs::rename(&building, dst).map_err(|e| CoreError::io(dst, e))?;
    Ok(Copied {
        id: project.id,
        name: project.name,
        epoch,
        blobs,
    })
}

type Files = (Option<Vec<u8>>, Option<Vec<u8>>, Vec<u8>);

/// The snapshot, the history and the log as of one moment.
fn consistent_read(files: &ProjectFiles) -> CoreResult<Files> {
    let read = |path: PathBuf| -> CoreResult<Option<Vec<u8>>> {
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(CoreError::io(&path, e)),
        }
    };
    for _ in 0..ATTEMPTS {
        let scene = read(files.scene_json())?;
        let history = read(files.history_json())?;
        let ops = read(files.ops_log())?.unwrap_or_default();
        if read(files.scene_json())? == scene && read(files.history_json())? == history {
            return Ok((scene, history, ops));
        }
    }
    Err(CoreError::internal(format!(
        "{}: snapshots kept coming while it was copied ({ATTEMPTS} tries); try again",
        files.dir.display()
    )))
}

/// Checks a copied project as an open would: its snapshot and history
/// whole, its log following on from the snapshot with no frame missing.
/// Returns the epoch it holds.
fn check(files: &ProjectFiles) -> CoreResult<u64> {
    let snapshot_epoch = SnapshotFile::read(&files.scene_json())?.map_or(0, |s| s.epoch);
    let recovered = log::read(&files.ops_log(), snapshot_epoch)?;
    if let Some(torn) = recovered.dropped {
        return Err(CoreError::internal(format!("the copy is torn: {torn}")));
    }
    let epoch = recovered
        .frames
        .last()
        .map_or(snapshot_epoch, |(_, e, _)| *e);
    if let Some(history) = HistoryFile::read(&files.history_json())?
        && history.epoch > epoch
    {
        return Err(CoreError::internal(format!(
            "the copy's history is at epoch {}, past its log's {epoch}",
            history.epoch
        )));
    }
    Ok(epoch)
}

/// Copies every file under `from` into `to` (made 0700/0600); how many.
pub fn copy_tree(from: &Path, to: &Path) -> CoreResult<usize> {
    let entries = match std::fs::read_dir(from) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(CoreError::io(from, e)),
    };
    storage::private_dir(to)?;
    let mut copied = 0;
    for entry in entries {
        let entry = entry.map_err(|e| CoreError::io(from, e))?;
        let path = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| CoreError::io(&path, e))?;
        if kind.is_dir() {
            copied += copy_tree(&path, &to.join(&name))?;
        } else if kind.is_file() {
            let bytes = std::fs::read(&path).map_err(|e| CoreError::io(&path, e))?;
            storage::write_atomic(&to.join(&name), &bytes)?;
            copied += 1;
        }
    }
    Ok(copied)
}

/// What a collection removed from one project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Collected {
    pub blobs: usize,
    pub bytes: u64,
}

/// Removes the blobs of the project in `dir` that nothing refers to: not
/// its snapshot, its log or its undo history (what an import that never
/// became an op left). The caller holds the project's lock, so no op can
/// come to refer to one meanwhile.
pub fn collect_garbage(dir: &Path) -> CoreResult<Collected> {
    let files = ProjectFiles::new(dir.to_path_buf());
    // Every place a blob's hash can be written: a hash written anywhere
    // in them keeps its blob.
    let mut keep = HashSet::new();
    for path in [files.scene_json(), files.history_json(), files.ops_log()] {
        match std::fs::read(&path) {
            Ok(bytes) => hashes_in(&bytes, &mut keep),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(CoreError::io(&path, e)),
        }
    }
    remove_blobs_except(dir, &keep)
}

/// Every run of exactly 64 hex digits in `bytes` (how a blob's hash is
/// written), lowercased.
fn hashes_in(bytes: &[u8], into: &mut HashSet<String>) {
    let mut start = None;
    for (i, b) in bytes.iter().chain(std::iter::once(&b' ')).enumerate() {
        match (b.is_ascii_hexdigit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s == 64 {
                    into.insert(String::from_utf8_lossy(&bytes[s..i]).to_ascii_lowercase());
                }
                start = None;
            }
            _ => {}
        }
    }
}

/// Removes every blob of the project in `dir` whose hash (hex) is not in
/// `keep`.
pub fn remove_blobs_except(dir: &Path, keep: &HashSet<String>) -> CoreResult<Collected> {
    let mut collected = Collected::default();
    let root = dir.join("blobs");
    let shards = match std::fs::read_dir(&root) {
        Ok(shards) => shards,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(collected),
        Err(e) => return Err(CoreError::io(&root, e)),
    };
    for shard in shards {
        let shard = shard.map_err(|e| CoreError::io(&root, e))?;
        let prefix = shard.file_name().to_string_lossy().into_owned();
        if prefix.len() != 2 || !shard.path().is_dir() {
            continue;
        }
        for blob in std::fs::read_dir(shard.path()).map_err(|e| CoreError::io(shard.path(), e))? {
            let blob = blob.map_err(|e| CoreError::io(shard.path(), e))?;
            let rest = blob.file_name().to_string_lossy().into_owned();
            let hex = format!("{prefix}{rest}");
            // Not a blob (a staging file), or one something uses.
            let is_hash = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
            if !is_hash || keep.contains(&hex) {
                continue;
            }
            let path = blob.path();
            let size = blob.metadata().map_or(0, |m| m.len());
            std::fs::remove_file(&path).map_err(|e| CoreError::io(&path, e))?;
            collected.blobs += 1;
            collected.bytes += size;
        }
    }
    Ok(collected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_runs_of_64_hex_digits() {
        let a = "ab".repeat(32);
        let b = "0F".repeat(32);
        let text = format!(
            "{{\"blob\":\"{a}\",\"x\":\"{b}\",\"long\":\"{a}0\",\"id\":\"{}\"}}",
            "1".repeat(63)
        );
        let mut found = HashSet::new();
        hashes_in(text.as_bytes(), &mut found);
        let mut found: Vec<String> = found.into_iter().collect();
        found.sort();
        assert_eq!(found, [b.to_ascii_lowercase(), a]);
    }
}
