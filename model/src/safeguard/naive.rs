//! The broken locks from the tutorial's introduction: `SETNX` + `DEL`, and `SETNX` then
//! `PEXPIRE` as two commands.
//!
//! **Guards against:** two callers working at once, as long as nothing goes wrong.
//!
//! **Relies on:** no holder ever crashing or stalling. With `SETNX` + `DEL` a crashed holder
//! leaves a lock that never expires, and a slow holder's `DEL` removes whoever holds the lock
//! now. `SETNX` then `PEXPIRE` fixes the first only if the caller survives between the two
//! commands (a crash at `after-acquire`, which this safeguard reaches *before* its `PEXPIRE`,
//! leaves a lock without expiry).

use crate::redis::command::Command;
use crate::redis::Reply;

use super::lock::Acquire;
use super::step::RedisRequest;

/// A `SETNX` lock.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Setnx {
    /// The lock key.
    pub key: super::FixedBytes,
    /// The value written (the caller's token; `DEL` ignores it).
    pub value: super::FixedBytes,
    /// `Some(ttl)`: follow the `SETNX` with `PEXPIRE key ttl` as a second command.
    pub expire_ttl_ms: Option<u64>,
}

impl Setnx {
    /// `SETNX key value`.
    pub fn acquire_request(&self) -> RedisRequest {
        RedisRequest::Command(Command::SetNx(self.key.to_vec(), self.value.to_vec()))
    }

    /// `1`: ours; `0`: busy.
    pub fn on_acquire(reply: &Reply) -> Option<Acquire> {
        match reply {
            Reply::Integer(1) => Some(Acquire::Got { fence: None }),
            Reply::Integer(0) => Some(Acquire::Busy),
            _ => None,
        }
    }

    /// `PEXPIRE key ttl`, when this variant sets the expiry separately.
    pub fn expire_request(&self) -> Option<RedisRequest> {
        self.expire_ttl_ms
            .map(|ttl_ms| RedisRequest::Command(Command::PExpire(self.key.to_vec(), ttl_ms as i64)))
    }

    /// `DEL key`: deletes the lock whoever holds it.
    pub fn release_request(&self) -> RedisRequest {
        RedisRequest::Command(Command::Del(vec![self.key.to_vec()]))
    }
}
