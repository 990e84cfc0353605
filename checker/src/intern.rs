//! One copy of each distinct caller, Redis and PostgreSQL among the worlds a search holds.
//!
//! A world keeps its callers and stand-ins behind `Arc`s and copies one only when a step
//! changes it, so a world shares everything but what its last step touched with its parent.
//! Siblings and cousins, though, reach equal callers or stand-ins through different steps
//! and would each keep their own copy: a level of a million worlds would hold a million
//! PostgreSQL stand-ins, of which a few hundred differ. The [`Interner`] makes every world
//! the search produces point at one shared copy of each distinct part (found by its
//! fingerprint, confirmed by equality; a caller by the fingerprint symmetry reduction gave
//! it), so a stored world costs little more than its own
//! small struct. A caller's cached symmetry fingerprint lives in the shared copy, so it is
//! computed once per distinct caller rather than once per world.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use leaselab_model::fingerprint::{fingerprint, BuildPassThrough};
use leaselab_model::postgres::Postgres;
use leaselab_model::redis::Redis;
use leaselab_model::world::{Memo, Replica, Slot, World};

const SHARDS: usize = 16;

/// The distinct values of one kind, by fingerprint (several for a fingerprint that does not
/// tell them apart: a type's hash may leave out what never differs in practice).
struct Pool<T> {
    shards: Vec<Mutex<Shard<T>>>,
}

/// The values of a pool whose fingerprints fall in one shard.
type Shard<T> = HashMap<u64, Vec<Arc<T>>, BuildPassThrough>;

impl<T: Hash + Eq> Pool<T> {
    fn new() -> Pool<T> {
        Pool {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(HashMap::default()))
                .collect(),
        }
    }

    /// Replaces `value` by the pool's copy of an equal value, or makes it the pool's copy.
    fn intern(&self, value: &mut Arc<T>) {
        self.intern_as(value, fingerprint(&**value));
    }

    /// [`Pool::intern`] with the value's fingerprint given (any hash that equal values
    /// share).
    fn intern_as(&self, value: &mut Arc<T>, fp: u64) {
        let mut shard = self.shards[(fp >> 60) as usize % SHARDS]
            .lock()
            .expect("no thread panics while interning");
        let known = shard.entry(fp).or_default();
        match known
            .iter()
            .find(|known| Arc::ptr_eq(known, value) || ***known == **value)
        {
            Some(known) => *value = Arc::clone(known),
            None => known.push(Arc::clone(value)),
        }
    }

    /// Lets go of the values no world holds any more (only the pool points at them).
    fn prune(&self) {
        for shard in &self.shards {
            let mut shard = shard.lock().expect("no thread panics while interning");
            shard.retain(|_, known| {
                known.retain(|value| Arc::strong_count(value) > 1);
                !known.is_empty()
            });
        }
    }

    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| {
                let shard = shard.lock().expect("no thread panics while interning");
                shard.values().map(Vec::len).sum::<usize>()
            })
            .sum()
    }
}

/// The pools of one search.
pub struct Interner {
    slots: Pool<Slot>,
    redis: Pool<Memo<Redis>>,
    replicas: Pool<Replica>,
    postgres: Pool<Memo<Postgres>>,
}

impl Default for Interner {
    fn default() -> Interner {
        Interner::new()
    }
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Interner({} values)", self.len())
    }
}

impl Interner {
    /// Empty pools.
    pub fn new() -> Interner {
        Interner {
            slots: Pool::new(),
            redis: Pool::new(),
            replicas: Pool::new(),
            postgres: Pool::new(),
        }
    }

    /// Makes every part of `world` the pools' copy (for an initial world).
    pub fn intern_all(&self, world: &mut World) {
        for index in 0..world.slots.len() {
            let fp = world.slot_fingerprint(index);
            self.slots.intern_as(&mut world.slots[index], fp);
        }
        self.redis.intern(&mut world.redis);
        if let Some(replica) = &mut world.replica {
            self.replicas.intern(replica);
        }
        self.postgres.intern(&mut world.postgres);
    }

    /// Makes the parts of `world` that differ from `parent`'s (by pointer) the pools' copies.
    /// The parts it shares with `parent` are already shared.
    pub fn intern(&self, world: &mut World, parent: &World) {
        for index in 0..world.slots.len() {
            if !Arc::ptr_eq(&world.slots[index], &parent.slots[index]) {
                // The fingerprint the state's hash gave the slot (equal slots share it).
                let fp = world.slot_fingerprint(index);
                self.slots.intern_as(&mut world.slots[index], fp);
            }
        }
        if !Arc::ptr_eq(&world.redis, &parent.redis) {
            self.redis.intern(&mut world.redis);
        }
        if let Some(replica) = &mut world.replica {
            let same = parent
                .replica
                .as_ref()
                .is_some_and(|before| Arc::ptr_eq(replica, before));
            if !same {
                self.replicas.intern(replica);
            }
        }
        if !Arc::ptr_eq(&world.postgres, &parent.postgres) {
            self.postgres.intern(&mut world.postgres);
        }
    }

