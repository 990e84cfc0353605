//! The boundary sweep: the largest pause for which the ledger holds.

use std::collections::{HashSet, VecDeque};

use stateright::Model;

use leaselab_checker::bfs::Counters;
use leaselab_checker::fingerprint::fingerprint;
use leaselab_checker::frontier::{boundary, boundary_by_checks, Boundary, Cell, Frontier};
use leaselab_checker::model::{every_caller_settled, ledger_holds};
use leaselab_checker::pause_search::least_pauses;
use leaselab_checker::{CheckConfig, RunOptions};
use leaselab_checker::{LeaseModel, PropertySet};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::Safeguard;
use leaselab_model::world::ReplyFaults;

fn cell(safeguard: Safeguard, ttl_ticks: u64, work_ticks: u64, horizon_ticks: u64) -> Cell {
    let config = CheckConfig {
        ttl_ticks,
        work_ticks,
        horizon_ticks: Some(horizon_ticks),
        ..CheckConfig::new(safeguard)
    };
    boundary(config, RunOptions::default()).expect("valid")
}

const LEASE: Safeguard = Safeguard::Lease {
    release: ReleaseVia::Script,
};

#[test]
fn a_lease_tolerates_pauses_up_to_ttl_minus_work() {
    assert_eq!(cell(LEASE, 2, 1, 6).boundary, Boundary::UpTo(1));
    assert_eq!(cell(LEASE, 3, 1, 7).boundary, Boundary::UpTo(2));
    assert_eq!(cell(LEASE, 2, 3, 6).boundary, Boundary::None);
}

#[test]
fn a_watchdog_tolerates_pauses_up_to_ttl_minus_its_refresh_interval() {
    // TTL 3 refreshes every tick; work of 4 outlives the TTL.
    let watchdog = cell(Safeguard::LeaseWatchdog, 3, 4, 8);
    assert_eq!(watchdog.boundary, Boundary::UpTo(2));
    assert_eq!(watchdog.checks, 1, "one search decides the cell");
}

#[test]
fn a_watchdog_refreshing_every_third_of_the_ttl_is_not_one_refreshing_every_half() {
    // TTL 4: a refresh every TTL/3 (1 tick) leaves 3 ticks of slack; every TTL/2 (2 ticks)
    // would leave only 2. The boundary tells the two intervals apart.
    let watchdog = cell(Safeguard::LeaseWatchdog, 4, 2, 9);
    assert_eq!(watchdog.boundary, Boundary::UpTo(3));
}

#[test]
fn fenced_check_and_set_has_no_boundary() {
    let cas = Safeguard::Fenced {
        guard: WriteGuard::FenceBelowAndEqual,
    };
    assert_eq!(cell(cas, 1, 1, 5).boundary, Boundary::Unbounded);
}

/// The one search per cell finds the boundary the checks pause by pause find, for cells that
/// break at once, at a bounded pause, or never, and for several safeguards.
#[test]
fn one_search_per_cell_agrees_with_one_check_per_pause() {
    let cas = Safeguard::Fenced {
        guard: WriteGuard::FenceBelowAndEqual,
    };
    let fenced = Safeguard::Fenced {
        guard: WriteGuard::FenceBelow,
    };
    let cells = [
        (LEASE, 2, 1, 6),
        (LEASE, 3, 1, 7),
        (LEASE, 2, 3, 6),
        (LEASE, 3, 2, 8),
        (Safeguard::LeaseWatchdog, 3, 4, 8),
        (Safeguard::LeaseWatchdog, 4, 2, 9),
        (cas, 1, 1, 5),
        (fenced, 2, 1, 7),
        (Safeguard::NoLock, 2, 1, 5),
    ];
    for (safeguard, ttl_ticks, work_ticks, horizon_ticks) in cells {
        let config = CheckConfig {
            ttl_ticks,
            work_ticks,
            horizon_ticks: Some(horizon_ticks),
            ..CheckConfig::new(safeguard)
        };
        let one = boundary(config, RunOptions::default()).expect("valid");
        let each =
            boundary_by_checks(config, RunOptions::default(), &Counters::default()).expect("valid");
        assert_eq!(
            one.boundary,
            each.boundary,
            "{} TTL {ttl_ticks} work {work_ticks} horizon {horizon_ticks}",
            safeguard.name()
        );
        assert_eq!(one.checks, 1, "decided by one search");
        assert!(each.checks >= 1);
    }
    // The cells cover a boundary of none, of some pause, and unbounded.
    let found: Vec<Boundary> = cells
        .iter()
        .map(|&(safeguard, ttl_ticks, work_ticks, horizon_ticks)| {
            boundary(
                CheckConfig {
                    ttl_ticks,
                    work_ticks,
                    horizon_ticks: Some(horizon_ticks),
                    ..CheckConfig::new(safeguard)
                },
                RunOptions::default(),
            )
            .expect("valid")
            .boundary
        })
        .collect();
    assert!(found.contains(&Boundary::None));
    assert!(found.contains(&Boundary::Unbounded));
    assert!(found.iter().any(|b| matches!(b, Boundary::UpTo(_))));
}

