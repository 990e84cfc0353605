//! Runs a check and judges every property.

use serde::Serialize;
use stateright::{Checker, Expectation, HasDiscoveries, Model};

use leaselab_model::world::{Action, World};

pub use crate::bfs::Stop;
use crate::bfs::{self, BfsOptions, Counters};
use crate::model::{LeaseModel, SETTLED};
use crate::narrate;

/// How the state space is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Breadth-first, level by level ([`crate::bfs`]): shortest counterexamples, the same on
    /// any number of threads.
    Bfs,
    /// stateright's depth-first checker: less memory, counterexamples not the shortest.
    Dfs,
}

/// How to run a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// The search.
    pub strategy: Strategy,
    /// Worker threads.
    pub threads: usize,
    /// Stop after this many distinct states (none: run to the end). Properties not decided
    /// by then are INCONCLUSIVE.
    pub max_unique: Option<u64>,
    /// Stop once every "always" property is violated (sweeps); "sometimes" ones may then be
    /// left undecided.
    pub stop_at_violation: bool,
    /// Stop once each of these properties has its (counter)example (a suite judging only
    /// them; breadth-first only); the others may then be left undecided. Empty: no such stop.
    pub stop_once_found: &'static [&'static str],
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            strategy: Strategy::Bfs,
            threads: 1,
            max_unique: None,
            stop_at_violation: false,
            stop_once_found: &[],
        }
    }
}

/// A property's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PropertyVerdict {
    /// An "always" property holds in every state within the bound.
    Safe,
    /// An "always" property fails in some state; there is a counterexample.
    Violated,
    /// A "sometimes" property holds in some state; there is an example.
    Found,
    /// A "sometimes" property holds in no state within the bound.
    NotFound,
    /// The search stopped before it could tell.
    Inconclusive,
}

impl PropertyVerdict {
    /// `SAFE`, `VIOLATED`, `FOUND`, `NOT FOUND` or `INCONCLUSIVE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PropertyVerdict::Safe => "SAFE",
            PropertyVerdict::Violated => "VIOLATED",
            PropertyVerdict::Found => "FOUND",
            PropertyVerdict::NotFound => "NOT FOUND",
            PropertyVerdict::Inconclusive => "INCONCLUSIVE",
        }
    }
}

/// One property's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PropertyReport {
    /// Its name.
    pub name: &'static str,
    /// `always` or `sometimes`.
    pub kind: &'static str,
    /// The verdict.
    pub verdict: PropertyVerdict,
    /// How the verdict was established, in words.
    pub basis: String,
    /// The (counter)example's actions, when there is one.
    #[serde(skip)]
    pub path: Option<Vec<Action>>,
    /// Its number of steps.
    pub steps: Option<usize>,
    /// The (counter)example as numbered lines in the tutorial's words.
    pub trace: Vec<String>,
    /// What its last state shows (the ledger, the lock's believers).
    pub outcome: Vec<String>,
    /// The path in stateright Explorer's `#/steps/...` form.
    pub explorer_path: Option<String>,
}

/// A check's results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// The safeguard's name.
    pub safeguard: String,
    /// The bound, in words.
    pub bound: String,
    /// The search used.
    pub strategy: Strategy,
    /// Threads used.
    pub threads: usize,
    /// States generated, repeats included.
    pub states_generated: u64,
    /// Distinct states.
    pub unique_states: u64,
    /// The deepest path explored.
    pub max_depth: usize,
    /// True when every reachable state within the bound was visited.
    pub exhausted: bool,
    /// Why the search stopped before it visited every state (none when exhausted).
    pub stopped: Option<Stop>,
    /// The limit on distinct states it ran under (none: no limit).
    pub max_states: Option<u64>,
    /// Each property's verdict, "always" ones first.
    pub properties: Vec<PropertyReport>,
}

impl CheckReport {
    /// True when no "always" property is violated.
    pub fn holds(&self) -> bool {
        !self
            .properties
            .iter()
            .any(|p| p.verdict == PropertyVerdict::Violated)
    }

    /// A property's report by name.
    pub fn property(&self, name: &str) -> Option<&PropertyReport> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// A property's verdict by name.
    pub fn verdict(&self, name: &str) -> Option<PropertyVerdict> {
        self.property(name).map(|p| p.verdict)
    }

