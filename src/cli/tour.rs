//! `leaselab tour`: every tutorial step with its variants, plus a failover and a partition
//! scenario, a few dozen seeds each, as one table.
//!
//! Every row has an expected verdict pattern. A row that is supposed to break and does is the
//! finding the tutorial reports, not a failure: the tour exits 0 when every row is as
//! expected, and 1 otherwise (naming the rows that were not).
//!
//! `--real` runs the rows against a real Redis and PostgreSQL instead (5 runs per row unless
//! `--runs` says otherwise), judged by the same patterns; rows whose faults need the simulator
//! (failover, partition) are listed as skipped.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use leaselab_model::scenario::{Scenario, Variant};
use leaselab_sim::real::RealConfig;
use leaselab_sim::run::{RunReport, RunVerdict, SimConfig};
use serde::{Deserialize, Serialize};

use super::duration::format_ms;
use super::merge::{same_fields, ShardFile};
use super::run::batch::{for_each_run, Runner, Seeds, Spread, ThreadsArgs, TraceSaver};
use super::run::out;
use super::run::{preset, real_error, real_note};
use crate::exit::{CommandResult, Status, UsageError};
use crate::shard::{Shard, ShardArgs};

/// Run every tutorial step and fault scenario and compare with the expected verdicts.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeds per row (seeds 1..=N; default 24, or 5 with --real).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Run against a real Redis and PostgreSQL instead of the simulation.
    #[arg(long)]
    pub real: bool,
    /// The real Redis (with --real).
    #[arg(long, value_name = "URL", requires = "real", default_value = DEFAULT_REDIS)]
    pub redis: String,
    /// The real PostgreSQL (with --real).
    #[arg(long, value_name = "URL", requires = "real", default_value = DEFAULT_POSTGRES)]
    pub postgres: String,
    /// The simulation's timing model for every row: `localhost` (the default) or `tick-1ms`
    /// (docs/real-mode.md), with its network latency. Not with --real.
    #[arg(long, value_name = "NAME", value_parser = super::duration::parse_timing, conflicts_with = "real")]
    pub timing: Option<leaselab_model::scenario::TimingPreset>,
    /// Where BROKEN runs are saved as traces (the first BROKEN run of each row).
    #[command(flatten)]
    pub traces: crate::trace::SaveArgs,
    /// Save every BROKEN run as a trace, not only the first of each row.
    #[arg(long, conflicts_with = "no_save_traces")]
    pub save_all_traces: bool,
    /// Print the table as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run only shard K of N of the rows (`leaselab merge` combines the shards' `--json`
    /// outputs into the whole table).
    #[command(flatten)]
    pub shard: ShardArgs,
    /// How many simulated runs side by side.
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// The real Redis `--real` uses unless `--redis` says otherwise.
pub const DEFAULT_REDIS: &str = "redis://127.0.0.1:6379";
/// The real PostgreSQL `--real` uses unless `--postgres` says otherwise.
pub const DEFAULT_POSTGRES: &str = "postgres://postgres@127.0.0.1/test";

/// How many runs of a row should be BROKEN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// Every run.
    Every,
    /// More than half of the runs.
    Most,
    /// No run.
    None,
}

/// A check every run of a row must pass.
pub type RunCheck = fn(&RunReport) -> bool;

/// One row of the tour.
pub struct Row {
    /// The scenario's name.
    pub step: &'static str,
    /// Its switches, as typed on the command line.
    pub variant: &'static str,
    /// What runs.
    pub scenario: Scenario,
    /// How many runs should break.
    pub broken: Broken,
    /// What must also hold in every run.
    pub check: RunCheck,
    /// The expectation in words.
    pub expected: &'static str,
    /// What the row teaches when it breaks (none for rows expected to hold).
    pub teaches: Option<&'static str>,
}

impl Row {
    /// The safeguard every caller runs.
    pub fn safeguard(&self) -> String {
        self.scenario.safeguard.name()
    }

