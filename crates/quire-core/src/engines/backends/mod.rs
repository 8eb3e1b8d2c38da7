//! Models on inference servers (spec 17): a `[backends.NAME]` table names
//! one model on a server that speaks the Open Inference Protocol (KServe
//! v2 REST: Triton, KServe, Seldon MLServer, OpenVINO Model Server), and
//! a page engine's model key names the backend (`{ backend = "NAME" }`)
//! instead of a file.
//!
//! Only tensors travel: the engines keep their own pre- and
//! post-processing (`quire-ppocr`'s, the same as for a model file run
//! here), and [`Remote`] hands them a model whose `infer` is a request to
//! the server ([`protocol`]). Before a job's first page the backends it
//! uses are asked whether they are ready and what their model takes and
//! gives; a model that does not fit what the engine needs ([`needs`])
//! fails the job before it changes anything.
//!
//! [`Backends`] is the process's: each backend's gate (at most
//! `max_in_flight` requests outstanding, across every job) and its
//! counters for `/metrics`. Translation providers keep their gates there
//! too.

pub mod needs;
pub mod protocol;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::settings::ApiKey;

pub use needs::Need;
pub use protocol::Client;

/// One model on one inference server (`[backends.NAME]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    /// The server's base; `/v2/…` is added.
    pub url: String,
    /// The model's name on the server.
    pub model: String,
    /// Empty: the server's default version.
    pub version: String,
    /// One request's limit.
    pub timeout_secs: u64,
    /// Requests at once to this backend, per process.
    pub max_in_flight: usize,
    /// Tries after the first for a busy server, a gateway error, a
    /// refused or reset connection or a timeout.
    pub max_retries: u32,
    /// A recogniser's characters, one a line.
    pub dictionary: Option<PathBuf>,
    pub api_key: ApiKey,
}

/// The upper bounds of the request-time histogram, in seconds: 5 ms to
/// about 41 s, doubling.
pub const SECONDS_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96,
];

/// One backend's counters since the process started.
#[derive(Debug, Default)]
pub struct Stats {
    /// Answers by status (`200`, `503`), and `error` for no answer.
    requests: Mutex<BTreeMap<String, u64>>,
    /// Requests by the first bucket their time fits; the last counts the
    /// rest.
    buckets: [AtomicU64; SECONDS_BUCKETS.len() + 1],
    micros: AtomicU64,
    retries: AtomicU64,
    in_flight: AtomicI64,
    /// 1 ready, 0 not, -1 never asked.
    ready: AtomicI64,
}

impl Stats {
    fn new() -> Stats {
        let stats = Stats::default();
        stats.ready.store(-1, Ordering::Relaxed);
        stats
    }

    pub(crate) fn answered(&self, status: &str, seconds: f64) {
        *self
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(status.to_owned())
            .or_default() += 1;
        let bucket = SECONDS_BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(SECONDS_BUCKETS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.micros
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }

    pub(crate) fn retried(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn in_flight(&self, by: i64) {
        self.in_flight.fetch_add(by, Ordering::Relaxed);
    }

    pub(crate) fn ready(&self, ready: bool) {
        self.ready.store(i64::from(ready), Ordering::Relaxed);
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            requests: self
                .requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
            buckets: self
                .buckets
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
            seconds: self.micros.load(Ordering::Relaxed) as f64 / 1e6,
            retries: self.retries.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            ready: match self.ready.load(Ordering::Relaxed) {
                -1 => None,
                v => Some(v == 1),
            },
        }
    }
}

/// What `/metrics` shows of one backend.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub requests: Vec<(String, u64)>,
    /// Requests per bucket of [`SECONDS_BUCKETS`] (not cumulative), then
    /// the ones slower than the last.
    pub buckets: Vec<u64>,
    /// The requests' time together.
    pub seconds: f64,
    pub retries: u64,
    pub in_flight: i64,
    /// From the last check; `None` before the first.
    pub ready: Option<bool>,
}

/// The process's backends and providers: gates and counters, by name.
#[derive(Debug, Default)]
pub struct Backends {
    pub(crate) gates: super::retry::Gates,
    stats: Mutex<BTreeMap<String, Arc<Stats>>>,
    http: OnceLock<reqwest::Client>,
}

impl Backends {
    fn stats_of(&self, name: &str) -> Arc<Stats> {
        self.stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(Stats::new()))
            .clone()
    }

    /// A client of backend `name`, sharing the process's gate and
    /// counters for it.
    pub fn client(&self, name: &str, backend: &Backend) -> Client {
        let http = self
            .http
            .get_or_init(|| {
                crate::install_tls_provider();
                reqwest::Client::new()
            })
            .clone();
        Client {
            name: name.to_owned(),
            backend: backend.clone(),
            http,
            gate: self
                .gates
                .get(&format!("backend/{name}"), backend.max_in_flight),
            stats: self.stats_of(name),
        }
    }

    /// Each backend's counters, by name, for those asked since the
    /// process started.
    pub fn snapshot(&self) -> Vec<(String, Snapshot)> {
        self.stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(name, stats)| (name.clone(), stats.snapshot()))
            .collect()
    }

    /// Asks each of `backends` whether it is ready and whether its model
    /// is `what` needs (`quire models list`, a server's start): `Ok` with
    /// a note (`ready`, the dictionary's size), or rule 6's line.
    pub async fn check(
        &self,
        name: &str,
        backend: &Backend,
        need: Option<Need>,
    ) -> Result<String, String> {
        let client = self.client(name, backend);
        let fit = client.fit(need).await?;
        Ok(match fit.dictionary {
            Some(chars) => format!("ready ({} characters)", chars.lines().count()),
            None => "ready".to_owned(),
        })
    }
}

pub mod remote;
pub use remote::Remote;

/// What a backend named by a model key of `role` must serve; `None`
/// for a role no backend serves yet (a box detector, an inpainter).
pub fn need_of(role: super::settings::ModelRole) -> Option<Need> {
    use super::settings::ModelRole;
    match role {
        ModelRole::Detector => Some(Need::Detector),
        ModelRole::Recognizer => Some(Need::Recognizer),
        _ => None,
    }
}

impl crate::Core {
    /// The process's backends: their gates and counters (`/metrics`).
    pub fn backends(&self) -> &Backends {
        &self.inner.backends
    }

    /// Asks every configured backend whether it is ready and serves what
    /// the first model key naming it needs: each backend's name and
    /// `Ok` (a note) or what is wrong. A server logs the problems at
    /// start and starts anyway (spec 17, rule 7).
    pub async fn check_backends(&self) -> Vec<(String, Result<String, String>)> {
        let config = self.config();
        let mut needs: BTreeMap<String, Option<Need>> = BTreeMap::new();
        for (_, model) in config.settings.models() {
            if let super::settings::ModelRef::Backend(name) = model.source {
                needs.entry(name).or_insert(need_of(model.role));
            }
        }
        let mut out = Vec::new();
        for (name, backend) in &config.backends {
            let need = needs.get(name.as_str()).copied().flatten();
            out.push((
                name.clone(),
                self.backends().check(name, backend, need).await,
            ));
        }
        out
    }
}
