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

use super::lock::{Acquire, Lock, Release, RoundStep};
use super::reading::Reading;
use super::retry::{Backoff, Retry};
use super::step::SqlRequest;
use super::step::{CallerStats, Input, Machine, Outcome, Point, Step, SINGLE_REDIS};
use super::store::{unexpected, Read, Store, Written};
use super::user::{SqlStep, TxEffect};
use super::watchdog::Watchdog;
use crate::postgres::Statement;

/// Where the caller is, with what it has learnt so far: the fencing token from the acquire
/// on (`None` for a protocol without tokens), the balance it read from the read on, the
/// outcome from the decision on. What a phase has is in it, so no phase can lack it.
///
/// The data stays after its last use (the read through the release, for instance): the
/// model checker's states are these values, and the state counts pinned by the tests (equal
/// to an independent Promela model's) count them so.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Phase {
    Start,
    Acquiring,
    BackingOff,
    AfterAcquire {
        fence: Option<i64>,
    },
    FollowingUp {
        fence: Option<i64>,
    },
    /// `at`: which request of the read is out (a file's SQL read may send several).
    Reading {
        fence: Option<i64>,
        at: u8,
    },
    AfterRead {
        fence: Option<i64>,
        read: Read,
    },
    Working {
        fence: Option<i64>,
        read: Read,
    },
    Refreshing {
        fence: Option<i64>,
        read: Read,
    },
    BeforeWrite {
        fence: Option<i64>,
        read: Read,
    },
    /// `at`: which request of the write is out; `landed`: what the judged one said, once
    /// it answered (a file's SQL write may send more, e.g. its `COMMIT`).
    Writing {
        fence: Option<i64>,
        read: Read,
        at: u8,
        landed: Option<bool>,
    },
    /// A file's transaction block is given up with `ROLLBACK` (the caller does not write,
    /// or a statement failed); the outcome is decided.
    RollingBack {
        fence: Option<i64>,
        read: Option<Read>,
        outcome: Outcome,
    },
    BeforeRelease {
        fence: Option<i64>,
        read: Option<Read>,
        outcome: Outcome,
    },
    Releasing {
        fence: Option<i64>,
        read: Option<Read>,
        outcome: Outcome,
    },
    Finished {
        fence: Option<i64>,
        read: Option<Read>,
        outcome: Outcome,
    },
}

impl Phase {
    /// The fencing token and the read this phase carries (none before they were learnt).
    fn learnt(&self) -> (Option<i64>, Option<Read>) {
        match self {
            Phase::Start | Phase::Acquiring | Phase::BackingOff => (None, None),
            Phase::AfterAcquire { fence }
            | Phase::FollowingUp { fence }
            | Phase::Reading { fence, .. } => (*fence, None),
            Phase::AfterRead { fence, read }
            | Phase::Working { fence, read }
            | Phase::Refreshing { fence, read }
            | Phase::BeforeWrite { fence, read }
            | Phase::Writing { fence, read, .. } => (*fence, Some(*read)),
            Phase::RollingBack { fence, read, .. }
            | Phase::BeforeRelease { fence, read, .. }
            | Phase::Releasing { fence, read, .. }
            | Phase::Finished { fence, read, .. } => (*fence, *read),
        }
    }

