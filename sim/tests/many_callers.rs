//! More callers than turmoil's default TCP backlog (64): every caller connects, runs and ends.

use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::run::run;

#[test]
fn a_hundred_callers_all_connect_and_finish() {
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    scenario.callers = 100;
    let report = run(&scenario, 1).unwrap();
    assert!(report.finished, "every caller ends before the horizon");
    assert_eq!(report.callers.len(), 100);
    let ended = report
        .callers
        .iter()
        .filter(|caller| caller.outcome.is_some())
        .count();
    assert_eq!(ended, 100, "every caller has an outcome");
    assert!(
        !report.broken(),
        "the lock keeps the ledger: {:?}",
        report.ledger
    );
    // The same seed gives the same run with this many hosts too.
    assert_eq!(run(&scenario, 1).unwrap().digest(), report.digest());
}
