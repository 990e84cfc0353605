//! A scenario: everything a run needs besides its seed.
//!
//! The tutorial's steps are presets ([`Scenario::tutorial`]); every field can be changed from
//! the command line.

use crate::fault::{Fault, Host};
use crate::ledger::{CallerResult, Ledger};
use crate::postgres::{Isolation, Postgres, Wallet, WriteGuard};
use crate::redis::Redis;
use crate::safeguard::lease::ReleaseVia;
use crate::safeguard::{BalanceIn, Keys, ParamError, Params, RetryStrategy, Safeguard};

/// Network timing of the simulated data centre.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Network {
    /// Shortest one-way message latency, in microseconds.
    pub latency_min_us: u64,
    /// Longest one-way message latency, in microseconds.
    pub latency_max_us: u64,
    /// How far the Redis replica lags behind the primary, in milliseconds.
    pub replication_lag_ms: u64,
}

impl Default for Network {
    /// One data centre: 100–500 µs one way, a replica 50 ms behind.
    fn default() -> Network {
        Network {
            latency_min_us: 100,
            latency_max_us: 500,
            replication_lag_ms: 50,
        }
    }
}

/// How the simulation keeps time and what things cost in it: the timing model. The exhaustive
/// model ignores it (it has no clock but the scenario's milliseconds); the simulation reads it
/// (`leaselab_sim::run`), and a trace records it, so a run replays with the timing it ran
/// with. Every field is run time in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timing {
    /// Run time one simulation step stands for: a divisor of 1,000 (1 ms), at least 1.
    pub tick_us: u64,
    /// Client CPU per command, on the one client CPU all callers share (real mode runs every
    /// caller on one thread); 0: none.
    pub client_cpu_us: u64,
    /// The callers' timer resolution: a sleep or deadline fires at the first whole multiple
    /// of it at or after its due time, as tokio's 1 ms timer wheel fires real mode's; 0: when
    /// due. No effect on a tick of this size or coarser.
    pub timer_us: u64,
    /// How long after its grid point a timer fires, at most: tokio's driver wakes some
    /// fraction of a millisecond late. The timers due at one grid point fire together, after
    /// a lag drawn for that point from the run's seed, uniform below this; 0: at the point.
    pub timer_lag_us: u64,
    /// PostgreSQL's extra answering time for a session's first statement (a new backend's
    /// cold caches, the prepare of the client's first statement).
    pub pg_first_statement_us: u64,
    /// The mean of a random part of a session's first-statement time, drawn for each session
    /// from an exponential distribution (seeded by the run and the connection): real backends'
    /// first statements spread with a long tail when several start at once on a loaded
    /// machine, so one holder's read can outlast the next holder's. 0: every session pays
    /// exactly `pg_first_statement_us`.
    pub pg_first_statement_tail_us: u64,
    /// PostgreSQL's extra answering time for a statement that commits a write (the WAL's
    /// fsync under `synchronous_commit = on`).
    pub pg_commit_us: u64,
}

/// The longest a [`Timing`] cost may be: 1 s.
pub const MAX_TIMING_COST_US: u64 = 1_000_000;

impl Timing {
    /// The 1 ms tick (`tick-1ms`, the default until 4 Dec 2026, and the timing of every trace
    /// that does not name one): every round trip takes at least a tick, PostgreSQL answers at
    /// once, 5 µs of client CPU per command (which never delays a command of the tutorial's
    /// rows on this tick), timers on tokio's 1 ms grid (the tick's own).
    pub fn tick_1ms() -> Timing {
        Timing {
            tick_us: 1_000,
            client_cpu_us: 5,
            timer_us: 1_000,
            timer_lag_us: 0,
            pg_first_statement_us: 0,
            pg_first_statement_tail_us: 0,
            pg_commit_us: 0,
        }
    }

