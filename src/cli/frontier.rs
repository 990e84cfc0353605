//! `leaselab frontier`: where a safeguard stops being safe — the largest pause per TTL and
//! work for which the ledger holds, each cell established exhaustively.

use std::io::IsTerminal;

use clap::Args as ClapArgs;
use std::sync::{Arc, Mutex};

use leaselab_checker::bfs::Counters;
use leaselab_checker::frontier::{sweep, Boundary, Frontier, DEFAULT_MAX_CELLS};
use leaselab_checker::{CheckConfig, RunOptions, Strategy};
use leaselab_model::safeguard::Safeguard;
use serde::Serialize;

use crate::exit::{CommandResult, Status, UsageError};

use super::check::{
    group, memory_text, parse_ticks, reply_faults_text, watched, ReplyFaultArgs, SearchArgs,
    WalletArgs,
};

/// Sweep the pause bound (and TTL against work) and print the boundary table.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The safeguard, e.g. lease, lease-watchdog, fenced.
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "safeguard_file",
        conflicts_with = "safeguard_file"
    )]
    pub safeguard: Option<String>,
    /// Your own safeguard, described in a TOML file (see README "Your own safeguard").
    #[arg(long, value_name = "FILE")]
    pub safeguard_file: Option<std::path::PathBuf>,
    /// The callers, the wallet and the failovers.
    #[command(flatten)]
    pub wallet: WalletArgs,
    /// The reply faults the World may inject in every cell.
    #[command(flatten)]
    pub reply_faults: ReplyFaultArgs,
    /// Redlock's nodes and what may happen to them in every cell (their clocks' drift among
    /// it: the pause each TTL survives under a drift).
    #[command(flatten)]
    pub nodes: super::nodes::NodeArgs,
    /// TTLs (rows), in ticks: a list `3,4,6` or a range `3..6`.
    #[arg(long, default_value = "3..5", value_parser = parse_list, value_name = "LIST")]
    pub ttl: TickList,
    /// Works (columns), in ticks: a list `1,2,4` or a range `1..4`.
    #[arg(long, default_value = "1,2,4", value_parser = parse_list, value_name = "LIST")]
    pub work: TickList,
    /// Time stops here in every cell, in ticks (default: each cell's 2 × work + 2 × TTL + 4).
    /// The state space grows quickly with it; a violation needs about 2 × work + TTL + 3.
    #[arg(long, value_parser = parse_ticks, value_name = "H")]
    pub horizon: Option<u64>,
    /// Threads, and the state and memory limits of each check of a cell.
    #[command(flatten)]
    pub search: SearchArgs,
    /// Refuse sweeps of more cells (TTLs x works) than this.
    #[arg(long, default_value_t = DEFAULT_MAX_CELLS, value_name = "N")]
    pub max_cells: usize,
    /// Print the table as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A list of tick values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TickList(pub Vec<u64>);

/// `3,4,6` or `3..6` (inclusive).
pub fn parse_list(text: &str) -> Result<TickList, String> {
    let text = text.trim();
    if let Some((lo, hi)) = text.split_once("..") {
        let lo = parse_ticks(lo)?;
        let hi = parse_ticks(hi.trim_start_matches('='))?;
        if hi < lo || hi - lo > 64 {
            return Err(format!(
                "'{text}' is not a range of at most 65 values from low to high; write e.g. 3..6"
            ));
        }
        return Ok(TickList((lo..=hi).collect()));
    }
    let values: Result<Vec<u64>, String> = text.split(',').map(parse_ticks).collect();
    let values = values?;
    if values.is_empty() || values.len() > 65 {
        return Err(format!(
            "'{text}': give between 1 and 65 values, e.g. 1,2,4"
        ));
    }
    Ok(TickList(values))
}

