//! bsm/redislock v0.10.0 `Obtain` with its retry strategies (tutorial step 4).
//!
//! **Guards against:** the same as the lease (its obtain script is `SET NX` plus `PEXPIRE`,
//! re-accepting its own token), with a choice of how to wait: no retry, linear, exponential
//! (as v0.10.0 computes it), and the tutorial's full-jitter wrapper over any of them. Without
//! a deadline, `Obtain` derives one from the TTL.
//!
//! **Relies on:** as the lease. Its availability depends on the retry strategy: exponential
//! backoff without jitter wakes every waiter on the same schedule (a thundering herd), so some
//! callers give up; full jitter spreads them out.

use crate::redis::{Reply, ScriptId};

use super::lock::{Acquire, Release};
use super::step::RedisRequest;

/// A redislock lock.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Redislock {
    /// The lock key.
    pub key: super::FixedBytes,
    /// This caller's token (no metadata).
    pub token: super::FixedBytes,
    /// The lease duration.
    pub ttl_ms: u64,
}

impl Redislock {
    /// `obtain.lua` with `[value, tokenLen, ttl]`.
    pub fn acquire_request(&self) -> RedisRequest {
        RedisRequest::Script {
            script: ScriptId::RedislockObtain,
            keys: vec![self.key.to_vec()],
            args: vec![
                self.token.to_vec(),
                self.token.len().to_string().into_bytes(),
                self.ttl_ms.to_string().into_bytes(),
            ],
        }
    }

    /// `OK`: ours; nil: busy.
    pub fn on_acquire(reply: &Reply) -> Option<Acquire> {
        match reply {
            Reply::Status(status) if status == "OK" => Some(Acquire::Got { fence: None }),
            Reply::Nil => Some(Acquire::Busy),
            _ => None,
        }
    }

    /// `OK`: released; nil: the lock was not held (redislock's `ErrLockNotHeld`).
    pub fn on_release(reply: &Reply) -> Option<Release> {
        match reply {
            Reply::Status(status) if status == "OK" => Some(Release::Released),
            Reply::Nil => Some(Release::NotHeld),
            _ => None,
        }
    }

    /// `release.lua` with `[value]`.
    pub fn release_request(&self) -> RedisRequest {
        RedisRequest::Script {
            script: ScriptId::RedislockRelease,
            keys: vec![self.key.to_vec()],
            args: vec![self.token.to_vec()],
        }
    }
}
