//! `GET /metrics`: what an operator's Prometheus scrapes, in the
//! OpenMetrics text format (`prometheus-client`). Requests are counted by
//! the access log as they are answered; scene changes, jobs and engine
//! pages from the core's event stream (a follower that falls behind the
//! stream's buffer misses what it skipped); open sessions, history bytes,
//! event-stream clients and the model backends' counters (spec 17, rule
//! 12) are read at the scrape.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::AppState;
use quire_core::Core;
use quire_core::engines::backends::{SECONDS_BUCKETS, Snapshot};
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
    backends(&mut registry, &state.core.backends().snapshot());
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

/// The model backends' counters, by backend: requests by status, their
/// time, retries, requests in flight and readiness from the last check.
fn backends(registry: &mut Registry, backends: &[(String, Snapshot)]) {
    let requests: Family<Labels, Counter> = Family::default();
    let retries: Family<Labels, Counter> = Family::default();
    let in_flight: Family<Labels, Gauge> = Family::default();
    let ready: Family<Labels, Gauge> = Family::default();
    for (name, s) in backends {
        let backend = || vec![("backend", name.clone())];
        for (status, n) in &s.requests {
            let labels = vec![("backend", name.clone()), ("status", status.clone())];
            requests.get_or_create(&labels).inc_by(*n);
        }
        retries.get_or_create(&backend()).inc_by(s.retries);
        in_flight.get_or_create(&backend()).set(s.in_flight);
        if let Some(r) = s.ready {
            ready.get_or_create(&backend()).set(i64::from(r));
        }
    }
    registry.register(
        "backend_requests",
        "Requests to model backends, by backend and status (`error`: no answer)",
        requests,
    );
    registry.register(
        "backend_request_seconds",
        "Time a model backend took to answer a request",
        Seconds(backends.to_vec()),
    );
    registry.register(
        "backend_retries",
        "Requests to model backends tried again",
        retries,
    );
    registry.register(
        "backend_in_flight",
        "Requests to model backends outstanding now",
        in_flight,
    );
    registry.register(
        "backend_ready",
        "Whether a model backend was ready at its last check (1) or not (0)",
        ready,
    );
}

/// The backends' request-time histograms, as the core counted them.
#[derive(Debug)]
struct Seconds(Vec<(String, Snapshot)>);

impl EncodeMetric for Seconds {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (name, s) in &self.0 {
            let labels = vec![("backend", name.clone())];
            let buckets: Vec<(f64, u64)> = SECONDS_BUCKETS
                .iter()
                .copied()
                .chain([f64::INFINITY])
                .zip(s.buckets.iter().copied())
                .collect();
            let count = buckets.iter().map(|(_, n)| n).sum();
            encoder
                .encode_family(&labels)?
                .encode_histogram::<NoLabelSet>(s.seconds, count, &buckets, None)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}
