//! Redis's 16 databases (`databases 16`, the default): `SELECT`, `MOVE`, `SWAPDB`, `COPY`'s
//! `DB` option, `FLUSHDB`/`FLUSHALL`, and the databases `INFO` lists.
//!
//! The selected database's keys are [`Redis`]'s `keyspace` (with its watched keys' write
//! counts, `watch_touches`); every other database that holds anything waits in `other_dbs`.
//! A connection's command runs with its database swapped in ([`Redis::switch_to`]), so every
//! command works in any database as it works in database 0. Between calls database 0 is the
//! one in place, and a server whose keys are all in database 0 has an empty `other_dbs`, which
//! costs no allocation and is not hashed: it clones, compares and hashes as it did before
//! databases were kept.
//!
//! Watched keys belong to the database they were watched in. `FLUSHDB`, `FLUSHALL` and
//! `SWAPDB` count as a write to each watched key they change (Redis 7.0's
//! `touchAllWatchedKeysInDb`: a key present in the emptied database, or for `SWAPDB` in either
//! one, and not expired).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::{Entry, Redis};
use crate::redis::command::{integer_arg, parse_i64, NOT_AN_INTEGER_ERROR};
use crate::redis::replication::Effect;
use crate::redis::reply::Reply;

/// How many databases there are (Redis's `databases` default).
pub const DATABASES: u8 = 16;

/// `ERR DB index is out of range`.
const OUT_OF_RANGE_ERROR: &str = "ERR DB index is out of range";

/// `getIntFromObjectOrReply`'s error for an integer outside C's `int`.
const NOT_AN_INT_ERROR: &str =
    "ERR value is out of range, value must between -2147483648 and 2147483647";

/// One database's keys.
pub(super) type Keyspace = BTreeMap<Arc<[u8]>, Entry>;

/// How often each key some session ever `WATCH`ed in a database was written since.
pub(super) type WatchTouches = BTreeMap<Vec<u8>, u64>;

/// A database that is not the selected one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Db {
    keyspace: Keyspace,
    watch_touches: WatchTouches,
}

impl Db {
    fn is_empty(&self) -> bool {
        self.keyspace.is_empty() && self.watch_touches.is_empty()
    }
}

/// The databases other than the selected one that hold keys or watched keys, by index. Empty
/// when every key is in database 0, and then not hashed at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct OtherDbs(BTreeMap<u8, Db>);

impl Hash for OtherDbs {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if !self.0.is_empty() {
            self.0.hash(state);
        }
    }
}

impl OtherDbs {
    /// The same databases with their keys only (no watched keys): what a replica that
    /// resynchronised, or a restart, starts from.
    pub(super) fn keys_only(&self) -> OtherDbs {
        OtherDbs(
            self.0
                .iter()
                .filter(|(_, db)| !db.keyspace.is_empty())
                .map(|(&index, db)| {
                    let keys = Db {
                        keyspace: db.keyspace.clone(),
                        watch_touches: WatchTouches::new(),
                    };
                    (index, keys)
                })
                .collect(),
        )
    }

    /// Empties every database's keys, keeping their watched keys' counts.
    pub(super) fn clear_keys(&mut self) {
        for db in self.0.values_mut() {
            db.keyspace.clear();
        }
        self.0.retain(|_, db| !db.is_empty());
    }

    /// Takes the keys of `other`'s databases in place of these ones', keeping the watched
    /// keys' counts here.
    pub(super) fn replace_keys(&mut self, other: &OtherDbs) {
        self.clear_keys();
        for (&index, db) in &other.0 {
            if !db.keyspace.is_empty() {
                self.0.entry(index).or_default().keyspace = db.keyspace.clone();
            }
        }
    }
}

/// A database index that hashes as nothing when it is 0 (a session, or a watched key, of
/// database 0 hashes as it did before databases were kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct DbIndex(pub(super) u8);

impl Hash for DbIndex {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if self.0 != 0 {
            state.write_u8(self.0);
        }
    }
}

