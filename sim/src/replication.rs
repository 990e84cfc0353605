//! The replication stream from the Redis primary to its replica.
//!
//! Redis replicates asynchronously: the primary acknowledges a write, and the replica applies
//! it `lag` later. The primary's changes are taken from the stand-in right after every
//! command ([`Redis::drain_effects`]) and applied to the replica when their time comes.
//!
//! While the primary→replica link is cut, changes queue on the primary (its replication
//! backlog) and flow again, `lag` after the link heals, as a partial resync would deliver
//! them. A failover promotes the replica with what it has applied: every change still in
//! flight or queued is lost — lock keys and fence-counter `INCR`s included.
//!
//! `WAIT` counts the replicas that have applied every change up to a connection's last write
//! ([`Replication::offset`], [`Replication::acked`]); a replica counts only once it is online
//! (a replica that rejoins after a failover first completes its full resync).

use std::collections::VecDeque;
use std::time::Duration;

use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::Redis;

/// A replica fed by the primary's effects with a fixed lag.
#[derive(Clone, Debug)]
pub struct Replication {
    replica: Redis,
    lag: Duration,
    in_flight: VecDeque<(Duration, Effect)>,
    held: Vec<Effect>,
    cut: bool,
    /// The primary's replication offset: changes shipped so far (one per effect).
    shipped: u64,
    /// Changes the replica has applied.
    applied: u64,
    /// From when the replica counts for `WAIT` (its full sync done).
    online_at: Duration,
    /// After a restart of the replica: the primary's data set it is loading, and when the
    /// load is done (until then the replica is empty).
    loading: Option<(Duration, Redis)>,
}

impl Replication {
    /// A replica that has completed its initial sync with `initial` (the primary's effects so
    /// far), applying later changes `lag` after the primary made them.
    pub fn new(initial: &[Effect], lag: Duration) -> Replication {
        let mut replica = Redis::replica();
        for effect in initial {
            replica.apply_effect(effect);
        }
        Replication {
            replica,
            lag,
            in_flight: VecDeque::new(),
            held: Vec::new(),
            cut: false,
            shipped: 0,
            applied: 0,
            online_at: Duration::ZERO,
            loading: None,
        }
    }

    /// A replica that joins `primary` at `now` (after a failover, Sentinel points the old
    /// primary or another replica at the new one): its full resync takes `lag`, after which it
    /// holds `primary`'s data as of `now` and counts for `WAIT`. Changes made meanwhile reach
    /// it `lag` after they were made, as before.
    pub fn rejoin(primary: &Redis, now: Duration, lag: Duration) -> Replication {
        Replication {
            replica: primary.resynced_replica(),
            lag,
            in_flight: VecDeque::new(),
            held: Vec::new(),
            cut: false,
            shipped: 0,
            applied: 0,
            online_at: now + lag,
            loading: None,
        }
    }

    /// The replica restarts at `now` without persistence: it comes back empty and asks for a
    /// full resync, which loads `primary`'s data set as of `now` only `lag` later; changes made
    /// after `now` follow as before. Until the load is done it holds nothing and does not
    /// count for `WAIT`: what it had acknowledged is gone from it meanwhile.
    pub fn restart_replica(&mut self, primary: &Redis, now: Duration) {
        self.replica = Redis::replica();
        self.in_flight.clear();
        self.held.clear();
        self.cut = false;
        self.loading = Some((now + self.lag, primary.resynced_replica()));
        // The snapshot covers every change shipped so far.
        self.applied = self.shipped;
        self.online_at = now + self.lag;
    }

    /// The primary's replication offset: how many changes it has shipped (a connection's
    /// last write is at the offset right after it).
    pub fn offset(&self) -> u64 {
        self.shipped
    }

    /// How many replicas (0 or 1) have applied every change up to `offset` by `now`, as
    /// `WAIT` counts them.
    pub fn acked(&self, offset: u64, now: Duration) -> i64 {
        i64::from(now >= self.online_at && self.applied >= offset)
    }

    /// Sends the changes the primary made at `now` down the stream.
    pub fn ship(&mut self, now: Duration, effects: Vec<Effect>) {
        self.shipped += effects.len() as u64;
        if self.cut {
            self.held.extend(effects);
        } else {
            let at = now + self.lag;
            self.in_flight
                .extend(effects.into_iter().map(|effect| (at, effect)));
        }
    }

    /// Applies every change due by `now` (after the data set a restarted replica loads).
    pub fn advance(&mut self, now: Duration) {
        if self.loading.as_ref().is_some_and(|(done, _)| *done <= now) {
            let (_, loaded) = self.loading.take().expect("checked above");
            self.replica = loaded;
        }
        while let Some((at, _)) = self.in_flight.front() {
            if *at > now {
                break;
            }
            let (_, effect) = self.in_flight.pop_front().expect("checked above");
            self.replica.apply_effect(&effect);
            self.applied += 1;
        }
    }

