//! The life of a caller that spends under a lock: acquire, read, work, write, release.
//!
//! Every Redis-lock safeguard is this one machine with a different [`Lock`], [`Store`],
//! [`Retry`] and optional [`Watchdog`]:
//!
//! ```text
//! acquire ─busy→ back off ─→ acquire ... (until the deadline, or the strategy stops)
//!    │got
//!    ▼
//! [after-acquire] → read → [after-read] → enough? ─no→ release
//!                                          │yes
//!                                          ▼
//!                  work (refreshing every TTL/3 with a watchdog) → [before-write]
//!                  → write → [before-release] → release → done
//! ```
//!
//! `[...]` are the named points where a driver may pause the caller.

use crate::redis::Reply;

use super::lock::{Acquire, Lock, Release};
use super::reading::Reading;
use super::redlock::{Redlock, RoundNext};
use super::retry::{Backoff, Retry};
use super::step::{CallerStats, Input, Machine, Outcome, Point, Step, SINGLE_REDIS};
use super::store::{unexpected, Read, Store, Written};
use super::watchdog::Watchdog;

/// Where the caller is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Phase {
    Start,
    Acquiring,
    BackingOff,
    AfterAcquire,
    FollowingUp,
    Reading,
    AfterRead,
    Working,
    Refreshing,
    BeforeWrite,
    Writing,
    BeforeRelease,
    Releasing,
    Finished,
}

/// A caller spending under a Redis lock (or under none).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockedSpend {
    lock: Lock,
    store: Store,
    retry: Retry,
    jitter: bool,
    watchdog: Option<Watchdog>,
    amount: i64,
    work_ms: u64,
    acquire_timeout_ms: u64,
    phase: Phase,
    deadline_ms: u64,
    work_end_ms: u64,
    follow_up_done: bool,
    fence: Option<i64>,
    read: Option<Read>,
    outcome: Option<Outcome>,
    stats: CallerStats,
}

/// What a [`LockedSpend`] is made of.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockedSpendConfig {
    /// The lock protocol.
    pub lock: Lock,
    /// Where the balance lives.
    pub store: Store,
    /// How to wait when the lock is busy.
    pub retry: Retry,
    /// Full jitter over `retry`.
    pub jitter: bool,
    /// Refresh the lease while working.
    pub watchdog: Option<Watchdog>,
    /// How much to spend.
    pub amount: i64,
    /// How long the work between read and write takes.
    pub work_ms: u64,
    /// Give up acquiring after this long.
    pub acquire_timeout_ms: u64,
}

impl LockedSpend {
    /// A caller about to start.
    pub fn new(config: LockedSpendConfig) -> LockedSpend {
        assert!(config.amount > 0, "the amount must be positive");
        LockedSpend {
            lock: config.lock,
            store: config.store,
            retry: config.retry,
            jitter: config.jitter,
            watchdog: config.watchdog,
            amount: config.amount,
            work_ms: config.work_ms,
            acquire_timeout_ms: config.acquire_timeout_ms,
            phase: Phase::Start,
            deadline_ms: 0,
            work_end_ms: 0,
            follow_up_done: false,
            fence: None,
            read: None,
            outcome: None,
            stats: CallerStats::default(),
        }
    }

    /// The fencing token this caller holds, once acquired.
    pub fn fence(&self) -> Option<i64> {
        self.fence
    }

    /// True between a successful acquire and the release: the caller believes it holds the
    /// lock (a watchdog that saw the loss ends the belief).
    pub fn believes_it_holds(&self) -> bool {
        let holding = matches!(
            self.phase,
            Phase::AfterAcquire
                | Phase::FollowingUp
                | Phase::Reading
                | Phase::AfterRead
                | Phase::Working
                | Phase::Refreshing
                | Phase::BeforeWrite
                | Phase::Writing
                | Phase::BeforeRelease
        );
        let lost = self.watchdog.is_some_and(|w| w.lost);
        holding && self.lock != Lock::Nothing && !lost
    }

