//! The exhaustive checker's throughput on the 3-caller fenced-cas proof.
//!
//! `cargo bench -p leaselab-checker --bench check` (optionally `-- --threads 1,2 --callers 3`).
//! Prints unique states per second and the total time for each thread count.

use std::time::Instant;

use leaselab_checker::bfs::Counters;
use leaselab_checker::{
    run, CheckConfig, LeaseModel, PropertyVerdict, RunOptions, Strategy, LEDGER,
};
use leaselab_model::postgres::WriteGuard;
use leaselab_model::safeguard::Safeguard;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let threads: Vec<usize> = value("--threads")
        .unwrap_or_else(|| "1,2".into())
        .split(',')
        .map(|t| t.parse().expect("--threads takes numbers"))
        .collect();
    let callers: u32 = value("--callers")
        .map(|c| c.parse().expect("--callers takes a number"))
        .unwrap_or(3);
    let mut config = CheckConfig::new(Safeguard::Fenced {
        guard: WriteGuard::FenceBelowAndEqual,
    });
    config.callers = callers;
    config.ttl_ticks = 1;
    config.work_ticks = 1;
    config.horizon_ticks = Some(6);
    let model = LeaseModel::new(config).expect("a valid check");
    println!(
        "fenced-cas proof: {} (TTL {}, work {})",
        config.bound_text(),
        config.ttl_ticks,
        config.work_ticks
    );
    for threads in threads {
        let start = Instant::now();
        let report = run(
            &model,
            RunOptions {
                strategy: Strategy::Bfs,
                threads,
                max_unique: None,
                stop_at_violation: false,
            },
            &Counters::default(),
        );
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(report.verdict(LEDGER), Some(PropertyVerdict::Safe));
        println!(
            "{threads} thread(s): {} unique states ({} generated) in {secs:.2}s: {:.0} unique/s, {:.0} generated/s",
            report.unique_states,
            report.states_generated,
            report.unique_states as f64 / secs,
            report.states_generated as f64 / secs
        );
    }
}
