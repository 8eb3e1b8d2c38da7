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
use crate::error::Failure;
use quire_core::backup::{self, Copied};
use quire_core::projects::list_projects_in;
use quire_model::ids::ProjectId;
use quire_store::storage::lock::{Holder, ProjectLock};

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
    quire_store::storage::private_dir(&dir).map_err(failed)?;
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
    quire_store::storage::write_atomic(&dir.join(MANIFEST), &text).map_err(failed)?;
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
    let file = quire_store::storage::private_file()
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
/// files into the memory directory.
///
/// Everything is checked before anything is put in place: the archive is
/// unpacked into a staging directory (refusing, by name, a symbolic or
/// hard link, a device or FIFO, a path that is absolute or climbs out, an
/// entry twice, a truncated or non-tar file), its manifest read, every
/// project it names found and copied as an open would check it. Only then
/// is each project renamed into place. A refusal, or a project already
/// there (by directory or by id), leaves the data directory as it was;
/// the staging directory of a restore that was killed is removed by the
/// next one.
pub fn restore(loaded: &Loaded, from: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    let paths = loaded.data_paths()?;
    if !from.exists() {
        return Err(usage(format!("{} does not exist", from.display())));
    }
    let staging = Staging::new(&paths.data_dir)?;
    let unpacked = staging.dir.join("in");
    unpack(from, &unpacked)?;
    let built = staging.dir.join("out");
    let restored = build(&unpacked, from, &paths, &built)?;
    put_in_place(&built, &staging, &paths)?;
    for (name, epoch, dir) in &restored.projects {
        writeln!(
            out,
            "{name}: restored at epoch {epoch} ({})",
            paths.projects_dir.join(dir).display()
        )
        .map_err(write_failed)?;
    }
    writeln!(
        out,
        "restored {} projects and {} memory files from {}",
        restored.projects.len(),
        restored.memory_files,
        from.display()
    )
    .map_err(write_failed)
}

/// The prefix of a restore's staging directory; its process id follows.
const STAGING: &str = ".quire-restore-";

/// Where a restore builds what it will put in place: inside the data
/// directory, or, when there is none yet, beside where it will be (the
/// same file system, so that the whole data directory is renamed into
/// place at once). Removed when dropped.
struct Staging {
    dir: PathBuf,
    /// The data directory did not exist: the staging directory becomes it.
    whole: bool,
}

impl Staging {
    fn new(data_dir: &Path) -> Result<Staging, Failure> {
        let (home, whole) = if data_dir.is_dir() {
            (data_dir.to_path_buf(), false)
        } else {
            // The nearest directory that exists above it.
            let mut home = data_dir.parent().map(Path::to_path_buf);
            while let Some(dir) = home.as_deref().filter(|d| !d.is_dir()) {
                home = dir.parent().map(Path::to_path_buf);
            }
            let home = home
                .filter(|h| !h.as_os_str().is_empty())
                .unwrap_or_else(|| PathBuf::from("."));
            (home, true)
        };
        sweep_restores(&home);
        let dir = home.join(format!("{STAGING}{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(failed)?;
        }
        quire_store::storage::private_dir(&dir).map_err(failed)?;
        Ok(Staging { dir, whole })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes the staging directories in `dir` of restores that were killed
/// (their process is gone); how many.
pub fn sweep_restores(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut swept = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(STAGING))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id()
            && !process_alive(pid)
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            swept += 1;
        }
    }
    swept
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| {
            !matches!(
                rustix::process::test_kill_process(pid),
                Err(rustix::io::Errno::SRCH)
            )
        })
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// A refusal of the backup `named` because of `entry`.
fn hostile(named: &Path, entry: &Path, why: &str) -> Failure {
    usage(format!(
        "nothing restored: {} holds `{}`, {why}",
        named.display(),
        entry.display()
    ))
}

/// `path` made relative, or `None` when it is absolute or climbs out.
fn inside(path: &Path) -> Option<PathBuf> {
    let mut rel = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::Normal(p) => rel.push(p),
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    Some(rel)
}

