//! The shared client CPU (`leaselab_sim::clock::ClientCpu`, the scenario's `timing.client_cpu_us`):
//! commands of all callers queue on one CPU, so a costly client spreads a burst of callers
//! over several ticks; at `tick-1ms`'s cost the tutorial's bursts fit in one tick. The runs here
//! are on the 1 ms tick (`TimingPreset::tick_1ms`), whose ticks these figures count.

use leaselab_model::redis::Reply;
use leaselab_model::scenario::{Scenario, TimingPreset, Variant};
use leaselab_sim::events::What;
use leaselab_sim::run::run;

fn step1() -> Scenario {
    let mut scenario = Scenario::tutorial("step1-race", Variant::default()).unwrap();
    TimingPreset::tick_1ms().apply(&mut scenario);
    scenario
}

fn with_cpu(scenario: &Scenario, cost_us: u64) -> Scenario {
    let mut scenario = scenario.clone();
    scenario.timing.client_cpu_us = cost_us;
    scenario
}

/// Simulated times (µs from the release) at which the callers' `GET`s were answered (a
/// request is logged when issued, before it waits for the CPU; a `GET` answers a bulk string, `SET` the status `OK`).
fn read_times(report: &leaselab_sim::run::RunReport) -> Vec<i64> {
    report
        .events
        .iter()
        .filter(|e| {
            matches!(
                &e.what,
                What::RedisReply {
                    reply: Reply::Bulk(_),
                    ..
                }
            )
        })
        .map(|e| e.t_us)
        .collect()
}

#[test]
fn a_costly_client_cpu_spreads_the_first_reads_and_the_race_loses_fewer_updates() {
    let scenario = step1();
    let mut balances = Vec::new();
    for seed in 1..=5 {
        let free = run(&with_cpu(&scenario, 0), seed).unwrap();
        assert_eq!(free.ledger.final_balance, 90, "seed {seed}");
        let free_times = read_times(&free);
        let costly = run(&with_cpu(&scenario, 150), seed).unwrap();
        let times = read_times(&costly);
        // 50 GETs at 150 µs each need 7.5 ms of CPU: the last one is answered 7 ticks after
        // the first (less at most one tick of latency); without the model all are answered
        // within the latency's spread (≤ 1 tick each way).
        assert_eq!((times.len(), free_times.len()), (50, 50));
        let first_reads = |times: &[i64]| times[49] - times[0];
        assert!(first_reads(&times) >= 6_000, "seed {seed}: {times:?}");
        assert!(
            first_reads(&free_times) <= 2_000,
            "seed {seed}: {free_times:?}"
        );
        assert!(costly.elapsed_ms > free.elapsed_ms, "seed {seed}");
        balances.push(costly.ledger.final_balance);
    }
    // Late readers see an earlier write: some runs end below 90, none above.
    assert!(balances.iter().any(|&b| b < 90), "{balances:?}");
    assert!(balances.iter().all(|&b| b <= 90), "{balances:?}");
}

#[test]
fn at_the_1ms_ticks_cost_a_burst_of_fifty_fits_in_one_tick() {
    let scenario = step1();
    for seed in 1..=3 {
        let default = run(&scenario, seed).unwrap();
        let free = run(&with_cpu(&scenario, 0), seed).unwrap();
        assert_eq!(default.digest(), free.digest(), "seed {seed}");
    }
}

#[test]
fn the_client_cpu_queue_is_deterministic() {
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default()).unwrap();
    TimingPreset::tick_1ms().apply(&mut scenario);
    let costly = with_cpu(&scenario, 400);
    let a = run(&costly, 7).unwrap();
    let b = run(&costly, 7).unwrap();
    assert_eq!(a.digest(), b.digest());
    let free = run(&with_cpu(&scenario, 0), 7).unwrap();
    assert_ne!(a.digest(), free.digest());
}
