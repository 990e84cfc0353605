//! `leaselab run`: run one scenario on the simulated network, for one seed or many.
//!
//! ```text
//! leaselab run step5-fencing
//! leaselab run step6-verify --ttl 1ms --same-version --runs 100
//! leaselab run step2-lock --pause 1:after-acquire:3s --partition app-2:redis:10ms:500ms
//! ```
//!
//! Fault syntax (times count from the callers' release):
//! - `--pause CALLER:POINT:DURATION`, e.g. `1:after-read:250ms` or `app-1:after-read:250ms`;
//!   points: `after-acquire`, `after-read`, `before-write`, `before-release`;
//! - `--partition A:B:FROM:UNTIL[:one-way]`, e.g. `app-1:redis:50ms:400ms`; hosts `app-N`,
//!   `redis`, `postgres`, `redis-replica` (the replication link); `one-way` cuts only A → B;
//! - `--failover-at DURATION`, `--restart-at DURATION` (no persistence);
//! - `--crash-at DURATION [--appendfsync always|everysec|no]`: the machine running Redis
//!   crashes and Redis reloads its append-only file (`--appendfsync` also changes the crash of
//!   a preset such as `aof-crash`);
//! - `--evict-fence-at DURATION`: an `allkeys-*` eviction of the fence counter;
//! - `--clock-jump HOST:AT:BY`, e.g. `redis:50ms:+1s` or `redis:50ms:-200ms`;
//! - `--clock-drift HOST:RATE`, e.g. `redis:+2%` or `redis:-500ppm` (from the release on);
//! - `--clock-slew HOST:AT:BY:RATE`, e.g. `redis:20ms:+3s:500ppm`: the offset BY applied
//!   gradually from AT at RATE, as NTP slews.
//!
//! Real mode: with `--redis URL` and/or `--postgres URL` the same safeguard machines run
//! against the real servers over real TCP, with real sleeps (see `leaselab_sim::real`):
//!
//! ```text
//! leaselab run step5-fencing --redis redis://127.0.0.1:6379 --postgres postgres://postgres@127.0.0.1/test
//! ```
//!
//! GC pauses run for real; scenarios with faults that need the simulator are refused.

use std::io::IsTerminal as _;

pub mod batch;

/// Prints a line on stdout, ignoring a reader that went away (`| head`): the exit code still
/// tells the verdict.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
pub(crate) use out;

use clap::Args as ClapArgs;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use leaselab_model::fault::{Fault, Host};
use leaselab_model::redis::aof::Appendfsync;
use leaselab_model::safeguard::{Outcome, Point, Safeguard};
use leaselab_model::scenario::{Scenario, TimingPreset, Variant, SAFETY_SCENARIOS, TUTORIAL_STEPS};
use leaselab_model::world::FaultsOn;
use leaselab_sim::events::render;
use leaselab_sim::faults::{fault_scenario, FAULT_SCENARIOS};
use leaselab_sim::real::RealConfig;
use leaselab_sim::run::{time_limit_ms, RunReport, RunVerdict, SimConfig, MAX_TIME_LIMIT_MS};

use self::batch::{
    for_each_run, Runner, SeedList, Seeds, Spread, SpreadParts, ThreadsArgs, TraceSaver,
};
use super::duration::{format_ms, parse_latency_us, parse_ms, parse_timing};
use super::merge::{same_fields, ShardFile};
use crate::exit::{CommandResult, Status, UsageError};
use crate::shard::{Shard, ShardArgs};

/// Run a scenario on the simulated network and check the ledger.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The scenario: step1-race, step2-lock, step3-ttl, step4-redislock, step5-fencing,
    /// step6-verify, failover-fencing, partition-watchdog, aof-crash, evict-fence,
    /// wait-failover, wait-lag, wait-replica-restart, transfer-ordered, transfer-unordered,
    /// rmw-read-committed, rmw-repeatable-read, rmw-serializable, redlock-restart,
    /// redlock-clock-jump, redlock-delayed-restart or redlock-pause.
    pub scenario: String,
    /// step3-ttl: refresh the lease every TTL/3.
    #[arg(long)]
    pub watchdog: bool,
    /// step4-redislock: full jitter on every backoff.
    #[arg(long)]
    pub jitter: bool,
    /// step5-fencing, failover-fencing, aof-crash, evict-fence: write without checking the
    /// fencing token.
    #[arg(long)]
    pub unfenced: bool,
    /// step6-verify: also require the fence read to be unchanged (check-and-set).
    #[arg(long)]
    pub same_version: bool,
    /// How many callers, one host each.
    #[arg(long)]
    pub callers: Option<u32>,
    /// The lease TTL, e.g. 1ms, 100ms, 2s.
    #[arg(long, value_parser = parse_duration)]
    pub ttl: Option<u64>,
    /// How long the work between read and write takes.
    #[arg(long, value_parser = parse_duration)]
    pub work: Option<u64>,
    /// Give up acquiring the lock after this long.
    #[arg(long, value_parser = parse_duration)]
    pub acquire_timeout: Option<u64>,
    /// Use another safeguard (e.g. lease, lease-watchdog, fenced, fenced-cas, pg-debit).
    #[arg(long, conflicts_with = "safeguard_file")]
    pub safeguard: Option<String>,
    /// Use your own safeguard, described in a TOML file (see README "Your own safeguard").
    #[arg(long, value_name = "FILE")]
    pub safeguard_file: Option<std::path::PathBuf>,
    /// The initial balance.
    #[arg(long)]
    pub balance: Option<i64>,
    /// How far the Redis replica lags behind the primary.
    #[arg(long, value_parser = parse_duration)]
    pub replication_lag: Option<u64>,
    /// PostgreSQL's deadlock_timeout: a statement waiting for a row lock looks for a deadlock
    /// once, this long after it started waiting, and fails with 40P01 if it is in one
    /// (default 1s, as PostgreSQL; 1ms to 600s).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub deadlock_timeout: Option<u64>,
    /// The simulated network's one-way latency per message, µs: N, or MIN-MAX drawn per
    /// message (e.g. 0-100; default: the scenario's, 100-500). Real mode has its own network.
    #[arg(long, value_parser = parse_latency_us, value_name = "US|MIN-MAX", conflicts_with_all = ["redis", "postgres", "redis_node_urls"])]
    pub latency_us: Option<(u64, u64)>,
    /// The simulation's timing model: `localhost` (the default: a 100 µs tick, 100-200 µs one
    /// way, with the client CPU, timer and PostgreSQL costs measured on localhost servers;
    /// docs/real-mode.md) or `tick-1ms` (a 1 ms tick, PostgreSQL answering at once, 100-500 µs
    /// one way; the default before 4 Dec 2026). `--latency-us` overrides its latency. A trace records it. Not with
    /// real servers, whose timing is the machine's.
    #[arg(long, value_parser = parse_timing, value_name = "NAME", conflicts_with_all = ["redis", "postgres", "redis_node_urls"])]
    pub timing: Option<TimingPreset>,
    /// Drop the preset's faults (e.g. step5's pause) before adding the ones given here.
    #[arg(long)]
    pub no_faults: bool,
    /// A GC pause: CALLER:POINT:DURATION, e.g. 1:after-read:250ms (repeatable).
    #[arg(long = "pause", value_name = "CALLER:POINT:DURATION")]
    pub pauses: Vec<String>,
    /// The Redis primary dies at this time; the replica is promoted.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub failover_at: Option<u64>,
    /// Redis restarts without persistence at this time.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub restart_at: Option<u64>,
    /// The Redis replica restarts without persistence at this time: it is empty until its
    /// full resync loads, the replication lag later.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub replica_restart_at: Option<u64>,
    /// The machine running Redis crashes at this time; Redis reloads its append-only file
    /// (what was not fsynced is lost, see --appendfsync).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub crash_at: Option<u64>,
    /// When the append-only file is fsynced, for every crash of the run: always (before each
    /// reply), everysec (once a second, the default), no (the kernel's write-back, ~30s).
    #[arg(long, value_parser = parse_appendfsync, value_name = "always|everysec|no")]
    pub appendfsync: Option<Appendfsync>,
    /// An allkeys-* maxmemory policy evicts the fence counter at this time.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub evict_fence_at: Option<u64>,
    /// A partition: A:B:FROM:UNTIL[:one-way], e.g. app-1:redis:50ms:400ms (repeatable).
    #[arg(long = "partition", value_name = "A:B:FROM:UNTIL[:one-way]")]
    pub partitions: Vec<String>,
    /// A clock jump of a Redis server: HOST:AT:BY, e.g. redis:50ms:+1s, or a Redlock node's,
    /// redis-2:150ms:+1s (repeatable).
    #[arg(long = "clock-jump", value_name = "HOST:AT:BY")]
    pub clock_jumps: Vec<String>,
    /// A Redis server's clock runs at the wrong rate from the release on: HOST:RATE, e.g.
    /// redis:+2% or redis:-500ppm (at most 50%).
    #[arg(long = "clock-drift", value_name = "HOST:RATE")]
    pub clock_drifts: Vec<String>,
    /// A Redis server's clock is corrected gradually (NTP's slew): HOST:AT:BY:RATE, e.g.
    /// redis:20ms:+3s:500ppm (repeatable).
    #[arg(long = "clock-slew", value_name = "HOST:AT:BY:RATE")]
    pub clock_slews: Vec<String>,
    /// The reply to a caller's first Redis request of a stage is lost (the request ran; the
    /// caller waits out its read timeout): CALLER:acquire|release|any, e.g. 1:release
    /// (repeatable).
    #[arg(long = "lose-reply", value_name = "CALLER:ON")]
    pub lost_replies: Vec<String>,
    /// A caller's connection drops with the reply to its first Redis request of a stage in
    /// flight (the request ran; the client sends it again, as go-redis retries):
    /// CALLER:acquire|release|any, e.g. 1:acquire (repeatable).
    #[arg(long = "drop-connection", value_name = "CALLER:ON")]
    pub dropped_connections: Vec<String>,
    /// Redlock's independent Redis nodes (odd, 3 to 9; redlock and redlock-cas only; a
    /// redlock preset keeps its own count, 3, unless this is given).
    #[arg(long, value_name = "N")]
    pub redis_nodes: Option<u8>,
    /// A Redlock node loses its keys: NODE:AT restarts it at once without persistence,
    /// NODE:AT:DOWN keeps it down that long first (a delayed restart), e.g. redis-2:150ms or
    /// redis-2:150ms:1100ms (repeatable).
    #[arg(long = "node-restart", value_name = "NODE:AT[:DOWN]")]
    pub node_restarts: Vec<String>,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many runs, with seeds seed, seed+1, ... (never past 18446744073709551615).
    #[arg(long, default_value_t = 1)]
    pub runs: u64,
    /// Run only shard K of N of the seeds (always printed as a summary; `leaselab merge`
    /// combines the shards' `--json` outputs into the summary of all the runs).
    #[command(flatten)]
    pub shard: ShardArgs,
    /// How many simulated runs side by side.
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Stop each run this long after the callers' release (simulated time; at most 60m). By
    /// default, as long as the scenario's callers can take (work, pauses, start offsets,
    /// acquire and request timeouts), at least 2m: a run still unfinished then is
    /// INCONCLUSIVE (exit 3).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub time_limit: Option<u64>,
    /// Print JSON: the full report of one run, or a summary of many.
    #[arg(long)]
    pub json: bool,
    /// Print the event log of a single run.
    #[arg(long)]
    pub events: bool,
    /// Where BROKEN runs are saved as traces.
    #[command(flatten)]
    pub traces: crate::trace::SaveArgs,
    /// Save every BROKEN run as a trace, not only the first.
    #[arg(long, conflicts_with = "no_save_traces")]
    pub save_all_traces: bool,
    /// Save OK runs as traces too (with --save-all-traces every one, else the first): evidence
    /// that a safeguard held under a fault, replayed like a failure.
    #[arg(long, conflicts_with = "no_save_traces")]
    pub save_ok_traces: bool,
    /// Shrink the first BROKEN run and save the smallest failing trace too.
    #[arg(long)]
    pub shrink: bool,
    /// Run against this real Redis (e.g. redis://127.0.0.1:6379) instead of the simulation.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// Run against this real PostgreSQL (e.g. postgres://postgres@127.0.0.1/test) instead of
    /// the simulation.
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// Real mode, Redlock: node n's own Redis server, given once per node in order (e.g.
    /// --redis-node-url redis://127.0.0.1:6380 --redis-node-url redis://127.0.0.1:6381 ...).
    /// Without it node n is database n of the --redis server.
    #[arg(long = "redis-node-url", value_name = "URL")]
    pub redis_node_urls: Vec<String>,
}

