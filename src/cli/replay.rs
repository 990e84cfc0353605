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
    let found = trace::files::find(&args.files);
    if !found.problems.is_empty() {
        return Err(UsageError::new(found.problems.join("\nerror: ")));
    }
    let files = found.files;
    if files.is_empty() {
        return Err(UsageError::new(
            "no trace files found in the given directories (traces are *.json files)",
        ));
    }
    let mut status = Status::Ok;
    let (mut reproduced, mut changed, mut fixed, mut inconclusive) = (0, 0, 0, 0);
    let mut unreadable = Vec::new();
    for path in &files {
        // The replay's own error already names the file.
        let result = trace::load(path)
            .map_err(|error| error.to_string())
            .and_then(|trace| {
                let result = replay(&trace).map_err(|error| error.message)?;
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
        println!(
            "{}: {}",
            path.display(),
            trace::text::printable(&result.describe(&trace))
        );
        match &result.outcome {
            Outcome::Reproduced if result.reproduced() => reproduced += 1,
            Outcome::BehaviourChanged { .. } if args.update => {
                let updated = TraceFile::from_report(&result.report, trace.file.origin.clone());
                let dir = path.parent().unwrap_or(std::path::Path::new("."));
                let target = updated.path_in(dir);
                // Never over another trace: a file already under the new name is written over
                // only when it is this trace itself or already holds exactly the update.
                if target.exists()
                    && target != *path
                    && !trace::files::same_file(&target, path)
                    && crate::input::read_regular(&target, trace::files::MAX_TRACE_BYTES)
                        .ok()
                        .as_deref()
                        != Some(updated.to_text().as_bytes())
                {
                    return Err(UsageError::new(format!(
                        "{}: the updated trace would be written to {}, which holds another trace; nothing was changed (move that file away and run again)",
                        path.display(),
                        target.display()
                    )));
                }
                let new_path = updated.save_in(dir).map_err(|error| {
                    UsageError::new(format!("{}: cannot write: {error}", dir.display()))
                })?;
                // The old trace goes only when the new one is another file (not the same file
                // under another name or through a link).
                if new_path != *path && !trace::files::same_file(&new_path, path) {
                    std::fs::remove_file(path).map_err(|error| {
                        UsageError::new(format!("{}: cannot remove: {error}", path.display()))
                    })?;
                }
                println!("  updated: {}", new_path.display());
                reproduced += 1;
            }
            Outcome::BehaviourChanged { .. } => changed += 1,
            Outcome::Inconclusive { .. } => inconclusive += 1,
            _ => fixed += 1,
        }
        let updated = args.update && matches!(result.outcome, Outcome::BehaviourChanged { .. });
        if matches!(result.outcome, Outcome::Inconclusive { .. }) {
            status = status.worst(Status::Inconclusive);
        } else if !result.reproduced() && !updated {
            status = Status::Violation;
        }
    }
    println!(
        "{} trace(s): {reproduced} reproduced, {changed} behaviour changed, {fixed} no longer fail{}{}",
        files.len(),
        if inconclusive > 0 {
            format!(", {inconclusive} inconclusive")
        } else {
            String::new()
        },
        if unreadable.is_empty() {
            String::new()
        } else {
            format!(", {} unreadable", unreadable.len())
        }
    );
    // Each unreadable trace was named above, once; the summary only counts them.
    match unreadable.len() {
        0 => Ok(status),
        1 => Err(UsageError::new("1 trace file cannot be read (see above)")),
        n => Err(UsageError::new(format!(
            "{n} trace files cannot be read (see above)"
        ))),
    }
}
