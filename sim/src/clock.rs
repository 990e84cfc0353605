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

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The simulation's wall-clock start: 2024-01-01T00:00:00Z. Fixed, so that runs never depend
/// on the real time.
pub const EPOCH_UNIX_SECS: u64 = 1_704_067_200;

/// The tick: one simulation step as turmoil and tokio count it (their *raw* time). How much
/// of the run's own time one tick stands for is [`Timeline::tick_us`].
pub const TICK: Duration = Duration::from_millis(1);

/// The most run time one tick may stand for, µs: one tick is one raw millisecond, and the
/// run's time never runs slower than raw time.
pub const MAX_TICK_US: u64 = 1_000;

/// Whether one tick may stand for `tick_us` of run time: 1..=[`MAX_TICK_US`] and a divisor
/// of 1,000, so that every whole millisecond of run time is a whole number of ticks.
pub fn valid_tick_us(tick_us: u64) -> bool {
    (1..=MAX_TICK_US).contains(&tick_us) && MAX_TICK_US.is_multiple_of(tick_us)
}

/// The simulation's wall-clock start as a `SystemTime`.
pub fn epoch() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + Duration::from_secs(EPOCH_UNIX_SECS)
}

/// Where the callers' shared instant zero lies in simulated time, and how the run's time
/// maps onto turmoil's.
///
/// Two times meet here. *Raw* time is what turmoil and tokio count: `Sim::elapsed`,
/// `turmoil::sim_elapsed`, tokio's `Instant`s and every `sleep`, one millisecond per tick.
/// *Run* time is what the callers, the servers, the faults and the event log see: one tick
/// stands for [`Timeline::tick_us`] of it. Every conversion between the two goes through
/// this type (`run_us`, `t_us`, `caller_ms` read raw time; `at_ms`, `raw`, `ticks` make
/// it), so a 250 ms pause on a 100 µs tick is 2,500 ticks and nothing else in the
/// simulation knows the scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// Raw simulated time (since the simulation started) at which the callers are released.
    pub release: Duration,
    /// Run time one tick stands for, µs ([`valid_tick_us`]).
    tick_us: u64,
}

impl Timeline {
    /// A timeline on a 1 ms tick releasing the callers `setup_ms` after the simulation
    /// starts.
    pub fn new(setup_ms: u64) -> Timeline {
        Timeline::with_tick(setup_ms, MAX_TICK_US)
    }

    /// A timeline on which one tick stands for `tick_us` of run time, releasing the callers
    /// `setup_ms` (run time) after the simulation starts.
    pub fn with_tick(setup_ms: u64, tick_us: u64) -> Timeline {
        assert!(valid_tick_us(tick_us), "tick of {tick_us}us");
        let unreleased = Timeline {
            release: Duration::ZERO,
            tick_us,
        };
        Timeline {
            release: unreleased.raw(Duration::from_millis(setup_ms)),
            tick_us,
        }
    }

    /// Run time one tick stands for, µs.
    pub fn tick_us(&self) -> u64 {
        self.tick_us
    }

    /// Run time, µs, since the simulation started, at raw time `raw`.
    pub fn run_us(&self, raw: Duration) -> u64 {
        (raw.as_micros() * u128::from(self.tick_us) / 1_000) as u64
    }

    /// Run microseconds since the release (negative during set-up) at raw time `sim`.
    pub fn t_us(&self, sim: Duration) -> i64 {
        self.run_us(sim) as i64 - self.run_us(self.release) as i64
    }

    /// Whole run milliseconds since the release (0 during set-up): a caller's clock.
    pub fn caller_ms(&self, sim: Duration) -> u64 {
        self.run_us(sim.saturating_sub(self.release)) / 1_000
    }

    /// The raw time `ms` run milliseconds after the release.
    pub fn at_ms(&self, ms: u64) -> Duration {
        self.release + self.raw(Duration::from_millis(ms))
    }

