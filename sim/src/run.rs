//! Runs one scenario with one seed on turmoil and reports what happened.
//!
//! The simulated data centre has a `redis` host (the stand-in over RESP), a `postgres` host
//! (the stand-in over the PostgreSQL wire protocol) and one host per caller, `app-1` …
//! `app-N`, each driving its own safeguard machine through the real `redis` and
//! `tokio-postgres` clients ([`crate::caller`]). The callers open their connections during a
//! short set-up phase and are released together (plus the scenario's start offsets).
//!
//! Everything is derived from the seed: turmoil's RNG (and through it every tokio runtime's),
//! each caller's ChaCha stream (its token, its backoffs, its network jitter) named after its
//! host, and the order in which the callers' links are served. The same scenario and seed give
//! the same event log, byte for byte, in any process; [`RunReport::digest`] identifies it.
//!
//! Defaults ([`SimConfig`]) are those of one data centre: a 1 ms tick, round trips of 1–3 ms
//! (see [`crate::caller`] for how the scenario's sub-millisecond latencies are used), a
//! replica that lags by the scenario's replication lag, go-redis's client timeouts.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use leaselab_model::client::ClientPolicy;
use leaselab_model::fault::Host;
use leaselab_model::ledger::{CallerResult, Ledger};
use leaselab_model::postgres::{Answer, PgError, Postgres, QueryResult, SessionId};
use leaselab_model::redis::{Redis, Reply, ScriptId};
use leaselab_model::safeguard::lock::token_text;
use leaselab_model::safeguard::{BalanceIn, CallerStats, Outcome, ParamError};
use leaselab_model::scenario::{Network, Scenario};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::clients::{node_host, POSTGRES_HOST, POSTGRES_PORT, REDIS_HOST, REDIS_PORT};
use crate::clock::{epoch, ClientCpu, ServerClock, Timeline, TimerWheel, EPOCH_UNIX_SECS, TICK};
use crate::driver::{drive, CallerEnd, CallerSpec, PausePlan, ReplyFaultPlan};
use crate::events::{digest, Event, EventLog, What};
use crate::faults::{node_clocks, server_clocks, Action, Schedule};
use crate::observer::{Observer, Protocol};
use crate::pg_server::{PgServer, PgService};
use crate::redis_server::{RedisServer, Replicas};
use crate::replication::{describe_effect, Replication};
use leaselab_model::redis::aof::Aof;
pub use trespass::Trespass;

mod durability;
mod trespass;

/// How the simulation runs (not what it runs: that is the [`Scenario`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Set-up time before the callers are released, for opening connections (they are all
    /// open after 4 ms: a TCP handshake, redis-rs's `CLIENT SETINFO`, PostgreSQL's startup).
    pub setup_ms: u64,
    /// The run stops this long after the release even if callers are still running (its
    /// time limit; [`run`] sets it from the scenario, [`time_limit_ms`]). At most
    /// [`MAX_TIME_LIMIT_MS`]; more is taken as that.
    pub horizon_ms: u64,
    /// How the clients react to timeouts and broken connections.
    pub client: ClientPolicy,
    /// Skip, at each step, the hosts with nothing to do (turmoil's `skip_idle_hosts`: no
    /// message for them, no task woken, no timer due). Exact: a run is the same event for
    /// event either way (`sim/tests/skip_idle.rs`); off only to check that.
    pub skip_idle_hosts: bool,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            setup_ms: 8,
            horizon_ms: DEFAULT_HORIZON_MS,
            client: ClientPolicy::default(),
            skip_idle_hosts: true,
        }
    }
}

/// The horizon of [`SimConfig::default`], and the least time limit [`time_limit_ms`] gives.
pub const DEFAULT_HORIZON_MS: u64 = 120_000;

/// The most simulated time one run may take after the release (1 hour). Idle steps are
/// skipped in one go, but a step in which something happens costs CPU however long the run
/// is, so this bounds the work of one run.
pub const MAX_TIME_LIMIT_MS: u64 = 3_600_000;

/// How long the simulation lets `scenario` run after the release before it stops and calls
/// the run unfinished, and how long the scenario may need: `(limit, needed)`.
///
/// `needed` follows from the scenario and the client policy: the longest a caller can take
/// ([`Scenario::longest_caller_ms`], with every request allowed its full deadline), plus the
/// set-up's connection deadlines and a second of slack. Every valid scenario finishes within
/// it. The limit is `needed`, but never less than [`DEFAULT_HORIZON_MS`] (so a run that
/// finished under the former fixed horizon runs exactly as before) and never more than
/// [`MAX_TIME_LIMIT_MS`] (when `needed` is larger, the run may stop unfinished:
/// inconclusive).
pub fn time_limit_ms(scenario: &Scenario, client: &ClientPolicy) -> (u64, u64) {
    let request_ms = client
        .read_timeout_ms
        .max(client.sql_timeout_ms.unwrap_or(0))
        .max(client.dial_timeout_ms)
        // Each message may also wait for the network's latency.
        .saturating_add(2 * scenario.network.latency_max_us.div_ceil(1_000));
    let needed = scenario
        .longest_caller_ms(request_ms)
        .saturating_add(2 * client.dial_timeout_ms)
        .saturating_add(1_000);
    (needed.clamp(DEFAULT_HORIZON_MS, MAX_TIME_LIMIT_MS), needed)
}

impl SimConfig {
    /// The default configuration with the time limit `scenario` needs ([`time_limit_ms`]).
    pub fn for_scenario(scenario: &Scenario) -> SimConfig {
        let mut config = SimConfig::default();
        config.horizon_ms = time_limit_ms(scenario, &config.client).0;
        config
    }
}

/// One caller's part in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallerReport {
    /// 1-based.
    pub caller: u32,
    /// Its host, `app-N`.
    pub host: String,
    /// How it ended (none: still running at the horizon).
    pub outcome: Option<Outcome>,
    /// Its counters.
    pub stats: CallerStats,
    /// When it finished, ms after the release.
    pub done_at_ms: Option<u64>,
}

/// What one run did and how it is judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    /// What ran.
    pub scenario: Scenario,
    /// With which seed.
    pub seed: u64,
    /// The ledger check: the tutorial's line and the counters.
    pub ledger: Ledger,
    /// Each caller's outcome and counters.
    pub callers: Vec<CallerReport>,
    /// Everything that happened, in order.
    pub events: Vec<Event>,
    /// SHA-1 of the event log ([`RunReport::digest`]), computed when first asked for: a
    /// batch of runs that saves and prints no digest does not pay for one.
    digest: std::sync::OnceLock<String>,
    /// From the release to the last caller's end (or the horizon), ms.
    pub elapsed_ms: u64,
    /// `wallets.fence` at the end (balance in PostgreSQL only).
    pub final_fence: Option<i64>,
    /// The Redis fence counter at the end, if it exists.
    pub fence_counter: Option<i64>,
    /// The lock key still exists at the end.
    pub lock_left_behind: bool,
    /// Every caller finished before the horizon.
    pub finished: bool,
    /// Fencing tokens handed out, in order (by the fenced-acquire script).
    pub tokens_issued: Vec<i64>,
    /// How many of them repeat an earlier one (a failover lost an `INCR`).
    pub tokens_reissued: u32,
    /// Commands that deleted or extended a lock their sender did not hold, as the Redis
    /// server reported them (a release or refresh that checks no token, after its lease
    /// expired and another caller took the lock). Left out of the JSON when empty.
    pub trespasses: Vec<Trespass>,
    /// The balance was missing or unreadable at the end (reported as `i64::MIN`).
    pub balance_missing: bool,
    /// How many times a host's runtime was entered (turmoil's `Sim::host_ticks`): the work
    /// the simulation did, not part of what the run did (the event log and digest are the
    /// same with idle hosts skipped or not).
    pub host_ticks: u64,
}