    fn acquire(&mut self, now_ms: u64) -> Step {
        if let Lock::Redlock(lock) = &mut self.lock {
            self.phase = Phase::Acquiring;
            return lock.start(now_ms);
        }
        match self.lock.acquire_request() {
            Some(request) => {
                self.phase = Phase::Acquiring;
                Step::Redis {
                    node: SINGLE_REDIS,
                    request,
                    timeout_ms: None,
                }
            }
            None => self.start_reading_unlocked(),
        }
    }

    fn start_reading_unlocked(&mut self) -> Step {
        self.phase = Phase::Reading;
        self.store.read_step()
    }

    fn on_acquire(&mut self, now_ms: u64, input: &Input) -> Step {
        let acquire = match &mut self.lock {
            Lock::Redlock(lock) => match lock.on_round(now_ms, input) {
                RoundNext::Send(step) => return step,
                RoundNext::Held => Acquire::Got { fence: None },
                RoundNext::Busy => Acquire::Busy,
            },
            lock => lock.on_acquire(input),
        };
        match acquire {
            Acquire::Got { fence } => {
                self.fence = fence;
                self.phase = Phase::AfterAcquire;
                Step::Reached(Point::AfterAcquire)
            }
            Acquire::Busy => {
                self.stats.busy_retries += 1;
                match self.retry.next_backoff(self.jitter) {
                    Backoff::Stop => self.finish(Outcome::GaveUp),
                    Backoff::Wait { .. } if now_ms >= self.deadline_ms => {
                        self.finish(Outcome::GaveUp)
                    }
                    Backoff::Wait { min_ms, max_ms } => {
                        self.phase = Phase::BackingOff;
                        Step::Sleep {
                            min_ms,
                            max_ms,
                            deadline_ms: Some(self.deadline_ms),
                        }
                    }
                }
            }
            Acquire::Failed(error) => self.finish(Outcome::Failed(error)),
        }
    }

    fn after_acquire(&mut self, now_ms: u64) -> Step {
        if !self.follow_up_done {
            self.follow_up_done = true;
            if let Some(request) = self.lock.follow_up_request() {
                self.phase = Phase::FollowingUp;
                return Step::Redis {
                    node: SINGLE_REDIS,
                    request,
                    timeout_ms: None,
                };
            }
        }
        if let Some(watchdog) = &mut self.watchdog {
            watchdog.start(now_ms);
        }
        self.phase = Phase::Reading;
        self.store.read_step()
    }

    fn on_read(&mut self, input: &Input) -> Step {
        match self.store.on_read(input) {
            Ok(read) => {
                self.read = Some(read);
                self.phase = Phase::AfterRead;
                Step::Reached(Point::AfterRead)
            }
            Err(error) => self.release(Outcome::Failed(error)),
        }
    }

    fn after_read(&mut self, now_ms: u64) -> Step {
        let read = self.read.expect("a read precedes after-read");
        if read.balance < self.amount {
            return self.release(Outcome::InsufficientFunds {
                read_balance: Some(read.balance),
            });
        }
        self.work_end_ms = now_ms + self.work_ms;
        self.work(now_ms)
    }

    /// Works until `work_end_ms`, refreshing the lease when a watchdog is due.
    fn work(&mut self, now_ms: u64) -> Step {
        if now_ms >= self.work_end_ms {
            self.phase = Phase::BeforeWrite;
            return Step::Reached(Point::BeforeWrite);
        }
        if let Some(watchdog) = &self.watchdog {
            if watchdog.due(now_ms) {
                let request = self
                    .lock
                    .refresh_request(watchdog.ttl_ms)
                    .expect("watchdog needs a lease");
                self.phase = Phase::Refreshing;
                return Step::Redis {
                    node: SINGLE_REDIS,
                    request,
                    timeout_ms: Some(watchdog.timeout_ms),
                };
            }
        }
        let wake_ms = self
            .watchdog
            .and_then(|w| w.wake_at())
            .map_or(self.work_end_ms, |at_ms| at_ms.min(self.work_end_ms));
        let sleep_ms = wake_ms - now_ms;
        self.phase = Phase::Working;
        Step::Sleep {
            min_ms: sleep_ms,
            max_ms: sleep_ms,
            deadline_ms: None,
        }
    }

