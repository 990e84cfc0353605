//! Model counterexamples as simulated schedules.
//!
//! The exhaustive model steps callers one action at a time on a clock of ticks; requests are
//! answered at once. The simulator runs the same safeguard machines through real clients
//! over a network where a round trip takes about a millisecond. A counterexample becomes a
//! simulated schedule like this:
//!
//! 1. **Time.** One tick becomes `ms_per_tick` simulated milliseconds (at least 100). Every
//!    request or statement of the path (an *operation*) gets a target time: its tick ×
//!    `ms_per_tick`, plus 10 ms per earlier operation in the same tick, so operations keep
//!    the path's order. The lease is `ttl × ms_per_tick + ms_per_tick / 2` (a key set at tick
//!    `a` with a TTL of `t` ticks is alive through tick `a + t` and gone at `a + t + 1`, as
//!    in the model), and the work `work × ms_per_tick − ms_per_tick / 2`, so a caller is
//!    never late for its write. The network has no jitter.
//! 2. **Who steps when.** A caller's first operation is reached by its start offset; every
//!    later one by a pause at the named point just before it (after-acquire before the read,
//!    before-write before the write, before-release before the release). The pauses are what
//!    makes the caller wait for its target time.
//! 3. **Faults.** A failover strikes at its target time; the replica's lag is chosen so that
//!    what the path replicated before the failover is replicated and what it lost is lost.
//!    A restart, an eviction, and a jump or slew of Redis's clock strike at their target
//!    times; a jump or a slew's offset of `n` ticks becomes `n × ms_per_tick` ms (a slew's
//!    rate, a fraction of elapsed time, stays as it is).
//! 4. **Fit.** How long a caller takes to reach a point depends on round trips the model does
//!    not have (scripts are loaded on first use, for instance), so the pauses are fitted: run,
//!    read from the event log when each caller reached each point, set each pause to end at
//!    its operation's target, run again, until nothing changes.
//! 5. **Only the pauses that matter.** Each hold is then let go in turn, and stays let go
//!    when the run still ends with the same ledger line and blames the same spends: what is
//!    left are the pauses that make the failure (a GC pause past the lease, typically).
//!
//! The result is an ordinary scenario (start offsets, pauses, faults) that the simulator
//! replays by seed like any other trace.

use leaselab_checker::{CheckConfig, LeaseModel};
use leaselab_model::fault::{Fault, Host};
use leaselab_model::safeguard::Point;
use leaselab_model::scenario::{Network, Scenario};
use leaselab_model::world::{Action, ClientFault, ClockFault, Event as ModelEvent};
use leaselab_sim::events::What;
use leaselab_sim::run::RunReport;

/// Simulated milliseconds between two operations of the same tick.
pub const OPERATION_GAP_MS: u64 = 10;

/// The smallest number of simulated milliseconds per tick.
pub const MIN_MS_PER_TICK: u64 = 100;

/// How many fitting runs at most.
const MAX_FITS: usize = 24;

/// How long a translated partition lasts: longer than any caller waits for a reply.
const PARTITION_MS: u64 = 60_000;

/// The seed translated schedules run with (they hardly depend on it: no network jitter).
pub const SEED: u64 = 1;

/// A counterexample turned into a simulated run.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The scenario: start offsets, pauses, faults.
    pub scenario: Scenario,
    /// Simulated ms per tick.
    pub ms_per_tick: u64,
    /// The simulated run of the scenario.
    pub report: RunReport,
    /// How many runs the fit took.
    pub runs: usize,
}

/// One operation of a caller in the model's path.
#[derive(Clone, Copy, Debug)]
struct Operation {
    /// Target time, ms after the release.
    target_ms: u64,
    /// The index, among the caller's reached points, of the point just before it (none for
    /// the caller's first operation: its start offset gets it there).
    point: Option<usize>,
}

