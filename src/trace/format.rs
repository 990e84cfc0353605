//! The trace file format, version 2: a pretty JSON document whose `events` array holds one
//! event per line. `traces/README.md` describes it field by field.
//!
//! The ledger is stored as the model's own [`Ledger`] (checked on load by [`check_ledger`]);
//! the scenario, faults and check are mirrored here ([`ScenarioSpec`], [`FaultSpec`],
//! [`CheckSpec`]) with conversions both ways. Converting a mirror back
//! ([`ScenarioSpec::to_scenario`]) validates it, and its error names the field.

use leaselab_checker::CheckConfig;
use leaselab_model::fault::{Fault, Host};
use leaselab_model::ledger::Ledger;
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::{Keys, Params, Point, Safeguard};
use leaselab_model::scenario::{Network, Scenario, Timing};
use leaselab_model::world::{Action, FaultsOn, ReplyFaults};
use leaselab_sim::events::Event;
use serde::{Deserialize, Serialize};

/// What every trace file says it is.
pub const FORMAT: &str = "leaselab-trace";

/// The format version this leaselab writes, and the newest it reads.
/// Version 3 logs every event as typed values: requests, replies and statements with the
/// caller's reading of each reply (since version 2; version 1 logged them as display text),
/// and a caller's outcome (version 2 logged its name and words).
pub const FORMAT_VERSION: u32 = 3;

/// This leaselab's version, recorded in every trace it writes.
pub const LEASELAB_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A trace: what ran, with which seed, what happened, and how the ledger judged it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format version it was written in.
    pub format_version: u32,
    /// The leaselab that wrote it.
    pub leaselab_version: String,
    /// Where the failure was found: a simulated run, or a model counterexample.
    pub origin: Origin,
    /// What ran: the scenario with every parameter.
    pub scenario: ScenarioSpec,
    /// The simulation's seed.
    pub seed: u64,
    /// The ledger's verdict and numbers.
    pub ledger: Ledger,
    /// SHA-1 of the event log (its JSON lines).
    pub digest: String,
    /// Everything that happened, in order, each event as written (the digest covers this
    /// text, so a trace stays readable when the simulation's events change).
    pub events: Vec<RawEvent>,
}

/// One event of the log, kept as the JSON text it was written as.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawEvent(pub Box<serde_json::value::RawValue>);

impl PartialEq for RawEvent {
    fn eq(&self, other: &RawEvent) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for RawEvent {}

impl RawEvent {
    /// The event as compact JSON text.
    pub fn of(event: &Event) -> RawEvent {
        RawEvent(serde_json::value::to_raw_value(event).expect("events serialise"))
    }

    /// The JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }
}

/// The SHA-1 of event lines (each followed by a newline), as 40 hex digits: the simulation's
/// digest of a log, computed from the text a trace holds.
pub fn digest_lines(events: &[RawEvent]) -> String {
    use sha1::{Digest, Sha1};
    let mut hasher = Sha1::new();
    for event in events {
        hasher.update(event.text().as_bytes());
        hasher.update(b"\n");
    }
    hex::encode(hasher.finalize())
}

/// Where a trace comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Origin {
    /// A simulated run (`leaselab run`, `tour`), possibly shrunk.
    Simulation {
        /// Set when `leaselab shrink` made this trace from a bigger one: that one's digest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shrunk_from: Option<String>,
    },
    /// A counterexample of the exhaustive model, turned into a simulated schedule.
    Model {
        /// The check that found it (boxed: it is the largest part of an origin).
        check: Box<CheckSpec>,
        /// The violated property, e.g. `ledger holds`.
        property: String,
        /// The counterexample, one action per entry: `step N` (caller N, 1-based), `tick`,
        /// `replicate`, `failover`, ... ([`action_text`]).
        path: Vec<String>,
        /// Simulated milliseconds per model tick in the translated schedule.
        ms_per_tick: u64,
    },
}

