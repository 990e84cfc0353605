//! The statements the safeguards send, as typed values and as SQL text.
//!
//! [`Statement::sql`] renders the canonical text (with `$n` placeholders) that clients send;
//! [`Statement::parse`] maps SQL text received over the wire back onto a statement, tolerant
//! of case and white space, and answers anything else with SQLSTATE 0A000 naming what is
//! unsupported.

use super::error::PgError;

/// The row lock of a `SELECT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowLock {
    /// `FOR UPDATE`: wait for the row lock.
    ForUpdate,
    /// `FOR UPDATE NOWAIT`: fail with 55P03 if the row is locked.
    ForUpdateNowait,
    /// `FOR UPDATE SKIP LOCKED`: leave a locked row out.
    ForUpdateSkipLocked,
}

/// The extra conditions of the fenced write `UPDATE wallets SET balance = $1, fence = $2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteGuard {
    /// No condition: the write always lands (tutorial step 5 without fencing).
    Unfenced,
    /// `AND fence < $2`: refuse a token at or below the stored fence (step 5).
    FenceBelow,
    /// `AND fence < $2 AND fence = $3`: also require the version read (step 6 check-and-set).
    FenceBelowAndEqual,
}

/// A statement the stand-in executes. Parameters are `bigint`s, passed separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Statement {
    /// `BEGIN`.
    Begin,
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
    /// `SELECT balance, fence FROM wallets WHERE id = <id> [FOR UPDATE [NOWAIT|SKIP LOCKED]]`.
    Select {
        /// The wallet id (a literal in the text).
        id: i64,
        /// The row lock, if any.
        lock: Option<RowLock>,
    },
    /// `UPDATE wallets SET balance = $1, fence = $2 WHERE id = <id> [guard]`.
    WriteFenced {
        /// The wallet id.
        id: i64,
        /// The fencing conditions.
        guard: WriteGuard,
    },
    /// `UPDATE wallets SET balance = $1 WHERE id = <id>` (inside a `FOR UPDATE` transaction).
    WriteBalance {
        /// The wallet id.
        id: i64,
    },
    /// `UPDATE wallets SET balance = balance - $1 WHERE id = <id> AND balance >= $1`:
    /// the single-statement conditional debit.
    Debit {
        /// The wallet id.
        id: i64,
    },
}

impl Statement {
    /// The canonical SQL text, with `$1`, `$2`, ... placeholders.
    pub fn sql(&self) -> String {
        todo!("postgres stand-in: Statement::sql")
    }

    /// How many `$n` parameters the statement takes.
    pub fn param_count(&self) -> usize {
        todo!()
    }

    /// Maps SQL text onto a statement (case- and white-space-insensitive; an optional
    /// trailing `;`). Anything else: SQLSTATE 0A000 (`feature_not_supported`) naming it,
    /// or 42601 for text that is not SQL at all.
    pub fn parse(sql: &str) -> Result<Statement, PgError> {
        let _ = sql;
        todo!("postgres stand-in: Statement::parse")
    }
}
