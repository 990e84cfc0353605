//! Faults a run can inject, as data (the simulator and the model checker act on them).

use crate::redis::aof::Appendfsync;
use crate::safeguard::Point;
use crate::world::FaultsOn;

/// A network endpoint, for partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    /// Caller `n` (1-based), host `app-n`.
    Caller(u32),
    /// The Redis primary (host `redis`).
    Redis,
    /// The Redis replica (host `redis-replica`).
    Replica,
    /// PostgreSQL (host `postgres`).
    Postgres,
    /// Redlock's independent Redis node `n` (1-based), host `redis-n`.
    Node(u8),
}

impl Host {
    /// The host's name on the simulated network.
    pub fn name(self) -> String {
        match self {
            Host::Caller(n) => format!("app-{n}"),
            Host::Redis => "redis".into(),
            Host::Replica => "redis-replica".into(),
            Host::Postgres => "postgres".into(),
            Host::Node(n) => format!("redis-{n}"),
        }
    }

    /// Parses `app-N`, `redis`, `redis-replica`, `postgres` or `redis-N` (a Redlock node,
    /// 1 to [`crate::safeguard::redlock::NODES_MAX`]).
    pub fn parse(name: &str) -> Option<Host> {
        match name {
            "redis" => Some(Host::Redis),
            "redis-replica" | "replica" => Some(Host::Replica),
            "postgres" => Some(Host::Postgres),
            _ if name.starts_with("redis-") => name
                .strip_prefix("redis-")
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|n| (1..=crate::safeguard::redlock::NODES_MAX).contains(n))
                .map(Host::Node),
            _ => name
                .strip_prefix("app-")
                .and_then(|n| n.parse().ok())
                .filter(|n| *n >= 1)
                .map(Host::Caller),
        }
    }
}

/// A fault.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Caller `caller` (1-based) freezes for `pause_ms` the first time it reaches `at`: a GC
    /// pause. Nothing of the caller runs meanwhile, its lease keeps ageing.
    Pause {
        /// Which caller.
        caller: u32,
        /// Where.
        at: Point,
        /// How long.
        pause_ms: u64,
    },
    /// The Redis primary dies at `at_ms`; the replica, `lag_ms` behind, is promoted and the
    /// callers reconnect to it. What had not replicated is lost.
    Failover {
        /// When the primary dies (simulated ms from the start).
        at_ms: u64,
    },
    /// Redis restarts without persistence at `at_ms` (keyspace and script cache lost).
    RedisRestart {
        /// When.
        at_ms: u64,
    },
    /// The Redis replica restarts without persistence at `at_ms`: it comes back empty and is
    /// empty until its full resync has loaded (the replication lag later); what it had
    /// acknowledged to `WAIT` is gone from it meanwhile.
    ReplicaRestart {
        /// When.
        at_ms: u64,
    },
    /// The machine running Redis crashes at `at_ms` and Redis restarts from its append-only
    /// file: the keys as of the last fsync under `appendfsync` (see [`crate::redis::aof`]),
    /// an empty script cache; connections dropped.
    RedisCrashAof {
        /// When.
        at_ms: u64,
        /// When the file was fsynced.
        appendfsync: Appendfsync,
    },
    /// Memory pressure under an `allkeys-*` maxmemory policy evicts the fence counter at
    /// `at_ms` (it has no TTL, so `volatile-*` policies never pick it; `allkeys-*` may). The
    /// next `INCR` starts again from 1.
    EvictFenceCounter {
        /// When.
        at_ms: u64,
    },
    /// The link between `a` and `b` is cut from `from_ms` to `until_ms` (both ways, or only
    /// from `a` to `b` when `one_way`).
    Partition {
        /// One end.
        a: Host,
        /// The other end.
        b: Host,
        /// Cut at.
        from_ms: u64,
        /// Healed at.
        until_ms: u64,
        /// Only messages from `a` to `b` are lost.
        one_way: bool,
    },
    /// Redlock node `node` (1-based) loses its keyspace at `at_ms` and comes back empty: at
    /// once when `down_ms` is 0 (a restart without persistence), else after being down for
    /// `down_ms` (a delayed restart, the Redis page's mitigation when `down_ms` exceeds the
    /// TTL). Its connections drop either way.
    NodeRestart {
        /// Which node.
        node: u8,
        /// When.
        at_ms: u64,
        /// How long it stays down first (0: back at once).
        down_ms: u64,
    },
    /// Host `host`'s wall clock jumps by `jump_ms` (positive: forward) at `at_ms`.
    ClockJump {
        /// Whose clock.
        host: Host,
        /// When.
        at_ms: u64,
        /// By how much.
        jump_ms: i64,
    },
    /// Host `host`'s wall clock runs at the wrong rate from the release on: `rate_ppm`
    /// millionths fast (negative: slow); +2 % is `20_000`. At most ±[`MAX_CLOCK_RATE_PPM`].
    ClockDrift {
        /// Whose clock.
        host: Host,
        /// How far off its rate is, in parts per million.
        rate_ppm: i64,
    },
    /// Host `host`'s wall clock is corrected by `offset_ms` from `at_ms` on, gradually, as NTP
    /// slews: it runs `rate_ppm` millionths fast (or slow, for a negative offset) until the
    /// whole offset is applied, never stepping. 500 ppm is ntpd's limit; at most
    /// [`MAX_CLOCK_RATE_PPM`].
    ClockSlew {
        /// Whose clock.
        host: Host,
        /// When the correction starts.
        at_ms: u64,
        /// The whole correction (positive: forward).
        offset_ms: i64,
        /// How fast it is applied, in parts per million (greater than 0).
        rate_ppm: u64,
    },
    /// Caller `caller`'s (1-based) first Redis request of stage `on` runs on the server,
    /// but its reply never reaches the caller, who waits until its read timeout (and then,
    /// as go-redis does, closes the connection): the checker's `--lost-replies`.
    LostReply {
        /// Whose request.
        caller: u32,
        /// Which request: the first one (`Any`), or the first acquire or release.
        on: FaultsOn,
    },
    /// Caller `caller`'s first Redis request of stage `on` runs on the server, then the
    /// connection breaks with the reply in flight; the client sends the request again on a
    /// new connection, as go-redis retries (a script runs twice): the checker's
    /// `--dropped-connections`.
    DroppedConnection {
        /// Whose request.
        caller: u32,
        /// Which request: the first one (`Any`), or the first acquire or release.
        on: FaultsOn,
    },
}