    fn on_refresh(&mut self, now_ms: u64, input: &Input) -> Step {
        let watchdog = self.watchdog.as_mut().expect("refreshing needs a watchdog");
        match input {
            Input::Redis(Reply::Integer(1)) => {
                self.stats.refreshes += 1;
                watchdog.refreshed(now_ms);
            }
            _ => watchdog.lose(),
        }
        self.work(now_ms)
    }

    fn before_write(&mut self) -> Step {
        if self.watchdog.is_some_and(|w| w.lost) {
            return self.release(Outcome::LostLock);
        }
        let read = self.read.expect("a read precedes the write");
        self.phase = Phase::Writing;
        self.store
            .write_step(read.balance - self.amount, self.write_token(), read.fence)
    }

    /// The token the write carries: the fencing token, else the lock's check-and-set value.
    fn write_token(&self) -> i64 {
        self.fence.or(self.lock.write_token()).unwrap_or(0)
    }

    fn on_write(&mut self, now_ms: u64, input: &Input) -> Step {
        let read = self.read.expect("a read precedes the write");
        let outcome = match self.store.on_write(input) {
            Written::Landed => Outcome::Accepted {
                read_balance: Some(read.balance),
                fence: self.fence,
                write_acked_ms: now_ms,
            },
            Written::Refused => Outcome::WriteRejected {
                read_balance: read.balance,
                fence: self.fence,
            },
            Written::Failed(error) => Outcome::Failed(error),
        };
        self.release(outcome)
    }

    /// Records the outcome and releases the lock, if there is one.
    fn release(&mut self, outcome: Outcome) -> Step {
        self.outcome = Some(outcome);
        if self.lock == Lock::Nothing {
            return self.done();
        }
        self.phase = Phase::BeforeRelease;
        Step::Reached(Point::BeforeRelease)
    }

    fn on_release(&mut self, input: &Input) -> Step {
        let release = match &mut self.lock {
            Lock::Redlock(lock) => match lock.on_release(input) {
                Ok(step) => return step,
                Err(release) => release,
            },
            lock => lock.on_release(input),
        };
        match release {
            Release::Released => {}
            Release::NotHeld => self.stats.stale_releases_refused += 1,
            Release::Failed(error) => {
                // The outcome stands (the spend is decided); a failed release only leaves the
                // lock to expire. Keep the first failure visible if there was none before.
                if self.outcome.is_none() {
                    self.outcome = Some(Outcome::Failed(error));
                }
            }
        }
        self.done()
    }

    fn finish(&mut self, outcome: Outcome) -> Step {
        self.outcome = Some(outcome);
        self.done()
    }

    fn done(&mut self) -> Step {
        self.phase = Phase::Finished;
        Step::Done(
            self.outcome
                .clone()
                .expect("an outcome is set before finishing"),
        )
    }
}

impl Machine for LockedSpend {
    fn next(&mut self, now_ms: u64, input: Input) -> Step {
        match (self.phase, &input) {
            (Phase::Start, Input::Start) => {
                self.deadline_ms = now_ms + self.acquire_timeout_ms;
                self.acquire(now_ms)
            }
            (Phase::Acquiring, _) => self.on_acquire(now_ms, &input),
            (Phase::BackingOff, Input::Woke) if now_ms >= self.deadline_ms => {
                self.finish(Outcome::GaveUp)
            }
            (Phase::BackingOff, Input::Woke) => self.acquire(now_ms),
            (Phase::AfterAcquire, Input::Resumed) => self.after_acquire(now_ms),
            (Phase::FollowingUp, Input::Redis(Reply::Integer(1))) => self.after_acquire(now_ms),
            (Phase::Reading, _) => self.on_read(&input),
            (Phase::AfterRead, Input::Resumed) => self.after_read(now_ms),
            (Phase::Working, Input::Woke) => self.work(now_ms),
            (Phase::Refreshing, _) => self.on_refresh(now_ms, &input),
            (Phase::BeforeWrite, Input::Resumed) => self.before_write(),
            (Phase::Writing, _) => self.on_write(now_ms, &input),
            (Phase::BeforeRelease, Input::Resumed) => {
                self.phase = Phase::Releasing;
                if let Lock::Redlock(lock) = &mut self.lock {
                    return lock.start_release();
                }
                let request = self
                    .lock
                    .release_request()
                    .expect("only a lock is released");
                Step::Redis {
                    node: SINGLE_REDIS,
                    request,
                    timeout_ms: None,
                }
            }
            (Phase::Releasing, _) => self.on_release(&input),
            (Phase::Finished, _) => panic!("a finished caller was stepped again"),
            (phase, input) => {
                let error = unexpected(&format!("{phase:?}"), input);
                if self.believes_it_holds() {
                    self.release(Outcome::Failed(error))
                } else {
                    self.finish(Outcome::Failed(error))
                }
            }
        }
    }

