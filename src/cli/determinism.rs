//! `leaselab determinism`: run many seeds of every tour row in two processes at once and
//! compare every event-log digest.
//!
//! A seed must reproduce a run byte for byte, not only in one process but across processes
//! (different address-space layout, different hash seeds, a different moment). This command
//! starts a second copy of itself that runs the same (row, seed) pairs in the same order and
//! prints one digest per line; this process runs them too and compares line by line as both go,
//! so memory stays flat whatever the number of seeds. Seed `i` of `--seeds N` goes to row
//! `i mod rows`, so every row gets about N / rows seeds.
//!
//! Exit 0 when every digest matched, 1 when any differed (each mismatch is listed, up to 20),
//! 2 on bad input.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdout, Command, Stdio};

use clap::Args as ClapArgs;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use leaselab_sim::run::run as run_one;

use super::run::out;
use super::tour::{rows, Row};
use crate::exit::{CommandResult, Status, UsageError};

/// The most seeds one call runs (about a day of CPU for the slowest rows; shard beyond that
/// with `--first-seed`).
pub const MAX_SEEDS: u64 = 10_000_000;

/// How many mismatches are listed in full.
const LISTED_MISMATCHES: usize = 20;

/// Compare event-log digests of many seeds across two processes.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// How many runs in all, spread over every tour row (seed i goes to row i mod rows).
    #[arg(long, default_value_t = 1_400)]
    pub seeds: u64,
    /// The first seed (the runs use seeds first-seed .. first-seed + seeds - 1).
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,
    /// Only the rows whose step name contains this text (e.g. `step5`, `failover`).
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
    /// Print `row seed digest` lines instead of comparing (what the second process does).
    #[arg(long, hide = true)]
    pub emit: bool,
}

/// A row's label as `tour` prints it.
fn label(row: &Row) -> String {
    if row.variant.is_empty() {
        row.step.to_string()
    } else {
        format!("{} {}", row.step, row.variant)
    }
}

fn selected_rows(only: Option<&str>) -> Result<Vec<Row>, UsageError> {
    let all = rows()?;
    let mut names: Vec<&str> = all.iter().map(|r| r.step).collect();
    names.dedup(); // a step's variants are neighbours
    let names = names.join(", ");
    let chosen: Vec<Row> = match only {
        None => all,
        Some(text) => all.into_iter().filter(|r| r.step.contains(text)).collect(),
    };
    if chosen.is_empty() {
        return Err(UsageError::new(format!(
            "--only {:?} matches no row; the rows are: {names}",
            only.unwrap_or_default()
        )));
    }
    Ok(chosen)
}

fn validate(args: &Args) -> Result<(), UsageError> {
    if args.seeds == 0 {
        return Err(UsageError::new(
            "--seeds 0 compares nothing; give at least 1 (e.g. --seeds 1400)",
        ));
    }
    if args.seeds > MAX_SEEDS {
        return Err(UsageError::new(format!(
            "--seeds {} is more than one call runs (at most {MAX_SEEDS}); split the range with --first-seed",
            args.seeds
        )));
    }
    if args.first_seed.checked_add(args.seeds - 1).is_none() {
        return Err(UsageError::new(format!(
            "--first-seed {} with --seeds {} runs past the largest seed {}; lower --first-seed",
            args.first_seed,
            args.seeds,
            u64::MAX
        )));
    }
    Ok(())
}

/// The digest line of one run: `row-index seed digest`.
fn digest_line(rows: &[Row], index: u64, seed: u64) -> Result<String, UsageError> {
    let row = &rows[(index % rows.len() as u64) as usize];
    let report = run_one(&row.scenario, seed)?;
    Ok(format!(
        "{} {seed} {}",
        index % rows.len() as u64,
        report.digest()
    ))
}

fn emit(args: &Args, rows: &[Row]) -> CommandResult {
    let stdout = std::io::stdout();
    let mut stdout = stdout.lock();
    for index in 0..args.seeds {
        let line = digest_line(rows, index, args.first_seed + index)?;
        if writeln!(stdout, "{line}").is_err() {
            // The comparing process went away; nothing left to tell.
            return Ok(Status::Ok);
        }
    }
    let _ = stdout.flush();
    Ok(Status::Ok)
}

