//! The failover and partition scenarios end as explained in `leaselab_sim::faults`.

use leaselab_model::fault::{Fault, Host};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::redis::Reply;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{Outcome, Reading, Safeguard};
use leaselab_model::scenario::{Scenario, Timing, Variant};
use leaselab_sim::events::What;
use leaselab_sim::faults::fault_scenario;
use leaselab_sim::run::run;

#[test]
fn a_failover_reissues_a_fencing_token_and_the_strict_check_lets_it_win_once() {
    let scenario = fault_scenario("failover-fencing", false).unwrap();
    for seed in 1..=20 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(report.tokens_issued, vec![33, 33], "seed {seed}");
        assert_eq!(report.tokens_reissued, 1);
        assert_eq!(report.ledger.line(), "accepted=1 balance=90 expected=90 OK");
        assert_eq!(report.ledger.rejected, 1);
        assert_eq!(report.final_fence, Some(33));
        let lost = report.events.iter().find_map(|e| match &e.what {
            What::Failover { lost, .. } => Some(lost.clone()),
            _ => None,
        });
        let lost = lost.expect("a failover event");
        assert!(lost.iter().any(|e| e.starts_with("SET fence:")), "{lost:?}");
        assert!(lost.iter().any(|e| e.starts_with("SET lock:")), "{lost:?}");
    }
    let unfenced = fault_scenario("failover-fencing", true).unwrap();
    for seed in 1..=20 {
        let report = run(&unfenced, seed).unwrap();
        assert_eq!(report.tokens_reissued, 1);
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=90 expected=80 BROKEN"
        );
    }
}

#[test]
fn a_failover_after_replication_loses_nothing() {
    let mut scenario = fault_scenario("failover-fencing", false).unwrap();
    scenario.network.replication_lag_ms = 5;
    let report = run(&scenario, 1).unwrap();
    assert_eq!(report.tokens_issued, vec![33, 34]);
    assert_eq!(report.tokens_reissued, 0);
}

#[test]
fn a_partitioned_holder_loses_its_lease_and_does_not_write() {
    let scenario = fault_scenario("partition-watchdog", false).unwrap();
    for seed in 1..=20 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(report.ledger.line(), "accepted=1 balance=90 expected=90 OK");
        assert_eq!(
            report.callers[0].outcome,
            Some(Outcome::LostLock),
            "seed {seed}"
        );
        assert!(report
            .events
            .iter()
            .any(|e| e.host == "app-1" && matches!(e.what, What::RedisTimeout { .. })));
    }
}

#[test]
fn a_one_way_partition_loses_replies_but_the_server_still_acts() {
    // Replies from redis to app-1 are lost from 50 ms: app-1's refresh runs on the server
    // (its lease is extended) but app-1 times out and gives up the work.
    let mut scenario = fault_scenario("partition-watchdog", false).unwrap();
    scenario.faults = vec![Fault::Partition {
        a: Host::Redis,
        b: Host::Caller(1),
        from_ms: 50,
        until_ms: 400,
        one_way: true,
    }];
    let report = run(&scenario, 3).unwrap();
    assert_eq!(report.callers[0].outcome, Some(Outcome::LostLock));
    let refreshed_on_server = report.events.iter().any(|e| {
        e.t_us > 50_000
            && matches!(&e.what, What::RedisExecuted { client: Some(c), reply, .. }
                if c == "app-1" && *reply == Reply::Integer(1))
    });
    assert!(refreshed_on_server, "the lost reply's command still ran");
    assert_eq!(report.ledger.verdict.as_str(), "OK");
}

#[test]
fn a_clock_jump_on_redis_expires_the_lease_at_once() {
    // A forward jump of 1 s on Redis while the holder works: the 2 s lease of step 2 is gone
    // early and a second holder comes in, but each caller reads after the other's write.
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    scenario.callers = 2;
    scenario.params.work_ms = 50;
    scenario.params.ttl_ms = 500;
    scenario.faults = vec![Fault::ClockJump {
        host: Host::Redis,
        at_ms: 20,
        jump_ms: 1_000,
    }];
    let report = run(&scenario, 1).unwrap();
    let expired = report
        .events
        .iter()
        .find(|e| matches!(e.what, What::LeaseExpired { .. }))
        .expect("the lease expires at the jump");
    assert_eq!(expired.t_us, 20_000);
    assert_eq!(report.ledger.verdict.as_str(), "BROKEN");
}

