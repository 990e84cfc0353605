//! The safeguards × faults matrix: every safeguard under every fault, each cell decided twice
//! — exhaustively by the model checker (with its bound stated) and by N seeds of the
//! simulation — with the shortest counterexample of every BROKEN cell and the cost of every
//! SAFE one.
//!
//! - [`Row`]: a safeguard (today the built-in ones; a row names its safeguard, so rows from
//!   other sources can join);
//! - [`Column`]: a fault, which knows the simulated scenario it runs ([`Column::scenario`]),
//!   the exhaustive check it maps to, if the checker can express it ([`Column::check`]), and
//!   when it does not apply ([`Column::applies`]);
//! - [`Expected`]: the verdicts the tutorial and its safety section state, pinned per cell;
//! - [`run_cell`]: decides one cell; [`why`]: one sentence of why a run broke, from the
//!   ledger's typed blame;
//! - [`html`]: the self-contained HTML report.
//!
//! The cells are judged by the ledger (a lost update or a negative balance), not by mutual
//! exclusion: `fenced-cas` gives up mutual exclusion by design and keeps the ledger.

pub mod html;

use std::path::PathBuf;

use leaselab_checker::bfs::Counters;
use leaselab_checker::run::replay;
use leaselab_checker::{
    run as check_run, CheckConfig, LeaseModel, PropertySet, PropertyVerdict, RunOptions, LEDGER,
};
use leaselab_model::fault::{Fault, Host};
use leaselab_model::ledger::Ledger;
use leaselab_model::postgres::{Isolation, WriteGuard};
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::{BalanceIn, Point, Safeguard};
use leaselab_model::scenario::{Scenario, TimingPreset};
use leaselab_model::world::{ClockFaults, FaultsOn, ReplyFaults};
use leaselab_sim::run::{RunReport, RunVerdict, SimConfig};
use serde::{Deserialize, Serialize};

use crate::shard::Shard;

/// One row of the matrix: a safeguard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The name shown (the safeguard's command-line name).
    pub name: String,
    /// The safeguard every caller runs.
    pub safeguard: Safeguard,
}

impl Row {
    /// The row of a built-in safeguard.
    pub fn builtin(safeguard: Safeguard) -> Row {
        Row {
            name: safeguard.name(),
            safeguard,
        }
    }

    /// Every built-in safeguard, in teaching order, then Redlock and Redlock with
    /// check-and-set on 3 nodes (the least Redlock runs on, and what its scenarios use).
    pub fn all() -> Vec<Row> {
        Safeguard::catalogue()
            .into_iter()
            .chain(Safeguard::replicated())
            .chain([false, true].map(|cas| Safeguard::Redlock {
                nodes: MATRIX_REDLOCK_NODES,
                cas,
            }))
            .map(Row::builtin)
            .collect()
    }

    /// True for Redlock: its faults strike its nodes, not a single Redis.
    fn redlock(&self) -> bool {
        self.safeguard.redis_nodes() > 0
    }

    fn uses_redis(&self) -> bool {
        self.safeguard.uses_lock() || self.safeguard.balance_in() == BalanceIn::Redis
    }

    fn has_ttl(&self) -> bool {
        self.safeguard.has_ttl()
    }
}

/// One column of the matrix: a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Column {
    /// No fault: the tutorial's 50 callers at once.
    None,
    /// A GC pause of the first caller at a named point, as in step 5.
    Pause(Point),
    /// Work three times as long as the TTL, as in step 3.
    WorkOverTtl,
    /// A 1 ms TTL under 50 callers' load, as in step 6.
    ShortTtl,
    /// The Redis primary fails over to a replica that had not received the holder's lock.
    Failover,
    /// Redis restarts without persistence while the lock is held.
    Restart,
    /// The machine running Redis crashes while the lock is held; Redis reloads its AOF
    /// (`appendfsync everysec`: the last second is lost).
    AofCrash,
    /// An `allkeys-*` policy evicts the fence counter while the lock is held.
    EvictFence,
    /// The holder is cut off from Redis while it holds the lock.
    Partition,
    /// The Redis server's wall clock jumps forward while the lock is held.
    ClockJump,
    /// The same correction as [`Column::ClockJump`], slewed as NTP does (500 ppm), never
    /// stepped: the safety section's "nobody steps the system clock".
    ClockSlew,
    /// Redis's clock runs 2% fast while A holds a lease sized with a 0.5% margin.
    ClockDrift,
    /// A's connection drops with the reply to its acquire in flight (the acquire ran) and the
    /// client sends it again: the acquire runs twice.
    DuplicatedAcquire,
    /// A's connection drops with the reply to its release in flight (the release ran) and
    /// the client sends it again, after the next caller may have taken the lock.
    RetriedRelease,
    /// The reply to A's release is lost (the release ran): A waits out its read timeout.
    LostReleaseReply,
    /// One of Redlock's nodes crashes while A holds the lock and stays down: the majority
    /// that remains must carry every lock.
    NodeLoss,
}

/// How long the node-loss column's node stays down in the simulation: longer than any run.
const NODE_LOSS_DOWN_MS: u64 = 3_600_000;

/// The horizon of the reply-fault columns' checks (the safety page's table uses 30; 12
/// decides the same verdicts there in a fraction of the time).
const REPLY_FAULT_HORIZON_TICKS: u64 = 12;

/// The drift column's rate: Redis's clock 2% fast, in parts per million.
const DRIFT_RATE_PPM: i64 = 20_000;

/// The drift column's work under its 2 s lease: a 0.5% margin, less than the drift takes.
const DRIFT_WORK_MS: u64 = 1_990;

/// The drift column's exhaustive check: the clock this much fast ...
const DRIFT_CHECK_PERCENT: i32 = 50;
/// ... against a lease of this many ticks ...
const DRIFT_CHECK_TTL_TICKS: u64 = 4;
/// ... and this much work: safe on an exact clock, not on the fast one.
const DRIFT_CHECK_WORK_TICKS: u64 = 3;

/// The slew column's rate: ntpd's limit, in parts per million.
const SLEW_RATE_PPM: u64 = 500;

/// The nodes the matrix's Redlock rows lock on.
pub const MATRIX_REDLOCK_NODES: u8 = 3;

/// The lease the pause, failover and restart columns use in the simulation (step 5's).
const PAUSE_TTL_MS: u64 = 100;

/// How far the replica lags behind in `lease-wait`'s cells (but the failover's): short
/// enough for `WAIT 1 <TTL/4>` to be answered 1 with the pause columns' 100 ms TTL.
const WAIT_ROW_LAG_MS: u64 = 5;

impl Column {
    /// Every column, in order.
    pub fn all() -> Vec<Column> {
        let mut columns = vec![Column::None];
        columns.extend(Point::ALL.into_iter().map(Column::Pause));
        columns.extend([
            Column::WorkOverTtl,
            Column::ShortTtl,
            Column::Failover,
            Column::Restart,
            Column::AofCrash,
            Column::EvictFence,
            Column::Partition,
            Column::ClockJump,
            Column::ClockSlew,
            Column::ClockDrift,
            Column::DuplicatedAcquire,
            Column::RetriedRelease,
            Column::LostReleaseReply,
            Column::NodeLoss,
        ]);
        columns
    }

