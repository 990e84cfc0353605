//! The matrix as one self-contained HTML page: the table, a legend, the cost of the SAFE
//! cells, and every BROKEN cell with its sentence of why, its narrated counterexample and its
//! timeline (the picture of `leaselab show`, inlined). No network, no fonts or scripts from
//! elsewhere.

use std::fmt::Write as _;
use std::path::Path;

use super::{Cell, Column, Counterexample, Matrix, Verdict};
use crate::trace::{self, story, svg, text};

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn anchor(cell: &Cell) -> String {
    format!("cell-{}-{}", trace::format::slug(&cell.row), cell.column)
}

fn class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Safe => "safe",
        Verdict::Broken => "broken",
        Verdict::Inconclusive => "inconclusive",
        Verdict::NotApplicable | Verdict::NotExpressible => "na",
    }
}

/// The timeline and the run in words of a saved trace, or why it cannot be shown.
fn timeline(path: &Path) -> String {
    let loaded = trace::load(path).map_err(|e| e.to_string()).and_then(|t| {
        let events = t.events().map_err(|e| e.to_string())?;
        Ok((t, events))
    });
    match loaded {
        Ok((trace, events)) => {
            let whole = story::build(&trace.scenario, &trace.ledger, &events);
            let story = story::shown(&whole, trace.scenario.callers);
            format!(
                "<div class=\"picture\">{}</div>\n<pre>{}final: {}\n{}</pre>\n",
                svg::svg(&trace, &story),
                escape(&text::words(&story)),
                escape(&story.ledger_line),
                escape(story.blame.as_deref().unwrap_or(""))
            )
        }
        Err(error) => format!("<p>timeline not shown: {}</p>\n", escape(&error)),
    }
}

fn counterexample(out: &mut String, label: &str, found: &Counterexample) {
    let _ = writeln!(out, "<h4>{}</h4>", escape(label));
    let _ = writeln!(out, "<p class=\"why\">{}</p>", escape(&found.why));
    if !found.steps.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>the model's path, step by step</summary><pre>{}</pre></details>",
            escape(&found.steps.join("\n"))
        );
    }
    match &found.trace {
        Some(path) => {
            let shown = path.display().to_string();
            let _ = writeln!(
                out,
                "<p>trace: <code>{0}</code> (<code>leaselab replay {0}</code>, <code>leaselab show {0}</code>)</p>",
                escape(&shown)
            );
            out.push_str(&timeline(path));
        }
        None => {
            let note = found.trace_note.as_deref().unwrap_or("no trace");
            let _ = writeln!(out, "<p>no trace: {}</p>", escape(note));
        }
    }
}

