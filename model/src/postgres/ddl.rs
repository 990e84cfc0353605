//! DDL inside a transaction block, which PostgreSQL makes part of the transaction: a
//! rollback (of the block, or to a savepoint set before the statement) gives back every
//! table, index and sequence as it was, and until the block ends the relations it changed
//! are its own.
//!
//! Each DDL statement of an open block records what it is about to change in the session's
//! undo log ([`CatalogUndo`]); a commit forgets the log, a rollback (also the abort of a block
//! on an error) replays it backwards, and a savepoint remembers how long it was. The
//! relations named in a block's log are held by it, as PostgreSQL's `ACCESS EXCLUSIVE` lock
//! holds them ([`Postgres::ddl_hold`]): another session's statement that reads or changes
//! one waits for the block to end. A table the block created is not there for the others
//! (42P01, as PostgreSQL's catalogue snapshot does not show it), but creating another under
//! its name waits, as PostgreSQL's unique index on relation names makes it wait.
//!
//! Outside a block a DDL statement is a transaction of its own and nothing is recorded.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::catalog::TableDef;
use super::engine::{Postgres, SessionId, Table, TxStatus};
use super::sequence::Sequence;

/// What one DDL statement of an open block changed, to be given back by a rollback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CatalogUndo {
    /// Table `name` as it was before `change` (None: there was none).
    Table {
        name: Arc<str>,
        before: Option<Table>,
        change: TableChange,
    },
    /// Table `name`'s definition as it was before an index was created or dropped (its rows
    /// did not change).
    Definition {
        name: Arc<str>,
        before: Arc<TableDef>,
    },
    /// Sequence `name` as it was before (None: there was none).
    Sequence {
        name: Arc<str>,
        before: Option<Sequence>,
    },
}

impl CatalogUndo {
    /// The relation the entry holds.
    pub(super) fn name(&self) -> &Arc<str> {
        match self {
            CatalogUndo::Table { name, .. }
            | CatalogUndo::Definition { name, .. }
            | CatalogUndo::Sequence { name, .. } => name,
        }
    }

    /// The relation did not exist before the entry's statement (the block created it).
    fn created(&self) -> bool {
        matches!(
            self,
            CatalogUndo::Table { before: None, .. } | CatalogUndo::Sequence { before: None, .. }
        )
    }
}

impl Hash for CatalogUndo {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            CatalogUndo::Table {
                name,
                before,
                change,
            } => {
                0u8.hash(state);
                name.hash(state);
                change.hash(state);
                before.is_some().hash(state);
                if let Some(table) = before {
                    table.hash_contents(state);
                }
            }
            CatalogUndo::Definition { name, before } => {
                1u8.hash(state);
                name.hash(state);
                before.hash(state);
            }
            CatalogUndo::Sequence { name, before } => {
                2u8.hash(state);
                name.hash(state);
                before.hash(state);
            }
        }
    }
}

/// What a statement did to a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum TableChange {
    Created,
    Dropped,
    /// Its rows removed; `restart`: its column sequences restarted too (`RESTART
    /// IDENTITY`), which a rollback gives back. Otherwise the numbers a column's sequence
    /// gave since stay given, as they do in PostgreSQL.
    Truncated {
        restart: bool,
    },
}

/// How another session's open block holds a relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct DdlHold {
    pub(super) holder: SessionId,
    /// The block created the relation: the others do not see it yet.
    pub(super) created: bool,
}

impl Postgres {
    /// Records `entry` in `session`'s undo log when it is in an open block; outside a block
    /// the statement commits at once and there is nothing to undo.
    pub(super) fn remember_ddl(&mut self, session: SessionId, entry: CatalogUndo) {
        if self.status(session) != Some(TxStatus::InBlock) {
            return;
        }
        debug_assert!(
            self.ddl_hold(session, entry.name()).is_none(),
            "a relation another block holds is never changed"
        );
        self.session_mut(session).catalog_undo.push(entry);
    }

    /// [`Postgres::remember_ddl`] of table `name` as it is now, before `change`, when
    /// `session` is in a block (the table is copied only then).
    pub(super) fn remember_table(&mut self, session: SessionId, name: &str, change: TableChange) {
        if self.status(session) != Some(TxStatus::InBlock) {
            return;
        }
        let before = self.tables.get(name).cloned();
        self.remember_ddl(
            session,
            CatalogUndo::Table {
                name: name.into(),
                before,
                change,
            },
        );
    }

    /// Forgets the entries of `session`'s undo log (its block commits). What the block
    /// dropped is gone for good only now: every session's `currval` of a dropped sequence,
    /// or of a dropped table's column sequence, goes with it (until then a rollback would
    /// give it back, `currval` and all, as PostgreSQL does).
    pub(super) fn commit_ddl(&mut self, session: SessionId) {
        let Some(state) = self.sessions.get_mut(&session) else {
            return;
        };
        for entry in std::mem::take(&mut state.catalog_undo) {
            match entry {
                CatalogUndo::Table {
                    before: Some(table),
                    change: TableChange::Dropped,
                    ..
                } => self.forget_column_sequences(&table.def),
                CatalogUndo::Sequence {
                    name,
                    before: Some(_),
                } => self.forget_sequence(&name),
                _ => {}
            }
        }
    }

