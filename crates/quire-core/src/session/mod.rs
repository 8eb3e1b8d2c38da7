//! One open project: its scene, history and storage.
//!
//! Every change goes through [`Session::submit`] (or undo/redo) under the
//! state lock: the op is checked and applied in memory, its frame is
//! encoded and queued for the log writer in epoch order, and the caller gets
//! a [`Pending`] that resolves once the frame is fsynced. Nothing is
//! acknowledged, published or returned to a reader before that: readers
//! ([`Session::snapshot`]) also wait until what they read is durable.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;
use uuid::Uuid;

use super::events::{Event, EventBus};
use quire_model::apply::{Applied, BlobCheck, apply};
use quire_model::error::{CoreError, CoreResult};
use quire_model::hash::BlobHash;
use quire_model::history::{self, Actor, Entry, Group, History, Stacks};
use quire_model::ids::{ProjectId, SessionId};
use quire_model::limits;
use quire_model::op::Op;
use quire_model::scene::Scene;
use quire_model::workflow::{self, Dropped, Writer};
use quire_store::Durability;
use quire_store::blobs::BlobStore;
use quire_store::storage::lock::{Holder, ProjectLock};
use quire_store::storage::log::{self, FrameKind};
use quire_store::storage::writer::{Durable, Item, LogWriter, OnDurable, SnapshotJob, Start};
use quire_store::storage::{self, HistoryFile, ProjectFiles, SnapshotFile, now_rfc3339};

mod load;
mod step;
use load::{Loaded, load, truncate};

/// Storage and history settings of a session.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    pub durability: Durability,
    pub snapshot_every_ops: u64,
    pub undo_limit: usize,
    /// Largest op accepted, as logged (`server.max_body_bytes`).
    pub max_op_bytes: u64,
    /// What the undo and redo stacks may hold, in bytes of their ops
    /// (`history.max_bytes`).
    pub history_max_bytes: u64,
}

struct State {
    scene: Scene,
    epoch: u64,
    history: History,
    /// Frames in `ops.log` not yet covered by a snapshot.
    since_snapshot: u64,
    /// The name `project.toml` holds.
    toml_name: String,
    closed: bool,
}

pub struct Session {
    pub id: SessionId,
    pub project_id: ProjectId,
    pub path: PathBuf,
    pub opened_at: String,
    // Never held across an await: taken to apply one op or clone the scene.
    state: Mutex<State>,
    /// Replaced when a failed writer is reopened (under the state lock);
    /// held only to clone or swap the handle.
    writer: Mutex<Arc<LogWriter>>,
    files: ProjectFiles,
    bus: Arc<EventBus>,
    blobs: BlobStore,
    settings: SessionSettings,
    /// The project name the writer reports in `SceneAdvanced`.
    live_name: Arc<Mutex<String>>,
    /// When the last try to reopen a failed writer was, and why it failed.
    recovery: Mutex<Option<(std::time::Instant, CoreError)>>,
    /// Held until [`Session::close`], which releases it once the writer
    /// has stopped: another `Arc` of the session (a read finishing on the
    /// blocking pool) must not keep the project locked after it closed.
    project_lock: Mutex<Option<ProjectLock>>,
}

/// An applied change waiting to be durable.
#[must_use = "a change is acknowledged only once durable"]
pub struct Pending {
    pub epoch: u64,
    pub created: Vec<Uuid>,
    durable: watch::Receiver<Durable>,
}

impl Pending {
    /// Resolves once the change is fsynced; an error if the log failed.
    pub async fn durable(mut self) -> CoreResult<(u64, Vec<Uuid>)> {
        wait_durable(&mut self.durable, self.epoch).await?;
        Ok((self.epoch, self.created))
    }
}

async fn wait_durable(rx: &mut watch::Receiver<Durable>, epoch: u64) -> CoreResult<()> {
    let state = rx
        .wait_for(|d| d.epoch >= epoch || d.error.is_some())
        .await
        .map_err(|_| CoreError::internal("the project was closed before the change was saved"))?;
    match &state.error {
        Some(e) if state.epoch < epoch => Err(e.clone().context("change not saved")),
        _ => Ok(()),
    }
}

/// What [`Session::submit`] did: the change waiting to be durable (none
/// when an engine's every edit was dropped) and the edits dropped.
#[must_use = "a change is acknowledged only once durable"]
pub struct Submitted {
    pub pending: Option<Pending>,
    pub dropped: Vec<Dropped>,
}

