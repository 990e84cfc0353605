//! PostgreSQL alone, no Redis lock (the tutorial's safety section).
//!
//! - [`PgDebit`]: `UPDATE wallets SET balance = balance - $1 WHERE id = 42 AND balance >= $1`.
//!   One statement reads and writes; under READ COMMITTED a concurrent UPDATE waits for the
//!   row lock and re-checks its WHERE against the new row. **Guards against:** lost updates
//!   and overdrafts. **Relies on:** nothing outside PostgreSQL.
//! - [`PgForUpdate`]: `BEGIN; SELECT balance, fence ... FOR UPDATE; (work); UPDATE ... SET
//!   balance = $1; COMMIT`. The row lock serialises the whole read-modify-write. **Guards
//!   against:** lost updates. **Relies on:** the transaction holding its row lock until
//!   COMMIT (a caller that locks several rows must lock them in one order to avoid deadlocks).

use crate::postgres::{RowLock, Statement};

use super::reading::Reading;
use super::step::{CallerStats, Input, Machine, Outcome, Point, SqlRequest, Step};
use super::store::unexpected;

/// Where a [`PgDebit`] caller is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum DebitPhase {
    Start,
    Working,
    BeforeWrite,
    Debiting,
    Finished,
}

/// The single-statement conditional debit.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PgDebit {
    id: i64,
    amount: i64,
    work_ms: u64,
    phase: DebitPhase,
}

impl PgDebit {
    /// A caller that will debit `amount` from wallet `id` after `work_ms` of work.
    pub fn new(id: i64, amount: i64, work_ms: u64) -> PgDebit {
        assert!(amount > 0, "the amount must be positive");
        PgDebit {
            id,
            amount,
            work_ms,
            phase: DebitPhase::Start,
        }
    }

    fn finish(&mut self, outcome: Outcome) -> Step {
        self.phase = DebitPhase::Finished;
        Step::Done(outcome)
    }
}

impl Machine for PgDebit {
    fn next(&mut self, now_ms: u64, input: Input) -> Step {
        match (self.phase, &input) {
            (DebitPhase::Start, Input::Start) => {
                self.phase = DebitPhase::Working;
                Step::Sleep {
                    min_ms: self.work_ms,
                    max_ms: self.work_ms,
                    deadline_ms: None,
                }
            }
            (DebitPhase::Working, Input::Woke) => {
                self.phase = DebitPhase::BeforeWrite;
                Step::Reached(Point::BeforeWrite)
            }
            (DebitPhase::BeforeWrite, Input::Resumed) => {
                self.phase = DebitPhase::Debiting;
                Step::Sql(SqlRequest {
                    statement: Statement::Debit { id: self.id },
                    params: vec![self.amount],
                })
            }
            (DebitPhase::Debiting, Input::Sql(Ok(result))) if result.rows_affected == 1 => self
                .finish(Outcome::Accepted {
                    read_balance: None,
                    fence: None,
                    write_acked_ms: now_ms,
                }),
            (DebitPhase::Debiting, Input::Sql(Ok(result))) if result.rows_affected == 0 => {
                self.finish(Outcome::InsufficientFunds { read_balance: None })
            }
            (DebitPhase::Finished, _) => panic!("a finished caller was stepped again"),
            (phase, input) => {
                let error = unexpected(&format!("debit {phase:?}"), input);
                self.finish(Outcome::Failed(error))
            }
        }
    }

    fn stats(&self) -> CallerStats {
        CallerStats::default()
    }

    fn reading(&self, input: &Input) -> Option<Reading> {
        if self.phase != DebitPhase::Debiting {
            return None;
        }
        let amount = self.amount;
        Some(match input {
            Input::Sql(Ok(result)) if result.rows_affected == 1 => Reading::Debited { amount },
            Input::Sql(Ok(result)) if result.rows_affected == 0 => Reading::DebitRefused { amount },
            _ => Reading::Failed {
                error: unexpected(&format!("debit {:?}", self.phase), input),
            },
        })
    }
}

/// Where a [`PgForUpdate`] caller is. Rolling back carries the outcome it ends with; a
/// finished caller keeps the outcome it rolled back with (the model checker's states are
/// these values, and the pinned state counts count it so).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum TxPhase {
    Start,
    Beginning,
    Selecting,
    AfterRead,
    Working,
    BeforeWrite,
    Writing,
    Committing,
    RollingBack { outcome: Outcome },
    Finished { rolled_back: Option<Outcome> },
}

impl TxPhase {
    /// The phase's name, for messages about unexpected answers.
    fn name(&self) -> &'static str {
        match self {
            TxPhase::Start => "Start",
            TxPhase::Beginning => "Beginning",
            TxPhase::Selecting => "Selecting",
            TxPhase::AfterRead => "AfterRead",
            TxPhase::Working => "Working",
            TxPhase::BeforeWrite => "BeforeWrite",
            TxPhase::Writing => "Writing",
            TxPhase::Committing => "Committing",
            TxPhase::RollingBack { .. } => "RollingBack",
            TxPhase::Finished { .. } => "Finished",
        }
    }
}

/// The `SELECT ... FOR UPDATE` transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PgForUpdate {
    id: i64,
    amount: i64,
    work_ms: u64,
    phase: TxPhase,
    /// The balance the SELECT read (0 before).
    read_balance: i64,
}

impl PgForUpdate {
    /// A caller that will spend `amount` from wallet `id` inside a transaction.
    pub fn new(id: i64, amount: i64, work_ms: u64) -> PgForUpdate {
        assert!(amount > 0, "the amount must be positive");
        PgForUpdate {
            id,
            amount,
            work_ms,
            phase: TxPhase::Start,
            read_balance: 0,
        }
    }

