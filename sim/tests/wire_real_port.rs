//! The same servers on a real loopback port (what `leaselab serve` will use), reached through
//! the URL helpers.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use leaselab_model::postgres::{Postgres, Wallet};
use leaselab_model::redis::Redis;
use leaselab_sim::clients::{postgres_url, redis_url};
use leaselab_sim::observer::{Observer, TextLog};
use leaselab_sim::pg_server::PgServer;
use leaselab_sim::redis_server::RedisServer;

/// A fixed server clock: the test needs no real time.
const CLOCK_MS: u64 = 1_704_067_200_000;

#[test]
fn servers_answer_real_clients_on_loopback() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let log = Rc::new(TextLog::new());
    let observer: Rc<dyn Observer> = log.clone();
    local.block_on(&runtime, async move {
        let redis_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let redis_port = redis_listener.local_addr().unwrap().port();
        let redis = RedisServer::new(
            Rc::new(RefCell::new(Redis::new())),
            Rc::new(|| CLOCK_MS),
            observer.clone(),
        );
        tokio::task::spawn_local(redis.serve_tokio(redis_listener));

        let mut postgres = Postgres::new();
        postgres.seed_wallet(
            1,
            Wallet {
                balance: 100,
                fence: 0,
            },
        );
        let pg_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let pg_port = pg_listener.local_addr().unwrap().port();
        let pg = PgServer::new(Rc::new(RefCell::new(postgres)), observer.clone());
        tokio::task::spawn_local(pg.serve_tokio(pg_listener));

        let mut con = redis_url(
            &format!("redis://127.0.0.1:{redis_port}"),
            Some(Duration::from_secs(5)),
        )
        .await
        .unwrap();
        let set: String = redis::cmd("SET")
            .arg("k")
            .arg("v")
            .arg("PX")
            .arg(500)
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(set, "OK");
        let ttl_ms: i64 = redis::cmd("PTTL")
            .arg("k")
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(ttl_ms, 500, "the fixed clock does not move");

        let client = postgres_url(&format!("postgres://leaselab@127.0.0.1:{pg_port}/leaselab"))
            .await
            .unwrap();
        let row = client
            .query_one("SELECT balance, fence FROM wallets WHERE id = 1", &[])
            .await
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), 100);

        assert!(postgres_url(&format!("postgres://127.0.0.1:{pg_port}/x"))
            .await
            .is_err_and(|error| error.to_string().contains("name a user")));
    });
    assert!(log
        .text()
        .contains("cmd=[\"PTTL\" \"k\"] reply=(integer) 500"));
}