    /// The name used on the command line and in JSON, e.g. `pause-after-read`.
    pub fn name(self) -> String {
        match self {
            Column::None => "none".into(),
            Column::Pause(point) => format!("pause-{}", point.name()),
            Column::WorkOverTtl => "work-over-ttl".into(),
            Column::ShortTtl => "ttl-1ms".into(),
            Column::Failover => "failover".into(),
            Column::Restart => "restart".into(),
            Column::AofCrash => "crash-everysec".into(),
            Column::EvictFence => "evict-fence".into(),
            Column::Partition => "partition".into(),
            Column::ClockJump => "clock-jump".into(),
            Column::ClockSlew => "clock-slew".into(),
            Column::ClockDrift => "clock-drift".into(),
            Column::DuplicatedAcquire => "duplicated-acquire".into(),
            Column::RetriedRelease => "retried-release".into(),
            Column::LostReleaseReply => "lost-release-reply".into(),
            Column::NodeLoss => "node-loss".into(),
        }
    }

    /// The terminal table's header: at most 4 characters.
    pub fn code(self) -> &'static str {
        match self {
            Column::None => "none",
            Column::Pause(Point::AfterAcquire) => "acq",
            Column::Pause(Point::AfterRead) => "read",
            Column::Pause(Point::BeforeWrite) => "wrt",
            Column::Pause(Point::BeforeRelease) => "rel",
            Column::WorkOverTtl => "work",
            Column::ShortTtl => "ttl1",
            Column::Failover => "fail",
            Column::Restart => "rst",
            Column::AofCrash => "aof",
            Column::EvictFence => "evic",
            Column::Partition => "part",
            Column::ClockJump => "clk",
            Column::ClockSlew => "slew",
            Column::ClockDrift => "drft",
            Column::DuplicatedAcquire => "dacq",
            Column::RetriedRelease => "rrel",
            Column::LostReleaseReply => "lrel",
            Column::NodeLoss => "loss",
        }
    }

    /// Parses [`Column::name`] or [`Column::code`].
    pub fn parse(text: &str) -> Option<Column> {
        Column::all()
            .into_iter()
            .find(|c| c.name() == text || c.code() == text)
    }

    /// The fault in words, with the simulated scenario's numbers.
    pub fn describe(self) -> String {
        match self {
            Column::None => "no fault: 50 callers at once, TTL 2s, work 2ms".into(),
            Column::Pause(point) => format!(
                "GC pause: caller A pauses 250ms at {}, its {PAUSE_TTL_MS}ms lease expires, \
                 B starts at 150ms (step 5)",
                point.name()
            ),
            Column::WorkOverTtl => {
                "work longer than the TTL: 5 callers, 300ms of work, TTL 100ms (step 3)".into()
            }
            Column::ShortTtl => {
                "a TTL far too short under load: 50 callers, TTL 1ms (step 6)".into()
            }
            Column::Failover => "failover: A holds the lock and pauses 100ms after its read; \
                 the primary dies at 20ms before the lock replicated (lag 50ms); B starts at 40ms"
                .into(),
            Column::Restart => "Redis restarts without persistence at 20ms while A holds the \
                 lock and pauses 100ms after its read; B starts at 40ms"
                .into(),
            Column::AofCrash => "the machine running Redis crashes at 20ms while A holds the \
                 lock and pauses 100ms after its read; Redis reloads its AOF (appendfsync \
                 everysec, last fsync at 0ms); B starts at 40ms"
                .into(),
            Column::EvictFence => "an allkeys-* policy evicts the fence counter at 20ms while \
                 A holds the lock and pauses 100ms after its read; B starts at 40ms"
                .into(),
            Column::Partition => "partition: app-1 (the holder) is cut off from Redis from 20ms \
                 to 400ms; TTL 100ms, work 50ms; B starts at 5ms"
                .into(),
            Column::ClockJump => "clock jump: Redis's clock jumps +3s at 20ms while A holds its \
                 2s lease and works 100ms; B starts at 40ms"
                .into(),
            Column::ClockDrift => format!(
                "clock drift: Redis's clock runs {} fast from the release on; A holds a 2s \
                 lease and works {DRIFT_WORK_MS}ms (a 0.5% margin); B starts at 40ms",
                leaselab_model::fault::describe_ppm(DRIFT_RATE_PPM)
            ),
            Column::DuplicatedAcquire => "duplicated acquire: A's connection drops with the \
                 reply to its acquire in flight, the client sends it again (go-redis); 2 \
                 callers, B starts at 50ms"
                .into(),
            Column::RetriedRelease => "retried release: A's connection drops with the reply \
                 to its release in flight, the client sends it again (go-redis); 5 callers, \
                 work 20ms"
                .into(),
            Column::LostReleaseReply => "lost release reply: the reply to A's release is lost \
                 (the release ran), A waits out its 3s read timeout; 2 callers"
                .into(),
            Column::NodeLoss => "Redlock node loss: A is cut off redis-3 and holds redis-1 and \
                 redis-2; redis-2 crashes at 150ms and stays down; B starts at 200ms (Redlock \
                 rows only)"
                .into(),
            Column::ClockSlew => format!(
                "clock slew: Redis's clock is corrected +3s from 20ms on, slewed at \
                 {SLEW_RATE_PPM}ppm as NTP does, while A holds its 2s lease and works 100ms; B \
                 starts at 40ms"
            ),
        }
    }

    /// Why the fault does not apply to `row`, if it does not.
    pub fn applies(self, row: &Row) -> Result<(), String> {
        let redis = matches!(
            self,
            Column::Failover
                | Column::Restart
                | Column::AofCrash
                | Column::Partition
                | Column::ClockJump
                | Column::ClockSlew
                | Column::ClockDrift
                | Column::DuplicatedAcquire
                | Column::RetriedRelease
                | Column::LostReleaseReply
        );
        if redis && !row.uses_redis() {
            return Err(format!(
                "{} keeps nothing in Redis: a Redis fault cannot touch it",
                row.name
            ));
        }
        if self == Column::NodeLoss && !row.redlock() {
            return Err(format!(
                "{} locks on one Redis: losing it stops every caller; what a single server \
                 forgets is the restart and failover columns",
                row.name
            ));
        }
        if row.redlock() {
            let why = match self {
                Column::Failover => "Redlock's nodes are independent: no replica to fail over to",
                Column::AofCrash => {
                    "Redlock's nodes run without persistence here; a node that forgets its keys \
                     is the restart column"
                }
                Column::EvictFence => "Redlock has no fence counter to evict",
                Column::ShortTtl => {
                    "a TTL of 1ms is below Redlock's clock-drift allowance (2ms + 1%): no round \
                     is ever valid, so every caller gives up without spending"
                }
                Column::Partition => {
                    "losing a minority of nodes is what Redlock tolerates; the restart and \
                     clock-jump columns cut the holder off one node as part of their scenario"
                }
                _ => return Ok(()),
            };
            return Err(format!("{}: {why}", row.name));
        }
        if self == Column::AofCrash && row.safeguard == Safeguard::LeaseWait {
            return Err(format!(
                "{}: not simulated: the simulation cannot yet crash a primary that has a \
                 replica, and WAIT needs one (the restart column loses the lock key the same way)",
                row.name
            ));
        }
        if self == Column::EvictFence && !row.safeguard.has_fence_counter() {
            return Err(format!(
                "{} has no fence counter to evict (and its other keys have a TTL, which \
                 volatile-* policies may evict like an early expiry)",
                row.name
            ));
        }
        if self == Column::ShortTtl && !row.has_ttl() {
            return Err(format!("{} has no lease TTL to shorten", row.name));
        }
        if self == Column::WorkOverTtl && !row.has_ttl() {
            return Err(format!(
                "{} has no lease TTL for the work to outlive",
                row.name
            ));
        }
        Ok(())
    }

    /// A note on how the column was adapted to `row` (a TTL raised to the least the
    /// safeguard accepts).
    pub fn note(self, row: &Row) -> Option<String> {
        if row.redlock() {
            return match self {
                Column::Restart => Some(
                    "a node restarts instead (redlock-restart): A is cut off redis-3 and holds \
                     redis-1 and redis-2; redis-2 restarts without persistence at 150ms; the \
                     checker: 1 node restart at any moment, TTL 4, work 1"
                        .into(),
                ),
                Column::ClockJump => Some(
                    "a node's clock jumps instead (redlock-clock-jump): A is cut off redis-3; \
                     redis-2's clock jumps +1s at 150ms; the checker: 1 jump of +5 ticks at any \
                     moment, TTL 4, work 1"
                        .into(),
                ),
                Column::ClockSlew => Some(format!(
                    "a node's clock is slewed instead (redlock-clock-jump's set-up): A is cut \
                     off redis-3; redis-2's clock is corrected +1s from 150ms on at \
                     {SLEW_RATE_PPM}ppm"
                )),
                _ => None,
            };
        }
        if row.safeguard == Safeguard::LeaseWait {
            return match self {
                Column::Failover => Some(
                    "the failover is wait-failover's: A's WAIT is cut off by the failover at \
                     20ms and resent on a new connection; TTL 2s, work 100ms, B starts at 40ms"
                        .into(),
                ),
                Column::None => Some(format!(
                    "in this row's other columns too, the replica is {WAIT_ROW_LAG_MS}ms \
                     behind, so that WAIT's timeout (TTL/4) can be met"
                )),
                _ => None,
            };
        }
        (self == Column::ShortTtl && row.safeguard.has_watchdog()).then(|| {
            "TTL 3ms instead of 1ms: the watchdog refreshes every TTL/3 and needs at least 3ms"
                .to_string()
        })
    }

    /// A Redlock row's scenario for the node-fault columns: the `redlock-*` preset with the
    /// row's safeguard.
    fn redlock_scenario(self, row: &Row) -> Option<Scenario> {
        let preset = match self {
            Column::Restart => "redlock-restart",
            Column::NodeLoss => "redlock-delayed-restart",
            Column::ClockJump | Column::ClockSlew => "redlock-clock-jump",
            _ => return None,
        };
        let mut s =
            leaselab_sim::faults::fault_scenario(preset, false).expect("the redlock presets exist");
        s.name = format!("matrix {} {}", self.name(), row.name);
        s.safeguard = row.safeguard;
        if self == Column::NodeLoss {
            for fault in &mut s.faults {
                if let Fault::NodeRestart { down_ms, .. } = fault {
                    *down_ms = NODE_LOSS_DOWN_MS;
                }
            }
        }
        if self == Column::ClockSlew {
            for fault in &mut s.faults {
                if let Fault::ClockJump {
                    host,
                    at_ms,
                    jump_ms,
                } = *fault
                {
                    *fault = Fault::ClockSlew {
                        host,
                        at_ms,
                        offset_ms: jump_ms,
                        rate_ppm: SLEW_RATE_PPM,
                    };
                }
            }
        }
        Some(s)
    }

    /// The simulated scenario of this column for `row`.
    pub fn scenario(self, row: &Row) -> Scenario {
        if let Some(s) = row.redlock().then(|| self.redlock_scenario(row)).flatten() {
            return s;
        }
        if row.safeguard == Safeguard::LeaseWait {
            if self == Column::Failover {
                let mut s = leaselab_sim::faults::fault_scenario("wait-failover", false)
                    .expect("the wait-failover preset exists");
                s.name = format!("matrix {} {}", self.name(), row.name);
                return s;
            }
            let mut s = self.scenario_for(row);
            s.network.replication_lag_ms = WAIT_ROW_LAG_MS;
            return s;
        }
        self.scenario_for(row)
    }

    /// The simulated scenario of this column for a row on one Redis.
    fn scenario_for(self, row: &Row) -> Scenario {
        // The column first: long safeguard names are what a trace's file name cuts.
        let name = format!("matrix {} {}", self.name(), row.name);
        let mut s = Scenario::new(&name, row.safeguard);
        // Only fenced safeguards read the counter; the tutorial's tokens start at 33.
        s.initial_fence_counter = 32;
        let holder_pauses = |s: &mut Scenario, fault: Fault| {
            s.callers = 2;
            s.params.work_ms = 0;
            s.params.ttl_ms = 2_000;
            s.start_offsets_ms = vec![0, 40];
            s.faults = vec![
                Fault::Pause {
                    caller: 1,
                    at: Point::AfterRead,
                    pause_ms: 100,
                },
                fault,
            ];
        };
        // A holds its 2 s lease and works 100 ms while the clock fault strikes; B starts at 40.
        let holder_works = |s: &mut Scenario, fault: Fault| {
            s.callers = 2;
            s.params.work_ms = 100;
            s.start_offsets_ms = vec![0, 40];
            s.faults = vec![fault];
        };
        match self {
            // Node loss is a Redlock row's (`redlock_scenario`); on one Redis it does not apply.
            Column::None | Column::NodeLoss => {}
            Column::Pause(point) => {
                s.callers = 2;
                s.params.ttl_ms = PAUSE_TTL_MS;
                s.params.work_ms = 0;
                s.start_offsets_ms = vec![0, 150];
                s.faults = vec![Fault::Pause {
                    caller: 1,
                    at: point,
                    pause_ms: 250,
                }];
            }
            Column::WorkOverTtl => {
                s.callers = 5;
                s.params.ttl_ms = 100;
                s.params.work_ms = 300;
                s.params.acquire_timeout_ms = Some(10_000);
            }
            Column::ShortTtl => {
                s.params.ttl_ms = if row.safeguard.has_watchdog() { 3 } else { 1 };
            }
            Column::Failover => holder_pauses(&mut s, Fault::Failover { at_ms: 20 }),
            Column::Restart => holder_pauses(&mut s, Fault::RedisRestart { at_ms: 20 }),
            Column::AofCrash => holder_pauses(
                &mut s,
                Fault::RedisCrashAof {
                    at_ms: 20,
                    appendfsync: Appendfsync::Everysec,
                },
            ),
            Column::EvictFence => holder_pauses(&mut s, Fault::EvictFenceCounter { at_ms: 20 }),
            Column::Partition => {
                s.callers = 2;
                s.params.ttl_ms = 100;
                s.params.work_ms = 50;
                s.params.acquire_timeout_ms = Some(10_000);
                s.start_offsets_ms = vec![0, 5];
                s.faults = vec![Fault::Partition {
                    a: Host::Caller(1),
                    b: Host::Redis,
                    from_ms: 20,
                    until_ms: 400,
                    one_way: false,
                }];
            }
            Column::ClockJump => holder_works(
                &mut s,
                Fault::ClockJump {
                    host: Host::Redis,
                    at_ms: 20,
                    jump_ms: 3_000,
                },
            ),
            Column::ClockDrift => {
                s.callers = 2;
                s.params.ttl_ms = 2_000;
                s.params.work_ms = DRIFT_WORK_MS;
                s.start_offsets_ms = vec![0, 40];
                let hosts = match row.safeguard.redis_nodes() {
                    0 => vec![Host::Redis],
                    nodes => (1..=nodes).map(Host::Node).collect(),
                };
                s.faults = hosts
                    .into_iter()
                    .map(|host| Fault::ClockDrift {
                        host,
                        rate_ppm: DRIFT_RATE_PPM,
                    })
                    .collect();
            }
            Column::DuplicatedAcquire => {
                s.callers = 2;
                s.start_offsets_ms = vec![0, 50];
                s.faults = vec![Fault::DroppedConnection {
                    caller: 1,
                    on: FaultsOn::Acquire,
                }];
            }
            Column::RetriedRelease => {
                s.callers = 5;
                s.params.work_ms = 20;
                s.faults = vec![Fault::DroppedConnection {
                    caller: 1,
                    on: FaultsOn::Release,
                }];
            }
            Column::LostReleaseReply => {
                s.callers = 2;
                s.faults = vec![Fault::LostReply {
                    caller: 1,
                    on: FaultsOn::Release,
                }];
            }
            Column::ClockSlew => holder_works(
                &mut s,
                Fault::ClockSlew {
                    host: Host::Redis,
                    at_ms: 20,
                    offset_ms: 3_000,
                    rate_ppm: SLEW_RATE_PPM,
                },
            ),
        }
        s
    }

    /// The exhaustive check of this column for `row`, or why the checker cannot express the
    /// fault. Two callers spending 10 from 20; 1 tick = 1 ms.
    pub fn check(self, row: &Row) -> Result<CheckConfig, String> {
        let mut c = CheckConfig::new(row.safeguard);
        c.max_pause_ticks = Some(0);
        if row.redlock()
            && matches!(
                self,
                Column::Restart | Column::ClockJump | Column::ClockSlew | Column::NodeLoss
            )
        {
            // docs/safety.md's bounds: TTL 4, work 1, horizon 10, no pauses.
            c.ttl_ticks = 4;
            c.work_ticks = 1;
            c.horizon_ticks = Some(10);
            match self {
                Column::Restart => c.node_faults.restarts = 1,
                Column::ClockJump => {
                    c.node_faults.clock_jumps = 1;
                    c.node_faults.clock_jump_ms = 5;
                }
                Column::ClockSlew => {
                    c.node_faults.clock_slews = 1;
                    c.node_faults.clock_slew_ms = 5;
                    c.node_faults.slew_rate_ppm = SLEW_RATE_PPM as u32;
                }
                _ => c.node_faults.delayed_restarts = 1,
            }
            return Ok(c);
        }
        if row.redlock() && matches!(self, Column::Pause(_)) {
            return Err(
                "pauses of any length over 3 nodes' interleavings outgrow the matrix's state \
                 limit; `leaselab check --safeguard redlock-3-nodes --ttl 4 --work 1 --horizon \
                 10 --max-pause 5` finds the lost update (docs/safety.md)"
                    .into(),
            );
        }
        match self {
            Column::None => {}
            Column::Pause(_) => c.max_pause_ticks = None,
            Column::WorkOverTtl => c.work_ticks = 4,
            Column::ShortTtl => {
                c.ttl_ticks = if row.safeguard.has_watchdog() { 3 } else { 1 };
                c.max_pause_ticks = Some(1);
            }
            Column::Failover => c.failovers = 1,
            Column::Restart | Column::AofCrash if row.safeguard == Safeguard::LeaseWait => {
                return Err(
                    "the model's Redis restart has no replica to resync, and lease-wait needs one"
                        .into(),
                );
            }
            Column::Restart => c.restarts = 1,
            Column::AofCrash => {
                c.restarts = 1;
                c.restarts_from_aof = true;
            }
            Column::EvictFence => c.evictions = 1,
            Column::Partition if row.redlock() => {
                return Err(
                    "this column cuts a caller off the single Redis; Redlock's node partitions \
                     are `leaselab check --partitions 1` on its nodes"
                        .into(),
                );
            }
            Column::Partition => c.partitions = 1,
            // The simulated correction (+3s) is larger than the lease (2s); so is the checked
            // one: TTL + 1 ticks.
            Column::ClockJump => {
                c.redis_clock = ClockFaults {
                    jumps: 1,
                    jump_ms: c.ttl_ticks + 1,
                    ..ClockFaults::default()
                };
            }
            Column::ClockSlew => {
                c.redis_clock = ClockFaults {
                    slews: 1,
                    slew_ms: c.ttl_ticks + 1,
                    slew_rate_ppm: SLEW_RATE_PPM as u32,
                    ..ClockFaults::default()
                };
            }
            Column::ClockDrift => {
                // A 2% drift over a lease of a few ticks never shows in whole ticks: the check
                // runs the clock 50% fast against a 4-tick lease and 3 ticks of work, a margin
                // the drift eats just as the simulated 2% eats the 0.5% one.
                c.ttl_ticks = DRIFT_CHECK_TTL_TICKS;
                c.work_ticks = DRIFT_CHECK_WORK_TICKS;
                if row.redlock() {
                    c.node_faults.drift_percent = DRIFT_CHECK_PERCENT;
                    c.horizon_ticks = Some(12);
                } else {
                    c.redis_drift_percent = DRIFT_CHECK_PERCENT;
                }
            }
            Column::NodeLoss => {
                return Err(
                    "node loss is a Redlock row's fault: one Redis has no other node".into(),
                )
            }
            Column::DuplicatedAcquire | Column::RetriedRelease | Column::LostReleaseReply => {
                c.reply_faults = self.reply_faults().unwrap_or_default();
                c.horizon_ticks = Some(REPLY_FAULT_HORIZON_TICKS);
                // A retried release breaks the ledger only if a third caller takes the lock
                // the retry deleted; lease-wait's and Redlock's 3-caller checks outgrow the
                // matrix.
                if self == Column::RetriedRelease
                    && !row.redlock()
                    && row.safeguard != Safeguard::LeaseWait
                {
                    c.callers = 3;
                }
                if row.redlock() {
                    // docs/safety.md's Redlock bounds: TTL 4, work 1, horizon 10.
                    c.ttl_ticks = 4;
                    c.work_ticks = 1;
                    c.horizon_ticks = Some(10);
                }
            }
        }
        Ok(c)
    }

    /// The checker's reply faults of a reply-fault column.
    fn reply_faults(self) -> Option<ReplyFaults> {
        let (lost_replies, dropped_connections, on) = match self {
            Column::DuplicatedAcquire => (0, 1, FaultsOn::Acquire),
            Column::RetriedRelease => (0, 1, FaultsOn::Release),
            Column::LostReleaseReply => (1, 0, FaultsOn::Release),
            _ => return None,
        };
        Some(ReplyFaults {
            lost_replies,
            dropped_connections,
            on,
        })
    }

    /// What `row`'s exhaustive check covers, in words: [`Column::check_scope`], or a
    /// Redlock row's node fault.
    pub fn check_scope_for(self, row: &Row) -> &'static str {
        match self {
            Column::Restart if row.redlock() => "one node restart at any moment, no pauses",
            Column::ClockJump if row.redlock() => {
                "one node clock jump of +5 ticks at any moment, no pauses"
            }
            Column::ClockSlew if row.redlock() => {
                "one node clock slew of +5 ticks at 500 ppm from any moment (it gains nothing \
                 within the horizon), no pauses"
            }
            _ => self.check_scope(),
        }
    }

    /// What the exhaustive check covers, in words (beyond [`CheckConfig::bound_text`]).
    pub fn check_scope(self) -> &'static str {
        match self {
            Column::None => "no pauses",
            Column::Pause(_) => {
                "pauses anywhere, of any length: the checker does not pin the point, so the \
                 four pause columns share one check"
            }
            Column::WorkOverTtl => "work 4 ticks, TTL 3, no pauses",
            Column::ShortTtl => "TTL 1 tick, delays up to 1 tick per caller",
            Column::Failover => "one failover at any moment, no pauses",
            Column::Restart => "one Redis restart without persistence at any moment, no pauses",
            Column::EvictFence => "one eviction of the fence counter at any moment, no pauses",
            Column::AofCrash => {
                "one machine crash at any moment, Redis reloading its AOF fsynced at the start and \
                 at most once more at any moment, no pauses"
            }
            Column::Partition => {
                "one partition cutting a caller off Redis at any moment for good (what it sends \
                 there waits for its 3s timeout, past the horizon), no pauses"
            }
            Column::ClockJump => {
                "one jump of Redis's clock by TTL + 1 ticks at any moment (the lease is gone at \
                 once), no pauses"
            }
            Column::ClockSlew => {
                "one slew of Redis's clock by TTL + 1 ticks at 500 ppm from any moment, as NTP \
                 corrects (it gains nothing within the horizon, as the simulated slew gains \
                 under 1ms per lease), no pauses"
            }
            Column::ClockDrift => {
                "Redis's clock 50% fast (every node's, on Redlock) against a 4-tick lease and 3 \
                 ticks of work, safe on an exact clock; no pauses"
            }
            Column::DuplicatedAcquire => "one dropped connection on an acquire, no pauses",
            Column::RetriedRelease => {
                "one dropped connection on a release, 3 callers (2 for lease-wait and Redlock), \
                 no pauses"
            }
            Column::LostReleaseReply => "one lost reply to a release, no pauses",
            Column::NodeLoss => {
                "one of 3 nodes down at any moment for the TTL + 1 tick (past every lock it \
                 held; then back, empty), no pauses"
            }
        }
    }
}

