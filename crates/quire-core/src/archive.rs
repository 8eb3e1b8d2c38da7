//! A project archive (`.quire.zip`): the export that holds a whole project,
//! and its way back in.
//!
//! An archive is input, not trusted state: its checksums prove nothing
//! (anyone can recompute them), so an import treats it as a client that
//! sends the project as ops. The zip is checked first (entries, paths,
//! links, a name twice, sizes as they inflate, every blob's hash); then
//! the project is rebuilt from nothing through the one apply path: the
//! snapshot as an `UpdateProject`, an `UpdateGlossary` and an `AddPage` per
//! page, then every `ops.log` frame, each op held to the same limits a live
//! one is. Ids must be unique, every blob a page uses must be in the
//! archive. Only what that replay produced is written, as a new project
//! (new id, a fresh snapshot, the blobs the scene uses) beside the
//! destination and renamed into place; anything refused leaves nothing.
//!
//! Temporary directories are named `.quire-import-<pid>-…`, so one that a
//! killed process left is known for stale and removed ([`sweep`]).

use std::collections::HashSet;
use std::io::{Cursor, Read, Write};
use std::path::Path;

use super::Core;
use super::events::SessionSummary;
use quire_formats::{ARCHIVE_LIMITS, ArchiveLimits};
use quire_model::apply::apply;
use quire_model::error::{CoreError, CoreResult};
use quire_model::hash::BlobHash;
use quire_model::history::Stacks;
use quire_model::ids::ProjectId;
use quire_model::limits;
use quire_model::op::{NewNode, NewPage, Op, ProjectPatch, StylePatch};
use quire_model::scene::Scene;
use quire_store::blobs::BlobStore;
use quire_store::storage::{
    self, FORMAT_VERSION, HistoryFile, ProjectFiles, ProjectToml, SnapshotFile, fsync_dir, log,
};

/// Largest `project.toml` read.
const MAX_TOML_BYTES: u64 = 1 << 20;

/// What the temporary directory of an import is called (then the pid).
const IMPORT_PREFIX: &str = ".quire-import-";

impl Core {
    /// Unpacks an archive into the projects directory as a new project
    /// (see [`super::Blocking::import_managed_archive`]) and opens it.
    pub async fn import_managed_archive(&self, bytes: Vec<u8>) -> CoreResult<SessionSummary> {
        let core = self.clone();
        super::blocking(move || core.blocking().import_managed_archive(&bytes)).await
    }

    /// Unpacks an archive made by `export` into `dest` (which must not exist
    /// or be empty) as a new project, and opens it. Nothing is left behind
    /// when the archive is refused.
    pub async fn import_archive(&self, bytes: Vec<u8>, dest: &Path) -> CoreResult<SessionSummary> {
        let dest = dest.to_path_buf();
        let core = self.clone();
        super::blocking(move || core.blocking().import_archive(&bytes, &dest)).await
    }
}

fn zip_err(e: impl std::fmt::Display) -> CoreError {
    CoreError::internal(format!("cannot write the archive: {e}"))
}

/// The project as a zip: `project.toml`, `scene.json` (a snapshot at
/// `epoch`), an empty `ops.log`, every blob the scene uses, and, given
/// `history`, `history.json` (the undo and redo stacks at `epoch`) with
/// the blobs its ops use.
pub(super) fn write(
    project: ProjectId,
    epoch: u64,
    scene: Scene,
    store: &BlobStore,
    history: Option<Stacks>,
) -> CoreResult<Vec<u8>> {
    use zip::write::SimpleFileOptions;
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let toml = ProjectToml {
        id: project,
        name: scene.project.name.clone(),
        created_at: scene.project.created_at.clone(),
        format_version: FORMAT_VERSION,
        epoch: Some(epoch),
    };
    let toml = toml::to_string(&toml).map_err(zip_err)?;
    zip.start_file("project.toml", options).map_err(zip_err)?;
    zip.write_all(toml.as_bytes()).map_err(zip_err)?;
    let mut blobs = used_blobs(&scene);
    let snapshot = SnapshotFile { epoch, scene }.encode()?;
    zip.start_file("scene.json", options).map_err(zip_err)?;
    zip.write_all(&snapshot).map_err(zip_err)?;
    zip.start_file("ops.log", options).map_err(zip_err)?;
    if let Some(stacks) = history {
        blobs.extend(
            history_blobs(&stacks)
                .into_iter()
                .filter(|h| store.contains(h)),
        );
        blobs.sort();
        blobs.dedup();
        let history = HistoryFile { epoch, stacks }.encode()?;
        zip.start_file("history.json", options).map_err(zip_err)?;
        zip.write_all(&history).map_err(zip_err)?;
    }
    for hash in blobs {
        let bytes = store.get(&hash)?;
        let hex = hash.to_hex();
        // Images are already compressed.
        zip.start_file(format!("blobs/{}/{}", &hex[..2], &hex[2..]), stored)
            .map_err(zip_err)?;
        zip.write_all(&bytes).map_err(zip_err)?;
    }
    Ok(zip.finish().map_err(zip_err)?.into_inner())
}

