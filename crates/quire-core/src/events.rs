//! The event bus: one per process.
//!
//! Every event gets the next `seq`, counted from a per-boot base (see
//! [`boot_base`]). The bus keeps the last 1,024 events in a
//! ring, sends each to subscribers over a tokio broadcast channel, and keeps
//! a small model of what the events say (open sessions, their epochs, the
//! current session), updated under the same lock as `seq`. A `Snapshot`
//! built from that model is therefore exactly the state after event `seq`:
//! a subscriber that starts from it and then reads events `> seq` misses
//! nothing and sees nothing twice. New subscribers, and subscribers that
//! fall behind the ring or the channel, get such a `Snapshot` instead of a
//! silent gap.

use quire_model::journal::Who;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use tokio::sync::broadcast;

use quire_model::finding::Finding;
use quire_model::ids::{JobId, PageId, ProjectId, SessionId};

/// How many past events a reconnecting client can resume from.
pub const RING_CAPACITY: usize = 1024;

/// How many finished jobs are remembered (with their warnings).
pub const RECENT_JOBS: usize = 100;

/// How many warnings a job summary keeps; later ones are only counted, so
/// a `Snapshot` (which every new or lagging client is sent) stays small.
pub const MAX_JOB_WARNINGS: usize = 1000;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum JobStatus {
    Queued,
    Running,
    Completed,
    CompletedWithErrors,
    Cancelled,
    Failed,
}

impl JobStatus {
    pub fn is_finished(self) -> bool {
        !matches!(self, JobStatus::Queued | JobStatus::Running)
    }
}

/// Where a running job is.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobProgress {
    pub step: String,
    pub step_index: usize,
    pub total_steps: usize,
    /// Pages done in this step.
    pub page: usize,
    pub total_pages: usize,
    pub overall_percent: f64,
}

impl JobProgress {
    /// The progress `event` reports for `job`, if it is that job's
    /// `JobProgress`.
    pub fn of(event: &Event, job: JobId) -> Option<JobProgress> {
        match event {
            Event::JobProgress {
                job_id,
                step,
                step_index,
                total_steps,
                page,
                total_pages,
                overall_percent,
            } if *job_id == job => Some(JobProgress {
                step: step.clone(),
                step_index: *step_index,
                total_steps: *total_steps,
                page: *page,
                total_pages: *total_pages,
                overall_percent: *overall_percent,
            }),
            _ => None,
        }
    }
}

/// One step that failed (or found a problem) on one page.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobWarningInfo {
    pub page_index: usize,
    pub total_pages: usize,
    pub step_id: String,
    #[serde(flatten)]
    pub finding: Finding,
}

impl JobSummary {
    /// The summary a `JobStarted` event begins (queued).
    pub fn started(event: &Event) -> Option<JobSummary> {
        match event {
            Event::JobStarted {
                id,
                session_id,
                steps,
                total_pages,
                started_by,
            } => Some(JobSummary {
                id: *id,
                session_id: *session_id,
                steps: steps.clone(),
                total_pages: *total_pages,
                started_by: started_by.clone(),
                status: JobStatus::Queued,
                progress: None,
                warnings: Vec::new(),
                warnings_omitted: 0,
                error: None,
            }),
            _ => None,
        }
    }

    /// Updates the summary with a progress, warning or finish event of this
    /// job (other events are ignored).
    pub fn apply(&mut self, event: &Event) {
        if let Some(progress) = JobProgress::of(event, self.id) {
            self.status = JobStatus::Running;
            self.progress = Some(progress);
            return;
        }
        match event {
            Event::JobWarning {
                job_id,
                page_index,
                total_pages,
                step_id,
                finding,
            } if *job_id == self.id => {
                if self.warnings.len() < MAX_JOB_WARNINGS {
                    self.warnings.push(JobWarningInfo {
                        page_index: *page_index,
                        total_pages: *total_pages,
                        step_id: step_id.clone(),
                        finding: finding.clone(),
                    });
                } else {
                    self.warnings_omitted += 1;
                }
            }
            Event::JobFinished { id, status, error } if *id == self.id => {
                self.status = *status;
                self.error.clone_from(error);
            }
            _ => {}
        }
    }
}

