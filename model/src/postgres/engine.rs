//! Sessions, transactions and READ COMMITTED row locking.

use super::error::PgError;
use super::statement::Statement;

/// A connection's session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u32);

/// A committed row of `wallets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wallet {
    /// `balance`.
    pub balance: i64,
    /// `fence`.
    pub fence: i64,
}

/// A successful statement's result.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueryResult {
    /// Column names (empty for statements that return no rows).
    pub columns: Vec<&'static str>,
    /// Rows of `bigint` values.
    pub rows: Vec<Vec<i64>>,
    /// The command tag, e.g. `UPDATE 1`, `SELECT 1`, `BEGIN`.
    pub tag: String,
    /// Rows affected (UPDATE) or returned (SELECT).
    pub rows_affected: u64,
}

/// What executing a statement did.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Exec {
    /// It finished, with a result or an error.
    Done(Result<QueryResult, PgError>),
    /// It waits for a row lock held by another session's transaction. The statement had no
    /// effect; execute it again after that session commits or rolls back (READ COMMITTED then
    /// re-evaluates the WHERE clause against the newest committed row).
    Blocked {
        /// The session whose transaction holds the lock.
        by: SessionId,
    },
}

/// An in-memory PostgreSQL holding the `wallets` table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Postgres {
    _todo: (),
}

impl Default for Postgres {
    fn default() -> Self {
        Postgres::new()
    }
}

impl Postgres {
    /// An empty `wallets` table, no sessions.
    pub fn new() -> Postgres {
        todo!("postgres stand-in: Postgres::new")
    }

    /// Inserts or overwrites a committed row directly (scenario set-up).
    pub fn seed_wallet(&mut self, id: i64, wallet: Wallet) {
        let _ = (id, wallet);
        todo!()
    }

    /// The committed row, if any.
    pub fn wallet(&self, id: i64) -> Option<Wallet> {
        let _ = id;
        todo!()
    }

    /// Opens a session (a connection).
    pub fn connect(&mut self) -> SessionId {
        todo!()
    }

    /// Closes a session; an open transaction is rolled back and its locks released.
    pub fn disconnect(&mut self, session: SessionId) {
        let _ = session;
        todo!()
    }

    /// Executes one statement in `session` with `bigint` parameters.
    ///
    /// Outside `BEGIN` a statement is its own transaction. A wrong parameter count is an
    /// error (08P01, as the server reports a Bind with the wrong number of parameters).
    pub fn execute(&mut self, session: SessionId, statement: &Statement, params: &[i64]) -> Exec {
        let _ = (session, statement, params);
        todo!("postgres stand-in: Postgres::execute")
    }

    /// True when `session` is inside a transaction block.
    pub fn in_transaction(&self, session: SessionId) -> bool {
        let _ = session;
        todo!()
    }
}
