//! `leaselab show`: a trace as a timeline in the terminal, or as a picture.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use crate::exit::{CommandResult, Status, UsageError};
use crate::trace::{self, story, text};

/// Show a trace as a timeline: one lane per caller, Redis and PostgreSQL; acquires with
/// their tokens, lease expiries, pauses, reads, writes (accepted or rejected), releases, and
/// the write the ledger blames.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The trace file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Also write the timeline as an SVG picture.
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<PathBuf>,
    /// Also write the timeline as an HTML page (picture, parameters and the run in words).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Width of the terminal timeline in columns (default: $COLUMNS, else 160).
    #[arg(long, value_name = "N")]
    pub width: Option<usize>,
}

/// Runs `leaselab show`.
pub fn execute(args: Args) -> CommandResult {
    let trace = trace::load(&args.file)?;
    let events = trace.events()?;
    let story = story::build(&trace.scenario, &trace.ledger, &events);
    let width = args
        .width
        .or_else(|| std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()))
        .unwrap_or(160);
    print!("{}", text::show(&trace, &story, width));
    for (path, picture) in [
        (
            &args.svg,
            args.svg.as_ref().map(|_| trace::svg::svg(&trace, &story)),
        ),
        (
            &args.html,
            args.html.as_ref().map(|_| trace::svg::html(&trace, &story)),
        ),
    ] {
        if let (Some(path), Some(picture)) = (path, picture) {
            std::fs::write(path, picture).map_err(|error| {
                UsageError::new(format!("{}: cannot write: {error}", path.display()))
            })?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(Status::Ok)
}
