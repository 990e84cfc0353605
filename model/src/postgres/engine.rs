//! Sessions, transactions and READ COMMITTED row locking.
//!
//! # The model
//!
//! Each row keeps its committed version and, while a transaction block holds its row lock,
//! that transaction's uncommitted version (if it updated the row). A statement outside `BEGIN`
//! is its own transaction: it takes and releases the lock within the call.
//!
//! An `UPDATE` runs as PostgreSQL 15 runs it under READ COMMITTED:
//!
//! 1. it reads the version its snapshot sees (its own uncommitted version, else the committed
//!    one) and evaluates the `WHERE` clause on it; a row that does not match is skipped
//!    without waiting for anyone;
//! 2. it computes the new row (`bigint out of range`) and checks `balance >= 0` (23514);
//! 3. only then does it need the row lock: if another transaction holds it, the statement
//!    returns [`Exec::Blocked`] with no effect. Re-executed after that transaction ends, it
//!    sees the newest committed row, which is exactly what PostgreSQL's re-check
//!    (EvalPlanQual) sees: the new row after a commit, the original row after a rollback.
//!    PostgreSQL locks that newest version *before* re-checking, so inside a transaction
//!    block the resumed statement keeps the row lock even when the re-check fails and it
//!    updates nothing (the next statement executed after [`Exec::Blocked`] is taken as the
//!    blocked one resumed).
//!
//! `SELECT ... FOR UPDATE` waits (or fails with `NOWAIT`, or skips the row with
//! `SKIP LOCKED`) whenever another transaction holds the lock. A plain `SELECT` never waits.
//!
//! An error inside a transaction block aborts it at once: its changes are discarded and its
//! locks released (sessions waiting on it may go on), and every statement but `COMMIT` or
//! `ROLLBACK` gets 25P02 until the block ends.
//!
//! # Deliberate differences from a real server
//!
//! - Deadlocks are found as [`DeadlockCheck`] says. `OnTimeout` is PostgreSQL's way: a
//!   session looks for a cycle through itself once per wait, when its driver says its
//!   `deadlock_timeout` has passed ([`Postgres::check_deadlock`]), and fails with 40P01 if it
//!   finds one; so the victim is the first waiter whose timer fires after the cycle closed
//!   (the session that started waiting first, when the cycle closed within its timeout).
//!   `AtOnce` (the model checker's, and the default) is the limit of a very short timeout:
//!   the statement that would close a cycle fails at once. Either way exactly one transaction
//!   of the cycle fails and the others go on.
//! - The deadlock DETAIL has PostgreSQL's wording, but its numbers are the stand-in's:
//!   process ids are [`SessionId::pid`], and the transaction a session holds is shown as
//!   `1000 + <session number>`. The HINT is PostgreSQL's; there is no CONTEXT line (PostgreSQL
//!   names the tuple it was locking).
//! - Waiters for a row lock queue as on PostgreSQL's tuple lock (`Row::waiters`): when the
//!   holder ends, the first waiter takes the row next and the later ones wait behind it. A
//!   session that never waited for the row may still take it before that first waiter runs
//!   again (PostgreSQL's waiter needs to wake up first); the DETAIL of a deadlock through a
//!   queue names the waiter ahead, where PostgreSQL's detector would also see the tuple lock.
//! - A session executing a statement while it is recorded as blocked gives up its wait (the
//!   wait is not a separate cancellable request).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::advisory::{AdvisoryKey, AdvisoryLocks, AdvisoryMode, Released};
use super::catalog::{ClockReading, TableDef};
use super::datetime;
use super::ddl::CatalogUndo;
use super::error::{PgError, PgNotice};
use super::exec::{SqlExec, SqlResult};
use super::random::{self, Prng};
use super::sequence::Sequence;
use super::statement::{RowLock, Statement, WriteGuard};
use super::table_lock::{TableHolds, TableLockMode};
use super::value::Value;

/// Process ids reported for sessions start here.
const PID_BASE: i32 = 10_000;
/// Transaction numbers shown in a deadlock DETAIL start here.
const XID_BASE: u64 = 1_000;

/// A connection's session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u32);

impl SessionId {
    /// The backend process id the stand-in reports for this session (`10000 + n`), as a
    /// wire server would send it in `BackendKeyData`; deadlock DETAIL lines use it.
    pub fn pid(self) -> i32 {
        let n = i32::try_from(self.0).unwrap_or(i32::MAX);
        PID_BASE.saturating_add(n)
    }

    /// The number shown for this session's transaction in a deadlock DETAIL.
    fn shown_xid(self) -> u64 {
        XID_BASE + u64::from(self.0)
    }
}

/// A committed row of `wallets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wallet {
    /// `balance`.
    pub balance: i64,
    /// `fence`.
    pub fence: i64,
}

/// A successful typed statement's result.
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

/// What executing a statement did, with the warning PostgreSQL sends alongside, if any
/// (`BEGIN` inside a transaction block, `COMMIT`/`ROLLBACK` outside one).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Executed {
    /// The result.
    pub exec: Exec,
    /// A `WARNING` sent before the command tag.
    pub notice: Option<PgNotice>,
}

impl Executed {
    /// A finished statement with no warning.
    pub(super) fn done(result: Result<QueryResult, PgError>) -> Executed {
        Executed {
            exec: Exec::Done(result),
            notice: None,
        }
    }

    /// A finished statement with a warning.
    pub(super) fn done_with_notice(result: QueryResult, notice: PgNotice) -> Executed {
        Executed {
            exec: Exec::Done(Ok(result)),
            notice: Some(notice),
        }
    }
}

/// Where a session stands with respect to transaction blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxStatus {
    /// Outside a transaction block: each statement commits on its own.
    Idle,
    /// Inside `BEGIN ... COMMIT`.
    InBlock,
    /// Inside a transaction block that failed: only `COMMIT`/`ROLLBACK` are accepted.
    Failed,
}

impl TxStatus {
    /// The status byte of PostgreSQL's `ReadyForQuery` message: `I`, `T` or `E`.
    pub fn ready_for_query_byte(self) -> u8 {
        match self {
            TxStatus::Idle => b'I',
            TxStatus::InBlock => b'T',
            TxStatus::Failed => b'E',
        }
    }
}

/// A row: its committed version (None while its insert is uncommitted) and its locks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Row {
    pub(super) committed: Option<Tuple>,
    pub(super) lock: Option<RowLockHeld>,
    /// Sessions holding a `FOR SHARE` or `FOR KEY SHARE` lock (sorted, no duplicates).
    pub(super) shared: Vec<SessionId>,
    /// Those of `shared` whose lock is only `FOR KEY SHARE`, which a `FOR NO KEY UPDATE`
    /// lock (and an `UPDATE` that changes no key) does not wait for (sorted).
    pub(super) key_only: Vec<SessionId>,
    /// Sessions whose statement waits for this row's lock, in the order they began waiting:
    /// PostgreSQL's queue on the tuple lock. When the lock is let go, the first of them takes
    /// it next; the others wait behind it. A session that has never waited for the row is not
    /// held back by the queue (it may take a free row before the first waiter runs again, as
    /// it may in PostgreSQL between a commit and that waiter waking up).
    pub(super) waiters: Vec<SessionId>,
}

/// A row's values, in column order.
pub(super) type Tuple = Vec<Value>;

/// What a transaction wrote to a row it holds locked.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Written {
    /// A new version.
    Row(Tuple),
    /// The row is deleted.
    Deleted,
}

/// A row lock held by a transaction block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RowLockHeld {
    pub(super) holder: SessionId,
    /// The holder's uncommitted version, if it wrote the row.
    pub(super) uncommitted: Option<Written>,
    /// The lock is `FOR NO KEY UPDATE`'s (taken also by an `UPDATE` that changes no key), not
    /// `FOR UPDATE`'s: a `FOR KEY SHARE` lock may stand beside it.
    pub(super) no_key: bool,
}

/// A table: its definition and rows by primary key (or by insertion number without one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Table {
    pub(super) def: Arc<TableDef>,
    pub(super) rows: BTreeMap<Value, Row>,
    /// The next insertion number of a table without a primary key.
    pub(super) next_seq: i64,
    /// The last value each `serial` or identity column's sequence gave, by column (none
    /// before the first). Not transactional, as in PostgreSQL.
    pub(super) sequences: BTreeMap<usize, i64>,
    /// The definition is the tutorial's `wallets` (computed once: the typed statements' fast
    /// path and the state hash ask on every call).
    pub(super) canonical: bool,
}

impl Row {
    /// The version `session` sees outside snapshots: its own write, else the committed row.
    pub(super) fn visible_tuple(&self, session: SessionId) -> Option<&Tuple> {
        match &self.lock {
            Some(RowLockHeld {
                holder,
                uncommitted: Some(written),
                ..
            }) if *holder == session => match written {
                Written::Row(tuple) => Some(tuple),
                Written::Deleted => None,
            },
            _ => self.committed.as_ref(),
        }
    }

    /// The version `session`'s snapshot sees.
    fn visible_to(&self, session: SessionId) -> Wallet {
        self.visible_tuple(session)
            .map(wallet_of)
            .unwrap_or(Wallet {
                balance: 0,
                fence: 0,
            })
    }

    /// Whom `session` waits for to lock this row: the first waiter of the queue when `session`
    /// is behind it, or when `session` has not waited yet and the row is held (the first waiter
    /// holds PostgreSQL's tuple lock); else the session holding the exclusive lock, or else a
    /// `FOR SHARE` lock. None when `session` may lock it now.
    pub(super) fn locked_by_other(&self, session: SessionId) -> Option<SessionId> {
        self.queued_ahead_of(session)
            .or_else(|| self.exclusively_locked_by_other(session))
            .or_else(|| self.shared.iter().copied().find(|&s| s != session))
    }

