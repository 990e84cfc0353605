//! Measuring what the `localhost` timing models, on the servers at hand.
//!
//! The simulation's PostgreSQL answers a session's first statement and a statement that
//! commits a write later than a plain one (`Timing::pg_first_statement_us`,
//! `Timing::pg_commit_us`). The defaults were measured on one machine on one day; a
//! PostgreSQL that answers slower (another machine, another load, another disk under its WAL)
//! needs its own. This module measures both as a tutorial caller meets them: through the same
//! `tokio-postgres` client, preparing each statement on first use and then executing it, as
//! the driver does (`sim/src/driver.rs`), on sessions opened together before the first of
//! them sends anything, while other callers retry a Redis lock every 2 ms on the same client
//! thread (step 6's 50 callers by default: that load alone makes a first statement about
//! half as slow again on a 2-core machine). Per session, in a caller's order:
//!
//! 1. its first statement: prepare and execute a `SELECT` of one row by key;
//! 2. its first write: prepare and execute an autocommit `UPDATE` of that row, which waits
//!    for its commit record to reach the disk;
//! 3. a warm round trip: the prepared `SELECT` again (what every statement costs at least).
//!
//! The simulation already charges two round trips for each of the first two (a prepare and
//! an execute), so the extras are `first − 2 × warm` and `write − 2 × warm` (medians).
//!
//! Nothing here is simulated: these are wall-clock measurements of real servers, so they are
//! not reproducible; a run that uses them records them in its timing and replays exactly.
//! The probe works in a schema and under a key of its own (`leaselab_<pid>_0_<n>_calibrate`,
//! `leaselab:<pid>:0:<n>:calibrate`), removed at the end.

use std::time::{Duration, Instant};

use leaselab_model::scenario::{Timing, MAX_TIMING_COST_US};
use serde::Serialize;

use crate::real::{connect_postgres_checked, connect_redis_checked, Namespace, RealError};

/// The most samples of each kind a calibration takes (each first statement opens a session).
pub const MAX_SAMPLES: u32 = 1_000;

/// Sessions open at once while first statements are measured: the tutorial's 50 callers, well
/// under PostgreSQL's default `max_connections` of 100.
const SESSION_GROUP: u32 = 50;

/// How long one probe statement may take before the calibration gives up.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What to measure and how often.
#[derive(Clone, Debug)]
pub struct CalibrateConfig {
    /// The Redis to time `PING` round trips on (none: not measured).
    pub redis_url: Option<String>,
    /// The PostgreSQL to time statements on (none: not measured).
    pub postgres_url: Option<String>,
    /// Samples of each kind, 1..=[`MAX_SAMPLES`].
    pub samples: u32,
    /// Callers retrying a Redis lock every 2 ms while PostgreSQL is measured, at most
    /// [`MAX_LOAD_CALLERS`] (0: PostgreSQL measured on an idle client; no Redis: none).
    pub load_callers: u32,
}

/// The most load callers a calibration starts (each opens a Redis connection).
pub const MAX_LOAD_CALLERS: u32 = 1_000;

/// How long a load caller sleeps between its attempts, as the tutorial's callers do.
const LOAD_RETRY: Duration = Duration::from_millis(2);

/// Samples of one kind, µs, summarised.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Samples {
    /// The least.
    pub min_us: u64,
    /// The 10th percentile (nearest rank).
    pub p10_us: u64,
    /// The median (nearest rank).
    pub median_us: u64,
    /// The 90th percentile (nearest rank).
    pub p90_us: u64,
    /// The greatest.
    pub max_us: u64,
}

impl Samples {
    /// Summarises `samples_us` (at least one).
    pub fn new(mut samples_us: Vec<u64>) -> Samples {
        assert!(!samples_us.is_empty(), "a summary of no samples");
        samples_us.sort_unstable();
        let rank = |percent: usize| {
            // Nearest rank: the smallest sample with at least `percent` % at or below it.
            let n = samples_us.len();
            let index = (percent * n).div_ceil(100).clamp(1, n) - 1;
            samples_us[index]
        };
        Samples {
            min_us: samples_us[0],
            p10_us: rank(10),
            median_us: rank(50),
            p90_us: rank(90),
            max_us: samples_us[samples_us.len() - 1],
        }
    }
}

