//! The rules every remote call of an engine keeps (spec 17, rules 9 and
//! 13): which failures are tried again, how long to wait before the next
//! try, and how many calls to one server may be outstanding at once.
//!
//! A translation provider (`llm-translate`) and a model backend (`detect`,
//! `ocr` on an inference server) each have a `Gate` per process, found
//! by name in the process's `Gates`: the limit holds across every job that uses the
//! server, as the server sees them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The first wait; each retry waits twice the one before.
const BACKOFF_START: Duration = Duration::from_millis(500);
/// The longest wait, the backoff's and a `Retry-After`'s.
const WAIT_MAX: Duration = Duration::from_secs(30);

/// Whether an answer with `status` is worth asking again: the server is
/// busy (429) or a gateway before it is (502, 503, 504). Any other error
/// is the request's, and would fail again.
pub(crate) fn retryable(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}

/// How long to wait before retry number `attempt` (0 for the first):
/// 0.5 s doubling, up to 30 s, each spread over 75-125 % so that clients
/// turned away together do not come back together; a `Retry-After` the
/// server sent (whole seconds) instead, up to 30 s.
pub(crate) fn wait(attempt: u32, retry_after: Option<&reqwest::header::HeaderValue>) -> Duration {
    if let Some(seconds) = retry_after
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return Duration::from_secs(seconds).min(WAIT_MAX);
    }
    let base = BACKOFF_START
        .saturating_mul(2u32.saturating_pow(attempt))
        .min(WAIT_MAX);
    base.mul_f64(0.75 + 0.5 * jitter())
}

/// A number in 0..1 that differs from call to call (not for secrets).
fn jitter() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // A multiplicative hash spreads the clock's low bits over 0..1.
    f64::from(nanos.wrapping_mul(2_654_435_761) >> 8) / f64::from(1u32 << 24)
}

/// How many calls to one server may be outstanding; a call holds a permit
/// while it runs (its waits between retries included: a server that
/// turned it away is not sent another in its place).
#[derive(Debug)]
pub(crate) struct Gate {
    pub limit: usize,
    pub permits: Arc<tokio::sync::Semaphore>,
}

/// The process's gates, by server (a provider's or a backend's name).
#[derive(Debug, Default)]
pub(crate) struct Gates(Mutex<BTreeMap<String, Arc<Gate>>>);

impl Gates {
    /// The gate of `name`; made with `limit` permits when there is none,
    /// or when the configuration changed the limit (calls that hold the
    /// old one finish under it).
    pub(crate) fn get(&self, name: &str, limit: usize) -> Arc<Gate> {
        let mut gates = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match gates.get(name) {
            Some(gate) if gate.limit == limit => gate.clone(),
            _ => {
                let gate = Arc::new(Gate {
                    limit,
                    permits: Arc::new(tokio::sync::Semaphore::new(limit.max(1))),
                });
                gates.insert(name.to_owned(), gate.clone());
                gate
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_with_jitter_and_honour_retry_after_up_to_30_s() {
        for attempt in 0..4 {
            let base = 0.5 * f64::from(1u32 << attempt);
            let w = wait(attempt, None).as_secs_f64();
            assert!((0.75 * base..=1.25 * base).contains(&w), "{attempt}: {w}");
        }
        assert!(wait(20, None) <= Duration::from_secs_f64(37.5));
        let after = reqwest::header::HeaderValue::from_static("7");
        assert_eq!(wait(0, Some(&after)), Duration::from_secs(7));
        let after = reqwest::header::HeaderValue::from_static("3600");
        assert_eq!(wait(0, Some(&after)), WAIT_MAX);
    }

    #[test]
    fn only_busy_servers_and_gateways_are_asked_again() {
        for status in [429, 502, 503, 504] {
            assert!(retryable(status));
        }
        for status in [400, 401, 404, 413, 422, 500, 501] {
            assert!(!retryable(status), "{status}");
        }
    }

    #[test]
    fn a_gate_is_shared_by_name_and_remade_when_its_limit_changes() {
        let gates = Gates::default();
        let a = gates.get("ocr", 2);
        assert!(Arc::ptr_eq(&a, &gates.get("ocr", 2)));
        assert_eq!(a.permits.available_permits(), 2);
        let b = gates.get("ocr", 5);
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(b.permits.available_permits(), 5);
    }
}
