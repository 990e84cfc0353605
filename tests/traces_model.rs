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

/// A path with a jump of Redis's clock becomes a simulated jump at the path's moment, scaled
/// by the schedule's milliseconds per tick, and reproduces the same lost update; its trace
/// records the check's clock faults and replays.
#[test]
fn a_clock_jump_counterexample_reproduces_in_the_simulator() {
    use leaselab_model::fault::Host;
    use leaselab_model::world::ClockFaults;
    let config = CheckConfig {
        max_pause_ticks: Some(0),
        redis_clock: ClockFaults {
            jumps: 1,
            jump_ms: 4,
            ..ClockFaults::default()
        },
        ..CheckConfig::new(Safeguard::Lease {
            release: leaselab_model::safeguard::lease::ReleaseVia::Script,
        })
    };
    let model = LeaseModel::new(config).unwrap();
    let report = run(&model, RunOptions::default(), &Counters::default());
    let path = report
        .property(LEDGER)
        .and_then(|p| p.path.clone())
        .unwrap();
    let model_ledger = replay_path(model.initial_world(), &path).ledger();
    let translation = translate(&config, &path).expect("the path translates");
    assert_eq!(translation.report.ledger.line(), model_ledger.line());
    assert!(translation.report.broken());
    let jumps: Vec<i64> = translation
        .scenario
        .faults
        .iter()
        .filter_map(|f| match f {
            Fault::ClockJump {
                host: Host::Redis,
                jump_ms,
                ..
            } => Some(*jump_ms),
            _ => None,
        })
        .collect();
    assert_eq!(jumps, [4 * translation.ms_per_tick as i64]);
    let file = trace_file(&config, LEDGER, &path, &translation);
    let dir = std::env::temp_dir().join(format!("leaselab-model-jump-{}", std::process::id()));
    let saved = file.save_in(&dir).unwrap();
    let loaded = trace::load(&saved).unwrap();
    assert_eq!(loaded.model.as_ref().unwrap().config.redis_clock.jumps, 1);
    let replayed = replay(&loaded).unwrap();
    assert!(replayed.reproduced(), "{}", replayed.describe(&loaded));
    assert_eq!(replayed.model, Some(ModelReplay::StillViolates));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A path in which a partition cuts a caller off Redis becomes a simulated partition of that
/// caller from the path's moment on.
#[test]
fn a_partition_in_a_model_path_becomes_a_simulated_partition() {
    use leaselab_model::fault::Host;
    use leaselab_model::world::Action;
    let config = CheckConfig {
        max_pause_ticks: Some(0),
        partitions: 1,
        ..CheckConfig::new(Safeguard::NoLock)
    };
    // Caller 1 is cut off at once; caller 2 runs alone.
    let model = LeaseModel::new(config).unwrap();
    let mut world = model.initial_world().clone();
    let mut path = vec![Action::Partition(0, 0)];
    world.apply(Action::Partition(0, 0));
    while !world.stuck() && path.len() < 200 {
        let mut actions = Vec::new();
        world.actions(&mut actions);
        let next = actions
            .iter()
            .copied()
            .find(|a| matches!(a, Action::Step(_)))
            .unwrap_or(actions[0]);
        world.apply(next);
        path.push(next);
    }
    let translation = translate(&config, &path).expect("the path translates");
    let partitions: Vec<(Host, Host, u64)> = translation
        .scenario
        .faults
        .iter()
        .filter_map(|f| match f {
            Fault::Partition { a, b, from_ms, .. } => Some((*a, *b, *from_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(partitions, [(Host::Caller(1), Host::Redis, 0)]);
}