/// A cell's verdict, by one method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// Held in every explored interleaving / every seed.
    Safe,
    /// A lost update or a negative balance, with a counterexample.
    Broken,
    /// The bound or the time limit stopped the work before a verdict, or no seed put a spend
    /// to the storage.
    Inconclusive,
    /// The fault does not apply to the safeguard.
    NotApplicable,
    /// The checker cannot express the fault (exhaustive only).
    NotExpressible,
}

impl Verdict {
    /// `SAFE`, `BROKEN`, `INCONCLUSIVE`, `n/a`, `not expressible`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "SAFE",
            Verdict::Broken => "BROKEN",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::NotApplicable => "n/a",
            Verdict::NotExpressible => "not expressible",
        }
    }

    /// The terminal symbol.
    pub fn symbol(self) -> char {
        match self {
            Verdict::Safe => '✓',
            Verdict::Broken => '✗',
            Verdict::Inconclusive => '?',
            Verdict::NotApplicable => '·',
            Verdict::NotExpressible => '-',
        }
    }
}

/// A counterexample: one sentence of why, the trace that replays it, the run in words.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Counterexample {
    /// Why the ledger broke, in one sentence.
    pub why: String,
    /// The saved trace (none when saving is off or failed, or the model's path could not be
    /// turned into a simulated run).
    pub trace: Option<PathBuf>,
    /// The seed of the simulated run.
    pub seed: Option<u64>,
    /// The model's path, numbered steps in the tutorial's words (exhaustive only).
    pub steps: Vec<String>,
    /// Why no trace was saved, when none was.
    pub trace_note: Option<String>,
}