/// How a run is judged: the ledger's verdict, unless callers were still running when the run
/// stopped at its time limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RunVerdict {
    /// Every caller finished, the ledger holds, and at least one spend reached the storage.
    Ok,
    /// The ledger is broken in a way no unfinished caller can explain.
    Broken,
    /// No verdict: callers were still running at the time limit, and what the ledger shows so
    /// far may still be their doing; or every caller finished without a spend reaching the
    /// storage (each failed, gave up, lost its lock or found too little money), so the ledger
    /// was never put to the test ([`RunReport::untested`]).
    Inconclusive,
}

impl RunVerdict {
    /// `OK`, `BROKEN` or `INCONCLUSIVE`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunVerdict::Ok => "OK",
            RunVerdict::Broken => "BROKEN",
            RunVerdict::Inconclusive => "INCONCLUSIVE",
        }
    }
}

impl RunReport {
    /// SHA-1 of the event log: equal digests, equal runs. Computed once, from `events` as
    /// they are when first asked for (nothing changes them after the run).
    pub fn digest(&self) -> &str {
        self.digest.get_or_init(|| digest(&self.events))
    }

    /// The run's verdict.
    ///
    /// A finished run is judged by its ledger: BROKEN when it is broken, OK when it holds and
    /// some spend was put to the storage, INCONCLUSIVE when none was ([`RunReport::untested`]:
    /// a ledger nobody wrote to holds whatever the safeguard does). An unfinished one (stopped at its time limit)
    /// is BROKEN only when the violation is already visible: the balance is negative, or it
    /// is not `initial - amount * a` for any number `a` of accepted spends between those
    /// acknowledged and those plus the unfinished callers (each may have a write in flight
    /// that lands without its acknowledgement). Otherwise (also when the balance is missing,
    /// which a later write may restore) it is INCONCLUSIVE, never OK.
    pub fn verdict(&self) -> RunVerdict {
        let ledger = &self.ledger;
        let broken = ledger.verdict == leaselab_model::ledger::Verdict::Broken;
        if self.finished {
            return if broken {
                RunVerdict::Broken
            } else if self.untested() {
                RunVerdict::Inconclusive
            } else {
                RunVerdict::Ok
            };
        }
        let unfinished = i64::from(self.unfinished());
        let acknowledged = i64::from(ledger.accepted);
        let explained_by_the_unfinished = || {
            if !ledger.wallets.is_empty() {
                // Transfers: an unfinished caller moves money, never spends it.
                return ledger.verdict == leaselab_model::ledger::Verdict::Ok;
            }
            let Some(spent) = ledger.initial_balance.checked_sub(ledger.final_balance) else {
                return false;
            };
            ledger.final_balance >= 0
                && ledger.amount > 0
                && spent % ledger.amount == 0
                && (acknowledged..=acknowledged + unfinished).contains(&(spent / ledger.amount))
        };
        // A missing balance may still be written back by an unfinished caller.
        let explained = self.balance_missing || explained_by_the_unfinished();
        if explained {
            RunVerdict::Inconclusive
        } else {
            RunVerdict::Broken
        }
    }

    /// True when every caller finished, the ledger holds, and yet no spend reached the storage:
    /// none was accepted, refused by the storage, or landed unacknowledged. Every caller failed,
    /// gave up, lost its lock or found too little money, so nothing the safeguard guards
    /// happened, and the ledger holding proves nothing about it.
    pub fn untested(&self) -> bool {
        let ledger = &self.ledger;
        self.finished
            && ledger.verdict == leaselab_model::ledger::Verdict::Ok
            && ledger.accepted == 0
            && ledger.rejected == 0
            && ledger.unacknowledged == 0
    }

    /// True when the run is BROKEN ([`RunReport::verdict`]).
    pub fn broken(&self) -> bool {
        self.verdict() == RunVerdict::Broken
    }

    /// True when the run stopped at its time limit with no verdict.
    pub fn inconclusive(&self) -> bool {
        self.verdict() == RunVerdict::Inconclusive
    }

    /// The ledger's line, e.g. `accepted=1 balance=90 expected=90 OK`, with the run's
    /// verdict as its last word (`INCONCLUSIVE` for an unfinished or untested run, which proves
    /// nothing).
    pub fn line(&self) -> String {
        let ledger = &self.ledger;
        if self.finished && !self.untested() {
            return ledger.line();
        }
        ledger.line_with(self.verdict().as_str())
    }

    /// How many callers were still running when the run stopped.
    pub fn unfinished(&self) -> u32 {
        self.callers.iter().filter(|c| c.outcome.is_none()).count() as u32
    }

    /// The report as JSON (scenario and outcomes described, events in full), keys in the
    /// order of [`RunReport`]'s fields.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("reports serialise")
    }
}

impl Serialize for RunReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let scenario = &self.scenario;
        let ledger = &self.ledger;
        ReportView {
            scenario: ScenarioView {
                name: &scenario.name,
                safeguard: scenario.safeguard.name(),
                callers: scenario.callers,
                initial_balance: scenario.initial_balance,
                initial_fence_counter: scenario.initial_fence_counter,
                amount: scenario.params.amount,
                work_ms: scenario.params.work_ms,
                ttl_ms: scenario.params.ttl_ms,
                acquire_timeout_ms: scenario.params.acquire_timeout_ms,
                start_offsets_ms: &scenario.start_offsets_ms,
                faults: scenario.faults.iter().map(|f| f.describe()).collect(),
                latency_min_us: scenario.network.latency_min_us,
                latency_max_us: scenario.network.latency_max_us,
                replication_lag_ms: scenario.network.replication_lag_ms,
            },
            seed: self.seed,
            line: self.line(),
            verdict: self.verdict().as_str(),
            untested: self.untested(),
            unfinished: self.unfinished(),
            ledger,
            callers: self
                .callers
                .iter()
                .map(|c| CallerView {
                    caller: c.caller,
                    host: &c.host,
                    outcome: c.outcome.as_ref().map(Outcome::name),
                    detail: c.outcome.as_ref().map(describe_outcome),
                    busy_retries: c.stats.busy_retries,
                    stale_releases_refused: c.stats.stale_releases_refused,
                    refreshes: c.stats.refreshes,
                    done_at_ms: c.done_at_ms,
                })
                .collect(),
            elapsed_ms: self.elapsed_ms,
            final_fence: self.final_fence,
            fence_counter: self.fence_counter,
            lock_left_behind: self.lock_left_behind,
            finished: self.finished,
            tokens_issued: &self.tokens_issued,
            tokens_reissued: self.tokens_reissued,
            balance_missing: self.balance_missing,
            trespasses: self.trespasses.iter().map(Trespass::describe).collect(),
            digest: self.digest(),
            events: &self.events,
        }
        .serialize(serializer)
    }
}

/// [`RunReport`] as it is serialised.
#[derive(Serialize)]
struct ReportView<'a> {
    scenario: ScenarioView<'a>,
    seed: u64,
    line: String,
    verdict: &'static str,
    /// Present (true) only for a run in which no spend reached the storage.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    untested: bool,
    unfinished: u32,
    ledger: &'a Ledger,
    callers: Vec<CallerView<'a>>,
    elapsed_ms: u64,
    final_fence: Option<i64>,
    fence_counter: Option<i64>,
    lock_left_behind: bool,
    finished: bool,
    tokens_issued: &'a [i64],
    tokens_reissued: u32,
    balance_missing: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    trespasses: Vec<String>,
    digest: &'a str,
    events: &'a [Event],
}

