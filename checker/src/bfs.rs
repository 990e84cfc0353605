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
use std::sync::{mpsc, Arc, Mutex};

use stateright::{Expectation, Model, Property};

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

    /// A stop was requested, or a safeguard's Lua script had to be stopped (its instruction
    /// budget or memory limit): a search of a world in which a real Redis would be stuck on
    /// that script shows nothing about the safeguard, so it ends as soon as it can.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || leaselab_model::redis::lua::first_stopped_script().is_some()
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
    /// Stop as soon as each of these properties has its discovery (a suite that judges
    /// only them); empty: no such stop. The others are left undecided.
    pub stop_once_found: &'static [&'static str],
}

impl Default for BfsOptions {
    fn default() -> BfsOptions {
        BfsOptions {
            threads: 1,
            max_unique: None,
            stop_at_violation: false,
            stop_once_found: &[],
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

/// Where a state of the level being built came from: its parent's rank in the level above,
/// and the index of the action that led here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Origin {
    parent: u32,
    action: u32,
}

const SHARDS: usize = 64;

/// One shard of the visited states: each fingerprint with where it came from (one table, so
/// that offering a state probes memory once), [`DONE`] for the states of the levels done; and
/// the fingerprints found on the level being built, to mark them done when it is closed.
#[derive(Default)]
struct Shard {
    states: HashMap<u64, Origin, BuildPassThrough>,
    level: Vec<u64>,
}

/// The origin of a state found on a level done (its real origin is in the level's records):
/// no origin on the level being built is later than it.
const DONE: Origin = Origin {
    parent: u32::MAX,
    action: u32::MAX,
};

/// What [`Seen::offer`] made of a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Offered {
    /// Not seen before.
    New,
    /// Already found on the level being built, from a later origin: this origin replaces it.
    Better,
    /// Seen on an earlier level, or on this one from an earlier origin.
    Known,
}

/// The visited states, by fingerprint, in shards locked separately (the shard is chosen by the
/// fingerprint's top bits, the slot inside it by its low bits).
struct Seen {
    shards: Vec<Mutex<Shard>>,
    /// Some state of the level being built was found again from an earlier origin
    /// ([`Offered::Better`]: only workers side by side find states out of order).
    improved: AtomicBool,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            improved: AtomicBool::new(false),
        }
    }

    fn shard(&self, fp: u64) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[(fp >> 58) as usize % SHARDS]
            .lock()
            .expect("no worker panics holding a shard")
    }

    /// Records `fp`, reached from `origin` on the level being built. A state reached again
    /// on the same level keeps the smallest origin (the canonical one).
    fn offer(&self, fp: u64, origin: Origin) -> Offered {
        debug_assert!(origin < DONE, "an origin on the level being built");
        let mut shard = self.shard(fp);
        match shard.states.entry(fp) {
            std::collections::hash_map::Entry::Vacant(vacant) => {
                vacant.insert(origin);
                shard.level.push(fp);
                Offered::New
            }
            std::collections::hash_map::Entry::Occupied(mut occupied) => {
                let known = occupied.get_mut();
                if origin < *known && *known != DONE {
                    *known = origin;
                    self.improved.store(true, Ordering::Relaxed);
                    Offered::Better
                } else {
                    Offered::Known
                }
            }
        }
    }

    /// Where `fp`, a state of the level being built, came from (its canonical origin).
    fn origin(&self, fp: u64) -> Origin {
        let origin = *self
            .shard(fp)
            .states
            .get(&fp)
            .expect("a state of the level being built");
        debug_assert!(origin != DONE, "a state of the level being built");
        origin
    }

    /// Ends the level being built: its states join the levels done.
    fn close_level(&self) {
        for shard in &self.shards {
            let mut shard = shard.lock().expect("no worker panics holding a shard");
            let Shard { states, level } = &mut *shard;
            for fp in level.drain(..) {
                *states.get_mut(&fp).expect("a state of the level") = DONE;
            }
            // The level's list is kept at its size for the next, usually larger, level.
        }
        self.improved.store(false, Ordering::Relaxed);
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

/// How a breadth-first search asks its model for successors and tells it what it keeps: a
/// model whose states share parts (interning) need share them only for the states kept, not
/// for the many successors found to be known already.
pub trait Levels: Model {
    /// The state `action` leads to from `state`, before any sharing (none: the action is
    /// not taken). By default [`Model::next_state`].
    fn successor(&self, state: &Self::State, action: Self::Action) -> Option<Self::State> {
        self.next_state(state, action)
    }

    /// `state`, a successor of `parent`, is kept for the next level: share its parts.
    fn keep(&self, _state: &mut Self::State, _parent: &Self::State) {}

    /// A level was built and the one above it let go of: whatever the model keeps for the
    /// states it made (shared parts) and no state holds any more can go too.
    fn level_done(&self) {}
}

/// A level's states as the workers share them, and the cursor each takes its chunks from.
struct Job<S> {
    frontier: Arc<Vec<S>>,
    cursor: Arc<AtomicUsize>,
}

/// The worker threads besides the search's own, started once for the whole search: a
/// thread keeps what the model remembers per thread (the world's remembered steps, its Lua
/// machine) from one level to the next, which a thread started per level would lose.
struct Helpers<S> {
    helpers: Vec<Helper<S>>,
}

/// One helper as the search sees it: where its jobs go, and where its share of a level comes
/// back from.
struct Helper<S> {
    jobs: mpsc::Sender<Job<S>>,
    shares: mpsc::Receiver<Produced<S>>,
}

impl<S: Send + Sync> Helpers<S> {
    /// `search.options.threads - 1` helpers, each waiting for its first level. They end when
    /// the `Helpers` is dropped (their job channels close).
    fn start<'scope, 'env, M>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        search: &'scope Search<'env, M>,
    ) -> Helpers<S>
    where
        M: Model<State = S> + Levels + Sync,
        M::State: Hash,
        M::Action: Clone,
        S: 'scope,
    {
        let count = search.options.threads.max(1) - 1;
        let helpers = (0..count)
            .map(|_| {
                let (job_sender, jobs) = mpsc::channel::<Job<S>>();
                let (share_sender, shares) = mpsc::channel();
                scope.spawn(move || {
                    for job in jobs {
                        let produced = search.expand_chunks(&job.frontier, &job.cursor);
                        // The level's states go back to the search whole.
                        drop(job);
                        if share_sender.send(produced).is_err() {
                            break;
                        }
                    }
                });
                Helper {
                    jobs: job_sender,
                    shares,
                }
            })
            .collect();
        Helpers { helpers }
    }

    /// Expands `frontier` on this thread and every helper; the workers' new states, and how
    /// many of the level's states were taken (fewer than all when a limit stopped it).
    fn expand<M>(&self, search: &Search<'_, M>, frontier: &mut Vec<S>) -> (Vec<Produced<S>>, usize)
    where
        M: Model<State = S> + Levels + Sync,
        M::State: Hash,
        M::Action: Clone,
    {
        let shared = Arc::new(std::mem::take(frontier));
        let cursor = Arc::new(AtomicUsize::new(0));
        for helper in &self.helpers {
            let job = Job {
                frontier: Arc::clone(&shared),
                cursor: Arc::clone(&cursor),
            };
            helper.jobs.send(job).expect("a checker thread panicked");
        }
        let mut results = vec![search.expand_chunks(&shared, &cursor)];
        for helper in &self.helpers {
            results.push(helper.shares.recv().expect("a checker thread panicked"));
        }
        *frontier = Arc::try_unwrap(shared)
            .unwrap_or_else(|_| unreachable!("every helper let go of the level it sent back"));
        (results, cursor.load(Ordering::Relaxed).min(frontier.len()))
    }
}

/// Explores `model` breadth-first until every property is decided, the state space is
/// exhausted, or `options.max_unique` states were visited.
pub fn check<M>(model: &M, options: BfsOptions, counters: &Counters) -> BfsOutcome<M::Action>
where
    M: Model + Levels + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone,
{
    let search = Search::new(model, options, counters);
    let mut progress = search.initial_level();
    let mut stopped = None;
    std::thread::scope(|scope| {
        let helpers = Helpers::start(scope, &search);
        while !progress.frontier.is_empty() {
            if let Some(stop) = search.stop_before_level(&progress) {
                stopped = Some(stop);
                break;
            }
            counters
                .depth
                .store(progress.depth as u64 + 1, Ordering::Relaxed);
            counters
                .level
                .store(progress.frontier.len() as u64, Ordering::Relaxed);
            let (results, expanded) = helpers.expand(&search, &mut progress.frontier);
            let cut_short = expanded < progress.frontier.len();
            search.next_level(&mut progress, results);
            model.level_done();
            if cut_short {
                // The level was left half expanded: what was found stands (every state found
                // is recorded with its path), but the search is over.
                stopped = Some(if counters.stop_requested() {
                    Stop::Requested
                } else {
                    Stop::StateLimit
                });
                break;
            }
        }
    });
    counters
        .generated
        .store(progress.generated, Ordering::Relaxed);
    counters.unique.store(progress.unique, Ordering::Relaxed);

    let discoveries = progress
        .discoveries
        .into_iter()
        .map(|(name, (level, rank))| (name, rebuild(model, &progress.levels, level, rank)))
        .collect();
    BfsOutcome {
        generated: progress.generated,
        unique: progress.unique,
        max_depth: progress.depth,
        exhausted: stopped.is_none(),
        stopped,
        discoveries,
    }
}

/// What a search shares across its levels and worker threads.
struct Search<'a, M: Model> {
    model: &'a M,
    options: BfsOptions,
    counters: &'a Counters,
    properties: Vec<Property<M>>,
    /// Per property: a state deciding it was found (read by the workers to skip it).
    decided: Vec<AtomicBool>,
    seen: Seen,
}

