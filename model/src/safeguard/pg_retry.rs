//! PostgreSQL transactions that PostgreSQL may abort, and that the caller then rolls back and
//! runs again (the safety section's transfers and isolation levels).
//!
//! - [`PgTransfer`]: move `amount` from one wallet to another: `BEGIN; SELECT ... FOR UPDATE`
//!   on both rows; (work); `UPDATE` both; `COMMIT`. Holding the first row lock is its
//!   [`Point::AfterAcquire`] (a pause there widens the window in which an opposite transfer
//!   takes the other row), having read both rows its [`Point::AfterRead`]. **Ordered** (`pg-transfer-ordered`) locks
//!   the two rows by id, so two transfers in opposite directions queue on the same row first.
//!   **Unordered** (`pg-transfer-unordered`) locks the source first: two opposite transfers can
//!   each hold one row and wait for the other's, and PostgreSQL aborts one of them with 40P01
//!   `deadlock detected`. **Guards against:** lost updates and overdrafts on both wallets.
//!   **Relies on:** the caller retrying after 40P01 (without lock order it must).
//! - [`PgIsolated`]: read-modify-write of the balance in one transaction at an isolation level:
//!   `BEGIN ISOLATION LEVEL ...; SELECT balance, fence ...` (no row lock); (work);
//!   `UPDATE wallets SET balance = $1 ...; COMMIT`. Under `REPEATABLE READ` and `SERIALIZABLE`
//!   an UPDATE of a row another transaction changed since the snapshot fails with 40001
//!   `could not serialize access due to concurrent update`, and the caller retries with a new
//!   snapshot. **Guards against:** lost updates. **Relies on:** the caller retrying after
//!   40001. Under `READ COMMITTED` (`pg-read-committed`, the contrast) nothing fails: the later
//!   write overwrites the earlier one, a lost update.
//!
//! Every 40P01 or 40001 is counted ([`CallerStats::deadlock_retries`],
//! [`CallerStats::serialization_retries`]); a caller gives up after [`MAX_ATTEMPTS`] attempts
//! (each retry needs another transaction to have committed, so a run with N callers retries at
//! most N − 1 times per caller).

use crate::postgres::error::sqlstate;
use crate::postgres::{Isolation, PgError, QueryResult, RowLock, Statement};

use super::reading::Reading;
use super::step::{CallerStats, Input, Machine, Outcome, Point, SqlRequest, Step};
use super::store::unexpected;

/// How many times a transaction runs at most before the caller gives up.
pub const MAX_ATTEMPTS: u32 = 64;

/// What a caller does once its `ROLLBACK` is answered.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum AfterRollback {
    /// Runs the transaction again.
    Retry,
    /// Ends with this outcome.
    End(Outcome),
}

/// The SQLSTATE of an error the caller answers by retrying, if it is one.
fn retryable(error: &PgError) -> Option<&'static str> {
    [sqlstate::DEADLOCK_DETECTED, sqlstate::SERIALIZATION_FAILURE]
        .into_iter()
        .find(|code| *code == error.code)
}

fn sql(statement: Statement, params: Vec<i64>) -> Step {
    Step::Sql(SqlRequest { statement, params })
}

/// The one row of a `SELECT balance, fence`: `(balance, fence)`.
fn one_row(result: &QueryResult) -> Option<(i64, i64)> {
    match result.rows.as_slice() {
        [row] if row.len() == 2 => Some((row[0], row[1])),
        _ => None,
    }
}

/// The retry bookkeeping both machines share: attempts, counters, what follows a rollback.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Attempts {
    /// The attempt under way (1-based).
    attempt: u32,
    stats: CallerStats,
}

impl Attempts {
    fn new() -> Attempts {
        Attempts {
            attempt: 1,
            stats: CallerStats::default(),
        }
    }

    /// Counts an abort with `code`; what follows the rollback (a retry, or giving up).
    fn aborted(&mut self, code: &str) -> AfterRollback {
        if code == sqlstate::DEADLOCK_DETECTED {
            self.stats.deadlock_retries += 1;
        } else {
            self.stats.serialization_retries += 1;
        }
        if self.attempt >= MAX_ATTEMPTS {
            return AfterRollback::End(Outcome::Failed(format!(
                "gave up after {MAX_ATTEMPTS} attempts, the last aborted with {code}"
            )));
        }
        AfterRollback::Retry
    }

