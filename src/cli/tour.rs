//! `leaselab tour`: every tutorial step with its variants, plus a failover and a partition
//! scenario, a few dozen seeds each, as one table.
//!
//! Every row has an expected verdict pattern. A row that is supposed to break and does is the
//! finding the tutorial reports, not a failure: the tour exits 0 when every row is as
//! expected, and 1 otherwise (naming the rows that were not).
//!
//! `--real` runs the rows against a real Redis and PostgreSQL instead (5 runs per row unless
//! `--runs` says otherwise), judged by the same patterns; rows whose faults need the simulator
//! (failover, partition) are listed as skipped.

use clap::Args as ClapArgs;
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::real::RealConfig;
use leaselab_sim::run::RunReport;

use super::duration::format_ms;
use super::run::out;
use super::run::{preset, real_error, real_note, run_batch, run_batch_real};
use crate::exit::{CommandResult, Status, UsageError};

/// Run every tutorial step and fault scenario and compare with the expected verdicts.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeds per row (seeds 1..=N; default 24, or 5 with --real).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Run against a real Redis and PostgreSQL instead of the simulation.
    #[arg(long)]
    pub real: bool,
    /// The real Redis (with --real).
    #[arg(long, value_name = "URL", requires = "real", default_value = DEFAULT_REDIS)]
    pub redis: String,
    /// The real PostgreSQL (with --real).
    #[arg(long, value_name = "URL", requires = "real", default_value = DEFAULT_POSTGRES)]
    pub postgres: String,
    /// Where BROKEN runs are saved as traces.
    #[command(flatten)]
    pub traces: crate::trace::SaveArgs,
}

/// The real Redis `--real` uses unless `--redis` says otherwise.
pub const DEFAULT_REDIS: &str = "redis://127.0.0.1:6379";
/// The real PostgreSQL `--real` uses unless `--postgres` says otherwise.
pub const DEFAULT_POSTGRES: &str = "postgres://postgres@127.0.0.1/test";

/// How many runs of a row should be BROKEN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// Every run.
    Every,
    /// More than half of the runs.
    Most,
    /// No run.
    None,
}

/// A check every run of a row must pass.
pub type RunCheck = fn(&RunReport) -> bool;

/// One row of the tour.
pub struct Row {
    /// The scenario's name.
    pub step: &'static str,
    /// Its switches, as typed on the command line.
    pub variant: &'static str,
    /// What runs.
    pub scenario: Scenario,
    /// How many runs should break.
    pub broken: Broken,
    /// What must also hold in every run.
    pub check: RunCheck,
    /// The expectation in words.
    pub expected: &'static str,
}

fn row(
    step: &'static str,
    variant: &'static str,
    broken: Broken,
    check: RunCheck,
    expected: &'static str,
) -> Result<Row, UsageError> {
    let switches = Variant {
        watchdog: variant.contains("--watchdog"),
        jitter: variant.contains("--jitter"),
        unfenced: variant.contains("--unfenced"),
        same_version: variant.contains("--same-version"),
    };
    let mut scenario = preset(step, switches)?;
    if variant.contains("--ttl 1ms") {
        scenario.params.ttl_ms = 1;
        scenario.name = format!("{} --ttl 1ms", scenario.name);
    }
    Ok(Row {
        step,
        variant,
        scenario,
        broken,
        check,
        expected,
    })
}