/// A job as events describe it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSummary {
    pub id: JobId,
    pub session_id: SessionId,
    pub steps: Vec<String>,
    pub total_pages: usize,
    pub status: JobStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<JobProgress>,
    /// The first [`MAX_JOB_WARNINGS`] warnings (each was also its own
    /// `JobWarning` event).
    pub warnings: Vec<JobWarningInfo>,
    /// Warnings past those, counted only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warnings_omitted: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Who started it: `{ by: "human" | "agent", user, client? }`; last,
    /// so that a script reading a job's `status` by pattern finds it
    /// where it was; left out of the MCP schema for its budget.
    #[serde(default)]
    #[schemars(skip)]
    pub started_by: Who,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One open session as events describe it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: SessionId,
    pub project_id: ProjectId,
    pub name: String,
    /// Where it is on the server: absent for a caller who is not an
    /// admin (read back as empty).
    #[serde(default)]
    pub path: PathBuf,
    pub epoch: u64,
    pub busy: bool,
    pub current: bool,
    /// When this process opened it (RFC 3339, UTC).
    #[serde(default)]
    pub opened_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(tag = "event", rename_all_fields = "camelCase")]
pub enum Event {
    /// The whole picture: seed for a new or lagging subscriber.
    Snapshot {
        jobs: Vec<JobSummary>,
        sessions: Vec<SessionSummary>,
    },
    SessionOpened {
        session_id: SessionId,
        project_id: ProjectId,
        name: String,
        path: PathBuf,
        epoch: u64,
        /// RFC 3339, UTC.
        #[serde(default)]
        opened_at: String,
    },
    SessionClosed {
        session_id: SessionId,
    },
    /// `sessionId` is null when no session is left open.
    CurrentSessionChanged {
        session_id: Option<SessionId>,
    },
    /// After every durable op, undo or redo. `name` is the project's name
    /// after the change; `pages`, when present, are the only pages whose
    /// content changed (read them with `scene.json?pages=…`); absent when
    /// pages were added, removed or reordered, the project changed, or
    /// many pages did.
    SceneAdvanced {
        session_id: SessionId,
        epoch: u64,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pages: Option<Vec<PageId>>,
    },
    /// A pipeline was accepted (queued); its session is busy until
    /// `JobFinished`.
    JobStarted {
        id: JobId,
        session_id: SessionId,
        steps: Vec<String>,
        total_pages: usize,
        /// Who started it: `{ by: "human" | "agent", user, client? }`.
        #[serde(default)]
        started_by: Who,
    },
    JobProgress {
        job_id: JobId,
        step: String,
        step_index: usize,
        total_steps: usize,
        page: usize,
        total_pages: usize,
        overall_percent: f64,
    },
    /// One step failed, or found a problem, on one page; the job goes on.
    JobWarning {
        job_id: JobId,
        page_index: usize,
        total_pages: usize,
        step_id: String,
        #[serde(flatten)]
        finding: Finding,
    },
    JobFinished {
        id: JobId,
        status: JobStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    ConfigChanged {},
}

impl Event {
    /// The variant name (the SSE `event:` field).
    pub fn name(&self) -> &'static str {
        match self {
            Event::Snapshot { .. } => "Snapshot",
            Event::SessionOpened { .. } => "SessionOpened",
            Event::SessionClosed { .. } => "SessionClosed",
            Event::CurrentSessionChanged { .. } => "CurrentSessionChanged",
            Event::SceneAdvanced { .. } => "SceneAdvanced",
            Event::JobStarted { .. } => "JobStarted",
            Event::JobProgress { .. } => "JobProgress",
            Event::JobWarning { .. } => "JobWarning",
            Event::JobFinished { .. } => "JobFinished",
            Event::ConfigChanged { .. } => "ConfigChanged",
        }
    }
}

/// An event with its sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
pub struct Envelope {
    pub seq: u64,
    #[serde(flatten)]
    pub event: Event,
}

