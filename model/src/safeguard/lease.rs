//! A lease: `SET key token NX PX ttl`, released by compare-and-delete (tutorial step 2).
//!
//! **Guards against:** a crashed holder (the key expires) and a late holder deleting someone
//! else's lock (the release deletes only its own token: a Lua script, or `DELEX key IFEQ
//! token` on Redis 8.4+). While the lock is busy the caller waits a random 5–15 ms, until its
//! deadline.
//!
//! **Relies on:** the work plus any pause staying shorter than the TTL. Past it the lease
//! expires while the holder still works, a second caller takes it, and both write (step 3).
//!
//! **`lease-wait`** adds `WAIT 1 <TTL/4>` after the acquire: the caller trusts the lock only
//! once a replica acknowledged it (0: it releases and gives up), which closes the window in
//! which a failover loses a fresh lock. It does not make the lock safe: a replica that
//! acknowledged can still lose the key (its own restart before the failover), and a client
//! that retries WAIT on a new connection after the primary died is answered for a connection
//! that wrote nothing: the new primary's replica count, at once.

use crate::redis::command::{Command, DelexCondition, SetCondition, SetExpiry};
use crate::redis::{Reply, ScriptId};

use super::lock::Acquire;
use super::step::RedisRequest;

/// How a lease is released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReleaseVia {
    /// The compare-and-delete Lua script (`EVALSHA`, `EVAL` on `NOSCRIPT`).
    Script,
    /// `DELEX key IFEQ token` (Redis 8.4+).
    Delex,
}

/// A `SET NX PX` lease.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lease {
    /// The lock key.
    pub key: super::FixedBytes,
    /// This caller's random token.
    pub token: super::FixedBytes,
    /// The lease duration.
    pub ttl_ms: u64,
    /// How the lease is released.
    pub release: ReleaseVia,
    /// `WAIT 1 <wait_ms>` after the acquire, if set: the caller trusts the lock only when a
    /// replica acknowledged it (`lease-wait`).
    pub wait_ms: Option<u64>,
}

impl Lease {
    /// `SET key token NX PX ttl`.
    pub fn acquire_request(&self) -> RedisRequest {
        RedisRequest::Command(Command::Set {
            key: self.key.to_vec(),
            value: self.token.to_vec(),
            condition: SetCondition::IfMissing,
            expiry: SetExpiry::Millis(self.ttl_ms as i64),
            get: false,
        })
    }

    /// `OK`: ours; nil: busy.
    pub fn on_acquire(reply: &Reply) -> Option<Acquire> {
        match reply {
            Reply::Status(status) if status == "OK" => Some(Acquire::Got { fence: None }),
            Reply::Nil => Some(Acquire::Busy),
            _ => None,
        }
    }

    /// `WAIT 1 <wait_ms>` after a successful acquire, for `lease-wait`.
    pub fn wait_request(&self) -> Option<RedisRequest> {
        self.wait_ms
            .map(|wait_ms| RedisRequest::Command(Command::Wait(1, wait_ms as i64)))
    }

    /// WAIT's answer: `Some(true)` when a replica acknowledged the lock, `Some(false)` when
    /// none did in time, none for anything but an integer.
    pub fn on_wait(reply: &Reply) -> Option<bool> {
        match reply {
            Reply::Integer(replicas) => Some(*replicas >= 1),
            _ => None,
        }
    }

    /// Compare-and-delete.
    pub fn release_request(&self) -> RedisRequest {
        match self.release {
            ReleaseVia::Script => RedisRequest::Script {
                script: ScriptId::Release,
                keys: vec![self.key.to_vec()],
                args: vec![self.token.to_vec()],
            },
            ReleaseVia::Delex => RedisRequest::Command(Command::DelEx(
                self.key.to_vec(),
                DelexCondition::IfEqual(self.token.to_vec()),
            )),
        }
    }

    /// Token-checked `PEXPIRE key ttl`.
    pub fn refresh_request(&self, ttl_ms: u64) -> RedisRequest {
        RedisRequest::Script {
            script: ScriptId::Refresh,
            keys: vec![self.key.to_vec()],
            args: vec![self.token.to_vec(), ttl_ms.to_string().into_bytes()],
        }
    }
}
