//! `leaselab check` with the world's reply faults from the command line: without them the
//! lease keeps the ledger when nobody pauses; one dropped connection (the client retries the
//! write after the lease is gone) breaks it, and the counterexample is not saved as a trace
//! the simulation could not reproduce.

use std::path::PathBuf;
use std::process::{Command, Output};

fn leaselab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .output()
        .expect("leaselab runs")
}

const LEASE_NO_PAUSES: [&str; 7] = [
    "check",
    "--safeguard",
    "lease",
    "--max-pause",
    "0",
    "--horizon",
    "12",
];

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("--json prints JSON")
}

fn ledger(report: &serde_json::Value) -> &serde_json::Value {
    report["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["name"] == "ledger holds")
        .expect("the ledger property")
}

#[test]
fn without_reply_faults_the_lease_keeps_the_ledger_when_nobody_pauses() {
    let mut args = LEASE_NO_PAUSES.to_vec();
    args.push("--json");
    let output = leaselab(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = json(&output);
    assert_eq!(report["dropped_connections"], 0);
    assert_eq!(ledger(&report)["verdict"], "SAFE");
}

#[test]
fn one_dropped_connection_breaks_the_lease_with_a_retried_write() {
    let mut args = LEASE_NO_PAUSES.to_vec();
    args.extend(["--dropped-connections", "1", "--json"]);
    let output = leaselab(&args);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = json(&output);
    assert_eq!(report["verdict"], "VIOLATED");
    assert_eq!(report["dropped_connections"], 1);
    assert_eq!(report["lost_replies"], 0);
    let ledger = ledger(&report);
    assert_eq!(ledger["verdict"], "VIOLATED");
    // The pinned shortest counterexample: caller 1's write runs, its connection breaks, the
    // client retries after the lease expired and caller 2 wrote: the retry overwrites it.
    assert_eq!(ledger["steps"], 19);
    let trace: Vec<&str> = ledger["trace"]
        .as_array()
        .expect("trace")
        .iter()
        .map(|line| line.as_str().expect("text"))
        .collect();
    assert!(
        trace[5].starts_with("6. caller 1 loses its connection with the reply in flight"),
        "{trace:#?}"
    );
    assert!(trace[8].contains("lease of caller 1 expires"), "{trace:#?}");
    assert_eq!(trace[14], "15. caller 1 writes balance 10");
    let outcome = ledger["outcome"].to_string();
    assert!(
        outcome.contains("accepted=2 balance=10 expected=0 BROKEN"),
        "{outcome}"
    );
}

#[test]
fn a_counterexample_the_simulation_cannot_schedule_is_not_saved_as_a_trace() {
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "leaselab-check-reply-faults-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_text = dir.to_str().expect("utf-8 temp dir").to_string();
    let mut args = LEASE_NO_PAUSES.to_vec();
    args.extend(["--dropped-connections", "1", "--save-traces", &dir_text]);
    let output = leaselab(&args);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("counterexample not saved as a trace")
            && stderr.contains("drop-connection 1"),
        "{stderr}"
    );
    let saved = std::fs::read_dir(&dir).map_or(0, |entries| entries.count());
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(saved, 0, "nothing is saved");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("--dropped-connections 1 --explore"),
        "the hint reproduces the check: {stdout}"
    );
}

#[test]
fn reply_faults_are_refused_where_they_cannot_apply_or_explode_the_search() {
    for (args, says) in [
        (
            vec!["check", "--safeguard", "lease", "--lost-replies", "4"],
            "--lost-replies 4",
        ),
        (
            vec![
                "check",
                "--safeguard",
                "pg-debit",
                "--dropped-connections",
                "1",
            ],
            "no Redis reply can go astray",
        ),
    ] {
        let output = leaselab(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// `frontier` takes the same reply-fault flags: with a dropped connection the lease breaks
/// even without pauses (the boundary drops to "-"), its header and JSON say so, and a
/// budget the checker refuses is refused there too.
#[test]
fn frontier_sweeps_with_the_same_reply_fault_flags() {
    let sweep = [
        "frontier",
        "--safeguard",
        "lease",
        "--ttl",
        "3",
        "--work",
        "1",
        "--horizon",
        "12",
    ];
    let boundary = |extra: &[&str]| {
        let output = leaselab(&[&sweep[..], extra, &["--json"]].concat());
        assert_eq!(output.status.code(), Some(0), "{extra:?}: {output:?}");
        let report = json(&output);
        (
            report["cells"][0]["boundary"].clone(),
            report["dropped_connections"].clone(),
        )
    };
    let (without, none) = boundary(&[]);
    let (with, one) = boundary(&["--dropped-connections", "1"]);
    assert_eq!((none, one), (0.into(), 1.into()));
    assert_ne!(without, with, "a dropped connection moves the boundary");
    assert_eq!(with, serde_json::json!({"kind": "none"}));
    let text = leaselab(&[&sweep[..], &["--dropped-connections", "1"]].concat());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("up to 1 dropped connection(s) with a reply in flight"),
        "{text}"
    );
    let refused = leaselab(&[&sweep[..], &["--lost-replies", "4"]].concat());
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
}
