//! The canonical failures `traces/` ships with, and how they were made.
//!
//! `cargo test --test traces_canonical -- --ignored` regenerates them (after a deliberate
//! change of the simulation's behaviour); the normal test checks that each is there.

use std::path::{Path, PathBuf};

use leaselab::trace::format::Origin;
use leaselab::trace::{self, save_trace};
use leaselab_model::checker::bfs::Counters;
use leaselab_model::checker::{run, CheckConfig, LeaseModel, RunOptions, LEDGER};
use leaselab_model::fault::{Fault, Host};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{Point, Safeguard};
use leaselab_model::scenario::{Scenario, Variant};

fn traces_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

/// A partition of the replication link hides A's lock from the replica; the failover then
/// promotes a replica without it, B takes the lock too, and both spend from 100.
fn partition_failover() -> Scenario {
    let mut scenario = Scenario::new(
        "partition-failover-lease",
        Safeguard::Lease {
            release: ReleaseVia::Script,
        },
    );
    scenario.callers = 2;
    scenario.start_offsets_ms = vec![0, 250];
    scenario.faults = vec![
        Fault::Partition {
            a: Host::Redis,
            b: Host::Replica,
            from_ms: 0,
            until_ms: 1_000,
            one_way: false,
        },
        Fault::Pause {
            caller: 1,
            at: Point::AfterRead,
            pause_ms: 400,
        },
        Fault::Failover { at_ms: 200 },
    ];
    scenario
}

/// The simulated canonical failures: (directory, scenario, seed).
fn simulated() -> Vec<(&'static str, Scenario, u64)> {
    let tutorial = |step, variant| Scenario::tutorial(step, variant).expect("a tutorial step");
    let mut step6 = tutorial("step6-verify", Variant::default());
    step6.params.ttl_ms = 1;
    step6.name = "step6-verify --ttl 1ms".into();
    let mut failover = tutorial(
        "step5-fencing",
        Variant {
            unfenced: true,
            ..Variant::default()
        },
    );
    // The driver's failover-fencing --unfenced: A takes token 33 and pauses; the primary dies
    // before the lock and the INCR replicate; B gets token 33 again; both writes land.
    failover.name = "failover-fencing --unfenced".into();
    failover.params.ttl_ms = 2_000;
    failover.start_offsets_ms = vec![0, 40];
    failover.faults = vec![
        Fault::Pause {
            caller: 1,
            at: Point::AfterRead,
            pause_ms: 100,
        },
        Fault::Failover { at_ms: 20 },
    ];
    vec![
        ("tutorial", tutorial("step1-race", Variant::default()), 1),
        ("tutorial", tutorial("step3-ttl", Variant::default()), 1),
        (
            "tutorial",
            tutorial(
                "step5-fencing",
                Variant {
                    unfenced: true,
                    ..Variant::default()
                },
            ),
            1,
        ),
        ("tutorial", step6, 1),
        ("faults", failover, 1),
        ("faults", partition_failover(), 1),
    ]
}

/// The model counterexamples: the check behind steps 5 and 6.
fn model_checks() -> Vec<CheckConfig> {
    [WriteGuard::Unfenced, WriteGuard::FenceBelow]
        .into_iter()
        .map(|guard| CheckConfig {
            ttl_ms: 1,
            work_ms: 0,
            ..CheckConfig::new(Safeguard::Fenced { guard })
        })
        .collect()
}

fn shipped() -> Vec<trace::Trace> {
    trace::files(&[traces_dir()])
        .expect("traces/ is readable")
        .iter()
        .map(|path| trace::load(path).expect("shipped traces load"))
        .collect()
}

#[test]
fn every_canonical_failure_is_shipped() {
    let shipped = shipped();
    for (_, scenario, seed) in simulated() {
        assert!(
            shipped
                .iter()
                .any(|t| t.scenario == scenario && t.file.seed == seed),
            "traces/ has no trace of '{}' with seed {seed}; run `cargo test --test traces_canonical -- --ignored`",
            scenario.name
        );
    }
    for config in model_checks() {
        assert!(
            shipped
                .iter()
                .any(|t| t.model.as_ref().is_some_and(|m| m.config == config)),
            "traces/ has no model counterexample of {}",
            config.safeguard.name()
        );
    }
}

#[test]
#[ignore = "regenerates traces/; run on purpose"]
fn regenerate_canonical_traces() {
    let root = traces_dir();
    for (dir, scenario, seed) in simulated() {
        let report = leaselab_sim::run::run(&scenario, seed).expect("canonical scenarios run");
        assert!(report.broken(), "{} no longer fails", scenario.name);
        remove_old(&root.join(dir), &scenario.name);
        let path = save_trace(&report, &root.join(dir)).expect("traces/ is writable");
        println!("{}", path.display());
    }
    for config in model_checks() {
        let model = LeaseModel::new(config).expect("valid check");
        let report = run(&model, RunOptions::default(), &Counters::default());
        let path = report
            .property(LEDGER)
            .and_then(|p| p.path.clone())
            .expect("the ledger is violated");
        let translation = trace::model::translate(&config, &path).expect("translates");
        assert!(translation.report.broken(), "the schedule reproduces it");
        let file = trace::model::trace_file(&config, LEDGER, &path, &translation);
        remove_old(&root.join("model"), &translation.scenario.name);
        let path = file.save_in(&root.join("model")).expect("writable");
        println!("{}", path.display());
    }
}

/// Removes earlier traces of the scenario named `name` from `dir`.
fn remove_old(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if let Ok(old) = trace::load(&entry.path()) {
            if old.scenario.name == name
                && matches!(
                    old.file.origin,
                    Origin::Simulation { shrunk_from: None } | Origin::Model { .. }
                )
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}
