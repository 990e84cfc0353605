//! The keyspace and command execution.

use super::command::Command;
use super::replication::Effect;
use super::reply::Reply;

/// Whether this instance accepts writes and expires keys itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Accepts writes, expires keys, records effects for replicas.
    Primary,
    /// Applies a primary's effects; never expires keys itself (reads report a logically
    /// expired key as missing); refuses writes with `READONLY`.
    Replica,
}

/// An in-memory Redis 7 instance.
///
/// Equal instances compare and hash equal (all collections are ordered), so the stand-in can
/// live inside a model checker's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Redis {
    _todo: (),
}

impl Default for Redis {
    fn default() -> Self {
        Redis::new()
    }
}

impl Redis {
    /// An empty primary, cluster mode off.
    pub fn new() -> Redis {
        todo!("redis stand-in: Redis::new")
    }

    /// Turns Redis Cluster slot checks on: a command or script whose keys hash to different
    /// slots gets `CROSSSLOT Keys in request don't hash to the same slot`.
    pub fn set_cluster_mode(&mut self, on: bool) {
        let _ = on;
        todo!()
    }

    /// Parses and executes one command received at server time `now_ms`.
    pub fn execute(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        match Command::parse(argv) {
            Ok(command) => self.apply(&command, now_ms),
            Err(error) => error,
        }
    }

    /// Executes a parsed command at server time `now_ms`.
    pub fn apply(&mut self, command: &Command, now_ms: u64) -> Reply {
        let _ = (command, now_ms);
        todo!("redis stand-in: Redis::apply")
    }

    /// The value of `key` at `now_ms` without touching anything (no lazy expiry); for
    /// inspection by drivers and reports.
    pub fn peek(&self, key: &[u8], now_ms: u64) -> Option<&[u8]> {
        let _ = (key, now_ms);
        todo!()
    }

    /// Sets `key` directly, with no TTL, bypassing the command path (scenario set-up).
    pub fn seed(&mut self, key: &[u8], value: &[u8]) {
        let _ = (key, value);
        todo!()
    }

    /// This instance's role.
    pub fn role(&self) -> Role {
        todo!()
    }

    /// Takes the effects recorded since the last call, in order, for the replication stream.
    /// A primary records one [`Effect`] per change it makes (a script's effects one by one).
    pub fn drain_effects(&mut self) -> Vec<Effect> {
        todo!()
    }

    /// Applies an effect received from the primary (on a replica).
    pub fn apply_effect(&mut self, effect: &Effect) {
        let _ = effect;
        todo!()
    }

    /// Makes a replica an empty-script-cache primary that starts expiring keys itself.
    pub fn promote(&mut self) {
        todo!()
    }

    /// A fresh replica (empty keyspace).
    pub fn replica() -> Redis {
        todo!()
    }

    /// Forgets everything, script cache included: a restart without persistence.
    pub fn restart_empty(&mut self) {
        todo!()
    }
}