    /// The default: localhost as measured on a 2-core machine with Redis 7.0 and PostgreSQL 15
    /// (docs/real-mode.md, "The localhost timing"): a 100 µs tick, 20 µs of client CPU per
    /// command, tokio's 1 ms timers, PostgreSQL 700 µs slower on a session's first statement
    /// and 400 µs on a commit that wrote.
    pub fn localhost() -> Timing {
        Timing {
            tick_us: 100,
            client_cpu_us: 20,
            timer_us: 1_000,
            timer_lag_us: 1_000,
            pg_first_statement_us: 700,
            pg_first_statement_tail_us: 0,
            pg_commit_us: 400,
        }
    }

    /// The named timings `--timing` accepts.
    pub const NAMES: [&'static str; 2] = ["localhost", "tick-1ms"];

    /// The timing named `name` ([`Timing::NAMES`]) with the one-way network latency that goes
    /// with it ([`TimingPreset::localhost`], [`TimingPreset::tick_1ms`]).
    pub fn named(name: &str) -> Option<TimingPreset> {
        match name {
            "localhost" => Some(TimingPreset::localhost()),
            "tick-1ms" => Some(TimingPreset::tick_1ms()),
            _ => None,
        }
    }

    /// The name of this timing in [`Timing::NAMES`], or `custom`.
    pub fn name(&self) -> &'static str {
        Timing::NAMES
            .into_iter()
            .find(|name| Timing::named(name).is_some_and(|preset| preset.timing == *self))
            .unwrap_or("custom")
    }

    /// Checks the bounds: a tick that divides 1 ms, costs of at most [`MAX_TIMING_COST_US`].
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.tick_us == 0 || self.tick_us > 1_000 || 1_000 % self.tick_us != 0 {
            return Err(ParamError(format!(
                "a tick must be a divisor of 1000us, e.g. 1000, 500, 100, 10 (got {}us)",
                self.tick_us
            )));
        }
        for (name, cost) in [
            ("client CPU per command", self.client_cpu_us),
            ("timer resolution", self.timer_us),
            ("timer lag", self.timer_lag_us),
            (
                "PostgreSQL's first-statement time",
                self.pg_first_statement_us,
            ),
            (
                "PostgreSQL's first-statement tail",
                self.pg_first_statement_tail_us,
            ),
            ("PostgreSQL's commit time", self.pg_commit_us),
        ] {
            if cost > MAX_TIMING_COST_US {
                return Err(ParamError(format!(
                    "the {name} may be at most {MAX_TIMING_COST_US}us (got {cost}us)"
                )));
            }
        }
        Ok(())
    }
}

/// A named timing model with the one-way network latency that goes with it (`--timing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingPreset {
    /// The simulation's timing.
    pub timing: Timing,
    /// The one-way network latency, µs (min, max).
    pub latency_us: (u64, u64),
}

impl Default for TimingPreset {
    /// `localhost`.
    fn default() -> TimingPreset {
        TimingPreset::localhost()
    }
}

impl TimingPreset {
    /// `localhost` ([`Timing::localhost`]) with 100–200 µs one way: half the 200–400 µs round
    /// trips a caller of real mode measures on localhost when no burst queues its commands.
    pub fn localhost() -> TimingPreset {
        TimingPreset {
            timing: Timing::localhost(),
            latency_us: (100, 200),
        }
    }

    /// `tick-1ms` ([`Timing::tick_1ms`]) on the default [`Network`]'s 100–500 µs.
    pub fn tick_1ms() -> TimingPreset {
        let network = Network::default();
        TimingPreset {
            timing: Timing::tick_1ms(),
            latency_us: (network.latency_min_us, network.latency_max_us),
        }
    }

    /// Gives `scenario` this timing and latency.
    pub fn apply(&self, scenario: &mut Scenario) {
        scenario.timing = self.timing;
        (
            scenario.network.latency_min_us,
            scenario.network.latency_max_us,
        ) = self.latency_us;
    }
}

