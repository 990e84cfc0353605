//! `leaselab bench`: how many simulated runs per second one core does.
//!
//! Two workloads: step5-fencing (2 callers, a 250 ms pause: mostly idle time) and
//! step6-verify with 50 callers and a 1 ms TTL (52 hosts, heavy contention). Build with
//! `--release` for meaningful figures. The wall clock is read here only, never inside a run.

use std::time::Instant;

use clap::Args as ClapArgs;
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::run::run as run_one;

use super::run::out;
use crate::exit::{CommandResult, Status, UsageError};

/// Measure simulated runs per second.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Runs of step5-fencing (at least 1).
    #[arg(long, default_value_t = 500)]
    pub step5_runs: u64,
    /// Runs of step6-verify with 50 callers and a 1 ms TTL (at least 1).
    #[arg(long, default_value_t = 30)]
    pub step6_runs: u64,
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

/// Measures `runs` runs of `scenario` (seeds 1..=runs); returns how many stopped at their
/// time limit with callers still running, which the line also says.
fn measure(label: &str, scenario: &Scenario, runs: u64) -> Result<u64, UsageError> {
    let mut steps_ms: u128 = 0;
    let mut unfinished = 0;
    let cpu_start = cpu_ns();
    let start = Instant::now();
    for seed in 1..=runs {
        let report = run_one(scenario, seed)?;
        steps_ms += u128::from(report.elapsed_ms);
        if !report.finished {
            unfinished += 1;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_ns()) {
        (Some(before), Some(after)) => {
            let cpu_seconds = (after - before) as f64 / 1e9;
            format!(
                "; {:.1} runs per CPU second",
                runs as f64 / cpu_seconds.max(1e-9)
            )
        }
        _ => String::new(),
    };
    let unfinished_note = if unfinished > 0 {
        format!("; {unfinished} INCONCLUSIVE: stopped at the time limit unfinished")
    } else {
        String::new()
    };
    out!(
        "{label}: {runs} runs in {seconds:.2}s = {:.1} runs/s{cpu} ({:.0} simulated ms per run{unfinished_note})",
        runs as f64 / seconds.max(1e-9),
        steps_ms as f64 / runs as f64
    );
    Ok(unfinished)
}

/// CPU time this thread has run, in ns (Linux `/proc/thread-self/schedstat`), so that the
/// figures mean something on a machine busy with other work.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Runs `leaselab bench`.
///
/// Exits 0 (a BROKEN run is part of the workload, not a finding here), or 3 when a run
/// stopped at its time limit unfinished: the figures then measure something else.
pub fn execute(args: Args) -> CommandResult {
    check_runs("--step5-runs", args.step5_runs)?;
    check_runs("--step6-runs", args.step6_runs)?;
    let step5 = Scenario::tutorial("step5-fencing", Variant::default())?;
    let mut unfinished = measure("step5-fencing (2 callers)", &step5, args.step5_runs)?;
    let mut step6 = Scenario::tutorial("step6-verify", Variant::default())?;
    step6.params.ttl_ms = 1;
    unfinished += measure(
        "step6-verify --ttl 1ms (50 callers)",
        &step6,
        args.step6_runs,
    )?;
    if cfg!(debug_assertions) {
        out!("(a debug build: measure with `cargo run --release -- bench`)");
    }
    Ok(if unfinished > 0 {
        Status::Inconclusive
    } else {
        Status::Ok
    })
}
