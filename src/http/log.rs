//! The access log: a line per request with its method, route, status,
//! user and duration, at `info` for a change and `debug` for a read (a
//! GET, or a reply marked [`OnlyRead`]: an MCP call that only reads; target
//! `quire::access`). It runs the guard's checks inside it (it calls
//! [`super::guard::guard`]), so a refusal is logged too. Never a token, a
//! query string or a body: the route is the path template
//! (`/api/v1/sessions/{sessionId}/scene.json`) when the request matched
//! one, else `unmatched`, so that neither this log nor `/metrics` grows
//! with what a client makes up.
//!
//! Refused requests (401, 403, 404, 405, 429) cost a flood nothing in
//! the log ([`Refusals`]): the first few from an address in a minute are
//! written as usual, the rest counted and written as one summary line for
//! that address at the minute's end.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;

use super::AppState;
use crate::access::{Caller, OnlyRead};

/// The route label of a request that matched no route.
pub const UNMATCHED: &str = "unmatched";

/// A failed authentication, put on its refusal by the guard for this log
/// to write (or count): the line fail2ban and an operator read.
#[derive(Debug, Clone)]
pub struct AuthFailed {
    /// What the line says after `authentication failed from ADDRESS: `.
    pub detail: String,
}

/// A request refused for its `Origin`, put on the refusal by the guard:
/// logged at warn with the origin, since a foreign page's user never sees
/// the answer's body.
#[derive(Debug, Clone)]
pub struct RefusedOrigin {
    pub origin: String,
    /// The `Host` it was sent to.
    pub host: String,
}

pub async fn access_log(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let client = state.guard.client(peer, request.headers());
    let response = super::guard::guard(&state, request, next).await;
    let status = response.status().as_u16();
    let user = response
        .extensions()
        .get::<Caller>()
        .and_then(Caller::name)
        .unwrap_or("-");
    let route = matched.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    let method = method_label(&method);
    let seconds = started.elapsed().as_secs_f64();
    state.metrics.request(method, route, status, seconds);
    let failed = response.extensions().get::<AuthFailed>();
    if is_refusal(status)
        && !state
            .refusals
            .admit(client, status, failed.is_some(), Instant::now())
    {
        return response;
    }
    if let Some(refused) = response.extensions().get::<RefusedOrigin>() {
        let from = client.map_or_else(|| "an unknown address".to_owned(), |a| a.to_string());
        tracing::warn!(
            target: "quire::access",
            "refused Origin `{}` from {from} (sent to Host `{}`): it is not this server's own \
             origin; add it to server.allowed_origins if it is a page of yours",
            refused.origin,
            refused.host
        );
    }
    if let Some(failed) = failed {
        let from = client.map_or_else(|| "an unknown address".to_owned(), |a| a.to_string());
        tracing::warn!(target: "quire::access", "authentication failed from {from}: {}", failed.detail);
    }
    // Tenths of a millisecond are all a reader needs.
    let ms = (seconds * 10_000.0).round() / 10.0;
    let read = matches!(method, "GET" | "HEAD" | "OPTIONS")
        || response.extensions().get::<OnlyRead>().is_some();
    if read && status < 400 {
        tracing::debug!(target: "quire::access", %method, %route, status, %user, ms, "request");
    } else {
        tracing::info!(target: "quire::access", %method, %route, status, %user, ms, "request");
    }
    response
}

/// The methods `/metrics` and the log name; any other is `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Statuses that say "not for you" or "no such thing": what a scanner, a
/// guesser or a flood gets, summarised past the first few.
fn is_refusal(status: u16) -> bool {
    matches!(status, 401 | 403 | 404 | 405 | 429)
}

/// Refusals written one by one from an address per interval (and as many
/// wrong tokens besides); the rest are counted into its summary.
pub const WRITTEN_PER_INTERVAL: u32 = 10;
/// How often held refusals are summarised.
pub const INTERVAL: Duration = Duration::from_secs(60);
/// Addresses tallied one by one at most; refusals from further addresses
/// share one tally (so the tally itself is bounded).
const MAX_ADDRESSES: usize = 4_096;

/// The refused requests of each client address in the current interval:
/// how many were written, and what was held back (by status). The mutex is
/// never held across an `.await` or a log write.
#[derive(Debug, Default)]
pub struct Refusals {
    tallies: Mutex<HashMap<Option<IpAddr>, Tally>>,
}

#[derive(Debug)]
struct Tally {
    since: Instant,
    written: u32,
    failures_written: u32,
    held: BTreeMap<u16, u64>,
    /// Wrong tokens among the held (each an `authentication failed`).
    failures_held: u64,
}

/// One address's held refusals over an interval, as its summary says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// `None`: an unknown address, or the shared tally past
    /// `MAX_ADDRESSES` ("other addresses").
    pub client: Option<IpAddr>,
    pub over: Duration,
    pub held: BTreeMap<u16, u64>,
    pub failures_held: u64,
}

impl Summary {
    pub fn total(&self) -> u64 {
        self.held.values().sum()
    }

    fn from(&self) -> String {
        self.client
            .map_or_else(|| "other addresses".to_owned(), |a| a.to_string())
    }

    /// Writes the summary to the access log: one line with the counts
    /// by status, and, when wrong tokens were among them, one
    /// `authentication failed from …` line (what fail2ban's filter reads).
    pub fn write(&self) {
        let by_status: Vec<String> = self
            .held
            .iter()
            .map(|(status, n)| format!("{status}: {n}"))
            .collect();
        tracing::info!(
            target: "quire::access",
            "refused {} requests from {} in the last {} s ({}), not logged one by one",
            self.total(),
            self.from(),
            self.over.as_secs().max(1),
            by_status.join(", ")
        );
        if self.failures_held > 0 {
            tracing::warn!(
                target: "quire::access",
                "authentication failed from {}: {} more wrong tokens in the last {} s",
                self.from(),
                self.failures_held,
                self.over.as_secs().max(1)
            );
        }
    }
}

