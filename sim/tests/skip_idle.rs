//! Skipping idle hosts (turmoil's `skip_idle_hosts`, on by default in `SimConfig`) changes
//! nothing a run does: every tour row, the fault scenarios and a run stopped at its horizon
//! give the same event log, digest for digest, with and without it, on both named timings
//! (the 100 µs tick of `localhost` falls between the milliseconds a lease expires on).

use leaselab_model::fault::{Fault, Host};
use leaselab_model::scenario::{Scenario, Timing, Variant};
use leaselab_sim::faults::fault_scenario;
use leaselab_sim::run::{run_with, RunReport, SimConfig};

fn both(scenario: &Scenario, seed: u64, config: SimConfig) -> (RunReport, RunReport) {
    let skipping = SimConfig {
        skip_idle_hosts: true,
        ..config
    };
    let stepping = SimConfig {
        skip_idle_hosts: false,
        ..config
    };
    (
        run_with(scenario, seed, &skipping).unwrap(),
        run_with(scenario, seed, &stepping).unwrap(),
    )
}

fn assert_same(label: &str, scenario: &Scenario, seeds: std::ops::RangeInclusive<u64>) {
    for name in Timing::NAMES {
        let mut scenario = scenario.clone();
        Timing::named(name).unwrap().apply(&mut scenario);
        assert_same_on(&format!("{label} ({name})"), &scenario, seeds.clone());
    }
}

fn assert_same_on(label: &str, scenario: &Scenario, seeds: std::ops::RangeInclusive<u64>) {
    for seed in seeds {
        let (skipping, stepping) = both(scenario, seed, SimConfig::for_scenario(scenario));
        assert!(!skipping.events.is_empty(), "{label} seed {seed}");
        assert_eq!(
            skipping.events.len(),
            stepping.events.len(),
            "{label} seed {seed}: event counts differ"
        );
        if let Some(index) = (0..skipping.events.len())
            .find(|&index| skipping.events[index] != stepping.events[index])
        {
            panic!(
                "{label} seed {seed}: first difference at event {index}:\n  skipping: {:?}\n  stepping: {:?}",
                skipping.events[index], stepping.events[index]
            );
        }
        assert_eq!(skipping.digest(), stepping.digest(), "{label} seed {seed}");
        assert_eq!(skipping.line(), stepping.line(), "{label} seed {seed}");
        assert!(
            skipping.host_ticks <= stepping.host_ticks,
            "{label} seed {seed}: skipping entered hosts {} times, stepping {}",
            skipping.host_ticks,
            stepping.host_ticks
        );
    }
}

fn tour_rows() -> Vec<(String, Scenario)> {
    let variants = [
        ("step1-race", Variant::default()),
        ("step2-lock", Variant::default()),
        ("step3-ttl", Variant::default()),
        (
            "step3-ttl",
            Variant {
                watchdog: true,
                ..Variant::default()
            },
        ),
        ("step4-redislock", Variant::default()),
        (
            "step4-redislock",
            Variant {
                jitter: true,
                ..Variant::default()
            },
        ),
        ("step5-fencing", Variant::default()),
        (
            "step5-fencing",
            Variant {
                unfenced: true,
                ..Variant::default()
            },
        ),
        ("step6-verify", Variant::default()),
    ];
    let mut rows: Vec<(String, Scenario)> = variants
        .into_iter()
        .map(|(step, variant)| {
            (
                format!("{step} {variant:?}"),
                Scenario::tutorial(step, variant).unwrap(),
            )
        })
        .collect();
    for same_version in [false, true] {
        let mut step6 = Scenario::tutorial(
            "step6-verify",
            Variant {
                same_version,
                ..Variant::default()
            },
        )
        .unwrap();
        step6.params.ttl_ms = 1;
        rows.push((format!("step6-verify --ttl 1ms same={same_version}"), step6));
    }
    rows
}

#[test]
fn every_tour_row_runs_the_same_with_idle_hosts_skipped() {
    for (label, scenario) in tour_rows() {
        assert_same(&label, &scenario, 1..=2);
    }
}

#[test]
fn the_fault_scenarios_run_the_same_with_idle_hosts_skipped() {
    for name in ["failover-fencing", "partition-watchdog"] {
        for unfenced in [false, true] {
            let scenario = fault_scenario(name, unfenced).unwrap();
            assert_same(&format!("{name} unfenced={unfenced}"), &scenario, 1..=3);
        }
    }
    // A restart bounces the Redis host (a new runtime) while callers wait on it.
    let mut restart = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    restart.callers = 5;
    restart.faults = vec![Fault::RedisRestart { at_ms: 3 }];
    assert_same("restart", &restart, 1..=3);
    // A clock jump expires a lease between the holder's commands.
    let mut jump = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    jump.callers = 3;
    jump.params.work_ms = 50;
    jump.params.ttl_ms = 500;
    jump.faults = vec![Fault::ClockJump {
        host: Host::Redis,
        at_ms: 20,
        jump_ms: 1_000,
    }];
    assert_same("clock jump", &jump, 1..=3);
}

#[test]
fn the_redlock_scenarios_run_the_same_with_idle_hosts_skipped() {
    // Nodes restart, crash and come back, jump their clocks, and are cut off a caller.
    for name in [
        "redlock-restart",
        "redlock-clock-jump",
        "redlock-delayed-restart",
        "redlock-pause",
    ] {
        let scenario = fault_scenario(name, false).unwrap();
        assert_same(name, &scenario, 1..=2);
    }
}

#[test]
fn a_run_stopped_at_its_horizon_is_the_same_with_idle_hosts_skipped() {
    let scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
    let config = SimConfig {
        horizon_ms: 100,
        ..SimConfig::default()
    };
    let (skipping, stepping) = both(&scenario, 1, config);
    assert!(!skipping.finished);
    assert_eq!(skipping.digest(), stepping.digest());
    assert_eq!(skipping.elapsed_ms, stepping.elapsed_ms);
}

#[test]
fn idle_hosts_are_really_skipped() {
    // Step 5: the holder sleeps through a 250 ms pause while the other caller waits 150 ms
    // to start, finishes, and leaves its connections' last messages undelivered. Stepped,
    // every host is entered every millisecond (about 4 x 250); skipped, a host is entered
    // only when a message, a woken task or a timer of its own is due.
    let scenario = Scenario::tutorial("step5-fencing", Variant::default()).unwrap();
    let (skipping, stepping) = both(&scenario, 1, SimConfig::for_scenario(&scenario));
    eprintln!(
        "host ticks: {} skipping, {} stepping",
        skipping.host_ticks, stepping.host_ticks
    );
    assert!(stepping.host_ticks >= 3 * 250, "{}", stepping.host_ticks);
    assert!(
        skipping.host_ticks * 10 <= stepping.host_ticks,
        "skipping entered hosts {} times, stepping {}",
        skipping.host_ticks,
        stepping.host_ticks
    );
    // Fifty callers queueing for one lock: each waits between its retries.
    let scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    let (skipping, stepping) = both(&scenario, 1, SimConfig::for_scenario(&scenario));
    eprintln!(
        "step 2 host ticks: {} skipping, {} stepping",
        skipping.host_ticks, stepping.host_ticks
    );
    assert!(
        skipping.host_ticks * 2 <= stepping.host_ticks,
        "skipping entered hosts {} times, stepping {}",
        skipping.host_ticks,
        stepping.host_ticks
    );
}
