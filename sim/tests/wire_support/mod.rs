//! Shared set-up of the wire end-to-end tests: a turmoil simulation with a fixed epoch and
//! seed, and hosts serving the stand-ins.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use leaselab_model::postgres::{Postgres, Wallet};
use leaselab_model::redis::Redis;
use leaselab_sim::clients::{POSTGRES_HOST, POSTGRES_PORT, REDIS_HOST, REDIS_PORT};
use leaselab_sim::observer::Observer;
use leaselab_sim::pg_server::PgServer;
use leaselab_sim::redis_server::{ClockMs, RedisServer};

/// 2024-01-01T00:00:00Z.
pub const EPOCH_SECS: u64 = 1_704_067_200;

/// The simulation's wall-clock start.
pub fn epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(EPOCH_SECS)
}

/// A simulation with an explicit epoch and seed, 60 simulated seconds at most, and every
/// message taking exactly 1 ms (so timings in the tests are exact).
pub fn sim(seed: u64) -> turmoil::Sim<'static> {
    sim_with_latency(seed, Duration::from_millis(1), Duration::from_millis(1))
}

/// Like [`sim`], with message latencies drawn from the seeded RNG between `min` and `max`.
pub fn sim_with_latency(seed: u64, min: Duration, max: Duration) -> turmoil::Sim<'static> {
    turmoil::Builder::new()
        .epoch(epoch())
        .rng_seed(seed)
        .simulation_duration(Duration::from_secs(60))
        .min_message_latency(min)
        .max_message_latency(max)
        .build()
}

/// The simulated wall clock in Unix milliseconds (epoch + simulated elapsed time).
pub fn sim_clock_ms() -> ClockMs {
    Rc::new(|| {
        let since_epoch = turmoil::since_epoch().expect("inside the simulation");
        since_epoch.as_millis() as u64
    })
}

/// A `wallets` table with wallet 1 at balance 100, fence 0.
pub fn wallets() -> Rc<RefCell<Postgres>> {
    let mut postgres = Postgres::new();
    postgres.seed_wallet(
        1,
        Wallet {
            balance: 100,
            fence: 0,
        },
    );
    Rc::new(RefCell::new(postgres))
}

/// Adds the `postgres` host serving `postgres`.
pub fn serve_postgres(
    sim: &mut turmoil::Sim<'static>,
    postgres: Rc<RefCell<Postgres>>,
    observer: Rc<dyn Observer>,
) {
    sim.host(POSTGRES_HOST, move || {
        let server = PgServer::new(postgres.clone(), observer.clone());
        async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", POSTGRES_PORT)).await?;
            server.serve_turmoil(listener).await?;
            Ok(())
        }
    });
}

/// Adds the `redis` host serving `redis` on the simulated wall clock.
pub fn serve_redis(
    sim: &mut turmoil::Sim<'static>,
    redis: Rc<RefCell<Redis>>,
    observer: Rc<dyn Observer>,
) {
    sim.host(REDIS_HOST, move || {
        let server = RedisServer::new(redis.clone(), sim_clock_ms(), observer.clone());
        async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", REDIS_PORT)).await?;
            server.serve_turmoil(listener).await?;
            Ok(())
        }
    });
}

/// Fails with every case whose real-server answer differs from the stand-in's, one block per
/// case, naming the real server (`server`); `cases` are `(name, real, stand_in)`.
pub fn assert_all_same<N: std::fmt::Display, T: PartialEq + std::fmt::Debug>(
    server: &str,
    cases: Vec<(N, T, T)>,
) {
    let count = cases.len();
    let differences: Vec<String> = cases
        .into_iter()
        .filter(|(_, real, stand_in)| real != stand_in)
        .map(|(name, real, stand_in)| {
            format!("{name}:\n  real {server}: {real:?}\n  stand-in: {stand_in:?}")
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {count} cases differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