    /// How much raw time `duration` of the callers' and servers' clocks takes: whole ticks,
    /// rounded up (a timer never fires early).
    pub fn raw(&self, duration: Duration) -> Duration {
        let ticks = duration.as_micros().div_ceil(u128::from(self.tick_us));
        self.ticks(u64::try_from(ticks).unwrap_or(u64::MAX))
    }

    /// The raw time `ticks` ticks take.
    pub fn ticks(&self, ticks: u64) -> Duration {
        // A tick is one raw millisecond (`TICK`).
        Duration::from_millis(ticks)
    }
}

/// The callers' timers as real mode's tokio fires them.
///
/// tokio's timer wheel counts whole milliseconds from its runtime's start: a timer is due at
/// the first of them at or after its deadline, and the driver, parked in `epoll_wait` with a
/// timeout in whole milliseconds counted from a floored "now", wakes some fraction of a
/// millisecond after that and fires every timer due. So real mode's `sleep(2ms)` ends 2–4 ms
/// later, and timers due at the same millisecond fire together.
///
/// The simulation's callers share one grid, as real mode's callers share one runtime: whole
/// multiples of `granularity_us` of run time since the simulation started. The timers due at
/// one grid point fire together, `lag_us` times a fraction after it that is drawn for that
/// grid point from a ChaCha stream of the run's seed (uniform in `[0, lag_us)`), then rounded
/// up to a tick. `granularity_us` 0 and `lag_us` 0 fire a timer when due (rounded up to a
/// tick); a grid no finer than the tick and no lag are the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerWheel {
    granularity_us: u64,
    lag_us: u64,
    seed: u64,
}

impl TimerWheel {
    /// Timers on a grid of `granularity_us` firing up to `lag_us` after it, the lags drawn
    /// from the run's `seed`.
    pub fn new(granularity_us: u64, lag_us: u64, seed: u64) -> TimerWheel {
        TimerWheel {
            granularity_us,
            lag_us,
            seed,
        }
    }

    /// The raw time (since the simulation started) at which a timer set at raw time `now`
    /// for `duration` of run time fires. Never before it is due.
    pub fn fires(&self, timeline: &Timeline, now: Duration, duration: Duration) -> Duration {
        let deadline = now + timeline.raw(duration);
        if self.granularity_us <= timeline.tick_us() && self.lag_us == 0 {
            return deadline;
        }
        let deadline_us = timeline.run_us(deadline);
        let granularity_us = self.granularity_us.max(1);
        let slot = deadline_us.div_ceil(granularity_us);
        let mut fires_us = slot.saturating_mul(granularity_us);
        if self.lag_us > 0 {
            // One stream per grid point: every timer due there gets the same lag.
            let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ TIMER_STREAM);
            rng.set_stream(slot);
            fires_us = fires_us.saturating_add(rng.random_range(0..self.lag_us));
        }
        timeline.ticks(fires_us.div_ceil(timeline.tick_us()))
    }
}

/// Mixed into the run's seed for the timers' lags, so that their streams are not the callers'.
const TIMER_STREAM: u64 = 0x7469_6d65_7273; // "timers"

/// The client CPU the callers share: a model of real mode's single client thread.
///
/// Every command a caller sends (a Redis command or script, an SQL statement) first needs
/// `cost_us` of this CPU (building the request, the client library's encoding and decoding,
/// the scheduler). The CPU does one command at a time: a command issued at `now` starts at
/// `max(now, free_at)` and ends `cost_us` later, which becomes the new `free_at`. Callers that
/// issue commands in the same tick are served in the order the simulation runs their hosts,
/// which is fixed by the run's seed, so the queue is deterministic.
///
/// Time is kept in microseconds of run time, so sub-tick costs add up exactly; only the
/// moment a command leaves is rounded, **down** to the tick in which its CPU time ends
/// ([`ClientCpu::issue`] returns the whole ticks to wait). With a 1 ms tick and 150 µs per
/// command, 50 callers that issue a command at once send it over 8 ticks (0–7), 6 or 7 per
/// tick, as real mode's thread does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCpu {
    /// CPU time per command, µs (0: no client CPU model, every command leaves at once).
    cost_us: u64,
    /// Run time one tick stands for, µs.
    tick_us: u64,
    /// When the CPU is next free, µs of run time.
    free_at_us: std::cell::Cell<u64>,
}