/// Runs `leaselab frontier`.
pub fn execute(args: Args) -> CommandResult {
    let safeguard = match (&args.safeguard, &args.safeguard_file) {
        (_, Some(path)) => {
            let safeguard = super::safeguard_file::load(path)?;
            if let Some(why) = leaselab_checker::config::unexplorable(safeguard) {
                return Err(UsageError::new(format!("{}: {why}", path.display())));
            }
            safeguard
        }
        (Some(name), None) => {
            Safeguard::parse(name).map_err(|e| UsageError::new(format!("--safeguard: {e}")))?
        }
        (None, None) => {
            return Err(UsageError::new(
                "leaselab frontier needs --safeguard NAME or --safeguard-file FILE",
            ))
        }
    };
    let safeguard = args.nodes.apply(safeguard, args.safeguard.as_deref())?;
    args.search.validate()?;
    let cells = args.ttl.0.len().saturating_mul(args.work.0.len());
    if cells > args.max_cells {
        return Err(UsageError::new(format!(
            "--ttl {} --work {}: {} TTLs x {} works = {cells} cells, more than --max-cells {}; \
             each cell is several exhaustive checks, so sweep fewer values (e.g. --ttl 3..6 \
             --work 1,2,4) or raise --max-cells",
            list_text(&args.ttl.0),
            list_text(&args.work.0),
            args.ttl.0.len(),
            args.work.0.len(),
            args.max_cells
        )));
    }
    args.wallet.check_slew_rate(args.nodes.node_clock_slews)?;
    let base = CheckConfig {
        callers: args.wallet.callers,
        initial_balance: args.wallet.balance,
        amount: args.wallet.amount,
        failovers: args.wallet.failovers,
        restarts: args.wallet.restarts,
        evictions: args.wallet.evictions,
        restarts_from_aof: args.wallet.restart_from_aof,
        aof_appendfsync: args
            .wallet
            .appendfsync
            .unwrap_or(leaselab_model::redis::aof::Appendfsync::Everysec),
        redis_drift_percent: args.wallet.redis_drift,
        redis_clock: args.wallet.redis_clock(),
        partitions: args.wallet.partitions,
        horizon_ticks: args.horizon,
        reply_faults: args.reply_faults.faults(),
        node_faults: args
            .nodes
            .faults(args.wallet.slew_rate_for(args.nodes.node_clock_slews)),
        ..CheckConfig::new(safeguard)
    };
    // Refuse bad cells before running any. An error every cell shares is not about the TTL
    // or the work: it is said without them.
    let mut errors = Vec::new();
    for &ttl_ticks in &args.ttl.0 {
        for &work_ticks in &args.work.0 {
            let checked = CheckConfig {
                ttl_ticks,
                work_ticks,
                ..base
            }
            .validate();
            errors.push((ttl_ticks, work_ticks, checked.err().map(|e| e.0)));
        }
    }
    let first = errors.iter().find(|(_, _, error)| error.is_some());
    if let Some((ttl_ticks, work_ticks, Some(error))) = first {
        if errors.iter().all(|(_, _, e)| e.as_ref() == Some(error)) {
            return Err(UsageError::new(error.clone()));
        }
        return Err(UsageError::new(format!(
            "--ttl {ttl_ticks} --work {work_ticks}: {error}"
        )));
    }
    let options = RunOptions {
        strategy: Strategy::Bfs,
        threads: args.search.threads,
        max_unique: Some(args.search.max_states),
        stop_at_violation: true,
        stop_once_found: &[],
    };
    let limits = args
        .search
        .limits(!args.json && std::io::stderr().is_terminal());
    let counters = Arc::new(Counters::default());
    let label = Arc::new(Mutex::new(String::new()));
    let pace = Mutex::new(Pace::new(cells));
    let show = |text: String| {
        if let Ok(mut label) = label.lock() {
            *label = text;
        }
    };
    let (frontier, watched) = watched(&counters, limits, &label, || {
        sweep(
            base,
            &args.ttl.0,
            &args.work.0,
            options,
            &counters,
            |ttl, work| {
                if let Ok(mut pace) = pace.lock() {
                    show(pace.start(ttl, work));
                }
            },
            |cell| {
                if let Ok(mut pace) = pace.lock() {
                    show(pace.finish(cell));
                }
            },
        )
    })?;
    let mut frontier = frontier?;
    if let Some(rss) = watched.memory_hit {
        for cell in &mut frontier.cells {
            if cell.boundary == Boundary::Inconclusive {
                cell.reason = Some(memory_text(limits, rss, ""));
            }
        }
    }
    let status = if frontier.inconclusive().is_empty() {
        Status::Ok
    } else {
        Status::Inconclusive
    };
    if args.json {
        let json = JsonFrontier {
            verdict: if status == Status::Ok {
                "COMPLETE"
            } else {
                "INCONCLUSIVE"
            },
            reason: summary_reason(&frontier),
            exit_code: status.exit_code(),
            max_states_per_cell: args.search.max_states,
            failovers: base.failovers,
            restarts: base.restarts,
            restart_reloads: super::check::restart_reloads(&base),
            evictions: base.evictions,
            redis_drift_percent: base.redis_drift_percent,
            redis_clock: super::check::JsonClock::of(base.redis_clock),
            partitions: base.partitions,
            lost_replies: base.reply_faults.lost_replies,
            dropped_connections: base.reply_faults.dropped_connections,
            node_faults: (base.safeguard.redis_nodes() > 0
                && (base.node_faults.any() || base.node_faults.drift_percent != 0))
                .then(|| base.node_faults.describe()),
            frontier: &frontier,
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("frontiers serialise")
        );
    } else {
        print!("{}", render(&frontier, &base));
    }
    Ok(status)
}

