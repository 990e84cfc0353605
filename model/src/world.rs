//! An in-process driver: callers and stand-ins on one discrete clock.
//!
//! [`World`] is the state the model checker explores and the random-interleaving property
//! tests drive. Requests are answered at once (atomically) by the stand-ins; what makes runs
//! differ is the schedule: which caller steps next, when the clock advances, when a replica
//! catches up, when a failover strikes. A ready caller that is not scheduled while time
//! passes is a paused caller; [`WorldConfig::max_pause_ms`] bounds how long that may last in
//! all, per caller (`None`: unbounded, the asynchronous model).
//!
//! Some waiting is not a pause: a caller may start at any time within
//! [`WorldConfig::arrival_window_ms`], and a random sleep (a retry backoff of 5–14 ms) may end
//! at any time in its range. Both show as [`Slot::slack_ms`].
//!
//! A caller that reaches a named point (`Step::Reached`) goes on in the same step: pausing
//! there is the same as pausing just before the step that reached it, because reaching a
//! point never depends on the clock. This keeps the state space small without losing any
//! behaviour.
//!
//! Each caller's machine sits inside the client core ([`crate::client::Client`]), the same
//! one the simulation and real mode drive: the world answers its outputs at once (a connection
//! opens, a request runs). With [`ReplyFaults`] (off by default) a Redis reply can also go
//! astray after the request ran on the server — [`Action::LoseReply`] (the client waits until
//! its deadline and the machine is told [`Input::RedisTimeout`]) or
//! [`Action::DropConnection`] (the client closes the connection and, as go-redis does, sends
//! the request again on a new one after a backoff: a script can run twice). While a fault is
//! possible a Redis request takes two steps: it runs on the server, then its reply arrives
//! ([`SlotState::InFlight`]); without faults it is one step, so state counts are unchanged.

use std::hash::{Hash, Hasher};
use std::ops::DerefMut;
use std::sync::Arc;

use crate::client::{Client, ClientPolicy, Output, Server, SetUp};
use crate::ledger::{CallerResult, Ledger};
use crate::postgres::{datetime, Exec, PgError, Postgres, QueryResult, SessionId, Statement};
use crate::redis::aof::Appendfsync;
use crate::redis::command::{Command, Transaction};
use crate::redis::replication::Effect;
use crate::redis::{Redis, Reply, Session as RedisSession};
use crate::safeguard::lock::token_text;
use crate::safeguard::{
    BalanceIn, Caller, Input, Machine, Outcome, ParamError, Point, Reading, RedisRequest,
    SqlRequest,
};
use crate::scenario::Scenario;

/// Something that can happen next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Caller `n` (0-based) takes its next step.
    Step(u8),
    /// The clock advances one millisecond.
    Tick,
    /// The replica applies the oldest effect it has not applied yet.
    Replicate,
    /// The primary dies; the replica is promoted, losing what had not replicated.
    Failover,
    /// Caller `n`'s Redis reply, in flight, is lost: the request ran, the caller waits until
    /// its deadline ([`ReplyFaults::lost_replies`]).
    LoseReply(u8),
    /// Caller `n`'s Redis connection breaks while its reply is in flight: the request ran,
    /// the client retries it on a new connection ([`ReplyFaults::dropped_connections`]).
    DropConnection(u8),
    /// The single Redis restarts without persistence: keyspace and script cache are gone
    /// ([`World::with_redis_restarts`]).
    RedisRestart,
    /// An `allkeys-*` maxmemory policy evicts the fence counter (a `DEL` the replica gets
    /// too): the next `INCR` starts again from 1 ([`World::with_fence_evictions`]).
    EvictFence,
    /// Redlock node `n` (1-based) restarts without persistence ([`NodeFaults::restarts`]).
    NodeRestart(u8),
    /// Redlock node `n` crashes and restarts empty after the TTL
    /// ([`NodeFaults::delayed_restarts`]).
    NodeCrash(u8),
    /// Redlock node `n`'s clock steps forward ([`NodeFaults::clock_jumps`]).
    NodeClockJump(u8),
    /// Redlock node `n`'s clock starts slewing forward ([`NodeFaults::clock_slews`]).
    NodeClockSlew(u8),
    /// The single Redis's clock steps forward ([`World::with_redis_clock_faults`]).
    RedisClockJump,
    /// The single Redis's clock starts slewing forward ([`World::with_redis_clock_faults`]).
    RedisClockSlew,
    /// The single Redis fsyncs its append-only file: a crash from now on reloads the keys as
    /// they are now ([`World::with_restarts_from_aof`], `everysec` and `no`).
    AofFsync,
    /// Caller `n` (0-based) is cut off from a Redis server (0: the single Redis, `m`: Redlock
    /// node `m`) for the rest of the run ([`World::with_partitions`]).
    Partition(u8, u8),
}

/// Faults between the callers and Redis, as budgets for a whole run: how often each may
/// happen. All zero (the default): no reply is ever lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplyFaults {
    /// Replies that may be lost (the caller times out).
    pub lost_replies: u32,
    /// Connections that may break with a reply in flight (the client retries).
    pub dropped_connections: u32,
    /// Which requests the faults may strike (any, by default).
    pub on: FaultsOn,
}

/// Which Redis requests reply faults may strike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultsOn {
    /// Any request.
    #[default]
    Any,
    /// Only a lock acquire (a retried acquire runs twice).
    Acquire,
    /// Only a lock release.
    Release,
}

impl FaultsOn {
    /// `any`, `acquire` or `release`.
    pub fn name(self) -> &'static str {
        match self {
            FaultsOn::Any => "any",
            FaultsOn::Acquire => "acquire",
            FaultsOn::Release => "release",
        }
    }

    /// Parses [`FaultsOn::name`].
    pub fn parse(text: &str) -> Option<FaultsOn> {
        [FaultsOn::Any, FaultsOn::Acquire, FaultsOn::Release]
            .into_iter()
            .find(|on| on.name() == text)
    }
}

impl ReplyFaults {
    /// True when some fault may still happen.
    pub fn any(&self) -> bool {
        self.lost_replies > 0 || self.dropped_connections > 0
    }
}

/// The client policy a world's callers follow unless told otherwise: the simulation's, except
/// that a statement waits for a row lock as long as it takes (the world has no SQL timeout).
pub fn world_client_policy() -> ClientPolicy {
    ClientPolicy {
        sql_timeout_ms: None,
        ..ClientPolicy::default()
    }
}

/// Where a caller is, between steps.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlotState {
    /// Starts at this time.
    NotStarted {
        /// Start time.
        start_ms: u64,
    },
    /// Ready to take this input.
    Ready(Input),
    /// Asleep until this time (the earliest wake-up; see [`Slot::slack_ms`]).
    Sleeping {
        /// Wake time.
        wake_ms: u64,
    },
    /// Waiting for a row lock held by `by`; the statement is re-executed when it is free.
    Blocked {
        /// The waiting statement.
        request: Arc<SqlRequest>,
        /// The session holding the lock.
        by: SessionId,
    },
    /// Its Redis request ran on the server and the reply is on its way (only while a
    /// [`ReplyFaults`] fault may still happen).
    InFlight {
        /// The reply.
        reply: Reply,
    },
    /// Its Redis reply was lost; the client gives up at `deadline_ms`.
    Awaiting {
        /// When the client gives up.
        deadline_ms: u64,
    },
    /// Finished.
    Done,
}

/// One caller with its connection state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot {
    /// The safeguard machine inside its client core.
    pub client: Client<Caller>,
    /// Where it is.
    pub state: SlotState,
    /// Its PostgreSQL session.
    pub session: SessionId,
    /// Its connection's transaction state on the single Redis (`MULTI` queue, `WATCH`ed
    /// keys); a new connection, a failover or a restart starts it afresh.
    pub redis_session: RedisSession,
    /// How long it has been paused so far, in all (counted only when pauses are bounded).
    pub paused_ms: u64,
    /// How long it may still wait while ready without that counting as a pause: what is left
    /// of its arrival window before it starts, or of the random part of a sleep (a sleep of
    /// 5–14 ms wakes at 5 with 9 ms of slack). Counted only when pauses are bounded.
    pub slack_ms: u64,
    /// How it ended.
    pub outcome: Option<Outcome>,
    /// A write of its balance landed on the server (tracked only with [`ReplyFaults`] or
    /// partitions: without them every landed write is answered, and its outcome says so).
    pub write_landed: bool,
    /// What symmetry reduction remembers about this slot; forgotten on every change.
    canon: symmetry::SlotCanon,
}

impl World {
    /// The single Redis to change, copied if shared (what it remembered is forgotten).
    fn redis_mut(&mut self) -> &mut Redis {
        Arc::make_mut(&mut self.redis).deref_mut()
    }

    /// PostgreSQL to change, copied if shared (what it remembered is forgotten).
    fn postgres_mut(&mut self) -> &mut Postgres {
        Arc::make_mut(&mut self.postgres).deref_mut()
    }
}

/// The slot to change, copied if shared, with what was derived from it forgotten. Every
/// change to a slot goes through here.
fn slot_mut(slot: &mut Arc<Slot>) -> &mut Slot {
    let slot = Arc::make_mut(slot);
    slot.canon = symmetry::SlotCanon::default();
    slot
}

/// A Redis replica with the effects it has not applied yet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Replica {
    /// The replica.
    pub redis: Redis,
    /// Effects in flight from the primary, oldest first.
    pub backlog: Vec<Effect>,
}

/// Bounds and faults of a [`World`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorldConfig {
    /// How long, in all, each caller may be left unscheduled while it is ready and time
    /// passes (`None`: unbounded, the asynchronous model). One GC pause of this length, or
    /// several adding up to it.
    pub max_pause_ms: Option<u64>,
    /// Time stops here.
    pub horizon_ms: u64,
    /// Keep a replica and allow this many failovers.
    pub failovers: u32,
    /// A caller may start at any time up to this long after it could (its requests arrive
    /// at arbitrary moments) without that counting as a pause. Only meaningful when pauses
    /// are bounded: an unbounded pause already covers any arrival time.
    pub arrival_window_ms: u64,
}