impl ClientCpu {
    /// A CPU on which each command costs `cost_us`, on ticks of `tick_us`.
    pub fn new(cost_us: u64, tick_us: u64) -> ClientCpu {
        assert!(valid_tick_us(tick_us), "tick of {tick_us}us");
        ClientCpu {
            cost_us,
            tick_us,
            free_at_us: std::cell::Cell::new(0),
        }
    }

    /// A command is issued at run time `now_us` ([`Timeline::run_us`]): queues it and
    /// returns how many whole ticks later it leaves.
    pub fn issue(&self, now_us: u64) -> u64 {
        if self.cost_us == 0 {
            return 0;
        }
        let done_us = now_us.max(self.free_at_us.get()) + self.cost_us;
        self.free_at_us.set(done_us);
        done_us / self.tick_us - now_us / self.tick_us
    }
}

/// A clock jump: at simulated time `at`, the clock moves by `by_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    /// When (raw simulated time since the simulation started).
    pub at: Duration,
    /// By how much (positive: forward).
    pub by_ms: i64,
}

/// A gradual correction of a clock (NTP's slew): from `at` on, the clock gains (or loses, for
/// a negative `offset_ms`) `rate_ppm` µs per second of simulated time until `offset_ms` is
/// applied in full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slew {
    /// When the correction starts (simulated time since the simulation started).
    pub at: Duration,
    /// The whole correction (positive: forward).
    pub offset_ms: i64,
    /// How fast it is applied, parts per million (greater than 0).
    pub rate_ppm: u64,
}

/// A rate error of a clock: from `from` on it runs `rate_ppm` millionths fast (negative: slow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drift {
    /// When the clock starts drifting (simulated time since the simulation started).
    pub from: Duration,
    /// How far off its rate is, parts per million.
    pub rate_ppm: i64,
}

/// A server's wall clock: `epoch + simulated time + jumps + drift + slews`, each counted from
/// its instant on.
///
/// A pure function of simulated time, so it needs no updating and replays exactly. Drift and
/// slews are kept in microseconds of run time and the clock reads whole milliseconds (rounded
/// down).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerClock {
    /// How raw time maps onto run time.
    timeline: Timeline,
    jumps: Vec<Jump>,
    drift: Option<Drift>,
    slews: Vec<Slew>,
}

impl ServerClock {
    /// A clock on `timeline`'s ticks that never jumps.
    pub fn new(timeline: Timeline) -> ServerClock {
        ServerClock {
            timeline,
            jumps: Vec::new(),
            drift: None,
            slews: Vec::new(),
        }
    }

    /// Adds a jump.
    pub fn add_jump(&mut self, jump: Jump) {
        self.jumps.push(jump);
        self.jumps.sort_by_key(|jump| jump.at);
    }

    /// Sets the clock's drift (one per clock: a later one replaces it).
    pub fn set_drift(&mut self, drift: Drift) {
        assert!(
            drift.rate_ppm.unsigned_abs() <= leaselab_model::fault::MAX_CLOCK_RATE_PPM,
            "drift out of bounds (checked by faults::validate)"
        );
        self.drift = Some(drift);
    }

    /// Adds a slew.
    pub fn add_slew(&mut self, slew: Slew) {
        assert!(
            slew.rate_ppm > 0 && slew.rate_ppm <= leaselab_model::fault::MAX_CLOCK_RATE_PPM,
            "slew rate out of bounds (checked by faults::validate)"
        );
        self.slews.push(slew);
    }