    fn reading(&self, error: &PgError) -> Option<Reading> {
        retryable(error).map(|code| Reading::MustRetry {
            sqlstate: code.to_string(),
            attempt: self.attempt,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Transfers.

/// Where a [`PgTransfer`] caller is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum TransferPhase {
    Start,
    Beginning,
    LockingFirst,
    FirstLocked,
    LockingSecond,
    AfterRead,
    Working,
    BeforeWrite,
    WritingFrom,
    WritingTo,
    Committing,
    RollingBack(AfterRollback),
    Finished,
}

/// A transfer between two wallets under `SELECT ... FOR UPDATE` on both rows.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PgTransfer {
    from: i64,
    to: i64,
    amount: i64,
    work_ms: u64,
    /// Lock the rows by id (else the source first).
    ordered: bool,
    phase: TransferPhase,
    /// The balances read, `(from, to)` (0 before).
    read: (i64, i64),
    attempts: Attempts,
}

impl PgTransfer {
    /// A caller that moves `amount` from wallet `from` to wallet `to`, working `work_ms`
    /// while it holds both row locks; `ordered`: lock the lower id first.
    pub fn new(from: i64, to: i64, amount: i64, work_ms: u64, ordered: bool) -> PgTransfer {
        assert!(amount > 0, "the amount must be positive");
        assert_ne!(from, to, "a transfer moves money between two wallets");
        PgTransfer {
            from,
            to,
            amount,
            work_ms,
            ordered,
            phase: TransferPhase::Start,
            read: (0, 0),
            attempts: Attempts::new(),
        }
    }

    /// The rows in the order the caller locks them.
    pub fn lock_order(&self) -> (i64, i64) {
        if self.ordered && self.to < self.from {
            (self.to, self.from)
        } else {
            (self.from, self.to)
        }
    }

    fn lock(id: i64) -> Step {
        sql(
            Statement::Select {
                id,
                lock: Some(RowLock::ForUpdate),
            },
            vec![],
        )
    }

    fn begin(&mut self) -> Step {
        self.phase = TransferPhase::Beginning;
        sql(Statement::Begin, vec![])
    }

    fn roll_back(&mut self, then: AfterRollback) -> Step {
        self.phase = TransferPhase::RollingBack(then);
        sql(Statement::Rollback, vec![])
    }

    fn finish(&mut self, outcome: Outcome) -> Step {
        self.phase = TransferPhase::Finished;
        Step::Done(outcome)
    }

    fn in_transaction(&self) -> bool {
        !matches!(
            self.phase,
            TransferPhase::Start
                | TransferPhase::Beginning
                | TransferPhase::RollingBack(_)
                | TransferPhase::Finished
        )
    }

    /// Stores the balance of row `id` as read.
    fn store_read(&mut self, id: i64, balance: i64) {
        if id == self.from {
            self.read.0 = balance;
        } else {
            self.read.1 = balance;
        }
    }
}

impl Machine for PgTransfer {
    fn next(&mut self, now_ms: u64, input: Input) -> Step {
        let (first, second) = self.lock_order();
        match (&self.phase, &input) {
            (TransferPhase::Start, Input::Start) => self.begin(),
            (TransferPhase::Beginning, Input::Sql(Ok(_))) => {
                self.phase = TransferPhase::LockingFirst;
                Self::lock(first)
            }
            (TransferPhase::LockingFirst, Input::Sql(Ok(result))) => match one_row(result) {
                Some((balance, _)) => {
                    self.store_read(first, balance);
                    self.phase = TransferPhase::FirstLocked;
                    Step::Reached(Point::AfterAcquire)
                }
                None => self.roll_back(AfterRollback::End(Outcome::Failed(format!(
                    "wallet {first}: unexpected SELECT result {:?}",
                    result.rows
                )))),
            },
            (TransferPhase::FirstLocked, Input::Resumed) => {
                self.phase = TransferPhase::LockingSecond;
                Self::lock(second)
            }
            (TransferPhase::LockingSecond, Input::Sql(Ok(result))) => match one_row(result) {
                Some((balance, _)) => {
                    self.store_read(second, balance);
                    self.phase = TransferPhase::AfterRead;
                    Step::Reached(Point::AfterRead)
                }
                None => self.roll_back(AfterRollback::End(Outcome::Failed(format!(
                    "wallet {second}: unexpected SELECT result {:?}",
                    result.rows
                )))),
            },
            (TransferPhase::AfterRead, Input::Resumed) => {
                if self.read.0 < self.amount {
                    let read_balance = Some(self.read.0);
                    return self.roll_back(AfterRollback::End(Outcome::InsufficientFunds {
                        read_balance,
                    }));
                }
                self.phase = TransferPhase::Working;
                Step::Sleep {
                    min_ms: self.work_ms,
                    max_ms: self.work_ms,
                    deadline_ms: None,
                }
            }
            (TransferPhase::Working, Input::Woke) => {
                self.phase = TransferPhase::BeforeWrite;
                Step::Reached(Point::BeforeWrite)
            }
            (TransferPhase::BeforeWrite, Input::Resumed) => {
                self.phase = TransferPhase::WritingFrom;
                sql(
                    Statement::WriteBalance { id: self.from },
                    vec![self.read.0 - self.amount],
                )
            }
            (TransferPhase::WritingFrom, Input::Sql(Ok(result))) if result.rows_affected == 1 => {
                let Some(credited) = self.read.1.checked_add(self.amount) else {
                    return self.roll_back(AfterRollback::End(Outcome::Failed(format!(
                        "wallet {}: {} + {} overflows",
                        self.to, self.read.1, self.amount
                    ))));
                };
                self.phase = TransferPhase::WritingTo;
                sql(Statement::WriteBalance { id: self.to }, vec![credited])
            }
            (TransferPhase::WritingTo, Input::Sql(Ok(result))) if result.rows_affected == 1 => {
                self.phase = TransferPhase::Committing;
                sql(Statement::Commit, vec![])
            }
            (TransferPhase::Committing, Input::Sql(Ok(result))) if result.tag == "COMMIT" => self
                .finish(Outcome::Accepted {
                    read_balance: Some(self.read.0),
                    fence: None,
                    write_acked_ms: now_ms,
                }),
            (TransferPhase::RollingBack(then), Input::Sql(_)) => match then.clone() {
                AfterRollback::Retry => {
                    self.attempts.attempt += 1;
                    self.begin()
                }
                AfterRollback::End(outcome) => self.finish(outcome),
            },
            (TransferPhase::Finished, _) => panic!("a finished caller was stepped again"),
            (_, Input::Sql(Err(error))) if self.in_transaction() && retryable(error).is_some() => {
                let code = retryable(error).expect("checked above");
                let then = self.attempts.aborted(code);
                self.roll_back(then)
            }
            (phase, input) => {
                let error = unexpected(&format!("transfer {phase:?}"), input);
                if self.in_transaction() {
                    self.roll_back(AfterRollback::End(Outcome::Failed(error)))
                } else {
                    self.finish(Outcome::Failed(error))
                }
            }
        }
    }

    fn stats(&self) -> CallerStats {
        self.attempts.stats
    }

    fn reading(&self, input: &Input) -> Option<Reading> {
        let (first, second) = self.lock_order();
        let Input::Sql(result) = input else {
            return None;
        };
        let failed = || Reading::Failed {
            error: unexpected(&format!("transfer {:?}", self.phase), input),
        };
        let reading = match (&self.phase, result) {
            (TransferPhase::RollingBack(_), _) => Reading::RolledBack,
            (_, Err(error)) if self.in_transaction() => {
                self.attempts.reading(error).unwrap_or_else(failed)
            }
            (TransferPhase::Beginning, Ok(_)) => Reading::Begun,
            (TransferPhase::LockingFirst | TransferPhase::LockingSecond, Ok(result)) => {
                match one_row(result) {
                    Some((balance, fence)) => Reading::BalanceRead {
                        balance,
                        fence: Some(fence),
                    },
                    None => {
                        let id = if self.phase == TransferPhase::LockingFirst {
                            first
                        } else {
                            second
                        };
                        Reading::Failed {
                            error: format!(
                                "wallet {id}: unexpected SELECT result {:?}",
                                result.rows
                            ),
                        }
                    }
                }
            }
            (TransferPhase::WritingFrom, Ok(result)) if result.rows_affected == 1 => {
                Reading::Wrote {
                    balance: self.read.0 - self.amount,
                    fence: None,
                    seen: None,
                }
            }
            (TransferPhase::WritingTo, Ok(result)) if result.rows_affected == 1 => Reading::Wrote {
                balance: self.read.1.saturating_add(self.amount),
                fence: None,
                seen: None,
            },
            (TransferPhase::Committing, Ok(result)) if result.tag == "COMMIT" => Reading::Committed,
            _ => failed(),
        };
        Some(reading)
    }
}

// ---------------------------------------------------------------------------------------------
// Read-modify-write at an isolation level.

/// Where a [`PgIsolated`] caller is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum IsolatedPhase {
    Start,
    Beginning,
    Selecting,
    AfterRead,
    Working,
    BeforeWrite,
    Writing,
    Committing,
    RollingBack(AfterRollback),
    Finished,
}

/// Read-modify-write of the balance in a transaction at an isolation level, retrying on 40001.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PgIsolated {
    id: i64,
    amount: i64,
    work_ms: u64,
    isolation: Isolation,
    phase: IsolatedPhase,
    /// The balance the SELECT read (0 before).
    read_balance: i64,
    attempts: Attempts,
}