/// Everything a run needs besides its seed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scenario {
    /// A name for reports (a tutorial preset's name, or `custom`).
    pub name: String,
    /// The safeguard every caller runs.
    pub safeguard: Safeguard,
    /// How many callers, one host each.
    pub callers: u32,
    /// The balance before the run.
    pub initial_balance: i64,
    /// The fence counter's value before the run (the next token is one more).
    pub initial_fence_counter: i64,
    /// What every caller shares: amount, work, TTL, deadline, keys.
    pub params: Params,
    /// When each caller starts, ms after the run starts (missing entries: 0, all at once).
    pub start_offsets_ms: Vec<u64>,
    /// Faults to inject.
    pub faults: Vec<Fault>,
    /// Network timing.
    pub network: Network,
    /// PostgreSQL's `deadlock_timeout`: a statement waiting for a row lock looks for a
    /// deadlock through itself once, this long after it started waiting (1 s, PostgreSQL's
    /// default). The model checker's World checks at once instead (the limit of a short
    /// timeout).
    pub deadlock_timeout_ms: u64,
    /// The simulation's timing model (ignored by the exhaustive model and by real mode).
    pub timing: Timing,
}

/// PostgreSQL's default `deadlock_timeout`.
pub const DEFAULT_DEADLOCK_TIMEOUT_MS: u64 = 1_000;

/// The longest `deadlock_timeout` a scenario may set (a run lasts at most an hour).
pub const MAX_DEADLOCK_TIMEOUT_MS: u64 = 600_000;

/// The tutorial's steps.
pub const TUTORIAL_STEPS: [&str; 6] = [
    "step1-race",
    "step2-lock",
    "step3-ttl",
    "step4-redislock",
    "step5-fencing",
    "step6-verify",
];

/// The safety section's PostgreSQL scenarios ([`Scenario::safety`]).
pub const SAFETY_SCENARIOS: [&str; 5] = [
    "transfer-ordered",
    "transfer-unordered",
    "rmw-read-committed",
    "rmw-repeatable-read",
    "rmw-serializable",
];

/// The switches of the tutorial's programs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variant {
    /// step3 `-watchdog`.
    pub watchdog: bool,
    /// step4 `-jitter`.
    pub jitter: bool,
    /// step5 `-fenced=false`.
    pub unfenced: bool,
    /// step6 `-same-version`.
    pub same_version: bool,
}

impl Scenario {
    /// A scenario with the tutorial's defaults: 50 callers spending 10 from 100, 2 ms of work,
    /// a 2 s TTL, a 5 s acquire deadline, on the default timing ([`TimingPreset::localhost`]).
    pub fn new(name: &str, safeguard: Safeguard) -> Scenario {
        let preset = TimingPreset::default();
        let mut scenario = Scenario {
            name: name.to_string(),
            safeguard,
            callers: 50,
            initial_balance: 100,
            initial_fence_counter: 0,
            params: Params {
                wallet_id: 42,
                amount: 10,
                work_ms: 2,
                ttl_ms: 2_000,
                acquire_timeout_ms: Some(5_000),
                keys: Keys::for_wallet("", 42),
            },
            start_offsets_ms: Vec::new(),
            faults: Vec::new(),
            network: Network::default(),
            deadlock_timeout_ms: DEFAULT_DEADLOCK_TIMEOUT_MS,
            timing: preset.timing,
        };
        // The network's latency goes with the timing.
        preset.apply(&mut scenario);
        scenario
    }

