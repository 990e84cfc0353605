//! Persistence: the append-only file (AOF) and when its writes reach the disk.
//!
//! Redis with `appendonly yes` appends every change to the AOF and hands it to the kernel
//! before it replies; *when* the kernel is told to put it on the disk is `appendfsync`:
//!
//! - `always`: fsync before the reply, so an acknowledged write survives a crash;
//! - `everysec`: fsync once a second, so a machine crash loses up to the last second of
//!   acknowledged writes (lock keys and fence-counter `INCR`s included);
//! - `no`: the kernel writes back when it likes (Linux: dirty pages older than 30 s), so a
//!   machine crash loses up to about 30 s.
//!
//! A crash of the Redis *process* alone loses nothing the kernel already has; the fault this
//! module serves is a crash of the machine (power loss, a VM reset), where what was not
//! fsynced is gone. After the restart Redis loads the AOF: the keys as of the last fsync, with
//! their absolute expiries (time kept running while it was down), and an empty script cache.
//!
//! The file is kept as the effects the primary recorded (the same stream its replicas get),
//! applied to an image of the keyspace at each fsync instant.

use super::replication::Effect;
use super::server::Redis;

/// When the AOF is fsynced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Appendfsync {
    /// Before every reply.
    Always,
    /// Once a second.
    Everysec,
    /// When the kernel writes back dirty pages (about every 30 s).
    No,
}

impl Appendfsync {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [Appendfsync; 3] = [Appendfsync::Always, Appendfsync::Everysec, Appendfsync::No];

    /// How often `everysec` fsyncs, in ms.
    pub const EVERYSEC_INTERVAL_MS: u64 = 1_000;

    /// How often the kernel writes back under `no` (Linux `dirty_expire_centisecs` = 3000).
    pub const NO_WRITEBACK_INTERVAL_MS: u64 = 30_000;

    /// The name as in `redis.conf`.
    pub fn name(self) -> &'static str {
        match self {
            Appendfsync::Always => "always",
            Appendfsync::Everysec => "everysec",
            Appendfsync::No => "no",
        }
    }

    /// Parses a `redis.conf` name.
    pub fn parse(name: &str) -> Option<Appendfsync> {
        Appendfsync::ALL
            .into_iter()
            .find(|mode| mode.name() == name)
    }

    /// The time between two fsyncs, in ms (`None`: before every reply).
    pub fn interval_ms(self) -> Option<u64> {
        match self {
            Appendfsync::Always => None,
            Appendfsync::Everysec => Some(Appendfsync::EVERYSEC_INTERVAL_MS),
            Appendfsync::No => Some(Appendfsync::NO_WRITEBACK_INTERVAL_MS),
        }
    }
}

/// An append-only file: what is on the disk, and what is written but not yet fsynced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aof {
    appendfsync: Appendfsync,
    /// The keyspace the fsynced part of the file loads into.
    disk: Redis,
    /// Appended since the last fsync (lost by a machine crash).
    unsynced: Vec<Effect>,
    /// The AOF clock's next fsync instant, in ms.
    next_fsync_ms: u64,
}

impl Aof {
    /// A file holding `initial` (the data set when the run starts, on disk), fsynced at
    /// `now_ms` on the file's clock.
    pub fn new(appendfsync: Appendfsync, initial: &[Effect], now_ms: u64) -> Aof {
        let mut disk = Redis::replica();
        for effect in initial {
            disk.apply_effect(effect);
        }
        let mut aof = Aof {
            appendfsync,
            disk,
            unsynced: Vec::new(),
            next_fsync_ms: 0,
        };
        aof.schedule_after(now_ms);
        aof
    }

    /// The fsync policy.
    pub fn appendfsync(&self) -> Appendfsync {
        self.appendfsync
    }

    /// Appends the changes a command made at `now_ms` (before its reply).
    pub fn append(&mut self, now_ms: u64, effects: Vec<Effect>) {
        self.advance(now_ms);
        match self.appendfsync {
            Appendfsync::Always => {
                for effect in &effects {
                    self.disk.apply_effect(effect);
                }
            }
            Appendfsync::Everysec | Appendfsync::No => self.unsynced.extend(effects),
        }
    }

