//! The same scenario and seed give the same event log, in this process and in another one.

use std::process::Command;

use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::faults::fault_scenario;
use leaselab_sim::run::run;

/// Every tutorial step (small caller counts where the step allows) and the fault scenarios.
fn scenarios() -> Vec<Scenario> {
    let step = |name: &str, variant: Variant, callers: Option<u32>| {
        let mut scenario = Scenario::tutorial(name, variant).unwrap();
        if let Some(callers) = callers {
            scenario.callers = callers;
        }
        scenario
    };
    let mut step6 = step("step6-verify", Variant::default(), Some(8));
    step6.params.ttl_ms = 1;
    vec![
        step("step1-race", Variant::default(), None),
        step("step2-lock", Variant::default(), Some(6)),
        step("step3-ttl", Variant::default(), Some(3)),
        step(
            "step4-redislock",
            Variant {
                jitter: true,
                ..Variant::default()
            },
            Some(6),
        ),
        step("step5-fencing", Variant::default(), None),
        step6,
        fault_scenario("failover-fencing", false).unwrap(),
        fault_scenario("partition-watchdog", false).unwrap(),
    ]
}

#[test]
fn two_runs_of_a_seed_have_the_same_digest() {
    for scenario in scenarios() {
        let seeds = if scenario.name.starts_with("step") {
            200
        } else {
            50
        };
        let mut digests = std::collections::BTreeSet::new();
        for seed in 0..seeds {
            let first = run(&scenario, seed).unwrap();
            let second = run(&scenario, seed).unwrap();
            assert_eq!(
                first.digest(),
                second.digest(),
                "{} seed {seed} replayed differently",
                scenario.name
            );
            assert_eq!(first.events, second.events);
            digests.insert(first.digest().to_string());
        }
        // The seed matters: runs differ (at least their tokens do).
        assert!(digests.len() as u64 == seeds, "{}", scenario.name);
    }
}

const CHILD: &str = "LEASELAB_DIGEST_CHILD";

fn digests() -> String {
    let mut text = String::new();
    for scenario in scenarios() {
        for seed in [1, 7, 42] {
            let report = run(&scenario, seed).unwrap();
            text.push_str(&format!("{} {seed} {}\n", scenario.name, report.digest()));
        }
    }
    text
}

/// In the child process: print the digests between markers.
#[test]
fn digest_child() {
    if std::env::var_os(CHILD).is_some() {
        println!("BEGIN\n{}END", digests());
    }
}

#[test]
fn another_process_replays_the_same_digests() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "digest_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs");
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let begin = stdout.find("BEGIN\n").expect("the child printed digests") + 6;
    let end = stdout.find("END").unwrap();
    assert_eq!(&stdout[begin..end], digests());
}