/// A database index as `SELECT`, `MOVE` and `COPY ... DB` read it (`getIntFromObjectOrReply`):
/// the index, or `None` when it names no database; an error when it is not a C `int`.
fn db_index_arg(bytes: &[u8]) -> Result<Option<u8>, Reply> {
    let index = integer_arg(bytes)?;
    if i32::try_from(index).is_err() {
        return Err(Reply::error(NOT_AN_INT_ERROR));
    }
    Ok(u8::try_from(index).ok().filter(|&db| db < DATABASES))
}

/// Counts a write to each key of `touches` that `keyspace`, or `also`, holds and that has not
/// expired at `now_ms` (a key already expired was gone for its watchers; their `EXEC` sees
/// that anyway, see `transaction_command`).
fn touch_present(
    touches: &mut WatchTouches,
    keyspace: &Keyspace,
    also: Option<&Keyspace>,
    now_ms: u64,
) {
    let live = |keyspace: &Keyspace, key: &[u8]| {
        keyspace
            .get(key)
            .is_some_and(|entry| !entry.is_expired_at(now_ms))
    };
    for (key, count) in touches.iter_mut() {
        if live(keyspace, key) || also.is_some_and(|also| live(also, key)) {
            *count += 1;
        }
    }
}

impl Redis {
    /// Puts database `db` in place (`keyspace`, `watch_touches`), the one there before into
    /// `other_dbs` (unless it holds nothing).
    pub(super) fn switch_to(&mut self, db: u8) {
        if db == self.selected.0 {
            return;
        }
        let out = Db {
            keyspace: std::mem::take(&mut self.keyspace),
            watch_touches: std::mem::take(&mut self.watch_touches),
        };
        if !out.is_empty() {
            self.other_dbs.0.insert(self.selected.0, out);
        }
        let into = self.other_dbs.0.remove(&db).unwrap_or_default();
        self.keyspace = into.keyspace;
        self.watch_touches = into.watch_touches;
        self.selected = DbIndex(db);
    }

    /// The selected database.
    pub(super) fn selected_db(&self) -> u8 {
        self.selected.0
    }

    /// Runs `f` with database `db` in place, then puts back the one selected before.
    pub(super) fn in_db<R>(&mut self, db: u8, f: impl FnOnce(&mut Redis) -> R) -> R {
        let before = self.selected.0;
        self.switch_to(db);
        let result = f(self);
        self.switch_to(before);
        result
    }

    /// Database `db`'s keys and watched keys' counts, if it has any, without selecting it.
    pub(super) fn db_of(&self, db: u8) -> (Option<&Keyspace>, Option<&WatchTouches>) {
        if db == self.selected.0 {
            return (Some(&self.keyspace), Some(&self.watch_touches));
        }
        match self.other_dbs.0.get(&db) {
            Some(other) => (Some(&other.keyspace), Some(&other.watch_touches)),
            None => (None, None),
        }
    }

    /// Every database that holds keys, in order of index, with its keys.
    pub(super) fn databases(&self) -> impl Iterator<Item = (u8, &Keyspace)> {
        (0..DATABASES).filter_map(|db| {
            self.db_of(db)
                .0
                .filter(|keyspace| !keyspace.is_empty())
                .map(|keyspace| (db, keyspace))
        })
    }

    /// `SELECT index` (`selectCommand`): in cluster mode only 0; the connection's database
    /// is the one selected when its command ends.
    pub(super) fn select(&mut self, index: Option<i64>) -> Reply {
        match index {
            Some(index) if self.cluster_mode && index != 0 => {
                Reply::error("ERR SELECT is not allowed in cluster mode")
            }
            Some(index) => match u8::try_from(index).ok().filter(|&db| db < DATABASES) {
                Some(db) => {
                    self.switch_to(db);
                    Reply::ok()
                }
                None => Reply::error(OUT_OF_RANGE_ERROR),
            },
            None => Reply::error(NOT_AN_INTEGER_ERROR),
        }
    }

