//! Redlock: one lock on a majority of N independent Redis nodes (the Redis page "Distributed
//! Locks with Redis").
//!
//! **Acquire:** note the time; on each node in turn, `SET key token NX PX ttl` with the same
//! random token and a short per-node timeout ([`Redlock::node_timeout_ms`]). The lock is held
//! when a majority (N/2 + 1) answered `OK` and time is left: the validity
//! `ttl − elapsed − drift`, where drift is `round(ttl × 0.01) + 2 ms` (node-redlock's
//! allowance for the nodes' clocks running at slightly different rates). Otherwise the caller
//! releases on every node (also those that refused: a reply may have been lost) and retries
//! after a random delay.
//!
//! **Release:** the compare-and-delete script on every node.
//!
//! **Guards against:** losing a minority of nodes (a crash, a partition).
//!
//! **Relies on:** a semi-synchronous system: pauses and network delays shorter than the
//! validity, and clocks that run at about the same rate (drift within the allowance). A node
//! that restarts without persistence and forgets the key, or whose clock is stepped forward,
//! can hand the same lock to a second caller (Kleppmann's scenarios); a holder paused past the
//! validity writes without the lock. With the write checked against the version read
//! (`redlock-cas`, Sanfilippo's answer), the ledger holds anyway.

use crate::redis::command::{Command, SetCondition, SetExpiry};
use crate::redis::{Reply, ScriptId};

use super::lock::{Acquire, Release, RoundStep};
use super::reading::Reading;
use super::step::{Input, RedisRequest, Step};
use super::store::unexpected;

/// Where a Redlock round is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Round {
    /// No round under way.
    Idle,
    /// Asked `node`; `granted` nodes said `OK` so far; the round began at `started_ms`.
    Acquiring {
        node: u8,
        granted: u8,
        started_ms: u64,
    },
    /// The round failed: releasing on `node` and the ones after it.
    Undoing { node: u8 },
    /// The lock is held.
    Held,
    /// Releasing on `node` and the ones after it; `released` nodes still had our token.
    Releasing { node: u8, released: u8 },
}

/// A Redlock client over `nodes` independent Redis nodes (numbered 1..=N).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Redlock {
    /// The lock key (the same on every node).
    pub key: super::FixedBytes,
    /// This caller's random token (the same on every node).
    pub token: super::FixedBytes,
    /// The lease duration on every node.
    pub ttl_ms: u64,
    /// How many nodes.
    pub nodes: u8,
    /// The token as the version the write sets and checks (`redlock-cas`): none for plain
    /// Redlock.
    pub cas: Option<i64>,
    round: Round,
}

/// The fewest nodes Redlock is defined over, and the most leaselab runs.
pub const NODES_MIN: u8 = 3;
/// The most nodes leaselab runs.
pub const NODES_MAX: u8 = 9;
/// The node count of the Redis page's example, leaselab's default.
pub const NODES_DEFAULT: u8 = 5;

impl Redlock {
    /// A client about to acquire.
    pub fn new(key: Vec<u8>, token: Vec<u8>, ttl_ms: u64, nodes: u8, cas: Option<i64>) -> Redlock {
        assert!(
            (NODES_MIN..=NODES_MAX).contains(&nodes) && nodes % 2 == 1,
            "Redlock runs on an odd number of nodes from {NODES_MIN} to {NODES_MAX}, not {nodes}"
        );
        assert!(ttl_ms >= 1, "a lease needs a TTL");
        Redlock {
            key: key.into(),
            token: token.into(),
            ttl_ms,
            nodes,
            cas,
            round: Round::Idle,
        }
    }

    /// N/2 + 1.
    pub fn majority(&self) -> u8 {
        self.nodes / 2 + 1
    }

    /// The clock-drift allowance: `round(ttl × 0.01) + 2 ms` (node-redlock; the Redis page
    /// says "TTL × 0.01 + 2 ms").
    pub fn drift_ms(ttl_ms: u64) -> u64 {
        (ttl_ms + 50) / 100 + 2
    }

    /// The per-node timeout: a tenth of the TTL, at least 1 ms (the Redis page: 5–50 ms for
    /// a 10 s TTL, "small compared to the total lock auto-release time").
    pub fn node_timeout_ms(&self) -> u64 {
        (self.ttl_ms / 10).max(1)
    }

    /// How long the lock is still valid for a round that began at `started_ms` and ended at
    /// `now_ms`: `ttl − elapsed − drift`, or none when nothing is left.
    pub fn validity_ms(&self, started_ms: u64, now_ms: u64) -> Option<u64> {
        let elapsed_ms = now_ms.saturating_sub(started_ms);
        self.ttl_ms
            .checked_sub(elapsed_ms + Redlock::drift_ms(self.ttl_ms))
            .filter(|&left| left > 0)
    }

    /// True while the lock is held (between a granted round and the release).
    pub fn held(&self) -> bool {
        self.round == Round::Held
    }