    /// A tutorial step (`step1-race` ... `step6-verify`) with its switches.
    pub fn tutorial(step: &str, variant: Variant) -> Result<Scenario, ParamError> {
        let exponential = RetryStrategy::Exponential {
            min_ms: 16,
            max_ms: 128,
        };
        let mut scenario = match step {
            "step1-race" => Scenario::new(step, Safeguard::NoLock),
            "step2-lock" => Scenario::new(
                step,
                Safeguard::Lease {
                    release: ReleaseVia::Script,
                },
            ),
            "step3-ttl" => {
                let safeguard = if variant.watchdog {
                    Safeguard::LeaseWatchdog
                } else {
                    Safeguard::Lease {
                        release: ReleaseVia::Script,
                    }
                };
                let mut scenario = Scenario::new(step, safeguard);
                scenario.callers = 5;
                scenario.params.ttl_ms = 100;
                scenario.params.work_ms = 300;
                scenario.params.acquire_timeout_ms = Some(10_000);
                scenario
            }
            "step4-redislock" => Scenario::new(
                step,
                Safeguard::Redislock {
                    retry: exponential,
                    jitter: variant.jitter,
                },
            ),
            "step5-fencing" => {
                let guard = if variant.unfenced {
                    WriteGuard::Unfenced
                } else {
                    WriteGuard::FenceBelow
                };
                let mut scenario = Scenario::new(step, Safeguard::Fenced { guard });
                // A takes the lock first and pauses 250 ms after reading; B comes after A's
                // 100 ms lease has expired. The counter hands out 33 and 34.
                scenario.callers = 2;
                scenario.params.ttl_ms = 100;
                scenario.params.work_ms = 0;
                scenario.initial_fence_counter = 32;
                scenario.start_offsets_ms = vec![0, 150];
                scenario.faults = vec![Fault::Pause {
                    caller: 1,
                    at: crate::safeguard::Point::AfterRead,
                    pause_ms: 250,
                }];
                scenario
            }
            "step6-verify" => {
                let guard = if variant.same_version {
                    WriteGuard::FenceBelowAndEqual
                } else {
                    WriteGuard::FenceBelow
                };
                Scenario::new(step, Safeguard::Fenced { guard })
            }
            other => {
                return Err(ParamError(format!(
                    "unknown scenario '{other}'; the tutorial's scenarios are: {}",
                    TUTORIAL_STEPS.join(", ")
                )))
            }
        };
        scenario.name = variant_name(step, variant);
        Ok(scenario)
    }

    /// A scenario of the safety section's PostgreSQL safeguards, by name ([`SAFETY_SCENARIOS`]):
    ///
    /// - `transfer-ordered`, `transfer-unordered`: 10 callers move 10 between wallets 42 and
    ///   43 (100 each), odd callers 42 → 43, even ones back, each under `SELECT ... FOR UPDATE`
    ///   on both rows with 2 ms of work; the rows locked by id, or the source first (opposite
    ///   transfers deadlock; PostgreSQL aborts one, the caller retries).
    /// - `rmw-read-committed`, `rmw-repeatable-read`, `rmw-serializable`: 10 callers spend 10
    ///   from 100 by reading the balance, working 2 ms and writing it back, in a transaction at
    ///   that isolation level (retrying 40001).
    pub fn safety(name: &str) -> Result<Scenario, ParamError> {
        let safeguard = match name {
            "transfer-ordered" => Safeguard::PgTransfer { ordered: true },
            "transfer-unordered" => Safeguard::PgTransfer { ordered: false },
            "rmw-read-committed" => Safeguard::PgIsolation {
                isolation: Isolation::ReadCommitted,
            },
            "rmw-repeatable-read" => Safeguard::PgIsolation {
                isolation: Isolation::RepeatableRead,
            },
            "rmw-serializable" => Safeguard::PgIsolation {
                isolation: Isolation::Serializable,
            },
            other => {
                return Err(ParamError(format!(
                    "unknown scenario '{other}'; the safety section's scenarios are: {}",
                    SAFETY_SCENARIOS.join(", ")
                )))
            }
        };
        let mut scenario = Scenario::new(name, safeguard);
        scenario.callers = 10;
        Ok(scenario)
    }

    /// A Redis primary and a PostgreSQL holding the scenario's starting state: the balance
    /// (in Redis or in the `wallets` row) and the fence counter. The primary's effects of
    /// this seeding are left undrained, for a driver that feeds a replica.
    pub fn seeded_stand_ins(&self) -> (Redis, Postgres) {
        let mut redis = Redis::new();
        let mut postgres = Postgres::new();
        let keys = &self.params.keys;
        match self.balance_in() {
            BalanceIn::Redis => {
                redis.seed(&keys.balance, self.initial_balance.to_string().as_bytes())
            }
            BalanceIn::Postgres => {
                for id in self.wallet_ids() {
                    postgres.seed_wallet(
                        id,
                        Wallet {
                            balance: self.initial_balance,
                            fence: 0,
                        },
                    )
                }
            }
        }
        if self.initial_fence_counter != 0 {
            redis.seed(
                &keys.fence,
                self.initial_fence_counter.to_string().as_bytes(),
            );
        }
        (redis, postgres)
    }