/// The scenario as `run --json` shows it: faults in words, the network flattened. A view
/// only, never loaded back; the loadable schema is the trace's `ScenarioSpec` (root crate,
/// which this crate cannot depend on), so the two stay apart.
#[derive(Serialize)]
struct ScenarioView<'a> {
    name: &'a str,
    safeguard: String,
    callers: u32,
    initial_balance: i64,
    initial_fence_counter: i64,
    amount: i64,
    work_ms: u64,
    ttl_ms: u64,
    acquire_timeout_ms: Option<u64>,
    start_offsets_ms: &'a [u64],
    faults: Vec<String>,
    latency_min_us: u64,
    latency_max_us: u64,
    replication_lag_ms: u64,
}

#[derive(Serialize)]
struct CallerView<'a> {
    caller: u32,
    host: &'a str,
    outcome: Option<&'static str>,
    detail: Option<String>,
    busy_retries: u32,
    stale_releases_refused: u32,
    refreshes: u32,
    done_at_ms: Option<u64>,
}

/// An outcome in words, e.g. `accepted (read 100, fence 33)` ([`Outcome::describe`]).
pub fn describe_outcome(outcome: &Outcome) -> String {
    outcome.describe()
}

/// A ChaCha stream for `name` (a host, or `world`) in the run with `seed`.
pub fn host_rng(seed: u64, name: &str) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(fnv1a(name.as_bytes()));
    rng
}

/// FNV-1a, 64 bits: a stable hash of a host name.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The most callers a simulated run takes: each caller is a turmoil host, and turmoil's work
/// per 1 ms step grows with the square of the number of hosts (measured: 20 callers 44 µs,
/// 40 callers 157 µs, 60 callers 381 µs per step). At 500 callers a step costs about 25 ms,
/// so a run of a few simulated seconds takes minutes; at 1000 it would be four times that.
pub const MAX_SIM_CALLERS: u32 = 500;

/// Checks that the simulation can run `scenario` ([`Scenario::validate`], the faults, the
/// number of hosts); the error says what to change.
pub fn validate(scenario: &Scenario) -> Result<(), ParamError> {
    scenario.validate()?;
    crate::faults::validate(scenario)?;
    if scenario.callers > MAX_SIM_CALLERS {
        return Err(ParamError(format!(
            "the simulation runs at most {MAX_SIM_CALLERS} callers, one host each (got {}); \
             use --callers {MAX_SIM_CALLERS} or fewer",
            scenario.callers
        )));
    }
    Ok(())
}

/// Runs `scenario` with `seed` and the default [`SimConfig`] with the time limit the
/// scenario needs ([`SimConfig::for_scenario`]).
pub fn run(scenario: &Scenario, seed: u64) -> Result<RunReport, ParamError> {
    run_with(scenario, seed, &SimConfig::for_scenario(scenario))
}

/// Runs `scenario` with `seed`. Refuses a scenario it cannot run (the error says why and how
/// to fix it) before anything runs.
pub fn run_with(
    scenario: &Scenario,
    seed: u64,
    config: &SimConfig,
) -> Result<RunReport, ParamError> {
    validate(scenario)?;
    let timeline = Timeline::with_tick(config.setup_ms, scenario.timing.tick_us);
    let (shared, specs) = shared_world(scenario, seed, config, timeline)?;
    let horizon = timeline.at_ms(config.horizon_ms.min(MAX_TIME_LIMIT_MS));
    let mut sim = new_sim(scenario, seed, horizon, config);
    host_servers(&mut sim, &shared);
    host_callers(&mut sim, specs, &shared, seed);
    let finished = step_to_the_end(&mut sim, &shared, scenario, &timeline, horizon);
    if let Some(stopped) = leaselab_model::redis::lua::first_stopped_script() {
        // A real Redis would still be running that script and answer BUSY to everyone else:
        // whatever this run shows is not what the safeguard does.
        return Err(ParamError(format!(
            "a safeguard's Lua {stopped}, so it was stopped and the run has no verdict"
        )));
    }
    // Every timer of the hosts is declared (`driver::sleep`, `timeout_at`), so a skipped host
    // never has one fire late; one that did would make this run differ from a stepped one.
    assert_eq!(
        sim.missed_wakes(),
        0,
        "a host's undeclared timer fired while the host was skipped"
    );
    let end = sim.elapsed();
    let host_ticks = sim.host_ticks();
    let events = shared.record.events.take();
    drop(sim);
    let mut report = report(scenario, seed, &shared, events, end, finished);
    report.host_ticks = host_ticks;
    Ok(report)
}

/// What the hosts share: the seeded stand-ins, the replica, the servers' clocks, the lock's
/// owners, the event log; and the callers' machines, each with its token from its own stream.
fn shared_world(
    scenario: &Scenario,
    seed: u64,
    config: &SimConfig,
    timeline: Timeline,
) -> Result<(Rc<Shared>, Vec<CallerSpec>), ParamError> {
    let keys = &scenario.params.keys;
    let (mut redis, mut postgres) = scenario.seeded_stand_ins();
    // `random()` and `gen_random_uuid()` in a safeguard's SQL vary with the run's seed (taken
    // as it is: nothing is drawn from the run's streams, so every other event stays the same).
    postgres.set_random_seed(seed);
    let initial_effects = redis.drain_effects();
    let replication = Schedule::needs_replica(scenario).then(|| {
        Replication::new(
            &initial_effects,
            timeline.raw(Duration::from_millis(scenario.network.replication_lag_ms)),
        )
    });
    let aof = Schedule::appendfsync(scenario)
        .map(|appendfsync| Aof::new(appendfsync, &initial_effects, 0));
    let (primary_clock, replica_clock) = server_clocks(scenario, &timeline);
    let nodes = node_clocks(scenario, &timeline)
        .into_iter()
        .map(|clock| Node {
            redis: Rc::new(RefCell::new(Redis::new())),
            clock,
        })
        .collect();
    let (specs, owners) = caller_specs(scenario, seed)?;
    let shared = Rc::new(Shared {
        conditions: Conditions {
            timeline,
            policy: config.client,
            network: scenario.network,
            client_cpu: ClientCpu::new(scenario.timing.client_cpu_us, timeline.tick_us()),
            timers: TimerWheel::new(scenario.timing.timer_us, scenario.timing.timer_lag_us, seed),
        },
        servers: Servers {
            redis: Rc::new(RefCell::new(redis)),
            postgres: Rc::new(RefCell::new(postgres)),
            replication: RefCell::new(replication),
            aof: RefCell::new(aof),
            primary_clock,
            replica_clock,
            failed_over: Cell::new(false),
            nodes,
            deadlock_timeout: timeline.raw(Duration::from_millis(scenario.deadlock_timeout_ms)),
            pg_service: PgService {
                first_statement: timeline
                    .raw(Duration::from_micros(scenario.timing.pg_first_statement_us)),
                first_statement_tail: timeline.raw(Duration::from_micros(
                    scenario.timing.pg_first_statement_tail_us,
                )),
                seed,
                commit: timeline.raw(Duration::from_micros(scenario.timing.pg_commit_us)),
            },
        },
        watch: Watch {
            lock: scenario.safeguard.uses_lock().then(|| LockWatch {
                key: keys.lock.clone(),
                owners,
                holder: RefCell::new(None),
                holder_expires_at_ms: Cell::new(None),
            }),
            fenced_acquire_sha: ScriptId::FencedAcquire.sha1_hex(),
            fence_key: keys.fence.clone(),
            tokens_issued: RefCell::new(Vec::new()),
            trespasses: RefCell::new(Vec::new()),
        },
        record: Record {
            events: EventLog::new(),
            ends: RefCell::new(vec![None; scenario.callers as usize]),
            clients: RefCell::new(BTreeMap::new()),
        },
        step_now: Cell::new(Duration::ZERO),
    });
    Ok((shared, specs))
}