#[derive(Debug, Default)]
struct Model {
    sessions: Vec<SessionSummary>,
    /// Jobs in flight and the last `RECENT_JOBS` finished, oldest first.
    jobs: VecDeque<JobSummary>,
}

impl Model {
    fn job(&mut self, id: JobId) -> Option<&mut JobSummary> {
        self.jobs.iter_mut().find(|j| j.id == id)
    }

    fn refresh_busy(&mut self) {
        for s in &mut self.sessions {
            s.busy = self
                .jobs
                .iter()
                .any(|j| j.session_id == s.id && !j.status.is_finished());
        }
    }

    fn apply(&mut self, event: &Event) {
        match event {
            Event::JobStarted { .. } => {
                if let Some(job) = JobSummary::started(event) {
                    self.jobs.push_back(job);
                }
                self.refresh_busy();
            }
            Event::JobProgress { job_id: id, .. } | Event::JobWarning { job_id: id, .. } => {
                if let Some(job) = self.job(*id) {
                    job.apply(event);
                }
            }
            Event::JobFinished { id, .. } => {
                if let Some(job) = self.job(*id) {
                    job.apply(event);
                }
                let finished = self.jobs.iter().filter(|j| j.status.is_finished()).count();
                if finished > RECENT_JOBS
                    && let Some(oldest) = self.jobs.iter().position(|j| j.status.is_finished())
                {
                    self.jobs.remove(oldest);
                }
                self.refresh_busy();
            }
            Event::SessionOpened {
                session_id,
                project_id,
                name,
                path,
                epoch,
                opened_at,
            } => {
                self.sessions.push(SessionSummary {
                    id: *session_id,
                    project_id: *project_id,
                    name: name.clone(),
                    path: path.clone(),
                    epoch: *epoch,
                    busy: false,
                    current: false,
                    opened_at: opened_at.clone(),
                });
                self.refresh_busy();
            }
            Event::SessionClosed { session_id } => self.sessions.retain(|s| s.id != *session_id),
            Event::CurrentSessionChanged { session_id } => {
                for s in &mut self.sessions {
                    s.current = Some(s.id) == *session_id;
                }
            }
            Event::SceneAdvanced {
                session_id,
                epoch,
                name,
                ..
            } => {
                if let Some(s) = self.sessions.iter_mut().find(|s| s.id == *session_id) {
                    s.epoch = *epoch;
                    s.name.clone_from(name);
                }
            }
            Event::Snapshot { .. } | Event::ConfigChanged { .. } => {}
        }
    }
}

/// Where this run's `seq`s start: the wall clock in milliseconds × 1,000.
/// So ids strictly increase across restarts of the server (a client that
/// de-duplicates by id keeps working, and an id from an earlier run is never
/// mistaken for one of this run: it gets a fresh `Snapshot`) unless a run
/// publishes more than a thousand events per millisecond it has been up,
/// or the clock is set back. The numbers stay below 2^53 (JavaScript's
/// exact integers) until the year 2255.
pub fn boot_base() -> u64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            u64::try_from(d.as_millis()).unwrap_or(u64::MAX / 1000)
        });
    ms.saturating_mul(1000)
}

struct BusState {
    seq: u64,
    ring: VecDeque<Arc<Envelope>>,
    model: Model,
}

pub struct EventBus {
    // Held only to number, record and send one event, or to subscribe;
    // never across an await.
    state: Mutex<BusState>,
    tx: broadcast::Sender<Arc<Envelope>>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    /// A bus whose first `seq` is above every `seq` an earlier run of this
    /// server handed out (see [`boot_base`]).
    pub fn new() -> Self {
        Self::starting_after(boot_base())
    }

