//! `--shard K/N` and `leaselab merge`: for each kind of command, the merge of its shards'
//! `--json` outputs prints what the unsharded command prints (text and JSON) and exits with
//! its code; bad shards and bad inputs are refused with exit 2, naming the file and field.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn leaselab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args(args)
        .output()
        .expect("leaselab runs")
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("an exit code")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8")
}

/// A fresh directory for one test's shard files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "leaselab-shard-merge-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `args --shard K/N --json` for every K, writes each output to `dir`, returns the paths
/// and the shards' exit codes.
fn shards(dir: &Path, args: &[&str], count: u64) -> (Vec<String>, Vec<i32>) {
    let mut paths = Vec::new();
    let mut codes = Vec::new();
    for index in 1..=count {
        let shard = format!("{index}/{count}");
        let mut line = args.to_vec();
        line.extend(["--shard", &shard, "--json"]);
        let output = leaselab(&line);
        assert!(
            [0, 1, 3].contains(&code(&output)),
            "{line:?}: {}",
            stderr(&output)
        );
        let path = dir.join(format!("shard-{index}.json"));
        std::fs::write(&path, &output.stdout).unwrap();
        paths.push(path.to_string_lossy().into_owned());
        codes.push(code(&output));
    }
    (paths, codes)
}

/// Merges `paths` (text, then `--json`) and checks both equal the unsharded command's, and
/// the exit codes too; `comparable` turns a JSON output into what must be equal.
fn merge_equals_unsharded(
    args: &[&str],
    paths: &[String],
    comparable: impl Fn(&str) -> String,
    text_comparable: impl Fn(&str) -> String,
) -> i32 {
    let whole_json = leaselab(&[args, &["--json"]].concat());
    let whole_text = leaselab(args);
    let path_args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let merged_text = leaselab(&[&["merge"][..], &path_args[..]].concat());
    let merged_json = leaselab(&[&["merge"][..], &path_args[..], &["--json"]].concat());
    assert_eq!(
        comparable(&stdout(&merged_json)),
        comparable(&stdout(&whole_json)),
        "{args:?}: merged JSON differs ({})",
        stderr(&merged_json)
    );
    assert_eq!(
        text_comparable(&stdout(&merged_text)),
        text_comparable(&stdout(&whole_text)),
        "{args:?}: merged text differs ({})",
        stderr(&merged_text)
    );
    assert_eq!(code(&merged_json), code(&whole_json), "{args:?}");
    assert_eq!(code(&merged_text), code(&whole_text), "{args:?}");
    code(&whole_json)
}

fn same(text: &str) -> String {
    text.to_string()
}

