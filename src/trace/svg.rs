//! The timeline as a picture for a design review, in the style of Kleppmann's lane
//! diagrams: one vertical lane per caller, Redis and PostgreSQL, time flowing down; arrows
//! from the callers to the servers; lease bars on the callers' lanes (solid while the
//! server holds the lease, dashed red once it is gone but the caller still believes it
//! holds it); grey blocks for pauses; a red mark on the write the ledger blames.
//!
//! [`svg`] draws the picture; [`html`] wraps it in a page with the parameters, the run in
//! words and the ledger.

use std::fmt::Write as _;

use leaselab_model::safeguard::BalanceIn;

use super::load::Trace;
use super::story::{time_text, Bar, Kind, Lane, Row, Story};

const CALLER_WIDTH: f64 = 250.0;
const SERVER_WIDTH: f64 = 230.0;
const LEFT: f64 = 80.0;
const TOP: f64 = 110.0;
const ROW: f64 = 30.0;
const PALETTE: [&str; 8] = [
    "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
];
const RED: &str = "#d62728";

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn color(caller: u32) -> &'static str {
    PALETTE[(caller as usize - 1) % PALETTE.len()]
}

/// Where things go.
struct Layout {
    /// Each lane's axis x.
    lane_x: Vec<f64>,
    /// Each row's y.
    row_y: Vec<f64>,
    width: f64,
    height: f64,
}

impl Layout {
    /// Where the lanes end.
    fn bottom(&self) -> f64 {
        self.height - 80.0
    }

    /// The lower edge of row `to`: the next row's y, or one row below the last.
    fn end_y(&self, to: usize) -> f64 {
        if to + 1 < self.row_y.len() {
            self.row_y[to + 1]
        } else {
            self.row_y[to] + ROW
        }
    }
}

fn layout(story: &Story) -> Layout {
    let mut lane_x = Vec::new();
    let mut x = LEFT;
    for lane in &story.lanes {
        lane_x.push(x + 14.0);
        x += match lane {
            Lane::Caller(_) => CALLER_WIDTH,
            _ => SERVER_WIDTH,
        };
    }
    // Time flows down; long quiet stretches take more room, but not in proportion (a 250 ms
    // pause must not dwarf 1 ms round trips).
    let mut row_y = Vec::new();
    let mut y = TOP + 20.0;
    let mut previous: Option<i64> = None;
    for row in &story.rows {
        if let Some(before) = previous {
            let gap_ms = (row.mark.t_us - before).max(0) as f64 / 1_000.0;
            y += ROW + (gap_ms + 1.0).log10() * 22.0;
        }
        row_y.push(y);
        previous = Some(row.mark.t_us);
    }
    Layout {
        lane_x,
        row_y,
        width: x + 20.0,
        height: y + 110.0,
    }
}

fn lane_index(story: &Story, lane: Lane) -> usize {
    story
        .lanes
        .iter()
        .position(|l| *l == lane)
        .expect("every mark's lane is drawn")
}

/// The server a caller's mark talks to, if it talks to one.
fn server_of(kind: &Kind, balance_in: BalanceIn) -> Option<Lane> {
    match kind {
        Kind::Acquire { .. } | Kind::Busy { .. } | Kind::Release { .. } | Kind::Refresh { .. } => {
            Some(Lane::Redis)
        }
        Kind::Read { .. } | Kind::Write { .. } => Some(match balance_in {
            BalanceIn::Redis => Lane::Redis,
            BalanceIn::Postgres => Lane::Postgres,
        }),
        _ => None,
    }
}

/// The bars of one caller: (from row, to row, state).
fn segments(rows: &[Row], caller: u32) -> Vec<(usize, usize, Bar)> {
    let mut segments: Vec<(usize, usize, Bar)> = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let bar = row.bars[caller as usize - 1];
        match segments.last_mut() {
            Some((_, to, last)) if *last == bar => *to = index,
            _ => {
                if let Some((_, to, _)) = segments.last_mut() {
                    *to = index;
                }
                segments.push((index, index, bar));
            }
        }
    }
    segments
}