    /// True while the transaction holds (or may hold) the row lock.
    pub fn in_transaction(&self) -> bool {
        !matches!(
            self.phase,
            TxPhase::Start | TxPhase::Beginning | TxPhase::Finished { .. }
        )
    }

    fn sql(statement: Statement, params: Vec<i64>) -> Step {
        Step::Sql(SqlRequest { statement, params })
    }

    fn roll_back(&mut self, outcome: Outcome) -> Step {
        self.phase = TxPhase::RollingBack { outcome };
        Self::sql(Statement::Rollback, vec![])
    }

    /// Ends with `outcome`, keeping the outcome of a roll-back under way.
    fn finish(&mut self, outcome: Outcome) -> Step {
        let rolled_back = match &self.phase {
            TxPhase::RollingBack { outcome } => Some(outcome.clone()),
            _ => None,
        };
        self.phase = TxPhase::Finished { rolled_back };
        Step::Done(outcome)
    }
}

impl Machine for PgForUpdate {
    fn next(&mut self, now_ms: u64, input: Input) -> Step {
        match (&self.phase, &input) {
            (TxPhase::Start, Input::Start) => {
                self.phase = TxPhase::Beginning;
                Self::sql(Statement::Begin, vec![])
            }
            (TxPhase::Beginning, Input::Sql(Ok(_))) => {
                self.phase = TxPhase::Selecting;
                Self::sql(
                    Statement::Select {
                        id: self.id,
                        lock: Some(RowLock::ForUpdate),
                    },
                    vec![],
                )
            }
            (TxPhase::Selecting, Input::Sql(Ok(result))) => match result.rows.as_slice() {
                [row] if row.len() == 2 => {
                    self.read_balance = row[0];
                    self.phase = TxPhase::AfterRead;
                    Step::Reached(Point::AfterRead)
                }
                _ => self.roll_back(Outcome::Failed(format!(
                    "unexpected SELECT result: {:?}",
                    result.rows
                ))),
            },
            (TxPhase::AfterRead, Input::Resumed) => {
                if self.read_balance < self.amount {
                    return self.roll_back(Outcome::InsufficientFunds {
                        read_balance: Some(self.read_balance),
                    });
                }
                self.phase = TxPhase::Working;
                Step::Sleep {
                    min_ms: self.work_ms,
                    max_ms: self.work_ms,
                    deadline_ms: None,
                }
            }
            (TxPhase::Working, Input::Woke) => {
                self.phase = TxPhase::BeforeWrite;
                Step::Reached(Point::BeforeWrite)
            }
            (TxPhase::BeforeWrite, Input::Resumed) => {
                self.phase = TxPhase::Writing;
                Self::sql(
                    Statement::WriteBalance { id: self.id },
                    vec![self.read_balance - self.amount],
                )
            }
            (TxPhase::Writing, Input::Sql(Ok(result))) if result.rows_affected == 1 => {
                self.phase = TxPhase::Committing;
                Self::sql(Statement::Commit, vec![])
            }
            (TxPhase::Committing, Input::Sql(Ok(result))) if result.tag == "COMMIT" => {
                self.finish(Outcome::Accepted {
                    read_balance: Some(self.read_balance),
                    fence: None,
                    write_acked_ms: now_ms,
                })
            }
            (TxPhase::RollingBack { outcome }, Input::Sql(_)) => {
                let outcome = outcome.clone();
                self.finish(outcome)
            }
            (TxPhase::Finished { .. }, _) => panic!("a finished caller was stepped again"),
            (phase, input) => {
                let rolling_back = matches!(phase, TxPhase::RollingBack { .. });
                let error = unexpected(&format!("transaction {}", phase.name()), input);
                if self.in_transaction() && !rolling_back {
                    self.roll_back(Outcome::Failed(error))
                } else {
                    self.finish(Outcome::Failed(error))
                }
            }
        }
    }

    fn stats(&self) -> CallerStats {
        CallerStats::default()
    }

    fn reading(&self, input: &Input) -> Option<Reading> {
        let failed = || Reading::Failed {
            error: unexpected(&format!("transaction {}", self.phase.name()), input),
        };
        let Input::Sql(result) = input else {
            return matches!(
                self.phase,
                TxPhase::Beginning
                    | TxPhase::Selecting
                    | TxPhase::Writing
                    | TxPhase::Committing
                    | TxPhase::RollingBack { .. }
            )
            .then(failed);
        };
        let reading = match (&self.phase, result) {
            (TxPhase::Beginning, Ok(_)) => Reading::Begun,
            (TxPhase::Selecting, Ok(result)) => match result.rows.as_slice() {
                [row] if row.len() == 2 => Reading::BalanceRead {
                    balance: row[0],
                    fence: Some(row[1]),
                },
                _ => Reading::Failed {
                    error: format!("unexpected SELECT result: {:?}", result.rows),
                },
            },
            (TxPhase::Writing, Ok(result)) if result.rows_affected == 1 => Reading::Wrote {
                balance: self.read_balance - self.amount,
                fence: None,
                seen: None,
            },
            (TxPhase::Committing, Ok(result)) if result.tag == "COMMIT" => Reading::Committed,
            (TxPhase::RollingBack { .. }, _) => Reading::RolledBack,
            (
                TxPhase::Beginning | TxPhase::Selecting | TxPhase::Writing | TxPhase::Committing,
                _,
            ) => failed(),
            _ => return None,
        };
        Some(reading)
    }
}