    /// The wallets of the run, by id (two for transfers, each starting with
    /// `initial_balance`).
    pub fn wallet_ids(&self) -> Vec<i64> {
        self.safeguard.wallet_ids(&self.params)
    }

    /// The ledger check of a run that ended with `balances` (one per [`Scenario::wallet_ids`],
    /// in order; none: missing or unreadable): one wallet's spends, or transfers between two.
    pub fn judge(&self, results: &[CallerResult], balances: &[Option<i64>]) -> Ledger {
        let ids = self.wallet_ids();
        assert_eq!(balances.len(), ids.len(), "one final balance per wallet");
        if self.safeguard.is_transfer() {
            let wallets: Vec<(i64, i64, i64)> = ids
                .iter()
                .zip(balances)
                .map(|(id, balance)| (*id, self.initial_balance, balance.unwrap_or(i64::MIN)))
                .collect();
            return Ledger::check_transfers(&wallets, self.params.amount, results);
        }
        Ledger::check(
            self.initial_balance,
            self.params.amount,
            results,
            balances[0].unwrap_or(i64::MIN),
        )
    }

    /// Where the balance lives.
    pub fn balance_in(&self) -> BalanceIn {
        self.safeguard.balance_in()
    }

    /// When caller `index` (0-based) starts.
    pub fn start_offset_ms(&self, index: usize) -> u64 {
        self.start_offsets_ms.get(index).copied().unwrap_or(0)
    }

    /// The longest any caller of this scenario can take, in ms after the release, when no
    /// single request (Redis command or SQL statement, with its reconnects and retries) takes
    /// longer than `request_ms`.
    ///
    /// Every caller's life is bounded on its own, whatever the others do: it starts at its
    /// start offset, waits for a lock at most its acquire timeout (backoffs stop at the
    /// deadline), makes a handful of requests (acquire, fence follow-up, read, write,
    /// release; `BEGIN`/`SELECT`/`UPDATE`/`COMMIT`), works `work_ms` (a watchdog's refresh
    /// may overrun it by one request), and sleeps through its own pauses. Contention, lease
    /// expiry, partitions, failovers, restarts and clock jumps only change which outcome it
    /// reaches and how many of those requests time out, never how many it makes. Saturates
    /// instead of overflowing.
    pub fn longest_caller_ms(&self, request_ms: u64) -> u64 {
        // Acquire's last attempt, the fence follow-up, read, write, release, a watchdog
        // refresh that overruns the work, and two more for slack.
        // A Redlock acquire is a round of one request per node (and its undo), its release
        // another round.
        const REQUESTS: u64 = 8;
        // A caller that retries aborted transactions runs its transaction again after each
        // other caller's commit at most.
        let attempts = if self.safeguard.retries_transactions() {
            u64::from(self.callers)
        } else {
            1
        };
        let requests = REQUESTS + 3 * u64::from(self.safeguard.redis_nodes());
        let acquire_ms = if self.safeguard.uses_lock() {
            // Redislock waits TTL by default, the others DEFAULT_ACQUIRE_TIMEOUT_MS.
            self.params
                .acquire_timeout_ms
                .unwrap_or(crate::safeguard::DEFAULT_ACQUIRE_TIMEOUT_MS.max(self.params.ttl_ms))
        } else {
            0
        };
        let fixed = acquire_ms
            .saturating_add(self.params.work_ms.saturating_mul(attempts))
            .saturating_add(self.params.ttl_ms)
            .saturating_add(requests.saturating_mul(attempts).saturating_mul(request_ms));
        (1..=self.callers)
            .map(|caller| {
                let paused = self
                    .faults
                    .iter()
                    .filter_map(|fault| match fault {
                        Fault::Pause {
                            caller: who,
                            pause_ms,
                            ..
                        } if *who == caller => Some(*pause_ms),
                        _ => None,
                    })
                    .fold(0u64, u64::saturating_add);
                self.start_offset_ms(caller as usize - 1)
                    .saturating_add(paused)
                    .saturating_add(fixed)
            })
            .max()
            .unwrap_or(fixed)
    }