/// A scenario with every parameter (mirror of [`Scenario`]). The mirror stays: it writes the
/// parameters flat (a derive on [`Scenario`] would nest `params`), and loading validates
/// each field with its path (see [`FaultSpec`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// The scenario's name, e.g. `step5-fencing --unfenced`.
    pub name: String,
    /// The safeguard's name, e.g. `fenced-unchecked`.
    pub safeguard: String,
    /// A user's safeguard: the text of its file (`--safeguard-file`), so the trace replays
    /// without it. Absent for a built-in safeguard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safeguard_file: Option<String>,
    /// How many callers.
    pub callers: u32,
    /// The balance before the run.
    pub initial_balance: i64,
    /// The fence counter before the run.
    pub initial_fence_counter: i64,
    /// The wallet (`wallets.id`).
    pub wallet_id: i64,
    /// How much each caller spends.
    pub amount: i64,
    /// The work between read and write.
    pub work_ms: u64,
    /// The lease.
    pub ttl_ms: u64,
    /// Give up acquiring after this long (null: the safeguard's default).
    pub acquire_timeout_ms: Option<u64>,
    /// The Redis keys.
    pub keys: KeysSpec,
    /// When each caller starts, ms after the release.
    pub start_offsets_ms: Vec<u64>,
    /// Faults to inject.
    pub faults: Vec<FaultSpec>,
    /// Network timing.
    pub network: NetworkSpec,
    /// PostgreSQL's `deadlock_timeout`, ms (left out when it is the default, 1 s).
    #[serde(
        default = "default_deadlock_timeout_ms",
        skip_serializing_if = "is_default_deadlock_timeout"
    )]
    pub deadlock_timeout_ms: u64,
    /// The simulation's timing model. Traces written before 4 Dec 2026 leave it out when it
    /// was the 1 ms tick, then the default; a trace without it ran on that tick.
    #[serde(default = "TimingSpec::tick_1ms")]
    pub timing: TimingSpec,
}

/// The simulation's timing model (mirror of [`Timing`]), µs of run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingSpec {
    /// Run time one simulation step stands for (a divisor of 1000).
    pub tick_us: u64,
    /// Client CPU per command, on the one client CPU the callers share.
    pub client_cpu_us: u64,
    /// The callers' timer resolution (tokio's: 1000).
    pub timer_us: u64,
    /// How late after its grid point a timer fires, at most.
    pub timer_lag_us: u64,
    /// PostgreSQL's extra time for a session's first statement.
    pub pg_first_statement_us: u64,
    /// The mean of the random part of a session's first-statement time (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub pg_first_statement_tail_us: u64,
    /// PostgreSQL's extra time for a statement that commits a write.
    pub pg_commit_us: u64,
}

impl TimingSpec {
    /// The timing of a trace that names none: the 1 ms tick.
    fn tick_1ms() -> TimingSpec {
        TimingSpec::from_timing(&Timing::tick_1ms())
    }

    fn from_timing(timing: &Timing) -> TimingSpec {
        TimingSpec {
            tick_us: timing.tick_us,
            client_cpu_us: timing.client_cpu_us,
            timer_us: timing.timer_us,
            timer_lag_us: timing.timer_lag_us,
            pg_first_statement_us: timing.pg_first_statement_us,
            pg_first_statement_tail_us: timing.pg_first_statement_tail_us,
            pg_commit_us: timing.pg_commit_us,
        }
    }

    fn to_timing(self) -> Timing {
        Timing {
            tick_us: self.tick_us,
            client_cpu_us: self.client_cpu_us,
            timer_us: self.timer_us,
            timer_lag_us: self.timer_lag_us,
            pg_first_statement_us: self.pg_first_statement_us,
            pg_first_statement_tail_us: self.pg_first_statement_tail_us,
            pg_commit_us: self.pg_commit_us,
        }
    }
}

fn default_deadlock_timeout_ms() -> u64 {
    leaselab_model::scenario::DEFAULT_DEADLOCK_TIMEOUT_MS
}

fn is_default_deadlock_timeout(ms: &u64) -> bool {
    *ms == default_deadlock_timeout_ms()
}

/// The Redis keys (mirror of [`Keys`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeysSpec {
    /// The balance key (steps 1–4).
    pub balance: String,
    /// The lock key.
    pub lock: String,
    /// The fence counter key.
    pub fence: String,
}

/// Network timing (mirror of [`Network`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Shortest one-way latency, µs.
    pub latency_min_us: u64,
    /// Longest one-way latency, µs.
    pub latency_max_us: u64,
    /// How far the replica lags, ms.
    pub replication_lag_ms: u64,
}

