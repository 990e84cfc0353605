//! Table-level locks: `LOCK TABLE` and the lock every statement takes on the tables it names.
//!
//! As in PostgreSQL 15 (`src/backend/storage/lmgr/lock.c`, `src/include/storage/lockdefs.h`,
//! "Table-Level Locks" in the manual):
//! - eight modes, from `ACCESS SHARE` to `ACCESS EXCLUSIVE`, with PostgreSQL's table of which
//!   conflicts with which ([`TableLockMode::conflicts_with`]); a session never conflicts
//!   with itself;
//! - a `SELECT` takes `ACCESS SHARE` on each table it reads, `SELECT ... FOR UPDATE/SHARE`
//!   `ROW SHARE` on the tables whose rows it locks, `INSERT`/`UPDATE`/`DELETE` `ROW
//!   EXCLUSIVE` on their target, `CREATE INDEX` `SHARE`, `DROP TABLE`, `TRUNCATE` and `DROP
//!   INDEX` `ACCESS EXCLUSIVE`; `LOCK TABLE name [IN mode MODE] [NOWAIT]` takes the mode
//!   named (`ACCESS EXCLUSIVE` when none is), only inside a transaction block (25P01);
//! - locks are held until the transaction ends; `ROLLBACK TO SAVEPOINT` gives back the ones
//!   taken after the savepoint, `RELEASE SAVEPOINT` keeps them;
//! - a request that conflicts with another session's lock waits (as a row lock waits,
//!   deadlocks included); with `NOWAIT` it is 55P03 instead. Waiters queue per table: a new
//!   request that conflicts with the mode a waiter asked for waits behind it, unless its
//!   session holds a lock on the table already (PostgreSQL's wait mask), and a waiter goes on
//!   once nothing it conflicts with is held by another session or asked for by one ahead of
//!   it.
//!
//! A lock that adds nothing to what the session holds (one whose conflicts another mode it
//! holds since the same savepoint or earlier already has: `ACCESS SHARE` beside any other)
//! is not recorded, so that reading a table twice leaves the same state as reading it once.
//! A transaction that fails gives its table locks back at once, as its row locks, and as
//! PostgreSQL's abort does (the failed block holds nothing while it waits for `ROLLBACK`).

use std::sync::Arc;

use super::engine::{Postgres, SessionId};
use super::error::PgError;

/// A table lock mode, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableLockMode {
    /// `ACCESS SHARE`: what a `SELECT` takes.
    AccessShare,
    /// `ROW SHARE`: `SELECT ... FOR UPDATE/SHARE`.
    RowShare,
    /// `ROW EXCLUSIVE`: `INSERT`, `UPDATE`, `DELETE`.
    RowExclusive,
    /// `SHARE UPDATE EXCLUSIVE`.
    ShareUpdateExclusive,
    /// `SHARE`: `CREATE INDEX`.
    Share,
    /// `SHARE ROW EXCLUSIVE`.
    ShareRowExclusive,
    /// `EXCLUSIVE`: only reads go on beside it.
    Exclusive,
    /// `ACCESS EXCLUSIVE`: `DROP TABLE`, `TRUNCATE`, and `LOCK TABLE` without a mode.
    AccessExclusive,
}

