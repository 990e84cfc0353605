//! Redlock's independent Redis nodes in the [`World`]: each with its own keyspace and wall
//! clock, and the faults a node can suffer.
//!
//! A node's wall clock is the world's clock run at a rate ([`NodeFaults::drift_percent`]: +2
//! runs 2 % fast, as every node's does) plus what jumps added. Redis expires keys by that wall
//! clock, so a fast or jumped clock expires a lease early. Faults, each at any moment the
//! checker picks, on any node, within a budget per run:
//!
//! - **restart without persistence** ([`Action::NodeRestart`]): the node comes back at once with
//!   an empty keyspace, the lock key forgotten;
//! - **delayed restart** ([`Action::NodeCrash`]): the node is down (connections refused) for
//!   longer than the TTL, then comes back empty — the Redis page's mitigation;
//! - **clock jump** ([`Action::NodeClockJump`]): the node's wall clock steps forward by
//!   [`NodeFaults::clock_jump_ms`];
//! - **clock slew** ([`Action::NodeClockSlew`]): the node's wall clock starts gaining
//!   [`NodeFaults::clock_slew_ms`] gradually, at [`NodeFaults::slew_rate_ppm`] (see
//!   `clocks.rs`).

use std::sync::Arc;

use crate::redis::Redis;

use super::clocks::{ClockFaults, ClockState};
use super::{emit, slot_mut, Action, ClockFault, Event, Sink, World};

/// One Redlock node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RedisNode {
    /// Its keyspace.
    pub redis: Redis,
    /// What jumps and a slew did to its clock so far.
    pub clock: ClockState,
    /// Down (refusing connections) until this world time, after a crash.
    pub down_until_ms: Option<u64>,
}

impl RedisNode {
    /// A fresh, empty node (it has no replica: it records no effects).
    pub fn new() -> RedisNode {
        let mut redis = Redis::new();
        redis.record_effects(false);
        RedisNode {
            redis,
            clock: ClockState::default(),
            down_until_ms: None,
        }
    }
}

impl Default for RedisNode {
    fn default() -> RedisNode {
        RedisNode::new()
    }
}

/// The nodes' clocks and fault budgets for a run (all zero: healthy nodes, exact clocks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeFaults {
    /// Restarts without persistence that may happen.
    pub restarts: u32,
    /// Delayed restarts (down for the TTL + 1 ms, then back empty) that may happen.
    pub delayed_restarts: u32,
    /// Clock jumps that may happen.
    pub clock_jumps: u32,
    /// How far a jump steps a node's clock forward.
    pub clock_jump_ms: u64,
    /// Every node's clock rate error in percent (+2: 2 % fast; −2: 2 % slow).
    pub drift_percent: i32,
    /// Clock slews that may start (at most one per node at a time).
    pub clock_slews: u32,
    /// The offset a node's clock slew applies, gradually.
    pub clock_slew_ms: u64,
    /// How fast a slew applies its offset, in millionths of elapsed time.
    pub slew_rate_ppm: u32,
}

impl NodeFaults {
    /// True when some fault may still happen.
    pub fn any(&self) -> bool {
        self.restarts > 0 || self.delayed_restarts > 0 || self.clock().any()
    }

    /// The jumps and slews a node's clock may suffer, as [`ClockFaults`].
    pub fn clock(&self) -> ClockFaults {
        ClockFaults {
            jumps: self.clock_jumps,
            jump_ms: self.clock_jump_ms,
            slews: self.clock_slews,
            slew_ms: self.clock_slew_ms,
            slew_rate_ppm: self.slew_rate_ppm,
        }
    }

