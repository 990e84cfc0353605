//! `leaselab check`: exhaustive model checking of one safeguard, a named suite, or the
//! interactive Explorer.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use leaselab_checker::bfs::Counters;
use leaselab_checker::run::Stop;
use leaselab_checker::suite::{suite, SuiteEntry, SUITES};
use leaselab_checker::{
    run, CheckConfig, CheckReport, LeaseModel, PropertyVerdict, RunOptions, Strategy, LEDGER,
};
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::Safeguard;
use leaselab_model::world::{ClockFaults, FaultsOn, ReplyFaults, NTP_SLEW_RATE_PPM};
use serde::Serialize;
use stateright::Model;

use crate::exit::{CommandResult, Status, UsageError};
use crate::shard::{Shard, ShardArgs};

use super::duration::parse_ms;
use super::merge::{same_fields, ShardFile};

/// Explore every interleaving of a safeguard's callers up to a bound and judge the ledger,
/// mutual exclusion and liveness.
///
/// Times are ticks of the model's clock (1 tick = 1 ms): write `3` or `3ms`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The safeguard, e.g. lease, lease-watchdog, fenced, fenced-cas, pg-debit.
    #[arg(long, value_name = "NAME", conflicts_with = "safeguard_file")]
    pub safeguard: Option<String>,
    /// Your own safeguard, described in a TOML file (see README "Your own safeguard").
    #[arg(long, value_name = "FILE")]
    pub safeguard_file: Option<std::path::PathBuf>,
    /// Which "always" properties decide the exit code: `all`, or only `ledger` (a safeguard
    /// such as fenced-cas keeps the ledger while breaking mutual exclusion by design).
    #[arg(long, value_enum, default_value_t = Gate::All, value_name = "PROPERTIES")]
    pub gate: Gate,
    /// The callers, the wallet and the failovers.
    #[command(flatten)]
    pub wallet: WalletArgs,
    /// The lease, in ticks.
    #[arg(long, default_value = "3", value_parser = parse_ticks, value_name = "T")]
    pub ttl: u64,
    /// The work between read and write, in ticks.
    #[arg(long, default_value = "1", value_parser = parse_ticks, value_name = "W")]
    pub work: u64,
    /// How long, in all, a caller may be stopped while time passes: ticks (semi-synchronous)
    /// or `unbounded` (asynchronous).
    #[arg(long, default_value = "unbounded", value_parser = parse_pause, value_name = "P|unbounded")]
    pub max_pause: Pause,
    /// Time stops here, in ticks (default: 2 × work + 2 × TTL + 4).
    #[arg(long, value_parser = parse_ticks, value_name = "H")]
    pub horizon: Option<u64>,
    /// The reply faults the World may inject.
    #[command(flatten)]
    pub reply_faults: ReplyFaultArgs,
    /// Redlock's nodes and their faults.
    #[command(flatten)]
    pub nodes: super::nodes::NodeArgs,
    /// Breadth-first search (the default): shortest counterexamples.
    #[arg(long, conflicts_with = "dfs")]
    pub bfs: bool,
    /// Depth-first search (stateright's): less memory, longer counterexamples.
    #[arg(long)]
    pub dfs: bool,
    /// Threads, and the state and memory limits.
    #[command(flatten)]
    pub search: SearchArgs,
    /// Explore callers that differ only by which is which separately (no symmetry reduction).
    #[arg(long)]
    pub no_symmetry: bool,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run a named suite of checks with expected verdicts (smoke, nightly). Each check of a
    /// suite has its own safeguard and bounds: only the search options (threads, limits,
    /// --json, --shard) go with it.
    #[arg(long, value_name = "NAME", conflicts_with_all = [
        "safeguard", "safeguard_file", "explore", "gate", "ttl", "work", "max_pause", "horizon",
        "no_symmetry", "callers", "failovers", "restarts", "restart_from_aof", "appendfsync",
        "evictions", "balance", "amount", "redis_drift", "lost_replies", "dropped_connections",
        "reply_faults_on", "redis_nodes", "node_restarts", "node_delayed_restarts",
        "node_clock_jumps", "node_clock_jump", "node_drift", "redis_clock_jumps",
        "redis_clock_jump", "redis_clock_slews", "redis_clock_slew", "slew_rate",
        "node_clock_slews", "node_clock_slew", "partitions",
    ])]
    pub suite: Option<String>,
    /// With --suite: run only shard K of N of its checks (`leaselab merge` combines the
    /// shards' `--json` outputs).
    #[command(flatten)]
    pub shard: ShardArgs,
    /// Serve stateright's Explorer for this model on 127.0.0.1 instead of checking.
    #[arg(long)]
    pub explore: bool,
    /// The Explorer's port (on 127.0.0.1).
    #[arg(
        long,
        default_value_t = 3000,
        value_name = "PORT",
        requires = "explore"
    )]
    pub port: u16,
    /// Where a ledger counterexample is saved as a trace (turned into a simulated schedule).
    #[command(flatten)]
    pub traces: crate::trace::SaveArgs,
    /// Shrink the counterexample's simulated run and save the smallest failing trace too.
    #[arg(long)]
    pub shrink: bool,
}

/// The flags `check` and `frontier` share about who spends what.
#[derive(Debug, Clone, ClapArgs)]
pub struct WalletArgs {
    /// How many callers spend from the wallet.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub callers: u32,
    /// How many Redis failovers may strike, each losing what had not replicated.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub failovers: u32,
    /// How many restarts of the single Redis may strike, at any moment; at most 3. Without
    /// persistence each loses every key (the lock, the fence counter, a balance kept there);
    /// --restart-from-aof makes them machine crashes that reload an append-only file.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub restarts: u32,
    /// Make those restarts machine crashes after which Redis reloads its append-only file
    /// (by default appendfsync everysec, fsynced at the start and at most once a second after,
    /// at moments the search picks: the keys come back as they were at the last fsync; see
    /// --appendfsync).
    #[arg(long)]
    pub restart_from_aof: bool,
    /// With --restart-from-aof: when that file was fsynced. everysec (the default) and no
    /// fsync at the start and then every second (no: every 30 s, Linux's writeback); always
    /// fsyncs before every reply, so a crash loses no key.
    #[arg(long, value_parser = crate::cli::run::parse_appendfsync, value_name = "always|everysec|no")]
    pub appendfsync: Option<Appendfsync>,
    /// How many evictions of the fence counter (an allkeys-* policy under memory pressure)
    /// may strike, at any moment; fenced safeguards only, at most 3.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub evictions: u32,
    /// The balance before the run.
    #[arg(long, default_value_t = 20, value_name = "B")]
    pub balance: i64,
    /// How much each caller spends.
    #[arg(long, default_value_t = 10, value_name = "A")]
    pub amount: i64,
    /// The single Redis's clock rate error, in percent: `+50%` runs 50 % fast (keys expire
    /// early), `-10%` slow (Redlock's nodes: --node-drift).
    #[arg(long, default_value = "0", value_parser = super::nodes::parse_percent, value_name = "PCT", allow_hyphen_values = true)]
    pub redis_drift: i32,
    /// How many times the single Redis's clock may be stepped forward (at any moment; at most
    /// 2), each by --redis-clock-jump ticks: keys expire that much early.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub redis_clock_jumps: u32,
    /// How far a jump of the single Redis's clock steps it forward, in ticks.
    #[arg(long, default_value = "0", value_parser = parse_ticks, value_name = "T")]
    pub redis_clock_jump: u64,
    /// Whether the single Redis's clock may start slewing forward (0 or 1, at any moment):
    /// NTP's gradual correction of --redis-clock-slew ticks at --slew-rate.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub redis_clock_slews: u32,
    /// The offset a slew of the single Redis's clock applies, in ticks.
    #[arg(long, default_value = "0", value_parser = parse_ticks, value_name = "T")]
    pub redis_clock_slew: u64,
    /// How fast a slew (of the single Redis or a Redlock node) applies its offset: `500ppm`
    /// (NTP's limit, the default) or a percentage such as `25%`.
    #[arg(long, value_parser = parse_slew_rate, value_name = "RATE")]
    pub slew_rate: Option<u32>,
    /// How many partitions may strike (at most 2), each cutting one caller off from one Redis
    /// server (the single Redis, or a Redlock node) at any moment for the rest of the run:
    /// what it sends there is lost, and it waits for the dial or read timeout (3 s, past any
    /// horizon) or a request's own (Redlock's per node).
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub partitions: u32,
}

