//! The simulation's "only the holder changes the lock", from the Redis server's report of
//! each command: `setnx-expire`'s plain `DEL` release, run after its lease expired and the
//! next caller took the lock, deletes that caller's lock; the lease's compare-and-delete
//! release is refused instead.

use leaselab_model::fault::Fault;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{Point, Safeguard};
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::run::run;

/// Two callers, a 100 ms lease, 50 ms of work; A pauses 120 ms before its release (its lease
/// runs out at 100 ms), B starts at 150 ms and holds the lock until about 200 ms.
fn paused_before_release(safeguard: Safeguard) -> Scenario {
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    scenario.safeguard = safeguard;
    scenario.callers = 2;
    scenario.params.ttl_ms = 100;
    scenario.params.work_ms = 50;
    scenario.start_offsets_ms = vec![0, 150];
    scenario.faults = vec![Fault::Pause {
        caller: 1,
        at: Point::BeforeRelease,
        pause_ms: 120,
    }];
    scenario
}

#[test]
fn a_plain_del_release_deletes_the_next_holders_lock() {
    for seed in 1..=5 {
        let report = run(&paused_before_release(Safeguard::SetnxExpire), seed).unwrap();
        assert_eq!(report.trespasses.len(), 1, "seed {seed}");
        let trespass = &report.trespasses[0];
        assert_eq!(
            (trespass.by.as_str(), trespass.holder.as_str()),
            ("app-1", "app-2")
        );
        assert!(trespass.deleted);
        assert!(
            trespass
                .describe()
                .starts_with("app-1 deleted the lock of app-2 at "),
            "{}",
            trespass.describe()
        );
    }
}

#[test]
fn a_token_checked_release_changes_only_its_own_lock() {
    let lease = Safeguard::Lease {
        release: ReleaseVia::Script,
    };
    for seed in 1..=5 {
        let report = run(&paused_before_release(lease), seed).unwrap();
        assert!(
            report.trespasses.is_empty(),
            "seed {seed}: {:?}",
            report.trespasses
        );
        // The stale release was refused: the check above had something to look at.
        assert_eq!(report.callers[0].stats.stale_releases_refused, 1);
    }
}