/// A duration flag: `1ms`, `250ms`, `2s`, ... or a bare `0` (zero needs no unit), so that
/// `--ttl 0` reaches the safeguard's own check ("TTL must be at least 1ms").
pub fn parse_duration(text: &str) -> Result<u64, String> {
    if text.trim() == "0" {
        Ok(0)
    } else {
        parse_ms(text)
    }
}

/// `always`, `everysec` or `no`, as in `redis.conf`.
pub fn parse_appendfsync(text: &str) -> Result<Appendfsync, String> {
    Appendfsync::parse(text).ok_or_else(|| {
        format!("'{text}' is not an appendfsync policy; expected always, everysec or no")
    })
}

/// Builds a preset by name with the tutorial's switches.
pub fn preset(name: &str, variant: Variant) -> Result<Scenario, UsageError> {
    if FAULT_SCENARIOS.contains(&name) {
        return Ok(fault_scenario(name, variant.unfenced)?);
    }
    if SAFETY_SCENARIOS.contains(&name) {
        return Ok(Scenario::safety(name)?);
    }
    if !TUTORIAL_STEPS.contains(&name) {
        return Err(UsageError::new(format!(
            "unknown scenario '{name}'; choose one of: {}, {}, {}",
            TUTORIAL_STEPS.join(", "),
            FAULT_SCENARIOS.join(", "),
            SAFETY_SCENARIOS.join(", ")
        )));
    }
    Ok(Scenario::tutorial(name, variant)?)
}