/// The turmoil simulation: seeded, no network latency of its own (the callers add theirs),
/// running a second past the horizon, skipping idle hosts unless `config` says not to.
fn new_sim(
    scenario: &Scenario,
    seed: u64,
    horizon: Duration,
    config: &SimConfig,
) -> turmoil::Sim<'static> {
    turmoil::Builder::new()
        .skip_idle_hosts(config.skip_idle_hosts)
        .epoch(epoch())
        .rng_seed(seed)
        .tick_duration(TICK)
        .min_message_latency(Duration::ZERO)
        .max_message_latency(Duration::ZERO)
        .simulation_duration(horizon + Duration::from_secs(1))
        // A server's accept backlog holds every caller's connection attempt to it (turmoil
        // panics past it, 64 by default): room for two connections per caller.
        .tcp_capacity((scenario.callers as usize * 2 + 16).max(64))
        .build()
}

/// The Redis and PostgreSQL hosts. Servers go first: they are ticked before the callers in
/// every step, which makes a round trip one tick (see `caller`).
///
/// The Redis server answers `WAIT` from the replication stream ([`ReplicaView`]).
fn host_servers(sim: &mut turmoil::Sim<'_>, shared: &Rc<Shared>) {
    let observer: Rc<dyn Observer> = Rc::new(RunObserver {
        shared: shared.clone(),
    });
    let clock_shared = shared.clone();
    let clock_ms = Rc::new(move || {
        let now = turmoil::sim_elapsed().unwrap_or_else(|| clock_shared.step_now.get());
        clock_shared.server_ms(now)
    });
    let millisecond = shared.conditions.timeline.raw(Duration::from_millis(1));
    let redis_server = RedisServer::new(shared.servers.redis.clone(), clock_ms, observer.clone())
        .with_replicas(Rc::new(ReplicaView(shared.clone())))
        .with_millisecond(millisecond);
    sim.host(REDIS_HOST, move || {
        let server = redis_server.clone();
        async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", REDIS_PORT)).await?;
            server.serve_turmoil(listener).await?;
            Ok(())
        }
    });
    for (index, node) in shared.servers.nodes.iter().enumerate() {
        let number = index as u8 + 1;
        let clock_shared = shared.clone();
        let clock_ms = Rc::new(move || {
            let now = turmoil::sim_elapsed().unwrap_or_else(|| clock_shared.step_now.get());
            clock_shared.node_ms(number, now)
        });
        let node_observer: Rc<dyn Observer> = Rc::new(NodeObserver {
            shared: shared.clone(),
            node: number,
        });
        let node_server = RedisServer::new(node.redis.clone(), clock_ms, node_observer)
            .with_millisecond(millisecond);
        sim.host(node_host(number), move || {
            let server = node_server.clone();
            async move {
                let listener = turmoil::net::TcpListener::bind(("0.0.0.0", REDIS_PORT)).await?;
                server.serve_turmoil(listener).await?;
                Ok(())
            }
        });
    }
    // PostgreSQL's wall clock: the simulation's epoch plus run time (no clock faults).
    let pg_clock_shared = shared.clone();
    let pg_clock = Rc::new(move || {
        let now = turmoil::sim_elapsed().unwrap_or_else(|| pg_clock_shared.step_now.get());
        let run_us = pg_clock_shared.conditions.timeline.run_us(now);
        let unix_us = EPOCH_UNIX_SECS * 1_000_000 + run_us;
        leaselab_model::postgres::datetime::from_unix_micros(unix_us as i64)
    });
    let pg_server = PgServer::new(shared.servers.postgres.clone(), observer.clone())
        .with_deadlock_timeout(shared.servers.deadlock_timeout)
        .with_service(shared.servers.pg_service)
        .with_clock(pg_clock);
    sim.host(POSTGRES_HOST, move || {
        let server = pg_server.clone();
        async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", POSTGRES_PORT)).await?;
            server.serve_turmoil(listener).await?;
            Ok(())
        }
    });
}

/// The caller hosts, in a seeded order: a server serves messages that arrive in the same
/// tick in its links' order, so no caller is always first.
fn host_callers(
    sim: &mut turmoil::Sim<'_>,
    mut specs: Vec<CallerSpec>,
    shared: &Rc<Shared>,
    seed: u64,
) {
    specs.shuffle(&mut host_rng(seed, "world"));
    for spec in specs {
        let name = spec.name.clone();
        // The caller host: set up, wait for the release, drive the machine to its end (its
        // surroundings on turmoil are in `crate::caller`).
        let shared = shared.clone();
        // Boxed at once: the driver's future is large (kilobytes), and turmoil and tokio move
        // the host's future several times before it first runs.
        let driven = Box::pin(drive(spec, shared));
        sim.client(name, async move {
            driven.await;
            Ok(())
        });
    }
}

/// Steps the simulation until every host is done (true) or the horizon passes (false). At
/// each step, before the hosts' tick: the release, the faults due, replication and lease
/// expiry.
fn step_to_the_end(
    sim: &mut turmoil::Sim<'_>,
    shared: &Shared,
    scenario: &Scenario,
    timeline: &Timeline,
    horizon: Duration,
) -> bool {
    let mut schedule = Schedule::new(scenario, timeline);
    let mut released = false;
    let mut now = sim.elapsed();
    loop {
        shared.step_now.set(now);
        if !released && now >= timeline.release {
            released = true;
            shared.log(
                now,
                "world",
                What::Released {
                    callers: scenario.callers,
                },
            );
        }
        while let Some(action) = schedule.due(now) {
            shared.apply(sim, now, action);
        }
        shared.after_step(now);
        // Nothing due between steps before `next`: the simulation may skip the steps in which
        // no host has anything to do up to it, in one go.
        let next = [
            (!released).then_some(timeline.release),
            schedule.next_at(),
            shared.next_by_itself(now),
            Some(horizon),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(horizon);
        let skipped = next > now && sim.skip_idle_steps(next) > 0;
        if !skipped {
            let done = match sim.step() {
                Ok(done) => done,
                Err(error) => panic!("the simulation failed: {error}"),
            };
            if done {
                return true;
            }
        }
        if leaselab_model::redis::lua::first_stopped_script().is_some() {
            // A script that had to be stopped voids the run (see `run_with`): no need to go on.
            return false;
        }
        now = sim.elapsed();
        if now >= horizon {
            let unfinished = shared
                .record
                .ends
                .borrow()
                .iter()
                .filter(|e| e.is_none())
                .count();
            shared.log(
                now,
                "world",
                What::Horizon {
                    unfinished: unfinished as u32,
                },
            );
            return false;
        }
    }
}

/// Who owns which lock token: the token's text, the caller's host.
pub(crate) type Owners = BTreeMap<Vec<u8>, String>;

/// Every caller of `scenario` with its machine, its random stream (named after its host, its
/// token drawn first) and its pauses, and who owns which lock token.
pub(crate) fn caller_specs(
    scenario: &Scenario,
    seed: u64,
) -> Result<(Vec<CallerSpec>, Owners), ParamError> {
    let mut specs = Vec::with_capacity(scenario.callers as usize);
    let mut owners = BTreeMap::new();
    // Redlock's callers connect to each node on their first request to it.
    let uses_redis = scenario.safeguard.redis_nodes() == 0
        && (scenario.safeguard.uses_lock() || scenario.balance_in() == BalanceIn::Redis);
    let uses_postgres = scenario.balance_in() == BalanceIn::Postgres;
    for index in 1..=scenario.callers {
        let name = Host::Caller(index).name();
        let mut rng = host_rng(seed, &name);
        let token: u128 = rng.random();
        owners.insert(token_text(token), name.clone());
        specs.push(CallerSpec {
            index,
            machine: scenario
                .safeguard
                .build_caller(&scenario.params, index, token)?,
            rng,
            start_offset_ms: scenario.start_offset_ms(index as usize - 1),
            pauses: PausePlan::for_caller(scenario, index),
            reply_faults: ReplyFaultPlan::for_caller(scenario, index),
            uses_redis,
            uses_postgres,
            name,
        });
    }
    Ok((specs, owners))
}

/// Builds the report once the simulation has stopped.
fn report(
    scenario: &Scenario,
    seed: u64,
    shared: &Shared,
    events: Vec<Event>,
    end: Duration,
    finished: bool,
) -> RunReport {
    let keys = &scenario.params.keys;
    let server_ms = shared.server_ms(end);
    let redis = shared.servers.redis.borrow();
    let read_i64 = |key: &[u8]| {
        redis
            .peek(key, server_ms)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(|text| text.parse::<i64>().ok())
    };
    let (balances, final_fence) = match scenario.balance_in() {
        BalanceIn::Redis => (vec![read_i64(&keys.balance)], None),
        BalanceIn::Postgres => {
            let postgres = shared.servers.postgres.borrow();
            let wallet = postgres.wallet(scenario.params.wallet_id);
            let balances = scenario
                .wallet_ids()
                .into_iter()
                .map(|id| postgres.wallet(id).map(|w| w.balance))
                .collect();
            (balances, wallet.map(|w| w.fence))
        }
    };
    let fence_counter = read_i64(&keys.fence);
    let on_a_node = shared.servers.nodes.iter().any(|node| {
        node.redis
            .borrow()
            .peek(&keys.lock, node.clock.now_ms(end))
            .is_some()
    });
    let lock_left_behind = scenario.safeguard.uses_lock()
        && (redis.peek(&keys.lock, server_ms).is_some() || on_a_node);
    let ends = shared.record.ends.borrow();
    let tokens_issued = shared.watch.tokens_issued.borrow().clone();
    let mut report = assemble(
        scenario,
        seed,
        &ends,
        FinalState {
            balances,
            final_fence,
            fence_counter,
            lock_left_behind,
        },
        events,
        if finished {
            Ok(())
        } else {
            Err(shared.conditions.timeline.caller_ms(end))
        },
        tokens_issued,
    );
    report.trespasses = shared.watch.trespasses.take();
    report
}

/// What the servers hold at the end of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FinalState {
    /// The balance of each wallet of the run, as [`Scenario::wallet_ids`] orders them (none:
    /// missing or unreadable).
    pub(crate) balances: Vec<Option<i64>>,
    /// `wallets.fence` (balance in PostgreSQL only).
    pub(crate) final_fence: Option<i64>,
    /// The Redis fence counter, if it exists.
    pub(crate) fence_counter: Option<i64>,
    /// The lock key still exists.
    pub(crate) lock_left_behind: bool,
}

