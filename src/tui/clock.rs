//! The TUI's clock: what `update` and sharing call "now". The system clock
//! in use; a test moves it forward (past the recent-input window, say)
//! instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The system clock plus an offset that only ever grows.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    ahead_nanos: Arc<AtomicU64>,
}

impl Clock {
    pub fn now(&self) -> Instant {
        Instant::now() + Duration::from_nanos(self.ahead_nanos.load(Ordering::Relaxed))
    }

    /// Moves this clock (and every clone of it) forward by `by`.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.ahead_nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_every_clone() {
        let clock = Clock::default();
        let other = clock.clone();
        let before = other.now();
        clock.advance(Duration::from_secs(3600));
        assert!(other.now() >= before + Duration::from_secs(3600));
    }
}
