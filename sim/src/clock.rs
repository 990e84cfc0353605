//! Time in a simulated run: the run's timeline and the Redis servers' wall clocks.
//!
//! turmoil advances every host by one tick per step. tokio's timers have a resolution of
//! 1 ms, so a tick shorter than 1 ms is not honoured (tokio's clocks still move 1 ms per tick
//! while turmoil counts the shorter tick): the simulation therefore runs on a **1 ms tick**,
//! and every time a caller or server sees is a whole millisecond.
//!
//! - [`Timeline`]: the run starts with a set-up phase in which every caller opens its
//!   connections; all callers are released together at [`Timeline::release`]. Times in the
//!   event log, in fault specifications and in the safeguard machines count from the release.
//! - [`ClientCpu`]: the one client CPU all callers share (as real mode's single thread): each
//!   command costs CPU time in microseconds, commands queue for the CPU in the order the
//!   callers issue them, and a command leaves in the tick in which its CPU time ends.
//! - [`ServerClock`]: a server's wall clock, `epoch + simulated time + jumps`. Redis expires
//!   keys by its wall clock, so a jump forward expires leases at once. Callers measure time
//!   with a monotonic clock (Go's `time.After`, context deadlines), so they have no wall
//!   clock here.

use std::time::Duration;

/// The simulation's wall-clock start: 2024-01-01T00:00:00Z. Fixed, so that runs never depend
/// on the real time.
pub const EPOCH_UNIX_SECS: u64 = 1_704_067_200;

/// The tick: one simulation step.
pub const TICK: Duration = Duration::from_millis(1);

/// The simulation's wall-clock start as a `SystemTime`.
pub fn epoch() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + Duration::from_secs(EPOCH_UNIX_SECS)
}

/// Where the callers' shared instant zero lies in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// Simulated time (since the simulation started) at which the callers are released.
    pub release: Duration,
}

impl Timeline {
    /// A timeline releasing the callers `setup_ms` after the simulation starts.
    pub fn new(setup_ms: u64) -> Timeline {
        Timeline {
            release: Duration::from_millis(setup_ms),
        }
    }

    /// Microseconds since the release (negative during set-up) at simulated time `sim`.
    pub fn t_us(&self, sim: Duration) -> i64 {
        sim.as_micros() as i64 - self.release.as_micros() as i64
    }

    /// Whole milliseconds since the release (0 during set-up): a caller's clock.
    pub fn caller_ms(&self, sim: Duration) -> u64 {
        sim.saturating_sub(self.release).as_millis() as u64
    }

    /// The simulated time `ms` milliseconds after the release.
    pub fn at_ms(&self, ms: u64) -> Duration {
        self.release + Duration::from_millis(ms)
    }

    /// How much simulated time `duration` of the callers' and servers' clocks takes.
    pub fn raw(&self, duration: Duration) -> Duration {
        duration
    }
}

/// The client CPU the callers share: a model of real mode's single client thread.
///
/// Every command a caller sends (a Redis command or script, an SQL statement) first needs
/// `cost_us` of this CPU (building the request, the client library's encoding and decoding,
/// the scheduler). The CPU does one command at a time: a command issued at `now` starts at
/// `max(now, free_at)` and ends `cost_us` later, which becomes the new `free_at`. Callers that
/// issue commands in the same tick are served in the order the simulation runs their hosts,
/// which is fixed by the run's seed, so the queue is deterministic.
///
/// Time is kept in microseconds, so sub-millisecond costs add up exactly; only the moment a
/// command leaves is rounded, **down** to the tick in which its CPU time ends
/// ([`ClientCpu::issue`] returns the whole ticks to wait). With a 1 ms tick and 150 µs per
/// command, 50 callers that issue a command at once send it over 8 ticks (0–7), 6 or 7 per
/// tick, as real mode's thread does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCpu {
    /// CPU time per command, µs (0: no client CPU model, every command leaves at once).
    cost_us: u64,
    /// When the CPU is next free, µs of simulated time.
    free_at_us: std::cell::Cell<u64>,
}

impl ClientCpu {
    /// A CPU on which each command costs `cost_us`.
    pub fn new(cost_us: u64) -> ClientCpu {
        ClientCpu {
            cost_us,
            free_at_us: std::cell::Cell::new(0),
        }
    }

    /// A command is issued at simulated time `now`: queues it and returns how many whole
    /// ticks (ms) later it leaves.
    pub fn issue(&self, now: Duration) -> u64 {
        if self.cost_us == 0 {
            return 0;
        }
        let now_us = now.as_micros() as u64;
        let done_us = now_us.max(self.free_at_us.get()) + self.cost_us;
        self.free_at_us.set(done_us);
        done_us / 1_000 - now_us / 1_000
    }
}