/// The matrix's clock column: A holds a 2 s lease and works 100 ms, B starts at 40 ms, and
/// Redis's clock is corrected by +3 s at 20 ms: stepped, or slewed at `rate_ppm` (0: stepped).
fn clock_corrected(safeguard: Safeguard, rate_ppm: u64) -> Scenario {
    let mut scenario = Scenario::new("clock", safeguard);
    scenario.callers = 2;
    scenario.params.work_ms = 100;
    scenario.start_offsets_ms = vec![0, 40];
    scenario.faults = vec![if rate_ppm == 0 {
        Fault::ClockJump {
            host: Host::Redis,
            at_ms: 20,
            jump_ms: 3_000,
        }
    } else {
        Fault::ClockSlew {
            host: Host::Redis,
            at_ms: 20,
            offset_ms: 3_000,
            rate_ppm,
        }
    }];
    scenario
}

#[test]
fn a_slewed_clock_keeps_the_lease_that_the_same_step_breaks() {
    for safeguard in [
        Safeguard::LeaseWatchdog,
        Safeguard::Lease {
            release: ReleaseVia::Script,
        },
    ] {
        for seed in 1..=5 {
            let stepped = run(&clock_corrected(safeguard, 0), seed).unwrap();
            assert_eq!(
                stepped.ledger.line(),
                "accepted=2 balance=90 expected=80 BROKEN",
                "{} stepped, seed {seed}",
                safeguard.name()
            );
            // ntpd's 500 ppm: 0.05 ms gained over the 100 ms of work.
            let slewed = run(&clock_corrected(safeguard, 500), seed).unwrap();
            assert_eq!(
                slewed.ledger.line(),
                "accepted=2 balance=80 expected=80 OK",
                "{} slewed, seed {seed}",
                safeguard.name()
            );
            assert!(!slewed
                .events
                .iter()
                .any(|e| matches!(e.what, What::LeaseExpired { .. })));
        }
    }
    // fenced too: the step hands B the lock and token 2 while A works with 1; A writes
    // first, so `fence < 2` lets B's write from the same read land after it (step 6's
    // overlap). Slewed, B waits for A.
    let fenced = |rate_ppm| {
        clock_corrected(
            Safeguard::Fenced {
                guard: WriteGuard::FenceBelow,
            },
            rate_ppm,
        )
    };
    let stepped = run(&fenced(0), 1).unwrap();
    assert_eq!(
        stepped.ledger.line(),
        "accepted=2 balance=90 expected=80 BROKEN"
    );
    assert_eq!(stepped.tokens_issued, vec![1, 2]);
    let slewed = run(&fenced(500), 1).unwrap();
    assert_eq!(slewed.ledger.line(), "accepted=2 balance=80 expected=80 OK");
}

#[test]
fn a_fast_clock_expires_a_tight_lease_early_and_the_watchdog_outlasts_it() {
    // 1980 ms of work under a 2 s lease; B keeps trying. At +2 % Redis counts the 2 s by
    // 1961 ms of real time, while A still works: B gets in, both spend.
    let tight = |safeguard: Safeguard, rate_ppm: i64| {
        let mut scenario = Scenario::new("drift", safeguard);
        scenario.callers = 2;
        scenario.params.work_ms = 1_980;
        scenario.params.acquire_timeout_ms = Some(10_000);
        scenario.start_offsets_ms = vec![0, 10];
        scenario.faults = vec![Fault::ClockDrift {
            host: Host::Redis,
            rate_ppm,
        }];
        scenario
    };
    let lease = Safeguard::Lease {
        release: ReleaseVia::Script,
    };
    let true_clock = run(&tight(lease, 0), 1).unwrap();
    assert_eq!(true_clock.ledger.verdict.as_str(), "OK");
    let fast = run(&tight(lease, 20_000), 1).unwrap();
    assert_eq!(fast.ledger.verdict.as_str(), "BROKEN");
    let expired = fast
        .events
        .iter()
        .find(|e| matches!(e.what, What::LeaseExpired { .. }))
        .expect("the lease expires early");
    assert!(
        (1_955_000..=1_965_000).contains(&expired.t_us),
        "expired at {} us",
        expired.t_us
    );
    // The watchdog refreshes every TTL/3 (667 ms): 2 % is nothing to it.
    let watched = run(&tight(Safeguard::LeaseWatchdog, 20_000), 1).unwrap();
    assert_eq!(
        watched.ledger.line(),
        "accepted=2 balance=80 expected=80 OK"
    );
}