/// The blobs the ops of an undo history use, each once.
pub(crate) fn history_blobs(stacks: &Stacks) -> Vec<BlobHash> {
    let mut blobs: Vec<BlobHash> = stacks
        .undo
        .iter()
        .chain(&stacks.redo)
        .flat_map(|e| {
            let mut hashes: Vec<BlobHash> = e.forward.blobs().into_iter().copied().collect();
            hashes.extend(e.inverse.blobs().into_iter().copied());
            hashes
        })
        .collect();
    blobs.sort();
    blobs.dedup();
    blobs
}

/// The blobs a scene's nodes use, each once, sorted.
pub(crate) fn used_blobs(scene: &Scene) -> Vec<BlobHash> {
    let mut blobs: Vec<BlobHash> = scene
        .pages
        .iter()
        .flat_map(|p| {
            let nodes = p.nodes.iter().filter_map(|n| n.kind.blob().copied());
            nodes.chain(p.document.as_ref().map(|d| d.blob))
        })
        .collect();
    blobs.sort();
    blobs.dedup();
    blobs
}

fn bad_archive(message: impl Into<String>) -> CoreError {
    CoreError::InvalidInput(format!("not a quire archive: {}", message.into()))
}

/// Where an archive entry may go: only the files of a project directory.
fn entry_path(name: &str) -> Option<String> {
    match name {
        "project.toml" | "scene.json" | "ops.log" | "history.json" => Some(name.to_owned()),
        _ => {
            let rest = name.strip_prefix("blobs/")?;
            let (shard, tail) = rest.split_once('/')?;
            let hex = format!("{shard}{tail}");
            (shard.len() == 2 && hex.parse::<BlobHash>().is_ok()).then(|| name.to_owned())
        }
    }
}

/// The project name an archive's `project.toml` records.
pub(super) fn archive_name(bytes: &[u8]) -> CoreResult<String> {
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| bad_archive(e.to_string()))?;
    let mut entry = zip
        .by_name("project.toml")
        .map_err(|_| bad_archive("no project.toml"))?;
    let mut text = String::new();
    entry
        .by_ref()
        .take(MAX_TOML_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| bad_archive(format!("project.toml: {e}")))?;
    let toml: ProjectToml =
        toml::from_str(&text).map_err(|e| bad_archive(format!("project.toml: {e}")))?;
    limits::check_name("the project name", &toml.name).map_err(bad_archive)?;
    Ok(toml.name)
}

/// Imports `bytes` as a new project at `dest`; see the module doc.
pub(super) fn unpack(bytes: &[u8], dest: &Path) -> CoreResult<()> {
    unpack_within(bytes, dest, &ARCHIVE_LIMITS)
}