/// The exhaustive half of a cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exhaustive {
    /// Its verdict.
    pub verdict: Verdict,
    /// The bound, in words, or why the fault is not expressible / does not apply.
    pub bound: String,
    /// What the check covers of the fault.
    pub scope: String,
    /// Distinct states explored.
    pub states: u64,
    /// The ledger counterexample's length.
    pub steps: Option<usize>,
    /// Why undecided (INCONCLUSIVE).
    pub reason: Option<String>,
    /// The counterexample, when BROKEN.
    pub counterexample: Option<Counterexample>,
}

/// The cost of a safeguard in a cell's runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Cost {
    /// Median simulated time from the release to the last caller's end, ms.
    pub median_ms: u64,
    /// 99th percentile of it (nearest rank), ms.
    pub p99_ms: u64,
    /// Callers that gave up waiting for the lock, over all runs.
    pub gave_up: u64,
    /// Writes the storage refused, over all runs.
    pub rejected: u64,
    /// Callers that failed with an error (e.g. a balance a restart wiped), over all runs.
    pub failed: u64,
    /// Runs.
    pub runs: u64,
}

/// The simulated half of a cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Simulated {
    /// Its verdict.
    pub verdict: Verdict,
    /// The seeds run (first..=last), or why the fault does not apply.
    pub seeds: String,
    /// Runs.
    pub runs: u64,
    /// BROKEN runs.
    pub broken: u64,
    /// Runs stopped at their time limit without a verdict.
    pub inconclusive: u64,
    /// Runs that finished with no spend put to the storage ([`RunReport::untested`]): every
    /// caller gave up, lost its lock, failed or found too little money. They are no evidence
    /// either way; a cell whose every run is one is INCONCLUSIVE.
    #[serde(default)]
    pub untested: u64,
    /// Fencing tokens issued twice, over all runs (a failover lost an `INCR`).
    pub tokens_reissued: u64,
    /// The cost, over every run.
    pub cost: Cost,
    /// The shortest BROKEN run (fewest events), when BROKEN.
    pub counterexample: Option<Counterexample>,
}