    /// The phase's name, for messages about unexpected answers.
    fn name(&self) -> &'static str {
        match self {
            Phase::Start => "Start",
            Phase::Acquiring => "Acquiring",
            Phase::BackingOff => "BackingOff",
            Phase::AfterAcquire { .. } => "AfterAcquire",
            Phase::FollowingUp { .. } => "FollowingUp",
            Phase::Reading { .. } => "Reading",
            Phase::AfterRead { .. } => "AfterRead",
            Phase::Working { .. } => "Working",
            Phase::Refreshing { .. } => "Refreshing",
            Phase::BeforeWrite { .. } => "BeforeWrite",
            Phase::Writing { .. } => "Writing",
            Phase::RollingBack { .. } => "RollingBack",
            Phase::BeforeRelease { .. } => "BeforeRelease",
            Phase::Releasing { .. } => "Releasing",
            Phase::Finished { .. } => "Finished",
        }
    }
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
    /// Until when acquiring may go on: set at the start (0 before), kept after.
    deadline_ms: u64,
    /// When the work ends: set when it starts (0 before), kept after.
    work_end_ms: u64,
    /// The follow-up request after the acquire (SETNX's PEXPIRE) was made, or there is none:
    /// set when the lock is first held, kept after.
    follow_up_done: bool,
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
    /// Refresh the lease while working (a lease lock only).
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
        assert!(
            config.watchdog.is_none() || config.lock.refresh_request(1).is_some(),
            "a watchdog refreshes a lease, and only a lock with a refresh request has one"
        );
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
            stats: CallerStats::default(),
        }
    }

    /// `Acquire` while an acquire is out, `Release` while a release is, else none.
    pub fn stage(&self) -> Option<crate::world::FaultsOn> {
        match self.phase {
            Phase::Acquiring => Some(crate::world::FaultsOn::Acquire),
            Phase::Releasing { .. } => Some(crate::world::FaultsOn::Release),
            _ => None,
        }
    }

    /// True between a successful acquire and the release: the caller believes it holds the
    /// lock (a watchdog that saw the loss ends the belief).
    pub fn believes_it_holds(&self) -> bool {
        let holding = matches!(
            self.phase,
            Phase::AfterAcquire { .. }
                | Phase::FollowingUp { .. }
                | Phase::Reading { .. }
                | Phase::AfterRead { .. }
                | Phase::Working { .. }
                | Phase::Refreshing { .. }
                | Phase::BeforeWrite { .. }
                | Phase::Writing { .. }
                | Phase::RollingBack { .. }
                | Phase::BeforeRelease { .. }
        );
        let lost = self.watchdog.is_some_and(|w| w.lost);
        // `lease-wait` trusts its lock only once WAIT said a replica has it, and not at all
        // after WAIT said none does (it releases and gives up: the only release with that
        // outcome).
        let untrusted = match &self.phase {
            Phase::FollowingUp { .. } => matches!(self.lock, Lock::Lease(_)),
            Phase::BeforeRelease {
                outcome: Outcome::GaveUp,
                ..
            } => true,
            _ => false,
        };
        holding && self.lock != Lock::Nothing && !lost && !untrusted
    }

    /// Starts an acquire round (one request, or one per node), or reads at once without a lock.
    fn acquire(&mut self, now_ms: u64) -> Step {
        match self.lock.start_acquire(now_ms) {
            Some(step) => {
                self.phase = Phase::Acquiring;
                step
            }
            None => self.start_reading(None),
        }
    }

    fn start_reading(&mut self, fence: Option<i64>) -> Step {
        self.phase = Phase::Reading { fence, at: 0 };
        self.store.read_step(0)
    }

    fn on_acquire(&mut self, now_ms: u64, input: &Input) -> Step {
        let acquire = match self.lock.on_acquire(now_ms, input) {
            RoundStep::Send(step) => {
                self.phase = Phase::Acquiring;
                return step;
            }
            RoundStep::Ended(acquire) => acquire,
        };
        match acquire {
            Acquire::Got { fence } => {
                self.phase = Phase::AfterAcquire { fence };
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

    /// Holding the lock: the follow-up request if there is one and it was not made yet, else
    /// the watchdog starts and the read goes out.
    fn after_acquire(&mut self, now_ms: u64, fence: Option<i64>) -> Step {
        if !self.follow_up_done {
            self.follow_up_done = true;
            if let Some(request) = self.lock.follow_up_request() {
                self.phase = Phase::FollowingUp { fence };
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
        self.start_reading(fence)
    }

    fn on_read(&mut self, fence: Option<i64>, at: u8, input: &Input) -> Step {
        if at + 1 < self.store.len(SqlStep::Read) {
            return match self.store.on_statement(SqlStep::Read, input) {
                Ok(()) => {
                    self.phase = Phase::Reading { fence, at: at + 1 };
                    self.store.read_step(at + 1)
                }
                Err(written) => {
                    let open = self.store.block_open(SqlStep::Read, at, false);
                    self.give_up(open, fence, None, failure(written))
                }
            };
        }
        match self.store.on_read(input) {
            Ok(read) => {
                self.phase = Phase::AfterRead { fence, read };
                Step::Reached(Point::AfterRead)
            }
            Err(error) => {
                let ran = matches!(input, Input::Sql(Ok(_)));
                let open = self.store.block_open(SqlStep::Read, at, ran);
                self.give_up(open, fence, None, Outcome::Failed(error))
            }
        }
    }

    fn after_read(&mut self, now_ms: u64, fence: Option<i64>, read: Read) -> Step {
        if read.balance < self.amount {
            let outcome = Outcome::InsufficientFunds {
                read_balance: Some(read.balance),
            };
            let open = self.store.read_leaves_block_open();
            return self.give_up(open, fence, Some(read), outcome);
        }
        self.work_end_ms = now_ms + self.work_ms;
        self.work(now_ms, fence, read)
    }

    /// Works until `work_end_ms`, refreshing the lease when a watchdog is due.
    fn work(&mut self, now_ms: u64, fence: Option<i64>, read: Read) -> Step {
        if now_ms >= self.work_end_ms {
            self.phase = Phase::BeforeWrite { fence, read };
            return Step::Reached(Point::BeforeWrite);
        }
        if let Some(watchdog) = &self.watchdog {
            if let (true, Some(request)) = (
                watchdog.due(now_ms),
                self.lock.refresh_request(watchdog.ttl_ms),
            ) {
                self.phase = Phase::Refreshing { fence, read };
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
        self.phase = Phase::Working { fence, read };
        Step::Sleep {
            min_ms: sleep_ms,
            max_ms: sleep_ms,
            deadline_ms: None,
        }
    }

    fn on_refresh(&mut self, now_ms: u64, fence: Option<i64>, read: Read, input: &Input) -> Step {
        if let Some(watchdog) = &mut self.watchdog {
            if self.lock.on_refresh(input) {
                self.stats.refreshes += 1;
                watchdog.refreshed(now_ms);
            } else {
                watchdog.lose();
            }
        }
        self.work(now_ms, fence, read)
    }

    fn before_write(&mut self, fence: Option<i64>, read: Read) -> Step {
        if self.watchdog.is_some_and(|w| w.lost) {
            let open = self.store.read_leaves_block_open();
            return self.give_up(open, fence, Some(read), Outcome::LostLock);
        }
        self.write_request(fence, read, 0, None)
    }

    /// Request `at` of the write goes out.
    fn write_request(
        &mut self,
        fence: Option<i64>,
        read: Read,
        at: u8,
        landed: Option<bool>,
    ) -> Step {
        self.phase = Phase::Writing {
            fence,
            read,
            at,
            landed,
        };
        self.store.write_step(
            at,
            read.balance - self.amount,
            self.write_token(fence),
            read.fence,
        )
    }

    /// The token the write carries: the fencing token, else the lock's check-and-set value.
    fn write_token(&self, fence: Option<i64>) -> i64 {
        fence.or(self.lock.write_token()).unwrap_or(0)
    }

    /// The answer to request `at` of the write. The judged request says landed or refused;
    /// the others (a file's `BEGIN`, `COMMIT`, ...) only have to run. The outcome is decided
    /// when the last request answered (a transaction's change lands at its `COMMIT`), or at
    /// the first that fails (an open block is then rolled back).
    fn on_write(
        &mut self,
        now_ms: u64,
        fence: Option<i64>,
        read: Read,
        at: u8,
        landed: Option<bool>,
        input: &Input,
    ) -> Step {
        let landed = match self.write_answer(at, landed, input) {
            Ok(landed) => landed,
            Err(written) => {
                let open = self.store.block_open(SqlStep::Write, at, false);
                let outcome = match written {
                    Written::Refused => Outcome::WriteRejected {
                        read_balance: read.balance,
                        fence,
                    },
                    written => failure(written),
                };
                return self.give_up(open, fence, Some(read), outcome);
            }
        };
        if at + 1 < self.store.len(SqlStep::Write) {
            return self.write_request(fence, read, at + 1, landed);
        }
        let outcome = match landed {
            Some(true) => Outcome::Accepted {
                read_balance: Some(read.balance),
                fence,
                write_acked_ms: now_ms,
            },
            Some(false) => Outcome::WriteRejected {
                read_balance: read.balance,
                fence,
            },
            None => Outcome::Failed("the write has no statement that changes the row".into()),
        };
        self.release(fence, Some(read), outcome)
    }

    /// What the answer to request `at` of the write says: what the judged request found
    /// (landed or refused) once it answered, `landed` until then; an error when the request
    /// failed (`Refused` when PostgreSQL refused the transaction, which ends it).
    fn write_answer(
        &self,
        at: u8,
        landed: Option<bool>,
        input: &Input,
    ) -> Result<Option<bool>, Written> {
        if at != self.store.write_judged() {
            return self
                .store
                .on_statement(SqlStep::Write, input)
                .map(|()| landed);
        }
        match self.store.on_write(input) {
            Written::Landed => Ok(Some(true)),
            Written::Refused if !matches!(input, Input::Sql(Err(_))) => Ok(Some(false)),
            written => Err(written),
        }
    }

    /// Keeps the outcome and, when the caller's transaction block is `open`, rolls it back
    /// first (so that no row lock outlives the caller); then releases the lock.
    fn give_up(
        &mut self,
        open: bool,
        fence: Option<i64>,
        read: Option<Read>,
        outcome: Outcome,
    ) -> Step {
        if !open {
            return self.release(fence, read, outcome);
        }
        self.phase = Phase::RollingBack {
            fence,
            read,
            outcome,
        };
        Step::Sql(SqlRequest {
            statement: Statement::Rollback,
            params: vec![],
        })
    }

    /// Keeps the outcome and releases the lock, if there is one.
    fn release(&mut self, fence: Option<i64>, read: Option<Read>, outcome: Outcome) -> Step {
        if self.lock == Lock::Nothing {
            return self.done(fence, read, outcome);
        }
        self.phase = Phase::BeforeRelease {
            fence,
            read,
            outcome,
        };
        Step::Reached(Point::BeforeRelease)
    }

    /// The release request goes out (a caller without a lock has none and is done).
    fn send_release(&mut self, fence: Option<i64>, read: Option<Read>, outcome: Outcome) -> Step {
        match self.lock.start_release() {
            Some(step) => {
                self.phase = Phase::Releasing {
                    fence,
                    read,
                    outcome,
                };
                step
            }
            None => self.done(fence, read, outcome),
        }
    }

    /// The outcome stands whatever the release found (the spend is decided); a failed
    /// release only leaves the lock to expire.
    fn on_release(
        &mut self,
        fence: Option<i64>,
        read: Option<Read>,
        outcome: Outcome,
        input: &Input,
    ) -> Step {
        let release = match self.lock.on_release(input) {
            RoundStep::Send(step) => {
                self.phase = Phase::Releasing {
                    fence,
                    read,
                    outcome,
                };
                return step;
            }
            RoundStep::Ended(release) => release,
        };
        if release == Release::NotHeld {
            self.stats.stale_releases_refused += 1;
        }
        self.done(fence, read, outcome)
    }

    /// Ends before holding anything.
    fn finish(&mut self, outcome: Outcome) -> Step {
        let (fence, read) = self.phase.learnt();
        self.done(fence, read, outcome)
    }

    fn done(&mut self, fence: Option<i64>, read: Option<Read>, outcome: Outcome) -> Step {
        self.phase = Phase::Finished {
            fence,
            read,
            outcome: outcome.clone(),
        };
        Step::Done(outcome)
    }
}

impl Machine for LockedSpend {
    fn next(&mut self, now_ms: u64, input: Input) -> Step {
        // The phase is taken out and put back by the step (every path sets a new one).
        match (std::mem::replace(&mut self.phase, Phase::Start), &input) {
            (Phase::Start, Input::Start) => {
                self.deadline_ms = now_ms + self.acquire_timeout_ms;
                self.acquire(now_ms)
            }
            (Phase::Acquiring, _) => self.on_acquire(now_ms, &input),
            (Phase::BackingOff, Input::Woke) if now_ms >= self.deadline_ms => {
                self.finish(Outcome::GaveUp)
            }
            (Phase::BackingOff, Input::Woke) => self.acquire(now_ms),
            (Phase::AfterAcquire { fence }, Input::Resumed) => self.after_acquire(now_ms, fence),
            (Phase::FollowingUp { fence }, _) if self.lock.on_follow_up(&input).is_some() => {
                if self.lock.on_follow_up(&input) == Some(true) {
                    self.after_acquire(now_ms, fence)
                } else {
                    // WAIT found no replica with the lock: a failover could lose it, so the
                    // caller does not trust it, releases it and gives up.
                    self.release(fence, None, Outcome::GaveUp)
                }
            }
            (Phase::Reading { fence, at }, _) => self.on_read(fence, at, &input),
            (Phase::AfterRead { fence, read }, Input::Resumed) => {
                self.after_read(now_ms, fence, read)
            }
            (Phase::Working { fence, read }, Input::Woke) => self.work(now_ms, fence, read),
            (Phase::Refreshing { fence, read }, _) => self.on_refresh(now_ms, fence, read, &input),
            (Phase::BeforeWrite { fence, read }, Input::Resumed) => self.before_write(fence, read),
            (
                Phase::Writing {
                    fence,
                    read,
                    at,
                    landed,
                },
                _,
            ) => self.on_write(now_ms, fence, read, at, landed, &input),
            // Whatever the ROLLBACK answered, the block is gone (or the connection is).
            (
                Phase::RollingBack {
                    fence,
                    read,
                    outcome,
                },
                _,
            ) => self.release(fence, read, outcome),
            (
                Phase::BeforeRelease {
                    fence,
                    read,
                    outcome,
                },
                Input::Resumed,
            ) => self.send_release(fence, read, outcome),
            (
                Phase::Releasing {
                    fence,
                    read,
                    outcome,
                },
                _,
            ) => self.on_release(fence, read, outcome, &input),
            (Phase::Finished { .. }, _) => panic!("a finished caller was stepped again"),
            (phase, input) => {
                let error = unexpected(phase.name(), input);
                self.phase = phase;
                let (fence, read) = self.phase.learnt();
                if self.believes_it_holds() {
                    self.release(fence, read, Outcome::Failed(error))
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
        let reading = match &self.phase {
            Phase::Acquiring => self.lock.acquire_reading(input),
            Phase::FollowingUp { .. } => match (&self.lock, input) {
                (Lock::Lease(_), Input::Redis(Reply::Integer(replicas))) => Reading::Replicated {
                    replicas: *replicas,
                },
                (_, Input::Redis(Reply::Integer(1))) => Reading::ExpirySet,
                _ => failed(unexpected("FollowingUp", input)),
            },
            Phase::Reading { at, .. } if at + 1 < self.store.len(SqlStep::Read) => {
                match self.store.on_statement(SqlStep::Read, input) {
                    Ok(()) => statement_reading(self.store.effect(SqlStep::Read, *at), input),
                    Err(written) => failed(error_of(written)),
                }
            }
            Phase::Reading { .. } => match self.store.on_read(input) {
                Ok(read) => Reading::BalanceRead {
                    balance: read.balance,
                    fence: self.store.read_fence(&read, input),
                },
                Err(error) => failed(error),
            },
            Phase::Refreshing { .. } => match self.lock.on_refresh(input) {
                true => Reading::Refreshed,
                false => Reading::LeaseLost,
            },
            Phase::Writing {
                fence,
                read,
                at,
                landed,
            } => {
                let balance = read.balance - self.amount;
                let (fence, seen) = self.store.write_marks(self.write_token(*fence), read.fence);
                let last = *at + 1 == self.store.len(SqlStep::Write);
                let answer = self.write_answer(*at, *landed, input);
                // The write is told landed or refused by its last request (a transaction's
                // change lands at its COMMIT); a refusal of the transaction, at once.
                match answer {
                    Ok(Some(true)) if last => Reading::Wrote {
                        balance,
                        fence,
                        seen,
                    },
                    Ok(Some(false)) if last => Reading::WriteRefused {
                        balance,
                        fence,
                        seen,
                    },
                    Ok(_) => statement_reading(self.store.effect(SqlStep::Write, *at), input),
                    Err(Written::Refused) => Reading::WriteRefused {
                        balance,
                        fence,
                        seen,
                    },
                    Err(written) => failed(error_of(written)),
                }
            }
            Phase::RollingBack { .. } => match input {
                Input::Sql(Ok(_)) => Reading::RolledBack,
                _ => failed(unexpected("ROLLBACK", input)),
            },
            Phase::Releasing { .. } => self.lock.release_reading(input),
            Phase::Start
            | Phase::BackingOff
            | Phase::AfterAcquire { .. }
            | Phase::AfterRead { .. }
            | Phase::Working { .. }
            | Phase::BeforeWrite { .. }
            | Phase::BeforeRelease { .. }
            | Phase::Finished { .. } => return None,
        };
        Some(reading)
    }
}

/// The outcome of a request that failed.
fn failure(written: Written) -> Outcome {
    Outcome::Failed(error_of(written))
}

/// What went wrong with a request that failed.
fn error_of(written: Written) -> String {
    match written {
        Written::Failed(error) => error,
        Written::Landed | Written::Refused => {
            "a statement's answer was taken for the write's".to_string()
        }
    }
}

/// The reading of a file's statement that is not its step's judged one: a transaction
/// statement as the built-ins read theirs, anything else by its command tag.
fn statement_reading(effect: Option<TxEffect>, input: &Input) -> Reading {
    match (effect, input) {
        (Some(TxEffect::Begins), _) => Reading::Begun,
        (Some(TxEffect::Ends), Input::Sql(Ok(result))) if result.tag == "COMMIT" => {
            Reading::Committed
        }
        (_, Input::Sql(Ok(result))) => Reading::Ran {
            tag: result.tag.clone(),
        },
        (_, input) => Reading::Failed {
            error: unexpected("statement", input),
        },
    }
}
