//! Faults in a simulated run: what the simulation checks and schedules, and the fault
//! scenarios beyond the tutorial.
//!
//! - **GC pause** ([`Fault::Pause`]): the caller freezes the first time its machine reaches
//!   the point; nothing of it runs meanwhile (the machine, watchdog included, is its only
//!   activity), and its lease keeps ageing on the server. See `PausePlan` in `driver.rs`.
//! - **Partition**: turmoil drops every segment on the cut link (both ways, or one way). TCP
//!   has no retransmission there, so a connection that lost a segment hangs for good; the
//!   client's timeouts end the wait and the next request reconnects (see
//!   [`leaselab_model::client::ClientPolicy`]). The `redis` ↔ `redis-replica` link is the replication
//!   stream, not a turmoil link: cutting it queues changes on the primary.
//! - **Failover**: the replica, [`Network::replication_lag_ms`] behind, is promoted behind the
//!   `redis` address (as Sentinel or a virtual IP would); every connection to `redis` is
//!   dropped and clients reconnect. What had not replicated — lock keys, fence `INCR`s — is
//!   gone, so a fencing token can be issued twice.
//! - **Redis restart** without persistence: keyspace and script cache gone, connections
//!   dropped.
//! - **Redis machine crash with an AOF** ([`Fault::RedisCrashAof`]): Redis restarts from its
//!   append-only file; what came after the last fsync (`appendfsync everysec`: up to a second,
//!   `no`: up to 30 s, `always`: nothing) is gone, script cache always. See
//!   [`leaselab_model::redis::aof`].
//! - **Eviction** ([`Fault::EvictFenceCounter`]): an `allkeys-*` policy under memory pressure
//!   evicts the fence counter (a `DEL` its replica receives too); the next `INCR` gives 1.
//! - **Clock jump** of the Redis server (primary, or the replica once promoted): Redis expires
//!   keys by its wall clock.
//! - **Clock drift** ([`Fault::ClockDrift`]): the server's clock runs a rate off (+2 %: 102 ms
//!   per 100 ms) from the release on, so a lease expires early (fast) or late (slow).
//! - **Clock slew** ([`Fault::ClockSlew`]): an offset corrected gradually, as NTP does when it
//!   may not step the clock: the clock runs `rate_ppm` fast (or slow) until the offset is
//!   applied. At NTP's 500 ppm a lease of 2 s loses 1 ms; the same offset as a jump expires
//!   it at once.
//!
//! Fault times count from the callers' release.
//!
//! [`Network::replication_lag_ms`]: leaselab_model::scenario::Network

use std::time::Duration;

use leaselab_model::fault::{Fault, Host, MAX_CLOCK_RATE_PPM};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::{ParamError, Point, Safeguard};
use leaselab_model::scenario::Scenario;

use crate::clock::{Drift, Jump, ServerClock, Slew, Timeline};

/// Something the simulation does to the world at a given instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Cut the link between `a` and `b` (only `a` → `b` when `one_way`).
    Cut {
        /// One end.
        a: Host,
        /// The other end.
        b: Host,
        /// Only `a` → `b`.
        one_way: bool,
    },
    /// Heal it.
    Heal {
        /// One end.
        a: Host,
        /// The other end.
        b: Host,
        /// Only `a` → `b`.
        one_way: bool,
    },
    /// Promote the replica.
    Failover,
    /// Restart Redis empty.
    RedisRestart,
    /// Restart the replica empty (it loads a full resync the replication lag later).
    ReplicaRestart,
    /// Crash the machine and restart Redis from its AOF.
    RedisCrashAof,
    /// Evict the fence counter.
    EvictFenceCounter,
    /// Redlock node `node` restarts empty at once (its connections drop).
    NodeRestart {
        /// Which node.
        node: u8,
    },
    /// Redlock node `node` crashes empty; it comes back `down_ms` later ([`Action::NodeBack`]).
    NodeCrash {
        /// Which node.
        node: u8,
        /// For how long.
        down_ms: u64,
    },
    /// Redlock node `node` is back after a crash, empty.
    NodeBack {
        /// Which node.
        node: u8,
    },
    /// A server clock jumps (the clock itself already knows; this logs it).
    ClockJump {
        /// Whose clock.
        host: Host,
        /// By how much.
        jump_ms: i64,
    },
}