    /// [`Postgres::remember_ddl`] of table `name`'s definition as it is now.
    pub(super) fn remember_definition(&mut self, session: SessionId, name: &str) {
        if let Some(table) = self.tables.get(name) {
            let before = table.def.clone();
            self.remember_ddl(
                session,
                CatalogUndo::Definition {
                    name: name.into(),
                    before,
                },
            );
        }
    }

    /// [`Postgres::remember_ddl`] of sequence `name` as it is now.
    pub(super) fn remember_sequence(&mut self, session: SessionId, name: &str) {
        let before = self.sequences.get(name).cloned();
        self.remember_ddl(
            session,
            CatalogUndo::Sequence {
                name: name.into(),
                before,
            },
        );
    }

    /// Gives back, latest first, what `session`'s DDL changed after the first `kept`
    /// entries of its undo log, and forgets those entries.
    pub(super) fn undo_ddl(&mut self, session: SessionId, kept: usize) {
        let Some(state) = self.sessions.get_mut(&session) else {
            return;
        };
        if state.catalog_undo.len() <= kept {
            return;
        }
        let undone = state.catalog_undo.split_off(kept);
        for entry in undone.into_iter().rev() {
            match entry {
                CatalogUndo::Table {
                    name, before: None, ..
                } => {
                    self.tables_mut().remove(&name);
                }
                CatalogUndo::Table {
                    name,
                    before: Some(mut table),
                    change,
                } => {
                    let restart = change == (TableChange::Truncated { restart: true });
                    // A session queued for one of its rows while it was away may have stopped
                    // waiting since (a timeout, a disconnect): only those still waiting keep
                    // their place, or the queue would hold the others back for ever.
                    for row in table.rows.values_mut() {
                        row.waiters.retain(|waiter| {
                            self.sessions
                                .get(waiter)
                                .is_some_and(|state| state.waiting_on.is_some())
                        });
                    }
                    let tables = self.tables_mut();
                    if let (false, Some(live)) = (restart, tables.get_mut(&name)) {
                        // Numbers a column's sequence gave are never given back.
                        table.sequences = std::mem::take(&mut live.sequences);
                    }
                    tables.insert(name, table);
                }
                CatalogUndo::Definition { name, before } => {
                    let table = self.tables_mut().get_mut(&name);
                    let table = table.expect("a table the block holds is there");
                    table.def = before;
                }
                CatalogUndo::Sequence { name, before: None } => {
                    self.sequences.remove(&name);
                }
                CatalogUndo::Sequence {
                    name,
                    before: Some(sequence),
                } => {
                    self.sequences.insert(name, sequence);
                }
            }
        }
    }

    /// The open block of a session other than `session` that holds relation `name` by DDL.
    pub(super) fn ddl_hold(&self, session: SessionId, name: &str) -> Option<DdlHold> {
        self.ddl_holds(session)
            .into_iter()
            .find_map(|(held, hold)| (*held == *name).then_some(hold))
    }

    /// Every relation held by the open block of a session other than `session`, by name
    /// (empty, and free, when no block has run DDL).
    pub(super) fn ddl_holds(&self, session: SessionId) -> Vec<(Arc<str>, DdlHold)> {
        let mut holds: Vec<(Arc<str>, DdlHold)> = Vec::new();
        for (&holder, state) in &self.sessions {
            if holder == session {
                continue;
            }
            for entry in &state.catalog_undo {
                if holds.iter().all(|(name, _)| name != entry.name()) {
                    let hold = DdlHold {
                        holder,
                        created: entry.created(),
                    };
                    holds.push((entry.name().clone(), hold));
                }
            }
        }
        holds
    }

    /// True when some open block holds a relation by DDL.
    pub(super) fn any_ddl_hold(&self) -> bool {
        self.sessions
            .values()
            .any(|state| !state.catalog_undo.is_empty())
    }

    /// Checks that no relation is held by two blocks, and that only open blocks hold any (a
    /// failed one still holds what it changed before its innermost savepoint).
    pub(super) fn check_ddl_holds(&self) {
        let mut seen: Vec<(&Arc<str>, SessionId)> = Vec::new();
        for (&holder, state) in &self.sessions {
            assert!(
                state.catalog_undo.is_empty() || state.status != TxStatus::Idle,
                "only an open block holds relations by DDL"
            );
            for entry in &state.catalog_undo {
                let name = entry.name();
                assert!(
                    seen.iter().all(|&(n, h)| n != name || h == holder),
                    "relation {name} is held by two blocks"
                );
                seen.push((name, holder));
            }
        }
    }
}
