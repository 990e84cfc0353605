//! `leaselab show`: a trace as a terminal timeline (one lane per caller, Redis and
//! PostgreSQL), then the same run in words, as the tutorial tells it.

use std::fmt::Write as _;

use leaselab_model::safeguard::Outcome;

use super::load::Trace;
use super::story::{time_text, Bar, Kind, Lane, Story};

/// Width of the time column.
const TIME_WIDTH: usize = 9;

/// The header: what ran, and how it was judged.
pub fn header(trace: &Trace) -> String {
    let scenario = &trace.scenario;
    let params = &scenario.params;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "trace {} — scenario {}, safeguard {}, seed {}",
        trace.path.display(),
        scenario.name,
        scenario.safeguard.name(),
        trace.file.seed
    );
    let _ = writeln!(
        text,
        "{} caller(s) {}; TTL {}ms, work {}ms{}",
        scenario.callers,
        scenario
            .safeguard
            .money_phrase(params.amount, scenario.initial_balance),
        params.ttl_ms,
        params.work_ms,
        if scenario.initial_fence_counter != 0 {
            format!(
                ", fence counter starts at {}",
                scenario.initial_fence_counter
            )
        } else {
            String::new()
        }
    );
    if !scenario.start_offsets_ms.iter().all(|o| *o == 0) {
        let offsets: Vec<String> = scenario
            .start_offsets_ms
            .iter()
            .enumerate()
            .map(|(i, o)| format!("app-{} at {o}ms", i + 1))
            .collect();
        let _ = writeln!(text, "starts: {}", offsets.join(", "));
    }
    if !scenario.faults.is_empty() {
        let faults: Vec<String> = scenario.faults.iter().map(|f| f.describe()).collect();
        let _ = writeln!(text, "faults: {}", faults.join("; "));
    }
    if let Some(model) = &trace.model {
        let _ = writeln!(
            text,
            "from a model counterexample: '{}' violated in {} steps ({} ms per tick)",
            model.property,
            model.actions.len(),
            model.ms_per_tick
        );
    }
    let _ = writeln!(
        text,
        "digest {} (leaselab {}, format {})",
        trace.file.digest, trace.file.leaselab_version, trace.file.format_version
    );
    text
}

fn fit(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        format!("{text}{}", " ".repeat(width - count))
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

fn glyph(bar: Bar) -> &'static str {
    match bar {
        Bar::Idle => " ",
        Bar::Running => "│",
        Bar::Holding => "┃",
        Bar::Stale => "╎",
        Bar::Paused => "║",
    }
}

/// Text width of each lane's cells: the servers get a fixed share, the callers the rest
/// (at least 12 columns each). When that is wider than `width`, every lane shrinks in
/// proportion, down to [`MIN_LANE_WIDTH`] (a cell's text is cut with `…`).
fn lane_widths(story: &Story, width: usize) -> Vec<usize> {
    let (redis, postgres) = (24, 28);
    let callers = story.lanes.len().saturating_sub(2).max(1);
    let rest = width.saturating_sub(TIME_WIDTH + 1 + redis + 3 + postgres + 3);
    let caller = (rest / callers).clamp(15, 37) - 3;
    let widths: Vec<usize> = story
        .lanes
        .iter()
        .map(|lane| match lane {
            Lane::Caller(_) => caller,
            Lane::Others { .. } => caller.max(30),
            Lane::Redis => redis,
            Lane::Postgres => postgres,
        })
        .collect();
    // Each lane also takes "│ " and " " around its text.
    let frame = TIME_WIDTH + 1 + 3 * widths.len();
    let wanted: usize = widths.iter().sum();
    let room = width.saturating_sub(frame);
    if wanted <= room {
        return widths;
    }
    let mut widths: Vec<usize> = widths
        .iter()
        .map(|w| (w * room / wanted).max(MIN_LANE_WIDTH))
        .collect();
    // Lanes raised to the minimum may still overflow: take a column at a time from the widest.
    while widths.iter().sum::<usize>() > room {
        let Some(widest) = widths
            .iter_mut()
            .filter(|w| **w > MIN_LANE_WIDTH)
            .max_by_key(|w| **w)
        else {
            break;
        };
        *widest -= 1;
    }
    widths
}