/// Builds a report from the callers' ends and the final state, however the run was driven.
/// `finished` is `Err(elapsed_ms)` when the run stopped at its horizon.
pub(crate) fn assemble(
    scenario: &Scenario,
    seed: u64,
    ends: &[Option<CallerEnd>],
    state: FinalState,
    events: Vec<Event>,
    finished: Result<(), u64>,
    tokens_issued: Vec<i64>,
) -> RunReport {
    let callers: Vec<CallerReport> = ends
        .iter()
        .enumerate()
        .map(|(index, end)| CallerReport {
            caller: index as u32 + 1,
            host: Host::Caller(index as u32 + 1).name(),
            outcome: end.as_ref().map(|e| e.outcome.clone()),
            stats: end.as_ref().map(|e| e.stats).unwrap_or_default(),
            done_at_ms: end.as_ref().map(|e| e.done_at_ms),
        })
        .collect();
    let results: Vec<CallerResult> = callers
        .iter()
        .map(|c| CallerResult {
            caller: c.caller,
            outcome: c.outcome.clone(),
            stats: c.stats,
            // The simulation judges by what callers were told; telling a landed write from
            // the servers' reports is left to the model's world for now.
            write_landed: false,
        })
        .collect();
    let ledger = scenario.judge(&results, &state.balances);
    let elapsed_ms = match finished {
        Ok(()) => callers
            .iter()
            .filter_map(|c| c.done_at_ms)
            .max()
            .unwrap_or(0),
        Err(elapsed_ms) => elapsed_ms,
    };
    let mut seen = std::collections::BTreeSet::new();
    let tokens_reissued = tokens_issued.iter().filter(|t| !seen.insert(**t)).count() as u32;
    RunReport {
        scenario: scenario.clone(),
        seed,
        ledger,
        callers,
        digest: std::sync::OnceLock::new(),
        events,
        elapsed_ms,
        final_fence: state.final_fence,
        fence_counter: state.fence_counter,
        lock_left_behind: state.lock_left_behind,
        finished: finished.is_ok(),
        tokens_issued,
        tokens_reissued,
        trespasses: Vec::new(),
        balance_missing: state.balances.iter().any(Option::is_none),
        host_ticks: 0,
    }
}

/// Who holds the lock, as the primary stores it.
struct LockWatch {
    key: Vec<u8>,
    owners: BTreeMap<Vec<u8>, String>,
    holder: RefCell<Option<Vec<u8>>>,
    /// The holder's expiry as last seen (server clock).
    holder_expires_at_ms: Cell<Option<u64>>,
}

impl LockWatch {
    fn owner(&self, value: &[u8]) -> String {
        self.owners
            .get(value)
            .cloned()
            .unwrap_or_else(|| String::from_utf8_lossy(value).into_owned())
    }
}

/// The state every host of a run shares (all hosts run on one thread), in four parts.
pub(crate) struct Shared {
    /// What the callers run in.
    pub(crate) conditions: Conditions,
    /// The stand-ins as the hosts reach them.
    servers: Servers,
    /// Who holds the lock, and the fencing tokens issued.
    watch: Watch,
    /// What the run leaves behind.
    pub(crate) record: Record,
    /// Simulated time of the current step (for what happens outside a host's tick).
    step_now: Cell<Duration>,
}

/// What the callers run in: where the release lies, the clients' policy, the network's
/// timing, the client CPU they share.
pub(crate) struct Conditions {
    pub(crate) timeline: Timeline,
    pub(crate) policy: ClientPolicy,
    pub(crate) network: Network,
    pub(crate) client_cpu: ClientCpu,
    /// The callers' timers ([`Timing::timer_us`](leaselab_model::scenario::Timing::timer_us)).
    pub(crate) timers: TimerWheel,
}

/// The stand-ins: the serving Redis and PostgreSQL, the replica's stream (until a failover
/// promotes it), each Redis server's wall clock, and whether the replica serves now.
struct Servers {
    redis: Rc<RefCell<Redis>>,
    postgres: Rc<RefCell<Postgres>>,
    replication: RefCell<Option<Replication>>,
    /// The primary's append-only file, when the run crashes Redis with one (its clock: ms
    /// since the release).
    aof: RefCell<Option<Aof>>,
    primary_clock: ServerClock,
    replica_clock: ServerClock,
    failed_over: Cell<bool>,
    /// Redlock's independent nodes (node n at index n − 1; none for a single-Redis
    /// safeguard), each with its own keyspace and wall clock, no replication between them.
    nodes: Vec<Node>,
    /// PostgreSQL's `deadlock_timeout`, in turmoil's time.
    deadlock_timeout: Duration,
    /// PostgreSQL's answering time beyond the network, in turmoil's time.
    pg_service: PgService,
}

/// One Redlock node: its keyspace and its wall clock (with its jumps and drift).
struct Node {
    redis: Rc<RefCell<Redis>>,
    clock: ServerClock,
}