/// The timed actions of a run, in the order they happen.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    actions: Vec<(Duration, Action)>,
    next: usize,
}

impl Schedule {
    /// The actions of `scenario`'s faults on `timeline` (pauses are the callers' own).
    pub fn new(scenario: &Scenario, timeline: &Timeline) -> Schedule {
        let mut actions = Vec::new();
        for fault in &scenario.faults {
            match fault {
                // The callers' own: their drivers pause and lose replies.
                Fault::Pause { .. } | Fault::LostReply { .. } | Fault::DroppedConnection { .. } => {
                }
                Fault::NodeRestart {
                    node,
                    at_ms,
                    down_ms: 0,
                } => actions.push((timeline.at_ms(*at_ms), Action::NodeRestart { node: *node })),
                Fault::NodeRestart {
                    node,
                    at_ms,
                    down_ms,
                } => {
                    actions.push((
                        timeline.at_ms(*at_ms),
                        Action::NodeCrash {
                            node: *node,
                            down_ms: *down_ms,
                        },
                    ));
                    actions.push((
                        timeline.at_ms(at_ms.saturating_add(*down_ms)),
                        Action::NodeBack { node: *node },
                    ));
                }
                Fault::Failover { at_ms } => {
                    actions.push((timeline.at_ms(*at_ms), Action::Failover))
                }
                Fault::RedisRestart { at_ms } => {
                    actions.push((timeline.at_ms(*at_ms), Action::RedisRestart))
                }
                Fault::ReplicaRestart { at_ms } => {
                    actions.push((timeline.at_ms(*at_ms), Action::ReplicaRestart))
                }
                Fault::RedisCrashAof { at_ms, .. } => {
                    actions.push((timeline.at_ms(*at_ms), Action::RedisCrashAof))
                }
                Fault::EvictFenceCounter { at_ms } => {
                    actions.push((timeline.at_ms(*at_ms), Action::EvictFenceCounter))
                }
                Fault::Partition {
                    a,
                    b,
                    from_ms,
                    until_ms,
                    one_way,
                } => {
                    let (a, b, one_way) = (*a, *b, *one_way);
                    actions.push((timeline.at_ms(*from_ms), Action::Cut { a, b, one_way }));
                    actions.push((timeline.at_ms(*until_ms), Action::Heal { a, b, one_way }));
                }
                Fault::ClockJump {
                    host,
                    at_ms,
                    jump_ms,
                } => actions.push((
                    timeline.at_ms(*at_ms),
                    Action::ClockJump {
                        host: *host,
                        jump_ms: *jump_ms,
                    },
                )),
                // The clocks themselves carry drift and slews (see `server_clocks`).
                Fault::ClockDrift { .. } | Fault::ClockSlew { .. } => {}
            }
        }
        // Stable: faults at the same instant happen in the order they were given.
        actions.sort_by_key(|(at, _)| *at);
        Schedule { actions, next: 0 }
    }

    /// The next action due by `now`, if any.
    pub fn due(&mut self, now: Duration) -> Option<Action> {
        let (at, action) = self.actions.get(self.next)?;
        if *at > now {
            return None;
        }
        self.next += 1;
        Some(action.clone())
    }

    /// When the next action is due, if any is left.
    pub fn next_at(&self) -> Option<Duration> {
        self.actions.get(self.next).map(|(at, _)| *at)
    }

    /// The `appendfsync` policy of the run's append-only file, when a fault crashes Redis
    /// with one (every such fault of a run names the same policy, see [`validate`]).
    pub fn appendfsync(scenario: &Scenario) -> Option<Appendfsync> {
        scenario.faults.iter().find_map(|fault| match fault {
            Fault::RedisCrashAof { appendfsync, .. } => Some(*appendfsync),
            _ => None,
        })
    }