impl Args {
    /// The scenario these arguments describe, checked before anything runs.
    pub fn scenario(&self) -> Result<Scenario, UsageError> {
        let variant = Variant {
            watchdog: self.watchdog,
            jitter: self.jitter,
            unfenced: self.unfenced,
            same_version: self.same_version,
        };
        for (on, flag, applies) in [
            (self.watchdog, "--watchdog", &["step3-ttl"][..]),
            (self.jitter, "--jitter", &["step4-redislock"][..]),
            (
                self.unfenced,
                "--unfenced",
                &[
                    "step5-fencing",
                    "failover-fencing",
                    "aof-crash",
                    "evict-fence",
                ][..],
            ),
            (self.same_version, "--same-version", &["step6-verify"][..]),
        ] {
            if on && !applies.contains(&self.scenario.as_str()) {
                return Err(UsageError::new(format!(
                    "{flag} applies to {} only; use --safeguard to pick a safeguard for {}",
                    applies.join(" and "),
                    self.scenario
                )));
            }
        }
        let mut scenario = preset(&self.scenario, variant)?;
        let mut changed = Vec::new();
        if let Some(callers) = self.callers {
            scenario.callers = callers;
            changed.push(format!("--callers {callers}"));
        }
        if let Some(ttl) = self.ttl {
            scenario.params.ttl_ms = ttl;
            changed.push(format!("--ttl {}", format_ms(ttl)));
        }
        if let Some(work) = self.work {
            scenario.params.work_ms = work;
            changed.push(format!("--work {}", format_ms(work)));
        }
        if let Some(timeout) = self.acquire_timeout {
            scenario.params.acquire_timeout_ms = Some(timeout);
            changed.push(format!("--acquire-timeout {}", format_ms(timeout)));
        }
        if let Some(name) = &self.safeguard {
            let preset_nodes = scenario.safeguard.redis_nodes();
            scenario.safeguard = Safeguard::parse(name)?;
            // A Redlock preset's faults name its nodes: another Redlock keeps their count.
            if preset_nodes > 0 {
                scenario.safeguard = scenario.safeguard.with_redis_nodes(preset_nodes);
            }
            changed.push(format!("--safeguard {name}"));
        }
        if let Some(nodes) = self.redis_nodes {
            scenario.safeguard = super::nodes::NodeArgs {
                redis_nodes: Some(nodes),
                ..Default::default()
            }
            .apply(scenario.safeguard, self.safeguard.as_deref())?;
            changed.push(format!("--redis-nodes {nodes}"));
        }
        if let Some(path) = &self.safeguard_file {
            scenario.safeguard = super::safeguard_file::load(path)?;
            changed.push(format!("--safeguard-file {}", path.display()));
        }
        if let Some(balance) = self.balance {
            scenario.initial_balance = balance;
            changed.push(format!("--balance {balance}"));
        }
        if let Some(lag) = self.replication_lag {
            scenario.network.replication_lag_ms = lag;
            changed.push(format!("--replication-lag {}", format_ms(lag)));
        }
        if let Some(timeout) = self.deadlock_timeout {
            scenario.deadlock_timeout_ms = timeout;
            changed.push(format!("--deadlock-timeout {}", format_ms(timeout)));
        }
        if let Some(preset) = self.timing {
            preset.apply(&mut scenario);
            changed.push(format!("--timing {}", preset.timing.name()));
        }
        if let Some((min_us, max_us)) = self.latency_us {
            scenario.network.latency_min_us = min_us;
            scenario.network.latency_max_us = max_us;
            changed.push(if min_us == max_us {
                format!("--latency-us {min_us}")
            } else {
                format!("--latency-us {min_us}-{max_us}")
            });
        }
        if self.no_faults {
            scenario.faults.clear();
            changed.push("--no-faults".into());
        }
        for text in &self.pauses {
            scenario.faults.push(parse_pause(text)?);
            changed.push(format!("--pause {text}"));
        }
        if let Some(at_ms) = self.failover_at {
            scenario.faults.push(Fault::Failover { at_ms });
            changed.push(format!("--failover-at {}", format_ms(at_ms)));
        }
        if let Some(at_ms) = self.restart_at {
            scenario.faults.push(Fault::RedisRestart { at_ms });
            changed.push(format!("--restart-at {}", format_ms(at_ms)));
        }
        if let Some(at_ms) = self.replica_restart_at {
            scenario.faults.push(Fault::ReplicaRestart { at_ms });
            changed.push(format!("--replica-restart-at {}", format_ms(at_ms)));
        }
        if let Some(at_ms) = self.crash_at {
            scenario.faults.push(Fault::RedisCrashAof {
                at_ms,
                appendfsync: self.appendfsync.unwrap_or(Appendfsync::Everysec),
            });
            changed.push(format!("--crash-at {}", format_ms(at_ms)));
        }
        if let Some(mode) = self.appendfsync {
            let mut crashes = 0;
            for fault in &mut scenario.faults {
                if let Fault::RedisCrashAof { appendfsync, .. } = fault {
                    *appendfsync = mode;
                    crashes += 1;
                }
            }
            if crashes == 0 {
                return Err(UsageError::new(format!(
                    "--appendfsync {}: the scenario has no crash to reload an append-only file \
                     after; add --crash-at DURATION",
                    mode.name()
                )));
            }
            changed.push(format!("--appendfsync {}", mode.name()));
        }
        if let Some(at_ms) = self.evict_fence_at {
            scenario.faults.push(Fault::EvictFenceCounter { at_ms });
            changed.push(format!("--evict-fence-at {}", format_ms(at_ms)));
        }
        for text in &self.partitions {
            scenario.faults.push(parse_partition(text)?);
            changed.push(format!("--partition {text}"));
        }
        for text in &self.lost_replies {
            let (caller, on) = parse_reply_fault("--lose-reply", text)?;
            scenario.faults.push(Fault::LostReply { caller, on });
            changed.push(format!("--lose-reply {text}"));
        }
        for text in &self.dropped_connections {
            let (caller, on) = parse_reply_fault("--drop-connection", text)?;
            scenario
                .faults
                .push(Fault::DroppedConnection { caller, on });
            changed.push(format!("--drop-connection {text}"));
        }
        for text in &self.clock_jumps {
            scenario.faults.push(parse_clock_jump(text)?);
            changed.push(format!("--clock-jump {text}"));
        }
        for text in &self.clock_drifts {
            scenario.faults.push(parse_clock_drift(text)?);
            changed.push(format!("--clock-drift {text}"));
        }
        for text in &self.clock_slews {
            scenario.faults.push(parse_clock_slew(text)?);
            changed.push(format!("--clock-slew {text}"));
        }
        for text in &self.node_restarts {
            scenario.faults.push(parse_node_restart(text)?);
            changed.push(format!("--node-restart {text}"));
        }
        if !changed.is_empty() {
            scenario.name = format!("{} {}", scenario.name, changed.join(" "));
        }
        match self.real() {
            Some(config) => {
                leaselab_sim::real::validate(&scenario, &config).map_err(real_error)?;
                if self.shrink {
                    return Err(UsageError::new(
                        "--shrink replays runs in the simulation; a real run cannot be replayed \
                         (drop --shrink, or run without --redis/--postgres)",
                    ));
                }
            }
            None => leaselab_sim::run::validate(&scenario)?,
        }
        Seeds::new(self.seed, self.runs)?;
        if let Some(limit) = self.time_limit {
            if limit == 0 || limit > MAX_TIME_LIMIT_MS {
                return Err(UsageError::new(format!(
                    "--time-limit {}: a run's time limit must be between 1ms and {} of \
                        simulated time",
                    format_ms(limit),
                    max_time_limit()
                )));
            }
        }
        if self.events && self.runs > 1 {
            return Err(UsageError::new(
                "--events prints the log of one run; drop --runs or pick a --seed",
            ));
        }
        Ok(scenario)
    }
}

impl Args {
    /// The real servers to run against, when `--redis` or `--postgres` is given.
    pub fn real(&self) -> Option<RealConfig> {
        (self.redis.is_some() || self.postgres.is_some() || !self.redis_node_urls.is_empty()).then(
            || RealConfig {
                redis_node_urls: self.redis_node_urls.clone(),
                ..RealConfig::new(self.redis.clone(), self.postgres.clone())
            },
        )
    }

    /// Where the runs run, with their time limit: `--time-limit`, or what the scenario needs
    /// ([`time_limit_ms`]).
    pub fn runner(&self, scenario: &Scenario) -> Result<Runner, UsageError> {
        let mut sim = SimConfig::for_scenario(scenario);
        if let Some(limit) = self.time_limit {
            sim.horizon_ms = limit;
        }
        let threads = self.threads.threads()?;
        Ok(match self.real() {
            Some(mut config) => {
                config.horizon_ms = sim.horizon_ms;
                Runner::Real(config)
            }
            None => Runner::Sim {
                config: sim,
                threads,
            },
        })
    }
}

/// The most simulated time a run may take, as typed on the command line: `60m`.
pub fn max_time_limit() -> String {
    format!("{}m", MAX_TIME_LIMIT_MS / 60_000)
}

/// The line saying why a run has no verdict (or, unfinished, why it is BROKEN all the same),
/// and what to do.
pub fn inconclusive_note(report: &RunReport, explicit_limit: bool) -> String {
    if report.untested() {
        format!("INCONCLUSIVE: {}", untested_note(report))
    } else {
        unfinished_note(report, explicit_limit)
    }
}

/// Why a finished run in which no spend reached the storage is untested (INCONCLUSIVE on its
/// own): how the callers ended, the first of them that did not simply find too little money,
/// and what to change.
pub fn untested_note(report: &RunReport) -> String {
    let ledger = &report.ledger;
    let ends: Vec<String> = [
        (ledger.failed, "failed"),
        (ledger.gave_up, "gave up"),
        (ledger.lost_lock, "lost the lock"),
        (ledger.insufficient, "found too little money"),
    ]
    .iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, what)| format!("{count} {what}"))
    .collect();
    let first = report
        .callers
        .iter()
        .find_map(|caller| match &caller.outcome {
            Some(outcome @ (Outcome::Failed(_) | Outcome::GaveUp | Outcome::LostLock)) => {
                Some(format!("; first: {} {}", caller.host, outcome.describe()))
            }
            _ => None,
        });
    let hint = if ledger.insufficient == report.scenario.callers {
        "start with a balance of at least the amount (--balance)"
    } else {
        "see each caller's outcome with --json or --events"
    };
    format!(
        "no spend reached the storage ({}{}), so the ledger holding says nothing about the \
            safeguard; {hint}",
        ends.join(", "),
        first.unwrap_or_default()
    )
}

