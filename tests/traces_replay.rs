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
