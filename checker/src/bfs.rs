//! A breadth-first checker for any stateright [`Model`], level by level on several threads.
//!
//! Why not stateright's own BFS: its threads interleave levels, and it keeps overwriting a
//! property's discovery with later (possibly longer) paths, so the counterexample it reports
//! is not always a shortest one. This checker finishes each depth before the next, on any
//! number of threads, and orders every level canonically — by the parent's rank, then by the
//! action's index, exactly the order a single-threaded FIFO search would visit states in.
//! So its discoveries are shortest paths, and the same ones for any thread count, run or
//! machine: the reported path is the first shortest one in the order of
//! [`Model::actions`].
//!
//! It keeps a fingerprint per visited state (see [`crate::fingerprint`]) plus 8 bytes per
//! state for path reconstruction, and the states of two levels at a time. States whose
//! fingerprints are equal are one state to it: a model whose hash ignores symmetric
//! differences gets symmetry reduction for free, and the checker keeps, of a level's
//! symmetric variants, the one its canonical parent produced, so that every reported path
//! replays exactly.
//!
//! `eventually` properties are not supported (none of leaselab's models has one).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use stateright::{Expectation, Model};

use crate::fingerprint::{fingerprint, BuildPassThrough};

/// Counters a caller may watch while a search runs (from another thread).
#[derive(Debug, Default)]
pub struct Counters {
    /// States generated, repeats included.
    pub generated: AtomicU64,
    /// Distinct states found.
    pub unique: AtomicU64,
    /// The depth being explored.
    pub depth: AtomicU64,
    /// How many states the level being expanded holds.
    pub level: AtomicU64,
    /// Set from outside (say, when memory runs short) to stop the search soon; the outcome is
    /// then not exhaustive and says [`Stop::Requested`].
    pub stop: AtomicBool,
}

impl Counters {
    /// Zeroes the counts (not a stop request) before another search.
    pub fn reset(&self) {
        self.generated.store(0, Ordering::Relaxed);
        self.unique.store(0, Ordering::Relaxed);
        self.depth.store(0, Ordering::Relaxed);
        self.level.store(0, Ordering::Relaxed);
    }

    /// Asks a running search to stop at its next chunk of states.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Why a search stopped before it had visited every reachable state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every property was decided (nothing left to learn).
    Decided,
    /// The limit on distinct states ([`BfsOptions::max_unique`]) was reached.
    StateLimit,
    /// [`Counters::request_stop`] was called.
    Requested,
}

/// How to search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfsOptions {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Stop after this many distinct states (none: no limit). The search checks it as it
    /// goes, so it overshoots by at most a chunk of states per thread.
    pub max_unique: Option<u64>,
    /// Stop as soon as every "always" property is violated, whether or not the "sometimes"
    /// ones were decided (sweeps that only ask "is it broken?").
    pub stop_at_violation: bool,
}

impl Default for BfsOptions {
    fn default() -> BfsOptions {
        BfsOptions {
            threads: 1,
            max_unique: None,
            stop_at_violation: false,
        }
    }
}

/// A path from an initial state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovery<A> {
    /// Which initial state (index into [`Model::init_states`]).
    pub init: usize,
    /// The actions taken, in order.
    pub actions: Vec<A>,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BfsOutcome<A> {
    /// States generated, repeats included.
    pub generated: u64,
    /// Distinct states visited.
    pub unique: u64,
    /// The deepest level reached (initial states are depth 0).
    pub max_depth: usize,
    /// True when every reachable state within the model's boundary was visited.
    pub exhausted: bool,
    /// Why it stopped early (none when exhausted).
    pub stopped: Option<Stop>,
    /// For each property with a discovery (a counterexample of an `always`, an example of a
    /// `sometimes`), the first shortest path to it.
    pub discoveries: BTreeMap<&'static str, Discovery<A>>,
}

/// Where a visited state came from: its depth, its parent's rank in the level above, and the
/// index of the action that led here.
#[derive(Clone, Copy, Debug)]
struct Entry {
    level: u32,
    parent: u32,
    action: u32,
}

const SHARDS: usize = 64;

struct Seen {
    shards: Vec<Mutex<HashMap<u64, Entry, BuildPassThrough>>>,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(HashMap::default()))
                .collect(),
        }
    }

    fn shard(&self, fp: u64) -> &Mutex<HashMap<u64, Entry, BuildPassThrough>> {
        &self.shards[(fp >> 58) as usize % SHARDS]
    }

    /// Records `fp`, reached at `entry.level`; true when it is new. A state reached again on
    /// the same level keeps the smallest (parent, action).
    fn offer(&self, fp: u64, entry: Entry) -> bool {
        let mut shard = self
            .shard(fp)
            .lock()
            .expect("no worker panics holding a shard");
        match shard.entry(fp) {
            std::collections::hash_map::Entry::Vacant(vacant) => {
                vacant.insert(entry);
                true
            }
            std::collections::hash_map::Entry::Occupied(mut occupied) => {
                let known = occupied.get_mut();
                if known.level == entry.level
                    && (entry.parent, entry.action) < (known.parent, known.action)
                {
                    *known = entry;
                }
                false
            }
        }
    }

    fn get(&self, fp: u64) -> Entry {
        *self
            .shard(fp)
            .lock()
            .expect("no worker panics holding a shard")
            .get(&fp)
            .expect("a recorded state")
    }
}