/// What an undo or redo did.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stepped {
    /// The history entry's label, e.g. `pseudo-translate · 600 pages`.
    pub label: String,
    /// How many ops it applied (members of batches counted one by one).
    pub ops: usize,
    /// Who made the change it undid or redid, when the server knows.
    pub by: Option<String>,
}

/// The scene at an epoch: what `GET …/scene.json`, `quire_get_scene`, an
/// attached TUI and the JSON export carry. The storage envelope of
/// `scene.json` is `storage::SnapshotFile`, which may change on its own.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SceneSnapshot {
    pub epoch: u64,
    pub scene: Scene,
}

/// What the log writer calls for each durable epoch: `SceneAdvanced`,
/// with the project's name as it is then.
fn announce(id: SessionId, bus: Arc<EventBus>, live_name: Arc<Mutex<String>>) -> OnDurable {
    Box::new(move |epoch, pages| {
        let name = live_name
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        bus.publish(Event::SceneAdvanced {
            session_id: id,
            epoch,
            name,
            pages,
        });
    })
}

impl Session {
    /// Where the bases of this project's XLIFF and PO exports are kept.
    pub fn exports_dir(&self) -> PathBuf {
        self.files.exports()
    }

    /// Opens the project in `dir` (already canonical): takes the lock,
    /// loads the snapshot, replays the log. On any error nothing on disk
    /// has changed (but for the lock file's holder record).
    pub fn open(
        dir: &Path,
        settings: SessionSettings,
        holder: &Holder,
        bus: Arc<EventBus>,
    ) -> CoreResult<Session> {
        Session::open_as(dir, settings, holder, bus, SessionId::new())
    }

