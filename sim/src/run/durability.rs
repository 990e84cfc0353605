//! The durability faults of a run: a machine crash that reloads Redis from its append-only
//! file, and an eviction of the fence counter.

use std::time::Duration;

use crate::clients::REDIS_HOST;
use crate::events::What;
use crate::replication::describe_effect;

use super::Shared;

impl Shared {
    /// The lock holder and the fence counter as the serving Redis has them at `sim`.
    pub(super) fn lock_and_fence(&self, sim: Duration) -> (Option<String>, Option<String>) {
        let server_ms = self.server_ms(sim);
        let redis = self.servers.redis.borrow();
        let holder = self.watch.lock.as_ref().and_then(|lock| {
            redis
                .peek(&lock.key, server_ms)
                .map(|value| lock.owner(value))
        });
        let counter = redis
            .peek(&self.watch.fence_key, server_ms)
            .map(|v| String::from_utf8_lossy(v).into_owned());
        (holder, counter)
    }

    /// The machine running Redis crashes at `now`: Redis reloads what its AOF had fsynced,
    /// with an empty script cache, and every connection to it is dropped.
    pub(super) fn crash_and_load_aof(&self, sim: &mut turmoil::Sim<'_>, now: Duration) {
        let (loaded, lost, appendfsync) = {
            let mut aof = self.servers.aof.borrow_mut();
            let aof = aof
                .as_mut()
                .expect("a run with a crash fault has an append-only file (Schedule::appendfsync)");
            let (loaded, lost) = aof.crash_and_load(self.conditions.timeline.caller_ms(now));
            (loaded, lost, aof.appendfsync())
        };
        *self.servers.redis.borrow_mut() = loaded;
        let server_ms = self.server_ms(now);
        if let Some(lock) = &self.watch.lock {
            let value = self
                .servers
                .redis
                .borrow()
                .peek(&lock.key, server_ms)
                .map(<[u8]>::to_vec);
            *lock.holder.borrow_mut() = value;
        }
        let (lock_holder, fence_counter) = self.lock_and_fence(now);
        self.log(
            now,
            "world",
            What::RedisCrashAof {
                appendfsync: appendfsync.name().to_string(),
                lost: lost.iter().map(describe_effect).collect(),
                lock_holder,
                fence_counter,
            },
        );
        sim.bounce(REDIS_HOST);
    }

    /// An `allkeys-*` policy evicts the fence counter at `now` (a `DEL` the replica and the
    /// AOF receive too).
    pub(super) fn evict_fence_counter(&self, now: Duration) {
        let server_ms = self.server_ms(now);
        let value = self
            .servers
            .redis
            .borrow()
            .peek(&self.watch.fence_key, server_ms)
            .map(|v| String::from_utf8_lossy(v).into_owned());
        if value.is_some() {
            let argv = vec![b"DEL".to_vec(), self.watch.fence_key.clone()];
            self.servers.redis.borrow_mut().execute(&argv, server_ms);
            self.after_redis_command(now, None);
        }
        self.log(
            now,
            "world",
            What::Evicted {
                key: String::from_utf8_lossy(&self.watch.fence_key).into_owned(),
                value,
            },
        );
    }
}