/// `500ppm`, `25%`: a positive rate of at most 50 %, in millionths.
fn parse_slew_rate(text: &str) -> Result<u32, String> {
    let rate = crate::cli::run::parse_rate_ppm(text).map_err(|error| {
        match error.contains("is not a rate") {
            true => format!("'{text}' is not a slew rate; write e.g. 500ppm or 25%"),
            false => error,
        }
    })?;
    match rate {
        ppm if ppm <= 0 => Err(format!(
            "'{text}': a slew applies its offset at a positive rate; write e.g. 500ppm or 25%"
        )),
        ppm => u32::try_from(ppm).map_err(|_| format!("'{text}' is too large")),
    }
}

impl WalletArgs {
    /// The jumps and slews of the single Redis's clock these flags ask for.
    pub fn redis_clock(&self) -> ClockFaults {
        ClockFaults {
            jumps: self.redis_clock_jumps,
            jump_ms: self.redis_clock_jump,
            slews: self.redis_clock_slews,
            slew_ms: self.redis_clock_slew,
            slew_rate_ppm: self.slew_rate_for(self.redis_clock_slews),
        }
    }

    /// The slew rate for a clock that may slew `slews` times: `--slew-rate`, NTP's 500 ppm by
    /// default; 0 for a clock that never slews (so a fault-free clock is the default one).
    pub fn slew_rate_for(&self, slews: u32) -> u32 {
        match slews {
            0 => 0,
            _ => self.slew_rate.unwrap_or(NTP_SLEW_RATE_PPM),
        }
    }