/// The lock's watch: the lock key's holder as the serving Redis stores it (when the
/// safeguard uses a lock), and every token the fenced acquire script issued.
struct Watch {
    lock: Option<LockWatch>,
    fenced_acquire_sha: String,
    fence_key: Vec<u8>,
    tokens_issued: RefCell<Vec<i64>>,
    /// Requests that deleted or extended a lock their sender did not hold.
    trespasses: RefCell<Vec<Trespass>>,
}

/// The run's record: the event log, how each caller ended, and which caller host is on
/// which server connection.
pub(crate) struct Record {
    pub(crate) events: EventLog,
    ends: RefCell<Vec<Option<CallerEnd>>>,
    clients: RefCell<BTreeMap<(&'static str, u64), String>>,
}

/// `WAIT`'s view of the replication stream: the primary's offset and what the replica has
/// applied (no replica: none acknowledges).
struct ReplicaView(Rc<Shared>);

impl Replicas for ReplicaView {
    fn offset(&self) -> u64 {
        self.0
            .servers
            .replication
            .borrow()
            .as_ref()
            .map_or(0, Replication::offset)
    }

    fn acked(&self, offset: u64) -> i64 {
        let now = turmoil::sim_elapsed().unwrap_or_else(|| self.0.step_now.get());
        self.0
            .servers
            .replication
            .borrow()
            .as_ref()
            .map_or(0, |replication| replication.acked(offset, now))
    }
}

impl Shared {
    /// The serving Redis's wall clock.
    fn serving_clock(&self) -> &ServerClock {
        if self.servers.failed_over.get() {
            &self.servers.replica_clock
        } else {
            &self.servers.primary_clock
        }
    }

    /// The serving Redis's wall clock at simulated time `sim`.
    fn server_ms(&self, sim: Duration) -> u64 {
        self.serving_clock().now_ms(sim)
    }

    /// Redlock node `node`'s (1-based) wall clock at simulated time `sim`.
    fn node_ms(&self, node: u8, sim: Duration) -> u64 {
        self.servers.nodes[usize::from(node) - 1].clock.now_ms(sim)
    }

    /// The caller host on a server connection, if known.
    fn client(&self, protocol: Protocol, conn: u64) -> Option<String> {
        self.record
            .clients
            .borrow()
            .get(&(protocol.name(), conn))
            .cloned()
    }

    fn log(&self, sim: Duration, host: &str, what: What) {
        self.record
            .events
            .push(self.conditions.timeline.t_us(sim), host, what);
    }

    /// Records how caller `index` (1-based) ended.
    pub(crate) fn finish(&self, index: u32, end: CallerEnd) {
        self.record.ends.borrow_mut()[index as usize - 1] = Some(end);
    }

    /// After a command ran on the primary (sent by `client`, when a caller sent it): ship its
    /// changes, see whether it moved the lock, and whether its sender held it.
    fn after_redis_command(&self, sim: Duration, client: Option<&str>) {
        let effects = self.servers.redis.borrow_mut().drain_effects();
        self.note_trespass(sim, client, &effects);
        if !effects.is_empty() {
            if let Some(aof) = self.servers.aof.borrow_mut().as_mut() {
                aof.append(self.conditions.timeline.caller_ms(sim), effects.clone());
            }
            if let Some(replication) = self.servers.replication.borrow_mut().as_mut() {
                replication.ship(sim, effects);
            }
        }
        self.track_lock(sim, true);
    }

    /// Compares the lock key with the last holder seen; logs a change (by a command, or by
    /// the passing of time: a lease expiry).
    fn track_lock(&self, sim: Duration, by_command: bool) {
        let Some(lock) = &self.watch.lock else { return };
        let server_ms = self.server_ms(sim);
        let redis = self.servers.redis.borrow();
        let current = redis.peek(&lock.key, server_ms).map(<[u8]>::to_vec);
        lock.holder_expires_at_ms
            .set(redis.stored(&lock.key).and_then(|(_, at)| at));
        let mut holder = lock.holder.borrow_mut();
        if *holder == current {
            return;
        }
        let what = match (&*holder, &current) {
            (_, Some(value)) => What::LockTaken {
                holder: lock.owner(value),
                expires_at_ms: redis.stored(&lock.key).and_then(|(_, at)| at),
            },
            (Some(old), None) if by_command => What::LockReleased {
                holder: lock.owner(old),
            },
            (Some(old), None) => What::LeaseExpired {
                holder: lock.owner(old),
            },
            (None, None) => unreachable!("equal holders return early"),
        };
        *holder = current;
        drop(holder);
        drop(redis);
        self.log(sim, "world", what);
    }

    /// The earliest time after `now` at which [`Shared::after_step`] may find something to do
    /// without a host having run: the next replicated change arriving, the lock's lease
    /// expiring, or the append-only file's next fsync. Never later than the truth (the simulation may skip idle steps up to it).
    fn next_by_itself(&self, now: Duration) -> Option<Duration> {
        let replication = self
            .servers
            .replication
            .borrow()
            .as_ref()
            .and_then(Replication::next_at);
        let expiry = self.watch.lock.as_ref().and_then(|lock| {
            let redis = self.servers.redis.borrow();
            let (_, expires_at_ms) = redis.stored(&lock.key)?;
            // The serving clock reads `server_ms(now)` now and moves with simulated time
            // until the next clock jump (a scheduled action, which bounds the skip anyway):
            // the lease is gone once the clock is past `expires_at_ms` (Redis keeps a key
            // while its clock equals the expiry), so once it reads the first microsecond of
            // `expires_at_ms + 1`: counted from the clock's microsecond now, not its
            // millisecond (on a tick finer than 1 ms, `now` falls between milliseconds). A
            // lease already past (kept until a command removes it) was noticed at `now`. A
            // drifting or slewing clock may run fast: the skip takes the least simulated time
            // in which it can move that far; `raw` rounds it up to the step that notices it.
            let clock = self.serving_clock();
            let gone_us = i64::try_from(expires_at_ms?.checked_add(1)?.checked_mul(1_000)?).ok()?;
            let remaining_us = u64::try_from(gone_us.checked_sub(clock.now_us(now))?).ok()?;
            Some(
                now + self
                    .conditions
                    .timeline
                    .raw(clock.least_run_time_for(remaining_us)),
            )
        });
        // The next fsync: `Aof::advance` catches up on a late call (and a command or a crash
        // advances the file first), but stepping onto the instant keeps the file's state in
        // step with simulated time.
        let fsync = self
            .servers
            .aof
            .borrow()
            .as_ref()
            .and_then(Aof::next_fsync_ms)
            .map(|at_ms| self.conditions.timeline.at_ms(at_ms))
            .filter(|at| *at > now);
        [replication, expiry, fsync].into_iter().flatten().min()
    }

    /// After each step: replicate what is due, notice expired leases.
    fn after_step(&self, now: Duration) {
        if let Some(replication) = self.servers.replication.borrow_mut().as_mut() {
            replication.advance(now);
        }
        if let Some(aof) = self.servers.aof.borrow_mut().as_mut() {
            aof.advance(self.conditions.timeline.caller_ms(now));
        }
        self.track_lock(now, false);
    }