    /// [`Row::locked_by_other`] for a `FOR NO KEY UPDATE` lock, which a `FOR KEY SHARE` lock
    /// does not hold back.
    pub(super) fn locked_by_other_no_key(&self, session: SessionId) -> Option<SessionId> {
        self.queued_ahead_of(session)
            .or_else(|| self.exclusively_locked_by_other(session))
            .or_else(|| {
                self.shared
                    .iter()
                    .copied()
                    .find(|&s| s != session && !self.key_only.contains(&s))
            })
    }

    /// [`Row::locked_by_other`] for a `FOR KEY SHARE` lock, which only a `FOR UPDATE` lock
    /// (and the queue in front of it) holds back.
    pub(super) fn key_locked_by_other(&self, session: SessionId) -> Option<SessionId> {
        if self.lock.as_ref().is_some_and(|lock| lock.no_key) {
            return None;
        }
        self.exclusively_locked_by_other(session)
    }

    /// Gives `session` a `FOR SHARE` (`key_only`: `FOR KEY SHARE`) lock, unless it holds one
    /// at least as strong.
    pub(super) fn share_with(&mut self, session: SessionId, key_only: bool) {
        if self.lock.as_ref().is_some_and(|l| l.holder == session) {
            return;
        }
        if self.shared.contains(&session) {
            if !key_only {
                self.key_only.retain(|&s| s != session);
            }
            return;
        }
        self.shared.push(session);
        self.shared.sort();
        if key_only {
            self.key_only.push(session);
            self.key_only.sort();
        }
    }

    /// Hashes what only the weaker locks set (nothing when no lock is weaker, so a state of
    /// `FOR UPDATE` and `FOR SHARE` locks hashes as it did before they existed).
    fn hash_lock_strengths<H: Hasher>(&self, state: &mut H) {
        if self.lock.as_ref().is_some_and(|lock| lock.no_key) {
            state.write_u8(1);
        }
        if !self.key_only.is_empty() {
            self.key_only.hash(state);
        }
    }

    /// Lets go of `session`'s `FOR SHARE` or `FOR KEY SHARE` lock.
    pub(super) fn unshare(&mut self, session: SessionId) {
        self.shared.retain(|&s| s != session);
        self.key_only.retain(|&s| s != session);
    }

    /// [`Row::locked_by_other`] for a `FOR SHARE` lock, which only the exclusive lock (and
    /// the queue in front of it) holds back.
    pub(super) fn exclusively_locked_by_other(&self, session: SessionId) -> Option<SessionId> {
        let holder = self
            .lock
            .as_ref()
            .map(|lock| lock.holder)
            .filter(|&holder| holder != session)?;
        let first_waiter = self.waiters.first().copied().filter(|&w| w != session);
        Some(first_waiter.unwrap_or(holder))
    }

    /// The first waiter of this row's queue when `session` waits behind it (none when
    /// `session` is first, or has not waited for this row).
    pub(super) fn queued_ahead_of(&self, session: SessionId) -> Option<SessionId> {
        match self.waiters.iter().position(|&w| w == session) {
            Some(0) | None => None,
            Some(_) => Some(self.waiters[0]),
        }
    }
}

/// A `wallets` tuple `(id, balance, fence)` as a [`Wallet`].
fn wallet_of(tuple: &Tuple) -> Wallet {
    let int = |at: usize| match tuple.get(at) {
        Some(Value::Int(v)) => *v,
        _ => 0,
    };
    Wallet {
        balance: int(1),
        fence: int(2),
    }
}

/// The isolation level of a transaction block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Isolation {
    /// `READ COMMITTED` (the default).
    #[default]
    ReadCommitted,
    /// `REPEATABLE READ`.
    RepeatableRead,
    /// `SERIALIZABLE` (run as `REPEATABLE READ`; see the module documentation).
    Serializable,
}

impl Isolation {
    /// The level as SQL spells it: `READ COMMITTED`, `REPEATABLE READ`, `SERIALIZABLE`.
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }
}

/// The committed rows of every table, as a repeatable-read transaction sees them.
pub(super) type Snapshot = BTreeMap<String, BTreeMap<Value, Tuple>>;

/// A savepoint: the session's row locks and writes when it was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Savepoint {
    pub(super) name: String,
    pub(super) locks: BTreeMap<(String, Value), Option<Written>>,
    pub(super) shared: Vec<(String, Value)>,
    /// How many entries the session's DDL undo log had (`ddl.rs`).
    pub(super) catalog_undo_len: usize,
    /// The session's settings (`SET`, `SET LOCAL`), which `ROLLBACK TO` gives back.
    pub(super) settings: Box<SessionSettings>,
}

/// A connected session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Session {
    pub(super) status: TxStatus,
    /// The session whose transaction this one's last statement is blocked on.
    pub(super) waiting_on: Option<SessionId>,
    /// The session's last statement was blocked: the next one it executes resumes it.
    pub(super) resuming: bool,
    /// The row a general statement waited for: `(table, key)`.
    pub(super) waited_row: Option<(String, Value)>,
    /// The advisory lock a statement waits for (`advisory.rs`).
    pub(super) waited_advisory: Option<(AdvisoryKey, AdvisoryMode)>,
    /// The table lock a statement waits for (`table_lock.rs`).
    pub(super) waited_table: Option<(Arc<str>, TableLockMode)>,
    /// The table locks its transaction holds (`table_lock.rs`).
    pub(super) table_locks: TableHolds,
    /// Its transaction's number, once `txid_current()` gave it one (`random.rs`).
    pub(super) txid: Option<i64>,
    /// The isolation level of the open block.
    pub(super) isolation: Isolation,
    /// The snapshot of a `REPEATABLE READ`/`SERIALIZABLE` block, taken at its first query.
    pub(super) snapshot: Option<Arc<Snapshot>>,
    /// Savepoints of the open block, innermost last.
    pub(super) savepoints: Vec<Savepoint>,
    /// Its settings (`SET`), which a rolled-back block gives back.
    pub(super) settings: SessionSettings,
    /// The settings as they were when the open block first changed them.
    pub(super) settings_at_block_start: Option<Box<SessionSettings>>,
    /// The open block has run a query (`SET TRANSACTION ISOLATION LEVEL` is refused after).
    pub(super) queried: bool,
    /// The transaction is `READ ONLY`: writes and row locks are 25006.
    pub(super) read_only: bool,
    /// `currval` of each sequence this session advanced (or `setval` with `is_called`), by
    /// name.
    pub(super) sequence_values: BTreeMap<String, i64>,
    /// The sequence this session's last `nextval` advanced (`lastval`).
    pub(super) last_sequence: Option<String>,
    /// When the open block started, on the server's clock (`now()`), once a driver has set
    /// the clock ([`Postgres::set_clock`]).
    pub(super) block_start: Option<i64>,
    /// The generator of `random()` (`random.rs`), from the session's first call or
    /// `setseed` on.
    pub(super) prng: Option<Prng>,
    /// The role and database it connected as, when its driver said
    /// ([`Postgres::set_identity`]); else `postgres` and `postgres`.
    pub(super) identity: Option<Arc<Identity>>,
    /// What the open block's DDL changed, oldest first, to give back on rollback; the
    /// relations named in it are the block's until it ends (`ddl.rs`).
    pub(super) catalog_undo: Vec<CatalogUndo>,
}

/// Who a session is: what `current_user` and `current_database()` answer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The role it connected as.
    pub user: String,
    /// The database it connected to.
    pub database: String,
    /// The `application_name` its startup message gave (what `SHOW` answers until a `SET`).
    pub application_name: String,
}

impl Session {
    /// Whether its statement waits for an advisory or a table lock (a wait that lasts while
    /// the lock is held, not while its holder's transaction is open).
    pub(super) fn waits_for_a_named_lock(&self) -> bool {
        self.waited_advisory.is_some() || self.waited_table.is_some()
    }

    /// A session just connected: idle, at the default settings.
    pub(super) fn new_idle() -> Session {
        Session {
            status: TxStatus::Idle,
            waiting_on: None,
            resuming: false,
            waited_row: None,
            waited_advisory: None,
            waited_table: None,
            table_locks: TableHolds::new(),
            txid: None,
            isolation: Isolation::ReadCommitted,
            snapshot: None,
            savepoints: Vec::new(),
            settings: SessionSettings::default(),
            settings_at_block_start: None,
            queried: false,
            read_only: false,
            sequence_values: BTreeMap::new(),
            last_sequence: None,
            block_start: None,
            prng: None,
            identity: None,
            catalog_undo: Vec::new(),
        }
    }
}

/// What a session's `SET`s changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct SessionSettings {
    /// `default_transaction_isolation`: the level of a transaction that names none (also an
    /// implicit one, a statement outside a block).
    pub(super) default_isolation: Isolation,
    /// `default_transaction_read_only`.
    pub(super) default_read_only: bool,
    /// Parameters that change nothing the stand-in does, as set (kept for `SHOW`).
    pub(super) others: BTreeMap<String, String>,
    /// `SET LOCAL`s of the open block, over `others` until the block ends (`None`: the
    /// parameter's default).
    pub(super) locals: BTreeMap<String, Option<String>>,
}

impl SessionSettings {
    /// The value `SET` and `SET LOCAL` gave parameter `name`, if any (`Some(None)`: reset to
    /// its default by a `SET LOCAL`).
    pub(super) fn value_of(&self, name: &str) -> Option<Option<&String>> {
        match self.locals.get(name) {
            Some(local) => Some(local.as_ref()),
            None => self.others.get(name).map(Some),
        }
    }
}