/// The narrowest a lane's text gets when the picture must fit the width.
const MIN_LANE_WIDTH: usize = 8;

/// Rows that happen at the same moment in different lanes share a line.
fn lines(story: &Story) -> Vec<Vec<&super::story::Row>> {
    let mut lines: Vec<Vec<&super::story::Row>> = Vec::new();
    for row in &story.rows {
        match lines.last_mut() {
            Some(line)
                if line[0].mark.t_us == row.mark.t_us
                    && line
                        .iter()
                        .all(|r| r.mark.lane != row.mark.lane && r.mark.blame.is_none()) =>
            {
                line.push(row)
            }
            _ => lines.push(vec![row]),
        }
    }
    lines
}

/// The lane diagram, about `width` columns wide (lanes get at least 12 columns each).
pub fn timeline(story: &Story, width: usize) -> String {
    let widths = lane_widths(story, width);
    let mut text = String::new();
    let needed = TIME_WIDTH + 1 + widths.iter().map(|w| w + 3).sum::<usize>();
    if needed > width {
        let _ = writeln!(
            text,
            "(this picture needs {needed} columns for its {} lanes, more than the width {width})",
            widths.len()
        );
    }
    let mut line = format!("{:>TIME_WIDTH$} ", "time");
    for (lane, lane_width) in story.lanes.iter().zip(&widths) {
        let _ = write!(line, "│ {} ", fit(&lane.title(), *lane_width));
    }
    let _ = writeln!(text, "{}", line.trim_end());
    let mut rule = "─".repeat(TIME_WIDTH + 1);
    for lane_width in &widths {
        let _ = write!(rule, "┼{}", "─".repeat(lane_width + 2));
    }
    let _ = writeln!(text, "{rule}");
    for rows in lines(story) {
        let last = rows[rows.len() - 1];
        let mut line = format!("{:>TIME_WIDTH$} ", time_text(last.mark.t_us));
        for (lane, lane_width) in story.lanes.iter().zip(&widths) {
            let cell = match rows.iter().find(|r| r.mark.lane == *lane) {
                Some(row) if row.mark.blame.is_some() => format!("✗ {} ◀ BLAME", row.mark.text),
                Some(row) => row.mark.text.clone(),
                None => match lane {
                    Lane::Caller(n) => glyph(last.bars[*n as usize - 1]).to_string(),
                    Lane::Redis => match last.lock_holder {
                        Some(_) => "┃".to_string(),
                        None => String::new(),
                    },
                    Lane::Postgres | Lane::Others { .. } => String::new(),
                },
            };
            let _ = write!(line, "│ {} ", fit(&cell, *lane_width));
        }
        let _ = writeln!(text, "{}", line.trim_end());
        for row in &rows {
            if let Some(blame) = &row.mark.blame {
                let first = format!("{:>TIME_WIDTH$} ╰─ ", "");
                let rest = " ".repeat(TIME_WIDTH + 4);
                wrap(&mut text, blame, &first, &rest, width.max(first.len() + 20));
            }
        }
    }
    let _ = writeln!(text, "{rule}");
    let _ = writeln!(
        text,
        "{:>TIME_WIDTH$} ┃ holds the lease  ╎ believes it holds the lock, the lease is gone  ║ paused  │ running",
        ""
    );
    text
}