/// The timeline as a standalone SVG document.
pub fn svg(trace: &Trace, story: &Story) -> String {
    let layout = layout(story);
    let mut out = String::new();
    header(&mut out, &layout, trace);
    lanes(&mut out, &layout, story);
    caller_bars(&mut out, &layout, story);
    lock_bars(&mut out, &layout, story);
    marks(&mut out, &layout, story, trace.scenario.balance_in());
    footer(&mut out, &layout, story);
    out.push_str("</svg>\n");
    out
}

/// The document's opening, definitions, background and title.
fn header(out: &mut String, layout: &Layout, trace: &Trace) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">"#,
        w = layout.width,
        h = layout.height
    );
    let _ = writeln!(
        out,
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker><marker id="arrow-red" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{RED}"/></marker><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#e6e6e6"/><line x1="0" y1="0" x2="0" y2="6" stroke="#aaa" stroke-width="3"/></pattern></defs>"##
    );
    let _ = writeln!(
        out,
        r#"<rect x="0" y="0" width="{:.0}" height="{:.0}" fill="white"/>"#,
        layout.width, layout.height
    );
    // Title.
    let scenario = &trace.scenario;
    let _ = writeln!(
        out,
        r#"<text x="16" y="26" font-size="17" font-weight="bold">{}</text>"#,
        escape(&format!(
            "{} — safeguard {}, seed {}",
            scenario.name,
            scenario.safeguard.name(),
            trace.file.seed
        ))
    );
    let mut faults: Vec<String> = scenario.faults.iter().map(|f| f.describe()).collect();
    if faults.is_empty() {
        faults.push("no faults".into());
    }
    let _ = writeln!(
        out,
        r##"<text x="16" y="46" fill="#444">{}</text>"##,
        escape(&format!(
            "{} callers {}; TTL {}ms, work {}ms; {}",
            scenario.callers,
            scenario
                .safeguard
                .money_phrase(scenario.params.amount, scenario.initial_balance),
            scenario.params.ttl_ms,
            scenario.params.work_ms,
            faults.join("; ")
        ))
    );
}

/// Each lane's title and axis.
fn lanes(out: &mut String, layout: &Layout, story: &Story) {
    let bottom = layout.bottom();
    for (index, lane) in story.lanes.iter().enumerate() {
        let x = layout.lane_x[index];
        let stroke = match lane {
            Lane::Caller(n) => color(*n),
            _ => "#333",
        };
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="14" font-weight="bold" fill="{stroke}">{}</text>"#,
            x - 6.0,
            TOP - 14.0,
            escape(&lane.title())
        );
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="{stroke}" stroke-width="1.5" stroke-opacity="0.5"/>"#,
            TOP - 6.0
        );
    }
}

/// Lease bars and pauses on the callers' lanes.
fn caller_bars(out: &mut String, layout: &Layout, story: &Story) {
    let rows = &story.rows;
    for lane in &story.lanes {
        let Lane::Caller(caller) = *lane else {
            continue;
        };
        let x = layout.lane_x[lane_index(story, *lane)];
        let segments = segments(rows, caller);
        let count = segments.len();
        for (number, (from, to, bar)) in segments.into_iter().enumerate() {
            let y1 = layout.row_y[from];
            let y2 = if number + 1 == count {
                layout.end_y(to)
            } else {
                layout.row_y[to]
            };
            if y2 <= y1 {
                continue;
            }
            match bar {
                Bar::Holding => {
                    let _ = writeln!(
                        out,
                        r#"<rect x="{:.1}" y="{y1:.1}" width="7" height="{:.1}" fill="{}" fill-opacity="0.75"><title>holds the lease</title></rect>"#,
                        x - 3.5,
                        y2 - y1,
                        color(caller)
                    );
                }
                Bar::Stale => {
                    let _ = writeln!(
                        out,
                        r#"<rect x="{:.1}" y="{y1:.1}" width="7" height="{:.1}" fill="none" stroke="{RED}" stroke-width="1.5" stroke-dasharray="4 3"><title>believes it holds the lock; the lease is gone</title></rect>"#,
                        x - 3.5,
                        y2 - y1
                    );
                }
                Bar::Paused => {
                    let _ = writeln!(
                        out,
                        r##"<rect x="{:.1}" y="{y1:.1}" width="20" height="{:.1}" fill="url(#hatch)" stroke="#999"><title>paused</title></rect>"##,
                        x - 10.0,
                        y2 - y1
                    );
                }
                Bar::Running | Bar::Idle => {}
            }
        }
    }
}