/// A fault (mirror of [`Fault`]); hosts are `app-N`, `redis`, `redis-replica`, `postgres`,
/// `redis-N` (a Redlock node);
/// points are `after-acquire`, `after-read`, `before-write`, `before-release`.
/// The mirror stays (serde on [`Fault`] could write the same JSON): loading turns an unknown
/// point or host into a [`SpecError`] with its path, the names accepted and the "scenario no
/// longer exists" mark, which a derived `Deserialize` cannot give.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "kebab-case", deny_unknown_fields)]
pub enum FaultSpec {
    /// A GC pause of caller `caller` the first time it reaches `at`.
    Pause {
        /// 1-based.
        caller: u32,
        /// The point's name.
        at: String,
        /// How long.
        pause_ms: u64,
    },
    /// The primary dies and the replica is promoted.
    Failover {
        /// When, ms after the release.
        at_ms: u64,
    },
    /// Redis restarts without persistence.
    RedisRestart {
        /// When.
        at_ms: u64,
    },
    /// The replica restarts without persistence.
    ReplicaRestart {
        /// When.
        at_ms: u64,
    },
    /// The machine running Redis crashes; Redis reloads its append-only file.
    RedisCrashAof {
        /// When.
        at_ms: u64,
        /// `always`, `everysec` or `no`.
        appendfsync: String,
    },
    /// An `allkeys-*` policy evicts the fence counter.
    EvictFenceCounter {
        /// When.
        at_ms: u64,
    },
    /// A link is cut.
    Partition {
        /// One end.
        a: String,
        /// The other end.
        b: String,
        /// Cut at.
        from_ms: u64,
        /// Healed at.
        until_ms: u64,
        /// Only `a` → `b`.
        one_way: bool,
    },
    /// A server's wall clock jumps.
    ClockJump {
        /// Whose clock.
        host: String,
        /// When.
        at_ms: u64,
        /// By how much.
        jump_ms: i64,
    },
    /// A server's wall clock runs at the wrong rate.
    ClockDrift {
        /// Whose clock.
        host: String,
        /// Parts per million fast (negative: slow).
        rate_ppm: i64,
    },
    /// A server's wall clock is corrected gradually.
    ClockSlew {
        /// Whose clock.
        host: String,
        /// When the correction starts.
        at_ms: u64,
        /// The whole correction.
        offset_ms: i64,
        /// How fast, parts per million.
        rate_ppm: u64,
    },
    /// A Redlock node loses its keys: restarts at once, or after `down_ms`.
    NodeRestart {
        /// The node's host, `redis-N`.
        node: String,
        /// When.
        at_ms: u64,
        /// How long it stays down first (0: back at once).
        down_ms: u64,
    },
    /// The reply to a caller's first Redis request of a stage is lost.
    LostReply {
        /// 1-based.
        caller: u32,
        /// `any`, `acquire` or `release`.
        on: String,
    },
    /// A caller's connection breaks with the reply to its first Redis request of a stage
    /// in flight.
    DroppedConnection {
        /// 1-based.
        caller: u32,
        /// `any`, `acquire` or `release`.
        on: String,
    },
}

/// Reads a reply fault's `on` back.
fn faults_on(text: &str, field: String) -> Result<FaultsOn, SpecError> {
    FaultsOn::parse(text).ok_or_else(|| {
        SpecError::new(
            field,
            format!(
                "'{text}' is not a request a reply fault strikes; expected any, acquire or release"
            ),
        )
    })
}

/// The parameters of an exhaustive check (mirror of [`CheckConfig`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// The safeguard's name.
    pub safeguard: String,
    /// A user's safeguard: the text of its file. Absent for a built-in safeguard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safeguard_file: Option<String>,
    /// How many callers.
    pub callers: u32,
    /// The balance before the run.
    pub initial_balance: i64,
    /// Each spend.
    pub amount: i64,
    /// The lease, in ticks.
    pub ttl_ticks: u64,
    /// The work, in ticks.
    pub work_ticks: u64,
    /// The pause bound per caller, in ticks (null: unbounded).
    pub max_pause_ticks: Option<u64>,
    /// Failovers allowed.
    pub failovers: u32,
    /// Restarts of the single Redis allowed (absent: 0, as in traces saved before them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restarts: u32,
    /// Evictions of the fence counter allowed (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub evictions: u32,
    /// The horizon, in ticks (null: the default).
    pub horizon_ticks: Option<u64>,
    /// Callers that differ only by which is which were one state.
    pub symmetry: bool,
    /// Redis replies that could be lost (absent: 0, as in traces saved before reply faults).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_replies: u32,
    /// Redis connections that could break with a reply in flight (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_connections: u32,
    /// Jumps of the single Redis's clock allowed (absent: 0, as in traces saved before them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redis_clock_jumps: u32,
    /// How far each jump steps it, in ticks (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub redis_clock_jump_ticks: u64,
    /// Slews of the single Redis's clock allowed (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redis_clock_slews: u32,
    /// The offset a slew applies, in ticks (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub redis_clock_slew_ticks: u64,
    /// How fast a slew applies it, in millionths of elapsed time (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slew_rate_ppm: u32,
    /// Partitions allowed (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub partitions: u32,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A mirror that does not convert back: the field (a path like `scenario.faults[0].at`) and