/// The report as one HTML document.
pub fn report(matrix: &Matrix, columns: &[Column]) -> String {
    let mut table = String::new();
    table.push_str("<tr><th>safeguard</th>");
    for column in columns {
        let _ = write!(
            table,
            "<th title=\"{}\">{}</th>",
            escape(&column.describe()),
            escape(&column.name())
        );
    }
    table.push_str("</tr>\n");
    for row in &matrix.rows {
        let _ = write!(table, "<tr><th class=\"row\">{}</th>", escape(row));
        for column in columns {
            let Some(cell) = matrix.cell(row, *column) else {
                table.push_str("<td></td>");
                continue;
            };
            let verdict = cell.verdict();
            let symbols = format!(
                "{}{}",
                cell.exhaustive.verdict.symbol(),
                cell.simulated.verdict.symbol()
            );
            let simulated = &cell.simulated;
            let mut undecided = String::new();
            if simulated.inconclusive > 0 {
                undecided.push_str(&format!(
                    ", {} stopped at their time limit",
                    simulated.inconclusive
                ));
            }
            if simulated.untested > 0 {
                undecided.push_str(&format!(
                    ", {} spent nothing (no spend reached the storage)",
                    simulated.untested
                ));
            }
            let title = format!(
                "exhaustive: {} ({}); simulated: {} ({}/{} BROKEN{undecided}){}",
                cell.exhaustive.verdict.as_str(),
                cell.exhaustive.bound,
                simulated.verdict.as_str(),
                simulated.broken,
                simulated.runs,
                if cell.unexpected {
                    "; NOT as the tutorial says"
                } else {
                    ""
                }
            );
            let title = match &cell.note {
                Some(note) => format!("{title}; note: {note}"),
                None => title,
            };
            let mark = if cell.unexpected { "!" } else { "" };
            let inner = if verdict == Verdict::Broken {
                format!("<a href=\"#{}\">{symbols}{mark}</a>", anchor(cell))
            } else {
                format!("{symbols}{mark}")
            };
            let _ = write!(
                table,
                "<td class=\"{}\" title=\"{}\">{inner}</td>",
                class(verdict),
                escape(&title)
            );
        }
        table.push_str("</tr>\n");
    }

    let mut faults = String::new();
    for column in columns {
        let _ = writeln!(
            faults,
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
            escape(&column.name()),
            escape(&column.describe()),
            escape(column.check_scope())
        );
    }

    let mut costs = String::new();
    for cell in &matrix.cells {
        if cell.verdict() != Verdict::Safe {
            continue;
        }
        let cost = &cell.simulated.cost;
        let _ = writeln!(
            costs,
            "<tr><td>{}</td><td>{}</td><td>{}ms</td><td>{}ms</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&cell.row),
            escape(&cell.column),
            cost.median_ms,
            cost.p99_ms,
            cost.gave_up,
            cost.rejected,
            cost.failed
        );
    }

    let mut broken = String::new();
    for cell in &matrix.cells {
        if cell.verdict() != Verdict::Broken {
            continue;
        }
        let _ = writeln!(
            broken,
            "<section id=\"{}\"><h3>{} &times; {}</h3>",
            anchor(cell),
            escape(&cell.row),
            escape(&cell.column)
        );
        if let Some(expected) = &cell.expected {
            let _ = writeln!(
                broken,
                "<p>the tutorial: {} ({}){}</p>",
                expected.simulated.as_str(),
                escape(&expected.source),
                if cell.unexpected {
                    " &mdash; <b>this cell disagrees</b>"
                } else {
                    ""
                }
            );
        }
        let ex = &cell.exhaustive;
        let scope = if ex.verdict == Verdict::NotExpressible {
            String::new()
        } else {
            format!("; {}", escape(&ex.scope))
        };
        let _ = writeln!(
            broken,
            "<p>exhaustive: <b>{}</b> &mdash; {}{scope}</p>",
            ex.verdict.as_str(),
            escape(&ex.bound)
        );
        let sim = &cell.simulated;
        let _ = writeln!(
            broken,
            "<p>simulated: <b>{}</b> &mdash; {} of {} runs BROKEN ({})</p>",
            sim.verdict.as_str(),
            sim.broken,
            sim.runs,
            escape(&sim.seeds)
        );
        if let Some(found) = &ex.counterexample {
            let steps = ex.steps.map(|s| format!(", {s} steps")).unwrap_or_default();
            counterexample(
                &mut broken,
                &format!("shortest counterexample (exhaustive{steps})"),
                found,
            );
        }
        // The column's own scenario too: the exhaustive path is the shortest, the simulated
        // run the story the column tells (50 callers under a 1 ms TTL, a GC pause, ...).
        if let Some(found) = &sim.counterexample {
            counterexample(
                &mut broken,
                &format!(
                    "shortest BROKEN run (simulated, seed {})",
                    found.seed.unwrap_or_default()
                ),
                found,
            );
        }
        broken.push_str("</section>\n");
    }

    let unexpected = matrix.unexpected().len();
    let inconclusive = matrix.inconclusive().len();
    let pinned = matrix.cells.iter().filter(|c| c.expected.is_some()).count();
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>leaselab matrix</title>
<style>
body {{ font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px; color: #111; }}
h1 {{ font-size: 22px; margin: 0 0 8px 0; }}
table {{ border-collapse: collapse; margin-bottom: 16px; }}
.matrix td, .matrix th {{ border: 1px solid #ccc; padding: 3px 2px; text-align: center; }}
.matrix th {{ font-size: 12px; }}
.matrix th.row {{ text-align: left; font-family: "DejaVu Sans Mono", monospace; font-weight: normal; }}
.matrix td {{ font-size: 16px; min-width: 30px; }}
.matrix td a {{ color: inherit; text-decoration: none; }}
td.safe {{ background: #c7ecc7; color: #1b5e20; }}
td.broken {{ background: #f7b6b6; color: #8b0000; font-weight: bold; }}
td.inconclusive {{ background: #ffe0a3; color: #7a4f00; }}
td.na {{ background: #eeeeee; color: #999; }}
.list td, .list th {{ border-bottom: 1px solid #eee; padding: 2px 12px 2px 0; text-align: left; vertical-align: top; }}
.why {{ font-size: 16px; color: #8b0000; }}
pre {{ background: #f6f6f6; padding: 12px; font-size: 13px; overflow-x: auto; }}
.picture {{ overflow-x: auto; border: 1px solid #ddd; max-height: 640px; }}
section {{ border-top: 2px solid #ddd; margin-top: 24px; }}
</style>
</head>
<body>
<h1>leaselab matrix: which safeguards prevent lost updates, under which faults</h1>
<p>Each cell is decided twice: first symbol <b>exhaustive</b> (the model checker, bound stated per cell),
second symbol <b>simulated</b> ({runs} seeds from {first}). Cells are judged by the ledger: final balance =
initial &minus; amount &times; accepted, never negative. {pinned} cells are pinned to what the tutorial says;
{unexpected} disagree; {inconclusive} are undecided.</p>
<table class="matrix">
{table}</table>
<h2>Legend</h2>
<table class="list">
<tr><th>&#10003;</th><td>SAFE: held in every explored interleaving / every seed</td></tr>
<tr><th>&#10007;</th><td>BROKEN: a lost update or a negative balance; click the cell for its counterexample</td></tr>
<tr><th>?</th><td>INCONCLUSIVE: the bound or the time limit stopped the work before a verdict, or no seed put a spend to the storage</td></tr>
<tr><th>&middot;</th><td>n/a: the fault does not apply to the safeguard</td></tr>
<tr><th>-</th><td>(exhaustive) the checker cannot express the fault</td></tr>
<tr><th>!</th><td>the cell disagrees with what the tutorial says</td></tr>
</table>
<h2>Faults</h2>
<table class="list">
<tr><th>column</th><th>simulated scenario</th><th>exhaustive check</th></tr>
{faults}</table>
<h2>Cost of the SAFE cells</h2>
<p>Simulated time from the release to the last caller's end (median, 99th percentile), callers that gave up
waiting for the lock, writes the storage refused, and callers that failed with an error (a restart without
persistence wipes a balance kept in Redis: the callers after it fail instead of spending), summed over the
{runs} runs.</p>
<table class="list">
<tr><th>safeguard</th><th>fault</th><th>median</th><th>p99</th><th>gave up</th><th>rejected</th><th>failed</th></tr>
{costs}</table>
<h2>BROKEN cells</h2>
{broken}</body>
</html>
"#,
        runs = matrix.runs,
        first = matrix.first_seed,
    )
}