/// What the path says, per caller and for the world.
#[derive(Debug, Default)]
struct Plan {
    /// Per caller: the named points it reaches, in order.
    points: Vec<Vec<Point>>,
    /// Per caller: its operations.
    operations: Vec<Vec<Operation>>,
    /// Failovers: target times.
    failovers: Vec<u64>,
    /// Restarts of the single Redis without persistence: target times.
    restarts: Vec<u64>,
    /// Evictions of the fence counter: target times.
    evictions: Vec<u64>,
    /// Jumps of Redis's clock: target times.
    clock_jumps: Vec<u64>,
    /// Slews of Redis's clock: target times at which they start.
    clock_slews: Vec<u64>,
    /// Partitions: the caller (0-based) cut off from Redis, and the target time.
    partitions: Vec<(usize, u64)>,
    /// Effects: (made at, replicated at) ms; `None` when lost.
    effects: Vec<(u64, Option<u64>)>,
    ms_per_tick: u64,
}

fn plan(config: &CheckConfig, actions: &[Action]) -> Result<Plan, String> {
    let model = LeaseModel::new(*config).map_err(|e| e.0)?;
    let callers = config.callers as usize;
    let mut world = model.initial_world().clone();
    // First pass: ticks and ranks of every operation.
    struct Raw {
        caller: usize,
        tick: u64,
        rank: u64,
    }
    let mut raw_ops: Vec<Raw> = Vec::new();
    let mut raw_failovers: Vec<(u64, u64)> = Vec::new();
    let mut raw_restarts: Vec<(u64, u64)> = Vec::new();
    let mut raw_evictions: Vec<(u64, u64)> = Vec::new();
    let mut raw_clock_jumps: Vec<(u64, u64)> = Vec::new();
    let mut raw_clock_slews: Vec<(u64, u64)> = Vec::new();
    let mut raw_partitions: Vec<(usize, u64, u64)> = Vec::new();
    let mut points: Vec<Vec<Point>> = vec![Vec::new(); callers];
    // Per caller: the point index before each op.
    let mut op_points: Vec<Vec<Option<usize>>> = vec![Vec::new(); callers];
    let mut points_at_op: Vec<usize> = vec![0; callers];
    let mut effects_made: Vec<(u64, u64)> = Vec::new(); // (tick, rank) per effect in order
    let mut replicated: Vec<(u64, u64)> = Vec::new();
    let mut lost_from = usize::MAX;
    let mut blocked = vec![false; callers];
    let mut rank_in_tick = 0u64;
    let mut tick = world.now_ms;
    let mut max_rank = 0u64;
    let mut enabled = Vec::new();
    for (number, action) in actions.iter().enumerate() {
        enabled.clear();
        world.actions(&mut enabled);
        if !enabled.contains(action) {
            return Err(format!(
                "step {} of the counterexample ({action:?}) is not enabled",
                number + 1
            ));
        }
        if world.now_ms != tick {
            tick = world.now_ms;
            rank_in_tick = 0;
        }
        let backlog_before = world.replica.as_ref().map_or(0, |r| r.backlog.len());
        let events = world.apply_events(*action);
        for event in &events {
            let (caller, is_op) = match event {
                ModelEvent::Redis { caller, .. } => (Some(*caller), true),
                ModelEvent::Sql { caller, .. } => {
                    let was_blocked = std::mem::replace(&mut blocked[*caller], false);
                    (Some(*caller), !was_blocked)
                }
                ModelEvent::SqlBlocked { caller, .. } => {
                    blocked[*caller] = true;
                    (Some(*caller), true)
                }
                ModelEvent::Reached { caller, point } => {
                    points[*caller].push(*point);
                    (None, false)
                }
                ModelEvent::Replicated { .. } => {
                    replicated.push((tick, rank_in_tick));
                    (None, false)
                }
                ModelEvent::Failover { .. } => {
                    raw_failovers.push((tick, rank_in_tick));
                    lost_from = lost_from.min(replicated.len());
                    rank_in_tick += 1;
                    (None, false)
                }
                ModelEvent::RedisRestarted { .. } => {
                    raw_restarts.push((tick, rank_in_tick));
                    rank_in_tick += 1;
                    (None, false)
                }
                ModelEvent::FenceEvicted => {
                    raw_evictions.push((tick, rank_in_tick));
                    rank_in_tick += 1;
                    (None, false)
                }
                ModelEvent::Fault {
                    caller,
                    fault: ClientFault::CutOff { .. },
                } => {
                    raw_partitions.push((*caller, tick, rank_in_tick));
                    rank_in_tick += 1;
                    (None, false)
                }
                ModelEvent::RedisClock { fault } => {
                    match fault {
                        ClockFault::Jumped { .. } => raw_clock_jumps.push((tick, rank_in_tick)),
                        ClockFault::SlewStarted { .. } => {
                            raw_clock_slews.push((tick, rank_in_tick))
                        }
                    }
                    rank_in_tick += 1;
                    (None, false)
                }
                _ => (None, false),
            };
            if let (Some(caller), true) = (caller, is_op) {
                // Only a point reached since the caller's previous operation can hold it
                // back; the first operation is held back by the start offset.
                let reached = points[caller].len();
                let point = (!op_points[caller].is_empty() && reached > points_at_op[caller])
                    .then(|| reached - 1);
                points_at_op[caller] = reached;
                op_points[caller].push(point);
                raw_ops.push(Raw {
                    caller,
                    tick,
                    rank: rank_in_tick,
                });
                max_rank = max_rank.max(rank_in_tick);
                rank_in_tick += 1;
            }
        }
        let backlog_after = world.replica.as_ref().map_or(0, |r| r.backlog.len());
        for _ in backlog_before..backlog_after.max(backlog_before) {
            effects_made.push((tick, rank_in_tick.saturating_sub(1)));
        }
    }
    let ms_per_tick =
        MIN_MS_PER_TICK.max((2 * (max_rank + 1) * OPERATION_GAP_MS + 20).div_ceil(10) * 10);
    let at = |tick: u64, rank: u64| tick * ms_per_tick + rank * OPERATION_GAP_MS;
    let mut operations: Vec<Vec<Operation>> = vec![Vec::new(); callers];
    let mut next_op = vec![0usize; callers];
    for raw in &raw_ops {
        let index = next_op[raw.caller];
        next_op[raw.caller] += 1;
        operations[raw.caller].push(Operation {
            target_ms: at(raw.tick, raw.rank),
            point: op_points[raw.caller][index],
        });
    }
    let effects = effects_made
        .iter()
        .enumerate()
        .map(|(index, (tick, rank))| {
            let made = at(*tick, *rank);
            let done = (index < lost_from.min(replicated.len()))
                .then(|| replicated.get(index).map(|(t, r)| at(*t, *r)))
                .flatten();
            (made, done)
        })
        .collect();
    Ok(Plan {
        points,
        operations,
        failovers: raw_failovers.iter().map(|(t, r)| at(*t, *r)).collect(),
        restarts: raw_restarts.iter().map(|(t, r)| at(*t, *r)).collect(),
        evictions: raw_evictions.iter().map(|(t, r)| at(*t, *r)).collect(),
        clock_jumps: raw_clock_jumps.iter().map(|(t, r)| at(*t, *r)).collect(),
        clock_slews: raw_clock_slews.iter().map(|(t, r)| at(*t, *r)).collect(),
        partitions: raw_partitions
            .iter()
            .map(|(caller, t, r)| (*caller, at(*t, *r)))
            .collect(),
        effects,
        ms_per_tick,
    })
}

