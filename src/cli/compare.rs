//! `leaselab compare`: the tour's rows run N times simulated and N times against the real
//! servers, and per row and counter the simulated range next to the real one.
//!
//! A counter *agrees* when the two ranges (min–max over the runs) overlap. The command is the
//! check of the simulation's timing model (`Timing` in the scenario, the network latency):
//! the model is right for a counter when real runs on this machine and simulated runs can
//! give the same value. Rows whose faults need the simulator (failover, partition) are
//! skipped, as in `tour --real`.

use clap::Args as ClapArgs;
use leaselab_model::scenario::{Timing, TimingPreset};
use leaselab_sim::calibrate::Calibration;
use leaselab_sim::real::RealConfig;
use leaselab_sim::run::{RunReport, RunVerdict, SimConfig};
use serde::Serialize;

use super::calibrate::{describe, measure, server_url};
use super::duration::{parse_latency_us, parse_timing};
use super::run::batch::{for_each_run, Runner, Seeds, Spread, ThreadsArgs};
use super::run::{out, real_error};
use super::tour::{rows, DEFAULT_POSTGRES, DEFAULT_REDIS};
use crate::exit::{CommandResult, Status, UsageError};
use crate::shard::Shard;

/// Exit codes of `compare`, printed under its `--help`.
pub const COMPARE_EXIT_CODES: &str =
    "Exit codes: 0 every counter's simulated and real ranges overlap; 1 at least one counter's \
ranges do not overlap; 2 bad usage, or a server that cannot be reached; 3 a run on either \
side stopped at its time limit (INCONCLUSIVE), so its row was not compared.";

/// Run every tour row simulated and against real servers, and compare the counters' ranges.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Runs per row on each side (seeds 1..=N).
    #[arg(long, default_value_t = 10)]
    pub runs: u64,
    /// The simulated side's runs side by side (the real side runs one at a time).
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// The real Redis (default: $LEASELAB_REDIS_URL, else redis://127.0.0.1:6379).
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// The real PostgreSQL (default: $LEASELAB_DATABASE_URL, else
    /// postgres://postgres@127.0.0.1/test).
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// The simulation's timing model: `localhost` (the default, measured on this project's
    /// machine; docs/real-mode.md) or `tick-1ms`, with its network latency. The flags below
    /// change one part of it.
    #[arg(long, value_name = "NAME", value_parser = parse_timing)]
    pub timing: Option<TimingPreset>,
    /// The simulation's client CPU time per command, µs (0: no client CPU model; default:
    /// the timing model's, 20 for `localhost`, 5 for `tick-1ms`).
    #[arg(long, value_name = "US")]
    pub client_cpu_us: Option<u64>,
    /// Run time one simulation tick stands for, µs: a divisor of 1000 (default: the
    /// timing model's, 100 for `localhost`, 1000 for `tick-1ms`).
    #[arg(long, value_name = "US")]
    pub tick_us: Option<u64>,
    /// The simulated network's one-way latency per message, µs: N, or MIN-MAX drawn per
    /// message (default: the timing model's, 100-200 for `localhost`, 100-500 for `tick-1ms`). The real
    /// side is not affected.
    #[arg(long, value_parser = parse_latency_us, value_name = "US|MIN-MAX")]
    pub latency_us: Option<(u64, u64)>,
    /// The simulated PostgreSQL's extra time for a session's first statement, µs (a new
    /// backend's cold caches; default: the timing model's, 700 for `localhost`, 0 for
    /// `tick-1ms`; at most 1 s). The real side is not affected.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub pg_first_statement_us: Option<u64>,
    /// The mean of a random part of the simulated PostgreSQL's first-statement time, µs,
    /// drawn per session from an exponential distribution (real first statements spread with
    /// a long tail under load; default: the timing model's, 0; at most 1 s). The real side is
    /// not affected.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub pg_first_statement_tail_us: Option<u64>,
    /// The simulated PostgreSQL's extra time for a commit that wrote, µs (the WAL fsync of
    /// synchronous_commit = on; default: the timing model's, 400 for `localhost`, 0 for
    /// `tick-1ms`; at most 1 s). The real side is not affected.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub pg_commit_us: Option<u64>,
    /// The resolution of the simulated callers' timers, µs: a sleep fires at the first whole
    /// multiple of it at or after its due time, as tokio's 1 ms timer wheel fires real mode's
    /// (default 1000; 0: when due). No effect on a 1 ms tick.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub timer_us: Option<u64>,
    /// How late after its grid point a simulated timer fires, at most, µs: the timers due at
    /// one point fire together after a lag drawn from the seed (default: the timing model's;
    /// 1000 for `localhost`, 0 for `tick-1ms`).
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub timer_lag_us: Option<u64>,
    /// Measure the real servers first (as `leaselab calibrate` does) and simulate with what
    /// was measured: the network latency from a caller's Redis round trips in real runs, a
    /// first statement's fixed part and random part fitted to the measured median and 90th
    /// percentile, a commit's median; `--latency-us`, `--pg-first-statement-us`,
    /// `--pg-first-statement-tail-us` and `--pg-commit-us` still win.
    #[arg(long)]
    pub calibrate: bool,
    /// Samples of each kind for `--calibrate`.
    #[arg(long, default_value_t = 50, value_name = "N", requires = "calibrate",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(leaselab_sim::calibrate::MAX_SAMPLES)))]
    pub samples: u32,
    /// Callers retrying a Redis lock while `--calibrate` measures PostgreSQL.
    #[arg(long, default_value_t = 50, value_name = "N", requires = "calibrate",
          value_parser = clap::value_parser!(u32).range(0..=i64::from(leaselab_sim::calibrate::MAX_LOAD_CALLERS)))]
    pub load_callers: u32,
    /// Only rows whose step or variant contains this text (e.g. `step6`, `--ttl 1ms`).
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
    /// One JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