    /// Fsyncs when an fsync instant has come by `now_ms`.
    pub fn advance(&mut self, now_ms: u64) {
        if self.appendfsync.interval_ms().is_none() || now_ms < self.next_fsync_ms {
            return;
        }
        for effect in std::mem::take(&mut self.unsynced) {
            self.disk.apply_effect(&effect);
        }
        self.schedule_after(now_ms);
    }

    /// The next fsync instant strictly after `now_ms`: the next multiple of the interval.
    fn schedule_after(&mut self, now_ms: u64) {
        if let Some(interval_ms) = self.appendfsync.interval_ms() {
            assert!(interval_ms > 0);
            self.next_fsync_ms = (now_ms / interval_ms).saturating_add(1) * interval_ms;
        }
    }

    /// The next fsync instant on the file's clock, in ms (`None` with `always`, which
    /// fsyncs before every reply instead).
    pub fn next_fsync_ms(&self) -> Option<u64> {
        self.appendfsync.interval_ms().map(|_| self.next_fsync_ms)
    }

    /// Appended but not yet on the disk.
    pub fn unsynced(&self) -> &[Effect] {
        &self.unsynced
    }

    /// The machine crashes at `now_ms` and Redis restarts from the file: the server it loads
    /// (a primary with the fsynced keys and an empty script cache) and the changes lost,
    /// oldest first. The file then holds exactly what was loaded.
    pub fn crash_and_load(&mut self, now_ms: u64) -> (Redis, Vec<Effect>) {
        self.advance(now_ms);
        let lost = std::mem::take(&mut self.unsynced);
        let mut loaded = self.disk.clone();
        loaded.promote();
        (loaded, lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(key: &str, value: &str) -> Effect {
        Effect::Set {
            key: key.as_bytes().to_vec(),
            value: value.as_bytes().to_vec(),
            expire_at_ms: None,
            db: 0,
        }
    }

    #[test]
    fn always_keeps_every_acknowledged_write() {
        let mut aof = Aof::new(Appendfsync::Always, &[set("fence", "32")], 0);
        aof.append(5, vec![set("fence", "33")]);
        let (loaded, lost) = aof.crash_and_load(6);
        assert!(lost.is_empty());
        assert_eq!(loaded.peek(b"fence", 6), Some(&b"33"[..]));
    }

    #[test]
    fn everysec_loses_what_came_after_the_last_fsync() {
        let mut aof = Aof::new(Appendfsync::Everysec, &[set("fence", "32")], 0);
        aof.append(500, vec![set("fence", "33")]);
        aof.advance(999);
        aof.append(1_000, vec![set("fence", "34")]);
        aof.append(1_200, vec![set("fence", "35")]);
        let (loaded, lost) = aof.crash_and_load(1_999);
        // The fsync at 1000 came before the write made at that instant.
        assert_eq!(loaded.peek(b"fence", 1_999), Some(&b"33"[..]));
        assert_eq!(lost, vec![set("fence", "34"), set("fence", "35")]);
        assert_eq!(loaded.role(), crate::redis::server::Role::Primary);
    }

    #[test]
    fn no_writes_back_only_every_30_seconds() {
        let mut aof = Aof::new(Appendfsync::No, &[], 0);
        aof.append(1, vec![set("k", "v")]);
        let mut early = aof.clone();
        assert_eq!(early.crash_and_load(29_999).1.len(), 1);
        let (loaded, lost) = aof.crash_and_load(30_000);
        assert!(lost.is_empty());
        assert_eq!(loaded.peek(b"k", 30_000), Some(&b"v"[..]));
    }

    #[test]
    fn names_round_trip() {
        for mode in Appendfsync::ALL {
            assert_eq!(Appendfsync::parse(mode.name()), Some(mode));
        }
        assert_eq!(Appendfsync::parse("sometimes"), None);
    }
}