/// The replica's lag: longer than any replication the path made, shorter than any effect it
/// lost had to wait for the failover.
fn replication_lag_ms(plan: &Plan) -> Result<u64, String> {
    let Some(failover) = plan.failovers.first().copied() else {
        return Ok(Network::default().replication_lag_ms);
    };
    let longest_kept = plan
        .effects
        .iter()
        .filter_map(|(made, done)| done.map(|d| d.saturating_sub(*made)))
        .max();
    let shortest_lost = plan
        .effects
        .iter()
        .filter(|(made, done)| done.is_none() && *made < failover)
        .map(|(made, _)| failover - made)
        .min();
    match (longest_kept, shortest_lost) {
        (None, None) => Ok(plan.ms_per_tick * 1_000),
        (Some(kept), None) => Ok(kept.max(1)),
        (None, Some(_)) => Ok(plan.ms_per_tick * 1_000),
        (Some(kept), Some(lost)) if kept < lost => Ok((kept + lost) / 2),
        (Some(kept), Some(lost)) => Err(format!(
            "the path replicates a change after {kept}ms but loses one {lost}ms old; no single replication lag does both"
        )),
    }
}

/// The scenario for the current pauses.
fn scenario(config: &CheckConfig, plan: &Plan, pauses: &[Vec<u64>]) -> Result<Scenario, String> {
    let mut scenario = config.scenario();
    let s = plan.ms_per_tick;
    scenario.name = format!("model {}", config.safeguard.name());
    scenario.params.ttl_ms = config.ttl_ticks * s + s / 2;
    scenario.params.work_ms = (config.work_ticks * s).saturating_sub(s / 2);
    scenario.network = Network {
        latency_min_us: 0,
        latency_max_us: 0,
        replication_lag_ms: replication_lag_ms(plan)?,
    };
    scenario.start_offsets_ms = plan
        .operations
        .iter()
        .map(|ops| ops.first().map_or(0, |op| op.target_ms))
        .collect();
    for (caller, caller_pauses) in pauses.iter().enumerate() {
        for (index, pause_ms) in caller_pauses.iter().enumerate() {
            if *pause_ms > 0 {
                scenario.faults.push(Fault::Pause {
                    caller: caller as u32 + 1,
                    at: plan.points[caller][index],
                    pause_ms: *pause_ms,
                });
            }
        }
    }
    for at_ms in &plan.failovers {
        scenario.faults.push(Fault::Failover { at_ms: *at_ms });
    }
    for at_ms in &plan.restarts {
        scenario.faults.push(Fault::RedisRestart { at_ms: *at_ms });
    }
    for at_ms in &plan.evictions {
        scenario
            .faults
            .push(Fault::EvictFenceCounter { at_ms: *at_ms });
    }
    // A partition of the model lasts for the rest of the run; the simulated one past the
    // run's end (a cut-off caller's 3 s read timeout included).
    for (caller, at_ms) in &plan.partitions {
        scenario.faults.push(Fault::Partition {
            a: Host::Caller(*caller as u32 + 1),
            b: Host::Redis,
            from_ms: *at_ms,
            until_ms: at_ms + PARTITION_MS,
            one_way: false,
        });
    }
    let clock = config.redis_clock;
    let ms = |ticks: u64| i64::try_from(ticks.saturating_mul(s)).unwrap_or(i64::MAX);
    for at_ms in &plan.clock_jumps {
        scenario.faults.push(Fault::ClockJump {
            host: Host::Redis,
            at_ms: *at_ms,
            jump_ms: ms(clock.jump_ms),
        });
    }
    for at_ms in &plan.clock_slews {
        scenario.faults.push(Fault::ClockSlew {
            host: Host::Redis,
            at_ms: *at_ms,
            offset_ms: ms(clock.slew_ms),
            rate_ppm: u64::from(clock.slew_rate_ppm),
        });
    }
    Ok(scenario)
}