    /// Starts an acquire round at `now_ms`: `SET NX PX` on node 1.
    pub fn start(&mut self, now_ms: u64) -> Step {
        assert!(
            matches!(self.round, Round::Idle),
            "a round starts while {:?}",
            self.round
        );
        self.round = Round::Acquiring {
            node: 1,
            granted: 0,
            started_ms: now_ms,
        };
        self.set_step(1)
    }

    /// Takes node's answer to the current acquire round (or its undo).
    /// The round ends held when a majority granted the lock within the validity time, else
    /// busy once every node was released.
    pub fn on_round(&mut self, now_ms: u64, input: &Input) -> RoundStep<Acquire> {
        match self.round {
            Round::Acquiring {
                node,
                granted,
                started_ms,
            } => {
                let granted = granted + u8::from(Redlock::granted(input));
                if node < self.nodes {
                    self.round = Round::Acquiring {
                        node: node + 1,
                        granted,
                        started_ms,
                    };
                    return RoundStep::Send(self.set_step(node + 1));
                }
                let in_time = self.validity_ms(started_ms, now_ms).is_some();
                if granted >= self.majority() && in_time {
                    self.round = Round::Held;
                    return RoundStep::Ended(Acquire::Got { fence: None });
                }
                self.round = Round::Undoing { node: 1 };
                RoundStep::Send(self.release_step(1))
            }
            Round::Undoing { node } if node < self.nodes => {
                self.round = Round::Undoing { node: node + 1 };
                RoundStep::Send(self.release_step(node + 1))
            }
            Round::Undoing { .. } => {
                self.round = Round::Idle;
                RoundStep::Ended(Acquire::Busy)
            }
            other => panic!("a round's answer while {other:?}"),
        }
    }

    /// Starts releasing: the compare-and-delete script on node 1.
    pub fn start_release(&mut self) -> Step {
        assert_eq!(self.round, Round::Held, "only a held lock is released");
        self.round = Round::Releasing {
            node: 1,
            released: 0,
        };
        self.release_step(1)
    }

    /// Takes a node's answer to the release: the next node's release, or how it ended (released
    /// when a majority still had our token, else not held).
    pub fn on_release(&mut self, input: &Input) -> RoundStep<Release> {
        let Round::Releasing { node, released } = self.round else {
            panic!("a release answer while {:?}", self.round);
        };
        let released = released + u8::from(matches!(input, Input::Redis(Reply::Integer(1))));
        if node < self.nodes {
            self.round = Round::Releasing {
                node: node + 1,
                released,
            };
            return RoundStep::Send(self.release_step(node + 1));
        }
        self.round = Round::Idle;
        RoundStep::Ended(if released >= self.majority() {
            Release::Released
        } else {
            Release::NotHeld
        })
    }

    /// The node the outstanding request went to, and whether it is part of an acquire round
    /// (else a release, or an undo).
    pub fn asking(&self) -> Option<(u8, bool)> {
        match self.round {
            Round::Acquiring { node, .. } => Some((node, true)),
            Round::Undoing { node } | Round::Releasing { node, .. } => Some((node, false)),
            Round::Idle | Round::Held => None,
        }
    }

    /// How many nodes granted the lock so far in the current round, counting `input`.
    pub fn votes_with(&self, input: &Input) -> u8 {
        match self.round {
            Round::Acquiring { granted, .. } => granted + u8::from(Redlock::granted(input)),
            _ => 0,
        }
    }

    /// What one node's answer to `SET NX PX` says on its own: granted, or held by another.
    pub fn vote(reply: &Reply) -> Option<Acquire> {
        match reply {
            Reply::Status(status) if status == "OK" => Some(Acquire::Got { fence: None }),
            Reply::Nil => Some(Acquire::Busy),
            _ => None,
        }
    }

    /// What a node's answer means to the caller: granted or refused during an acquire round,
    /// released or not held during a release (or the undo of a failed round).
    pub fn reading(&self, input: &Input) -> Reading {
        let Some((node, acquiring)) = self.asking() else {
            return Reading::Failed {
                error: unexpected("Redlock", input),
            };
        };
        match (acquiring, input) {
            (true, _) if Redlock::granted(input) => Reading::NodeGranted {
                node,
                votes: self.votes_with(input),
                majority: self.majority(),
            },
            (true, _) => Reading::NodeRefused { node },
            (false, Input::Redis(Reply::Integer(1))) => Reading::Released,
            (false, Input::Redis(Reply::Integer(0))) => Reading::NotHeld,
            (false, _) => Reading::Failed {
                error: unexpected("release", input),
            },
        }
    }

    /// True when a node's answer grants the lock.
    pub fn granted(input: &Input) -> bool {
        matches!(input, Input::Redis(Reply::Status(status)) if status == "OK")
    }

    /// The check-and-set value of `redlock-cas`'s write: the random token as a positive
    /// `bigint` (its low 62 bits with bit 62 set, so it never equals a small stored fence).
    pub fn cas_value(token: u128) -> i64 {
        let low = (token & ((1u128 << 62) - 1)) as i64;
        low | (1i64 << 62)
    }