    /// The fault the row injects, in words, from the scenario: its faults, else a TTL of a
    /// few ms under many callers, else work that outlives the TTL, else `none`.
    pub fn fault(&self) -> String {
        let s = &self.scenario;
        let params = &s.params;
        if !s.faults.is_empty() {
            let faults: Vec<String> = s.faults.iter().map(|f| f.describe()).collect();
            return faults.join("; ");
        }
        if s.safeguard.uses_lock() && params.ttl_ms <= 10 {
            return format!("TTL {}ms under {} callers", params.ttl_ms, s.callers);
        }
        if s.safeguard.uses_lock() && params.work_ms > params.ttl_ms {
            return format!("work {}ms > TTL {}ms", params.work_ms, params.ttl_ms);
        }
        "none".to_string()
    }
}

fn row(
    step: &'static str,
    variant: &'static str,
    broken: Broken,
    check: RunCheck,
    expected: &'static str,
) -> Result<Row, UsageError> {
    let switches = Variant {
        watchdog: variant.contains("--watchdog"),
        jitter: variant.contains("--jitter"),
        unfenced: variant.contains("--unfenced"),
        same_version: variant.contains("--same-version"),
    };
    let mut scenario = preset(step, switches)?;
    if variant.contains("--ttl 1ms") {
        scenario.params.ttl_ms = 1;
        scenario.name = format!("{} --ttl 1ms", scenario.name);
    }
    Ok(Row {
        step,
        variant,
        scenario,
        broken,
        check,
        expected,
        teaches: None,
    })
}

fn teaching(row: Result<Row, UsageError>, teaches: &'static str) -> Result<Row, UsageError> {
    row.map(|row| Row {
        teaches: Some(teaches),
        ..row
    })
}

/// The tour's rows, in teaching order.
pub fn rows() -> Result<Vec<Row>, UsageError> {
    Ok(vec![
        teaching(
            row(
                "step1-race",
                "",
                Broken::Every,
                |_| true,
                "BROKEN in every run",
            ),
            "without a lock, callers that read the same balance each write their own result \
             back: all but one of those spends vanish",
        )?,
        row(
            "step2-lock",
            "",
            Broken::None,
            |r| !r.lock_left_behind,
            "OK in every run, no lock left behind",
        )?,
        teaching(
            row(
                "step3-ttl",
                "",
                Broken::Every,
                |r| r.ledger.stale_releases_refused > 0,
                "BROKEN in every run, stale releases refused",
            ),
            "a lease protects only while the work fits inside it: once it expires mid-work the \
             next caller reads the old balance too, and the safe release cannot undo that",
        )?,
        row(
            "step3-ttl",
            "--watchdog",
            Broken::None,
            |r| {
                let work = r.scenario.params.work_ms * u64::from(r.scenario.callers);
                r.elapsed_ms >= work && r.elapsed_ms <= work * 6 / 5
            },
            "OK in every run, about 5 x work (1.5-1.8s)",
        )?,
        row(
            "step4-redislock",
            "",
            Broken::None,
            |r| r.ledger.gave_up > 0 || r.elapsed_ms >= 1_000,
            "OK in every run; callers give up or it takes >= 1s",
        )?,
        row(
            "step4-redislock",
            "--jitter",
            Broken::None,
            |r| r.ledger.gave_up == 0 && r.elapsed_ms < 1_000,
            "OK in every run, nobody gives up, < 1s",
        )?,
        row(
            "step5-fencing",
            "",
            Broken::None,
            |r| r.ledger.rejected == 1 && r.ledger.final_balance == 90 && r.final_fence == Some(34),
            "OK in every run: A's write rejected, 90, fence 34",
        )?,
        teaching(
            row(
                "step5-fencing",
                "--unfenced",
                Broken::Every,
                |r| r.ledger.accepted == 2 && r.final_fence == Some(33),
                "BROKEN in every run: A's write lands, fence 33",
            ),
            "a fencing token helps only if the storage checks it: the paused holder wakes and \
             its write from before the pause lands",
        )?,
        row(
            "step6-verify",
            "",
            Broken::None,
            |r| r.ledger.rejected == 0,
            "OK in every run, no write rejected",
        )?,
        teaching(
            row(
                "step6-verify",
                "--ttl 1ms",
                Broken::Most,
                |_| true,
                "BROKEN in most runs despite fencing",
            ),
            "fencing orders the writers but does not refresh their reads: when leases expire \
             under load, a newer token writes a balance computed before an older token's write",
        )?,
        row(
            "step6-verify",
            "--ttl 1ms --same-version",
            Broken::None,
            |r| r.ledger.rejected > 0,
            "OK in every run, with writes rejected",
        )?,
        row(
            "failover-fencing",
            "",
            Broken::None,
            |r| r.tokens_reissued >= 1 && r.ledger.rejected >= 1,
            "OK in every run: a token issued twice wins once",
        )?,
        teaching(
            row(
                "failover-fencing",
                "--unfenced",
                Broken::Every,
                |r| r.tokens_reissued >= 1,
                "BROKEN in every run: the reissued token writes twice",
            ),
            "a failover forgets the lock and the fence counter's INCR that had not replicated: \
             two callers hold the lock with the same token, and without a check both write",
        )?,
        row(
            "partition-watchdog",
            "",
            Broken::None,
            |r| r.ledger.lost_lock == 1 && r.ledger.accepted == 1,
            "OK in every run: the cut-off holder does not write",
        )?,
    ])
}

