//! What a caller made of an answer: the safeguard machine's own reading of a reply.
//!
//! Drivers log it next to the reply (see [`Machine::reading`](super::Machine::reading)), so
//! views never interpret requests or replies themselves: "got the lock, fence 33" is what the
//! machine concluded, through the very functions that decide its next step.

use serde::{Deserialize, Serialize};

/// A caller's reading of one answer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "reading", rename_all = "kebab-case")]
pub enum Reading {
    /// The lock is ours, with a fencing token when the protocol issues one.
    Acquired {
        /// The fencing token.
        fence: Option<i64>,
    },
    /// Somebody else holds the lock.
    Busy,
    /// The separate expiry of a `SETNX` lock was set.
    ExpirySet,
    /// `WAIT` after the acquire answered: how many replicas acknowledged the lock.
    Replicated {
        /// Replicas that have it.
        replicas: i64,
    },
    /// The balance was read.
    BalanceRead {
        /// The balance.
        balance: i64,
        /// The row's fence (PostgreSQL), none for a Redis balance.
        fence: Option<i64>,
    },
    /// The write of the new balance landed.
    Wrote {
        /// The balance written.
        balance: i64,
        /// The fencing token written with it, if any.
        fence: Option<i64>,
        /// The version the write required (check-and-set), if any.
        seen: Option<i64>,
    },
    /// The store refused the write (0 rows updated).
    WriteRefused {
        /// The balance it would have written.
        balance: i64,
        /// The fencing token it carried, if any.
        fence: Option<i64>,
        /// The version it required, if any.
        seen: Option<i64>,
    },
    /// The conditional debit landed.
    Debited {
        /// How much.
        amount: i64,
    },
    /// The conditional debit changed nothing: too little money.
    DebitRefused {
        /// How much it asked for.
        amount: i64,
    },
    /// The watchdog's refresh extended the lease.
    Refreshed,
    /// The watchdog's refresh failed: the caller counts the lock as lost.
    LeaseLost,
    /// The lock was released (its key deleted).
    Released,
    /// The release was refused: the lock had expired or changed hands.
    NotHeld,
    /// A transaction began.
    Begun,
    /// The transaction committed.
    Committed,
    /// The transaction was rolled back.
    RolledBack,
    /// A statement of a safeguard file ran that neither reads the balance nor decides the
    /// write (`LOCK TABLE`, `SAVEPOINT`, the write's `UPDATE` before its `COMMIT`, ...).
    Ran {
        /// Its command tag, e.g. `LOCK TABLE` or `UPDATE 1`.
        tag: String,
    },
    /// PostgreSQL aborted the transaction with an error the caller answers by rolling back
    /// and running the transaction again: 40P01 `deadlock detected` or 40001 `could not
    /// serialize access due to concurrent update`.
    MustRetry {
        /// The SQLSTATE.
        sqlstate: String,
        /// The attempt that failed (1-based).
        attempt: u32,
    },
    /// A Redlock node granted the lock: `votes` of the `majority` needed so far.
    NodeGranted {
        /// The node (1-based).
        node: u8,
        /// Nodes that granted it in this round, this one included.
        votes: u8,
        /// N/2 + 1.
        majority: u8,
    },
    /// A Redlock node did not grant the lock (busy, no answer in time, unreachable).
    NodeRefused {
        /// The node (1-based).
        node: u8,
    },
    /// The answer ends the attempt with an error; the text says what.
    Failed {
        /// What went wrong.
        error: String,
    },
}

impl Reading {
    /// The reading in the tutorial's words, e.g. `got the lock, fence 33`.
    pub fn describe(&self) -> String {
        let with_fence = |fence: &Option<i64>| match fence {
            Some(f) => format!(" with fence {f}"),
            None => String::new(),
        };
        match self {
            Reading::Acquired { fence: Some(f) } => format!("got the lock, fence {f}"),
            Reading::Acquired { fence: None } => "got the lock".to_string(),
            Reading::Busy => "lock busy".to_string(),
            Reading::ExpirySet => "lock set to expire".to_string(),
            Reading::Replicated { replicas: 0 } => {
                "WAIT: no replica acknowledged the lock in time".to_string()
            }
            Reading::Replicated { replicas } => {
                format!("WAIT: {replicas} replica(s) acknowledged the lock")
            }
            Reading::BalanceRead {
                balance,
                fence: Some(f),
            } => format!("read balance {balance} (fence {f})"),
            Reading::BalanceRead { balance, .. } => format!("read balance {balance}"),
            Reading::Wrote { balance, fence, .. } => {
                format!("wrote balance {balance}{}", with_fence(fence))
            }
            Reading::WriteRefused { fence, .. } => {
                format!("write{} REJECTED", with_fence(fence))
            }
            Reading::Debited { amount } => format!("debited {amount}"),
            Reading::DebitRefused { amount } => format!("debit of {amount}: too little money"),
            Reading::Refreshed => "watchdog refreshed the lease".to_string(),
            Reading::LeaseLost => "watchdog refresh refused: lock lost".to_string(),
            Reading::Released => "released the lock".to_string(),
            Reading::NotHeld => "release: lock not held (expired or taken)".to_string(),
            Reading::Begun => "BEGIN".to_string(),
            Reading::Committed => "COMMIT".to_string(),
            Reading::RolledBack => "ROLLBACK".to_string(),
            Reading::Ran { tag } => tag.clone(),
            Reading::MustRetry { sqlstate, attempt } => {
                let what = match sqlstate.as_str() {
                    "40P01" => "deadlock detected",
                    "40001" => "could not serialize access",
                    _ => "transaction aborted",
                };
                format!("{what} ({sqlstate}) in attempt {attempt}: roll back and retry")
            }
            Reading::NodeGranted {
                node,
                votes,
                majority,
            } => format!("node {node} granted the lock ({votes} of {majority} needed)"),
            Reading::NodeRefused { node } => format!("node {node} refused the lock"),
            Reading::Failed { error } => error.clone(),
        }
    }
}