    /// How far the clock is off simulated time at `sim`, in microseconds.
    fn offset_us(&self, sim: Duration) -> i64 {
        let jumps_us: i64 = self
            .jumps
            .iter()
            .take_while(|jump| jump.at <= sim)
            .map(|jump| jump.by_ms * 1_000)
            .sum();
        let drift_us = self.drift.map_or(0, |drift| {
            let elapsed_us = i128::from(self.timeline.run_us(sim.saturating_sub(drift.from)));
            (elapsed_us * i128::from(drift.rate_ppm) / 1_000_000) as i64
        });
        let slews_us: i64 = self
            .slews
            .iter()
            .map(|slew| {
                let elapsed_us = i128::from(self.timeline.run_us(sim.saturating_sub(slew.at)));
                let gained_us = elapsed_us * i128::from(slew.rate_ppm) / 1_000_000;
                let whole_us = i128::from(slew.offset_ms.unsigned_abs()) * 1_000;
                (gained_us.min(whole_us) as i64) * slew.offset_ms.signum()
            })
            .sum();
        jumps_us + drift_us + slews_us
    }

    /// How far the clock is off simulated time at `sim`, in whole milliseconds (rounded down).
    pub fn offset_ms(&self, sim: Duration) -> i64 {
        self.offset_us(sim).div_euclid(1_000)
    }

    /// Unix milliseconds on this clock at raw simulated time `sim`.
    pub fn now_ms(&self, sim: Duration) -> u64 {
        self.now_us(sim).div_euclid(1_000).max(0) as u64
    }

    /// Unix microseconds on this clock at raw simulated time `sim`.
    pub fn now_us(&self, sim: Duration) -> i64 {
        let base_us = (EPOCH_UNIX_SECS * 1_000_000 + self.timeline.run_us(sim)) as i64;
        base_us + self.offset_us(sim)
    }

    /// The fastest this clock ever runs beyond simulated time, in parts per million (0 when
    /// it never runs fast): `d` ms on this clock take at least `d × 10⁶ / (10⁶ + this)` ms of
    /// simulated time between jumps.
    pub fn max_fast_ppm(&self) -> u64 {
        let drift = self.drift.map_or(0, |drift| drift.rate_ppm.max(0) as u64);
        let slews: u64 = self
            .slews
            .iter()
            .filter(|slew| slew.offset_ms > 0)
            .map(|slew| slew.rate_ppm)
            .sum();
        drift + slews
    }

    /// The run time it takes this clock to move `clock_us` at the least (never more than the
    /// truth, at least 1 µs for a positive span): what the run may skip while waiting for a
    /// lease to expire.
    pub fn least_run_time_for(&self, clock_us: u64) -> Duration {
        let fast = u128::from(self.max_fast_ppm());
        let run_us = u128::from(clock_us) * 1_000_000 / (1_000_000 + fast);
        let run_us = if clock_us > 0 { run_us.max(1) } else { 0 };
        Duration::from_micros(run_us as u64)
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
        assert_eq!(
            timeline.raw(Duration::from_millis(250)),
            Duration::from_millis(250)
        );
    }

    #[test]
    fn a_finer_tick_scales_every_conversion_through_the_timeline() {
        // One tick (one raw millisecond) stands for 100 µs: set-up of 20 ms is 200 ticks.
        let timeline = Timeline::with_tick(20, 100);
        assert_eq!(timeline.release, Duration::from_millis(200));
        assert_eq!(timeline.at_ms(250), Duration::from_millis(2_700));
        assert_eq!(
            timeline.raw(Duration::from_millis(250)),
            Duration::from_millis(2_500)
        );
        // Sub-tick durations round up to whole ticks.
        assert_eq!(
            timeline.raw(Duration::from_micros(150)),
            Duration::from_millis(2)
        );
        assert_eq!(timeline.raw(Duration::ZERO), Duration::ZERO);
        assert_eq!(timeline.t_us(Duration::from_millis(205)), 500);
        assert_eq!(timeline.t_us(Duration::from_millis(150)), -5_000);
        assert_eq!(timeline.caller_ms(Duration::from_millis(209)), 0);
        assert_eq!(timeline.caller_ms(Duration::from_millis(210)), 1);
        assert_eq!(timeline.caller_ms(Duration::from_millis(2_700)), 250);
        // The servers' wall clocks read run time too.
        let clock = ServerClock::new(timeline);
        assert_eq!(
            clock.now_ms(Duration::from_millis(2_700)),
            EPOCH_UNIX_SECS * 1_000 + 270
        );
        assert!(valid_tick_us(100) && valid_tick_us(1_000) && valid_tick_us(250));
        assert!(!valid_tick_us(0) && !valid_tick_us(300) && !valid_tick_us(2_000));
    }