    /// The verdict over `names` (the properties that decide): VIOLATED when one is violated,
    /// else INCONCLUSIVE when one is undecided, else SAFE. Names the report does not have
    /// are ignored.
    pub fn verdict_over(&self, names: &[&str]) -> PropertyVerdict {
        let verdicts: Vec<PropertyVerdict> = self
            .properties
            .iter()
            .filter(|p| names.contains(&p.name))
            .map(|p| p.verdict)
            .collect();
        if verdicts.contains(&PropertyVerdict::Violated) {
            PropertyVerdict::Violated
        } else if verdicts.contains(&PropertyVerdict::Inconclusive) {
            PropertyVerdict::Inconclusive
        } else {
            PropertyVerdict::Safe
        }
    }

    /// Why the first undecided property among `names` is undecided.
    pub fn reason_over(&self, names: &[&str]) -> Option<String> {
        self.properties
            .iter()
            .find(|p| names.contains(&p.name) && p.verdict == PropertyVerdict::Inconclusive)
            .map(|p| p.basis.clone())
    }

    /// The names of the "always" properties.
    pub fn always_names(&self) -> Vec<&'static str> {
        self.properties
            .iter()
            .filter(|p| p.kind == "always")
            .map(|p| p.name)
            .collect()
    }

    /// The length of a property's (counter)example.
    pub fn steps(&self, name: &str) -> Option<usize> {
        self.property(name).and_then(|p| p.steps)
    }
}