#[test]
fn merged_runs_equal_the_unsharded_run_byte_for_byte() {
    let dir = scratch("run");
    // Some runs break (exit 1): counts, the first BROKEN seeds, medians must all agree.
    let args = [
        "run",
        "step5-fencing",
        "--unfenced",
        "--runs",
        "7",
        "--no-save-traces",
    ];
    for count in [1, 3, 9] {
        let (paths, codes) = shards(&dir, &args, count);
        assert!(codes.contains(&1), "{count} shards: {codes:?}");
        let status = merge_equals_unsharded(&args, &paths, same, same);
        assert_eq!(status, 1);
    }
    // Runs stopped at their time limit: INCONCLUSIVE (exit 3), the note of the first one.
    let args = [
        "run",
        "step3-ttl",
        "--runs",
        "5",
        "--seed",
        "11",
        "--time-limit",
        "50ms",
        "--no-save-traces",
    ];
    let (paths, _) = shards(&dir, &args, 2);
    assert_eq!(merge_equals_unsharded(&args, &paths, same, same), 3);
    let merged = stdout(&leaselab(&["merge", &paths[1], &paths[0]]));
    assert!(
        merged.contains("inconclusive seeds: 11 12 13 14 15"),
        "{merged}"
    );
    assert!(merged.contains("seed 11: INCONCLUSIVE"), "{merged}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A token-less release retried after a dropped connection deletes the next holder's lock in
/// some seeds while the ledger stays OK: the batch says so, exits 1, and merges the same.
#[test]
fn merged_runs_keep_the_runs_where_a_caller_changed_a_lock_it_did_not_hold() {
    let dir = scratch("trespass");
    let args = [
        "run",
        "step2-lock",
        "--safeguard",
        "setnx-del",
        "--callers",
        "2",
        "--work",
        "20ms",
        "--drop-connection",
        "1:release",
        // The seeds below are the 1 ms tick's (on `localhost` others trespass).
        "--timing",
        "tick-1ms",
        "--runs",
        "5",
        "--no-save-traces",
    ];
    let whole = leaselab(&args);
    let text = stdout(&whole);
    assert!(text.contains("BROKEN in 0 of 5 runs"), "{text}");
    assert!(
        text.contains("VIOLATED only the holder changes the lock, in 1 of 5 runs: seeds 1"),
        "{text}"
    );
    assert!(
        text.contains("seed 1: app-1 deleted the lock of app-2 at 32.000ms"),
        "{text}"
    );
    assert_eq!(code(&whole), 1, "a violation, though no run is BROKEN");
    let (paths, _) = shards(&dir, &args, 2);
    assert_eq!(merge_equals_unsharded(&args, &paths, same, same), 1);
    // One run alone says it under its ledger line.
    let single = leaselab(&args[..args.len() - 3]);
    assert!(
        stdout(&single).contains(
            "accepted=2 balance=80 expected=80 OK\nVIOLATED only the holder changes the lock: \
             app-1 deleted the lock of app-2 at 32.000ms"
        ),
        "{}",
        stdout(&single)
    );
    assert_eq!(code(&single), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_shard_summary_says_which_part_it_is() {
    let output = leaselab(&[
        "run",
        "step5-fencing",
        "--runs",
        "5",
        "--shard",
        "2/2",
        "--no-save-traces",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("5 runs, seeds 1..=5 (shard 2/2: 2 of them)"),
        "{text}"
    );
    assert!(text.contains("BROKEN in 0 of 2 runs"), "{text}");
}

/// A suite check's JSON without its timings (wall-clock time differs between any two runs).
fn suite_without_timings(text: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    for entry in value.as_array_mut().expect("an array of checks") {
        let check = entry["check"].as_object_mut().expect("a check");
        check.remove("elapsed_s");
        check.remove("unique_states_per_s");
    }
    value.to_string()
}

/// A suite's text without the seconds column.
fn suite_text_without_timings(text: &str) -> String {
    text.lines()
        .map(|line| {
            line.split_whitespace()
                .filter(|word| {
                    word.strip_suffix('s')
                        .is_none_or(|number| number.parse::<f64>().is_err())
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_merged_suite_equals_the_unsharded_suite() {
    let dir = scratch("suite");
    let args = ["check", "--suite", "smoke", "--no-save-traces"];
    let (paths, _) = shards(&dir, &args, 3);
    let status = merge_equals_unsharded(
        &args,
        &paths,
        suite_without_timings,
        suite_text_without_timings,
    );
    assert_eq!(status, 0);
    let merged = stdout(&leaselab(&["merge", &paths[2], &paths[0], &paths[1]]));
    assert!(
        merged.ends_with("10 of 10 checks as expected, 0 inconclusive, 0 unexpected\n"),
        "{merged}"
    );
    // --shard belongs to a suite.
    let output = leaselab(&["check", "--safeguard", "lease", "--shard", "1/2"]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("only a suite is split"),
        "{}",
        stderr(&output)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_merged_tour_equals_the_unsharded_tour() {
    let dir = scratch("tour");
    let args = ["tour", "--runs", "2", "--no-save-traces"];
    let (paths, _) = shards(&dir, &args, 4);
    merge_equals_unsharded(&args, &paths, same, same);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_merged_matrix_equals_the_unsharded_matrix() {
    let dir = scratch("matrix");
    let args = [
        "matrix",
        "--runs",
        "2",
        "--safeguard",
        "lease",
        "--safeguard",
        "fenced-cas",
        "--fault",
        "none",
        "--fault",
        "ttl-1ms",
        "--fault",
        "failover",
        "--no-save-traces",
    ];
    let (paths, _) = shards(&dir, &args, 4);
    merge_equals_unsharded(&args, &paths, same, same);
    // One shard per cell, and more shards than cells (some shards empty).
    for count in [6, 8] {
        let (paths, _) = shards(&dir, &args, count);
        merge_equals_unsharded(&args, &paths, same, same);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_shards_and_bad_inputs_are_refused_with_exit_2() {
    for shard in ["0/4", "5/4", "1/0", "2", "x/2"] {
        let output = leaselab(&["run", "step5-fencing", "--runs", "4", "--shard", shard]);
        assert_eq!(code(&output), 2, "--shard {shard}");
        assert!(stderr(&output).contains("write K/N"), "{}", stderr(&output));
    }
    let dir = scratch("refuse");
    let run = ["run", "step5-fencing", "--runs", "4", "--no-save-traces"];
    let (paths, _) = shards(&dir, &run, 3);
    let refuse = |args: &[&str], needle: &str| {
        let output = leaselab(&[&["merge"][..], args].concat());
        assert_eq!(code(&output), 2, "merge {args:?}: {}", stdout(&output));
        assert!(
            stderr(&output).contains(needle),
            "merge {args:?}: {}",
            stderr(&output)
        );
    };
    refuse(&[&paths[0], &paths[1]], "shard(s) 3/3 missing");
    refuse(&[&paths[0], &paths[1], &paths[2], &paths[1]], "given twice");
    // Another split, another seed range, another command.
    let two = dir.join("two.json");
    std::fs::write(
        &two,
        leaselab(&[&run[..], &["--shard", "1/2", "--json"]].concat()).stdout,
    )
    .unwrap();
    refuse(
        &[&paths[0], &paths[1], two.to_str().unwrap()],
        "give the shards of one split",
    );
    let seeds = dir.join("seeds.json");
    std::fs::write(
        &seeds,
        leaselab(&[&run[..], &["--seed", "2", "--shard", "3/3", "--json"]].concat()).stdout,
    )
    .unwrap();
    refuse(
        &[&paths[0], &paths[1], seeds.to_str().unwrap()],
        "field 'first_seed' is 2",
    );
    let tour = dir.join("tour.json");
    std::fs::write(
        &tour,
        leaselab(&[
            "tour",
            "--runs",
            "1",
            "--no-save-traces",
            "--shard",
            "3/3",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    refuse(
        &[&paths[0], &paths[1], tour.to_str().unwrap()],
        "field 'command' is \"tour\"",
    );
    // Not JSON, not a shard, a shard cut short.
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "not json").unwrap();
    refuse(&[junk.to_str().unwrap()], "not JSON");
    let whole = dir.join("whole.json");
    std::fs::write(&whole, leaselab(&[&run[..], &["--json"]].concat()).stdout).unwrap();
    refuse(
        &[whole.to_str().unwrap()],
        "no 'command' and 'shard' fields",
    );
    let cut = dir.join("cut.json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&paths[2]).unwrap()).unwrap();
    value["runs"] = 0.into();
    std::fs::write(&cut, value.to_string()).unwrap();
    refuse(
        &[&paths[0], &paths[1], cut.to_str().unwrap()],
        "field 'runs' is 0",
    );
    refuse(
        &[dir.join("absent.json").to_str().unwrap()],
        "cannot read it",
    );
    // A run listed twice in place of another; a shard that names no counters.
    let twice = dir.join("twice.json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&paths[0]).unwrap()).unwrap();
    let first_run = value["runs_detail"][0].clone();
    let runs_listed = value["runs_detail"].as_array().unwrap().len();
    assert!(runs_listed >= 2, "shard 1 of 4 runs in 3 lists two runs");
    value["runs_detail"][1] = first_run;
    std::fs::write(&twice, value.to_string()).unwrap();
    refuse(
        &[twice.to_str().unwrap(), &paths[1], &paths[2]],
        "lists seed",
    );
    let nameless = dir.join("nameless.json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&paths[0]).unwrap()).unwrap();
    value["counters"] = serde_json::json!([]);
    std::fs::write(&nameless, value.to_string()).unwrap();
    refuse(
        &[nameless.to_str().unwrap(), &paths[1], &paths[2]],
        "names other counters",
    );
    // A device is not read at all (it would never end), nor a fifo waited on.
    refuse(&["/dev/zero"], "a device, not a regular file");
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    refuse(&[fifo.to_str().unwrap()], "a named pipe (fifo)");
    // Matrix shards whose names would ask for rows x columns cells: refused before any cell
    // is laid out (a file of 2 MB asked for 5.6 TB).
    let matrix = |rows: Vec<String>, columns: Vec<String>| {
        let path = dir.join("matrix.json");
        let value = serde_json::json!({
            "command": "matrix", "shard": "1/1", "rows": rows, "columns": columns,
            "runs": 16, "first_seed": 1, "max_states": 1000, "cells": [],
        });
        std::fs::write(&path, value.to_string()).unwrap();
        path
    };
    let names = |count: usize, name: &str| vec![name.to_string(); count];
    let path = matrix(names(1, "lease"), names(100_000, "failover"));
    refuse(&[path.to_str().unwrap()], "'failover' is given twice");
    let many: Vec<String> = (0..100_000).map(|n| format!("row-{n}")).collect();
    let path = matrix(many, names(1, "failover"));
    refuse(&[path.to_str().unwrap()], "100000 safeguards");
    let path = matrix(names(2, "lease"), names(1, "failover"));
    refuse(&[path.to_str().unwrap()], "'lease' is given twice");
    let path = matrix(Vec::new(), Vec::new());
    refuse(&[path.to_str().unwrap()], "no rows or no columns");
    std::fs::remove_dir_all(&dir).unwrap();
}