/// The one search keeps a world's pause beside it and its callers' pause counts as slacks
/// relative to it, so worlds equal but for how long their callers were paused are visited
/// once, at the least pause. It still finds the boundary the checks pause by pause find
/// (whose worlds keep their absolute counts) under faults, with a third caller, and without
/// symmetry.
#[test]
fn one_search_agrees_with_one_check_per_pause_under_faults_and_three_callers() {
    let redlock = Safeguard::Redlock {
        nodes: 3,
        cas: false,
    };
    let fenced = Safeguard::Fenced {
        guard: WriteGuard::FenceBelow,
    };
    let mut configs = Vec::new();
    let base = |safeguard, ttl_ticks, work_ticks, horizon_ticks| CheckConfig {
        ttl_ticks,
        work_ticks,
        horizon_ticks: Some(horizon_ticks),
        ..CheckConfig::new(safeguard)
    };
    configs.push(CheckConfig {
        failovers: 1,
        ..base(LEASE, 3, 1, 7)
    });
    configs.push(CheckConfig {
        restarts: 1,
        ..base(fenced, 3, 1, 7)
    });
    configs.push(CheckConfig {
        callers: 3,
        ..base(LEASE, 2, 1, 6)
    });
    configs.push(CheckConfig {
        symmetry: false,
        ..base(Safeguard::LeaseWatchdog, 3, 2, 8)
    });
    configs.push(CheckConfig {
        redis_drift_percent: 50,
        ..base(LEASE, 4, 1, 8)
    });
    let mut restarting = base(redlock, 4, 1, 8);
    restarting.node_faults.restarts = 1;
    configs.push(restarting);
    let mut found = Vec::new();
    for config in configs {
        let one = boundary(config, RunOptions::default()).expect("valid");
        let each =
            boundary_by_checks(config, RunOptions::default(), &Counters::default()).expect("valid");
        assert_eq!(one.boundary, each.boundary, "{config:?}");
        assert_eq!(one.checks, 1, "decided by one search: {config:?}");
        found.push(one.boundary);
    }
    // Not all the same answer: some break at a bounded pause.
    assert!(
        found
            .iter()
            .any(|b| matches!(b, Boundary::UpTo(p) if *p > 0)),
        "{found:?}"
    );
    assert!(found.iter().any(|b| *b != found[0]), "{found:?}");
}

