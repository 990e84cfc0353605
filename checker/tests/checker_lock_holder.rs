//! "Only the holder changes the lock": no caller deletes or extends a lock another caller
//! holds. The built-in safeguards release and refresh with their token and keep it; a
//! release and a watchdog refresh that check no token, built here (not shipped as
//! safeguards), each break it, and the checker finds the shortest path.

use leaselab_checker::bfs::{check, BfsOptions, Counters, Levels};
use leaselab_checker::model::lock_changed_by_holder;
use leaselab_checker::{run, CheckConfig, LeaseModel, RunOptions, LOCK_CHANGED_BY_HOLDER};
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::lock::{token_text, Lock};
use leaselab_model::safeguard::locked::{LockedSpend, LockedSpendConfig};
use leaselab_model::safeguard::naive::Setnx;
use leaselab_model::safeguard::retry::Retry;
use leaselab_model::safeguard::store::Store;
use leaselab_model::safeguard::watchdog::Watchdog;
use leaselab_model::safeguard::{Caller, Safeguard};
use leaselab_model::world::{world_client_policy, Action, ReplyFaults, World, WorldConfig};
use stateright::{Model, Property};

/// The world explored with one property: only the holder changes the lock (`extended_only`:
/// only an extension by another caller counts).
struct HolderModel {
    init: World,
    extended_only: bool,
}

/// Nothing shared between its states to let go of.
impl Levels for HolderModel {}

impl Model for HolderModel {
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
        if self.extended_only {
            vec![Property::always(
                "no caller extends a lock it does not hold",
                |_, world: &World| world.trespass.is_none_or(|t| t.deleted),
            )]
        } else {
            vec![Property::always(
                LOCK_CHANGED_BY_HOLDER,
                |_, world: &World| lock_changed_by_holder(world),
            )]
        }
    }

    fn within_boundary(&self, state: &World) -> bool {
        state.now_ms <= state.config().horizon_ms
    }
}

/// The bound of every check here. The token-less release and refresh below are caught within
/// it, so the built-in safeguards' SAFE at the same bound is not a bound too small to see.
const HORIZON_TICKS: u64 = 8;

/// Two callers with a 3-tick lease and `work_ticks` of work, unbounded pauses, horizon
/// [`HORIZON_TICKS`], each running the machine `build` makes from its token.
fn world(work_ticks: u64, build: impl Fn(&CheckConfig, u128) -> Caller) -> World {
    let config = CheckConfig {
        work_ticks,
        ..CheckConfig::new(Safeguard::Lease {
            release: ReleaseVia::Script,
        })
    };
    let scenario = config.scenario();
    let tokens = config.tokens();
    let callers = tokens.iter().map(|token| build(&config, *token)).collect();
    let world_config = WorldConfig {
        max_pause_ms: None,
        horizon_ms: HORIZON_TICKS,
        failovers: 0,
        arrival_window_ms: 0,
    };
    World::with_callers(
        &scenario,
        &tokens,
        callers,
        world_config,
        ReplyFaults::default(),
        world_client_policy(),
    )
    .expect("valid")
}

/// A `SETNX` + `PEXPIRE` lock released with a plain `DEL`, optionally refreshed by a
/// watchdog with a plain `PEXPIRE`: neither checks the token.
fn tokenless(config: &CheckConfig, token: u128, watchdog: bool) -> Caller {
    let scenario = config.scenario();
    let keys = &scenario.params.keys;
    let ttl_ms = scenario.params.ttl_ms;
    Caller::Locked(LockedSpend::new(LockedSpendConfig {
        lock: Lock::Setnx(Setnx {
            key: keys.lock.as_slice().into(),
            value: token_text(token).into(),
            expire_ttl_ms: Some(ttl_ms),
        }),
        store: Store::Redis {
            key: keys.balance.clone(),
        },
        retry: Retry::Jittered5To15,
        jitter: false,
        watchdog: watchdog.then(|| Watchdog::new(ttl_ms)),
        amount: scenario.params.amount,
        work_ms: scenario.params.work_ms,
        acquire_timeout_ms: scenario.params.acquire_timeout_ms.unwrap_or(5_000),
    }))
}

/// The shortest violation's length and the trespass at its end.
fn shortest(model: &HolderModel) -> (usize, leaselab_model::world::Trespass) {
    let outcome = check(model, BfsOptions::default(), &Counters::default());
    let (_, discovery) = outcome
        .discoveries
        .into_iter()
        .next()
        .expect("a counterexample");
    let mut world = model.init.clone();
    for action in &discovery.actions {
        world.apply(*action);
    }
    (
        discovery.actions.len(),
        world.trespass.expect("the path ends in a trespass"),
    )
}

#[test]
fn a_release_that_checks_no_token_deletes_the_next_holders_lock() {
    let model = HolderModel {
        init: world(1, |config, token| tokenless(config, token, false)),
        extended_only: false,
    };
    let (steps, trespass) = shortest(&model);
    assert!(trespass.deleted, "{}", trespass.describe());
    assert_ne!(trespass.by, trespass.holder);
    assert_eq!(steps, 11, "{}", trespass.describe());
}

#[test]
fn a_watchdog_refresh_that_checks_no_token_extends_the_next_holders_lock() {
    let model = HolderModel {
        init: world(4, |config, token| tokenless(config, token, true)),
        extended_only: true,
    };
    let (steps, trespass) = shortest(&model);
    assert!(!trespass.deleted, "{}", trespass.describe());
    assert_eq!(steps, 9, "{}", trespass.describe());
}

#[test]
fn the_built_in_lock_safeguards_change_only_their_own_lock() {
    for safeguard in [
        Safeguard::Lease {
            release: ReleaseVia::Script,
        },
        Safeguard::LeaseWatchdog,
        Safeguard::Fenced {
            guard: leaselab_model::postgres::WriteGuard::FenceBelow,
        },
    ] {
        let config = CheckConfig {
            work_ticks: 4,
            horizon_ticks: Some(HORIZON_TICKS),
            ..CheckConfig::new(safeguard)
        };
        let model = LeaseModel::new(config).expect("valid");
        let report = run(&model, RunOptions::default(), &Counters::default());
        let property = report
            .properties
            .iter()
            .find(|p| p.name == LOCK_CHANGED_BY_HOLDER)
            .expect("checked for every lock safeguard");
        assert_eq!(
            property.verdict.as_str(),
            "SAFE",
            "{}: {}",
            safeguard.name(),
            property.basis
        );
    }
    // setnx-expire's DEL release is the shipped token-less one: the checker catches it.
    let config = CheckConfig {
        work_ticks: 1,
        horizon_ticks: Some(HORIZON_TICKS),
        ..CheckConfig::new(Safeguard::SetnxExpire)
    };
    let model = LeaseModel::new(config).expect("valid");
    let report = run(&model, RunOptions::default(), &Counters::default());
    let property = report
        .properties
        .iter()
        .find(|p| p.name == LOCK_CHANGED_BY_HOLDER)
        .expect("checked");
    assert_eq!(property.verdict.as_str(), "VIOLATED", "{}", property.basis);
}
