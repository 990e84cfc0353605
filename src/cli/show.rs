//! `leaselab show`: a trace as a timeline in the terminal, or as a picture.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use crate::exit::{CommandResult, Status, UsageError};
use crate::trace::{self, files::Outputs, story, text};

/// The narrowest terminal timeline (`--width`).
pub const MIN_WIDTH: usize = 40;
/// The widest terminal timeline (`--width`).
pub const MAX_WIDTH: usize = 1000;
/// The width when neither `--width` nor `$COLUMNS` says.
pub const DEFAULT_WIDTH: usize = 160;

/// Show a trace as a timeline: one lane per caller, Redis and PostgreSQL; acquires with
/// their tokens, lease expiries, pauses, reads, writes (accepted or rejected), releases, and
/// the write the ledger blames.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The trace file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Also write the timeline as an SVG picture (never over FILE or the --html output).
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<PathBuf>,
    /// Also write the timeline as an HTML page (picture, parameters and the run in words).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Width of the terminal timeline in columns, 40 to 1000 (default: $COLUMNS, else 160).
    #[arg(long, value_name = "N", value_parser = parse_width)]
    pub width: Option<usize>,
    /// Show every caller and the whole run. By default a trace with more than 6 callers is
    /// focused on the blamed write: its caller and the callers whose writes it overwrote get
    /// lanes, the others fold into one summary lane, and only the window from their acquires
    /// to the blamed caller's end is drawn.
    #[arg(long)]
    pub all: bool,
    /// Compare with a second trace (e.g. an OK run and a BROKEN run of one scenario): what
    /// differs in their parameters, where their stories first part, and both side by side
    /// (with --html: both pictures on one page).
    #[arg(long, value_name = "OTHER")]
    pub compare: Option<PathBuf>,
}

/// `--width`: a number of columns from [`MIN_WIDTH`] to [`MAX_WIDTH`].
fn parse_width(text: &str) -> Result<usize, String> {
    let out_of_range =
        || format!("the timeline is {MIN_WIDTH} to {MAX_WIDTH} columns wide (got {text})");
    match text.trim().parse::<u64>() {
        Ok(n) if (MIN_WIDTH as u64..=MAX_WIDTH as u64).contains(&n) => Ok(n as usize),
        Ok(_) => Err(out_of_range()),
        Err(_) if text.trim().parse::<i128>().is_ok() => Err(out_of_range()),
        Err(_) => Err(format!(
            "expected a number of columns from {MIN_WIDTH} to {MAX_WIDTH} (got {text:?})"
        )),
    }
}

/// The width from `$COLUMNS`, kept within range; `None` when unset or not a number.
fn columns_from_env() -> Option<usize> {
    let columns: u64 = std::env::var("COLUMNS").ok()?.trim().parse().ok()?;
    Some(columns.clamp(MIN_WIDTH as u64, MAX_WIDTH as u64) as usize)
}

/// Runs `leaselab show`.
pub fn execute(args: Args) -> CommandResult {
    // Refuse outputs that would destroy the trace or each other before any work.
    let mut outputs = Outputs::new();
    outputs.input(&args.file);
    if let Some(other) = &args.compare {
        outputs.input(other);
    }
    if let Some(path) = &args.svg {
        outputs.output("--svg", path).map_err(UsageError::new)?;
    }
    if let Some(path) = &args.html {
        outputs.output("--html", path).map_err(UsageError::new)?;
    }
    if let Some(other) = &args.compare {
        return compare(&args, other);
    }
    let trace = trace::load(&args.file)?;
    let events = trace.events()?;
    let story = story::build(&trace.scenario, &trace.ledger, &events);
    let story = shown(args.all, &trace, &story);
    let width = args
        .width
        .or_else(columns_from_env)
        .unwrap_or(DEFAULT_WIDTH);
    print!("{}", text::printable(&text::show(&trace, &story, width)));
    let pictures = [(&args.svg, "--svg"), (&args.html, "--html")];
    for (path, flag) in pictures {
        let Some(path) = path else { continue };
        let picture = if flag == "--svg" {
            trace::svg::svg(&trace, &story)
        } else {
            trace::svg::html(&trace, &story)
        };
        trace::files::write_atomic(path, picture.as_bytes()).map_err(|error| {
            UsageError::new(format!("{flag} {}: cannot write: {error}", path.display()))
        })?;
        eprintln!("wrote {}", path.display());
    }
    Ok(Status::Ok)
}

/// `show A --compare B`.
/// The story `show` draws ([`story::shown`]), unless `--all`.
fn shown(all: bool, trace: &trace::load::Trace, story: &story::Story) -> story::Story {
    if all {
        story.clone()
    } else {
        story::shown(story, trace.scenario.callers)
    }
}

fn compare(args: &Args, other: &std::path::Path) -> CommandResult {
    if args.svg.is_some() {
        return Err(UsageError::new(
            "--compare draws both runs on one HTML page: use --html OUT.html instead of --svg",
        ));
    }
    let left = trace::load(&args.file)?;
    let right = trace::load(other)?;
    let story_of = |trace: &trace::load::Trace| -> Result<story::Story, UsageError> {
        let events = trace.events()?;
        Ok(story::build(&trace.scenario, &trace.ledger, &events))
    };
    let (left_story, right_story) = (story_of(&left)?, story_of(&right)?);
    let comparison = trace::compare::compare(&left, &left_story, &right, &right_story);
    let width = args
        .width
        .or_else(columns_from_env)
        .unwrap_or(DEFAULT_WIDTH);
    print!(
        "{}",
        text::printable(&trace::compare::text(
            &left,
            &left_story,
            &right,
            &right_story,
            &comparison,
            width
        ))
    );
    if let Some(path) = &args.html {
        // Both pictures focused alike, on the run with the violation (else the left one), so
        // the two line up.
        let (left_picture, right_picture) = {
            let (left_shown, right_shown) = (
                shown(args.all, &left, &left_story),
                shown(args.all, &right, &right_story),
            );
            match (&left_shown.folded, &right_shown.folded) {
                (_, Some(folded)) if right_story.blame.is_some() => {
                    (story::focus_like(&left_story, folded), right_shown)
                }
                (Some(folded), _) => (left_shown.clone(), story::focus_like(&right_story, folded)),
                _ => (left_shown, right_shown),
            }
        };
        let page = trace::compare::html(&left, &left_picture, &right, &right_picture, &comparison);
        trace::files::write_atomic(path, page.as_bytes()).map_err(|error| {
            UsageError::new(format!("--html {}: cannot write: {error}", path.display()))
        })?;
        eprintln!("wrote {}", path.display());
    }
    Ok(Status::Ok)
}

#[cfg(test)]
mod tests {
    use super::parse_width;

    #[test]
    fn widths_out_of_range_are_refused_naming_the_range() {
        assert_eq!(parse_width("80"), Ok(80));
        for bad in ["0", "39", "1001", "-5", "99999999999999999999999"] {
            let error = parse_width(bad).unwrap_err();
            assert!(error.contains("40 to 1000"), "{bad}: {error}");
        }
        assert!(parse_width("wide")
            .unwrap_err()
            .contains("number of columns"));
    }
}