#[test]
fn wait_after_a_failover_is_answered_for_a_connection_that_wrote_nothing() {
    let scenario = fault_scenario("wait-failover", false).unwrap();
    for seed in 1..=10 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=90 expected=80 BROKEN",
            "seed {seed}"
        );
        // Both callers were told a replica had their lock.
        let waits: Vec<i64> = report
            .events
            .iter()
            .filter_map(|e| match &e.what {
                What::RedisReply {
                    reading: Some(Reading::Replicated { replicas }),
                    ..
                } => Some(*replicas),
                _ => None,
            })
            .collect();
        assert_eq!(waits, vec![1, 1], "seed {seed}");
    }
}

#[test]
fn wait_with_a_lagging_replica_gives_up_where_the_plain_lease_spends_twice() {
    // On both timings: the rejoined replica's 600 ms lag is run time (on the 100 µs tick it
    // once lasted 600 steps, 60 ms, and both WAITs were answered).
    for name in Timing::NAMES {
        let mut scenario = fault_scenario("wait-lag", false).unwrap();
        Timing::named(name).unwrap().apply(&mut scenario);
        for seed in 1..=10 {
            let report = run(&scenario, seed).unwrap();
            assert_eq!(
                report.ledger.line(),
                "accepted=0 balance=100 expected=100 OK",
                "{name} seed {seed}"
            );
            assert_eq!(report.ledger.gave_up, 2, "{name} seed {seed}");
        }
        let mut lease = scenario.clone();
        lease.safeguard = Safeguard::Lease {
            release: ReleaseVia::Script,
        };
        let report = run(&lease, 1).unwrap();
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=90 expected=80 BROKEN",
            "{name}"
        );
    }
}

#[test]
fn a_failover_after_wait_answered_keeps_the_lock() {
    // The failover at 300 ms comes after each WAIT saw its caller's lock on the replica (A's
    // at 51 ms, B's after A released) and after A's balance write replicated.
    let mut scenario = fault_scenario("wait-failover", false).unwrap();
    scenario.faults = vec![Fault::Failover { at_ms: 300 }];
    for seed in 1..=5 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(report.ledger.verdict.as_str(), "OK", "seed {seed}");
        assert_eq!(report.ledger.accepted, 2, "seed {seed}");
    }
}

#[test]
fn a_restart_without_persistence_loses_the_balance_key() {
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    scenario.callers = 3;
    scenario.faults = vec![Fault::RedisRestart { at_ms: 3 }];
    let report = run(&scenario, 1).unwrap();
    assert!(report
        .events
        .iter()
        .any(|e| matches!(e.what, What::RedisRestart)));
    assert!(report.finished);
}

#[test]
fn a_run_stopped_at_its_horizon_counts_the_unfinished_callers_as_failed() {
    use leaselab_sim::run::{run_with, SimConfig};
    let scenario = Scenario::tutorial("step3-ttl", Variant::default()).unwrap();
    let config = SimConfig {
        horizon_ms: 50,
        ..SimConfig::default()
    };
    let report = run_with(&scenario, 1, &config).unwrap();
    assert!(!report.finished);
    assert_eq!(report.elapsed_ms, 50);
    assert_eq!(report.ledger.failed, 5);
    assert!(report
        .events
        .iter()
        .any(|e| matches!(e.what, What::Horizon { unfinished: 5 })));
}

