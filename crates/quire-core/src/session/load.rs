//! Opening a project from its files: the snapshot, the log replayed on top,
//! the saved history, and the checks that refuse a project that changed
//! behind quire's back.

use std::path::Path;

use super::SessionSettings;
use quire_model::apply::apply;
use quire_model::error::{CoreError, CoreResult};
use quire_model::history::{self, Entry, History};
use quire_model::scene::Scene;
use quire_store::blobs::BlobStore;
use quire_store::storage::log::{self, FrameKind};
use quire_store::storage::{HistoryFile, ProjectFiles, ProjectToml, SnapshotFile};

/// A project as its files say: what [`Session::open`] starts from, and
/// what a session reloads when its writer failed.
pub(super) struct Loaded {
    pub(super) project: ProjectToml,
    pub(super) scene: Scene,
    pub(super) epoch: u64,
    pub(super) snapshot_epoch: u64,
    pub(super) history: History,
    /// Frames in `ops.log` after the snapshot.
    pub(super) frames: u64,
}

/// Loads the snapshot and replays the log (dropping a torn last frame
/// with a warning and trimming it). Changes nothing else on disk.
pub(super) fn load(
    files: &ProjectFiles,
    settings: &SessionSettings,
    blobs: &BlobStore,
) -> CoreResult<Loaded> {
    let project = ProjectToml::read(&files.project_toml())?;
    let snapshot = SnapshotFile::read(&files.scene_json())?;
    let (mut scene, snapshot_epoch) = match snapshot {
        Some(s) => (s.scene, s.epoch),
        None => (Scene::new(&project.name, &project.created_at), 0),
    };
    let recovered = log::read(&files.ops_log(), snapshot_epoch).map_err(|e| {
        if snapshot_epoch == 0 && !files.scene_json().exists() {
            missing_snapshot(files, &e.to_string())
        } else {
            e
        }
    })?;
    if !files.scene_json().exists() {
        match recovered.frames.first() {
            Some((_, 1, _)) => tracing::warn!(
                "{} is missing; rebuilt the scene from ops.log",
                files.scene_json().display()
            ),
            _ => {
                return Err(missing_snapshot(
                    files,
                    "ops.log does not hold the project's history from the start",
                ));
            }
        }
    }
    let last_epoch = recovered
        .frames
        .last()
        .map_or(snapshot_epoch, |(_, e, _)| *e);
    let (mut history, history_epoch) = saved_history(files, settings, snapshot_epoch, last_epoch);
    let mut epoch = snapshot_epoch;
    let frames = recovered.frames.len() as u64;
    // The frames the journal does not reach yet (a crash between the log
    // and the journal): their records are appended once replayed.
    let journaled = quire_store::storage::journal::last_epoch(&files.journal());
    let mut missing: Vec<u8> = Vec::new();
    for (line, frame_epoch, frame) in recovered.frames {
        let applied = apply(&mut scene, frame.op, &|h| blobs.contains(h)).map_err(|e| {
            CoreError::Corrupt {
                file: files.ops_log(),
                line: Some(line),
                message: format!("frame does not apply: {e}"),
            }
        })?;
        scene.project.updated_at.clone_from(&frame.at);
        epoch = frame_epoch;
        if epoch > journaled {
            let label = history::describe(&scene, &applied.op);
            let parts = quire_store::storage::log::Parts {
                kind: frame.kind,
                at: &frame.at,
                op: &applied.op,
                inverse: &applied.inverse,
                group: frame.group.as_ref(),
                by: frame.by.as_deref(),
                agent: frame.agent.as_deref(),
                mcp_session: frame.mcp_session.as_deref(),
                undoes: frame.undoes,
            };
            if let Ok(encoded) = quire_store::storage::log::encode_parts(epoch, &parts) {
                missing.extend(super::journal_line(
                    epoch,
                    frame.kind,
                    &label,
                    &encoded.bytes,
                ));
            }
        }
        if epoch <= history_epoch {
            // history.json already holds this change.
            continue;
        }
        let who = quire_model::history::Actor {
            user: frame.by.as_deref(),
            agent: frame.agent.as_deref(),
            session: frame.mcp_session.as_deref(),
        };
        // An undo or redo of a known entry; one without `undoes` was
        // written when undo took the newest entry.
        let stepped = match (frame.kind, frame.undoes) {
            (FrameKind::Undo, Some(e)) => history.undone_at(e, who),
            (FrameKind::Redo, Some(e)) => history.redone_at(e, who),
            _ => false,
        };
        if stepped {
            continue;
        }
        let entry = Entry {
            label: history::describe(&scene, &applied.op),
            forward: applied.op,
            inverse: applied.inverse,
            group: frame.group.clone(),
            by: frame.by.clone(),
            agent: frame.agent.clone(),
            session: frame.mcp_session.clone(),
            epoch,
        };
        match frame.kind {
            FrameKind::Apply => history.push(entry),
            FrameKind::Undo if frame.undoes.is_none() && history.next_undo().is_some() => {
                history.undone();
            }
            // The undone entry predates the log: what undoes this undo
            // is its inverse.
            FrameKind::Undo => history.undone_unknown(Entry {
                forward: entry.inverse,
                inverse: entry.forward,
                label: entry.label,
                group: None,
                by: None,
                agent: None,
                session: None,
                epoch,
            }),
            FrameKind::Redo if frame.undoes.is_none() && history.next_redo().is_some() => {
                history.redone();
            }
            FrameKind::Redo => history.redone_unknown(entry),
        }
    }
    check_recorded_epoch(files, &project, snapshot_epoch, epoch)?;
    if !missing.is_empty() {
        let mut journal = quire_store::storage::journal::Journal::new(files.journal());
        journal.append(&missing);
        if let Err(e) = journal.sync() {
            tracing::warn!("{e}");
        }
    }
    if let Some(warning) = &recovered.dropped {
        tracing::warn!("{warning}");
        truncate(&files.ops_log(), recovered.intact_len)?;
    }
    Ok(Loaded {
        project,
        scene,
        epoch,
        snapshot_epoch,
        history,
        frames,
    })
}

