//! The exhaustive model: a stateright [`Model`] over [`World`].
//!
//! The state is the very `World` the random-interleaving tests drive: the callers' safeguard
//! machines (the same types the simulator drives), the Redis and PostgreSQL stand-ins, the
//! clock, the pause and slack each caller has used, and the failovers left. The actions are
//! the world's: a caller takes its next step, the clock advances one tick, the replica
//! applies one effect, a failover strikes while the budget allows.
//!
//! # Symmetry
//!
//! Callers run identical machines but hold different tokens, and the stand-ins keep those
//! tokens (the lock's value in Redis, the replication backlog) and the callers' PostgreSQL
//! sessions. Sorting the callers alone would be unsound (it would pair a caller with another's
//! lock), and the stand-ins offer no way to rename tokens inside them, so no
//! `Representative` world can be built. Instead, with [`CheckConfig::symmetry`] the world's
//! *hash* is canonical up to a renaming of callers: callers are ranked, and every token and
//! session is written as its owner's rank, in the machines and in both stand-ins (see
//! [`World::set_symmetry`]). Any checker that deduplicates by hash — stateright's and
//! [`crate::bfs`] alike — then explores one world per class of symmetric worlds, and the
//! paths it reports are real paths. Equality stays exact, and the state is canonical: equal
//! worlds are equal values (ordered collections only, no wall clock, pause counters kept
//! only when pauses are bounded), so they hash equal.

use std::sync::Arc;

use stateright::{Model, Property};

use leaselab_model::ledger::Verdict;
use leaselab_model::safeguard::{Outcome, ParamError};
use leaselab_model::world::{Action, World};

use crate::config::CheckConfig;
use crate::intern::Interner;

/// "always": at the end of a run, final = initial − amount × accepted; and never a negative
/// balance.
pub const LEDGER: &str = "ledger holds";
/// "always": no two callers believe they hold the lock at once.
pub const MUTUAL_EXCLUSION: &str = "mutual exclusion";
/// "always": no caller deletes or extends a lock another caller holds (a release or refresh
/// that does not check its token does, once its own lease has expired and another caller took
/// the lock).
pub const LOCK_CHANGED_BY_HOLDER: &str = "only the holder changes the lock";
/// "sometimes": a run in which every caller finished.
pub const ALL_FINISHED: &str = "every caller finished";
/// "sometimes": a run in which every caller settled — its spend accepted, refused by the
/// storage, or turned down for want of funds (none gave up, lost the lock or failed) — and at
/// least one spend was accepted. The witness that the bound lets the protocol play out: without
/// such a run, an "always" property that holds says nothing, and is reported INCONCLUSIVE.
pub const SETTLED: &str = "every caller settled";
/// "sometimes": a run in which the storage refused a write.
pub const WRITE_REJECTED: &str = "a write was rejected";
/// "sometimes": a run in which PostgreSQL aborted a transaction (40P01 `deadlock detected`,
/// 40001 `could not serialize access`) and its caller rolled back and retried (checked for
/// the safeguards that retry).
pub const TX_RETRIED: &str = "a transaction was retried";

/// Which properties a check evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PropertySet {
    /// Every property that applies to the safeguard.
    All,
    /// Only the ledger, with the witness ([`SETTLED`]) that the bound lets every caller
    /// settle (for sweeps, which stop at the ledger's first violation).
    LedgerOnly,
}

/// The model of one check.
#[derive(Clone, Debug)]
pub struct LeaseModel {
    config: CheckConfig,
    init: World,
    properties: PropertySet,
    /// The distinct callers and stand-ins of the worlds this model produced.
    interner: Arc<Interner>,
}

impl LeaseModel {
    /// The model for `config`, with every property that applies.
    pub fn new(config: CheckConfig) -> Result<LeaseModel, ParamError> {
        LeaseModel::with_properties(config, PropertySet::All)
    }

    /// The model for `config`, evaluating `properties`.
    pub fn with_properties(
        config: CheckConfig,
        properties: PropertySet,
    ) -> Result<LeaseModel, ParamError> {
        config.validate()?;
        let mut init = config.world()?;
        init.set_symmetry(config.symmetry);
        let interner = Arc::new(Interner::new());
        interner.intern_all(&mut init);
        Ok(LeaseModel {
            config,
            init,
            properties,
            interner,
        })
    }

    /// Lets go of the shared callers and stand-ins that no world the search still holds
    /// points at (see [`Interner::prune`]); the search calls it when it has dropped worlds.
    pub fn prune_shared(&self) {
        self.interner.prune();
    }

    /// The check's parameters.
    pub fn config(&self) -> &CheckConfig {
        &self.config
    }

    /// The initial world.
    pub fn initial_world(&self) -> &World {
        &self.init
    }

    /// The names of the properties evaluated, "always" ones first.
    pub fn property_names(&self) -> Vec<&'static str> {
        self.properties().iter().map(|p| p.name).collect()
    }
}

/// The ledger property's condition: the balance is never negative, and when the run is over
/// — every caller finished, or time has run out and nobody can move — the balance is the
/// initial one minus the accepted spends. (A caller that wrote always finishes without
/// sleeping again, so at such an end every write is accounted for; callers cut off by the
/// horizon had not written.)
pub fn ledger_holds(world: &World) -> bool {
    if world.balance().is_some_and(|balance| balance < 0) {
        return false;
    }
    let over = world.all_done() || (world.now_ms >= world.config().horizon_ms && world.stuck());
    !over || world.ledger().verdict == Verdict::Ok
}

