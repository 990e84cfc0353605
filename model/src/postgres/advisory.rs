//! Advisory locks: `pg_advisory_lock` and its family, the lock a PostgreSQL user takes
//! without a row (a leader election, a job that must run once, a mutex around work outside
//! the database).
//!
//! As in PostgreSQL 15 (`src/backend/utils/adt/lockfuncs.c`):
//! - a lock is named by one `bigint` or by two `integer`s; the two forms are separate names
//!   (`pg_advisory_lock(1)` and `pg_advisory_lock(0, 1)` do not conflict);
//! - exclusive locks conflict with every other session's lock of the name, shared ones with
//!   other sessions' exclusive ones only; a session never conflicts with itself;
//! - session-level locks (`pg_advisory_lock`, `pg_try_advisory_lock`, ..._shared) count: each
//!   call takes the lock once more and each `pg_advisory_unlock` gives one back; they outlive
//!   a rollback and go when the session ends or `pg_advisory_unlock_all()` runs;
//!   `pg_advisory_unlock` of a lock the session does not hold answers false with PostgreSQL's
//!   WARNING;
//! - transaction-level locks (`pg_advisory_xact_lock`, ...) go when the transaction ends (at
//!   once for a statement outside a block) and cannot be unlocked;
//! - `pg_advisory_lock` waits for a conflicting lock (as a row lock waits, deadlocks
//!   included); the `pg_try_` forms answer false instead.
//!
//! The stand-in runs these functions in a `SELECT` list without `FROM` (how lock users call
//! them); elsewhere they are 0A000. A statement with several calls that has to wait undoes the
//! calls before the one that waits and runs them again when it resumes (PostgreSQL keeps
//! them while it waits).

use std::collections::BTreeMap;

use super::engine::{Postgres, SessionId, TxStatus};
use super::error::PgNotice;
use super::value::Value;

/// The name of an advisory lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdvisoryKey {
    /// `pg_advisory_lock(bigint)`.
    Big(i64),
    /// `pg_advisory_lock(integer, integer)`.
    Pair(i32, i32),
}

/// Exclusive or shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdvisoryMode {
    /// `pg_advisory_lock` and the other names without `_shared`.
    Exclusive,
    /// The `_shared` functions.
    Shared,
}

/// What one call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdvisoryAction {
    /// Take the lock, waiting for it (`pg_advisory_lock`, `pg_advisory_xact_lock`, ...).
    Lock,
    /// Take the lock if free, else answer false (`pg_try_advisory_lock`, ...).
    TryLock,
    /// Give one session-level hold back (`pg_advisory_unlock`, `..._shared`).
    Unlock,
    /// Give every session-level hold back (`pg_advisory_unlock_all()`).
    UnlockAll,
}

/// An advisory lock function, as the analyser recognised it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AdvisoryFn {
    /// What it does.
    pub action: AdvisoryAction,
    /// Exclusive or shared.
    pub mode: AdvisoryMode,
    /// Held until the transaction ends (`_xact_`), else until the session ends.
    pub xact: bool,
}

impl AdvisoryFn {
    /// The function a name calls, if it is one of the family.
    pub fn parse(name: &str) -> Option<AdvisoryFn> {
        if name == "pg_advisory_unlock_all" {
            return Some(AdvisoryFn {
                action: AdvisoryAction::UnlockAll,
                mode: AdvisoryMode::Exclusive,
                xact: false,
            });
        }
        let rest = name.strip_prefix("pg_")?;
        let (action, rest) = if let Some(rest) = rest.strip_prefix("try_advisory_") {
            (AdvisoryAction::TryLock, rest)
        } else if let Some(rest) = rest.strip_prefix("advisory_unlock") {
            (AdvisoryAction::Unlock, rest)
        } else {
            (AdvisoryAction::Lock, rest.strip_prefix("advisory_")?)
        };
        let (xact, rest) = match rest.strip_prefix("xact_") {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        let rest = if action == AdvisoryAction::Unlock {
            rest
        } else {
            rest.strip_prefix("lock")?
        };
        let mode = match rest {
            "" => AdvisoryMode::Exclusive,
            "_shared" => AdvisoryMode::Shared,
            _ => return None,
        };
        if xact && action == AdvisoryAction::Unlock {
            return None;
        }
        Some(AdvisoryFn { action, mode, xact })
    }

    /// True when the function answers `boolean` (the `try` and `unlock` forms); the others
    /// answer `void`.
    pub fn answers_boolean(self) -> bool {
        matches!(
            self.action,
            AdvisoryAction::TryLock | AdvisoryAction::Unlock
        )
    }
}

/// How often one session holds one lock, per level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Holds {
    pub(super) session: u32,
    pub(super) xact: u32,
}