#[test]
fn the_report_serialises_with_self_describing_events() {
    let scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
    let report = run(&scenario, 1).unwrap();
    let json = report.to_json();
    assert_eq!(json["line"], "accepted=1 balance=90 expected=90 OK");
    assert_eq!(json["scenario"]["safeguard"], "fenced");
    assert_eq!(json["final_fence"], 34);
    assert_eq!(json["callers"][0]["outcome"], "write-rejected");
    let events = json["events"].as_array().unwrap();
    assert_eq!(events.len(), report.events.len());
    assert!(events
        .iter()
        .all(|e| e["event"].is_string() && e["host"].is_string() && e["t_us"].is_i64()));
    assert!(events
        .iter()
        .any(|e| e["event"] == "pause-start" && e["point"] == "after-read" && e["ms"] == 250));
    assert!(events.iter().any(|e| e["event"] == "lease-expired"));
}

/// Runs a Redlock preset with `redlock` and `redlock-cas` on seeds 1..=`seeds`: each run's
/// ledger line.
fn redlock_lines(preset: &str, cas: bool, seeds: u64) -> Vec<String> {
    let mut scenario = fault_scenario(preset, false).unwrap();
    scenario.safeguard = leaselab_model::safeguard::Safeguard::Redlock { nodes: 3, cas };
    (1..=seeds)
        .map(|seed| {
            let report = run(&scenario, seed).unwrap();
            assert!(report.finished, "{preset} seed {seed}: {}", report.line());
            report.ledger.line()
        })
        .collect()
}