impl WorldConfig {
    /// The asynchronous model up to `horizon_ms`: unbounded pauses, no failovers.
    pub fn asynchronous(horizon_ms: u64) -> WorldConfig {
        WorldConfig {
            max_pause_ms: None,
            horizon_ms,
            failovers: 0,
            arrival_window_ms: 0,
        }
    }
}

/// What a restart of the single Redis reloaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reload {
    /// Nothing: a restart without persistence.
    Nothing,
    /// An append-only file last fsynced at the start (`appendfsync everysec` or `no`).
    FromStart,
    /// An append-only file last fsynced at `at_ms` (`appendfsync everysec` or `no`).
    FromFsync {
        /// When.
        at_ms: u64,
    },
    /// An append-only file fsynced before every reply (`appendfsync always`): every key.
    EveryWrite,
}

mod clocks;
mod nodes;
mod step_memo;
mod symmetry;

pub use clocks::{ClockFaults, ClockState, NTP_SLEW_RATE_PPM};
pub use nodes::{NodeFault, NodeFaults, RedisNode};
pub use step_memo::forget as forget_remembered_steps;
pub use symmetry::Memo;

/// What a run is made of that never changes while it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Setup {
    /// Bounds.
    config: WorldConfig,
    initial_balance: i64,
    amount: i64,
    balance_in: BalanceIn,
    balance_key: Vec<u8>,
    lock_key: Vec<u8>,
    wallet_id: i64,
    /// Each caller's token as it appears in Redis.
    tokens: Vec<Vec<u8>>,
    /// Each caller's check-and-set value (`redlock-cas`: its token as a number, written to
    /// PostgreSQL); empty for the other safeguards.
    cas_values: Vec<i64>,
    /// Hash worlds up to a renaming of callers.
    symmetric: bool,
    /// The single Redis's clock rate error in percent (+50: its clock runs 50 % fast, so keys
    /// expire early); its replica shares the server's clock.
    redis_drift_percent: i32,
    /// What may happen to the single Redis's clock (jumps, slews) and how large each is; the
    /// budgets left are in [`World::redis_clock_faults_left`].
    redis_clock_faults: ClockFaults,
    /// What a restart of the single Redis reloads: nothing (no persistence), the keyspace as
    /// at the start or at the last fsync since ([`World::aof_fsynced`]: an AOF under
    /// `appendfsync everysec` or `no`), or every key as it was (`always`).
    aof_snapshot: Option<Arc<Memo<Redis>>>,
    /// The AOF is fsynced before every reply (`appendfsync always`): a restart loses no key.
    aof_every_write: bool,
    /// The faults the run started with (their budgets left are in [`World::faults_left`]).
    faults: ReplyFaults,
    /// Partitions the run started with (left: [`World::partitions_left`]).
    partitions: u32,
    /// The lease duration (a delayed node restart waits longer than it).
    ttl_ms: u64,
    /// The Redlock nodes' clocks and fault budgets the run started with.
    node_faults: NodeFaults,
    /// The scenario, which judges the ledger ([`Scenario::judge`]).
    scenario: Scenario,
}

/// The state of the rarer faults of a [`World`] ([`World::extra`]); all default when none is
/// in play.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtraFaults {
    /// What jumps and slews did to the single Redis's clock so far.
    pub redis_clock: ClockState,
    /// Jumps and slews of the single Redis's clock still allowed.
    pub redis_clock_faults_left: ClockFaults,
    /// The keyspace as of the append-only file's last fsync after the start, and when
    /// (`None`: the start's, or no AOF).
    pub aof_fsynced: Option<(u64, Arc<Memo<Redis>>)>,
    /// Fsyncs of the append-only file still to come within the run (`everysec`: one per
    /// second of the horizon, at moments the search picks; `no`: one per 30 s, as Linux
    /// writes dirty pages back).
    pub fsyncs_left: u32,
    /// Partitions still allowed ([`World::with_partitions`]).
    pub partitions_left: u32,
    /// Who is cut off from which Redis server: (caller, server), sorted.
    pub cut_off: Vec<(u8, u8)>,
    /// Redlock's node faults still allowed (the budget `World::with_node_faults` set, less
    /// those spent).
    pub node_faults_left: NodeFaults,
}

/// A world's callers.
pub type Slots = smallvec::SmallVec<[Arc<Slot>; 3]>;

/// Callers, stand-ins and a clock.
///
/// Equal worlds hash equal; the hash leaves out what never changes during a run (the
/// configuration and the scenario's constants), which equal worlds share anyway. With
/// [`World::set_symmetry`], worlds that differ only by which caller is which hash equal too.
///
/// The stand-ins and the callers sit behind `Arc`s and are copied on write, so cloning a
/// world and taking one step copies only the caller that stepped and the stand-in it used —
/// what makes exploring millions of states affordable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// The clock, shared by everyone.
    pub now_ms: u64,
    /// The Redis primary.
    pub redis: Arc<Memo<Redis>>,
    /// The replica, when failovers are allowed or the safeguard asks replicas (`WAIT`).
    pub replica: Option<Arc<Replica>>,
    /// PostgreSQL.
    pub postgres: Arc<Memo<Postgres>>,
    /// The callers (inline up to three: a world is copied for every step the checker
    /// takes, and a list of its own would be one more allocation each time).
    pub slots: Slots,
    /// Failovers still allowed.
    pub failovers_left: u32,
    /// Restarts of the single Redis (without persistence) still allowed.
    pub restarts_left: u32,
    /// Evictions of the fence counter still allowed.
    pub evictions_left: u32,
    /// Reply faults still allowed.
    pub faults_left: ReplyFaults,
    /// Redlock's independent nodes (empty for the single-server safeguards).
    pub nodes: Vec<Arc<RedisNode>>,
    /// What the rarer faults (clock jumps and slews, AOF fsyncs, partitions) did so far and
    /// may still do, behind one shared pointer: a check without them keeps its worlds small.
    pub extra: Arc<ExtraFaults>,
    /// The first time a caller deleted or extended a lock another caller held (see
    /// [`Trespass`]); `None` while every change to the lock key came from its holder.
    pub trespass: Option<Trespass>,
    setup: Arc<Setup>,
}

/// A caller changed a lock it did not hold: the lock key held caller `holder`'s token, not
/// yet expired, and caller `by`'s request deleted it or moved its expiry. Callers are 0-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Trespass {
    /// Who sent the request.
    pub by: usize,
    /// Whose lock it was.
    pub holder: usize,
    /// True when the lock was deleted, false when its expiry moved.
    pub deleted: bool,
}

impl Trespass {
    /// E.g. `caller 1 deleted the lock of caller 2` (1-based, as narrations number callers).
    pub fn describe(&self) -> String {
        format!(
            "caller {} {} the lock of caller {}",
            self.by + 1,
            if self.deleted { "deleted" } else { "extended" },
            self.holder + 1
        )
    }
}

impl Hash for World {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if self.setup.symmetric {
            return self.hash_canonical(state);
        }
        // The stand-ins' and callers' own fingerprints, remembered in them (most steps leave
        // all but one as they were).
        self.now_ms.hash(state);
        state.write_u64(self.redis.plain_fingerprint());
        self.replica.hash(state);
        state.write_u64(self.postgres.plain_fingerprint());
        state.write_usize(self.slots.len());
        for index in 0..self.slots.len() {
            state.write_u64(self.slot_fingerprint(index));
        }
        self.failovers_left.hash(state);
        self.restarts_left.hash(state);
        self.evictions_left.hash(state);
        self.faults_left.hash(state);
        self.nodes.hash(state);
        self.extra.node_faults_left.hash(state);
        // Hashed only when clock faults or an AOF are in play, so every other state keeps
        // its fingerprint.
        self.hash_redis_clock(state);
        self.hash_aof(state);
        self.hash_partitions(state, &|caller| caller as u64);
        // Hashed only once it happened, so every other state keeps its fingerprint.
        if let Some(trespass) = &self.trespass {
            trespass.hash(state);
        }
    }
}

/// One thing that happened while an [`Action`] was applied. Callers are 0-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A caller sent a request to Redis and got this reply.
    Redis {
        /// The caller.
        caller: usize,
        /// The request.
        request: RedisRequest,
        /// The reply.
        reply: Reply,
        /// What the caller's machine makes of it.
        reading: Option<Reading>,
        /// Which Redis server ([`crate::safeguard::SINGLE_REDIS`], or a Redlock node).
        node: u8,
    },
    /// Something happened to a Redlock node (1-based).
    Node {
        /// The node.
        node: u8,
        /// What.
        fault: NodeFault,
    },
    /// A caller ran a statement and got this result.
    Sql {
        /// The caller.
        caller: usize,
        /// The statement.
        request: SqlRequest,
        /// The result.
        result: Result<QueryResult, PgError>,
        /// What the caller's machine makes of it.
        reading: Option<Reading>,
    },
    /// A caller's statement waits for a row lock.
    SqlBlocked {
        /// The caller.
        caller: usize,
        /// The statement.
        request: SqlRequest,
        /// The session holding the lock.
        by: SessionId,
    },
    /// A caller went to sleep.
    Sleep {
        /// The caller.
        caller: usize,
        /// When it wakes at the earliest.
        wake_ms: u64,
        /// When it wakes at the latest (a random sleep).
        latest_ms: u64,
        /// True for a backoff (the sleep has a deadline), false for work or a watchdog wait.
        backoff: bool,
    },
    /// A caller reached a named point where it may be paused.
    Reached {
        /// The caller.
        caller: usize,
        /// The point.
        point: Point,
    },
    /// A caller finished.
    Done {
        /// The caller.
        caller: usize,
        /// How.
        outcome: Outcome,
    },
    /// The clock advanced to `now_ms`.
    Tick {
        /// The new time.
        now_ms: u64,
    },
    /// A sleeping caller woke, or a caller with a start offset started.
    Wake {
        /// The caller.
        caller: usize,
        /// True when it is its start.
        start: bool,
    },
    /// The replica applied an effect.
    Replicated {
        /// The effect.
        effect: Effect,
    },
    /// The replica was promoted; `lost` effects had not reached it.
    Failover {
        /// How many.
        lost: usize,
    },
    /// The single Redis restarted: without persistence (empty), or after a machine crash,
    /// from its append-only file.
    RedisRestarted {
        /// What it reloaded.
        reloaded: Reload,
    },
    /// The fence counter was evicted.
    FenceEvicted,
    /// The single Redis fsynced its append-only file.
    AofFsynced {
        /// When.
        at_ms: u64,
    },
    /// The single Redis's clock was stepped forward, or started slewing.
    RedisClock {
        /// What happened to it.
        fault: ClockFault,
    },
    /// A reply fault, or what the caller's client did about one.
    Fault {
        /// The caller.
        caller: usize,
        /// What.
        fault: ClientFault,
    },
}

