//! Named sets of checks with the verdicts they must reach, so that a suite runs the same
//! anywhere (`leaselab check --suite nightly`).

use serde::Serialize;

use crate::postgres::WriteGuard;
use crate::safeguard::lease::ReleaseVia;
use crate::safeguard::Safeguard;

use super::config::CheckConfig;
use super::model::{LEDGER, MUTUAL_EXCLUSION};
use super::run::{CheckReport, PropertyVerdict};

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
            with(LEASE, |c| c.max_pause_ms = Some(0)),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease, unbounded pauses",
            with(LEASE, |_| {}),
            Violated,
            Some(Violated),
        ),
        entry(
            "fenced-cas, unbounded pauses",
            with(FENCED_CAS, |c| c.ttl_ms = 2),
            Safe,
            Some(Violated),
        ),
        entry("pg-debit", with(Safeguard::PgDebit, |_| {}), Safe, None),
    ]
}

/// Minutes: three callers, longer horizons, failovers.
fn nightly() -> Vec<SuiteEntry> {
    use PropertyVerdict::{Safe, Violated};
    let three = |safeguard: Safeguard| {
        with(safeguard, |c| {
            c.callers = 3;
            c.initial_balance = 20;
        })
    };
    vec![
        entry(
            "no-lock, 3 callers",
            three(Safeguard::NoLock),
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
                c.max_pause_ms = Some(0);
            }),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease, 1 failover, no pauses",
            with(LEASE, |c| {
                c.failovers = 1;
                c.max_pause_ms = Some(0);
            }),
            Violated,
            Some(Violated),
        ),
        entry(
            "fenced, 3 callers, unbounded pauses",
            three(FENCED),
            Violated,
            Some(Violated),
        ),
        entry(
            "fenced-cas, 3 callers, unbounded pauses",
            with(FENCED_CAS, |c| {
                c.callers = 3;
                c.ttl_ms = 2;
            }),
            Safe,
            Some(Violated),
        ),
        entry(
            "fenced-cas, 2 callers, 1 failover, unbounded pauses",
            with(FENCED_CAS, |c| c.failovers = 1),
            Safe,
            Some(Violated),
        ),
        entry(
            "fenced-cas, 2 callers, TTL 4, work 3, horizon 20",
            with(FENCED_CAS, |c| {
                c.ttl_ms = 4;
                c.work_ms = 3;
                c.horizon_ms = Some(20);
            }),
            Safe,
            Some(Violated),
        ),
        entry("pg-debit, 3 callers", three(Safeguard::PgDebit), Safe, None),
        entry(
            "pg-for-update, 3 callers",
            three(Safeguard::PgForUpdate),
            Safe,
            None,
        ),
        entry(
            "lease-watchdog, TTL 6, work 8, pauses up to 3",
            with(Safeguard::LeaseWatchdog, |c| {
                c.ttl_ms = 6;
                c.work_ms = 8;
                c.max_pause_ms = Some(3);
            }),
            Safe,
            Some(Safe),
        ),
        entry(
            "lease-watchdog, TTL 6, work 8, unbounded pauses",
            with(Safeguard::LeaseWatchdog, |c| {
                c.ttl_ms = 6;
                c.work_ms = 8;
            }),
            Violated,
            Some(Violated),
        ),
    ]
}
