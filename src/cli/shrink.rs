//! `leaselab shrink`: reduce a failing trace to the smallest run that still breaks the ledger.

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;

use crate::exit::{CommandResult, Status, UsageError};
use crate::trace::format::{Origin, TraceFile};
use crate::trace::shrink::{shrink, Size};
use crate::trace::{self};

/// Shrink a failing trace: fewer callers, fewer faults, shorter pauses, fewer steps, as long
/// as the ledger still breaks; write the smallest trace found and report the sizes.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The trace file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where to write the shrunk trace (default: next to FILE).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs `leaselab shrink`.
pub fn execute(args: Args) -> CommandResult {
    let trace = trace::load(&args.file)?;
    let dir = match &args.out {
        Some(dir) => dir.clone(),
        None => args
            .file
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
    };
    let (path, sizes) =
        shrink_and_save(&trace.scenario, trace.file.seed, &trace.file.digest, &dir)?;
    print!("{sizes}");
    println!("wrote {}", path.display());
    Ok(Status::Ok)
}

/// Shrinks the failing run of `scenario` with `seed` (recorded with digest `from`) and saves
/// the smallest trace in `dir`; returns its path and the sizes before and after, in words.
/// Used by `shrink` and by `--shrink` on `run` and `check`.
pub fn shrink_and_save(
    scenario: &leaselab_model::scenario::Scenario,
    seed: u64,
    from: &str,
    dir: &Path,
) -> Result<(PathBuf, String), UsageError> {
    let shrunk = shrink(scenario, seed, |report| {
        eprintln!("  still fails with {}", Size::of(report));
    })
    .map_err(|error| UsageError::new(format!("cannot shrink: {error}")))?;
    let sizes = format!(
        "before: {}\nafter:  {} ({} runs tried)\nledger: {}\n",
        shrunk.before,
        shrunk.after,
        shrunk.runs,
        shrunk.report.ledger.line()
    );
    let mut report = shrunk.report;
    if !report.scenario.name.ends_with(" shrunk") {
        report.scenario.name.push_str(" shrunk");
    }
    let file = TraceFile::from_report(
        &report,
        Origin::Simulation {
            shrunk_from: Some(from.to_string()),
        },
    );
    let path = file
        .save_in(dir)
        .map_err(|error| UsageError::new(format!("{}: cannot write: {error}", dir.display())))?;
    Ok((path, sizes))
}