/// Who each node granted the lock to, in order, from the nodes' own reports.
fn node_grants(report: &leaselab_sim::run::RunReport) -> Vec<(String, String)> {
    report
        .events
        .iter()
        .filter_map(|e| match &e.what {
            What::RedisExecuted {
                client: Some(client),
                argv,
                reply: Reply::Status(ok),
                ..
            } if e.host.starts_with("redis-") && argv[0] == "SET" && ok == "OK" => {
                Some((e.host.clone(), client.clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_redlock_node_restarted_without_persistence_hands_the_lock_out_twice() {
    let scenario = fault_scenario("redlock-restart", false).unwrap();
    let report = run(&scenario, 1).unwrap();
    // A holds redis-1 and redis-2 (redis-3 is cut off from it); redis-2 forgets A's key and
    // grants B, and so does redis-3: two majorities.
    assert_eq!(
        node_grants(&report),
        [
            ("redis-1", "app-1"),
            ("redis-2", "app-1"),
            ("redis-2", "app-2"),
            ("redis-3", "app-2"),
        ]
        .map(|(node, caller)| (node.to_string(), caller.to_string()))
    );
    assert!(report.events.iter().any(|e| e.what
        == What::NodeRestart {
            node: 2,
            down_ms: 0
        }));
    for line in redlock_lines("redlock-restart", false, 5) {
        assert_eq!(line, "accepted=2 balance=90 expected=80 BROKEN");
    }
    for line in redlock_lines("redlock-restart", true, 5) {
        assert_eq!(line, "accepted=1 balance=90 expected=90 OK");
    }
}

#[test]
fn a_redlock_node_clock_jump_expires_the_key_and_hands_the_lock_out_twice() {
    for line in redlock_lines("redlock-clock-jump", false, 5) {
        assert_eq!(line, "accepted=2 balance=90 expected=80 BROKEN");
    }
    for line in redlock_lines("redlock-clock-jump", true, 5) {
        assert_eq!(line, "accepted=1 balance=90 expected=90 OK");
    }
}

#[test]
fn a_delayed_node_restart_keeps_the_lock_exclusive() {
    let scenario = fault_scenario("redlock-delayed-restart", false).unwrap();
    for seed in 1..=5 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=80 expected=80 OK",
            "seed {seed}"
        );
        // B gets no majority while A holds: only after A has written and begun to release.
        let released_at = report
            .events
            .iter()
            .find(|e| {
                e.host == "app-1"
                    && e.what
                        == What::Reached {
                            point: leaselab_model::safeguard::Point::BeforeRelease,
                        }
            })
            .map(|e| e.t_us)
            .expect("A releases");
        let b_holds_at = report
            .events
            .iter()
            .find(|e| {
                e.host == "app-2"
                    && matches!(
                        &e.what,
                        What::RedisReply {
                            reading: Some(leaselab_model::safeguard::Reading::NodeGranted {
                                votes: 2,
                                ..
                            }),
                            ..
                        }
                    )
            })
            .map(|e| e.t_us)
            .expect("B gets a majority");
        assert!(b_holds_at > released_at, "seed {seed}");
    }
}

#[test]
fn a_redlock_holder_paused_past_its_validity_writes_without_the_lock() {
    for line in redlock_lines("redlock-pause", false, 3) {
        assert_eq!(line, "accepted=2 balance=90 expected=80 BROKEN");
    }
    for line in redlock_lines("redlock-pause", true, 3) {
        assert_eq!(line, "accepted=1 balance=90 expected=90 OK");
    }
}

#[test]
fn node_faults_are_refused_where_there_are_no_nodes_and_single_redis_faults_under_redlock() {
    let mut lease = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    lease.faults = vec![Fault::NodeRestart {
        node: 1,
        at_ms: 1,
        down_ms: 0,
    }];
    let error = leaselab_sim::run::validate(&lease).unwrap_err().0;
    assert!(error.contains("use --safeguard redlock"), "{error}");
    let mut redlock = fault_scenario("redlock-restart", false).unwrap();
    redlock.faults.push(Fault::NodeRestart {
        node: 4,
        at_ms: 1,
        down_ms: 0,
    });
    let error = leaselab_sim::run::validate(&redlock).unwrap_err().0;
    assert!(error.contains("redis-1 to redis-3"), "{error}");
    let mut redlock = fault_scenario("redlock-restart", false).unwrap();
    redlock.faults.push(Fault::RedisRestart { at_ms: 1 });
    let error = leaselab_sim::run::validate(&redlock).unwrap_err().0;
    assert!(error.contains("no single Redis"), "{error}");
    redlock.faults.pop();
    redlock.faults.push(Fault::Partition {
        a: Host::Caller(1),
        b: Host::Redis,
        from_ms: 1,
        until_ms: 2,
        one_way: false,
    });
    assert!(leaselab_sim::run::validate(&redlock).is_err());
}

/// `wait-replica-restart`: WAIT saw A's lock on the replica and A's write replicated too, then
/// the replica restarts without persistence and is promoted before its full resync loaded:
/// the money itself is gone (B finds no balance). The same failover without the replica's
/// restart loses nothing.
#[test]
fn wait_a_replica_that_acknowledged_then_restarted_loses_the_data_on_a_failover() {
    let scenario = fault_scenario("wait-replica-restart", false).unwrap();
    for seed in 1..=5 {
        let report = run(&scenario, seed).unwrap();
        assert!(report.broken(), "seed {seed}: {}", report.ledger.line());
        assert!(report.balance_missing, "seed {seed}: the balance is gone");
        assert_eq!(report.ledger.accepted, 1);
        let acked = report.events.iter().any(|e| {
            matches!(
                &e.what,
                What::RedisReply {
                    reading: Some(Reading::Replicated { replicas: 1 }),
                    ..
                }
            )
        });
        assert!(acked, "seed {seed}: WAIT acknowledged A's lock");
        let lost = report.events.iter().find_map(|e| match &e.what {
            What::Failover { lost, .. } => Some(lost.clone()),
            _ => None,
        });
        let lost = lost.expect("a failover");
        assert!(lost[0].contains("full resync"), "{lost:?}");
    }
    let mut calm = scenario.clone();
    calm.faults
        .retain(|f| !matches!(f, Fault::ReplicaRestart { .. }));
    for seed in 1..=5 {
        let report = run(&calm, seed).unwrap();
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=80 expected=80 OK",
            "seed {seed}"
        );
    }
}