    /// Lets go of every value that no world holds any more: between two levels of a
    /// breadth-first search, the parts of the worlds dropped with the level done. Without
    /// it the pools keep every caller and stand-in the search ever made, which outgrows the
    /// two levels of worlds it holds (interning only shares; what a world drops is not
    /// needed for any later world to be interned correctly).
    pub fn prune(&self) {
        self.slots.prune();
        self.redis.prune();
        self.replicas.prune();
        self.postgres.prune();
    }

    /// How many distinct values the pools hold.
    pub fn len(&self) -> usize {
        self.slots.len() + self.redis.len() + self.replicas.len() + self.postgres.len()
    }

    /// True when the pools are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CheckConfig;
    use leaselab_model::postgres::WriteGuard;
    use leaselab_model::safeguard::Safeguard;

    /// The worlds within `depth` steps of `init`, each step interned when `interner` is given.
    fn worlds(init: &World, depth: usize, interner: Option<&Interner>) -> Vec<World> {
        let mut all = vec![init.clone()];
        let mut level = vec![init.clone()];
        let mut actions = Vec::new();
        for _ in 0..depth {
            let mut next_level = Vec::new();
            for world in &level {
                actions.clear();
                world.actions(&mut actions);
                for &action in &actions {
                    let mut next = world.clone();
                    next.apply(action);
                    if let Some(interner) = interner {
                        interner.intern(&mut next, world);
                    }
                    next_level.push(next);
                }
            }
            all.extend(next_level.iter().cloned());
            level = next_level;
        }
        all
    }

    /// Pairs of equal callers or stand-ins among `worlds` that are separate copies.
    fn separate_copies(worlds: &[World]) -> usize {
        let mut count = 0;
        for (i, x) in worlds.iter().enumerate() {
            for y in &worlds[i + 1..] {
                for (a, b) in x.slots.iter().zip(&y.slots) {
                    count += usize::from(a == b && !Arc::ptr_eq(a, b));
                }
                count += usize::from(x.redis == y.redis && !Arc::ptr_eq(&x.redis, &y.redis));
                count +=
                    usize::from(x.postgres == y.postgres && !Arc::ptr_eq(&x.postgres, &y.postgres));
            }
        }
        count
    }

    /// Worlds reaching equal callers or stand-ins by different steps share one copy of each,
    /// and are the same worlds as without interning.
    #[test]
    fn equal_parts_reached_by_different_steps_are_shared() {
        let mut config = CheckConfig::new(Safeguard::Fenced {
            guard: WriteGuard::FenceBelowAndEqual,
        });
        config.symmetry = false;
        let init = config.world().expect("a valid world");
        let interner = Interner::new();
        let mut interned = init.clone();
        interner.intern_all(&mut interned);
        let shared = worlds(&interned, 4, Some(&interner));
        let plain = worlds(&init, 4, None);
        assert_eq!(shared, plain);
        assert!(
            separate_copies(&plain) > 0,
            "the worlds reach equal parts apart"
        );
        assert_eq!(separate_copies(&shared), 0);
        assert!(!interner.is_empty());
    }

    /// Pruning lets go of exactly the values no world holds: the worlds kept still share
    /// one copy of each part, and interning after a prune shares again.
    #[test]
    fn prune_keeps_what_worlds_hold() {
        let config = CheckConfig::new(Safeguard::Fenced {
            guard: WriteGuard::FenceBelowAndEqual,
        });
        let init = config.world().expect("a valid world");
        let interner = Interner::new();
        let mut interned = init.clone();
        interner.intern_all(&mut interned);
        let all = worlds(&interned, 4, Some(&interner));
        let before = interner.len();
        let kept: Vec<World> = all.iter().step_by(7).cloned().collect();
        drop(all);
        // The stand-in steps this thread remembered hold stand-ins of their own.
        leaselab_model::world::forget_remembered_steps();
        interner.prune();
        let after = interner.len();
        assert!(after < before, "{after} values left of {before}");
        let mut distinct: Vec<*const ()> = Vec::new();
        for world in &kept {
            for slot in &world.slots {
                distinct.push(Arc::as_ptr(slot).cast());
            }
            distinct.push(Arc::as_ptr(&world.redis).cast());
            if let Some(replica) = &world.replica {
                distinct.push(Arc::as_ptr(replica).cast());
            }
            distinct.push(Arc::as_ptr(&world.postgres).cast());
        }
        distinct.push(Arc::as_ptr(&interned.redis).cast());
        distinct.push(Arc::as_ptr(&interned.postgres).cast());
        for slot in &interned.slots {
            distinct.push(Arc::as_ptr(slot).cast());
        }
        distinct.sort();
        distinct.dedup();
        assert_eq!(after, distinct.len(), "the pools hold what the worlds hold");
        let again = worlds(&kept[kept.len() - 1], 2, Some(&interner));
        assert_eq!(separate_copies(&again), 0);
    }
}