    /// Refuses `--slew-rate` when no clock may slew (`node_slews`: `--node-clock-slews`).
    pub fn check_slew_rate(&self, node_slews: u32) -> Result<(), UsageError> {
        match self.slew_rate {
            Some(ppm) if self.redis_clock_slews == 0 && node_slews == 0 => {
                Err(UsageError::new(format!(
                    "--slew-rate {ppm}ppm: no clock slews; add --redis-clock-slews 1 \
                     --redis-clock-slew T (or --node-clock-slews 1 --node-clock-slew T on Redlock)"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// The jumps and slews of a Redis clock in `--json` (omitted without any).
#[derive(Debug, Serialize)]
pub struct JsonClock {
    jumps: u32,
    jump_ticks: u64,
    slews: u32,
    slew_ticks: u64,
    slew_rate_ppm: u32,
}

impl JsonClock {
    /// `clock` in JSON, or None when nothing may happen to it.
    pub fn of(clock: ClockFaults) -> Option<JsonClock> {
        clock.any().then_some(JsonClock {
            jumps: clock.jumps,
            jump_ticks: clock.jump_ms,
            slews: clock.slews,
            slew_ticks: clock.slew_ms,
            slew_rate_ppm: clock.slew_rate_ppm,
        })
    }
}

/// The flags `check` and `frontier` share about replies lost in flight (0 each: none).
#[derive(Debug, Clone, Copy, ClapArgs)]
pub struct ReplyFaultArgs {
    /// How many Redis replies may be lost in flight (the request ran; the caller waits until
    /// its read timeout).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub lost_replies: u32,
    /// How many Redis connections may break with a reply in flight (the request ran; the
    /// client retries it on a new connection, as go-redis does).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub dropped_connections: u32,
    /// Which Redis requests those faults may strike: any, acquire (a retried acquire runs
    /// twice) or release.
    #[arg(long, default_value = "any", value_parser = parse_faults_on, value_name = "any|acquire|release")]
    pub reply_faults_on: FaultsOn,
}

fn parse_faults_on(text: &str) -> Result<FaultsOn, String> {
    FaultsOn::parse(text)
        .ok_or_else(|| format!("'{text}' is not a request kind; expected any, acquire or release"))
}

impl ReplyFaultArgs {
    /// The World's reply-fault budgets.
    pub fn faults(&self) -> ReplyFaults {
        ReplyFaults {
            lost_replies: self.lost_replies,
            dropped_connections: self.dropped_connections,
            on: self.reply_faults_on,
        }
    }
}

/// The flags `check` and `frontier` share about how hard to search.
#[derive(Debug, Clone, ClapArgs)]
pub struct SearchArgs {
    /// Worker threads (per check; `frontier` runs this many cells side by side instead, one
    /// thread each).
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub threads: usize,
    /// Stop a check after this many distinct states and report INCONCLUSIVE (exit 3; in
    /// `frontier`, the cell is marked '?'); raise it for larger bounds (a state costs some
    /// 100 to 250 bytes at the peak).
    #[arg(long, default_value_t = DEFAULT_MAX_STATES, value_name = "N")]
    pub max_states: u64,
    /// Stop when the process's resident memory passes this (e.g. 512MiB, 4GiB) and report
    /// INCONCLUSIVE (exit 3; in `frontier`, the cells left are '?'). Checked on Linux;
    /// elsewhere only --max-states applies.
    #[arg(long, default_value = "8GiB", value_parser = parse_bytes, value_name = "SIZE")]
    pub max_memory: u64,
}

impl SearchArgs {
    /// Refuses a thread count or state limit the search cannot use.
    pub fn validate(&self) -> Result<(), UsageError> {
        super::run::batch::check_threads(self.threads)?;
        if self.max_states == 0 {
            return Err(UsageError::new(
                "--max-states 0: the search needs room for at least 1 state; the default is \
                 10000000",
            ));
        }
        Ok(())
    }

    /// The limits a watched search stops at.
    pub fn limits(&self, progress: bool) -> Limits {
        Limits {
            max_states: self.max_states,
            max_memory: self.max_memory,
            progress,
        }
    }
}

/// The default limit on distinct states (per check; for `frontier`, per check of each cell):
/// some 2 GiB with two callers (docs/speed.md: the nightly suite's largest check, run alone to
/// it, peaked at 1.8 GB), room for the nightly suite and the README's sweeps.
pub const DEFAULT_MAX_STATES: u64 = 10_000_000;

/// A size in bytes: `512MiB`, `4GiB`, `2G`, `100000000`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || format!("'{text}' is not a size; write e.g. 512MiB or 4GiB");
    let number: u64 = number.parse().map_err(|_| bad())?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = number.checked_mul(scale).ok_or_else(bad)?;
    if bytes < 16 << 20 {
        return Err(format!(
            "'{text}': at least 16MiB (the program itself needs that much); write e.g. 512MiB"
        ));
    }
    Ok(bytes)
}

/// A pause bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause(pub Option<u64>);

/// Ticks: a bare number (`3`) or a duration in whole milliseconds (`3ms`).
pub fn parse_ticks(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if let Ok(ticks) = text.parse::<u64>() {
        return Ok(ticks);
    }
    parse_ms(text).map_err(|_| {
        format!("'{text}' is not a number of ticks; write e.g. 3 or 3ms (1 tick = 1 ms)")
    })
}

/// `unbounded`, or ticks.
pub fn parse_pause(text: &str) -> Result<Pause, String> {
    match text.trim() {
        "unbounded" | "none" | "inf" | "∞" => Ok(Pause(None)),
        other => parse_ticks(other).map(|t| Pause(Some(t))).map_err(|_| {
            format!("'{other}' is not a pause bound; write a number of ticks (e.g. 2 or 2ms) or 'unbounded'")
        }),
    }
}

impl Args {
    fn strategy(&self) -> Strategy {
        if self.dfs {
            Strategy::Dfs
        } else {
            Strategy::Bfs
        }
    }

    fn options(&self) -> Result<RunOptions, UsageError> {
        self.search.validate()?;
        Ok(RunOptions {
            strategy: self.strategy(),
            threads: self.search.threads,
            max_unique: Some(self.search.max_states),
            stop_at_violation: false,
            stop_once_found: &[],
        })
    }

    fn limits(&self) -> Limits {
        self.search
            .limits(!self.json && std::io::stderr().is_terminal())
    }

    /// The check these arguments describe.
    pub fn config(&self) -> Result<CheckConfig, UsageError> {
        let safeguard = match (&self.safeguard, &self.safeguard_file) {
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
                return Err(UsageError::new(format!(
                    "leaselab check needs --safeguard NAME or --safeguard-file FILE (or --suite {}); e.g. leaselab check --safeguard fenced-cas --callers 2 --ttl 2 --work 1 --max-pause unbounded",
                    SUITES.join("|")
                )))
            }
        };
        let safeguard = self.nodes.apply(safeguard, self.safeguard.as_deref())?;
        let config = CheckConfig {
            safeguard,
            callers: self.wallet.callers,
            initial_balance: self.wallet.balance,
            amount: self.wallet.amount,
            ttl_ticks: self.ttl,
            work_ticks: self.work,
            max_pause_ticks: self.max_pause.0,
            failovers: self.wallet.failovers,
            restarts: self.wallet.restarts,
            restarts_from_aof: self.wallet.restart_from_aof,
            aof_appendfsync: self.wallet.appendfsync.unwrap_or(Appendfsync::Everysec),
            evictions: self.wallet.evictions,
            horizon_ticks: self.horizon,
            symmetry: !self.no_symmetry,
            reply_faults: self.reply_faults.faults(),
            node_faults: self
                .nodes
                .faults(self.wallet.slew_rate_for(self.nodes.node_clock_slews)),
            redis_drift_percent: self.wallet.redis_drift,
            redis_clock: self.wallet.redis_clock(),
            partitions: self.wallet.partitions,
        };
        self.wallet.check_slew_rate(self.nodes.node_clock_slews)?;
        config.validate()?;
        Ok(config)
    }
}

/// Runs `leaselab check`.
pub fn execute(args: Args) -> CommandResult {
    if let Some(name) = &args.suite {
        return run_suite(name, &args);
    }
    if let Some(shard) = args.shard.shard {
        return Err(UsageError::new(format!(
            "--shard {}: only a suite is split into shards; add --suite {} or drop --shard",
            shard.text(),
            SUITES.join("|")
        )));
    }
    let config = args.config()?;
    if args.explore {
        return explore(config, args.port, args.safeguard_file.as_deref());
    }
    let options = args.options()?;
    let model = LeaseModel::new(config)?;
    let (report, elapsed) = timed_run(&model, options, args.limits())?;
    if args.json {
        let json =
            serde_json::to_string_pretty(&JsonCheck::new(&config, &report, elapsed, args.gate))
                .expect("reports serialise");
        println!("{json}");
    } else {
        print!("{}", render(&config, &report, elapsed, &args));
    }
    save_counterexample(&config, &report, &args)?;
    Ok(gated_status(&report, args.gate))
}

/// Which violated properties make `leaselab check` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Gate {
    /// Every "always" property: ledger holds, mutual exclusion, only the holder changes the
    /// lock.
    All,
    /// Only "ledger holds".
    Ledger,
}

impl Gate {
    /// The properties that decide the verdict.
    fn names(self, report: &CheckReport) -> Vec<&'static str> {
        match self {
            Gate::All => report.always_names(),
            Gate::Ledger => vec![LEDGER],
        }
    }
}

/// The verdict over the gated properties: VIOLATED, INCONCLUSIVE or SAFE.
fn gated_verdict(report: &CheckReport, gate: Gate) -> PropertyVerdict {
    report.verdict_over(&gate.names(report))
}

/// The exit status: a violated gated property is 1, else an undecided one is 3, else 0.
fn gated_status(report: &CheckReport, gate: Gate) -> Status {
    match gated_verdict(report, gate) {
        PropertyVerdict::Violated => Status::Violation,
        PropertyVerdict::Inconclusive => Status::Inconclusive,
        _ => Status::Ok,
    }
}

/// Saves the ledger counterexample, if any, as a trace whose simulated schedule reproduces
/// it (and its shrunk run with `--shrink`).
fn save_counterexample(
    config: &CheckConfig,
    report: &CheckReport,
    args: &Args,
) -> Result<(), UsageError> {
    let Some(dir) = args.traces.dir() else {
        return Ok(());
    };
    let Some(path) = report
        .property(leaselab_checker::LEDGER)
        .and_then(|p| p.path.clone())
    else {
        return Ok(());
    };
    let translation = match crate::trace::model::translate(config, &path) {
        Ok(translation) => translation,
        Err(error) => {
            eprintln!("counterexample not saved as a trace: {error}");
            return Ok(());
        }
    };
    if !translation.report.broken() {
        eprintln!(
            "counterexample not saved as a trace: its simulated schedule ends {} (the simulation does not reproduce it)",
            translation.report.ledger.line()
        );
        return Ok(());
    }
    let file =
        crate::trace::model::trace_file(config, leaselab_checker::LEDGER, &path, &translation);
    let saved = file
        .save_in(dir)
        .map_err(|error| UsageError::new(format!("--save-traces {}: {error}", dir.display())))?;
    eprintln!(
        "counterexample saved as a trace: {} (leaselab show {0})",
        saved.display()
    );
    if args.shrink {
        let (shrunk, sizes) = super::shrink::shrink_and_save(
            &translation.report.scenario,
            translation.report.seed,
            translation.report.digest(),
            dir,
        )?;
        eprint!("{sizes}");
        eprintln!("shrunk trace saved: {}", shrunk.display());
    }
    Ok(())
}

/// What bounds a search from outside the model, and whether to show its progress.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The limit on distinct states (also in [`RunOptions::max_unique`]).
    pub max_states: u64,
    /// The limit on resident memory, in bytes.
    pub max_memory: u64,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// What the watcher saw while a search ran.
#[derive(Clone, Copy, Debug, Default)]
pub struct Watched {
    /// The resident memory that passed the limit, when it did.
    pub memory_hit: Option<u64>,
    /// The most resident memory seen.
    pub peak_memory: u64,
}

/// The process's resident memory in bytes (Linux; none elsewhere).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// `1.5 GiB`.
pub fn bytes_text(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    if bytes as f64 >= GIB {
        format!("{:.1} GiB", bytes as f64 / GIB)
    } else {
        format!("{:.0} MiB", bytes as f64 / MIB)
    }
}

/// Runs `work` while a watcher thread enforces the memory limit and, on a terminal, draws a
/// progress bar on stderr (`label` names what is being checked). A safeguard script stopped
/// during `work` makes its result void: an error, so that no verdict is printed.
pub fn watched<T>(
    counters: &Arc<Counters>,
    limits: Limits,
    label: &Arc<Mutex<String>>,
    work: impl FnOnce() -> T,
) -> Result<(T, Watched), UsageError> {
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let counters = Arc::clone(counters);
        let done = Arc::clone(&done);
        let label = Arc::clone(label);
        std::thread::spawn(move || watch(&counters, &done, limits, &label))
    };
    let result = work();
    done.store(true, Ordering::Relaxed);
    let watched = watcher.join().unwrap_or_default();
    crate::cli::refuse_stopped_script()?;
    Ok((result, watched))
}

fn watch(counters: &Counters, done: &AtomicBool, limits: Limits, label: &Mutex<String>) -> Watched {
    let start = Instant::now();
    let mut seen = Watched::default();
    let bar = if limits.progress {
        let bar = ProgressBar::with_draw_target(
            Some(limits.max_states),
            ProgressDrawTarget::stderr_with_hz(4),
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:20}] {human_pos}/{human_len} states (limit) {wide_msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        Some(bar)
    } else {
        None
    };
    let mut last_level = (0u64, 0u64);
    let mut growth = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if let Some(rss) = resident_bytes() {
            seen.peak_memory = seen.peak_memory.max(rss);
            if rss > limits.max_memory && seen.memory_hit.is_none() {
                seen.memory_hit = Some(rss);
                counters.request_stop();
            }
        }
        let Some(bar) = &bar else { continue };
        let elapsed = start.elapsed();
        if elapsed < Duration::from_millis(500) {
            continue;
        }
        let unique = counters.unique.load(Ordering::Relaxed);
        let depth = counters.depth.load(Ordering::Relaxed);
        let level = counters.level.load(Ordering::Relaxed);
        if depth != last_level.0 {
            if last_level.1 > 0 {
                growth = Some(level as f64 / last_level.1 as f64);
            }
            last_level = (depth, level);
        }
        let rate = unique as f64 / elapsed.as_secs_f64().max(0.001);
        let eta = if rate > 0.0 && unique < limits.max_states {
            let secs = (limits.max_states - unique) as f64 / rate;
            format!("limit in ~{}", human_secs(secs))
        } else {
            "at the limit".to_string()
        };
        let estimate = match growth {
            Some(g) => format!(
                ", next level ~{} (x{g:.1})",
                group((level as f64 * g) as u64)
            ),
            None => String::new(),
        };
        if let Ok(label) = label.lock() {
            bar.set_prefix(label.clone());
        }
        bar.set_position(unique.min(limits.max_states));
        bar.set_message(format!(
            "depth {depth}{estimate}, {}/s, {}, {eta}",
            group(rate as u64),
            bytes_text(seen.peak_memory)
        ));
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    seen
}

/// Why the memory limit stopped a search (`progress`: how far it got), and how to raise it.
pub fn memory_text(limits: Limits, rss: u64, progress: &str) -> String {
    format!(
        "stopped by the memory limit (--max-memory {}; resident memory reached {}){progress}; \
         raise it with --max-memory, or shrink the bound (--horizon, --callers, --ttl, --work)",
        bytes_text(limits.max_memory),
        bytes_text(rss)
    )
}

fn human_secs(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0}s")
    } else if secs < 5400.0 {
        format!("{:.0}min", secs / 60.0)
    } else {
        format!("{:.1}h", secs / 3600.0)
    }
}