fn spawn_second(args: &Args) -> Result<(Child, ChildStdout), UsageError> {
    let exe = std::env::current_exe().map_err(|error| {
        UsageError::new(format!(
            "cannot find this program to start the second process: {error}"
        ))
    })?;
    let mut command = Command::new(exe);
    command
        .arg("determinism")
        .arg("--emit")
        .arg("--seeds")
        .arg(args.seeds.to_string())
        .arg("--first-seed")
        .arg(args.first_seed.to_string());
    if let Some(only) = &args.only {
        command.arg("--only").arg(only);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|error| UsageError::new(format!("cannot start the second process: {error}")))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| UsageError::new("the second process has no output pipe"))?;
    Ok((child, stdout))
}

fn progress(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} runs compared, {per_sec}, about {eta} left",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Runs `leaselab determinism`.
pub fn execute(args: Args) -> CommandResult {
    validate(&args)?;
    let rows = selected_rows(args.only.as_deref())?;
    if args.emit {
        return emit(&args, &rows);
    }
    let (mut child, child_out) = spawn_second(&args)?;
    let mut theirs = BufReader::new(child_out).lines();
    let bar = progress(args.seeds);
    let mut per_row = vec![(0u64, 0u64); rows.len()];
    let mut mismatches = Vec::new();
    let mut mismatch_count = 0u64;
    let mut compared = 0u64;
    let mut lost = None;
    for index in 0..args.seeds {
        let seed = args.first_seed + index;
        let ours = digest_line(&rows, index, seed)?;
        let theirs = match theirs.next() {
            Some(Ok(line)) => line,
            Some(Err(error)) => {
                lost = Some(format!("reading the second process failed: {error}"));
                break;
            }
            None => {
                lost = Some(format!(
                    "the second process stopped after {compared} of {} runs",
                    args.seeds
                ));
                break;
            }
        };
        compared += 1;
        let row = (index % rows.len() as u64) as usize;
        per_row[row].0 += 1;
        if ours != theirs {
            per_row[row].1 += 1;
            mismatch_count += 1;
            if mismatches.len() < LISTED_MISMATCHES {
                mismatches.push(format!(
                    "  {} seed {seed}: this process {}, the other {}",
                    label(&rows[row]),
                    ours.rsplit(' ').next().unwrap_or(""),
                    theirs.rsplit(' ').next().unwrap_or("")
                ));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let _ = child.kill();
    let _ = child.wait();

    out!("{:<38} {:>9} {:>11}", "row", "runs", "mismatches");
    for (row, (runs, bad)) in rows.iter().zip(&per_row) {
        out!("{:<38} {:>9} {:>11}", label(row), runs, bad);
    }
    out!(
        "{compared} runs (seeds {}..={}) compared across two processes: {mismatch_count} mismatches",
        args.first_seed,
        args.first_seed + args.seeds - 1
    );
    for line in &mismatches {
        out!("{line}");
    }
    if let Some(reason) = lost {
        return Err(UsageError::new(format!(
            "{reason}; {compared} runs were compared before it"
        )));
    }
    Ok(if mismatch_count == 0 {
        Status::Ok
    } else {
        Status::Violation
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(seeds: u64, first_seed: u64) -> Args {
        Args {
            seeds,
            first_seed,
            only: None,
            emit: false,
        }
    }

    #[test]
    fn seed_ranges_that_wrap_or_are_empty_are_refused() {
        assert!(validate(&args(0, 1)).is_err());
        assert!(validate(&args(2, u64::MAX)).is_err());
        assert!(validate(&args(1, u64::MAX)).is_ok());
        assert!(validate(&args(MAX_SEEDS + 1, 1)).is_err());
    }

    #[test]
    fn an_unknown_row_names_the_rows() {
        let error = selected_rows(Some("step9")).err().expect("refused");
        assert!(error.message.contains("step5-fencing"), "{}", error.message);
    }

    #[test]
    fn seeds_are_spread_over_the_rows_and_a_line_names_row_seed_and_digest() {
        let rows = selected_rows(Some("step5")).expect("step5 rows");
        assert_eq!(rows.len(), 2);
        let first = digest_line(&rows, 0, 3).expect("a run");
        let second = digest_line(&rows, 1, 3).expect("a run");
        assert!(first.starts_with("0 3 "), "{first}");
        assert!(second.starts_with("1 3 "), "{second}");
        // Fenced and unfenced runs of the same seed are different runs.
        assert_ne!(first.split(' ').nth(2), second.split(' ').nth(2));
        assert_eq!(first, digest_line(&rows, 0, 3).expect("a run"));
    }
}