    /// The faults in words, e.g. `1 restart without persistence, clocks +20%`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        if self.restarts > 0 {
            parts.push(format!(
                "{} node restart{} without persistence",
                self.restarts,
                plural(self.restarts)
            ));
        }
        if self.delayed_restarts > 0 {
            parts.push(format!(
                "{} delayed node restart{} (down for the TTL)",
                self.delayed_restarts,
                plural(self.delayed_restarts)
            ));
        }
        let clock = self.clock().describe("a node's");
        if !clock.is_empty() {
            parts.push(clock);
        }
        if self.drift_percent != 0 {
            parts.push(format!("node clocks {:+}%", self.drift_percent));
        }
        parts.join(", ")
    }
}

/// What happened to a node, as [`Event::Node`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeFault {
    /// It restarted without persistence: every key is gone.
    Restarted,
    /// It crashed; it comes back (empty) at `back_ms`.
    Crashed {
        /// World time it comes back.
        back_ms: u64,
    },
    /// It came back after a crash, empty.
    CameBack,
    /// Its clock stepped forward, or started slewing.
    Clock(ClockFault),
}

impl NodeFault {
    /// The fault in words, after "node N".
    pub fn describe(&self) -> String {
        match self {
            NodeFault::Restarted => "restarts without persistence: the lock key is gone".into(),
            NodeFault::Crashed { back_ms } => {
                format!("crashes; it restarts (empty) only at {back_ms}ms, after the TTL")
            }
            NodeFault::CameBack => "is back, empty".into(),
            NodeFault::Clock(fault) => fault.describe(),
        }
    }
}

impl World {
    /// Node `node`'s (1-based) wall clock at world time `now_ms`.
    pub fn node_now_ms(&self, node: u8, now_ms: u64) -> u64 {
        let drift = i128::from(self.setup.node_faults.drift_percent);
        let rated = i128::from(now_ms) * (100 + drift) / 100;
        let rated = u64::try_from(rated.max(0)).unwrap_or(u64::MAX);
        let clock = &self.nodes[usize::from(node) - 1].clock;
        rated.saturating_add(clock.offset_ms(&self.setup.node_faults.clock(), now_ms))
    }

    /// True when node `node` (1-based) refuses connections now.
    pub fn node_down(&self, node: u8) -> bool {
        self.nodes[usize::from(node) - 1].down_until_ms.is_some()
    }

    /// The node faults enabled now, in a fixed order (by node, then kind).
    pub(super) fn node_actions(&self, actions: &mut Vec<Action>) {
        if !self.extra.node_faults_left.any() || self.all_done() {
            return;
        }
        for index in 0..self.nodes.len() {
            let node = (index + 1) as u8;
            if self.node_down(node) {
                continue;
            }
            if self.extra.node_faults_left.restarts > 0 {
                actions.push(Action::NodeRestart(node));
            }
            if self.extra.node_faults_left.delayed_restarts > 0 {
                actions.push(Action::NodeCrash(node));
            }
            if self.extra.node_faults_left.clock_jumps > 0 {
                actions.push(Action::NodeClockJump(node));
            }
            if self.nodes[index]
                .clock
                .may_slew(&self.extra.node_faults_left.clock())
            {
                actions.push(Action::NodeClockSlew(node));
            }
        }
    }

    /// True when the node fault `action` is enabled now.
    pub(super) fn node_action_enabled(&self, action: Action) -> bool {
        let (node, left) = match action {
            Action::NodeRestart(node) => (node, self.extra.node_faults_left.restarts),
            Action::NodeCrash(node) => (node, self.extra.node_faults_left.delayed_restarts),
            Action::NodeClockJump(node) => (node, self.extra.node_faults_left.clock_jumps),
            Action::NodeClockSlew(node) => {
                let slewing = self
                    .nodes
                    .get(usize::from(node).wrapping_sub(1))
                    .is_none_or(|state| state.clock.slewing_since_ms.is_some());
                (
                    node,
                    if slewing {
                        0
                    } else {
                        self.extra.node_faults_left.clock_slews
                    },
                )
            }
            _ => return false,
        };
        left > 0
            && !self.all_done()
            && (1..=self.nodes.len()).contains(&usize::from(node))
            && !self.node_down(node)
    }