/// What happened to a server's clock, as [`Event::RedisClock`] (and a node's
/// [`NodeFault::Clock`]) report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockFault {
    /// It stepped forward at once.
    Jumped {
        /// By how much.
        by_ms: u64,
    },
    /// It started a gradual correction forward.
    SlewStarted {
        /// The offset it applies in all.
        by_ms: u64,
        /// How fast, in millionths of elapsed time.
        rate_ppm: u32,
    },
}

impl ClockFault {
    /// The fault in words, after the server's name ("redis", "node 2").
    pub fn describe(&self) -> String {
        match self {
            ClockFault::Jumped { by_ms } => {
                format!("steps its clock forward by {by_ms}ms: keys expire early")
            }
            ClockFault::SlewStarted { by_ms, rate_ppm } => format!(
                "starts slewing its clock forward by {by_ms}ms at {rate_ppm} ppm: a key expires \
                 early by at most {rate_ppm} millionths of its TTL"
            ),
        }
    }
}

/// A reply fault and its consequences, as [`Event::Fault`] reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientFault {
    /// The reply in flight was lost.
    ReplyLost,
    /// The connection broke with the reply in flight.
    ConnectionDropped,
    /// The client gave up waiting (the machine is told of a timeout).
    TimedOut,
    /// The client sends the request again on a new connection.
    Retry {
        /// Which retry (1-based).
        attempt: u32,
    },
    /// A partition cut the caller off from a Redis server (0: the single Redis, `m`: node
    /// `m`): what it sends there is lost, its dial or request waits for its deadline.
    CutOff {
        /// The server.
        server: u8,
    },
    /// A request or a dial of the caller's was lost in the partition.
    RequestLost {
        /// The server.
        server: u8,
    },
}

impl ClientFault {
    /// The fault in words, after "caller N".
    pub fn describe(&self) -> String {
        match self {
            ClientFault::ReplyLost => "loses the reply (the request ran)".to_string(),
            ClientFault::ConnectionDropped => {
                "loses its connection with the reply in flight (the request ran)".to_string()
            }
            ClientFault::TimedOut => "gives up waiting for the reply".to_string(),
            ClientFault::Retry { attempt } => {
                format!("sends the request again on a new connection (retry {attempt})")
            }
            ClientFault::CutOff { server } => {
                format!("is cut off from {} by a partition", server_name(*server))
            }
            ClientFault::RequestLost { server } => format!(
                "sends to {} across the partition: nothing arrives, it waits for its deadline",
                server_name(*server)
            ),
        }
    }
}

/// `redis` (0) or `node N`.
fn server_name(server: u8) -> String {
    match server {
        crate::safeguard::SINGLE_REDIS => "redis".to_string(),
        node => format!("node {node}"),
    }
}

type Sink<'a> = Option<&'a mut Vec<Event>>;

fn emit(sink: &mut Sink<'_>, event: impl FnOnce() -> Event) {
    if let Some(events) = sink.as_deref_mut() {
        events.push(event());
    }
}

impl World {
    /// A world for `scenario`, one token per caller, without reply faults.
    pub fn new(
        scenario: &Scenario,
        tokens: &[u128],
        config: WorldConfig,
    ) -> Result<World, ParamError> {
        World::with_faults(
            scenario,
            tokens,
            config,
            ReplyFaults::default(),
            world_client_policy(),
        )
    }

    /// A world whose callers follow `policy` and whose Redis replies may go astray as
    /// `faults` allow.
    pub fn with_faults(
        scenario: &Scenario,
        tokens: &[u128],
        config: WorldConfig,
        faults: ReplyFaults,
        policy: ClientPolicy,
    ) -> Result<World, ParamError> {
        scenario.validate()?;
        let callers = tokens
            .iter()
            .zip(1..)
            .map(|(token, caller)| {
                scenario
                    .safeguard
                    .build_caller(&scenario.params, caller, *token)
            })
            .collect::<Result<Vec<Caller>, ParamError>>()?;
        World::with_callers(scenario, tokens, callers, config, faults, policy)
    }

    /// A world whose callers are the given machines (each holding the token of the same
    /// position in `tokens`) instead of `scenario.safeguard`'s: for protocols built in tests
    /// (the scenario still gives the keys, the balance, the start offsets). Every machine must
    /// keep the same stand-ins as `scenario.safeguard` (where the balance lives, whether it
    /// uses Redis).
    pub fn with_callers(
        scenario: &Scenario,
        tokens: &[u128],
        callers: Vec<Caller>,
        config: WorldConfig,
        faults: ReplyFaults,
        policy: ClientPolicy,
    ) -> Result<World, ParamError> {
        scenario.validate()?;
        assert_eq!(
            tokens.len(),
            scenario.callers as usize,
            "one token per caller"
        );
        assert_eq!(callers.len(), tokens.len(), "one machine per token");
        assert!(
            scenario.callers <= u32::from(u8::MAX),
            "the world steps at most 255 callers"
        );
        let (mut redis, mut postgres) = scenario.seeded_stand_ins();
        let keys = &scenario.params.keys;
        redis.drain_effects();
        let bounded = config.max_pause_ms.is_some();
        let balance_in = scenario.balance_in();
        let redis_nodes = scenario.safeguard.redis_nodes();
        let set_up = SetUp {
            redis: (scenario.safeguard.uses_lock() && redis_nodes == 0)
                || balance_in == BalanceIn::Redis,
            postgres: balance_in == BalanceIn::Postgres,
        };
        let mut slots = Slots::with_capacity(tokens.len());
        for (index, machine) in callers.into_iter().enumerate() {
            let mut client = Client::new(machine, policy, set_up);
            // Set-up connections open at once.
            while let Some(output) = client.poll(0) {
                let Output::Connect { conn, .. } = output else {
                    unreachable!("set-up only connects, got {output:?}");
                };
                client.handle_connected(conn);
            }
            let session = postgres.connect();
            let start_ms = scenario.start_offset_ms(index);
            let state = if start_ms == 0 {
                SlotState::Ready(Input::Start)
            } else {
                SlotState::NotStarted { start_ms }
            };
            let slack_ms = if bounded && start_ms == 0 {
                config.arrival_window_ms
            } else {
                0
            };
            slots.push(Arc::new(Slot {
                client,
                state,
                session,
                redis_session: RedisSession::new(),
                paused_ms: 0,
                slack_ms,
                outcome: None,
                write_landed: false,
                canon: symmetry::SlotCanon::default(),
            }));
        }
        // A replica exists when it can be failed over to, or when the safeguard asks it
        // (`WAIT`): without one, `lease-wait` never trusts a lock.
        let asks_replicas = crate::safeguard::Safeguard::replicated().contains(&scenario.safeguard);
        let replica = (config.failovers > 0 || asks_replicas).then(|| {
            // A replica that has completed its initial sync: it holds the seeded keys.
            let mut copy = Redis::replica();
            if scenario.balance_in() == BalanceIn::Redis {
                copy.apply_effect(&Effect::Set {
                    key: keys.balance.clone(),
                    value: scenario.initial_balance.to_string().into_bytes(),
                    expire_at_ms: None,
                    db: 0,
                });
            }
            if scenario.initial_fence_counter != 0 {
                copy.apply_effect(&Effect::Set {
                    key: keys.fence.clone(),
                    value: scenario.initial_fence_counter.to_string().into_bytes(),
                    expire_at_ms: None,
                    db: 0,
                });
            }
            Arc::new(Replica {
                redis: copy,
                backlog: Vec::new(),
            })
        });
        // Without a replica nobody reads the primary's effects.
        redis.record_effects(replica.is_some());
        Ok(World {
            now_ms: 0,
            redis: Arc::new(Memo::new(redis)),
            replica,
            postgres: Arc::new(Memo::new(postgres)),
            slots,
            failovers_left: config.failovers,
            restarts_left: 0,
            evictions_left: 0,
            faults_left: faults,
            nodes: (0..redis_nodes)
                .map(|_| Arc::new(RedisNode::new()))
                .collect(),
            extra: Arc::default(),
            trespass: None,
            setup: Arc::new(Setup {
                config,
                initial_balance: scenario.initial_balance,
                amount: scenario.params.amount,
                balance_in: scenario.balance_in(),
                balance_key: keys.balance.clone(),
                lock_key: keys.lock.clone(),
                wallet_id: scenario.params.wallet_id,
                tokens: tokens.iter().map(|t| token_text(*t)).collect(),
                cas_values: match scenario.safeguard {
                    crate::safeguard::Safeguard::Redlock { cas: true, .. } => tokens
                        .iter()
                        .map(|t| crate::safeguard::redlock::Redlock::cas_value(*t))
                        .collect(),
                    _ => Vec::new(),
                },
                symmetric: false,
                redis_drift_percent: 0,
                redis_clock_faults: ClockFaults::default(),
                aof_snapshot: None,
                aof_every_write: false,
                faults,
                partitions: 0,
                ttl_ms: scenario.params.ttl_ms,
                node_faults: NodeFaults::default(),
                scenario: scenario.clone(),
            }),
        })
    }

    /// The same world with Redlock node faults and clocks (no effect without nodes).
    /// Allows `restarts` restarts of the single Redis without persistence, at any moment
    /// while a caller has not finished. Not with a replica (a primary that restarts empty
    /// would resync its replica to empty too, which the World does not model).
    pub fn with_redis_restarts(mut self, restarts: u32) -> World {
        assert!(
            restarts == 0 || self.replica.is_none(),
            "a Redis restart with a replica is not modelled"
        );
        self.restarts_left = restarts;
        self
    }

