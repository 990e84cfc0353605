//! Each tutorial step reproduces the tutorial's verdict pattern over many seeds.

use leaselab_model::ledger::Verdict;
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::run::{run, RunReport};

fn runs(scenario: &Scenario, seeds: u64) -> Vec<RunReport> {
    (1..=seeds)
        .map(|seed| run(scenario, seed).expect("the scenario is valid"))
        .collect()
}

fn tutorial(step: &str, variant: Variant) -> Scenario {
    Scenario::tutorial(step, variant).expect("a tutorial step")
}

fn broken(reports: &[RunReport]) -> usize {
    reports.iter().filter(|r| r.broken()).count()
}

#[test]
fn step1_without_a_lock_every_run_loses_updates() {
    let reports = runs(&tutorial("step1-race", Variant::default()), 30);
    assert_eq!(broken(&reports), reports.len());
    for report in &reports {
        assert_eq!(report.ledger.accepted, 50, "every caller believes it paid");
        assert!(report.ledger.final_balance > 0, "{}", report.ledger.line());
        assert!(!report.ledger.stale_spends.is_empty());
    }
}

#[test]
fn step2_a_lease_keeps_every_run_ok_and_leaves_no_lock() {
    let reports = runs(&tutorial("step2-lock", Variant::default()), 20);
    for report in &reports {
        assert_eq!(
            report.ledger.line(),
            "accepted=10 balance=0 expected=0 OK",
            "seed {}",
            report.seed
        );
        assert!(!report.lock_left_behind, "seed {}", report.seed);
        assert_eq!(report.ledger.insufficient, 40);
        assert!(report.finished);
    }
}

#[test]
fn step3_work_beyond_the_ttl_breaks_and_the_watchdog_fixes_it() {
    let without = runs(&tutorial("step3-ttl", Variant::default()), 20);
    for report in &without {
        assert_eq!(
            report.ledger.verdict,
            Verdict::Broken,
            "seed {}",
            report.seed
        );
        assert!(
            report.ledger.stale_releases_refused > 0,
            "seed {}",
            report.seed
        );
    }
    let with = runs(
        &tutorial(
            "step3-ttl",
            Variant {
                watchdog: true,
                ..Variant::default()
            },
        ),
        20,
    );
    for report in &with {
        assert_eq!(report.ledger.line(), "accepted=5 balance=50 expected=50 OK");
        assert_eq!(report.ledger.stale_releases_refused, 0);
        // One after the other: about 5 x 300 ms of work.
        assert!(
            (1_500..=1_800).contains(&report.elapsed_ms),
            "seed {}: {} ms",
            report.seed,
            report.elapsed_ms
        );
    }
}

#[test]
fn step4_exponential_backoff_herds_and_full_jitter_spreads() {
    let herd = runs(&tutorial("step4-redislock", Variant::default()), 20);
    let jitter = runs(
        &tutorial(
            "step4-redislock",
            Variant {
                jitter: true,
                ..Variant::default()
            },
        ),
        20,
    );
    assert_eq!(broken(&herd), 0);
    assert_eq!(broken(&jitter), 0);
    for report in &herd {
        assert!(
            report.ledger.gave_up > 0 || report.elapsed_ms >= 1_000,
            "seed {}: the herd should be slow or leave callers behind",
            report.seed
        );
    }
    for report in &jitter {
        assert_eq!(report.ledger.gave_up, 0, "seed {}", report.seed);
        assert!(report.elapsed_ms < 1_000, "seed {}", report.seed);
    }
    let median = |reports: &[RunReport]| {
        let mut elapsed: Vec<u64> = reports.iter().map(|r| r.elapsed_ms).collect();
        elapsed.sort_unstable();
        elapsed[elapsed.len() / 2]
    };
    assert!(median(&herd) > 3 * median(&jitter));
}

#[test]
fn step5_fencing_rejects_the_paused_writer_and_unfenced_lets_it_through() {
    for report in runs(&tutorial("step5-fencing", Variant::default()), 25) {
        assert_eq!(report.ledger.line(), "accepted=1 balance=90 expected=90 OK");
        assert_eq!(report.ledger.rejected, 1);
        assert_eq!(report.final_fence, Some(34));
        assert_eq!(report.ledger.stale_releases_refused, 1);
    }
    let unfenced = Variant {
        unfenced: true,
        ..Variant::default()
    };
    for report in runs(&tutorial("step5-fencing", unfenced), 25) {
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=90 expected=80 BROKEN"
        );
        assert_eq!(report.final_fence, Some(33));
    }
}

#[test]
fn step6_a_healthy_ttl_is_ok_without_rejections() {
    for report in runs(&tutorial("step6-verify", Variant::default()), 20) {
        assert_eq!(report.ledger.line(), "accepted=10 balance=0 expected=0 OK");
        assert_eq!(report.ledger.rejected, 0);
    }
}

#[test]
fn step6_a_1ms_ttl_breaks_most_runs_and_check_and_set_fixes_every_run() {
    let mut fenced = tutorial("step6-verify", Variant::default());
    fenced.params.ttl_ms = 1;
    let reports = runs(&fenced, 20);
    assert!(
        broken(&reports) * 2 > reports.len(),
        "only {} of {} runs broke",
        broken(&reports),
        reports.len()
    );
    assert!(reports.iter().any(|r| r.ledger.accepted > 10));
    let mut cas = tutorial(
        "step6-verify",
        Variant {
            same_version: true,
            ..Variant::default()
        },
    );
    cas.params.ttl_ms = 1;
    for report in runs(&cas, 20) {
        assert_eq!(report.ledger.line(), "accepted=10 balance=0 expected=0 OK");
        assert!(report.ledger.rejected > 0, "seed {}", report.seed);
    }
}