fn unpack_within(bytes: &[u8], dest: &Path, limits: &ArchiveLimits) -> CoreResult<()> {
    if dest.exists()
        && std::fs::read_dir(dest)
            .map_err(|e| CoreError::io(dest, e))?
            .next()
            .is_some()
    {
        return Err(CoreError::Conflict(format!(
            "{} already exists and is not empty",
            dest.display()
        )));
    }
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    storage::private_dir(parent)?;
    sweep(parent);
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| bad_archive(e.to_string()))?;
    if zip.len() > limits.entries {
        return Err(bad_archive(format!(
            "{} entries; at most {} are allowed",
            zip.len(),
            limits.entries
        )));
    }
    // Two entries of one name would leave which one counts to the reader.
    if zip.has_duplicate_names() {
        return Err(bad_archive("it names an entry twice"));
    }
    // Unpacked beside the destination and renamed once everything holds:
    // a refused archive leaves nothing behind (the directory goes when
    // `work` drops; one a killed process left, `sweep` removes).
    let work = tempfile::Builder::new()
        .prefix(&format!("{IMPORT_PREFIX}{}-", std::process::id()))
        .tempdir_in(parent)
        .map_err(|e| CoreError::io(parent, e))?;
    let unpacked = work.path().join("unpacked");
    storage::private_dir(&unpacked)?;
    extract(&mut zip, &unpacked, limits)?;
    let (epoch, scene) = replay(&unpacked)?;
    let history = history_of(&unpacked, epoch)?;
    let project = work.path().join("project");
    write_project(&project, &unpacked, epoch, scene, history)?;
    std::fs::remove_dir_all(&unpacked).map_err(|e| CoreError::io(&unpacked, e))?;
    if dest.exists() {
        std::fs::remove_dir(dest).map_err(|e| CoreError::io(dest, e))?;
    }
    std::fs::rename(&project, dest).map_err(|e| CoreError::io(dest, e))?;
    fsync_dir(parent)?;
    Ok(())
}

/// Writes every entry into `into`, inflated in chunks against what is left
/// of the limit (an entry cannot blow past it by lying about its size);
/// each blob's bytes must hash to its name.
fn extract(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    into: &Path,
    limits: &ArchiveLimits,
) -> CoreResult<()> {
    let mut left = limits.bytes;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| bad_archive(e.to_string()))?;
        let name = entry
            .name()
            .map_err(|e| bad_archive(e.to_string()))?
            .into_owned();
        if entry.is_symlink() {
            return Err(bad_archive(format!("`{name}` is a symbolic link")));
        }
        if entry.is_dir() {
            continue;
        }
        let rel =
            entry_path(&name).ok_or_else(|| bad_archive(format!("unexpected entry `{name}`")))?;
        let path = into.join(&rel);
        if let Some(dir) = path.parent() {
            let inside: Vec<&Path> = dir
                .ancestors()
                .take_while(|d| d.starts_with(into))
                .collect();
            for dir in inside.into_iter().rev() {
                storage::private_dir(dir)?;
            }
        }
        let mut file = storage::private_file()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => bad_archive(format!("`{name}` appears twice")),
                _ => CoreError::io(&path, e),
            })?;
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| bad_archive(format!("`{name}`: {e}")))?;
            if n == 0 {
                break;
            }
            left = left.checked_sub(n as u64).ok_or_else(|| {
                bad_archive(format!(
                    "it inflates to more than {} bytes (a zip bomb?)",
                    limits.bytes
                ))
            })?;
            hasher.update(&buf[..n]);
            file.write_all(&buf[..n])
                .map_err(|e| CoreError::io(&path, e))?;
        }
        if let Some(hex) = rel.strip_prefix("blobs/") {
            let hash: BlobHash = hex.replace('/', "").parse().map_err(bad_archive)?;
            if hash.to_hex() != hasher.finalize().to_hex().as_str() {
                return Err(bad_archive(format!(
                    "blob `{name}` does not match its hash"
                )));
            }
        }
    }
    Ok(())
}

