//! Runs a check and judges every property.

use serde::Serialize;
use stateright::{Checker, Expectation, HasDiscoveries, Model};

use crate::world::{Action, World};

use super::bfs::{self, BfsOptions, Counters};
use super::model::LeaseModel;
use super::narrate;

/// How the state space is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Breadth-first, level by level ([`super::bfs`]): shortest counterexamples, the same on
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
    /// Stop after this many distinct states (none: run to the end).
    pub max_unique: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            strategy: Strategy::Bfs,
            threads: 1,
            max_unique: None,
        }
    }
}

/// A property's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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

    /// The length of a property's (counter)example.
    pub fn steps(&self, name: &str) -> Option<usize> {
        self.property(name).and_then(|p| p.steps)
    }
}

/// Checks `model`, updating `counters` as it goes.
pub fn run(model: &LeaseModel, options: RunOptions, counters: &Counters) -> CheckReport {
    let (generated, unique, max_depth, exhausted, mut found) = match options.strategy {
        Strategy::Bfs => {
            let outcome = bfs::check(
                model,
                BfsOptions {
                    threads: options.threads,
                    max_unique: options.max_unique,
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
                outcome.exhausted,
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
            (
                generated,
                unique,
                checker.max_depth(),
                !all && !capped,
                found,
            )
        }
    };
    let bound = model.config().bound_text();
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
                (None, true) if exhausted => (
                    PropertyVerdict::Safe,
                    format!("exhaustive to bound: {bound}"),
                ),
                (None, false) if exhausted => (
                    PropertyVerdict::NotFound,
                    format!("exhaustive to bound: {bound}"),
                ),
                (None, _) => (
                    PropertyVerdict::Inconclusive,
                    format!("not decided within the first {unique} states"),
                ),
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
        properties,
    }
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
