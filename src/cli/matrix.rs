//! `leaselab matrix`: every safeguard under every fault, as one table (see [`crate::matrix`]).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args as ClapArgs;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::merge::{same_fields, ShardFile};
use super::run::batch::Seeds;
use super::run::out;
use crate::exit::{CommandResult, Status, UsageError};
use crate::matrix::{self, Column, DirSaver, Matrix, NoSaver, Options, Row, Saver, Verdict};
use crate::shard::ShardArgs;

/// The exit status of `leaselab matrix`, printed under its `--help`.
pub const EXIT_STATUS: &str = "Exit status: the cells the tutorial speaks about are pinned to its \
verdict (BROKEN cells are findings, not failures). 0 every pinned cell as the tutorial says and \
no cell INCONCLUSIVE; 1 a pinned cell disagrees (marked !), whether it came out SAFE or BROKEN; \
2 bad usage or input; 3 no pinned cell disagrees but a cell is INCONCLUSIVE (raise \
--max-states; or, when no seed of a cell put a spend to the storage, try more --runs).";

/// The options of `leaselab matrix` (its description is on the subcommand).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeds per simulated cell (seeds --seed .. --seed + N - 1; at most 100000).
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub runs: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only these safeguards (repeatable; default: all 16, redlock-3-nodes and
    /// redlock-cas-3-nodes included).
    #[arg(long, value_name = "NAME")]
    pub safeguard: Vec<String>,
    /// Add a row for your own safeguard, described in a TOML file (repeatable; see README
    /// "Your own safeguard"). Without --safeguard the built-in rows stay too; --safeguard
    /// may name the file's safeguard.
    #[arg(long, value_name = "FILE")]
    pub safeguard_file: Vec<PathBuf>,
    /// Only these faults, by name or column code (repeatable; default: all), e.g.
    /// pause-after-read, work-over-ttl, ttl-1ms, failover.
    #[arg(long, value_name = "FAULT")]
    pub fault: Vec<String>,
    /// The model checker's limit on distinct states per check; a check that reaches it is
    /// INCONCLUSIVE (a state costs some 100 to 250 bytes at the peak; the largest default check, fenced-cas
    /// with pauses anywhere, visits about 1.2 million).
    #[arg(long, default_value_t = 3_000_000, value_name = "N")]
    pub max_states: u64,
    /// The simulated cells' timing model: `localhost` (the default) or `tick-1ms`
    /// (docs/real-mode.md), with its network latency. The model checker has no clock.
    #[arg(long, value_name = "NAME", value_parser = super::duration::parse_timing)]
    pub timing: Option<leaselab_model::scenario::TimingPreset>,
    /// Print the matrix as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write the matrix as one self-contained HTML page to FILE (written atomically).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Where counterexamples are saved as traces.
    #[command(flatten)]
    pub traces: crate::trace::SaveArgs,
    /// Decide only shard K of N of the cells (row by row); `leaselab merge` combines the
    /// shards' `--json` outputs into the whole matrix.
    #[command(flatten)]
    pub shard: ShardArgs,
    /// How many of a cell's simulated runs side by side.
    #[command(flatten)]
    pub threads: super::run::batch::ThreadsArgs,
}

/// The rows `--safeguard` names (all when none).
pub fn rows(names: &[String]) -> Result<Vec<Row>, UsageError> {
    if names.is_empty() {
        return Ok(Row::all());
    }
    names
        .iter()
        .map(|name| {
            leaselab_model::safeguard::Safeguard::parse(name)
                .map(Row::builtin)
                .map_err(|e| UsageError::new(format!("--safeguard: {e}")))
        })
        .collect()
}

/// The columns `--fault` names (all when none).
pub fn columns(names: &[String]) -> Result<Vec<Column>, UsageError> {
    if names.is_empty() {
        return Ok(Column::all());
    }
    names
        .iter()
        .map(|name| {
            Column::parse(name).ok_or_else(|| {
                let known: Vec<String> = Column::all().iter().map(|c| c.name()).collect();
                UsageError::new(format!(
                    "--fault {name}: unknown fault; known faults: {} (or their column codes)",
                    known.join(", ")
                ))
            })
        })
        .collect()
}