/// When each caller reached each named point in a simulated run, ms after the release.
fn arrivals(report: &RunReport, callers: usize) -> Vec<Vec<u64>> {
    let mut arrivals = vec![Vec::new(); callers];
    for event in &report.events {
        let Some(caller) = event
            .host
            .strip_prefix("app-")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        if matches!(event.what, What::Reached { .. } | What::PauseStart { .. })
            && (1..=callers).contains(&caller)
        {
            arrivals[caller - 1].push((event.t_us.max(0) as u64).div_ceil(1_000));
        }
    }
    arrivals
}

/// Turns a model counterexample into a simulated run that reproduces it (see the module
/// docs). The run is returned whether or not it breaks the ledger; check
/// [`RunReport::broken`].
pub fn translate(config: &CheckConfig, actions: &[Action]) -> Result<Translation, String> {
    // The simulation's reply faults strike a caller's first request of a kind (`run
    // --lose-reply`, `--drop-connection`); a model path may strike any request, and turning
    // that into a schedule is not built: say so rather than replay something else.
    if let Some(number) = actions
        .iter()
        .position(|a| matches!(a, Action::LoseReply(_) | Action::DropConnection(_)))
    {
        return Err(format!(
            "step {} of the counterexample ({}) loses a Redis reply: turning a model path with a \
             reply fault into a simulated schedule is not built (`run --lose-reply` and \
             `--drop-connection` strike a caller's first request of a kind); step through the \
             path with `leaselab check ... --explore` instead",
            number + 1,
            crate::trace::format::action_text(actions[number])
        ));
    }
    if config.restarts_from_aof {
        return Err(format!(
            "the path's Redis crashes reload an append-only file (appendfsync {}); turning it \
             into a simulated schedule is not built (the simulation's crash, `run aof-crash \
             --appendfsync {}`, shows the same fault)",
            config.aof_appendfsync.name(),
            config.aof_appendfsync.name()
        ));
    }
    if config.redis_drift_percent != 0 {
        return Err(format!(
            "the path runs under a Redis clock {:+}% off; turning it into a simulated schedule \
             is not built (the simulation's drift, `run --clock-drift redis:RATE`, shows the \
             same fault)",
            config.redis_drift_percent
        ));
    }
    if config.safeguard.redis_nodes() > 0 {
        return Err(format!(
            "{} runs on {} independent Redis nodes: turning a model path over nodes into a \
             simulated schedule is not built (the matrix's simulated half has its own trace); \
             step through the path with `leaselab check ... --explore` instead",
            config.safeguard.name(),
            config.safeguard.redis_nodes()
        ));
    }
    let plan = plan(config, actions)?;
    let mut held: Vec<Vec<bool>> = plan
        .operations
        .iter()
        .map(|ops| ops.iter().map(|op| op.point.is_some()).collect())
        .collect();
    let mut best = fit(config, &plan, &held)?;
    if !best.report.broken() {
        return Ok(best);
    }
    // Let go of every hold the violation does not need: the same ledger line and the same
    // blamed spends without it. What is left are the pauses that make the failure.
    let same = |a: &RunReport, b: &RunReport| {
        a.broken()
            && a.ledger.line() == b.ledger.line()
            && a.ledger.stale_spends == b.ledger.stale_spends
    };
    let mut runs = best.runs;
    for caller in 0..held.len() {
        for index in 0..held[caller].len() {
            if !held[caller][index] {
                continue;
            }
            held[caller][index] = false;
            let trial = fit(config, &plan, &held)?;
            runs += trial.runs;
            if same(&trial.report, &best.report) {
                best = trial;
            } else {
                held[caller][index] = true;
            }
        }
    }
    best.runs = runs;
    Ok(best)
}

