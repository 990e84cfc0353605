//! Bad and extreme input to the simulated runs: `run`, `tour` and `bench` with zero, huge and
//! overflowing counts and seeds, durations past the simulation's limits, trace directories
//! that cannot be written, conflicting flags, and runs that stop at their time limit. Each
//! case asserts the exit code, that no panic text appears, and what the output names.

mod common;

use std::time::{Duration, Instant};

use common::bad_input::{check_all, scratch, Case};

const MAX_SEED: &str = "18446744073709551615";

#[test]
fn careless_and_extreme_runs_get_the_documented_exit_code_and_a_message() {
    let file = scratch("run-save-into-a-file").join("a-file");
    std::fs::write(&file, b"not a directory").expect("a file");
    let under_file = file.join("traces");
    check_all(vec![
        // Counts and seeds.
        // Reply faults.
        Case::new(
            "a reply fault on an unknown request",
            &["run", "step2-lock", "--lose-reply", "1:write"],
            2,
            &["--lose-reply 1:write", "acquire, release or any"],
        ),
        Case::new(
            "a reply fault without a caller",
            &["run", "step2-lock", "--drop-connection", "release"],
            2,
            &["--drop-connection release", "CALLER:ON"],
        ),
        Case::new(
            "a reply fault on no such caller",
            &[
                "run",
                "step2-lock",
                "--callers",
                "2",
                "--lose-reply",
                "9:any",
            ],
            2,
            &["no caller 9"],
        ),
        Case::new(
            "a reply fault on a safeguard without Redis",
            &["run", "rmw-serializable", "--drop-connection", "1:any"],
            2,
            &["sends no Redis request"],
        ),
        Case::new(
            "runs zero",
            &["run", "step5-fencing", "--runs", "0"],
            2,
            &["--runs must be at least 1"],
        ),
        Case::new(
            "the largest seed alone is a valid run",
            &[
                "run",
                "step5-fencing",
                "--seed",
                MAX_SEED,
                "--no-save-traces",
            ],
            0,
            &["seed=18446744073709551615", "OK"],
        ),
        Case::new(
            "seeds that would wrap",
            &["run", "step5-fencing", "--seed", MAX_SEED, "--runs", "2"],
            2,
            &["do not wrap", "--runs 1 or fewer"],
        ),
        Case::new(
            "the most runs from seed 2 wrap",
            &["run", "step5-fencing", "--seed", "2", "--runs", MAX_SEED],
            2,
            &["do not wrap", "--runs 18446744073709551614 or fewer"],
        ),
        Case::new(
            "runs past u64",
            &["run", "step5-fencing", "--runs", "18446744073709551616"],
            2,
            &["--runs"],
        ),
        Case::new(
            "negative seed",
            &["run", "step5-fencing", "--seed", "-1"],
            2,
            &["-1"],
        ),
        Case::new(
            "the last seeds up to the largest",
            &[
                "run",
                "step5-fencing",
                "--seed",
                "18446744073709551613",
                "--runs",
                "3",
                "--no-save-traces",
            ],
            0,
            &[
                "seeds 18446744073709551613..=18446744073709551615",
                "BROKEN in 0 of 3",
            ],
        ),
        // Callers.
        Case::new(
            "callers past the simulation's limit",
            &["run", "step2-lock", "--callers", "501"],
            2,
            &["at most 500 callers", "--callers 500"],
        ),
        Case::new(
            "callers past u32",
            &["run", "step2-lock", "--callers", "4294967296"],
            2,
            &["--callers"],
        ),
        // Runs that put nothing to the test.
        Case::new(
            "nothing to spend: a run in which no spend reaches the storage is inconclusive",
            &["run", "step2-lock", "--callers", "5", "--balance", "0"],
            3,
            &[
                "accepted=0 balance=0 expected=0 INCONCLUSIVE",
                "no spend reached the storage (5 found too little money)",
                "--balance",
            ],
        ),
        Case::new(
            "a batch of only such runs is inconclusive",
            &[
                "run",
                "step2-lock",
                "--callers",
                "5",
                "--balance",
                "0",
                "--runs",
                "3",
            ],
            3,
            &[
                "OK in 0; untested in 3 (no spend reached the storage)",
                "untested seeds: 1 2 3",
            ],
        ),
        Case::new(
            "a batch is judged on its tested runs: one untested seed beside a tested one is OK",
            &[
                "run",
                "transfer-unordered",
                "--callers",
                "50",
                "--runs",
                "2",
                "--no-save-traces",
            ],
            0,
            &[
                "OK in 1; untested in 1",
                "seed 1: untested: no spend reached the storage (50 failed; first: app-1 failed",
            ],
        ),
        // Time limits.
        Case::new(
            "long work past a short time limit is inconclusive, fast",
            &[
                "run",
                "step2-lock",
                "--callers",
                "2",
                "--work",
                "119s",
                "--time-limit",
                "1s",
            ],
            3,
            &[
                "INCONCLUSIVE",
                "2 of 2 callers were still running",
                "--time-limit",
            ],
        )
        .deadline(Duration::from_secs(20)),
        Case::new(
            "inconclusive runs are counted in the summary",
            &[
                "run",
                "step2-lock",
                "--callers",
                "2",
                "--work",
                "119s",
                "--time-limit",
                "500ms",
                "--runs",
                "3",
            ],
            3,
            &[
                "BROKEN in 0 of 3 runs; INCONCLUSIVE in 3",
                "inconclusive seeds: 1 2 3",
            ],
        )
        .deadline(Duration::from_secs(20)),
        Case::new(
            "inconclusive runs are counted in the JSON summary",
            &[
                "run",
                "step2-lock",
                "--callers",
                "2",
                "--work",
                "119s",
                "--time-limit",
                "500ms",
                "--runs",
                "2",
                "--json",
            ],
            3,
            &["\"inconclusive_runs\": 2", "\"verdict\":\"INCONCLUSIVE\""],
        )
        .deadline(Duration::from_secs(20)),
        Case::new(
            "a violation seen before the time limit is still a violation",
            &[
                "run",
                "step1-race",
                "--callers",
                "3",
                "--pause",
                "3:after-read:10s",
                "--time-limit",
                "1s",
                "--no-save-traces",
            ],
            1,
            &["BROKEN although 1 of 3 callers were still running"],
        )
        .deadline(Duration::from_secs(20)),
        Case::new(
            "time limit zero",
            &["run", "step2-lock", "--time-limit", "0"],
            2,
            &["--time-limit", "between 1ms and 60m"],
        ),
        Case::new(
            "time limit past an hour",
            &["run", "step2-lock", "--time-limit", "61m"],
            2,
            &["--time-limit", "60m"],
        ),
        Case::new(
            "huge work is refused by the duration parser",
            &["run", "step2-lock", "--work", "99999999999999s"],
            2,
            &["too long"],
        ),
        // Trace directories.
        Case::new(
            "save traces under /proc",
            &[
                "run",
                "step5-fencing",
                "--unfenced",
                "--save-traces",
                "/proc/x",
            ],
            2,
            &["--save-traces /proc/x", "--no-save-traces"],
        ),
        Case::new(
            "save traces into a file",
            &["run", "step5-fencing", "--unfenced"],
            2,
            &["--save-traces", "a-file"],
        )
        .with_args(vec![
            "run".into(),
            "step5-fencing".into(),
            "--unfenced".into(),
            "--save-traces".into(),
            file.display().to_string(),
        ]),
        Case::new(
            "save traces under a file",
            &["run", "step5-fencing"],
            2,
            &["--save-traces", "cannot create"],
        )
        .with_args(vec![
            "run".into(),
            "step5-fencing".into(),
            "--save-traces".into(),
            under_file.display().to_string(),
        ]),
        Case::new(
            "tour saves traces under /proc",
            &["tour", "--runs", "1", "--save-traces", "/proc/x"],
            2,
            &["--save-traces /proc/x"],
        ),
        // Conflicting flags.
        Case::new(
            "save-all-traces and no-save-traces",
            &[
                "run",
                "step5-fencing",
                "--save-all-traces",
                "--no-save-traces",
            ],
            2,
            &["--no-save-traces"],
        ),
        Case::new(
            "save-traces and no-save-traces",
            &[
                "run",
                "step5-fencing",
                "--save-traces",
                "x",
                "--no-save-traces",
            ],
            2,
            &["--no-save-traces"],
        ),
        Case::new(
            "events of many runs",
            &["run", "step5-fencing", "--events", "--runs", "2"],
            2,
            &["--events"],
        ),
        Case::new(
            "tour save-all-traces and no-save-traces",
            &["tour", "--save-all-traces", "--no-save-traces"],
            2,
            &["--no-save-traces"],
        ),
        // Tour and bench counts.
        Case::new(
            "tour runs zero",
            &["tour", "--runs", "0"],
            2,
            &["--runs must be at least 1"],
        ),
        Case::new(
            "tour runs past u64",
            &["tour", "--runs", "18446744073709551616"],
            2,
            &["--runs"],
        ),
        Case::new(
            "bench step5 runs zero",
            &["bench", "--step5-runs", "0"],
            2,
            &["--step5-runs must be at least 1"],
        ),
        Case::new(
            "bench step6 runs zero",
            &["bench", "--step5-runs", "1", "--step6-runs", "0"],
            2,
            &["--step6-runs must be at least 1"],
        ),
        Case::new(
            "bench negative runs",
            &["bench", "--step5-runs", "-1"],
            2,
            &["-1"],
        ),
        Case::new(
            "bench step2 runs zero",
            &["bench", "--step2-runs", "0"],
            2,
            &["--step2-runs must be at least 1"],
        ),
        Case::new(
            "bench real runs zero",
            &["bench", "--real-runs", "0"],
            2,
            &["--real-runs must be at least 1"],
        ),
        Case::new(
            "bench scaling with servers",
            &["bench", "--scaling", "--redis", "redis://127.0.0.1:6379"],
            2,
            &["--scaling"],
        ),
        Case::new(
            "bench one run each",
            &[
                "bench",
                "--step2-runs",
                "1",
                "--step5-runs",
                "1",
                "--step6-runs",
                "1",
            ],
            0,
            &[
                "step2-lock (50 callers), simulated: 1 runs",
                "step5-fencing (2 callers), simulated: 1 runs",
                "step6-verify --ttl 1ms (50 callers), simulated: 1 runs",
            ],
        ),
    ]);
}