/// The most seeds `--runs` may give each cell.
pub const MAX_RUNS_PER_CELL: u64 = 100_000;

/// Runs `leaselab matrix`.
pub fn execute(args: Args) -> CommandResult {
    let files = args
        .safeguard_file
        .iter()
        .map(|path| super::safeguard_file::load(path))
        .collect::<Result<Vec<_>, _>>()?;
    // A file the checker refuses (a pipelined WAIT) is refused here, whichever columns run,
    // rather than by the first exhaustive cell.
    for (path, safeguard) in args.safeguard_file.iter().zip(&files) {
        if let Some(why) = leaselab_checker::config::unexplorable(*safeguard) {
            return Err(UsageError::new(format!("{}: {why}", path.display())));
        }
    }
    // `--safeguard NAME` may name a file's safeguard too: its row comes once, from the file.
    let named: Vec<String> = args
        .safeguard
        .iter()
        .filter(|name| !files.iter().any(|file| file.name() == name.as_str()))
        .cloned()
        .collect();
    let mut rows = if named.is_empty() && !args.safeguard.is_empty() {
        Vec::new()
    } else {
        rows(&named)?
    };
    rows.extend(files.into_iter().map(Row::builtin));
    let columns = columns(&args.fault)?;
    if args.runs > MAX_RUNS_PER_CELL {
        return Err(UsageError::new(format!(
            "--runs {}: at most {MAX_RUNS_PER_CELL} seeds per cell (the default matrix has some \
             300 cells); for more seeds of one scenario use `leaselab run --runs N`, which \
             streams its runs, or split the matrix with --shard K/N",
            args.runs
        )));
    }
    let seeds = Seeds::new(args.seed, args.runs)?;
    if args.max_states == 0 {
        return Err(UsageError::new(
            "--max-states 0: the checker needs room for at least 1 state; the default is 3000000",
        ));
    }
    if let Some(path) = &args.html {
        let mut outputs = crate::trace::files::Outputs::new();
        outputs.output("--html", path).map_err(UsageError::new)?;
        if path.is_dir() {
            return Err(UsageError::new(format!(
                "--html {}: is a directory; name a file, e.g. --html report.html",
                path.display()
            )));
        }
    }
    let mut saver: Box<dyn Saver> = match args.traces.dir() {
        Some(dir) => {
            super::run::batch::TraceSaver::new(Some(dir), false)?;
            Box::new(DirSaver(dir.to_path_buf()))
        }
        None => Box::new(NoSaver),
    };
    let options = Options {
        first_seed: seeds.first,
        runs: seeds.count,
        max_states: args.max_states,
        threads: args.threads.threads()?,
        timing: Some(args.timing.unwrap_or_default()),
    };
    let shard = args.shard.shard;
    if shard.is_some() && args.html.is_some() {
        return Err(UsageError::new(
            "--html draws the whole matrix; a shard has only some cells: drop --html (merge \
             the shards' --json outputs with leaselab merge)",
        ));
    }
    let cells = (rows.len() * columns.len()) as u64;
    let total = match shard {
        Some(shard) => (0..cells).filter(|&p| shard.owns(p)).count() as u64,
        None => cells,
    };
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("matrix [{bar:30}] {pos}/{len} cells ({eta}) {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let matrix = matrix::run(
        &rows,
        &columns,
        options,
        shard,
        saver.as_mut(),
        |row, column| {
            bar.set_message(format!("{} × {}", row.name, column.name()));
            bar.inc(1);
        },
    )
    .map_err(UsageError::new)?;
    bar.finish_and_clear();
    if args.json {
        out!(
            "{}",
            serde_json::to_string_pretty(&matrix).expect("the matrix serialises")
        );
    } else {
        print!("{}", render(&matrix, &columns));
    }
    if let Some(path) = &args.html {
        let page = matrix::html::report(&matrix, &columns);
        crate::trace::files::write_atomic(path, page.as_bytes()).map_err(|error| {
            UsageError::new(format!("--html {}: cannot write: {error}", path.display()))
        })?;
        eprintln!("wrote {}", path.display());
    }
    Ok(status(&matrix))
}

/// The most rows a merged matrix may have (the built-in safeguards and the files given).
const MAX_MERGED_ROWS: usize = 4096;