/// what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Where, as a path from the document's root.
    pub field: String,
    /// What was expected, or what is wrong.
    pub message: String,
    /// True when the value names something this leaselab does not know (a safeguard, a
    /// fault, a point): the trace's scenario no longer exists.
    pub unknown_scenario_part: bool,
}

impl SpecError {
    fn new(field: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            field: field.into(),
            message: message.into(),
            unknown_scenario_part: false,
        }
    }

    fn unknown(field: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            unknown_scenario_part: true,
            ..SpecError::new(field, message)
        }
    }
}

fn utf8(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl ScenarioSpec {
    /// The mirror of `scenario`.
    pub fn from_scenario(scenario: &Scenario) -> ScenarioSpec {
        let params = &scenario.params;
        ScenarioSpec {
            name: scenario.name.clone(),
            safeguard: scenario.safeguard.name(),
            safeguard_file: file_text(scenario.safeguard),
            callers: scenario.callers,
            initial_balance: scenario.initial_balance,
            initial_fence_counter: scenario.initial_fence_counter,
            wallet_id: params.wallet_id,
            amount: params.amount,
            work_ms: params.work_ms,
            ttl_ms: params.ttl_ms,
            acquire_timeout_ms: params.acquire_timeout_ms,
            keys: KeysSpec {
                balance: utf8(&params.keys.balance),
                lock: utf8(&params.keys.lock),
                fence: utf8(&params.keys.fence),
            },
            start_offsets_ms: scenario.start_offsets_ms.clone(),
            faults: scenario.faults.iter().map(FaultSpec::from_fault).collect(),
            network: NetworkSpec {
                latency_min_us: scenario.network.latency_min_us,
                latency_max_us: scenario.network.latency_max_us,
                replication_lag_ms: scenario.network.replication_lag_ms,
            },
            deadlock_timeout_ms: scenario.deadlock_timeout_ms,
            timing: TimingSpec::from_timing(&scenario.timing),
        }
    }

    /// The scenario back, validated; `at` is the path of this mirror in the document
    /// (`scenario`).
    pub fn to_scenario(&self, at: &str) -> Result<Scenario, SpecError> {
        let safeguard = user_safeguard(at, &self.safeguard, &self.safeguard_file)?;
        let safeguard = safeguard
            .map_or_else(|| Safeguard::parse(&self.safeguard), Ok)
            .map_err(|error| {
                SpecError::unknown(
                    format!("{at}.safeguard"),
                    format!(
                        "scenario '{}' uses safeguard '{}', which this leaselab does not know: {}",
                        self.name, self.safeguard, error.0
                    ),
                )
            })?;
        let faults = self
            .faults
            .iter()
            .enumerate()
            .map(|(index, fault)| fault.to_fault(&format!("{at}.faults[{index}]"), &self.name))
            .collect::<Result<Vec<_>, _>>()?;
        if self.start_offsets_ms.len() > self.callers as usize {
            return Err(SpecError::new(
                format!("{at}.start_offsets_ms"),
                format!(
                    "{} start offsets for {} callers; expected at most one per caller",
                    self.start_offsets_ms.len(),
                    self.callers
                ),
            ));
        }
        let scenario = Scenario {
            name: self.name.clone(),
            safeguard,
            callers: self.callers,
            initial_balance: self.initial_balance,
            initial_fence_counter: self.initial_fence_counter,
            params: Params {
                wallet_id: self.wallet_id,
                amount: self.amount,
                work_ms: self.work_ms,
                ttl_ms: self.ttl_ms,
                acquire_timeout_ms: self.acquire_timeout_ms,
                keys: Keys {
                    balance: self.keys.balance.as_bytes().to_vec(),
                    lock: self.keys.lock.as_bytes().to_vec(),
                    fence: self.keys.fence.as_bytes().to_vec(),
                },
            },
            start_offsets_ms: self.start_offsets_ms.clone(),
            faults,
            network: Network {
                latency_min_us: self.network.latency_min_us,
                latency_max_us: self.network.latency_max_us,
                replication_lag_ms: self.network.replication_lag_ms,
            },
            deadlock_timeout_ms: self.deadlock_timeout_ms,
            timing: self.timing.to_timing(),
        };
        scenario
            .validate()
            .and_then(|()| leaselab_sim::faults::validate(&scenario))
            .map_err(|error| SpecError::new(at, error.0))?;
        Ok(scenario)
    }
}

fn host(text: &str, field: String) -> Result<Host, SpecError> {
    Host::parse(text).ok_or_else(|| {
        SpecError::new(
            field,
            format!(
                "'{text}' is not a host; expected app-N, redis, redis-replica, postgres or redis-N"
            ),
        )
    })
}

fn node_of(text: &str, field: String) -> Result<u8, SpecError> {
    match Host::parse(text) {
        Some(Host::Node(node)) => Ok(node),
        _ => Err(SpecError::new(
            field,
            format!("'{text}' is not a Redlock node; expected redis-1 to redis-9"),
        )),
    }
}

impl FaultSpec {
    /// The mirror of `fault`.
    pub fn from_fault(fault: &Fault) -> FaultSpec {
        match *fault {
            Fault::Pause {
                caller,
                at,
                pause_ms,
            } => FaultSpec::Pause {
                caller,
                at: at.name().to_string(),
                pause_ms,
            },
            Fault::Failover { at_ms } => FaultSpec::Failover { at_ms },
            Fault::RedisRestart { at_ms } => FaultSpec::RedisRestart { at_ms },
            Fault::ReplicaRestart { at_ms } => FaultSpec::ReplicaRestart { at_ms },
            Fault::RedisCrashAof { at_ms, appendfsync } => FaultSpec::RedisCrashAof {
                at_ms,
                appendfsync: appendfsync.name().to_string(),
            },
            Fault::EvictFenceCounter { at_ms } => FaultSpec::EvictFenceCounter { at_ms },
            Fault::Partition {
                a,
                b,
                from_ms,
                until_ms,
                one_way,
            } => FaultSpec::Partition {
                a: a.name(),
                b: b.name(),
                from_ms,
                until_ms,
                one_way,
            },
            Fault::ClockJump {
                host,
                at_ms,
                jump_ms,
            } => FaultSpec::ClockJump {
                host: host.name(),
                at_ms,
                jump_ms,
            },
            Fault::ClockDrift { host, rate_ppm } => FaultSpec::ClockDrift {
                host: host.name(),
                rate_ppm,
            },
            Fault::ClockSlew {
                host,
                at_ms,
                offset_ms,
                rate_ppm,
            } => FaultSpec::ClockSlew {
                host: host.name(),
                at_ms,
                offset_ms,
                rate_ppm,
            },
            Fault::NodeRestart {
                node,
                at_ms,
                down_ms,
            } => FaultSpec::NodeRestart {
                node: Host::Node(node).name(),
                at_ms,
                down_ms,
            },
            Fault::LostReply { caller, on } => FaultSpec::LostReply {
                caller,
                on: on.name().to_string(),
            },
            Fault::DroppedConnection { caller, on } => FaultSpec::DroppedConnection {
                caller,
                on: on.name().to_string(),
            },
        }
    }

    /// The fault back; `at` is this mirror's path, `scenario` the scenario's name.
    pub fn to_fault(&self, at: &str, scenario: &str) -> Result<Fault, SpecError> {
        Ok(match self {
            FaultSpec::Pause {
                caller,
                at: point,
                pause_ms,
            } => Fault::Pause {
                caller: *caller,
                at: Point::from_name(point).ok_or_else(|| {
                    let known: Vec<&str> = Point::ALL.iter().map(|p| p.name()).collect();
                    SpecError::unknown(
                        format!("{at}.at"),
                        format!(
                            "scenario '{scenario}' pauses at '{point}', a point this leaselab does not know; expected one of {}",
                            known.join(", ")
                        ),
                    )
                })?,
                pause_ms: *pause_ms,
            },
            FaultSpec::Failover { at_ms } => Fault::Failover { at_ms: *at_ms },
            FaultSpec::RedisRestart { at_ms } => Fault::RedisRestart { at_ms: *at_ms },
            FaultSpec::ReplicaRestart { at_ms } => Fault::ReplicaRestart { at_ms: *at_ms },
            FaultSpec::RedisCrashAof { at_ms, appendfsync } => Fault::RedisCrashAof {
                at_ms: *at_ms,
                appendfsync: Appendfsync::parse(appendfsync).ok_or_else(|| {
                    let known: Vec<&str> = Appendfsync::ALL.iter().map(|m| m.name()).collect();
                    SpecError::unknown(
                        format!("{at}.appendfsync"),
                        format!(
                            "scenario '{scenario}' crashes Redis with appendfsync '{appendfsync}', a policy this leaselab does not know; expected one of {}",
                            known.join(", ")
                        ),
                    )
                })?,
            },
            FaultSpec::EvictFenceCounter { at_ms } => Fault::EvictFenceCounter { at_ms: *at_ms },
            FaultSpec::Partition {
                a,
                b,
                from_ms,
                until_ms,
                one_way,
            } => Fault::Partition {
                a: host(a, format!("{at}.a"))?,
                b: host(b, format!("{at}.b"))?,
                from_ms: *from_ms,
                until_ms: *until_ms,
                one_way: *one_way,
            },
            FaultSpec::ClockJump {
                host: name,
                at_ms,
                jump_ms,
            } => Fault::ClockJump {
                host: host(name, format!("{at}.host"))?,
                at_ms: *at_ms,
                jump_ms: *jump_ms,
            },
            FaultSpec::ClockDrift {
                host: name,
                rate_ppm,
            } => Fault::ClockDrift {
                host: host(name, format!("{at}.host"))?,
                rate_ppm: *rate_ppm,
            },
            FaultSpec::ClockSlew {
                host: name,
                at_ms,
                offset_ms,
                rate_ppm,
            } => Fault::ClockSlew {
                host: host(name, format!("{at}.host"))?,
                at_ms: *at_ms,
                offset_ms: *offset_ms,
                rate_ppm: *rate_ppm,
            },
            FaultSpec::NodeRestart {
                node,
                at_ms,
                down_ms,
            } => Fault::NodeRestart {
                node: node_of(node, format!("{at}.node"))?,
                at_ms: *at_ms,
                down_ms: *down_ms,
            },
            FaultSpec::LostReply { caller, on } => Fault::LostReply {
                caller: *caller,
                on: faults_on(on, format!("{at}.on"))?,
            },
            FaultSpec::DroppedConnection { caller, on } => Fault::DroppedConnection {
                caller: *caller,
                on: faults_on(on, format!("{at}.on"))?,
            },
        })
    }
}

/// Checks a ledger read back from a file: its expected balance and verdict must follow from
/// its numbers. `at` is its path in the document.
pub fn check_ledger(ledger: &Ledger, at: &str) -> Result<(), SpecError> {
    match ledger.inconsistency() {
        Some((field, message)) => Err(SpecError::new(format!("{at}.{field}"), message)),
        None => Ok(()),
    }
}

impl CheckSpec {
    /// The mirror of `config`.
    pub fn from_config(config: &CheckConfig) -> CheckSpec {
        CheckSpec {
            safeguard: config.safeguard.name(),
            safeguard_file: file_text(config.safeguard),
            callers: config.callers,
            initial_balance: config.initial_balance,
            amount: config.amount,
            ttl_ticks: config.ttl_ticks,
            work_ticks: config.work_ticks,
            max_pause_ticks: config.max_pause_ticks,
            failovers: config.failovers,
            restarts: config.restarts,
            evictions: config.evictions,
            horizon_ticks: config.horizon_ticks,
            symmetry: config.symmetry,
            lost_replies: config.reply_faults.lost_replies,
            dropped_connections: config.reply_faults.dropped_connections,
            redis_clock_jumps: config.redis_clock.jumps,
            redis_clock_jump_ticks: config.redis_clock.jump_ms,
            redis_clock_slews: config.redis_clock.slews,
            redis_clock_slew_ticks: config.redis_clock.slew_ms,
            slew_rate_ppm: config.redis_clock.slew_rate_ppm,
            partitions: config.partitions,
        }
    }

    /// The check back, validated; `at` is this mirror's path.
    pub fn to_config(&self, at: &str) -> Result<CheckConfig, SpecError> {
        let safeguard = user_safeguard(at, &self.safeguard, &self.safeguard_file)?;
        let safeguard = safeguard
            .map_or_else(|| Safeguard::parse(&self.safeguard), Ok)
            .map_err(|error| {
                SpecError::unknown(
                    format!("{at}.safeguard"),
                    format!(
                        "the check uses safeguard '{}', which this leaselab does not know: {}",
                        self.safeguard, error.0
                    ),
                )
            })?;
        let config = CheckConfig {
            safeguard,
            callers: self.callers,
            initial_balance: self.initial_balance,
            amount: self.amount,
            ttl_ticks: self.ttl_ticks,
            work_ticks: self.work_ticks,
            max_pause_ticks: self.max_pause_ticks,
            failovers: self.failovers,
            restarts: self.restarts,
            // A path of crashes reloading the AOF is never saved as a trace either.
            restarts_from_aof: false,
            aof_appendfsync: leaselab_model::redis::aof::Appendfsync::Everysec,
            evictions: self.evictions,
            horizon_ticks: self.horizon_ticks,
            symmetry: self.symmetry,
            reply_faults: ReplyFaults {
                lost_replies: self.lost_replies,
                dropped_connections: self.dropped_connections,
                // A model path with reply faults is never saved as a trace (its translation
                // into a simulated schedule is not built), so a trace's check never aims them.
                on: leaselab_model::world::FaultsOn::Any,
            },
            node_faults: leaselab_model::world::NodeFaults::default(),
            // Nor is a path under a drifting Redis clock (`trace::model::translate`).
            redis_drift_percent: 0,
            redis_clock: leaselab_model::world::ClockFaults {
                jumps: self.redis_clock_jumps,
                jump_ms: self.redis_clock_jump_ticks,
                slews: self.redis_clock_slews,
                slew_ms: self.redis_clock_slew_ticks,
                slew_rate_ppm: self.slew_rate_ppm,
            },
            partitions: self.partitions,
        };
        config
            .validate()
            .map_err(|error| SpecError::new(at, error.0))?;
        Ok(config)
    }
}

/// A model action as a trace writes it: `step N` (1-based), `tick`, `replicate`, `failover`,
/// `redis-restart`, `lose-reply N`, `drop-connection N`, `node-restart N`, ....
pub fn action_text(action: Action) -> String {
    match action {
        Action::Step(index) => format!("step {}", u32::from(index) + 1),
        Action::Tick => "tick".into(),
        Action::Replicate => "replicate".into(),
        Action::Failover => "failover".into(),
        Action::RedisRestart => "redis-restart".into(),
        Action::EvictFence => "evict-fence".into(),
        Action::LoseReply(index) => format!("lose-reply {}", u32::from(index) + 1),
        Action::DropConnection(index) => format!("drop-connection {}", u32::from(index) + 1),
        Action::NodeRestart(node) => format!("node-restart {node}"),
        Action::NodeCrash(node) => format!("node-crash {node}"),
        Action::NodeClockJump(node) => format!("node-clock-jump {node}"),
        Action::NodeClockSlew(node) => format!("node-clock-slew {node}"),
        Action::RedisClockJump => "redis-clock-jump".into(),
        Action::RedisClockSlew => "redis-clock-slew".into(),
        Action::AofFsync => "aof-fsync".into(),
        Action::Partition(index, server) => {
            format!("partition {} {server}", u32::from(index) + 1)
        }
    }
}

/// Parses [`action_text`]'s output.
pub fn parse_action(text: &str) -> Option<Action> {
    match text {
        "tick" => Some(Action::Tick),
        "replicate" => Some(Action::Replicate),
        "failover" => Some(Action::Failover),
        "redis-restart" => Some(Action::RedisRestart),
        "evict-fence" => Some(Action::EvictFence),
        "redis-clock-jump" => Some(Action::RedisClockJump),
        "redis-clock-slew" => Some(Action::RedisClockSlew),
        "aof-fsync" => Some(Action::AofFsync),
        _ if text.starts_with("partition ") => {
            let mut parts = text["partition ".len()..].split(' ');
            let caller: u32 = parts.next()?.parse().ok()?;
            let server: u8 = parts.next()?.parse().ok()?;
            if parts.next().is_some() {
                return None;
            }
            let index = u8::try_from(caller.checked_sub(1)?).ok()?;
            Some(Action::Partition(index, server))
        }
        _ if text.starts_with("node-") => {
            let (kind, node) = text.rsplit_once(' ')?;
            let node: u8 = node.parse().ok().filter(|n| *n >= 1)?;
            match kind {
                "node-restart" => Some(Action::NodeRestart(node)),
                "node-crash" => Some(Action::NodeCrash(node)),
                "node-clock-jump" => Some(Action::NodeClockJump(node)),
                "node-clock-slew" => Some(Action::NodeClockSlew(node)),
                _ => None,
            }
        }
        _ => {
            let (make, caller): (fn(u8) -> Action, &str) =
                if let Some(caller) = text.strip_prefix("step ") {
                    (Action::Step, caller)
                } else if let Some(caller) = text.strip_prefix("lose-reply ") {
                    (Action::LoseReply, caller)
                } else {
                    (
                        Action::DropConnection,
                        text.strip_prefix("drop-connection ")?,
                    )
                };
            let caller: u32 = caller.parse().ok()?;
            let index = caller.checked_sub(1)?;
            u8::try_from(index).ok().map(make)
        }
    }
}

/// A file-name-safe slug of a scenario name: `step5-fencing --unfenced` →
/// `step5-fencing-unfenced`.
pub fn slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    // Keep names short: cut long ones at a dash, within 48 characters.
    if slug.len() > 48 {
        let cut = slug[..48].rfind('-').unwrap_or(48);
        slug.truncate(cut);
    }
    let slug = slug.trim_end_matches('-').to_string();
    if slug.is_empty() {
        "trace".into()
    } else {
        slug
    }
}