    /// A bus whose first event is `base + 1`.
    pub fn starting_after(base: u64) -> Self {
        let (tx, _) = broadcast::channel(RING_CAPACITY);
        EventBus {
            state: Mutex::new(BusState {
                seq: base,
                ring: VecDeque::with_capacity(RING_CAPACITY),
                model: Model::default(),
            }),
            tx,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BusState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Numbers, records and sends `event`; returns its `seq`.
    pub fn publish(&self, event: Event) -> u64 {
        let mut state = self.lock();
        state.seq += 1;
        state.model.apply(&event);
        let envelope = Arc::new(Envelope {
            seq: state.seq,
            event,
        });
        if state.ring.len() == RING_CAPACITY {
            state.ring.pop_front();
        }
        state.ring.push_back(envelope.clone());
        // No receivers is fine: nobody is listening yet.
        let _ = self.tx.send(envelope);
        state.seq
    }

    /// How many subscriptions are open (event-stream clients among them).
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }

    /// The last `seq` handed out.
    pub fn seq(&self) -> u64 {
        self.lock().seq
    }

    /// Open sessions as the published events describe them.
    pub fn sessions(&self) -> Vec<SessionSummary> {
        self.lock().model.sessions.clone()
    }

    /// Jobs in flight and the last 100 finished, oldest first.
    pub fn jobs(&self) -> Vec<JobSummary> {
        self.lock().model.jobs.iter().cloned().collect()
    }

    pub fn job(&self, id: JobId) -> Option<JobSummary> {
        self.lock().model.jobs.iter().find(|j| j.id == id).cloned()
    }

    fn snapshot_locked(state: &BusState) -> Arc<Envelope> {
        Arc::new(Envelope {
            seq: state.seq,
            event: Event::Snapshot {
                jobs: state.model.jobs.iter().cloned().collect(),
                sessions: state.model.sessions.clone(),
            },
        })
    }

    /// A subscription that starts after event `after` when it is still in
    /// the ring, and with a `Snapshot` otherwise (or when `after` is None).
    pub fn subscribe(self: &Arc<Self>, after: Option<u64>) -> Subscription {
        let state = self.lock();
        let rx = self.tx.subscribe();
        let mut backlog = VecDeque::new();
        let oldest = state.ring.front().map_or(state.seq + 1, |e| e.seq);
        match after {
            Some(n) if n == state.seq => {}
            Some(n) if n < state.seq && n + 1 >= oldest => {
                backlog.extend(state.ring.iter().filter(|e| e.seq > n).cloned());
            }
            _ => backlog.push_back(Self::snapshot_locked(&state)),
        }
        Subscription {
            bus: self.clone(),
            rx,
            backlog,
            floor: state.seq,
        }
    }
}

/// A stream of events for one subscriber.
pub struct Subscription {
    bus: Arc<EventBus>,
    rx: broadcast::Receiver<Arc<Envelope>>,
    backlog: VecDeque<Arc<Envelope>>,
    /// Events at or below this were covered by the backlog or a snapshot.
    floor: u64,
}

impl Subscription {
    /// The next event; `None` once the bus is gone.
    pub async fn next(&mut self) -> Option<Arc<Envelope>> {
        loop {
            if let Some(e) = self.backlog.pop_front() {
                return Some(e);
            }
            match self.rx.recv().await {
                Ok(e) if e.seq <= self.floor => continue,
                Ok(e) => return Some(e),
                Err(broadcast::error::RecvError::Lagged(_)) => self.resync(),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next event if one is ready, without waiting.
    pub fn try_next(&mut self) -> Option<Arc<Envelope>> {
        loop {
            if let Some(e) = self.backlog.pop_front() {
                return Some(e);
            }
            match self.rx.try_recv() {
                Ok(e) if e.seq <= self.floor => continue,
                Ok(e) => return Some(e),
                Err(broadcast::error::TryRecvError::Lagged(_)) => self.resync(),
                Err(_) => return None,
            }
        }
    }

    /// Fell behind the channel: start again from a snapshot, with a fresh
    /// receiver so that no stale event (or second lag) follows it.
    fn resync(&mut self) {
        let state = self.bus.lock();
        let snapshot = EventBus::snapshot_locked(&state);
        self.rx = self.bus.tx.subscribe();
        self.floor = state.seq;
        self.backlog.clear();
        self.backlog.push_back(snapshot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(bus: &EventBus) -> SessionId {
        let id = SessionId::new();
        bus.publish(Event::SessionOpened {
            session_id: id,
            project_id: ProjectId::new(),
            name: "p".into(),
            path: "/p".into(),
            epoch: 0,
            opened_at: "2026-12-01T00:00:00.000Z".into(),
        });
        id
    }

    #[test]
    fn a_later_run_numbers_above_an_earlier_one() {
        // A run's base is the clock (ms) × 1,000: far above what the last
        // run handed out, and exact in JavaScript.
        let base = boot_base();
        assert!(base > 1_700_000_000_000_000 && base < 1 << 53, "{base}");
        let earlier = Arc::new(EventBus::starting_after(base - 5_000));
        opened(&earlier);
        let last = earlier.seq();
        let later = Arc::new(EventBus::starting_after(base));
        let first = later.publish(Event::ConfigChanged {});
        assert!(first > last, "{first} <= {last}");
        // An id of the earlier run, even one ahead of this run, gets a
        // snapshot, never a replay.
        for old in [last, first + 5] {
            let mut sub = later.subscribe(Some(old));
            assert_eq!(sub.try_next().unwrap().event.name(), "Snapshot");
        }
    }

    #[tokio::test]
    async fn new_subscriber_starts_with_a_snapshot_then_live_events() {
        let bus = Arc::new(EventBus::starting_after(0));
        let id = opened(&bus);
        let mut sub = bus.subscribe(None);
        let first = sub.next().await.unwrap();
        assert_eq!(first.seq, 1);
        let Event::Snapshot { sessions, .. } = &first.event else {
            panic!("{first:?}")
        };
        assert_eq!(sessions[0].id, id);
        bus.publish(Event::SceneAdvanced {
            session_id: id,
            epoch: 1,
            name: "p".into(),
            pages: None,
        });
        let next = sub.next().await.unwrap();
        assert_eq!(next.seq, 2);
        assert_eq!(next.event.name(), "SceneAdvanced");
    }

    #[tokio::test]
    async fn resume_replays_the_ring_or_falls_back_to_a_snapshot() {
        let bus = Arc::new(EventBus::starting_after(0));
        let id = opened(&bus);
        for epoch in 1..=5 {
            bus.publish(Event::SceneAdvanced {
                session_id: id,
                epoch,
                name: "p".into(),
                pages: None,
            });
        }
        let mut sub = bus.subscribe(Some(3));
        let seqs: Vec<u64> = [sub.try_next(), sub.try_next(), sub.try_next()]
            .into_iter()
            .map(|e| e.map_or(0, |e| e.seq))
            .collect();
        assert_eq!(seqs, vec![4, 5, 6]);
        assert!(sub.try_next().is_none());

        for epoch in 6..=(RING_CAPACITY as u64 + 10) {
            bus.publish(Event::SceneAdvanced {
                session_id: id,
                epoch,
                name: "p".into(),
                pages: None,
            });
        }
        let mut old = bus.subscribe(Some(2));
        let first = old.try_next().unwrap();
        assert_eq!(first.event.name(), "Snapshot");
        assert_eq!(first.seq, bus.seq());
        // A seq from a previous run of the server (ahead of ours) also
        // restarts from a snapshot.
        let mut future = bus.subscribe(Some(bus.seq() + 100));
        assert_eq!(future.try_next().unwrap().event.name(), "Snapshot");
    }

    #[tokio::test]
    async fn a_lagging_subscriber_gets_a_snapshot_not_a_gap() {
        let bus = Arc::new(EventBus::starting_after(0));
        let id = opened(&bus);
        let mut sub = bus.subscribe(Some(bus.seq()));
        for epoch in 1..=(RING_CAPACITY as u64 * 2) {
            bus.publish(Event::SceneAdvanced {
                session_id: id,
                epoch,
                name: "p".into(),
                pages: None,
            });
        }
        let e = sub.next().await.unwrap();
        let Event::Snapshot { sessions, .. } = &e.event else {
            panic!("{e:?}")
        };
        assert_eq!(sessions[0].epoch, RING_CAPACITY as u64 * 2);
        assert_eq!(e.seq, bus.seq());
        assert!(sub.try_next().is_none());
    }
}