/// The project an unpacked archive describes, rebuilt from nothing through
/// the apply path: its epoch and scene.
fn replay(unpacked: &Path) -> CoreResult<(u64, Scene)> {
    let files = ProjectFiles::new(unpacked.to_path_buf());
    let declared =
        ProjectToml::read(&files.project_toml()).map_err(|e| bad_archive(e.to_string()))?;
    let snapshot = SnapshotFile::read(&files.scene_json())
        .map_err(|e| bad_archive(e.to_string()))?
        .ok_or_else(|| bad_archive("no scene.json"))?;
    let recovered =
        log::read(&files.ops_log(), snapshot.epoch).map_err(|e| bad_archive(e.to_string()))?;
    if let Some(torn) = recovered.dropped {
        return Err(bad_archive(torn));
    }
    let blobs = BlobStore::new(unpacked);
    let given = snapshot.scene;
    let meta = &given.project;
    limits::check_name("the project name", &meta.name).map_err(bad_archive)?;
    for (what, time) in [
        ("createdAt", &meta.created_at),
        ("updatedAt", &meta.updated_at),
    ] {
        humantime::parse_rfc3339_weak(time)
            .map_err(|_| bad_archive(format!("scene.json: {what} `{time}` is not a time")))?;
    }
    let mut scene = Scene::new(&meta.name, &meta.created_at);
    let mut ops = Vec::new();
    let patch = ProjectPatch {
        name: None,
        source_language: meta.source_language.clone().map(Some),
        target_language: meta.target_language.clone().map(Some),
        reading_direction: meta.reading_direction.map(Some),
        series: meta.series.clone().map(Some),
        number: meta.number.clone().map(Some),
        translator: meta.translator.clone().map(Some),
        add_words: meta.words.clone(),
        remove_words: Vec::new(),
        subtitle_profile: meta.subtitle_profile.map(Some),
        style: meta.style.as_deref().and_then(StylePatch::setting),
    };
    if patch != ProjectPatch::default() {
        ops.push(Op::UpdateProject { patch });
    }
    if !meta.glossary.is_empty() {
        ops.push(Op::UpdateGlossary {
            set: meta.glossary.clone(),
            remove: Vec::new(),
        });
    }
    let mut nodes = HashSet::new();
    for page in &given.pages {
        for node in &page.nodes {
            if !nodes.insert(node.id) {
                return Err(bad_archive(format!(
                    "scene.json: node id {} appears twice",
                    node.id
                )));
            }
        }
        ops.push(Op::AddPage {
            page: NewPage {
                id: Some(page.id),
                name: page.name.clone(),
                width: page.width,
                height: page.height,
                nodes: Some(
                    page.nodes
                        .iter()
                        .map(|n| NewNode {
                            id: Some(n.id),
                            transform: n.transform,
                            visible: n.visible,
                            kind: n.kind.clone(),
                        })
                        .collect(),
                ),
                document: None,
            },
            at: None,
        });
    }
    let present = |hash: &BlobHash| blobs.contains(hash);
    for op in ops {
        limits::check_op(&op)
            .and_then(|()| apply(&mut scene, op, &present).map_err(|e| e.to_string()))
            .map_err(|e| bad_archive(format!("scene.json: {e}")))?;
    }
    scene.project.updated_at.clone_from(&meta.updated_at);
    let mut epoch = snapshot.epoch;
    for (line, frame_epoch, frame) in recovered.frames {
        limits::check_op(&frame.op)
            .and_then(|()| apply(&mut scene, frame.op, &present).map_err(|e| e.to_string()))
            .map_err(|e| bad_archive(format!("ops.log line {line}: {e}")))?;
        humantime::parse_rfc3339_weak(&frame.at).map_err(|_| {
            bad_archive(format!("ops.log line {line}: `{}` is not a time", frame.at))
        })?;
        scene.project.updated_at = frame.at;
        epoch = frame_epoch;
    }
    // project.toml records an epoch the project had reached (an export's
    // own, or a live project's at its last snapshot): a log that stops
    // short of it has lost frames.
    if let Some(said) = declared.epoch
        && said > epoch
    {
        return Err(bad_archive(format!(
            "project.toml says epoch {said}, but its scene and log reach only epoch {epoch}"
        )));
    }
    Ok((epoch, scene))
}

/// The undo history an archive carries (`history.json`), checked: its
/// checksum, its epoch the scene's, each op within the limits and every
/// blob it uses in the archive. `None` when it carries none.
fn history_of(unpacked: &Path, epoch: u64) -> CoreResult<Option<Stacks>> {
    let files = ProjectFiles::new(unpacked.to_path_buf());
    let Some(history) =
        HistoryFile::read(&files.history_json()).map_err(|e| bad_archive(e.to_string()))?
    else {
        return Ok(None);
    };
    if history.epoch != epoch {
        return Err(bad_archive(format!(
            "history.json is of epoch {}, the scene of {epoch}",
            history.epoch
        )));
    }
    for entry in history.stacks.undo.iter().chain(&history.stacks.redo) {
        for op in [&entry.forward, &entry.inverse] {
            limits::check_op(op).map_err(|e| bad_archive(format!("history.json: {e}")))?;
        }
    }
    let blobs = BlobStore::new(unpacked);
    if let Some(missing) = history_blobs(&history.stacks)
        .iter()
        .find(|h| !blobs.contains(h))
    {
        return Err(bad_archive(format!(
            "history.json uses blob {missing}, which the archive does not hold"
        )));
    }
    Ok(Some(history.stacks))
}