    /// Makes the restarts of [`World::with_redis_restarts`] machine crashes after which Redis
    /// reloads its append-only file, fsynced as `appendfsync` says: under `everysec` or `no`
    /// the file was fsynced at the start and then at moments the search picks
    /// ([`Action::AofFsync`]: at most once per second of the horizon under `everysec`, once
    /// per 30 s under `no`), so the keys come back as they were at the last fsync; under
    /// `always` every acknowledged write was fsynced, so every key comes back as it was. The
    /// script cache is empty either way, and connections are new.
    pub fn with_restarts_from_aof(mut self, appendfsync: Appendfsync) -> World {
        let snapshot = Arc::clone(&self.redis);
        let period_ms = match appendfsync {
            Appendfsync::Always => {
                Arc::make_mut(&mut self.setup).aof_every_write = true;
                return self;
            }
            Appendfsync::Everysec => 1_000,
            Appendfsync::No => 30_000,
        };
        Arc::make_mut(&mut self.setup).aof_snapshot = Some(snapshot);
        let fsyncs = 1 + self.setup.config.horizon_ms / period_ms;
        Arc::make_mut(&mut self.extra).fsyncs_left = u32::try_from(fsyncs).unwrap_or(u32::MAX);
        self
    }

    /// Allows `partitions` partitions, each cutting one unfinished caller off from one Redis
    /// server (the single Redis, or one of Redlock's nodes) at any moment, for the rest of the
    /// run: its dials and requests to that server are lost, and it waits for their deadlines
    /// (go-redis's dial and read timeouts, or a request's own, as Redlock's per node).
    pub fn with_partitions(mut self, partitions: u32) -> World {
        Arc::make_mut(&mut self.setup).partitions = partitions;
        Arc::make_mut(&mut self.extra).partitions_left = partitions;
        self
    }

    /// The Redis servers a caller can be cut off from: 0 (the single Redis) or the nodes.
    fn redis_servers(&self) -> std::ops::RangeInclusive<u8> {
        match self.nodes.len() {
            0 => 0..=0,
            nodes => 1..=u8::try_from(nodes).unwrap_or(u8::MAX),
        }
    }

    /// True when a caller may never finish after its write landed (a reply fault or a
    /// partition can leave it waiting past the horizon), so landed writes are remembered
    /// ([`Slot::write_landed`]) for the ledger.
    fn tracks_landed_writes(&self) -> bool {
        self.setup.faults.any() || self.setup.partitions > 0
    }

    /// True when caller `index` may be cut off from `server` now.
    fn partition_enabled(&self, index: u8, server: u8) -> bool {
        self.extra.partitions_left > 0
            && !self.all_done()
            && self
                .slots
                .get(usize::from(index))
                .is_some_and(|slot| slot.state != SlotState::Done)
            && self.redis_servers().contains(&server)
            && !self.extra.cut_off.contains(&(index, server))
    }

    /// True when caller `index` is cut off from `server`.
    fn is_cut_off(&self, index: usize, server: Server) -> bool {
        let server = match server {
            Server::Redis => crate::safeguard::SINGLE_REDIS,
            Server::Node(node) => node,
            Server::Postgres => return false,
        };
        !self.extra.cut_off.is_empty()
            && u8::try_from(index).is_ok_and(|index| self.extra.cut_off.contains(&(index, server)))
    }

    /// Hashes the partitions, only when some are in play; callers are named by `name` (their
    /// number, or their rank under symmetry).
    pub(super) fn hash_partitions<H: Hasher>(&self, state: &mut H, name: &dyn Fn(usize) -> u64) {
        if self.setup.partitions > 0 {
            self.extra.partitions_left.hash(state);
            let mut cut: Vec<(u64, u8)> = self
                .extra
                .cut_off
                .iter()
                .map(|&(caller, server)| (name(usize::from(caller)), server))
                .collect();
            cut.sort_unstable();
            cut.hash(state);
        }
    }

    /// True when the append-only file may be fsynced now.
    fn fsync_enabled(&self) -> bool {
        self.extra.fsyncs_left > 0 && self.restarts_left > 0 && !self.all_done()
    }

    /// Hashes the append-only file's fsync state, only when a crash reloads one.
    fn hash_aof<H: Hasher>(&self, state: &mut H) {
        if self.setup.aof_snapshot.is_some() {
            self.extra.fsyncs_left.hash(state);
            if let Some((at_ms, fsynced)) = &self.extra.aof_fsynced {
                state.write_u8(0xF5);
                at_ms.hash(state);
                fsynced.hash(state);
            }
        }
    }

    /// Allows `evictions` evictions of the fence counter, each at any moment while a caller
    /// has not finished and the counter exists.
    pub fn with_fence_evictions(mut self, evictions: u32) -> World {
        self.evictions_left = evictions;
        self
    }

    /// Runs the single Redis's clock `percent` % fast (negative: slow), from the start: a key
    /// set for `t` ms of its clock is gone after `t × 100 / (100 + percent)` ms of everyone
    /// else's. From −99 % to +1000 %.
    pub fn with_redis_drift(mut self, percent: i32) -> World {
        assert!(
            (-99..=1000).contains(&percent),
            "a clock rate error of {percent}% is not a clock"
        );
        Arc::make_mut(&mut self.setup).redis_drift_percent = percent;
        self
    }

    /// Lets the single Redis's clock be stepped forward (`faults.jumps` times by
    /// `faults.jump_ms`) and slewed (`faults.slews`, 0 or 1, by `faults.slew_ms` at
    /// `faults.slew_rate_ppm`), each at any moment while a caller has not finished.
    pub fn with_redis_clock_faults(mut self, faults: ClockFaults) -> World {
        assert!(
            faults.slews <= 1,
            "a clock slews towards one offset at a time"
        );
        Arc::make_mut(&mut self.setup).redis_clock_faults = faults;
        Arc::make_mut(&mut self.extra).redis_clock_faults_left = faults;
        self
    }

    /// The bounds the world was made with (they never change while it runs).
    pub fn config(&self) -> &WorldConfig {
        &self.setup.config
    }

    /// The single Redis's clock when everyone else's reads `world_ms`: at its drift rate,
    /// plus what jumps and a slew added ([`ClockState::offset_ms`]).
    pub fn redis_time(&self, world_ms: u64) -> u64 {
        let rated = match self.setup.redis_drift_percent {
            0 => world_ms,
            drift => {
                let rated = i128::from(world_ms) * (100 + i128::from(drift)) / 100;
                u64::try_from(rated.max(0)).unwrap_or(u64::MAX)
            }
        };
        rated.saturating_add(
            self.extra
                .redis_clock
                .offset_ms(&self.setup.redis_clock_faults, world_ms),
        )
    }

    /// Hashes the single Redis's clock faults, only when some are in play.
    pub(super) fn hash_redis_clock<H: Hasher>(&self, state: &mut H) {
        if self.setup.redis_clock_faults.any() {
            self.extra.redis_clock.hash(state);
            self.extra.redis_clock_faults_left.hash(state);
        }
    }

    /// True when the single Redis's clock may jump now.
    fn redis_clock_may_jump(&self) -> bool {
        self.extra.redis_clock_faults_left.jumps > 0 && !self.all_done()
    }

    /// True when the single Redis's clock may start slewing now.
    fn redis_clock_may_slew(&self) -> bool {
        self.extra
            .redis_clock
            .may_slew(&self.extra.redis_clock_faults_left)
            && !self.all_done()
    }

    /// True when the fence counter is in the primary's keyspace now.
    fn fence_counter_exists(&self) -> bool {
        self.redis
            .peek(
                &self.setup.scenario.params.keys.fence,
                self.redis_time(self.now_ms),
            )
            .is_some()
    }

    /// Sets the Redlock nodes' faults.
    pub fn with_node_faults(mut self, faults: NodeFaults) -> World {
        assert!(
            (-99..=1000).contains(&faults.drift_percent),
            "a clock rate error of {}% is not a clock",
            faults.drift_percent
        );
        if self.nodes.is_empty() {
            return self;
        }
        Arc::make_mut(&mut self.setup).node_faults = faults;
        Arc::make_mut(&mut self.extra).node_faults_left = faults;
        self
    }

    /// Makes the hash ignore which caller is which (symmetry reduction for a model checker):
    /// the world is hashed with callers in a canonical order and every token and PostgreSQL
    /// session renamed after its owner's rank, in the machines and in both stand-ins.
    /// Equality is unchanged. Redlock's nodes are renamed like the single Redis (a lock key
    /// holds its owner's token).
    pub fn set_symmetry(&mut self, on: bool) {
        Arc::make_mut(&mut self.setup).symmetric = on;
    }

    /// True when the hash ignores which caller is which.
    pub fn symmetric(&self) -> bool {
        self.setup.symmetric
    }

    /// True when every caller has finished.
    pub fn all_done(&self) -> bool {
        self.slots.iter().all(|slot| slot.state == SlotState::Done)
    }

    /// True when nothing can happen any more: no caller can step, the clock cannot advance,
    /// no replication or failover is pending.
    pub fn stuck(&self) -> bool {
        let mut actions = Vec::new();
        self.actions(&mut actions);
        actions.is_empty()
    }

    /// True when caller `index` can take a step now: it is ready, or the row lock it waits
    /// for has been released.
    pub fn enabled(&self, index: usize) -> bool {
        match &self.slots[index].state {
            SlotState::Ready(_) | SlotState::InFlight { .. } => true,
            SlotState::Blocked { by, .. } => {
                let session = self.slots[index].session;
                self.postgres.lock_wait_over(session, *by)
            }
            SlotState::Awaiting { deadline_ms } => self.now_ms >= *deadline_ms,
            _ => false,
        }
    }

