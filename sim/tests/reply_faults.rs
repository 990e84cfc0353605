//! Reply faults in the simulation (`run --lose-reply`, `--drop-connection`): the request runs on
//! the server, then its reply is lost (the caller waits out its read timeout) or its connection
//! breaks (the client sends the request again on a new one, as go-redis retries). The same
//! faults as the checker's `--lost-replies` / `--dropped-connections`, on a schedule a person
//! can read.

use leaselab_model::fault::Fault;
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::Safeguard;
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_model::world::FaultsOn;
use leaselab_sim::events::What;
use leaselab_sim::run::{run, RunReport};

/// Step 2's lock with `callers` callers, `work_ms` of work, and `faults`.
fn step2(safeguard: Safeguard, callers: u32, work_ms: u64, faults: Vec<Fault>) -> Scenario {
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    scenario.safeguard = safeguard;
    scenario.callers = callers;
    scenario.params.work_ms = work_ms;
    scenario.faults = faults;
    scenario
}

fn count(report: &RunReport, wanted: fn(&What) -> bool) -> usize {
    report.events.iter().filter(|e| wanted(&e.what)).count()
}

/// A token-less `DEL` whose connection drops runs again on a new connection after the next
/// caller took the lock: it deletes that caller's lock, a third caller takes it, and two
/// callers write over each other. The same faults leave the compare-and-delete release OK.
#[test]
fn a_retried_token_less_release_deletes_the_next_holders_lock() {
    let dropped = vec![Fault::DroppedConnection {
        caller: 1,
        on: FaultsOn::Release,
    }];
    let del = step2(Safeguard::SetnxDel, 5, 20, dropped.clone());
    let report = run(&del, 1).unwrap();
    assert!(report.broken(), "{}", report.ledger.line());
    assert_eq!(count(&report, |w| matches!(w, What::ConnectionDropped)), 1);
    assert!(
        report
            .trespasses
            .iter()
            .any(|t| t.by == "app-1" && t.deleted),
        "{:?}",
        report.trespasses
    );
    let lease = step2(
        Safeguard::Lease {
            release: ReleaseVia::Script,
        },
        5,
        20,
        dropped,
    );
    for seed in 1..=5 {
        let report = run(&lease, seed).unwrap();
        assert!(!report.broken(), "seed {seed}: {}", report.ledger.line());
        assert!(report.trespasses.is_empty(), "seed {seed}");
    }
}

/// A fenced acquire whose connection drops ran its script: the retry finds the caller's own
/// key (busy), so the caller waits out its own lease, and the token the lost reply carried
/// is never used: the counter ends one past the callers.
#[test]
fn a_duplicated_fenced_acquire_skips_a_token_and_keeps_the_ledger() {
    let mut scenario = step2(
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelow,
        },
        2,
        2,
        vec![Fault::DroppedConnection {
            caller: 1,
            on: FaultsOn::Acquire,
        }],
    );
    scenario.initial_fence_counter = 32;
    // B starts later, so that the acquire whose reply is lost is one that took the lock.
    scenario.start_offsets_ms = vec![0, 50];
    for seed in 1..=5 {
        let report = run(&scenario, seed).unwrap();
        assert_eq!(
            report.ledger.line(),
            "accepted=2 balance=80 expected=80 OK",
            "seed {seed}"
        );
        assert_eq!(report.final_fence, Some(35), "seed {seed}");
        let retries = count(&report, |w| matches!(w, What::Retry { .. }));
        assert!(retries >= 1, "seed {seed}: the acquire was not sent again");
    }
}

/// A release whose reply is lost has run: the next caller gets the lock at once, while the
/// caller that sent it waits out its 3 s read timeout before it ends.
#[test]
fn a_lost_release_reply_costs_the_sender_its_read_timeout_and_nothing_else() {
    let scenario = step2(
        Safeguard::Lease {
            release: ReleaseVia::Script,
        },
        2,
        2,
        vec![Fault::LostReply {
            caller: 1,
            on: FaultsOn::Release,
        }],
    );
    let report = run(&scenario, 1).unwrap();
    assert_eq!(report.ledger.line(), "accepted=2 balance=80 expected=80 OK");
    assert_eq!(count(&report, |w| matches!(w, What::ReplyLost)), 1);
    let done = |host: &str| {
        report
            .callers
            .iter()
            .find(|c| c.host == host)
            .and_then(|c| c.done_at_ms)
            .expect("the caller finished")
    };
    assert!(done("app-1") >= 3_000, "app-1 ended at {}ms", done("app-1"));
    assert!(done("app-2") < 1_000, "app-2 ended at {}ms", done("app-2"));
}

/// A fault on a caller that does not exist, or on a safeguard that sends nothing to Redis, is
/// refused before the run.
#[test]
fn reply_faults_on_no_such_caller_or_without_redis_are_refused() {
    let nobody = step2(
        Safeguard::SetnxDel,
        2,
        2,
        vec![Fault::LostReply {
            caller: 3,
            on: FaultsOn::Any,
        }],
    );
    let error = run(&nobody, 1).unwrap_err();
    assert!(error.0.contains("no caller 3"), "{}", error.0);
    let postgres_only = step2(
        Safeguard::PgDebit,
        2,
        2,
        vec![Fault::DroppedConnection {
            caller: 1,
            on: FaultsOn::Any,
        }],
    );
    let error = run(&postgres_only, 1).unwrap_err();
    assert!(error.0.contains("sends no Redis request"), "{}", error.0);
}