/// What one worker produced on one level.
struct Produced<S> {
    /// New states with their fingerprint and the (parent, action) that produced them here.
    states: Vec<(S, u64, u32, u32)>,
    /// (property index, fingerprint) of new states that decide a property.
    found: Vec<(usize, u64)>,
    generated: u64,
}

/// Explores `model` breadth-first until every property is decided, the state space is
/// exhausted, or `options.max_unique` states were visited.
pub fn check<M>(model: &M, options: BfsOptions, counters: &Counters) -> BfsOutcome<M::Action>
where
    M: Model + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone,
{
    let properties = model.properties();
    assert!(
        properties
            .iter()
            .all(|p| p.expectation != Expectation::Eventually),
        "eventually properties are not supported by this checker"
    );
    let decided: Vec<AtomicBool> = properties.iter().map(|_| AtomicBool::new(false)).collect();
    let decides = |state: &M::State, index: usize| -> bool {
        let property = &properties[index];
        let holds = (property.condition)(model, state);
        match property.expectation {
            Expectation::Always => !holds,
            _ => holds,
        }
    };
    let seen = Seen::new();
    // levels[d][rank] = (parent rank, action index); level 0 ranks are init indices.
    let mut levels: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut discoveries: BTreeMap<&'static str, (usize, u32)> = BTreeMap::new();
    let mut generated = 0u64;
    let mut unique = 0u64;

    let mut frontier: Vec<M::State> = Vec::new();
    let mut level0 = Vec::new();
    for (index, state) in model.init_states().into_iter().enumerate() {
        if !model.within_boundary(&state) {
            continue;
        }
        generated += 1;
        let fp = fingerprint(&state);
        let entry = Entry {
            level: 0,
            parent: index as u32,
            action: 0,
        };
        if seen.offer(fp, entry) {
            let rank = frontier.len() as u32;
            for (p, property) in properties.iter().enumerate() {
                if !discoveries.contains_key(property.name) && decides(&state, p) {
                    discoveries.insert(property.name, (0, rank));
                    decided[p].store(true, Ordering::Relaxed);
                }
            }
            level0.push((index as u32, 0));
            frontier.push(state);
        }
    }
    unique += frontier.len() as u64;
    levels.push(level0);
    counters.generated.store(generated, Ordering::Relaxed);
    counters.unique.store(unique, Ordering::Relaxed);

    let threads = options.threads.max(1);
    let always: Vec<&'static str> = properties
        .iter()
        .filter(|p| p.expectation == Expectation::Always)
        .map(|p| p.name)
        .collect();
    let over_limit = || {
        counters.stop.load(Ordering::Relaxed)
            || options
                .max_unique
                .is_some_and(|max| counters.unique.load(Ordering::Relaxed) >= max)
    };
    let mut stopped = None;
    let mut depth = 0usize;
    while !frontier.is_empty() {
        let all_violated = !always.is_empty() && always.iter().all(|n| discoveries.contains_key(n));
        if discoveries.len() == properties.len() || (options.stop_at_violation && all_violated) {
            stopped = Some(Stop::Decided);
            break;
        }
        if counters.stop.load(Ordering::Relaxed) {
            stopped = Some(Stop::Requested);
            break;
        }
        if options.max_unique.is_some_and(|max| unique >= max) {
            stopped = Some(Stop::StateLimit);
            break;
        }
        counters.depth.store(depth as u64 + 1, Ordering::Relaxed);
        counters
            .level
            .store(frontier.len() as u64, Ordering::Relaxed);
        let next_level = depth as u32 + 1;
        let cursor = AtomicUsize::new(0);
        let work = |_: usize| -> Produced<M::State> {
            let mut produced = Produced {
                states: Vec::new(),
                found: Vec::new(),
                generated: 0,
            };
            let mut actions = Vec::new();
            const CHUNK: usize = 64;
            loop {
                if over_limit() {
                    break;
                }
                let start = cursor.fetch_add(CHUNK, Ordering::Relaxed);
                if start >= frontier.len() {
                    break;
                }
                let end = (start + CHUNK).min(frontier.len());
                let mut generated_here = 0u64;
                for (rank, state) in frontier[start..end].iter().enumerate() {
                    let rank = (start + rank) as u32;
                    model.actions(state, &mut actions);
                    for (action_index, action) in actions.drain(..).enumerate() {
                        let Some(next) = model.next_state(state, action) else {
                            continue;
                        };
                        if !model.within_boundary(&next) {
                            continue;
                        }
                        generated_here += 1;
                        let fp = fingerprint(&next);
                        let entry = Entry {
                            level: next_level,
                            parent: rank,
                            action: action_index as u32,
                        };
                        if seen.offer(fp, entry) {
                            for (p, flag) in decided.iter().enumerate() {
                                if !flag.load(Ordering::Relaxed) && decides(&next, p) {
                                    produced.found.push((p, fp));
                                }
                            }
                            produced.states.push((next, fp, rank, action_index as u32));
                            counters.unique.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                produced.generated += generated_here;
                counters
                    .generated
                    .fetch_add(generated_here, Ordering::Relaxed);
            }
            produced
        };
        let results: Vec<Produced<M::State>> = if threads == 1 {
            vec![work(0)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|worker| scope.spawn(move || work(worker)))
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| handle.join().expect("a checker thread panicked"))
                    .collect()
            })
        };
        // Order the new level canonically: by (parent rank, action index).
        let mut states: Vec<Option<M::State>> = Vec::new();
        let mut keys: Vec<(u32, u32, u32)> = Vec::new();
        let mut fps: Vec<u64> = Vec::new();
        let mut found: Vec<(usize, u64)> = Vec::new();
        for produced in results {
            generated += produced.generated;
            found.extend(produced.found);
            for (state, fp, parent, action) in produced.states {
                let entry = seen.get(fp);
                let state = if (entry.parent, entry.action) == (parent, action) {
                    state
                } else {
                    // Another parent reached a state with the same fingerprint (a symmetric
                    // variant, when the hash ignores caller identity): keep the canonical
                    // parent's own successor, so that paths replay exactly.
                    let parent_state = &frontier[entry.parent as usize];
                    let mut enabled = Vec::new();
                    model.actions(parent_state, &mut enabled);
                    let action = enabled.swap_remove(entry.action as usize);
                    model
                        .next_state(parent_state, action)
                        .expect("the recorded action leads somewhere")
                };
                keys.push((entry.parent, entry.action, states.len() as u32));
                states.push(Some(state));
                fps.push(fp);
            }
        }
        keys.sort_unstable();
        let mut ranks: HashMap<u64, u32, BuildPassThrough> = HashMap::default();
        for (_, fp) in &found {
            ranks.insert(*fp, 0);
        }
        let mut level = Vec::with_capacity(keys.len());
        let mut next_frontier = Vec::with_capacity(keys.len());
        for (rank, (parent, action, index)) in keys.into_iter().enumerate() {
            let index = index as usize;
            if let Some(slot) = ranks.get_mut(&fps[index]) {
                *slot = rank as u32;
            }
            level.push((parent, action));
            next_frontier.push(states[index].take().expect("each state is taken once"));
        }
        for (p, fp) in found {
            let rank = ranks[&fp];
            let name = properties[p].name;
            let best = discoveries.entry(name).or_insert((depth + 1, rank));
            if best.0 == depth + 1 && rank < best.1 {
                best.1 = rank;
            }
            decided[p].store(true, Ordering::Relaxed);
        }
        unique += next_frontier.len() as u64;
        let cut_short = cursor.load(Ordering::Relaxed) < frontier.len();
        if !next_frontier.is_empty() {
            depth += 1;
            levels.push(level);
        }
        frontier = next_frontier;
        if cut_short {
            // The level was left half expanded: what was found stands (every state found is
            // recorded with its path), but the search is over.
            stopped = Some(if counters.stop.load(Ordering::Relaxed) {
                Stop::Requested
            } else {
                Stop::StateLimit
            });
            break;
        }
    }
    counters.generated.store(generated, Ordering::Relaxed);
    counters.unique.store(unique, Ordering::Relaxed);

    let discoveries = discoveries
        .into_iter()
        .map(|(name, (level, rank))| (name, rebuild(model, &levels, level, rank)))
        .collect();
    BfsOutcome {
        generated,
        unique,
        max_depth: depth,
        exhausted: stopped.is_none(),
        stopped,
        discoveries,
    }
}

/// The path to the state of rank `rank` on `level`, replayed from its initial state.
fn rebuild<M>(
    model: &M,
    levels: &[Vec<(u32, u32)>],
    level: usize,
    rank: u32,
) -> Discovery<M::Action>
where
    M: Model,
    M::Action: Clone,
{
    let mut indices = Vec::with_capacity(level);
    let mut rank = rank;
    for depth in (1..=level).rev() {
        let (parent, action) = levels[depth][rank as usize];
        indices.push(action as usize);
        rank = parent;
    }
    indices.reverse();
    let init = levels[0][rank as usize].0 as usize;
    let mut state = model
        .init_states()
        .into_iter()
        .nth(init)
        .expect("the initial state exists");
    let mut actions = Vec::with_capacity(indices.len());
    let mut enabled = Vec::new();
    for index in indices {
        model.actions(&state, &mut enabled);
        let action = enabled.swap_remove(index);
        enabled.clear();
        state = model
            .next_state(&state, action.clone())
            .expect("a recorded action changes the state");
        actions.push(action);
    }
    Discovery { init, actions }
}