    /// The actions enabled now, in a fixed order: callers by number, then the clock, then
    /// replication and failover.
    pub fn actions(&self, actions: &mut Vec<Action>) {
        for index in 0..self.slots.len() {
            if self.enabled(index) {
                actions.push(Action::Step(index as u8));
            }
        }
        if self.tick_enabled() {
            actions.push(Action::Tick);
        }
        if let Some(replica) = &self.replica {
            if !replica.backlog.is_empty() {
                actions.push(Action::Replicate);
            }
            if self.failovers_left > 0 && !self.all_done() {
                actions.push(Action::Failover);
            }
        }
        if self.restarts_left > 0 && !self.all_done() {
            actions.push(Action::RedisRestart);
        }
        if self.evictions_left > 0 && !self.all_done() && self.fence_counter_exists() {
            actions.push(Action::EvictFence);
        }
        if self.redis_clock_may_jump() {
            actions.push(Action::RedisClockJump);
        }
        if self.redis_clock_may_slew() {
            actions.push(Action::RedisClockSlew);
        }
        if self.fsync_enabled() {
            actions.push(Action::AofFsync);
        }
        if self.extra.partitions_left > 0 && !self.all_done() {
            for index in 0..self.slots.len() {
                for server in self.redis_servers() {
                    if self.partition_enabled(index as u8, server) {
                        actions.push(Action::Partition(index as u8, server));
                    }
                }
            }
        }
        self.node_actions(actions);
        if self.faults_left.any() {
            for index in 0..self.slots.len() {
                let targeted = match self.faults_left.on {
                    FaultsOn::Any => true,
                    on => self.slots[index].client.machine().stage() == Some(on),
                };
                if targeted && matches!(self.slots[index].state, SlotState::InFlight { .. }) {
                    if self.faults_left.lost_replies > 0 {
                        actions.push(Action::LoseReply(index as u8));
                    }
                    if self.faults_left.dropped_connections > 0 {
                        actions.push(Action::DropConnection(index as u8));
                    }
                }
            }
        }
    }

    /// True when reply faults may strike caller `index`'s request in flight.
    fn targeted(&self, index: u8) -> bool {
        match self.faults_left.on {
            FaultsOn::Any => true,
            on => self
                .slots
                .get(usize::from(index))
                .is_some_and(|slot| slot.client.machine().stage() == Some(on)),
        }
    }

    /// True when caller `index`'s reply is in flight.
    fn in_flight(&self, index: u8) -> bool {
        self.slots
            .get(usize::from(index))
            .is_some_and(|slot| matches!(slot.state, SlotState::InFlight { .. }))
    }

    /// True when the clock may advance: before the horizon, while someone is unfinished, and
    /// (with bounded pauses) when every caller that could step has slack or pause left.
    pub fn tick_enabled(&self) -> bool {
        if self.all_done() || self.now_ms >= self.setup.config.horizon_ms {
            return false;
        }
        match self.setup.config.max_pause_ms {
            None => true,
            Some(max_pause_ms) => (0..self.slots.len()).all(|index| {
                let slot = &self.slots[index];
                !self.enabled(index) || slot.slack_ms > 0 || slot.paused_ms < max_pause_ms
            }),
        }
    }

    /// Rewrites the callers' pause counts (absolute, as [`World::tick`] counts them) relative
    /// to the world's pause, for a search that visits worlds in order of their pause (the
    /// most ticks any caller was paused) and keeps that pause with the world itself
    /// (`checker/src/pause_search.rs`). Returns the world's pause.
    ///
    /// A caller's count becomes `H − 1 − s`, where `H` is the pause bound (which must be the
    /// horizon, so that it never binds) and `s` its slack: how many more ticks it may be
    /// paused before the world's pause rises. Two worlds that differ only in their pauses but
    /// have the same slacks have the same futures, except that every future of the one with
    /// the smaller pause has a pause no larger; so such a search keeps only that one. A slack
    /// is capped at the ticks left before the horizon (no caller can be paused longer), and a
    /// finished caller's is 0 (it is never paused again), so that worlds differing only in
    /// slack that no future can use share one count.
    pub fn relative_pauses(&mut self) -> u64 {
        let pause_ms = self.highest_pause_count();
        let top_ms = self.pause_top_ms();
        assert!(pause_ms <= top_ms, "a pause below the horizon");
        self.set_pause_counts(|count_ms| count_ms + top_ms - pause_ms);
        pause_ms
    }

    /// After a step of a world whose counts are relative ([`World::relative_pauses`]):
    /// returns by how much the world's pause rose (0, or 1 when a tick paused a caller with
    /// no slack left) and rewrites the counts relative to the new pause.
    pub fn rebase_pauses(&mut self) -> u64 {
        let rise_ms = self
            .highest_pause_count()
            .saturating_sub(self.pause_top_ms());
        self.set_pause_counts(|count_ms| count_ms.saturating_sub(rise_ms));
        rise_ms
    }

    /// For a search that judges the ledger alone (`checker/src/pause_search.rs`): forgets
    /// what finished caller `index` remembers beyond what that judgement reads. Its client
    /// core goes back to the one `initial` gave it (a finished caller never steps again, and
    /// nothing reads a finished caller's core but the run's statistics), and an accepted
    /// spend keeps only that it was accepted (not the balance it read, its fence or when it
    /// was acknowledged). The ledger's verdict reads only the outcomes' kinds, which
    /// writes landed, and the balances; whether every caller settled reads the kinds too.
    /// Worlds that differ only in how their finished callers got there then share one
    /// fingerprint.
    pub fn forget_finished(&mut self, index: usize, initial: &World) {
        assert_eq!(
            self.slots[index].state,
            SlotState::Done,
            "a finished caller"
        );
        let slot = slot_mut(&mut self.slots[index]);
        slot.client = initial.slots[index].client.clone();
        if let Some(Outcome::Accepted {
            read_balance,
            fence,
            write_acked_ms,
        }) = &mut slot.outcome
        {
            (*read_balance, *fence, *write_acked_ms) = (None, None, 0);
        }
    }

    fn highest_pause_count(&self) -> u64 {
        let counts = self.slots.iter().map(|slot| slot.paused_ms);
        counts.max().unwrap_or(0)
    }

    /// The count of a caller with no slack: one below the pause bound, which must be the
    /// horizon.
    fn pause_top_ms(&self) -> u64 {
        let horizon_ms = self.setup.config.horizon_ms;
        assert_eq!(
            self.setup.config.max_pause_ms,
            Some(horizon_ms),
            "relative pauses need pauses bounded by the horizon only"
        );
        horizon_ms.saturating_sub(1)
    }

    /// Sets every caller's count to `rewrite(count)`, then caps its slacks (of pause, and of
    /// waiting that does not count as a pause) at the ticks it can still wait, and a finished
    /// caller's at 0.
    fn set_pause_counts(&mut self, rewrite: impl Fn(u64) -> u64) {
        let top_ms = self.pause_top_ms();
        let horizon_ms = self.setup.config.horizon_ms;
        let now_ms = self.now_ms;
        for slot in &mut self.slots {
            // A caller waits (and so is paused) only once it is due, and never past the
            // horizon.
            let due_ms = match slot.state {
                SlotState::Sleeping { wake_ms } => wake_ms,
                SlotState::NotStarted { start_ms } => start_ms,
                SlotState::Awaiting { deadline_ms } => deadline_ms,
                _ => now_ms,
            };
            let left_ms = horizon_ms.saturating_sub(due_ms.max(now_ms));
            let (count_ms, slack_ms) = if slot.state == SlotState::Done {
                (top_ms, 0)
            } else {
                let floor_ms = top_ms.saturating_sub(left_ms);
                let count_ms = rewrite(slot.paused_ms).clamp(floor_ms, top_ms);
                (count_ms, slot.slack_ms.min(left_ms))
            };
            if (slot.paused_ms, slot.slack_ms) != (count_ms, slack_ms) {
                let slot = slot_mut(slot);
                slot.paused_ms = count_ms;
                slot.slack_ms = slack_ms;
            }
        }
    }

    /// Performs an enabled action.
    pub fn apply(&mut self, action: Action) {
        self.apply_to(action, &mut None);
    }

    /// Performs an enabled action and says what happened.
    pub fn apply_events(&mut self, action: Action) -> Vec<Event> {
        let mut events = Vec::new();
        self.apply_to(action, &mut Some(&mut events));
        events
    }

    /// Performs an enabled action, appending a line per thing that happened to `log`.
    pub fn apply_logged(&mut self, action: Action, log: Option<&mut Vec<String>>) {
        match log {
            None => self.apply(action),
            Some(log) => {
                let now_ms = self.now_ms;
                for event in self.apply_events(action) {
                    log.push(log_line(now_ms, &event));
                }
            }
        }
    }

    /// True when `action` is one of [`World::actions`] now.
    pub fn is_enabled(&self, action: Action) -> bool {
        match action {
            Action::Step(index) => {
                usize::from(index) < self.slots.len() && self.enabled(usize::from(index))
            }
            Action::Tick => self.tick_enabled(),
            Action::Replicate => self
                .replica
                .as_ref()
                .is_some_and(|replica| !replica.backlog.is_empty()),
            Action::Failover => {
                self.replica.is_some() && self.failovers_left > 0 && !self.all_done()
            }
            Action::RedisRestart => self.restarts_left > 0 && !self.all_done(),
            Action::EvictFence => {
                self.evictions_left > 0 && !self.all_done() && self.fence_counter_exists()
            }
            Action::LoseReply(index) => {
                self.faults_left.lost_replies > 0 && self.in_flight(index) && self.targeted(index)
            }
            Action::DropConnection(index) if !self.targeted(index) => false,
            Action::DropConnection(index) => {
                self.faults_left.dropped_connections > 0 && self.in_flight(index)
            }
            Action::RedisClockJump => self.redis_clock_may_jump(),
            Action::RedisClockSlew => self.redis_clock_may_slew(),
            Action::AofFsync => self.fsync_enabled(),
            Action::Partition(index, server) => self.partition_enabled(index, server),
            Action::NodeRestart(_)
            | Action::NodeCrash(_)
            | Action::NodeClockJump(_)
            | Action::NodeClockSlew(_) => self.node_action_enabled(action),
        }
    }