/// The line saying why an unfinished run has the verdict it has, and what to do.
pub fn unfinished_note(report: &RunReport, explicit_limit: bool) -> String {
    let limit = format_ms(report.elapsed_ms);
    let (_, needed) = time_limit_ms(&report.scenario, &SimConfig::default().client);
    let still = format!(
        "{} of {} callers were still running when the run stopped at its time limit ({limit} \
            after the release)",
        report.unfinished(),
        report.scenario.callers
    );
    let hint = if explicit_limit {
        format!(
            "the scenario may need up to {}; raise --time-limit (at most {})",
            format_ms(needed),
            max_time_limit()
        )
    } else if needed > MAX_TIME_LIMIT_MS {
        format!(
            "the scenario may need up to {}, more than the simulation runs ({}); shorten \
                --work, the pauses or --acquire-timeout",
            format_ms(needed),
            max_time_limit()
        )
    } else {
        "every caller should have finished by then: please report this scenario".to_string()
    };
    match report.verdict() {
        RunVerdict::Broken => format!(
            "BROKEN although {still}: no write they may have in flight explains the balance"
        ),
        _ => format!("INCONCLUSIVE: {still}; {hint}"),
    }
}

/// A real run's error as a usage error (exit 2).
pub fn real_error(error: leaselab_sim::real::RealError) -> UsageError {
    UsageError::new(error.to_string())
}

/// What a real run's output says about itself.
pub fn real_note(config: &RealConfig) -> String {
    let mut servers: Vec<String> = [
        ("Redis", &config.redis_url),
        ("PostgreSQL", &config.postgres_url),
    ]
    .iter()
    .filter_map(|(name, url)| url.as_ref().map(|url| format!("{name} {url}")))
    .collect();
    servers.extend(
        config
            .redis_node_urls
            .iter()
            .enumerate()
            .map(|(at, url)| format!("Redlock node {} {url}", at + 1)),
    );
    format!(
        "real run against {}: tokens and jitter come from the seed, but the timing is real, so \
         the run is not reproducible (its digest names this run only) and no trace is saved",
        servers.join(" and ")
    )
}

