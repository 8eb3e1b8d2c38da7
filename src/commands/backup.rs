//! `quire backup`, `quire restore` and `quire gc`: the data directory's
//! projects copied out at one acknowledged moment each (with their undo
//! history, blobs and export bases) and the memory beside them, safely
//! while a server runs; brought back with the same ids; blobs nothing
//! refers to removed.
//!
//! A backup is a directory, or the same as a `.tar`:
//!
//! ```text
//! quire-backup.json   what it holds: each project's id, name, directory, epoch
//! projects/<dir>/     each project as it is on disk
//! memory/             the imported translation memories (TMX)
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::write_failed;
use crate::config::Loaded;
use crate::core::backup::{self, Copied};
use crate::core::ids::ProjectId;
use crate::core::list_projects_in;
use crate::core::storage::lock::{Holder, ProjectLock};
use crate::error::Failure;

const MANIFEST: &str = "quire-backup.json";
/// Bumped when a backup's layout changes.
const FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    format: u32,
    /// The quire version that wrote it.
    quire: String,
    /// RFC 3339.
    created_at: String,
    projects: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    id: ProjectId,
    name: String,
    /// Its directory under `projects/`.
    dir: String,
    epoch: u64,
}

fn failed(e: impl Into<anyhow::Error>) -> Failure {
    Failure::Runtime(e.into())
}

fn usage(message: String) -> Failure {
    Failure::usage(message)
}

/// `quire backup --out DIR|FILE.tar [--project NAME]…`.
pub fn backup(
    loaded: &Loaded,
    to: &Path,
    only: &[String],
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let paths = loaded.data_paths()?;
    let projects = list_projects_in(&paths.projects_dir, &[]).map_err(failed)?;
    let dir_name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    for name in only {
        let known = projects.iter().any(|p| {
            p.name.eq_ignore_ascii_case(name) || dir_name(&p.path).as_deref() == Some(name)
        });
        if !known {
            return Err(usage(format!(
                "no project `{name}` in {} (see `quire projects list`)",
                paths.projects_dir.display()
            )));
        }
    }
    let tar = to
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("tar"));
    if to.exists() {
        return Err(usage(format!(
            "{} already exists; a backup never overwrites",
            to.display()
        )));
    }
    // A .tar is built as a directory beside it first.
    let dir = if tar {
        to.with_extension("quire-backup-partial")
    } else {
        to.to_path_buf()
    };
    if tar && dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(failed)?;
    }
    crate::core::storage::private_dir(&dir).map_err(failed)?;
    let mut entries = Vec::new();
    for project in &projects {
        let dir_of = dir_name(&project.path).unwrap_or_default();
        let wanted = only.is_empty()
            || only
                .iter()
                .any(|n| project.name.eq_ignore_ascii_case(n) || *n == dir_of);
        if !wanted {
            continue;
        }
        let Copied {
            id,
            name,
            epoch,
            blobs,
        } = backup::copy_project(&project.path, &dir.join("projects").join(&dir_of)).map_err(
            |e| failed(anyhow::Error::new(e).context(format!("cannot copy {}", project.name))),
        )?;
        writeln!(out, "{name}: epoch {epoch}, {blobs} blobs").map_err(write_failed)?;
        entries.push(Entry {
            id,
            name,
            dir: dir_of,
            epoch,
        });
    }
    let memory = backup::copy_tree(&paths.memory_dir, &dir.join("memory")).map_err(failed)?;
    let manifest = Manifest {
        format: FORMAT,
        quire: env!("CARGO_PKG_VERSION").to_owned(),
        created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        projects: entries,
    };
    let text = serde_json::to_vec_pretty(&manifest).map_err(failed)?;
    crate::core::storage::write_atomic(&dir.join(MANIFEST), &text).map_err(failed)?;
    if tar {
        pack(&dir, to)?;
        std::fs::remove_dir_all(&dir).map_err(failed)?;
    }
    writeln!(
        out,
        "backup of {} projects and {memory} memory files written to {}",
        manifest.projects.len(),
        to.display()
    )
    .map_err(write_failed)
}

/// Writes `dir`'s tree as the tar `to` (0600), through a temporary file.
fn pack(dir: &Path, to: &Path) -> Result<(), Failure> {
    let partial = to.with_extension("tar.partial");
    let file = crate::core::storage::private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&partial)
        .map_err(failed)?;
    let mut builder = tar::Builder::new(std::io::BufWriter::new(file));
    builder.mode(tar::HeaderMode::Deterministic);
    builder.append_dir_all(".", dir).map_err(failed)?;
    let file = builder
        .into_inner()
        .map_err(failed)?
        .into_inner()
        .map_err(|e| failed(e.into_error()))?;
    file.sync_all().map_err(failed)?;
    std::fs::rename(&partial, to).map_err(failed)
}