impl Holds {
    fn is_empty(self) -> bool {
        self.session == 0 && self.xact == 0
    }
}

/// Who holds one advisory lock name, and how.
pub(super) type AdvisoryLocks = BTreeMap<(AdvisoryKey, AdvisoryMode, SessionId), Holds>;

/// Whether a lock was let go since a server last asked (`Postgres::take_lock_released`): a signal to the driver,
/// not part of the state (every value compares and hashes alike).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Released(pub(super) bool);

impl PartialEq for Released {
    fn eq(&self, _: &Released) -> bool {
        true
    }
}

impl Eq for Released {}

/// What a call answered, or that it has to wait.
pub(super) enum CallOutcome {
    /// The value (`void` calls answer an empty text) and a WARNING to send, if any.
    Done(Value, Option<PgNotice>),
    /// A conflicting lock is held by this session.
    Wait(SessionId),
}

impl Postgres {
    /// A session holding `key` in a mode that conflicts with `mode`, other than `session`.
    pub(super) fn advisory_conflict(
        &self,
        session: SessionId,
        key: AdvisoryKey,
        mode: AdvisoryMode,
    ) -> Option<SessionId> {
        self.advisory
            .iter()
            .filter(|((k, held_mode, holder), holds)| {
                *k == key
                    && *holder != session
                    && !holds.is_empty()
                    && (mode == AdvisoryMode::Exclusive || *held_mode == AdvisoryMode::Exclusive)
            })
            .map(|((_, _, holder), _)| *holder)
            .next()
    }

    /// Runs one advisory function for `session` (`key` is `None` for `unlock_all`, or for a
    /// NULL argument: the functions are strict and answer NULL without doing anything).
    pub(super) fn advisory_call(
        &mut self,
        session: SessionId,
        function: AdvisoryFn,
        key: Option<AdvisoryKey>,
    ) -> CallOutcome {
        let void = || Value::Text(String::new());
        if function.action == AdvisoryAction::UnlockAll {
            self.release_session_holds(session);
            return CallOutcome::Done(void(), None);
        }
        let Some(key) = key else {
            return CallOutcome::Done(Value::Null, None);
        };
        let mode = function.mode;
        match function.action {
            AdvisoryAction::Lock | AdvisoryAction::TryLock => {
                if let Some(holder) = self.advisory_conflict(session, key, mode) {
                    return if function.action == AdvisoryAction::Lock {
                        CallOutcome::Wait(holder)
                    } else {
                        CallOutcome::Done(Value::Bool(false), None)
                    };
                }
                // Outside a block a transaction-level lock ends with the statement: nothing to
                // record.
                let in_block = self.status(session) != Some(TxStatus::Idle);
                if !function.xact || in_block {
                    let holds = self.advisory.entry((key, mode, session)).or_default();
                    if function.xact {
                        holds.xact += 1;
                    } else {
                        holds.session += 1;
                    }
                }
                let answer = if function.action == AdvisoryAction::TryLock {
                    Value::Bool(true)
                } else {
                    void()
                };
                CallOutcome::Done(answer, None)
            }
            AdvisoryAction::Unlock => {
                let held = self
                    .advisory
                    .get_mut(&(key, mode, session))
                    .filter(|holds| holds.session > 0);
                let Some(holds) = held else {
                    let lock_type = match mode {
                        AdvisoryMode::Exclusive => "ExclusiveLock",
                        AdvisoryMode::Shared => "ShareLock",
                    };
                    let warning = PgNotice::warning(
                        "01000",
                        format!("you don't own a lock of type {lock_type}"),
                    );
                    return CallOutcome::Done(Value::Bool(false), Some(warning));
                };
                holds.session -= 1;
                if holds.is_empty() {
                    self.advisory.remove(&(key, mode, session));
                }
                self.lock_released.0 = true;
                CallOutcome::Done(Value::Bool(true), None)
            }
            AdvisoryAction::UnlockAll => unreachable!("handled above"),
        }
    }