impl PgIsolated {
    /// A caller that spends `amount` from wallet `id` in a transaction at `isolation`.
    pub fn new(id: i64, amount: i64, work_ms: u64, isolation: Isolation) -> PgIsolated {
        assert!(amount > 0, "the amount must be positive");
        PgIsolated {
            id,
            amount,
            work_ms,
            isolation,
            phase: IsolatedPhase::Start,
            read_balance: 0,
            attempts: Attempts::new(),
        }
    }

    fn begin(&mut self) -> Step {
        self.phase = IsolatedPhase::Beginning;
        let statement = match self.isolation {
            Isolation::ReadCommitted => Statement::Begin,
            isolation => Statement::BeginIsolated { isolation },
        };
        sql(statement, vec![])
    }

    fn roll_back(&mut self, then: AfterRollback) -> Step {
        self.phase = IsolatedPhase::RollingBack(then);
        sql(Statement::Rollback, vec![])
    }

    fn finish(&mut self, outcome: Outcome) -> Step {
        self.phase = IsolatedPhase::Finished;
        Step::Done(outcome)
    }

    fn in_transaction(&self) -> bool {
        !matches!(
            self.phase,
            IsolatedPhase::Start
                | IsolatedPhase::Beginning
                | IsolatedPhase::RollingBack(_)
                | IsolatedPhase::Finished
        )
    }
}

