//! The durability faults end as explained in `leaselab_sim::faults`: a machine crash that
//! reloads Redis from its append-only file under each `appendfsync`, and an `allkeys-*`
//! eviction of the fence counter.

use leaselab_model::fault::Fault;
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::Point;
use leaselab_sim::events::What;
use leaselab_sim::faults::fault_scenario;
use leaselab_sim::run::{run, validate};

/// `aof-crash` with the crash's `appendfsync` replaced.
fn aof_crash(appendfsync: Appendfsync, unfenced: bool) -> leaselab_model::scenario::Scenario {
    let mut scenario = fault_scenario("aof-crash", unfenced).unwrap();
    for fault in &mut scenario.faults {
        if let Fault::RedisCrashAof {
            appendfsync: mode, ..
        } = fault
        {
            *mode = appendfsync;
        }
    }
    scenario
}

/// The lost changes the crash event reports.
fn lost_in_crash(events: &[leaselab_sim::events::Event]) -> Vec<String> {
    events
        .iter()
        .find_map(|e| match &e.what {
            What::RedisCrashAof { lost, .. } => Some(lost.clone()),
            _ => None,
        })
        .expect("a crash event")
}

#[test]
fn everysec_loses_the_last_second_and_reissues_a_token_that_wins_once() {
    let scenario = aof_crash(Appendfsync::Everysec, false);
    for seed in 1..=10 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(report.tokens_issued, vec![33, 33], "seed {seed}");
        assert_eq!(report.tokens_reissued, 1);
        assert_eq!(report.ledger.line(), "accepted=1 balance=90 expected=90 OK");
        assert_eq!(report.ledger.rejected, 1);
        assert_eq!(report.final_fence, Some(33));
        let lost = lost_in_crash(&report.events);
        assert!(lost.iter().any(|e| e.starts_with("SET fence:")), "{lost:?}");
        assert!(lost.iter().any(|e| e.starts_with("SET lock:")), "{lost:?}");
    }
    let unfenced = aof_crash(Appendfsync::Everysec, true);
    for seed in 1..=10 {
        let report = run(&unfenced, seed).unwrap();
        assert_eq!(report.tokens_reissued, 1, "seed {seed}");
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=90 expected=80 BROKEN"
        );
    }
}

#[test]
fn appendfsync_no_loses_as_much_as_everysec_here() {
    let report = run(&aof_crash(Appendfsync::No, true), 1).unwrap();
    assert_eq!(report.tokens_issued, vec![33, 33]);
    assert_eq!(report.ledger.verdict.as_str(), "BROKEN");
}

#[test]
fn always_loses_nothing_so_the_second_caller_waits_for_the_lock() {
    for unfenced in [false, true] {
        let report = run(&aof_crash(Appendfsync::Always, unfenced), 1).unwrap();
        assert!(lost_in_crash(&report.events).is_empty());
        assert_eq!(report.tokens_issued, vec![33, 34], "unfenced {unfenced}");
        assert_eq!(report.tokens_reissued, 0);
        assert_eq!(report.ledger.line(), "accepted=2 balance=80 expected=80 OK");
    }
}

#[test]
fn everysec_keeps_what_an_fsync_wrote_before_the_crash() {
    // A acquires at 0 and pauses 1.1 s; the fsync at 1 s writes its lock key and INCR, the
    // crash at 1.02 s loses nothing of them: B (from 1.04 s) waits and gets 34.
    let mut scenario = aof_crash(Appendfsync::Everysec, true);
    scenario.start_offsets_ms = vec![0, 1_040];
    scenario.faults = vec![
        Fault::Pause {
            caller: 1,
            at: Point::AfterRead,
            pause_ms: 1_100,
        },
        Fault::RedisCrashAof {
            at_ms: 1_020,
            appendfsync: Appendfsync::Everysec,
        },
    ];
    let report = run(&scenario, 1).unwrap();
    assert_eq!(report.tokens_issued, vec![33, 34]);
    assert_eq!(report.ledger.verdict.as_str(), "OK");
}

#[test]
fn an_evicted_fence_counter_restarts_at_1_and_the_database_refuses_those_tokens() {
    let scenario = fault_scenario("evict-fence", false).unwrap();
    for seed in 1..=5 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(report.tokens_issued, vec![33, 1], "seed {seed}");
        assert_eq!(report.ledger.line(), "accepted=1 balance=90 expected=90 OK");
        assert_eq!(report.ledger.rejected, 1);
        assert_eq!(report.final_fence, Some(33));
        assert_eq!(report.fence_counter, Some(1));
        let evicted = report.events.iter().find_map(|e| match &e.what {
            What::Evicted { key, value } => Some((key.clone(), value.clone())),
            _ => None,
        });
        assert_eq!(
            evicted,
            Some(("fence:{wallet:42}".to_string(), Some("33".to_string())))
        );
    }
    // Without the check the small token writes: no lost update here (the callers do not
    // overlap), but nothing orders the writes any more.
    let unfenced = fault_scenario("evict-fence", true).unwrap();
    let report = run(&unfenced, 1).unwrap();
    assert_eq!(report.ledger.line(), "accepted=2 balance=80 expected=80 OK");
    assert_eq!(report.final_fence, Some(1));
}

#[test]
fn a_run_has_one_append_only_file() {
    let mut scenario = aof_crash(Appendfsync::Everysec, false);
    scenario.faults.push(Fault::RedisCrashAof {
        at_ms: 50,
        appendfsync: Appendfsync::Always,
    });
    assert!(validate(&scenario)
        .unwrap_err()
        .0
        .contains("same appendfsync"));
    let mut scenario = aof_crash(Appendfsync::Everysec, false);
    scenario.faults.push(Fault::Failover { at_ms: 50 });
    assert!(validate(&scenario).unwrap_err().0.contains("not modelled"));
}
