//! Shrinking a failing trace: the smallest scenario found that still breaks the ledger.
//!
//! Greedy and deterministic: starting from the trace's scenario and seed, try smaller
//! variants in a fixed order — fewer callers (half of them, then one less at a time), fewer
//! faults, shorter pauses (halving, then trimming), earlier starts, shorter work — keep the
//! first variant whose run is still BROKEN, and start over until no variant breaks. The seed
//! stays the same, so the result replays like any trace.

use leaselab_model::fault::{Fault, Host};
use leaselab_model::scenario::Scenario;
use leaselab_sim::run::RunReport;

/// How big a failing run is; smaller is better, compared in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size {
    /// Callers.
    pub callers: u32,
    /// Faults.
    pub faults: usize,
    /// All pauses together, ms.
    pub pause_ms: u64,
    /// Events in the log (the run's steps).
    pub events: usize,
    /// All start offsets together, ms.
    pub start_ms: u64,
    /// The work, ms.
    pub work_ms: u64,
}

impl Size {
    /// The size of `report`'s run.
    pub fn of(report: &RunReport) -> Size {
        Size {
            callers: report.scenario.callers,
            faults: report.scenario.faults.len(),
            pause_ms: report
                .scenario
                .faults
                .iter()
                .map(|fault| match fault {
                    Fault::Pause { pause_ms, .. } => *pause_ms,
                    _ => 0,
                })
                .sum(),
            events: report.events.len(),
            start_ms: report.scenario.start_offsets_ms.iter().sum(),
            work_ms: report.scenario.params.work_ms,
        }
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} caller(s), {} fault(s), {}ms of pauses, {} events",
            self.callers, self.faults, self.pause_ms, self.events
        )
    }
}

/// What shrinking found.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest failing run found.
    pub report: RunReport,
    /// The size before.
    pub before: Size,
    /// The size after.
    pub after: Size,
    /// Simulated runs tried.
    pub runs: usize,
}

/// The most runs one shrink tries.
pub const MAX_RUNS: usize = 600;

/// `scenario` without caller `caller` (1-based): later callers move up one, and their
/// start offsets and faults with them; the removed caller's faults go.
pub fn without_caller(scenario: &Scenario, caller: u32) -> Scenario {
    let mut smaller = scenario.clone();
    smaller.callers -= 1;
    if (caller as usize) <= smaller.start_offsets_ms.len() {
        smaller.start_offsets_ms.remove(caller as usize - 1);
    }
    let renumber = |host: Host| match host {
        Host::Caller(n) if n > caller => Some(Host::Caller(n - 1)),
        Host::Caller(n) if n == caller => None,
        other => Some(other),
    };
    smaller.faults = scenario
        .faults
        .iter()
        .filter_map(|fault| match *fault {
            Fault::Pause {
                caller: who,
                at,
                pause_ms,
            } => match who.cmp(&caller) {
                std::cmp::Ordering::Less => Some(fault.clone()),
                std::cmp::Ordering::Equal => None,
                std::cmp::Ordering::Greater => Some(Fault::Pause {
                    caller: who - 1,
                    at,
                    pause_ms,
                }),
            },
            Fault::Partition {
                a,
                b,
                from_ms,
                until_ms,
                one_way,
            } => Some(Fault::Partition {
                a: renumber(a)?,
                b: renumber(b)?,
                from_ms,
                until_ms,
                one_way,
            }),
            _ => Some(fault.clone()),
        })
        .collect();
    smaller
}

/// The variants of `scenario` to try, most promising (biggest cut) first.
fn candidates(scenario: &Scenario) -> Vec<Scenario> {
    let mut out = Vec::new();
    // Fewer callers: keep the first half, then drop one at a time (the last first).
    if scenario.callers > 2 {
        let mut half = scenario.clone();
        while half.callers > scenario.callers.div_ceil(2) {
            half = without_caller(&half, half.callers);
        }
        out.push(half);
    }
    if scenario.callers > 1 {
        for caller in (1..=scenario.callers).rev() {
            out.push(without_caller(scenario, caller));
        }
    }
    // Fewer faults.
    for index in 0..scenario.faults.len() {
        let mut smaller = scenario.clone();
        smaller.faults.remove(index);
        out.push(smaller);
    }
    // Shorter pauses: halve, then trim by a tenth.
    for index in 0..scenario.faults.len() {
        if let Fault::Pause { pause_ms, .. } = scenario.faults[index] {
            for shorter in [pause_ms / 2, pause_ms - pause_ms.div_ceil(10)] {
                if shorter < pause_ms {
                    let mut smaller = scenario.clone();
                    if let Fault::Pause { pause_ms, .. } = &mut smaller.faults[index] {
                        *pause_ms = shorter;
                    }
                    out.push(smaller);
                }
            }
        }
    }
    // Earlier starts.
    for index in 0..scenario.start_offsets_ms.len() {
        let offset = scenario.start_offsets_ms[index];
        for earlier in [0, offset / 2, offset - offset.div_ceil(10)] {
            if earlier < offset {
                let mut smaller = scenario.clone();
                smaller.start_offsets_ms[index] = earlier;
                out.push(smaller);
            }
        }
    }
    // Shorter work.
    let work = scenario.params.work_ms;
    for shorter in [0, work / 2] {
        if shorter < work {
            let mut smaller = scenario.clone();
            smaller.params.work_ms = shorter;
            out.push(smaller);
        }
    }
    out
}

/// Shrinks the failing run of `scenario` with `seed`. `progress` hears about every smaller
/// failing run found. Errors when the run does not fail to begin with.
pub fn shrink(
    scenario: &Scenario,
    seed: u64,
    mut progress: impl FnMut(&RunReport),
) -> Result<Shrunk, String> {
    let run = |scenario: &Scenario| leaselab_sim::run::run(scenario, seed).map_err(|e| e.0);
    let mut best = run(scenario)?;
    if !best.broken() {
        return Err(format!(
            "the run does not fail ({}); there is nothing to shrink",
            best.ledger.line()
        ));
    }
    let before = Size::of(&best);
    let mut runs = 1;
    'outer: loop {
        for candidate in candidates(&best.scenario) {
            if runs >= MAX_RUNS {
                break 'outer;
            }
            if candidate.validate().is_err() || leaselab_sim::faults::validate(&candidate).is_err()
            {
                continue;
            }
            let Ok(report) = run(&candidate) else {
                continue;
            };
            runs += 1;
            if report.broken() && Size::of(&report) < Size::of(&best) {
                progress(&report);
                best = report;
                continue 'outer;
            }
        }
        break;
    }
    Ok(Shrunk {
        after: Size::of(&best),
        report: best,
        before,
        runs,
    })
}