/// The history saved with the snapshot and the epoch it reaches, or an
/// empty one (epoch 0) when there is none that fits: a 0.1.0 project, a
/// damaged file, or one a crash left behind the snapshot. History is worth
/// keeping but not worth refusing a project over, so those are warnings.
pub(super) fn saved_history(
    files: &ProjectFiles,
    settings: &SessionSettings,
    snapshot_epoch: u64,
    last_epoch: u64,
) -> (History, u64) {
    let empty = || {
        (
            History::new(settings.undo_limit, settings.history_max_bytes),
            0,
        )
    };
    match HistoryFile::read(&files.history_json()) {
        Ok(Some(h)) if (snapshot_epoch..=last_epoch).contains(&h.epoch) => {
            let (limit, bytes) = (settings.undo_limit, settings.history_max_bytes);
            (History::restore(limit, bytes, h.stacks), h.epoch)
        }
        Ok(Some(h)) => {
            tracing::warn!(
                "{} is at epoch {}, the project at {snapshot_epoch}..={last_epoch}; \
                 undo starts from the changes since the snapshot",
                files.history_json().display(),
                h.epoch
            );
            empty()
        }
        Ok(None) => empty(),
        Err(e) => {
            tracing::warn!("{e}; undo starts from the changes since the snapshot");
            empty()
        }
    }
}

/// Refuses a project whose snapshot and log reach less than the epoch
/// `project.toml` records: changes were lost (e.g. `ops.log` deleted), and
/// opening the older state would hide that.
pub(super) fn check_recorded_epoch(
    files: &ProjectFiles,
    project: &ProjectToml,
    snapshot_epoch: u64,
    epoch: u64,
) -> CoreResult<()> {
    let Some(recorded) = project.epoch.filter(|r| *r > epoch) else {
        return Ok(());
    };
    let log = if files.ops_log().exists() {
        "ops.log has lost frames"
    } else {
        "ops.log is missing"
    };
    Err(CoreError::Corrupt {
        file: files.ops_log(),
        line: None,
        message: format!(
            "{log}: project.toml records epoch {recorded}, but scene.json (epoch \
             {snapshot_epoch}) and ops.log reach only epoch {epoch}; the project is not \
             opened at the older state"
        ),
    })
}

pub(super) fn missing_snapshot(files: &ProjectFiles, why: &str) -> CoreError {
    CoreError::Corrupt {
        file: files.scene_json(),
        line: None,
        message: format!("missing, and the scene cannot be rebuilt: {why}"),
    }
}

pub(super) fn truncate(path: &Path, len: u64) -> CoreResult<()> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| CoreError::io(path, e))?;
    file.set_len(len)
        .and_then(|_| file.sync_all())
        .map_err(|e| CoreError::io(path, e))
}
