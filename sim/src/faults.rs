//! Faults in a simulated run: what the simulation checks and schedules, and the fault
//! scenarios beyond the tutorial.
//!
//! - **GC pause** ([`Fault::Pause`]): the caller freezes the first time its machine reaches
//!   the point; nothing of it runs meanwhile (the machine, watchdog included, is its only
//!   activity), and its lease keeps ageing on the server. See [`crate::driver::PausePlan`].
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
//!
//! Fault times count from the callers' release.
//!
//! [`Network::replication_lag_ms`]: leaselab_model::scenario::Network

use std::time::Duration;

use leaselab_model::fault::{Fault, Host};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::{ParamError, Point, Safeguard};
use leaselab_model::scenario::Scenario;

use crate::clock::{Jump, ServerClock, Timeline};

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
    /// Crash the machine and restart Redis from its AOF.
    RedisCrashAof,
    /// Evict the fence counter.
    EvictFenceCounter,
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
                Fault::Pause { .. } => {}
                Fault::Failover { at_ms } => {
                    actions.push((timeline.at_ms(*at_ms), Action::Failover))
                }
                Fault::RedisRestart { at_ms } => {
                    actions.push((timeline.at_ms(*at_ms), Action::RedisRestart))
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

    /// True when a replica is needed (a failover, or a replication-link partition).
    pub fn needs_replica(scenario: &Scenario) -> bool {
        scenario.faults.iter().any(|fault| match fault {
            Fault::Failover { .. } => true,
            Fault::Partition { a, b, .. } => *a == Host::Replica || *b == Host::Replica,
            Fault::ClockJump { host, .. } => *host == Host::Replica,
            _ => false,
        })
    }
}

/// The wall clocks of the primary and of the replica, with the scenario's jumps.
pub fn server_clocks(scenario: &Scenario, timeline: &Timeline) -> (ServerClock, ServerClock) {
    let mut primary = ServerClock::new(*timeline);
    let mut replica = ServerClock::new(*timeline);
    for fault in &scenario.faults {
        if let Fault::ClockJump {
            host,
            at_ms,
            jump_ms,
        } = fault
        {
            let jump = Jump {
                at: timeline.at_ms(*at_ms),
                by_ms: *jump_ms,
            };
            match host {
                Host::Redis => primary.add_jump(jump),
                Host::Replica => replica.add_jump(jump),
                _ => {}
            }
        }
    }
    (primary, replica)
}

/// Checks what the simulation needs beyond [`Scenario::validate`]: faults it can carry out.
pub fn validate(scenario: &Scenario) -> Result<(), ParamError> {
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
            Fault::ClockJump { host, .. } if !matches!(host, Host::Redis | Host::Replica) => {
                return Err(ParamError(format!(
                    "{}: only the Redis servers' clocks matter (callers use monotonic time, \
                     PostgreSQL's clock is not used); jump redis or redis-replica",
                    fault.describe()
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The fault scenarios beyond the tutorial, by name.
pub const FAULT_SCENARIOS: [&str; 4] = [
    "failover-fencing",
    "partition-watchdog",
    "aof-crash",
    "evict-fence",
];

/// A fault scenario by name (`failover-fencing [--unfenced]`, `partition-watchdog`).
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
pub fn fault_scenario(name: &str, unfenced: bool) -> Result<Scenario, ParamError> {
    match name {
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
