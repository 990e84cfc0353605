//! What one exhaustive check is about: the safeguard, the callers, the timing assumptions
//! and the bounds.

use leaselab_model::fault::MAX_CLOCK_RATE_PPM;
use leaselab_model::postgres::WriteGuard;
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::{BalanceIn, Outcome};
use leaselab_model::safeguard::{ParamError, Safeguard};
use leaselab_model::scenario::{Scenario, TimingPreset};
use leaselab_model::world::{
    world_client_policy, Action, ClockFaults, NodeFaults, ReplyFaults, World, WorldConfig,
    NTP_SLEW_RATE_PPM,
};

/// The fence counter's starting value, as in the tutorial: tokens are 33, 34, ...
pub const INITIAL_FENCE_COUNTER: i64 = 32;

/// The most callers an exhaustive check explores (the world numbers callers with a `u8`, and
/// the state space grows exponentially long before that).
pub const MAX_CALLERS: u32 = 8;

/// The longest horizon, TTL, work or pause a check accepts, in ticks.
pub const MAX_TICKS: u64 = 10_000;

/// The most lost replies, and the most dropped connections, a check explores (each one
/// multiplies the state space by the number of requests it can strike).
pub const MAX_REPLY_FAULTS: u32 = 3;

/// The most restarts of the single Redis a check explores.
pub const MAX_RESTARTS: u32 = 3;

/// How long the protocol takes with nobody in its way (see [`CheckConfig::timing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// When a lone caller's write reaches the storage: the smallest horizon in which any
    /// write can happen.
    pub first_write_tick: u64,
    /// When the last caller is done if they go one after another, each settled (its write
    /// accepted or refused, or turned down for want of funds); none when that run does not
    /// settle everyone. A horizon this long lets every caller finish; shorter ones may too.
    pub all_settled_tick: Option<u64>,
    /// When a second caller can have settled its spend while the first one stalls inside
    /// its critical section (see [`overlap_run`]): below this horizon no two spends can
    /// overlap, so no lost update, no stale write and no broken lease can show, and "safe"
    /// would say nothing. None when that run cannot happen (the second caller cannot get
    /// through while the first stalls, e.g. a lock without a TTL, or fewer than 2 callers).
    pub overlap_tick: Option<u64>,
}

/// Runs the callers one after another: the first unfinished caller steps whenever it can,
/// otherwise the clock ticks. For one caller, returns when its spend was accepted; for
/// several, when all are done, provided every one settled.
fn serial_run(world: &mut World) -> Option<u64> {
    let mut actions = Vec::new();
    // Every step either advances the clock or moves a machine on; machines take a bounded
    // number of steps per tick, so this cap is never reached by a sound machine.
    for _ in 0..10_000_000u32 {
        if world.all_done() {
            break;
        }
        let current = world.slots.iter().position(|slot| slot.outcome.is_none())?;
        actions.clear();
        world.actions(&mut actions);
        let action = if actions.contains(&Action::Step(current as u8)) {
            Action::Step(current as u8)
        } else if actions.contains(&Action::Tick) {
            Action::Tick
        } else {
            return None;
        };
        world.apply(action);
        if world.slots.len() == 1 {
            if let Some(outcome) = &world.slots[0].outcome {
                return matches!(outcome, Outcome::Accepted { .. }).then_some(world.now_ms);
            }
        }
    }
    let settled = world.all_done()
        && world
            .slots
            .iter()
            .all(|slot| settled(slot.outcome.as_ref()));
    settled.then_some(world.now_ms)
}