/// Who holds the lock, on Redis's lane.
fn lock_bars(out: &mut String, layout: &Layout, story: &Story) {
    let rows = &story.rows;
    let redis_x = layout.lane_x[lane_index(story, Lane::Redis)];
    let mut from: Option<(usize, u32)> = None;
    for (index, row) in rows.iter().enumerate() {
        let current = row.lock_holder;
        if from.map(|(_, h)| h) != current {
            if let Some((start, holder)) = from.take() {
                lock_bar(
                    out,
                    redis_x,
                    layout.row_y[start],
                    layout.row_y[index],
                    holder,
                );
            }
            from = current.map(|h| (index, h));
        }
    }
    if let Some((start, holder)) = from {
        let last = layout.row_y.len() - 1;
        lock_bar(
            out,
            redis_x,
            layout.row_y[start],
            layout.end_y(last),
            holder,
        );
    }
}

/// Time labels, arrows to the servers, and each mark with its words.
fn marks(out: &mut String, layout: &Layout, story: &Story, balance_in: BalanceIn) {
    let rows = &story.rows;
    let mut last_time: Option<i64> = None;
    for (index, row) in rows.iter().enumerate() {
        let y = layout.row_y[index];
        let mark = &row.mark;
        if last_time != Some(mark.t_us) {
            let _ = writeln!(
                out,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#777" font-size="11">{}</text>"##,
                LEFT - 6.0,
                y + 4.0,
                time_text(mark.t_us)
            );
            last_time = Some(mark.t_us);
        }
        let x = layout.lane_x[lane_index(story, mark.lane)];
        let blamed = mark.blame.is_some();
        let rejected = matches!(
            mark.kind,
            Kind::Write {
                accepted: false,
                ..
            }
        ) || matches!(
            mark.kind,
            Kind::Release { ok: false } | Kind::Refresh { ok: false }
        );
        if let Some(server) = server_of(&mark.kind, balance_in) {
            let sx = layout.lane_x[lane_index(story, server)];
            let (stroke, marker, width) = if blamed {
                (RED, "arrow-red", 2.5)
            } else {
                ("#555", "arrow", 1.2)
            };
            let _ = writeln!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{stroke}" stroke-width="{width}" marker-end="url(#{marker})"/>"#,
                x + 5.0,
                y + 1.0,
                sx - 4.0,
                y + 7.0
            );
            if rejected {
                let _ = writeln!(
                    out,
                    r#"<text x="{:.1}" y="{:.1}" fill="{RED}" font-size="16" font-weight="bold">✗</text>"#,
                    sx - 22.0,
                    y + 5.0
                );
            }
        }
        let (fill, radius) = match &mark.kind {
            _ if blamed => (RED, 7.0),
            Kind::LeaseExpired { .. } | Kind::Fault => (RED, 5.0),
            Kind::Pause { .. } => ("#777", 5.0),
            _ => match mark.lane {
                Lane::Caller(n) => (color(n), 4.0),
                _ => ("#333", 3.5),
            },
        };
        let _ = writeln!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{radius}" fill="{fill}"/>"#
        );
        let weight =
            if blamed || matches!(mark.kind, Kind::LeaseExpired { .. } | Kind::Pause { .. }) {
                "bold"
            } else {
                "normal"
            };
        let text_fill =
            if blamed || rejected || matches!(mark.kind, Kind::LeaseExpired { .. } | Kind::Fault) {
                RED
            } else {
                "#111"
            };
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" fill="{text_fill}" font-weight="{weight}">{}</text>"#,
            x + 12.0,
            y - 5.0,
            escape(&mark.text)
        );
        if blamed {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" fill="{RED}" font-size="11" font-weight="bold">{}</text>"#,
                x + 12.0,
                y + 12.0,
                escape("BLAME: this write made the ledger wrong")
            );
            let _ = writeln!(
                out,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="12" fill="none" stroke="{RED}" stroke-width="2.5"/>"#
            );
        }
    }
}