/// Runs the check under `limits`; a stop for memory is reported as such in every undecided
/// property.
fn timed_run(
    model: &LeaseModel,
    options: RunOptions,
    limits: Limits,
) -> Result<(CheckReport, Duration), UsageError> {
    let counters = Arc::new(Counters::default());
    let start = Instant::now();
    let label = Arc::new(Mutex::new("checking".to_string()));
    let (mut report, watched) =
        watched(&counters, limits, &label, || run(model, options, &counters))?;
    let elapsed = start.elapsed();
    if report.stopped == Some(Stop::Requested) {
        if let Some(rss) = watched.memory_hit {
            let text = memory_text(
                limits,
                rss,
                &format!(
                    " after {} distinct states at depth {}",
                    report.unique_states, report.max_depth
                ),
            );
            for property in &mut report.properties {
                if property.verdict == PropertyVerdict::Inconclusive {
                    property.basis = text.clone();
                }
            }
        }
    }
    Ok((report, elapsed))
}

/// 1234567 as `1,234,567`.
pub fn group(n: u64) -> String {
    let digits: Vec<char> = n.to_string().chars().collect();
    let mut out = String::new();
    for (i, c) in digits.iter().enumerate() {
        let left = digits.len() - i;
        if i > 0 && left.is_multiple_of(3) {
            out.push(',');
        }
        out.push(*c);
    }
    out
}

fn per_second(n: u64, elapsed: Duration) -> u64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        (n as f64 / secs) as u64
    } else {
        0
    }
}

fn ticks(n: u64) -> String {
    if n == 1 {
        "1 tick".into()
    } else {
        format!("{n} ticks")
    }
}

/// The reply-fault budget for the timing line (empty without faults).
pub fn reply_faults_text(faults: ReplyFaults) -> String {
    let mut text = String::new();
    if faults.lost_replies > 0 {
        text.push_str(&format!("; up to {} lost reply(ies)", faults.lost_replies));
    }
    if faults.dropped_connections > 0 {
        text.push_str(&format!(
            "; up to {} dropped connection(s) with a reply in flight",
            faults.dropped_connections
        ));
    }
    if faults.any() && faults.on != FaultsOn::Any {
        text.push_str(&format!(", on {} requests only", faults.on.name()));
    }
    text
}