/// Checks `model`, updating `counters` as it goes.
pub fn run(model: &LeaseModel, options: RunOptions, counters: &Counters) -> CheckReport {
    let (generated, unique, max_depth, stopped, mut found) = match options.strategy {
        Strategy::Bfs => {
            let outcome = bfs::check(
                model,
                BfsOptions {
                    threads: options.threads,
                    max_unique: options.max_unique,
                    stop_at_violation: options.stop_at_violation,
                    stop_once_found: options.stop_once_found,
                },
                counters,
            );
            let found: Vec<(&'static str, Vec<Action>)> = outcome
                .discoveries
                .into_iter()
                .map(|(name, discovery)| (name, discovery.actions))
                .collect();
            (
                outcome.generated,
                outcome.unique,
                outcome.max_depth,
                outcome.stopped,
                found,
            )
        }
        Strategy::Dfs => {
            let mut builder = model
                .clone()
                .checker()
                .threads(options.threads.max(1))
                .finish_when(HasDiscoveries::All);
            if let Some(max) = options.max_unique {
                builder = builder.target_state_count(max as usize);
            }
            let checker = builder.spawn_dfs().join();
            let found: Vec<(&'static str, Vec<Action>)> = checker
                .discoveries()
                .into_iter()
                .map(|(name, path)| (name, path.into_actions()))
                .collect();
            let unique = checker.unique_state_count() as u64;
            let generated = checker.state_count() as u64;
            counters
                .generated
                .store(generated, std::sync::atomic::Ordering::Relaxed);
            counters
                .unique
                .store(unique, std::sync::atomic::Ordering::Relaxed);
            let all = found.len() == model.properties().len();
            let capped = options.max_unique.is_some_and(|max| generated >= max);
            let stopped = if all {
                Some(Stop::Decided)
            } else if capped {
                Some(Stop::StateLimit)
            } else {
                None
            };
            (generated, unique, checker.max_depth(), stopped, found)
        }
    };
    // The stand-in steps this thread remembered keep stand-ins of this search alive.
    leaselab_model::world::forget_remembered_steps();
    let exhausted = stopped.is_none();
    let bound = model.config().bound_text();
    let witnessed = found.iter().any(|(name, _)| *name == SETTLED)
        || !model.property_names().contains(&SETTLED);
    let vacuous = vacuity_text(model);
    // A bound in which no second spend can overlap the first proves nothing either.
    let too_short = overlap_text(model);
    let undecided = match stopped {
        Some(Stop::StateLimit) => {
            let limit = options.max_unique.unwrap_or(unique);
            format!(
                "stopped by the state limit ({limit} states) after {unique} distinct states at \
                 depth {max_depth}; raise it with --max-states (e.g. --max-states {}; memory \
                 grows with it) or shrink the bound",
                limit.saturating_mul(10)
            )
        }
        Some(Stop::Requested) => {
            format!("stopped on request after {unique} distinct states at depth {max_depth}")
        }
        Some(Stop::Decided) => {
            "not needed: the search stopped once the properties it was run for were decided"
                .to_string()
        }
        None => format!("not decided within the first {unique} states"),
    };
    let properties = model
        .properties()
        .into_iter()
        .map(|property| {
            let always = property.expectation == Expectation::Always;
            let path = found
                .iter()
                .position(|(name, _)| *name == property.name)
                .map(|at| found.swap_remove(at).1);
            let (verdict, basis) = match (&path, always) {
                (Some(path), true) => (
                    PropertyVerdict::Violated,
                    shortest_text(options.strategy, "counterexample", path.len()),
                ),
                (Some(path), false) => (
                    PropertyVerdict::Found,
                    shortest_text(options.strategy, "example", path.len()),
                ),
                (None, true) if exhausted && witnessed && too_short.is_none() => (
                    PropertyVerdict::Safe,
                    format!("exhaustive to bound: {bound}"),
                ),
                (None, true) if exhausted && witnessed => (
                    PropertyVerdict::Inconclusive,
                    too_short.clone().unwrap_or_default(),
                ),
                (None, true) if exhausted => (PropertyVerdict::Inconclusive, vacuous.clone()),
                (None, false) if exhausted => (
                    PropertyVerdict::NotFound,
                    format!("exhaustive to bound: {bound}"),
                ),
                (None, _) => (PropertyVerdict::Inconclusive, undecided.clone()),
            };
            let init = model.initial_world();
            let (trace, outcome, explorer_path) = match &path {
                Some(actions) => {
                    let last = replay(init, actions);
                    (
                        narrate::narrate(init, actions),
                        narrate::summary(&last),
                        Some(explorer_path(init, actions)),
                    )
                }
                None => (Vec::new(), Vec::new(), None),
            };
            PropertyReport {
                name: property.name,
                kind: if always { "always" } else { "sometimes" },
                verdict,
                basis,
                steps: path.as_ref().map(Vec::len),
                path,
                trace,
                outcome,
                explorer_path,
            }
        })
        .collect();
    CheckReport {
        safeguard: model.config().safeguard.name(),
        bound,
        strategy: options.strategy,
        threads: options.threads.max(1),
        states_generated: generated,
        unique_states: unique,
        max_depth,
        exhausted,
        stopped,
        max_states: options.max_unique,
        properties,
    }
}

/// Why a search that found no counterexample and no run in which every caller settled proves
/// nothing: the bound cut every run short.
fn vacuity_text(model: &LeaseModel) -> String {
    let config = model.config();
    let hint = match config.timing().and_then(|t| t.all_settled_tick) {
        Some(all) if all > config.horizon() => {
            format!(
                "; callers one after another settle by {all} ticks: use --horizon {all} or more"
            )
        }
        _ => "; lengthen --horizon or relax the other bounds".to_string(),
    };
    format!(
        "vacuous: no run within the bound ({}) lets every caller settle, so no violation could \
         show{hint}",
        config.bound_text()
    )
}

/// Why a search that found no counterexample proves nothing when the horizon ends before a
/// second caller can settle a spend inside the first one's critical section (see
/// [`crate::config::Timing::overlap_tick`]); None when the horizon is long enough, or when no
/// such overlap can happen at all.
fn overlap_text(model: &LeaseModel) -> Option<String> {
    let config = model.config();
    let overlap_tick = config.timing()?.overlap_tick?;
    let horizon = config.horizon();
    (horizon < overlap_tick).then(|| {
        format!(
            "too short to overlap: within a horizon of {horizon} ticks no caller can settle a \
             spend while another stalls inside its critical section (the earliest is at \
             {overlap_tick} ticks: the first caller stalls after its read, the second gets \
             through, e.g. once the {} tick lease expires), so no lost update could show; use \
             --horizon {overlap_tick} or more",
            config.ttl_ticks
        )
    })
}

fn shortest_text(strategy: Strategy, what: &str, steps: usize) -> String {
    match strategy {
        Strategy::Bfs => format!("shortest {what}: {steps} steps"),
        Strategy::Dfs => format!("{what} of {steps} steps (depth-first: not the shortest)"),
    }
}

/// The world after `actions`.
pub fn replay(init: &World, actions: &[Action]) -> World {
    let mut world = init.clone();
    for action in actions {
        world.apply(*action);
    }
    world
}

/// The path as action indices from the (only) initial state: the Explorer's `#/steps/0/...`.
fn explorer_path(init: &World, actions: &[Action]) -> String {
    let mut world = init.clone();
    let mut parts = vec!["0".to_string()];
    let mut enabled = Vec::new();
    for action in actions {
        enabled.clear();
        world.actions(&mut enabled);
        let index = enabled
            .iter()
            .position(|a| a == action)
            .expect("a recorded action is enabled");
        parts.push(index.to_string());
        world.apply(*action);
    }
    parts.join("/")
}