impl Hash for Session {
    /// The fields a session of the typed statements uses, then the others only when they
    /// differ from their defaults (so that the checker's fingerprints of such sessions stay
    /// what they were before the others existed).
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.status.hash(state);
        self.waiting_on.hash(state);
        self.resuming.hash(state);
        if self.waited_advisory.is_some() {
            self.waited_advisory.hash(state);
        }
        if self.waited_table.is_some() || !self.table_locks.is_empty() {
            self.waited_table.hash(state);
            self.table_locks.hash(state);
        }
        if self.txid.is_some() {
            self.txid.hash(state);
        }
        if self.settings != SessionSettings::default()
            || self.settings_at_block_start.is_some()
            || self.queried
            || self.read_only
        {
            self.settings.hash(state);
            self.settings_at_block_start.hash(state);
            self.queried.hash(state);
            self.read_only.hash(state);
        }
        if !self.sequence_values.is_empty() || self.last_sequence.is_some() {
            self.sequence_values.hash(state);
            self.last_sequence.hash(state);
        }
        if self.block_start.is_some() {
            self.block_start.hash(state);
        }
        if self.prng.is_some() || self.identity.is_some() {
            self.prng.hash(state);
            self.identity.hash(state);
        }
        if self.waited_row.is_some()
            || self.isolation != Isolation::ReadCommitted
            || self.snapshot.is_some()
            || !self.savepoints.is_empty()
        {
            self.waited_row.hash(state);
            self.isolation.hash(state);
            self.snapshot.hash(state);
            for savepoint in &self.savepoints {
                savepoint.name.hash(state);
                savepoint.locks.hash(state);
                savepoint.shared.hash(state);
                if savepoint.catalog_undo_len > 0 {
                    savepoint.catalog_undo_len.hash(state);
                }
                if *savepoint.settings != SessionSettings::default() {
                    savepoint.settings.hash(state);
                }
            }
        }
        if !self.catalog_undo.is_empty() {
            self.catalog_undo.hash(state);
        }
    }
}

/// Row `id` of `wallets` as the checker's state hash reads it ([`Postgres::wallet_view`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalletView<'a> {
    /// The committed version.
    pub committed: Option<Wallet>,
    /// The session holding the row's lock, and the row as that session sees it.
    pub holder: Option<(SessionId, Option<Wallet>)>,
    /// The sessions waiting for the row's lock, in order.
    pub queue: &'a [SessionId],
}

/// An in-memory PostgreSQL: tables of rows, sessions, transaction blocks and row locks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Postgres {
    /// Shared between copies until one changes a row (the model checker copies the server
    /// on every statement, and most change a session only).
    pub(super) tables: Arc<BTreeMap<Arc<str>, Table>>,
    pub(super) sessions: BTreeMap<SessionId, Session>,
    pub(super) next_session: u32,
    /// When a waiting session looks for a deadlock (a setting: not part of the state's hash).
    pub(super) deadlock_check: DeadlockCheck,
    /// Advisory locks held (`advisory.rs`).
    pub(super) advisory: AdvisoryLocks,
    /// An advisory lock, or a table lock by `ROLLBACK TO SAVEPOINT`, was let go since the
    /// driver last asked (a lock let go without a transaction ending).
    pub(super) lock_released: Released,
    /// The sessions waiting for a table lock, first first (`table_lock.rs`).
    pub(super) table_queue: Vec<SessionId>,
    /// What `pg_sleep` asked the driver to wait (`random.rs`; a signal, not state).
    pub(super) requested_sleep: super::random::RequestedSleep,
    /// The number the next transaction that calls `txid_current()` gets (None: none has).
    pub(super) next_txid: Option<i64>,
    /// The sequences of `CREATE SEQUENCE` (`sequence.rs`), by name: relations, like tables,
    /// in one namespace with them. Not transactional.
    pub(super) sequences: BTreeMap<Arc<str>, Sequence>,
    /// The server's wall clock now, in microseconds since 2000-01-01 UTC, as the driver last
    /// set it ([`Postgres::set_clock`]); None: never set, and the clock functions read
    /// [`datetime::DEFAULT_CLOCK`]. An input, not state: not part of the hash.
    pub(super) clock: Option<i64>,
    /// Where the sessions' `random()` and the server's `gen_random_uuid()` start from
    /// ([`Postgres::set_random_seed`]). A setting: not part of the hash.
    pub(super) random_seed: u64,
    /// The generator of `gen_random_uuid()`, from its first call on.
    pub(super) uuid_prng: Option<Prng>,
}

/// When a session waiting for a row lock looks for a deadlock through itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeadlockCheck {
    /// When it starts waiting: the statement that would close a cycle fails at once (the
    /// limit of a very short `deadlock_timeout`).
    #[default]
    AtOnce,
    /// Once per wait, when its driver calls [`Postgres::check_deadlock`] after
    /// `deadlock_timeout`, as PostgreSQL does: until then a cycle may stand.
    OnTimeout,
}

/// How the `wallets` rows hashed when they were the only table (kept so that the checker's
/// state fingerprints, and with them its exploration order, stay the same).
#[derive(Hash)]
struct LegacyRow {
    committed: Wallet,
    lock: Option<LegacyLock>,
}

#[derive(Hash)]
struct LegacyLock {
    holder: SessionId,
    uncommitted: Option<Wallet>,
}

impl Hash for Postgres {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let wallets = self.tables.get(WALLETS);
        let canonical = wallets.is_some_and(|table| table.canonical);
        let rows = wallets.filter(|_| canonical).map(|table| &table.rows);
        state.write_usize(rows.map_or(0, BTreeMap::len));
        for (key, row) in rows.into_iter().flatten() {
            let id = match key {
                Value::Int(id) => *id,
                _ => 0,
            };
            id.hash(state);
            LegacyRow {
                committed: row.committed.as_ref().map(wallet_of).unwrap_or(Wallet {
                    balance: -1,
                    fence: -1,
                }),
                lock: row.lock.as_ref().map(|lock| LegacyLock {
                    holder: lock.holder,
                    uncommitted: match &lock.uncommitted {
                        Some(Written::Row(tuple)) => Some(wallet_of(tuple)),
                        Some(Written::Deleted) => Some(Wallet {
                            balance: -1,
                            fence: -1,
                        }),
                        None => None,
                    },
                }),
            }
            .hash(state);
            if row.committed.is_none() || !row.shared.is_empty() {
                row.committed.hash(state);
                row.shared.hash(state);
            }
            if !row.waiters.is_empty() {
                row.waiters.hash(state);
            }
            row.hash_lock_strengths(state);
        }
        self.sessions.hash(state);
        self.next_session.hash(state);
        if !self.advisory.is_empty() {
            self.advisory.hash(state);
        }
        if !self.table_queue.is_empty() {
            self.table_queue.hash(state);
        }
        if self.next_txid.is_some() {
            self.next_txid.hash(state);
        }
        if !self.sequences.is_empty() {
            self.sequences.hash(state);
        }
        if self.uuid_prng.is_some() {
            self.uuid_prng.hash(state);
        }
        let others: Vec<(&Arc<str>, &Table)> = self
            .tables
            .iter()
            .filter(|(name, _)| !canonical || &***name != WALLETS)
            .collect();
        if !others.is_empty() || (wallets.is_none()) {
            state.write_usize(others.len() + 1);
            for (name, table) in others {
                name.hash(state);
                table.hash_contents(state);
            }
        }
    }
}

impl Table {
    /// Hashes the definition, the column sequences and every row.
    pub(super) fn hash_contents<H: Hasher>(&self, state: &mut H) {
        self.def.hash(state);
        if !self.sequences.is_empty() {
            self.sequences.hash(state);
        }
        for (key, row) in &self.rows {
            key.hash(state);
            row.committed.hash(state);
            row.lock
                .as_ref()
                .map(|lock| (lock.holder, &lock.uncommitted))
                .hash(state);
            row.shared.hash(state);
            if !row.waiters.is_empty() {
                row.waiters.hash(state);
            }
            row.hash_lock_strengths(state);
        }
    }
}

/// The tutorial's table.
pub(super) const WALLETS: &str = "wallets";

impl Default for Postgres {
    fn default() -> Self {
        Postgres::new()
    }
}

impl Postgres {
    /// A stand-in with the tutorial's `wallets` table (no rows) and no sessions.
    pub fn new() -> Postgres {
        let mut postgres = Postgres::empty();
        postgres.create_table(TableDef::wallets());
        postgres
    }

    /// A stand-in with no tables and no sessions.
    pub fn empty() -> Postgres {
        Postgres {
            tables: Arc::default(),
            sessions: BTreeMap::new(),
            next_session: 0,
            deadlock_check: DeadlockCheck::AtOnce,
            advisory: AdvisoryLocks::new(),
            lock_released: Released::default(),
            table_queue: Vec::new(),
            requested_sleep: super::random::RequestedSleep::default(),
            next_txid: None,
            sequences: BTreeMap::new(),
            clock: None,
            random_seed: 0,
            uuid_prng: None,
        }
    }

    /// Seeds what `random()` answers in each session before its `setseed`, and what
    /// `gen_random_uuid()` answers (`random.rs`): a simulation gives its run's seed; 0 until
    /// set.
    pub fn set_random_seed(&mut self, seed: u64) {
        self.random_seed = seed;
    }

    /// Records the role and database `session` connected as (what `current_user` and
    /// `current_database()` answer).
    pub fn set_identity(&mut self, session: SessionId, user: &str, database: &str) {
        if let Some(state) = self.sessions.get_mut(&session) {
            let application_name = state
                .identity
                .as_ref()
                .map(|identity| identity.application_name.clone())
                .unwrap_or_default();
            state.identity = Some(Arc::new(Identity {
                user: user.to_string(),
                database: database.to_string(),
                application_name,
            }));
        }
    }

    /// Gives `session` the `application_name` of its startup message, after
    /// [`Postgres::set_identity`].
    pub fn set_application_name(&mut self, session: SessionId, name: &str) {
        if let Some(state) = self.sessions.get_mut(&session) {
            let mut identity = state.identity.as_deref().cloned().unwrap_or(Identity {
                user: "postgres".to_string(),
                database: "postgres".to_string(),
                application_name: String::new(),
            });
            identity.application_name = name.to_string();
            state.identity = Some(Arc::new(identity));
        }
    }