    fn apply_to(&mut self, action: Action, sink: &mut Sink<'_>) {
        // A disabled action would silently explore a state the protocol cannot reach (a caller
        // stepping while blocked, time passing beyond the horizon): every verdict built on it
        // would mislead, so it is a bug in the caller of `apply`, not a state to explore.
        assert!(
            self.is_enabled(action),
            "World::apply of a disabled action {action:?} at t={}",
            self.now_ms
        );
        match action {
            Action::Step(index) if sink.is_none() && self.steps_are_remembered() => {
                self.step_remembered(usize::from(index));
            }
            Action::Step(index) => self.step(usize::from(index), sink),
            Action::Tick => self.tick(sink),
            Action::Replicate => {
                let replica = self.replica.as_mut().expect("replicate needs a replica");
                let replica = Arc::make_mut(replica);
                let effect = replica.backlog.remove(0);
                replica.redis.apply_effect(&effect);
                emit(sink, || Event::Replicated { effect });
            }
            Action::Failover => {
                let replica = self.replica.take().expect("failover needs a replica");
                let lost = replica.backlog.len();
                let mut redis = replica.redis.clone();
                redis.promote();
                self.redis = Arc::new(Memo::new(redis));
                // The old primary is gone; no new replica joins within a run.
                self.replica = None;
                self.failovers_left -= 1;
                self.forget_redis_sessions();
                emit(sink, || Event::Failover { lost });
            }
            Action::RedisRestart => {
                self.restarts_left -= 1;
                let reloaded = if self.setup.aof_every_write {
                    self.redis_mut().restart_keeping_keys();
                    Reload::EveryWrite
                } else if let Some((at_ms, fsynced)) = self.extra.aof_fsynced.clone() {
                    self.redis_mut().restart_from(&fsynced);
                    Reload::FromFsync { at_ms }
                } else if let Some(snapshot) = self.setup.aof_snapshot.clone() {
                    self.redis_mut().restart_from(&snapshot);
                    Reload::FromStart
                } else {
                    self.redis_mut().restart_empty();
                    Reload::Nothing
                };
                self.forget_redis_sessions();
                emit(sink, || Event::RedisRestarted { reloaded });
            }
            Action::EvictFence => {
                self.evictions_left -= 1;
                let key = self.setup.scenario.params.keys.fence.clone();
                let del = RedisRequest::Command(Command::Del(vec![key]));
                let _ = self.run_redis(&del);
                emit(sink, || Event::FenceEvicted);
            }
            Action::LoseReply(index) => {
                let index = usize::from(index);
                self.faults_left.lost_replies -= 1;
                let slot = slot_mut(&mut self.slots[index]);
                let deadline_ms = slot
                    .client
                    .poll_timeout()
                    .expect("a request in flight has a deadline");
                slot.state = SlotState::Awaiting { deadline_ms };
                emit(sink, || Event::Fault {
                    caller: index,
                    fault: ClientFault::ReplyLost,
                });
            }
            Action::DropConnection(index) => {
                let index = usize::from(index);
                self.faults_left.dropped_connections -= 1;
                emit(sink, || Event::Fault {
                    caller: index,
                    fault: ClientFault::ConnectionDropped,
                });
                let slot = slot_mut(&mut self.slots[index]);
                slot.state = SlotState::Done;
                slot.client
                    .handle_connection_broke("connection reset by peer".to_string());
                self.drive(index, sink);
            }
            Action::Partition(index, server) => {
                let extra = Arc::make_mut(&mut self.extra);
                extra.partitions_left -= 1;
                extra.cut_off.push((index, server));
                extra.cut_off.sort_unstable();
                emit(sink, || Event::Fault {
                    caller: usize::from(index),
                    fault: ClientFault::CutOff { server },
                });
            }
            Action::AofFsync => {
                let at_ms = self.now_ms;
                let fsynced = Arc::clone(&self.redis);
                let extra = Arc::make_mut(&mut self.extra);
                extra.fsyncs_left -= 1;
                extra.aof_fsynced = Some((at_ms, fsynced));
                emit(sink, || Event::AofFsynced { at_ms });
            }
            Action::RedisClockJump => {
                let by_ms = self.setup.redis_clock_faults.jump_ms;
                let extra = Arc::make_mut(&mut self.extra);
                extra.redis_clock_faults_left.jumps -= 1;
                extra.redis_clock.jumped_ms = extra.redis_clock.jumped_ms.saturating_add(by_ms);
                emit(sink, || Event::RedisClock {
                    fault: ClockFault::Jumped { by_ms },
                });
            }
            Action::RedisClockSlew => {
                let now_ms = self.now_ms;
                let extra = Arc::make_mut(&mut self.extra);
                extra.redis_clock_faults_left.slews -= 1;
                extra.redis_clock.slewing_since_ms = Some(now_ms);
                let faults = self.setup.redis_clock_faults;
                emit(sink, || Event::RedisClock {
                    fault: ClockFault::SlewStarted {
                        by_ms: faults.slew_ms,
                        rate_ppm: faults.slew_rate_ppm,
                    },
                });
            }
            Action::NodeRestart(_)
            | Action::NodeCrash(_)
            | Action::NodeClockJump(_)
            | Action::NodeClockSlew(_) => self.apply_node_fault(action, sink),
        }
    }

    fn tick(&mut self, sink: &mut Sink<'_>) {
        if self.setup.config.max_pause_ms.is_some() {
            for index in 0..self.slots.len() {
                if self.enabled(index) {
                    let slot = slot_mut(&mut self.slots[index]);
                    if slot.slack_ms > 0 {
                        slot.slack_ms -= 1;
                    } else {
                        slot.paused_ms += 1;
                    }
                }
            }
        }
        self.now_ms += 1;
        let now_ms = self.now_ms;
        emit(sink, || Event::Tick { now_ms });
        self.nodes_come_back(sink);
        let arrival_window_ms = if self.setup.config.max_pause_ms.is_some() {
            self.setup.config.arrival_window_ms
        } else {
            0
        };
        for (index, slot) in self.slots.iter_mut().enumerate() {
            let (input, slack_ms) = match slot.state {
                SlotState::Sleeping { wake_ms } if wake_ms <= now_ms => {
                    (Input::Woke, slot.slack_ms)
                }
                SlotState::NotStarted { start_ms } if start_ms <= now_ms => {
                    (Input::Start, arrival_window_ms)
                }
                _ => continue,
            };
            let start = input == Input::Start;
            emit(sink, || Event::Wake {
                caller: index,
                start,
            });
            let slot = slot_mut(slot);
            slot.state = SlotState::Ready(input);
            slot.slack_ms = slack_ms;
        }
    }

    /// True when a caller's step reads nothing of its world but what
    /// [`step_memo::CallerBefore`] names (no replica to feed, no Redlock node), and is worth
    /// remembering: with pauses bounded, a waiting caller's slot changes at every tick (its
    /// pause is counted), so the same step is seldom met twice and remembering costs more
    /// than it saves (measured on `frontier`).
    fn steps_are_remembered(&self) -> bool {
        self.replica.is_none() && self.nodes.is_empty() && self.setup.config.max_pause_ms.is_none()
    }

    /// [`World::step`] of caller `index`, recalled when this thread took the same step
    /// lately (see `step_memo`), taken and remembered otherwise.
    fn step_remembered(&mut self, index: usize) {
        let before = step_memo::CallerBefore {
            setup: &self.setup,
            slot: &self.slots[index],
            redis: &self.redis,
            postgres: &self.postgres,
            extra: &self.extra,
            index,
            now_ms: self.now_ms,
            faults_left: self.faults_left,
            trespass: self.trespass,
        };
        if let Some(after) = step_memo::recall_caller(&before) {
            self.slots[index] = after.slot;
            self.redis = after.redis;
            self.postgres = after.postgres;
            self.trespass = after.trespass;
            return;
        }
        let before = before.kept();
        self.step(index, &mut None);
        let after = step_memo::CallerAfter {
            slot: Arc::clone(&self.slots[index]),
            redis: Arc::clone(&self.redis),
            postgres: Arc::clone(&self.postgres),
            trespass: self.trespass,
        };
        step_memo::remember_caller(before, after);
    }

    fn step(&mut self, index: usize, sink: &mut Sink<'_>) {
        let now_ms = self.now_ms;
        let slot = slot_mut(&mut self.slots[index]);
        let state = std::mem::replace(&mut slot.state, SlotState::Done);
        match state {
            SlotState::Ready(input) => slot.client.deliver(input),
            SlotState::Blocked { request, .. } => {
                self.run_sql(index, request, sink);
                return;
            }
            SlotState::InFlight { reply } => slot.client.handle_redis_reply(reply),
            SlotState::Awaiting { .. } => {
                slot.client.handle_timeout(now_ms);
                emit(sink, || Event::Fault {
                    caller: index,
                    fault: ClientFault::TimedOut,
                });
            }
            other => panic!("caller {index} stepped while {other:?}"),
        }
        self.drive(index, sink);
    }