/// What a calibration measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Calibration {
    /// Samples of each kind.
    pub samples: u32,
    /// Callers that retried a Redis lock while PostgreSQL was measured.
    pub load_callers: u32,
    /// `PING` on a warm connection, on an idle client (Redis measured).
    pub redis_round_trip: Option<Samples>,
    /// The PostgreSQL measurements (PostgreSQL measured).
    pub postgres: Option<PostgresCosts>,
}

/// PostgreSQL's statement times, µs, at the client.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PostgresCosts {
    /// A prepared `SELECT` of one row on a session that ran it before.
    pub warm_statement: Samples,
    /// Prepare and execute of that `SELECT` on a session just opened.
    pub first_statement: Samples,
    /// Prepare and execute of an autocommit `UPDATE` of that row, the session's first write.
    pub write: Samples,
}

impl PostgresCosts {
    /// The extra time of a session's first statement: see [`PostgresCosts::extra_us`].
    pub fn first_statement_extra_us(&self) -> u64 {
        self.extra_us(&self.first_statement)
    }

    /// The extra time of a session's first write: see [`PostgresCosts::extra_us`].
    pub fn commit_extra_us(&self) -> u64 {
        self.extra_us(&self.write)
    }

    /// The first statement's spread as the simulation's random part of it
    /// (`Timing::pg_first_statement_tail_us`), with the fixed part that keeps the median:
    /// (fixed µs, tail mean µs). A fixed part plus an exponential of mean `m` has its median
    /// `m·ln 2` and its 90th percentile `m·ln 10` above the fixed part, so `m` is the measured
    /// distance from median to 90th percentile divided by `ln 5`; both rounded to 10 µs.
    pub fn first_statement_with_tail_us(&self) -> (u64, u64) {
        let spread = self
            .first_statement
            .p90_us
            .saturating_sub(self.first_statement.median_us);
        let round = |us: f64| ((us / 10.0).round() as u64 * 10).min(MAX_TIMING_COST_US);
        let tail = round(spread as f64 / 5f64.ln());
        let fixed =
            round((self.first_statement_extra_us() as f64 - tail as f64 * 2f64.ln()).max(0.0));
        (fixed, tail)
    }

    /// What `measured` takes beyond the two round trips (a prepare, an execute) the
    /// simulation already charges for it (medians), rounded to 10 µs, at most
    /// [`MAX_TIMING_COST_US`].
    fn extra_us(&self, measured: &Samples) -> u64 {
        let extra = measured
            .median_us
            .saturating_sub(2 * self.warm_statement.median_us);
        (extra.saturating_add(5) / 10 * 10).min(MAX_TIMING_COST_US)
    }
}

impl Calibration {
    /// `timing` with the PostgreSQL costs this calibration measured (unchanged without them):
    /// a session's first statement as a fixed part and a random part fitted to its median
    /// and 90th percentile ([`PostgresCosts::first_statement_with_tail_us`]), a commit that
    /// wrote by its median.
    pub fn apply(&self, mut timing: Timing) -> Timing {
        if let Some(postgres) = &self.postgres {
            let (fixed_us, tail_us) = postgres.first_statement_with_tail_us();
            timing.pg_first_statement_us = fixed_us;
            timing.pg_first_statement_tail_us = tail_us;
            timing.pg_commit_us = postgres.commit_extra_us();
        }
        timing
    }
}

