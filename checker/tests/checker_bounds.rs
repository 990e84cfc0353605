//! Bounds that would make a verdict empty: a horizon in which nobody can write is refused; a
//! bound in which no run lets every caller settle gives INCONCLUSIVE, never SAFE; a search
//! stopped by its state limit (or on request) is INCONCLUSIVE and says which limit stopped it.

use leaselab_checker::bfs::{Counters, Stop};
use leaselab_checker::frontier::{boundary, Boundary};
use leaselab_checker::{
    run, CheckConfig, LeaseModel, PropertyVerdict, RunOptions, LEDGER, MUTUAL_EXCLUSION, SETTLED,
};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::Safeguard;

const LEASE: Safeguard = Safeguard::Lease {
    release: ReleaseVia::Script,
};
const FENCED_CAS: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelowAndEqual,
};

fn config(safeguard: Safeguard, change: impl FnOnce(&mut CheckConfig)) -> CheckConfig {
    let mut config = CheckConfig::new(safeguard);
    change(&mut config);
    config
}

fn refusal(config: CheckConfig) -> String {
    match config.validate() {
        Ok(()) => panic!("{} was accepted", config.bound_text()),
        Err(error) => error.0,
    }
}

#[test]
fn a_lone_caller_writes_after_its_work_and_callers_in_turn_after_theirs() {
    for (safeguard, work) in [(Safeguard::NoLock, 1), (LEASE, 10), (FENCED_CAS, 3)] {
        let timing = config(safeguard, |c| c.work_ticks = work)
            .timing()
            .expect("a lone caller writes");
        assert_eq!(timing.first_write_tick, work, "{}", safeguard.name());
        assert_eq!(
            timing.all_settled_tick,
            Some(2 * work),
            "{}: two callers one after another",
            safeguard.name()
        );
    }
}

#[test]
fn a_horizon_before_any_write_is_refused_naming_the_smallest_that_means_something() {
    let error = refusal(config(Safeguard::NoLock, |c| c.horizon_ticks = Some(0)));
    assert!(error.contains("--horizon 0"), "{error}");
    assert!(
        error.contains("smallest meaningful horizon is 1"),
        "{error}"
    );

    let error = refusal(config(LEASE, |c| {
        c.work_ticks = 10;
        c.horizon_ticks = Some(3);
    }));
    assert!(error.contains("--horizon 3"), "{error}");
    assert!(
        error.contains("smallest meaningful horizon is 10"),
        "{error}"
    );
    assert!(error.contains("by 20 ticks"), "{error}");

    // The smallest meaningful horizon itself is accepted.
    config(LEASE, |c| {
        c.work_ticks = 10;
        c.horizon_ticks = Some(10);
    })
    .validate()
    .expect("a lone caller can write within 10 ticks");
}

#[test]
fn a_bound_that_lets_no_run_settle_every_caller_is_inconclusive_not_safe() {
    // One caller can write by t=1, but the second cannot finish before the horizon: nothing
    // could go wrong, so "safe" would be empty.
    let short = config(Safeguard::PgForUpdate, |c| c.horizon_ticks = Some(1));
    short.validate().expect("a lone caller can write");
    let report = run(
        &LeaseModel::new(short).unwrap(),
        RunOptions::default(),
        &Counters::default(),
    );
    assert!(report.exhausted);
    assert_eq!(report.verdict(SETTLED), Some(PropertyVerdict::NotFound));
    assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Inconclusive));
    let basis = &report.property(LEDGER).unwrap().basis;
    assert!(basis.contains("vacuous"), "{basis}");
    assert!(basis.contains("--horizon 2"), "{basis}");
    assert_eq!(
        report.verdict_over(&[LEDGER]),
        PropertyVerdict::Inconclusive
    );

    // One tick more, and the same check is a proof.
    let long = config(Safeguard::PgForUpdate, |c| c.horizon_ticks = Some(2));
    let report = run(
        &LeaseModel::new(long).unwrap(),
        RunOptions::default(),
        &Counters::default(),
    );
    assert_eq!(report.verdict(SETTLED), Some(PropertyVerdict::Found));
    assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Safe));
}

fn ledger_verdict(config: CheckConfig) -> (PropertyVerdict, String) {
    let report = run(
        &LeaseModel::new(config).unwrap(),
        RunOptions::default(),
        &Counters::default(),
    );
    let ledger = report.property(LEDGER).unwrap();
    (ledger.verdict, ledger.basis.clone())
}