/// Writes a new project at `dir`: what the replay produced as its snapshot,
/// an empty log, a new id, the blobs its scene uses, and the undo history
/// the archive carried with the blobs it uses.
fn write_project(
    dir: &Path,
    unpacked: &Path,
    epoch: u64,
    scene: Scene,
    history: Option<Stacks>,
) -> CoreResult<()> {
    storage::private_dir(dir)?;
    storage::private_dir(&dir.join("blobs"))?;
    let from = BlobStore::new(unpacked);
    let mut staging = BlobStore::new(dir).staging();
    let mut blobs = used_blobs(&scene);
    if let Some(stacks) = &history {
        blobs.extend(history_blobs(stacks));
        blobs.sort();
        blobs.dedup();
    }
    for hash in blobs {
        staging.put(&from.get(&hash)?)?;
    }
    staging.commit()?;
    let files = ProjectFiles::new(dir.to_path_buf());
    if let Some(stacks) = history {
        storage::write_atomic(
            &files.history_json(),
            &HistoryFile { epoch, stacks }.encode()?,
        )?;
    }
    let toml = ProjectToml {
        id: ProjectId::new(),
        name: scene.project.name.clone(),
        created_at: scene.project.created_at.clone(),
        format_version: FORMAT_VERSION,
        epoch: Some(epoch),
    };
    storage::write_atomic(
        &files.scene_json(),
        &SnapshotFile { epoch, scene }.encode()?,
    )?;
    storage::write_private(&files.ops_log(), b"")?;
    toml.write(&files.project_toml())?;
    fsync_dir(dir)
}

/// Removes the temporary directories of imports in `dir` whose process is
/// gone (a SIGKILL mid-import). Returns how many were removed.
pub fn sweep(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(IMPORT_PREFIX)) else {
            continue;
        };
        // `<pid>-<random>`; a name without a pid is 0.2's, from a process
        // long gone.
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(alive) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Whether a process with this id runs (this one counts).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        // EPERM: it exists, as another user's.
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip of `entries` (name, bytes), deflated.
    fn zip_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
        use zip::write::SimpleFileOptions;
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes) in entries {
            zip.start_file(*name, SimpleFileOptions::default()).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn an_archive_that_inflates_past_the_limit_is_refused_and_leaves_nothing() {
        // 4 MiB of zeros deflate to a few KiB: a small zip bomb.
        let zeros = vec![0u8; 4 << 20];
        let hash = BlobHash::of(&zeros).to_hex();
        let blob = format!("blobs/{}/{}", &hash[..2], &hash[2..]);
        let bomb = zip_of(&[("project.toml", Vec::new()), (&blob, zeros)]);
        assert!(bomb.len() < 64 << 10, "{}", bomb.len());
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("p");
        let limits = ArchiveLimits {
            bytes: 1 << 20,
            entries: 10,
        };
        let err = unpack_within(&bomb, &dest, &limits)
            .unwrap_err()
            .to_string();
        assert!(err.contains("inflates to more than 1048576 bytes"), "{err}");
        let many: Vec<(String, Vec<u8>)> = (0..11).map(|i| (format!("f{i}"), Vec::new())).collect();
        let many: Vec<(&str, Vec<u8>)> =
            many.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
        let err = unpack_within(&zip_of(&many), &dest, &limits)
            .unwrap_err()
            .to_string();
        assert!(err.contains("11 entries; at most 10"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn only_project_files_may_be_unpacked() {
        assert!(entry_path("project.toml").is_some());
        let hex = BlobHash::of(b"x").to_hex();
        assert!(entry_path(&format!("blobs/{}/{}", &hex[..2], &hex[2..])).is_some());
        for bad in [
            "../evil",
            "/etc/passwd",
            "blobs/../../x",
            ".lock",
            "blobs/ab/cd",
            "scene.json/x",
        ] {
            assert!(entry_path(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn only_the_imports_of_gone_processes_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir
            .path()
            .join(format!("{IMPORT_PREFIX}{}-abc", std::process::id()));
        // Pid numbers stop well below this.
        let gone = dir.path().join(format!("{IMPORT_PREFIX}4000000000-abc"));
        let old = dir.path().join(format!("{IMPORT_PREFIX}xyz"));
        let project = dir.path().join("project");
        for d in [&ours, &gone, &old, &project] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(gone.join("scene.json"), b"{}").unwrap();
        assert_eq!(sweep(dir.path()), 2);
        assert!(ours.exists() && project.exists());
        assert!(!gone.exists() && !old.exists());
    }
}