/// Measures the servers `config` names, on a runtime of its own; cleans its schema up.
pub fn calibrate(config: &CalibrateConfig) -> Result<Calibration, RealError> {
    if !(1..=MAX_SAMPLES).contains(&config.samples) {
        return Err(RealError::Refused(format!(
            "--samples {}: give 1 to {MAX_SAMPLES}",
            config.samples
        )));
    }
    if config.load_callers > MAX_LOAD_CALLERS {
        return Err(RealError::Refused(format!(
            "--load-callers {}: give 0 to {MAX_LOAD_CALLERS}",
            config.load_callers
        )));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| RealError::Server(format!("cannot start a tokio runtime: {error}")))?;
    runtime.block_on(async {
        let redis_round_trip = match &config.redis_url {
            Some(url) => Some(redis_round_trips(url, config.samples).await?),
            None => None,
        };
        let load = match &config.redis_url {
            Some(url) if config.load_callers > 0 && config.postgres_url.is_some() => {
                Some(RedisLoad::start(url, config.load_callers).await?)
            }
            _ => None,
        };
        let postgres = match &config.postgres_url {
            Some(url) => postgres_costs(url, config.samples).await.map(Some),
            None => Ok(None),
        };
        if let Some(load) = load {
            load.stop().await?;
        }
        let postgres = postgres?;
        Ok(Calibration {
            samples: config.samples,
            load_callers: match (&config.redis_url, &config.postgres_url) {
                (Some(_), Some(_)) => config.load_callers,
                _ => 0,
            },
            redis_round_trip,
            postgres,
        })
    })
}

fn elapsed_us(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

async fn redis_round_trips(url: &str, samples: u32) -> Result<Samples, RealError> {
    let mut connection = connect_redis_checked(url).await?;
    let fail = |error: String| RealError::Server(format!("--redis {url}: PING failed: {error}"));
    let mut times_us = Vec::with_capacity(samples as usize);
    // One unmeasured PING first: the connection's buffers and the server's client struct warm.
    for round in 0..=samples {
        let start = Instant::now();
        let ping = redis::cmd("PING");
        let answer = ping.query_async::<redis::Value>(&mut connection);
        match tokio::time::timeout(PROBE_TIMEOUT, answer).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(fail(error.to_string())),
            Err(_) => return Err(fail(format!("no answer within {PROBE_TIMEOUT:?}"))),
        }
        if round > 0 {
            times_us.push(elapsed_us(start));
        }
    }
    Ok(Samples::new(times_us))
}

async fn postgres_costs(url: &str, samples: u32) -> Result<PostgresCosts, RealError> {
    let schema = format!("{}_calibrate", Namespace::fresh(0).schema);
    let admin = connect_postgres_checked(url).await?;
    let fail = |what: &str, error: String| {
        RealError::Server(format!(
            "--postgres {url}: calibration {what} failed: {error}"
        ))
    };
    let setup = format!(
        "CREATE SCHEMA {schema}; \
         CREATE TABLE {schema}.wallets (id bigint PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL); \
         INSERT INTO {schema}.wallets VALUES (42, 100, 0)"
    );
    within(PROBE_TIMEOUT, admin.batch_execute(&setup))
        .await
        .map_err(|error| fail("setup", error))?;
    let measured = measure_postgres(url, &schema, samples).await;
    let drop = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
    let dropped = within(PROBE_TIMEOUT, admin.batch_execute(&drop))
        .await
        .map_err(|error| fail("cleanup", error));
    let costs = measured?;
    dropped?;
    Ok(costs)
}

async fn within<T, E: std::fmt::Display>(
    limit: Duration,
    future: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {limit:?}")),
    }
}

