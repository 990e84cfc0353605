//! The lock protocols a [`LockedSpend`](super::locked::LockedSpend) caller can use, and the
//! answers their requests get.

use crate::redis::{Command, Reply};

use super::fenced::FencedLock;
use super::lease::Lease;
use super::naive::Setnx;
use super::reading::Reading;
use super::redislock::Redislock;
use super::redlock::Redlock;
use super::step::{Input, RedisRequest, Step, SINGLE_REDIS};
use super::store::unexpected;
use super::user::UserLock;

/// What an acquire attempt found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Acquire {
    /// The lock is ours (with a fencing token when the protocol issues one).
    Got {
        /// The fencing token.
        fence: Option<i64>,
    },
    /// Somebody else holds it.
    Busy,
    /// An error ends the attempt.
    Failed(String),
}

/// What a release found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Release {
    /// The key was deleted.
    Released,
    /// Refused: the lock had expired or changed hands.
    NotHeld,
    /// An error.
    Failed(String),
}

/// A lock protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lock {
    /// No lock at all (tutorial step 1).
    Nothing,
    /// `SETNX` + `DEL`, optionally with a separate `PEXPIRE`.
    Setnx(Setnx),
    /// `SET NX PX` + token, compare-and-delete release.
    Lease(Lease),
    /// bsm/redislock's obtain and release scripts.
    Redislock(Redislock),
    /// Atomic acquire + `INCR` of a fence counter.
    Fenced(FencedLock),
    /// A lock described in a safeguard file.
    User(UserLock),
    /// A lease on a majority of independent nodes: a round of one request per node for each
    /// acquire and release.
    Redlock(Redlock),
}

/// What one answer of an acquire or release round leads to: a round is one request on the
/// single Redis for most locks, one request per node for Redlock.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RoundStep<T> {
    /// The round goes on: send this next.
    Send(Step),
    /// The round is over, with what it found.
    Ended(T),
}

/// A request on the single Redis, with the client's default deadline.
fn on_single_redis(request: RedisRequest) -> Step {
    Step::Redis {
        node: SINGLE_REDIS,
        request,
        timeout_ms: None,
    }
}

impl Lock {
    /// Starts an acquire round at `now_ms`: its first request, or none when there is no lock
    /// to take.
    pub fn start_acquire(&mut self, now_ms: u64) -> Option<Step> {
        match self {
            Lock::Nothing => None,
            Lock::Setnx(lock) => Some(on_single_redis(lock.acquire_request())),
            Lock::Lease(lock) => Some(on_single_redis(lock.acquire_request())),
            Lock::Redislock(lock) => Some(on_single_redis(lock.acquire_request())),
            Lock::Fenced(lock) => Some(on_single_redis(lock.acquire_request())),
            Lock::User(lock) => lock.acquire_request().map(on_single_redis),
            Lock::Redlock(lock) => Some(lock.start(now_ms)),
        }
    }

    /// Takes an answer of the acquire round: the next request, or what the round found.
    pub fn on_acquire(&mut self, now_ms: u64, input: &Input) -> RoundStep<Acquire> {
        match self {
            Lock::Redlock(lock) => lock.on_round(now_ms, input),
            lock => RoundStep::Ended(lock.answer_to_acquire(input)),
        }
    }

    /// What one answer to an acquire request says on its own (for Redlock, one node's vote).
    fn answer_to_acquire(&self, input: &Input) -> Acquire {
        let Input::Redis(reply) = input else {
            return Acquire::Failed(unexpected("acquire", input));
        };
        let acquire = match self {
            Lock::Nothing => None,
            Lock::Setnx(_) => Setnx::on_acquire(reply),
            Lock::Lease(_) => Lease::on_acquire(reply),
            Lock::Redislock(_) => Redislock::on_acquire(reply),
            Lock::Fenced(_) => FencedLock::on_acquire(reply),
            Lock::User(lock) => lock.on_acquire(reply),
            Lock::Redlock(_) => Redlock::vote(reply),
        };
        acquire.unwrap_or_else(|| Acquire::Failed(unexpected("acquire", input)))
    }

    /// The caller's reading of an answer of the acquire round (without taking it).
    pub fn acquire_reading(&self, input: &Input) -> Reading {
        match self {
            Lock::Redlock(lock) => lock.reading(input),
            lock => match lock.answer_to_acquire(input) {
                Acquire::Got { fence } => Reading::Acquired { fence },
                Acquire::Busy => Reading::Busy,
                Acquire::Failed(error) => Reading::Failed { error },
            },
        }
    }