impl Machine for PgIsolated {
    fn next(&mut self, now_ms: u64, input: Input) -> Step {
        match (&self.phase, &input) {
            (IsolatedPhase::Start, Input::Start) => self.begin(),
            (IsolatedPhase::Beginning, Input::Sql(Ok(_))) => {
                self.phase = IsolatedPhase::Selecting;
                sql(
                    Statement::Select {
                        id: self.id,
                        lock: None,
                    },
                    vec![],
                )
            }
            (IsolatedPhase::Selecting, Input::Sql(Ok(result))) => match one_row(result) {
                Some((balance, _)) => {
                    self.read_balance = balance;
                    self.phase = IsolatedPhase::AfterRead;
                    Step::Reached(Point::AfterRead)
                }
                None => self.roll_back(AfterRollback::End(Outcome::Failed(format!(
                    "unexpected SELECT result: {:?}",
                    result.rows
                )))),
            },
            (IsolatedPhase::AfterRead, Input::Resumed) => {
                if self.read_balance < self.amount {
                    let read_balance = Some(self.read_balance);
                    return self.roll_back(AfterRollback::End(Outcome::InsufficientFunds {
                        read_balance,
                    }));
                }
                self.phase = IsolatedPhase::Working;
                Step::Sleep {
                    min_ms: self.work_ms,
                    max_ms: self.work_ms,
                    deadline_ms: None,
                }
            }
            (IsolatedPhase::Working, Input::Woke) => {
                self.phase = IsolatedPhase::BeforeWrite;
                Step::Reached(Point::BeforeWrite)
            }
            (IsolatedPhase::BeforeWrite, Input::Resumed) => {
                self.phase = IsolatedPhase::Writing;
                sql(
                    Statement::WriteBalance { id: self.id },
                    vec![self.read_balance - self.amount],
                )
            }
            (IsolatedPhase::Writing, Input::Sql(Ok(result))) if result.rows_affected == 1 => {
                self.phase = IsolatedPhase::Committing;
                sql(Statement::Commit, vec![])
            }
            (IsolatedPhase::Committing, Input::Sql(Ok(result))) if result.tag == "COMMIT" => self
                .finish(Outcome::Accepted {
                    read_balance: Some(self.read_balance),
                    fence: None,
                    write_acked_ms: now_ms,
                }),
            (IsolatedPhase::RollingBack(then), Input::Sql(_)) => match then.clone() {
                AfterRollback::Retry => {
                    self.attempts.attempt += 1;
                    self.begin()
                }
                AfterRollback::End(outcome) => self.finish(outcome),
            },
            (IsolatedPhase::Finished, _) => panic!("a finished caller was stepped again"),
            (_, Input::Sql(Err(error))) if self.in_transaction() && retryable(error).is_some() => {
                let code = retryable(error).expect("checked above");
                let then = self.attempts.aborted(code);
                self.roll_back(then)
            }
            (phase, input) => {
                let error = unexpected(&format!("transaction {phase:?}"), input);
                if self.in_transaction() {
                    self.roll_back(AfterRollback::End(Outcome::Failed(error)))
                } else {
                    self.finish(Outcome::Failed(error))
                }
            }
        }
    }

