//! One search for a whole frontier cell: the least pause that breaks the ledger, and the
//! least that lets every caller settle.
//!
//! With bounded pauses a world counts, per caller, the ticks it was paused; the count only
//! grows along a path, and the pause bound `p` only disables the clock tick that would take a
//! count past `p`. So the worlds reachable with pauses up to `p` are exactly the worlds
//! reachable with pauses up to the horizon whose largest count is at most `p` (their
//! *pause*), and a property of a world does not depend on `p`.
//!
//! The search therefore visits worlds in order of their pause: every world of pause 0, then
//! every world of pause 1, and so on (a successor's pause is never smaller than its
//! parent's, so it goes into its own pause's queue). When the worlds of pause `p` are all
//! visited, the check "pauses up to `p`" is complete; the least pause of a world that breaks
//! the ledger (`v`) is known once every world of a smaller pause was visited. Noting also the
//! least pause of a world in which every caller settled (`w`) answers every check of the
//! cell: with pauses up to `p` the ledger is violated when `v ≤ p`, else safe when `w ≤ p`,
//! else the bound lets nothing play out.
//!
//! A world's pause is kept beside it (its queue), and its callers' counts are rewritten as
//! slacks relative to that pause ([`World::relative_pauses`]): how many more ticks each may
//! be paused before the world's pause rises, capped at the ticks left. Worlds equal but for
//! their pause then share a fingerprint, and the one of the least pause stands for all: each
//! of its futures is a future of theirs with a pause no larger. A world reached again at a
//! smaller pause than before is queued again there (and its first copy skipped). This
//! collapses the many worlds that differ only in how long their callers were paused in all.
//!
//! The search judges the ledger alone, so a caller that finished keeps only what that
//! judgement reads: its outcome's kind and whether its write landed
//! ([`World::forget_finished`]); worlds that differ only in how their finished callers got
//! there are one. Together the two cut the `--ttl 3..4 --work 2` sweep from 8.9 million
//! worlds to 355,535 (docs/speed.md, "Frontier worlds that differ in nothing ahead").
//! `checker/tests/checker_frontier.rs` compares the least pauses with those of a plain
//! search by their definition, and every cell with one check per pause.

use std::collections::hash_map::{Entry, HashMap};
use std::collections::VecDeque;

use stateright::Model;

use leaselab_model::fingerprint::{fingerprint, BuildPassThrough};
use leaselab_model::world::{SlotState, World};

use crate::bfs::{Counters, Levels, Stop};
use crate::model::{every_caller_settled, ledger_holds, LeaseModel};

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
    // Worlds to expand, by pause, with their fingerprints; their pause counts are relative
    // to the pause ([`World::relative_pauses`]), so a world is also every world with the same
    // slacks at a larger pause, whose futures it covers with pauses no larger.
    let mut queues: Vec<VecDeque<(u64, World)>> = (0..buckets).map(|_| VecDeque::new()).collect();
    // The least pause each world was reached at.
    let mut seen: HashMap<u64, u64, BuildPassThrough> = HashMap::default();
    let mut violation: Option<u64> = None;
    let mut witness: Option<u64> = None;
    let mut unique = 0u64;
    let mut generated = 0u64;
    let mut actions = Vec::new();
    let done = |violation: Option<u64>, witness: Option<u64>, unique, stopped| Pauses {
        violation,
        witness: witness.filter(|&w| violation.is_none_or(|v| w < v)),
        unique,
        stopped,
    };
    // Notes what a world reached at `pause` shows; true if it breaks the ledger.
    let note = |world: &World, pause: u64, witness: &mut Option<u64>| -> bool {
        if every_caller_settled(world) {
            *witness = Some(witness.map_or(pause, |w| w.min(pause)));
        }
        !ledger_holds(world)
    };
    // Keeps `world`, reached at `pause` from `parent`, unless it was reached at a pause no
    // larger before; true if it was never reached before.
    let reach = |mut world: World,
                 parent: Option<&World>,
                 seen: &mut HashMap<u64, u64, BuildPassThrough>,
                 pause: u64,
                 queues: &mut [VecDeque<(u64, World)>],
                 witness: &mut Option<u64>,
                 violation: &mut Option<u64>|
     -> bool {
        let key = fingerprint(&world);
        let fresh = match seen.entry(key) {
            Entry::Vacant(entry) => {
                entry.insert(pause);
                true
            }
            Entry::Occupied(mut entry) => {
                if *entry.get() <= pause {
                    return false;
                }
                entry.insert(pause);
                false
            }
        };
        if let Some(parent) = parent {
            model.keep(&mut world, parent);
        }
        if note(&world, pause, witness) {
            *violation = Some(violation.map_or(pause, |v| v.min(pause)));
        } else {
            queues[pause as usize].push_back((key, world));
        }
        fresh
    };
    let inits = model.init_states();
    // What a finished caller's core goes back to ([`World::forget_finished`]).
    let initial = inits.first().expect("a model has an initial world").clone();
    for mut init in inits {
        if model.within_boundary(&init) {
            let pause = init.relative_pauses();
            let fresh = reach(
                init,
                None,
                &mut seen,
                pause,
                &mut queues,
                &mut witness,
                &mut violation,
            );
            unique += u64::from(fresh);
        }
    }
    // Worlds expanded so far: every `PRUNE_EVERY` of them, the shared callers and stand-ins
    // that only expanded (dropped) worlds held are let go of.
    const PRUNE_EVERY: u64 = 1 << 16;
    let mut expanded = 0u64;
    for pause in 0..buckets as u64 {
        counters.depth.store(pause, Relaxed);
        // Every world of a smaller pause was visited: a violation at this pause is the least.
        if violation.is_some_and(|v| v <= pause) {
            counters.unique.store(unique, Relaxed);
            counters.generated.store(generated, Relaxed);
            return done(violation, witness, unique, None);
        }
        while let Some((key, world)) = queues[pause as usize].pop_front() {
            if seen.get(&key).is_some_and(|&least| least < pause) {
                continue; // reached again at a smaller pause, and expanded there
            }
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
                let next_pause = pause + next.rebase_pauses();
                for index in 0..next.slots.len() {
                    if next.slots[index].state == SlotState::Done
                        && world.slots[index].state != SlotState::Done
                    {
                        next.forget_finished(index, &initial);
                    }
                }
                unique += u64::from(reach(
                    next,
                    Some(&world),
                    &mut seen,
                    next_pause,
                    &mut queues,
                    &mut witness,
                    &mut violation,
                ));
                if violation == Some(pause) {
                    counters.unique.store(unique, Relaxed);
                    counters.generated.store(generated, Relaxed);
                    return done(violation, witness, unique, None);
                }
            }
            counters.unique.store(unique, Relaxed);
            counters.generated.store(generated, Relaxed);
            counters
                .level
                .store(queues[pause as usize].len() as u64, Relaxed);
        }
    }
    counters.unique.store(unique, Relaxed);
    counters.generated.store(generated, Relaxed);
    done(violation, witness, unique, None)
}