/// The command line that reproduces `config` (for hints).
/// The `check` command line for `config`; a safeguard from a file is named by `file`.
fn command_line(config: &CheckConfig, file: Option<&std::path::Path>) -> String {
    let pause = config
        .max_pause_ticks
        .map_or("unbounded".to_string(), |p| p.to_string());
    let safeguard = match file {
        Some(path) => format!("--safeguard-file {}", path.display()),
        None => format!("--safeguard {}", config.safeguard.name()),
    };
    let mut line = format!(
        "leaselab check {safeguard} --callers {} --ttl {} --work {} --max-pause {pause}",
        config.callers, config.ttl_ticks, config.work_ticks
    );
    if config.failovers > 0 {
        line.push_str(&format!(" --failovers {}", config.failovers));
    }
    if config.restarts > 0 {
        line.push_str(&format!(" --restarts {}", config.restarts));
    }
    if config.restarts_from_aof {
        line.push_str(" --restart-from-aof");
    }
    if config.aof_appendfsync != Appendfsync::Everysec {
        line.push_str(&format!(" --appendfsync {}", config.aof_appendfsync.name()));
    }
    if config.evictions > 0 {
        line.push_str(&format!(" --evictions {}", config.evictions));
    }
    if config.initial_balance != 20 {
        line.push_str(&format!(" --balance {}", config.initial_balance));
    }
    if config.amount != 10 {
        line.push_str(&format!(" --amount {}", config.amount));
    }
    if let Some(horizon) = config.horizon_ticks {
        line.push_str(&format!(" --horizon {horizon}"));
    }
    if !config.symmetry {
        line.push_str(" --no-symmetry");
    }
    let faults = config.reply_faults;
    if faults.lost_replies > 0 {
        line.push_str(&format!(" --lost-replies {}", faults.lost_replies));
    }
    if faults.dropped_connections > 0 {
        line.push_str(&format!(
            " --dropped-connections {}",
            faults.dropped_connections
        ));
    }
    if faults.any() && faults.on != FaultsOn::Any {
        line.push_str(&format!(" --reply-faults-on {}", faults.on.name()));
    }
    let nodes = config.node_faults;
    for (flag, n) in [
        ("--node-restarts", nodes.restarts),
        ("--node-delayed-restarts", nodes.delayed_restarts),
        ("--node-clock-jumps", nodes.clock_jumps),
    ] {
        if n > 0 {
            line.push_str(&format!(" {flag} {n}"));
        }
    }
    if nodes.clock_jumps > 0 {
        line.push_str(&format!(" --node-clock-jump {}", nodes.clock_jump_ms));
    }
    if nodes.clock_slews > 0 {
        line.push_str(&format!(
            " --node-clock-slews {} --node-clock-slew {}",
            nodes.clock_slews, nodes.clock_slew_ms
        ));
    }
    if config.redis_drift_percent != 0 {
        line.push_str(&format!(" --redis-drift {:+}%", config.redis_drift_percent));
    }
    let clock = config.redis_clock;
    if clock.jumps > 0 {
        line.push_str(&format!(
            " --redis-clock-jumps {} --redis-clock-jump {}",
            clock.jumps, clock.jump_ms
        ));
    }
    if clock.slews > 0 {
        line.push_str(&format!(
            " --redis-clock-slews {} --redis-clock-slew {}",
            clock.slews, clock.slew_ms
        ));
    }
    if config.partitions > 0 {
        line.push_str(&format!(" --partitions {}", config.partitions));
    }
    let slew_rate_ppm = if clock.slews > 0 {
        Some(clock.slew_rate_ppm)
    } else {
        (nodes.clock_slews > 0).then_some(nodes.slew_rate_ppm)
    };
    if let Some(ppm) = slew_rate_ppm.filter(|&ppm| ppm != NTP_SLEW_RATE_PPM) {
        line.push_str(&format!(" --slew-rate {ppm}ppm"));
    }
    if nodes.drift_percent != 0 {
        line.push_str(&format!(" --node-drift {:+}%", nodes.drift_percent));
    }
    line
}

/// The report as text.
pub fn render(
    config: &CheckConfig,
    report: &CheckReport,
    elapsed: Duration,
    args: &Args,
) -> String {
    let mut out = String::new();
    let timing = match config.max_pause_ticks {
        None => "unbounded pauses (asynchronous model)".to_string(),
        Some(p) => format!(
            "each caller paused at most {} in all (semi-synchronous model)",
            ticks(p)
        ),
    };
    out.push_str(&format!(
        "leaselab check: {}, {} callers {}, TTL {}, work {}\n",
        report.safeguard,
        config.callers,
        if config.safeguard.is_transfer() {
            format!(
                "transferring {} between two wallets of {} each",
                config.amount, config.initial_balance
            )
        } else {
            format!("spending {} from {}", config.amount, config.initial_balance)
        },
        ticks(config.ttl_ticks),
        ticks(config.work_ticks)
    ));
    out.push_str(&format!(
        "timing: {timing}; callers arrive at any time; horizon {}{}{}{}\n",
        ticks(config.horizon()),
        match (config.failovers, config.restarts) {
            (0, 0) => String::new(),
            (k, 0) => format!("; up to {k} failover(s)"),
            (0, r) if config.restarts_from_aof => format!(
                "; up to {r} crash(es) of the machine running Redis, which reloads its \
                 append-only file (appendfsync {})",
                config.aof_appendfsync.name()
            ),
            (0, r) => format!("; up to {r} Redis restart(s) without persistence"),
            (k, r) => format!("; up to {k} failover(s) and {r} Redis restart(s)"),
        },
        match config.evictions {
            0 => String::new(),
            e => format!("; up to {e} eviction(s) of the fence counter"),
        },
        reply_faults_text(config.reply_faults)
    ));
    if config.safeguard.redis_nodes() > 0 {
        let faults = config.node_faults.describe();
        out.push_str(&format!(
            "nodes: {} independent Redis nodes{}\n",
            config.safeguard.redis_nodes(),
            if faults.is_empty() {
                String::new()
            } else {
                format!("; {faults}")
            }
        ));
    }
    let search = match report.strategy {
        Strategy::Bfs => "breadth-first",
        Strategy::Dfs => "depth-first (stateright)",
    };
    let symmetry = if config.symmetry {
        "callers reduced up to symmetry (tokens and sessions renamed)"
    } else {
        "no symmetry reduction"
    };
    out.push_str(&format!(
        "search: {search}, {} thread(s), {symmetry}\n\n",
        report.threads
    ));
    out.push_str(&format!(
        "states generated   {}\n",
        group(report.states_generated)
    ));
    out.push_str(&format!(
        "unique states      {}\n",
        group(report.unique_states)
    ));
    out.push_str(&format!("depth              {}\n", report.max_depth));
    out.push_str(&format!(
        "time               {:.2}s\n",
        elapsed.as_secs_f64()
    ));
    out.push_str(&format!(
        "states per second  {} unique/s ({} generated/s)\n\n",
        group(per_second(report.unique_states, elapsed)),
        group(per_second(report.states_generated, elapsed))
    ));
    let width = report
        .properties
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    for property in &report.properties {
        out.push_str(&format!(
            "{:<width$}  {:<9} {:<9} {}\n",
            property.name,
            property.kind,
            property.verdict.as_str(),
            property.basis
        ));
    }
    if gated_verdict(report, args.gate) == PropertyVerdict::Inconclusive {
        let reason = report
            .reason_over(&args.gate.names(report))
            .unwrap_or_default();
        out.push_str(&format!(
            "\nINCONCLUSIVE: {reason}\nNo verdict was reached: this is not a SAFE result (exit 3).\n"
        ));
    }
    for property in &report.properties {
        if property.verdict != PropertyVerdict::Violated {
            continue;
        }
        out.push_str(&format!(
            "\ncounterexample to \"{}\" ({} steps):\n",
            property.name,
            property.steps.unwrap_or(0)
        ));
        for line in property.trace.iter().chain(&property.outcome) {
            out.push_str(&format!("  {line}\n"));
        }
        if let Some(path) = &property.explorer_path {
            out.push_str(&format!(
                "  step through it: {} --explore, then open http://127.0.0.1:{}/#/steps/{path}\n",
                command_line(config, args.safeguard_file.as_deref()),
                args.port
            ));
        }
    }
    out
}