impl TableLockMode {
    /// The modes, weakest first.
    pub const ALL: [TableLockMode; 8] = [
        TableLockMode::AccessShare,
        TableLockMode::RowShare,
        TableLockMode::RowExclusive,
        TableLockMode::ShareUpdateExclusive,
        TableLockMode::Share,
        TableLockMode::ShareRowExclusive,
        TableLockMode::Exclusive,
        TableLockMode::AccessExclusive,
    ];

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The modes this one conflicts with, as bits (bit n for the mode n places from `ACCESS
    /// SHARE`): `lock.c`'s `LockConflicts`, one row per mode, weakest first.
    fn conflicts(self) -> u8 {
        const CONFLICTS: [u8; 8] = [
            0b1000_0000, // ACCESS SHARE: ACCESS EXCLUSIVE
            0b1100_0000, // ROW SHARE: EXCLUSIVE and up
            0b1111_0000, // ROW EXCLUSIVE: SHARE and up
            0b1111_1000, // SHARE UPDATE EXCLUSIVE: itself and up
            0b1110_1100, // SHARE: ROW EXCLUSIVE, SHARE UPDATE EXCLUSIVE, SHARE ROW EXCLUSIVE and up
            0b1111_1100, // SHARE ROW EXCLUSIVE: ROW EXCLUSIVE and up
            0b1111_1110, // EXCLUSIVE: ROW SHARE and up
            0b1111_1111, // ACCESS EXCLUSIVE: every mode
        ];
        CONFLICTS[self as usize]
    }

    /// Whether a lock of this mode and one of `other` held by another session conflict.
    pub fn conflicts_with(self, other: TableLockMode) -> bool {
        self.conflicts() & other.bit() != 0
    }

    /// Whether holding `self` already makes every request `other` makes wait (so holding
    /// `other` too changes nothing another session can meet).
    fn covers(self, other: TableLockMode) -> bool {
        other.conflicts() & !self.conflicts() == 0
    }

    /// Whether a lock of this mode conflicts with one a plain `SELECT`, `SELECT ... FOR
    /// UPDATE` or `INSERT`/`UPDATE`/`DELETE` takes: the modes that make the safeguards'
    /// statements wait (`SHARE` and stronger).
    pub fn blocks_row_work(self) -> bool {
        [
            TableLockMode::AccessShare,
            TableLockMode::RowShare,
            TableLockMode::RowExclusive,
        ]
        .iter()
        .any(|&weak| self.conflicts_with(weak))
    }

    /// The name `pg_locks` and a deadlock's DETAIL give it: `AccessShareLock`, ...
    pub fn lock_name(self) -> &'static str {
        match self {
            TableLockMode::AccessShare => "AccessShareLock",
            TableLockMode::RowShare => "RowShareLock",
            TableLockMode::RowExclusive => "RowExclusiveLock",
            TableLockMode::ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            TableLockMode::Share => "ShareLock",
            TableLockMode::ShareRowExclusive => "ShareRowExclusiveLock",
            TableLockMode::Exclusive => "ExclusiveLock",
            TableLockMode::AccessExclusive => "AccessExclusiveLock",
        }
    }

    /// The mode `LOCK TABLE ... IN mode MODE` names (`ACCESS EXCLUSIVE` without one).
    pub fn of_statement(mode: Option<&sqlparser::ast::LockTableMode>) -> TableLockMode {
        use sqlparser::ast::LockTableMode as M;
        match mode {
            Some(M::AccessShare) => TableLockMode::AccessShare,
            Some(M::RowShare) => TableLockMode::RowShare,
            Some(M::RowExclusive) => TableLockMode::RowExclusive,
            Some(M::ShareUpdateExclusive) => TableLockMode::ShareUpdateExclusive,
            Some(M::Share) => TableLockMode::Share,
            Some(M::ShareRowExclusive) => TableLockMode::ShareRowExclusive,
            Some(M::Exclusive) => TableLockMode::Exclusive,
            Some(M::AccessExclusive) | None => TableLockMode::AccessExclusive,
        }
    }
}

/// The table locks one session holds: each table and mode, with the number of savepoints
/// its block had when it took it (0 outside any savepoint), which `ROLLBACK TO SAVEPOINT`
/// reads.
pub(super) type TableHolds = std::collections::BTreeMap<(Arc<str>, TableLockMode), u8>;

/// A lock a statement asks for, which it has to wait for.
pub(super) struct TableWait {
    /// Whom it waits for.
    pub(super) holder: SessionId,
    /// The table and the mode asked for.
    pub(super) table: Arc<str>,
    pub(super) mode: TableLockMode,
}

