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

use leaselab_model::postgres::Statement;
use leaselab_model::scenario::{Scenario, Timing, Variant, MAX_TIMING_COST_US};
use serde::Serialize;

use crate::events::{Event, What};
use crate::real::{
    connect_postgres_checked, connect_redis_checked, Namespace, RealConfig, RealError,
};

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
    /// A caller's Redis requests inside real runs, request sent to reply read as the run's own
    /// events time them: the driver, the client and the event log included, which a bare
    /// `PING` does not see ([`caller_round_trips`]; Redis measured).
    pub caller_round_trip: Option<Samples>,
    /// The PostgreSQL measurements (PostgreSQL measured).
    pub postgres: Option<PostgresCosts>,
    /// The same statements as the tutorial's step 6 callers meet them inside real runs
    /// (both servers measured; [`in_run_statements`]).
    pub in_run: Option<InRunStatements>,
}

/// PostgreSQL's statements inside real step6-verify runs (50 callers, one client thread), µs
/// from a caller's `sql-request` event to its `sql-reply`: what the probe of
/// [`PostgresCosts`] cannot see, the run's own client loop answering later under its load.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InRunStatements {
    /// Real runs made.
    pub runs: u32,
    /// Each caller's first statement (its `SELECT`, prepared on first use).
    pub first_statement: Samples,
    /// Each writer's fenced `UPDATE` (prepared on first use; its commit).
    pub write: Samples,
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

/// The most one-way latency a calibration sets, µs: far above any localhost measurement.
pub const MAX_CALIBRATED_LATENCY_US: u64 = 100_000;

/// Requests a lone step2-lock caller sends in one run: acquire, read, write, release.
const REQUESTS_PER_RUN: u32 = 4;

impl Calibration {
    /// The one-way network latency (min, max), µs, under which the simulation's Redis round
    /// trips span what a caller measured in real runs ([`Calibration::caller_round_trip`]),
    /// from its 10th to its 90th percentile. A simulated round trip takes the client CPU, a
    /// tick and the two one-way latencies (`crate::caller`'s module docs), so each bound is
    /// `(measured − tick − client CPU) / 2`, at least 0, rounded to 10 µs. None without the
    /// measurement.
    pub fn latency_us(&self, timing: &Timing) -> Option<(u64, u64)> {
        let measured = self.caller_round_trip.as_ref()?;
        let floor_us = timing.tick_us.saturating_add(timing.client_cpu_us);
        let one_way = |round_trip_us: u64| {
            let us = round_trip_us.saturating_sub(floor_us) / 2;
            (us.saturating_add(5) / 10 * 10).min(MAX_CALIBRATED_LATENCY_US)
        };
        let min_us = one_way(measured.p10_us);
        Some((min_us, one_way(measured.p90_us).max(min_us)))
    }

    /// The round trip a simulated caller's statement costs on average under `timing` and a
    /// one-way latency drawn from `latency_us` (min, max): client CPU, a tick and two
    /// latencies of their mean, µs.
    pub fn simulated_round_trip_us(timing: &Timing, latency_us: (u64, u64)) -> u64 {
        let (min_us, max_us) = latency_us;
        timing
            .client_cpu_us
            .saturating_add(timing.tick_us)
            .saturating_add(min_us)
            .saturating_add(max_us)
    }

    /// The PostgreSQL times [`Calibration::apply`] takes its costs from: those inside real
    /// runs, against the two round trips the simulation charges for a statement under
    /// `timing` and `latency_us` (as if those were the warm statement), when measured; else
    /// the probe's.
    pub fn postgres_costs(&self, timing: &Timing, latency_us: (u64, u64)) -> Option<PostgresCosts> {
        match &self.in_run {
            Some(in_run) => Some(PostgresCosts {
                warm_statement: Samples::new(vec![Calibration::simulated_round_trip_us(
                    timing, latency_us,
                )]),
                first_statement: in_run.first_statement.clone(),
                write: in_run.write.clone(),
            }),
            None => self.postgres.clone(),
        }
    }