    /// When the next change in flight arrives at the replica (or a restarted replica's load
    /// is done), if one is pending.
    pub fn next_at(&self) -> Option<Duration> {
        let load = self.loading.as_ref().map(|(done, _)| *done);
        let change = self.in_flight.front().map(|(at, _)| *at);
        load.into_iter().chain(change).min()
    }

    /// How far behind the primary the replica runs (simulated time).
    pub fn lag(&self) -> Duration {
        self.lag
    }

    /// True while a restarted replica is still loading its full resync.
    pub fn loading(&self) -> bool {
        self.loading.is_some()
    }

    /// Cuts the primary→replica link: changes queue on the primary.
    pub fn cut(&mut self) {
        self.cut = true;
    }

    /// Heals the link at `now`: the queued changes arrive `lag` later.
    pub fn heal(&mut self, now: Duration) {
        if !self.cut {
            return;
        }
        self.cut = false;
        let at = now + self.lag;
        let held = std::mem::take(&mut self.held);
        self.in_flight
            .extend(held.into_iter().map(|effect| (at, effect)));
    }

    /// Changes the replica has not applied yet (in flight or queued).
    pub fn pending(&self) -> usize {
        self.in_flight.len() + self.held.len()
    }

    /// The replica as it stands.
    pub fn replica(&self) -> &Redis {
        &self.replica
    }

    /// The primary restarted without persistence: the replica resyncs to the empty data set.
    pub fn resync_empty(&mut self) {
        self.replica = Redis::replica();
        self.loading = None;
        self.in_flight.clear();
        self.held.clear();
        // The replica now holds what the (empty) primary holds: everything is acknowledged.
        self.applied = self.shipped;
    }

    /// Promotes the replica at `now`: applies what has arrived, and returns the new primary
    /// and the changes that are lost, oldest first.
    pub fn promote(mut self, now: Duration) -> (Redis, Vec<Effect>) {
        self.advance(now);
        let mut lost: Vec<Effect> = self.in_flight.into_iter().map(|(_, e)| e).collect();
        lost.extend(self.held);
        let mut primary = self.replica;
        primary.promote();
        (primary, lost)
    }
}

/// An effect as a person reads it (see [`Effect::describe`]).
pub fn describe_effect(effect: &Effect) -> String {
    effect.describe()
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
    fn changes_arrive_after_the_lag_and_the_rest_is_lost_on_promotion() {
        let ms = Duration::from_millis;
        let mut replication = Replication::new(&[set("fence", "32")], ms(50));
        replication.ship(ms(1), vec![set("fence", "33")]);
        replication.ship(ms(60), vec![set("fence", "34")]);
        replication.advance(ms(51));
        assert_eq!(replication.replica().peek(b"fence", 0), Some(&b"33"[..]));
        let (primary, lost) = replication.promote(ms(70));
        assert_eq!(primary.peek(b"fence", 0), Some(&b"33"[..]));
        assert_eq!(lost, vec![set("fence", "34")]);
    }

    #[test]
    fn wait_counts_the_replica_once_it_applied_the_connection_s_last_write() {
        let ms = Duration::from_millis;
        let mut replication = Replication::new(&[], ms(50));
        assert_eq!(replication.acked(0, ms(0)), 1);
        replication.ship(ms(1), vec![set("lock", "a")]);
        let woff = replication.offset();
        assert_eq!(woff, 1);
        replication.advance(ms(50));
        assert_eq!(replication.acked(woff, ms(50)), 0);
        // A connection that wrote nothing is answered at once.
        assert_eq!(replication.acked(0, ms(50)), 1);
        replication.advance(ms(51));
        assert_eq!(replication.acked(woff, ms(51)), 1);
        // A replica that rejoins counts only after its full resync.
        let primary = replication.replica().clone();
        let rejoined = Replication::rejoin(&primary, ms(100), ms(50));
        assert_eq!(rejoined.acked(0, ms(149)), 0);
        assert_eq!(rejoined.acked(0, ms(150)), 1);
        assert_eq!(rejoined.replica().peek(b"lock", 0), Some(&b"a"[..]));
    }

    #[test]
    fn a_cut_link_queues_changes_until_it_heals() {
        let ms = Duration::from_millis;
        let mut replication = Replication::new(&[], ms(10));
        replication.cut();
        replication.ship(ms(1), vec![set("k", "v")]);
        replication.advance(ms(100));
        assert_eq!(replication.replica().peek(b"k", 0), None);
        replication.heal(ms(100));
        replication.advance(ms(109));
        assert_eq!(replication.replica().peek(b"k", 0), None);
        replication.advance(ms(110));
        assert_eq!(replication.replica().peek(b"k", 0), Some(&b"v"[..]));
    }
}