/// Where the tutorial or its safety section states a cell's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expected {
    /// The verdict of the simulated half.
    pub simulated: Verdict,
    /// The verdict of the exhaustive half, when pinned too.
    pub exhaustive: Option<Verdict>,
    /// Where it is stated.
    pub source: std::borrow::Cow<'static, str>,
}

/// One decided cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    /// The safeguard.
    pub row: String,
    /// The fault.
    pub column: String,
    /// Decided exhaustively.
    pub exhaustive: Exhaustive,
    /// Decided by N seeds.
    pub simulated: Simulated,
    /// A note on how the column was adapted to the row.
    pub note: Option<String>,
    /// What the tutorial says, if it speaks.
    pub expected: Option<Expected>,
    /// True when a half disagrees with [`Cell::expected`].
    pub unexpected: bool,
}

impl Cell {
    /// The cell's verdict: BROKEN if either half broke, else INCONCLUSIVE if either is
    /// undecided, else SAFE (n/a when the fault does not apply).
    pub fn verdict(&self) -> Verdict {
        let halves = [self.exhaustive.verdict, self.simulated.verdict];
        if self.simulated.verdict == Verdict::NotApplicable {
            Verdict::NotApplicable
        } else if halves.contains(&Verdict::Broken) {
            Verdict::Broken
        } else if halves.contains(&Verdict::Inconclusive) {
            Verdict::Inconclusive
        } else {
            Verdict::Safe
        }
    }

    /// The sentence of why: from the simulated counterexample (the column's own scenario)
    /// when there is one, else from the exhaustive one.
    pub fn why(&self) -> Option<&str> {
        self.simulated
            .counterexample
            .as_ref()
            .or(self.exhaustive.counterexample.as_ref())
            .map(|c| c.why.as_str())
    }
}

const FENCED: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelow,
};
const FENCED_UNCHECKED: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::Unfenced,
};
const FENCED_CAS: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelowAndEqual,
};