/// The single Redis's faults and clock in every cell, as words for the header ("" without).
fn single_redis_faults_text(base: &CheckConfig) -> String {
    let mut out = String::new();
    match (base.restarts, base.restarts_from_aof) {
        (0, _) => {}
        (r, true) => out.push_str(&format!(
            ", up to {r} crash(es) of the machine running Redis, which reloads its append-only \
             file (appendfsync {})",
            base.aof_appendfsync.name()
        )),
        (r, false) => out.push_str(&format!(", up to {r} Redis restart(s) without persistence")),
    }
    if base.evictions > 0 {
        out.push_str(&format!(
            ", up to {} eviction(s) of the fence counter",
            base.evictions
        ));
    }
    if base.redis_drift_percent != 0 {
        out.push_str(&format!(
            ", the Redis clock {:+}% off",
            base.redis_drift_percent
        ));
    }
    let clock = base.redis_clock.describe("Redis's");
    if !clock.is_empty() {
        out.push_str(&format!(", {clock}"));
    }
    if base.partitions > 0 {
        out.push_str(&format!(
            ", up to {} partition(s) cutting a caller off from Redis",
            base.partitions
        ));
    }
    out
}

/// How a sweep is going, for the progress line: the cells under way, what the last one found
/// and cost, and the time left at the pace so far.
struct Pace {
    cells: usize,
    started: usize,
    finished: usize,
    began: std::time::Instant,
    /// The cells under way: TTL, work, and when each began.
    running: Vec<(u64, u64, std::time::Instant)>,
    last: Option<String>,
}

impl Pace {
    fn new(cells: usize) -> Pace {
        Pace {
            cells,
            started: 0,
            finished: 0,
            began: std::time::Instant::now(),
            running: Vec::new(),
            last: None,
        }
    }

    /// Notes a cell starting now; the progress label.
    fn start(&mut self, ttl: u64, work: u64) -> String {
        self.started += 1;
        self.running.push((ttl, work, std::time::Instant::now()));
        self.label()
    }

    /// Notes a cell done; the progress label.
    fn finish(&mut self, cell: &leaselab_checker::frontier::Cell) -> String {
        let at = self
            .running
            .iter()
            .position(|&(ttl, work, _)| (ttl, work) == (cell.ttl_ticks, cell.work_ticks))
            .or((!self.running.is_empty()).then_some(0));
        let began = at.map_or(self.began, |at| self.running.remove(at).2);
        self.finished += 1;
        self.last = Some(format!(
            "TTL {} work {} -> {} in {:.1}s",
            cell.ttl_ticks,
            cell.work_ticks,
            cell.boundary.cell(),
            began.elapsed().as_secs_f64()
        ));
        self.label()
    }

    /// `cell 2/3: TTL 4 work 1 (last: ...; ≥Ns left)`, or with cells side by side `2 cells
    /// under way, 3/4 started: TTL 4 work 4, TTL 5 work 4 (...)`.
    fn label(&self) -> String {
        let under_way: Vec<String> = self
            .running
            .iter()
            .map(|(ttl, work, _)| format!("TTL {ttl} work {work}"))
            .collect();
        let mut text = match under_way.len() {
            0 => format!("{}/{} cells done", self.finished, self.cells),
            1 => format!("cell {}/{}: {}", self.started, self.cells, under_way[0]),
            n => format!(
                "{n} cells under way, {}/{} started: {}",
                self.started,
                self.cells,
                under_way.join(", ")
            ),
        };
        if let Some(last) = &self.last {
            let spent = self.began.elapsed().as_secs_f64();
            let left = spent / self.finished as f64 * (self.cells - self.finished) as f64;
            // Larger TTLs and works take longer: the estimate is a floor, hence the `≥`.
            text.push_str(&format!(" (last: {last}; ≥{left:.0}s left)"));
        }
        text
    }
}

