//! Replication: the effects a primary streams to its replicas.
//!
//! Redis replicates asynchronously: a primary acknowledges a write before any replica has it.
//! A failover promotes a replica and loses whatever had not reached it — lock keys and
//! fence-counter INCRs included.

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
    /// The key now holds a hash with these fields, in order (the whole hash after a hash
    /// write), expiring at `expire_at_ms` if set.
    Hash {
        /// The key.
        key: Vec<u8>,
        /// Field and value pairs, in insertion order.
        fields: Vec<(Vec<u8>, Vec<u8>)>,
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
            Effect::Hash {
                key,
                fields,
                expire_at_ms,
            } => {
                let pairs: Vec<String> = fields
                    .iter()
                    .map(|(f, v)| format!("\"{}\" \"{}\"", text(f), text(v)))
                    .collect();
                let hash = format!("HASH {} {}", text(key), pairs.join(" "));
                match expire_at_ms {
                    Some(at) => format!("{hash} PXAT {at}"),
                    None => hash,
                }
            }
            Effect::FlushAll => "FLUSHALL".to_string(),
        }
    }
}
