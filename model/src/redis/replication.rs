//! Replication: the effects a primary streams to its replicas.
//!
//! Redis replicates asynchronously: a primary acknowledges a write before any replica has it.
//! A failover promotes a replica and loses whatever had not reached it — lock keys and
//! fence-counter INCRs included.

use super::collection::Collection;

/// One change a primary made, as it is propagated (scripts by their effects; `PX` as an
/// absolute `PXAT`; an expired key as a synthesised `DEL`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Effect {
    /// The key now holds `value`, expiring at `expire_at_ms` (absolute, server clock) if set.
    Set {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
        /// Absolute expiry in ms on the primary's clock, or none.
        expire_at_ms: Option<u64>,
    },
    /// The key was deleted (explicitly, or expired on the primary).
    Del {
        /// The key.
        key: Vec<u8>,
    },
    /// The key's expiry changed to `expire_at_ms`.
    Expire {
        /// The key.
        key: Vec<u8>,
        /// Absolute expiry in ms.
        expire_at_ms: u64,
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
    },
    /// The keyspace was emptied (`FLUSHALL` / `FLUSHDB`). Script cache flushes are not
    /// replicated: every server has its own cache, and a promoted replica starts with an empty
    /// one.
    FlushAll,
}

impl Effect {
    /// The effect as a person reads it, e.g. `SET fence:{wallet:42} "33"` or
    /// `DEL lock:{wallet:42}`.
    pub fn describe(&self) -> String {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        match self {
            Effect::Set {
                key,
                value,
                expire_at_ms,
            } => match expire_at_ms {
                Some(at) => format!("SET {} \"{}\" PXAT {at}", text(key), text(value)),
                None => format!("SET {} \"{}\"", text(key), text(value)),
            },
            Effect::Del { key } => format!("DEL {}", text(key)),
            Effect::Expire { key, expire_at_ms } => {
                format!("PEXPIREAT {} {expire_at_ms}", text(key))
            }
            Effect::Collection {
                key,
                value,
                expire_at_ms,
            } => {
                let whole = value.describe(&text(key));
                match expire_at_ms {
                    Some(at) => format!("{whole} PXAT {at}"),
                    None => whole,
                }
            }
            Effect::FlushAll => "FLUSHALL".to_string(),
        }
    }
}