/// The run in words, one line per caller's consecutive marks, as the tutorial prints it:
/// `A: got the lock, fence 33, read balance 100`.
pub fn words(story: &Story) -> String {
    // The tutorial's letters for the first callers; in a focused story only the callers with
    // lanes of their own have theirs introduced, so the folded ones keep `app-N`.
    let name_of = |n: u32| -> String {
        let folded_away = story
            .folded
            .as_ref()
            .is_some_and(|folded| !folded.shown.contains(&n));
        match super::story::letter(n) {
            Some(l) if !folded_away => l.to_string(),
            _ => format!("app-{n}"),
        }
    };
    let mut text = String::new();
    let mut current: Option<(Lane, Vec<String>)> = None;
    let flush = |text: &mut String, current: &mut Option<(Lane, Vec<String>)>| {
        if let Some((lane, parts)) = current.take() {
            let who = match lane {
                Lane::Caller(n) => name_of(n),
                Lane::Redis => "redis".into(),
                Lane::Postgres => "postgres".into(),
                Lane::Others { .. } => "others".into(),
            };
            let _ = writeln!(text, "{who}: {}", parts.join(", "));
        }
    };
    for row in &story.rows {
        let mark = &row.mark;
        let phrase = match &mark.kind {
            Kind::Start | Kind::RowWritten { .. } | Kind::RowRefused | Kind::LockTaken { .. } => {
                continue
            }
            Kind::Done {
                outcome: Outcome::Accepted { .. },
            } => continue,
            Kind::Release { ok: true } => continue,
            Kind::LockDeleted { .. } => continue,
            Kind::Pause { point, ms } => {
                format!(
                    "paused for {ms}ms at {} (GC pause, slow network, stopped VM)",
                    point.name()
                )
            }
            Kind::Resume => "wakes up and carries on".into(),
            Kind::Busy { count, .. } if *count > 1 => format!("finds the lock busy {count} times"),
            Kind::Busy { .. } => "finds the lock busy".into(),
            Kind::LeaseExpired { holder } => {
                let caller = holder
                    .strip_prefix("app-")
                    .and_then(|n| n.parse::<u32>().ok());
                let name = caller.map_or_else(|| holder.clone(), name_of);
                let still = caller
                    .and_then(|c| row.bars.get(c as usize - 1))
                    .is_some_and(|bar| matches!(bar, Bar::Paused | Bar::Stale));
                if still {
                    format!(
                        "the lease of {name} expires while {name} still believes it holds the lock"
                    )
                } else {
                    format!("the lease of {name} expires")
                }
            }
            _ => mark.text.clone(),
        };
        let phrase = match &mark.blame {
            Some(_) => format!("{phrase}   <- BLAME"),
            None => phrase,
        };
        // A pause or a wake-up starts its own line, as in the tutorial.
        let alone = matches!(mark.kind, Kind::Pause { .. } | Kind::Resume)
            || mark.blame.is_some()
            || matches!(mark.kind, Kind::Write { .. } | Kind::Release { .. });
        match &mut current {
            Some((lane, parts)) if *lane == mark.lane && !alone => parts.push(phrase),
            _ => {
                flush(&mut text, &mut current);
                current = Some((mark.lane, vec![phrase]));
            }
        }
        if alone {
            flush(&mut text, &mut current);
        }
    }
    flush(&mut text, &mut current);
    text
}

/// Appends `line` wrapped at `width` columns (between words): `first` before its first line,
/// `rest` before the others.
pub fn wrap(text: &mut String, line: &str, first: &str, rest: &str, width: usize) {
    let mut current = first.to_string();
    let mut empty = true;
    for word in line.split_whitespace() {
        let wide = current.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && wide > width {
            text.push_str(current.trim_end());
            text.push('\n');
            current = rest.to_string();
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    text.push_str(current.trim_end());
    text.push('\n');
}

/// `text` safe to print on a terminal: a control character a trace carried (an escape
/// sequence in a scenario's name, say) is written as its `\u{..}` escape, so a trace cannot
/// drive the terminal; line breaks and tabs stay.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    std::borrow::Cow::Owned(shown)
}

/// Everything `leaselab show` prints for one trace.
pub fn show(trace: &Trace, story: &Story, width: usize) -> String {
    // Prose lines longer than the width wrap between words; shorter ones stay as they are.
    let mut text = String::new();
    let prose = |text: &mut String, line: &str| {
        if line.chars().count() > width {
            wrap(text, line, "", "  ", width);
        } else {
            text.push_str(line);
            text.push('\n');
        }
    };
    for line in header(trace).lines() {
        prose(&mut text, line);
    }
    if let Some(folded) = &story.folded {
        prose(&mut text, &folded.describe());
    }
    text.push('\n');
    text.push_str(&timeline(story, width));
    text.push('\n');
    for line in words(story).lines() {
        prose(&mut text, line);
    }
    let _ = writeln!(text, "final: {}", story.ledger_line);
    if let Some(blame) = &story.blame {
        prose(&mut text, blame);
    }
    text
}