impl Args {
    /// The simulated side's timing and one-way latency: `--timing` (else the default), its
    /// tick, client CPU and timers as the flags set them, then what a calibration measured
    /// (the latency, then the PostgreSQL costs over the round trips that timing and latency
    /// give), then each PostgreSQL cost a flag names, replaced.
    fn sim_timing(
        &self,
        calibration: Option<&Calibration>,
    ) -> Result<(Timing, (u64, u64)), UsageError> {
        let preset = self.timing.unwrap_or_default();
        let mut timing = preset.timing;
        let clock_parts = [
            (self.tick_us, &mut timing.tick_us),
            (self.client_cpu_us, &mut timing.client_cpu_us),
            (self.timer_us, &mut timing.timer_us),
            (self.timer_lag_us, &mut timing.timer_lag_us),
        ];
        for (flag, part) in clock_parts {
            if let Some(value) = flag {
                *part = value;
            }
        }
        let latency_us = self
            .latency_us
            .or_else(|| calibration?.latency_us(&timing))
            .unwrap_or(preset.latency_us);
        if let Some(calibration) = calibration {
            timing = calibration.apply(timing, latency_us);
        }
        let postgres_parts = [
            (
                self.pg_first_statement_us,
                &mut timing.pg_first_statement_us,
            ),
            (
                self.pg_first_statement_tail_us,
                &mut timing.pg_first_statement_tail_us,
            ),
            (self.pg_commit_us, &mut timing.pg_commit_us),
        ];
        for (flag, part) in postgres_parts {
            if let Some(value) = flag {
                *part = value;
            }
        }
        timing
            .validate()
            .map_err(|error| UsageError::new(format!("the simulation's timing: {}", error.0)))?;
        Ok((timing, latency_us))
    }
}

/// The counters compared, in the order printed.
pub const COUNTERS: [&str; 10] = [
    "BROKEN",
    "final balance",
    "accepted",
    "rejected",
    "gave up",
    "failed",
    "insufficient",
    "busy retries",
    "stale releases refused",
    "elapsed ms",
];

/// The counters of one run, in [`COUNTERS`] order (BROKEN as 0/1).
pub fn counters(report: &RunReport) -> [i64; 10] {
    let ledger = &report.ledger;
    [
        i64::from(report.verdict() == RunVerdict::Broken),
        ledger.final_balance,
        i64::from(ledger.accepted),
        i64::from(ledger.rejected),
        i64::from(ledger.gave_up),
        i64::from(ledger.failed),
        i64::from(ledger.insufficient),
        i64::from(ledger.busy_retries),
        i64::from(ledger.stale_releases_refused),
        report.elapsed_ms as i64,
    ]
}

/// The runs of one side of a row.
#[derive(Clone, Debug, Default)]
pub struct Side {
    spreads: Vec<Spread>,
    inconclusive: u64,
}

impl Side {
    fn new() -> Side {
        Side {
            spreads: vec![Spread::new(); COUNTERS.len()],
            inconclusive: 0,
        }
    }

    /// Adds one run.
    pub fn add(&mut self, report: &RunReport) {
        // A run stopped at its time limit; one that only spent nothing still has its counters.
        if report.verdict() == RunVerdict::Inconclusive && !report.untested() {
            self.inconclusive += 1;
        }
        for (spread, value) in self.spreads.iter_mut().zip(counters(report)) {
            spread.add(value);
        }
    }
}

/// One counter of one row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CounterComparison {
    /// Its name.
    pub counter: &'static str,
    /// Simulated min, median, max.
    pub sim: [i64; 3],
    /// Real min, median, max.
    pub real: [i64; 3],
    /// The two ranges overlap.
    pub overlap: bool,
}