/// 55P03 for a `NOWAIT` request that would wait.
pub(super) fn not_obtained(table: &str) -> PgError {
    PgError::error(
        "55P03",
        format!("could not obtain lock on relation \"{table}\""),
    )
}

impl Postgres {
    /// The session `session` would wait for to take `mode` on `table` now: another session
    /// holding a conflicting mode, else (when `session` holds no lock on the table) one
    /// queued ahead of it that asked for a conflicting mode.
    pub(super) fn table_lock_blocker(
        &self,
        session: SessionId,
        table: &str,
        mode: TableLockMode,
    ) -> Option<SessionId> {
        let holder = self.sessions.iter().find_map(|(&other, state)| {
            let conflicts = other != session
                && state
                    .table_locks
                    .keys()
                    .any(|(held, held_mode)| &**held == table && mode.conflicts_with(*held_mode));
            conflicts.then_some(other)
        });
        if holder.is_some() {
            return holder;
        }
        let holds_some = self
            .sessions
            .get(&session)
            .is_some_and(|state| state.table_locks.keys().any(|(held, _)| &**held == table));
        if holds_some {
            return None;
        }
        let ahead = match self.table_queue.iter().position(|&s| s == session) {
            Some(at) => &self.table_queue[..at],
            None => &self.table_queue[..],
        };
        ahead.iter().copied().find(|other| {
            self.sessions
                .get(other)
                .and_then(|state| state.waited_table.as_ref())
                .is_some_and(|(waited, waited_mode)| {
                    &**waited == table && mode.conflicts_with(*waited_mode)
                })
        })
    }

    /// Takes the locks `requests` asks for, in order, for `session`'s transaction; the first
    /// that has to wait stops it (the ones before it are kept, as PostgreSQL keeps them while
    /// it waits).
    pub(super) fn take_table_locks(
        &mut self,
        session: SessionId,
        requests: &[(Arc<str>, TableLockMode)],
    ) -> Result<(), TableWait> {
        for (table, mode) in requests {
            if let Some(holder) = self.table_lock_blocker(session, table, *mode) {
                return Err(TableWait {
                    holder,
                    table: table.clone(),
                    mode: *mode,
                });
            }
            self.record_table_lock(session, table, *mode);
        }
        Ok(())
    }

    /// Records that `session` holds `mode` on `table` (unless a mode it holds since the same
    /// savepoint or earlier covers it).
    pub(super) fn record_table_lock(
        &mut self,
        session: SessionId,
        table: &Arc<str>,
        mode: TableLockMode,
    ) {
        let Some(state) = self.sessions.get_mut(&session) else {
            return;
        };
        let level = u8::try_from(state.savepoints.len()).unwrap_or(u8::MAX);
        let covered = state
            .table_locks
            .iter()
            .any(|((held, held_mode), &at)| held == table && at <= level && held_mode.covers(mode));
        if covered {
            return;
        }
        let entry = state
            .table_locks
            .entry((table.clone(), mode))
            .or_insert(level);
        *entry = (*entry).min(level);
    }

    /// Whether `session` holds some lock on `table`.
    pub(super) fn holds_table_lock(&self, session: SessionId, table: &str) -> bool {
        self.sessions
            .get(&session)
            .is_some_and(|state| state.table_locks.keys().any(|(held, _)| &**held == table))
    }

    /// Whether some session holds or waits for a mode that makes a plain statement on a row
    /// wait (the typed statements then take the general path, which checks).
    pub(super) fn any_blocking_table_lock(&self) -> bool {
        !self.table_queue.is_empty()
            || self.sessions.values().any(|state| {
                state
                    .table_locks
                    .keys()
                    .any(|(_, mode)| mode.blocks_row_work())
            })
    }