    /// The role and database `session` connected as (`postgres` and `postgres` when its
    /// driver did not say).
    pub(super) fn identity_of(&self, session: SessionId) -> (&str, &str) {
        match self
            .sessions
            .get(&session)
            .and_then(|s| s.identity.as_deref())
        {
            Some(identity) => (&identity.user, &identity.database),
            None => ("postgres", "postgres"),
        }
    }

    /// The next `random()` of `session`.
    pub(super) fn next_random_double(&mut self, session: SessionId) -> f64 {
        let seed = self.random_seed;
        let state = self.session_mut(session);
        state
            .prng
            .get_or_insert_with(|| random::session_prng(seed, session.0))
            .next_double()
    }

    /// `setseed(seed)` for `session`.
    pub(super) fn set_session_seed(&mut self, session: SessionId, seed: f64) {
        self.session_mut(session).prng = Some(Prng::from_fraction(seed));
    }

    /// The next `gen_random_uuid()`.
    pub(super) fn next_uuid(&mut self) -> u128 {
        let seed = self.random_seed;
        self.uuid_prng
            .get_or_insert_with(|| random::uuid_prng(seed))
            .next_uuid()
    }

    /// Sets the server's wall clock (microseconds since 2000-01-01 UTC, see
    /// [`datetime::from_unix_micros`]) for the statements that run next: `now()` reads it
    /// when a transaction starts, `statement_timestamp()` when a statement does. A driver
    /// that never sets it runs every statement at [`datetime::DEFAULT_CLOCK`], and then no
    /// block remembers when it started (so the checker's states of the safeguards that never
    /// read the clock do not differ by it).
    pub fn set_clock(&mut self, now: i64) {
        self.clock = Some(now);
    }

    /// The clock as a statement of `session` reads it now.
    pub(super) fn clock_reading(&self, session: SessionId) -> ClockReading {
        let statement = self.clock.unwrap_or(datetime::DEFAULT_CLOCK);
        let block_start = self.sessions.get(&session).and_then(|s| s.block_start);
        ClockReading {
            transaction: block_start.unwrap_or(statement),
            statement,
        }
    }

    /// Remembers when `session`'s block started (its first statement's clock), forgets it
    /// when the block is over.
    pub(super) fn note_block_start(&mut self, session: SessionId) {
        let clock = self.clock;
        if let Some(state) = self.sessions.get_mut(&session) {
            if state.status == TxStatus::Idle {
                state.block_start = None;
            } else if state.block_start.is_none() {
                state.block_start = clock;
            }
        }
    }

    /// Sets when waiting sessions look for deadlocks.
    pub fn set_deadlock_check(&mut self, check: DeadlockCheck) {
        self.deadlock_check = check;
    }

    /// PostgreSQL's deadlock check for `session`, whose `deadlock_timeout` has passed while
    /// its statement waited: if its wait closes a cycle of the waits-for graph, the statement
    /// fails with 40P01 (its transaction aborts, releasing its locks) and the error is
    /// returned; otherwise nothing changes. PostgreSQL checks once per wait: the driver calls
    /// this once per [`Exec::Blocked`] wait (again only when the session waits anew).
    pub fn check_deadlock(&mut self, session: SessionId) -> Option<PgError> {
        let cycle = self.cycle_through(session)?;
        let error = PgError::deadlock_detected(self.deadlock_detail(&cycle));
        Some(self.cancel_wait(session, error))
    }

    /// Ends `session`'s wait for a lock with `error` (its deadlock, or a `lock_timeout` or
    /// `statement_timeout` that passed): the statement fails as any statement fails, its
    /// transaction's locks released if it was one of its own, and it leaves every queue.
    pub fn cancel_wait(&mut self, session: SessionId, error: PgError) -> PgError {
        let state = self.session_mut(session);
        state.waiting_on = None;
        state.resuming = false;
        state.waited_row = None;
        state.waited_advisory = None;
        state.waited_table = None;
        let _ = self.fail(session, error.clone());
        self.leave_lock_queues(session);
        if self.status(session) == Some(TxStatus::Idle) {
            // The statement was a transaction of its own: its table locks go with it.
            self.leave_transaction_behind(session);
        }
        self.debug_check_invariants();
        error
    }

    /// `session`'s `lock_timeout` and `statement_timeout` in milliseconds (0: none), for a
    /// server that lets statements wait.
    pub fn time_limits_ms(&self, session: SessionId) -> (u64, u64) {
        self.sessions.get(&session).map_or((0, 0), |state| {
            (
                super::settings::time_limit_ms(state, "lock_timeout"),
                super::settings::time_limit_ms(state, "statement_timeout"),
            )
        })
    }

    /// Creates a table (replacing one of the same name).
    pub(super) fn create_table(&mut self, def: TableDef) {
        let canonical = def.is_canonical_wallets();
        self.tables_mut().insert(
            def.name.as_str().into(),
            Table {
                def: Arc::new(def),
                rows: BTreeMap::new(),
                next_seq: 1,
                sequences: BTreeMap::new(),
                canonical,
            },
        );
    }

    /// The `wallets` table if it has the tutorial's definition.
    fn canonical_wallets(&self) -> Option<&Table> {
        self.tables.get(WALLETS).filter(|table| table.canonical)
    }

    fn wallet_row(&self, id: i64) -> Option<&Row> {
        self.canonical_wallets()?.rows.get(&Value::Int(id))
    }

    fn wallet_row_mut(&mut self, id: i64) -> Option<&mut Row> {
        self.tables_mut()
            .get_mut(WALLETS)?
            .rows
            .get_mut(&Value::Int(id))
    }

    /// Inserts or overwrites a committed row directly (scenario set-up). A row lock and an
    /// uncommitted version, if any, are left as they are. Creates the `wallets` table if it
    /// does not exist.
    pub fn seed_wallet(&mut self, id: i64, wallet: Wallet) {
        if !self.tables.contains_key(WALLETS) {
            self.create_table(TableDef::wallets());
        }
        let tuple = vec![
            Value::Int(id),
            Value::Int(wallet.balance),
            Value::Int(wallet.fence),
        ];
        let table = self.tables_mut().get_mut(WALLETS).expect("created above");
        table
            .rows
            .entry(Value::Int(id))
            .and_modify(|row| row.committed = Some(tuple.clone()))
            .or_insert(Row {
                committed: Some(tuple),
                lock: None,
                shared: Vec::new(),
                key_only: Vec::new(),
                waiters: Vec::new(),
            });
    }

    /// The committed row, if any.
    pub fn wallet(&self, id: i64) -> Option<Wallet> {
        self.tables
            .get(WALLETS)?
            .rows
            .get(&Value::Int(id))?
            .committed
            .as_ref()
            .map(wallet_of)
    }

    /// The row as a plain `SELECT` in `session` sees it: its own uncommitted version if it
    /// has one, else the committed row.
    pub fn visible_wallet(&self, session: SessionId, id: i64) -> Option<Wallet> {
        self.tables
            .get(WALLETS)?
            .rows
            .get(&Value::Int(id))?
            .visible_tuple(session)
            .map(wallet_of)
    }

    /// Opens a session (a connection). Sessions are numbered from 0 in connection order;
    /// numbers are not reused.
    pub fn connect(&mut self) -> SessionId {
        let id = SessionId(self.next_session);
        self.next_session = self
            .next_session
            .checked_add(1)
            .expect("fewer than 2^32 connections");
        self.sessions.insert(id, Session::new_idle());
        id
    }

    /// Closes a session; an open transaction is rolled back and its locks released.
    /// Closing an unknown session does nothing.
    pub fn disconnect(&mut self, session: SessionId) {
        if self.sessions.contains_key(&session) {
            self.end_transaction(session, Ending::Rollback);
            self.leave_lock_queues(session);
            self.release_all_holds(session);
            self.sessions.remove(&session);
        }
        self.debug_check_invariants();
    }

    /// The connected sessions, in order.
    pub fn sessions(&self) -> Vec<SessionId> {
        self.session_ids().collect()
    }

    /// The open sessions, by number, without collecting them.
    pub fn session_ids(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.sessions.keys().copied()
    }

    /// Executes one statement in `session` with `bigint` parameters.
    ///
    /// Outside `BEGIN` a statement is its own transaction. A wrong parameter count is an
    /// error (08P01, as the server reports a Bind with the wrong number of parameters).
    pub fn execute(&mut self, session: SessionId, statement: &Statement, params: &[i64]) -> Exec {
        self.execute_with_notice(session, statement, params).exec
    }

    /// Like [`Postgres::execute`], also returning the `WARNING` PostgreSQL sends with the
    /// result (for `BEGIN` inside a block, `COMMIT`/`ROLLBACK` outside one). A session that is
    /// not connected gets 08003 `connection does not exist`.
    ///
    /// The statement runs natively (the fast path) when `wallets` has the tutorial's
    /// definition and the session is a plain READ COMMITTED one without savepoints; otherwise
    /// its SQL text runs through the general path ([`Postgres::execute_sql`]), which gives the
    /// same results (`tests/postgres_fast_path.rs` checks it on generated sequences).
    pub fn execute_with_notice(
        &mut self,
        session: SessionId,
        statement: &Statement,
        params: &[i64],
    ) -> Executed {
        self.requested_sleep.0 = None;
        let executed = if self.fast_path_applies(session, statement) {
            let executed = self.dispatch(session, statement, params);
            self.note_typed_table_lock(session, statement, &executed.exec);
            executed
        } else {
            self.execute_typed_generally(session, statement, params)
        };
        self.note_block_start(session);
        if let Exec::Done(_) = executed.exec {
            self.leave_lock_queues(session);
        }
        self.debug_check_invariants();
        executed
    }