/// The schedule that lets a second spend overlap the first: caller 0 runs alone until it
/// must wait for time (it has acquired whatever it acquires and read the balance, and is
/// working) and stalls there; the clock ticks `delay_ticks` times; caller 1 then runs,
/// stepping whenever it can and otherwise letting the clock tick (it retries until a lease
/// expires, or needs none), until its spend settles; then caller 0 runs on until it is done.
/// Returns the tick at which caller 0 is done, or None when the schedule cannot happen
/// (caller 0 never waits, or caller 1 does not settle while caller 0 stalls).
fn overlap_run(world: &mut World, delay_ticks: u64) -> Option<u64> {
    if world.slots.len() < 2 {
        return None;
    }
    let mut actions = Vec::new();
    let mut enabled = |world: &World, action: Action| {
        actions.clear();
        world.actions(&mut actions);
        actions.contains(&action)
    };
    // Caller 0 alone, without the clock.
    for _ in 0..1_000_000u32 {
        if world.slots[0].outcome.is_some() {
            return None;
        }
        if !enabled(world, Action::Step(0)) {
            break;
        }
        world.apply(Action::Step(0));
    }
    for _ in 0..delay_ticks {
        if !enabled(world, Action::Tick) {
            return None;
        }
        world.apply(Action::Tick);
    }
    // Caller 1 while caller 0 stalls, then caller 0 again.
    for caller in [1u8, 0] {
        let slot = usize::from(caller);
        for _ in 0..10_000_000u32 {
            if world.slots[slot].outcome.is_some() {
                break;
            }
            let action = if enabled(world, Action::Step(caller)) {
                Action::Step(caller)
            } else if enabled(world, Action::Tick) {
                Action::Tick
            } else {
                return None;
            };
            world.apply(action);
        }
        if caller == 1 && !settled(world.slots[1].outcome.as_ref()) {
            return None;
        }
    }
    world.slots[0].outcome.is_some().then_some(world.now_ms)
}

/// True when a caller's spend reached a decision: accepted, refused by the storage, or turned
/// down for want of funds (not given up, lost the lock, or failed).
pub fn settled(outcome: Option<&Outcome>) -> bool {
    matches!(
        outcome,
        Some(
            Outcome::Accepted { .. }
                | Outcome::WriteRejected { .. }
                | Outcome::InsufficientFunds { .. }
        )
    )
}

fn ticks_text(n: u64) -> String {
    if n == 1 {
        "1 tick".into()
    } else {
        format!("{n} ticks")
    }
}

/// The parameters of a check. Times are in ticks of the model's clock; 1 tick = 1 ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CheckConfig {
    /// The safeguard every caller runs.
    pub safeguard: Safeguard,
    /// How many callers.
    pub callers: u32,
    /// The balance before the run.
    pub initial_balance: i64,
    /// How much each caller spends.
    pub amount: i64,
    /// The lease.
    pub ttl_ticks: u64,
    /// The work between read and write.
    pub work_ticks: u64,
    /// How long, in all, a caller may be stopped while time passes (none: unbounded).
    pub max_pause_ticks: Option<u64>,
    /// How many Redis failovers may strike (each loses what had not replicated).
    pub failovers: u32,
    /// How many restarts of the single Redis without persistence may strike (each loses
    /// every key: the lock, the fence counter, a balance kept there).
    pub restarts: u32,
    /// The restarts are machine crashes after which Redis reloads its append-only file
    /// (`appendfsync everysec`, fsynced at the start and then at moments the search picks: the
    /// keys come back as they were at the last fsync)
    /// instead of restarts without persistence.
    pub restarts_from_aof: bool,
    /// With [`CheckConfig::restarts_from_aof`]: when the append-only file is fsynced.
    /// `everysec` (the default) and `no` fsync at the start and then once a second (or every
    /// 30 s) at moments the search picks; `always` fsyncs before
    /// every reply, so a crash loses no key.
    pub aof_appendfsync: Appendfsync,
    /// How many evictions of the fence counter (an `allkeys-*` policy under memory pressure)
    /// may strike; only for a fenced safeguard.
    pub evictions: u32,
    /// Time stops here (none: [`CheckConfig::default_horizon_ticks`]).
    pub horizon_ticks: Option<u64>,
    /// Treat worlds that differ only by which caller is which as one state.
    pub symmetry: bool,
    /// How many Redis replies may be lost or lost with their connection (none by default).
    pub reply_faults: ReplyFaults,
    /// Redlock's nodes: their clocks' drift and the faults that may strike them (none by
    /// default; only for a safeguard on several Redis nodes).
    pub node_faults: NodeFaults,
    /// The single Redis's clock rate error in percent (+50: 50 % fast, keys expire early); 0
    /// by default; only for a safeguard that keeps something in one Redis.
    pub redis_drift_percent: i32,
    /// Jumps and slews of the single Redis's clock (none by default; only for a safeguard
    /// that keeps something in one Redis).
    pub redis_clock: ClockFaults,
    /// How many partitions may strike, each cutting one caller off from one Redis server (the
    /// single Redis, or a Redlock node) for the rest of the run (none by default).
    pub partitions: u32,
}

