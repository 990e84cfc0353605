//! A lease with a watchdog (tutorial step 3).
//!
//! **Guards against:** work that outlives the TTL. While the work runs, the lease is refreshed
//! every TTL/3 with a token-checked `PEXPIRE`, each refresh with its own TTL/3 deadline. When a
//! refresh fails or times out the watchdog stops and the work sees the loss: it does not write
//! (the tutorial's cancelled context), and reports [`Outcome::LostLock`](super::Outcome).
//!
//! **Relies on:** the caller running. A pause freezes the watchdog with everything else; a
//! pause longer than TTL − TTL/3 lets the lease expire between two refreshes, and the paused
//! caller may then write on a lease it no longer holds. It narrows the window, it does not
//! close it.

/// The watchdog's timing and state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Watchdog {
    /// Refresh every this long (TTL/3).
    pub every_ms: u64,
    /// Each refresh's own deadline (TTL/3).
    pub timeout_ms: u64,
    /// The lease duration each refresh sets.
    pub ttl_ms: u64,
    /// When the next refresh is due; set when the watchdog starts.
    pub next_refresh_ms: Option<u64>,
    /// A refresh failed: the lock is lost and the watchdog has stopped.
    pub lost: bool,
}

impl Watchdog {
    /// A watchdog for a lease of `ttl_ms` (at least 3 ms, so that TTL/3 is at least 1 ms).
    pub fn new(ttl_ms: u64) -> Watchdog {
        assert!(ttl_ms >= 3, "a watchdog needs a TTL of at least 3ms");
        Watchdog {
            every_ms: ttl_ms / 3,
            timeout_ms: ttl_ms / 3,
            ttl_ms,
            next_refresh_ms: None,
            lost: false,
        }
    }

    /// Starts ticking at `now_ms` (just after the lock was acquired).
    pub fn start(&mut self, now_ms: u64) {
        self.next_refresh_ms = Some(now_ms + self.every_ms);
    }

    /// True when a refresh is due at `now_ms`.
    pub fn due(&self, now_ms: u64) -> bool {
        !self.lost && self.next_refresh_ms.is_some_and(|at_ms| at_ms <= now_ms)
    }

    /// When the watchdog next wants to run, if it is running.
    pub fn wake_at(&self) -> Option<u64> {
        if self.lost {
            None
        } else {
            self.next_refresh_ms
        }
    }

    /// A refresh succeeded at `now_ms`: schedule the next tick (a ticker that fell behind
    /// fires at once, as Go's does, but never more than once).
    pub fn refreshed(&mut self, now_ms: u64) {
        let next_ms = self
            .next_refresh_ms
            .map_or(now_ms, |at_ms| at_ms + self.every_ms);
        self.next_refresh_ms = Some(next_ms.max(now_ms));
    }

    /// A refresh failed or timed out: the lock is lost.
    pub fn lose(&mut self) {
        self.lost = true;
    }
}