    /// True when a replica is needed (a failover, a replication-link partition, or a
    /// safeguard that asks the replicas with `WAIT`, as the checker's World has one then).
    pub fn needs_replica(scenario: &Scenario) -> bool {
        if Safeguard::replicated().contains(&scenario.safeguard) {
            return true;
        }
        scenario.faults.iter().any(|fault| match fault {
            Fault::Failover { .. } | Fault::ReplicaRestart { .. } => true,
            Fault::Partition { a, b, .. } => *a == Host::Replica || *b == Host::Replica,
            Fault::ClockJump { host, .. }
            | Fault::ClockDrift { host, .. }
            | Fault::ClockSlew { host, .. } => *host == Host::Replica,
            _ => false,
        })
    }
}

/// The wall clock of `host` (the primary, the replica or a Redlock node), with the scenario's
/// jumps, drifts and slews aimed at it.
pub fn server_clock(scenario: &Scenario, timeline: &Timeline, host: Host) -> ServerClock {
    let mut clock = ServerClock::new(*timeline);
    for fault in &scenario.faults {
        match *fault {
            Fault::ClockJump {
                host: on,
                at_ms,
                jump_ms,
            } if on == host => clock.add_jump(Jump {
                at: timeline.at_ms(at_ms),
                by_ms: jump_ms,
            }),
            Fault::ClockDrift { host: on, rate_ppm } if on == host => clock.set_drift(Drift {
                from: timeline.at_ms(0),
                rate_ppm,
            }),
            Fault::ClockSlew {
                host: on,
                at_ms,
                offset_ms,
                rate_ppm,
            } if on == host => clock.add_slew(Slew {
                at: timeline.at_ms(at_ms),
                offset_ms,
                rate_ppm,
            }),
            _ => {}
        }
    }
    clock
}

/// The wall clocks of the primary and of the replica.
pub fn server_clocks(scenario: &Scenario, timeline: &Timeline) -> (ServerClock, ServerClock) {
    (
        server_clock(scenario, timeline, Host::Redis),
        server_clock(scenario, timeline, Host::Replica),
    )
}

/// The wall clocks of Redlock's nodes (node n at index n − 1); none for a single-Redis
/// safeguard.
pub fn node_clocks(scenario: &Scenario, timeline: &Timeline) -> Vec<ServerClock> {
    (1..=scenario.safeguard.redis_nodes())
        .map(|node| server_clock(scenario, timeline, Host::Node(node)))
        .collect()
}

/// Redlock runs host its nodes and no single Redis: the faults of the single Redis are refused,
/// the nodes' own checked.
fn validate_redlock(scenario: &Scenario) -> Result<(), ParamError> {
    for fault in &scenario.faults {
        let single = match fault {
            Fault::Failover { .. }
            | Fault::RedisRestart { .. }
            | Fault::ReplicaRestart { .. }
            | Fault::RedisCrashAof { .. }
            | Fault::EvictFenceCounter { .. } => true,
            Fault::Partition { a, b, .. } => [a, b]
                .iter()
                .any(|host| matches!(host, Host::Redis | Host::Replica)),
            Fault::ClockJump { host, .. }
            | Fault::ClockDrift { host, .. }
            | Fault::ClockSlew { host, .. } => !matches!(host, Host::Node(_)),
            _ => false,
        };
        if single {
            return Err(ParamError(format!(
                "{}: {} runs on {} independent nodes, redis-1 to redis-{}, and no single Redis; \
                 use the node faults (--node-restart, --partition app-1:redis-2:..., \
                 --clock-jump redis-2:..., --clock-drift redis-2:...)",
                fault.describe(),
                scenario.safeguard.name(),
                scenario.safeguard.redis_nodes(),
                scenario.safeguard.redis_nodes()
            )));
        }
    }
    Ok(())
}