/// What the tutorial and its safety section say about a cell, if anything.
pub fn expected(safeguard: Safeguard, column: Column) -> Option<Expected> {
    use Verdict::{Broken, Safe};
    let both = |verdict, source: &'static str| {
        Some(Expected {
            simulated: verdict,
            exhaustive: Some(verdict),
            source: source.into(),
        })
    };
    let simulated = |verdict, source: &'static str| {
        Some(Expected {
            simulated: verdict,
            exhaustive: None,
            source: source.into(),
        })
    };
    if matches!(safeguard, Safeguard::User(_)) {
        // A user's safeguard: the tutorial says nothing about it.
        return None;
    }
    if let Safeguard::Redlock { cas, .. } = safeguard {
        return match (cas, column) {
            (false, Column::Restart) => both(
                Broken,
                "safety: a node restarted without persistence hands the lock out twice",
            ),
            (false, Column::ClockJump) => both(
                Broken,
                "safety: a node clock stepped forward hands the lock out twice",
            ),
            (true, Column::Restart | Column::ClockJump) => both(
                Safe,
                "safety: redlock-cas's write checks the version it read",
            ),
            (false, Column::Pause(Point::AfterRead)) => simulated(
                Broken,
                "safety: a holder paused past the validity writes without the lock",
            ),
            (true, Column::Pause(Point::AfterRead)) => simulated(
                Safe,
                "safety: redlock-cas's write checks the version it read",
            ),
            (_, Column::ClockSlew) => both(
                Safe,
                "safety: a node clock slewed, not stepped, keeps the keys for their TTL",
            ),
            (_, Column::NodeLoss) => both(
                Safe,
                "safety: a node that stays down past the TTL forgets no lock it could hand out \
                 again; the majority left carries the locks",
            ),
            _ => None,
        };
    }
    let lease_only = safeguard.uses_lock()
        && safeguard.balance_in() == BalanceIn::Redis
        && safeguard != Safeguard::NoLock;
    match (safeguard, column) {
        (Safeguard::NoLock, Column::None) => both(Broken, "step 1: no lock loses updates"),
        (Safeguard::PgDebit | Safeguard::PgForUpdate, _) => {
            both(Safe, "PostgreSQL serialises the spend itself")
        }
        (Safeguard::PgTransfer { ordered: true }, _) => both(
            Safe,
            "safety: both rows locked in id order, money conserved",
        ),
        (Safeguard::PgTransfer { ordered: false }, _) => both(
            Safe,
            "safety: opposite transfers deadlock; PostgreSQL aborts one (40P01) and it retries",
        ),
        (
            Safeguard::PgIsolation {
                isolation: Isolation::RepeatableRead | Isolation::Serializable,
            },
            _,
        ) => both(
            Safe,
            "safety: a write over a concurrent update fails with 40001 and is retried",
        ),
        (
            Safeguard::PgIsolation {
                isolation: Isolation::ReadCommitted,
            },
            Column::None | Column::Pause(Point::AfterRead | Point::BeforeWrite),
        ) => both(
            Broken,
            "safety: read-modify-write under READ COMMITTED loses updates",
        ),
        (
            Safeguard::Lease {
                release: leaselab_model::safeguard::lease::ReleaseVia::Script,
            },
            Column::WorkOverTtl,
        ) => both(Broken, "step 3: work longer than the TTL"),
        (Safeguard::LeaseWatchdog, Column::WorkOverTtl) => {
            both(Safe, "step 3 -watchdog: the lease is refreshed")
        }
        (FENCED, Column::Pause(Point::AfterRead)) => {
            simulated(Safe, "step 5: the paused holder's stale token is refused")
        }
        (FENCED_UNCHECKED, Column::Pause(Point::AfterRead)) => both(
            Broken,
            "step 5 -fenced=false: the paused holder's write lands",
        ),
        (FENCED, Column::ShortTtl) => simulated(Broken, "step 6: fencing alone, TTL 1ms"),
        (FENCED_CAS, Column::ShortTtl) => both(Safe, "step 6 -same-version: check-and-set"),
        (FENCED, Column::Failover) => both(Safe, "safety: a reissued token wins once"),
        (FENCED_UNCHECKED, Column::Failover) => {
            simulated(Broken, "safety: the reissued token writes twice")
        }
        (Safeguard::LeaseWait, Column::Failover) => both(
            Broken,
            "safety: WAIT narrows the window, but a failover still loses the lock or the balance",
        ),
        (_, Column::Failover) if lease_only => both(Broken, "safety: failover breaks leases"),
        (FENCED, Column::AofCrash) => simulated(
            Safe,
            "safety: a restart without appendfsync always reissues a token; fence < $2 lets it win once",
        ),
        (FENCED_UNCHECKED, Column::AofCrash) => simulated(
            Broken,
            "safety: a restart without appendfsync always loses the lock key",
        ),
        (_, Column::AofCrash) if lease_only => simulated(
            Broken,
            "safety: a restart without appendfsync always loses the lock key",
        ),
        (Safeguard::SetnxDel | Safeguard::SetnxExpire, Column::RetriedRelease) => both(
            Broken,
            "safety: a retried token-less DEL deletes the next holder's lock",
        ),
        (Safeguard::Lease { .. } | Safeguard::LeaseWatchdog, Column::RetriedRelease) => both(
            Safe,
            "safety: a retried compare-and-delete finds another token and deletes nothing",
        ),
        (_, Column::ClockSlew) if safeguard.uses_lock() && safeguard != Safeguard::NoLock => both(
            Safe,
            "safety: a clock slewed, not stepped, keeps the lease (nobody steps the clock)",
        ),
        (Safeguard::Lease { .. } | Safeguard::LeaseWatchdog, Column::ClockJump) => both(
            Broken,
            "safety: a clock stepped past the lease hands the lock out twice, watchdog or not",
        ),
        (Safeguard::LeaseWatchdog, Column::Partition) => both(
            Safe,
            "safety: the holder cut off from Redis stops before its lease runs out, and writes \
             nothing stale",
        ),
        (FENCED_CAS, Column::ClockJump) => both(
            Safe,
            "safety: check-and-set refuses the write computed from a stale read",
        ),
        (FENCED | FENCED_CAS, Column::EvictFence) => simulated(
            Safe,
            "step 5: an evicted counter's small tokens are refused until it passes max(fence)",
        ),
        _ => None,
    }
}

/// How a matrix is run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The first seed.
    pub first_seed: u64,
    /// Seeds per cell.
    pub runs: u64,
    /// The checker's limit on distinct states, per check.
    pub max_states: u64,
    /// The simulated cells' timing model and its latency (none: each column's scenario's
    /// own, the default timing).
    pub timing: Option<TimingPreset>,
    /// A cell's simulated runs side by side (`crate::parallel`; the cell is the same for any
    /// count).
    pub threads: usize,
}

/// A finished exhaustive check, kept so that columns sharing a check run it once.
#[derive(Clone, Debug)]
pub struct CheckResult {
    config: CheckConfig,
    exhaustive: Exhaustive,
}

/// The checks already run (the four pause columns share one per safeguard).
#[derive(Debug, Default)]
pub struct CheckCache {
    done: Vec<CheckResult>,
}

/// Saves counterexamples as traces; none: saving is off.
pub trait Saver {
    /// Saves a simulated run; the path, or why not.
    fn save_run(&mut self, report: &RunReport) -> Result<PathBuf, String>;
    /// Saves a model counterexample turned into a simulated run; the path, or why not.
    fn save_model(
        &mut self,
        config: &CheckConfig,
        path: &[leaselab_model::world::Action],
    ) -> Result<PathBuf, String>;
}

/// Saves nothing (saving traces is off).
pub struct NoSaver;

impl Saver for NoSaver {
    fn save_run(&mut self, _: &RunReport) -> Result<PathBuf, String> {
        Err("saving traces is off".into())
    }

    fn save_model(
        &mut self,
        _: &CheckConfig,
        _: &[leaselab_model::world::Action],
    ) -> Result<PathBuf, String> {
        Err("saving traces is off".into())
    }
}

/// Saves into a directory.
pub struct DirSaver(pub PathBuf);

impl Saver for DirSaver {
    fn save_run(&mut self, report: &RunReport) -> Result<PathBuf, String> {
        crate::trace::save_trace(report, &self.0).map_err(|e| format!("{}: {e}", self.0.display()))
    }

    fn save_model(
        &mut self,
        config: &CheckConfig,
        path: &[leaselab_model::world::Action],
    ) -> Result<PathBuf, String> {
        let translation = crate::trace::model::translate(config, path)?;
        if !translation.report.broken() {
            return Err(format!(
                "its simulated schedule ends {} (the simulation does not reproduce it)",
                translation.report.ledger.line()
            ));
        }
        crate::trace::model::trace_file(config, LEDGER, path, &translation)
            .save_in(&self.0)
            .map_err(|e| format!("{}: {e}", self.0.display()))
    }
}