    /// The answer to `statement` when running it would change nothing, found without
    /// running it: a plain `SELECT` of a wallet (no row lock) on the fast path, by a
    /// connected session that is not in a failed block, not resuming or waiting, and queued
    /// for no row lock. `None` otherwise (run it with [`Postgres::execute`]). The model
    /// checker asks this first, so that a read does not copy the server.
    pub fn execute_read_only(
        &self,
        session: SessionId,
        statement: &Statement,
        params: &[i64],
    ) -> Option<Exec> {
        let Statement::Select { id, lock: None } = *statement else {
            return None;
        };
        let state = self.sessions.get(&session)?;
        // The first query of a block marks the block as having queried: not a read then.
        let at_rest = state.waiting_on.is_none()
            && !state.resuming
            && state.status != TxStatus::Failed
            && (state.status != TxStatus::InBlock || state.queried);
        // Inside a block a first read of `wallets` takes a table lock: not a read then either.
        let locked = state.status == TxStatus::Idle || self.holds_table_lock(session, WALLETS);
        if !at_rest
            || !locked
            || self.in_a_lock_queue(session)
            || params.len() != statement.param_count()
            || !self.fast_path_applies(session, statement)
        {
            return None;
        }
        // As `dispatch` answers it.
        Some(Exec::Done(Ok(select_result(
            self.visible_wallet(session, id),
        ))))
    }

    /// The table lock a typed statement run natively took on `wallets` (`table_lock.rs`),
    /// recorded when it lasts past the statement: inside a block, or while it waits. Natively
    /// no table lock can make it wait ([`Postgres::fast_path_applies`]).
    fn note_typed_table_lock(&mut self, session: SessionId, statement: &Statement, exec: &Exec) {
        let mode = match statement {
            Statement::Select { lock: None, .. } => TableLockMode::AccessShare,
            Statement::Select { lock: Some(_), .. } => TableLockMode::RowShare,
            Statement::WriteFenced { .. }
            | Statement::WriteBalance { .. }
            | Statement::Debit { .. } => TableLockMode::RowExclusive,
            _ => return,
        };
        let lasts = match exec {
            Exec::Blocked { .. } => true,
            Exec::Done(Ok(_)) => self.status(session) == Some(TxStatus::InBlock),
            Exec::Done(Err(_)) => false,
        };
        let Some((table, _)) = self.tables.get_key_value(WALLETS) else {
            return;
        };
        let table = table.clone();
        if lasts {
            self.record_table_lock(session, &table, mode);
        } else if self.status(session) == Some(TxStatus::Idle) {
            // An autocommit statement that had waited is over, and its lock with it.
            self.leave_transaction_behind(session);
        }
    }

    /// What a transaction leaves behind in its session once it ends (also the transaction of
    /// a statement outside a block): its table locks and its number.
    pub(super) fn leave_transaction_behind(&mut self, session: SessionId) {
        if let Some(state) = self.sessions.get_mut(&session) {
            state.table_locks.clear();
            state.txid = None;
        }
    }

    /// Whether [`Postgres::dispatch`] may run `statement` natively.
    fn fast_path_applies(&self, session: SessionId, statement: &Statement) -> bool {
        let Some(state) = self.sessions.get(&session) else {
            return true;
        };
        // A READ ONLY transaction goes the general way, which refuses writes.
        let plain_session = state.isolation == Isolation::ReadCommitted
            && !state.read_only
            && state.savepoints.is_empty()
            && state.waited_row.is_none();
        let wallets_ok = statement.wallet_id().is_none() || self.canonical_wallets().is_some();
        // A relation some block holds by DDL makes the others wait: the general path does.
        // So does a table lock that would make a statement on a row wait.
        plain_session && wallets_ok && !self.any_ddl_hold() && !self.any_blocking_table_lock()
    }

    /// A typed statement through the general path, its result in the typed form.
    fn execute_typed_generally(
        &mut self,
        session: SessionId,
        statement: &Statement,
        params: &[i64],
    ) -> Executed {
        let values: Vec<Value> = params.iter().map(|&v| Value::Int(v)).collect();
        let sql = statement.sql();
        let parsed = match super::sql::parse_general(&sql) {
            Ok(parsed) => parsed,
            Err(error) => return Executed::done(Err(error)),
        };
        let executed = self.execute_sql(session, &parsed, &values);
        let exec = match executed.exec {
            SqlExec::Blocked { by } => Exec::Blocked { by },
            SqlExec::Done(Err(error)) => Exec::Done(Err(error)),
            SqlExec::Done(Ok(result)) => Exec::Done(typed_result(statement, result)),
        };
        Executed {
            exec,
            notice: executed.notice,
        }
    }

    /// True when `session` is inside a transaction block (open or failed).
    pub fn in_transaction(&self, session: SessionId) -> bool {
        matches!(
            self.status(session),
            Some(TxStatus::InBlock | TxStatus::Failed)
        )
    }

    /// The session's transaction status, or None when it is not connected.
    pub fn status(&self, session: SessionId) -> Option<TxStatus> {
        self.sessions.get(&session).map(|s| s.status)
    }

    /// The session whose transaction `session`'s last statement was blocked on, while that
    /// transaction lasts and `session` has not executed anything since.
    pub fn waiting_on(&self, session: SessionId) -> Option<SessionId> {
        self.sessions.get(&session).and_then(|s| s.waiting_on)
    }

