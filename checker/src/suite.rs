//! Named sets of checks with the verdicts they must reach, so that a suite runs the same
//! anywhere (`leaselab check --suite nightly`).

use serde::Serialize;

use leaselab_model::postgres::{Isolation, WriteGuard};
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::Safeguard;

use crate::config::CheckConfig;
use crate::model::{LEDGER, MUTUAL_EXCLUSION};
use crate::run::{CheckReport, PropertyVerdict};

/// One check of a suite and what it must show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SuiteEntry {
    /// A short name.
    pub name: String,
    /// The check.
    #[serde(skip)]
    pub config: CheckConfig,
    /// The ledger's expected verdict.
    pub ledger: PropertyVerdict,
    /// Mutual exclusion's expected verdict (none: not checked or not applicable).
    pub mutual_exclusion: Option<PropertyVerdict>,
}

impl SuiteEntry {
    /// The differences between what `report` shows and what this entry expects.
    pub fn mismatches(&self, report: &CheckReport) -> Vec<String> {
        let mut out = Vec::new();
        let mut compare = |name: &str, expected: PropertyVerdict| {
            let got = report.verdict(name);
            if got != Some(expected) {
                out.push(format!(
                    "{}: {name} expected {}, got {}",
                    self.name,
                    expected.as_str(),
                    got.map_or("nothing", PropertyVerdict::as_str)
                ));
            }
        };
        compare(LEDGER, self.ledger);
        if let Some(expected) = self.mutual_exclusion {
            compare(MUTUAL_EXCLUSION, expected);
        }
        out
    }
}

/// The names of the suites.
pub const SUITES: [&str; 2] = ["smoke", "nightly"];

/// A suite by name.
pub fn suite(name: &str) -> Option<Vec<SuiteEntry>> {
    match name {
        "smoke" => Some(smoke()),
        "nightly" => Some(nightly()),
        _ => None,
    }
}

fn entry(
    name: &str,
    config: CheckConfig,
    ledger: PropertyVerdict,
    mutual_exclusion: Option<PropertyVerdict>,
) -> SuiteEntry {
    SuiteEntry {
        name: name.to_string(),
        config,
        ledger,
        mutual_exclusion,
    }
}

const LEASE: Safeguard = Safeguard::Lease {
    release: ReleaseVia::Script,
};
const FENCED: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelow,
};
const FENCED_CAS: Safeguard = Safeguard::Fenced {
    guard: WriteGuard::FenceBelowAndEqual,
};

fn with(safeguard: Safeguard, change: impl FnOnce(&mut CheckConfig)) -> CheckConfig {
    let mut config = CheckConfig::new(safeguard);
    change(&mut config);
    config
}

/// Seconds on two cores: the cases the tests pin down.
fn smoke() -> Vec<SuiteEntry> {
    use PropertyVerdict::{Safe, Violated};
    vec![
        entry("no-lock", with(Safeguard::NoLock, |_| {}), Violated, None),
        entry(
            "lease, no pauses, work < TTL",
            with(LEASE, |c| c.max_pause_ticks = Some(0)),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease, unbounded pauses",
            with(LEASE, |c| c.ttl_ticks = 2),
            Violated,
            Some(Violated),
        ),
        entry(
            "fenced, unbounded pauses",
            with(FENCED, |c| c.ttl_ticks = 1),
            Violated,
            Some(Violated),
        ),
        entry(
            "fenced-cas, unbounded pauses",
            with(FENCED_CAS, |c| c.ttl_ticks = 1),
            Safe,
            Some(Violated),
        ),
        entry("pg-debit", with(Safeguard::PgDebit, |_| {}), Safe, None),
        entry(
            "pg-for-update",
            with(Safeguard::PgForUpdate, |_| {}),
            Safe,
            None,
        ),
        entry(
            "pg-transfer-unordered (deadlocks retried)",
            with(Safeguard::PgTransfer { ordered: false }, |_| {}),
            Safe,
            None,
        ),
        entry(
            "pg-read-committed",
            with(
                Safeguard::PgIsolation {
                    isolation: Isolation::ReadCommitted,
                },
                |_| {},
            ),
            Violated,
            None,
        ),
        entry(
            "pg-serializable",
            with(
                Safeguard::PgIsolation {
                    isolation: Isolation::Serializable,
                },
                |_| {},
            ),
            Safe,
            None,
        ),
    ]
}

