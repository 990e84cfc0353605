//! One search for a whole frontier cell: the least pause that breaks the ledger, and the
//! least that lets every caller settle.
//!
//! With bounded pauses a world counts, per caller, the ticks it was paused; the count only
//! grows along a path, and the pause bound `p` only disables the clock tick that would take a
//! count past `p`. So the worlds reachable with pauses up to `p` are exactly the worlds
//! reachable with pauses up to the horizon whose largest count is at most `p` (their *pause*,
//! [`pause_of`]), and a property of a world does not depend on `p`.
//!
//! The search therefore visits worlds in order of their pause: every world of pause 0, then
//! every world of pause 1, and so on (a successor's pause is never smaller than its
//! parent's, so it goes into its own pause's queue). When the worlds of pause `p` are all
//! visited, the check "pauses up to `p`" is complete; the first world that breaks the ledger
//! ends the search, its pause the least that does (`v`). Noting also the least pause of a
//! world in which every caller settled (`w`) answers every check of the cell: with pauses up
//! to `p` the ledger is violated when `v ≤ p`, else safe when `w ≤ p`, else the bound lets
//! nothing play out. It costs about as much as the largest check it replaces.

use std::collections::{HashSet, VecDeque};

use stateright::Model;

use leaselab_model::fingerprint::{fingerprint, BuildPassThrough};
use leaselab_model::world::World;

use crate::bfs::{Counters, Levels, Stop};
use crate::model::{every_caller_settled, ledger_holds, LeaseModel};

/// A world's pause: the most ticks any caller was paused on the way to it.
pub fn pause_of(world: &World) -> u64 {
    world
        .slots
        .iter()
        .map(|slot| slot.paused_ms)
        .max()
        .unwrap_or(0)
}

/// What one search of a cell found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pauses {
    /// The least pause of a world breaking the ledger (none: no pause up to the horizon
    /// breaks it).
    pub violation: Option<u64>,
    /// The least pause of a world in which every caller settled, when below
    /// [`Pauses::violation`] (none: no such world).
    pub witness: Option<u64>,
    /// Distinct worlds visited.
    pub unique: u64,
    /// Why the search stopped before it decided the violation (none: it decided it).
    pub stopped: Option<Stop>,
}

/// Searches `model` (whose pauses must be bounded by its horizon) for its least pauses,
/// within `max_unique` distinct worlds, updating `counters` and honouring a stop request.
pub fn least_pauses(model: &LeaseModel, max_unique: Option<u64>, counters: &Counters) -> Pauses {
    use std::sync::atomic::Ordering::Relaxed;
    let config = model.config();
    let horizon = config.horizon();
    assert_eq!(
        config.max_pause_ticks,
        Some(horizon),
        "the search covers every pause up to the horizon"
    );
    let buckets = usize::try_from(horizon).expect("a horizon of at most 10000 ticks") + 1;
    let mut queues: Vec<VecDeque<World>> = (0..buckets).map(|_| VecDeque::new()).collect();
    let mut seen: HashSet<u64, BuildPassThrough> = HashSet::default();
    let mut witness: Option<u64> = None;
    let mut unique = 0u64;
    let mut generated = 0u64;
    let mut actions = Vec::new();
    let note = |world: &World, witness: &mut Option<u64>| -> bool {
        let pause = pause_of(world);
        if every_caller_settled(world) {
            *witness = Some(witness.map_or(pause, |w| w.min(pause)));
        }
        !ledger_holds(world)
    };
    let done = |violation: Option<u64>, witness: Option<u64>, unique, stopped| Pauses {
        violation,
        witness: witness.filter(|&w| violation.is_none_or(|v| w < v)),
        unique,
        stopped,
    };
    for init in model.init_states() {
        if model.within_boundary(&init) && seen.insert(fingerprint(&init)) {
            unique += 1;
            let pause = pause_of(&init);
            if note(&init, &mut witness) {
                return done(Some(pause), witness, unique, None);
            }
            queues[pause as usize].push_back(init);
        }
    }
    // Worlds expanded so far: every `PRUNE_EVERY` of them, the shared callers and stand-ins
    // that only expanded (dropped) worlds held are let go of.
    const PRUNE_EVERY: u64 = 1 << 16;
    let mut expanded = 0u64;
    for pause in 0..buckets {
        counters.depth.store(pause as u64, Relaxed);
        while let Some(world) = queues[pause].pop_front() {
            expanded += 1;
            if expanded.is_multiple_of(PRUNE_EVERY) {
                model.prune_shared();
            }
            if counters.stop_requested() {
                return done(None, witness, unique, Some(Stop::Requested));
            }
            if max_unique.is_some_and(|max| unique >= max) {
                return done(None, witness, unique, Some(Stop::StateLimit));
            }
            actions.clear();
            model.actions(&world, &mut actions);
            for action in actions.drain(..) {
                let Some(mut next) = model.successor(&world, action) else {
                    continue;
                };
                if !model.within_boundary(&next) {
                    continue;
                }
                generated += 1;
                if !seen.insert(fingerprint(&next)) {
                    continue;
                }
                model.keep(&mut next, &world);
                unique += 1;
                let next_pause = pause_of(&next);
                debug_assert!(next_pause >= pause as u64, "pauses never shrink");
                if note(&next, &mut witness) {
                    // Every world of a smaller pause was visited: this pause is the least.
                    counters.unique.store(unique, Relaxed);
                    counters.generated.store(generated, Relaxed);
                    return done(Some(next_pause), witness, unique, None);
                }
                queues[next_pause as usize].push_back(next);
            }
            counters.unique.store(unique, Relaxed);
            counters.generated.store(generated, Relaxed);
            counters.level.store(queues[pause].len() as u64, Relaxed);
        }
    }
    done(None, witness, unique, None)
}