#[test]
fn tour_saves_one_trace_per_breaking_row_by_default_and_says_where() {
    let dir = scratch("tour-one-trace-per-row");
    let case =
        Case::new("tour one trace per row", &["tour", "--runs", "2"], 0, &[]).in_dir(dir.clone());
    let outcome = common::bad_input::run(&case);
    assert_eq!(
        outcome.code,
        Some(0),
        "{}\n{}",
        outcome.stdout,
        outcome.stderr
    );
    let saved: Vec<_> = std::fs::read_dir(dir.join("traces/new"))
        .expect("traces/new")
        .collect();
    // Five rows break in every run (step1, step3, step5 --unfenced, step6 --ttl 1ms,
    // failover --unfenced): one trace each, not one per run.
    assert_eq!(saved.len(), 5, "{}", outcome.stdout);
    assert!(
        outcome.stdout.contains("5 trace(s) saved in traces/new"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome
            .stdout
            .contains("  step1-race: traces/new/step1-race-"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("INCONCLUSIVE"),
        "the table has the column"
    );
}

#[test]
fn a_billion_runs_start_without_allocating_for_them() {
    // Peak memory stays flat however many runs are asked for: nothing is preallocated from
    // the count, and results are aggregated as they come. Stop it after a few seconds.
    let dir = scratch("a-billion-runs");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_leaselab"))
        .args([
            "run",
            "step5-fencing",
            "--runs",
            "1000000000",
            "--no-save-traces",
        ])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("leaselab starts");
    let started = Instant::now();
    let mut peak_kb = 0u64;
    while started.elapsed() < Duration::from_secs(3) {
        if let Some(status) = child.try_wait().expect("wait") {
            panic!(
                "a billion runs ended after {:?}: {status}",
                started.elapsed()
            );
        }
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        if let Some(kb) = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
        {
            peak_kb = peak_kb.max(kb);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().expect("stop it");
    let _ = child.wait();
    assert!(peak_kb > 0, "read the peak memory");
    assert!(peak_kb < 100 * 1024, "peak RSS {peak_kb} kB");
}

#[test]
fn careless_redlock_node_faults_get_exit_2_and_say_how_to_fix_them() {
    check_all(vec![
        Case::new(
            "a node restart without a time",
            &["run", "redlock-restart", "--node-restart", "redis-2"],
            2,
            &["write NODE:AT or NODE:AT:DOWN", "redis-2:150ms"],
        ),
        Case::new(
            "a node that is not a Redlock node",
            &["run", "redlock-restart", "--node-restart", "redis:10ms"],
            2,
            &["'redis' is not a Redlock node", "redis-1 to redis-9"],
        ),
        Case::new(
            "a node past the run's nodes",
            &["run", "redlock-restart", "--node-restart", "redis-5:10ms"],
            2,
            &["there is no redis-5", "redis-1 to redis-3"],
        ),
        Case::new(
            "a node fault on a single Redis",
            &["run", "step2-lock", "--clock-drift", "redis-1:+50%"],
            2,
            &["Redlock node", "--safeguard redlock"],
        ),
        Case::new(
            "a drift that is not a rate",
            &["run", "redlock-restart", "--clock-drift", "redis-1:fast"],
            2,
            &["'fast' is not a rate"],
        ),
        Case::new(
            "the single Redis's fault under Redlock",
            &["run", "redlock-restart", "--restart-at", "10ms"],
            2,
            &["no single Redis", "--node-restart"],
        ),
        Case::new(
            "--redis-nodes for a single-Redis safeguard",
            &["run", "step2-lock", "--redis-nodes", "3"],
            2,
            &["--redis-nodes", "only redlock and redlock-cas"],
        ),
        Case::new(
            "a delayed restart on five nodes is still exclusive",
            &[
                "run",
                "redlock-delayed-restart",
                "--redis-nodes",
                "5",
                "--no-save-traces",
            ],
            0,
            &["OK"],
        ),
    ]);
}
