//! Replication: the effects a primary streams to its replicas.
//!
//! Redis replicates asynchronously: a primary acknowledges a write before any replica has it.
//! A failover promotes a replica and loses whatever had not reached it — lock keys and
//! fence-counter INCRs included.
//!
//! Each change to a key names its database (`db`, 0 to 15), as Redis's stream puts a `SELECT`
//! before the commands of another database, so a replica or an AOF reload applies it there.

use std::hash::{Hash, Hasher};

use super::collection::Collection;

/// One change a primary made, as it is propagated (scripts by their effects; `PX` as an
/// absolute `PXAT`; an expired key as a synthesised `DEL`).
///
/// Hashing leaves out a `db` of 0, so the effects of a server that uses database 0 only hash
/// as they did before databases were kept.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// The key now holds `value`, expiring at `expire_at_ms` (absolute, server clock) if set.
    Set {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
        /// Absolute expiry in ms on the primary's clock, or none.
        expire_at_ms: Option<u64>,
        /// The key's database.
        db: u8,
    },
    /// The key was deleted (explicitly, or expired on the primary).
    Del {
        /// The key.
        key: Vec<u8>,
        /// The key's database.
        db: u8,
    },
    /// The key's expiry changed to `expire_at_ms`.
    Expire {
        /// The key.
        key: Vec<u8>,
        /// Absolute expiry in ms.
        expire_at_ms: u64,
        /// The key's database.
        db: u8,
    },
    /// The key now holds this hash, list, set or sorted set (the whole collection after a
    /// write to it), expiring at `expire_at_ms` if set.
    Collection {
        /// The key.
        key: Vec<u8>,
        /// The collection, never empty.
        value: Collection,
        /// Absolute expiry in ms on the primary's clock, or none.
        expire_at_ms: Option<u64>,
        /// The key's database.
        db: u8,
    },
    /// Every database was emptied (`FLUSHALL`). Script cache flushes are not replicated:
    /// every server has its own cache, and a promoted replica starts with an empty one.
    FlushAll,
    /// Database `db` was emptied (`FLUSHDB`).
    FlushDb {
        /// The database.
        db: u8,
    },
    /// Two databases traded their keys (`SWAPDB`).
    SwapDb {
        /// One database.
        first: u8,
        /// The other.
        second: u8,
    },
}

impl Hash for Effect {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let db_unless_0 = |db: u8, state: &mut H| {
            if db != 0 {
                state.write_u8(db);
            }
        };
        std::mem::discriminant(self).hash(state);
        match self {
            Effect::Set {
                key,
                value,
                expire_at_ms,
                db,
            } => {
                key.hash(state);
                value.hash(state);
                expire_at_ms.hash(state);
                db_unless_0(*db, state);
            }
            Effect::Del { key, db } => {
                key.hash(state);
                db_unless_0(*db, state);
            }
            Effect::Expire {
                key,
                expire_at_ms,
                db,
            } => {
                key.hash(state);
                expire_at_ms.hash(state);
                db_unless_0(*db, state);
            }
            Effect::Collection {
                key,
                value,
                expire_at_ms,
                db,
            } => {
                key.hash(state);
                value.hash(state);
                expire_at_ms.hash(state);
                db_unless_0(*db, state);
            }
            Effect::FlushAll => {}
            Effect::FlushDb { db } => db.hash(state),
            Effect::SwapDb { first, second } => {
                first.hash(state);
                second.hash(state);
            }
        }
    }
}

impl Effect {
    /// The effect as a person reads it, e.g. `SET fence:{wallet:42} "33"` or
    /// `DEL lock:{wallet:42}`; a key of a database other than 0 says which, e.g.
    /// `DEL lock:{wallet:42} in db 3`.
    pub fn describe(&self) -> String {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let (change, db) = match self {
            Effect::Set {
                key,
                value,
                expire_at_ms,
                db,
            } => match expire_at_ms {
                Some(at) => (
                    format!("SET {} \"{}\" PXAT {at}", text(key), text(value)),
                    *db,
                ),
                None => (format!("SET {} \"{}\"", text(key), text(value)), *db),
            },
            Effect::Del { key, db } => (format!("DEL {}", text(key)), *db),
            Effect::Expire {
                key,
                expire_at_ms,
                db,
            } => (format!("PEXPIREAT {} {expire_at_ms}", text(key)), *db),
            Effect::Collection {
                key,
                value,
                expire_at_ms,
                db,
            } => {
                let whole = value.describe(&text(key));
                match expire_at_ms {
                    Some(at) => (format!("{whole} PXAT {at}"), *db),
                    None => (whole, *db),
                }
            }
            Effect::FlushAll => ("FLUSHALL".to_string(), 0),
            Effect::FlushDb { db } => ("FLUSHDB".to_string(), *db),
            Effect::SwapDb { first, second } => (format!("SWAPDB {first} {second}"), 0),
        };
        if db == 0 {
            change
        } else {
            format!("{change} in db {db}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    /// `Effect` as it was before databases were kept, with the derived hash.
    #[derive(Hash)]
    enum Before {
        Set {
            key: Vec<u8>,
            value: Vec<u8>,
            expire_at_ms: Option<u64>,
        },
        Del {
            key: Vec<u8>,
        },
        Expire {
            key: Vec<u8>,
            expire_at_ms: u64,
        },
        Collection {
            key: Vec<u8>,
            value: Collection,
            expire_at_ms: Option<u64>,
        },
        FlushAll,
    }

    fn hash_of(value: &impl Hash) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn an_effect_in_database_0_hashes_as_before() {
        let key = || b"k".to_vec();
        let list = || Collection::List([b"a".to_vec()].into_iter().collect());
        let pairs = [
            (
                Effect::Set {
                    key: key(),
                    value: b"v".to_vec(),
                    expire_at_ms: Some(5),
                    db: 0,
                },
                Before::Set {
                    key: key(),
                    value: b"v".to_vec(),
                    expire_at_ms: Some(5),
                },
            ),
            (
                Effect::Del { key: key(), db: 0 },
                Before::Del { key: key() },
            ),
            (
                Effect::Expire {
                    key: key(),
                    expire_at_ms: 9,
                    db: 0,
                },
                Before::Expire {
                    key: key(),
                    expire_at_ms: 9,
                },
            ),
            (
                Effect::Collection {
                    key: key(),
                    value: list(),
                    expire_at_ms: None,
                    db: 0,
                },
                Before::Collection {
                    key: key(),
                    value: list(),
                    expire_at_ms: None,
                },
            ),
            (Effect::FlushAll, Before::FlushAll),
        ];
        for (effect, before) in pairs {
            assert_eq!(hash_of(&effect), hash_of(&before), "{effect:?}");
        }
        assert_ne!(
            hash_of(&Effect::Del { key: key(), db: 0 }),
            hash_of(&Effect::Del { key: key(), db: 3 })
        );
    }
}