async fn measure_postgres(
    url: &str,
    schema: &str,
    samples: u32,
) -> Result<PostgresCosts, RealError> {
    let fail = |what: &str, error: String| {
        RealError::Server(format!(
            "--postgres {url}: calibration {what} failed: {error}"
        ))
    };
    // The tutorial's own statements, on sessions whose search_path is the probe's schema, as
    // a real run's callers send them (`sim/src/real.rs`).
    let select = "SELECT balance, fence FROM wallets WHERE id = 42";
    let update = "UPDATE wallets SET balance = $1, fence = $2 WHERE id = 42 AND fence < $2";
    let mut session: tokio_postgres::Config = url
        .parse()
        .map_err(|error| fail("session", format!("{error}")))?;
    session.options(format!("-csearch_path={schema}"));
    let balance: i64 = 100;
    let mut fence: i64 = 0;
    let mut first_us = Vec::with_capacity(samples as usize);
    let mut write_us = Vec::with_capacity(samples as usize);
    let mut warm_us = Vec::with_capacity(samples as usize);
    let mut left = samples;
    while left > 0 {
        // As in a run: the sessions are open before the first of them sends a statement.
        let group = left.min(SESSION_GROUP);
        left -= group;
        let mut clients = Vec::with_capacity(group as usize);
        for _ in 0..group {
            let client = within(PROBE_TIMEOUT, crate::clients::postgres_real(&session, url))
                .await
                .map_err(|error| fail("connect", error))?;
            clients.push(client);
        }
        for client in &clients {
            let start = Instant::now();
            let read = within(PROBE_TIMEOUT, client.prepare(select))
                .await
                .map_err(|error| fail("first statement", error))?;
            within(PROBE_TIMEOUT, client.query(&read, &[]))
                .await
                .map_err(|error| fail("first statement", error))?;
            first_us.push(elapsed_us(start));
            let start = Instant::now();
            let write = within(PROBE_TIMEOUT, client.prepare(update))
                .await
                .map_err(|error| fail("first write", error))?;
            fence += 1;
            within(PROBE_TIMEOUT, client.execute(&write, &[&balance, &fence]))
                .await
                .map_err(|error| fail("first write", error))?;
            write_us.push(elapsed_us(start));
            let start = Instant::now();
            within(PROBE_TIMEOUT, client.query(&read, &[]))
                .await
                .map_err(|error| fail("warm statement", error))?;
            warm_us.push(elapsed_us(start));
        }
    }
    Ok(PostgresCosts {
        warm_statement: Samples::new(warm_us),
        first_statement: Samples::new(first_us),
        write: Samples::new(write_us),
    })
}

/// Callers retrying a Redis lock (`SET key 1 NX PX 1000`, then 2 ms of sleep) on the
/// calibration's client thread until stopped: the load a tutorial caller's statements meet.
struct RedisLoad {
    url: String,
    key: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    admin: redis::aio::MultiplexedConnection,
}

impl RedisLoad {
    async fn start(url: &str, callers: u32) -> Result<RedisLoad, RealError> {
        let admin = connect_redis_checked(url).await?;
        let key = format!("{}calibrate", Namespace::fresh(0).prefix);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut load = RedisLoad {
            url: url.to_string(),
            key,
            stop,
            tasks: Vec::with_capacity(callers as usize),
            admin,
        };
        for _ in 0..callers {
            let connection = match connect_redis_checked(url).await {
                Ok(connection) => connection,
                Err(error) => {
                    let _ = load.stop().await;
                    return Err(error);
                }
            };
            load.tasks.push(tokio::spawn(retry_lock(
                connection,
                load.key.clone(),
                load.stop.clone(),
            )));
        }
        Ok(load)
    }

    /// Stops the callers and deletes the key.
    async fn stop(mut self) -> Result<(), RealError> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
        let delete = redis::cmd("DEL").arg(&self.key).to_owned();
        within(PROBE_TIMEOUT, delete.query_async::<i64>(&mut self.admin))
            .await
            .map(|_| ())
            .map_err(|error| {
                RealError::Server(format!(
                    "--redis {}: cannot delete the calibration's key {}: {error}",
                    self.url, self.key
                ))
            })
    }
}

