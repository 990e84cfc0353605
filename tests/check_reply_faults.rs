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

/// The lost-replies table of `docs/safety.md`, row by row where a check takes under a second
/// in a debug build (the duplicated-acquire column's checks take 1–16 s each: `lease` and
/// `redislock-no-retry` stand for it): a duplicated acquire and a lost release reply are
/// tolerated by every lock safeguard; a retried release is not by the token-less `SETNX`
/// locks, whose second `DEL` deletes the next holder's lock.
#[test]
fn the_lost_replies_table_of_the_safety_page() {
    let rows: [(&str, &str, &str, [&str; 3]); 9] = [
        (
            "setnx-del",
            "--dropped-connections",
            "release",
            ["SAFE", "SAFE", "VIOLATED"],
        ),
        (
            "setnx-expire",
            "--dropped-connections",
            "release",
            ["SAFE", "SAFE", "VIOLATED"],
        ),
        (
            "lease",
            "--dropped-connections",
            "release",
            ["SAFE", "SAFE", "SAFE"],
        ),
        (
            "lease",
            "--lost-replies",
            "release",
            ["SAFE", "SAFE", "SAFE"],
        ),
        (
            "redislock-no-retry",
            "--dropped-connections",
            "acquire",
            ["SAFE", "SAFE", "SAFE"],
        ),
        (
            "redislock-no-retry",
            "--lost-replies",
            "release",
            ["SAFE", "SAFE", "SAFE"],
        ),
        (
            "fenced",
            "--dropped-connections",
            "release",
            ["SAFE", "SAFE", "SAFE"],
        ),
        (
            "fenced",
            "--lost-replies",
            "release",
            ["SAFE", "SAFE", "SAFE"],
        ),
        (
            "fenced-unchecked",
            "--lost-replies",
            "release",
            ["SAFE", "SAFE", "SAFE"],
        ),
    ];
    for (safeguard, fault, on, verdicts) in rows {
        let output = leaselab(&[
            "check",
            "--safeguard",
            safeguard,
            "--max-pause",
            "0",
            "--horizon",
            "30",
            fault,
            "1",
            "--reply-faults-on",
            on,
            "--no-save-traces",
            "--json",
        ]);
        let report = json(&output);
        let verdict = |name: &str| {
            report["properties"]
                .as_array()
                .expect("properties")
                .iter()
                .find(|p| p["name"] == name)
                .unwrap_or_else(|| panic!("{name} is checked"))["verdict"]
                .as_str()
                .expect("a verdict")
                .to_string()
        };
        let found = [
            verdict("ledger holds"),
            verdict("mutual exclusion"),
            verdict("only the holder changes the lock"),
        ];
        assert_eq!(
            found, verdicts,
            "{safeguard} {fault} 1 --reply-faults-on {on}"
        );
        let violated = verdicts.contains(&"VIOLATED");
        assert_eq!(
            output.status.code(),
            Some(i32::from(violated)),
            "{output:?}"
        );
    }
}

/// The same lease, crashed once with Redis reloading an append-only file: `everysec` (the
/// file fsynced at the start, then at moments the search picks) loses the balance kept in Redis, `always` loses nothing;
/// the JSON says which file the crash reloaded.
#[test]
fn a_crash_reloading_an_aof_fsynced_before_every_reply_keeps_the_lease() {
    for (appendfsync, code, verdict) in [("everysec", 1, "VIOLATED"), ("always", 0, "SAFE")] {
        let mut args = LEASE_NO_PAUSES.to_vec();
        args.extend([
            "--restarts",
            "1",
            "--restart-from-aof",
            "--appendfsync",
            appendfsync,
            "--no-save-traces",
            "--json",
        ]);
        let output = leaselab(&args);
        assert_eq!(output.status.code(), Some(code), "{output:?}");
        let report = json(&output);
        assert_eq!(report["restart_reloads"], format!("aof-{appendfsync}"));
        assert_eq!(report["restarts"], 1);
        assert_eq!(ledger(&report)["verdict"], verdict, "{appendfsync}");
    }
    let output = leaselab(&[&LEASE_NO_PAUSES[..], &["--json"]].concat());
    assert_eq!(json(&output)["restart_reloads"], "nothing");
    // A frontier says the same of every cell, in its header and its JSON.
    let sweep = [
        "frontier",
        "--safeguard",
        "lease",
        "--ttl",
        "3",
        "--work",
        "1",
        "--restarts",
        "1",
        "--restart-from-aof",
        "--appendfsync",
        "always",
    ];
    let output = leaselab(&sweep);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("reloads its append-only file (appendfsync always)"),
        "{text}"
    );
    let output = leaselab(&[&sweep[..], &["--json"]].concat());
    let report = json(&output);
    assert_eq!(report["restart_reloads"], "aof-always");
    assert_eq!(report["restarts"], 1);
}