    /// Carries out caller `index`'s client outputs until it waits: for a reply in flight, a
    /// sleep, a row lock, its next step — or it is done.
    ///
    /// A named point resumes at once: a pause there is time passing before the step that
    /// reached it, which is the same (reaching a point never depends on the clock).
    fn drive(&mut self, index: usize, sink: &mut Sink<'_>) {
        let now_ms = self.now_ms;
        let mut backoff_slack_ms = 0;
        loop {
            let output = slot_mut(&mut self.slots[index]).client.poll(now_ms);
            let Some(output) = output else {
                panic!("caller {index}'s client waits for nothing");
            };
            match output {
                Output::BeginRedis { .. } | Output::BeginSql { .. } | Output::Close { .. } => {}
                Output::Connect { server, .. } | Output::SendRedis { server, .. }
                    if self.is_cut_off(index, server) =>
                {
                    let slot = slot_mut(&mut self.slots[index]);
                    let deadline_ms = slot
                        .client
                        .poll_timeout()
                        .expect("a dial or a request has a deadline");
                    slot.state = SlotState::Awaiting { deadline_ms };
                    slot.slack_ms = 0;
                    let server = match server {
                        Server::Node(node) => node,
                        _ => crate::safeguard::SINGLE_REDIS,
                    };
                    emit(sink, || Event::Fault {
                        caller: index,
                        fault: ClientFault::RequestLost { server },
                    });
                    return;
                }
                Output::Connect {
                    server: Server::Node(node),
                    conn,
                    ..
                } => self.connect_node(index, node, conn),
                Output::Connect { server, conn, .. } => {
                    let slot = slot_mut(&mut self.slots[index]);
                    if server == Server::Redis {
                        slot.redis_session = RedisSession::new();
                    }
                    slot.client.handle_connected(conn);
                }
                Output::SendRedis {
                    server: Server::Node(node),
                    ..
                } if self.node_down(node) => {
                    slot_mut(&mut self.slots[index])
                        .client
                        .handle_connection_broke("connection reset by peer".to_string());
                }
                Output::SendRedis {
                    server, request, ..
                } => {
                    self.send_redis(index, server, request, sink);
                    return;
                }
                Output::SendSql { request, .. } => {
                    self.run_sql(index, request, sink);
                    return;
                }
                Output::DrawBackoff { below_ms, .. } => {
                    // The earliest retry; the rest of the random backoff is slack.
                    let client = &mut slot_mut(&mut self.slots[index]).client;
                    let deadline_ms = client.request_deadline_ms().unwrap_or(now_ms);
                    backoff_slack_ms = below_ms
                        .saturating_sub(1)
                        .min(deadline_ms.saturating_sub(now_ms + 1));
                    client.handle_backoff_drawn(now_ms, 0);
                }
                Output::Retry { attempt, .. } => {
                    emit(sink, || Event::Fault {
                        caller: index,
                        fault: ClientFault::Retry { attempt },
                    });
                    let bounded = self.setup.config.max_pause_ms.is_some();
                    let slot = slot_mut(&mut self.slots[index]);
                    slot.state = SlotState::Ready(Input::Woke);
                    slot.slack_ms = if bounded { backoff_slack_ms } else { 0 };
                    return;
                }
                Output::Sleep {
                    min_ms,
                    max_ms,
                    deadline_ms,
                } => {
                    let mut wake_ms = now_ms.saturating_add(min_ms);
                    let mut latest_ms = now_ms.saturating_add(max_ms.max(min_ms));
                    if let Some(deadline_ms) = deadline_ms {
                        wake_ms = wake_ms.min(deadline_ms.max(now_ms));
                        latest_ms = latest_ms.min(deadline_ms.max(now_ms));
                    }
                    emit(sink, || Event::Sleep {
                        caller: index,
                        wake_ms,
                        latest_ms,
                        backoff: deadline_ms.is_some(),
                    });
                    let slack_ms = if self.setup.config.max_pause_ms.is_some() {
                        latest_ms - wake_ms
                    } else {
                        0
                    };
                    let slot = slot_mut(&mut self.slots[index]);
                    slot.slack_ms = slack_ms;
                    if wake_ms <= now_ms {
                        slot.state = SlotState::Ready(Input::Woke);
                    } else {
                        slot.state = SlotState::Sleeping { wake_ms };
                    }
                    return;
                }
                Output::Reached(point) => {
                    emit(sink, || Event::Reached {
                        caller: index,
                        point,
                    });
                    slot_mut(&mut self.slots[index]).client.handle_resumed();
                }
                Output::Done(outcome) => {
                    let session = self.slots[index].session;
                    self.postgres_mut().disconnect(session);
                    let slot = slot_mut(&mut self.slots[index]);
                    slot.state = SlotState::Done;
                    slot.slack_ms = 0;
                    if sink.is_some() {
                        let outcome = outcome.clone();
                        emit(sink, || Event::Done {
                            caller: index,
                            outcome,
                        });
                    }
                    slot.outcome = Some(outcome);
                    return;
                }
            }
        }
    }

    /// Runs caller `index`'s Redis request; its reply is handed back at once, or (while a
    /// reply fault may happen) put in flight.
    fn send_redis(
        &mut self,
        index: usize,
        server: Server,
        request: Arc<RedisRequest>,
        sink: &mut Sink<'_>,
    ) {
        let (node, reply) = match server {
            Server::Node(node) => {
                let now_ms = self.node_now_ms(node, self.now_ms);
                let state = Arc::make_mut(&mut self.nodes[usize::from(node) - 1]);
                let reply = run_request(&mut state.redis, &request, now_ms);
                state.redis.drain_effects();
                (node, reply)
            }
            _ => {
                let holder = self.lock_holder_at(self.now_ms);
                let lock_before = self.stored_lock();
                let reply = self.run_redis_for(index, &request);
                self.note_trespass(index, holder, lock_before);
                (crate::safeguard::SINGLE_REDIS, reply)
            }
        };
        if self.tracks_landed_writes() && self.is_balance_write(&request, &reply) {
            slot_mut(&mut self.slots[index]).write_landed = true;
        }
        if sink.is_some() {
            let reading = self.slots[index]
                .client
                .machine()
                .reading(&Input::Redis(reply.clone()));
            let reply = reply.clone();
            emit(sink, || Event::Redis {
                caller: index,
                request: RedisRequest::clone(&request),
                reply,
                reading,
                node,
            });
        }
        if self.faults_left.any() {
            let slot = slot_mut(&mut self.slots[index]);
            slot.state = SlotState::InFlight { reply };
            slot.slack_ms = 0;
        } else {
            let client = &mut slot_mut(&mut self.slots[index]).client;
            client.handle_redis_reply(reply);
            let input = client.take_input().expect("a reply is an input");
            self.ready(index, input);
        }
    }

    /// True when `request` was a write of the balance that Redis applied.
    ///
    /// In a pipeline: a `SET` of the balance answered `OK`, or queued in a transaction whose
    /// `EXEC` ran it.
    fn is_balance_write(&self, request: &RedisRequest, reply: &Reply) -> bool {
        let balance_set = |command: &Command| matches!(command, Command::Set { key, .. } if *key == self.setup.balance_key);
        let ok = |reply: &Reply| matches!(reply, Reply::Status(status) if status == "OK");
        match (request, reply) {
            (RedisRequest::Command(command), reply) => balance_set(command) && ok(reply),
            (RedisRequest::Pipeline(commands), Reply::Array(replies)) => {
                let mut queued = false;
                commands.iter().zip(replies).any(|(command, reply)| {
                    match (command, reply) {
                        (command, Reply::Status(status)) if status == "QUEUED" => {
                            queued |= balance_set(command);
                        }
                        (Command::Transaction(Transaction::Exec), Reply::Array(_)) => {
                            return std::mem::take(&mut queued);
                        }
                        (Command::Transaction(_), _) => queued = false,
                        _ => {}
                    }
                    balance_set(command) && ok(reply)
                })
            }
            _ => false,
        }
    }

    fn ready(&mut self, index: usize, input: Input) {
        let slot = slot_mut(&mut self.slots[index]);
        slot.state = SlotState::Ready(input);
        slot.slack_ms = 0;
    }

    fn run_sql(&mut self, index: usize, request: Arc<SqlRequest>, sink: &mut Sink<'_>) {
        let session = self.slots[index].session;
        let statement = &request.statement;
        // A user's SQL may read the clock (`now()`): the server's is the world's, from the
        // simulation's epoch. The safeguards' own statements never read it, so their states
        // do not differ by when a block started.
        let clock = matches!(statement, Statement::Text(_))
            .then(|| datetime::DEFAULT_CLOCK + self.now_ms as i64 * 1000);
        let recalled =
            step_memo::recall_postgres(&self.setup, &self.postgres, session, &request, clock);
        let exec = match recalled {
            Some((postgres, exec)) => {
                self.postgres = postgres;
                exec
            }
            None => {
                let before = Arc::clone(&self.postgres);
                let exec = self.execute_sql(session, &request, clock);
                let step = (Arc::clone(&self.postgres), exec.clone());
                step_memo::remember_postgres(&self.setup, &before, session, &request, clock, step);
                exec
            }
        };
        self.finish_sql(index, request, exec, sink);
    }

    /// Runs `session`'s `request` on PostgreSQL, its clock set first when `clock` is some.
    fn execute_sql(
        &mut self,
        session: SessionId,
        request: &SqlRequest,
        clock: Option<i64>,
    ) -> Exec {
        let (statement, params) = (&request.statement, &request.params[..]);
        if let Some(now) = clock {
            self.postgres_mut().set_clock(now);
        }
        match self.postgres.execute_read_only(session, statement, params) {
            Some(exec) => {
                #[cfg(debug_assertions)]
                {
                    let mut copy = Postgres::clone(&self.postgres);
                    let ran = copy.execute(session, statement, params);
                    assert!(
                        ran == exec && copy == **self.postgres,
                        "a read changes nothing"
                    );
                }
                exec
            }
            None => self.postgres_mut().execute(session, statement, params),
        }
    }

    /// Hands what `request` did to caller `index`.
    fn finish_sql(
        &mut self,
        index: usize,
        request: Arc<SqlRequest>,
        exec: Exec,
        sink: &mut Sink<'_>,
    ) {
        match exec {
            Exec::Done(result) => {
                // With reply faults or partitions a caller's outcome may never come (a later
                // Redis reply is lost past the horizon): its landed PostgreSQL write is
                // remembered, as a Redis one is.
                if self.tracks_landed_writes()
                    && matches!(
                        self.slots[index]
                            .client
                            .machine()
                            .reading(&Input::Sql(result.clone())),
                        Some(Reading::Wrote { .. } | Reading::Debited { .. })
                    )
                {
                    slot_mut(&mut self.slots[index]).write_landed = true;
                }
                if sink.is_some() {
                    let machine = self.slots[index].client.machine();
                    let reading = machine.reading(&Input::Sql(result.clone()));
                    let result = result.clone();
                    emit(sink, || Event::Sql {
                        caller: index,
                        request: Arc::unwrap_or_clone(request),
                        result,
                        reading,
                    });
                }
                let client = &mut slot_mut(&mut self.slots[index]).client;
                client.handle_sql_result(result);
                let input = client.take_input().expect("a result is an input");
                self.ready(index, input);
            }
            Exec::Blocked { by } => {
                if sink.is_some() {
                    let request = SqlRequest::clone(&request);
                    emit(sink, || Event::SqlBlocked {
                        caller: index,
                        request,
                        by,
                    });
                }
                let slot = slot_mut(&mut self.slots[index]);
                slot.state = SlotState::Blocked { request, by };
                slot.slack_ms = 0;
            }
        }
    }

