//! `leaselab replay`: re-run traces and say whether each still fails the same way.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use crate::exit::{CommandResult, Status, UsageError};
use crate::trace::format::TraceFile;
use crate::trace::replay::{replay, Outcome};
use crate::trace::{self};

/// Re-run each trace with its seed: "reproduced" (same verdict, same digest), "behaviour
/// changed" (same verdict, different event log) or "no longer fails". Exits 0 only when
/// every trace reproduces. A directory stands for every trace in it.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Trace files or directories.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Rewrite each trace whose verdict still holds but whose log changed, with the new log
    /// (under its new name).
    #[arg(long)]
    pub update: bool,
}

/// Runs `leaselab replay`.
pub fn execute(args: Args) -> CommandResult {
    let files = trace::files(&args.files).map_err(UsageError::new)?;
    if files.is_empty() {
        return Err(UsageError::new(
            "no trace files found in the given directories (traces are *.json files)",
        ));
    }
    let mut status = Status::Ok;
    let (mut reproduced, mut changed, mut fixed) = (0, 0, 0);
    let mut unreadable = Vec::new();
    for path in &files {
        let result = trace::load(path).and_then(|trace| {
            let result = replay(&trace).map_err(|error| trace::TraceError {
                path: path.clone(),
                problem: trace::load::Problem::Io(error.message),
            })?;
            Ok((trace, result))
        });
        let (trace, result) = match result {
            Ok(found) => found,
            Err(error) => {
                eprintln!("error: {error}");
                unreadable.push(error);
                continue;
            }
        };
        println!("{}: {}", path.display(), result.describe(&trace));
        match &result.outcome {
            Outcome::Reproduced if result.reproduced() => reproduced += 1,
            Outcome::BehaviourChanged { .. } if args.update => {
                let updated = TraceFile::from_report(&result.report, trace.file.origin.clone());
                let dir = path.parent().unwrap_or(std::path::Path::new("."));
                let new_path = updated.save_in(dir).map_err(|error| {
                    UsageError::new(format!("{}: cannot write: {error}", dir.display()))
                })?;
                if new_path != *path {
                    std::fs::remove_file(path).map_err(|error| {
                        UsageError::new(format!("{}: cannot remove: {error}", path.display()))
                    })?;
                }
                println!("  updated: {}", new_path.display());
                reproduced += 1;
            }
            Outcome::BehaviourChanged { .. } => changed += 1,
            _ => fixed += 1,
        }
        let updated = args.update && matches!(result.outcome, Outcome::BehaviourChanged { .. });
        if !result.reproduced() && !updated {
            status = Status::Violation;
        }
    }
    println!(
        "{} trace(s): {reproduced} reproduced, {changed} behaviour changed, {fixed} no longer fail{}",
        files.len(),
        if unreadable.is_empty() {
            String::new()
        } else {
            format!(", {} unreadable", unreadable.len())
        }
    );
    match unreadable.len() {
        0 => Ok(status),
        1 => Err(UsageError::new(format!("{}", unreadable[0]))),
        n => Err(UsageError::new(format!(
            "{n} trace files cannot be read (see above)"
        ))),
    }
}