    fn stats(&self) -> CallerStats {
        self.stats
    }

    fn reading(&self, input: &Input) -> Option<Reading> {
        let failed = |error: String| Reading::Failed { error };
        if let (Lock::Redlock(lock), Phase::Acquiring | Phase::Releasing) = (&self.lock, self.phase)
        {
            return Some(redlock_reading(lock, input));
        }
        let reading = match self.phase {
            Phase::Acquiring => match self.lock.on_acquire(input) {
                Acquire::Got { fence } => Reading::Acquired { fence },
                Acquire::Busy => Reading::Busy,
                Acquire::Failed(error) => failed(error),
            },
            Phase::FollowingUp => match input {
                Input::Redis(Reply::Integer(1)) => Reading::ExpirySet,
                _ => failed(unexpected("FollowingUp", input)),
            },
            Phase::Reading => match self.store.on_read(input) {
                Ok(read) => Reading::BalanceRead {
                    balance: read.balance,
                    fence: self.store.read_fence(&read),
                },
                Err(error) => failed(error),
            },
            Phase::Refreshing => match input {
                Input::Redis(Reply::Integer(1)) => Reading::Refreshed,
                _ => Reading::LeaseLost,
            },
            Phase::Writing => {
                let read = self.read?;
                let balance = read.balance - self.amount;
                let (fence, seen) = self.store.write_marks(self.write_token(), read.fence);
                match self.store.on_write(input) {
                    Written::Landed => Reading::Wrote {
                        balance,
                        fence,
                        seen,
                    },
                    Written::Refused => Reading::WriteRefused {
                        balance,
                        fence,
                        seen,
                    },
                    Written::Failed(error) => failed(error),
                }
            }
            Phase::Releasing => match self.lock.on_release(input) {
                Release::Released => Reading::Released,
                Release::NotHeld => Reading::NotHeld,
                Release::Failed(error) => failed(error),
            },
            Phase::Start
            | Phase::BackingOff
            | Phase::AfterAcquire
            | Phase::AfterRead
            | Phase::Working
            | Phase::BeforeWrite
            | Phase::BeforeRelease
            | Phase::Finished => return None,
        };
        Some(reading)
    }
}

/// What a Redlock node's answer means: granted or refused during an acquire round, released or
/// not held during a release (or the undo of a failed round).
fn redlock_reading(lock: &Redlock, input: &Input) -> Reading {
    let Some((node, acquiring)) = lock.asking() else {
        return Reading::Failed {
            error: unexpected("Redlock", input),
        };
    };
    match (acquiring, input) {
        (true, _) if Redlock::granted(input) => Reading::NodeGranted {
            node,
            votes: lock.votes_with(input),
            majority: lock.majority(),
        },
        (true, _) => Reading::NodeRefused { node },
        (false, Input::Redis(Reply::Integer(1))) => Reading::Released,
        (false, Input::Redis(Reply::Integer(0))) => Reading::NotHeld,
        (false, _) => Reading::Failed {
            error: unexpected("release", input),
        },
    }
}