impl Refusals {
    fn tallies(&self) -> std::sync::MutexGuard<'_, HashMap<Option<IpAddr>, Tally>> {
        self.tallies.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A refused request from `client` at `now` (`failure`: a wrong
    /// token): whether to write its lines (`false`: it was counted for
    /// the summary instead). An interval that has ended is summarised
    /// first.
    pub fn admit(&self, client: Option<IpAddr>, status: u16, failure: bool, now: Instant) -> bool {
        let (write, ended) = {
            let mut tallies = self.tallies();
            let key = if tallies.len() >= MAX_ADDRESSES && !tallies.contains_key(&client) {
                None
            } else {
                client
            };
            let tally = tallies.entry(key).or_insert_with(|| Tally::new(now));
            let ended = if now.duration_since(tally.since) >= INTERVAL {
                let old = std::mem::replace(tally, Tally::new(now));
                old.summary(key, now)
            } else {
                None
            };
            // Wrong tokens have their own count, so that other refusals
            // (a browser's first look, a scanner's 404s) never use up the
            // lines that fail2ban reads.
            let written = if failure {
                &mut tally.failures_written
            } else {
                &mut tally.written
            };
            let write = *written < WRITTEN_PER_INTERVAL;
            if write {
                *written += 1;
            } else {
                *tally.held.entry(status).or_default() += 1;
                tally.failures_held += u64::from(failure);
            }
            (write, ended)
        };
        if let Some(summary) = ended {
            summary.write();
        }
        write
    }

    /// Takes the summaries of the intervals that have ended by `now` (all
    /// of them with `all`: at shutdown), forgetting addresses that were
    /// quiet through a whole interval.
    pub fn take_due(&self, now: Instant, all: bool) -> Vec<Summary> {
        let mut tallies = self.tallies();
        let mut due = Vec::new();
        tallies.retain(|client, tally| {
            if !all && now.duration_since(tally.since) < INTERVAL {
                return true;
            }
            let quiet = tally.held.is_empty();
            if let Some(summary) = tally.summary(*client, now) {
                due.push(summary);
            }
            *tally = Tally::new(now);
            // Nothing held this interval: the address is forgotten (its
            // next refusal starts a new interval).
            !quiet && !all
        });
        due
    }

    /// Writes what is due (see [`Refusals::take_due`]).
    pub fn flush(&self, now: Instant, all: bool) {
        for summary in self.take_due(now, all) {
            summary.write();
        }
    }
}

impl Tally {
    fn new(now: Instant) -> Tally {
        Tally {
            since: now,
            written: 0,
            failures_written: 0,
            held: BTreeMap::new(),
            failures_held: 0,
        }
    }

    fn summary(&self, client: Option<IpAddr>, now: Instant) -> Option<Summary> {
        (!self.held.is_empty()).then(|| Summary {
            client,
            over: now.duration_since(self.since),
            held: self.held.clone(),
            failures_held: self.failures_held,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_first_few_an_address_is_summarised_per_interval() {
        let refusals = Refusals::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let start = Instant::now();
        let written = (0..3_000)
            .filter(|i| refusals.admit(Some(a), if i % 2 == 0 { 401 } else { 429 }, true, start))
            .count();
        assert_eq!(written, WRITTEN_PER_INTERVAL as usize);
        // Another address is written on its own count.
        assert!(refusals.admit(Some(b), 404, false, start));
        assert!(
            refusals
                .take_due(start + Duration::from_secs(59), false)
                .is_empty()
        );
        let due = refusals.take_due(start + INTERVAL, false);
        let summary = due
            .iter()
            .find(|s| s.client == Some(a))
            .expect("a's summary");
        assert_eq!(summary.total(), 2_990);
        assert_eq!(summary.held, BTreeMap::from([(401, 1_495), (429, 1_495)]));
        assert_eq!(summary.failures_held, 2_990);
        // b held nothing: no summary, and it is forgotten.
        assert_eq!(due.len(), 1);
        // A new interval writes the first few again.
        assert!(refusals.admit(Some(a), 401, false, start + INTERVAL));
        assert_eq!(refusals.tallies().len(), 1);
    }

    #[test]
    fn an_interval_that_ended_is_summarised_by_the_next_refusal() {
        let refusals = Refusals::default();
        let a: IpAddr = "::1".parse().unwrap();
        let start = Instant::now();
        for _ in 0..20 {
            refusals.admit(Some(a), 404, false, start);
        }
        assert!(refusals.admit(Some(a), 404, false, start + INTERVAL));
        // Summarised already: nothing is due but the new interval's own.
        assert!(refusals.take_due(start + INTERVAL, false).is_empty());
    }

    #[test]
    fn the_tallies_are_bounded_whatever_the_addresses() {
        let refusals = Refusals::default();
        let start = Instant::now();
        for i in 0..(MAX_ADDRESSES as u32 * 2) {
            let address = IpAddr::from(i.to_be_bytes());
            refusals.admit(Some(address), 401, false, start);
        }
        assert!(refusals.tallies().len() <= MAX_ADDRESSES + 1);
        // Past the bound, addresses share one tally: written a few times,
        // then held.
        let shared = refusals.take_due(start, true);
        let other = shared.iter().find(|s| s.client.is_none()).expect("shared");
        assert_eq!(
            other.total(),
            u64::from(MAX_ADDRESSES as u32) - u64::from(WRITTEN_PER_INTERVAL)
        );
        assert!(refusals.tallies().is_empty());
    }
}