/// The largest clock rate error (drift) or slew rate a fault may give: 50 %, in parts per
/// million. Beyond it a clock is broken rather than off.
pub const MAX_CLOCK_RATE_PPM: u64 = 500_000;

/// A rate in parts per million as a person reads it: `+2%`, `-0.5%`, `500ppm`.
pub fn describe_ppm(rate_ppm: i64) -> String {
    if rate_ppm == 0 || rate_ppm % 1_000 != 0 {
        return format!("{rate_ppm}ppm");
    }
    let sign = if rate_ppm < 0 { '-' } else { '+' };
    let tenths_percent = rate_ppm.unsigned_abs() / 1_000;
    match tenths_percent % 10 {
        0 => format!("{sign}{}%", tenths_percent / 10),
        tenth => format!("{sign}{}.{tenth}%", tenths_percent / 10),
    }
}

impl Fault {
    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        match self {
            Fault::Pause {
                caller,
                at,
                pause_ms,
            } => format!("pause app-{caller} at {} for {pause_ms}ms", at.name()),
            Fault::Failover { at_ms } => format!("failover at {at_ms}ms"),
            Fault::RedisRestart { at_ms } => format!("redis restart (no persistence) at {at_ms}ms"),
            Fault::ReplicaRestart { at_ms } => {
                format!("redis-replica restart (no persistence) at {at_ms}ms")
            }
            Fault::RedisCrashAof { at_ms, appendfsync } => format!(
                "redis machine crash at {at_ms}ms, restart from the AOF (appendfsync {})",
                appendfsync.name()
            ),
            Fault::EvictFenceCounter { at_ms } => {
                format!("allkeys eviction of the fence counter at {at_ms}ms")
            }
            Fault::Partition {
                a,
                b,
                from_ms,
                until_ms,
                one_way,
            } => format!(
                "partition {} {} {} from {from_ms}ms to {until_ms}ms",
                a.name(),
                if *one_way { "->" } else { "<->" },
                b.name()
            ),
            Fault::NodeRestart {
                node,
                at_ms,
                down_ms: 0,
            } => format!("redis-{node} restarts (no persistence) at {at_ms}ms"),
            Fault::NodeRestart {
                node,
                at_ms,
                down_ms,
            } => {
                format!("redis-{node} crashes at {at_ms}ms and restarts (empty) {down_ms}ms later")
            }
            Fault::ClockJump {
                host,
                at_ms,
                jump_ms,
            } => format!("clock of {} jumps {jump_ms:+}ms at {at_ms}ms", host.name()),
            Fault::ClockDrift { host, rate_ppm } => format!(
                "clock of {} drifts {} ({rate_ppm:+} ppm)",
                host.name(),
                describe_ppm(*rate_ppm)
            ),
            Fault::ClockSlew {
                host,
                at_ms,
                offset_ms,
                rate_ppm,
            } => format!(
                "clock of {} slews {offset_ms:+}ms at {rate_ppm} ppm from {at_ms}ms",
                host.name()
            ),
            Fault::LostReply { caller, on } => {
                format!(
                    "the reply to app-{caller}'s first {} request is lost",
                    on_name(*on)
                )
            }
            Fault::DroppedConnection { caller, on } => format!(
                "app-{caller}'s connection drops with the reply to its first {} request in flight",
                on_name(*on)
            ),
        }
    }
}

/// `Redis`, `acquire` or `release`: the request a reply fault aims at, as a phrase.
fn on_name(on: FaultsOn) -> &'static str {
    match on {
        FaultsOn::Any => "Redis",
        on => on.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_as_percent_or_ppm() {
        assert_eq!(describe_ppm(20_000), "+2%");
        assert_eq!(describe_ppm(-20_000), "-2%");
        assert_eq!(describe_ppm(5_000), "+0.5%");
        assert_eq!(describe_ppm(-5_000), "-0.5%");
        assert_eq!(describe_ppm(500), "500ppm");
    }
}