    /// Carries out a scheduled fault.
    fn apply(&self, sim: &mut turmoil::Sim<'_>, now: Duration, action: Action) {
        match action {
            Action::Cut { a, b, one_way } => {
                if a == Host::Replica || b == Host::Replica {
                    // Only the primary -> replica direction carries data.
                    if !one_way || a == Host::Redis {
                        if let Some(replication) = self.servers.replication.borrow_mut().as_mut() {
                            replication.cut();
                        }
                    }
                } else if one_way {
                    sim.partition_oneway(a.name(), b.name());
                } else {
                    sim.partition(a.name(), b.name());
                }
                self.log(
                    now,
                    "world",
                    What::Partition {
                        a: a.name(),
                        b: b.name(),
                        one_way,
                    },
                );
            }
            Action::Heal { a, b, one_way } => {
                if a == Host::Replica || b == Host::Replica {
                    if !one_way || a == Host::Redis {
                        if let Some(replication) = self.servers.replication.borrow_mut().as_mut() {
                            replication.heal(now);
                        }
                    }
                } else if one_way {
                    sim.repair_oneway(a.name(), b.name());
                } else {
                    sim.repair(a.name(), b.name());
                }
                self.log(
                    now,
                    "world",
                    What::Heal {
                        a: a.name(),
                        b: b.name(),
                        one_way,
                    },
                );
            }
            Action::Failover => {
                let Some(replication) = self.servers.replication.borrow_mut().take() else {
                    return;
                };
                let loading = replication.loading();
                // Sentinel points a replica at the new primary (the old one, back, or another
                // replica): it lags as the promoted one did, and its full resync takes that lag.
                let lag = replication.lag();
                let (promoted, lost) = replication.promote(now);
                *self.servers.replication.borrow_mut() =
                    Some(Replication::rejoin(&promoted, now, lag));
                *self.servers.redis.borrow_mut() = promoted;
                self.servers.failed_over.set(true);
                let (lock_holder, fence_counter) = self.lock_and_fence(now);
                self.log(
                    now,
                    "world",
                    What::Failover {
                        lost: loading
                            .then(|| {
                                "the replica's whole data set (its full resync after its \
                                 restart had not loaded)"
                                    .to_string()
                            })
                            .into_iter()
                            .chain(lost.iter().map(describe_effect))
                            .collect(),
                        lock_holder,
                        fence_counter,
                    },
                );
                if let Some(lock) = &self.watch.lock {
                    let value = self
                        .servers
                        .redis
                        .borrow()
                        .peek(&lock.key, self.server_ms(now))
                        .map(<[u8]>::to_vec);
                    *lock.holder.borrow_mut() = value;
                }
                sim.bounce(REDIS_HOST);
            }
            Action::RedisRestart => {
                self.servers.redis.borrow_mut().restart_empty();
                if let Some(replication) = self.servers.replication.borrow_mut().as_mut() {
                    replication.resync_empty();
                }
                if let Some(lock) = &self.watch.lock {
                    *lock.holder.borrow_mut() = None;
                }
                self.log(now, "world", What::RedisRestart);
                sim.bounce(REDIS_HOST);
            }
            Action::RedisCrashAof => self.crash_and_load_aof(sim, now),
            Action::ReplicaRestart => {
                let primary = self.servers.redis.borrow();
                if let Some(replication) = self.servers.replication.borrow_mut().as_mut() {
                    replication.restart_replica(&primary, now);
                }
                drop(primary);
                self.log(now, "world", What::ReplicaRestart);
            }
            Action::NodeRestart { node } => {
                self.servers.nodes[usize::from(node) - 1]
                    .redis
                    .borrow_mut()
                    .restart_empty();
                self.log(now, "world", What::NodeRestart { node, down_ms: 0 });
                sim.bounce(node_host(node));
            }
            Action::NodeCrash { node, down_ms } => {
                self.servers.nodes[usize::from(node) - 1]
                    .redis
                    .borrow_mut()
                    .restart_empty();
                self.log(now, "world", What::NodeRestart { node, down_ms });
                sim.crash(node_host(node));
            }
            Action::NodeBack { node } => {
                self.log(now, "world", What::NodeBack { node });
                sim.bounce(node_host(node));
            }
            Action::EvictFenceCounter => self.evict_fence_counter(now),
            Action::ClockJump { host, jump_ms } => self.log(
                now,
                "world",
                What::ClockJump {
                    server: host.name(),
                    jump_ms,
                },
            ),
        }
    }
}

/// Logs what the servers execute, feeds the replica, and follows the lock.
struct RunObserver {
    shared: Rc<Shared>,
}

impl RunObserver {
    fn now(&self) -> Duration {
        turmoil::sim_elapsed().unwrap_or_else(|| self.shared.step_now.get())
    }
}

impl Observer for RunObserver {
    fn redis_command(&self, conn_id: u64, argv: &[Vec<u8>], reply: &Reply) {
        let shared = &self.shared;
        let now = self.now();
        let name = |index: usize| argv.get(index).map(|arg| arg.to_ascii_uppercase());
        if let Reply::Integer(token) = reply {
            let fenced = match name(0).as_deref() {
                Some(b"EVALSHA") => argv.get(1).is_some_and(|sha| {
                    sha.eq_ignore_ascii_case(shared.watch.fenced_acquire_sha.as_bytes())
                }),
                Some(b"EVAL") => argv.get(1).is_some_and(|source| {
                    source.as_slice() == ScriptId::FencedAcquire.source().as_bytes()
                }),
                _ => false,
            };
            if fenced {
                shared.watch.tokens_issued.borrow_mut().push(*token);
            }
        }
        let client = shared.client(Protocol::Redis, conn_id);
        shared.log(
            now,
            REDIS_HOST,
            What::RedisExecuted {
                conn: conn_id,
                client: client.clone(),
                argv: argv
                    .iter()
                    .map(|arg| String::from_utf8_lossy(arg).into_owned())
                    .collect(),
                reply: reply.clone(),
                clock_ms: shared.server_ms(now),
            },
        );
        shared.after_redis_command(now, client.as_deref());
    }

    fn sql_statement(
        &self,
        conn_id: u64,
        sql: &str,
        params: &[i64],
        result: &Result<QueryResult, PgError>,
    ) {
        self.shared.log(
            self.now(),
            POSTGRES_HOST,
            What::SqlExecuted {
                conn: conn_id,
                client: self.shared.client(Protocol::Postgres, conn_id),
                sql: sql.to_string(),
                params: params.to_vec(),
                answer: Answer::of(result),
            },
        );
    }

    fn sql_blocked(&self, conn_id: u64, sql: &str, _params: &[i64], blocked_by: SessionId) {
        self.shared.log(
            self.now(),
            POSTGRES_HOST,
            What::SqlBlocked {
                conn: conn_id,
                sql: sql.to_string(),
                blocked_by: blocked_by.0,
            },
        );
    }

    fn connection_opened(&self, protocol: Protocol, conn_id: u64, peer: Option<SocketAddr>) {
        let client = peer.and_then(|peer| turmoil::reverse_lookup(peer.ip()));
        if let Some(client) = &client {
            self.shared
                .record
                .clients
                .borrow_mut()
                .insert((protocol.name(), conn_id), client.clone());
        }
        self.shared.log(
            self.now(),
            protocol.name(),
            What::ConnectionOpened {
                conn: conn_id,
                client,
            },
        );
    }

    fn connection_closed(&self, protocol: Protocol, conn_id: u64) {
        // A connection may close while its host is being bounced, outside any tick, where
        // only the step's time is known (and turmoil's host clock must not be read).
        self.shared.log(
            self.shared.step_now.get(),
            protocol.name(),
            What::ConnectionClosed { conn: conn_id },
        );
    }
}

/// Logs what a Redlock node executes and who is connected to it (the nodes keep no lock
/// watch, no replica and no append-only file).
struct NodeObserver {
    shared: Rc<Shared>,
    node: u8,
}

impl Observer for NodeObserver {
    fn redis_command(&self, conn_id: u64, argv: &[Vec<u8>], reply: &Reply) {
        let shared = &self.shared;
        let now = turmoil::sim_elapsed().unwrap_or_else(|| shared.step_now.get());
        let host = node_host(self.node);
        let client = shared
            .record
            .clients
            .borrow()
            .get(&(host, conn_id))
            .cloned();
        shared.log(
            now,
            host,
            What::RedisExecuted {
                conn: conn_id,
                client,
                argv: argv
                    .iter()
                    .map(|arg| String::from_utf8_lossy(arg).into_owned())
                    .collect(),
                reply: reply.clone(),
                clock_ms: shared.node_ms(self.node, now),
            },
        );
        shared.servers.nodes[usize::from(self.node) - 1]
            .redis
            .borrow_mut()
            .drain_effects();
    }