    /// `timing` with the PostgreSQL costs this calibration measured (unchanged without them):
    /// a session's first statement as a fixed part and a random part fitted to its median
    /// and 90th percentile ([`PostgresCosts::first_statement_with_tail_us`]), a commit that
    /// wrote by its median. Measured inside real runs when it was ([`InRunStatements`]): then
    /// the extra time is what is left after the two round trips the simulation charges for
    /// the statement ([`Calibration::simulated_round_trip_us`] under the latency the
    /// simulation will run with, `latency_us`); else the probe's, after two of its warm
    /// statements.
    pub fn apply(&self, mut timing: Timing, latency_us: (u64, u64)) -> Timing {
        if let Some(postgres) = self.postgres_costs(&timing, latency_us) {
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
    let mut calibration = runtime.block_on(async {
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
        Ok::<_, RealError>(Calibration {
            samples: config.samples,
            load_callers: match (&config.redis_url, &config.postgres_url) {
                (Some(_), Some(_)) => config.load_callers,
                _ => 0,
            },
            redis_round_trip,
            caller_round_trip: None,
            postgres,
            in_run: None,
        })
    })?;
    // Real runs bring their own runtime: measured after the probes, with nothing else going.
    if let Some(url) = &config.redis_url {
        calibration.caller_round_trip = Some(caller_round_trips(url, config.samples)?);
        if let Some(postgres_url) = &config.postgres_url {
            calibration.in_run = Some(in_run_statements(url, postgres_url, config.samples)?);
        }
    }
    Ok(calibration)
}

/// Writers in one step6-verify run: the balance of 100 pays for ten spends of 10.
const WRITES_PER_STEP6_RUN: u32 = 10;

/// Statement times inside real step6-verify runs, as many runs as it takes for `samples`
/// writes (ten a run; each run's fifty first statements all kept).
pub fn in_run_statements(
    redis_url: &str,
    postgres_url: &str,
    samples: u32,
) -> Result<InRunStatements, RealError> {
    let scenario = Scenario::tutorial("step6-verify", Variant::default())
        .map_err(|error| RealError::Refused(error.to_string()))?;
    let config = RealConfig::new(Some(redis_url.to_string()), Some(postgres_url.to_string()));
    let runs = samples.div_ceil(WRITES_PER_STEP6_RUN);
    let (mut firsts_us, mut writes_us) = (Vec::new(), Vec::new());
    for seed in 1..=u64::from(runs) {
        let report = crate::real::run(&scenario, seed, &config)?;
        let mut seen = std::collections::BTreeSet::new();
        for (request, took_us) in timed_requests(&report.events) {
            let What::SqlRequest { statement, .. } = &request.what else {
                continue;
            };
            if seen.insert(request.host.as_str()) {
                firsts_us.push(took_us);
            } else if matches!(statement, Statement::WriteFenced { .. }) {
                writes_us.push(took_us);
            }
        }
    }
    if firsts_us.is_empty() || writes_us.is_empty() {
        return Err(RealError::Server(format!(
            "--postgres {postgres_url}: the calibration's step6-verify runs recorded no statement \
             (first statements {}, writes {})",
            firsts_us.len(),
            writes_us.len()
        )));
    }
    Ok(InRunStatements {
        runs,
        first_statement: Samples::new(firsts_us),
        write: Samples::new(writes_us),
    })
}

/// Every request a caller sent to Redis or PostgreSQL in a run's events, in order, with the
/// µs from it to its reply (a request without one, timed out or cut off, is left out).
fn timed_requests(events: &[Event]) -> Vec<(&Event, u64)> {
    let mut sent: std::collections::BTreeMap<&str, &Event> = Default::default();
    let mut timed = Vec::new();
    for event in events {
        match event.what {
            What::RedisRequest { .. } | What::SqlRequest { .. } => {
                sent.insert(event.host.as_str(), event);
            }
            What::RedisReply { .. } | What::SqlReply { .. } => {
                if let Some(request) = sent.remove(event.host.as_str()) {
                    timed.push((
                        request,
                        u64::try_from(event.t_us - request.t_us).unwrap_or(0),
                    ));
                }
            }
            _ => {}
        }
    }
    timed
}

/// `samples` Redis round trips of a caller in real runs: step2-lock with one caller (so nothing
/// queues behind anything), as many runs as it takes at four requests each, every request's
/// time from its `redis-request` event to its `redis-reply` (the times the network latency of
/// the simulation stands for).
pub fn caller_round_trips(redis_url: &str, samples: u32) -> Result<Samples, RealError> {
    let mut scenario = Scenario::tutorial("step2-lock", Variant::default())
        .map_err(|error| RealError::Refused(error.to_string()))?;
    scenario.callers = 1;
    let config = RealConfig::new(Some(redis_url.to_string()), None);
    let mut times_us = Vec::with_capacity(samples as usize);
    for seed in 1..=u64::from(samples.div_ceil(REQUESTS_PER_RUN)) {
        let report = crate::real::run(&scenario, seed, &config)?;
        let requests = timed_requests(&report.events);
        times_us.extend(
            requests
                .into_iter()
                .filter(|(request, _)| matches!(request.what, What::RedisRequest { .. }))
                .map(|(_, took_us)| took_us),
        );
    }
    if times_us.is_empty() {
        return Err(RealError::Server(format!(
            "--redis {redis_url}: the calibration's runs recorded no Redis round trip"
        )));
    }
    times_us.truncate(samples as usize);
    Ok(Samples::new(times_us))
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
            caller_round_trip: None,
            postgres: Some(costs(150, 1_230, 754)),
            in_run: None,
        };
        let timing = calibration.apply(Timing::localhost(), (100, 200));
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
        let timing = spread.apply(Timing::localhost(), (100, 200));
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
        assert_eq!(
            without.apply(Timing::localhost(), (100, 200)),
            Timing::localhost()
        );
    }

