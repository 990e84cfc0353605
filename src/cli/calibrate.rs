//! `leaselab calibrate`: measures, on the real servers at hand, the PostgreSQL costs the
//! simulation's timing models (a session's first statement, a commit that wrote) and the
//! round trips they are measured against, and prints the `compare` flags that use them.
//! `compare --calibrate` does the same before it compares.

use clap::Args as ClapArgs;
use leaselab_model::scenario::{Timing, TimingPreset};
use leaselab_sim::calibrate::{
    calibrate, CalibrateConfig, Calibration, Samples, MAX_LOAD_CALLERS, MAX_SAMPLES,
};

use super::run::{out, real_error};
use super::tour::{DEFAULT_POSTGRES, DEFAULT_REDIS};
use crate::exit::{CommandResult, Status, UsageError};

/// Exit codes of `calibrate`, printed under its `--help`.
pub const CALIBRATE_EXIT_CODES: &str =
    "Exit codes: 0 measured; 2 bad usage, or a server that cannot be reached or set up.";

/// Measure the real servers' costs that the simulation's timing models.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The real Redis (default: $LEASELAB_REDIS_URL, else redis://127.0.0.1:6379).
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// The real PostgreSQL (default: $LEASELAB_DATABASE_URL, else
    /// postgres://postgres@127.0.0.1/test).
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// Samples of each kind (each first-statement sample opens a PostgreSQL session).
    #[arg(long, default_value_t = 50, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SAMPLES)))]
    pub samples: u32,
    /// Callers retrying a Redis lock every 2 ms on the client's thread while PostgreSQL is
    /// measured, as step 6's 50 callers do (0: measure on an idle client).
    #[arg(long, default_value_t = 50, value_name = "N",
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_LOAD_CALLERS)))]
    pub load_callers: u32,
    /// One JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `flag`, else the environment variable `var` when set and not empty, else `default`.
pub fn server_url(flag: Option<String>, var: &str, default: &str) -> String {
    flag.or_else(|| std::env::var(var).ok().filter(|value| !value.is_empty()))
        .unwrap_or_else(|| default.to_string())
}

/// Measures the servers; the error names the server and what failed.
pub fn measure(
    redis: Option<String>,
    postgres: Option<String>,
    samples: u32,
    load_callers: u32,
) -> Result<Calibration, UsageError> {
    calibrate(&CalibrateConfig {
        redis_url: redis,
        postgres_url: postgres,
        samples,
        load_callers,
    })
    .map_err(real_error)
}

fn row(name: &str, samples: &Samples) -> String {
    format!(
        "{name:<34} {:>7} {:>7} {:>7} {:>7} {:>7}",
        samples.min_us, samples.p10_us, samples.median_us, samples.p90_us, samples.max_us
    )
}

/// The measurements as a table (µs), and what the simulation takes from them.
pub fn describe(calibration: &Calibration) -> Vec<String> {
    let mut lines = vec![
        format!(
            "PostgreSQL measured while {} caller(s) retried a Redis lock every 2 ms",
            calibration.load_callers
        ),
        format!(
            "{:<34} {:>7} {:>7} {:>7} {:>7} {:>7}",
            "µs at the client", "min", "p10", "median", "p90", "max"
        ),
    ];
    if let Some(redis) = &calibration.redis_round_trip {
        lines.push(row("Redis PING", redis));
    }
    if let Some(caller) = &calibration.caller_round_trip {
        lines.push(row("Redis request of a caller, real run", caller));
    }
    if let Some(postgres) = &calibration.postgres {
        lines.push(row("PostgreSQL warm SELECT", &postgres.warm_statement));
        lines.push(row("PostgreSQL first statement", &postgres.first_statement));
        lines.push(row("PostgreSQL first write", &postgres.write));
    }
    if let Some(in_run) = &calibration.in_run {
        lines.push(row(
            "first statement, real step6 runs",
            &in_run.first_statement,
        ));
        lines.push(row("fenced UPDATE, real step6 runs", &in_run.write));
    }
    if calibration.in_run.is_some() {
        lines.push(String::new());
        lines.push(
            "PostgreSQL's costs are taken from the real runs: each median less the two round trips \
             the simulation charges for a statement (client CPU, a tick, two one-way latencies)"
                .to_string(),
        );
    } else if let Some(postgres) = &calibration.postgres {
        lines.push(String::new());
        lines.push(format!(
            "a session's first statement: {} µs over its two round trips (median first − 2 × median warm)",
            postgres.first_statement_extra_us()
        ));
        lines.push(format!(
            "a commit that wrote: {} µs over its two round trips (median first write − 2 × median warm)",
            postgres.commit_extra_us()
        ));
    }
    lines
}

/// Runs `leaselab calibrate`.
pub fn execute(args: Args) -> CommandResult {
    let redis = server_url(args.redis, "LEASELAB_REDIS_URL", DEFAULT_REDIS);
    let postgres = server_url(args.postgres, "LEASELAB_DATABASE_URL", DEFAULT_POSTGRES);
    let calibration = measure(
        Some(redis.clone()),
        Some(postgres.clone()),
        args.samples,
        args.load_callers,
    )?;
    let localhost = TimingPreset::localhost();
    let latency = calibration.latency_us(&localhost.timing);
    let timing = calibration.apply(localhost.timing, latency.unwrap_or(localhost.latency_us));
    let latency_flag = latency
        .map(|(min_us, max_us)| format!("--latency-us {min_us}-{max_us} "))
        .unwrap_or_default();
    // The first statement's median alone, without a random part.
    let median_only = calibration
        .postgres_costs(&localhost.timing, latency.unwrap_or(localhost.latency_us))
        .map(|postgres| postgres.first_statement_extra_us());
    if args.json {
        let document = serde_json::json!({
            "redis": redis,
            "postgres": postgres,
            "calibration": calibration,
            "pg_first_statement_us": timing.pg_first_statement_us,
            "pg_first_statement_tail_us": timing.pg_first_statement_tail_us,
            "pg_commit_us": timing.pg_commit_us,
            "latency_us": latency,
            "median_only": median_only.map(|first_us| serde_json::json!({
                "pg_first_statement_us": first_us,
                "pg_first_statement_tail_us": 0,
            })),
        });
        out!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
        return Ok(Status::Ok);
    }
    out!(
        "{} samples of each, against Redis {redis} and PostgreSQL {postgres} (wall clock: this machine now, not reproducible)",
        args.samples
    );
    for line in describe(&calibration) {
        out!("{line}");
    }
    out!("");
    out!(
        "compare with these: leaselab compare {latency_flag}--pg-first-statement-us {} --pg-first-statement-tail-us {} --pg-commit-us {} (or leaselab compare --calibrate)",
        timing.pg_first_statement_us,
        timing.pg_first_statement_tail_us,
        timing.pg_commit_us
    );
    out!("  (a first statement's fixed part and the mean of its random part, fitted to the median and 90th percentile above)");
    if latency.is_some() {
        out!("  (the one-way latency under which a simulated round trip, a tick, the client CPU and two latencies, spans the caller's round trips' 10th to 90th percentile)");
    }
    if let Some(first_us) = median_only {
        out!(
            "or, with the median alone: leaselab compare {latency_flag}--pg-first-statement-us {first_us} --pg-first-statement-tail-us 0 --pg-commit-us {}",
            timing.pg_commit_us
        );
    }
    out!(
        "the localhost timing's own: {} and {} µs, measured on this project's machine on 4 Dec 2026",
        Timing::localhost().pg_first_statement_us,
        Timing::localhost().pg_commit_us
    );
    Ok(Status::Ok)
}