/// What a restart of the single Redis reloads, as `--json` says it: `nothing`, or the
/// append-only file under its policy (`aof-everysec`, `aof-no`, `aof-always`).
pub fn restart_reloads(config: &CheckConfig) -> &'static str {
    if !config.restarts_from_aof {
        return "nothing";
    }
    match config.aof_appendfsync {
        Appendfsync::Always => "aof-always",
        Appendfsync::Everysec => "aof-everysec",
        Appendfsync::No => "aof-no",
    }
}

/// The JSON form of one check.
#[derive(Serialize)]
struct JsonCheck<'a> {
    safeguard: String,
    callers: u32,
    balance: i64,
    amount: i64,
    ttl_ticks: u64,
    work_ticks: u64,
    max_pause_ticks: Option<u64>,
    failovers: u32,
    restarts: u32,
    /// What a restart reloads: `nothing` (no persistence), or the append-only file under its
    /// `appendfsync` policy (`aof-everysec`, `aof-no`: fsynced at the start and then at
    /// moments the search picks;
    /// `aof-always`: every key).
    restart_reloads: &'static str,
    evictions: u32,
    redis_drift_percent: i32,
    /// Jumps and slews of the single Redis's clock (omitted without any).
    #[serde(skip_serializing_if = "Option::is_none")]
    redis_clock: Option<JsonClock>,
    partitions: u32,
    lost_replies: u32,
    dropped_connections: u32,
    horizon_ticks: u64,
    symmetry: bool,
    elapsed_s: f64,
    unique_states_per_s: u64,
    /// The verdict over the gated properties: SAFE, VIOLATED or INCONCLUSIVE.
    verdict: PropertyVerdict,
    /// Why it is INCONCLUSIVE (none otherwise).
    reason: Option<String>,
    /// Which properties decide the verdict: `all` ("always" ones) or `ledger`.
    gate: &'static str,
    /// The exit code the verdict gives: 0, 1 or 3.
    exit_code: u8,
    /// True when every "always" property was established SAFE (not merely unviolated).
    holds: bool,
    #[serde(flatten)]
    report: &'a CheckReport,
}

impl<'a> JsonCheck<'a> {
    fn new(
        config: &CheckConfig,
        report: &'a CheckReport,
        elapsed: Duration,
        gate: Gate,
    ) -> JsonCheck<'a> {
        let verdict = gated_verdict(report, gate);
        JsonCheck {
            verdict,
            reason: report.reason_over(&gate.names(report)),
            gate: match gate {
                Gate::All => "all",
                Gate::Ledger => "ledger",
            },
            exit_code: gated_status(report, gate).exit_code(),
            safeguard: config.safeguard.name(),
            callers: config.callers,
            balance: config.initial_balance,
            amount: config.amount,
            ttl_ticks: config.ttl_ticks,
            work_ticks: config.work_ticks,
            max_pause_ticks: config.max_pause_ticks,
            failovers: config.failovers,
            restarts: config.restarts,
            restart_reloads: restart_reloads(config),
            evictions: config.evictions,
            redis_drift_percent: config.redis_drift_percent,
            redis_clock: JsonClock::of(config.redis_clock),
            partitions: config.partitions,
            lost_replies: config.reply_faults.lost_replies,
            dropped_connections: config.reply_faults.dropped_connections,
            horizon_ticks: config.horizon(),
            symmetry: config.symmetry,
            elapsed_s: elapsed.as_secs_f64(),
            unique_states_per_s: per_second(report.unique_states, elapsed),
            holds: report.verdict_over(&report.always_names()) == PropertyVerdict::Safe,
            report,
        }
    }
}

/// One suite entry's JSON.
#[derive(Serialize)]
struct JsonSuiteEntry<'a> {
    name: &'a str,
    /// `as expected`, `INCONCLUSIVE` or `UNEXPECTED`.
    outcome: &'static str,
    expected_ledger: PropertyVerdict,
    expected_mutual_exclusion: Option<PropertyVerdict>,
    mismatches: Vec<String>,
    check: JsonCheck<'a>,
}

/// How a suite entry came out: as expected (0), undecided where a verdict was expected (3),
/// or a verdict other than the expected one (1).
fn entry_status(entry: &SuiteEntry, report: &CheckReport) -> Status {
    let mut expected = vec![(LEDGER, entry.ledger)];
    if let Some(me) = entry.mutual_exclusion {
        expected.push((leaselab_checker::MUTUAL_EXCLUSION, me));
    }
    expected
        .into_iter()
        .map(|(name, want)| match report.verdict(name) {
            Some(got) if got == want => Status::Ok,
            Some(PropertyVerdict::Inconclusive) => Status::Inconclusive,
            _ => Status::Violation,
        })
        .fold(Status::Ok, Status::worst)
}

fn outcome_text(status: Status) -> &'static str {
    match status {
        Status::Ok => "as expected",
        Status::Inconclusive => "INCONCLUSIVE",
        Status::Violation => "UNEXPECTED",
    }
}

fn run_suite(name: &str, args: &Args) -> CommandResult {
    let Some(entries) = suite(name) else {
        return Err(UsageError::new(format!(
            "--suite {name}: no such suite; the suites are {}",
            SUITES.join(", ")
        )));
    };
    let options = args.options()?;
    let shard = args.shard.shard;
    let mut results = Vec::new();
    for (position, entry) in entries.iter().enumerate() {
        if !shard.unwrap_or(Shard::WHOLE).owns(position as u64) {
            continue;
        }
        let model = LeaseModel::new(entry.config)?;
        // A suite judges the ledger and mutual exclusion only: once the entry's judged
        // properties have their counterexamples, the rest of the search would decide nothing
        // it reports (a SAFE still needs the whole search).
        let judged: &'static [&'static str] = match entry.mutual_exclusion {
            Some(_) => &[LEDGER, leaselab_checker::MUTUAL_EXCLUSION],
            None => &[LEDGER],
        };
        let options = RunOptions {
            stop_once_found: judged,
            ..options
        };
        let (report, elapsed) = timed_run(&model, options, args.limits())?;
        let mismatches = entry.mismatches(&report);
        let status = entry_status(entry, &report);
        let line = suite_line(entry, &report, elapsed, status, &mismatches);
        if !args.json {
            println!("{line}");
        }
        results.push(SuiteResult {
            position,
            entry,
            report,
            elapsed,
            mismatches,
            status,
            line,
        });
    }
    let statuses: Vec<Status> = results.iter().map(|r| r.status).collect();
    match (args.json, shard) {
        (true, None) => {
            let json: Vec<JsonSuiteEntry> = results.iter().map(|r| r.json(args.gate)).collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&json).expect("reports serialise")
            );
        }
        (true, Some(shard)) => {
            let json = JsonSuiteShard {
                command: "check-suite",
                shard: shard.text(),
                parameters: suite_parameters(name, args),
                entries: results
                    .iter()
                    .map(|r| JsonSuiteShardEntry {
                        position: r.position,
                        status_code: r.status.exit_code(),
                        line: r.line.clone(),
                        entry: r.json(args.gate),
                    })
                    .collect(),
            };
            println!(
                "{}",
                serde_json::to_string_pretty(&json).expect("reports serialise")
            );
        }
        (false, _) => println!("{}", suite_summary_line(&statuses, shard)),
    }
    Ok(statuses.into_iter().fold(Status::Ok, Status::worst))
}