    /// Runs a request as a client library does (scripts: `EVALSHA`, then `EVAL` on
    /// `NOSCRIPT`), and queues the primary's effects for the replica. Hands the request back.
    ///
    /// `WAIT` is answered here, at once, from the replica: 1 when it has applied every change
    /// the primary made (the search orders replication before the answer: the replica caught
    /// up within the timeout), else 0 (it did not: the timeout passed); 0 after a failover,
    /// which leaves no replica. A lone primary has no replica either.
    fn run_redis(&mut self, request: &RedisRequest) -> Reply {
        if let RedisRequest::Command(Command::Wait(..)) = request {
            let acked = self
                .replica
                .as_ref()
                .is_some_and(|replica| replica.backlog.is_empty());
            return Reply::Integer(i64::from(acked));
        }
        let now_ms = self.redis_time(self.now_ms);
        let (redis, reply, effects) =
            match step_memo::recall_redis(&self.setup, &self.redis, request, now_ms) {
                Some(step) => step,
                None => {
                    let before = Arc::clone(&self.redis);
                    let reply = run_request(self.redis_mut(), request, now_ms);
                    let effects = self.redis_mut().drain_effects();
                    let step = (Arc::clone(&self.redis), reply, effects);
                    step_memo::remember_redis(&self.setup, &before, request, now_ms, step.clone());
                    step
                }
            };
        self.redis = redis;
        self.queue_for_replica(effects);
        reply
    }

    /// Queues the primary's new effects for the replica.
    fn ship_effects(&mut self) {
        let effects = self.redis_mut().drain_effects();
        self.queue_for_replica(effects);
    }

    /// Queues `effects`, the primary's, for the replica.
    fn queue_for_replica(&mut self, effects: Vec<Effect>) {
        if let Some(replica) = &mut self.replica {
            if !effects.is_empty() {
                Arc::make_mut(replica).backlog.extend(effects);
            }
        }
    }

    /// [`World::run_redis`] on caller `index`'s connection: a pipeline runs there whole,
    /// with the connection's transaction state.
    fn run_redis_for(&mut self, index: usize, request: &RedisRequest) -> Reply {
        let RedisRequest::Pipeline(commands) = request else {
            return self.run_redis(request);
        };
        let mut session = std::mem::take(&mut slot_mut(&mut self.slots[index]).redis_session);
        let now_ms = self.redis_time(self.now_ms);
        let reply = run_pipeline(self.redis_mut(), &mut session, commands, now_ms);
        self.ship_effects();
        slot_mut(&mut self.slots[index]).redis_session = session;
        reply
    }

    /// Every caller's connection to the single Redis is new: the server they knew is gone.
    fn forget_redis_sessions(&mut self) {
        for slot in &mut self.slots {
            if slot.redis_session != RedisSession::new() {
                slot_mut(slot).redis_session = RedisSession::new();
            }
        }
    }

    /// How many callers believe they hold the lock right now.
    pub fn believed_holders(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| {
                slot.state != SlotState::Done && slot.client.machine().believes_it_holds()
            })
            .count()
    }

    /// The callers (0-based) that believe they hold the lock right now.
    pub fn believers(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&index| {
                let slot = &self.slots[index];
                slot.state != SlotState::Done && slot.client.machine().believes_it_holds()
            })
            .collect()
    }

    /// Records the first request by caller `index` that deleted or extended the lock of
    /// `holder` (who held it just before) on the single Redis. Redlock's nodes are not
    /// watched: no one node holds its lock, so "the holder" of a node's key is not the lock's.
    fn note_trespass(
        &mut self,
        index: usize,
        holder: Option<usize>,
        lock_before: Option<(Vec<u8>, Option<u64>)>,
    ) {
        let Some(holder) = holder.filter(|holder| *holder != index) else {
            return;
        };
        let lock_after = self.stored_lock();
        if self.trespass.is_some() || lock_after == lock_before {
            return;
        }
        let deleted = lock_after.is_none();
        // A new holder's SET is not a change by a caller that lacked the lock: only a
        // deletion, or the same value with another expiry, is.
        let extended = lock_after
            .as_ref()
            .zip(lock_before.as_ref())
            .is_some_and(|(after, before)| after.0 == before.0);
        if deleted || extended {
            self.trespass = Some(Trespass {
                by: index,
                holder,
                deleted,
            });
        }
    }

    /// The lock key as stored on the primary (value, absolute expiry), expired or not.
    fn stored_lock(&self) -> Option<(Vec<u8>, Option<u64>)> {
        self.redis
            .stored(&self.setup.lock_key)
            .map(|(value, expiry)| (value.to_vec(), expiry))
    }

    /// The caller (0-based) whose token the Redis primary holds in the lock key when everyone
    /// else's clock reads `at_ms` (the server's own clock may run fast or slow).
    pub fn lock_holder_at(&self, at_ms: u64) -> Option<usize> {
        let value = self
            .redis
            .peek(&self.setup.lock_key, self.redis_time(at_ms))?;
        self.setup.tokens.iter().position(|token| token == value)
    }

    /// The balance every caller started from.
    pub fn initial_balance(&self) -> i64 {
        self.setup.initial_balance
    }

    /// How much each caller spends.
    pub fn amount(&self) -> i64 {
        self.setup.amount
    }

    /// The committed balance now (none when it is missing or unreadable).
    pub fn balance(&self) -> Option<i64> {
        match self.setup.balance_in {
            BalanceIn::Redis => self
                .redis
                .peek(&self.setup.balance_key, self.redis_time(self.now_ms))
                .and_then(|bytes| std::str::from_utf8(bytes).ok())
                .and_then(|text| text.parse().ok()),
            BalanceIn::Postgres => self
                .postgres
                .wallet(self.setup.wallet_id)
                .map(|wallet| wallet.balance),
        }
    }

    /// Callers' results so far.
    pub fn results(&self) -> Vec<CallerResult> {
        self.slots
            .iter()
            .enumerate()
            .map(|(index, slot)| CallerResult {
                caller: index as u32 + 1,
                outcome: slot.outcome.clone(),
                stats: slot.client.stats(),
                write_landed: slot.write_landed,
            })
            .collect()
    }

    /// The committed balance of each wallet of the run ([`Scenario::wallet_ids`]), in order.
    pub fn balances(&self) -> Vec<Option<i64>> {
        match self.setup.balance_in {
            BalanceIn::Redis => vec![self.balance()],
            BalanceIn::Postgres => self
                .setup
                .scenario
                .wallet_ids()
                .into_iter()
                .map(|id| self.postgres.wallet(id).map(|wallet| wallet.balance))
                .collect(),
        }
    }

    /// The ledger check of the run as it stands.
    pub fn ledger(&self) -> Ledger {
        self.setup.scenario.judge(&self.results(), &self.balances())
    }
}

/// The line [`World::apply_logged`] writes for an event that happened at `now_ms`.
/// Runs a request on `redis` at its clock `now_ms` as a client library does (scripts:
/// `EVALSHA`, then `EVAL` on `NOSCRIPT`). Hands the request back.
/// Runs `commands` back to back on one connection: the array of their replies.
fn run_pipeline(
    redis: &mut Redis,
    session: &mut RedisSession,
    commands: &[Command],
    now_ms: u64,
) -> Reply {
    Reply::Array(
        commands
            .iter()
            .map(|command| redis.apply_in(session, command, now_ms))
            .collect(),
    )
}

fn run_request(redis: &mut Redis, request: &RedisRequest, now_ms: u64) -> Reply {
    match request {
        // On a connection of its own (Redlock's nodes: a caller's transaction state there is
        // not kept between requests).
        RedisRequest::Pipeline(commands) => {
            run_pipeline(redis, &mut RedisSession::new(), commands, now_ms)
        }
        RedisRequest::Command(command) => redis.apply(command, now_ms),
        RedisRequest::Script { script, keys, args } => {
            redis.call_script(*script, keys, args, now_ms)
        }
    }
}

fn log_line(now_ms: u64, event: &Event) -> String {
    match event {
        Event::Redis {
            caller,
            request,
            reply,
            node,
            ..
        } => {
            let on = if *node == crate::safeguard::SINGLE_REDIS {
                String::new()
            } else {
                format!(" on node {node}")
            };
            format!(
                "t={now_ms} caller {}: {}{on} -> {}",
                caller + 1,
                request.describe(),
                reply.describe()
            )
        }
        Event::Node { node, fault } => format!("t={now_ms} node {node} {}", fault.describe()),
        Event::Sql {
            caller,
            request,
            result,
            ..
        } => {
            let answer = crate::postgres::describe_result(result);
            format!(
                "t={now_ms} caller {}: {} {:?} -> {answer}",
                caller + 1,
                request.statement.sql(),
                request.params
            )
        }
        Event::SqlBlocked {
            caller, request, ..
        } => format!(
            "t={now_ms} caller {}: {} waits for a row lock",
            caller + 1,
            request.statement.sql()
        ),
        Event::Sleep {
            caller, wake_ms, ..
        } => format!("t={now_ms} caller {} sleeps until {wake_ms}", caller + 1),
        Event::Reached { caller, point } => {
            format!("t={now_ms} caller {} at {}", caller + 1, point.name())
        }
        Event::Done { caller, outcome } => {
            format!("t={now_ms} caller {} done: {outcome:?}", caller + 1)
        }
        Event::Tick { now_ms } => format!("t={now_ms}"),
        Event::Wake { caller, .. } => format!("t={} caller {} wakes", now_ms + 1, caller + 1),
        Event::Replicated { effect } => format!("replica applies {effect:?}"),
        Event::Failover { lost } => {
            format!("failover: the replica is promoted; {lost} unreplicated change(s) lost")
        }
        Event::RedisRestarted {
            reloaded: Reload::Nothing,
        } => "redis restarts without persistence: every key is gone".into(),
        Event::RedisRestarted {
            reloaded: Reload::FromStart,
        } => "redis crashes and reloads its AOF: the keys are as at the start".into(),
        Event::RedisRestarted {
            reloaded: Reload::EveryWrite,
        } => "redis crashes and reloads its AOF: every key is as it was".into(),
        Event::RedisRestarted {
            reloaded: Reload::FromFsync { at_ms },
        } => format!("redis crashes and reloads its AOF: the keys are as at its fsync at {at_ms}"),
        Event::AofFsynced { at_ms } => format!("t={at_ms} redis fsyncs its AOF"),
        Event::FenceEvicted => "an allkeys-* policy evicts the fence counter".into(),
        Event::RedisClock { fault } => format!("t={now_ms} redis {}", fault.describe()),
        Event::Fault { caller, fault } => {
            format!("t={now_ms} caller {} {}", caller + 1, fault.describe())
        }
    }
}
