//! A caller host: one safeguard machine driven through the real `redis` and `tokio-postgres`
//! clients over turmoil's network.
//!
//! The host opens its connections during set-up, waits for the common release instant (plus
//! its start offset), then loops: ask the machine for its next step, carry it out, hand back
//! the answer. The machine is the caller's only activity — a GC pause is a sleep of the loop,
//! during which nothing of the caller runs. The loop and the client policy are shared with
//! real mode (`crate::driver`); this module gives them turmoil's clock and network.
//!
//! # Client policy
//!
//! How the clients react to a slow or broken connection is fixed by [`ClientPolicy`] and is
//! deterministic:
//!
//! - every Redis request has a deadline: the safeguard's own timeout (the watchdog's TTL/3),
//!   else the client's read timeout (3 s, go-redis's default). A request that misses it gives
//!   the machine [`Input::RedisTimeout`](leaselab_model::safeguard::Input::RedisTimeout), and its connection is closed (a partitioned TCP
//!   connection never recovers);
//! - a connection that broke (reset, end of stream, refused) is closed too; the request is
//!   sent again on a new connection up to [`ClientPolicy::max_retries`] times (go-redis
//!   `MaxRetries`, 3) after a random backoff below `8 ms << attempt`, capped at 512 ms —
//!   within the request's deadline. Like go-redis, this can run a script twice when only its
//!   reply was lost. When the retries are used up the machine gets
//!   [`Input::ConnectionError`](leaselab_model::safeguard::Input::ConnectionError);
//! - opening a connection has its own deadline (5 s, go-redis's `DialTimeout`);
//! - PostgreSQL statements are never retried (pgx does not retry `Exec`); a statement that
//!   gets no answer within 5 s, or whose connection broke, gives the machine
//!   [`Input::ConnectionError`](leaselab_model::safeguard::Input::ConnectionError) and the next statement reconnects (a new session). Statements
//!   are prepared once per connection and then executed in one round trip, as pgx's statement
//!   cache does.
//!
//! # Network timing
//!
//! A request reaches its server at the next tick and the reply comes back within that tick
//! (the servers are ticked before the callers), so a round trip takes 1 ms. The scenario's
//! one-way latency `L` (100–500 µs by default) is drawn per message, and the message is held
//! back one more tick with probability `L / 1 ms` (whole milliseconds of `L` add whole ticks).
//! So sub-millisecond latencies decide how often messages sent in the same tick arrive in
//! different ticks: they spread callers that would otherwise move in lockstep.

use std::rc::Rc;
use std::time::Duration;

use leaselab_model::safeguard::{Caller, CallerStats, Outcome};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use redis::aio::MultiplexedConnection;
use redis::RedisConnectionInfo;

use crate::clients::{postgres_over_stream, postgres_sim_config, redis_over_stream};
use crate::clients::{POSTGRES_HOST, POSTGRES_PORT, REDIS_HOST, REDIS_PORT};
use crate::driver::{drive, Surroundings};
use crate::events::What;
use crate::run::Shared;

pub use crate::driver::value_to_reply;

/// How the clients behave when the network or a server misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientPolicy {
    /// Deadline for opening a connection (go-redis `DialTimeout`: 5 s).
    pub dial_timeout_ms: u64,
    /// Deadline of a Redis request without its own timeout (go-redis `ReadTimeout`: 3 s).
    pub read_timeout_ms: u64,
    /// Deadline of a SQL statement.
    pub sql_timeout_ms: u64,
    /// How often a Redis request is sent again after its connection broke (go-redis
    /// `MaxRetries`: 3; 0: never).
    pub max_retries: u32,
    /// Backoff before retry `n` is random below `min_retry_backoff_ms << n` ...
    pub min_retry_backoff_ms: u64,
    /// ... capped at this (go-redis: 8 ms and 512 ms).
    pub max_retry_backoff_ms: u64,
}

impl Default for ClientPolicy {
    fn default() -> ClientPolicy {
        ClientPolicy {
            dial_timeout_ms: 5_000,
            read_timeout_ms: 3_000,
            sql_timeout_ms: 5_000,
            max_retries: 3,
            min_retry_backoff_ms: 8,
            max_retry_backoff_ms: 512,
        }
    }
}

/// How one caller ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallerEnd {
    /// Its outcome.
    pub outcome: Outcome,
    /// Its counters.
    pub stats: CallerStats,
    /// When it finished, ms after the release.
    pub done_at_ms: u64,
}

/// Everything one caller needs.
pub(crate) struct CallerSpec {
    /// 1-based.
    pub(crate) index: u32,
    /// `app-N`.
    pub(crate) name: String,
    /// The safeguard machine.
    pub(crate) machine: Caller,
    /// The caller's own random stream.
    pub(crate) rng: ChaCha8Rng,
    /// When it starts, ms after the release.
    pub(crate) start_offset_ms: u64,
    /// Its pauses.
    pub(crate) pauses: crate::faults::PausePlan,
    /// Open a Redis connection during set-up.
    pub(crate) uses_redis: bool,
    /// Open a PostgreSQL connection during set-up.
    pub(crate) uses_postgres: bool,
}

/// The caller host's future: set up, wait for the release, drive the machine to its end.
pub(crate) async fn run_caller(spec: CallerSpec, shared: Rc<Shared>) -> turmoil::Result {
    drive(spec, shared).await;
    Ok(())
}

impl Shared {
    fn sim_now(&self) -> Duration {
        turmoil::sim_elapsed().unwrap_or_default()
    }
}

impl Surroundings for Shared {
    fn policy(&self) -> ClientPolicy {
        self.policy
    }

    fn caller_ms(&self) -> u64 {
        self.timeline.caller_ms(self.sim_now())
    }

    fn log(&self, host: &str, what: What) {
        let t_us = self.timeline.t_us(self.sim_now());
        self.events.push(t_us, host, what);
    }

    async fn wait_for_start(&self, start_offset_ms: u64) {
        let start = self.timeline.at_ms(start_offset_ms);
        let now = self.sim_now();
        if start > now {
            tokio::time::sleep(start - now).await;
        }
    }

    async fn open_redis(&self) -> Result<MultiplexedConnection, String> {
        let stream = turmoil::net::TcpStream::connect((REDIS_HOST, REDIS_PORT))
            .await
            .map_err(|error| format!("cannot connect: {error}"))?;
        redis_over_stream(stream, &RedisConnectionInfo::default(), None)
            .await
            .map_err(|error| error.to_string())
    }

    async fn open_postgres(
        &self,
        application_name: &str,
    ) -> Result<tokio_postgres::Client, String> {
        let mut config = postgres_sim_config();
        config.application_name(application_name);
        let stream = turmoil::net::TcpStream::connect((POSTGRES_HOST, POSTGRES_PORT))
            .await
            .map_err(|error| format!("cannot connect: {error}"))?;
        postgres_over_stream(stream, &config)
            .await
            .map_err(|error| error.to_string())
    }

    /// Holds a message back for the network's latency (see the module docs).
    async fn network_delay(&self, rng: &mut ChaCha8Rng) {
        let network = self.network;
        let latency_us = if network.latency_max_us > network.latency_min_us {
            rng.random_range(network.latency_min_us..=network.latency_max_us)
        } else {
            network.latency_min_us
        };
        let mut ticks = latency_us / 1_000;
        if rng.random_range(0..1_000) < latency_us % 1_000 {
            ticks += 1;
        }
        if ticks > 0 {
            tokio::time::sleep(Duration::from_millis(ticks)).await;
        }
    }

    fn finish(&self, index: u32, end: CallerEnd) {
        Shared::finish(self, index, end);
    }
}