    /// Gives back the table locks `session` took after its first `depth + 1` savepoints
    /// (`ROLLBACK TO` the savepoint at `depth`).
    pub(super) fn release_table_locks_after(&mut self, session: SessionId, depth: usize) {
        let Some(state) = self.sessions.get_mut(&session) else {
            return;
        };
        let before = state.table_locks.len();
        state
            .table_locks
            .retain(|_, &mut level| usize::from(level) <= depth);
        if state.table_locks.len() != before {
            self.lock_released.0 = true;
        }
    }

    /// The locks taken after the savepoint at `depth` become the block's before it (`RELEASE
    /// SAVEPOINT`).
    pub(super) fn keep_table_locks_at(&mut self, session: SessionId, depth: usize) {
        let Some(state) = self.sessions.get_mut(&session) else {
            return;
        };
        let depth = u8::try_from(depth).unwrap_or(u8::MAX);
        for level in state.table_locks.values_mut() {
            *level = (*level).min(depth);
        }
    }

    /// `session` queues for `mode` on `table` (keeping its place if it is queued already).
    pub(super) fn queue_for_table(
        &mut self,
        session: SessionId,
        table: Arc<str>,
        mode: TableLockMode,
    ) {
        if !self.table_queue.contains(&session) {
            self.table_queue.push(session);
        }
        if let Some(state) = self.sessions.get_mut(&session) {
            state.waited_table = Some((table, mode));
        }
    }

    /// `session` waits for no table lock any more.
    pub(super) fn leave_table_queue(&mut self, session: SessionId) {
        self.table_queue.retain(|&s| s != session);
        if let Some(state) = self.sessions.get_mut(&session) {
            state.waited_table = None;
        }
    }

    /// The table locks held: table, mode and holder, in order (for state hashes).
    pub fn table_lock_holds(&self) -> impl Iterator<Item = (&str, TableLockMode, SessionId, u8)> {
        self.sessions.iter().flat_map(|(&session, state)| {
            state
                .table_locks
                .iter()
                .map(move |((table, mode), &level)| (&**table, *mode, session, level))
        })
    }

    /// The sessions waiting for a table lock, first first, with the table and mode.
    pub fn table_lock_queue(&self) -> impl Iterator<Item = (SessionId, &str, TableLockMode)> {
        self.table_queue.iter().filter_map(|&session| {
            let (table, mode) = self.sessions.get(&session)?.waited_table.as_ref()?;
            Some((session, &**table, *mode))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::TableLockMode::{self, *};

    #[test]
    fn the_conflict_table_is_postgres_and_symmetric() {
        // Rows of the manual's "Conflicting Lock Modes" table, weakest first: an X where the
        // requested mode (row) conflicts with the held one (column).
        let table = [
            "       X", "      XX", "    XXXX", "   XXXXX", "  XX XXX", "  XXXXXX", " XXXXXXX",
            "XXXXXXXX",
        ];
        for (row, line) in TableLockMode::ALL.iter().zip(table) {
            for (column, mark) in TableLockMode::ALL.iter().zip(line.chars()) {
                assert_eq!(
                    row.conflicts_with(*column),
                    mark == 'X',
                    "{row:?} vs {column:?}"
                );
                assert_eq!(
                    row.conflicts_with(*column),
                    column.conflicts_with(*row),
                    "{row:?} vs {column:?}"
                );
            }
        }
        assert!(!AccessShare.blocks_row_work());
        assert!(!ShareUpdateExclusive.blocks_row_work());
        assert!(Share.blocks_row_work() && Exclusive.blocks_row_work());
        assert!(AccessExclusive.blocks_row_work());
        // Any mode covers ACCESS SHARE; ROW SHARE does not cover ROW EXCLUSIVE.
        for mode in TableLockMode::ALL {
            assert!(mode.covers(AccessShare), "{mode:?}");
        }
        assert!(!RowShare.covers(RowExclusive));
        assert!(Exclusive.covers(RowExclusive));
        assert!(!Share.covers(RowExclusive));
    }
}
