//! The log writer: one thread per open project that makes frames durable.
//!
//! Writers (under the session's state lock, so in epoch order) push encoded
//! frames onto a queue. This thread takes everything queued, appends it to
//! `ops.log` with one `write`, fsyncs once, and only then reports the new
//! durable epoch: it publishes `SceneAdvanced` for each epoch and wakes the
//! callers waiting to acknowledge. Several writers arriving during one fsync
//! share the next one (group commit).
//!
//! When the previous fsync carried several frames (several writers are
//! active), the thread waits a little for as many frames before the next
//! fsync, so the writers it just woke can join: at most 100 µs with
//! `durability = "fsync"`, at most 5 ms with `"batch"`. A lone writer never
//! waits.
//!
//! A snapshot is queued like a frame, so it lands exactly between the frames
//! before and after it: pending frames are synced, `scene.json` is replaced
//! atomically, then `ops.log` is truncated. A snapshot that cannot be
//! written (a full disk) loses nothing, since the log still holds every
//! frame: it is a warning, and the frames go on.
//!
//! A frame that cannot be written or synced stops the writer: the log is cut
//! back to the frames already durable (what a failed write may have left
//! is never replayed as acknowledged), and every waiter from that frame on
//! gets the error. The session then reopens its writer from disk
//! (the core's session).

use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::{
    FORMAT_VERSION, HistoryFile, ProjectFiles, ProjectToml, SnapshotFile, private_file,
    write_atomic,
};
use crate::Durability;
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::PageId;

/// How long a frame may wait for other writers' frames to share its fsync,
/// by durability setting.
const JOIN_WINDOW_FSYNC: Duration = Duration::from_micros(100);
const JOIN_WINDOW_BATCH: Duration = Duration::from_millis(5);

pub enum Item {
    Frame {
        epoch: u64,
        bytes: Vec<u8>,
        /// What the frame's op changed, for `SceneAdvanced`
        /// ([`Op::pages_changed`](quire_model::op::Op::pages_changed)).
        pages: Option<Vec<PageId>>,
        /// Its journal line, appended once the frame is durable.
        record: Vec<u8>,
    },
    Snapshot(Box<SnapshotJob>),
}

pub struct SnapshotJob {
    pub snapshot: SnapshotFile,
    /// The undo and redo stacks at the snapshot's epoch.
    pub history: HistoryFile,
    /// The project's new name, for `project.toml`, when it changed.
    pub rename: Option<String>,
}

/// The durable state as seen by waiters.
#[derive(Debug, Clone)]
pub struct Durable {
    pub epoch: u64,
    /// Set once a write or fsync failed; nothing after it is acknowledged.
    pub error: Option<CoreError>,
    /// The length of `ops.log` that holds exactly the durable frames.
    pub intact: u64,
}

/// Called for each newly durable epoch, in order, with the pages its frame
/// changed, before waiters wake.
pub type OnDurable = Box<dyn Fn(u64, Option<Vec<PageId>>) + Send>;

struct Queue {
    items: Vec<Item>,
    closing: bool,
}

struct Shared {
    // Held only to push or take items; never across I/O.
    queue: Mutex<Queue>,
    ready: Condvar,
}

pub struct LogWriter {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    durable: watch::Receiver<Durable>,
}

/// Where the project stands when its writer starts.
pub struct Start {
    /// The epoch reached (snapshot plus log).
    pub epoch: u64,
    /// The epoch of `scene.json`.
    pub snapshot_epoch: u64,
    /// `project.toml` as on disk.
    pub project: ProjectToml,
}

