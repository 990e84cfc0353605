//! Model counterexamples become simulated schedules that reproduce the same violation:
//! the step 5 check (fencing token not checked) and the step 6 check (fencing alone, leases
//! overlapping).

use leaselab::trace::model::{trace_file, translate};
use leaselab::trace::replay::{replay, ModelReplay};
use leaselab::trace::{self};
use leaselab_checker::bfs::Counters;
use leaselab_checker::run::replay as replay_path;
use leaselab_checker::{run, CheckConfig, LeaseModel, RunOptions, LEDGER};
use leaselab_model::fault::Fault;
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::Safeguard;

fn check(guard: WriteGuard, ttl: u64, work: u64) {
    let config = CheckConfig {
        ttl_ticks: ttl,
        work_ticks: work,
        ..CheckConfig::new(Safeguard::Fenced { guard })
    };
    let model = LeaseModel::new(config).unwrap();
    let report = run(&model, RunOptions::default(), &Counters::default());
    let path = report
        .property(LEDGER)
        .and_then(|p| p.path.clone())
        .expect("the model finds a ledger counterexample");
    let last = replay_path(model.initial_world(), &path);
    let model_ledger = last.ledger();

    let translation = translate(&config, &path).expect("the path translates");
    let sim = &translation.report;
    // The same violation: the same ledger line, the same caller to blame, the same reads.
    assert!(sim.broken(), "{}", sim.ledger.line());
    assert_eq!(sim.ledger.line(), model_ledger.line());
    let blamed = |l: &leaselab_model::ledger::Ledger| {
        l.stale_spends
            .iter()
            .map(|s| (s.caller, s.read_balance, s.current_balance, s.fence))
            .collect::<Vec<_>>()
    };
    assert_eq!(blamed(&sim.ledger), blamed(&model_ledger));
    // Made of the model's clock: start offsets and pauses at named points only.
    assert!(translation.ms_per_tick >= 100);
    assert!(translation
        .scenario
        .faults
        .iter()
        .all(|f| matches!(f, Fault::Pause { .. })));
    assert_eq!(
        translation.scenario.params.ttl_ms,
        ttl * translation.ms_per_tick + translation.ms_per_tick / 2
    );

    // As a trace: it loads, replays by seed, and its path still violates the model.
    let file = trace_file(&config, LEDGER, &path, &translation);
    let dir = std::env::temp_dir().join(format!("leaselab-model-{}", std::process::id()));
    let saved = file.save_in(&dir).unwrap();
    let loaded = trace::load(&saved).unwrap();
    assert_eq!(loaded.model.as_ref().unwrap().actions, path);
    let replayed = replay(&loaded).unwrap();
    assert!(replayed.reproduced(), "{}", replayed.describe(&loaded));
    assert_eq!(replayed.model, Some(ModelReplay::StillViolates));
}

#[test]
fn the_step5_counterexample_reproduces_in_the_simulator() {
    check(WriteGuard::Unfenced, 1, 0);
    check(WriteGuard::Unfenced, 2, 1);
}

#[test]
fn the_step6_counterexample_reproduces_in_the_simulator() {
    check(WriteGuard::FenceBelow, 1, 0);
    check(WriteGuard::FenceBelow, 2, 1);
}

#[test]
fn a_model_path_that_no_longer_violates_is_reported() {
    // The step 6 path checked against the check-and-set guard: same actions, but the
    // second write is refused, so the ledger holds.
    let config = CheckConfig {
        ttl_ticks: 1,
        work_ticks: 0,
        ..CheckConfig::new(Safeguard::Fenced {
            guard: WriteGuard::FenceBelow,
        })
    };
    let model = LeaseModel::new(config).unwrap();
    let report = run(&model, RunOptions::default(), &Counters::default());
    let actions = report.property(LEDGER).unwrap().path.clone().unwrap();
    let fixed = CheckConfig {
        safeguard: Safeguard::Fenced {
            guard: WriteGuard::FenceBelowAndEqual,
        },
        ..config
    };
    let outcome = leaselab::trace::replay::replay_model(&leaselab::trace::load::ModelPath {
        config: fixed,
        property: LEDGER.into(),
        actions,
        ms_per_tick: 100,
    });
    assert_ne!(outcome, ModelReplay::StillViolates);
}