/// The ledger line, the blame and the legend.
fn footer(out: &mut String, layout: &Layout, story: &Story) {
    let bottom = layout.bottom();
    let ledger_fill = if story.ledger_line.ends_with("BROKEN") {
        RED
    } else {
        "#2ca02c"
    };
    let _ = writeln!(
        out,
        r#"<text x="16" y="{:.1}" font-size="15" font-weight="bold" fill="{ledger_fill}">{}</text>"#,
        bottom + 28.0,
        escape(&format!("ledger: {}", story.ledger_line))
    );
    if let Some(blame) = &story.blame {
        let _ = writeln!(
            out,
            r#"<text x="16" y="{:.1}" fill="{RED}">{}</text>"#,
            bottom + 48.0,
            escape(blame)
        );
    }
    let _ = writeln!(
        out,
        r##"<text x="16" y="{:.1}" fill="#555" font-size="11">solid bar: holds the lease · dashed red bar: believes it holds the lock, the lease is gone · hatched: paused · ✗: refused</text>"##,
        bottom + 66.0
    );
}

fn lock_bar(out: &mut String, x: f64, y1: f64, y2: f64, holder: u32) {
    if y2 <= y1 {
        return;
    }
    let _ = writeln!(
        out,
        r#"<rect x="{:.1}" y="{y1:.1}" width="7" height="{:.1}" fill="{}" fill-opacity="0.45"><title>lock held by app-{holder}</title></rect>"#,
        x - 3.5,
        y2 - y1,
        color(holder)
    );
}

/// The timeline as a standalone HTML page: the picture, the parameters, the run in words.
pub fn html(trace: &Trace, story: &Story) -> String {
    let scenario = &trace.scenario;
    let params = &scenario.params;
    let mut rows = vec![
        ("scenario", scenario.name.clone()),
        ("safeguard", scenario.safeguard.name()),
        ("seed", trace.file.seed.to_string()),
        ("callers", scenario.callers.to_string()),
        (
            "balance",
            format!(
                "{} (each caller spends {})",
                scenario.initial_balance, params.amount
            ),
        ),
        ("TTL", format!("{}ms", params.ttl_ms)),
        ("work", format!("{}ms", params.work_ms)),
    ];
    if !scenario.start_offsets_ms.is_empty() {
        rows.push((
            "start offsets",
            scenario
                .start_offsets_ms
                .iter()
                .map(|o| format!("{o}ms"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    for fault in &scenario.faults {
        rows.push(("fault", fault.describe()));
    }
    rows.push(("digest", trace.file.digest.clone()));
    let mut table = String::new();
    for (name, value) in rows {
        let _ = writeln!(
            table,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(name),
            escape(&value)
        );
    }
    let verdict_class = if story.ledger_line.ends_with("BROKEN") {
        "broken"
    } else {
        "ok"
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>leaselab trace: {title}</title>
<style>
body {{ font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px; color: #111; }}
h1 {{ font-size: 20px; margin: 0 0 8px 0; }}
.ledger {{ font-size: 18px; font-weight: bold; margin: 8px 0 16px 0; }}
.broken {{ color: #d62728; }}
.ok {{ color: #2ca02c; }}
table {{ border-collapse: collapse; margin-bottom: 16px; }}
th {{ text-align: left; padding: 2px 12px 2px 0; color: #555; font-weight: normal; }}
td {{ padding: 2px 0; font-family: "DejaVu Sans Mono", monospace; }}
pre {{ background: #f6f6f6; padding: 12px; font-size: 13px; }}
.picture {{ overflow-x: auto; border: 1px solid #ddd; }}
</style>
</head>
<body>
<h1>leaselab trace: {title}</h1>
<div class="ledger {verdict_class}">{ledger}</div>
<div class="picture">
{svg}</div>
<h2>Parameters</h2>
<table>
{table}</table>
<h2>In words</h2>
<pre>{words}final: {ledger}
{blame}</pre>
</body>
</html>
"#,
        title = escape(&scenario.name),
        ledger = escape(&story.ledger_line),
        svg = svg(trace, story),
        words = escape(&super::text::words(story)),
        blame = escape(story.blame.as_deref().unwrap_or("")),
    )
}