/// Compares the two sides counter by counter.
pub fn compare(sim: &Side, real: &Side) -> Vec<CounterComparison> {
    COUNTERS
        .iter()
        .zip(sim.spreads.iter().zip(&real.spreads))
        .map(|(counter, (s, r))| CounterComparison {
            counter,
            sim: [s.min(), s.median(), s.max()],
            real: [r.min(), r.median(), r.max()],
            overlap: s.min() <= r.max() && r.min() <= s.max(),
        })
        .collect()
}

#[derive(Serialize)]
struct RowJson {
    step: &'static str,
    variant: &'static str,
    runs: u64,
    skipped: Option<String>,
    sim_inconclusive: u64,
    real_inconclusive: u64,
    counters: Vec<CounterComparison>,
}

fn range(values: [i64; 3]) -> String {
    if values[0] == values[2] {
        values[0].to_string()
    } else {
        format!("{}–{} ({})", values[0], values[2], values[1])
    }
}

/// Runs `leaselab compare`.
pub fn execute(args: Args) -> CommandResult {
    let seeds = Seeds::new(1, args.runs)?;
    let threads = args.threads.threads()?;
    let real_config = RealConfig::new(
        Some(server_url(
            args.redis.clone(),
            "LEASELAB_REDIS_URL",
            DEFAULT_REDIS,
        )),
        Some(server_url(
            args.postgres.clone(),
            "LEASELAB_DATABASE_URL",
            DEFAULT_POSTGRES,
        )),
    );
    // The flags are checked before a calibration, which takes seconds, not after it.
    args.sim_timing(None)?;
    let calibration = if args.calibrate {
        Some(measure(
            real_config.redis_url.clone(),
            real_config.postgres_url.clone(),
            args.samples,
            args.load_callers,
        )?)
    } else {
        None
    };
    let (timing, (min_us, max_us)) = args.sim_timing(calibration.as_ref())?;
    let mut rows = rows()?;
    if let Some(only) = &args.only {
        rows.retain(|row| row.step.contains(only.as_str()) || row.variant.contains(only.as_str()));
        if rows.is_empty() {
            return Err(UsageError::new(format!(
                "--only '{only}' matches no tour row; `leaselab tour` lists the rows"
            )));
        }
    }
    let mut results = Vec::new();
    for row in &rows {
        let sim_config = SimConfig::for_scenario(&row.scenario);
        let mut sim_scenario = row.scenario.clone();
        sim_scenario.timing = timing;
        sim_scenario.network.latency_min_us = min_us;
        sim_scenario.network.latency_max_us = max_us;
        match leaselab_sim::real::validate(&row.scenario, &real_config) {
            Ok(()) => {}
            Err(leaselab_sim::real::RealError::Refused(reason)) => {
                results.push(RowJson {
                    step: row.step,
                    variant: row.variant,
                    runs: 0,
                    skipped: Some(reason.lines().next().unwrap_or_default().to_string()),
                    sim_inconclusive: 0,
                    real_inconclusive: 0,
                    counters: Vec::new(),
                });
                continue;
            }
            Err(error) => return Err(real_error(error)),
        }
        let real_runner = Runner::Real(RealConfig {
            horizon_ms: sim_config.horizon_ms,
            ..real_config.clone()
        });
        let mut sim = Side::new();
        for_each_run(
            &sim_scenario,
            seeds,
            Shard::WHOLE,
            &Runner::Sim {
                config: sim_config,
                threads,
            },
            |report| {
                sim.add(&report);
                Ok(())
            },
        )?;
        let mut real = Side::new();
        for_each_run(&row.scenario, seeds, Shard::WHOLE, &real_runner, |report| {
            real.add(&report);
            Ok(())
        })?;
        results.push(RowJson {
            step: row.step,
            variant: row.variant,
            runs: args.runs,
            skipped: None,
            sim_inconclusive: sim.inconclusive,
            real_inconclusive: real.inconclusive,
            counters: compare(&sim, &real),
        });
    }
    let inconclusive = results
        .iter()
        .any(|row| row.sim_inconclusive > 0 || row.real_inconclusive > 0);
    let apart: Vec<String> = results
        .iter()
        .filter(|row| row.sim_inconclusive == 0 && row.real_inconclusive == 0)
        .flat_map(|row| {
            let name = format!("{} {}", row.step, row.variant);
            let name = name.trim().to_string();
            row.counters
                .iter()
                .filter(|c| !c.overlap)
                .map(move |c| format!("{name}: {}", c.counter))
        })
        .collect();
    let status = if !apart.is_empty() {
        Status::Violation
    } else if inconclusive {
        Status::Inconclusive
    } else {
        Status::Ok
    };
    let latency = format!("{min_us}-{max_us} µs");
    if args.json {
        let document = serde_json::json!({
            "runs": args.runs,
            "client_cpu_us": timing.client_cpu_us,
            "tick_us": timing.tick_us,
            "timer_us": timing.timer_us,
            "timer_lag_us": timing.timer_lag_us,
            "latency_us": [min_us, max_us],
            "pg_first_statement_us": timing.pg_first_statement_us,
            "pg_first_statement_tail_us": timing.pg_first_statement_tail_us,
            "pg_commit_us": timing.pg_commit_us,
            "redis": real_config.redis_url,
            "postgres": real_config.postgres_url,
            "calibration": calibration,
            "rows": results,
            "apart": apart,
        });
        out!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
        return Ok(status);
    }
    let header = ["step", "variant", "counter", "sim", "real", "overlap"];
    let mut lines: Vec<[String; 6]> = Vec::new();
    for row in &results {
        if let Some(reason) = &row.skipped {
            lines.push([
                row.step.to_string(),
                row.variant.to_string(),
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                format!("skipped: {reason}"),
            ]);
            continue;
        }
        let undecided = row.sim_inconclusive > 0 || row.real_inconclusive > 0;
        for counter in &row.counters {
            lines.push([
                row.step.to_string(),
                row.variant.to_string(),
                counter.counter.to_string(),
                range(counter.sim),
                range(counter.real),
                match (undecided, counter.overlap) {
                    (true, _) => "undecided (INCONCLUSIVE runs)",
                    (false, true) => "yes",
                    (false, false) => "NO",
                }
                .to_string(),
            ]);
        }
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let print = |cells: &[String]| {
        let text: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| {
                let pad = width.saturating_sub(cell.chars().count());
                format!("{cell}{}", " ".repeat(pad))
            })
            .collect();
        out!("{}", text.join("  ").trim_end());
    };
    if let Some(calibration) = &calibration {
        out!(
            "calibrated on the real servers first ({} samples of each):",
            calibration.samples
        );
        for line in describe(calibration) {
            out!("  {line}");
        }
        out!("");
    }
    print(&header.map(String::from));
    for line in &lines {
        print(line);
    }
    out!("");
    let first_tail = match timing.pg_first_statement_tail_us {
        0 => String::new(),
        tail_us => format!(" (plus a random part, {tail_us} µs on average)"),
    };
    out!(
        "{} runs per row on each side (seeds 1..={}); ranges are min–max (median) over the runs; \
         simulated with {} µs of client CPU per command, a {} µs tick, \
         timers firing on a {} µs grid up to {} µs late, {latency} one-way latency and PostgreSQL answering {} µs later{first_tail} for a session's first \
         statement and {} µs later for a commit that wrote; real against Redis {} and \
         PostgreSQL {}, whose timing is this machine's (not reproducible).",
        args.runs,
        args.runs,
        timing.client_cpu_us,
        timing.tick_us,
        timing.timer_us,
        timing.timer_lag_us,
        timing.pg_first_statement_us,
        timing.pg_commit_us,
        real_config.redis_url.as_deref().unwrap_or("-"),
        real_config.postgres_url.as_deref().unwrap_or("-"),
    );
    if apart.is_empty() {
        out!("every compared counter's simulated and real ranges overlap");
    } else {
        out!(
            "{} counter(s) whose ranges do not overlap: {}",
            apart.len(),
            apart.join("; ")
        );
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(values: &[[i64; 10]]) -> Side {
        let mut side = Side::new();
        for run in values {
            for (spread, value) in side.spreads.iter_mut().zip(run) {
                spread.add(*value);
            }
        }
        side
    }

    #[test]
    fn ranges_overlap_when_they_share_a_value_and_not_otherwise() {
        let sim = side(&[
            [1, 90, 50, 0, 0, 0, 0, 0, 50, 7],
            [1, 90, 50, 0, 0, 0, 0, 0, 50, 9],
        ]);
        let real = side(&[
            [1, 60, 50, 0, 0, 0, 0, 0, 30, 9],
            [1, 80, 50, 0, 0, 0, 0, 0, 42, 5],
        ]);
        let result = compare(&sim, &real);
        let by_name = |name: &str| result.iter().find(|c| c.counter == name).unwrap();
        assert!(!by_name("final balance").overlap);
        assert_eq!(by_name("final balance").sim, [90, 90, 90]);
        assert_eq!(by_name("final balance").real, [60, 80, 80]);
        assert!(!by_name("stale releases refused").overlap);
        // 7–9 against 5–9 share 9.
        assert!(by_name("elapsed ms").overlap);
        assert!(by_name("accepted").overlap);
    }

    #[test]
    fn a_range_prints_its_bounds_and_median_or_one_value() {
        assert_eq!(range([5, 5, 5]), "5");
        assert_eq!(range([60, 70, 80]), "60–80 (70)");
    }
}