    /// Checks the scenario before anything runs; the error says what and how to fix it.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.safeguard.validate(&self.params)?;
        if self.callers == 0 {
            return Err(ParamError(
                "a scenario needs at least 1 caller (--callers)".into(),
            ));
        }
        if self.callers > 10_000 {
            return Err(ParamError(format!(
                "at most 10000 callers are supported (got {})",
                self.callers
            )));
        }
        if self.initial_balance < 0 {
            return Err(ParamError(format!(
                "the initial balance cannot be negative (got {})",
                self.initial_balance
            )));
        }
        let wallets = self.wallet_ids().len() as i64;
        if self.initial_balance.checked_mul(wallets).is_none() {
            return Err(ParamError(format!(
                "the {wallets} wallets' balances of {} each do not add up within a bigint; use a smaller --balance",
                self.initial_balance
            )));
        }
        if !(1..=MAX_DEADLOCK_TIMEOUT_MS).contains(&self.deadlock_timeout_ms) {
            return Err(ParamError(format!(
                "the deadlock timeout must lie between 1ms and {}s (got {}ms); PostgreSQL's \
                 default is 1s",
                MAX_DEADLOCK_TIMEOUT_MS / 1_000,
                self.deadlock_timeout_ms
            )));
        }
        self.timing.validate()?;
        if self.network.latency_min_us > self.network.latency_max_us {
            return Err(ParamError(format!(
                "the shortest latency ({}us) is longer than the longest ({}us)",
                self.network.latency_min_us, self.network.latency_max_us
            )));
        }
        for fault in &self.faults {
            match fault {
                Fault::Pause { caller, .. }
                | Fault::LostReply { caller, .. }
                | Fault::DroppedConnection { caller, .. }
                    if *caller == 0 || *caller > self.callers =>
                {
                    return Err(ParamError(format!(
                        "{}: there is no caller {caller} (callers are numbered 1 to {})",
                        fault.describe(),
                        self.callers
                    )))
                }
                Fault::LostReply { .. } | Fault::DroppedConnection { .. }
                    if !self.safeguard.uses_lock()
                        && self.safeguard.balance_in() != crate::safeguard::BalanceIn::Redis =>
                {
                    return Err(ParamError(format!(
                        "{}: {} sends no Redis request for the fault to strike",
                        fault.describe(),
                        self.safeguard.name()
                    )))
                }
                Fault::NodeRestart { node, .. }
                    if *node == 0 || *node > self.safeguard.redis_nodes() =>
                {
                    return Err(ParamError(self.no_such_node(fault, *node)))
                }
                Fault::Partition {
                    from_ms, until_ms, ..
                } if until_ms <= from_ms => {
                    return Err(ParamError(format!(
                        "{}: the partition must heal after it starts",
                        fault.describe()
                    )))
                }
                _ => {}
            }
            let hosts = match fault {
                Fault::Partition { a, b, .. } => vec![*a, *b],
                Fault::ClockJump { host, .. }
                | Fault::ClockDrift { host, .. }
                | Fault::ClockSlew { host, .. } => vec![*host],
                _ => Vec::new(),
            };
            for host in hosts {
                if let Host::Node(node) = host {
                    if node > self.safeguard.redis_nodes() {
                        return Err(ParamError(self.no_such_node(fault, node)));
                    }
                }
            }
        }
        Ok(())
    }

    /// Why `fault` names a node the scenario does not have, and what to use instead.
    fn no_such_node(&self, fault: &Fault, node: u8) -> String {
        match self.safeguard.redis_nodes() {
            0 => format!(
                "{}: redis-{node} is a Redlock node, and {} locks on one Redis; use --safeguard \
                 redlock or redlock-cas",
                fault.describe(),
                self.safeguard.name()
            ),
            nodes => format!(
                "{}: there is no redis-{node} (the nodes are redis-1 to redis-{nodes})",
                fault.describe()
            ),
        }
    }
}