    fn sql_statement(
        &self,
        _conn_id: u64,
        _sql: &str,
        _params: &[i64],
        _result: &Result<QueryResult, PgError>,
    ) {
        unreachable!("a Redis node runs no SQL");
    }

    fn connection_opened(&self, _protocol: Protocol, conn_id: u64, peer: Option<SocketAddr>) {
        let host = node_host(self.node);
        let client = peer.and_then(|peer| turmoil::reverse_lookup(peer.ip()));
        if let Some(client) = &client {
            self.shared
                .record
                .clients
                .borrow_mut()
                .insert((host, conn_id), client.clone());
        }
        let now = turmoil::sim_elapsed().unwrap_or_else(|| self.shared.step_now.get());
        self.shared.log(
            now,
            host,
            What::ConnectionOpened {
                conn: conn_id,
                client,
            },
        );
    }

    fn connection_closed(&self, _protocol: Protocol, conn_id: u64) {
        self.shared.log(
            self.shared.step_now.get(),
            node_host(self.node),
            What::ConnectionClosed { conn: conn_id },
        );
    }
}

#[cfg(test)]
mod tests {
    use leaselab_model::fault::Fault;
    use leaselab_model::safeguard::Point;
    use leaselab_model::scenario::Variant;

    use super::*;

    fn scenario(step: &str) -> Scenario {
        Scenario::tutorial(step, Variant::default()).unwrap()
    }

    #[test]
    fn the_time_limit_follows_from_the_scenario_within_its_floor_and_cap() {
        let client = ClientPolicy::default();
        // The tutorial's steps need far less than the floor.
        let (limit, needed) = time_limit_ms(&scenario("step5-fencing"), &client);
        assert_eq!(limit, DEFAULT_HORIZON_MS);
        assert!(needed < DEFAULT_HORIZON_MS, "{needed}");
        // Long work raises it.
        let mut long = scenario("step2-lock");
        long.params.work_ms = 119_000;
        let (limit, needed) = time_limit_ms(&long, &client);
        assert_eq!(limit, needed);
        assert!(needed > 119_000 + 5_000, "{needed}");
        // So do pauses and start offsets.
        long.faults.push(Fault::Pause {
            caller: 2,
            at: Point::AfterRead,
            pause_ms: 60_000,
        });
        long.start_offsets_ms = vec![0, 30_000];
        assert_eq!(time_limit_ms(&long, &client).1, needed + 90_000);
        // Past the cap, the limit is the cap.
        long.params.work_ms = 10 * MAX_TIME_LIMIT_MS;
        assert_eq!(time_limit_ms(&long, &client).0, MAX_TIME_LIMIT_MS);
        assert_eq!(SimConfig::for_scenario(&long).horizon_ms, MAX_TIME_LIMIT_MS);
    }

    #[test]
    fn work_longer_than_the_former_fixed_horizon_finishes() {
        let mut long = scenario("step2-lock");
        long.callers = 2;
        long.params.work_ms = 119_000;
        let report = run(&long, 1).unwrap();
        assert!(report.finished, "{}", report.line());
        assert_eq!(report.unfinished(), 0);
        // Work 60 times the TTL: the leases overlap and both spends land on the same read.
        assert_eq!(report.verdict(), RunVerdict::Broken);
    }

    #[test]
    fn an_unfinished_run_is_inconclusive_unless_the_violation_is_already_visible() {
        let short = SimConfig {
            horizon_ms: 100,
            ..SimConfig::default()
        };
        // step5: at 100ms A is paused holding its read, B has not started: nothing to judge.
        let cut = run_with(&scenario("step5-fencing"), 1, &short).unwrap();
        assert!(!cut.finished);
        assert_eq!(cut.unfinished(), 2);
        assert_eq!(cut.verdict(), RunVerdict::Inconclusive);
        assert!(cut.inconclusive() && !cut.broken());
        assert!(cut.line().ends_with("INCONCLUSIVE"), "{}", cut.line());
        assert_eq!(cut.to_json()["verdict"], "INCONCLUSIVE");
        assert_eq!(cut.to_json()["unfinished"], 2);
        // No lock, caller 3 paused for long: callers 1 and 2 both spend from 100, and no
        // write of caller 3 can explain a balance of 90 after two acknowledged spends.
        let mut race = scenario("step1-race");
        race.callers = 3;
        race.faults.push(Fault::Pause {
            caller: 3,
            at: Point::AfterRead,
            pause_ms: 10_000,
        });
        let config = SimConfig {
            horizon_ms: 1_000,
            ..SimConfig::default()
        };
        let seen = run_with(&race, 1, &config).unwrap();
        assert!(!seen.finished);
        assert_eq!(seen.unfinished(), 1);
        assert_eq!(seen.ledger.accepted, 2, "{}", seen.line());
        assert_eq!(seen.ledger.final_balance, 90);
        assert_eq!(seen.verdict(), RunVerdict::Broken);
        // The same balance with the third caller's write possibly in flight and one
        // acknowledged spend would be explained: inconclusive.
        let mut explained = seen.clone();
        explained.ledger.accepted = 1;
        explained.callers[0].outcome = None;
        assert_eq!(explained.verdict(), RunVerdict::Inconclusive);
        // A negative balance is a violation whatever is in flight.
        let mut negative = explained;
        negative.ledger.final_balance = -10;
        assert_eq!(negative.verdict(), RunVerdict::Broken);
    }

    #[test]
    fn a_finished_run_in_which_no_spend_reached_the_storage_is_inconclusive() {
        // Nothing to spend: every caller takes the lock, reads 0 and writes nothing.
        let mut empty = scenario("step2-lock");
        empty.callers = 5;
        empty.initial_balance = 0;
        let report = run(&empty, 1).unwrap();
        assert!(report.finished);
        assert_eq!(report.ledger.insufficient, 5, "{}", report.line());
        assert_eq!(report.ledger.verdict, leaselab_model::ledger::Verdict::Ok);
        assert!(report.untested());
        assert_eq!(report.verdict(), RunVerdict::Inconclusive);
        assert!(report.line().ends_with("INCONCLUSIVE"), "{}", report.line());
        assert_eq!(report.to_json()["untested"], true);
        assert_eq!(report.to_json()["unfinished"], 0);
        // One spend that lands is enough to judge the run by its ledger.
        let mut some = empty.clone();
        some.initial_balance = 10;
        let judged = run(&some, 1).unwrap();
        assert_eq!(judged.ledger.accepted, 1, "{}", judged.line());
        assert!(!judged.untested());
        assert_eq!(judged.verdict(), RunVerdict::Ok);
        assert!(
            judged.to_json().get("untested").is_none(),
            "left out when false"
        );
        // So is a write the storage refused (step 5: B's stale fence), and a broken ledger
        // stays BROKEN whatever else the run shows.
        let mut refused = run(&scenario("step5-fencing"), 1).unwrap();
        refused.ledger.accepted = 0;
        refused.ledger.final_balance = refused.ledger.initial_balance;
        refused.ledger.expected_balance = refused.ledger.initial_balance;
        assert!(refused.ledger.rejected > 0 && !refused.untested());
        assert_eq!(refused.verdict(), RunVerdict::Ok);
    }
}