/// One check of a suite, run.
struct SuiteResult<'a> {
    position: usize,
    entry: &'a SuiteEntry,
    report: CheckReport,
    elapsed: Duration,
    mismatches: Vec<String>,
    status: Status,
    line: String,
}

impl SuiteResult<'_> {
    fn json(&self, gate: Gate) -> JsonSuiteEntry<'_> {
        JsonSuiteEntry {
            name: &self.entry.name,
            outcome: outcome_text(self.status),
            expected_ledger: self.entry.ledger,
            expected_mutual_exclusion: self.entry.mutual_exclusion,
            mismatches: self.mismatches.clone(),
            check: JsonCheck::new(&self.entry.config, &self.report, self.elapsed, gate),
        }
    }
}

/// A suite check's line of text.
fn suite_line(
    entry: &SuiteEntry,
    report: &CheckReport,
    elapsed: Duration,
    status: Status,
    mismatches: &[String],
) -> String {
    let detail = match status {
        Status::Ok => String::new(),
        Status::Inconclusive => format!(
            ": {}",
            report
                .reason_over(&[LEDGER, leaselab_checker::MUTUAL_EXCLUSION])
                .unwrap_or_default()
        ),
        Status::Violation => format!(": {}", mismatches.join("; ")),
    };
    format!(
        "{:<55} ledger {:<12} {:>12} states {:>7.2}s {}{detail}",
        entry.name,
        report.verdict(LEDGER).map_or("-", PropertyVerdict::as_str),
        group(report.unique_states),
        elapsed.as_secs_f64(),
        outcome_text(status),
    )
}

/// `5 of 7 checks as expected, 1 inconclusive, 1 unexpected`.
fn suite_summary_line(statuses: &[Status], shard: Option<Shard>) -> String {
    let count = |wanted: Status| statuses.iter().filter(|s| **s == wanted).count();
    let shard = shard.map_or(String::new(), |shard| format!(" (shard {})", shard.text()));
    format!(
        "{} of {} checks as expected, {} inconclusive, {} unexpected{shard}",
        count(Status::Ok),
        statuses.len(),
        count(Status::Inconclusive),
        count(Status::Violation)
    )
}

/// What the shards of one suite run must agree on.
fn suite_parameters(name: &str, args: &Args) -> serde_json::Value {
    serde_json::json!({
        "suite": name,
        "gate": match args.gate { Gate::All => "all", Gate::Ledger => "ledger" },
        "dfs": args.dfs,
        "symmetry": !args.no_symmetry,
        "max_states": args.search.max_states,
    })
}

/// A shard of a suite, as `--shard K/N --json` prints it.
#[derive(Serialize)]
struct JsonSuiteShard<'a> {
    command: &'static str,
    shard: String,
    parameters: serde_json::Value,
    entries: Vec<JsonSuiteShardEntry<'a>>,
}

/// One check of a shard: where it is in the suite, its exit code, its line, its JSON.
#[derive(Serialize)]
struct JsonSuiteShardEntry<'a> {
    position: usize,
    status_code: u8,
    line: String,
    entry: JsonSuiteEntry<'a>,
}

/// `leaselab merge` of `check --suite NAME --shard K/N --json` outputs: every check of the
/// suite once, in the suite's order, printed as `check --suite NAME` prints them.
pub fn merge_suite(files: &[ShardFile], json: bool) -> CommandResult {
    same_fields(files, &["parameters"])?;
    let first = &files[0];
    let name = first
        .field("parameters")?
        .get("suite")
        .and_then(serde_json::Value::as_str);
    let Some(count) = name.and_then(suite).map(|entries| entries.len()) else {
        return Err(first.error("field 'parameters' names no known suite"));
    };
    let mut by_position: Vec<Option<(Status, String, serde_json::Value)>> = vec![None; count];
    for file in files {
        for (index, entry) in file.array_field("entries")?.iter().enumerate() {
            let position = entry.get("position").and_then(serde_json::Value::as_u64);
            let status = match entry.get("status_code").and_then(serde_json::Value::as_u64) {
                Some(0) => Some(Status::Ok),
                Some(1) => Some(Status::Violation),
                Some(3) => Some(Status::Inconclusive),
                _ => None,
            };
            let line = entry.get("line").and_then(serde_json::Value::as_str);
            let (Some(position), Some(status), Some(line), Some(body)) =
                (position, status, line, entry.get("entry"))
            else {
                return Err(file.error(format!(
                    "field 'entries' item {index} lacks 'position', 'status_code', 'line' or 'entry'"
                )));
            };
            if position >= count as u64 || !file.shard.owns(position) {
                return Err(file.error(format!(
                    "field 'entries' item {index} is check {position}, not one of shard {}'s",
                    file.shard.text()
                )));
            }
            let slot = &mut by_position[position as usize];
            if slot.is_some() {
                return Err(file.error(format!("check {position} is listed twice")));
            }
            *slot = Some((status, line.to_string(), body.clone()));
        }
    }
    let missing: Vec<String> = by_position
        .iter()
        .enumerate()
        .filter(|(_, slot)| slot.is_none())
        .map(|(position, _)| position.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(UsageError::new(format!(
            "merge: the shards lack check(s) {} of the suite's {count}: a shard did not finish",
            missing.join(", ")
        )));
    }
    let results: Vec<(Status, String, serde_json::Value)> =
        by_position.into_iter().flatten().collect();
    let statuses: Vec<Status> = results.iter().map(|(status, _, _)| *status).collect();
    if json {
        let entries: Vec<&serde_json::Value> = results.iter().map(|(_, _, body)| body).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&entries).expect("reports serialise")
        );
    } else {
        for (_, line, _) in &results {
            println!("{line}");
        }
        println!("{}", suite_summary_line(&statuses, None));
    }
    Ok(statuses.into_iter().fold(Status::Ok, Status::worst))
}

