//! The simulation's check of "only the holder changes the lock", from the Redis server's own
//! report of each command: a command whose effects delete the lock key, or move its expiry,
//! while the key holds another caller's unexpired token.

use std::time::Duration;

use leaselab_model::redis::replication::Effect;
use serde::Serialize;

use super::Shared;

/// A command that deleted or extended a lock its sender did not hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Trespass {
    /// When, µs after the release.
    pub t_us: i64,
    /// The sender (`app-N`).
    pub by: String,
    /// The holder whose lock it was.
    pub holder: String,
    /// True when the lock was deleted, false when its expiry moved.
    pub deleted: bool,
}

impl Trespass {
    /// E.g. `app-1 deleted the lock of app-2 at 130.250ms`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} the lock of {} at {:.3}ms",
            self.by,
            if self.deleted { "deleted" } else { "extended" },
            self.holder,
            self.t_us as f64 / 1_000.0
        )
    }
}

impl Shared {
    /// Records a trespass when `effects`, made by a command `client` sent at `sim`, deleted
    /// or extended a lock held (unexpired) by another caller. Runs before the lock watch
    /// follows the change, so the watch still names the holder before the command.
    pub(super) fn note_trespass(&self, sim: Duration, client: Option<&str>, effects: &[Effect]) {
        let (Some(lock), Some(client)) = (&self.watch.lock, client) else {
            return;
        };
        let Some(held) = lock.holder.borrow().clone() else {
            return;
        };
        let holder = lock.owner(&held);
        if holder == client {
            return;
        }
        let server_ms = self.server_ms(sim);
        if lock
            .holder_expires_at_ms
            .get()
            .is_some_and(|at_ms| server_ms > at_ms)
        {
            // The lease had already run out: deleting or renewing the key is no trespass.
            return;
        }
        // The lock is in database 0, where the callers' connections stay.
        let change = effects.iter().find_map(|effect| match effect {
            Effect::Del { key, db: 0 } if *key == lock.key => Some(true),
            Effect::Expire { key, db: 0, .. } if *key == lock.key => Some(false),
            Effect::FlushAll | Effect::FlushDb { db: 0 } => Some(true),
            Effect::SwapDb { first, second } if *first == 0 || *second == 0 => Some(true),
            _ => None,
        });
        if let Some(deleted) = change {
            self.watch.trespasses.borrow_mut().push(Trespass {
                t_us: self.conditions.timeline.t_us(sim),
                by: client.to_string(),
                holder,
                deleted,
            });
        }
    }
}