    /// `MOVE key db` (`moveCommand`): 1 when the key (with its TTL) moved to database `db`,
    /// 0 when it is missing here or exists there. The index is checked first, then that it
    /// names another database.
    pub(super) fn move_key(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        if self.cluster_mode {
            return Reply::error("ERR MOVE is not allowed in cluster mode");
        }
        let target = match db_index_arg(&argv[2]) {
            Ok(Some(target)) => target,
            Ok(None) => return Reply::error(OUT_OF_RANGE_ERROR),
            Err(error) => return error,
        };
        if target == self.selected.0 {
            return Reply::error("ERR source and destination objects are the same");
        }
        let key = &argv[1];
        let Some(entry) = self.lookup(key, now_ms) else {
            return Reply::Integer(0);
        };
        let moved = self.in_db(target, |redis| {
            if redis.lookup(key, now_ms).is_some() {
                return false;
            }
            redis.write_entry(key, entry);
            true
        });
        if !moved {
            return Reply::Integer(0);
        }
        self.delete_key(key);
        Reply::Integer(1)
    }

    /// `COPY`'s `DB index` option (`copyCommand`): the database, or the error Redis gives.
    pub(super) fn copy_target(&self, index: &[u8]) -> Result<u8, Reply> {
        match db_index_arg(index)? {
            Some(db) => Ok(db),
            None => Err(Reply::error(OUT_OF_RANGE_ERROR)),
        }
    }

    /// `SWAPDB index1 index2` (`swapdbCommand`): the two databases trade their keys;
    /// connections stay on their index and see the other keys. Refused in cluster mode before
    /// the indexes are read; each must be a C `int` (`invalid first|second DB index`), then
    /// both in range.
    pub(super) fn swapdb(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        if self.cluster_mode {
            return Reply::error("ERR SWAPDB is not allowed in cluster mode");
        }
        let read = |bytes: &[u8], which: &str| {
            parse_i64(bytes)
                .and_then(|index| i32::try_from(index).ok())
                .ok_or_else(|| Reply::error(format!("ERR invalid {which} DB index")))
        };
        let (first, second) = match (read(&argv[1], "first"), read(&argv[2], "second")) {
            (Ok(first), Ok(second)) => (first, second),
            (Err(error), _) | (_, Err(error)) => return error,
        };
        let in_range = |index: i32| u8::try_from(index).ok().filter(|&db| db < DATABASES);
        let (Some(first), Some(second)) = (in_range(first), in_range(second)) else {
            return Reply::error(OUT_OF_RANGE_ERROR);
        };
        if first == second {
            return Reply::ok();
        }
        let first_keys = self.in_db(first, |redis| std::mem::take(&mut redis.keyspace));
        let second_keys = self.in_db(second, |redis| std::mem::take(&mut redis.keyspace));
        self.in_db(first, |redis| {
            touch_present(
                &mut redis.watch_touches,
                &first_keys,
                Some(&second_keys),
                now_ms,
            );
        });
        self.in_db(second, |redis| {
            touch_present(
                &mut redis.watch_touches,
                &second_keys,
                Some(&first_keys),
                now_ms,
            );
            redis.keyspace = first_keys;
        });
        self.in_db(first, |redis| redis.keyspace = second_keys);
        self.record(|_| Effect::SwapDb { first, second });
        Reply::ok()
    }

    /// `FLUSHDB` (the selected database) or `FLUSHALL` (every one). A watched key counts as
    /// written if it was there and not expired.
    pub(super) fn flush(&mut self, all: bool, now_ms: u64) -> Reply {
        touch_present(&mut self.watch_touches, &self.keyspace, None, now_ms);
        self.keyspace.clear();
        if all {
            for db in self.other_dbs.0.values_mut() {
                touch_present(&mut db.watch_touches, &db.keyspace, None, now_ms);
            }
            self.other_dbs.clear_keys();
            self.record(|_| Effect::FlushAll);
        } else {
            self.record(|db| Effect::FlushDb { db });
        }
        Reply::ok()
    }

    /// A replica applying `SWAPDB`: the keys trade places (nothing counts as written: a
    /// replica's applied effects never do).
    pub(super) fn swap_keys(&mut self, first: u8, second: u8) {
        if first == second {
            return;
        }
        let first_keys = self.in_db(first, |redis| std::mem::take(&mut redis.keyspace));
        let second_keys = self.in_db(second, |redis| {
            std::mem::replace(&mut redis.keyspace, first_keys)
        });
        self.in_db(first, |redis| redis.keyspace = second_keys);
    }
}