/// How far a search has got.
struct Progress<S> {
    /// `levels[d][rank] = (parent rank, action index)`; level 0 ranks are init indices.
    levels: Vec<Vec<(u32, u32)>>,
    /// Per property decided: the level and rank of its first (lowest-ranked) state.
    discoveries: BTreeMap<&'static str, (usize, u32)>,
    generated: u64,
    unique: u64,
    /// The states of the deepest level, in rank order.
    frontier: Vec<S>,
    depth: usize,
}

impl<'a, M> Search<'a, M>
where
    M: Model + Levels + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone,
{
    fn new(model: &'a M, options: BfsOptions, counters: &'a Counters) -> Search<'a, M> {
        let properties = model.properties();
        assert!(
            properties
                .iter()
                .all(|p| p.expectation != Expectation::Eventually),
            "eventually properties are not supported by this checker"
        );
        let decided = properties.iter().map(|_| AtomicBool::new(false)).collect();
        Search {
            model,
            options,
            counters,
            properties,
            decided,
            seen: Seen::new(),
        }
    }

    /// True when `state` decides property `index`: violates an "always", satisfies a
    /// "sometimes".
    fn decides(&self, state: &M::State, index: usize) -> bool {
        let property = &self.properties[index];
        let holds = (property.condition)(self.model, state);
        match property.expectation {
            Expectation::Always => !holds,
            _ => holds,
        }
    }

    /// Level 0: the initial states within the boundary, deduplicated, with what they decide.
    fn initial_level(&self) -> Progress<M::State> {
        let mut discoveries = BTreeMap::new();
        let mut generated = 0u64;
        let mut frontier: Vec<M::State> = Vec::new();
        let mut level0 = Vec::new();
        for (index, state) in self.model.init_states().into_iter().enumerate() {
            if !self.model.within_boundary(&state) {
                continue;
            }
            generated += 1;
            let fp = fingerprint(&state);
            let origin = Origin {
                parent: index as u32,
                action: 0,
            };
            if self.seen.offer(fp, origin) == Offered::New {
                let rank = frontier.len() as u32;
                for (p, property) in self.properties.iter().enumerate() {
                    if !discoveries.contains_key(property.name) && self.decides(&state, p) {
                        discoveries.insert(property.name, (0, rank));
                        self.decided[p].store(true, Ordering::Relaxed);
                    }
                }
                level0.push((index as u32, 0));
                frontier.push(state);
            }
        }
        self.seen.close_level();
        let unique = frontier.len() as u64;
        self.counters.generated.store(generated, Ordering::Relaxed);
        self.counters.unique.store(unique, Ordering::Relaxed);
        Progress {
            levels: vec![level0],
            discoveries,
            generated,
            unique,
            frontier,
            depth: 0,
        }
    }

    /// Why not to expand another level: every property decided (or, when asked, every
    /// "always" one violated), a stop requested, or the state limit reached.
    fn stop_before_level(&self, progress: &Progress<M::State>) -> Option<Stop> {
        let discoveries = &progress.discoveries;
        let mut always = self
            .properties
            .iter()
            .filter(|p| p.expectation == Expectation::Always)
            .map(|p| p.name)
            .peekable();
        let any_always = always.peek().is_some();
        let all_violated = any_always && always.all(|n| discoveries.contains_key(n));
        let found_wanted = !self.options.stop_once_found.is_empty()
            && self
                .options
                .stop_once_found
                .iter()
                .all(|name| discoveries.contains_key(name));
        if discoveries.len() == self.properties.len()
            || (self.options.stop_at_violation && all_violated)
            || found_wanted
        {
            return Some(Stop::Decided);
        }
        if self.counters.stop_requested() {
            return Some(Stop::Requested);
        }
        if self
            .options
            .max_unique
            .is_some_and(|max| progress.unique >= max)
        {
            return Some(Stop::StateLimit);
        }
        None
    }

    /// True when the workers should stop taking chunks: a stop requested or the state limit
    /// passed.
    fn over_limit(&self) -> bool {
        self.counters.stop_requested()
            || self
                .options
                .max_unique
                .is_some_and(|max| self.counters.unique.load(Ordering::Relaxed) >= max)
    }

    /// One worker's share of a level: the new successors of the chunks it took, and what
    /// they decide.
    fn expand_chunks(&self, frontier: &[M::State], cursor: &AtomicUsize) -> Produced<M::State> {
        // Room for twice this worker's share of the level, reserved at once: a vector of
        // new states grown by doubling copied them over and over into fresh pages.
        let share = frontier.len() / self.options.threads.max(1);
        let mut produced = Produced {
            states: Vec::with_capacity(share.saturating_mul(2)),
            found: Vec::new(),
            generated: 0,
        };
        let mut actions = Vec::new();
        // Large enough that a worker's states share parents and parts (its remembered steps
        // serve it), small enough to share out the end of a level.
        const CHUNK: usize = 1024;
        loop {
            if self.over_limit() {
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
                self.model.actions(state, &mut actions);
                for (action_index, action) in actions.drain(..).enumerate() {
                    let Some(mut next) = self.model.successor(state, action) else {
                        continue;
                    };
                    if !self.model.within_boundary(&next) {
                        continue;
                    }
                    generated_here += 1;
                    let fp = fingerprint(&next);
                    let origin = Origin {
                        parent: rank,
                        action: action_index as u32,
                    };
                    match self.seen.offer(fp, origin) {
                        Offered::New => {
                            for (p, flag) in self.decided.iter().enumerate() {
                                if !flag.load(Ordering::Relaxed) && self.decides(&next, p) {
                                    produced.found.push((p, fp));
                                }
                            }
                            self.model.keep(&mut next, state);
                            produced.states.push((next, fp, rank, action_index as u32));
                            self.counters.unique.fetch_add(1, Ordering::Relaxed);
                        }
                        // Another thread found it first, from a later parent: this state is
                        // the canonical parent's own successor, the one to keep (its
                        // properties were judged on the first).
                        Offered::Better => {
                            self.model.keep(&mut next, state);
                            produced.states.push((next, fp, rank, action_index as u32))
                        }
                        Offered::Known => {}
                    }
                }
            }
            produced.generated += generated_here;
            self.counters
                .generated
                .fetch_add(generated_here, Ordering::Relaxed);
        }
        produced
    }

    /// Makes the workers' results the next level: ordered canonically by (parent rank,
    /// action index), with the discoveries it holds recorded at their ranks. The states are
    /// filtered, ordered and stripped in place (one worker's chunks already come in order),
    /// so a level's worlds are held once, not copied into a second vector.
    fn next_level(&self, progress: &mut Progress<M::State>, results: Vec<Produced<M::State>>) {
        let depth = progress.depth;
        let mut found: Vec<(usize, u64)> = Vec::new();
        let mut states: Vec<(M::State, u64, u32, u32)> = Vec::new();
        for mut produced in results {
            progress.generated += produced.generated;
            found.append(&mut produced.found);
            if states.is_empty() {
                states = produced.states;
            } else {
                states.append(&mut produced.states);
            }
        }
        // A state found from several parents on this level is kept from its canonical
        // parent (the smallest origin): a symmetric variant, when the hash ignores caller
        // identity, would not replay along the recorded path.
        // Unless some state's origin improved, each state found is its own origin's.
        if self.seen.improved.load(Ordering::Relaxed) {
            states.retain(|(_, fp, parent, action)| {
                let origin = self.seen.origin(*fp);
                (origin.parent, origin.action) == (*parent, *action)
            });
        }
        self.seen.close_level();
        if !states.is_sorted_by_key(|&(_, _, parent, action)| (parent, action)) {
            states.sort_unstable_by_key(|&(_, _, parent, action)| (parent, action));
        }
        let mut ranks: HashMap<u64, u32, BuildPassThrough> = HashMap::default();
        for (_, fp) in &found {
            ranks.insert(*fp, 0);
        }
        let mut level = Vec::with_capacity(states.len());
        for (rank, (_, fp, parent, action)) in states.iter().enumerate() {
            if let Some(slot) = ranks.get_mut(fp) {
                *slot = rank as u32;
            }
            level.push((*parent, *action));
        }
        let mut next_frontier: Vec<M::State> =
            states.into_iter().map(|(state, ..)| state).collect();
        next_frontier.shrink_to_fit();
        for (p, fp) in found {
            let rank = ranks[&fp];
            let name = self.properties[p].name;
            let best = progress
                .discoveries
                .entry(name)
                .or_insert((depth + 1, rank));
            if best.0 == depth + 1 && rank < best.1 {
                best.1 = rank;
            }
            self.decided[p].store(true, Ordering::Relaxed);
        }
        progress.unique += next_frontier.len() as u64;
        if !next_frontier.is_empty() {
            progress.depth += 1;
            progress.levels.push(level);
        }
        progress.frontier = next_frontier;
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