    /// A second request right after a successful acquire (SETNX then PEXPIRE), if any.
    pub fn follow_up_request(&self) -> Option<RedisRequest> {
        match self {
            Lock::Setnx(lock) => lock.expire_request(),
            Lock::Lease(lock) => lock.wait_request(),
            _ => None,
        }
    }

    /// Interprets the answer to the follow-up request: `Some(true)` to go on holding the lock,
    /// `Some(false)` when the lock is not to be trusted (WAIT: no replica has it), none for an
    /// unexpected answer.
    pub fn on_follow_up(&self, input: &Input) -> Option<bool> {
        match (self, input) {
            (Lock::Lease(_), Input::Redis(reply)) => Lease::on_wait(reply),
            (_, Input::Redis(Reply::Integer(1))) => Some(true),
            _ => None,
        }
    }

    /// Starts the release round of a held lock: its first request, or none when there is
    /// nothing to release.
    pub fn start_release(&mut self) -> Option<Step> {
        match self {
            Lock::Nothing => None,
            Lock::Setnx(lock) => Some(on_single_redis(lock.release_request())),
            Lock::Lease(lock) => Some(on_single_redis(lock.release_request())),
            Lock::Redislock(lock) => Some(on_single_redis(lock.release_request())),
            Lock::Fenced(lock) => Some(on_single_redis(lock.release_request())),
            Lock::User(lock) => lock.release_request().map(on_single_redis),
            Lock::Redlock(lock) => Some(lock.start_release()),
        }
    }

    /// Takes an answer of the release round: the next request, or what the round found.
    pub fn on_release(&mut self, input: &Input) -> RoundStep<Release> {
        match self {
            Lock::Redlock(lock) => lock.on_release(input),
            lock => RoundStep::Ended(lock.answer_to_release(input)),
        }
    }

    /// What one answer to a release request says: the count of deleted keys (`DEL`, the
    /// compare-and-delete script, `DELEX`), or for redislock's `release.lua` `OK` / nil.
    fn answer_to_release(&self, input: &Input) -> Release {
        let release = match (self, input) {
            (Lock::Redislock(_), Input::Redis(reply)) => Redislock::on_release(reply),
            (Lock::User(lock), Input::Redis(reply)) => lock.on_release(reply),
            (_, Input::Redis(Reply::Integer(1))) => Some(Release::Released),
            (_, Input::Redis(Reply::Integer(0))) => Some(Release::NotHeld),
            _ => None,
        };
        release.unwrap_or_else(|| Release::Failed(unexpected("release", input)))
    }

    /// The caller's reading of an answer of the release round (without taking it).
    pub fn release_reading(&self, input: &Input) -> Reading {
        match self {
            Lock::Redlock(lock) => lock.reading(input),
            lock => match lock.answer_to_release(input) {
                Release::Released => Reading::Released,
                Release::NotHeld => Reading::NotHeld,
                Release::Failed(error) => Reading::Failed { error },
            },
        }
    }

    /// The value a write carries as its token when the lock issues no fencing token: the
    /// Redlock token's check-and-set value (`redlock-cas`).
    pub fn write_token(&self) -> Option<i64> {
        match self {
            Lock::Redlock(lock) => lock.cas,
            _ => None,
        }
    }

    /// The refresh request: token-checked for a lease (and a user lock that defines one);
    /// for a `SETNX` lock with an expiry a plain `PEXPIRE key ttl`, which checks nothing (no
    /// built-in safeguard refreshes one; tests build such a watchdog to show what a
    /// token-less refresh does).
    pub fn refresh_request(&self, ttl_ms: u64) -> Option<RedisRequest> {
        match self {
            Lock::Lease(lock) => Some(lock.refresh_request(ttl_ms)),
            Lock::User(lock) => lock.refresh_request(ttl_ms),
            Lock::Setnx(lock) if lock.expire_ttl_ms.is_some() => Some(RedisRequest::Command(
                Command::PExpire(lock.key.to_vec(), ttl_ms as i64),
            )),
            _ => None,
        }
    }

    /// True when the answer to the refresh request means the lease was extended.
    pub fn on_refresh(&self, input: &Input) -> bool {
        match (self, input) {
            (Lock::User(lock), Input::Redis(reply)) => lock.refreshed(reply),
            (_, Input::Redis(Reply::Integer(1))) => true,
            _ => false,
        }
    }
}

/// The token as the 32 lower-case hex digits of a 128-bit random number.
pub fn token_text(token: u128) -> Vec<u8> {
    format!("{token:032x}").into_bytes()
}
