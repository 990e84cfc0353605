//! Replaying a trace: run its scenario with its seed again and compare.
//!
//! - **reproduced**: the same verdict and the same digest — the very same run;
//! - **behaviour changed**: the same verdict, but a different event log (the simulation or
//!   a safeguard changed; the failure is still there);
//! - **no longer fails**: the verdict changed (the bug was fixed, or the trace went stale);
//! - **inconclusive**: the run reached no verdict (time limit, or nothing spent), so it
//!   neither reproduces nor refutes the trace.
//!
//! A trace from a model counterexample is also replayed on the model: its path must still
//! violate its property.

use leaselab_checker::model::{ledger_holds, mutual_exclusion};
use leaselab_checker::{LeaseModel, LEDGER, LOCK_CHANGED_BY_HOLDER, MUTUAL_EXCLUSION};
use leaselab_model::world::World;
use leaselab_sim::run::RunReport;

use super::load::{ModelPath, Trace};

/// How a replay compares with the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Same verdict, same digest.
    Reproduced,
    /// Same verdict, different event log.
    BehaviourChanged {
        /// The new digest.
        digest: String,
    },
    /// The run did not reach a verdict (it stopped at its time limit with callers still
    /// running, or no spend reached the storage): it neither reproduces nor refutes the trace.
    Inconclusive {
        /// The new ledger line.
        line: String,
    },
    /// The verdict is not the recorded one any more.
    NoLongerFails {
        /// The new ledger line.
        line: String,
    },
}

/// What the model says about a model counterexample's path today.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelReplay {
    /// The path still violates its property.
    StillViolates,
    /// The path can no longer be taken (an action is not enabled at some step).
    NotEnabled {
        /// The 1-based step.
        step: usize,
    },
    /// The path runs, but its last state satisfies the property.
    Holds,
}

/// The result of replaying one trace.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The comparison.
    pub outcome: Outcome,
    /// The new run.
    pub report: RunReport,
    /// For a model counterexample, the model's verdict on its path.
    pub model: Option<ModelReplay>,
}

impl Replay {
    /// True when the trace reproduces: same verdict, same digest, and (for a model
    /// counterexample) the path still violates its property.
    pub fn reproduced(&self) -> bool {
        self.outcome == Outcome::Reproduced
            && self
                .model
                .as_ref()
                .is_none_or(|m| *m == ModelReplay::StillViolates)
    }

    /// One line: `reproduced (BROKEN, digest 3f2a9c01b2d4)`, ...
    pub fn describe(&self, trace: &Trace) -> String {
        let short = |d: &str| d.get(..12).unwrap_or(d).to_string();
        let mut text = match &self.outcome {
            Outcome::Reproduced => format!(
                "reproduced: {} (digest {})",
                self.report.ledger.line(),
                short(self.report.digest())
            ),
            Outcome::BehaviourChanged { digest } => format!(
                "behaviour changed: still {} but the event log differs (digest {} was {}); \
                 check the new run with `leaselab show`, then `leaselab replay --update` to keep it",
                self.report.ledger.verdict.as_str(),
                short(digest),
                short(&trace.file.digest)
            ),
            Outcome::NoLongerFails { line } => format!(
                "no longer fails: recorded {}, now {line} (fixed, or the trace is stale)",
                trace.file.ledger.line()
            ),
            Outcome::Inconclusive { line } => format!(
                "INCONCLUSIVE: recorded {}, but the run reached no verdict ({line}; it stopped \
                 at its time limit with callers still running, or no spend reached the storage)",
                trace.file.ledger.line()
            ),
        };
        match &self.model {
            Some(ModelReplay::StillViolates) | None => {}
            Some(ModelReplay::NotEnabled { step }) => text.push_str(&format!(
                "; the model counterexample cannot be taken any more (step {step} is not enabled)"
            )),
            Some(ModelReplay::Holds) => {
                text.push_str("; the model counterexample no longer violates its property")
            }
        }
        text
    }
}

/// Re-runs `trace`'s scenario with its seed and compares.
pub fn replay(trace: &Trace) -> Result<Replay, crate::exit::UsageError> {
    let report = leaselab_sim::run::run(&trace.scenario, trace.file.seed).map_err(|error| {
        crate::exit::UsageError::new(format!(
            "{}: the simulation refuses the trace's scenario: {error}",
            trace.path.display()
        ))
    })?;
    let outcome = if report.ledger.verdict != trace.ledger.verdict
        && report.verdict() == leaselab_sim::run::RunVerdict::Inconclusive
    {
        Outcome::Inconclusive {
            line: report.ledger.line(),
        }
    } else if report.ledger.verdict != trace.ledger.verdict {
        Outcome::NoLongerFails {
            line: report.ledger.line(),
        }
    } else if report.digest() != trace.file.digest {
        Outcome::BehaviourChanged {
            digest: report.digest().to_string(),
        }
    } else {
        Outcome::Reproduced
    };
    let model = trace.model.as_ref().map(replay_model);
    Ok(Replay {
        outcome,
        report,
        model,
    })
}

/// Replays a model counterexample on the model.
pub fn replay_model(path: &ModelPath) -> ModelReplay {
    let Ok(model) = LeaseModel::new(path.config) else {
        return ModelReplay::NotEnabled { step: 0 };
    };
    let mut world: World = model.initial_world().clone();
    let mut enabled = Vec::new();
    for (index, action) in path.actions.iter().enumerate() {
        enabled.clear();
        world.actions(&mut enabled);
        if !enabled.contains(action) {
            return ModelReplay::NotEnabled { step: index + 1 };
        }
        world.apply(*action);
    }
    if violates(&world, &path.property) {
        ModelReplay::StillViolates
    } else {
        ModelReplay::Holds
    }
}

fn violates(world: &World, property: &str) -> bool {
    match property {
        LEDGER => !ledger_holds(world),
        MUTUAL_EXCLUSION => !mutual_exclusion(world),
        LOCK_CHANGED_BY_HOLDER => world.trespass.is_some(),
        _ => false,
    }
}