    fn stats(&self) -> CallerStats {
        self.attempts.stats
    }

    fn reading(&self, input: &Input) -> Option<Reading> {
        let Input::Sql(result) = input else {
            return None;
        };
        let failed = || Reading::Failed {
            error: unexpected(&format!("transaction {:?}", self.phase), input),
        };
        let reading = match (&self.phase, result) {
            (IsolatedPhase::RollingBack(_), _) => Reading::RolledBack,
            (_, Err(error)) if self.in_transaction() => {
                self.attempts.reading(error).unwrap_or_else(failed)
            }
            (IsolatedPhase::Beginning, Ok(_)) => Reading::Begun,
            (IsolatedPhase::Selecting, Ok(result)) => match one_row(result) {
                Some((balance, fence)) => Reading::BalanceRead {
                    balance,
                    fence: Some(fence),
                },
                None => Reading::Failed {
                    error: format!("unexpected SELECT result: {:?}", result.rows),
                },
            },
            (IsolatedPhase::Writing, Ok(result)) if result.rows_affected == 1 => Reading::Wrote {
                balance: self.read_balance - self.amount,
                fence: None,
                seen: None,
            },
            (IsolatedPhase::Committing, Ok(result)) if result.tag == "COMMIT" => Reading::Committed,
            _ => failed(),
        };
        Some(reading)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postgres::{Exec, Postgres, SessionId, Wallet};

    /// A caller on its own session, and the input its next step gets.
    struct Driven<M> {
        machine: M,
        session: SessionId,
        /// The answer to give next; none: a statement waits for a row lock.
        input: Option<Input>,
        /// The statement that waits, run again each turn.
        waiting: Option<SqlRequest>,
        outcome: Option<Outcome>,
    }

    /// Steps the callers round robin, one step each per turn, against one stand-in; a
    /// statement that waits is run again every turn until it gets its answer.
    fn run_round_robin<M: Machine>(db: &mut Postgres, callers: &mut [Driven<M>]) {
        for _turn in 0..1_000 {
            if callers.iter().all(|c| c.outcome.is_some()) {
                return;
            }
            for caller in callers.iter_mut().filter(|c| c.outcome.is_none()) {
                let request = match caller.waiting.take() {
                    Some(request) => request,
                    None => {
                        let input = caller.input.take().expect("an answer to give");
                        match caller.machine.next(0, input) {
                            Step::Sql(request) => request,
                            Step::Sleep { .. } => {
                                caller.input = Some(Input::Woke);
                                continue;
                            }
                            Step::Reached(_) => {
                                caller.input = Some(Input::Resumed);
                                continue;
                            }
                            Step::Done(outcome) => {
                                caller.outcome = Some(outcome);
                                continue;
                            }
                            other => panic!("unexpected step {other:?}"),
                        }
                    }
                };
                match db.execute(caller.session, &request.statement, &request.params) {
                    Exec::Done(result) => caller.input = Some(Input::Sql(result)),
                    Exec::Blocked { .. } => caller.waiting = Some(request),
                }
            }
        }
        panic!("the callers did not finish");
    }

    fn two_wallets() -> Postgres {
        let mut db = Postgres::new();
        for id in [42, 43] {
            db.seed_wallet(
                id,
                Wallet {
                    balance: 100,
                    fence: 0,
                },
            );
        }
        db
    }

    fn drive<M>(db: &mut Postgres, machine: M) -> Driven<M> {
        Driven {
            machine,
            session: db.connect(),
            input: Some(Input::Start),
            waiting: None,
            outcome: None,
        }
    }

    #[test]
    fn opposite_transfers_without_lock_order_deadlock_once_and_retry() {
        for (ordered, deadlocks) in [(false, 1), (true, 0)] {
            let mut db = two_wallets();
            let mut callers = [
                drive(&mut db, PgTransfer::new(42, 43, 10, 1, ordered)),
                drive(&mut db, PgTransfer::new(43, 42, 30, 1, ordered)),
            ];
            run_round_robin(&mut db, &mut callers);
            for caller in &callers {
                assert!(
                    matches!(caller.outcome, Some(Outcome::Accepted { .. })),
                    "{:?}",
                    caller.outcome
                );
            }
            let retries: u32 = callers
                .iter()
                .map(|c| c.machine.stats().deadlock_retries)
                .sum();
            assert_eq!(retries, deadlocks, "ordered: {ordered}");
            // Without order the second caller closes the cycle; it retries and goes second.
            assert_eq!(callers[1].machine.stats().deadlock_retries, deadlocks);
            assert_eq!(db.wallet(42).map(|w| w.balance), Some(120));
            assert_eq!(db.wallet(43).map(|w| w.balance), Some(80));
        }
    }

    #[test]
    fn a_transfer_refuses_to_overdraw_its_source() {
        let mut db = two_wallets();
        let mut callers = [drive(&mut db, PgTransfer::new(42, 43, 101, 0, true))];
        run_round_robin(&mut db, &mut callers);
        assert_eq!(
            callers[0].outcome,
            Some(Outcome::InsufficientFunds {
                read_balance: Some(100)
            })
        );
        assert!(!db.in_transaction(callers[0].session));
    }

    #[test]
    fn read_modify_write_loses_an_update_only_under_read_committed() {
        for (isolation, final_balance, retries) in [
            (Isolation::ReadCommitted, 90, 0),
            (Isolation::RepeatableRead, 80, 1),
            (Isolation::Serializable, 80, 1),
        ] {
            let mut db = two_wallets();
            let mut callers = [
                drive(&mut db, PgIsolated::new(42, 10, 1, isolation)),
                drive(&mut db, PgIsolated::new(42, 10, 1, isolation)),
            ];
            run_round_robin(&mut db, &mut callers);
            assert_eq!(
                db.wallet(42).map(|w| w.balance),
                Some(final_balance),
                "{isolation:?}"
            );
            let stats: Vec<CallerStats> = callers.iter().map(|c| c.machine.stats()).collect();
            assert_eq!(
                stats.iter().map(|s| s.serialization_retries).sum::<u32>(),
                retries,
                "{isolation:?}"
            );
            assert!(callers
                .iter()
                .all(|c| matches!(c.outcome, Some(Outcome::Accepted { .. }))));
        }
    }

    #[test]
    fn a_retry_after_40001_reads_the_new_balance() {
        let mut db = two_wallets();
        let mut callers = [
            drive(
                &mut db,
                PgIsolated::new(42, 60, 1, Isolation::RepeatableRead),
            ),
            drive(
                &mut db,
                PgIsolated::new(42, 60, 1, Isolation::RepeatableRead),
            ),
        ];
        run_round_robin(&mut db, &mut callers);
        // One spends 60; the other's write fails with 40001, and its retry reads 40.
        assert_eq!(db.wallet(42).map(|w| w.balance), Some(40));
        let outcomes: Vec<&Option<Outcome>> = callers.iter().map(|c| &c.outcome).collect();
        assert!(outcomes.contains(&&Some(Outcome::InsufficientFunds {
            read_balance: Some(40)
        })));
    }
}