fn explore(config: CheckConfig, port: u16, file: Option<&std::path::Path>) -> CommandResult {
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    // Fail with a clear message rather than a panic inside the server when the port is taken.
    drop(std::net::TcpListener::bind(address).map_err(|e| {
        UsageError::new(format!(
            "--port {port}: cannot listen on {address}: {e}; pick a free port with --port"
        ))
    })?);
    let model = LeaseModel::new(config)?;
    eprintln!(
        "Explorer for {} on http://{address} (loopback only; Ctrl-C to stop)",
        command_line(&config, file)
    );
    let _ = model.checker().serve(address);
    Ok(Status::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: Args,
    }

    /// Parses `check <line>`; tests keep no traces unless they ask for a directory.
    fn args(line: &str) -> Args {
        let keep = line.contains("--save-traces") || line.contains("--no-save-traces");
        let extra = if keep { None } else { Some("--no-save-traces") };
        Wrapper::try_parse_from(
            std::iter::once("check")
                .chain(line.split_whitespace())
                .chain(extra),
        )
        .expect("parses")
        .args
    }

    #[test]
    fn ticks_are_bare_numbers_or_milliseconds() {
        assert_eq!(parse_ticks("3"), Ok(3));
        assert_eq!(parse_ticks("3ms"), Ok(3));
        assert_eq!(parse_ticks("1s"), Ok(1_000));
        assert!(parse_ticks("soon").unwrap_err().contains("ticks"));
        assert_eq!(parse_pause("unbounded"), Ok(Pause(None)));
        assert_eq!(parse_pause("2"), Ok(Pause(Some(2))));
        assert!(parse_pause("-1").is_err());
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1_000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
    }

    #[test]
    fn the_ledger_gate_ignores_mutual_exclusion() {
        let all = execute(args(
            "--safeguard fenced-cas --ttl 1 --work 1 --horizon 5 --no-save-traces",
        ))
        .unwrap();
        assert_eq!(
            all,
            Status::Violation,
            "mutual exclusion is broken by design"
        );
        let ledger = execute(args(
            "--safeguard fenced-cas --ttl 1 --work 1 --horizon 5 --gate ledger --no-save-traces",
        ))
        .unwrap();
        assert_eq!(ledger, Status::Ok, "the ledger holds");
        let broken = execute(args(
            "--safeguard fenced --ttl 1 --work 1 --horizon 5 --gate ledger --no-save-traces",
        ))
        .unwrap();
        assert_eq!(broken, Status::Violation);
    }

    #[test]
    fn exit_status_follows_the_always_properties() {
        let broken = execute(args("--safeguard no-lock --horizon 3")).unwrap();
        assert_eq!(broken, Status::Violation);
        let safe = execute(args("--safeguard pg-debit --callers 2 --ttl 1 --work 1")).unwrap();
        assert_eq!(safe, Status::Ok);
    }

    #[test]
    fn bad_input_says_what_and_how_to_fix_it() {
        let error = execute(args("--safeguard lease --callers 0")).unwrap_err();
        assert!(error.message.contains("--callers 0"), "{}", error.message);
        let error = execute(args("--safeguard lease --ttl 0")).unwrap_err();
        assert!(error.message.contains("--ttl 0"), "{}", error.message);
        let error = execute(args("--callers 2")).unwrap_err();
        assert!(error.message.contains("--safeguard"), "{}", error.message);
        let error = execute(args("--suite weekly")).unwrap_err();
        assert!(
            error.message.contains("smoke, nightly"),
            "{}",
            error.message
        );
        let error = execute(args("--safeguard lease --threads 0")).unwrap_err();
        assert!(error.message.contains("--threads 0"), "{}", error.message);
    }

    #[test]
    fn sizes_take_units_and_are_at_least_16_mib() {
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(parse_bytes("2g"), Ok(2 << 30));
        assert!(parse_bytes("1KiB").unwrap_err().contains("16MiB"));
        assert!(parse_bytes("lots").unwrap_err().contains("not a size"));
        assert!(
            parse_bytes("99999999999TiB").is_err(),
            "overflow is refused"
        );
    }

    #[test]
    fn a_vacuous_bound_is_inconclusive_with_exit_3_in_text_and_json() {
        let line = "--safeguard pg-for-update --horizon 1";
        assert_eq!(execute(args(line)).unwrap(), Status::Inconclusive);
        let config = args(line).config().unwrap();
        let model = LeaseModel::new(config).unwrap();
        let report = run(&model, RunOptions::default(), &Counters::default());
        let text = render(&config, &report, Duration::from_millis(1), &args(line));
        assert!(text.contains("INCONCLUSIVE: vacuous"), "{text}");
        assert!(text.contains("not a SAFE result"), "{text}");
        let json = serde_json::to_value(JsonCheck::new(
            &config,
            &report,
            Duration::from_secs(1),
            Gate::All,
        ))
        .unwrap();
        assert_eq!(json["verdict"], "INCONCLUSIVE");
        assert_eq!(json["exit_code"], 3);
        assert_eq!(json["holds"], false, "an undecided check does not hold");
        assert!(json["reason"].as_str().unwrap().contains("vacuous"));
        assert_eq!(json["properties"][0]["verdict"], "INCONCLUSIVE");
    }

    #[test]
    fn a_violation_outranks_an_undecided_property_and_the_gate_picks_which_count() {
        // Mutual exclusion breaks in 6 steps; the ledger needs far more than 2,000 states.
        let line = "--safeguard fenced-cas --callers 3 --ttl 1 --horizon 6 --max-states 2000";
        assert_eq!(execute(args(line)).unwrap(), Status::Violation);
        let ledger = format!("{line} --gate ledger");
        assert_eq!(execute(args(&ledger)).unwrap(), Status::Inconclusive);
    }

    #[test]
    fn a_suite_entry_cut_short_is_inconclusive_and_a_wrong_verdict_unexpected() {
        let entries = suite("smoke").unwrap();
        let entry = entries
            .iter()
            .find(|e| e.ledger == PropertyVerdict::Safe && e.mutual_exclusion.is_none())
            .expect("a postgres entry");
        let model = LeaseModel::new(entry.config).unwrap();
        let short = run(
            &model,
            RunOptions {
                max_unique: Some(5),
                ..RunOptions::default()
            },
            &Counters::default(),
        );
        assert_eq!(entry_status(entry, &short), Status::Inconclusive);
        let full = run(&model, RunOptions::default(), &Counters::default());
        assert_eq!(entry_status(entry, &full), Status::Ok);
        let broken = suite("smoke")
            .unwrap()
            .into_iter()
            .find(|e| e.ledger == PropertyVerdict::Violated)
            .unwrap();
        // The Safe entry's expectations against a broken safeguard's report: unexpected.
        let report = run(
            &LeaseModel::new(broken.config).unwrap(),
            RunOptions::default(),
            &Counters::default(),
        );
        assert_eq!(entry_status(entry, &report), Status::Violation);
    }

    #[test]
    fn the_report_names_the_bound_and_numbers_the_steps() {
        let config = args("--safeguard no-lock --horizon 3").config().unwrap();
        let model = LeaseModel::new(config).unwrap();
        let report = run(&model, RunOptions::default(), &Counters::default());
        let text = render(
            &config,
            &report,
            Duration::from_millis(10),
            &args("--safeguard no-lock"),
        );
        assert!(text.contains("unique states"), "{text}");
        assert!(
            text.contains("ledger holds           always    VIOLATED"),
            "{text}"
        );
        assert!(text.contains("  1. caller 1 reads balance 20"), "{text}");
        let json = serde_json::to_value(JsonCheck::new(
            &config,
            &report,
            Duration::from_secs(1),
            Gate::All,
        ))
        .unwrap();
        assert_eq!(json["holds"], false);
        assert_eq!(json["properties"][0]["verdict"], "VIOLATED");
    }
}