/// Why the checker cannot explore `safeguard` at all, whatever the bounds (none: it can): a
/// safeguard file whose pipeline sends `WAIT`. The world runs a pipeline in one step, so no
/// replication could come between its write and its `WAIT`, which would always answer 0: the
/// check refuses rather than explore a protocol the servers do not run.
pub fn unexplorable(safeguard: Safeguard) -> Option<String> {
    let Safeguard::User(id) = safeguard else {
        return None;
    };
    let spec = leaselab_model::safeguard::user::get(id);
    let section = spec.pipelines_wait()?;
    Some(format!(
        "safeguard file `{}`: its {section} pipeline sends WAIT, whose answer depends on how far \
         the replica has caught up; the exhaustive check runs a pipeline in one step, where no \
         replication can come before WAIT answers, so it would explore something the servers do \
         not do. Run the file in the simulation instead (`leaselab run`, whose server answers \
         WAIT as Redis does)",
        spec.name
    ))
}

impl CheckConfig {
    /// Two callers spending 10 from 20, a 3-tick lease, 1 tick of work, unbounded pauses,
    /// no failovers, symmetry reduced.
    pub fn new(safeguard: Safeguard) -> CheckConfig {
        CheckConfig {
            safeguard,
            callers: 2,
            initial_balance: 20,
            amount: 10,
            ttl_ticks: 3,
            work_ticks: 1,
            max_pause_ticks: None,
            failovers: 0,
            restarts: 0,
            restarts_from_aof: false,
            aof_appendfsync: Appendfsync::Everysec,
            evictions: 0,
            horizon_ticks: None,
            symmetry: true,
            reply_faults: ReplyFaults::default(),
            node_faults: NodeFaults::default(),
            redis_drift_percent: 0,
            redis_clock: ClockFaults::default(),
            partitions: 0,
        }
    }

    /// Long enough for a holder to work, have its lease expire (`TTL + 1` ticks after the
    /// acquire or the last refresh), and for another caller to take the lock, work and
    /// finish: `2 × work + 2 × TTL + 4`.
    pub fn default_horizon_ticks(&self) -> u64 {
        self.work_ticks
            .saturating_mul(2)
            .saturating_add(self.ttl_ticks.saturating_mul(2))
            .saturating_add(4)
    }

    /// The horizon in force.
    pub fn horizon(&self) -> u64 {
        self.horizon_ticks
            .unwrap_or_else(|| self.default_horizon_ticks())
    }

    /// The scenario the check runs: every caller starts at 0 (and may arrive later), the
    /// fence counter hands out 33 first.
    pub fn scenario(&self) -> Scenario {
        let mut scenario = Scenario::new("check", self.safeguard);
        // A counterexample's schedule is replayed in milliseconds of run time
        // (src/trace/model.rs): on the 1 ms tick, one step per model tick.
        TimingPreset::tick_1ms().apply(&mut scenario);
        scenario.callers = self.callers;
        scenario.initial_balance = self.initial_balance;
        scenario.initial_fence_counter = INITIAL_FENCE_COUNTER;
        scenario.params.amount = self.amount;
        scenario.params.ttl_ms = self.ttl_ticks;
        scenario.params.work_ms = self.work_ticks;
        scenario
    }

    /// The world's bounds: callers may arrive at any time before the horizon.
    pub fn world_config(&self) -> WorldConfig {
        WorldConfig {
            max_pause_ms: self.max_pause_ticks,
            horizon_ms: self.horizon(),
            failovers: self.failovers,
            arrival_window_ms: self.horizon(),
        }
    }

    /// The initial world: the scenario's stand-ins, the callers in their client cores (the
    /// world's policy), and the reply-fault budget.
    pub fn world(&self) -> Result<World, ParamError> {
        World::with_faults(
            &self.scenario(),
            &self.tokens(),
            self.world_config(),
            self.reply_faults,
            world_client_policy(),
        )
        .map(|world| {
            let world = if self.restarts_from_aof {
                world.with_restarts_from_aof(self.aof_appendfsync)
            } else {
                world
            };
            world
                .with_node_faults(self.node_faults)
                .with_redis_restarts(self.restarts)
                .with_fence_evictions(self.evictions)
                .with_redis_drift(self.redis_drift_percent)
                .with_redis_clock_faults(self.redis_clock)
                .with_partitions(self.partitions)
        })
    }