/// The mutual-exclusion property's condition.
pub fn mutual_exclusion(world: &World) -> bool {
    world.believed_holders() <= 1
}

/// The "only the holder changes the lock" property's condition.
pub fn lock_changed_by_holder(world: &World) -> bool {
    world.trespass.is_none()
}

/// True when every caller settled and at least one spend was accepted (see [`SETTLED`]).
pub fn every_caller_settled(world: &World) -> bool {
    world.all_done()
        && world
            .slots
            .iter()
            .all(|slot| crate::config::settled(slot.outcome.as_ref()))
        && world
            .slots
            .iter()
            .any(|slot| matches!(slot.outcome, Some(Outcome::Accepted { .. })))
}

/// True when some caller rolled back a transaction PostgreSQL aborted and ran it again.
pub fn transaction_retried(world: &World) -> bool {
    world
        .results()
        .iter()
        .any(|result| result.stats.deadlock_retries > 0 || result.stats.serialization_retries > 0)
}

/// True when some caller's write was refused.
pub fn write_rejected(world: &World) -> bool {
    world
        .slots
        .iter()
        .any(|slot| matches!(slot.outcome, Some(Outcome::WriteRejected { .. })))
}

impl crate::bfs::Levels for LeaseModel {
    /// The successor unshared: most successors are known already and dropped at once.
    fn successor(&self, state: &World, action: Action) -> Option<World> {
        let mut next = state.clone();
        next.apply(action);
        Some(next)
    }

    fn keep(&self, state: &mut World, parent: &World) {
        self.interner.intern(state, parent);
    }

    fn level_done(&self) {
        self.prune_shared();
    }
}

impl Model for LeaseModel {
    type State = World;
    type Action = Action;

    fn init_states(&self) -> Vec<World> {
        vec![self.init.clone()]
    }

    fn actions(&self, state: &World, actions: &mut Vec<Action>) {
        state.actions(actions);
    }

    /// The successor with its parts shared (for stateright's searches and its Explorer; the
    /// breadth-first and pause searches share only the successors they keep).
    fn next_state(&self, state: &World, action: Action) -> Option<World> {
        use crate::bfs::Levels;
        let mut next = self.successor(state, action)?;
        self.keep(&mut next, state);
        Some(next)
    }

    fn format_action(&self, action: &Action) -> String {
        match action {
            Action::Step(index) => format!("caller {} steps", index + 1),
            Action::Tick => "clock ticks".into(),
            Action::Replicate => "replica catches up one change".into(),
            Action::Failover => "failover".into(),
            Action::RedisRestart if self.config.restarts_from_aof => {
                "redis crashes and reloads its AOF".into()
            }
            Action::RedisRestart => "redis restarts without persistence".into(),
            Action::EvictFence => "the fence counter is evicted".into(),
            Action::LoseReply(index) => format!("caller {}'s reply is lost", index + 1),
            Action::DropConnection(index) => {
                format!("caller {}'s connection drops", index + 1)
            }
            Action::NodeRestart(node) => format!("node {node} restarts without persistence"),
            Action::NodeCrash(node) => format!("node {node} crashes (back after the TTL)"),
            Action::NodeClockJump(node) => format!("node {node}'s clock jumps"),
            Action::NodeClockSlew(node) => format!("node {node}'s clock starts slewing"),
            Action::RedisClockJump => "redis's clock jumps".into(),
            Action::RedisClockSlew => "redis's clock starts slewing".into(),
            Action::AofFsync => "redis fsyncs its AOF".into(),
            Action::Partition(index, 0) => format!("caller {} is cut off from redis", index + 1),
            Action::Partition(index, node) => {
                format!("caller {} is cut off from node {node}", index + 1)
            }
        }
    }

    fn format_step(&self, state: &World, action: Action) -> Option<String> {
        let mut next = state.clone();
        let events = next.apply_events(action);
        let lines = crate::narrate::describe_step(state, &events, &next);
        Some(format!(
            "{}\n\n{}",
            lines.join("; "),
            crate::narrate::describe_world(&next)
        ))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = vec![Property::always(LEDGER, |_, world: &World| {
            ledger_holds(world)
        })];
        let settled = Property::sometimes(SETTLED, |_, world: &World| every_caller_settled(world));
        if self.properties == PropertySet::LedgerOnly {
            properties.push(settled);
            return properties;
        }
        if self.config.safeguard.uses_lock() {
            properties.push(Property::always(MUTUAL_EXCLUSION, |_, world: &World| {
                mutual_exclusion(world)
            }));
        }
        // Watched on the single Redis only: Redlock's lock is a majority of nodes, no one of
        // which holds it (`World::trespass` is never set there, so the verdict would be empty).
        if self.config.safeguard.uses_lock() && self.config.safeguard.redis_nodes() == 0 {
            properties.push(Property::always(
                LOCK_CHANGED_BY_HOLDER,
                |_, world: &World| lock_changed_by_holder(world),
            ));
        }
        properties.push(Property::sometimes(ALL_FINISHED, |_, world: &World| {
            world.all_done()
        }));
        properties.push(settled);
        if self.config.can_reject() {
            properties.push(Property::sometimes(WRITE_REJECTED, |_, world: &World| {
                write_rejected(world)
            }));
        }
        if self.config.safeguard.retries_transactions() {
            properties.push(Property::sometimes(TX_RETRIED, |_, world: &World| {
                transaction_retried(world)
            }));
        }
        properties
    }

    fn within_boundary(&self, state: &World) -> bool {
        state.now_ms <= state.config().horizon_ms
    }
}
