//! A lease: `SET key token NX PX ttl`, released by compare-and-delete (tutorial step 2).
//!
//! **Guards against:** a crashed holder (the key expires) and a late holder deleting someone
//! else's lock (the release deletes only its own token: a Lua script, or `DELEX key IFEQ
//! token` on Redis 8.4+). While the lock is busy the caller waits a random 5–15 ms, until its
//! deadline.
//!
//! **Relies on:** the work plus any pause staying shorter than the TTL. Past it the lease
//! expires while the holder still works, a second caller takes it, and both write (step 3).

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
    pub key: Vec<u8>,
    /// This caller's random token.
    pub token: Vec<u8>,
    /// The lease duration.
    pub ttl_ms: u64,
    /// How the lease is released.
    pub release: ReleaseVia,
}

impl Lease {
    /// `SET key token NX PX ttl`.
    pub fn acquire_request(&self) -> RedisRequest {
        RedisRequest::Command(Command::Set {
            key: self.key.clone(),
            value: self.token.clone(),
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

    /// Compare-and-delete.
    pub fn release_request(&self) -> RedisRequest {
        match self.release {
            ReleaseVia::Script => RedisRequest::Script {
                script: ScriptId::Release,
                keys: vec![self.key.clone()],
                args: vec![self.token.clone()],
            },
            ReleaseVia::Delex => RedisRequest::Command(Command::DelEx(
                self.key.clone(),
                DelexCondition::IfEqual(self.token.clone()),
            )),
        }
    }

    /// Token-checked `PEXPIRE key ttl`.
    pub fn refresh_request(&self, ttl_ms: u64) -> RedisRequest {
        RedisRequest::Script {
            script: ScriptId::Refresh,
            keys: vec![self.key.clone()],
            args: vec![self.token.clone(), ttl_ms.to_string().into_bytes()],
        }
    }
}