/// The tour's rows, in teaching order.
pub fn rows() -> Result<Vec<Row>, UsageError> {
    Ok(vec![
        row(
            "step1-race",
            "",
            Broken::Every,
            |_| true,
            "BROKEN in every run",
        )?,
        row(
            "step2-lock",
            "",
            Broken::None,
            |r| !r.lock_left_behind,
            "OK in every run, no lock left behind",
        )?,
        row(
            "step3-ttl",
            "",
            Broken::Every,
            |r| r.ledger.stale_releases_refused > 0,
            "BROKEN in every run, stale releases refused",
        )?,
        row(
            "step3-ttl",
            "--watchdog",
            Broken::None,
            |r| {
                let work = r.scenario.params.work_ms * u64::from(r.scenario.callers);
                r.elapsed_ms >= work && r.elapsed_ms <= work * 6 / 5
            },
            "OK in every run, about 5 x work (1.5-1.8s)",
        )?,
        row(
            "step4-redislock",
            "",
            Broken::None,
            |r| r.ledger.gave_up > 0 || r.elapsed_ms >= 1_000,
            "OK in every run; callers give up or it takes >= 1s",
        )?,
        row(
            "step4-redislock",
            "--jitter",
            Broken::None,
            |r| r.ledger.gave_up == 0 && r.elapsed_ms < 1_000,
            "OK in every run, nobody gives up, < 1s",
        )?,
        row(
            "step5-fencing",
            "",
            Broken::None,
            |r| r.ledger.rejected == 1 && r.ledger.final_balance == 90 && r.final_fence == Some(34),
            "OK in every run: A's write rejected, 90, fence 34",
        )?,
        row(
            "step5-fencing",
            "--unfenced",
            Broken::Every,
            |r| r.ledger.accepted == 2 && r.final_fence == Some(33),
            "BROKEN in every run: A's write lands, fence 33",
        )?,
        row(
            "step6-verify",
            "",
            Broken::None,
            |r| r.ledger.rejected == 0,
            "OK in every run, no write rejected",
        )?,
        row(
            "step6-verify",
            "--ttl 1ms",
            Broken::Most,
            |_| true,
            "BROKEN in most runs despite fencing",
        )?,
        row(
            "step6-verify",
            "--ttl 1ms --same-version",
            Broken::None,
            |r| r.ledger.rejected > 0,
            "OK in every run, with writes rejected",
        )?,
        row(
            "failover-fencing",
            "",
            Broken::None,
            |r| r.tokens_reissued >= 1 && r.ledger.rejected >= 1,
            "OK in every run: a token issued twice wins once",
        )?,
        row(
            "failover-fencing",
            "--unfenced",
            Broken::Every,
            |r| r.tokens_reissued >= 1,
            "BROKEN in every run: the reissued token writes twice",
        )?,
        row(
            "partition-watchdog",
            "",
            Broken::None,
            |r| r.ledger.lost_lock == 1 && r.ledger.accepted == 1,
            "OK in every run: the cut-off holder does not write",
        )?,
    ])
}

/// The result of one row.
pub struct RowResult {
    /// How many runs.
    pub runs: usize,
    /// How many broke.
    pub broken: usize,
    /// Whether the row matched its expectation.
    pub as_expected: bool,
    /// The table's cells after `step` and `variant`.
    pub cells: Vec<String>,
}

fn min_max(values: impl Iterator<Item = i64>) -> String {
    let values: Vec<i64> = values.collect();
    let min = values.iter().min().copied().unwrap_or(0);
    let max = values.iter().max().copied().unwrap_or(0);
    if min == max {
        format!("{min}")
    } else {
        format!("{min}-{max}")
    }
}

/// Runs a row and judges it.
pub fn judge(row: &Row, reports: &[RunReport]) -> RowResult {
    let broken = reports.iter().filter(|r| r.broken()).count();
    let runs = reports.len();
    let verdicts = match row.broken {
        Broken::Every => broken == runs,
        Broken::Most => broken * 2 > runs,
        Broken::None => broken == 0,
    };
    let as_expected = verdicts && reports.iter().all(row.check);
    let mut elapsed: Vec<u64> = reports.iter().map(|r| r.elapsed_ms).collect();
    elapsed.sort_unstable();
    let cells = vec![
        runs.to_string(),
        broken.to_string(),
        min_max(reports.iter().map(|r| i64::from(r.ledger.accepted))),
        min_max(reports.iter().map(|r| i64::from(r.ledger.rejected))),
        min_max(reports.iter().map(|r| i64::from(r.ledger.gave_up))),
        format!(
            "{} ({}-{})",
            format_ms(elapsed[elapsed.len() / 2]),
            format_ms(elapsed[0]),
            format_ms(elapsed[elapsed.len() - 1])
        ),
    ];
    RowResult {
        runs,
        broken,
        as_expected,
        cells,
    }
}