/// Whether a row came out as expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AsExpected {
    /// Its BROKEN count matches the pattern and every decided run passes the check.
    Yes,
    /// It does not.
    No,
    /// Nothing contradicts it, but runs stopped at their time limit leave the pattern
    /// undecided.
    Undecided,
}

impl AsExpected {
    /// The table's cell.
    pub fn cell(self) -> &'static str {
        match self {
            AsExpected::Yes => "yes",
            AsExpected::No => "NO",
            AsExpected::Undecided => "undecided",
        }
    }
}

/// The result of one row.
pub struct RowResult {
    /// How many runs.
    pub runs: u64,
    /// How many broke.
    pub broken: u64,
    /// How many stopped at their time limit without a verdict.
    pub inconclusive: u64,
    /// Whether the row matched its expectation.
    pub as_expected: AsExpected,
    /// The table's cells after `step` and `variant`.
    pub cells: Vec<String>,
}

/// What a row keeps of its runs, in memory that does not grow with their number.
pub struct RowTally {
    runs: u64,
    broken: u64,
    inconclusive: u64,
    check_failed: u64,
    accepted: Spread,
    rejected: Spread,
    gave_up: Spread,
    elapsed: Spread,
}

impl Default for RowTally {
    fn default() -> RowTally {
        RowTally::new()
    }
}

impl RowTally {
    /// No runs yet.
    pub fn new() -> RowTally {
        RowTally {
            runs: 0,
            broken: 0,
            inconclusive: 0,
            check_failed: 0,
            accepted: Spread::new(),
            rejected: Spread::new(),
            gave_up: Spread::new(),
            elapsed: Spread::new(),
        }
    }

    /// Counts a run of `row`; its check applies to runs with a verdict.
    pub fn add(&mut self, row: &Row, report: &RunReport) {
        self.runs += 1;
        match report.verdict() {
            RunVerdict::Ok => {}
            RunVerdict::Broken => self.broken += 1,
            RunVerdict::Inconclusive => self.inconclusive += 1,
        }
        if report.verdict() != RunVerdict::Inconclusive && !(row.check)(report) {
            self.check_failed += 1;
        }
        self.accepted.add(i64::from(report.ledger.accepted));
        self.rejected.add(i64::from(report.ledger.rejected));
        self.gave_up.add(i64::from(report.ledger.gave_up));
        self.elapsed.add(report.elapsed_ms as i64);
    }

