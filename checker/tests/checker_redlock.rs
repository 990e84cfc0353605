//! Redlock under the asynchronous and the semi-synchronous model (the tutorial's safety
//! section): two callers spending 10 from 20 through a lock on 3 independent Redis nodes.
//!
//! Every verdict is asserted, and so is the length of every shortest counterexample.

use leaselab_checker::bfs::Counters;
use leaselab_checker::{
    run, CheckConfig, CheckReport, LeaseModel, PropertyVerdict, RunOptions, LEDGER,
    MUTUAL_EXCLUSION,
};
use leaselab_model::safeguard::Safeguard;
use leaselab_model::world::NodeFaults;

use PropertyVerdict::{Safe, Violated};

const REDLOCK: Safeguard = Safeguard::Redlock {
    nodes: 3,
    cas: false,
};
const REDLOCK_CAS: Safeguard = Safeguard::Redlock {
    nodes: 3,
    cas: true,
};

/// TTL 4 ticks (validity 4 − 2 = 2 when the round takes no time), work 1 tick, horizon 10,
/// at most 3 million states (a blow-up is INCONCLUSIVE, never a swamped machine).
fn check(safeguard: Safeguard, change: impl FnOnce(&mut CheckConfig)) -> CheckReport {
    let mut config = CheckConfig::new(safeguard);
    config.ttl_ticks = 4;
    config.work_ticks = 1;
    config.horizon_ticks = Some(10);
    change(&mut config);
    let model = LeaseModel::new(config).expect("a valid check");
    let options = RunOptions {
        max_unique: Some(3_000_000),
        ..RunOptions::default()
    };
    run(&model, options, &Counters::default())
}

fn expect(report: &CheckReport, property: &str, verdict: PropertyVerdict, steps: Option<usize>) {
    let found = report
        .property(property)
        .unwrap_or_else(|| panic!("{property} is checked"));
    assert_eq!(
        (found.verdict, found.steps),
        (verdict, steps),
        "{property}: {}\n{}",
        found.basis,
        found.trace.join("\n")
    );
}

fn trace(report: &CheckReport, property: &str) -> String {
    report.property(property).unwrap().trace.join("\n")
}

#[test]
fn redlock_holds_in_the_semi_synchronous_model_without_faults() {
    let report = check(REDLOCK, |c| c.max_pause_ticks = Some(2));
    expect(&report, LEDGER, Safe, None);
    expect(&report, MUTUAL_EXCLUSION, Safe, None);
}

#[test]
fn a_pause_past_the_lease_gives_the_lock_to_two_callers_in_the_asynchronous_model() {
    // Unbounded pauses: the holder stops after its round, every key expires, the other
    // caller takes a majority; then the paused holder's write overwrites the other's. A
    // horizon of 6 ticks is enough for both (657,292 states; 10 ticks stops at the limit
    // before the ledger is decided).
    let report = check(REDLOCK, |c| c.horizon_ticks = Some(6));
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(13));
    expect(&report, LEDGER, Violated, Some(26));
}

#[test]
fn a_node_restart_without_persistence_gives_the_lock_to_two_callers() {
    let report = check(REDLOCK, |c| {
        c.max_pause_ticks = Some(0);
        c.node_faults.restarts = 1;
    });
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(9));
    expect(&report, LEDGER, Violated, Some(22));
    let path = trace(&report, MUTUAL_EXCLUSION);
    assert!(path.contains("restarts without persistence"), "{path}");
}

#[test]
fn a_delayed_restart_keeps_redlock_safe() {
    let report = check(REDLOCK, |c| {
        c.max_pause_ticks = Some(0);
        c.node_faults.delayed_restarts = 1;
    });
    expect(&report, LEDGER, Safe, None);
    expect(&report, MUTUAL_EXCLUSION, Safe, None);
}

#[test]
fn a_node_clock_jump_past_the_ttl_gives_the_lock_to_two_callers() {
    let report = check(REDLOCK, |c| {
        c.max_pause_ticks = Some(0);
        c.node_faults = NodeFaults {
            clock_jumps: 1,
            clock_jump_ms: 5,
            ..NodeFaults::default()
        };
    });
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(9));
    expect(&report, LEDGER, Violated, Some(22));
    let path = trace(&report, MUTUAL_EXCLUSION);
    assert!(path.contains("steps its clock forward by 5ms"), "{path}");
}

/// The same correction slewed, at NTP's 500 ppm or even at 50 %, keeps the lock where the
/// jump broke it: a slew takes at most rate × TTL off a node's lease, and Redlock's validity
/// (TTL − elapsed − drift allowance) leaves that margin.
#[test]
fn a_node_clock_slewed_keeps_the_lock_where_the_jump_broke_it() {
    for rate_ppm in [500, 500_000] {
        let report = check(REDLOCK, |c| {
            c.max_pause_ticks = Some(0);
            c.node_faults = NodeFaults {
                clock_slews: 1,
                clock_slew_ms: 5,
                slew_rate_ppm: rate_ppm,
                ..NodeFaults::default()
            };
        });
        expect(&report, MUTUAL_EXCLUSION, Safe, None);
        expect(&report, LEDGER, Safe, None);
        assert!(report.unique_states > 0);
    }
}

#[test]
fn drift_that_a_pause_bound_absorbs_is_safe_and_more_is_not() {
    let drift = |percent| {
        move |c: &mut CheckConfig| {
            c.max_pause_ticks = Some(1);
            c.node_faults.drift_percent = percent;
        }
    };
    let report = check(REDLOCK, drift(50));
    expect(&report, LEDGER, Safe, None);
    expect(&report, MUTUAL_EXCLUSION, Safe, None);
    let report = check(REDLOCK, drift(150));
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(11));
    expect(&report, LEDGER, Violated, Some(23));
}

#[test]
fn check_and_set_keeps_the_ledger_when_two_callers_hold_the_lock() {
    for faults in [
        NodeFaults {
            restarts: 1,
            ..NodeFaults::default()
        },
        NodeFaults {
            clock_jumps: 1,
            clock_jump_ms: 5,
            ..NodeFaults::default()
        },
    ] {
        let report = check(REDLOCK_CAS, |c| {
            c.max_pause_ticks = Some(0);
            c.node_faults = faults;
        });
        expect(&report, MUTUAL_EXCLUSION, Violated, Some(9));
        expect(&report, LEDGER, Safe, None);
    }
}

/// A caller cut off from one node (any caller, any node, any moment) alone keeps Redlock safe:
/// a majority is still two of the three. With a node restart as well, it is Kleppmann's
/// scenario again.
#[test]
fn a_partition_from_one_node_alone_keeps_the_lock() {
    let report = check(REDLOCK, |c| {
        c.max_pause_ticks = Some(0);
        c.partitions = 1;
    });
    expect(&report, MUTUAL_EXCLUSION, Safe, None);
    expect(&report, LEDGER, Safe, None);
    let report = check(REDLOCK, |c| {
        c.max_pause_ticks = Some(0);
        c.partitions = 1;
        c.node_faults.restarts = 1;
    });
    expect(&report, MUTUAL_EXCLUSION, Violated, Some(9));
    expect(&report, LEDGER, Violated, Some(22));
}