/// Runs `leaselab tour`.
pub fn execute(args: Args) -> CommandResult {
    let runs = args.runs.unwrap_or(if args.real { 5 } else { 24 });
    if runs == 0 {
        return Err(UsageError::new("--runs must be at least 1"));
    }
    let real = args
        .real
        .then(|| RealConfig::new(Some(args.redis.clone()), Some(args.postgres.clone())));
    let rows = rows()?;
    let header = [
        "step",
        "variant",
        "runs",
        "BROKEN",
        "accepted",
        "rejected",
        "gave up",
        "elapsed median (min-max)",
        "expected",
        "as expected",
    ];
    let mut lines: Vec<Vec<String>> = Vec::new();
    let mut unexpected = Vec::new();
    let mut saved = 0;
    let mut skipped = 0;
    for row in &rows {
        let reports = match &real {
            Some(config) => match leaselab_sim::real::validate(&row.scenario, config) {
                Ok(()) => run_batch_real(&row.scenario, 1..1 + runs, config)?,
                Err(leaselab_sim::real::RealError::Refused(_)) => {
                    let faults: Vec<String> = row
                        .scenario
                        .faults
                        .iter()
                        .filter(|f| !matches!(f, leaselab_model::fault::Fault::Pause { .. }))
                        .map(|f| f.describe())
                        .collect();
                    let mut line = vec![row.step.to_string(), row.variant.to_string()];
                    line.extend(["0", "-", "-", "-", "-", "-"].map(String::from));
                    line.push(format!(
                        "skipped: needs the simulator ({})",
                        faults.join(", ")
                    ));
                    line.push("-".to_string());
                    lines.push(line);
                    skipped += 1;
                    continue;
                }
                Err(error) => return Err(real_error(error)),
            },
            None => run_batch(&row.scenario, 1..1 + runs),
        };
        if let (Some(dir), None) = (args.traces.dir(), &real) {
            for report in reports.iter().filter(|r| r.broken()) {
                crate::trace::save_trace(report, dir).map_err(|error| {
                    UsageError::new(format!("--save-traces {}: {error}", dir.display()))
                })?;
                saved += 1;
            }
        }
        let result = judge(row, &reports);
        let mut line = vec![row.step.to_string(), row.variant.to_string()];
        line.extend(result.cells);
        line.push(row.expected.to_string());
        line.push(if result.as_expected { "yes" } else { "NO" }.to_string());
        if !result.as_expected {
            unexpected.push(format!("{} {}", row.step, row.variant).trim().to_string());
        }
        lines.push(line);
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let print = |cells: Vec<String>| {
        let text: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out!("{}", text.join("  ").trim_end());
    };
    print(header.iter().map(|h| h.to_string()).collect());
    for line in lines {
        print(line);
    }
    out!("");
    if let (Some(dir), 1..) = (args.traces.dir(), saved) {
        out!("{saved} broken runs saved as traces in {}", dir.display());
    }
    out!(
        "A row is as expected when its BROKEN count matches the pattern (every / most / no run) \
         and every run passes the row's check; a row expected to break and breaking is the \
         tutorial's finding."
    );
    if let Some(config) = &real {
        out!("{}", real_note(config));
    }
    let judged = rows.len() - skipped;
    let skipped_note = if skipped > 0 {
        format!(" ({skipped} skipped: their faults need the simulator)")
    } else {
        String::new()
    };
    if unexpected.is_empty() {
        out!("{judged} of {judged} rows as expected{skipped_note}");
        Ok(Status::Ok)
    } else {
        out!(
            "{} of {judged} rows as expected{skipped_note}; not as expected: {}",
            judged - unexpected.len(),
            unexpected.join(", ")
        );
        Ok(Status::Violation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_a_valid_scenario() {
        let rows = rows().unwrap();
        assert_eq!(rows.len(), 14);
        for row in &rows {
            leaselab_sim::run::validate(&row.scenario).unwrap();
        }
    }

    #[test]
    fn a_row_is_judged_by_its_pattern_and_its_check() {
        let rows = rows().unwrap();
        let fenced = rows
            .iter()
            .find(|r| r.step == "step5-fencing" && r.variant.is_empty())
            .unwrap();
        let unfenced = rows
            .iter()
            .find(|r| r.step == "step5-fencing" && r.variant == "--unfenced")
            .unwrap();
        let ok_runs = run_batch(&fenced.scenario, 1..4);
        let broken_runs = run_batch(&unfenced.scenario, 1..4);
        assert!(judge(fenced, &ok_runs).as_expected);
        assert!(judge(unfenced, &broken_runs).as_expected);
        // The same runs under the other row's expectation are not as expected.
        assert!(!judge(fenced, &broken_runs).as_expected);
        assert!(!judge(unfenced, &ok_runs).as_expected);
        let result = judge(unfenced, &broken_runs);
        assert_eq!((result.runs, result.broken), (3, 3));
    }
}