/// The least pauses by definition: every world reachable with pauses up to the horizon, its
/// pause the largest of its callers' absolute counts; the least pause of a world breaking the
/// ledger, and the least of one in which every caller settled (when below it).
fn least_pauses_by_definition(model: &LeaseModel) -> (Option<u64>, Option<u64>) {
    let pause_of = |world: &leaselab_model::world::World| {
        world
            .slots
            .iter()
            .map(|slot| slot.paused_ms)
            .max()
            .unwrap_or(0)
    };
    let mut seen = HashSet::new();
    let mut queue: VecDeque<_> = model.init_states().into_iter().collect();
    let (mut violation, mut witness) = (None::<u64>, None::<u64>);
    let least = |found: &mut Option<u64>, pause: u64| {
        *found = Some(found.map_or(pause, |p| p.min(pause)));
    };
    while let Some(world) = queue.pop_front() {
        if !model.within_boundary(&world) || !seen.insert(fingerprint(&world)) {
            continue;
        }
        if !ledger_holds(&world) {
            least(&mut violation, pause_of(&world));
            continue;
        }
        if every_caller_settled(&world) {
            least(&mut witness, pause_of(&world));
        }
        let mut actions = Vec::new();
        model.actions(&world, &mut actions);
        queue.extend(
            actions
                .into_iter()
                .filter_map(|a| model.next_state(&world, a)),
        );
    }
    (
        violation,
        witness.filter(|&w| violation.is_none_or(|v| w < v)),
    )
}

/// The one search's least pauses (of a broken ledger, of every caller settled) are the ones
/// the definition gives, on cells whose least violation needs two callers paused (so that a
/// slack lost or merged wrongly would show), with faults (including a lost reply, whose write
/// lands unacknowledged), and with three callers; the search also forgets what finished callers
/// remember beyond their outcome's kind ([`leaselab_model::world::World::forget_finished`]).
#[test]
fn the_least_pauses_are_those_of_the_definition() {
    let fenced = Safeguard::Fenced {
        guard: WriteGuard::FenceBelow,
    };
    let base = |safeguard, callers, ttl_ticks, work_ticks, horizon_ticks| CheckConfig {
        callers,
        ttl_ticks,
        work_ticks,
        horizon_ticks: Some(horizon_ticks),
        max_pause_ticks: Some(horizon_ticks),
        ..CheckConfig::new(safeguard)
    };
    let configs = [
        base(LEASE, 2, 3, 1, 8),
        base(LEASE, 3, 2, 1, 6),
        base(Safeguard::LeaseWatchdog, 2, 3, 2, 8),
        base(Safeguard::LeaseWatchdog, 2, 4, 1, 9),
        CheckConfig {
            failovers: 1,
            ..base(LEASE, 2, 3, 1, 7)
        },
        CheckConfig {
            restarts: 1,
            ..base(fenced, 2, 2, 1, 7)
        },
        CheckConfig {
            symmetry: false,
            ..base(LEASE, 2, 4, 2, 9)
        },
        // A lost reply: a write lands that its caller never hears of.
        CheckConfig {
            reply_faults: ReplyFaults {
                lost_replies: 1,
                ..ReplyFaults::default()
            },
            ..base(LEASE, 2, 3, 1, 7)
        },
        CheckConfig {
            reply_faults: ReplyFaults {
                lost_replies: 1,
                ..ReplyFaults::default()
            },
            ..base(Safeguard::LeaseWatchdog, 2, 3, 1, 8)
        },
    ];
    let mut violations = Vec::new();
    for config in configs {
        let model = LeaseModel::with_properties(config, PropertySet::LedgerOnly).expect("valid");
        let found = least_pauses(&model, None, &Counters::default());
        assert_eq!(found.stopped, None);
        let defined = least_pauses_by_definition(&model);
        assert_eq!((found.violation, found.witness), defined, "{config:?}");
        violations.push(found.violation);
    }
    assert!(
        violations.iter().any(|v| v.is_some_and(|v| v >= 2)),
        "some cell needs a pause of 2 or more: {violations:?}"
    );
}

