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
//! How the clients react to a slow or broken connection (deadlines, reconnects, go-redis-style
//! retries) is decided by the sans-IO client core, [`leaselab_model::client`], under
//! [`ClientPolicy`]; the driver only carries it out.
//!
//! # Network timing
//!
//! Time moves in ticks of `T` = the scenario's `timing.tick_us` (1 ms by default; see
//! `crate::clock::Timeline`). A request reaches its server at the next tick and the reply
//! comes back within that tick (the servers are ticked before the callers), so a round trip
//! takes at least one tick. The scenario's one-way latency `L` is drawn per message (in
//! `[latency_min_us, latency_max_us]`), and the message is held back `floor(L / T)` ticks,
//! plus one more with probability `(L mod T) / T`: on average exactly `L`. A round trip
//! therefore costs `T + L₁ + L₂` on average. Before its network delay, every command waits
//! for the client CPU the callers share (`crate::clock::ClientCpu`,
//! the scenario's `timing.client_cpu_us` per command).
//!
//! So latencies shorter than a tick decide how often messages sent in the same tick arrive
//! in different ticks: they spread callers that would otherwise move in lockstep.

use std::time::Duration;

use leaselab_model::client::{ClientPolicy, Server};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use redis::aio::MultiplexedConnection;
use redis::RedisConnectionInfo;

use crate::clients::{node_host, POSTGRES_HOST, POSTGRES_PORT, REDIS_HOST, REDIS_PORT};
use crate::clients::{postgres_over_stream, postgres_sim_config, redis_over_stream};
use crate::driver::{sleep, CallerEnd, Surroundings};
use crate::events::What;
use crate::run::Shared;

pub use crate::driver::value_to_reply;

impl Shared {
    fn sim_now(&self) -> Duration {
        turmoil::sim_elapsed().unwrap_or_default()
    }
}

impl Surroundings for Shared {
    fn policy(&self) -> ClientPolicy {
        self.conditions.policy
    }

    fn raw(&self, duration: Duration) -> Duration {
        self.conditions.timeline.raw(duration)
    }

    fn timer_fires(&self, duration: Duration) -> tokio::time::Instant {
        let now = self.sim_now();
        let fires = self
            .conditions
            .timers
            .fires(&self.conditions.timeline, now, duration);
        tokio::time::Instant::now() + fires.saturating_sub(now)
    }

    fn caller_ms(&self) -> u64 {
        self.conditions.timeline.caller_ms(self.sim_now())
    }

    fn log(&self, host: &str, what: What) {
        let t_us = self.conditions.timeline.t_us(self.sim_now());
        self.record.events.push(t_us, host, what);
    }

    async fn wait_for_start(&self, start_offset_ms: u64) {
        let start = self.conditions.timeline.at_ms(start_offset_ms);
        let now = self.sim_now();
        if start > now {
            sleep(start - now).await;
        }
    }

    async fn open_redis(&self, server: Server) -> Result<MultiplexedConnection, String> {
        let host = match server {
            Server::Node(node) => node_host(node),
            Server::Redis | Server::Postgres => REDIS_HOST,
        };
        let stream = turmoil::net::TcpStream::connect((host, REDIS_PORT))
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
        let network = self.conditions.network;
        let latency_us = if network.latency_max_us > network.latency_min_us {
            rng.random_range(network.latency_min_us..=network.latency_max_us)
        } else {
            network.latency_min_us
        };
        let timeline = &self.conditions.timeline;
        let tick_us = timeline.tick_us();
        let mut ticks = latency_us / tick_us;
        if rng.random_range(0..tick_us) < latency_us % tick_us {
            ticks += 1;
        }
        if ticks > 0 {
            sleep(timeline.ticks(ticks)).await;
        }
    }

    /// Queues the command on the shared client CPU (`crate::clock::ClientCpu`) and waits
    /// until it leaves.
    async fn client_cpu(&self) {
        let timeline = &self.conditions.timeline;
        let ticks = self
            .conditions
            .client_cpu
            .issue(timeline.run_us(self.sim_now()));
        if ticks > 0 {
            sleep(timeline.ticks(ticks)).await;
        }
    }

    fn finish(&self, index: u32, end: CallerEnd) {
        Shared::finish(self, index, end);
    }
}
