//! Two traces side by side (`leaselab show A --compare B`): what differs between the runs
//! (their parameters), the first point where their stories part, and the marks from there on
//! in two columns; as text or as one HTML page with both pictures.
//!
//! Everything is read from typed data: the scenarios' mirrors ([`ScenarioSpec`]), the seeds,
//! and the [`Story`] marks (`story.rs`), never from rendered text.

use std::fmt::Write as _;

use super::format::ScenarioSpec;
use super::load::Trace;
use super::story::{time_text, Lane, Row, Story};

/// How many marks before the divergence the side-by-side view repeats for context.
pub const CONTEXT_MARKS: usize = 3;

/// The most marks per side the side-by-side view prints after the divergence.
pub const MAX_MARKS: usize = 40;

/// Where two stories part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The index of the first differing mark (equal in both before it).
    pub index: usize,
    /// The left run's mark there, if it has one.
    pub left: Option<MarkView>,
    /// The right run's.
    pub right: Option<MarkView>,
}

/// One mark as the comparison shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkView {
    /// When, µs after the release.
    pub t_us: i64,
    /// The lane's title.
    pub lane: String,
    /// The mark in words.
    pub text: String,
}

impl MarkView {
    fn of(row: &Row) -> MarkView {
        MarkView {
            t_us: row.mark.t_us,
            lane: lane_name(row.mark.lane),
            text: row.mark.text.clone(),
        }
    }

    fn describe(&self) -> String {
        format!("{} {}: {}", time_text(self.t_us), self.lane, self.text)
    }
}

fn lane_name(lane: Lane) -> String {
    match lane {
        Lane::Caller(n) => format!("app-{n}"),
        other => other.title(),
    }
}

/// The comparison of two traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// Parameters that differ: (name, left, right).
    pub differences: Vec<(String, String, String)>,
    /// The first mark where the stories part; none when they tell the same story.
    pub divergence: Option<Divergence>,
    /// The two ledger lines.
    pub ledgers: (String, String),
}

/// Compares two traces' parameters and stories.
pub fn compare(left: &Trace, left_story: &Story, right: &Trace, right_story: &Story) -> Comparison {
    let mut differences = Vec::new();
    if left.file.seed != right.file.seed {
        differences.push((
            "seed".to_string(),
            left.file.seed.to_string(),
            right.file.seed.to_string(),
        ));
    }
    differences.extend(spec_differences(&left.file.scenario, &right.file.scenario));
    // What a person sees of a mark: when, where, what it says. Marks whose typed data differ
    // only where the text does not show it (a check-and-set write's expected version) read
    // the same, so the divergence shown is the first one a reader can see.
    let same = |a: &Row, b: &Row| {
        a.mark.t_us == b.mark.t_us && a.mark.lane == b.mark.lane && a.mark.text == b.mark.text
    };
    let common = left_story
        .rows
        .iter()
        .zip(&right_story.rows)
        .take_while(|(a, b)| same(a, b))
        .count();
    let divergence =
        (common < left_story.rows.len().max(right_story.rows.len())).then(|| Divergence {
            index: common,
            left: left_story.rows.get(common).map(MarkView::of),
            right: right_story.rows.get(common).map(MarkView::of),
        });
    Comparison {
        differences,
        divergence,
        ledgers: (
            left_story.ledger_line.clone(),
            right_story.ledger_line.clone(),
        ),
    }
}

