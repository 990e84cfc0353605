//! The same seed gives the same run, byte for byte: both servers, several callers with
//! seeded jitter, random message latencies and random host order.

mod wire_support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use leaselab_model::redis::{Redis, ScriptId};
use leaselab_sim::clients::{postgres_sim, redis_sim, POSTGRES_HOST, POSTGRES_PORT};
use leaselab_sim::clients::{REDIS_HOST, REDIS_PORT};
use leaselab_sim::observer::TextLog;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wire_support::{serve_postgres, serve_redis, sim_with_latency, wallets};

const CALLERS: u64 = 3;
const ATTEMPTS: u64 = 3;
const LEASE_TTL_MS: u64 = 40;

async fn caller(index: u64, seed: u64) -> turmoil::Result {
    let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(1_000).wrapping_add(index));
    let mut redis = redis_sim(REDIS_HOST, REDIS_PORT, Some(Duration::from_secs(1))).await?;
    let mut postgres = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
    let acquire = redis::Script::new(ScriptId::FencedAcquire.source());
    let release = redis::Script::new(ScriptId::Release.source());
    for attempt in 0..ATTEMPTS {
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..30))).await;
        let token = format!("caller-{index}-{attempt}");
        let fence: Option<i64> = acquire
            .key("lock")
            .key("fence")
            .arg(&token)
            .arg(LEASE_TTL_MS)
            .invoke_async(&mut redis)
            .await?;
        let Some(fence) = fence else {
            continue;
        };
        let row = postgres
            .query_one("SELECT balance, fence FROM wallets WHERE id = 1", &[])
            .await?;
        let balance: i64 = row.get(0);
        // Work that sometimes outlives the lease.
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..60))).await;
        postgres
            .execute(
                "UPDATE wallets SET balance = $1, fence = $2 WHERE id = 1 AND fence < $2",
                &[&(balance - 10), &fence],
            )
            .await?;
        let _: i64 = release
            .key("lock")
            .arg(&token)
            .invoke_async(&mut redis)
            .await?;
    }
    // Row locks: callers queue on SELECT ... FOR UPDATE.
    let transaction = postgres.transaction().await?;
    let row = transaction
        .query_one(
            "SELECT balance, fence FROM wallets WHERE id = 1 FOR UPDATE",
            &[],
        )
        .await?;
    let balance: i64 = row.get(0);
    tokio::time::sleep(Duration::from_millis(rng.random_range(0..20))).await;
    transaction
        .execute(
            "UPDATE wallets SET balance = $1 WHERE id = 1",
            &[&(balance - 1)],
        )
        .await?;
    transaction.commit().await?;
    Ok(())
}

/// Runs the whole simulation for `seed` and returns the servers' event log.
fn run(seed: u64) -> String {
    let log = Rc::new(TextLog::new());
    let mut sim = sim_with_latency(seed, Duration::from_millis(0), Duration::from_millis(15));
    serve_redis(&mut sim, Rc::new(RefCell::new(Redis::new())), log.clone());
    serve_postgres(&mut sim, wallets(), log.clone());
    for index in 0..CALLERS {
        sim.client(format!("caller-{index}"), caller(index, seed));
    }
    sim.run().unwrap();
    log.text()
}

#[test]
fn the_same_seed_gives_the_same_event_log_byte_for_byte() {
    let first = run(42);
    let second = run(42);
    assert_eq!(first, second);
    assert!(
        first.lines().count() > 40,
        "the run should do real work:\n{first}"
    );
    assert!(
        first.contains("blocked_by_session="),
        "the run should include row-lock waits:\n{first}"
    );
    assert_ne!(first, run(7), "the seed should matter");
}