/// The first name given twice in `names`, if any.
fn repeated(names: &[String]) -> Option<&str> {
    let mut seen = std::collections::BTreeSet::new();
    names
        .iter()
        .find(|name| !seen.insert(name.as_str()))
        .map(String::as_str)
}

/// `leaselab merge` of `matrix --shard K/N --json` outputs: every cell once, in the
/// matrix's order, printed as `matrix` prints it.
pub fn merge(files: &[ShardFile], json: bool) -> CommandResult {
    same_fields(
        files,
        &[
            "rows",
            "columns",
            "runs",
            "first_seed",
            "max_states",
            "timing",
        ],
    )?;
    let mut parts = Vec::with_capacity(files.len());
    for file in files {
        let part: Matrix = serde_json::from_value(file.value.clone())
            .map_err(|error| file.error(format!("not a matrix's output: {error}")))?;
        parts.push(part);
    }
    let first = &parts[0];
    let columns = first
        .columns
        .iter()
        .map(|name| {
            Column::parse(name)
                .ok_or_else(|| files[0].error(format!("field 'columns': unknown fault '{name}'")))
        })
        .collect::<Result<Vec<Column>, UsageError>>()?;
    if first.rows.is_empty() || first.columns.is_empty() {
        return Err(files[0].error(
            "no rows or no columns: a matrix's output names at least one safeguard and one fault",
        ));
    }
    if let Some(column) = repeated(&first.columns) {
        return Err(files[0].error(format!(
            "field 'columns': '{column}' is given twice; a matrix names each fault once"
        )));
    }
    if let Some(row) = repeated(&first.rows) {
        return Err(files[0].error(format!(
            "field 'rows': '{row}' is given twice; a matrix names each safeguard once"
        )));
    }
    if first.rows.len() > MAX_MERGED_ROWS {
        return Err(files[0].error(format!(
            "field 'rows': {} safeguards, more than a matrix has ({MAX_MERGED_ROWS} at most)",
            first.rows.len()
        )));
    }
    let width = first.columns.len();
    let count = first.rows.len() * width;
    let mut by_position: Vec<Option<matrix::Cell>> = vec![None; count];
    for (file, part) in files.iter().zip(&parts) {
        for cell in &part.cells {
            let row = first.rows.iter().position(|name| *name == cell.row);
            let column = first.columns.iter().position(|name| *name == cell.column);
            let (Some(row), Some(column)) = (row, column) else {
                return Err(file.error(format!(
                    "a cell {} × {} of no row or column of the matrix",
                    cell.row, cell.column
                )));
            };
            let position = row * width + column;
            if !file.shard.owns(position as u64) {
                return Err(file.error(format!(
                    "cell {} × {} is not one of shard {}'s",
                    cell.row,
                    cell.column,
                    file.shard.text()
                )));
            }
            if by_position[position].replace(cell.clone()).is_some() {
                return Err(file.error(format!(
                    "cell {} × {} is listed twice",
                    cell.row, cell.column
                )));
            }
        }
    }
    let missing = by_position.iter().filter(|cell| cell.is_none()).count();
    if missing > 0 {
        return Err(UsageError::new(format!(
            "merge: the shards lack {missing} of the matrix's {count} cells: a shard did not \
             finish"
        )));
    }
    let matrix = Matrix {
        command: None,
        shard: None,
        cells: by_position.into_iter().flatten().collect(),
        ..first.clone()
    };
    if json {
        out!(
            "{}",
            serde_json::to_string_pretty(&matrix).expect("the matrix serialises")
        );
    } else {
        print!("{}", render(&matrix, &columns));
    }
    Ok(status(&matrix))
}

/// The width the terminal report keeps to.
pub const WIDTH: usize = 100;

/// Appends `line` wrapped at [`WIDTH`] columns: `first` before its first line, `rest` before
/// the others.
fn wrap(text: &mut String, line: &str, first: &str, rest: &str) {
    crate::trace::text::wrap(text, line, first, rest, WIDTH);
}

/// 1 when a pinned cell disagrees with the tutorial, else 3 when a cell is INCONCLUSIVE,
/// else 0.
pub fn status(matrix: &Matrix) -> Status {
    if !matrix.unexpected().is_empty() {
        Status::Violation
    } else if !matrix.inconclusive().is_empty() {
        Status::Inconclusive
    } else {
        Status::Ok
    }
}