    /// The callers' tokens: 1, 2, 3, ... as 32 hex digits.
    pub fn tokens(&self) -> Vec<u128> {
        (1..=u128::from(self.callers)).collect()
    }

    /// True when the safeguard can refuse a write (a fenced `UPDATE`).
    pub fn can_reject(&self) -> bool {
        match self.safeguard {
            Safeguard::User(id) => leaselab_model::safeguard::user::get(id).can_reject(),
            safeguard => matches!(
                safeguard,
                Safeguard::Fenced {
                    guard: WriteGuard::FenceBelow | WriteGuard::FenceBelowAndEqual
                } | Safeguard::Redlock { cas: true, .. }
            ),
        }
    }

    /// True when the safeguard keeps anything in Redis (a lock, a fence counter or the balance).
    pub fn uses_redis(&self) -> bool {
        self.safeguard.uses_lock() || self.scenario().balance_in() == BalanceIn::Redis
    }

    /// Checks the parameters and the bound; the error says which one, what is wrong and how
    /// to fix it. A bound too short for any caller to write its spend is refused here: within
    /// it every run is cut off before anything can go wrong, and "safe" would mean nothing.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.validate_params()?;
        self.validate_bound()
    }

    /// Checks the parameters alone (not whether the horizon leaves time for a write).
    pub fn validate_params(&self) -> Result<(), ParamError> {
        if let Some(why) = unexplorable(self.safeguard) {
            return Err(ParamError(why));
        }
        if self.callers == 0 {
            return Err(ParamError(
                "--callers 0: a check needs at least 1 caller; use --callers 2".into(),
            ));
        }
        if self.callers == 1 {
            return Err(ParamError(
                "--callers 1: with one caller nothing can overlap, so mutual exclusion and the \
                 ledger hold trivially and a SAFE verdict would say nothing; use --callers 2"
                    .into(),
            ));
        }
        if self.callers > MAX_CALLERS {
            return Err(ParamError(format!(
                "--callers {}: an exhaustive check is limited to {MAX_CALLERS} callers (the state \
                 space grows exponentially); use 2 or 3",
                self.callers
            )));
        }
        if self.safeguard.uses_lock() && self.ttl_ticks == 0 {
            return Err(ParamError(
                "--ttl 0: TTL must be at least 1ms (1 tick); use --ttl 3".into(),
            ));
        }
        if self.ttl_ticks > MAX_TICKS {
            return Err(ParamError(format!(
                "--ttl {}: at most {MAX_TICKS} ticks; exhaustive checks need small bounds (use e.g. \
                 --ttl 3)",
                self.ttl_ticks
            )));
        }
        if self.work_ticks > MAX_TICKS {
            return Err(ParamError(format!(
                "--work {}: at most {MAX_TICKS} ticks; exhaustive checks need small bounds (use e.g. \
                 --work 1)",
                self.work_ticks
            )));
        }
        if let Some(pause) = self.max_pause_ticks {
            if pause > MAX_TICKS {
                return Err(ParamError(format!(
                    "--max-pause {pause}: at most {MAX_TICKS} ticks; a pause as long as the \
                     horizon never binds, so write --max-pause unbounded"
                )));
            }
        }
        if self.amount <= 0 {
            return Err(ParamError(format!(
                "--amount {}: the amount must be positive",
                self.amount
            )));
        }
        if self.initial_balance < 0 {
            return Err(ParamError(format!(
                "--balance {}: the initial balance cannot be negative",
                self.initial_balance
            )));
        }
        if self.initial_balance < self.amount {
            return Err(ParamError(format!(
                "--balance {} --amount {}: no caller can afford a spend, so nothing is ever \
                 written and the ledger holds trivially; use a balance of at least the amount \
                 (e.g. --balance {})",
                self.initial_balance,
                self.amount,
                self.amount.saturating_mul(2)
            )));
        }
        if self
            .amount
            .checked_mul(i64::from(self.callers))
            .and_then(|spent| self.initial_balance.checked_sub(spent))
            .is_none()
        {
            return Err(ParamError(format!(
                "--balance {} --amount {}: amounts this large overflow the ledger's arithmetic; \
                 use e.g. --balance 20 --amount 10",
                self.initial_balance, self.amount
            )));
        }
        if self.failovers > 1 {
            return Err(ParamError(format!(
                "--failovers {}: the model keeps one replica and no new one joins after a \
                 failover, so at most 1 failover can ever strike (a larger budget would claim \
                 what was never explored); use --failovers 1",
                self.failovers
            )));
        }
        if self.failovers > 0 && !self.uses_redis() {
            return Err(ParamError(format!(
                "--failovers {}: {} keeps nothing in Redis, so a Redis failover cannot touch \
                 it; drop --failovers",
                self.failovers,
                self.safeguard.name()
            )));
        }
        if self.restarts > 0 {
            let why = if !self.uses_redis() {
                Some(format!(
                    "{} keeps nothing in Redis, so a Redis restart cannot touch it",
                    self.safeguard.name()
                ))
            } else if self.safeguard.redis_nodes() > 0 {
                Some("Redlock's nodes restart with --node-restarts".to_string())
            } else if self.failovers > 0 || Safeguard::replicated().contains(&self.safeguard) {
                Some(
                    "a restart of a primary that has a replica is not modelled (the replica \
                     would resync to the empty primary)"
                        .to_string(),
                )
            } else if self.restarts > MAX_RESTARTS {
                Some(format!("at most {MAX_RESTARTS} restarts can be explored"))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(ParamError(format!("--restarts {}: {why}", self.restarts)));
            }
        }
        if self.restarts_from_aof && self.safeguard.redis_nodes() > 0 {
            return Err(ParamError(format!(
                "--restart-from-aof: the append-only file is the single Redis's; {}'s nodes \
                 restart without persistence (--node-restarts K, --node-delayed-restarts K)",
                self.safeguard.name()
            )));
        }
        if self.restarts_from_aof && self.restarts == 0 {
            return Err(ParamError(
                "--restart-from-aof: it says what a restart reloads; give --restarts K (K from \
                 1 to 3) too"
                    .into(),
            ));
        }
        if self.aof_appendfsync != Appendfsync::Everysec && !self.restarts_from_aof {
            return Err(ParamError(format!(
                "--appendfsync {}: it says when the append-only file a crash reloads was \
                 fsynced; give --restarts K --restart-from-aof too",
                self.aof_appendfsync.name()
            )));
        }
        if self.redis_drift_percent != 0 {
            let why = if !(-99..=1000).contains(&self.redis_drift_percent) {
                Some("a clock rate error from -99% to +1000%".to_string())
            } else if self.safeguard.redis_nodes() > 0 {
                Some(format!(
                    "{} runs on independent nodes: their clocks drift with --node-drift",
                    self.safeguard.name()
                ))
            } else if !self.uses_redis() {
                Some(format!(
                    "{} keeps nothing in Redis: no Redis clock to drift",
                    self.safeguard.name()
                ))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(ParamError(format!(
                    "--redis-drift {:+}%: {why}",
                    self.redis_drift_percent
                )));
            }
        }
        if self.evictions > 0 {
            if !self.safeguard.has_fence_counter() {
                return Err(ParamError(format!(
                    "--evictions {}: {} has no fence counter to evict; the fenced safeguards \
                     have one",
                    self.evictions,
                    self.safeguard.name()
                )));
            }
            if self.evictions > MAX_RESTARTS {
                return Err(ParamError(format!(
                    "--evictions {}: at most {MAX_RESTARTS} evictions can be explored",
                    self.evictions
                )));
            }
        }
        self.validate_reply_faults()?;
        self.validate_redis_clock()?;
        if self.partitions > 0 {
            if !self.uses_redis() {
                return Err(ParamError(format!(
                    "--partitions {}: {} sends nothing to Redis, so no partition can cut it off; \
                     drop --partitions",
                    self.partitions,
                    self.safeguard.name()
                )));
            }
            if self.partitions > 2 {
                return Err(ParamError(format!(
                    "--partitions {}: an exhaustive check explores at most 2 (each one multiplies \
                     the state space by the callers, the servers and the moments it can strike); \
                     use --partitions 1",
                    self.partitions
                )));
            }
        }
        self.validate_node_faults()?;
        let horizon = self.horizon();
        if horizon > MAX_TICKS {
            return Err(ParamError(format!(
                "--horizon {horizon}: at most {MAX_TICKS} ticks; exhaustive checks need small \
                 bounds"
            )));
        }
        self.scenario().validate()
    }

    fn validate_reply_faults(&self) -> Result<(), ParamError> {
        let faults = self.reply_faults;
        for (flag, n) in [
            ("--lost-replies", faults.lost_replies),
            ("--dropped-connections", faults.dropped_connections),
        ] {
            if n > MAX_REPLY_FAULTS {
                return Err(ParamError(format!(
                    "{flag} {n}: an exhaustive check explores at most {MAX_REPLY_FAULTS} (each \
                     one multiplies the state space); use {flag} 1"
                )));
            }
            if n > 0 && !self.uses_redis() {
                return Err(ParamError(format!(
                    "{flag} {n}: {} sends nothing to Redis, so no Redis reply can go astray; \
                     drop {flag}",
                    self.safeguard.name()
                )));
            }
        }
        Ok(())
    }

    fn validate_redis_clock(&self) -> Result<(), ParamError> {
        let clock = self.redis_clock;
        if clock == ClockFaults::default() {
            return Ok(());
        }
        if self.safeguard.redis_nodes() > 0 {
            return Err(ParamError(format!(
                "--redis-clock-jumps/--redis-clock-slews: {} runs on independent nodes; their \
                 clocks jump and slew with --node-clock-jumps and --node-clock-slews",
                self.safeguard.name()
            )));
        }
        if !self.uses_redis() {
            return Err(ParamError(format!(
                "--redis-clock-jumps/--redis-clock-slews: {} keeps nothing in Redis: no Redis \
                 clock to step or slew; drop them",
                self.safeguard.name()
            )));
        }
        validate_clock(clock, "redis")
    }

    fn validate_node_faults(&self) -> Result<(), ParamError> {
        let faults = self.node_faults;
        if self.safeguard.redis_nodes() == 0 {
            if faults != NodeFaults::default() {
                return Err(ParamError(format!(
                    "{} locks on one Redis, not on independent nodes: the node faults \
                     (--node-restarts, --node-delayed-restarts, --node-clock-jumps, \
                     --node-clock-slews, --node-drift) apply to redlock and redlock-cas; drop \
                     them (the single Redis's clock: --redis-clock-jumps, --redis-clock-slews, \
                     --redis-drift)",
                    self.safeguard.name()
                )));
            }
            return Ok(());
        }
        for (flag, n) in [
            ("--node-restarts", faults.restarts),
            ("--node-delayed-restarts", faults.delayed_restarts),
            ("--node-clock-jumps", faults.clock_jumps),
        ] {
            if n > 2 {
                return Err(ParamError(format!(
                    "{flag} {n}: an exhaustive check explores at most 2 (each one multiplies the \
                     state space by the nodes and the moments it can strike); use {flag} 1"
                )));
            }
        }
        if faults.clock_jumps > 0 && faults.clock_jump_ms == 0 {
            return Err(ParamError(
                "--node-clock-jumps without --node-clock-jump: a jump of 0 changes nothing; \
                 add e.g. --node-clock-jump 5"
                    .into(),
            ));
        }
        if faults.clock_jump_ms > MAX_TICKS {
            return Err(ParamError(format!(
                "--node-clock-jump {}: at most {MAX_TICKS} ticks",
                faults.clock_jump_ms
            )));
        }
        if !(-99..=1000).contains(&faults.drift_percent) {
            return Err(ParamError(format!(
                "--node-drift {}%: a clock rate error must lie between -99% and +1000%",
                faults.drift_percent
            )));
        }
        // The jumps were checked above, with the flags' own words.
        validate_clock(
            ClockFaults {
                jumps: 0,
                jump_ms: 0,
                ..faults.clock()
            },
            "node",
        )
    }

    /// Refuses a horizon in which no caller can write its spend (see [`CheckConfig::timing`]).
    pub fn validate_bound(&self) -> Result<(), ParamError> {
        let horizon = self.horizon();
        let Some(timing) = self.timing() else {
            return Ok(());
        };
        if horizon < timing.first_write_tick {
            let every = match timing.all_settled_tick {
                Some(all) if self.callers > 1 => format!(
                    "; every caller can finish, one after another, by {}",
                    ticks_text(all)
                ),
                _ => String::new(),
            };
            return Err(ParamError(format!(
                "--horizon {horizon}: too short to mean anything: a caller alone needs {} to \
                 write its spend ({}, work {}), so every run would be cut off before a write \
                 and \"safe\" would be empty; the smallest meaningful horizon is {}{every} \
                 (the default is 2 x work + 2 x TTL + 4 = {})",
                ticks_text(timing.first_write_tick),
                self.safeguard.name(),
                ticks_text(self.work_ticks),
                timing.first_write_tick,
                self.default_horizon_ticks()
            )));
        }
        Ok(())
    }

    /// How long the protocol takes when nothing gets in its way: one caller alone, and every
    /// caller one after another. Worked out by running the model itself (no formula to keep
    /// in step with the machines). `None` when a lone caller does not write at all.
    pub fn timing(&self) -> Option<Timing> {
        let world_config = WorldConfig {
            max_pause_ms: None,
            horizon_ms: MAX_TICKS.saturating_mul(u64::from(self.callers.max(1)) + 1),
            failovers: 0,
            arrival_window_ms: 0,
        };
        let solo = CheckConfig {
            callers: 1,
            failovers: 0,
            ..*self
        };
        let mut world = World::new(&solo.scenario(), &solo.tokens(), world_config).ok()?;
        let first_write_tick = serial_run(&mut world)?;
        let mut all = World::new(&self.scenario(), &self.tokens(), world_config).ok()?;
        let all_settled_tick = serial_run(&mut all);
        // The earliest end over the delays before caller 1 starts: it may arrive just as the
        // lease expires rather than retry into it. Caller 0 stalls at once, so the lease
        // expires about TTL ticks in: the delays tried are the first few and those around the
        // TTL (trying every delay would cost TTL runs of TTL ticks each). A delay past the best
        // end cannot beat it.
        const AROUND_TICKS: u64 = 16;
        let mut delays: Vec<u64> = (0..=AROUND_TICKS)
            .chain(self.ttl_ticks.saturating_sub(AROUND_TICKS)..=self.ttl_ticks + AROUND_TICKS)
            .collect();
        delays.sort_unstable();
        delays.dedup();
        let mut overlap_tick: Option<u64> = None;
        for delay_ticks in delays {
            if overlap_tick.is_some_and(|best| delay_ticks >= best) {
                break;
            }
            let mut world = World::new(&self.scenario(), &self.tokens(), world_config).ok()?;
            if let Some(end) = overlap_run(&mut world, delay_ticks) {
                overlap_tick = Some(overlap_tick.map_or(end, |best| best.min(end)));
            }
        }
        Some(Timing {
            first_write_tick,
            all_settled_tick,
            overlap_tick,
        })
    }

    /// The bound this check is exhaustive to, in words.
    pub fn bound_text(&self) -> String {
        let pause = match self.max_pause_ticks {
            None => "unbounded pauses".to_string(),
            Some(p) => format!("pauses up to {p} ticks per caller"),
        };
        let failovers = match self.failovers {
            0 => String::new(),
            1 => ", 1 failover".to_string(),
            n => format!(", {n} failovers"),
        };
        let plural = |n: u32, one: &str, many: &str| match n {
            0 => String::new(),
            1 => format!(", 1 {one}"),
            n => format!(", {n} {many}"),
        };
        let restarts = if self.restarts_from_aof && self.aof_appendfsync == Appendfsync::Always {
            plural(
                self.restarts,
                "Redis crash reloading the AOF (always: fsynced before every reply)",
                "Redis crashes reloading the AOF (always: fsynced before every reply)",
            )
        } else if self.restarts_from_aof {
            let mode = self.aof_appendfsync.name();
            let period_ms = if self.aof_appendfsync == Appendfsync::No {
                30_000
            } else {
                1_000
            };
            let fsyncs = 1 + self.horizon() / period_ms;
            let more = if fsyncs == 1 {
                "once"
            } else {
                "up to {fsyncs} times"
            };
            let more = more.replace("{fsyncs}", &fsyncs.to_string());
            let why =
                format!("appendfsync {mode}: fsynced at the start, then {more} at any moment");
            plural(
                self.restarts,
                &format!("Redis crash reloading the AOF ({why})"),
                &format!("Redis crashes reloading the AOF ({why})"),
            )
        } else {
            plural(
                self.restarts,
                "Redis restart without persistence",
                "Redis restarts without persistence",
            )
        };
        let evictions = plural(
            self.evictions,
            "eviction of the fence counter",
            "evictions of the fence counter",
        );
        let lost = plural(self.reply_faults.lost_replies, "lost reply", "lost replies");
        let lost = lost
            + &plural(
                self.partitions,
                "partition (a caller cut off from a Redis server for good; what it sends there \
                 waits for its deadline)",
                "partitions (a caller cut off from a Redis server for good; what it sends there \
                 waits for its deadline)",
            );
        let nodes = match self.safeguard.redis_nodes() {
            0 => String::new(),
            n => {
                let faults = self.node_faults.describe();
                let faults = if faults.is_empty() {
                    String::new()
                } else {
                    format!(": {faults}")
                };
                format!(", {n} Redis nodes{faults}")
            }
        };
        let dropped = plural(
            self.reply_faults.dropped_connections,
            "dropped connection",
            "dropped connections",
        );
        let symmetry = if self.symmetry {
            ", callers up to symmetry"
        } else {
            ""
        };
        let on = match self.reply_faults.on {
            leaselab_model::world::FaultsOn::Any => String::new(),
            _ if !self.reply_faults.any() => String::new(),
            on => format!(" (on {} requests only)", on.name()),
        };
        let drift = match self.redis_drift_percent {
            0 => String::new(),
            pct => format!(", Redis's clock {pct:+}%"),
        };
        let drift = match self.redis_clock.describe("Redis's") {
            clock if clock.is_empty() => drift,
            clock => format!("{drift}, {clock}"),
        };
        format!(
            "{} callers, horizon {} ticks, {pause}{failovers}{restarts}{evictions}{lost}{dropped}{on}{nodes}{drift}{symmetry}",
            self.callers,
            self.horizon()
        )
    }
}