    /// Row `id` of `wallets` as [`Postgres::wallet`], [`Postgres::lock_holder`] with
    /// [`Postgres::visible_wallet`] of the holder, and [`Postgres::lock_queue`] give it,
    /// looked up once (the checker's state hash reads all of them for every state).
    pub fn wallet_view(&self, id: i64) -> WalletView<'_> {
        let Some(row) = self
            .tables
            .get(WALLETS)
            .and_then(|table| table.rows.get(&Value::Int(id)))
        else {
            return WalletView::default();
        };
        WalletView {
            committed: row.committed.as_ref().map(wallet_of),
            holder: row.lock.as_ref().map(|lock| {
                let seen = row.visible_tuple(lock.holder).map(wallet_of);
                (lock.holder, seen)
            }),
            queue: &row.waiters,
        }
    }

    /// Every session with its [`Postgres::status`] and [`Postgres::waiting_on`], in session
    /// order.
    pub fn session_states(
        &self,
    ) -> impl Iterator<Item = (SessionId, TxStatus, Option<SessionId>)> + '_ {
        self.sessions
            .iter()
            .map(|(&id, session)| (id, session.status, session.waiting_on))
    }

    /// The session whose transaction holds the lock on row `id` of `wallets`, if any.
    pub fn lock_holder(&self, id: i64) -> Option<SessionId> {
        let row = self.tables.get(WALLETS)?.rows.get(&Value::Int(id))?;
        row.lock.as_ref().map(|lock| lock.holder)
    }

    /// Every held exclusive lock on `wallets` as `(row id, holder)`, by row id.
    pub fn locks(&self) -> Vec<(i64, SessionId)> {
        let Some(table) = self.tables.get(WALLETS) else {
            return Vec::new();
        };
        table
            .rows
            .iter()
            .filter_map(|(key, row)| match (key, &row.lock) {
                (Value::Int(id), Some(lock)) => Some((*id, lock.holder)),
                _ => None,
            })
            .collect()
    }

    /// Runs a typed statement natively for a connected or unknown session.
    fn dispatch(&mut self, session: SessionId, statement: &Statement, params: &[i64]) -> Executed {
        let Some(state) = self.sessions.get_mut(&session) else {
            return Executed::done(Err(PgError::connection_does_not_exist()));
        };
        state.waiting_on = None;
        state.waited_advisory = None;
        state.waited_table = None;
        let resuming = std::mem::take(&mut state.resuming);
        if state.status == TxStatus::Failed && !statement.ends_transaction() {
            return Executed::done(Err(PgError::in_failed_transaction()));
        }
        if let Statement::Text(_) = statement {
            return self.execute_typed_generally(session, statement, params);
        }
        let required = statement.param_count();
        if params.len() != required {
            let error = PgError::wrong_parameter_count(params.len(), required);
            return self.fail(session, error);
        }
        let query = matches!(
            statement,
            Statement::Select { .. }
                | Statement::WriteFenced { .. }
                | Statement::WriteBalance { .. }
                | Statement::Debit { .. }
        );
        if query && self.status(session) == Some(TxStatus::InBlock) {
            self.session_mut(session).queried = true;
        }
        match *statement {
            Statement::Begin => self.begin(session, None, None, "BEGIN"),
            Statement::BeginIsolated { isolation } => {
                self.begin(session, Some(isolation), None, "BEGIN")
            }
            Statement::Commit => self.commit(session),
            Statement::Rollback => self.rollback(session),
            Statement::Select { id, lock: None } => {
                let row = self.visible_wallet(session, id);
                Executed::done(Ok(select_result(row)))
            }
            Statement::Select {
                id,
                lock: Some(lock),
            } => self.select_for_update(session, id, lock),
            Statement::WriteFenced { id, guard } => self.update(session, id, resuming, |row| {
                fenced_write(row, guard, params)
            }),
            Statement::WriteBalance { id } => self.update(session, id, resuming, |row| {
                Ok(Some(Wallet {
                    balance: params[0],
                    ..row
                }))
            }),
            Statement::Debit { id } => {
                self.update(session, id, resuming, |row| debit(row, params[0]))
            }
            Statement::Text(_) => unreachable!("runs through the general path above"),
        }
    }

    /// `BEGIN` (or `START TRANSACTION`, reported with `tag`), with an isolation level.
    pub(super) fn begin(
        &mut self,
        session: SessionId,
        isolation: Option<Isolation>,
        read_only: Option<bool>,
        tag: &str,
    ) -> Executed {
        let state = self.session_mut(session);
        match state.status {
            TxStatus::Idle => {
                state.status = TxStatus::InBlock;
                state.isolation = isolation.unwrap_or(state.settings.default_isolation);
                state.read_only = read_only.unwrap_or(state.settings.default_read_only);
                Executed::done(Ok(command_result(tag)))
            }
            TxStatus::InBlock => {
                Executed::done_with_notice(command_result(tag), PgError::already_in_transaction())
            }
            TxStatus::Failed => unreachable!("a failed block refuses BEGIN before it gets here"),
        }
    }

    /// `COMMIT`: a failed block rolls back instead and reports `ROLLBACK`.
    pub(super) fn commit(&mut self, session: SessionId) -> Executed {
        match self.session_mut(session).status {
            TxStatus::Idle => Executed::done_with_notice(
                command_result("COMMIT"),
                PgError::no_transaction_in_progress(),
            ),
            TxStatus::InBlock => {
                self.end_transaction(session, Ending::Commit);
                Executed::done(Ok(command_result("COMMIT")))
            }
            TxStatus::Failed => {
                self.end_transaction(session, Ending::Rollback);
                Executed::done(Ok(command_result("ROLLBACK")))
            }
        }
    }

    /// `ROLLBACK`.
    pub(super) fn rollback(&mut self, session: SessionId) -> Executed {
        match self.session_mut(session).status {
            TxStatus::Idle => Executed::done_with_notice(
                command_result("ROLLBACK"),
                PgError::no_transaction_in_progress(),
            ),
            TxStatus::InBlock | TxStatus::Failed => {
                self.end_transaction(session, Ending::Rollback);
                Executed::done(Ok(command_result("ROLLBACK")))
            }
        }
    }

    /// `SELECT balance, fence ... FOR UPDATE [NOWAIT | SKIP LOCKED]`.
    fn select_for_update(&mut self, session: SessionId, id: i64, lock: RowLock) -> Executed {
        let Some(row) = self.wallet_row(id) else {
            return Executed::done(Ok(select_result(None)));
        };
        if row.visible_tuple(session).is_none() {
            return Executed::done(Ok(select_result(None)));
        }
        if let Some(holder) = row.locked_by_other(session) {
            return match lock {
                RowLock::ForUpdate => self.wait_for_row(session, holder, WALLETS, &Value::Int(id)),
                RowLock::ForUpdateNowait => self.fail(session, PgError::row_lock_not_available()),
                RowLock::ForUpdateSkipLocked => Executed::done(Ok(select_result(None))),
            };
        }
        let visible = row.visible_to(session);
        if self.status(session) == Some(TxStatus::InBlock) {
            self.lock_row(session, id, None, false);
        }
        Executed::done(Ok(select_result(Some(visible))))
    }

    /// An `UPDATE` of row `id`. `plan` evaluates the WHERE clause on a version (None: no
    /// match) and computes the new row. `resuming`: the statement waited for this row's lock.
    fn update(
        &mut self,
        session: SessionId,
        id: i64,
        resuming: bool,
        plan: impl Fn(Wallet) -> Result<Option<Wallet>, PgError>,
    ) -> Executed {
        let Some(row) = self.wallet_row(id) else {
            return Executed::done(Ok(update_result(0)));
        };
        if row.visible_tuple(session).is_none() {
            return Executed::done(Ok(update_result(0)));
        }
        let blocker = row.locked_by_other_no_key(session);
        let new_row = match plan(row.visible_to(session)) {
            Ok(None) if resuming => {
                // After the wait PostgreSQL locks the newest version, then re-checks the WHERE
                // clause (ExecUpdate: table_tuple_lock, then EvalPlanQual); a failed re-check
                // skips the row but keeps the lock.
                if let Some(holder) = blocker {
                    return self.wait_for_row(session, holder, WALLETS, &Value::Int(id));
                }
                if self.status(session) == Some(TxStatus::InBlock) {
                    self.lock_row(session, id, None, true);
                }
                return Executed::done(Ok(update_result(0)));
            }
            Ok(None) => return Executed::done(Ok(update_result(0))),
            Ok(Some(new_row)) => new_row,
            Err(error) => return self.fail(session, error),
        };
        if new_row.balance < 0 {
            let error = PgError::balance_check_violation(id, new_row.balance, new_row.fence);
            return self.fail(session, error);
        }
        if let Some(holder) = blocker {
            return self.wait_for_row(session, holder, WALLETS, &Value::Int(id));
        }
        match self.status(session) {
            Some(TxStatus::InBlock) => self.lock_row(session, id, Some(new_row), true),
            _ => self.commit_row(id, new_row),
        }
        Executed::done(Ok(update_result(1)))
    }

    /// Records that `session` waits for `holder`, or fails with 40P01 if that closes a
    /// cycle.
    pub(super) fn wait_for(&mut self, session: SessionId, holder: SessionId) -> Executed {
        debug_assert_ne!(session, holder, "a session never waits for itself");
        if self.deadlock_check == DeadlockCheck::AtOnce {
            if let Some(cycle) = self.wait_cycle(session, holder) {
                return self.fail(
                    session,
                    PgError::deadlock_detected(self.deadlock_detail(&cycle)),
                );
            }
        }
        let state = self.session_mut(session);
        state.waiting_on = Some(holder);
        state.resuming = true;
        Executed {
            exec: Exec::Blocked { by: holder },
            notice: None,
        }
    }

    /// [`Postgres::wait_for`] the lock of row `key` of `table`: a session that waits joins
    /// the row's queue (keeping its place when it was in it already).
    pub(super) fn wait_for_row(
        &mut self,
        session: SessionId,
        holder: SessionId,
        table: &str,
        key: &Value,
    ) -> Executed {
        let executed = self.wait_for(session, holder);
        if matches!(executed.exec, Exec::Blocked { .. }) {
            let row = self
                .tables_mut()
                .get_mut(table)
                .and_then(|t| t.rows.get_mut(key));
            if let Some(row) = row {
                if !row.waiters.contains(&session) {
                    row.waiters.push(session);
                }
            }
        }
        executed
    }

    /// The tables to change, copied if shared.
    pub(super) fn tables_mut(&mut self) -> &mut BTreeMap<Arc<str>, Table> {
        Arc::make_mut(&mut self.tables)
    }

    /// True when `session` is queued for some row's lock.
    fn in_a_lock_queue(&self, session: SessionId) -> bool {
        self.tables.values().any(|table| {
            table
                .rows
                .values()
                .any(|row| row.waiters.contains(&session))
        })
    }

    /// Takes `session` out of every row's queue, once its statement has run (or failed, or the
    /// session ended); a session that waited behind it waits no more unless `session` now
    /// holds a lock (it took the row).
    pub(super) fn leave_lock_queues(&mut self, session: SessionId) {
        if self.table_queue.contains(&session) {
            // The sessions queued behind it may go on now.
            self.leave_table_queue(session);
            self.lock_released.0 = true;
        }
        if !self.in_a_lock_queue(session) {
            return;
        }
        let mut left = false;
        for table in self.tables_mut().values_mut() {
            for row in table.rows.values_mut() {
                if let Some(at) = row.waiters.iter().position(|&w| w == session) {
                    row.waiters.remove(at);
                    left = true;
                }
            }
        }
        if left {
            self.forget_waits_on_released(session);
        }
    }

    /// True when `session`, whose statement waits for `by`, may run it again: `by`'s
    /// transaction has ended and no session is queued ahead of it for the row.
    pub fn lock_wait_over(&self, session: SessionId, by: SessionId) -> bool {
        if let Some((key, mode)) = self.sessions.get(&session).and_then(|s| s.waited_advisory) {
            return self.advisory_conflict(session, key, mode).is_none();
        }
        if let Some((table, mode)) = self
            .sessions
            .get(&session)
            .and_then(|s| s.waited_table.as_ref())
        {
            return self.table_lock_blocker(session, table, *mode).is_none();
        }
        !self.in_transaction(by) && !self.queued_behind(session)
    }

    /// True when `session` waits in some row's queue behind another session (it sleeps on
    /// PostgreSQL's tuple lock, which the first waiter holds).
    pub fn queued_behind(&self, session: SessionId) -> bool {
        self.tables.values().any(|table| {
            table
                .rows
                .values()
                .any(|row| row.queued_ahead_of(session).is_some())
        })
    }

    /// The sessions queued for the lock of row `id` of `wallets`, first first.
    pub fn lock_queue(&self, id: i64) -> &[SessionId] {
        self.tables
            .get(WALLETS)
            .and_then(|table| table.rows.get(&Value::Int(id)))
            .map_or(&[], |row| row.waiters.as_slice())
    }

    /// The cycle `session -> holder -> ... -> session` that waiting for `holder` would close,
    /// starting with `session`. Every later edge is the wait as it stands now
    /// ([`Postgres::blocker_now`]), as PostgreSQL's deadlock check reads its lock table.
    fn wait_cycle(&self, session: SessionId, holder: SessionId) -> Option<Vec<SessionId>> {
        let mut cycle = vec![session];
        let mut current = holder;
        for _ in 0..self.sessions.len() {
            if current == session {
                return Some(cycle);
            }
            cycle.push(current);
            current = self.blocker_now(current)?;
        }
        None
    }

    /// A cycle of waits through `session`, as PostgreSQL's deadlock check finds one, starting
    /// with `session`. Besides the waits of [`Postgres::blocker_now`] it follows PostgreSQL's
    /// "soft" edges: a session queued for a row waits also for every session queued ahead of
    /// it but the first (they wait for the same tuple lock and would take it before it).
    /// PostgreSQL tries to undo a cycle that needs a soft edge by moving the later session
    /// ahead, but keeps the new order only if no cycle of real waits runs through either of
    /// the two; in a row's queue one always does (the later session waits for the first in
    /// line, which waits, through the cycle, for it), so the session whose check found such
    /// a cycle is aborted. `tests/fidelity_postgres.rs`,
    /// `a_soft_deadlock_aborts_the_waiter_that_finds_it`, plays it on both servers.
    fn cycle_through(&self, session: SessionId) -> Option<Vec<SessionId>> {
        // Depth first, with the path on an explicit stack (a chain of waits may be as long as
        // there are sessions): each entry is a session and its waits not yet followed.
        let mut visited = std::collections::BTreeSet::from([session]);
        let mut path = vec![(session, self.waits_of(session).into_iter())];
        while let Some((_, waits)) = path.last_mut() {
            match waits.next() {
                Some(next) if next == session => {
                    return Some(path.iter().map(|(on_path, _)| *on_path).collect());
                }
                Some(next) => {
                    if visited.insert(next) {
                        path.push((next, self.waits_of(next).into_iter()));
                    }
                }
                None => {
                    path.pop();
                }
            }
        }
        None
    }

    /// Every session `session` waits for in PostgreSQL's deadlock check: the real wait
    /// ([`Postgres::blocker_now`]) first, then the soft ones (the sessions queued ahead of it
    /// for the same row, but the first).
    fn waits_of(&self, session: SessionId) -> Vec<SessionId> {
        let soft = self.tables.values().find_map(|table| {
            table.rows.values().find_map(|row| {
                let at = row.waiters.iter().position(|&w| w == session)?;
                Some(&row.waiters[1.min(at)..at])
            })
        });
        self.blocker_now(session)
            .into_iter()
            .chain(soft.into_iter().flatten().copied())
            .collect()
    }

    /// Whom `session`'s blocked statement waits for now, in PostgreSQL's lock graph. A session
    /// queued behind another for a row sleeps on the row's tuple lock, which the first in line
    /// holds: its edge goes to whoever is first now, even if that changed since it last ran.
    /// The first in line sleeps on the session it was blocked by (the row's holder) while
    /// that one still holds the row; one that has just come first has not slept on the
    /// holder yet (in PostgreSQL it runs to take the tuple lock, then sleeps anew). A wait for
    /// no row lasts while its blocker's transaction does. Reading the edge a session stored
    /// when it last ran instead would miss a cycle through a queue whose first waiter has
    /// changed, and a missed cycle is never looked for again: its sessions wait forever.
    fn blocker_now(&self, session: SessionId) -> Option<SessionId> {
        let state = self.sessions.get(&session)?;
        if let Some((key, mode)) = state.waited_advisory {
            return state
                .waiting_on
                .and_then(|_| self.advisory_conflict(session, key, mode));
        }
        if let Some((table, mode)) = &state.waited_table {
            return state
                .waiting_on
                .and_then(|_| self.table_lock_blocker(session, table, *mode));
        }
        let blocked_by = state.waiting_on;
        let queued_at = self.tables.values().find_map(|table| {
            table
                .rows
                .values()
                .find(|row| row.waiters.contains(&session))
        });
        let Some(row) = queued_at else {
            return blocked_by.filter(|&by| self.in_transaction(by));
        };
        if let Some(first) = row.queued_ahead_of(session) {
            return Some(first);
        }
        blocked_by.filter(|&by| {
            by != session
                && (row.lock.as_ref().is_some_and(|lock| lock.holder == by)
                    || row.shared.contains(&by))
        })
    }

    /// Reports `error`; inside a transaction block it aborts the block (or, under a
    /// savepoint, the work since the innermost savepoint, leaving the block failed until
    /// `ROLLBACK TO`).
    pub(super) fn fail(&mut self, session: SessionId, error: PgError) -> Executed {
        if self.status(session) == Some(TxStatus::InBlock) {
            let has_savepoint = self
                .sessions
                .get(&session)
                .is_some_and(|s| !s.savepoints.is_empty());
            if has_savepoint {
                let depth = self.session_mut(session).savepoints.len() - 1;
                self.restore_savepoint(session, depth);
                self.session_mut(session).status = TxStatus::Failed;
                self.forget_waits_on_released(session);
            } else {
                self.end_transaction(session, Ending::Abort);
            }
        }
        Executed::done(Err(error))
    }

    /// Takes (or keeps) `session`'s lock on row `id`, storing its new uncommitted version if
    /// it wrote one; `no_key` for an `UPDATE`'s lock (the typed statements change no key).
    fn lock_row(&mut self, session: SessionId, id: i64, written: Option<Wallet>, no_key: bool) {
        let row = self.wallet_row_mut(id).expect("locking an existing row");
        let tuple = written.map(|w| {
            Written::Row(vec![
                Value::Int(id),
                Value::Int(w.balance),
                Value::Int(w.fence),
            ])
        });
        lock_row_in_as(row, session, tuple, no_key);
    }

    /// Writes a new committed version directly (a statement outside a transaction block).
    fn commit_row(&mut self, id: i64, version: Wallet) {
        let row = self.wallet_row_mut(id).expect("writing an existing row");
        assert!(row.lock.is_none(), "an autocommit write holds the row lock");
        assert!(version.balance >= 0, "wallets_balance_check holds");
        row.committed = Some(vec![
            Value::Int(id),
            Value::Int(version.balance),
            Value::Int(version.fence),
        ]);
    }

    /// Ends `session`'s transaction: publishes (commit) or discards its versions, releases its
    /// locks, and forgets the waits on it.
    pub(super) fn end_transaction(&mut self, session: SessionId, ending: Ending) {
        // What its DDL changed is kept or given back first (a table it dropped comes back
        // with its rows, and with the row locks the loop below lets go of).
        match ending {
            Ending::Commit => self.commit_ddl(session),
            Ending::Rollback | Ending::Abort => self.undo_ddl(session, 0),
        }
        // The loop below changes only the rows `session` holds a lock on: the tables are
        // copied only if there are any.
        if self.holds_a_lock(session) {
            for table in self.tables_mut().values_mut() {
                let mut vanished = Vec::new();
                for (key, row) in table.rows.iter_mut() {
                    row.unshare(session);
                    let Some(lock) = row.lock.take_if(|lock| lock.holder == session) else {
                        continue;
                    };
                    if let (Ending::Commit, Some(written)) = (ending, lock.uncommitted) {
                        row.committed = match written {
                            Written::Row(tuple) => Some(tuple),
                            Written::Deleted => None,
                        };
                    }
                    if row.committed.is_none() && row.lock.is_none() && row.shared.is_empty() {
                        vanished.push(key.clone());
                    }
                }
                for key in vanished {
                    table.rows.remove(&key);
                }
            }
        }
        self.release_xact_holds(session);
        self.leave_transaction_behind(session);
        for other in self.sessions.values_mut() {
            if other.waiting_on == Some(session) && !other.waits_for_a_named_lock() {
                other.waiting_on = None;
            }
        }
        let state = self.session_mut(session);
        state.status = match ending {
            Ending::Commit | Ending::Rollback => TxStatus::Idle,
            Ending::Abort => TxStatus::Failed,
        };
        state.snapshot = None;
        state.savepoints.clear();
        if ending != Ending::Abort {
            state.queried = false;
            // A block's `SET`s stay when it commits and are undone when it rolls back; its
            // `SET LOCAL`s end either way.
            if let Some(before) = state.settings_at_block_start.take() {
                if ending == Ending::Rollback {
                    super::settings::restore(&mut state.settings, *before);
                }
            }
            super::settings::end_locals(&mut state.settings);
            state.isolation = state.settings.default_isolation;
            state.read_only = state.settings.default_read_only;
        }
    }

    /// True when `session` holds a row lock, exclusive or shared, on some row.
    fn holds_a_lock(&self, session: SessionId) -> bool {
        self.tables.values().any(|table| {
            table.rows.values().any(|row| {
                row.lock.as_ref().is_some_and(|l| l.holder == session)
                    || row.shared.contains(&session)
            })
        })
    }

    /// Forgets the waits on `session` when it holds no lock any more.
    pub(super) fn forget_waits_on_released(&mut self, session: SessionId) {
        if !self.holds_a_lock(session) {
            for other in self.sessions.values_mut() {
                if other.waiting_on == Some(session) && !other.waits_for_a_named_lock() {
                    other.waiting_on = None;
                }
            }
        }
    }

    /// Restores `session`'s locks and writes to savepoint `depth`, dropping the later ones.
    pub(super) fn restore_savepoint(&mut self, session: SessionId, depth: usize) {
        let state = self.session_mut(session);
        state.savepoints.truncate(depth + 1);
        let saved = state.savepoints[depth].clone();
        // Settings changed after the savepoint go back as a rollback of the block would
        // take them back; the block's own start is still remembered for its end.
        state.settings = (*saved.settings).clone();
        self.undo_ddl(session, saved.catalog_undo_len);
        self.release_table_locks_after(session, depth);
        for (name, table) in self.tables_mut().iter_mut() {
            let mut vanished = Vec::new();
            for (key, row) in table.rows.iter_mut() {
                let id = (name.to_string(), key.clone());
                if !saved.shared.contains(&id) {
                    row.unshare(session);
                }
                if let Some(held) = row.lock.as_ref().filter(|l| l.holder == session) {
                    match saved.locks.get(&id) {
                        Some(written) => {
                            row.lock = Some(RowLockHeld {
                                holder: session,
                                uncommitted: written.clone(),
                                no_key: held.no_key,
                            })
                        }
                        None => row.lock = None,
                    }
                }
                if row.committed.is_none() && row.lock.is_none() && row.shared.is_empty() {
                    vanished.push(key.clone());
                }
            }
            for key in vanished {
                table.rows.remove(&key);
            }
        }
    }

    /// A connected session's state.
    pub(super) fn session_mut(&mut self, session: SessionId) -> &mut Session {
        self.sessions
            .get_mut(&session)
            .expect("the session is connected")
    }

    /// Checks the structural invariants in debug builds.
    pub(super) fn debug_check_invariants(&self) {
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Panics if an invariant is broken: locks belong to transaction blocks, waits point at
    /// lock holders, the waits-for graph has no cycle (checking at once), committed wallet
    /// balances are not negative.
    fn check_invariants(&self) {
        self.check_ddl_holds();
        for (name, table) in self.tables.iter() {
            for (key, row) in &table.rows {
                if &**name == WALLETS && table.canonical {
                    if let Some(tuple) = &row.committed {
                        assert!(
                            wallet_of(tuple).balance >= 0,
                            "row {key:?}: negative balance"
                        );
                    }
                }
                let holders = row
                    .lock
                    .iter()
                    .map(|l| l.holder)
                    .chain(row.shared.iter().copied());
                for holder in holders {
                    let state = self.sessions.get(&holder);
                    assert!(
                        state.is_some_and(|s| s.status != TxStatus::Idle),
                        "{name} {key:?}: lock held outside a transaction block"
                    );
                }
                for (at, waiter) in row.waiters.iter().enumerate() {
                    assert!(
                        self.sessions.contains_key(waiter),
                        "{name} {key:?}: {waiter:?} queued but not connected"
                    );
                    assert!(
                        !row.waiters[..at].contains(waiter),
                        "{name} {key:?}: {waiter:?} queued twice"
                    );
                }
            }
        }
        for (at, waiter) in self.table_queue.iter().enumerate() {
            assert!(
                !self.table_queue[..at].contains(waiter),
                "{waiter:?} queued twice for a table lock"
            );
            assert!(
                self.sessions.contains_key(waiter),
                "{waiter:?} queued for a table lock is connected"
            );
        }
        for (&waiter, state) in &self.sessions {
            assert!(
                state.waited_table.is_none() || self.table_queue.contains(&waiter),
                "{waiter:?} waits for a table lock from its place in the queue"
            );
            assert!(
                waiter.0 < self.next_session,
                "session numbers are issued in order"
            );
            let Some(holder) = state.waiting_on else {
                continue;
            };
            if state.waits_for_a_named_lock() {
                // An advisory or table lock wait names the holder it met; it is over once the
                // lock is free
                // (`lock_wait_over`), which the holder may have made it since.
                continue;
            }
            assert!(
                self.tables
                    .values()
                    .any(|table| table.rows.values().any(|row| row
                        .lock
                        .as_ref()
                        .is_some_and(|l| l.holder == holder)
                        || row.shared.contains(&holder)
                        || row.queued_ahead_of(waiter) == Some(holder)))
                    || self
                        .sessions
                        .get(&holder)
                        .is_some_and(|s| !s.catalog_undo.is_empty()),
                "{waiter:?} waits for {holder:?}, which holds no lock or relation and is not \
                 queued ahead"
            );
            assert!(
                self.deadlock_check == DeadlockCheck::OnTimeout
                    || self.wait_cycle(waiter, holder).is_none(),
                "the waits-for graph has a cycle through {waiter:?}"
            );
        }
    }
}

