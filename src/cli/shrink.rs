//! `leaselab shrink`: reduce a failing trace to the smallest run that still breaks the ledger.

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;

use crate::exit::{CommandResult, Status, UsageError};
use crate::trace::format::{Origin, TraceFile};
use crate::trace::shrink::{shrink, Size};
use crate::trace::{self};

/// Shrink a failing trace: fewer callers, fewer faults, shorter pauses, fewer steps, as long
/// as the ledger still breaks; write the smallest trace found as a new file and report the
/// sizes. FILE itself is never changed. The shrunk trace records the original run it came
/// from (`origin.shrunk_from`); shrinking a shrunk trace keeps pointing at that first run.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The trace file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The directory to write the shrunk trace in (default: FILE's directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs `leaselab shrink`.
pub fn execute(args: Args) -> CommandResult {
    let dir = match &args.out {
        Some(dir) => dir.clone(),
        None => match args.file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    check_out_dir(&dir, args.out.is_some())?;
    let trace = trace::load(&args.file)?;
    // The run this one was shrunk from, if it was: a shrunk trace points at the original.
    let original = match &trace.file.origin {
        Origin::Simulation {
            shrunk_from: Some(original),
        } => original.clone(),
        _ => trace.file.digest.clone(),
    };
    let (file, sizes) = shrink_to_file(&trace.scenario, trace.file.seed, &original)?;
    print!("{sizes}");
    let path = file.path_in(&dir);
    if file.digest == trace.file.digest {
        println!(
            "{}: nothing smaller fails: the shrunk run is this trace's own run (digest {}); nothing written",
            args.file.display(),
            short(&file.digest)
        );
        return Ok(Status::Ok);
    }
    if trace::files::same_file(&path, &args.file) {
        return Err(UsageError::new(format!(
            "{}: the shrunk trace's file name is this input file's, and shrink never writes over its input; give another directory with --out DIR",
            path.display()
        )));
    }
    let path = save(&file, &dir)?;
    println!(
        "wrote {} (shrunk from the run with digest {})",
        path.display(),
        short(&original)
    );
    Ok(Status::Ok)
}

fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}

/// Refuses, before any work, an output directory that is a file or cannot be made.
fn check_out_dir(dir: &Path, given: bool) -> Result<(), UsageError> {
    let flag = if given { "--out " } else { "" };
    match std::fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(_) => Err(UsageError::new(format!(
            "{flag}{}: not a directory; --out takes the directory to write the shrunk trace in",
            dir.display()
        ))),
        Err(_) => {
            // It will be created: its nearest existing ancestor must be a directory.
            let ancestor = dir
                .ancestors()
                .skip(1)
                .find(|a| a.as_os_str().is_empty() || a.exists());
            match ancestor {
                Some(a) if !a.as_os_str().is_empty() && !a.is_dir() => {
                    Err(UsageError::new(format!(
                        "{flag}{}: cannot be created: {} is not a directory",
                        dir.display(),
                        a.display()
                    )))
                }
                _ => Ok(()),
            }
        }
    }
}

/// Shrinks the failing run of `scenario` with `seed` and returns the smallest trace, which
/// records `from` (the digest of the original run) as the run it was shrunk from, with the
/// sizes before and after, in words.
pub fn shrink_to_file(
    scenario: &leaselab_model::scenario::Scenario,
    seed: u64,
    from: &str,
) -> Result<(TraceFile, String), UsageError> {
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
    Ok((file, sizes))
}

fn save(file: &TraceFile, dir: &Path) -> Result<PathBuf, UsageError> {
    file.save_in(dir)
        .map_err(|error| UsageError::new(format!("{}: cannot write: {error}", dir.display())))
}

/// Shrinks the failing run of `scenario` with `seed` (recorded with digest `from`) and saves
/// the smallest trace in `dir`; returns its path and the sizes before and after, in words.
/// Used by `--shrink` on `run` and `check`, which read no trace file.
pub fn shrink_and_save(
    scenario: &leaselab_model::scenario::Scenario,
    seed: u64,
    from: &str,
    dir: &Path,
) -> Result<(PathBuf, String), UsageError> {
    let (file, sizes) = shrink_to_file(scenario, seed, from)?;
    Ok((save(&file, dir)?, sizes))
}