impl LogWriter {
    pub fn start(
        files: ProjectFiles,
        start: Start,
        durability: Durability,
        on_durable: OnDurable,
    ) -> CoreResult<Self> {
        let path = files.ops_log();
        let log = private_file()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| CoreError::io(&path, e))?;
        let log_len = log.metadata().map_err(|e| CoreError::io(&path, e))?.len();
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                items: Vec::new(),
                closing: false,
            }),
            ready: Condvar::new(),
        });
        let epoch = start.epoch;
        let (tx, rx) = watch::channel(Durable {
            epoch,
            error: None,
            intact: log_len,
        });
        let flusher = Flusher {
            shared: shared.clone(),
            journal: super::journal::Journal::new(files.journal()),
            log,
            log_len,
            covered: start.project.epoch > Some(start.snapshot_epoch),
            project: start.project,
            files,
            durability,
            durable: tx,
            on_durable,
            epoch,
        };
        let thread = std::thread::Builder::new()
            .name("quire-log".into())
            .spawn(move || flusher.run())
            .map_err(|e| CoreError::io_during("starting the log writer", e))?;
        Ok(LogWriter {
            shared,
            thread: Mutex::new(Some(thread)),
            durable: rx,
        })
    }

    /// Queues an item. Call in epoch order (under the session's lock).
    pub fn push(&self, item: Item) {
        let mut queue = self
            .shared
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        queue.items.push(item);
        drop(queue);
        self.shared.ready.notify_one();
    }

    /// The write or fsync error that stopped this writer, if any.
    pub fn failed(&self) -> Option<CoreError> {
        self.durable.borrow().error.clone()
    }

    /// The last epoch made durable.
    pub fn durable_epoch(&self) -> u64 {
        self.durable.borrow().epoch
    }

    /// The length of `ops.log` holding exactly the durable frames.
    pub fn intact(&self) -> u64 {
        self.durable.borrow().intact
    }

    pub fn waiter(&self) -> watch::Receiver<Durable> {
        self.durable.clone()
    }

    /// Writes everything queued, then stops the thread.
    pub fn close(&self) -> CoreResult<()> {
        {
            let mut queue = self
                .shared
                .queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            queue.closing = true;
        }
        self.shared.ready.notify_one();
        let handle = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle
            && handle.join().is_err()
        {
            return Err(CoreError::internal("the log writer thread panicked"));
        }
        match self.failed() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

struct Flusher {
    shared: Arc<Shared>,
    /// `journal.jsonl`: each durable frame's record.
    journal: super::journal::Journal,
    log: File,
    /// The length `ops.log` has after this writer's last write. If the
    /// file has another length, something else wrote it (a second process
    /// that got past the lock): the writer stops rather than interleave.
    log_len: u64,
    /// `project.toml` as this writer last wrote it.
    project: ProjectToml,
    /// Whether `project.toml` records an epoch past the last snapshot,
    /// i.e. says that `ops.log` holds frames.
    covered: bool,
    files: ProjectFiles,
    durability: Durability,
    durable: watch::Sender<Durable>,
    on_durable: OnDurable,
    /// The last epoch reported durable.
    epoch: u64,
}

impl Flusher {
    fn run(mut self) {
        let mut last_batch = 0usize;
        loop {
            let Some(items) = self.take(last_batch) else {
                return;
            };
            last_batch = items.len();
            let mut written = Vec::new();
            let result = self.write(items, &mut written);
            // What was written before a failure is durable all the same.
            if let Some(epoch) = written.last().map(|(e, _)| *e) {
                for (e, pages) in written {
                    (self.on_durable)(e, pages);
                }
                self.epoch = epoch;
                let intact = self.log_len;
                self.durable.send_modify(|d| {
                    d.epoch = epoch;
                    d.intact = intact;
                });
            }
            if let Err(e) = result {
                tracing::error!("ops.log of {} failed: {e}", self.files.dir.display());
                self.durable.send_modify(|d| d.error = Some(e));
                return;
            }
        }
    }

    /// Waits for work; `None` once closing with nothing left.
    fn take(&self, last_batch: usize) -> Option<Vec<Item>> {
        fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Queue> {
            s.queue.lock().unwrap_or_else(PoisonError::into_inner)
        }
        let mut queue = lock(&self.shared);
        while queue.items.is_empty() && !queue.closing {
            queue = self
                .shared
                .ready
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if queue.items.is_empty() {
            return None;
        }
        if last_batch > 1 {
            // Concurrent writers: the ones woken by the last fsync are about
            // to queue their next frames; let them join this fsync.
            let window = match self.durability {
                Durability::Fsync => JOIN_WINDOW_FSYNC,
                Durability::Batch => JOIN_WINDOW_BATCH,
            };
            let deadline = Instant::now() + window;
            while queue.items.len() < last_batch && !queue.closing {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                queue = self
                    .shared
                    .ready
                    .wait_timeout(queue, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        }
        Some(std::mem::take(&mut queue.items))
    }

    /// Writes and syncs `items`, putting the frames made durable (epoch and
    /// pages changed) into `written` in order, also when a later one fails.
    fn write(
        &mut self,
        items: Vec<Item>,
        written: &mut Vec<(u64, Option<Vec<PageId>>)>,
    ) -> CoreResult<()> {
        let mut buf = Vec::new();
        // The frames in `buf`, and their journal lines.
        let mut pending = Vec::new();
        let mut records = Vec::new();
        for item in items {
            match item {
                Item::Frame {
                    epoch,
                    bytes,
                    pages,
                    record,
                } => {
                    // The first frame is taken as is: a big one is not copied.
                    if buf.is_empty() {
                        buf = bytes;
                    } else {
                        buf.extend_from_slice(&bytes);
                    }
                    records.extend_from_slice(&record);
                    pending.push((epoch, pages));
                }
                Item::Snapshot(job) => {
                    if let Some((epoch, _)) = pending.last() {
                        self.append(&buf, *epoch)?;
                        self.journal.append(&records);
                        buf.clear();
                        records.clear();
                        written.append(&mut pending);
                    }
                    // The log still holds every frame: nothing is lost, the
                    // next snapshot tries again.
                    if let Err(e) = self.snapshot(*job) {
                        tracing::warn!(
                            "cannot write a snapshot of {} ({e}); ops.log keeps every change",
                            self.files.dir.display()
                        );
                    }
                }
            }
        }
        if let Some((epoch, _)) = pending.last() {
            self.append(&buf, *epoch)?;
            self.journal.append(&records);
            written.append(&mut pending);
        }
        Ok(())
    }

    /// Appends frames up to `epoch` and makes them durable; the first ones
    /// after a snapshot also make `project.toml` record `epoch`.
    fn append(&mut self, bytes: &[u8], epoch: u64) -> CoreResult<()> {
        let path = self.files.ops_log();
        let io = |e| CoreError::io(&path, e);
        let len = self.log.metadata().map_err(io)?.len();
        if len != self.log_len {
            return Err(CoreError::internal(format!(
                "{} changed behind this process's back ({} bytes where it wrote {}): \
                 another process may have opened the project; refusing to write more",
                path.display(),
                len,
                self.log_len
            )));
        }
        if let Err(e) = self
            .log
            .write_all(bytes)
            .and_then(|()| self.log.sync_data())
        {
            // Neither acknowledged nor to be replayed: cut back to what is.
            let cut = self
                .log
                .set_len(self.log_len)
                .and_then(|()| self.log.sync_all());
            if let Err(cut) = cut {
                tracing::error!(
                    "cannot cut {} back after a failed write: {cut}",
                    path.display()
                );
            }
            return Err(io(e));
        }
        self.log_len += bytes.len() as u64;
        if !self.covered {
            // Only a safeguard (a lost ops.log is noticed): the frames are
            // durable whether or not this is written; tried again next time.
            self.project.epoch = Some(epoch);
            match self.write_project() {
                Ok(()) => self.covered = true,
                Err(e) => tracing::warn!("cannot record the epoch in project.toml: {e}"),
            }
        }
        Ok(())
    }

    /// Rewrites `project.toml`, in this version's format (what it writes
    /// beside it, e.g. a checksummed `scene.json`, needs it).
    fn write_project(&mut self) -> CoreResult<()> {
        self.project.format_version = FORMAT_VERSION;
        self.project.write(&self.files.project_toml())
    }

    /// Replaces `scene.json`, then empties `ops.log`.
    fn snapshot(&mut self, job: SnapshotJob) -> CoreResult<()> {
        let path = self.files.ops_log();
        let io = |e| CoreError::io(&path, e);
        // The journal keeps what ops.log is about to lose.
        self.journal.sync()?;
        write_atomic(&self.files.history_json(), &job.history.encode()?)?;
        write_atomic(&self.files.scene_json(), &job.snapshot.encode()?)?;
        let old_format = self.project.format_version < FORMAT_VERSION;
        if let Some(name) = job.rename {
            self.project.name = name;
            self.write_project()?;
        } else if old_format {
            self.write_project()?;
        }
        self.log.set_len(0).map_err(io)?;
        self.log_len = 0;
        self.covered = false;
        self.log.sync_all().map_err(io)
    }
}
