//! The breadth-first checker: shortest, deterministic counterexamples on any number of
//! threads; symmetry reduction that changes state counts but not verdicts; agreement with
//! stateright's own checkers on the same model.

use leaselab_checker::bfs::Counters;
use leaselab_checker::narrate::narrate;
use leaselab_checker::run::replay;
use leaselab_checker::{
    model, run, CheckConfig, CheckReport, LeaseModel, PropertyVerdict, RunOptions, Strategy,
    LEDGER, MUTUAL_EXCLUSION,
};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::Safeguard;
use leaselab_model::world::World;
use stateright::{Checker, Model};

const FENCED: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelow,
};
const FENCED_CAS: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelowAndEqual,
};

const REDLOCK: Safeguard = Safeguard::Redlock {
    nodes: 3,
    cas: false,
};
const REDLOCK_CAS: Safeguard = Safeguard::Redlock {
    nodes: 3,
    cas: true,
};

/// docs/safety.md's Redlock bounds: TTL 4, work 1, horizon 10, no pauses.
fn redlock_bounds(c: &mut CheckConfig) {
    c.ttl_ticks = 4;
    c.work_ticks = 1;
    c.horizon_ticks = Some(10);
    c.max_pause_ticks = Some(0);
}

fn config(safeguard: Safeguard, change: impl FnOnce(&mut CheckConfig)) -> CheckConfig {
    let mut config = CheckConfig::new(safeguard);
    config.ttl_ticks = 1;
    config.horizon_ticks = Some(5);
    change(&mut config);
    config
}

fn check(config: CheckConfig, options: RunOptions) -> CheckReport {
    run(
        &LeaseModel::new(config).expect("valid"),
        options,
        &Counters::default(),
    )
}

fn threads(threads: usize) -> RunOptions {
    RunOptions {
        threads,
        ..RunOptions::default()
    }
}

#[test]
fn the_same_shortest_counterexamples_on_one_and_two_threads() {
    for safeguard in [Safeguard::NoLock, FENCED, FENCED_CAS] {
        let one = check(config(safeguard, |_| {}), threads(1));
        let two = check(config(safeguard, |_| {}), threads(2));
        assert_eq!(one.unique_states, two.unique_states, "{}", one.safeguard);
        assert_eq!(one.states_generated, two.states_generated);
        assert_eq!(one.properties, two.properties, "{}", one.safeguard);
    }
}

#[test]
fn counterexamples_replay_and_no_shorter_prefix_violates() {
    let config = config(FENCED, |_| {});
    let model = LeaseModel::new(config).unwrap();
    let report = run(&model, RunOptions::default(), &Counters::default());
    for (name, holds) in [
        (LEDGER, model::ledger_holds as fn(&World) -> bool),
        (MUTUAL_EXCLUSION, model::mutual_exclusion),
    ] {
        let path = report.property(name).unwrap().path.clone().unwrap();
        assert!(!holds(&replay(model.initial_world(), &path)), "{name}");
        for len in 0..path.len() {
            assert!(
                holds(&replay(model.initial_world(), &path[..len])),
                "{name} already fails after {len} steps"
            );
        }
    }
}

#[test]
fn symmetry_reduction_changes_state_counts_not_verdicts() {
    let cases = [
        config(Safeguard::NoLock, |_| {}),
        config(FENCED, |_| {}),
        config(FENCED_CAS, |_| {}),
        config(Safeguard::PgForUpdate, |c| c.callers = 3),
        config(Safeguard::SetnxDel, |c| {
            c.failovers = 1;
            c.horizon_ticks = Some(2);
        }),
        // Redlock's nodes keep the callers' tokens in their keyspaces: renamed too.
        config(REDLOCK, |c| {
            redlock_bounds(c);
            c.node_faults.restarts = 1;
        }),
        config(REDLOCK, |c| {
            redlock_bounds(c);
            c.node_faults.delayed_restarts = 1;
        }),
        config(REDLOCK, |c| {
            redlock_bounds(c);
            c.max_pause_ticks = Some(1);
            c.horizon_ticks = Some(8);
        }),
        config(REDLOCK_CAS, |c| {
            redlock_bounds(c);
            c.node_faults.clock_jumps = 1;
            c.node_faults.clock_jump_ms = 5;
        }),
    ];
    for case in cases {
        let reduced = check(case, RunOptions::default());
        let full = check(
            CheckConfig {
                symmetry: false,
                ..case
            },
            RunOptions::default(),
        );
        let verdicts = |r: &CheckReport| -> Vec<(&str, PropertyVerdict, Option<usize>)> {
            r.properties
                .iter()
                .map(|p| (p.name, p.verdict, p.steps))
                .collect()
        };
        assert_eq!(verdicts(&reduced), verdicts(&full), "{}", reduced.safeguard);
        assert!(
            reduced.unique_states < full.unique_states,
            "{}: {} reduced vs {} full",
            reduced.safeguard,
            reduced.unique_states,
            full.unique_states
        );
    }
}

#[test]
fn stateright_bfs_visits_the_same_states() {
    for symmetry in [true, false] {
        let config = config(FENCED_CAS, |c| c.symmetry = symmetry);
        let model = LeaseModel::new(config).unwrap();
        let ours = run(&model, RunOptions::default(), &Counters::default());
        assert!(ours.exhausted);
        let theirs = model.clone().checker().spawn_bfs().join();
        assert_eq!(theirs.unique_state_count() as u64, ours.unique_states);
        assert!(theirs.discovery(LEDGER).is_none());
        assert!(theirs.discovery(MUTUAL_EXCLUSION).is_some());
    }
}