/// Checks what the simulation needs beyond [`Scenario::validate`]: faults it can carry out.
pub fn validate(scenario: &Scenario) -> Result<(), ParamError> {
    if scenario.safeguard.redis_nodes() > 0 {
        validate_redlock(scenario)?;
    }
    let failovers = scenario
        .faults
        .iter()
        .filter(|fault| matches!(fault, Fault::Failover { .. }))
        .count();
    if failovers > 1 {
        return Err(ParamError(
            "at most one failover per run: after it there is no replica left to promote".into(),
        ));
    }
    if let Some(appendfsync) = Schedule::appendfsync(scenario) {
        for fault in &scenario.faults {
            match fault {
                Fault::RedisCrashAof {
                    appendfsync: other, ..
                } if *other != appendfsync => {
                    return Err(ParamError(format!(
                        "{}: one run has one append-only file; every crash must name the same \
                         appendfsync ({})",
                        fault.describe(),
                        appendfsync.name()
                    )))
                }
                Fault::RedisRestart { .. } => {
                    return Err(ParamError(format!(
                        "{}: a run with an append-only file (appendfsync {}) cannot also restart \
                         without persistence; use one kind of restart",
                        fault.describe(),
                        appendfsync.name()
                    )))
                }
                _ => {}
            }
        }
        if Schedule::needs_replica(scenario) {
            return Err(ParamError(
                "a crash with an append-only file and a replica in one run is not modelled: drop \
                 the failover / replication partition, or the crash"
                    .into(),
            ));
        }
    }
    for fault in &scenario.faults {
        match fault {
            Fault::Partition { a, b, .. } => {
                for host in [a, b] {
                    if let Host::Caller(n) = host {
                        if *n == 0 || *n > scenario.callers {
                            return Err(ParamError(format!(
                                "{}: there is no app-{n} (callers are app-1 to app-{})",
                                fault.describe(),
                                scenario.callers
                            )));
                        }
                    }
                }
                if a == b {
                    return Err(ParamError(format!(
                        "{}: a partition needs two different hosts",
                        fault.describe()
                    )));
                }
                let replica = *a == Host::Replica || *b == Host::Replica;
                let primary = *a == Host::Redis || *b == Host::Redis;
                if replica && !primary {
                    return Err(ParamError(format!(
                        "{}: only the redis <-> redis-replica link (replication) can be cut; \
                         callers reach the replica only through the redis address after a failover",
                        fault.describe()
                    )));
                }
            }
            Fault::ClockDrift { rate_ppm, .. } if rate_ppm.unsigned_abs() > MAX_CLOCK_RATE_PPM => {
                return Err(ParamError(format!(
                    "{}: a drift is at most ±50% (500000 ppm); beyond it a clock is broken, not \
                     off",
                    fault.describe()
                )));
            }
            Fault::ClockSlew {
                rate_ppm,
                offset_ms,
                ..
            } if *rate_ppm == 0 || *rate_ppm > MAX_CLOCK_RATE_PPM || *offset_ms == 0 => {
                return Err(ParamError(format!(
                    "{}: a slew needs an offset other than 0 and a rate from 1 ppm to 50% \
                     (500000 ppm; ntpd slews at 500 ppm)",
                    fault.describe()
                )));
            }
            Fault::ClockJump { host, .. }
            | Fault::ClockDrift { host, .. }
            | Fault::ClockSlew { host, .. }
                if !matches!(host, Host::Redis | Host::Replica | Host::Node(_)) =>
            {
                return Err(ParamError(format!(
                    "{}: only the Redis servers' clocks matter (callers use monotonic time, \
                     PostgreSQL's clock is not used); jump redis, redis-replica or a Redlock \
                     node (redis-N)",
                    fault.describe()
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The fault scenarios beyond the tutorial, by name.
pub const FAULT_SCENARIOS: [&str; 11] = [
    "failover-fencing",
    "partition-watchdog",
    "aof-crash",
    "evict-fence",
    "wait-failover",
    "wait-lag",
    "wait-replica-restart",
    "redlock-restart",
    "redlock-clock-jump",
    "redlock-delayed-restart",
    "redlock-pause",
];

/// The Redlock scenarios' common ground: `redlock` on 3 nodes, 2 callers, a 1 s TTL (so a
/// node's timeout is 100 ms), 300 ms of work; B starts 200 ms after A.
fn redlock_scenario(name: &str) -> Scenario {
    let mut scenario = Scenario::new(
        name,
        Safeguard::Redlock {
            nodes: 3,
            cas: false,
        },
    );
    scenario.callers = 2;
    scenario.params.ttl_ms = 1_000;
    scenario.params.work_ms = 300;
    scenario.start_offsets_ms = vec![0, 200];
    scenario
}

/// A cannot reach redis-3 for the first 2 s: it holds the lock on redis-1 and redis-2 only, a
/// bare majority (Kleppmann's "network issues").
fn a_cut_from_node_3() -> Fault {
    Fault::Partition {
        a: Host::Caller(1),
        b: Host::Node(3),
        from_ms: 0,
        until_ms: 2_000,
        one_way: false,
    }
}

/// A fault scenario by name (`failover-fencing [--unfenced]`, `partition-watchdog`, ...).
///
/// - `failover-fencing`: fenced lock (`fence < $2`), 2 callers, 2 s TTL. A takes the lock
///   and token 33, reads 100, and pauses 100 ms. At 20 ms the primary dies before A's lock key
///   and `INCR` replicated (the replica lags 50 ms); the promoted replica hands B the lock and
///   token 33 again. B writes 90 with 33; A wakes and writes with 33 too, which `fence < 33`
///   refuses: the repeated token wins once. With `unfenced`, A's write lands too: BROKEN.
/// - `partition-watchdog`: lease + watchdog, 2 callers, TTL 100 ms, 300 ms of work. A takes
///   the lock; app-1 ↔ redis is cut from 50 ms to 400 ms, so A's refresh times out (TTL/3)
///   and the watchdog gives up: A does not write. B takes the expired lock and spends.
/// - `aof-crash`: `failover-fencing`'s callers and pause, but at 20 ms the machine running
///   Redis crashes and Redis reloads its AOF under `appendfsync everysec`: the last fsync was
///   at 0 ms, so A's lock key and `INCR` are gone and B gets the lock and token 33 again. B
///   writes 90 with 33; A's write with 33 is refused by `fence < 33`: the reissued token wins
///   once. With `unfenced`, both land: BROKEN. With `always` (the CLI's `--appendfsync`)
///   nothing is lost: B waits for A's lock and gets 34.
/// - `evict-fence`: fenced lock, 2 callers one after the other. A spends with token 33; at
///   20 ms an `allkeys-*` policy evicts the fence counter; B gets token 1, and `fence < 1` is
///   false against the stored 33: B's write is refused (an availability cost, not a lost
///   update). Every token up to 33 is refused until the counter passes it.
///
/// - `wait-failover`: `lease-wait` (`WAIT 1 500` after `SET NX PX 2000`), 2 callers, 100 ms of
///   work, B starts at 40 ms. At 20 ms the primary dies before A's lock replicated (lag 50 ms);
///   A's WAIT is cut off, and its client sends it again on a new connection to the promoted
///   replica. That connection wrote nothing, so WAIT waits only for a replica to be online (a
///   replica rejoins the new primary and is resynced at 70 ms) and answers 1: A trusts a lock
///   the new primary never had. B takes the lock, its WAIT is answered 1 at 90 ms, and both
///   spend: BROKEN. WAIT does not make the lock safe.
/// - `wait-replica-restart`: `lease-wait`, 2 callers, 20 ms of work, B starts at 250 ms. A's
///   lock is acknowledged by `WAIT` and its write has replicated when, at 150 ms, the replica
///   restarts without persistence: it is empty until its full resync loads at 200 ms. The
///   primary dies at 180 ms and the empty replica is promoted: the balance is gone and B
///   fails (BROKEN: the money itself is lost). The same failover without the replica's restart
///   (`--no-faults --failover-at 180ms`) loses nothing: OK.
/// - `wait-lag`: the same, with the replica 600 ms behind, more than WAIT's 500 ms: every WAIT
///   answers 0, so A and B give up instead of both spending (the plain lease is BROKEN here,
///   `--safeguard lease`): WAIT turns the lost lock into unavailability, at best.
/// - `redlock-restart`: Redlock on 3 nodes, TTL 1 s, work 300 ms. A cannot reach redis-3, so
///   it holds the lock on redis-1 and redis-2. At 150 ms redis-2 restarts without persistence
///   and forgets A's key; B (from 200 ms) gets redis-2 and redis-3, a majority too. Both read
///   100 and write 90: BROKEN. With `--safeguard redlock-cas` the later write checks the
///   version it read and is refused: OK.
/// - `redlock-clock-jump`: the same, but at 150 ms redis-2's clock jumps +1 s and A's key
///   there expires at once: BROKEN (redlock-cas: OK).
/// - `redlock-delayed-restart`: the same, but redis-2 crashes at 150 ms and comes back (empty)
///   only 1.1 s later, after the TTL, as the Redis page advises. B finds redis-1 busy and
///   redis-2 down until A has released; then it gets redis-1 and redis-3 and spends from
///   A's 90: OK, and the two never hold the lock together.
/// - `redlock-pause`: no network or node fault; A holds all three nodes and pauses 1.5 s
///   after reading, past its validity. The keys expire, B takes the lock and spends; A wakes
///   and writes its stale balance: BROKEN (redlock-cas: OK).
pub fn fault_scenario(name: &str, unfenced: bool) -> Result<Scenario, ParamError> {
    match name {
        "wait-failover" | "wait-lag" => {
            let mut scenario = Scenario::new(name, Safeguard::LeaseWait);
            scenario.callers = 2;
            scenario.params.work_ms = 100;
            scenario.start_offsets_ms = vec![0, 40];
            scenario.faults = vec![Fault::Failover { at_ms: 20 }];
            if name == "wait-lag" {
                scenario.network.replication_lag_ms = 600;
            }
            Ok(scenario)
        }
        "wait-replica-restart" => {
            let mut scenario = Scenario::new(name, Safeguard::LeaseWait);
            scenario.callers = 2;
            scenario.params.work_ms = 20;
            scenario.start_offsets_ms = vec![0, 250];
            scenario.faults = vec![
                Fault::ReplicaRestart { at_ms: 150 },
                Fault::Failover { at_ms: 180 },
            ];
            Ok(scenario)
        }
        "failover-fencing" => {
            let guard = if unfenced {
                WriteGuard::Unfenced
            } else {
                WriteGuard::FenceBelow
            };
            let mut scenario = Scenario::new(name, Safeguard::Fenced { guard });
            scenario.callers = 2;
            scenario.initial_fence_counter = 32;
            scenario.params.work_ms = 0;
            scenario.start_offsets_ms = vec![0, 40];
            scenario.faults = vec![
                Fault::Pause {
                    caller: 1,
                    at: Point::AfterRead,
                    pause_ms: 100,
                },
                Fault::Failover { at_ms: 20 },
            ];
            if unfenced {
                scenario.name = format!("{name} --unfenced");
            }
            Ok(scenario)
        }
        "partition-watchdog" => {
            let mut scenario = Scenario::new(name, Safeguard::LeaseWatchdog);
            scenario.callers = 2;
            scenario.params.ttl_ms = 100;
            scenario.params.work_ms = 300;
            scenario.params.acquire_timeout_ms = Some(10_000);
            scenario.start_offsets_ms = vec![0, 5];
            scenario.faults = vec![Fault::Partition {
                a: Host::Caller(1),
                b: Host::Redis,
                from_ms: 50,
                until_ms: 400,
                one_way: false,
            }];
            Ok(scenario)
        }
        "aof-crash" => {
            let mut scenario = fault_scenario("failover-fencing", unfenced)?;
            scenario.faults = vec![
                Fault::Pause {
                    caller: 1,
                    at: Point::AfterRead,
                    pause_ms: 100,
                },
                Fault::RedisCrashAof {
                    at_ms: 20,
                    appendfsync: Appendfsync::Everysec,
                },
            ];
            scenario.name = if unfenced {
                format!("{name} --unfenced")
            } else {
                name.to_string()
            };
            Ok(scenario)
        }
        "evict-fence" => {
            let guard = if unfenced {
                WriteGuard::Unfenced
            } else {
                WriteGuard::FenceBelow
            };
            let mut scenario = Scenario::new(name, Safeguard::Fenced { guard });
            scenario.callers = 2;
            scenario.initial_fence_counter = 32;
            scenario.params.work_ms = 0;
            scenario.start_offsets_ms = vec![0, 40];
            scenario.faults = vec![Fault::EvictFenceCounter { at_ms: 20 }];
            if unfenced {
                scenario.name = format!("{name} --unfenced");
            }
            Ok(scenario)
        }
        "redlock-restart" => {
            let mut scenario = redlock_scenario(name);
            scenario.faults = vec![
                a_cut_from_node_3(),
                Fault::NodeRestart {
                    node: 2,
                    at_ms: 150,
                    down_ms: 0,
                },
            ];
            Ok(scenario)
        }
        "redlock-clock-jump" => {
            let mut scenario = redlock_scenario(name);
            scenario.faults = vec![
                a_cut_from_node_3(),
                Fault::ClockJump {
                    host: Host::Node(2),
                    at_ms: 150,
                    jump_ms: 1_000,
                },
            ];
            Ok(scenario)
        }
        "redlock-delayed-restart" => {
            let mut scenario = redlock_scenario(name);
            scenario.faults = vec![
                a_cut_from_node_3(),
                Fault::NodeRestart {
                    node: 2,
                    at_ms: 150,
                    down_ms: 1_100,
                },
            ];
            Ok(scenario)
        }
        "redlock-pause" => {
            let mut scenario = redlock_scenario(name);
            scenario.faults = vec![Fault::Pause {
                caller: 1,
                at: Point::AfterRead,
                pause_ms: 1_500,
            }];
            Ok(scenario)
        }
        other => Err(ParamError(format!("unknown fault scenario '{other}'"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::PausePlan;
    use leaselab_model::scenario::Variant;

    #[test]
    fn the_schedule_is_in_time_order_and_pairs_cuts_with_heals() {
        let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
        scenario.faults = vec![
            Fault::Partition {
                a: Host::Caller(1),
                b: Host::Redis,
                from_ms: 10,
                until_ms: 30,
                one_way: true,
            },
            Fault::Failover { at_ms: 20 },
        ];
        let timeline = Timeline::new(5);
        let mut schedule = Schedule::new(&scenario, &timeline);
        assert_eq!(schedule.due(Duration::from_millis(14)), None);
        assert!(matches!(
            schedule.due(Duration::from_millis(15)),
            Some(Action::Cut { one_way: true, .. })
        ));
        assert_eq!(
            schedule.due(Duration::from_millis(40)),
            Some(Action::Failover)
        );
        assert!(matches!(
            schedule.due(Duration::from_millis(40)),
            Some(Action::Heal { .. })
        ));
        assert_eq!(schedule.due(Duration::from_millis(40)), None);
    }

    #[test]
    fn pauses_are_taken_once() {
        let scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
        let mut plan = PausePlan::for_caller(&scenario, 1);
        assert_eq!(plan.take(Point::AfterAcquire), None);
        assert_eq!(plan.take(Point::AfterRead), Some(250));
        assert_eq!(plan.take(Point::AfterRead), None);
        assert_eq!(PausePlan::for_caller(&scenario, 2), PausePlan::default());
    }

    #[test]
    fn impossible_faults_are_refused_with_a_reason() {
        let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
        scenario.faults = vec![Fault::ClockJump {
            host: Host::Caller(1),
            at_ms: 1,
            jump_ms: 10,
        }];
        assert!(validate(&scenario).unwrap_err().0.contains("monotonic"));
        scenario.faults = vec![Fault::Partition {
            a: Host::Caller(1),
            b: Host::Replica,
            from_ms: 1,
            until_ms: 2,
            one_way: false,
        }];
        assert!(validate(&scenario).unwrap_err().0.contains("replication"));
        scenario.faults = vec![Fault::Failover { at_ms: 1 }, Fault::Failover { at_ms: 2 }];
        assert!(validate(&scenario).unwrap_err().0.contains("at most one"));
    }

    #[test]
    fn fault_scenarios_are_valid() {
        for name in FAULT_SCENARIOS {
            let scenario = fault_scenario(name, false).unwrap();
            scenario.validate().unwrap();
            validate(&scenario).unwrap();
        }
    }
}