/// A clock jump: at simulated time `at`, the clock moves by `by_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    /// When (simulated time since the simulation started).
    pub at: Duration,
    /// By how much (positive: forward).
    pub by_ms: i64,
}

/// A server's wall clock: `epoch + simulated time × (100 + drift) / 100 + the jumps that
/// happened so far` (a Redlock node's clock may run fast or slow; the others' drift is 0).
///
/// A pure function of simulated time, so it needs no updating and replays exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerClock {
    jumps: Vec<Jump>,
    drift_percent: i32,
}

impl ServerClock {
    /// A clock that never jumps.
    pub fn new() -> ServerClock {
        ServerClock::default()
    }

    /// Adds a jump.
    pub fn add_jump(&mut self, jump: Jump) {
        self.jumps.push(jump);
        self.jumps.sort_by_key(|jump| jump.at);
    }

    /// Sets the clock's rate error: `percent` fast (negative: slow), −99 to +1000.
    pub fn set_drift(&mut self, percent: i32) {
        assert!(
            (-99..=1_000).contains(&percent),
            "a clock drift of {percent}% is out of range"
        );
        self.drift_percent = percent;
    }

    /// The sum of the jumps that happened by `sim`.
    pub fn offset_ms(&self, sim: Duration) -> i64 {
        self.jumps
            .iter()
            .take_while(|jump| jump.at <= sim)
            .map(|jump| jump.by_ms)
            .sum()
    }

    /// Unix milliseconds on this clock at simulated time `sim`.
    pub fn now_ms(&self, sim: Duration) -> u64 {
        let sim_ms = sim.as_millis() as i64;
        let drifted_ms = sim_ms + sim_ms * i64::from(self.drift_percent) / 100;
        let base = (EPOCH_UNIX_SECS * 1_000) as i64 + drifted_ms;
        (base + self.offset_ms(sim)).max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_counts_from_the_release() {
        let timeline = Timeline::new(20);
        assert_eq!(timeline.t_us(Duration::from_millis(5)), -15_000);
        assert_eq!(timeline.caller_ms(Duration::from_millis(5)), 0);
        assert_eq!(timeline.caller_ms(Duration::from_millis(270)), 250);
        assert_eq!(timeline.at_ms(250), Duration::from_millis(270));
    }

    #[test]
    fn the_client_cpu_queues_commands_and_rounds_down_to_the_tick() {
        let cpu = ClientCpu::new(150);
        let t0 = Duration::from_millis(10);
        // 50 commands at once leave over ticks 0..=7: six in the first (0.90 ms), then the
        // 7th ends at 1.05 ms.
        let waits: Vec<u64> = (0..50).map(|_| cpu.issue(t0)).collect();
        assert_eq!(&waits[..7], &[0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(waits[49], 7);
        assert!(waits.windows(2).all(|pair| pair[0] <= pair[1]));
        // Idle again later: a lone command costs nothing visible.
        assert_eq!(cpu.issue(Duration::from_millis(100)), 0);
        // Without a model nothing waits.
        let none = ClientCpu::new(0);
        assert!((0..50).all(|_| none.issue(t0) == 0));
        // Sub-tick costs add up exactly across ticks: 4 × 300 µs from 0.
        let cpu = ClientCpu::new(300);
        let waits: Vec<u64> = (0..4).map(|_| cpu.issue(Duration::ZERO)).collect();
        assert_eq!(waits, vec![0, 0, 0, 1]);
    }

    #[test]
    fn jumps_apply_from_their_instant_on() {
        let mut clock = ServerClock::new();
        clock.add_jump(Jump {
            at: Duration::from_millis(10),
            by_ms: 5_000,
        });
        let base = EPOCH_UNIX_SECS * 1_000;
        assert_eq!(clock.now_ms(Duration::from_millis(9)), base + 9);
        assert_eq!(clock.now_ms(Duration::from_millis(10)), base + 5_010);
    }

    #[test]
    fn a_drifting_clock_runs_at_its_rate() {
        let mut fast = ServerClock::new();
        fast.set_drift(50);
        let base = EPOCH_UNIX_SECS * 1_000;
        assert_eq!(fast.now_ms(Duration::from_millis(100)), base + 150);
        let mut slow = ServerClock::new();
        slow.set_drift(-10);
        assert_eq!(slow.now_ms(Duration::from_millis(100)), base + 90);
    }
}