/// Fits the pauses of the held operations to their target times (see the module docs).
fn fit(config: &CheckConfig, plan: &Plan, held: &[Vec<bool>]) -> Result<Translation, String> {
    let callers = config.callers as usize;
    let mut pauses: Vec<Vec<u64>> = plan.points.iter().map(|p| vec![0; p.len()]).collect();
    let mut runs = 0;
    loop {
        let scenario = scenario(config, plan, &pauses)?;
        let report = leaselab_sim::run::run(&scenario, SEED).map_err(|e| e.0)?;
        runs += 1;
        let arrived = arrivals(&report, callers);
        let mut changed = false;
        for (caller, ops) in plan.operations.iter().enumerate() {
            for (index, op) in ops.iter().enumerate() {
                let Some(point) = op.point else { continue };
                let Some(at) = arrived[caller].get(point) else {
                    continue;
                };
                let wanted = if held[caller][index] {
                    op.target_ms.saturating_sub(*at)
                } else {
                    0
                };
                if pauses[caller][point] != wanted {
                    pauses[caller][point] = wanted;
                    changed = true;
                    // Later arrivals of this caller move with this pause: fit them next run.
                    break;
                }
            }
        }
        if !changed || runs >= MAX_FITS {
            return Ok(Translation {
                scenario,
                ms_per_tick: plan.ms_per_tick,
                report,
                runs,
            });
        }
    }
}

/// The trace of a translated counterexample of `property` found by the check `config`.
pub fn trace_file(
    config: &CheckConfig,
    property: &str,
    actions: &[Action],
    translation: &Translation,
) -> super::format::TraceFile {
    super::format::TraceFile::from_report(
        &translation.report,
        super::format::Origin::Model {
            check: Box::new(super::format::CheckSpec::from_config(config)),
            property: property.to_string(),
            path: actions
                .iter()
                .map(|a| super::format::action_text(*a))
                .collect(),
            ms_per_tick: translation.ms_per_tick,
        },
    )
}
