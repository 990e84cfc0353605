//! Random interleavings of two or three callers on one clock, without timing faults (no
//! caller is ever left unscheduled while time passes, work is shorter than the TTL): the
//! lease-with-token safeguards keep the ledger, and no-lock breaks it — the property finds
//! the break, which shows the test has teeth.

use leaselab_model::ledger::Verdict;
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{RetryStrategy, Safeguard};
use leaselab_model::scenario::Scenario;
use leaselab_model::world::{Action, World, WorldConfig};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestError, TestRunner};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MAX_ACTIONS: usize = 20_000;

/// Runs `scenario` under the schedule `choices` (each picks among the enabled actions) and
/// returns the ledger verdict with the ledger line.
fn run(safeguard: Safeguard, callers: u32, seed: u64, choices: &[u16]) -> (Verdict, String) {
    let mut scenario = Scenario::new("interleaving", safeguard);
    scenario.callers = callers;
    scenario.initial_balance = 20;
    scenario.params.ttl_ms = 100;
    scenario.params.work_ms = 2;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let tokens: Vec<u128> = (0..callers).map(|_| rng.random()).collect();
    let config = WorldConfig {
        max_pause_ms: Some(0),
        horizon_ms: 10_000,
        failovers: 0,
        arrival_window_ms: 0,
    };
    let mut world = World::new(&scenario, &tokens, config).expect("valid scenario");
    let mut actions = Vec::new();
    let mut choice = choices.iter().cycle();
    for _ in 0..MAX_ACTIONS {
        actions.clear();
        world.actions(&mut actions);
        if actions.is_empty() {
            break;
        }
        let pick = usize::from(*choice.next().expect("cycle is endless"));
        let action: Action = actions[pick % actions.len()];
        world.apply(action);
    }
    assert!(
        world.all_done(),
        "every caller finishes within {MAX_ACTIONS} actions: {:?}",
        world.results()
    );
    let ledger = world.ledger();
    (ledger.verdict, ledger.line())
}

fn token_safeguards() -> Vec<Safeguard> {
    vec![
        Safeguard::Lease {
            release: ReleaseVia::Script,
        },
        Safeguard::Lease {
            release: ReleaseVia::Delex,
        },
        Safeguard::LeaseWatchdog,
        Safeguard::Redislock {
            retry: RetryStrategy::Exponential {
                min_ms: 16,
                max_ms: 128,
            },
            jitter: true,
        },
        Safeguard::Redislock {
            retry: RetryStrategy::Linear { backoff_ms: 5 },
            jitter: false,
        },
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelow,
        },
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelowAndEqual,
        },
    ]
}

proptest! {
    #![proptest_config(Config { cases: 256, ..Config::default() })]

    #[test]
    fn lease_with_token_safeguards_keep_the_ledger(
        which in 0..7usize,
        callers in 2..=3u32,
        seed in any::<u64>(),
        choices in proptest::collection::vec(any::<u16>(), 1..64),
    ) {
        let safeguard = token_safeguards()[which];
        let (verdict, line) = run(safeguard, callers, seed, &choices);
        prop_assert_eq!(verdict, Verdict::Ok, "{}: {}", safeguard.name(), line);
    }
}

#[test]
fn no_lock_breaks_under_some_interleaving_and_the_property_finds_it() {
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        2..=3u32,
        any::<u64>(),
        proptest::collection::vec(any::<u16>(), 1..64),
    );
    let result = runner.run(&strategy, |(callers, seed, choices)| {
        let (verdict, line) = run(Safeguard::NoLock, callers, seed, &choices);
        prop_assert_eq!(verdict, Verdict::Ok, "{}", line);
        Ok(())
    });
    match result {
        Err(TestError::Fail(reason, (callers, _, choices))) => {
            assert!(reason.message().contains("BROKEN"), "{reason}");
            // The shrunk schedule is short: two callers reading before either writes.
            assert!(callers >= 2 && !choices.is_empty());
        }
        other => {
            panic!("the property should have found a lost update without a lock, got {other:?}")
        }
    }
}

#[test]
fn the_naive_lock_keeps_the_ledger_when_nothing_goes_wrong() {
    // SETNX + DEL is only broken by crashes and stalls; a clean interleaving keeps it.
    for seed in 0..32 {
        let choices: Vec<u16> = (0..40).map(|i| (i * 7 + seed as u16) % 11).collect();
        let (verdict, line) = run(Safeguard::SetnxDel, 3, seed, &choices);
        assert_eq!(verdict, Verdict::Ok, "{line}");
    }
}