#[test]
fn a_horizon_that_ends_before_a_second_spend_can_overlap_the_first_is_inconclusive_not_safe() {
    // Everyone settles within 3 ticks, but no lease of 3 ticks can expire under its holder
    // and let another caller spend before the horizon: the broken lease looked SAFE here.
    let short = config(LEASE, |c| c.horizon_ticks = Some(3));
    let timing = short.timing().unwrap();
    assert_eq!(
        timing.overlap_tick,
        Some(5),
        "stall after the read, TTL 3, work 1"
    );
    let (verdict, basis) = ledger_verdict(short);
    assert_eq!(verdict, PropertyVerdict::Inconclusive, "{basis}");
    assert!(basis.contains("too short to overlap"), "{basis}");
    assert!(basis.contains("--horizon 5"), "{basis}");

    // The same holds for a safeguard that is safe: a SAFE must come from a bound that
    // could have shown the lost update.
    let (verdict, basis) = ledger_verdict(config(FENCED_CAS, |c| {
        c.callers = 3;
        c.horizon_ticks = Some(2);
    }));
    assert_eq!(verdict, PropertyVerdict::Inconclusive, "{basis}");
    let (verdict, basis) = ledger_verdict(config(FENCED_CAS, |c| c.horizon_ticks = Some(5)));
    assert_eq!(verdict, PropertyVerdict::Safe, "{basis}");

    // With a long lease the bound is still where the lease first lets the second caller in
    // (stall at once, expiry after the TTL, then its work and write), not a retry later.
    for (ttl, work) in [(40, 2), (2000, 2000)] {
        let long = config(LEASE, |c| {
            c.ttl_ticks = ttl;
            c.work_ticks = work;
        });
        assert_eq!(
            long.timing().unwrap().overlap_tick,
            Some(ttl + work + 1),
            "TTL {ttl}, work {work}"
        );
    }

    // A lock without a TTL never lets the second caller through while the first stalls:
    // there is no such bound to wait for, and a short horizon that settles everyone proves.
    let row_lock = config(Safeguard::PgForUpdate, |c| c.horizon_ticks = Some(2));
    assert_eq!(row_lock.timing().unwrap().overlap_tick, None);
    assert_eq!(ledger_verdict(row_lock).0, PropertyVerdict::Safe);
}

#[test]
fn the_overlap_bound_is_tight_broken_safeguards_lose_an_update_exactly_there() {
    // Below the bound no search finds a lost update (so calling those bounds inconclusive
    // hides nothing); at the bound, every safeguard that loses updates already does.
    let broken = [
        Safeguard::NoLock,
        LEASE,
        Safeguard::Fenced {
            guard: WriteGuard::Unfenced,
        },
    ];
    for safeguard in broken {
        for (ttl, work) in [(1, 1), (3, 1), (2, 2), (4, 3)] {
            let at = |horizon: u64| {
                config(safeguard, |c| {
                    c.ttl_ticks = ttl;
                    c.work_ticks = work;
                    c.horizon_ticks = Some(horizon);
                })
            };
            let overlap = at(1).timing().unwrap().overlap_tick.unwrap();
            let what = format!("{} TTL {ttl} work {work}", safeguard.name());
            let (verdict, basis) = ledger_verdict(at(overlap));
            assert_eq!(verdict, PropertyVerdict::Violated, "{what}: {basis}");
            if at(overlap - 1).validate().is_ok() {
                let (verdict, basis) = ledger_verdict(at(overlap - 1));
                assert_ne!(verdict, PropertyVerdict::Violated, "{what}: {basis}");
                assert_ne!(verdict, PropertyVerdict::Safe, "{what}: {basis}");
            }
        }
    }
}

#[test]
fn a_lock_that_keeps_the_second_caller_out_until_the_horizon_is_inconclusive() {
    // Work 10 under a lease, horizon 12, no pauses: the second caller cannot finish.
    let report = run(
        &LeaseModel::new(config(LEASE, |c| {
            c.work_ticks = 10;
            c.ttl_ticks = 20;
            c.max_pause_ticks = Some(0);
            c.horizon_ticks = Some(12);
        }))
        .unwrap(),
        RunOptions::default(),
        &Counters::default(),
    );
    assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Inconclusive));
    assert_eq!(
        report.verdict(MUTUAL_EXCLUSION),
        Some(PropertyVerdict::Inconclusive)
    );
    assert_eq!(
        report.verdict_over(&report.always_names()),
        PropertyVerdict::Inconclusive
    );
}