    #[test]
    fn timers_fire_on_the_grid_never_early() {
        let fine = Timeline::with_tick(8, 100);
        let ms = Duration::from_millis;
        let tokio = TimerWheel::new(1_000, 0, 1);
        // Raw 81 ms = run 8.1 ms; a 2 ms sleep is due at 10.1 ms and fires at 11 ms = raw 110.
        assert_eq!(tokio.fires(&fine, ms(81), ms(2)), ms(110));
        // Due on the grid: fires then.
        assert_eq!(tokio.fires(&fine, ms(80), ms(2)), ms(100));
        // Without a grid: when due (raw 101 = 10.1 ms).
        assert_eq!(
            TimerWheel::new(0, 0, 1).fires(&fine, ms(81), ms(2)),
            ms(101)
        );
        // A grid finer than the tick changes nothing: the tick is the grid.
        assert_eq!(
            TimerWheel::new(50, 0, 1).fires(&fine, ms(81), ms(2)),
            ms(101)
        );
        // A grid that is not a multiple of the tick rounds up to a tick, never early:
        // due at 10.1 ms, grid 300 µs -> 10.2 ms = raw 102.
        assert_eq!(
            TimerWheel::new(300, 0, 1).fires(&fine, ms(81), ms(2)),
            ms(102)
        );
        // On the 1 ms tick every instant is on tokio's grid already.
        assert_eq!(tokio.fires(&Timeline::new(8), ms(9), ms(2)), ms(11));
    }

    #[test]
    fn timers_due_together_fire_together_after_a_lag_drawn_from_the_seed() {
        let fine = Timeline::with_tick(8, 100);
        let ms = Duration::from_millis;
        let lagging = TimerWheel::new(1_000, 1_000, 7);
        // Two timers due within the same grid millisecond (10.1 and 10.9 ms): one instant.
        let a = lagging.fires(&fine, ms(81), ms(2));
        let b = lagging.fires(&fine, ms(89), ms(2));
        assert_eq!(a, b);
        assert!((ms(110)..ms(120)).contains(&a), "{a:?}");
        // Over many grid points the lags spread over the millisecond, and the same seed
        // gives the same lags.
        let lags: Vec<Duration> = (0..200)
            .map(|n| lagging.fires(&fine, ms(81 + 10 * n), ms(2)) - ms(110 + 10 * n))
            .collect();
        assert!(lags.iter().all(|&lag| lag <= ms(10)));
        let distinct: std::collections::BTreeSet<_> = lags.iter().collect();
        assert!(distinct.len() >= 8, "{distinct:?}");
        let again: Vec<Duration> = (0..200)
            .map(|n| lagging.fires(&fine, ms(81 + 10 * n), ms(2)) - ms(110 + 10 * n))
            .collect();
        assert_eq!(lags, again);
        let other_seed = TimerWheel::new(1_000, 1_000, 8);
        let others: Vec<Duration> = (0..200)
            .map(|n| other_seed.fires(&fine, ms(81 + 10 * n), ms(2)) - ms(110 + 10 * n))
            .collect();
        assert_ne!(lags, others);
    }