/// `quire restore FROM`: a backup's projects into the projects directory
/// (each under its own directory name, with its own id) and its memory
/// files into the memory directory. Nothing is written if any project is
/// there already, by directory or by id.
pub fn restore(loaded: &Loaded, from: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    let paths = loaded.data_paths()?;
    if !from.exists() {
        return Err(usage(format!("{} does not exist", from.display())));
    }
    crate::core::storage::private_dir(&paths.data_dir).map_err(failed)?;
    // A .tar is unpacked into the data directory first (the same file
    // system, so each project is renamed into place whole).
    let unpacked: Option<PathBuf> = if from.is_file() {
        let dir = paths
            .data_dir
            .join(format!(".quire-restore-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(failed)?;
        }
        crate::core::storage::private_dir(&dir).map_err(failed)?;
        let file = std::fs::File::open(from).map_err(failed)?;
        if let Err(e) = tar::Archive::new(file).unpack(&dir) {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(usage(format!(
                "{} is not a backup tar: {e}",
                from.display()
            )));
        }
        Some(dir)
    } else {
        None
    };
    let result = restore_from(unpacked.as_deref().unwrap_or(from), from, &paths, out);
    if let Some(dir) = unpacked {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

fn restore_from(
    dir: &Path,
    named: &Path,
    paths: &crate::config::dirs::DataPaths,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let text = std::fs::read(dir.join(MANIFEST)).map_err(|_| {
        usage(format!(
            "{} is not a quire backup (no {MANIFEST})",
            named.display()
        ))
    })?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| {
        usage(format!(
            "{}: {MANIFEST} does not read: {e}",
            named.display()
        ))
    })?;
    if manifest.format > FORMAT {
        return Err(usage(format!(
            "{} was written by quire {} in a newer format ({}); this quire reads {FORMAT}",
            named.display(),
            manifest.quire,
            manifest.format
        )));
    }
    let present = list_projects_in(&paths.projects_dir, &[]).map_err(failed)?;
    let mut clashes = Vec::new();
    for entry in &manifest.projects {
        let safe = !entry.dir.is_empty()
            && Path::new(&entry.dir).components().count() == 1
            && !entry.dir.starts_with('.');
        if !safe {
            return Err(usage(format!(
                "{}: `{}` is not a project directory name",
                named.display(),
                entry.dir
            )));
        }
        if paths.projects_dir.join(&entry.dir).exists() {
            clashes.push(format!("{} (directory {})", entry.name, entry.dir));
        } else if let Some(p) = present.iter().find(|p| p.id == entry.id) {
            clashes.push(format!(
                "{} (the same id, at {})",
                entry.name,
                p.path.display()
            ));
        }
    }
    let memory = dir.join("memory");
    let memory_files: Vec<PathBuf> = match std::fs::read_dir(&memory) {
        Ok(read) => read
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    for file in &memory_files {
        let there = paths.memory_dir.join(file.file_name().unwrap_or_default());
        if there.exists() && std::fs::read(&there).ok() != std::fs::read(file).ok() {
            clashes.push(format!("memory file {}", there.display()));
        }
    }
    if !clashes.is_empty() {
        return Err(usage(format!(
            "nothing restored: already in {}: {}",
            paths.data_dir.display(),
            clashes.join(", ")
        )));
    }
    let holder = Holder {
        pid: std::process::id(),
        mode: "restore".into(),
        url: None,
        mcp: None,
    };
    for entry in &manifest.projects {
        let to = paths.projects_dir.join(&entry.dir);
        let copied =
            backup::copy_project(&dir.join("projects").join(&entry.dir), &to).map_err(|e| {
                failed(anyhow::Error::new(e).context(format!("cannot restore {}", entry.name)))
            })?;
        // Nobody may have opened it between the copy and this check.
        drop(ProjectLock::acquire(&to, &holder).map_err(failed)?);
        writeln!(
            out,
            "{}: restored at epoch {} ({})",
            copied.name,
            copied.epoch,
            to.display()
        )
        .map_err(write_failed)?;
    }
    crate::core::storage::private_dir(&paths.memory_dir).map_err(failed)?;
    for file in &memory_files {
        let there = paths.memory_dir.join(file.file_name().unwrap_or_default());
        if !there.exists() {
            let bytes = std::fs::read(file).map_err(failed)?;
            crate::core::storage::write_atomic(&there, &bytes).map_err(failed)?;
        }
    }
    writeln!(
        out,
        "restored {} projects and {} memory files from {}",
        manifest.projects.len(),
        memory_files.len(),
        named.display()
    )
    .map_err(write_failed)
}

/// `quire gc`: each project that is not open loses the blobs nothing
/// refers to; an open one is left to its server (and said).
pub fn gc(loaded: &Loaded, out: &mut dyn Write) -> Result<(), Failure> {
    let paths = loaded.data_paths()?;
    let projects = list_projects_in(&paths.projects_dir, &[]).map_err(failed)?;
    let holder = Holder {
        pid: std::process::id(),
        mode: "gc".into(),
        url: None,
        mcp: None,
    };
    let (mut blobs, mut bytes) = (0, 0);
    for project in projects {
        let Ok(lock) = ProjectLock::acquire(&project.path, &holder) else {
            writeln!(out, "{}: open elsewhere; left alone", project.name).map_err(write_failed)?;
            continue;
        };
        let collected = backup::collect_garbage(&project.path).map_err(failed)?;
        drop(lock);
        if collected.blobs > 0 {
            writeln!(
                out,
                "{}: removed {} unreferenced blobs ({} bytes)",
                project.name, collected.blobs, collected.bytes
            )
            .map_err(write_failed)?;
        }
        blobs += collected.blobs;
        bytes += collected.bytes;
    }
    writeln!(out, "removed {blobs} blobs ({bytes} bytes) in all").map_err(write_failed)
}