    /// Applies a node fault.
    pub(super) fn apply_node_fault(&mut self, action: Action, sink: &mut Sink<'_>) {
        let (node, fault) = match action {
            Action::NodeRestart(node) => {
                Arc::make_mut(&mut self.extra).node_faults_left.restarts -= 1;
                let state = Arc::make_mut(&mut self.nodes[usize::from(node) - 1]);
                state.redis.restart_empty();
                (node, NodeFault::Restarted)
            }
            Action::NodeCrash(node) => {
                Arc::make_mut(&mut self.extra)
                    .node_faults_left
                    .delayed_restarts -= 1;
                let back_ms = self.now_ms + self.setup.ttl_ms + 1;
                let state = Arc::make_mut(&mut self.nodes[usize::from(node) - 1]);
                state.redis.restart_empty();
                state.down_until_ms = Some(back_ms);
                (node, NodeFault::Crashed { back_ms })
            }
            Action::NodeClockJump(node) => {
                Arc::make_mut(&mut self.extra).node_faults_left.clock_jumps -= 1;
                let by_ms = self.setup.node_faults.clock_jump_ms;
                let clock = &mut Arc::make_mut(&mut self.nodes[usize::from(node) - 1]).clock;
                clock.jumped_ms = clock.jumped_ms.saturating_add(by_ms);
                (node, NodeFault::Clock(ClockFault::Jumped { by_ms }))
            }
            Action::NodeClockSlew(node) => {
                Arc::make_mut(&mut self.extra).node_faults_left.clock_slews -= 1;
                let now_ms = self.now_ms;
                let clock = &mut Arc::make_mut(&mut self.nodes[usize::from(node) - 1]).clock;
                clock.slewing_since_ms = Some(now_ms);
                let faults = self.setup.node_faults;
                let fault = ClockFault::SlewStarted {
                    by_ms: faults.clock_slew_ms,
                    rate_ppm: faults.slew_rate_ppm,
                };
                (node, NodeFault::Clock(fault))
            }
            other => unreachable!("not a node fault: {other:?}"),
        };
        emit(sink, || Event::Node { node, fault });
    }

    /// Brings back the crashed nodes whose downtime is over (at each tick).
    pub(super) fn nodes_come_back(&mut self, sink: &mut Sink<'_>) {
        let now_ms = self.now_ms;
        for index in 0..self.nodes.len() {
            if self.nodes[index]
                .down_until_ms
                .is_some_and(|back_ms| back_ms <= now_ms)
            {
                Arc::make_mut(&mut self.nodes[index]).down_until_ms = None;
                let node = (index + 1) as u8;
                emit(sink, || Event::Node {
                    node,
                    fault: NodeFault::CameBack,
                });
            }
        }
    }

    /// Connects caller `index` to node `node`, or refuses when the node is down.
    pub(super) fn connect_node(&mut self, index: usize, node: u8, conn: crate::client::ConnId) {
        let down = self.node_down(node);
        let client = &mut slot_mut(&mut self.slots[index]).client;
        if down {
            client.handle_connect_failed(conn, "connection refused".to_string());
        } else {
            client.handle_connected(conn);
        }
    }

    /// The callers (0-based) whose token a majority of the nodes holds at world time `at_ms`.
    pub fn node_majority_holders(&self, at_ms: u64) -> Vec<usize> {
        let majority = self.nodes.len() / 2 + 1;
        (0..self.setup.tokens.len())
            .filter(|&caller| {
                let token = &self.setup.tokens[caller];
                let holding = (1..=self.nodes.len())
                    .filter(|&node| {
                        let now = self.node_now_ms(node as u8, at_ms);
                        self.nodes[node - 1].redis.peek(&self.setup.lock_key, now)
                            == Some(token.as_slice())
                    })
                    .count();
                !self.nodes.is_empty() && holding >= majority
            })
            .collect()
    }
}
