//! The boundary sweep: the largest pause for which the ledger holds.

use leaselab_checker::frontier::{boundary, Boundary, Cell, Frontier};
use leaselab_checker::{CheckConfig, RunOptions};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::Safeguard;

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
    assert!(watchdog.checks >= 3);
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