/// `CALLER:POINT:DURATION`.
pub fn parse_pause(text: &str) -> Result<Fault, UsageError> {
    let usage = || {
        UsageError::new(format!(
            "--pause {text}: write CALLER:POINT:DURATION, e.g. 1:after-read:250ms \
             (points: after-acquire, after-read, before-write, before-release)"
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    let [caller, point, duration] = parts.as_slice() else {
        return Err(usage());
    };
    let caller = caller
        .strip_prefix("app-")
        .unwrap_or(caller)
        .parse::<u32>()
        .map_err(|_| usage())?;
    let at = Point::from_name(point).ok_or_else(usage)?;
    let pause_ms =
        parse_ms(duration).map_err(|error| UsageError::new(format!("--pause {text}: {error}")))?;
    Ok(Fault::Pause {
        caller,
        at,
        pause_ms,
    })
}

/// `CALLER:ON` for `--lose-reply` and `--drop-connection`: the caller (1-based, or `app-N`)
/// and the request its fault strikes (`acquire`, `release` or `any`).
pub fn parse_reply_fault(flag: &str, text: &str) -> Result<(u32, FaultsOn), UsageError> {
    let usage = || {
        UsageError::new(format!(
            "{flag} {text}: write CALLER:ON, e.g. 1:release, where ON is acquire, release or \
             any (the caller's first Redis request)"
        ))
    };
    let (caller, on) = text.split_once(':').ok_or_else(usage)?;
    let caller = caller
        .strip_prefix("app-")
        .unwrap_or(caller)
        .parse::<u32>()
        .map_err(|_| usage())?;
    let on = FaultsOn::parse(on).ok_or_else(usage)?;
    Ok((caller, on))
}

/// `A:B:FROM:UNTIL[:one-way]`.
pub fn parse_partition(text: &str) -> Result<Fault, UsageError> {
    let usage = || {
        UsageError::new(format!(
            "--partition {text}: write A:B:FROM:UNTIL[:one-way], e.g. app-1:redis:50ms:400ms \
             (hosts: app-N, redis, postgres, redis-replica, redis-N)"
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    let (a, b, from, until, one_way) = match parts.as_slice() {
        [a, b, from, until] => (a, b, from, until, false),
        [a, b, from, until, "one-way"] => (a, b, from, until, true),
        _ => return Err(usage()),
    };
    let host = |name: &str| {
        Host::parse(name).ok_or_else(|| {
            UsageError::new(format!(
                "--partition {text}: unknown host '{name}' (hosts: app-N, redis, postgres, redis-replica, redis-N)"
            ))
        })
    };
    let time = |value: &str| {
        parse_duration(value)
            .map_err(|error| UsageError::new(format!("--partition {text}: {error}")))
    };
    Ok(Fault::Partition {
        a: host(a)?,
        b: host(b)?,
        from_ms: time(from)?,
        until_ms: time(until)?,
        one_way,
    })
}

/// `HOST:AT:BY`, BY signed (`+1s`, `-200ms`).
pub fn parse_clock_jump(text: &str) -> Result<Fault, UsageError> {
    let usage = || {
        UsageError::new(format!(
            "--clock-jump {text}: write HOST:AT:BY, e.g. redis:50ms:+1s or redis:50ms:-200ms"
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    let [host, at, by] = parts.as_slice() else {
        return Err(usage());
    };
    let host = Host::parse(host).ok_or_else(usage)?;
    let at_ms =
        parse_ms(at).map_err(|error| UsageError::new(format!("--clock-jump {text}: {error}")))?;
    let (sign, magnitude) = match by.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, by.strip_prefix('+').unwrap_or(by)),
    };
    let jump = parse_duration(magnitude)
        .map_err(|error| UsageError::new(format!("--clock-jump {text}: {error}")))?;
    Ok(Fault::ClockJump {
        host,
        at_ms,
        jump_ms: sign * jump as i64,
    })
}

/// A rate: `2%`, `+2%`, `-0.5%`, `500ppm`, `-500ppm`, in parts per million.
pub fn parse_rate_ppm(text: &str) -> Result<i64, String> {
    let usage = || format!("'{text}' is not a rate; write e.g. +2%, -0.5% or 500ppm");
    let (sign, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let ppm = if let Some(number) = magnitude.strip_suffix("ppm") {
        number.parse::<u64>().map_err(|_| usage())?
    } else if let Some(number) = magnitude.strip_suffix('%') {
        // Up to four decimals: 1% is 10000 ppm.
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() || fraction.len() > 4 || !fraction.chars().all(|c| c.is_ascii_digit()) {
            return Err(usage());
        }
        let whole: u64 = whole.parse().map_err(|_| usage())?;
        let fraction: u64 = format!("{fraction:0<4}").parse().map_err(|_| usage())?;
        whole
            .checked_mul(10_000)
            .and_then(|w| w.checked_add(fraction))
            .ok_or_else(usage)?
    } else {
        return Err(usage());
    };
    if ppm > leaselab_model::fault::MAX_CLOCK_RATE_PPM {
        return Err(format!(
            "'{text}' is more than 50% (500000ppm): a clock that far off is broken, not off"
        ));
    }
    Ok(sign * ppm as i64)
}

/// `HOST:RATE`, e.g. `redis:+2%`.
pub fn parse_clock_drift(text: &str) -> Result<Fault, UsageError> {
    let usage = || {
        UsageError::new(format!(
            "--clock-drift {text}: write HOST:RATE, e.g. redis:+2% or redis:-500ppm"
        ))
    };
    let (host, rate) = text.split_once(':').ok_or_else(usage)?;
    let host = Host::parse(host).ok_or_else(usage)?;
    let rate_ppm = parse_rate_ppm(rate)
        .map_err(|error| UsageError::new(format!("--clock-drift {text}: {error}")))?;
    Ok(Fault::ClockDrift { host, rate_ppm })
}

/// `HOST:AT:BY:RATE`, BY signed, e.g. `redis:20ms:+3s:500ppm`.
pub fn parse_clock_slew(text: &str) -> Result<Fault, UsageError> {
    let usage = || {
        UsageError::new(format!(
            "--clock-slew {text}: write HOST:AT:BY:RATE, e.g. redis:20ms:+3s:500ppm"
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    let [host, at, by, rate] = parts.as_slice() else {
        return Err(usage());
    };
    let Fault::ClockJump {
        host,
        at_ms,
        jump_ms,
    } = parse_clock_jump(&format!("{host}:{at}:{by}")).map_err(|_| usage())?
    else {
        return Err(usage());
    };
    let rate_ppm = parse_rate_ppm(rate)
        .map_err(|error| UsageError::new(format!("--clock-slew {text}: {error}")))?;
    if rate_ppm <= 0 {
        return Err(UsageError::new(format!(
            "--clock-slew {text}: the rate is how fast the offset is applied, so it is positive \
             (the offset's sign says which way)"
        )));
    }
    Ok(Fault::ClockSlew {
        host,
        at_ms,
        offset_ms: jump_ms,
        rate_ppm: rate_ppm as u64,
    })
}

/// A Redlock node's host name, `redis-N`.
fn parse_node(flag: &str, text: &str, name: &str) -> Result<u8, UsageError> {
    match Host::parse(name) {
        Some(Host::Node(node)) => Ok(node),
        _ => Err(UsageError::new(format!(
            "{flag} {text}: '{name}' is not a Redlock node; write redis-1 to redis-9"
        ))),
    }
}

/// `NODE:AT[:DOWN]`, e.g. `redis-2:150ms` or `redis-2:150ms:1100ms`.
pub fn parse_node_restart(text: &str) -> Result<Fault, UsageError> {
    let usage = || {
        UsageError::new(format!(
            "--node-restart {text}: write NODE:AT or NODE:AT:DOWN, e.g. redis-2:150ms or \
             redis-2:150ms:1100ms"
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    let (node, at, down) = match parts.as_slice() {
        [node, at] => (node, at, None),
        [node, at, down] => (node, at, Some(down)),
        _ => return Err(usage()),
    };
    let time = |value: &str| {
        parse_duration(value)
            .map_err(|error| UsageError::new(format!("--node-restart {text}: {error}")))
    };
    Ok(Fault::NodeRestart {
        node: parse_node("--node-restart", text, node)?,
        at_ms: time(at)?,
        down_ms: match down {
            Some(down) => time(down)?,
            None => 0,
        },
    })
}

/// The counters of one run in the order they are printed.
pub fn counters(report: &RunReport) -> Vec<(&'static str, i64)> {
    let ledger = &report.ledger;
    let mut counters = vec![
        ("accepted", i64::from(ledger.accepted)),
        ("balance", ledger.final_balance),
        ("rejected", i64::from(ledger.rejected)),
        ("gave up", i64::from(ledger.gave_up)),
        ("insufficient funds", i64::from(ledger.insufficient)),
        ("lost lock", i64::from(ledger.lost_lock)),
        ("failed", i64::from(ledger.failed)),
        (
            "stale releases refused",
            i64::from(ledger.stale_releases_refused),
        ),
        ("busy retries", i64::from(ledger.busy_retries)),
        ("tokens reissued", i64::from(report.tokens_reissued)),
        ("unfinished callers", i64::from(report.unfinished())),
        ("elapsed ms", report.elapsed_ms as i64),
    ];
    if report.scenario.safeguard.retries_transactions() {
        // Only for the safeguards that retry, so the other scenarios' summaries keep their
        // rows; within one scenario every run has the same rows.
        let at = counters.len() - 3;
        counters.insert(
            at,
            (
                "serialization retries",
                i64::from(ledger.serialization_retries),
            ),
        );
        counters.insert(at, ("deadlock retries", i64::from(ledger.deadlock_retries)));
    }
    counters
}

/// The second line of a run: the counters the tutorial logs, and more.
pub fn counters_line(report: &RunReport) -> String {
    let ledger = &report.ledger;
    let mut line = format!(
        "rejected={} gave-up={} insufficient={} lost-lock={} failed={} stale-releases-refused={} busy-retries={}",
        ledger.rejected,
        ledger.gave_up,
        ledger.insufficient,
        ledger.lost_lock,
        ledger.failed,
        ledger.stale_releases_refused,
        ledger.busy_retries
    );
    if report.scenario.safeguard.retries_transactions() {
        line.push_str(&format!(
            " deadlock-retries={} serialization-retries={}",
            ledger.deadlock_retries, ledger.serialization_retries
        ));
    }
    if let Some(fence) = report.final_fence {
        line.push_str(&format!(" fence={fence}"));
    }
    if report.tokens_reissued > 0 {
        line.push_str(&format!(" tokens-reissued={}", report.tokens_reissued));
    }
    if report.lock_left_behind {
        line.push_str(" lock-left-behind");
    }
    if !report.finished {
        line.push_str(&format!(" unfinished={}", report.unfinished()));
    }
    line.push_str(&format!(" elapsed={}", format_ms(report.elapsed_ms)));
    line
}

/// A progress bar on stderr for long batches, hidden when stderr is not a terminal.
pub fn progress(len: u64, label: &str) -> ProgressBar {
    if len < 10 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} runs ({eta})")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    bar
}

/// What a batch of runs keeps, in memory that does not grow with the number of runs:
/// counts, the first seeds of each kind, min/median/max of every counter, and the first
/// BROKEN and first INCONCLUSIVE report.
#[derive(Debug)]
pub struct Tally {
    /// Runs so far.
    pub runs: u64,
    /// OK runs.
    pub ok: u64,
    /// BROKEN runs' seeds.
    pub broken: SeedList,
    /// INCONCLUSIVE runs' seeds (stopped at their time limit).
    pub inconclusive: SeedList,
    /// Untested runs' seeds ([`RunReport::untested`]): finished, no spend put to the storage.
    pub untested: SeedList,
    /// Why the first untested run is so (`seed N: ...`).
    pub untested_note: Option<String>,
    /// Each counter of [`counters`] with its spread.
    pub counters: Vec<(&'static str, Spread)>,
    /// The first BROKEN run.
    pub first_broken: Option<RunReport>,
    /// The first INCONCLUSIVE run.
    pub first_inconclusive: Option<RunReport>,
    /// Runs in which a caller deleted or extended a lock another caller held (the servers'
    /// own reports, [`RunReport::trespasses`]): a violation of "only the holder changes the
    /// lock", whatever the ledger says.
    pub trespassing: SeedList,
    /// The first such run's first trespass, `seed N: ...`.
    pub first_trespass: Option<String>,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally::new()
    }
}

impl Tally {
    /// No runs yet.
    pub fn new() -> Tally {
        Tally {
            runs: 0,
            ok: 0,
            broken: SeedList::default(),
            inconclusive: SeedList::default(),
            untested: SeedList::default(),
            untested_note: None,
            counters: Vec::new(),
            first_broken: None,
            first_inconclusive: None,
            trespassing: SeedList::default(),
            first_trespass: None,
        }
    }

    /// Counts a run.
    pub fn add(&mut self, report: &RunReport) {
        self.runs += 1;
        if let Some(trespass) = report.trespasses.first() {
            self.trespassing.push(report.seed);
            if self.first_trespass.is_none() {
                self.first_trespass =
                    Some(format!("seed {}: {}", report.seed, trespass.describe()));
            }
        }
        match report.verdict() {
            RunVerdict::Ok => self.ok += 1,
            RunVerdict::Inconclusive if report.untested() => {
                self.untested.push(report.seed);
                if self.untested_note.is_none() {
                    self.untested_note = Some(format!(
                        "seed {}: untested: {}",
                        report.seed,
                        untested_note(report)
                    ));
                }
            }
            RunVerdict::Broken => {
                self.broken.push(report.seed);
                if self.first_broken.is_none() {
                    self.first_broken = Some(report.clone());
                }
            }
            RunVerdict::Inconclusive => {
                self.inconclusive.push(report.seed);
                if self.first_inconclusive.is_none() {
                    self.first_inconclusive = Some(report.clone());
                }
            }
        }
        let values = counters(report);
        if self.counters.is_empty() {
            self.counters = values
                .iter()
                .map(|(name, _)| (*name, Spread::new()))
                .collect();
        }
        for ((_, spread), (_, value)) in self.counters.iter_mut().zip(values) {
            spread.add(value);
        }
    }

    /// The command's status: a BROKEN run or a lock changed by a non-holder outranks an
    /// INCONCLUSIVE run (or a batch of only untested ones), which outranks OK.
    pub fn status(&self) -> Status {
        status(
            &self.broken,
            &self.trespassing,
            &self.inconclusive,
            &self.untested,
            self.runs,
        )
    }

    /// `BROKEN in 1 of 20 runs; INCONCLUSIVE in 0; OK in 19`.
    pub fn verdicts_line(&self) -> String {
        verdicts_line(
            self.runs,
            self.broken.total(),
            self.inconclusive.total(),
            self.ok,
            self.untested.total(),
        )
    }

    /// What the batch prints at its end (`shard`: which part of the batch this was).
    pub fn summary(
        &self,
        scenario: &Scenario,
        seeds: Seeds,
        shard: Option<Shard>,
        real: Option<&RealConfig>,
        explicit_limit: bool,
    ) -> Summary {
        Summary {
            scenario: scenario.name.clone(),
            real: real.map(real_note),
            seeds,
            shard,
            runs: self.runs,
            ok: self.ok,
            broken: self.broken.clone(),
            inconclusive: self.inconclusive.clone(),
            untested: self.untested.clone(),
            untested_note: self.untested_note.clone(),
            counters: self
                .counters
                .iter()
                .map(|(name, spread)| (name.to_string(), spread.clone()))
                .collect(),
            inconclusive_note: self.first_inconclusive.as_ref().map(|report| {
                format!(
                    "seed {}: {}",
                    report.seed,
                    inconclusive_note(report, explicit_limit)
                )
            }),
            trespassing: self.trespassing.clone(),
            trespass_note: self.first_trespass.clone(),
        }
    }
}

/// A batch's status from its BROKEN, trespassing, INCONCLUSIVE and untested runs. An untested
/// run is no evidence either way: a batch is judged on the others, and is INCONCLUSIVE when
/// every run was untested.
fn status(
    broken: &SeedList,
    trespassing: &SeedList,
    inconclusive: &SeedList,
    untested: &SeedList,
    runs: u64,
) -> Status {
    if broken.total() > 0 || trespassing.total() > 0 {
        Status::Violation
    } else if inconclusive.total() > 0 || (runs > 0 && untested.total() == runs) {
        Status::Inconclusive
    } else {
        Status::Ok
    }
}

/// What a run's text says when a caller changed a lock it did not hold (none otherwise).
pub fn trespass_lines(report: &RunReport) -> Vec<String> {
    report
        .trespasses
        .iter()
        .map(|trespass| {
            format!(
                "VIOLATED only the holder changes the lock: {}",
                trespass.describe()
            )
        })
        .collect()
}

/// `BROKEN in 1 of 20 runs; INCONCLUSIVE in 0; OK in 19`, and `; untested in N` when some
/// runs put no spend to the storage.
fn verdicts_line(runs: u64, broken: u64, inconclusive: u64, ok: u64, untested: u64) -> String {
    let mut line =
        format!("BROKEN in {broken} of {runs} runs; INCONCLUSIVE in {inconclusive}; OK in {ok}");
    if untested > 0 {
        line.push_str(&format!(
            "; untested in {untested} (no spend reached the storage)"
        ));
    }
    line
}

/// What `run --runs` prints at its end: made from its own runs ([`Tally::summary`]), or
/// merged from its shards' outputs (`leaselab merge`), the same either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The scenario's name (with the flags that changed it).
    pub scenario: String,
    /// What a real run says about itself (none: simulated).
    pub real: Option<String>,
    /// The seeds of the whole batch.
    pub seeds: Seeds,
    /// Which part of the batch this is (none: all of it).
    pub shard: Option<Shard>,
    /// Runs.
    pub runs: u64,
    /// OK runs.
    pub ok: u64,
    /// BROKEN runs' seeds.
    pub broken: SeedList,
    /// INCONCLUSIVE runs' seeds.
    pub inconclusive: SeedList,
    /// Untested runs' seeds: finished with no spend put to the storage.
    pub untested: SeedList,
    /// Why the first untested run is so (`seed N: ...`).
    pub untested_note: Option<String>,
    /// Each counter with its spread (empty when no run was made).
    pub counters: Vec<(String, Spread)>,
    /// Why the first INCONCLUSIVE run is so (`seed N: ...`).
    pub inconclusive_note: Option<String>,
    /// Runs in which a caller deleted or extended a lock another caller held.
    pub trespassing: SeedList,
    /// The first of them, `seed N: ...`.
    pub trespass_note: Option<String>,
}

impl Summary {
    /// The command's status: a BROKEN run or a lock changed by a non-holder outranks an
    /// INCONCLUSIVE run (or a batch of only untested ones), which outranks OK.
    pub fn status(&self) -> Status {
        status(
            &self.broken,
            &self.trespassing,
            &self.inconclusive,
            &self.untested,
            self.runs,
        )
    }

    /// The JSON object before the runs' details: what ran.
    pub fn head_json(&self) -> serde_json::Value {
        let mut head = serde_json::json!({
            "scenario": self.scenario,
            "real": self.real,
            "first_seed": self.seeds.first,
            "last_seed": self.seeds.last(),
        });
        if let Some(shard) = self.shard {
            head["command"] = "run".into();
            head["shard"] = shard.text().into();
        }
        head
    }

    /// The JSON fields after the runs' details: the verdicts and counters. A shard's carries
    /// each counter's spread too, for `leaselab merge`.
    pub fn tail_json(&self) -> serde_json::Value {
        serde_json::json!({
            "runs": self.runs,
            "ok_runs": self.ok,
            "broken_runs": self.broken.total(),
            "broken_seeds": self.broken.seeds,
            "broken_seeds_not_listed": self.broken.more,
            "inconclusive_runs": self.inconclusive.total(),
            "inconclusive_seeds": self.inconclusive.seeds,
            "inconclusive_seeds_not_listed": self.inconclusive.more,
        "inconclusive_note": self.inconclusive_note,
            "untested_runs": self.untested.total(),
            "untested_seeds": self.untested.seeds,
            "untested_seeds_not_listed": self.untested.more,
            "untested_note": self.untested_note,
            "trespassing_runs": self.trespassing.total(),
            "trespassing_seeds": self.trespassing.seeds,
            "trespassing_seeds_not_listed": self.trespassing.more,
            "trespass_note": self.trespass_note,
            "counters": self.counters.iter().map(|(name, spread)| {
                let mut counter = serde_json::json!({
                    "counter": name,
                    "min": spread.min(),
                    "median": spread.median(),
                    "median_exact": spread.exact(),
                    "max": spread.max(),
                });
                if self.shard.is_some() {
                    counter["spread"] = serde_json::to_value(spread.parts()).expect("spreads serialise");
                }
                counter
            }).collect::<Vec<_>>(),
        })
    }

    /// The summary as text.
    pub fn print_text(&self) {
        let shard = match self.shard {
            Some(shard) => format!(" (shard {}: {} of them)", shard.text(), self.runs),
            None => String::new(),
        };
        out!(
            "{}: {} runs, seeds {}..={}{shard}",
            self.scenario,
            self.seeds.count,
            self.seeds.first,
            self.seeds.last()
        );
        out!(
            "{}",
            verdicts_line(
                self.runs,
                self.broken.total(),
                self.inconclusive.total(),
                self.ok,
                self.untested.total()
            )
        );
        // The ledger's verdicts above; a caller that changed a lock it did not hold is a
        // violation of its own, whatever the ledger says.
        if self.trespassing.total() > 0 {
            out!(
                "VIOLATED only the holder changes the lock, in {} of {} runs: seeds {}",
                self.trespassing.total(),
                self.runs,
                self.trespassing.text()
            );
        }
        if let Some(note) = &self.trespass_note {
            out!("{note}");
        }
        out!("{:<24} {:>8} {:>8} {:>8}", "", "min", "median", "max");
        for (name, spread) in &self.counters {
            out!(
                "{name:<24} {:>8} {:>8} {:>8}",
                spread.min(),
                spread.median_text(),
                spread.max()
            );
        }
        if self.counters.iter().any(|(_, spread)| !spread.exact()) {
            out!("~ median approximate (too many distinct values to keep each)");
        }
        if self.broken.total() > 0 {
            out!("broken seeds: {}", self.broken.text());
        }
        if self.inconclusive.total() > 0 {
            out!("inconclusive seeds: {}", self.inconclusive.text());
        }
        if let Some(note) = &self.inconclusive_note {
            out!("{note}");
        }
        if self.untested.total() > 0 {
            out!("untested seeds: {}", self.untested.text());
        }
        if let Some(note) = &self.untested_note {
            out!("{note}");
        }
        if let Some(real) = &self.real {
            out!("{real}");
        }
    }
}

/// Prints `head` (a JSON object) without its closing brace, and opens `runs_detail`.
pub fn print_json_head(head: &serde_json::Value) {
    let head = serde_json::to_string_pretty(head).expect("summaries serialise");
    let head = head
        .trim_end()
        .strip_suffix('}')
        .unwrap_or(&head)
        .trim_end();
    out!("{head},\n  \"runs_detail\": [");
}

/// Prints one run's detail line inside `runs_detail` (`last`: no comma after it).
pub fn print_json_detail(detail: &serde_json::Value, last: bool) {
    let comma = if last { "" } else { "," };
    out!("    {detail}{comma}");
}

/// Closes `runs_detail` and prints `tail`'s fields in the object the head opened.
pub fn print_json_tail(tail: &serde_json::Value) {
    let text = serde_json::to_string_pretty(tail).expect("summaries serialise");
    let body = text.trim().strip_prefix('{').unwrap_or(&text);
    out!("  ],{body}");
}

/// Runs `leaselab run`.
pub fn execute(args: Args) -> CommandResult {
    let scenario = args.scenario()?;
    let seeds = Seeds::new(args.seed, args.runs)?;
    let shard = args.shard.shard;
    let owned = seeds.count_of_shard(shard.unwrap_or(Shard::WHOLE));
    let runner = args.runner(&scenario)?;
    let real = args.real();
    // A trace records no time limit: a run stopped by --time-limit before its end would
    // replay differently, so it is not saved.
    let replayable = |report: &RunReport| report.finished || args.time_limit.is_none();
    let save_dir = match &real {
        Some(_) => None,
        None => args.traces.dir(),
    };
    let mut saver = TraceSaver::new(save_dir, args.save_all_traces)?.with_ok(args.save_ok_traces);
    let mut tally = Tally::new();
    let mut not_replayable = 0u64;
    let mut single: Option<RunReport> = None;
    let many = seeds.count > 1 || shard.is_some();
    let explicit_limit = args.time_limit.is_some();
    if many && args.json {
        let head = Tally::new().summary(&scenario, seeds, shard, real.as_ref(), explicit_limit);
        print_json_head(&head.head_json());
    }
    for_each_run(
        &scenario,
        seeds,
        shard.unwrap_or(Shard::WHOLE),
        &runner,
        |report| {
            tally.add(&report);
            if report.broken() {
                if replayable(&report) {
                    saver.offer(&report);
                } else {
                    not_replayable += 1;
                }
            } else if args.save_ok_traces && report.finished {
                saver.offer(&report);
            }
            if many && args.json {
                let detail = serde_json::json!({
                    "seed": report.seed,
                    "line": report.line(),
                    "verdict": report.verdict().as_str(),
                    "trespasses": report.trespasses.len(),
                    "unfinished": report.unfinished(),
                    "digest": report.digest(),
                    "elapsed_ms": report.elapsed_ms,
                });
                print_json_detail(&detail, tally.runs == owned);
            }
            if !many {
                single = Some(report);
            }
            Ok(())
        },
    )?;
    match &single {
        Some(report) => print_single(&args, report, real.as_ref(), explicit_limit),
        None => {
            let summary = tally.summary(&scenario, seeds, shard, real.as_ref(), explicit_limit);
            if args.json {
                print_json_tail(&summary.tail_json());
            } else {
                summary.print_text();
            }
        }
    }
    if real.is_some() {
        // A real run does not replay: nothing to save or shrink.
        return Ok(tally.status());
    }
    report_saved(&saver);
    if not_replayable > 0 {
        eprintln!(
            "{not_replayable} BROKEN run(s) stopped by --time-limit before every caller \
             finished were not saved: a trace replays with the default time limit"
        );
    }
    if args.shrink {
        match &tally.first_broken {
            Some(report) if replayable(report) => {
                let dir = args
                    .traces
                    .dir()
                    .unwrap_or(std::path::Path::new(crate::trace::DEFAULT_DIR));
                let (path, sizes) = super::shrink::shrink_and_save(
                    &report.scenario,
                    report.seed,
                    report.digest(),
                    dir,
                )?;
                eprint!("{sizes}");
                eprintln!("shrunk trace saved: {}", path.display());
            }
            Some(_) => eprintln!(
                "not shrunk: the first BROKEN run was stopped by --time-limit before every \
                 caller finished"
            ),
            None => {}
        }
    }
    Ok(tally.status())
}

/// Says on stderr which traces were saved, and what was not.
pub fn report_saved(saver: &TraceSaver) {
    if let Some(dir) = saver.dir() {
        match saver.saved_count {
            0 => {}
            1..=3 => {
                for path in &saver.saved {
                    eprintln!("trace saved: {} (leaselab show {0})", path.display());
                }
            }
            n => eprintln!("{n} traces saved in {}", dir.display()),
        }
        if saver.not_saved > 0 {
            eprintln!(
                "{} more BROKEN run(s) not saved (--save-all-traces saves every one; \
                 --seed N --runs 1 re-runs any seed)",
                saver.not_saved
            );
        }
    }
    if let Some(error) = &saver.error {
        eprintln!("error: {error}");
    }
}

fn print_single(args: &Args, report: &RunReport, real: Option<&RealConfig>, explicit: bool) {
    if args.json {
        let text = serde_json::to_string_pretty(report).expect("reports serialise");
        match real {
            // The report's own fields, in their order, then what the run was.
            Some(config) => {
                let body = text
                    .trim_end()
                    .strip_suffix('}')
                    .unwrap_or(&text)
                    .trim_end();
                let note = serde_json::to_string(&real_note(config)).expect("a string");
                out!("{body},\n  \"real\": {note}\n}}");
            }
            None => out!("{text}"),
        }
        return;
    }
    if args.events {
        for event in &report.events {
            out!("{}", render(event));
        }
    }
    out!("{} seed={}", report.scenario.name, report.seed);
    out!("{}", report.line());
    for line in trespass_lines(report) {
        out!("{line}");
    }
    out!("{}", counters_line(report));
    for caller in &report.callers {
        if let Some(outcome) = &caller.outcome {
            if args.events || report.scenario.callers <= 5 {
                out!(
                    "  {}: {}",
                    caller.host,
                    leaselab_sim::run::describe_outcome(outcome)
                );
            }
        }
    }
    if report.verdict() == RunVerdict::Inconclusive || !report.finished {
        out!("{}", inconclusive_note(report, explicit));
    }
    out!("digest {}", report.digest());
    if let Some(config) = real {
        out!("{}", real_note(config));
    }
}

/// Keeps in `first` the note of the earliest seed in `seeds` over the shards read so far: the
/// shard's `field` when its first seed of the kind comes before the one kept.
fn earliest_note(
    first: &mut Option<(u64, String)>,
    seeds: &SeedList,
    file: &ShardFile,
    field: &str,
) -> Result<(), UsageError> {
    if let Some(&seed) = seeds.seeds.first() {
        let note: Option<String> = file.typed_field(field)?;
        if first.as_ref().is_none_or(|(kept, _)| seed < *kept) {
            *first = note.map(|note| (seed, note));
        }
    }
    Ok(())
}

/// `leaselab merge` of `run --runs ... --shard K/N --json` outputs: the summary of all the
/// runs, as `run --runs` without `--shard` prints it (the runs' details in seed order, the
/// counts, the first seeds of each verdict, the same medians: each shard carries its
/// counters' spreads, which merge exactly).
pub fn merge(files: &[ShardFile], json: bool) -> CommandResult {
    same_fields(files, &["scenario", "real", "first_seed", "last_seed"])?;
    let first = &files[0];
    let (first_seed, last_seed) = (
        first.u64_field("first_seed")?,
        first.u64_field("last_seed")?,
    );
    if last_seed < first_seed || last_seed - first_seed == u64::MAX {
        return Err(first.error(format!(
            "fields 'first_seed' {first_seed} and 'last_seed' {last_seed} are not a batch of seeds"
        )));
    }
    let seeds = Seeds::new(first_seed, last_seed - first_seed + 1)?;
    let mut summary = Summary {
        scenario: first.typed_field("scenario")?,
        real: first.typed_field("real")?,
        seeds,
        shard: None,
        runs: 0,
        ok: 0,
        broken: SeedList::default(),
        inconclusive: SeedList::default(),
        untested: SeedList::default(),
        untested_note: None,
        counters: Vec::new(),
        inconclusive_note: None,
        trespassing: SeedList::default(),
        trespass_note: None,
    };
    let mut details: Vec<(u64, serde_json::Value)> = Vec::new();
    let mut listed = std::collections::BTreeSet::new();
    let mut counters_named = false;
    let (mut broken, mut inconclusive, mut trespassing) = (Vec::new(), Vec::new(), Vec::new());
    let mut first_inconclusive: Option<(u64, String)> = None;
    let (mut untested, mut first_untested) = (Vec::new(), None::<(u64, String)>);
    let mut first_trespass: Option<(u64, String)> = None;
    for file in files {
        let shard = file.shard;
        let runs = file.u64_field("runs")?;
        let owned = seeds.count_of_shard(shard);
        if runs != owned {
            return Err(file.error(format!(
                "field 'runs' is {runs}, but shard {} of seeds {first_seed}..={last_seed} has {owned}: the shard did not finish, or was run with other seeds",
                shard.text()
            )));
        }
        let shard_details = file.array_field("runs_detail")?;
        if shard_details.len() as u64 != runs {
            return Err(file.error(format!(
                "field 'runs_detail' lists {} runs, but 'runs' is {runs}",
                shard_details.len()
            )));
        }
        for detail in shard_details {
            let seed = detail.get("seed").and_then(serde_json::Value::as_u64);
            if let Some(seed) = seed {
                if !listed.insert(seed) {
                    return Err(file.error(format!(
                        "field 'runs_detail' lists seed {seed} twice: not a shard's output"
                    )));
                }
            }
            match seed {
                Some(seed) if seeds.shard_owns(shard, seed) => details.push((seed, detail.clone())),
                _ => {
                    return Err(file.error(format!(
                    "field 'runs_detail' has a run {detail} that is not one of shard {}'s seeds",
                    shard.text()
                )))
                }
            }
        }
        let list = |kind: &str| -> Result<SeedList, UsageError> {
            let list = SeedList {
                seeds: file.typed_field(&format!("{kind}_seeds"))?,
                more: file.u64_field(&format!("{kind}_seeds_not_listed"))?,
            };
            let total = file.u64_field(&format!("{kind}_runs"))?;
            if list.total() != total || list.seeds.len() > SeedList::LIMIT {
                return Err(file.error(format!(
                    "field '{kind}_seeds' does not add up to '{kind}_runs' {total}"
                )));
            }
            Ok(list)
        };
        let shard_broken = list("broken")?;
        let shard_inconclusive = list("inconclusive")?;
        let shard_untested = list("untested")?;
        earliest_note(&mut first_untested, &shard_untested, file, "untested_note")?;
        let shard_trespassing = list("trespassing")?;
        earliest_note(
            &mut first_trespass,
            &shard_trespassing,
            file,
            "trespass_note",
        )?;
        let ok = file.u64_field("ok_runs")?;
        if ok + shard_broken.total() + shard_inconclusive.total() + shard_untested.total() != runs {
            return Err(file.error(format!(
                "the OK, BROKEN, INCONCLUSIVE and untested runs do not add up to 'runs' {runs}"
            )));
        }
        earliest_note(
            &mut first_inconclusive,
            &shard_inconclusive,
            file,
            "inconclusive_note",
        )?;
        summary.runs += runs;
        summary.ok += ok;
        broken.push(shard_broken);
        inconclusive.push(shard_inconclusive);
        untested.push(shard_untested);
        trespassing.push(shard_trespassing);
        let counters = file.array_field("counters")?;
        if runs == 0 {
            continue;
        }
        // The first shard with runs names the counters; every other one names the same.
        let merging = counters_named;
        counters_named = true;
        if merging && counters.len() != summary.counters.len() {
            return Err(file.error("field 'counters' names other counters than the other shards"));
        }
        for (position, counter) in counters.iter().enumerate() {
            let name = counter.get("counter").and_then(serde_json::Value::as_str);
            let parts = counter
                .get("spread")
                .cloned()
                .map(serde_json::from_value::<SpreadParts>);
            let (Some(name), Some(Ok(parts))) = (name, parts) else {
                return Err(file.error(format!(
                    "field 'counters' entry {position} has no 'counter' name or no 'spread' (only a --shard run's output carries it)"
                )));
            };
            let spread = Spread::from_parts(&parts)
                .map_err(|error| file.error(format!("counter '{name}': {error}")))?;
            if merging {
                let (known, merged) = &mut summary.counters[position];
                if known != name {
                    return Err(file.error(format!(
                        "field 'counters' entry {position} is '{name}', but the other shards have '{known}'"
                    )));
                }
                merged.merge(&spread);
            } else {
                summary.counters.push((name.to_string(), spread));
            }
        }
    }
    assert_eq!(
        summary.runs, seeds.count,
        "the shards' runs cover the batch"
    );
    summary.broken = SeedList::merged(&broken);
    summary.inconclusive = SeedList::merged(&inconclusive);
    summary.inconclusive_note = first_inconclusive.map(|(_, note)| note);
    summary.untested = SeedList::merged(&untested);
    summary.untested_note = first_untested.map(|(_, note)| note);
    summary.trespassing = SeedList::merged(&trespassing);
    summary.trespass_note = first_trespass.map(|(_, note)| note);
    details.sort_by_key(|(seed, _)| *seed);
    if json {
        print_json_head(&summary.head_json());
        let count = details.len();
        for (position, (_, detail)) in details.iter().enumerate() {
            print_json_detail(detail, position + 1 == count);
        }
        print_json_tail(&summary.tail_json());
    } else {
        summary.print_text();
    }
    Ok(summary.status())
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};

    /// Parses `leaselab run <line>`; tests keep no traces unless they ask for a directory.
    fn args(line: &[&str]) -> Args {
        let mut argv = vec!["leaselab", "run"];
        argv.extend_from_slice(line);
        if !line.contains(&"--save-traces") {
            argv.push("--no-save-traces");
        }
        match Cli::try_parse_from(argv).expect("valid usage").command {
            Command::Run(args) => *args,
            other => panic!("expected run, got {other:?}"),
        }
    }

    #[test]
    fn a_zero_ttl_is_refused_before_anything_runs() {
        let error = execute(args(&["step6-verify", "--ttl", "0"])).unwrap_err();
        assert_eq!(error.message, "TTL must be at least 1ms");
        let error = execute(args(&["step2-lock", "--ttl", "0ms"])).unwrap_err();
        assert_eq!(error.message, "TTL must be at least 1ms");
    }

    #[test]
    fn the_exit_status_follows_the_verdict() {
        assert_eq!(execute(args(&["step5-fencing"])), Ok(Status::Ok));
        assert_eq!(
            execute(args(&["step5-fencing", "--unfenced", "--runs", "2"])),
            Ok(Status::Violation)
        );
    }

    #[test]
    fn bad_input_gets_a_message_that_says_how_to_fix_it() {
        for (line, needle) in [
            (&["step9"][..], "unknown scenario 'step9'"),
            (
                &["step1-race", "--watchdog"][..],
                "--watchdog applies to step3-ttl",
            ),
            (
                &["step2-lock", "--pause", "1:lunch:2s"][..],
                "CALLER:POINT:DURATION",
            ),
            (
                &["step2-lock", "--pause", "99:after-read:2s"][..],
                "there is no caller 99",
            ),
            (
                &["step2-lock", "--partition", "app-1:mars:1ms:2ms"][..],
                "unknown host 'mars'",
            ),
            (
                &["step2-lock", "--partition", "app-1:redis:5ms:2ms"][..],
                "must heal after",
            ),
            (
                &["step2-lock", "--clock-jump", "app-1:5ms:+1s"][..],
                "monotonic",
            ),
            (
                &["step2-lock", "--safeguard", "magic"][..],
                "unknown safeguard",
            ),
            (
                &["step2-lock", "--runs", "0"][..],
                "--runs must be at least 1",
            ),
        ] {
            let error = execute(args(line)).unwrap_err();
            assert!(
                error.message.contains(needle),
                "{line:?}: {}",
                error.message
            );
        }
    }

    #[test]
    fn clap_refuses_malformed_usage() {
        assert!(Cli::try_parse_from(["leaselab", "run"]).is_err());
        assert!(Cli::try_parse_from(["leaselab", "run", "step2-lock", "--ttl", "5"]).is_err());
        assert!(Cli::try_parse_from(["leaselab", "run", "step2-lock", "--callers", "x"]).is_err());
    }

    #[test]
    fn fault_flags_build_the_faults() {
        let scenario = args(&[
            "step2-lock",
            "--no-faults",
            "--pause",
            "app-2:before-write:250ms",
            "--partition",
            "app-1:redis:10ms:1s:one-way",
            "--failover-at",
            "30ms",
            "--clock-jump",
            "redis:5ms:-200ms",
        ])
        .scenario()
        .unwrap();
        assert_eq!(
            scenario.faults,
            vec![
                Fault::Pause {
                    caller: 2,
                    at: Point::BeforeWrite,
                    pause_ms: 250
                },
                Fault::Failover { at_ms: 30 },
                Fault::Partition {
                    a: Host::Caller(1),
                    b: Host::Redis,
                    from_ms: 10,
                    until_ms: 1_000,
                    one_way: true
                },
                Fault::ClockJump {
                    host: Host::Redis,
                    at_ms: 5,
                    jump_ms: -200
                },
            ]
        );
        assert!(scenario.name.starts_with("step2-lock --no-faults --pause"));
    }
}
