//! Fencing tokens (tutorial steps 5 and 6): an atomic acquire + `INCR`, and a PostgreSQL write
//! that checks the token.
//!
//! **Guards against:** a stale writer. A holder paused past its lease comes back with token 33
//! after token 34 has written; `UPDATE ... WHERE fence < $2` refuses it. With `AND fence = $3`
//! (the version read) the write also fails when anyone wrote since the read — check-and-set,
//! which keeps the ledger right even when leases overlap.
//!
//! **Relies on:** the fence counter never going back. A failover that loses an `INCR` reissues
//! a token; the strict `fence < $2` lets a repeated token win at most once. Fencing alone
//! (`fence < $2` without `fence = $3`) does not stop two overlapping holders that both read
//! the same balance from both writing (step 6 with a 1 ms TTL).
//!
//! Both keys share the hash tag `{wallet:42}`, so the script works on Redis Cluster.

use crate::redis::{Reply, ScriptId};

use super::lock::Acquire;
use super::step::RedisRequest;

/// A fenced lease.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FencedLock {
    /// The lock key.
    pub key: super::FixedBytes,
    /// The fence counter key.
    pub fence_key: super::FixedBytes,
    /// This caller's random token.
    pub token: super::FixedBytes,
    /// The lease duration.
    pub ttl_ms: u64,
}

impl FencedLock {
    /// The acquire + INCR script.
    pub fn acquire_request(&self) -> RedisRequest {
        RedisRequest::Script {
            script: ScriptId::FencedAcquire,
            keys: vec![self.key.to_vec(), self.fence_key.to_vec()],
            args: vec![self.token.to_vec(), self.ttl_ms.to_string().into_bytes()],
        }
    }

    /// An integer: ours, with that fence; nil: busy.
    pub fn on_acquire(reply: &Reply) -> Option<Acquire> {
        match reply {
            Reply::Integer(fence) => Some(Acquire::Got {
                fence: Some(*fence),
            }),
            Reply::Nil => Some(Acquire::Busy),
            _ => None,
        }
    }

    /// Compare-and-delete.
    pub fn release_request(&self) -> RedisRequest {
        RedisRequest::Script {
            script: ScriptId::Release,
            keys: vec![self.key.to_vec()],
            args: vec![self.token.to_vec()],
        }
    }
}