#[test]
fn the_state_limit_stops_the_search_soon_and_says_so() {
    // Fenced check-and-set, 3 callers, horizon 6: some 860,000 states in all.
    let model = LeaseModel::new(config(FENCED_CAS, |c| {
        c.callers = 3;
        c.ttl_ticks = 1;
        c.horizon_ticks = Some(6);
    }))
    .unwrap();
    let report = run(
        &model,
        RunOptions {
            max_unique: Some(2_000),
            ..RunOptions::default()
        },
        &Counters::default(),
    );
    assert!(!report.exhausted);
    assert_eq!(report.stopped, Some(Stop::StateLimit));
    assert!(
        report.unique_states < 4_000,
        "stopped within a chunk of the limit, not at the end of a level: {}",
        report.unique_states
    );
    assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Inconclusive));
    let basis = &report.property(LEDGER).unwrap().basis;
    assert!(basis.contains("state limit"), "{basis}");
    assert!(basis.contains("--max-states"), "{basis}");
    // Mutual exclusion breaks in 6 steps: a counterexample found before the limit stands.
    assert_eq!(
        report.verdict(MUTUAL_EXCLUSION),
        Some(PropertyVerdict::Violated)
    );
}

#[test]
fn a_stop_request_ends_the_search_as_inconclusive() {
    let model = LeaseModel::new(config(LEASE, |c| c.max_pause_ticks = Some(0))).unwrap();
    let counters = Counters::default();
    counters.request_stop();
    let report = run(&model, RunOptions::default(), &counters);
    assert_eq!(report.stopped, Some(Stop::Requested));
    assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Inconclusive));
    assert!(report.holds(), "inconclusive is not a violation");
}

#[test]
fn absurd_parameters_are_refused_before_anything_runs() {
    let cases: Vec<(CheckConfig, &str)> = vec![
        (config(LEASE, |c| c.callers = 9), "--callers 9"),
        (config(LEASE, |c| c.callers = 1), "nothing can overlap"),
        (config(LEASE, |c| c.callers = u32::MAX), "--callers"),
        (config(LEASE, |c| c.ttl_ticks = u64::MAX), "--ttl"),
        (config(LEASE, |c| c.work_ticks = u64::MAX), "--work"),
        (
            config(LEASE, |c| c.max_pause_ticks = Some(u64::MAX)),
            "--max-pause",
        ),
        (
            config(LEASE, |c| c.horizon_ticks = Some(u64::MAX)),
            "--horizon",
        ),
        (config(LEASE, |c| c.failovers = 2), "at most 1 failover"),
        (
            config(Safeguard::PgDebit, |c| c.failovers = 1),
            "nothing in Redis",
        ),
        (
            config(LEASE, |c| c.initial_balance = 5),
            "no caller can afford",
        ),
        (
            config(LEASE, |c| {
                c.initial_balance = i64::MAX;
                c.amount = i64::MAX;
                c.callers = 3;
            }),
            "overflow",
        ),
    ];
    for (config, says) in cases {
        let error = refusal(config);
        assert!(error.contains(says), "expected {says:?} in: {error}");
    }
    // The default horizon of a huge TTL saturates instead of overflowing.
    assert_eq!(
        config(LEASE, |c| c.ttl_ticks = u64::MAX).default_horizon_ticks(),
        u64::MAX
    );
}

#[test]
fn a_frontier_cell_whose_checks_hit_the_limit_is_inconclusive() {
    let cell = boundary(
        config(LEASE, |c| {
            c.ttl_ticks = 3;
            c.work_ticks = 1;
            c.horizon_ticks = Some(7);
        }),
        RunOptions {
            max_unique: Some(50),
            ..RunOptions::default()
        },
    )
    .unwrap();
    assert_eq!(cell.boundary, Boundary::Inconclusive);
    assert_eq!(cell.boundary.cell(), "?");
    let reason = cell.reason.expect("a reason");
    assert!(reason.contains("state limit"), "{reason}");
}

#[test]
fn a_frontier_cell_whose_horizon_lets_no_run_settle_is_inconclusive() {
    // A lone caller writes at t=2, the second could only at t=4: nothing can overlap.
    let cell = boundary(
        config(LEASE, |c| {
            c.ttl_ticks = 3;
            c.work_ticks = 2;
            c.horizon_ticks = Some(3);
        }),
        RunOptions::default(),
    )
    .unwrap();
    assert_eq!(cell.boundary, Boundary::Inconclusive);
    let reason = cell.reason.expect("a reason");
    assert!(reason.contains("vacuous"), "{reason}");
}
