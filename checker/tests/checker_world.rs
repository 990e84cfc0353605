//! The world's timing rules, as the checker relies on them: pauses are counted per caller in
//! all, arrival and the random part of a sleep are slack, not pauses.

use leaselab_checker::CheckConfig;
use leaselab_model::safeguard::lease::ReleaseVia;
use leaselab_model::safeguard::{Input, Safeguard};
use leaselab_model::world::{Action, SlotState, World, WorldConfig};

fn lease_world(max_pause_ms: Option<u64>, arrival_window_ms: u64) -> World {
    let mut config = CheckConfig::new(Safeguard::Lease {
        release: ReleaseVia::Script,
    });
    config.callers = 1;
    let world_config = WorldConfig {
        max_pause_ms,
        horizon_ms: 20,
        failovers: 0,
        arrival_window_ms,
    };
    World::new(&config.scenario(), &config.tokens(), world_config).expect("valid")
}

fn actions(world: &World) -> Vec<Action> {
    let mut out = Vec::new();
    world.actions(&mut out);
    out
}

#[test]
fn without_pauses_a_ready_caller_must_step_before_time_passes() {
    let world = lease_world(Some(0), 0);
    assert_eq!(actions(&world), vec![Action::Step(0)]);
}

#[test]
fn a_pause_budget_is_spent_once_per_caller_in_all() {
    let mut world = lease_world(Some(2), 0);
    // Two ticks while ready use the whole budget.
    world.apply(Action::Tick);
    world.apply(Action::Tick);
    assert_eq!(world.slots[0].paused_ms, 2);
    assert_eq!(actions(&world), vec![Action::Step(0)]);
    // Acquire: the caller is ready again, but its budget is gone.
    world.apply(Action::Step(0));
    assert!(matches!(
        world.slots[0].state,
        SlotState::Ready(Input::Redis(_))
    ));
    assert_eq!(actions(&world), vec![Action::Step(0)]);
}

#[test]
fn arrival_is_slack_not_a_pause() {
    let mut world = lease_world(Some(0), 3);
    for _ in 0..3 {
        assert!(actions(&world).contains(&Action::Tick));
        world.apply(Action::Tick);
    }
    assert_eq!(world.slots[0].paused_ms, 0);
    assert_eq!(actions(&world), vec![Action::Step(0)]);
}

#[test]
fn unbounded_pauses_keep_no_counters_so_equal_states_stay_equal() {
    let mut world = lease_world(None, 5);
    assert_eq!(world.slots[0].slack_ms, 0);
    world.apply(Action::Tick);
    world.apply(Action::Tick);
    assert_eq!(world.slots[0].paused_ms, 0);
    assert_eq!(world.slots[0].slack_ms, 0);
}

#[test]
fn a_point_resumes_in_the_same_step_and_is_reported() {
    let mut world = lease_world(None, 0);
    world.apply(Action::Step(0)); // acquire
    let events = world.apply_events(Action::Step(0)); // after-acquire, then the read
    let text = format!("{events:?}");
    assert!(text.contains("AfterAcquire"), "{text}");
    assert!(text.contains("Get"), "{text}");
}

#[test]
fn a_random_backoff_wakes_at_its_shortest_and_may_sleep_on() {
    // Two callers, no pauses: the second finds the lock busy and backs off 5..14 ms.
    let mut config = CheckConfig::new(Safeguard::Lease {
        release: ReleaseVia::Script,
    });
    config.callers = 2;
    let world_config = WorldConfig {
        max_pause_ms: Some(0),
        horizon_ms: 30,
        failovers: 0,
        arrival_window_ms: 0,
    };
    let mut world = World::new(&config.scenario(), &config.tokens(), world_config).unwrap();
    world.apply(Action::Step(0)); // caller 1 acquires
    world.apply(Action::Step(1)); // caller 2 finds it held
    world.apply(Action::Step(1)); // ... and backs off
    assert_eq!(world.slots[1].state, SlotState::Sleeping { wake_ms: 5 });
    assert_eq!(world.slots[1].slack_ms, 9);
}

#[test]
fn every_offered_action_is_enabled_and_nothing_else_is() {
    let world = lease_world(Some(0), 0);
    let offered = actions(&world);
    for action in [
        Action::Step(0),
        Action::Step(1),
        Action::Step(200),
        Action::Tick,
        Action::Replicate,
        Action::Failover,
    ] {
        assert_eq!(
            world.is_enabled(action),
            offered.contains(&action),
            "{action:?}"
        );
    }
}

#[test]
#[should_panic(expected = "disabled action Tick")]
fn applying_a_disabled_action_is_a_bug_not_a_state() {
    // Without pauses a ready caller must step first: time may not pass.
    let mut world = lease_world(Some(0), 0);
    world.apply(Action::Tick);
}

/// Under `appendfsync everysec` the search may fsync the append-only file at any moment (once
/// per second of the horizon): a crash after that fsync reloads the caller's lock, a crash
/// without it reloads the keyspace of the start. Under `always` there is no fsync to choose.
#[test]
fn a_crash_reloads_the_keys_of_the_last_fsync() {
    use leaselab_model::redis::aof::Appendfsync;
    use leaselab_model::world::Reload;
    let mut config = CheckConfig::new(Safeguard::Lease {
        release: ReleaseVia::Script,
    });
    config.callers = 1;
    config.max_pause_ticks = Some(0);
    config.restarts = 1;
    config.restarts_from_aof = true;
    let start = config.world().expect("valid");
    assert_eq!(start.extra.fsyncs_left, 1, "a horizon under 1 s: one fsync");
    let mut acquired = start.clone();
    acquired.apply(Action::Tick);
    acquired.apply(Action::Step(0));
    assert_eq!(acquired.lock_holder_at(acquired.now_ms), Some(0));
    assert!(actions(&acquired).contains(&Action::AofFsync));

    let mut fsynced = acquired.clone();
    fsynced.apply(Action::AofFsync);
    assert!(
        !actions(&fsynced).contains(&Action::AofFsync),
        "the one fsync is spent"
    );
    let events = fsynced.apply_events(Action::RedisRestart);
    assert!(events.iter().any(|e| matches!(
        e,
        leaselab_model::world::Event::RedisRestarted {
            reloaded: Reload::FromFsync { at_ms: 1 }
        }
    )));
    assert_eq!(
        fsynced.lock_holder_at(fsynced.now_ms),
        Some(0),
        "the lock came back"
    );

    let mut unsynced = acquired.clone();
    unsynced.apply(Action::RedisRestart);
    assert_eq!(
        unsynced.lock_holder_at(unsynced.now_ms),
        None,
        "the lock is gone"
    );

    config.aof_appendfsync = Appendfsync::Always;
    let always = config.world().expect("valid");
    assert_eq!(always.extra.fsyncs_left, 0);
    config.aof_appendfsync = Appendfsync::Everysec;
    config.horizon_ticks = Some(2_500);
    assert_eq!(
        config.world().expect("valid").extra.fsyncs_left,
        3,
        "1 + 2500 / 1000"
    );
}