/// `step3-ttl --watchdog` style names.
fn variant_name(step: &str, variant: Variant) -> String {
    let mut name = step.to_string();
    for (on, flag) in [
        (variant.watchdog, " --watchdog"),
        (variant.jitter, " --jitter"),
        (variant.unfenced, " --unfenced"),
        (variant.same_version, " --same-version"),
    ] {
        if on {
            name.push_str(flag);
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tutorial_step_is_valid() {
        for step in TUTORIAL_STEPS {
            let scenario = Scenario::tutorial(step, Variant::default()).expect("preset exists");
            scenario.validate().expect("preset is valid");
        }
    }

    #[test]
    fn every_safety_scenario_is_valid_and_transfers_use_two_wallets() {
        for name in SAFETY_SCENARIOS {
            let scenario = Scenario::safety(name).expect("preset exists");
            scenario.validate().expect("preset is valid");
            let wallets = scenario.wallet_ids().len();
            assert_eq!(wallets, if name.starts_with("transfer") { 2 } else { 1 });
            let (_, postgres) = scenario.seeded_stand_ins();
            for id in scenario.wallet_ids() {
                assert_eq!(postgres.wallet(id).map(|w| w.balance), Some(100));
            }
        }
        assert!(Scenario::safety("transfer").is_err());
        let mut huge = Scenario::safety("transfer-ordered").unwrap();
        huge.initial_balance = i64::MAX;
        assert!(huge.validate().unwrap_err().0.contains("smaller --balance"));
    }

    #[test]
    fn zero_ttl_is_refused_with_the_safeguards_message() {
        let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
        scenario.params.ttl_ms = 0;
        assert_eq!(
            scenario.validate().unwrap_err().0,
            "TTL must be at least 1ms"
        );
    }

    #[test]
    fn unknown_step_names_the_known_ones() {
        let error = Scenario::tutorial("step9", Variant::default()).unwrap_err();
        assert!(error.0.contains("step1-race"), "{}", error.0);
    }

    #[test]
    fn the_longest_caller_counts_work_pauses_offsets_and_timeouts() {
        let mut scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
        // Caller 1: pause 250; caller 2: offset 150. Lock: 5s acquire timeout, TTL 100.
        let base = 5_000 + 100 + 8 * 10;
        assert_eq!(scenario.longest_caller_ms(10), base + 250);
        scenario.params.work_ms = 119_000;
        assert_eq!(scenario.longest_caller_ms(10), base + 250 + 119_000);
        scenario.start_offsets_ms = vec![0, 1_000];
        assert_eq!(scenario.longest_caller_ms(10), base + 1_000 + 119_000);
        scenario.params.acquire_timeout_ms = Some(60_000);
        assert_eq!(
            scenario.longest_caller_ms(10),
            base - 5_000 + 60_000 + 1_000 + 119_000
        );
        // No lock, no acquire wait.
        let race = Scenario::tutorial("step1-race", Variant::default()).unwrap();
        assert_eq!(race.longest_caller_ms(10), 2 + 2_000 + 80);
        // Huge values saturate instead of overflowing.
        scenario.params.work_ms = u64::MAX;
        assert_eq!(scenario.longest_caller_ms(u64::MAX), u64::MAX);
    }

    #[test]
    fn pause_of_a_missing_caller_is_refused() {
        let mut scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
        scenario.callers = 1;
        scenario.faults.push(Fault::Pause {
            caller: 3,
            at: crate::safeguard::Point::AfterRead,
            pause_ms: 1,
        });
        assert!(scenario
            .validate()
            .unwrap_err()
            .0
            .contains("there is no caller 3"));
    }
}