/// Decides one cell: the exhaustive check (cached) and `options.runs` seeds.
pub fn run_cell(
    row: &Row,
    column: Column,
    options: Options,
    cache: &mut CheckCache,
    saver: &mut dyn Saver,
) -> Result<Cell, String> {
    if let Err(reason) = column.applies(row) {
        let na = Exhaustive {
            verdict: Verdict::NotApplicable,
            bound: reason.clone(),
            scope: String::new(),
            states: 0,
            steps: None,
            reason: None,
            counterexample: None,
        };
        let sim = Simulated {
            verdict: Verdict::NotApplicable,
            seeds: reason,
            runs: 0,
            broken: 0,
            inconclusive: 0,
            untested: 0,
            tokens_reissued: 0,
            cost: Cost::default(),
            counterexample: None,
        };
        return Ok(Cell {
            row: row.name.clone(),
            column: column.name(),
            exhaustive: na,
            simulated: sim,
            note: None,
            expected: None,
            unexpected: false,
        });
    }
    let expected = expected(row.safeguard, column);
    let exhaustive = exhaustive(row, column, options, cache, saver)?;
    let simulated = simulate(row, column, options, saver)?;
    let unexpected = expected.as_ref().is_some_and(|e| {
        e.simulated != simulated.verdict || e.exhaustive.is_some_and(|v| v != exhaustive.verdict)
    });
    Ok(Cell {
        row: row.name.clone(),
        column: column.name(),
        exhaustive,
        simulated,
        note: column.note(row),
        expected,
        unexpected,
    })
}

fn exhaustive(
    row: &Row,
    column: Column,
    options: Options,
    cache: &mut CheckCache,
    saver: &mut dyn Saver,
) -> Result<Exhaustive, String> {
    let config = match column.check(row) {
        Ok(config) => config,
        Err(reason) => {
            return Ok(Exhaustive {
                verdict: Verdict::NotExpressible,
                bound: reason,
                scope: column.check_scope_for(row).to_string(),
                states: 0,
                steps: None,
                reason: None,
                counterexample: None,
            })
        }
    };
    if let Some(done) = cache.done.iter().find(|d| d.config == config) {
        let mut found = done.exhaustive.clone();
        found.scope = column.check_scope_for(row).to_string();
        return Ok(found);
    }
    let model = LeaseModel::with_properties(config, PropertySet::LedgerOnly)
        .map_err(|e| format!("{} × {}: {}", row.name, column.name(), e.0))?;
    // A cell is judged by the ledger alone (with the witness that callers settle, so that a
    // SAFE is not vacuous): the search stops at the ledger's first, shortest, violation.
    // `leaselab check` decides the other properties.
    let run_options = RunOptions {
        max_unique: Some(options.max_states),
        stop_at_violation: true,
        ..RunOptions::default()
    };
    let report = check_run(&model, run_options, &Counters::default());
    let ledger = report.property(LEDGER);
    let verdict = match ledger.map(|p| p.verdict) {
        Some(PropertyVerdict::Violated) => Verdict::Broken,
        Some(PropertyVerdict::Safe) => Verdict::Safe,
        _ => Verdict::Inconclusive,
    };
    let path = ledger.and_then(|p| p.path.clone());
    let counterexample = match (&path, ledger) {
        (Some(actions), Some(property)) => {
            let last = replay(model.initial_world(), actions);
            let why = why(&last.ledger(), 0);
            let (trace, trace_note) = match saver.save_model(&config, actions) {
                Ok(path) => (Some(path), None),
                Err(error) => (None, Some(error)),
            };
            Some(Counterexample {
                why,
                trace,
                seed: Some(crate::trace::model::SEED),
                steps: property.trace.clone(),
                trace_note,
            })
        }
        _ => None,
    };
    let found = Exhaustive {
        verdict,
        bound: report.bound.clone(),
        scope: column.check_scope_for(row).to_string(),
        states: report.unique_states,
        steps: report.steps(LEDGER),
        reason: report.reason_over(&[LEDGER]),
        counterexample,
    };
    cache.done.push(CheckResult {
        config,
        exhaustive: found.clone(),
    });
    Ok(found)
}

fn simulate(
    row: &Row,
    column: Column,
    options: Options,
    saver: &mut dyn Saver,
) -> Result<Simulated, String> {
    let mut scenario = column.scenario(row);
    if let Some(preset) = options.timing {
        preset.apply(&mut scenario);
    }
    let config = SimConfig::for_scenario(&scenario);
    let last = options
        .first_seed
        .checked_add(options.runs.saturating_sub(1))
        .ok_or("the seeds would run past the largest seed")?;
    let mut elapsed = Vec::new();
    let (mut broken, mut inconclusive, mut untested, mut reissued) = (0, 0, 0, 0);
    let (mut gave_up, mut rejected, mut failed) = (0, 0, 0);
    let mut shortest: Option<RunReport> = None;
    let run = |seed| {
        leaselab_sim::run::run_with(&scenario, seed, &config)
            .map_err(|e| format!("{} × {}: {}", row.name, column.name(), e.0))
    };
    crate::parallel::in_order(
        options.first_seed..=last,
        (options.threads as u64).min(options.runs).max(1) as usize,
        &run,
        &mut |report: RunReport| {
            match report.verdict() {
                RunVerdict::Ok => {}
                RunVerdict::Inconclusive if report.untested() => untested += 1,
                RunVerdict::Broken => {
                    broken += 1;
                    if shortest
                        .as_ref()
                        .is_none_or(|s| report.events.len() < s.events.len())
                    {
                        shortest = Some(report.clone());
                    }
                }
                RunVerdict::Inconclusive => inconclusive += 1,
            }
            elapsed.push(report.elapsed_ms);
            gave_up += u64::from(report.ledger.gave_up);
            rejected += u64::from(report.ledger.rejected);
            failed += u64::from(report.ledger.failed);
            reissued += u64::from(report.tokens_reissued);
            Ok(())
        },
    )?;
    elapsed.sort_unstable();
    let rank = |q: u64| {
        let n = elapsed.len() as u64;
        let index = (q * n).div_ceil(100).clamp(1, n) - 1;
        elapsed[index as usize]
    };
    let cost = Cost {
        median_ms: elapsed[elapsed.len() / 2],
        p99_ms: rank(99),
        gave_up,
        rejected,
        failed,
        runs: options.runs,
    };
    let verdict = if broken > 0 {
        Verdict::Broken
    } else if inconclusive > 0 || untested == options.runs {
        Verdict::Inconclusive
    } else {
        Verdict::Safe
    };
    let counterexample = shortest.map(|report| {
        let (trace, trace_note) = match saver.save_run(&report) {
            Ok(path) => (Some(path), None),
            Err(error) => (None, Some(error)),
        };
        Counterexample {
            why: why(&report.ledger, report.tokens_reissued),
            trace,
            seed: Some(report.seed),
            steps: Vec::new(),
            trace_note,
        }
    });
    Ok(Simulated {
        verdict,
        seeds: format!("seeds {}..={last}", options.first_seed),
        runs: options.runs,
        broken,
        inconclusive,
        untested,
        tokens_reissued: reissued,
        cost,
        counterexample,
    })
}

fn caller_name(caller: u32) -> String {
    match crate::trace::story::letter(caller) {
        Some(letter) => format!("caller {letter} (app-{caller})"),
        None => format!("app-{caller}"),
    }
}

