//! The checker over a world whose Redis replies can go astray (lost, or lost with their
//! connection, which the client core retries): which safeguards keep the ledger, and the
//! shortest way the others break it. Without faults the same worlds are safe, so each
//! counterexample is the fault's doing.

use leaselab_checker::bfs::{check, BfsOptions, Counters, Levels, Stop};
use leaselab_checker::model::{ledger_holds, mutual_exclusion};
use leaselab_checker::CheckConfig;
use leaselab_model::client::ClientPolicy;
use leaselab_model::postgres::WriteGuard;
use leaselab_model::redis::command::Command;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{Outcome, RedisRequest, Safeguard};
use leaselab_model::world::{world_client_policy, Action, Event, ReplyFaults, World, WorldConfig};
use stateright::{Model, Property};

const LEDGER: &str = "ledger holds";
const EXCLUSION: &str = "mutual exclusion";
const UNANSWERED: &str = "a landed write went unanswered";

/// The world as the checker explores it, with reply faults.
struct FaultModel {
    init: World,
}

/// Nothing shared between its states to let go of.
impl Levels for FaultModel {}

impl Model for FaultModel {
    type State = World;
    type Action = Action;

    fn init_states(&self) -> Vec<World> {
        vec![self.init.clone()]
    }

    fn actions(&self, state: &World, actions: &mut Vec<Action>) {
        state.actions(actions);
    }

    fn next_state(&self, state: &World, action: Action) -> Option<World> {
        let mut next = state.clone();
        next.apply(action);
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(LEDGER, |_, world: &World| ledger_holds(world)),
            Property::always(EXCLUSION, |_, world: &World| mutual_exclusion(world)),
            Property::sometimes(UNANSWERED, |_, world: &World| {
                world.slots.iter().any(|slot| {
                    slot.write_landed && matches!(slot.outcome, Some(Outcome::Failed(_)))
                })
            }),
        ]
    }
}

/// Two callers of `safeguard` spending 10 from 20 with a 3-tick lease and 1 tick of work, no
/// pauses at all (the semi-synchronous model at its strictest), everyone arriving at 0.
fn world(safeguard: Safeguard, faults: ReplyFaults, policy: ClientPolicy) -> World {
    let config = CheckConfig::new(safeguard);
    let world_config = WorldConfig {
        max_pause_ms: Some(0),
        horizon_ms: 30,
        failovers: 0,
        arrival_window_ms: 0,
    };
    World::with_faults(
        &config.scenario(),
        &config.tokens(),
        world_config,
        faults,
        policy,
    )
    .expect("valid")
}

fn explore(init: World) -> (FaultModel, leaselab_checker::bfs::BfsOutcome<Action>) {
    let model = FaultModel { init };
    let outcome = check(&model, BfsOptions::default(), &Counters::default());
    assert!(
        outcome.exhausted || outcome.stopped == Some(Stop::Decided),
        "the bound is small enough to explore: {:?}",
        outcome.stopped
    );
    (model, outcome)
}

/// The states along a discovery's path, with what each step did.
fn replay(model: &FaultModel, actions: &[Action]) -> (World, Vec<Event>) {
    let mut world = model.init.clone();
    let mut events = Vec::new();
    for action in actions {
        events.extend(world.apply_events(*action));
    }
    (world, events)
}

fn lease() -> Safeguard {
    Safeguard::Lease {
        release: ReleaseVia::Script,
    }
}

fn dropped_connection() -> ReplyFaults {
    ReplyFaults {
        lost_replies: 0,
        dropped_connections: 1,
        ..ReplyFaults::default()
    }
}

fn lost_reply() -> ReplyFaults {
    ReplyFaults {
        lost_replies: 1,
        dropped_connections: 0,
        ..ReplyFaults::default()
    }
}

/// A read timeout short enough to fire within the horizon.
fn short_timeouts() -> ClientPolicy {
    ClientPolicy {
        read_timeout_ms: 4,
        ..world_client_policy()
    }
}

#[test]
fn without_reply_faults_the_lease_keeps_the_ledger_when_nobody_pauses() {
    let (_, outcome) = explore(world(
        lease(),
        ReplyFaults::default(),
        world_client_policy(),
    ));
    assert!(!outcome.discoveries.contains_key(LEDGER));
    assert!(!outcome.discoveries.contains_key(EXCLUSION));
}

#[test]
fn a_retried_write_lands_after_the_lease_and_overwrites_the_next_spend() {
    let (model, outcome) = explore(world(lease(), dropped_connection(), world_client_policy()));
    let found = outcome
        .discoveries
        .get(LEDGER)
        .expect("the lease breaks the ledger once a write is retried");
    let (end, events) = replay(&model, &found.actions);
    assert!(!ledger_holds(&end));
    assert!(
        found.actions.contains(&Action::DropConnection(0))
            || found.actions.contains(&Action::DropConnection(1))
    );
    // The caller whose connection dropped wrote its balance twice: once before the drop, once
    // on the retry, after the other caller's write.
    let balance_writes = |caller: usize| {
        events
            .iter()
            .filter(|event| {
                matches!(event, Event::Redis {
                    caller: c,
                    request: RedisRequest::Command(Command::Set { key, .. }),
                    ..
                } if *c == caller && key.ends_with(b":balance"))
            })
            .count()
    };
    let retried = (0..2)
        .find(|&caller| balance_writes(caller) == 2)
        .expect("one caller wrote twice");
    assert_eq!(balance_writes(1 - retried), 1);
    let ledger = end.ledger();
    assert_eq!(
        ledger.accepted, 2,
        "both were told their spend went through"
    );
    assert_eq!(ledger.final_balance, 10, "but only one spend shows");
    // The shortest such run: pinned so a change in the client core or the world shows.
    assert_eq!(found.actions.len(), 22, "{:?}", found.actions);
}

#[test]
fn fencing_keeps_the_ledger_when_any_redis_request_is_retried() {
    let (_, outcome) = explore(world(
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelow,
        },
        dropped_connection(),
        world_client_policy(),
    ));
    assert!(!outcome.discoveries.contains_key(LEDGER));
}

#[test]
fn a_lost_write_reply_is_a_spend_and_the_ledger_still_adds_up() {
    let (model, outcome) = explore(world(lease(), lost_reply(), short_timeouts()));
    assert!(
        !outcome.discoveries.contains_key(LEDGER),
        "the landed write counts although its caller was told it failed"
    );
    let found = outcome
        .discoveries
        .get(UNANSWERED)
        .expect("a write can land without its reply");
    let (end, _) = replay(&model, &found.actions);
    assert!(found
        .actions
        .iter()
        .any(|a| matches!(a, Action::LoseReply(_))));
    let ledger = end.ledger();
    assert_eq!(ledger.unacknowledged, 1);
    // Counting accepted spends only would call this run broken.
    assert_ne!(
        ledger.final_balance,
        ledger.initial_balance - ledger.amount * i64::from(ledger.accepted)
    );
    let told_failed = |slot: &&std::sync::Arc<leaselab_model::world::Slot>| {
        slot.write_landed && matches!(slot.outcome, Some(Outcome::Failed(_)))
    };
    assert_eq!(end.slots.iter().filter(told_failed).count(), 1);
}
