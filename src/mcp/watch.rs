//! What one MCP connection follows on the event bus, and the task that
//! tells it: `notifications/resources/updated` for the resources it
//! subscribed to (the first change at once, a burst after it at most once
//! per [`COALESCE`]; a page only when that page changed), `notifications/resources/list_changed`
//! when a session opens or closes, and job warnings and failures as
//! `notifications/message` at or above the level it set.
//!
//! In the handshake era the task starts when the client has initialized
//! and ends with the connection: when its handler is dropped, or a
//! notification can no longer be sent. In the stateless era a
//! `subscriptions/listen` request runs the same task for the resources it
//! names, on its own stream, until it is cancelled (job warnings come there
//! on the stream of the call that runs the job, see `mod.rs`).

// rmcp marks MCP logging deprecated (SEP-2577, a later protocol version);
// protocol 2025-11-25, which clients speak today, has it, and this module is
// where quire uses it.
#![allow(deprecated)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{LoggingMessageNotificationParam, ResourceUpdatedNotificationParam};
use rmcp::service::{Peer, SubscriptionSink};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::resources::Uri;
use quire_core::Core;
use quire_core::events::{Event, JobStatus};
use quire_model::finding::Severity;
use quire_model::ids::{JobId, SessionId};

/// After a resource update is told, how long further changes are gathered
/// into one notification.
pub const COALESCE: Duration = Duration::from_millis(20);

/// The MCP log levels, lowest first.
pub type Level = rmcp::model::LoggingLevel;

fn rank(level: Level) -> u8 {
    match level {
        Level::Debug => 0,
        Level::Info => 1,
        Level::Notice => 2,
        Level::Warning => 3,
        Level::Error => 4,
        Level::Critical => 5,
        Level::Alert => 6,
        Level::Emergency => 7,
    }
}

/// A connection's log level and subscriptions, shared by its handler and
/// its task.
#[derive(Debug)]
pub struct Watch {
    /// The lowest level sent; `warning` until the client sets one.
    level: Mutex<Level>,
    /// Each subscribed resource, with (for a page) its JSON when last told.
    subscribed: Mutex<BTreeMap<Uri, Option<String>>>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            level: Mutex::new(Level::Warning),
            subscribed: Mutex::new(BTreeMap::new()),
        }
    }
}