/// The file text of a user's safeguard, none for a built-in one.
fn file_text(safeguard: Safeguard) -> Option<String> {
    match safeguard {
        Safeguard::User(id) => Some(leaselab_model::safeguard::user::get(id).file_text.clone()),
        _ => None,
    }
}

/// A user's safeguard from the file text a trace carries (registered in this process), none
/// when the trace names a built-in one.
fn user_safeguard(
    at: &str,
    name: &str,
    file: &Option<String>,
) -> Result<Option<Safeguard>, SpecError> {
    let Some(text) = file else {
        return Ok(None);
    };
    let field = format!("{at}.safeguard_file");
    let compiled = leaselab_model::safeguard::spec::compile(&field, text)
        .map_err(|error| SpecError::unknown(field.clone(), error.to_string()))?;
    if compiled.name != name {
        return Err(SpecError::unknown(
            field,
            format!(
                "the safeguard file is named '{}' but the trace says '{name}'",
                compiled.name
            ),
        ));
    }
    let id = leaselab_model::safeguard::user::register(compiled)
        .map_err(|error| SpecError::unknown(field, error))?;
    Ok(Some(Safeguard::User(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use leaselab_model::scenario::Variant;

    #[test]
    fn every_tutorial_scenario_round_trips_through_its_mirror() {
        for step in leaselab_model::scenario::TUTORIAL_STEPS {
            for unfenced in [false, true] {
                let variant = Variant {
                    unfenced,
                    ..Variant::default()
                };
                let scenario = Scenario::tutorial(step, variant).unwrap();
                let spec = ScenarioSpec::from_scenario(&scenario);
                assert_eq!(spec.to_scenario("scenario").unwrap(), scenario);
            }
        }
    }

    #[test]
    fn every_fault_round_trips() {
        let faults = [
            Fault::Pause {
                caller: 2,
                at: Point::BeforeWrite,
                pause_ms: 7,
            },
            Fault::Failover { at_ms: 3 },
            Fault::RedisRestart { at_ms: 4 },
            Fault::ReplicaRestart { at_ms: 8 },
            Fault::RedisCrashAof {
                at_ms: 5,
                appendfsync: Appendfsync::Everysec,
            },
            Fault::EvictFenceCounter { at_ms: 6 },
            Fault::Partition {
                a: Host::Caller(1),
                b: Host::Redis,
                from_ms: 1,
                until_ms: 9,
                one_way: true,
            },
            Fault::ClockJump {
                host: Host::Replica,
                at_ms: 5,
                jump_ms: -20,
            },
            Fault::ClockDrift {
                host: Host::Redis,
                rate_ppm: -20_000,
            },
            Fault::ClockSlew {
                host: Host::Redis,
                at_ms: 20,
                offset_ms: 3_000,
                rate_ppm: 500,
            },
            Fault::LostReply {
                caller: 2,
                on: FaultsOn::Release,
            },
            Fault::DroppedConnection {
                caller: 1,
                on: FaultsOn::Any,
            },
        ];
        for fault in faults {
            let spec = FaultSpec::from_fault(&fault);
            assert_eq!(spec.to_fault("f", "s").unwrap(), fault);
        }
    }

    #[test]
    fn an_unknown_safeguard_names_the_scenario_and_the_field() {
        let scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
        let mut spec = ScenarioSpec::from_scenario(&scenario);
        spec.safeguard = "quantum-lock".into();
        let error = spec.to_scenario("scenario").unwrap_err();
        assert_eq!(error.field, "scenario.safeguard");
        assert!(error.unknown_scenario_part);
        assert!(error.message.contains("step2-lock"), "{}", error.message);
        assert!(error.message.contains("quantum-lock"), "{}", error.message);
    }

    #[test]
    fn actions_round_trip() {
        for action in [
            Action::Step(0),
            Action::Step(7),
            Action::Tick,
            Action::Replicate,
            Action::Failover,
            Action::RedisRestart,
            Action::EvictFence,
            Action::LoseReply(0),
            Action::DropConnection(2),
        ] {
            assert_eq!(parse_action(&action_text(action)), Some(action));
        }
        assert_eq!(parse_action("step 0"), None);
        assert_eq!(parse_action("jump"), None);
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("step5-fencing --unfenced"), "step5-fencing-unfenced");
        assert_eq!(slug("step3-ttl"), "step3-ttl");
        assert_eq!(slug("--"), "trace");
        let long = slug("step2-lock --callers 2 --pause 1:after-read:400ms --failover-at 200ms");
        assert_eq!(long, "step2-lock-callers-2-pause-1-after-read-400ms");
    }
}