/// The terminal report: the table (under 100 columns), the legend, the BROKEN cells' why,
/// the cost of the SAFE cells without a fault, and the comparison with the tutorial.
pub fn render(matrix: &Matrix, columns: &[Column]) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let label = matrix
        .rows
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    // Each column takes 5 characters; more columns than fit next to the labels are shown
    // in further blocks of the table, one under the other.
    let per_block = (WIDTH.saturating_sub(label) / 5).max(1);
    for (block, chunk) in columns.chunks(per_block).enumerate() {
        if block > 0 {
            text.push('\n');
        }
        let _ = write!(text, "{:<label$}", "safeguard");
        for column in chunk {
            let _ = write!(text, " {:>4}", column.code());
        }
        text.push('\n');
        for row in &matrix.rows {
            let mut line = format!("{row:<label$}");
            for column in chunk {
                let cell = matrix.cell(row, *column);
                let symbols = cell.map_or("  ".to_string(), |c| {
                    format!(
                        "{}{}{}",
                        c.exhaustive.verdict.symbol(),
                        c.simulated.verdict.symbol(),
                        if c.unexpected { "!" } else { " " }
                    )
                });
                let _ = write!(line, "  {symbols}");
            }
            let _ = writeln!(text, "{}", line.trim_end());
        }
    }
    let _ = writeln!(
        text,
        "\nEach cell: exhaustive then simulated ({} seed{} from {}). ✓ SAFE  ✗ BROKEN  \
         ? INCONCLUSIVE\n· n/a (fault does not apply)  - not expressible in the checker  \
         ! disagrees with the tutorial",
        matrix.runs,
        if matrix.runs == 1 { "" } else { "s" },
        matrix.first_seed
    );
    if let Some(timing) = &matrix.timing {
        let _ = writeln!(
            text,
            "The simulated runs used the '{timing}' timing model (docs/real-mode.md)."
        );
    }
    for cell in &matrix.cells {
        if let Some(note) = &cell.note {
            wrap(
                &mut text,
                &format!("note: {} × {}: {note}", cell.row, cell.column),
                "",
                "  ",
            );
        }
    }
    text.push_str("\nFaults (simulated scenario; exhaustive check, 2 callers, 1 tick = 1 ms):\n");
    let mut shown: Vec<(&str, String)> = Vec::new();
    for column in columns {
        wrap(
            &mut text,
            &format!("{:<4}  {}", column.code(), column.describe()),
            "  ",
            "        ",
        );
        // The bound as the checker states it (the same for every row of a column, but for
        // the cells with a note).
        let name = column.name();
        let bound = matrix
            .cells
            .iter()
            .find(|c| {
                c.column == name
                    && c.note.is_none()
                    && !matches!(
                        c.exhaustive.verdict,
                        Verdict::NotApplicable | Verdict::NotExpressible
                    )
            })
            .map(|c| format!(" ({})", c.exhaustive.bound))
            .or_else(|| {
                matrix
                    .cells
                    .iter()
                    .find(|c| c.column == name && c.exhaustive.verdict == Verdict::NotExpressible)
                    .map(|c| format!(": {}", c.exhaustive.bound))
            })
            .unwrap_or_default();
        let line = format!("exhaustive: {}{bound}", column.check_scope());
        let line = match shown.iter().find(|(_, seen)| *seen == line) {
            Some((code, _)) => format!("exhaustive: the same check as {code}"),
            None => line,
        };
        wrap(&mut text, &line, "        ", "          ");
        shown.push((column.code(), line));
    }
    let mut any_broken = false;
    for row in &matrix.rows {
        let broken: Vec<&matrix::Cell> = matrix
            .cells
            .iter()
            .filter(|c| &c.row == row && c.verdict() == Verdict::Broken)
            .collect();
        // The sentence of a cell whose simulated runs broke tells the column's own story.
        let Some(first) = broken
            .iter()
            .find(|c| c.simulated.verdict == Verdict::Broken)
            .or(broken.first())
        else {
            continue;
        };
        if !any_broken {
            text.push_str("\nBROKEN, row by row (one cell's counterexample in one sentence):\n");
            any_broken = true;
        }
        let names: Vec<&str> = broken
            .iter()
            .filter_map(|c| Column::parse(&c.column).map(Column::code))
            .collect();
        wrap(
            &mut text,
            &format!(
                "{row} [{}] {}: {}",
                names.join(" "),
                first.column,
                first.why().unwrap_or("-")
            ),
            "  ",
            "      ",
        );
    }
    let traces: std::collections::BTreeSet<&PathBuf> = matrix
        .cells
        .iter()
        .flat_map(|c| {
            [&c.exhaustive.counterexample, &c.simulated.counterexample]
                .into_iter()
                .flatten()
                .filter_map(|x| x.trace.as_ref())
        })
        .collect();
    if let Some(first) = traces.first() {
        let dir = first.parent().map(|p| p.display().to_string());
        wrap(
            &mut text,
            &format!(
                "{} counterexample trace(s) saved in {} (leaselab replay, leaselab show); --json \
                 and --html give every BROKEN cell's sentence and trace.",
                traces.len(),
                dir.unwrap_or_default()
            ),
            "\n",
            "",
        );
    }
    let safe_without_fault = matrix.rows.iter().any(|row| {
        matrix
            .cell(row, Column::None)
            .is_some_and(|cell| cell.verdict() == Verdict::Safe)
    });
    if columns.contains(&Column::None) && safe_without_fault {
        let _ = writeln!(
            text,
            "\nCost without a fault (SAFE cells; simulated time to finish, median and p99; \
             summed over the runs):"
        );
        let _ = writeln!(
            text,
            "  {:<label$}  {:>8}  {:>8}  {:>7}  {:>8}  {:>6}",
            "safeguard", "median", "p99", "gave up", "rejected", "failed"
        );
        for row in &matrix.rows {
            let Some(cell) = matrix.cell(row, Column::None) else {
                continue;
            };
            if cell.verdict() != Verdict::Safe {
                continue;
            }
            let cost = &cell.simulated.cost;
            let _ = writeln!(
                text,
                "  {row:<label$}  {:>6}ms  {:>6}ms  {:>7}  {:>8}  {:>6}",
                cost.median_ms, cost.p99_ms, cost.gave_up, cost.rejected, cost.failed
            );
        }
    }
    let pinned = matrix.cells.iter().filter(|c| c.expected.is_some()).count();
    let unexpected = matrix.unexpected();
    let inconclusive = matrix.inconclusive();
    let summary = format!(
        "{} of {pinned} cells pinned to the tutorial as it says{}{}",
        pinned - unexpected.len(),
        if unexpected.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = unexpected
                .iter()
                .map(|c| format!("{} × {}", c.row, c.column))
                .collect();
            format!("; NOT as it says: {}", names.join(", "))
        },
        if inconclusive.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = inconclusive
                .iter()
                .map(|c| format!("{} × {}", c.row, c.column))
                .collect();
            format!("; INCONCLUSIVE: {}", names.join(", "))
        }
    );
    text.push('\n');
    wrap(&mut text, &summary, "", "  ");
    for cell in &inconclusive {
        if let Some(reason) = &cell.exhaustive.reason {
            let _ = writeln!(
                text,
                "  {} × {}: exhaustive INCONCLUSIVE: {reason}",
                cell.row, cell.column
            );
        }
        let simulated = &cell.simulated;
        if simulated.inconclusive > 0 {
            let line = format!(
                "{} × {}: simulated INCONCLUSIVE: {} of {} runs stopped at their time limit with \
                    callers still running",
                cell.row, cell.column, simulated.inconclusive, simulated.runs
            );
            wrap(&mut text, &line, "  ", "    ");
        } else if simulated.verdict == Verdict::Inconclusive && simulated.untested > 0 {
            let line =
                format!(
                "{} × {}: simulated INCONCLUSIVE: in none of its {} runs did a spend reach the \
                    storage ({} callers gave up, {} failed, the others lost the lock or found \
                    too little money), so the ledger holding says nothing about the safeguard",
                cell.row, cell.column, simulated.runs, simulated.cost.gave_up, simulated.cost.failed
            );
            wrap(&mut text, &line, "  ", "    ");
        }
    }
    text
}
