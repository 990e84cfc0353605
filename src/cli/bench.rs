//! `leaselab bench`: what a simulated run costs, against what the same run costs on real
//! servers, and how the cost grows with the number of callers.
//!
//! Three workloads: step2-lock (50 callers queueing for one lock), step5-fencing (2 callers,
//! a 250 ms pause: mostly idle time) and step6-verify with a 1 ms TTL (50 callers, heavy
//! contention). Each runs simulated (seeds 1..=N); with `--redis`/`--postgres` also against the
//! real servers, and the line gives the ratio of real wall time per run to simulated CPU and
//! wall time per run, and, on a machine with more than one core, to the wall time per run of
//! the same runs as a batch side by side (`--threads`, as `run --runs` runs them).
//! `--scaling` runs step2-lock and step6-verify `--ttl 1ms` with 2 to 500 callers and fits the
//! exponent of the cost. Build with `--release` for meaningful figures.
//! The wall clock is read here only, never inside a simulated run.

use std::time::Instant;

use clap::Args as ClapArgs;
use leaselab_model::scenario::{Scenario, TimingPreset, Variant};
use leaselab_sim::real::RealConfig;
use leaselab_sim::run::{run_with, RunReport, SimConfig};
use serde::Serialize;

use super::run::{out, real_error};
use crate::exit::{CommandResult, Status, UsageError};

/// Measure what simulated runs cost, against real servers too when they are given.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Simulated runs of step2-lock (50 callers; at least 1).
    #[arg(long, default_value_t = 30)]
    pub step2_runs: u64,
    /// Simulated runs of step5-fencing (at least 1).
    #[arg(long, default_value_t = 500)]
    pub step5_runs: u64,
    /// Simulated runs of step6-verify with 50 callers and a 1 ms TTL (at least 1).
    #[arg(long, default_value_t = 30)]
    pub step6_runs: u64,
    /// Also run each workload against this Redis (real mode) and print the ratio; step5 and
    /// step6 also need `--postgres`.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// The PostgreSQL for the real runs of step5 and step6.
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// Real runs per workload (at least 1).
    #[arg(long, default_value_t = 5)]
    pub real_runs: u64,
    /// Instead: the cost of step2-lock and step6-verify --ttl 1ms at 2, 10, 50, 100, 200 and
    /// 500 callers, and the fitted exponent (cost per run ∝ callers^k).
    #[arg(long, conflicts_with_all = ["redis", "postgres"])]
    pub scaling: bool,
    /// Fewer runs per size with --scaling: a runs budget divided among the sizes (at least 1).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub scaling_divisor: u64,
    /// The simulation's timing model: `localhost` (the default) or `tick-1ms`
    /// (docs/real-mode.md), with its network latency.
    #[arg(long, value_name = "NAME", value_parser = super::duration::parse_timing)]
    pub timing: Option<TimingPreset>,
    /// Run time one simulation tick stands for, µs: a divisor of 1000 (default: the timing
    /// model's: 100 for `localhost`, 1000 for `tick-1ms`).
    #[arg(long, value_name = "US")]
    pub tick_us: Option<u64>,
    /// Also measure each workload's simulated runs as a batch on K threads side by side
    /// (wall time per run: what `run --runs`, `tour` and `matrix` give with `--threads K`);
    /// default: one per core, and none on a single core.
    #[command(flatten)]
    pub threads: super::run::batch::ThreadsArgs,
    /// One JSON document instead of the lines.
    #[arg(long)]
    pub json: bool,
}

/// One simulated run of `scenario` (a tutorial step, on the default network) with the default
/// configuration and the timing and latency of `preset`.
fn run_one(
    scenario: &Scenario,
    seed: u64,
    preset: TimingPreset,
) -> Result<RunReport, leaselab_model::safeguard::ParamError> {
    let mut scenario = scenario.clone();
    preset.apply(&mut scenario);
    run_with(&scenario, seed, &SimConfig::for_scenario(&scenario))
}

/// Every workload is measured: a count of 0 is refused (exit 2), like `run --runs 0`.
fn check_runs(flag: &str, runs: u64) -> Result<(), UsageError> {
    if runs == 0 {
        return Err(UsageError::new(format!(
            "{flag} must be at least 1 (every workload is measured; one run takes \
                milliseconds)"
        )));
    }
    Ok(())
}

/// What a batch of runs cost.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Cost {
    /// Runs measured.
    pub runs: u64,
    /// Wall-clock ms per run.
    pub wall_ms_per_run: f64,
    /// CPU ms per run of the thread that ran them (none where unreadable).
    pub cpu_ms_per_run: Option<f64>,
    /// Median elapsed ms of a run (simulated or real time from the release to the last
    /// caller's end).
    pub elapsed_ms_median: u64,
    /// Mean events logged per run.
    pub events_per_run: f64,
    /// Runs stopped at their time limit with callers still running.
    pub unfinished: u64,
}