/// Takes (or keeps) `session`'s exclusive lock on `row`, storing a write if there is one.
pub(super) fn lock_row_in(row: &mut Row, session: SessionId, written: Option<Written>) {
    lock_row_in_as(row, session, written, false);
}

/// [`lock_row_in`] with the lock's strength: `no_key` for `FOR NO KEY UPDATE` and an
/// `UPDATE` that changes no key, else `FOR UPDATE`'s; a lock held already keeps the stronger.
pub(super) fn lock_row_in_as(
    row: &mut Row,
    session: SessionId,
    written: Option<Written>,
    no_key: bool,
) {
    let (earlier, earlier_no_key) = match row.lock.take() {
        Some(lock) => {
            assert_eq!(lock.holder, session, "a row lock has one holder");
            (lock.uncommitted, lock.no_key)
        }
        None => (None, true),
    };
    row.lock = Some(RowLockHeld {
        holder: session,
        uncommitted: written.or(earlier),
        no_key: no_key && earlier_no_key,
    });
}

/// A general result in the typed form of `statement`.
fn typed_result(statement: &Statement, result: SqlResult) -> Result<QueryResult, PgError> {
    let mut rows = Vec::new();
    for row in &result.rows {
        let mut ints = Vec::new();
        for value in row {
            match value {
                Value::Int(v) => ints.push(*v),
                other => {
                    return Err(PgError::error(
                        super::error::sqlstate::DATATYPE_MISMATCH,
                        format!(
                            "leaselab: the statement {:?} returned {other:?} where the safeguards \
                             expect a bigint",
                            statement.sql()
                        ),
                    ))
                }
            }
        }
        rows.push(ints);
    }
    let columns = match statement {
        Statement::Select { .. } => vec!["balance", "fence"],
        Statement::Text(_) => result
            .columns
            .iter()
            .map(|(name, _)| crate::intern::static_str(name))
            .collect(),
        _ => Vec::new(),
    };
    Ok(QueryResult {
        columns,
        rows,
        tag: result.tag,
        rows_affected: result.rows_affected,
    })
}