    /// Judges the row by its pattern and its check.
    pub fn judge(&self, row: &Row) -> RowResult {
        let (runs, broken, inconclusive) = (self.runs, self.broken, self.inconclusive);
        // Could the pattern hold (were every inconclusive run to break, or not), and does it?
        let (holds, could_hold) = match row.broken {
            Broken::Every => (broken == runs, broken + inconclusive == runs),
            Broken::Most => (broken * 2 > runs, (broken + inconclusive) * 2 > runs),
            Broken::None => (broken == 0 && inconclusive == 0, broken == 0),
        };
        let as_expected = if self.check_failed > 0 || !could_hold {
            AsExpected::No
        } else if holds {
            AsExpected::Yes
        } else {
            AsExpected::Undecided
        };
        let min_max = |spread: &Spread| {
            if spread.min() == spread.max() {
                spread.min().to_string()
            } else {
                format!("{}-{}", spread.min(), spread.max())
            }
        };
        let elapsed = &self.elapsed;
        let median = format_ms(elapsed.median().max(0) as u64);
        let cells = vec![
            runs.to_string(),
            broken.to_string(),
            inconclusive.to_string(),
            min_max(&self.accepted),
            min_max(&self.rejected),
            min_max(&self.gave_up),
            format!(
                "{}{median} ({}-{})",
                if elapsed.exact() { "" } else { "~" },
                format_ms(elapsed.min().max(0) as u64),
                format_ms(elapsed.max().max(0) as u64)
            ),
        ];
        RowResult {
            runs,
            broken,
            inconclusive,
            as_expected,
            cells,
        }
    }
}

/// Judges a row by a set of its runs.
pub fn judge(row: &Row, reports: &[RunReport]) -> RowResult {
    let mut tally = RowTally::new();
    for report in reports {
        tally.add(row, report);
    }
    tally.judge(row)
}

/// The table's header.
const HEADER: [&str; 13] = [
    "step",
    "variant",
    "safeguard",
    "fault",
    "runs",
    "BROKEN",
    "INCONCLUSIVE",
    "accepted",
    "rejected",
    "gave up",
    "elapsed median (min-max)",
    "expected",
    "as expected",
];

/// One row of the table as printed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowLine {
    /// Where the row is in the tour (from 0).
    pub position: usize,
    /// `step variant`.
    pub name: String,
    /// The table's cells, one per header.
    pub cells: Vec<String>,
    /// How the row came out (none: skipped, its faults need the simulator).
    pub as_expected: Option<AsExpected>,
    /// What the row teaches, when it broke.
    pub lesson: Option<String>,
    /// The row's first trace saved.
    pub trace: Option<PathBuf>,
}

/// The tour's result, as printed (text) or as `--json` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TourTable {
    /// `tour` in a shard's output (none otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Which shard, `K/N` (none: the whole tour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Seeds per row.
    pub runs: u64,
    /// What a real tour says about itself (none: simulated).
    pub real: Option<String>,
    /// The simulation's timing model (none: a real tour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<String>,
    /// The rows.
    pub rows: Vec<RowLine>,
    /// Where traces were saved (none: saving off).
    pub traces_dir: Option<PathBuf>,
    /// How many traces were saved.
    pub traces_saved: u64,
    /// Every BROKEN run was saved, not only each row's first.
    pub save_all_traces: bool,
}

impl TourTable {
    /// The status: 1 when a row is not as expected, else 3 when one is undecided, else 0.
    pub fn status(&self) -> Status {
        self.rows
            .iter()
            .map(|row| match row.as_expected {
                Some(AsExpected::No) => Status::Violation,
                Some(AsExpected::Undecided) => Status::Inconclusive,
                Some(AsExpected::Yes) | None => Status::Ok,
            })
            .fold(Status::Ok, Status::worst)
    }