/// Runs `runs` runs (seeds 1..=runs) with `one` and measures them.
fn measure(
    runs: u64,
    mut one: impl FnMut(u64) -> Result<RunReport, UsageError>,
) -> Result<Cost, UsageError> {
    let mut elapsed = Vec::with_capacity(runs.min(100_000) as usize);
    let mut events: u64 = 0;
    let mut unfinished = 0;
    let cpu_start = cpu_ns();
    let start = Instant::now();
    for seed in 1..=runs {
        let report = one(seed)?;
        elapsed.push(report.elapsed_ms);
        events += report.events.len() as u64;
        if !report.finished {
            unfinished += 1;
        }
    }
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let cpu_ms = match (cpu_start, cpu_ns()) {
        (Some(before), Some(after)) => Some(after.saturating_sub(before) as f64 / 1e6),
        _ => None,
    };
    elapsed.sort_unstable();
    Ok(Cost {
        runs,
        wall_ms_per_run: wall_ms / runs as f64,
        cpu_ms_per_run: cpu_ms.map(|ms| ms / runs as f64),
        elapsed_ms_median: elapsed[elapsed.len() / 2],
        events_per_run: events as f64 / runs as f64,
        unfinished,
    })
}

/// CPU time this thread has run, in ns (Linux `/proc/thread-self/schedstat`), so that the
/// figures mean something on a machine busy with other work.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// One workload: simulated, and real if servers were given.
#[derive(Clone, Debug, Serialize)]
pub struct Workload {
    /// e.g. `step6-verify --ttl 1ms`.
    pub name: String,
    /// Callers per run.
    pub callers: u32,
    /// Simulated runs, one after the other on one thread.
    pub sim: Cost,
    /// The same simulated runs as a batch on `threads` threads (none with one thread).
    pub sim_batch: Option<BatchCost>,
    /// Real runs (none without servers, or when the workload needs a server not given).
    pub real: Option<Cost>,
    /// Why the workload did not run for real although servers were given.
    pub real_skipped: Option<String>,
    /// Real wall ms per run ÷ simulated CPU ms per run.
    pub ratio_cpu: Option<f64>,
    /// Real wall ms per run ÷ simulated wall ms per run.
    pub ratio_wall: Option<f64>,
    /// Real wall ms per run ÷ the simulated batch's wall ms per run.
    pub ratio_batch: Option<f64>,
}

/// What a batch of simulated runs side by side cost.
#[derive(Clone, Debug, Serialize)]
pub struct BatchCost {
    /// Threads.
    pub threads: usize,
    /// Runs.
    pub runs: u64,
    /// Wall-clock ms of the batch ÷ runs.
    pub wall_ms_per_run: f64,
}

/// `runs` simulated runs of `scenario` (seeds 1..=runs) on `threads` threads, timed as a
/// batch.
fn measure_batch(
    scenario: &Scenario,
    runs: u64,
    threads: usize,
    preset: TimingPreset,
) -> Result<BatchCost, UsageError> {
    let start = Instant::now();
    let one = |seed| run_one(scenario, seed, preset).map_err(UsageError::from);
    crate::parallel::in_order(1..=runs, threads, &one, &mut |_report| Ok(()))?;
    Ok(BatchCost {
        threads,
        runs,
        wall_ms_per_run: start.elapsed().as_secs_f64() * 1e3 / runs as f64,
    })
}

/// The three workloads: step2-lock, step5-fencing, step6-verify with a 1 ms TTL.
fn workloads() -> Result<Vec<(String, Scenario)>, UsageError> {
    let step2 = Scenario::tutorial("step2-lock", Variant::default())?;
    let step5 = Scenario::tutorial("step5-fencing", Variant::default())?;
    let mut step6 = Scenario::tutorial("step6-verify", Variant::default())?;
    step6.params.ttl_ms = 1;
    Ok(vec![
        ("step2-lock".to_string(), step2),
        ("step5-fencing".to_string(), step5),
        ("step6-verify --ttl 1ms".to_string(), step6),
    ])
}