impl Watch {
    pub fn set_level(&self, level: Level) {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner) = level;
    }

    fn sends(&self, level: Level) -> bool {
        reaches(
            level,
            *self.level.lock().unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Subscribes to `uri`; `seen` is a page's JSON now
    /// (`resources::subscribable`).
    pub fn subscribe(&self, uri: Uri, seen: Option<String>) {
        self.subscribed().insert(uri, seen);
    }

    pub fn unsubscribe(&self, uri: &Uri) {
        self.subscribed().remove(uri);
    }

    fn subscribed(&self) -> std::sync::MutexGuard<'_, BTreeMap<Uri, Option<String>>> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The subscriptions of `session`.
    fn of_session(&self, session: SessionId) -> Vec<Uri> {
        self.subscribed()
            .keys()
            .filter(|u| u.session() == Some(session))
            .cloned()
            .collect()
    }

    /// Whether `uri`, still subscribed, now reads `now` where it read
    /// something else when last told; remembers `now`.
    fn page_changed(&self, uri: Uri, now: String) -> bool {
        match self.subscribed().get_mut(&uri) {
            Some(seen) if seen.as_deref() != Some(now.as_str()) => {
                *seen = Some(now);
                true
            }
            _ => false,
        }
    }
}

/// Where a watch's notifications go.
pub enum Sink {
    /// A handshake-era connection: everything it follows.
    Connection(Peer<RoleServer>),
    /// One `subscriptions/listen` stream: the updates of the resources it
    /// names, and the list's changes if it asked for them; never logs.
    Listen {
        sink: SubscriptionSink,
        list_changed: bool,
    },
}

impl Sink {
    async fn updated(&self, uri: String) -> Result<(), Gone> {
        let param = ResourceUpdatedNotificationParam::new(uri.clone());
        match self {
            Sink::Connection(peer) => peer.notify_resource_updated(param).await.map_err(|_| Gone),
            Sink::Listen { sink, .. } => sink.notify_resource_updated(uri).await.map_err(|_| Gone),
        }
    }

    async fn list_changed(&self) -> Result<(), Gone> {
        match self {
            Sink::Connection(peer) => peer.notify_resource_list_changed().await.map_err(|_| Gone),
            Sink::Listen {
                sink,
                list_changed: true,
            } => sink.notify_resource_list_changed().await.map_err(|_| Gone),
            Sink::Listen { .. } => Ok(()),
        }
    }

    async fn log(&self, message: LoggingMessageNotificationParam) -> Result<(), Gone> {
        match self {
            Sink::Connection(peer) => peer.notify_logging_message(message).await.map_err(|_| Gone),
            Sink::Listen { .. } => Ok(()),
        }
    }
}

/// Starts the connection's task; it stops when `stop` is cancelled.
pub fn spawn(core: Core, peer: Peer<RoleServer>, watch: Arc<Watch>, stop: CancellationToken) {
    tokio::spawn(async move {
        tokio::select! {
            () = run(core, Sink::Connection(peer), watch) => {}
            () = stop.cancelled() => {}
        }
    });
}

/// Why the task ends: the client cannot be told any more.
struct Gone;

/// Tells `sink` what `watch` follows until it cannot be told any more.
pub async fn run(core: Core, peer: Sink, watch: Arc<Watch>) {
    let mut events = core.subscribe(Some(core.events().seq()));
    // Sessions whose scene changed and that are not told yet.
    let mut changed: BTreeSet<SessionId> = BTreeSet::new();
    // While a window is open, changes wait for its end: the first change
    // is told at once, a burst after it once per window.
    let mut window: Option<tokio::time::Instant> = None;
    loop {
        let next = tokio::select! {
            next = events.next() => next,
            () = sleep_until(window) => {
                window = None;
                if !changed.is_empty() {
                    if flush(&core, &peer, &watch, std::mem::take(&mut changed)).await.is_err() {
                        return;
                    }
                    window = Some(tokio::time::Instant::now() + COALESCE);
                }
                continue;
            }
        };
        let Some(envelope) = next else { return };
        let scene_changed = match &envelope.event {
            Event::SceneAdvanced { session_id, .. } => {
                changed.insert(*session_id);
                true
            }
            // Resynchronised after falling behind: anything may have changed.
            Event::Snapshot { sessions, .. } => {
                changed.extend(sessions.iter().map(|s| s.id));
                true
            }
            _ => false,
        };
        if scene_changed && window.is_none() {
            if flush(&core, &peer, &watch, std::mem::take(&mut changed))
                .await
                .is_err()
            {
                return;
            }
            window = Some(tokio::time::Instant::now() + COALESCE);
        }
        let told = match &envelope.event {
            Event::SessionOpened { .. } | Event::SessionClosed { .. } | Event::Snapshot { .. } => {
                peer.list_changed().await
            }
            event => match job_log(event) {
                Some((_, level, data)) => log(&peer, &watch, level, data).await,
                None => Ok(()),
            },
        };
        if told.is_err() {
            return;
        }
    }
}

/// A job's warning or failure as a log message: the job, the level and
/// the data; `None` for any other event.
pub fn job_log(event: &Event) -> Option<(JobId, Level, serde_json::Value)> {
    match event {
        Event::JobWarning {
            job_id,
            page_index,
            step_id,
            finding,
            ..
        } => {
            let level = match finding.severity {
                Severity::Error => Level::Error,
                Severity::Warning => Level::Warning,
                // A step's note (a summary, a project without a source
                // language): below a client that asked for warnings.
                Severity::Info => Level::Info,
            };
            let mut data = json!({ "jobId": job_id, "pageIndex": page_index, "step": step_id });
            if let (Some(map), Ok(serde_json::Value::Object(f))) =
                (data.as_object_mut(), serde_json::to_value(finding))
            {
                map.extend(f);
            }
            Some((*job_id, level, data))
        }
        Event::JobFinished { id, status, error } => {
            let level = match status {
                JobStatus::Failed => Level::Error,
                JobStatus::CompletedWithErrors => Level::Warning,
                _ => return None,
            };
            let data = json!({ "jobId": id, "status": status, "error": error });
            Some((*id, level, data))
        }
        _ => None,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn log(
    peer: &Sink,
    watch: &Watch,
    level: Level,
    data: serde_json::Value,
) -> Result<(), Gone> {
    if !watch.sends(level) {
        return Ok(());
    }
    peer.log(job_message(level, data)).await
}

/// Sends a job's log message to `peer` (a stateless request's stream),
/// whether or not it can still be told.
pub async fn tell(peer: &Peer<RoleServer>, level: Level, data: serde_json::Value) {
    let _ = peer.notify_logging_message(job_message(level, data)).await;
}

/// A job's log message, as both eras send it.
fn job_message(level: Level, data: serde_json::Value) -> LoggingMessageNotificationParam {
    let mut message = LoggingMessageNotificationParam::new(level, data);
    message.logger = Some("quire.jobs".into());
    message
}

/// Whether a message at `level` reaches a client that asked for `least`.
pub fn reaches(level: Level, least: Level) -> bool {
    rank(level) >= rank(least)
}

/// Tells the subscriptions of the `changed` sessions: a scene always, a
/// page only when its JSON differs from what was last told.
async fn flush(
    core: &Core,
    peer: &Sink,
    watch: &Watch,
    changed: BTreeSet<SessionId>,
) -> Result<(), Gone> {
    for session in changed {
        let uris = watch.of_session(session);
        if uris.is_empty() {
            continue;
        }
        let scene = core.scene(session).await.ok();
        for uri in uris {
            let send = match (&uri, &scene) {
                (Uri::Page(_, page), Some(snapshot)) => {
                    let now = snapshot
                        .scene
                        .page(*page)
                        .map(|p| serde_json::to_string(p).unwrap_or_default())
                        .unwrap_or_default();
                    watch.page_changed(uri.clone(), now)
                }
                _ => true,
            };
            if send {
                peer.updated(uri.to_string()).await?;
            }
        }
    }
    Ok(())
}
