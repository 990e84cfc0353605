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
    /// Runs of step5-fencing.
    #[arg(long, default_value_t = 500)]
    pub step5_runs: u64,
    /// Runs of step6-verify with 50 callers and a 1 ms TTL.
    #[arg(long, default_value_t = 30)]
    pub step6_runs: u64,
}

fn measure(label: &str, scenario: &Scenario, runs: u64) -> Result<(), UsageError> {
    if runs == 0 {
        return Ok(());
    }
    let mut steps_ms = 0;
    let cpu_start = cpu_ns();
    let start = Instant::now();
    for seed in 1..=runs {
        let report = run_one(scenario, seed)?;
        steps_ms += report.elapsed_ms;
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
    out!(
        "{label}: {runs} runs in {seconds:.2}s = {:.1} runs/s{cpu} ({:.0} simulated ms per run)",
        runs as f64 / seconds,
        steps_ms as f64 / runs as f64
    );
    Ok(())
}

/// CPU time this thread has run, in ns (Linux `/proc/thread-self/schedstat`), so that the
/// figures mean something on a machine busy with other work.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Runs `leaselab bench`.
pub fn execute(args: Args) -> CommandResult {
    let step5 = Scenario::tutorial("step5-fencing", Variant::default())?;
    measure("step5-fencing (2 callers)", &step5, args.step5_runs)?;
    let mut step6 = Scenario::tutorial("step6-verify", Variant::default())?;
    step6.params.ttl_ms = 1;
    measure(
        "step6-verify --ttl 1ms (50 callers)",
        &step6,
        args.step6_runs,
    )?;
    if cfg!(debug_assertions) {
        out!("(a debug build: measure with `cargo run --release -- bench`)");
    }
    Ok(Status::Ok)
}
