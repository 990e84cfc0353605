//! A remembered caller step is the step: along random schedules of many safeguards, with and
//! without reply faults, partitions and restarts, every action enabled in each world met is
//! applied three ways from it — once as the first to take it (the step is taken and remembered), once more
//! (a caller's step is now recalled from memory: the same slot, stand-ins and time), and once
//! with its events logged (never remembered nor recalled) — and the three worlds must be
//! equal. The step memory is keyed by what a step reads; a key that left something out would
//! give a recalled world that differs from the fresh one here.

use leaselab_model::postgres::{Isolation, WriteGuard};
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{RetryStrategy, Safeguard};
use leaselab_model::scenario::Scenario;
use leaselab_model::world::{
    forget_remembered_steps, world_client_policy, Action, ReplyFaults, World, WorldConfig,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Actions per schedule (a schedule ends sooner when every caller is done).
const MAX_ACTIONS: usize = 400;

fn safeguards() -> Vec<Safeguard> {
    vec![
        Safeguard::NoLock,
        Safeguard::SetnxExpire,
        Safeguard::Lease {
            release: ReleaseVia::Script,
        },
        Safeguard::LeaseWatchdog,
        Safeguard::Redislock {
            retry: RetryStrategy::Linear { backoff_ms: 2 },
            jitter: false,
        },
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelowAndEqual,
        },
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelow,
        },
        Safeguard::PgForUpdate,
        Safeguard::PgTransfer { ordered: false },
        Safeguard::PgIsolation {
            isolation: Isolation::RepeatableRead,
        },
    ]
}

/// A world of `callers` callers of `safeguard`, with the faults `variant` picks.
fn world(safeguard: Safeguard, callers: u32, variant: u32, seed: u64) -> World {
    let mut scenario = Scenario::new("remembered", safeguard);
    scenario.callers = callers;
    scenario.initial_balance = 30;
    scenario.params.ttl_ms = 3;
    scenario.params.work_ms = 2;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let tokens: Vec<u128> = (0..callers).map(|_| rng.random()).collect();
    let config = WorldConfig {
        // Unbounded pauses: with a bound a caller's slot changes every tick it waits, and its
        // steps are not remembered.
        max_pause_ms: None,
        horizon_ms: 20,
        failovers: 0,
        arrival_window_ms: 1,
    };
    let faults = match variant {
        1 => ReplyFaults {
            lost_replies: 1,
            dropped_connections: 1,
            ..ReplyFaults::default()
        },
        _ => ReplyFaults::default(),
    };
    let world = World::with_faults(&scenario, &tokens, config, faults, world_client_policy())
        .expect("a valid scenario");
    match variant {
        2 => world.with_partitions(1).with_redis_restarts(1),
        _ => world,
    }
}

/// Applies `action` to `world` three ways and checks they agree; returns the world after.
fn apply_three_ways(world: &World, action: Action) -> World {
    let mut first = world.clone();
    first.apply(action);
    let mut again = world.clone();
    again.apply(action);
    let mut logged = world.clone();
    let _events = logged.apply_events(action);
    assert_eq!(
        again, first,
        "{action:?} recalled differs from {action:?} taken"
    );
    assert_eq!(
        logged, first,
        "{action:?} logged differs from {action:?} taken"
    );
    first
}

#[test]
fn a_recalled_step_is_the_step_taken() {
    let mut steps_checked = 0u32;
    for (index, safeguard) in safeguards().into_iter().enumerate() {
        for variant in 0..3u32 {
            for seed in 0..4u64 {
                let callers = 2 + (seed % 2) as u32;
                let mut world = world(safeguard, callers, variant, seed + 10 * index as u64);
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut actions = Vec::new();
                for _ in 0..MAX_ACTIONS {
                    actions.clear();
                    world.actions(&mut actions);
                    if actions.is_empty() {
                        break;
                    }
                    // Every action from here (so that a later world meets the steps its
                    // siblings remembered: the same caller at another time, the same
                    // stand-in under another caller), then on along one of them.
                    let mut after: Vec<World> = actions
                        .iter()
                        .map(|&action| apply_three_ways(&world, action))
                        .collect();
                    steps_checked += actions
                        .iter()
                        .filter(|action| matches!(action, Action::Step(_)))
                        .count() as u32;
                    world = after.swap_remove(rng.random_range(0..after.len()));
                }
                forget_remembered_steps();
            }
        }
    }
    // The schedules reach many caller steps (a schedule that ended at once would check
    // nothing).
    assert!(steps_checked > 500, "only {steps_checked} caller steps");
}