/// How a transaction ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// `COMMIT`: publish and return to idle.
    Commit,
    /// `ROLLBACK` (or disconnect): discard and return to idle.
    Rollback,
    /// An error in the block: discard, release, and refuse statements until `ROLLBACK`.
    Abort,
}

/// `SET balance = $1, fence = $2 WHERE id = .. [AND fence < $2 [AND fence = $3]]` on `row`.
fn fenced_write(row: Wallet, guard: WriteGuard, params: &[i64]) -> Result<Option<Wallet>, PgError> {
    let (balance, fence) = (params[0], params[1]);
    let matches = match guard {
        WriteGuard::Unfenced => true,
        WriteGuard::FenceBelow => row.fence < fence,
        WriteGuard::FenceBelowAndEqual => row.fence < fence && row.fence == params[2],
        WriteGuard::FenceEqual => row.fence == params[2],
    };
    Ok(matches.then_some(Wallet { balance, fence }))
}

/// `SET balance = balance - $1 WHERE id = .. AND balance >= $1` on `row`.
fn debit(row: Wallet, amount: i64) -> Result<Option<Wallet>, PgError> {
    if row.balance < amount {
        return Ok(None);
    }
    let balance = row
        .balance
        .checked_sub(amount)
        .ok_or_else(PgError::bigint_out_of_range)?;
    Ok(Some(Wallet { balance, ..row }))
}

/// The DETAIL of a deadlock error: one line per wait around `cycle`.
/// The number a deadlock's DETAIL gives a table: the stand-in has no object identifiers, so
/// the table's place in the catalogue after PostgreSQL's first user OID.
const FIRST_TABLE_OID: usize = 16384;

/// The number a deadlock's DETAIL gives the database.
const DATABASE_OID: u32 = 16384;

impl Postgres {
    /// PostgreSQL's DETAIL for a deadlock of `cycle`: what each session waits for (a table
    /// lock, or another's transaction, how a row lock wait reads) and whom.
    fn deadlock_detail(&self, cycle: &[SessionId]) -> String {
        assert!(cycle.len() >= 2, "a deadlock involves two sessions or more");
        cycle
            .iter()
            .enumerate()
            .map(|(at, waiter)| {
                let blocker = cycle[(at + 1) % cycle.len()];
                let waited_table = self
                    .sessions
                    .get(waiter)
                    .and_then(|state| state.waited_table.as_ref());
                let what = match waited_table {
                    Some((table, mode)) => {
                        let place = self.tables.keys().position(|name| name == table);
                        format!(
                            "{} on relation {} of database {DATABASE_OID}",
                            mode.lock_name(),
                            FIRST_TABLE_OID + place.unwrap_or(self.tables.len())
                        )
                    }
                    None => format!("ShareLock on transaction {}", blocker.shown_xid()),
                };
                format!(
                    "Process {} waits for {what}; blocked by process {}.",
                    waiter.pid(),
                    blocker.pid()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The result of `SELECT balance, fence` returning `row`, if any.
fn select_result(row: Option<Wallet>) -> QueryResult {
    let rows: Vec<Vec<i64>> = row.map(|w| vec![w.balance, w.fence]).into_iter().collect();
    let count = rows.len() as u64;
    QueryResult {
        columns: vec!["balance", "fence"],
        rows,
        tag: format!("SELECT {count}"),
        rows_affected: count,
    }
}

/// The result of an `UPDATE` that changed `count` rows.
fn update_result(count: u64) -> QueryResult {
    QueryResult {
        columns: Vec::new(),
        rows: Vec::new(),
        tag: format!("UPDATE {count}"),
        rows_affected: count,
    }
}

/// The result of a transaction-control statement.
pub(super) fn command_result(tag: &str) -> QueryResult {
    QueryResult {
        columns: Vec::new(),
        rows: Vec::new(),
        tag: tag.to_string(),
        rows_affected: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL 15, READ COMMITTED: an UPDATE that waited for a concurrent writer and no
    /// longer matches the committed row updates nothing but keeps the row locked until its
    /// transaction ends (a third statement on the row waits for it).
    #[test]
    fn a_resumed_update_that_no_longer_matches_keeps_the_row_lock() {
        let fenced = Statement::WriteFenced {
            id: 1,
            guard: WriteGuard::FenceBelow,
        };
        let mut db = Postgres::new();
        db.seed_wallet(
            1,
            Wallet {
                balance: 100,
                fence: 0,
            },
        );
        let (a, b) = (db.connect(), db.connect());
        let done = |exec: Exec| match exec {
            Exec::Done(Ok(result)) => result.rows_affected,
            other => panic!("{other:?}"),
        };
        done(db.execute(a, &Statement::Begin, &[]));
        assert_eq!(done(db.execute(a, &fenced, &[90, 5])), 1);
        done(db.execute(b, &Statement::Begin, &[]));
        assert_eq!(db.execute(b, &fenced, &[80, 3]), Exec::Blocked { by: a });
        done(db.execute(a, &Statement::Commit, &[]));
        assert_eq!(done(db.execute(b, &fenced, &[80, 3])), 0);
        assert_eq!(db.lock_holder(1), Some(b));
        let debit = Statement::Debit { id: 1 };
        assert_eq!(db.execute(a, &debit, &[10]), Exec::Blocked { by: b });
        done(db.execute(b, &Statement::Rollback, &[]));
        assert_eq!(done(db.execute(a, &debit, &[10])), 1);
        assert_eq!(db.wallet(1).map(|w| w.balance), Some(80));
    }
}