    /// Gives back `session`'s transaction-level locks: its transaction ended.
    pub(super) fn release_xact_holds(&mut self, session: SessionId) {
        self.release_holds(session, |holds| holds.xact = 0);
    }

    /// Gives back `session`'s session-level locks (`pg_advisory_unlock_all()`).
    fn release_session_holds(&mut self, session: SessionId) {
        self.release_holds(session, |holds| holds.session = 0);
    }

    /// Gives back every lock `session` holds: it disconnected.
    pub(super) fn release_all_holds(&mut self, session: SessionId) {
        self.release_holds(session, |holds| *holds = Holds::default());
    }

    fn release_holds(&mut self, session: SessionId, release: impl Fn(&mut Holds)) {
        if self.advisory.is_empty() {
            return;
        }
        let before = self.advisory.clone();
        for ((_, _, holder), holds) in self.advisory.iter_mut() {
            if *holder == session {
                release(holds);
            }
        }
        self.advisory.retain(|_, h| !h.is_empty());
        if self.advisory != before {
            self.lock_released.0 = true;
        }
    }

    /// Takes the flag set whenever a lock was let go without a transaction ending since the
    /// last call (a session-level advisory lock; table locks given back by `ROLLBACK TO
    /// SAVEPOINT` or a table queue left): a server driving waiting sessions wakes them then.
    pub fn take_lock_released(&mut self) -> bool {
        std::mem::take(&mut self.lock_released.0)
    }

    /// The advisory locks held: name, mode, holder, session-level and transaction-level
    /// counts, in order (for state hashes and inspection).
    pub fn advisory_holds(
        &self,
    ) -> impl Iterator<Item = (AdvisoryKey, AdvisoryMode, SessionId, u32, u32)> + '_ {
        self.advisory
            .iter()
            .map(|((key, mode, session), holds)| (*key, *mode, *session, holds.session, holds.xact))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_of_the_family_parses() {
        let named = |name: &str| AdvisoryFn::parse(name).map(|f| (f.action, f.mode, f.xact));
        use AdvisoryAction::*;
        use AdvisoryMode::*;
        assert_eq!(named("pg_advisory_lock"), Some((Lock, Exclusive, false)));
        assert_eq!(
            named("pg_advisory_lock_shared"),
            Some((Lock, Shared, false))
        );
        assert_eq!(
            named("pg_advisory_xact_lock"),
            Some((Lock, Exclusive, true))
        );
        assert_eq!(
            named("pg_advisory_xact_lock_shared"),
            Some((Lock, Shared, true))
        );
        assert_eq!(
            named("pg_try_advisory_lock"),
            Some((TryLock, Exclusive, false))
        );
        assert_eq!(
            named("pg_try_advisory_lock_shared"),
            Some((TryLock, Shared, false))
        );
        assert_eq!(
            named("pg_try_advisory_xact_lock"),
            Some((TryLock, Exclusive, true))
        );
        assert_eq!(
            named("pg_try_advisory_xact_lock_shared"),
            Some((TryLock, Shared, true))
        );
        assert_eq!(
            named("pg_advisory_unlock"),
            Some((Unlock, Exclusive, false))
        );
        assert_eq!(
            named("pg_advisory_unlock_shared"),
            Some((Unlock, Shared, false))
        );
        assert_eq!(
            named("pg_advisory_unlock_all"),
            Some((UnlockAll, Exclusive, false))
        );
        for not_one in [
            "pg_advisory_xact_unlock",
            "pg_advisory_locks",
            "pg_advisory",
            "advisory_lock",
            "pg_try_advisory_unlock",
        ] {
            assert_eq!(named(not_one), None, "{not_one}");
        }
    }
}