fn ms(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

fn describe(cost: &Cost) -> String {
    let cpu = cost
        .cpu_ms_per_run
        .map(|cpu| format!(", {} ms CPU", ms(cpu)))
        .unwrap_or_default();
    let unfinished = if cost.unfinished > 0 {
        format!(
            ", {} INCONCLUSIVE (stopped at the time limit)",
            cost.unfinished
        )
    } else {
        String::new()
    };
    format!(
        "{} runs, {} ms wall{cpu} per run ({} ms elapsed, median){unfinished}",
        cost.runs,
        ms(cost.wall_ms_per_run),
        cost.elapsed_ms_median
    )
}

/// Runs `leaselab bench`.
///
/// Exits 0 (a BROKEN run is part of the workload, not a finding here), 2 for bad usage or a
/// server that cannot be reached, or 3 when a run stopped at its time limit unfinished: the
/// figures then measure something else.
pub fn execute(args: Args) -> CommandResult {
    check_runs("--step2-runs", args.step2_runs)?;
    check_runs("--step5-runs", args.step5_runs)?;
    check_runs("--step6-runs", args.step6_runs)?;
    check_runs("--real-runs", args.real_runs)?;
    check_runs("--scaling-divisor", args.scaling_divisor)?;
    let threads = args.threads.threads()?;
    let mut preset = args.timing.unwrap_or_default();
    if let Some(tick_us) = args.tick_us {
        preset.timing.tick_us = tick_us;
    }
    preset
        .timing
        .validate()
        .map_err(|error| UsageError::new(format!("--tick-us: {}", error.0)))?;
    if args.scaling {
        return scaling(args.scaling_divisor, preset, args.json);
    }
    let real_config = (args.redis.is_some() || args.postgres.is_some())
        .then(|| RealConfig::new(args.redis.clone(), args.postgres.clone()));
    let mut unfinished = 0;
    let mut results = Vec::new();
    let runs = [args.step2_runs, args.step5_runs, args.step6_runs];
    for ((name, scenario), sim_runs) in workloads()?.into_iter().zip(runs) {
        let sim = measure(sim_runs, |seed| Ok(run_one(&scenario, seed, preset)?))?;
        unfinished += sim.unfinished;
        let sim_batch = match (threads as u64).min(sim_runs) as usize {
            1 => None,
            batch_threads => Some(measure_batch(&scenario, sim_runs, batch_threads, preset)?),
        };
        let mut real = None;
        let mut real_skipped = None;
        if let Some(config) = &real_config {
            match leaselab_sim::real::validate(&scenario, config) {
                Ok(()) => {
                    let cost = measure(args.real_runs, |seed| {
                        leaselab_sim::real::run(&scenario, seed, config).map_err(real_error)
                    })?;
                    unfinished += cost.unfinished;
                    real = Some(cost);
                }
                // A workload whose server was not given is measured simulated only.
                Err(leaselab_sim::real::RealError::Refused(reason)) => {
                    real_skipped = Some(reason);
                }
                Err(error) => return Err(real_error(error)),
            }
        }
        let ratio_cpu = real.as_ref().and_then(|real| {
            sim.cpu_ms_per_run
                .map(|cpu| real.wall_ms_per_run / cpu.max(1e-9))
        });
        let ratio_wall = real
            .as_ref()
            .map(|real| real.wall_ms_per_run / sim.wall_ms_per_run.max(1e-9));
        let ratio_batch = real
            .as_ref()
            .zip(sim_batch.as_ref())
            .map(|(real, batch)| real.wall_ms_per_run / batch.wall_ms_per_run.max(1e-9));
        let workload = Workload {
            name,
            callers: scenario.callers,
            sim,
            sim_batch,
            real,
            real_skipped,
            ratio_cpu,
            ratio_wall,
            ratio_batch,
        };
        if !args.json {
            print_workload(&workload);
        }
        results.push(workload);
    }
    if args.json {
        let document = serde_json::json!({
            "release_build": !cfg!(debug_assertions),
            "workloads": results,
        });
        out!(
            "{}",
            serde_json::to_string_pretty(&document).expect("serialises")
        );
    } else if cfg!(debug_assertions) {
        out!("(a debug build: measure with `cargo run --release -- bench`)");
    }
    Ok(if unfinished > 0 {
        Status::Inconclusive
    } else {
        Status::Ok
    })
}

fn print_workload(workload: &Workload) {
    out!(
        "{} ({} callers), simulated: {}",
        workload.name,
        workload.callers,
        describe(&workload.sim)
    );
    let indent = " ".repeat(workload.name.len());
    if let Some(batch) = &workload.sim_batch {
        out!(
            "{indent} simulated, {} runs on {} threads side by side: {} ms wall per run",
            batch.runs,
            batch.threads,
            ms(batch.wall_ms_per_run)
        );
    }
    if let Some(reason) = &workload.real_skipped {
        out!("{indent} real: not measured: {reason}");
    }
    if let Some(real) = &workload.real {
        out!("{indent} real: {}", describe(real));
        let cpu = workload
            .ratio_cpu
            .map(|ratio| format!("{ratio:.0}× its CPU time, "))
            .unwrap_or_default();
        let batch = workload
            .ratio_batch
            .map(|ratio| format!(", {ratio:.0}× a batch's wall time per run"))
            .unwrap_or_default();
        out!(
            "{indent} real wall time per run = {cpu}{:.0}× its wall time{batch}",
            workload.ratio_wall.unwrap_or_default()
        );
    }
}

/// The caller counts of `--scaling`, with the runs each gets (divided by the divisor).
pub const SCALING: [(u32, u64); 6] = [(2, 500), (10, 200), (50, 30), (100, 10), (200, 5), (500, 2)];

/// One size of `--scaling`.
#[derive(Clone, Debug, Serialize)]
pub struct Size {
    /// Callers.
    pub callers: u32,
    /// What a run cost.
    pub cost: Cost,
}

/// Least-squares slope of `ln y` on `ln x`: the `k` of `y ∝ x^k`.
pub fn fitted_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

fn scaling(divisor: u64, preset: TimingPreset, json: bool) -> CommandResult {
    let step2 = Scenario::tutorial("step2-lock", Variant::default())?;
    let mut step6 = Scenario::tutorial("step6-verify", Variant::default())?;
    step6.params.ttl_ms = 1;
    let mut unfinished = 0;
    let mut document = Vec::new();
    for (name, base) in [("step2-lock", step2), ("step6-verify --ttl 1ms", step6)] {
        let mut sizes = Vec::new();
        if !json {
            out!("{name}:");
            out!(
                "  {:>7}  {:>5}  {:>12}  {:>13}  {:>14}  {:>15}",
                "callers",
                "runs",
                "CPU ms/run",
                "sim ms/run",
                "events/run",
                "CPU µs/event"
            );
        }
        for (callers, runs) in SCALING {
            let mut scenario = base.clone();
            scenario.callers = callers;
            let runs = (runs / divisor).max(1);
            let cost = measure(runs, |seed| Ok(run_one(&scenario, seed, preset)?))?;
            unfinished += cost.unfinished;
            if !json {
                let cpu = cost.cpu_ms_per_run.unwrap_or(cost.wall_ms_per_run);
                out!(
                    "  {:>7}  {:>5}  {:>12}  {:>13}  {:>14.0}  {:>15.2}",
                    callers,
                    runs,
                    ms(cpu),
                    cost.elapsed_ms_median,
                    cost.events_per_run,
                    cpu * 1e3 / cost.events_per_run.max(1.0)
                );
            }
            sizes.push(Size { callers, cost });
        }
        let cpu = |size: &Size| {
            size.cost
                .cpu_ms_per_run
                .unwrap_or(size.cost.wall_ms_per_run)
        };
        let by_callers: Vec<(f64, f64)> = sizes
            .iter()
            .map(|size| (f64::from(size.callers), cpu(size)))
            .collect();
        let by_work: Vec<(f64, f64)> = sizes
            .iter()
            .map(|size| {
                (
                    f64::from(size.callers) * size.cost.events_per_run,
                    cpu(size),
                )
            })
            .collect();
        let by_events: Vec<(f64, f64)> = sizes
            .iter()
            .map(|size| (size.cost.events_per_run, cpu(size)))
            .collect();
        let exponent = fitted_exponent(&by_callers);
        let exponent_events = fitted_exponent(&by_events);
        let exponent_work = fitted_exponent(&by_work);
        if !json {
            let show = |k: Option<f64>| k.map(|k| format!("{k:.2}")).unwrap_or("-".into());
            out!(
                "  fitted exponent: CPU per run ∝ callers^{}, ∝ events^{}, ∝ (callers × events)^{}",
                show(exponent),
                show(exponent_events),
                show(exponent_work)
            );
        }
        document.push(serde_json::json!({
            "workload": name,
            "sizes": sizes,
            "exponent_callers": exponent,
            "exponent_events": exponent_events,
            "exponent_callers_times_events": exponent_work,
        }));
    }
    if json {
        let document = serde_json::json!({
            "release_build": !cfg!(debug_assertions),
            "scaling": document,
        });
        out!(
            "{}",
            serde_json::to_string_pretty(&document).expect("serialises")
        );
    } else if cfg!(debug_assertions) {
        out!("(a debug build: measure with `cargo run --release -- bench --scaling`)");
    }
    Ok(if unfinished > 0 {
        Status::Inconclusive
    } else {
        Status::Ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fitted_exponent_recovers_a_power_law() {
        let square: Vec<(f64, f64)> = [2.0, 10.0, 50.0, 500.0]
            .iter()
            .map(|&x| (x, 3.0 * x * x))
            .collect();
        assert!((fitted_exponent(&square).unwrap() - 2.0).abs() < 1e-9);
        let linear: Vec<(f64, f64)> = [1.0, 4.0].iter().map(|&x| (x, 0.5 * x)).collect();
        assert!((fitted_exponent(&linear).unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(fitted_exponent(&[(2.0, 1.0)]), None);
        assert_eq!(fitted_exponent(&[(2.0, 1.0), (2.0, 3.0)]), None);
    }
}
