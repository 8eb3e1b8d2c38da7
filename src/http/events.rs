//! `GET /api/v1/events`: the event bus as server-sent events.
//!
//! Each SSE event carries `id: <seq>`, `event: <variant>` and the event as
//! JSON. A fresh connection starts with a `Snapshot`; `Last-Event-ID: N`
//! resumes after event N while it is still in the ring, else starts with a
//! `Snapshot`. A client that stops reading falls behind on its own and is
//! resynchronised with a `Snapshot` when it reads again; nobody else waits
//! for it. Streams end when the server shuts down.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;

use super::AppState;
use super::api::{Body, Doc};

pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(super) const EVENTS: Doc = Doc {
    id: "events",
    tag: "events",
    summary: "Server-sent events: id = seq; a Snapshot first, or the events after Last-Event-ID when still buffered",
    request: Body::None,
    response: Body::Events,
    errors: &[],
    queries: &[],
};

pub async fn events(
    State(state): State<AppState>,
    viewer: crate::http::extract::Viewer,
    headers: HeaderMap,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    // Sessions' paths go to an admin only.
    let paths = viewer
        .0
        .as_ref()
        .is_some_and(crate::access::Caller::sees_paths);
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let subscription = state.core.subscribe(last);
    let shutdown = state.shutdown.clone();
    let client = Connected::new(state.metrics.clone());
    let stream = futures_util::stream::unfold(
        (subscription, shutdown, client),
        move |(mut sub, mut shutdown, client)| async move {
            let next = tokio::select! {
                next = sub.next() => next,
                _ = shutdown.wait_for(|stop| *stop) => None,
            };
            let envelope = next?;
            let data = if paths {
                serde_json::to_string(&*envelope)
            } else {
                serde_json::to_value(&*envelope)
                    .map(|v| crate::access::as_seen_by(None, v).to_string())
            }
            .unwrap_or_else(|_| "{}".to_owned());
            let event = SseEvent::default()
                .id(envelope.seq.to_string())
                .event(envelope.event.name())
                .data(data);
            Some((Ok(event), (sub, shutdown, client)))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}

/// One event-stream client, counted in `/metrics` while it is connected.
struct Connected(Arc<super::metrics::Metrics>);

impl Connected {
    fn new(metrics: Arc<super::metrics::Metrics>) -> Connected {
        metrics.sse_clients.inc();
        Connected(metrics)
    }
}

impl Drop for Connected {
    fn drop(&mut self) {
        self.0.sse_clients.dec();
    }
}
