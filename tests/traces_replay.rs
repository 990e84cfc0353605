//! Every trace under `traces/` (except `traces/new/`, fresh and unreviewed) must still
//! reproduce: same verdict, same event log. A new file needs no code change.

use std::path::Path;

use leaselab::trace::{self, replay::replay};

#[test]
fn every_shipped_trace_reproduces() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let files = trace::files(&[root]).expect("traces/ is readable");
    assert!(!files.is_empty(), "traces/ ships traces");
    let mut failures = Vec::new();
    for path in &files {
        let loaded = match trace::load(path) {
            Ok(loaded) => loaded,
            Err(error) => {
                failures.push(error.to_string());
                continue;
            }
        };
        match replay(&loaded) {
            Ok(result) if result.reproduced() => {}
            Ok(result) => {
                failures.push(format!("{}: {}", path.display(), result.describe(&loaded)))
            }
            Err(error) => failures.push(error.to_string()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} trace(s) do not reproduce:\n{}\n(after a deliberate change, `leaselab replay --update traces/` rewrites the ones that still fail)",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn a_trace_whose_failure_was_fixed_does_not_reproduce() {
    // The same run with the fencing check on is OK: replaying the unfenced trace's file with
    // its safeguard switched must say so, not pass silently.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/tutorial");
    let path = trace::files(&[root])
        .unwrap()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("step5-fencing-unfenced"))
        .expect("the step 5 trace is shipped");
    let mut loaded = trace::load(&path).unwrap();
    loaded.scenario.safeguard = leaselab_model::safeguard::Safeguard::Fenced {
        guard: leaselab_model::postgres::WriteGuard::FenceBelow,
    };
    let result = replay(&loaded).unwrap();
    assert!(!result.reproduced());
    assert!(
        result.describe(&loaded).starts_with("no longer fails"),
        "{}",
        result.describe(&loaded)
    );
}

/// The traces under `traces/safety/` show what `docs/safety.md` says they show: an
/// `appendfsync everysec` crash reissues fencing token 33 and `fence < $2` lets it win once
/// (the ledger holds); a failover between `SET NX` and `WAIT`'s answer leaves two callers each
/// told by `WAIT` that a replica has its lock (the ledger breaks); a token-less `DEL` whose
/// connection dropped runs again after the next caller took the lock and deletes it; a
/// replica that acknowledged the lock restarts empty and is promoted before its resync loaded.
#[test]
fn the_safety_traces_show_what_they_claim() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/safety");
    let files = trace::files(&[dir]).expect("traces/safety is readable");
    let replayed = |prefix: &str| {
        let path = files
            .iter()
            .find(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.starts_with(prefix))
            })
            .unwrap_or_else(|| panic!("traces/safety has a {prefix}* trace"));
        let loaded = trace::load(path).expect("it loads");
        let result = replay(&loaded).expect("it replays");
        assert!(result.reproduced(), "{}", result.describe(&loaded));
        result.report
    };
    let crash = replayed("aof-crash-");
    assert_eq!(crash.tokens_issued, vec![33, 33]);
    assert_eq!(crash.tokens_reissued, 1);
    assert_eq!(crash.ledger.line(), "accepted=1 balance=90 expected=90 OK");
    assert_eq!(crash.ledger.rejected, 1);
    let wait = replayed("wait-failover-");
    assert_eq!(
        wait.ledger.line(),
        "accepted=2 balance=90 expected=80 BROKEN"
    );
    let waits: Vec<i64> = wait
        .events
        .iter()
        .filter_map(|event| match &event.what {
            leaselab_sim::events::What::RedisReply {
                reading: Some(leaselab_model::safeguard::Reading::Replicated { replicas }),
                ..
            } => Some(*replicas),
            _ => None,
        })
        .collect();
    assert_eq!(waits, vec![1, 1]);
    assert!(wait
        .events
        .iter()
        .any(|event| matches!(event.what, leaselab_sim::events::What::Failover { .. })));
    // A replica that acknowledged the lock, then restarted empty, is promoted: the money is gone.
    let restarted = replayed("wait-replica-restart-");
    assert!(restarted.balance_missing, "{}", restarted.ledger.line());
    assert!(restarted.broken());
    // A token-less DEL whose connection dropped runs again and deletes the next holder's lock.
    let retried = replayed("step2-lock-callers-5-work-20ms-");
    assert_eq!(
        retried.ledger.line(),
        "accepted=5 balance=60 expected=50 BROKEN"
    );
    assert!(retried
        .events
        .iter()
        .any(|event| matches!(event.what, leaselab_sim::events::What::ConnectionDropped)));
    assert!(
        retried
            .trespasses
            .iter()
            .any(|t| t.by == "app-1" && t.deleted),
        "{:?}",
        retried.trespasses
    );
}