/// Minutes on two cores: three callers, longer horizons, failovers, the watchdog's boundary.
fn nightly() -> Vec<SuiteEntry> {
    use PropertyVerdict::{Safe, Violated};
    let three = |safeguard: Safeguard, ttl_ticks: u64, horizon_ticks: Option<u64>| {
        with(safeguard, |c| {
            c.callers = 3;
            c.ttl_ticks = ttl_ticks;
            c.horizon_ticks = horizon_ticks;
        })
    };
    let watchdog =
        |ttl_ticks: u64, work_ticks: u64, pause: Option<u64>, horizon_ticks: Option<u64>| {
            with(Safeguard::LeaseWatchdog, |c| {
                c.ttl_ticks = ttl_ticks;
                c.work_ticks = work_ticks;
                c.max_pause_ticks = pause;
                c.horizon_ticks = horizon_ticks;
            })
        };
    let mut entries = smoke();
    entries.extend([
        entry(
            "no-lock, 3 callers",
            three(Safeguard::NoLock, 3, None),
            Violated,
            None,
        ),
        entry(
            "setnx-del, 1 failover",
            with(Safeguard::SetnxDel, |c| c.failovers = 1),
            Violated,
            Some(Violated),
        ),
        entry(
            "lease, 3 callers, no pauses",
            with(LEASE, |c| {
                c.callers = 3;
                c.max_pause_ticks = Some(0);
            }),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease, TTL 3, work 1, pauses up to 2",
            with(LEASE, |c| c.max_pause_ticks = Some(2)),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease, TTL 3, work 1, pauses up to 3",
            with(LEASE, |c| c.max_pause_ticks = Some(3)),
            Violated,
            Some(Violated),
        ),
        entry(
            "lease, 1 failover, no pauses",
            with(LEASE, |c| {
                c.failovers = 1;
                c.max_pause_ticks = Some(0);
            }),
            Violated,
            Some(Violated),
        ),
        entry(
            "fenced, 3 callers, unbounded pauses, horizon 6",
            three(FENCED, 1, Some(6)),
            Violated,
            Some(Violated),
        ),
        entry(
            "fenced-cas, 3 callers, unbounded pauses, horizon 6",
            three(FENCED_CAS, 1, Some(6)),
            Safe,
            Some(Violated),
        ),
        entry(
            "fenced-cas, TTL 2, unbounded pauses",
            with(FENCED_CAS, |c| c.ttl_ticks = 2),
            Safe,
            Some(Violated),
        ),
        entry(
            "fenced-cas, 1 failover, unbounded pauses",
            with(FENCED_CAS, |c| {
                c.ttl_ticks = 1;
                c.failovers = 1;
            }),
            Safe,
            Some(Violated),
        ),
        entry(
            "pg-debit, 3 callers",
            three(Safeguard::PgDebit, 3, None),
            Safe,
            None,
        ),
        entry(
            "pg-for-update, 3 callers",
            three(Safeguard::PgForUpdate, 3, None),
            Safe,
            None,
        ),
        entry(
            "lease-watchdog, TTL 3, work 4, pauses up to 2, horizon 14",
            watchdog(3, 4, Some(2), Some(14)),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease-watchdog, TTL 3, work 4, unbounded pauses, horizon 14",
            watchdog(3, 4, None, Some(14)),
            Violated,
            Some(Violated),
        ),
        entry(
            "lease-watchdog, TTL 6, work 3, pauses up to 4, horizon 13",
            watchdog(6, 3, Some(4), Some(13)),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease-watchdog, TTL 6, work 3, pauses up to 5, horizon 13",
            watchdog(6, 3, Some(5), Some(13)),
            Violated,
            Some(Violated),
        ),
    ]);
    entries
}