#[test]
fn stateright_dfs_reaches_the_same_verdicts() {
    for safeguard in [FENCED, FENCED_CAS] {
        let config = config(safeguard, |_| {});
        let bfs = check(config, RunOptions::default());
        let dfs = check(
            config,
            RunOptions {
                strategy: Strategy::Dfs,
                threads: 2,
                max_unique: None,
                stop_at_violation: false,
                stop_once_found: &[],
            },
        );
        for property in &bfs.properties {
            let other = dfs.property(property.name).unwrap();
            assert_eq!(property.verdict, other.verdict, "{}", property.name);
            if let (Some(shortest), Some(found)) = (property.steps, other.steps) {
                assert!(shortest <= found, "BFS finds the shortest path");
            }
        }
    }
}

#[test]
fn counterexamples_read_as_the_tutorial_tells_it() {
    let model = LeaseModel::new(config(FENCED, |_| {})).unwrap();
    let report = run(&model, RunOptions::default(), &Counters::default());
    let ledger = report.property(LEDGER).unwrap();
    let text = ledger.trace.join("\n");
    assert!(
        text.starts_with("1. caller 1 acquires with fence 33"),
        "{text}"
    );
    assert!(text.contains("clock reaches"), "{text}");
    assert!(text.contains("writes balance 10 with fence 3"), "{text}");
    assert_eq!(
        narrate(model.initial_world(), ledger.path.as_ref().unwrap()),
        ledger.trace
    );
    let cas = check(config(FENCED_CAS, |_| {}), RunOptions::default());
    let rejected = cas
        .property("a write was rejected")
        .unwrap()
        .trace
        .join("\n");
    assert!(
        rejected.contains("if the fence is still 33: REJECTED")
            || rejected.contains("if the fence is still 34: REJECTED")
            || rejected.contains("if the fence is still 0: REJECTED"),
        "{rejected}"
    );
}

#[test]
fn stopping_early_is_reported_as_inconclusive() {
    let report = check(
        config(Safeguard::PgForUpdate, |c| c.callers = 3),
        RunOptions {
            max_unique: Some(50),
            ..RunOptions::default()
        },
    );
    assert!(!report.exhausted);
    assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Inconclusive));
    assert!(report.holds(), "inconclusive is not a violation");
}

#[test]
fn the_model_is_a_plain_stateright_model() {
    let model = LeaseModel::new(config(Safeguard::NoLock, |_| {})).unwrap();
    assert_eq!(model.init_states().len(), 1);
    let names: Vec<&str> = model.properties().iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        vec![LEDGER, "every caller finished", "every caller settled"]
    );
}

/// The state counts of the benchmark's proof with two callers, with and without symmetry
/// reduction, as the checker found them before its storage changed (the Promela model of the
/// same protocol stores as many): how states are stored and shared must never change what is
/// explored. `cargo bench -p leaselab-checker --bench check` checks the three-caller counts.
#[test]
fn the_benchmark_proof_explores_the_same_states_as_ever() {
    for (symmetry, unique, generated) in [(true, 25_457, 40_662), (false, 50_907, 81_303)] {
        let config = config(FENCED_CAS, |c| {
            c.work_ticks = 1;
            c.horizon_ticks = Some(6);
            c.symmetry = symmetry;
        });
        for threads in [1, 2] {
            let report = check(config, self::threads(threads));
            assert_eq!(
                (report.unique_states, report.states_generated),
                (unique, generated),
                "symmetry {symmetry}, {threads} thread(s)"
            );
            assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Safe));
        }
    }
}

/// A search told to stop once the properties it is judged on have their counterexamples (a
/// suite's check) stops at the same shortest counterexamples, leaves the rest undecided
/// (never SAFE), and cannot stop a search whose judged property holds before it is done.
#[test]
fn a_search_stops_once_the_judged_properties_are_found() {
    let judged: &'static [&'static str] = &[LEDGER, MUTUAL_EXCLUSION];
    let early = RunOptions {
        stop_once_found: judged,
        ..RunOptions::default()
    };
    let fenced = config(FENCED, |_| {});
    let full = check(fenced, RunOptions::default());
    let stopped = check(fenced, early);
    for name in judged {
        let (a, b) = (
            full.property(name).unwrap(),
            stopped.property(name).unwrap(),
        );
        assert_eq!(a.verdict, PropertyVerdict::Violated, "{name}");
        assert_eq!((a.verdict, a.steps), (b.verdict, b.steps), "{name}");
    }
    assert!(!stopped.exhausted);
    assert!(
        stopped.unique_states < full.unique_states,
        "{} of {} states",
        stopped.unique_states,
        full.unique_states
    );
    let mut undecided = 0;
    for property in &stopped.properties {
        if judged.contains(&property.name) {
            continue;
        }
        let whole = full.property(property.name).unwrap();
        if property.verdict == PropertyVerdict::Inconclusive {
            undecided += 1;
            assert!(property.basis.contains("not needed"), "{}", property.basis);
        } else {
            assert_eq!(property.verdict, whole.verdict, "{}", property.name);
            assert!(
                matches!(
                    property.verdict,
                    PropertyVerdict::Violated | PropertyVerdict::Found
                ),
                "{}: a stopped search decides nothing by exhaustion",
                property.name
            );
        }
    }
    assert!(undecided > 0, "some property was left to a longer search");

    let safe = config(FENCED_CAS, |_| {});
    let whole = check(safe, RunOptions::default());
    let judged_safe = check(
        safe,
        RunOptions {
            stop_once_found: &[LEDGER],
            ..RunOptions::default()
        },
    );
    assert!(judged_safe.exhausted);
    assert_eq!(judged_safe.unique_states, whole.unique_states);
    assert_eq!(
        judged_safe.property(LEDGER).unwrap().verdict,
        PropertyVerdict::Safe
    );
}