/// Unpacks the backup `from` (a `.tar`, or a directory `quire backup`
/// wrote) into `into`: only directories and regular files, each inside,
/// each once.
fn unpack(from: &Path, into: &Path) -> Result<(), Failure> {
    quire_store::storage::private_dir(into).map_err(failed)?;
    if from.is_dir() {
        return unpack_dir(from, from, into);
    }
    use std::io::Read;
    let file = std::fs::File::open(from).map_err(failed)?;
    let length = file.metadata().map_err(failed)?.len();
    let read = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = Counted {
        inner: std::io::BufReader::new(file),
        read: read.clone(),
    };
    let not_tar = |e: std::io::Error| {
        usage(format!(
            "nothing restored: {} is not a whole tar archive ({e})",
            from.display()
        ))
    };
    let mut archive = tar::Archive::new(counted);
    let mut seen = std::collections::HashSet::new();
    for entry in archive.entries().map_err(not_tar)? {
        let mut entry = entry.map_err(not_tar)?;
        let path = entry.path().map_err(not_tar)?.into_owned();
        let Some(rel) = inside(&path) else {
            return Err(hostile(
                from,
                &path,
                "a path that leaves the data directory",
            ));
        };
        use tar::EntryType;
        let kind = entry.header().entry_type();
        let what = match kind {
            EntryType::Regular | EntryType::Directory => None,
            EntryType::Symlink => Some("a symbolic link"),
            EntryType::Link => Some("a hard link"),
            EntryType::Char | EntryType::Block => Some("a device"),
            EntryType::Fifo => Some("a FIFO"),
            _ => Some("an entry that is neither a file nor a directory"),
        };
        if let Some(what) = what {
            return Err(hostile(from, &path, &format!("{what}; a backup has none")));
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        if !seen.insert(rel.clone()) {
            return Err(hostile(from, &path, "twice"));
        }
        let to = into.join(&rel);
        if kind == EntryType::Directory {
            quire_store::storage::private_dir(&to).map_err(failed)?;
            continue;
        }
        if let Some(parent) = to.parent() {
            quire_store::storage::private_dir(parent).map_err(failed)?;
        }
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(not_tar)?;
        write_new(&to, &bytes).map_err(|_| hostile(from, &path, "where a directory is"))?;
    }
    // The archive's end: a block of zeros, not the end of the file (a
    // file cut short between two entries reads as fewer entries).
    let at = read.load(std::sync::atomic::Ordering::SeqCst);
    let ended = at >= 512 && at <= length && {
        use std::io::Seek;
        let mut file = std::fs::File::open(from).map_err(failed)?;
        let mut block = [0u8; 512];
        file.seek(std::io::SeekFrom::Start(at - 512))
            .and_then(|_| file.read_exact(&mut block))
            .is_ok()
            && block.iter().all(|b| *b == 0)
    };
    if !ended {
        return Err(usage(format!(
            "nothing restored: {} is not a whole tar archive (it ends before its end-of-archive block)",
            from.display()
        )));
    }
    Ok(())
}

/// A reader that counts what it has read.
struct Counted<R> {
    inner: R,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read
            .fetch_add(n as u64, std::sync::atomic::Ordering::SeqCst);
        Ok(n)
    }
}

/// A new file (never through an existing one), owner-only.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = quire_store::storage::private_file()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)
}

/// [`unpack`] of a backup directory: every entry under `dir` as a
/// directory or a regular file with one link; anything else refused.
fn unpack_dir(root: &Path, dir: &Path, into: &Path) -> Result<(), Failure> {
    for entry in std::fs::read_dir(dir).map_err(failed)? {
        let entry = entry.map_err(failed)?;
        let path = entry.path();
        let shown = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        let meta = std::fs::symlink_metadata(&path).map_err(failed)?;
        let kind = meta.file_type();
        let to = into.join(entry.file_name());
        if kind.is_dir() {
            quire_store::storage::private_dir(&to).map_err(failed)?;
            unpack_dir(root, &path, &to)?;
            continue;
        }
        #[cfg(unix)]
        let links = std::os::unix::fs::MetadataExt::nlink(&meta);
        #[cfg(not(unix))]
        let links = 1;
        let what = if kind.is_symlink() {
            Some("a symbolic link")
        } else if !kind.is_file() {
            Some("something that is neither a file nor a directory (a device, FIFO or socket)")
        } else if links > 1 {
            Some("a file with another hard link")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(hostile(root, &shown, &format!("{what}; a backup has none")));
        }
        let bytes = std::fs::read(&path).map_err(failed)?;
        write_new(&to, &bytes).map_err(failed)?;
    }
    Ok(())
}

/// What a restore brings: each project's name, epoch and directory, and
/// how many memory files.
struct Restored {
    projects: Vec<(String, u64, String)>,
    memory_files: usize,
}