    /// Prints the table, what the broken rows teach, the traces and the verdict line.
    pub fn print_text(&self) {
        let mut widths: Vec<usize> = HEADER.iter().map(|h| h.len()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(&row.cells) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let print = |cells: &[String]| {
            let text: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            out!("{}", text.join("  ").trim_end());
        };
        print(&HEADER.map(String::from));
        for row in &self.rows {
            print(&row.cells);
        }
        out!("");
        let lessons: Vec<(&str, &str)> = self
            .rows
            .iter()
            .filter_map(|row| Some((row.name.as_str(), row.lesson.as_deref()?)))
            .collect();
        if !lessons.is_empty() {
            out!("What the BROKEN rows teach:");
            for (name, teaches) in &lessons {
                out!("  {name}: {teaches}");
            }
            out!("");
        }
        if let Some(dir) = &self.traces_dir {
            if self.traces_saved > 0 {
                let which = if self.save_all_traces {
                    "every BROKEN run"
                } else {
                    "the first BROKEN run of each row; --save-all-traces saves every one"
                };
                out!(
                    "{} trace(s) saved in {} ({which}):",
                    self.traces_saved,
                    dir.display()
                );
                for row in &self.rows {
                    if let Some(path) = &row.trace {
                        out!("  {}: {}", row.name, path.display());
                    }
                }
            }
        }
        out!(
            "A row is as expected when its BROKEN count matches the pattern (every / most / no run) \
             and every run passes the row's check; a row expected to break and breaking is the \
             tutorial's finding. INCONCLUSIVE runs stopped at their time limit with callers still \
             running, or spent nothing (no spend reached the storage); a row they leave undecided \
             is neither."
        );
        if let Some(real) = &self.real {
            out!("{real}");
        }
        if let Some(timing) = &self.timing {
            out!(
                "Simulated with the '{timing}' timing model for every row (docs/real-mode.md, \
                 \"The localhost timing\")."
            );
        }
        let named = |wanted: AsExpected| -> Vec<&str> {
            self.rows
                .iter()
                .filter(|row| row.as_expected == Some(wanted))
                .map(|row| row.name.as_str())
                .collect()
        };
        let (unexpected, undecided) = (named(AsExpected::No), named(AsExpected::Undecided));
        let skipped = self
            .rows
            .iter()
            .filter(|row| row.as_expected.is_none())
            .count();
        let judged = self.rows.len() - skipped;
        let skipped_note = if skipped > 0 {
            format!(" ({skipped} skipped: their faults need the simulator)")
        } else {
            String::new()
        };
        let undecided_note = if undecided.is_empty() {
            String::new()
        } else {
            format!("; undecided (INCONCLUSIVE runs): {}", undecided.join(", "))
        };
        let shard_note = match &self.shard {
            Some(shard) => format!(" (shard {shard})"),
            None => String::new(),
        };
        let as_expected = judged - unexpected.len() - undecided.len();
        if unexpected.is_empty() {
            out!("{as_expected} of {judged} rows as expected{skipped_note}{undecided_note}{shard_note}");
        } else {
            out!(
                "{as_expected} of {judged} rows as expected{skipped_note}; not as expected: {}{undecided_note}{shard_note}",
                unexpected.join(", ")
            );
        }
    }

    /// Prints the table as JSON.
    pub fn print_json(&self) {
        out!(
            "{}",
            serde_json::to_string_pretty(self).expect("tables serialise")
        );
    }
}

/// Runs `leaselab tour`.
pub fn execute(args: Args) -> CommandResult {
    let runs = args.runs.unwrap_or(if args.real { 5 } else { 24 });
    let seeds = Seeds::new(1, runs)?;
    let threads = args.threads.threads()?;
    let shard = args.shard.shard;
    let real = args
        .real
        .then(|| RealConfig::new(Some(args.redis.clone()), Some(args.postgres.clone())));
    let save_dir = match &real {
        Some(_) => None,
        None => args.traces.dir(),
    };
    let mut saver = TraceSaver::new(save_dir, args.save_all_traces)?;
    let mut rows = rows()?;
    let preset = args.timing.unwrap_or_default();
    for row in &mut rows {
        preset.apply(&mut row.scenario);
    }
    let mut lines = Vec::new();
    for (position, row) in rows.iter().enumerate() {
        if !shard.unwrap_or(Shard::WHOLE).owns(position as u64) {
            continue;
        }
        let name = format!("{} {}", row.step, row.variant).trim().to_string();
        let mut cells = vec![
            row.step.to_string(),
            row.variant.to_string(),
            row.safeguard(),
            row.fault(),
        ];
        let sim = SimConfig::for_scenario(&row.scenario);
        let runner = match &real {
            Some(config) => match leaselab_sim::real::validate(&row.scenario, config) {
                Ok(()) => Runner::Real(RealConfig {
                    horizon_ms: sim.horizon_ms,
                    ..config.clone()
                }),
                Err(leaselab_sim::real::RealError::Refused(_)) => {
                    let faults: Vec<String> = row
                        .scenario
                        .faults
                        .iter()
                        .filter(|f| !matches!(f, leaselab_model::fault::Fault::Pause { .. }))
                        .map(|f| f.describe())
                        .collect();
                    cells.extend(["0", "-", "-", "-", "-", "-", "-"].map(String::from));
                    cells.push(format!(
                        "skipped: needs the simulator ({})",
                        faults.join(", ")
                    ));
                    cells.push("-".to_string());
                    lines.push(RowLine {
                        position,
                        name,
                        cells,
                        as_expected: None,
                        lesson: None,
                        trace: None,
                    });
                    continue;
                }
                Err(error) => return Err(real_error(error)),
            },
            None => Runner::Sim {
                config: sim,
                threads,
            },
        };
        saver.start_group();
        let mut tally = RowTally::new();
        let mut first_trace = None;
        for_each_run(&row.scenario, seeds, Shard::WHOLE, &runner, |report| {
            tally.add(row, &report);
            if let Some(path) = saver.offer(&report) {
                first_trace.get_or_insert(path);
            }
            Ok(())
        })?;
        let result = tally.judge(row);
        let lesson = row
            .teaches
            .filter(|_| result.broken > 0)
            .map(str::to_string);
        cells.extend(result.cells);
        cells.push(row.expected.to_string());
        cells.push(result.as_expected.cell().to_string());
        lines.push(RowLine {
            position,
            name,
            cells,
            as_expected: Some(result.as_expected),
            lesson,
            trace: first_trace,
        });
    }
    if let Some(error) = &saver.error {
        eprintln!("error: {error}");
    }
    let table = TourTable {
        command: shard.map(|_| "tour".to_string()),
        shard: shard.map(|shard| shard.text()),
        runs,
        real: real.as_ref().map(real_note),
        timing: (!args.real).then(|| preset.timing.name().to_string()),
        rows: lines,
        traces_dir: saver.dir().map(PathBuf::from),
        traces_saved: saver.saved_count,
        save_all_traces: args.save_all_traces,
    };
    if args.json {
        table.print_json();
    } else {
        table.print_text();
    }
    Ok(table.status())
}

/// `leaselab merge` of `tour --shard K/N --json` outputs: every row once, in the tour's
/// order, printed as `tour` prints the table.
pub fn merge(files: &[ShardFile], json: bool) -> CommandResult {
    same_fields(files, &["runs", "real", "timing", "save_all_traces"])?;
    let count = rows()?.len();
    let mut table: Option<TourTable> = None;
    let mut by_position: Vec<Option<RowLine>> = vec![None; count];
    for file in files {
        let part: TourTable = serde_json::from_value(file.value.clone())
            .map_err(|error| file.error(format!("not a tour's output: {error}")))?;
        for row in &part.rows {
            if row.position >= count || !file.shard.owns(row.position as u64) {
                return Err(file.error(format!(
                    "row {} ({}) is not one of shard {}'s",
                    row.position,
                    row.name,
                    file.shard.text()
                )));
            }
            if row.cells.len() != HEADER.len() {
                return Err(file.error(format!("row {} has not one cell per column", row.name)));
            }
            let slot = &mut by_position[row.position];
            if slot.is_some() {
                return Err(file.error(format!("row {} is listed twice", row.name)));
            }
            *slot = Some(row.clone());
        }
        let table = table.get_or_insert_with(|| TourTable {
            command: None,
            shard: None,
            rows: Vec::new(),
            traces_saved: 0,
            traces_dir: None,
            ..part.clone()
        });
        table.traces_saved += part.traces_saved;
        if table.traces_dir.is_none() {
            table.traces_dir = part.traces_dir;
        }
    }
    let missing: Vec<String> = by_position
        .iter()
        .enumerate()
        .filter(|(_, row)| row.is_none())
        .map(|(position, _)| position.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(UsageError::new(format!(
            "merge: the shards lack row(s) {} of the tour's {count}: a shard did not finish",
            missing.join(", ")
        )));
    }
    let mut table = table.expect("merge reads at least one file");
    table.rows = by_position.into_iter().flatten().collect();
    if json {
        table.print_json();
    } else {
        table.print_text();
    }
    Ok(table.status())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_a_valid_scenario() {
        let rows = rows().unwrap();
        assert_eq!(rows.len(), 14);
        for row in &rows {
            leaselab_sim::run::validate(&row.scenario).unwrap();
            // Every row expected to break says what it teaches.
            assert_eq!(
                row.teaches.is_some(),
                row.broken != Broken::None,
                "{} {}",
                row.step,
                row.variant
            );
        }
        let fault = |step: &str, variant: &str| {
            rows.iter()
                .find(|r| r.step == step && r.variant == variant)
                .unwrap()
                .fault()
        };
        assert_eq!(fault("step1-race", ""), "none");
        assert_eq!(fault("step3-ttl", ""), "work 300ms > TTL 100ms");
        assert_eq!(
            fault("step6-verify", "--ttl 1ms"),
            "TTL 1ms under 50 callers"
        );
        assert_eq!(
            fault("step5-fencing", ""),
            "pause app-1 at after-read for 250ms"
        );
    }

    #[test]
    fn a_row_is_judged_by_its_pattern_and_its_check() {
        let rows = rows().unwrap();
        let fenced = rows
            .iter()
            .find(|r| r.step == "step5-fencing" && r.variant.is_empty())
            .unwrap();
        let unfenced = rows
            .iter()
            .find(|r| r.step == "step5-fencing" && r.variant == "--unfenced")
            .unwrap();
        let batch = |scenario: &Scenario| -> Vec<RunReport> {
            (1..4)
                .map(|seed| leaselab_sim::run::run(scenario, seed).unwrap())
                .collect()
        };
        let ok_runs = batch(&fenced.scenario);
        let broken_runs = batch(&unfenced.scenario);
        assert_eq!(judge(fenced, &ok_runs).as_expected, AsExpected::Yes);
        assert_eq!(judge(unfenced, &broken_runs).as_expected, AsExpected::Yes);
        // The same runs under the other row's expectation are not as expected.
        assert_eq!(judge(fenced, &broken_runs).as_expected, AsExpected::No);
        assert_eq!(judge(unfenced, &ok_runs).as_expected, AsExpected::No);
        let result = judge(unfenced, &broken_runs);
        assert_eq!((result.runs, result.broken, result.inconclusive), (3, 3, 0));
    }

    #[test]
    fn runs_stopped_at_their_time_limit_leave_a_row_undecided_not_as_expected() {
        use leaselab_sim::run::{run_with, SimConfig};
        let rows = rows().unwrap();
        let fenced = rows
            .iter()
            .find(|r| r.step == "step5-fencing" && r.variant.is_empty())
            .unwrap();
        let unfenced = rows
            .iter()
            .find(|r| r.step == "step5-fencing" && r.variant == "--unfenced")
            .unwrap();
        // Stopped at 100ms: A is still paused, B has not started.
        let short = SimConfig {
            horizon_ms: 100,
            ..SimConfig::default()
        };
        let cut = run_with(&fenced.scenario, 1, &short).unwrap();
        assert_eq!(cut.verdict(), RunVerdict::Inconclusive);
        let whole = leaselab_sim::run::run(&fenced.scenario, 2).unwrap();
        let result = judge(fenced, &[cut, whole]);
        assert_eq!(result.as_expected, AsExpected::Undecided);
        assert_eq!((result.runs, result.inconclusive), (2, 1));
        // "BROKEN in every run" is undecided too, and contradicted by an OK run.
        let unfenced_cut = run_with(&unfenced.scenario, 1, &short).unwrap();
        assert_eq!(
            judge(unfenced, std::slice::from_ref(&unfenced_cut)).as_expected,
            AsExpected::Undecided
        );
        let ok = leaselab_sim::run::run(&fenced.scenario, 1).unwrap();
        assert_eq!(
            judge(unfenced, &[unfenced_cut, ok]).as_expected,
            AsExpected::No
        );
    }
}