/// One sentence of why a ledger is broken, from its typed blame: the first stale spend (its
/// read, the balance it should have started from, its token), a negative balance, or a
/// balance that does not match the accepted spends; `reissued` fencing tokens issued twice.
pub fn why(ledger: &Ledger, reissued: u32) -> String {
    let reissue = if reissued > 0 {
        " A failover had lost the fence counter's INCR, so a fencing token was issued twice."
    } else {
        ""
    };
    if !ledger.wallets.is_empty() {
        if let Some(wallet) = ledger.negative_wallet() {
            return format!(
                "Wallet {} went negative ({}): a transfer took more than it held.",
                wallet.id, wallet.final_balance
            );
        }
        return format!(
            "{} transfers moved money between the wallets, but together they hold {} where {}              was put in: a write was lost.",
            ledger.accepted, ledger.final_balance, ledger.initial_balance
        );
    }
    if let Some(stale) = ledger.stale_spends.first() {
        let token = match stale.fence {
            Some(fence) => format!(" with fencing token {fence}"),
            None => String::new(),
        };
        let more = match ledger.stale_spends.len() {
            1 => String::new(),
            n => format!(" ({} more stale spends)", n - 1),
        };
        return format!(
            "{} wrote{token} a spend computed from a read of {}, but other accepted spends \
             had already brought the balance to {}: its write overwrote theirs{more}.{reissue}",
            caller_name(stale.caller),
            stale.read_balance,
            stale.current_balance
        );
    }
    if ledger.final_balance == i64::MIN {
        return format!(
            "The balance itself was gone at the end (its key lost, as a restart without \
             persistence loses it): the {} left after {} accepted spend(s) no longer exist.{reissue}",
            ledger.expected_balance, ledger.accepted
        );
    }
    if ledger.final_balance < 0 {
        return format!(
            "The balance went negative ({}): more spends were accepted than it could pay.{reissue}",
            ledger.final_balance
        );
    }
    let spends = if ledger.accepted == 1 {
        "spend"
    } else {
        "spends"
    };
    let what = if ledger.final_balance > ledger.expected_balance {
        "an accepted write was lost"
    } else {
        "a write landed that no accepted spend accounts for"
    };
    format!(
        "{} {spends} of {} were accepted from {}, so {} should be left, but the balance is {}: \
         {what}.{reissue}",
        ledger.accepted,
        ledger.amount,
        ledger.initial_balance,
        ledger.expected_balance,
        ledger.final_balance
    )
}

/// A whole matrix (or one shard's cells of it).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Matrix {
    /// `matrix` in a shard's output (none otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Which shard of the cells, `K/N` (none: every cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The rows' names, in order.
    pub rows: Vec<String>,
    /// The columns' names, in order.
    pub columns: Vec<String>,
    /// Seeds per simulated cell.
    pub runs: u64,
    /// The first seed.
    pub first_seed: u64,
    /// The checker's state limit per check.
    pub max_states: u64,
    /// The simulated cells' timing model (none: each column's scenario's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<String>,
    /// Every cell (of the shard), row by row.
    pub cells: Vec<Cell>,
}

impl Matrix {
    /// The cell of `row` and `column`.
    pub fn cell(&self, row: &str, column: Column) -> Option<&Cell> {
        let name = column.name();
        self.cells.iter().find(|c| c.row == row && c.column == name)
    }

    /// Cells that disagree with the tutorial.
    pub fn unexpected(&self) -> Vec<&Cell> {
        self.cells.iter().filter(|c| c.unexpected).collect()
    }

    /// Cells left undecided by either method.
    pub fn inconclusive(&self) -> Vec<&Cell> {
        self.cells
            .iter()
            .filter(|c| {
                c.exhaustive.verdict == Verdict::Inconclusive
                    || c.simulated.verdict == Verdict::Inconclusive
            })
            .collect()
    }
}

/// Runs every cell of `rows` × `columns`; `progress` is told after each cell.
pub fn run(
    rows: &[Row],
    columns: &[Column],
    options: Options,
    shard: Option<Shard>,
    saver: &mut dyn Saver,
    mut progress: impl FnMut(&Row, Column),
) -> Result<Matrix, String> {
    let mut cache = CheckCache::default();
    let mut cells = Vec::new();
    let mut position = 0u64;
    for row in rows {
        for &column in columns {
            if shard.unwrap_or(Shard::WHOLE).owns(position) {
                cells.push(run_cell(row, column, options, &mut cache, saver)?);
                if let Some(stopped) = leaselab_model::redis::lua::first_stopped_script() {
                    return Err(format!(
                        "{} × {}: a safeguard's Lua {stopped}; the matrix has no verdict",
                        row.name,
                        column.name()
                    ));
                }
                progress(row, column);
            }
            position += 1;
        }
    }
    Ok(Matrix {
        command: shard.map(|_| "matrix".to_string()),
        shard: shard.map(|shard| shard.text()),
        rows: rows.iter().map(|r| r.name.clone()).collect(),
        columns: columns.iter().map(|c| c.name()).collect(),
        runs: options.runs,
        first_seed: options.first_seed,
        max_states: options.max_states,
        timing: options
            .timing
            .map(|preset| preset.timing.name().to_string()),
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_applicable_cell_is_a_valid_scenario_and_check() {
        for row in Row::all() {
            for column in Column::all() {
                if column.applies(&row).is_err() {
                    continue;
                }
                let scenario = column.scenario(&row);
                leaselab_sim::run::validate(&scenario)
                    .unwrap_or_else(|e| panic!("{} {}: {}", row.name, column.name(), e.0));
                if let Ok(config) = column.check(&row) {
                    config
                        .validate()
                        .unwrap_or_else(|e| panic!("{} {}: {}", row.name, column.name(), e.0));
                }
            }
        }
    }

    #[test]
    fn column_names_and_codes_parse_back_and_codes_fit() {
        for column in Column::all() {
            assert_eq!(Column::parse(&column.name()), Some(column));
            assert_eq!(Column::parse(column.code()), Some(column));
            assert!(column.code().chars().count() <= 4);
        }
        assert_eq!(Column::parse("nonsense"), None);
    }

    #[test]
    fn redis_faults_do_not_apply_to_postgres_only_safeguards() {
        let pg = Row::builtin(Safeguard::PgDebit);
        assert!(Column::Failover.applies(&pg).is_err());
        assert!(Column::ShortTtl.applies(&pg).is_err());
        assert!(Column::Pause(Point::AfterRead).applies(&pg).is_ok());
        let no_lock = Row::builtin(Safeguard::NoLock);
        assert!(Column::Failover.applies(&no_lock).is_ok());
        assert!(Column::ShortTtl.applies(&no_lock).is_err());
    }

    #[test]
    fn why_names_the_stale_spend_from_the_ledger() {
        use leaselab_model::ledger::StaleSpend;
        let mut ledger = Ledger::check(100, 10, &[], 90);
        ledger.accepted = 2;
        ledger.expected_balance = 80;
        ledger.stale_spends = vec![StaleSpend {
            caller: 1,
            read_balance: 100,
            current_balance: 90,
            fence: Some(33),
        }];
        let text = why(&ledger, 1);
        assert!(
            text.starts_with("caller A (app-1) wrote with fencing token 33"),
            "{text}"
        );
        assert!(text.contains("read of 100"), "{text}");
        assert!(text.contains("balance to 90"), "{text}");
        assert!(text.contains("issued twice"), "{text}");
        ledger.stale_spends.clear();
        let text = why(&ledger, 0);
        assert!(
            text.contains("80 should be left, but the balance is 90"),
            "{text}"
        );
        assert!(text.contains("an accepted write was lost"), "{text}");
        ledger.final_balance = -10;
        assert!(why(&ledger, 0).contains("negative (-10)"));
    }
}