/// A search cut short by the state limit falls back to one check per pause, each with the
/// same limit: the cell says what those checks say.
#[test]
fn a_cell_whose_one_search_hits_the_limit_is_checked_pause_by_pause() {
    let config = CheckConfig {
        ttl_ticks: 2,
        work_ticks: 1,
        horizon_ticks: Some(6),
        ..CheckConfig::new(LEASE)
    };
    let one = boundary(config, RunOptions::default()).expect("valid");
    assert_eq!((one.boundary, one.checks), (Boundary::UpTo(1), 1));
    let options = RunOptions {
        max_unique: Some(one.unique_states / 2),
        ..RunOptions::default()
    };
    let limited = boundary(config, options).expect("valid");
    let each = boundary_by_checks(config, options, &Counters::default()).expect("valid");
    assert_eq!(
        limited.checks,
        each.checks + 1,
        "the search, then the checks"
    );
    assert_eq!(limited.boundary, each.boundary);
    assert_eq!(limited.reason, each.reason);
}

#[test]
fn the_table_puts_ttl_down_and_work_across() {
    let frontier = Frontier {
        safeguard: "lease".into(),
        callers: 2,
        ttls: vec![2, 3],
        works: vec![1, 3],
        cells: [
            (2, 1, Boundary::UpTo(1)),
            (2, 3, Boundary::None),
            (3, 1, Boundary::UpTo(2)),
            (3, 3, Boundary::Unbounded),
        ]
        .into_iter()
        .map(|(ttl_ticks, work_ticks, boundary)| Cell {
            ttl_ticks,
            work_ticks,
            horizon_ticks: 10,
            boundary,
            checks: 1,
            unique_states: 1,
            reason: None,
        })
        .collect(),
    };
    let table = frontier.table();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "TTL \\ work |    1    3");
    assert_eq!(lines[2], "         2 |    1    -");
    assert_eq!(lines[3], "         3 |    2    ∞");
}

/// Redlock on 3 nodes whose clocks run fast: the faster they run, the shorter the pause the
/// lease survives, since a node's key expires early while the holder still counts on its
/// validity (TTL 4, work 1, horizon 8; the drift/pause frontier of docs/safety.md).
#[test]
fn redlock_survives_shorter_pauses_as_its_nodes_clocks_run_faster() {
    let redlock = Safeguard::Redlock {
        nodes: 3,
        cas: false,
    };
    let at_drift = |drift_percent: i32| {
        let mut config = CheckConfig {
            ttl_ticks: 4,
            work_ticks: 1,
            horizon_ticks: Some(8),
            ..CheckConfig::new(redlock)
        };
        config.node_faults.drift_percent = drift_percent;
        boundary(config, RunOptions::default())
            .expect("valid")
            .boundary
    };
    assert_eq!(at_drift(100), Boundary::UpTo(1));
    assert_eq!(at_drift(150), Boundary::UpTo(0));
}

/// Cells side by side (`threads` 2) give the same table as one after another, also when the
/// state limit stops some of them: each cell counts its own states against the limit (they
/// once shared one count, and a small cell was stopped by its neighbour's states).
#[test]
fn cells_side_by_side_give_the_table_of_cells_one_after_another() {
    let base = CheckConfig {
        horizon_ticks: Some(10),
        ..CheckConfig::new(Safeguard::LeaseWatchdog)
    };
    let sweep_with = |threads: usize| -> Frontier {
        let options = RunOptions {
            threads,
            max_unique: Some(40_000),
            ..RunOptions::default()
        };
        let started = std::sync::Mutex::new(Vec::new());
        let frontier = leaselab_checker::frontier::sweep(
            base,
            &[3, 4],
            &[1, 2],
            options,
            &Counters::default(),
            |ttl, work| started.lock().unwrap().push((ttl, work)),
            |_| {},
        )
        .expect("valid cells");
        let mut started = started.into_inner().unwrap();
        started.sort_unstable();
        assert_eq!(started, vec![(3, 1), (3, 2), (4, 1), (4, 2)]);
        frontier
    };
    let one = sweep_with(1);
    let two = sweep_with(2);
    assert_eq!(two, one);
    assert!(
        one.cells
            .iter()
            .any(|c| c.boundary == Boundary::Inconclusive)
            && one
                .cells
                .iter()
                .any(|c| c.boundary != Boundary::Inconclusive),
        "the limit stops some cells and not others: {one:?}"
    );
}