/// Checks the jumps and slews of a server clock (`who`: `redis` or `node`, as in the flags'
/// names: `--redis-clock-jumps`, `--node-clock-slew`, ...).
fn validate_clock(clock: ClockFaults, who: &str) -> Result<(), ParamError> {
    // Each kind: its flags' word, how many, how large, at most how many and why.
    let kinds = [
        (
            "jump",
            clock.jumps,
            clock.jump_ms,
            2,
            "an exhaustive check explores at most 2 (each one multiplies the state space by \
             the moments it can strike)",
        ),
        (
            "slew",
            clock.slews,
            clock.slew_ms,
            1,
            "a clock slews towards one offset at a time",
        ),
    ];
    for (kind, count, size_ms, most, why) in kinds {
        let flag = format!("--{who}-clock-{kind}");
        if count > most {
            return Err(ParamError(format!("{flag}s {count}: {why}; use {flag}s 1")));
        }
        if count > 0 && size_ms == 0 {
            return Err(ParamError(format!(
                "{flag}s without {flag}: a {kind} of 0 changes nothing; add e.g. {flag} 5"
            )));
        }
        if count == 0 && size_ms > 0 {
            return Err(ParamError(format!(
                "{flag} {size_ms} without {flag}s: say how many may strike, e.g. {flag}s 1"
            )));
        }
        if size_ms > MAX_TICKS {
            return Err(ParamError(format!(
                "{flag} {size_ms}: at most {MAX_TICKS} ticks"
            )));
        }
    }
    if clock.slews > 0 && !(1..=MAX_CLOCK_RATE_PPM).contains(&u64::from(clock.slew_rate_ppm)) {
        return Err(ParamError(format!(
            "--slew-rate {}ppm: a slew applies its offset at 1 to {MAX_CLOCK_RATE_PPM} ppm (NTP: \
             at most {NTP_SLEW_RATE_PPM})",
            clock.slew_rate_ppm
        )));
    }
    Ok(())
}