    fn set_step(&self, node: u8) -> Step {
        Step::Redis {
            node,
            request: RedisRequest::Command(Command::Set {
                key: self.key.to_vec(),
                value: self.token.to_vec(),
                condition: SetCondition::IfMissing,
                expiry: SetExpiry::Millis(self.ttl_ms as i64),
                get: false,
            }),
            timeout_ms: Some(self.node_timeout_ms()),
        }
    }

    fn release_step(&self, node: u8) -> Step {
        Step::Redis {
            node,
            request: RedisRequest::Script {
                script: ScriptId::Release,
                keys: vec![self.key.to_vec()],
                args: vec![self.token.to_vec()],
            },
            timeout_ms: Some(self.node_timeout_ms()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Input {
        Input::Redis(Reply::Status("OK".into()))
    }

    fn node_of(step: &Step) -> u8 {
        match step {
            Step::Redis { node, .. } => *node,
            other => panic!("expected a Redis step, got {other:?}"),
        }
    }

    #[test]
    fn drift_and_validity_follow_the_redis_page() {
        assert_eq!(Redlock::drift_ms(10_000), 102);
        assert_eq!(Redlock::drift_ms(10), 2);
        assert_eq!(Redlock::drift_ms(150), 4);
        let lock = Redlock::new(b"k".to_vec(), b"t".to_vec(), 10, 3, None);
        assert_eq!(lock.validity_ms(0, 0), Some(8));
        assert_eq!(lock.validity_ms(0, 7), Some(1));
        assert_eq!(lock.validity_ms(0, 8), None);
    }

    #[test]
    fn a_majority_in_time_holds_the_lock_and_asks_every_node_in_turn() {
        let mut lock = Redlock::new(b"k".to_vec(), b"t".to_vec(), 100, 5, None);
        let first = lock.start(0);
        assert_eq!(node_of(&first), 1);
        let mut nodes = vec![1];
        let answers = [
            ok(),
            Input::Redis(Reply::Nil),
            ok(),
            Input::RedisTimeout,
            ok(),
        ];
        let mut last = None;
        for answer in answers {
            match lock.on_round(5, &answer) {
                RoundStep::Send(step) => nodes.push(node_of(&step)),
                other => last = Some(other),
            }
        }
        assert_eq!(nodes, vec![1, 2, 3, 4, 5]);
        assert_eq!(last, Some(RoundStep::Ended(Acquire::Got { fence: None })));
        assert!(lock.held());
    }

    #[test]
    fn a_minority_or_a_late_majority_releases_everywhere_then_backs_off() {
        for (answers, now_ms) in [
            (
                vec![ok(), Input::Redis(Reply::Nil), Input::Redis(Reply::Nil)],
                1,
            ),
            (vec![ok(), ok(), ok()], 8),
        ] {
            let mut lock = Redlock::new(b"k".to_vec(), b"t".to_vec(), 10, 3, None);
            lock.start(0);
            let mut released_on = Vec::new();
            let mut end = None;
            for answer in answers {
                if let RoundStep::Send(step) = lock.on_round(now_ms, &answer) {
                    if matches!(
                        step,
                        Step::Redis {
                            request: RedisRequest::Script { .. },
                            ..
                        }
                    ) {
                        released_on.push(node_of(&step));
                    }
                }
            }
            for _ in 0..3 {
                match lock.on_round(now_ms, &Input::Redis(Reply::Integer(0))) {
                    RoundStep::Send(step) => released_on.push(node_of(&step)),
                    other => end = Some(other),
                }
            }
            assert_eq!(released_on, vec![1, 2, 3], "at {now_ms}ms");
            assert_eq!(end, Some(RoundStep::Ended(Acquire::Busy)));
            assert!(!lock.held());
        }
    }

    #[test]
    fn release_runs_on_every_node_and_counts_a_majority() {
        let mut lock = Redlock::new(b"k".to_vec(), b"t".to_vec(), 100, 3, None);
        lock.start(0);
        for _ in 0..3 {
            lock.on_round(1, &ok());
        }
        assert!(lock.held());
        assert_eq!(node_of(&lock.start_release()), 1);
        let one = Input::Redis(Reply::Integer(1));
        let zero = Input::Redis(Reply::Integer(0));
        let sent = |next: RoundStep<Release>| match next {
            RoundStep::Send(step) => node_of(&step),
            other => panic!("expected the next node's release, got {other:?}"),
        };
        assert_eq!(sent(lock.on_release(&one)), 2);
        assert_eq!(sent(lock.on_release(&zero)), 3);
        assert_eq!(lock.on_release(&zero), RoundStep::Ended(Release::NotHeld));
    }

    #[test]
    fn cas_values_are_positive_distinct_and_never_small() {
        let a = Redlock::cas_value(1);
        let b = Redlock::cas_value(2);
        assert!(a > 1 << 61 && b > 1 << 61 && a != b);
        assert!(Redlock::cas_value(u128::MAX) > 0);
    }
}