/// The JSON form of a sweep.
#[derive(Serialize)]
struct JsonFrontier<'a> {
    /// `COMPLETE` (every cell established) or `INCONCLUSIVE`.
    verdict: &'static str,
    /// Why some cells are inconclusive (none when complete).
    reason: Option<String>,
    /// 0 (complete) or 3 (inconclusive).
    exit_code: u8,
    /// The limit on distinct states per cell.
    max_states_per_cell: u64,
    /// How many Redis failovers may strike in every cell.
    failovers: u32,
    /// How many restarts of the single Redis may strike in every cell.
    restarts: u32,
    /// What such a restart reloads: `nothing`, `aof-everysec`, `aof-no` or `aof-always` (as
    /// in `check --json`).
    restart_reloads: &'static str,
    /// How many evictions of the fence counter may strike in every cell.
    evictions: u32,
    /// The single Redis's clock rate error, in percent.
    redis_drift_percent: i32,
    /// Jumps and slews of the single Redis's clock in every cell (omitted without any).
    #[serde(skip_serializing_if = "Option::is_none")]
    redis_clock: Option<super::check::JsonClock>,
    /// How many partitions may strike in every cell.
    partitions: u32,
    /// How many Redis replies may be lost in flight, in every cell.
    lost_replies: u32,
    /// How many Redis connections may break with a reply in flight, in every cell.
    dropped_connections: u32,
    /// Redlock's node faults and clock drift in every cell, in words (none without).
    #[serde(skip_serializing_if = "Option::is_none")]
    node_faults: Option<String>,
    #[serde(flatten)]
    frontier: &'a Frontier,
}