async fn retry_lock(
    mut connection: redis::aio::MultiplexedConnection,
    key: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let attempt = redis::cmd("SET")
        .arg(&key)
        .arg(1)
        .arg("NX")
        .arg("PX")
        .arg(1_000)
        .to_owned();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let answer = attempt.query_async::<redis::Value>(&mut connection);
        if tokio::time::timeout(PROBE_TIMEOUT, answer).await.is_err() {
            return;
        }
        tokio::time::sleep(LOAD_RETRY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_ranks() {
        let samples = Samples::new((1..=10).rev().collect());
        assert_eq!(samples.min_us, 1);
        assert_eq!(samples.p10_us, 1);
        assert_eq!(samples.median_us, 5);
        assert_eq!(samples.p90_us, 9);
        assert_eq!(samples.max_us, 10);
        let one = Samples::new(vec![7]);
        assert_eq!([one.min_us, one.median_us, one.max_us], [7, 7, 7]);
    }

    fn costs(warm: u64, first: u64, write: u64) -> PostgresCosts {
        PostgresCosts {
            warm_statement: Samples::new(vec![warm]),
            first_statement: Samples::new(vec![first]),
            write: Samples::new(vec![write]),
        }
    }

    #[test]
    fn extras_subtract_the_round_trips_the_simulation_already_charges() {
        let measured = costs(150, 1_230, 754);
        assert_eq!(measured.first_statement_extra_us(), 930);
        assert_eq!(measured.commit_extra_us(), 450);
        // Faster than the round trips it is measured against: no extra, never an underflow.
        let quick = costs(500, 700, 900);
        assert_eq!(quick.first_statement_extra_us(), 0);
        assert_eq!(quick.commit_extra_us(), 0);
        // A stalled server is capped at the timing's limit.
        assert_eq!(
            costs(0, 5_000_000, 5_000_000).first_statement_extra_us(),
            MAX_TIMING_COST_US
        );
    }

    #[test]
    fn a_tail_fitted_to_median_and_90th_percentile_keeps_the_median() {
        let mut measured = costs(150, 1_230, 754);
        // No spread: no tail, the fixed part is the median's extra.
        assert_eq!(measured.first_statement_with_tail_us(), (930, 0));
        // Median 1,230, 90th percentile 2,839: tail (2,839 - 1,230) / ln 5 = 1,000 µs; the
        // fixed part 930 - 1,000 ln 2 = 237 µs, rounded to 240.
        measured.first_statement = Samples {
            min_us: 900,
            p10_us: 1_000,
            median_us: 1_230,
            p90_us: 2_839,
            max_us: 4_000,
        };
        assert_eq!(measured.first_statement_with_tail_us(), (240, 1_000));
        // A spread wider than the median's extra: the fixed part stops at 0.
        measured.first_statement.p90_us = 20_000;
        assert_eq!(measured.first_statement_with_tail_us().0, 0);
    }

    #[test]
    fn apply_sets_the_postgres_costs_only() {
        let calibration = Calibration {
            samples: 1,
            load_callers: 0,
            redis_round_trip: Some(Samples::new(vec![90])),
            postgres: Some(costs(150, 1_230, 754)),
        };
        let timing = calibration.apply(Timing::localhost());
        assert_eq!(timing.pg_first_statement_us, 930);
        assert_eq!(
            timing.pg_first_statement_tail_us, 0,
            "one sample: no spread"
        );
        assert_eq!(timing.pg_commit_us, 450);
        // With a spread, the fitted fixed part and tail (see the fit's own test).
        let mut spread = calibration.clone();
        let postgres = spread.postgres.as_mut().expect("measured");
        postgres.first_statement.p90_us = 2_839;
        let timing = spread.apply(Timing::localhost());
        assert_eq!(
            (
                timing.pg_first_statement_us,
                timing.pg_first_statement_tail_us
            ),
            (240, 1_000)
        );
        assert_eq!(timing.pg_commit_us, 450);
        assert_eq!(timing.tick_us, Timing::localhost().tick_us);
        assert_eq!(timing.client_cpu_us, Timing::localhost().client_cpu_us);
        let without = Calibration {
            postgres: None,
            ..calibration
        };
        assert_eq!(without.apply(Timing::localhost()), Timing::localhost());
    }
}
