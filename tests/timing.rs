//! The simulation's timing model (`Scenario::timing`, `--timing`): a trace records it and
//! replays with it, a trace without it ran on the 1 ms tick (the default before `localhost`),
//! and a run's timers fire on tokio's millisecond grid when the tick is finer than it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use leaselab_model::scenario::{Scenario, Timing, Variant};
use leaselab_sim::events::What;

fn scratch(name: &str) -> PathBuf {
    common::bad_input::scratch(&format!("timing-{name}"))
}

fn leaselab(dir: &Path, args: &[&str]) -> Output {
    common::leaselab_in(dir, args)
}

fn only_trace(dir: &Path) -> PathBuf {
    let traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    traces.into_iter().next().unwrap()
}

#[test]
fn a_trace_records_its_timing_and_replays_with_it() {
    let dir = scratch("record");
    let run = leaselab(
        &dir,
        &[
            "run",
            "step6-verify",
            "--ttl",
            "1ms",
            "--callers",
            "8",
            "--timing",
            "tick-1ms",
            "--save-traces",
            ".",
        ],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let path = only_trace(&dir);
    let text = std::fs::read_to_string(&path).unwrap();
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let timing = &document["scenario"]["timing"];
    let tick_1ms = Timing::tick_1ms();
    assert_eq!(timing["tick_us"], tick_1ms.tick_us);
    assert_eq!(timing["client_cpu_us"], tick_1ms.client_cpu_us);
    assert_eq!(timing["pg_commit_us"], tick_1ms.pg_commit_us);
    assert!(
        document["scenario"]["name"]
            .as_str()
            .unwrap()
            .contains("--timing tick-1ms"),
        "{}",
        document["scenario"]["name"]
    );
    let replay = leaselab(&dir, &["replay", path.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(stdout.contains("1 reproduced"), "{stdout}");

    // Without its timing the trace is read as a trace from before `localhost`: on the 1 ms
    // tick, so it replays the same run. (Edited as text: the events' digest is over their
    // text as written.)
    let block_start = text.find(",\n    \"timing\": {").expect("a timing block");
    let block_end = block_start + text[block_start..].find("\n    }").unwrap() + "\n    }".len();
    let untimed = format!("{}{}", &text[..block_start], &text[block_end..]);
    assert!(!untimed.contains("\"timing\""), "{untimed:.1200}");
    std::fs::write(dir.join("untimed.json"), untimed).unwrap();
    let replay = leaselab(&dir, &["replay", "untimed.json"]);
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(stdout.contains("1 reproduced"), "{stdout}");

    // On another timing it is another run: its digest differs.
    let retimed = text.replacen("\"tick_us\": 1000", "\"tick_us\": 100", 1);
    assert_ne!(retimed, text);
    std::fs::write(dir.join("retimed.json"), retimed).unwrap();
    let replay = leaselab(&dir, &["replay", "retimed.json"]);
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(stdout.contains("1 behaviour changed"), "{stdout}");
}

/// A run on the default timing (`localhost`) records it in its trace, and replays with it.
#[test]
fn the_default_timing_is_localhost_and_recorded() {
    let dir = scratch("default");
    let run = leaselab(
        &dir,
        &["run", "step5-fencing", "--unfenced", "--save-traces", "."],
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let path = only_trace(&dir);
    let text = std::fs::read_to_string(&path).unwrap();
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let timing = &document["scenario"]["timing"];
    let localhost = Timing::localhost();
    assert_eq!(timing["tick_us"], localhost.tick_us, "{text:.600}");
    assert_eq!(timing["timer_lag_us"], localhost.timer_lag_us);
    assert_eq!(
        timing["pg_first_statement_us"],
        localhost.pg_first_statement_us
    );
    assert_eq!(document["scenario"]["network"]["latency_max_us"], 200);
    let replay = leaselab(&dir, &["replay", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(stdout.contains("1 reproduced"), "{stdout}");
}

#[test]
fn an_invalid_timing_is_refused_with_the_field() {
    let dir = scratch("invalid");
    let run = leaselab(
        &dir,
        &[
            "run",
            "step5-fencing",
            "--unfenced",
            "--timing",
            "localhost",
            "--save-traces",
            ".",
        ],
    );
    assert_eq!(run.status.code(), Some(1));
    let path = only_trace(&dir);
    let mut document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    document["scenario"]["timing"]["tick_us"] = 300.into();
    std::fs::write(&path, document.to_string()).unwrap();
    let replay = leaselab(&dir, &["replay", path.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&replay.stderr);
    assert!(
        stderr.contains("divisor of 1000us") && stderr.contains("300us"),
        "{stderr}"
    );

    // Real servers keep the machine's timing: a simulated timing or latency is refused.
    for flag in [["--timing", "localhost"], ["--latency-us", "50"]] {
        let real = leaselab(
            &dir,
            &[
                "run",
                "step1-race",
                flag[0],
                flag[1],
                "--redis",
                "redis://127.0.0.1:1",
            ],
        );
        assert_eq!(real.status.code(), Some(2), "{real:?}");
        let stderr = String::from_utf8_lossy(&real.stderr);
        assert!(stderr.contains("cannot be used with '--redis"), "{stderr}");
    }

    let bad_name = leaselab(&dir, &["run", "step1-race", "--timing", "fast"]);
    assert_eq!(bad_name.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad_name.stderr);
    assert!(stderr.contains("localhost, tick-1ms"), "{stderr}");
}

/// On a 100 µs tick, a caller's sleeps end on whole milliseconds of run time (tokio's timer
/// wheel), never before they are due and less than a millisecond after; with `timer_us` 0
/// they end when due, mostly between whole milliseconds.
#[test]
fn sleeps_end_on_the_millisecond_grid_when_the_tick_is_finer() {
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    scenario.callers = 10;
    scenario.timing = Timing::localhost();
    let lagging = scenario.clone();
    scenario.timing.timer_lag_us = 0;
    let mut exact = scenario.clone();
    exact.timing.timer_us = 0;
    // (due, woke): µs after the release (which lies on a whole millisecond) at which each
    // sleep was due and at which its caller's next event came.
    let sleeps = |scenario: &Scenario| -> Vec<(i64, i64)> {
        let report = leaselab_sim::run::run(scenario, 3).unwrap();
        let mut asleep: BTreeMap<String, i64> = BTreeMap::new();
        let mut sleeps = Vec::new();
        for event in report.events.iter() {
            if let What::Sleep { ms } = &event.what {
                asleep.insert(event.host.clone(), event.t_us + *ms as i64 * 1_000);
            } else if let Some(due) = asleep.remove(&event.host) {
                sleeps.push((due, event.t_us));
            }
        }
        sleeps
    };
    let grid = sleeps(&scenario);
    assert!(grid.len() > 20, "{grid:?}");
    for &(due, woke) in &grid {
        assert!(
            woke.rem_euclid(1_000) == 0 && woke >= due && woke - due < 1_000,
            "woke at {woke} µs, due at {due} µs"
        );
    }
    // With the driver's lag (`localhost`): up to a millisecond after the grid point, and
    // the sleeps due at one grid point end together.
    let lagged = sleeps(&lagging);
    assert!(lagged.len() > 20, "{lagged:?}");
    let mut woke_by_point: BTreeMap<i64, i64> = BTreeMap::new();
    for &(due, woke) in &lagged {
        assert!(
            woke >= due && woke - due <= 2_000,
            "woke at {woke} µs, due at {due} µs"
        );
        let point = due.div_euclid(1_000) + i64::from(due.rem_euclid(1_000) != 0);
        let first = *woke_by_point.entry(point).or_insert(woke);
        assert_eq!(
            first, woke,
            "sleeps due at grid point {point} ms woke apart"
        );
    }
    assert!(
        lagged.iter().any(|&(_, woke)| woke % 1_000 != 0),
        "no lag at all: {lagged:?}"
    );
    let exact = sleeps(&exact);
    let off_grid = exact.iter().filter(|&&(_, woke)| woke % 1_000 != 0).count();
    assert!(exact.iter().all(|&(due, woke)| woke >= due), "{exact:?}");
    assert!(
        off_grid * 2 > exact.len(),
        "with timer_us 0, only {off_grid} of {} sleeps ended between whole milliseconds",
        exact.len()
    );
}

/// `tour --timing` says so, and `merge` refuses shards that ran with different timings.
#[test]
fn tour_shards_of_different_timings_do_not_merge() {
    let dir = scratch("tour");
    let shard = |k: &str, timing: Option<&str>, file: &str| {
        let mut args = vec![
            "tour",
            "--runs",
            "1",
            "--no-save-traces",
            "--json",
            "--shard",
            k,
        ];
        if let Some(timing) = timing {
            args.extend(["--timing", timing]);
        }
        let output = leaselab(&dir, &args);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        std::fs::write(dir.join(file), &output.stdout).unwrap();
    };
    shard("1/2", Some("tick-1ms"), "a.json");
    shard("2/2", None, "b.json");
    shard("2/2", Some("tick-1ms"), "c.json");
    let refused = leaselab(&dir, &["merge", "a.json", "b.json"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("field 'timing'"), "{stderr}");
    let merged = leaselab(&dir, &["merge", "a.json", "c.json"]);
    assert_eq!(merged.status.code(), Some(0), "{merged:?}");
    let stdout = String::from_utf8_lossy(&merged.stdout);
    assert!(stdout.contains("'tick-1ms' timing model"), "{stdout}");
    assert!(stdout.contains("14 of 14 rows as expected"), "{stdout}");
}

/// `WAIT numreplicas timeout` times out after `timeout` milliseconds of run time on any
/// tick (it once counted ticks: on a 100 µs tick a 25 ms `WAIT` gave up after 2.5 ms).
#[test]
fn a_wait_times_out_in_run_time_on_a_fine_tick() {
    for timing in [Timing::tick_1ms(), Timing::localhost()] {
        let mut scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
        scenario.safeguard = leaselab_model::safeguard::Safeguard::LeaseWait;
        scenario.faults.clear();
        scenario.callers = 1;
        scenario.params.ttl_ms = 100; // WAIT 1 25
        scenario.network.replication_lag_ms = 60;
        scenario.timing = timing;
        let report = leaselab_sim::run::run(&scenario, 1).unwrap();
        let mut asked = None;
        let mut waited_us = None;
        for event in report.events.iter().filter(|e| e.host == "app-1") {
            match &event.what {
                What::RedisRequest { .. }
                    if serde_json::to_string(&event.what)
                        .unwrap()
                        .contains("\"WAIT\"") =>
                {
                    asked = Some(event.t_us);
                }
                What::RedisReply { .. } if asked.is_some() && waited_us.is_none() => {
                    waited_us = Some(event.t_us - asked.unwrap());
                }
                _ => {}
            }
        }
        let waited_us = waited_us.expect("a WAIT and its answer");
        assert!(
            (25_000..28_000).contains(&waited_us),
            "tick {} µs: WAIT 1 25 answered after {waited_us} µs",
            timing.tick_us
        );
    }
}

/// A `WAIT` answers in the tick its replica catches up (Redis answers in that turn of its
/// event loop), not at the next whole millisecond after the `WAIT` arrived.
#[test]
fn a_wait_answers_in_the_tick_its_replica_catches_up() {
    for seed in 1..=5 {
        let mut scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
        scenario.safeguard = leaselab_model::safeguard::Safeguard::LeaseWait;
        scenario.faults.clear();
        scenario.callers = 1;
        scenario.network.replication_lag_ms = 5;
        scenario.timing = Timing::localhost();
        let report = leaselab_sim::run::run(&scenario, seed).unwrap();
        let executed = |name: &str| -> i64 {
            report
                .events
                .iter()
                .find(|e| {
                    e.host == "redis"
                        && serde_json::to_string(&e.what)
                            .unwrap()
                            .contains(&format!("\"argv\":[\"{name}\""))
                })
                .map(|e| e.t_us)
                .unwrap_or_else(|| panic!("seed {seed}: no {name} executed"))
        };
        let after_us = executed("WAIT") - executed("SET");
        assert!(
            (5_000..=5_100).contains(&after_us),
            "seed {seed}: WAIT answered {after_us} µs after the lock's SET (lag 5 ms)"
        );
    }
}