/// Reads the manifest of the backup unpacked in `dir` (from `named`),
/// checks it against the data directory, and builds in `built` what goes
/// in place: `projects/<dir>` for each project (copied as an open checks
/// it) and `memory/` with the memory files the data directory lacks.
fn build(
    dir: &Path,
    named: &Path,
    paths: &crate::config::dirs::DataPaths,
    built: &Path,
) -> Result<Restored, Failure> {
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
    let mut dirs = std::collections::HashSet::new();
    for entry in &manifest.projects {
        let safe = !entry.dir.is_empty()
            && Path::new(&entry.dir).components().count() == 1
            && inside(Path::new(&entry.dir)).is_some()
            && !entry.dir.starts_with('.');
        if !safe {
            return Err(usage(format!(
                "{}: `{}` is not a project directory name",
                named.display(),
                entry.dir
            )));
        }
        if !dirs.insert(entry.dir.as_str()) {
            return Err(usage(format!(
                "nothing restored: {}'s manifest names the project directory `{}` twice",
                named.display(),
                entry.dir
            )));
        }
        if !dir
            .join("projects")
            .join(&entry.dir)
            .join("project.toml")
            .is_file()
        {
            return Err(usage(format!(
                "nothing restored: {}'s manifest names the project {} (directory {}), which the archive lacks",
                named.display(),
                entry.name,
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
    let mut new_memory = Vec::new();
    for file in &memory_files {
        let there = paths.memory_dir.join(file.file_name().unwrap_or_default());
        if !there.exists() {
            new_memory.push(file);
        } else if std::fs::read(&there).ok() != std::fs::read(file).ok() {
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
    let mut projects = Vec::new();
    for entry in &manifest.projects {
        let copied = backup::copy_project(
            &dir.join("projects").join(&entry.dir),
            &built.join("projects").join(&entry.dir),
        )
        .map_err(|e| {
            usage(format!(
                "nothing restored: the project {} in {} does not check: {e}",
                entry.name,
                named.display()
            ))
        })?;
        if copied.id != entry.id {
            return Err(usage(format!(
                "nothing restored: {}'s manifest says project {} has id {}, its files say {}",
                named.display(),
                entry.name,
                entry.id,
                copied.id
            )));
        }
        projects.push((copied.name, copied.epoch, entry.dir.clone()));
    }
    quire_store::storage::private_dir(&built.join("projects")).map_err(failed)?;
    quire_store::storage::private_dir(&built.join("memory")).map_err(failed)?;
    for file in &new_memory {
        let name = file.file_name().unwrap_or_default();
        std::fs::rename(file, built.join("memory").join(name)).map_err(failed)?;
    }
    Ok(Restored {
        projects,
        memory_files: memory_files.len(),
    })
}

/// Moves what [`build`] made into the data directory: the whole of it when
/// there was none, else project by project and file by file (each a
/// rename, so no project is ever there in part).
fn put_in_place(
    built: &Path,
    staging: &Staging,
    paths: &crate::config::dirs::DataPaths,
) -> Result<(), Failure> {
    let holder = Holder {
        pid: std::process::id(),
        mode: "restore".into(),
        url: None,
        mcp: None,
    };
    let names: Vec<std::ffi::OsString> = std::fs::read_dir(built.join("projects"))
        .map_err(failed)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .map_err(failed)?;
    // Nobody may have opened one between its rename and this check.
    let lock_each = |projects_dir: &Path| -> Result<(), Failure> {
        for name in &names {
            drop(ProjectLock::acquire(&projects_dir.join(name), &holder).map_err(failed)?);
        }
        Ok(())
    };
    // The layout the data directory gets: projects and memory where the
    // config puts them, which may be elsewhere.
    let inside_data = |dir: &Path| dir.parent() == Some(paths.data_dir.as_path());
    if staging.whole && inside_data(&paths.projects_dir) && inside_data(&paths.memory_dir) {
        let whole = staging.dir.join("data");
        quire_store::storage::private_dir(&whole).map_err(failed)?;
        std::fs::rename(
            built.join("projects"),
            whole.join(paths.projects_dir.file_name().unwrap_or_default()),
        )
        .map_err(failed)?;
        std::fs::rename(
            built.join("memory"),
            whole.join(paths.memory_dir.file_name().unwrap_or_default()),
        )
        .map_err(failed)?;
        if let Some(parent) = paths.data_dir.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        std::fs::rename(&whole, &paths.data_dir).map_err(failed)?;
        return lock_each(&paths.projects_dir);
    }
    quire_store::storage::private_dir(&paths.projects_dir).map_err(failed)?;
    for name in &names {
        std::fs::rename(
            built.join("projects").join(name),
            paths.projects_dir.join(name),
        )
        .map_err(failed)?;
    }
    quire_store::storage::private_dir(&paths.memory_dir).map_err(failed)?;
    for entry in std::fs::read_dir(built.join("memory")).map_err(failed)? {
        let entry = entry.map_err(failed)?;
        std::fs::rename(entry.path(), paths.memory_dir.join(entry.file_name())).map_err(failed)?;
    }
    lock_each(&paths.projects_dir)
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