    #[test]
    fn the_client_cpu_queues_commands_and_rounds_down_to_the_tick() {
        let cpu = ClientCpu::new(150, 1_000);
        let t0 = 10_000;
        // 50 commands at once leave over ticks 0..=7: six in the first (0.90 ms), then the
        // 7th ends at 1.05 ms.
        let waits: Vec<u64> = (0..50).map(|_| cpu.issue(t0)).collect();
        assert_eq!(&waits[..7], &[0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(waits[49], 7);
        assert!(waits.windows(2).all(|pair| pair[0] <= pair[1]));
        // Idle again later: a lone command costs nothing visible.
        assert_eq!(cpu.issue(100_000), 0);
        // Without a model nothing waits.
        let none = ClientCpu::new(0, 1_000);
        assert!((0..50).all(|_| none.issue(t0) == 0));
        // Sub-tick costs add up exactly across ticks: 4 × 300 µs from 0.
        let cpu = ClientCpu::new(300, 1_000);
        let waits: Vec<u64> = (0..4).map(|_| cpu.issue(0)).collect();
        assert_eq!(waits, vec![0, 0, 0, 1]);
        // On a 100 µs tick the same four leave in ticks 3, 6, 9 and 12.
        let cpu = ClientCpu::new(300, 100);
        let waits: Vec<u64> = (0..4).map(|_| cpu.issue(0)).collect();
        assert_eq!(waits, vec![3, 6, 9, 12]);
    }

    #[test]
    fn jumps_apply_from_their_instant_on() {
        let mut clock = ServerClock::new(Timeline::new(0));
        clock.add_jump(Jump {
            at: Duration::from_millis(10),
            by_ms: 5_000,
        });
        let base = EPOCH_UNIX_SECS * 1_000;
        assert_eq!(clock.now_ms(Duration::from_millis(9)), base + 9);
        assert_eq!(clock.now_ms(Duration::from_millis(10)), base + 5_010);
    }

    #[test]
    fn a_drifting_clock_gains_its_rate_from_its_instant_on() {
        let ms = Duration::from_millis;
        let base = EPOCH_UNIX_SECS * 1_000;
        let mut clock = ServerClock::new(Timeline::new(0));
        clock.set_drift(Drift {
            from: ms(10),
            rate_ppm: 20_000,
        });
        assert_eq!(clock.now_ms(ms(10)), base + 10);
        // 49 ms at +2 % gain 0.98 ms: not yet a whole millisecond.
        assert_eq!(clock.now_ms(ms(59)), base + 59);
        assert_eq!(clock.now_ms(ms(60)), base + 61);
        assert_eq!(clock.now_ms(ms(1_010)), base + 1_030);
        clock.set_drift(Drift {
            from: ms(10),
            rate_ppm: -20_000,
        });
        assert_eq!(clock.now_ms(ms(1_010)), base + 990);
        // 2 % fast: 100 clock ms take at least 98 ms.
        clock.set_drift(Drift {
            from: ms(0),
            rate_ppm: 20_000,
        });
        let least = clock.least_run_time_for(100_000);
        assert_eq!(least, Duration::from_micros(98_039));
        assert!(clock.now_us(least) <= (base as i64 + 100) * 1_000);
        assert!(clock.now_us(least + Duration::from_micros(2)) > (base as i64 + 100) * 1_000);
    }

    #[test]
    fn a_slew_applies_its_offset_gradually_and_then_stops() {
        let ms = Duration::from_millis;
        let base = EPOCH_UNIX_SECS * 1_000;
        let mut slewed = ServerClock::new(Timeline::new(0));
        slewed.add_slew(Slew {
            at: ms(20),
            offset_ms: 3_000,
            rate_ppm: 500,
        });
        let mut stepped = ServerClock::new(Timeline::new(0));
        stepped.add_jump(Jump {
            at: ms(20),
            by_ms: 3_000,
        });
        // 500 ppm: half a millisecond per second.
        assert_eq!(slewed.now_ms(ms(20)), base + 20);
        assert_eq!(slewed.now_ms(ms(2_020)), base + 2_021);
        assert_eq!(stepped.now_ms(ms(2_020)), base + 5_020);
        // 3 s at 500 ppm takes 6000 s, then the clock runs true again.
        assert_eq!(slewed.now_ms(ms(6_000_020)), base + 6_003_020);
        assert_eq!(slewed.now_ms(ms(7_000_020)), base + 7_003_020);
        let mut back = ServerClock::new(Timeline::new(0));
        back.add_slew(Slew {
            at: ms(0),
            offset_ms: -1,
            rate_ppm: 500_000,
        });
        assert_eq!(back.now_ms(ms(1)), base);
        assert_eq!(back.now_ms(ms(2)), base + 1);
        assert_eq!(back.max_fast_ppm(), 0);
    }
}