fn list_text(values: &[u64]) -> String {
    match values {
        [] => String::new(),
        [one] => one.to_string(),
        [first, .., last] if values.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("{first}..{last}")
        }
        _ => values
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// How many cells are inconclusive, and why the first one is.
fn summary_reason(frontier: &Frontier) -> Option<String> {
    let undecided = frontier.inconclusive();
    let first = undecided.first()?;
    Some(format!(
        "{} of {} cells inconclusive; TTL {} work {}: {}",
        undecided.len(),
        frontier.cells.len(),
        first.ttl_ticks,
        first.work_ticks,
        first.reason.as_deref().unwrap_or("not established")
    ))
}

fn render(frontier: &Frontier, base: &CheckConfig) -> String {
    let mut out = format!(
        "{}: the largest pause (ticks, per caller in all) for which the ledger holds\n\
         {} callers spending {} from {}{}{}{}{}; every cell exhaustive to {}\n\
         '-' = broken even without pauses, '∞' = safe with unbounded pauses, \
         '?' = inconclusive\n\n",
        frontier.safeguard,
        frontier.callers,
        base.amount,
        base.initial_balance,
        match base.failovers {
            0 => String::new(),
            k => format!(", up to {k} failover(s)"),
        },
        single_redis_faults_text(base),
        reply_faults_text(base.reply_faults),
        if base.safeguard.redis_nodes() > 0
            && (base.node_faults.any() || base.node_faults.drift_percent != 0)
        {
            format!(
                " on {} nodes ({})",
                base.safeguard.redis_nodes(),
                base.node_faults.describe()
            )
        } else {
            String::new()
        },
        match base.horizon_ticks {
            Some(h) => format!("a horizon of {h} ticks"),
            None => "its horizon (2 x work + 2 x TTL + 4 ticks)".to_string(),
        }
    );
    out.push_str(&frontier.table());
    let undecided = frontier.inconclusive();
    if !undecided.is_empty() {
        out.push_str(&format!(
            "\nINCONCLUSIVE: {} of {} cells could not be established ('?'); no verdict for \
             them (exit 3):\n",
            undecided.len(),
            frontier.cells.len()
        ));
        for cell in undecided {
            out.push_str(&format!(
                "  TTL {} work {} ({} states): {}\n",
                cell.ttl_ticks,
                cell.work_ticks,
                group(cell.unique_states),
                cell.reason.as_deref().unwrap_or("not established")
            ));
        }
    } else if frontier.safe_everywhere() {
        out.push_str("\nsafe in every cell, whatever the pauses\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use leaselab_checker::frontier::Cell;

    fn frontier(boundaries: &[Boundary]) -> Frontier {
        Frontier {
            safeguard: "fenced-cas".into(),
            callers: 2,
            ttls: vec![1],
            works: (1..=boundaries.len() as u64).collect(),
            cells: boundaries
                .iter()
                .enumerate()
                .map(|(i, &boundary)| Cell {
                    ttl_ticks: 1,
                    work_ticks: i as u64 + 1,
                    horizon_ticks: 5,
                    boundary,
                    checks: 1,
                    unique_states: 10,
                    reason: (boundary == Boundary::Inconclusive)
                        .then(|| "stopped by the state limit".to_string()),
                })
                .collect(),
        }
    }

    #[test]
    fn safe_in_every_cell_only_when_every_cell_was_established() {
        let base = CheckConfig::new(Safeguard::NoLock);
        let all = render(
            &frontier(&[Boundary::Unbounded, Boundary::Unbounded]),
            &base,
        );
        assert!(all.contains("safe in every cell"), "{all}");
        let some = render(
            &frontier(&[Boundary::Unbounded, Boundary::Inconclusive]),
            &base,
        );
        assert!(!some.contains("safe in every cell"), "{some}");
        assert!(some.contains("INCONCLUSIVE: 1 of 2 cells"), "{some}");
        assert!(some.contains("TTL 1 work 2"), "{some}");
        assert!(some.contains("stopped by the state limit"), "{some}");
        let reason = summary_reason(&frontier(&[Boundary::Inconclusive])).unwrap();
        assert!(reason.starts_with("1 of 1 cells inconclusive"), "{reason}");
        assert_eq!(summary_reason(&frontier(&[Boundary::UpTo(2)])), None);
    }

    #[test]
    fn the_progress_line_names_the_cell_and_after_the_first_what_the_last_found() {
        let mut pace = Pace::new(3);
        assert_eq!(pace.start(3, 1), "cell 1/3: TTL 3 work 1");
        let cell = &frontier(&[Boundary::UpTo(2)]).cells[0];
        pace.finish(cell);
        let text = pace.start(4, 1);
        assert!(
            text.starts_with("cell 2/3: TTL 4 work 1 (last: TTL 1 work 1 -> 2 in "),
            "{text}"
        );
        assert!(text.ends_with("s left)"), "{text}");
        pace.finish(&frontier(&[Boundary::Inconclusive]).cells[0]);
        assert!(pace.start(5, 1).contains("-> ? in"));
    }

    #[test]
    fn with_cells_side_by_side_the_progress_line_names_each_under_way() {
        let mut pace = Pace::new(4);
        pace.start(3, 4);
        assert_eq!(
            pace.start(4, 4),
            "2 cells under way, 2/4 started: TTL 3 work 4, TTL 4 work 4"
        );
        let mut cell = frontier(&[Boundary::UpTo(2)]).cells[0].clone();
        (cell.ttl_ticks, cell.work_ticks) = (3, 4);
        let text = pace.finish(&cell);
        assert!(
            text.starts_with("cell 2/4: TTL 4 work 4 (last: TTL 3 work 4 -> 2 in "),
            "{text}"
        );
        let text = pace.start(5, 4);
        assert!(
            text.starts_with("2 cells under way, 3/4 started: TTL 4 work 4, TTL 5 work 4 (last: "),
            "{text}"
        );
    }

    #[test]
    fn lists_are_named_as_written() {
        assert_eq!(list_text(&[1, 2, 3]), "1..3");
        assert_eq!(list_text(&[1, 2, 4]), "1,2,4");
        assert_eq!(list_text(&[5]), "5");
    }

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_list("3..5"), Ok(TickList(vec![3, 4, 5])));
        assert_eq!(parse_list("1,2,4"), Ok(TickList(vec![1, 2, 4])));
        assert_eq!(parse_list("2ms,4"), Ok(TickList(vec![2, 4])));
        assert!(parse_list("5..3").is_err());
        assert!(parse_list("1,x").is_err());
    }
}
