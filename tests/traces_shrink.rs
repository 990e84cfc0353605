//! `leaselab shrink`: step 1's 50 callers shrink to a handful that still break the ledger.

use std::path::Path;
use std::process::Command;

use leaselab::trace::{self, shrink};
use leaselab_model::fault::{Fault, Host};
use leaselab_model::safeguard::Point;
use leaselab_model::scenario::{Scenario, Variant};

#[test]
fn step1_shrinks_to_fewer_callers_and_still_breaks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/tutorial");
    let step1 = trace::files(&[dir])
        .unwrap()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("step1-race"))
        .expect("the step 1 trace is shipped");
    let out = std::env::temp_dir().join(format!("leaselab-shrink-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .arg("shrink")
        .arg(&step1)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("before: 50 caller(s)"), "{stdout}");
    let written = trace::files(&[out]).unwrap();
    assert_eq!(written.len(), 1);
    let shrunk = trace::load(&written[0]).unwrap();
    assert!(shrunk.scenario.callers <= 3, "{}", shrunk.scenario.callers);
    assert_eq!(shrunk.ledger.verdict.as_str(), "BROKEN");
    assert!(shrunk.scenario.name.ends_with(" shrunk"));
}

#[test]
fn pauses_and_faults_shrink_too() {
    // Step 5 unfenced with a needless failover far after the end and an extra caller.
    let mut scenario = Scenario::tutorial(
        "step5-fencing",
        Variant {
            unfenced: true,
            ..Variant::default()
        },
    )
    .unwrap();
    scenario.callers = 3;
    scenario.start_offsets_ms = vec![0, 150, 900];
    scenario.faults.push(Fault::Pause {
        caller: 3,
        at: Point::AfterAcquire,
        pause_ms: 40,
    });
    scenario.faults.push(Fault::Partition {
        a: Host::Caller(3),
        b: Host::Postgres,
        from_ms: 2_000,
        until_ms: 3_000,
        one_way: false,
    });
    let shrunk = shrink::shrink(&scenario, 1, |_| {}).unwrap();
    assert!(shrunk.after < shrunk.before);
    assert_eq!(shrunk.after.callers, 2);
    assert_eq!(shrunk.after.faults, 1, "only A's pause is needed");
    assert!(shrunk.after.pause_ms < 250, "{}", shrunk.after);
    assert!(shrunk.report.broken());
}

#[test]
fn a_run_that_does_not_fail_is_not_shrunk() {
    let scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
    let error = shrink::shrink(&scenario, 1, |_| {}).unwrap_err();
    assert!(error.contains("does not fail"), "{error}");
}