    #[test]
    fn statements_measured_in_real_runs_are_taken_over_the_simulated_round_trips() {
        let timing = Timing::localhost();
        let mut calibration = Calibration {
            samples: 1,
            load_callers: 0,
            redis_round_trip: None,
            caller_round_trip: None,
            postgres: Some(costs(150, 1_230, 754)),
            in_run: None,
        };
        // The probe alone: its extras over two of its warm statements.
        let probed = calibration.apply(timing, (100, 200));
        assert_eq!(
            (probed.pg_first_statement_us, probed.pg_commit_us),
            (930, 450)
        );
        // Measured in real runs: over two simulated round trips, each client CPU 20 + tick
        // 100 + two latencies of mean 150 = 420 µs (or 120 µs with no latency).
        calibration.in_run = Some(InRunStatements {
            runs: 1,
            first_statement: Samples::new(vec![1_500]),
            write: Samples::new(vec![1_200]),
        });
        assert_eq!(
            Calibration::simulated_round_trip_us(&timing, (100, 200)),
            420
        );
        let in_run = calibration.apply(timing, (100, 200));
        assert_eq!(
            (in_run.pg_first_statement_us, in_run.pg_commit_us),
            (660, 360)
        );
        let no_latency = calibration.apply(timing, (0, 0));
        assert_eq!(
            (no_latency.pg_first_statement_us, no_latency.pg_commit_us),
            (1_260, 960)
        );
        // The clock parts are not the calibration's to change.
        assert_eq!(in_run.tick_us, timing.tick_us);
        assert_eq!(in_run.client_cpu_us, timing.client_cpu_us);
    }

    #[test]
    fn the_latency_makes_a_simulated_round_trip_span_the_measured_ones() {
        let timing = Timing::localhost();
        let mut calibration = Calibration {
            samples: 10,
            load_callers: 0,
            redis_round_trip: None,
            caller_round_trip: None,
            postgres: None,
            in_run: None,
        };
        assert_eq!(calibration.latency_us(&timing), None, "nothing measured");
        // 10th percentile 50 µs: under a tick plus the client CPU (120 µs), so no latency;
        // 90th percentile 320 µs: (320 − 120) / 2 = 100 µs each way.
        calibration.caller_round_trip = Some(Samples::new(vec![
            50, 60, 80, 90, 100, 110, 150, 190, 320, 400,
        ]));
        assert_eq!(calibration.latency_us(&timing), Some((0, 100)));
        // The 4 Dec step-5 measurement, 200–390 µs: 40–135, rounded to 10 µs.
        calibration.caller_round_trip = Some(Samples::new(vec![200, 390]));
        assert_eq!(calibration.latency_us(&timing), Some((40, 140)));
        // A 1 ms tick leaves no room for latency under such round trips.
        assert_eq!(calibration.latency_us(&Timing::tick_1ms()), Some((0, 0)));
        // A huge measurement is capped.
        calibration.caller_round_trip = Some(Samples::new(vec![u64::MAX]));
        let (min_us, max_us) = calibration.latency_us(&timing).unwrap();
        assert_eq!(
            (min_us, max_us),
            (MAX_CALIBRATED_LATENCY_US, MAX_CALIBRATED_LATENCY_US)
        );
    }
}