    /// [`Session::open`] under a session id given before (a session that a
    /// process which has ended opened: see `Core::reopen_session`).
    pub fn open_as(
        dir: &Path,
        settings: SessionSettings,
        holder: &Holder,
        bus: Arc<EventBus>,
        id: SessionId,
    ) -> CoreResult<Session> {
        let files = ProjectFiles::new(dir.to_path_buf());
        let lock = ProjectLock::acquire(dir, holder)?;
        let blobs = BlobStore::new(dir);
        let Loaded {
            mut project,
            scene,
            epoch,
            snapshot_epoch,
            history,
            frames,
        } = load(&files, &settings, &blobs)?;
        let freed = storage::tidy(&files);
        if freed > 0 {
            tracing::info!(
                "removed {freed} bytes of temporary files a crash left in {}",
                dir.display()
            );
        }
        // Blobs nothing uses (an import stopped before its op): with the
        // lock held and no op applied yet, none can come to be used now.
        let mut keep: HashSet<String> = super::archive::used_blobs(&scene)
            .iter()
            .map(|h| h.to_hex())
            .collect();
        keep.extend(
            super::archive::history_blobs(&history.stacks())
                .iter()
                .map(|h| h.to_hex()),
        );
        match super::backup::remove_blobs_except(dir, &keep) {
            Ok(c) if c.blobs > 0 => tracing::info!(
                "removed {} blobs ({} bytes) nothing in {} uses",
                c.blobs,
                c.bytes,
                dir.display()
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot remove unused blobs: {e}"),
        }
        let toml_name = project.name.clone();
        if epoch > snapshot_epoch && project.epoch < Some(epoch) {
            // The log holds frames that project.toml does not know of yet
            // (a crash, or a project from 0.1.0): record them, so that
            // losing ops.log from now on is noticed.
            project.epoch = Some(epoch);
            project.format_version = storage::FORMAT_VERSION;
            project.write(&files.project_toml())?;
        }

        let project_id = project.id;
        let live_name = Arc::new(Mutex::new(scene.project.name.clone()));
        let writer = LogWriter::start(
            files.clone(),
            Start {
                epoch,
                snapshot_epoch,
                project,
            },
            settings.durability,
            announce(id, bus.clone(), live_name.clone()),
        )?;
        Ok(Session {
            id,
            project_id,
            path: dir.to_path_buf(),
            opened_at: now_rfc3339(),
            state: Mutex::new(State {
                scene,
                epoch,
                history,
                since_snapshot: frames,
                toml_name,
                closed: false,
            }),
            writer: Mutex::new(Arc::new(writer)),
            files,
            bus,
            blobs,
            settings,
            live_name,
            recovery: Mutex::new(None),
            project_lock: Mutex::new(Some(lock)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state if no one holds it, so async callers never wait on the
    /// lock on a runtime thread.
    fn try_lock(&self) -> Option<MutexGuard<'_, State>> {
        match self.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }

    pub fn name(&self) -> String {
        self.lock().scene.project.name.clone()
    }

    /// The epoch including changes not yet durable.
    pub fn epoch(&self) -> u64 {
        self.lock().epoch
    }

    fn writer(&self) -> Arc<LogWriter> {
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Why the project cannot be written now, if a write failed and the
    /// writer could not be reopened since.
    pub fn unwritable(&self) -> Option<CoreError> {
        self.writer().failed()
    }

    /// Tries to reopen a failed writer (at most once a second);
    /// `Err` with why while the project still cannot be written.
    pub fn check_writable(&self) -> CoreResult<()> {
        if self.unwritable().is_none() {
            return Ok(());
        }
        self.check_open(&mut self.lock())
    }

    /// Whether the session can be read and changed. A writer that failed
    /// to write (a full disk, an I/O error) is reopened first, at most once
    /// a second; until that works, every call is refused with why. One that
    /// stopped on purpose (the log changed behind it: another process may
    /// be writing) is never reopened: nothing here may touch that log.
    fn check_open(&self, state: &mut State) -> CoreResult<()> {
        if state.closed {
            return Err(CoreError::not_found("session", self.id));
        }
        if let Some(e) = self.writer().failed() {
            if e.io_kind().is_none_or(|k| k == std::io::ErrorKind::Other) {
                return Err(CoreError::internal(format!(
                    "project {} cannot be saved ({e}); close it and check the disk",
                    self.path.display()
                )));
            }
            self.reopen(state).map_err(|e| {
                CoreError::internal(format!(
                    "project {} cannot be saved ({e}); quire tries again with the next \
                     request",
                    state.scene.project.name
                ))
            })?;
        }
        Ok(())
    }

    /// Reopens a failed writer from what is on disk: the changes that were
    /// not durable (each was refused to its client) are dropped from memory,
    /// a snapshot is written (which is also the proof the disk takes writes
    /// again), and a new writer starts. Blocking; under the state lock.
    fn reopen(&self, state: &mut State) -> CoreResult<()> {
        const RETRY: std::time::Duration = std::time::Duration::from_secs(1);
        let mut recovery = self.recovery.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, e)) = recovery.as_ref()
            && at.elapsed() < RETRY
        {
            return Err(e.clone());
        }
        let result = self.try_reopen(state);
        *recovery = result
            .as_ref()
            .err()
            .map(|e| (std::time::Instant::now(), e.clone()));
        result
    }

    fn try_reopen(&self, state: &mut State) -> CoreResult<()> {
        let old = self.writer();
        let _ = old.close();
        // A failed write was cut back by the writer; if even that failed,
        // it is cut here, so no frame a client was told failed is replayed.
        let log = self.files.ops_log();
        let intact = old.intact();
        if std::fs::metadata(&log).is_ok_and(|m| m.len() > intact) {
            truncate(&log, intact)?;
        }
        let Loaded {
            mut project,
            scene,
            epoch,
            history,
            ..
        } = load(&self.files, &self.settings, &self.blobs)?;
        // From here readers see what is durable, even if the disk is still
        // full and no writer can start yet.
        if state.epoch != epoch {
            tracing::info!(
                "{}: {} change(s) that could not be saved are dropped from memory",
                self.path.display(),
                state.epoch.saturating_sub(epoch)
            );
        }
        state.scene = scene.clone();
        state.epoch = epoch;
        state.history = history.clone();
        // A snapshot now, so the new writer starts from an empty log.
        storage::write_atomic(
            &self.files.history_json(),
            &HistoryFile {
                epoch,
                stacks: history.stacks(),
            }
            .encode()?,
        )?;
        storage::write_atomic(
            &self.files.scene_json(),
            &SnapshotFile {
                epoch,
                scene: scene.clone(),
            }
            .encode()?,
        )?;
        project.name.clone_from(&scene.project.name);
        project.epoch = Some(epoch);
        project.format_version = storage::FORMAT_VERSION;
        project.write(&self.files.project_toml())?;
        truncate(&log, 0)?;
        let writer = LogWriter::start(
            self.files.clone(),
            Start {
                epoch,
                snapshot_epoch: epoch,
                project,
            },
            self.settings.durability,
            announce(self.id, self.bus.clone(), self.live_name.clone()),
        )?;
        tracing::info!("{} can be written again", self.path.display());
        *self
            .live_name
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = scene.project.name.clone();
        state.toml_name.clone_from(&scene.project.name);
        state.since_snapshot = 0;
        *self.writer.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(writer);
        Ok(())
    }

    /// Checks `op` against the limits, applies it in memory and queues it
    /// for the log. Blocks while another change of this session applies.
    pub fn submit(&self, op: Op, writer: &Writer, group: Option<Group>) -> CoreResult<Submitted> {
        limits::check_op(&op).map_err(CoreError::InvalidOp)?;
        // Which of its blobs exist is looked up on disk before the state is
        // locked, so no stat() holds up the session.
        let present: HashSet<BlobHash> = op
            .blobs()
            .into_iter()
            .filter(|h| self.blobs.contains(h))
            .copied()
            .collect();
        let mut state = self.lock();
        self.submit_locked(&mut state, op, writer, group, &|h| present.contains(h))
    }

    /// [`Session::submit`] if it can run at once and is light; otherwise the
    /// op comes back (`Err`), to be submitted on a blocking thread.
    pub fn try_submit(&self, op: Op, writer: &Writer) -> Result<CoreResult<Submitted>, Box<Op>> {
        // Heavy work, blobs to look up on disk, or a failed writer to
        // reopen: not on this thread.
        if limits::is_heavy(&op) || !op.blobs().is_empty() || self.unwritable().is_some() {
            return Err(Box::new(op));
        }
        if let Err(e) = limits::check_op(&op) {
            return Ok(Err(CoreError::InvalidOp(e)));
        }
        let Some(mut state) = self.try_lock() else {
            return Err(Box::new(op));
        };
        Ok(self.submit_locked(&mut state, op, writer, None, &|_| false))
    }

    fn submit_locked(
        &self,
        state: &mut State,
        op: Op,
        writer: &Writer,
        group: Option<Group>,
        blobs: BlobCheck<'_>,
    ) -> CoreResult<Submitted> {
        self.check_open(state)?;
        let at = now_rfc3339();
        let stamped = workflow::stamp(&state.scene, op, writer, &at)?;
        let Some(op) = stamped.op else {
            return Ok(Submitted {
                pending: None,
                dropped: stamped.dropped,
            });
        };
        let applied = apply(&mut state.scene, op, blobs)?;
        let who = Actor {
            user: writer.user(),
            agent: writer.agent(),
            session: writer.session(),
        };
        let pending = self.commit(state, FrameKind::Apply, at, applied, group, (who, None))?;
        Ok(Submitted {
            pending: Some(pending),
            dropped: stamped.dropped,
        })
    }

    /// The bytes its undo and redo stacks hold.
    pub fn history_bytes(&self) -> u64 {
        self.lock().history.bytes()
    }

    /// Logs an op already applied to `state.scene`. If its frame cannot be
    /// encoded, is over the size limit, or would not decode again at
    /// recovery, the op is rolled back and nothing happened. `who` made
    /// the change; an undo or redo names the entry it stepped (its epoch).
    fn commit(
        &self,
        state: &mut State,
        kind: FrameKind,
        at: String,
        applied: Applied,
        group: Option<Group>,
        (who, undoes): (Actor<'_>, Option<u64>),
    ) -> CoreResult<Pending> {
        // What an applied op created (undo and redo report none).
        let created: Vec<Uuid> = match kind {
            FrameKind::Apply => applied.created.clone(),
            _ => Vec::new(),
        };
        let epoch = state.epoch + 1;
        let parts = log::Parts {
            kind,
            at: &at,
            op: &applied.op,
            inverse: &applied.inverse,
            group: group.as_ref(),
            by: who.user,
            agent: who.agent,
            mcp_session: who.session,
            undoes,
        };
        let bytes = match self.encode(epoch, &parts) {
            Ok(bytes) => bytes,
            Err(e) => {
                let undo = apply(&mut state.scene, applied.inverse, &|h| {
                    self.blobs.contains(h)
                });
                debug_assert!(undo.is_ok());
                return Err(e);
            }
        };
        state.scene.project.updated_at.clone_from(&at);
        state.epoch = epoch;
        {
            let mut name = self
                .live_name
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if *name != state.scene.project.name {
                name.clone_from(&state.scene.project.name);
            }
        }
        // Computed before the history takes the op.
        let pages = applied.op.pages_changed();
        let label = history::describe(&state.scene, &applied.op);
        let record = journal_line(epoch, kind, &label, &bytes);
        match kind {
            FrameKind::Apply => state.history.push(Entry {
                label,
                forward: applied.op,
                inverse: applied.inverse,
                group,
                by: who.user.map(str::to_owned),
                agent: who.agent.map(str::to_owned),
                session: who.session.map(str::to_owned),
                epoch,
            }),
            FrameKind::Undo => {
                state.history.undone_at(undoes.unwrap_or_default(), who);
            }
            FrameKind::Redo => {
                state.history.redone_at(undoes.unwrap_or_default(), who);
            }
        }
        self.writer().push(Item::Frame {
            epoch,
            bytes,
            pages,
            record,
        });
        state.since_snapshot += 1;
        if state.since_snapshot >= self.settings.snapshot_every_ops {
            self.queue_snapshot(state);
        }
        Ok(Pending {
            epoch,
            created,
            durable: self.writer().waiter(),
        })
    }

    /// The frame's line, once it is known to be within the size limit and
    /// to decode again as recovery decodes it.
    fn encode(&self, epoch: u64, parts: &log::Parts<'_>) -> CoreResult<Vec<u8>> {
        let encoded = log::encode_parts(epoch, parts)?;
        let max = self.settings.max_op_bytes;
        if parts.kind == FrameKind::Apply && encoded.op_len as u64 > max {
            return Err(CoreError::InvalidOp(format!(
                "the op is {} bytes as logged; at most {max} are allowed (server.max_body_bytes)",
                encoded.op_len
            )));
        }
        log::check_replayable(&encoded.bytes).map_err(|e| {
            CoreError::InvalidOp(format!(
                "refused: the op could not be replayed from the log ({e})"
            ))
        })?;
        Ok(encoded.bytes)
    }

    fn queue_snapshot(&self, state: &mut State) {
        let rename =
            (state.scene.project.name != state.toml_name).then(|| state.scene.project.name.clone());
        if let Some(name) = &rename {
            state.toml_name.clone_from(name);
        }
        self.writer().push(Item::Snapshot(Box::new(SnapshotJob {
            snapshot: SnapshotFile {
                epoch: state.epoch,
                scene: state.scene.clone(),
            },
            history: HistoryFile {
                epoch: state.epoch,
                stacks: state.history.stacks(),
            },
            rename,
        })));
        state.since_snapshot = 0;
    }

    /// The scene as it is now, including changes not yet durable (see
    /// [`Session::wait_durable`]). Blocks while a change applies.
    pub fn snapshot(&self) -> CoreResult<SceneSnapshot> {
        self.snapshot_of(&mut self.lock())
    }

    /// [`Session::snapshot`] if the state is free at once (and needs no
    /// failed writer reopened).
    pub fn try_snapshot(&self) -> Option<CoreResult<SceneSnapshot>> {
        if self.unwritable().is_some() {
            return None;
        }
        self.try_lock()
            .map(|mut state| self.snapshot_of(&mut state))
    }

    /// The scene and the undo and redo stacks of one epoch (an archive
    /// that keeps its history).
    pub fn snapshot_with_history(&self) -> CoreResult<(SceneSnapshot, Stacks)> {
        let mut state = self.lock();
        let snapshot = self.snapshot_of(&mut state)?;
        Ok((snapshot, state.history.stacks()))
    }

    fn snapshot_of(&self, state: &mut State) -> CoreResult<SceneSnapshot> {
        // A reader needs no writer: while the disk stays full it reads what
        // is durable (the reopen put that in memory), not an error.
        if let Err(e) = self.check_open(state)
            && (state.closed || state.epoch > self.writer().durable_epoch())
        {
            return Err(e);
        }
        Ok(SceneSnapshot {
            epoch: state.epoch,
            scene: state.scene.clone(),
        })
    }

    /// Resolves once `epoch` is durable.
    pub async fn wait_durable(&self, epoch: u64) -> CoreResult<()> {
        wait_durable(&mut self.writer().waiter(), epoch).await
    }

    /// Writes a final snapshot when the log holds anything, stops the
    /// writer. The lock is released when the session is dropped.
    pub fn close(&self) -> CoreResult<()> {
        {
            let mut state = self.lock();
            if state.closed {
                return Ok(());
            }
            state.closed = true;
            if state.since_snapshot > 0 || state.scene.project.name != state.toml_name {
                self.queue_snapshot(&mut state);
            }
        }
        let closed = self.writer().close();
        // Nothing writes the project any more (a closed session refuses
        // every change and never reopens its writer).
        self.project_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        closed
    }
}

/// A frame's journal line (`storage::journal`): the frame as logged,
/// with its epoch and label (an undo's or redo's says so). Empty if it
/// cannot be made: the frame still lands, and the journal misses a line.
pub(crate) fn journal_line(epoch: u64, kind: FrameKind, label: &str, frame: &[u8]) -> Vec<u8> {
    let label = match kind {
        FrameKind::Apply => std::borrow::Cow::Borrowed(label),
        FrameKind::Undo => format!("undo: {label}").into(),
        FrameKind::Redo => format!("redo: {label}").into(),
    };
    quire_store::storage::journal::line(epoch, &label, frame)
}
