//! `GET /metrics`: what an operator's Prometheus scrapes, in the
//! OpenMetrics text format (`prometheus-client`). Requests are counted by
//! the access log as they are answered; scene changes, jobs and engine
//! pages from the core's event stream (a follower that falls behind the
//! stream's buffer misses what it skipped); open sessions, history bytes
//! and event-stream clients are read at the scrape.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::AppState;
use quire_core::Core;
use quire_core::events::Event;

type Labels = Vec<(&'static str, String)>;

/// The process's counters, shared by the access log, the event follower
/// and the scrape.
#[derive(Debug)]
pub struct Metrics {
    requests: Family<Labels, Counter>,
    duration: Histogram,
    scene_changes: Counter,
    jobs: Family<Labels, Counter>,
    pages: Family<Labels, Counter>,
    /// Event-stream (SSE) clients connected now.
    pub sse_clients: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: Family::default(),
            // 0.1 ms to ~3.3 s, doubling.
            duration: Histogram::new(exponential_buckets(0.0001, 2.0, 16)),
            scene_changes: Counter::default(),
            jobs: Family::default(),
            pages: Family::default(),
            sse_clients: Gauge::default(),
        }
    }
}

impl Metrics {
    /// One answered request (its route template, never its path's ids).
    pub fn request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let labels = vec![
            ("method", method.to_owned()),
            ("route", route.to_owned()),
            ("status", status.to_string()),
        ];
        self.requests.get_or_create(&labels).inc();
        self.duration.observe(seconds);
    }

    /// Follows the core's events until the server stops: scene changes,
    /// finished jobs by engine and status, pages each engine processed.
    pub fn follow(self: Arc<Self>, core: &Core, mut stop: tokio::sync::watch::Receiver<bool>) {
        let mut events = core.subscribe(None);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            // A job's steps, and the pages each step has reported.
            let mut steps: HashMap<_, Vec<String>> = HashMap::new();
            let mut done: HashMap<(_, usize), usize> = HashMap::new();
            loop {
                let envelope = tokio::select! {
                    next = events.next() => next,
                    _ = stop.wait_for(|stop| *stop) => None,
                };
                let Some(envelope) = envelope else { return };
                match &envelope.event {
                    Event::SceneAdvanced { .. } => {
                        self.scene_changes.inc();
                    }
                    Event::JobStarted { id, steps: s, .. } => {
                        steps.insert(*id, s.clone());
                    }
                    Event::JobProgress {
                        job_id,
                        step,
                        step_index,
                        page,
                        ..
                    } => {
                        let seen = done.entry((*job_id, *step_index)).or_default();
                        if *page > *seen {
                            let labels = vec![("engine", step.clone())];
                            self.pages
                                .get_or_create(&labels)
                                .inc_by((*page - *seen) as u64);
                            *seen = *page;
                        }
                    }
                    Event::JobFinished { id, status, .. } => {
                        done.retain(|(job, _), _| job != id);
                        let status = serde_json::to_value(status)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default();
                        for engine in steps.remove(id).unwrap_or_default() {
                            let labels = vec![("engine", engine), ("status", status.clone())];
                            self.jobs.get_or_create(&labels).inc();
                        }
                    }
                    _ => {}
                }
            }
        });
    }
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let m = &state.metrics;
    let mut registry = Registry::with_prefix("quire");
    registry.register(
        "http_requests",
        "HTTP requests answered, by method, route and status",
        m.requests.clone(),
    );
    registry.register(
        "http_request_duration_seconds",
        "Time to answer an HTTP request",
        m.duration.clone(),
    );
    registry.register(
        "scene_changes",
        "Durable changes applied to projects (ops, undos and redos)",
        m.scene_changes.clone(),
    );
    registry.register(
        "jobs",
        "Pipeline jobs finished, by engine and status",
        m.jobs.clone(),
    );
    registry.register(
        "engine_pages",
        "Pages processed, by engine (its rate is pages per second)",
        m.pages.clone(),
    );
    registry.register(
        "sse_clients",
        "Event-stream clients connected",
        m.sse_clients.clone(),
    );
    let sessions = Gauge::<i64>::default();
    sessions.set(state.core.sessions().len() as i64);
    registry.register("sessions_open", "Projects open", sessions);
    let history = Gauge::<i64>::default();
    history.set(i64::try_from(state.core.history_bytes().await).unwrap_or(i64::MAX));
    registry.register(
        "history_bytes",
        "Bytes the open projects' undo and redo stacks hold",
        history,
    );
    let mut text = String::new();
    if encode(&mut text, &registry).is_err() {
        return super::error::ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the metrics could not be written",
        )
        .into_response();
    }
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}