/// The scenario fields that differ, by name, as their JSON values (typed data serialised,
/// never parsed back).
fn spec_differences(left: &ScenarioSpec, right: &ScenarioSpec) -> Vec<(String, String, String)> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(left), serde_json::to_value(right))
    else {
        return Vec::new();
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let show = |v: Option<&serde_json::Value>| match v {
        None => "(none)".to_string(),
        Some(serde_json::Value::String(s)) if s.len() > 60 => {
            format!("{}…", &s[..s.floor_char_boundary(60)])
        }
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| (k.clone(), show(a.get(k)), show(b.get(k))))
        .collect()
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

/// The comparison for the terminal, about `width` columns wide.
pub fn text(
    left: &Trace,
    left_story: &Story,
    right: &Trace,
    right_story: &Story,
    comparison: &Comparison,
    width: usize,
) -> String {
    let mut out = String::new();
    for (side, trace, ledger) in [
        ("left: ", left, &comparison.ledgers.0),
        ("right:", right, &comparison.ledgers.1),
    ] {
        let line = format!("{side} {} — {ledger}", trace.path.display());
        super::text::wrap(&mut out, &line, "", "       ", width);
    }
    if comparison.differences.is_empty() {
        let _ = writeln!(out, "same parameters and seed");
    } else {
        let _ = writeln!(out, "what differs:");
        for (name, a, b) in &comparison.differences {
            let _ = writeln!(out, "  {name}: {a}  →  {b}");
        }
    }
    let Some(divergence) = &comparison.divergence else {
        let _ = writeln!(
            out,
            "the two runs tell the same story ({} marks)",
            left_story.rows.len()
        );
        return out;
    };
    let at = |side: &Option<MarkView>| {
        side.as_ref()
            .map_or("(the run had ended)".to_string(), MarkView::describe)
    };
    let _ = writeln!(
        out,
        "first divergence after {} equal mark(s):\n  left:  {}\n  right: {}",
        divergence.index,
        at(&divergence.left),
        at(&divergence.right)
    );
    let column = (width.saturating_sub(3) / 2).max(30);
    let _ = writeln!(out);
    let _ = writeln!(out, "{} │ right", fit("left", column));
    let _ = writeln!(out, "{}─┼─{}", "─".repeat(column), "─".repeat(column));
    let start = divergence.index.saturating_sub(CONTEXT_MARKS);
    let end = (divergence.index + MAX_MARKS).min(left_story.rows.len().max(right_story.rows.len()));
    for index in start..end {
        let cell = |story: &Story| {
            story.rows.get(index).map_or(String::new(), |row| {
                let blame = if row.mark.blame.is_some() {
                    " ◀ BLAME"
                } else {
                    ""
                };
                format!("{}{blame}", MarkView::of(row).describe())
            })
        };
        let marker = if index == divergence.index {
            "▶"
        } else {
            " "
        };
        let right = fit(&format!("{marker}{}", cell(right_story)), column);
        let _ = writeln!(
            out,
            "{} │ {}",
            fit(&format!("{marker}{}", cell(left_story)), column),
            right.trim_end()
        );
    }
    let longest = left_story.rows.len().max(right_story.rows.len());
    if end < longest {
        let _ = writeln!(
            out,
            "… {} more mark(s); the HTML view (--html) shows both runs whole",
            longest - end
        );
    }
    out
}

/// The comparison as one HTML page: what differs, the divergence, both pictures side by side.
pub fn html(
    left: &Trace,
    left_story: &Story,
    right: &Trace,
    right_story: &Story,
    comparison: &Comparison,
) -> String {
    let escape = super::svg::escape;
    let mut differences = String::new();
    for (name, a, b) in &comparison.differences {
        let _ = writeln!(
            differences,
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
            escape(name),
            escape(a),
            escape(b)
        );
    }
    let divergence = match &comparison.divergence {
        None => "The two runs tell the same story.".to_string(),
        Some(d) => {
            let at = |side: &Option<MarkView>| {
                side.as_ref()
                    .map_or("(the run had ended)".to_string(), MarkView::describe)
            };
            format!(
                "First divergence after {} equal mark(s): left <b>{}</b>, right <b>{}</b>.",
                d.index,
                escape(&at(&d.left)),
                escape(&at(&d.right))
            )
        }
    };
    let class = |line: &str| {
        if line.ends_with("BROKEN") {
            "broken"
        } else {
            "ok"
        }
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>leaselab: two runs side by side</title>
<style>
body {{ font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px; color: #111; }}
.broken {{ color: #d62728; font-weight: bold; }}
.ok {{ color: #2ca02c; font-weight: bold; }}
table {{ border-collapse: collapse; margin-bottom: 16px; }}
th, td {{ text-align: left; padding: 2px 12px 2px 0; vertical-align: top; }}
td {{ font-family: "DejaVu Sans Mono", monospace; }}
.side {{ display: flex; gap: 16px; align-items: flex-start; }}
.side > div {{ overflow-x: auto; border: 1px solid #ddd; flex: 1; }}
</style>
</head>
<body>
<h1>Two runs side by side</h1>
<table>
<tr><th></th><th>left</th><th>right</th></tr>
<tr><th>trace</th><td>{left_path}</td><td>{right_path}</td></tr>
<tr><th>ledger</th><td class="{left_class}">{left_ledger}</td><td class="{right_class}">{right_ledger}</td></tr>
{differences}</table>
<p>{divergence}</p>
<div class="side">
<div>
{left_svg}</div>
<div>
{right_svg}</div>
</div>
</body>
</html>
"#,
        left_path = escape(&left.path.display().to_string()),
        right_path = escape(&right.path.display().to_string()),
        left_class = class(&comparison.ledgers.0),
        right_class = class(&comparison.ledgers.1),
        left_ledger = escape(&comparison.ledgers.0),
        right_ledger = escape(&comparison.ledgers.1),
        left_svg = super::svg::svg(left, left_story),
        right_svg = super::svg::svg(right, right_story),
    )
}
