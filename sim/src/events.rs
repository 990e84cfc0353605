//! The event log of a run: everything that was sent, answered or done, in simulated time.
//!
//! Each [`Event`] says when (`t_us`, microseconds since the callers' release; negative while
//! connections are being set up), where (`host`: `app-N`, `redis`, `postgres`, or `world`
//! for what the simulation itself does: faults, lease expiries), and what ([`What`], tagged
//! by `event`). The log is built in a deterministic order, and its [`digest`] identifies a
//! run: the same scenario and seed give the same digest, in any process.

use std::cell::RefCell;
use std::io::Write as _;

use leaselab_model::postgres::{Answer, Statement};
use leaselab_model::redis::Reply;
use leaselab_model::safeguard::{Outcome, Point, Reading, RedisRequest};
use serde::{Deserialize, Serialize};
use sha1::{Digest as _, Sha1};

/// One thing that happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Microseconds since the callers were released (negative during set-up).
    pub t_us: i64,
    /// Where it happened: `app-N`, `redis`, `postgres` or `world`.
    pub host: String,
    /// What happened.
    #[serde(flatten)]
    pub what: What,
}

/// What happened, tagged by `event` in JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum What {
    // --- callers -------------------------------------------------------------------------
    /// A caller opened a connection to `server` (`redis` or `postgres`).
    Connected {
        /// `redis` or `postgres`.
        server: String,
    },
    /// A caller could not open a connection.
    ConnectFailed {
        /// `redis` or `postgres`.
        server: String,
        /// Why.
        error: String,
    },
    /// All callers were released (host `world`, at t = 0).
    Released {
        /// How many callers.
        callers: u32,
    },
    /// A caller started its safeguard machine.
    Started,
    /// A caller sent a request to Redis (as the safeguard asked for it; scripts by name).
    RedisRequest {
        /// The request: a command's argv, or a script by name with its keys and arguments.
        request: RedisRequest,
        /// Its timeout (the safeguard's, or the client's read timeout).
        timeout_ms: u64,
        /// The Redlock node it went to (1-based); none for the single Redis.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<u8>,
    },
    /// Redis answered a caller.
    RedisReply {
        /// The reply.
        reply: Reply,
        /// What the caller's safeguard machine made of it (acquired, busy, not held, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reading: Option<Reading>,
    },
    /// A Redis request got no answer in time; the connection is closed.
    RedisTimeout {
        /// After how long.
        after_ms: u64,
    },
    /// A request failed because the connection broke.
    ConnectionError {
        /// `redis` or `postgres`.
        server: String,
        /// What the client said.
        error: String,
    },
    /// The Redis replica restarted without persistence (host `world`): empty until its full
    /// resync loads.
    ReplicaRestart,
    /// A fault took the reply to the caller's Redis request away (the request ran): the
    /// caller waits until its read timeout.
    ReplyLost,
    /// A fault broke the caller's Redis connection with the reply in flight (the request
    /// ran): the client may send it again on a new connection.
    ConnectionDropped,
    /// The client sends the request again on a new connection (go-redis `MaxRetries`).
    Retry {
        /// `redis`.
        server: String,
        /// Which retry (1-based).
        attempt: u32,
        /// The backoff before it.
        backoff_ms: u64,
    },
    /// A caller sent a statement to PostgreSQL.
    SqlRequest {
        /// The statement (stored as its SQL text).
        statement: Statement,
        /// `$1`, `$2`, ...
        params: Vec<i64>,
    },
    /// PostgreSQL answered a caller.
    SqlReply {
        /// The command tag and rows, or the error.
        answer: Answer,
        /// What the caller's safeguard machine made of it (read, wrote, refused, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reading: Option<Reading>,
    },
    /// A caller sleeps (backoff, work, watchdog tick).
    Sleep {
        /// For how long.
        ms: u64,
    },
    /// A caller reached a named point (where a pause may be injected).
    Reached {
        /// The point, e.g. `after-read`.
        point: Point,
    },
    /// A caller froze (a GC pause): nothing of it runs until [`What::PauseEnd`].
    PauseStart {
        /// Where.
        point: Point,
        /// For how long.
        ms: u64,
    },
    /// The pause ended.
    PauseEnd {
        /// Where.
        point: Point,
    },
    /// A caller finished.
    Done {
        /// How the spend ended (its words: [`Outcome::describe`]).
        outcome: Outcome,
    },

    // --- servers -------------------------------------------------------------------------
    /// A server accepted a connection.
    ConnectionOpened {
        /// The server's connection id.
        conn: u64,
        /// The caller host it came from.
        client: Option<String>,
    },
    /// A server's connection ended.
    ConnectionClosed {
        /// The server's connection id.
        conn: u64,
    },
    /// Redis executed a command.
    RedisExecuted {
        /// The connection id.
        conn: u64,
        /// The caller host on that connection.
        client: Option<String>,
        /// The command as received.
        argv: Vec<String>,
        /// The reply.
        reply: Reply,
        /// The server's wall clock (Unix ms) when it ran.
        clock_ms: u64,
    },
    /// PostgreSQL executed a statement.
    SqlExecuted {
        /// The connection id.
        conn: u64,
        /// The caller host on that connection.
        client: Option<String>,
        /// The SQL text.
        sql: String,
        /// The parameters.
        params: Vec<i64>,
        /// The command tag and rows, or the error.
        answer: Answer,
    },
    /// A statement waits for a row lock.
    SqlBlocked {
        /// The connection id.
        conn: u64,
        /// The SQL text.
        sql: String,
        /// The session holding the lock.
        blocked_by: u32,
    },

    // --- the lock, as the primary holds it -------------------------------------------------
    /// The lock key now holds `holder`'s token (set by a command).
    LockTaken {
        /// The caller whose token it is (`app-N`), or the raw value.
        holder: String,
        /// When the lease ends on the server's clock (Unix ms), if it has a TTL.
        expires_at_ms: Option<u64>,
    },
    /// A command deleted the lock key.
    LockReleased {
        /// Whose it was.
        holder: String,
    },
    /// The lease ran out: the lock key expired while `holder` may still believe it holds it.
    LeaseExpired {
        /// Whose it was.
        holder: String,
    },

    // --- faults --------------------------------------------------------------------------
    /// A network link was cut.
    Partition {
        /// One end.
        a: String,
        /// The other end.
        b: String,
        /// Only `a` → `b`.
        one_way: bool,
    },
    /// A cut link was healed.
    Heal {
        /// One end.
        a: String,
        /// The other end.
        b: String,
        /// Only `a` → `b`.
        one_way: bool,
    },
    /// The primary died and the replica was promoted behind the `redis` address; every
    /// connection to it was dropped.
    Failover {
        /// The changes the replica had not received, lost with the primary.
        lost: Vec<String>,
        /// The lock holder on the promoted replica.
        lock_holder: Option<String>,
        /// The fence counter on the promoted replica.
        fence_counter: Option<String>,
    },
    /// Redis restarted without persistence: empty keyspace and script cache.
    RedisRestart,
    /// The machine running Redis crashed and Redis restarted from its append-only file; every
    /// connection to it was dropped.
    RedisCrashAof {
        /// The `appendfsync` policy (`always`, `everysec`, `no`).
        appendfsync: String,
        /// The changes written but not fsynced, lost with the machine.
        lost: Vec<String>,
        /// The lock holder after the restart.
        lock_holder: Option<String>,
        /// The fence counter after the restart.
        fence_counter: Option<String>,
    },
    /// Memory pressure under an `allkeys-*` policy evicted a key.
    Evicted {
        /// The key.
        key: String,
        /// Its value before, if it existed.
        value: Option<String>,
    },
    /// A Redlock node lost its keyspace: restarted at once without persistence (`down_ms`
    /// 0), or crashed to come back `down_ms` later ([`What::NodeBack`]); its connections
    /// dropped.
    NodeRestart {
        /// The node (1-based).
        node: u8,
        /// How long it stays down.
        down_ms: u64,
    },
    /// A crashed Redlock node is back, empty.
    NodeBack {
        /// The node (1-based).
        node: u8,
    },
    /// A server's wall clock jumped.
    ClockJump {
        /// Whose clock (not `host`: every event has a `host`, the one that logged it).
        server: String,
        /// By how much.
        jump_ms: i64,
    },
    /// The run stopped at its horizon with callers still running.
    Horizon {
        /// Callers that had not finished.
        unfinished: u32,
    },
}

/// The log, appended to by every host (all run on one thread).
#[derive(Debug, Default)]
pub struct EventLog {
    events: RefCell<Vec<Event>>,
}

impl EventLog {
    /// An empty log.
    pub fn new() -> EventLog {
        EventLog::default()
    }

    /// Appends an event.
    pub fn push(&self, t_us: i64, host: &str, what: What) {
        self.events.borrow_mut().push(Event {
            t_us,
            host: host.to_string(),
            what,
        });
    }

    /// How many events so far.
    pub fn len(&self) -> usize {
        self.events.borrow().len()
    }

    /// True when nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.events.borrow().is_empty()
    }

    /// Takes the events out.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut self.events.borrow_mut())
    }
}

/// The SHA-1 of the log's JSON lines (one event per line), as 40 hex digits.
pub fn digest(events: &[Event]) -> String {
    let mut hasher = HashWriter(Sha1::new());
    for event in events {
        serde_json::to_writer(&mut hasher, event).expect("events serialise");
        hasher.write_all(b"\n").expect("hashing cannot fail");
    }
    hex::encode(hasher.0.finalize())
}

/// Feeds written bytes into a hasher.
struct HashWriter(Sha1);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One event as a line of text, e.g. `   12.000ms app-3     redis-request SET ...`.
pub fn render(event: &Event) -> String {
    let ms = event.t_us as f64 / 1_000.0;
    let what = match &event.what {
        What::Connected { server } => format!("connected to {server}"),
        What::ConnectFailed { server, error } => format!("cannot connect to {server}: {error}"),
        What::Released { callers } => format!("{callers} callers released"),
        What::Started => "starts".to_string(),
        What::RedisRequest {
            request,
            timeout_ms,
            node,
        } => format!(
            "-> redis{} {} (timeout {timeout_ms}ms)",
            node.map(|n| format!("-{n}")).unwrap_or_default(),
            request.describe()
        ),
        What::RedisReply { reply, reading } => {
            format!("<- redis {}{}", reply.describe(), reading_suffix(reading))
        }
        What::RedisTimeout { after_ms } => format!("<- redis no answer after {after_ms}ms"),
        What::ReplyLost => "FAULT: the reply to this request is lost (it ran)".to_string(),
        What::ConnectionDropped => {
            "FAULT: the connection drops with the reply in flight (the request ran)".to_string()
        }
        What::ConnectionError { server, error } => format!("<- {server} connection error: {error}"),
        What::Retry {
            server,
            attempt,
            backoff_ms,
        } => format!("retries on {server} (attempt {attempt}, after {backoff_ms}ms)"),
        What::SqlRequest { statement, params } => {
            format!("-> postgres {} {params:?}", statement.sql())
        }
        What::SqlReply { answer, reading } => {
            let rows = match answer {
                Answer::Ok { rows, .. } if !rows.is_empty() => format!(" {rows:?}"),
                _ => String::new(),
            };
            format!(
                "<- postgres {}{rows}{}",
                answer.describe(),
                reading_suffix(reading)
            )
        }
        What::Sleep { ms } => format!("sleeps {ms}ms"),
        What::Reached { point } => format!("at {}", point.name()),
        What::PauseStart { point, ms } => format!("PAUSED at {} for {ms}ms", point.name()),
        What::PauseEnd { point } => format!("resumes after pause at {}", point.name()),
        What::Done { outcome } => format!("done: {}", outcome.describe()),
        What::ConnectionOpened { conn, client } => format!(
            "conn {conn} opened{}",
            client
                .as_ref()
                .map(|c| format!(" by {c}"))
                .unwrap_or_default()
        ),
        What::ConnectionClosed { conn } => format!("conn {conn} closed"),
        What::RedisExecuted {
            conn,
            client,
            argv,
            reply,
            ..
        } => format!(
            "conn {conn}{} {} -> {}",
            client
                .as_ref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default(),
            argv.iter()
                .map(|arg| if arg.contains('\n') {
                    "<script source>".to_string()
                } else {
                    arg.clone()
                })
                .collect::<Vec<_>>()
                .join(" "),
            reply.describe()
        ),
        What::SqlExecuted {
            conn,
            client,
            sql,
            params,
            answer,
        } => format!(
            "conn {conn}{} {sql} {params:?} -> {}",
            client
                .as_ref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default(),
            answer.describe()
        ),
        What::SqlBlocked {
            conn,
            sql,
            blocked_by,
        } => format!("conn {conn} {sql} waits for session {blocked_by}"),
        What::LockTaken {
            holder,
            expires_at_ms,
        } => match expires_at_ms {
            Some(at) => format!("lock held by {holder} until {at}"),
            None => format!("lock held by {holder} (no expiry)"),
        },
        What::LockReleased { holder } => format!("lock of {holder} deleted"),
        What::LeaseExpired { holder } => format!("LEASE EXPIRED (was {holder}'s)"),
        What::Partition { a, b, one_way } => {
            format!("PARTITION {a} {} {b}", if *one_way { "->" } else { "<->" })
        }
        What::Heal { a, b, one_way } => {
            format!("heal {a} {} {b}", if *one_way { "->" } else { "<->" })
        }
        What::Failover {
            lost,
            lock_holder,
            fence_counter,
        } => format!(
            "FAILOVER: replica promoted, {} change(s) lost {lost:?}; lock holder {}, fence counter {}",
            lost.len(),
            lock_holder.as_deref().unwrap_or("none"),
            fence_counter.as_deref().unwrap_or("none")
        ),
        What::RedisRestart => "REDIS RESTART without persistence".to_string(),
        What::ReplicaRestart => {
            "REPLICA RESTART without persistence: empty until its full resync loads".to_string()
        }
        What::RedisCrashAof {
            appendfsync,
            lost,
            lock_holder,
            fence_counter,
        } => format!(
            "REDIS CRASH, restart from the AOF (appendfsync {appendfsync}): {} change(s) lost {lost:?}; lock holder {}, fence counter {}",
            lost.len(),
            lock_holder.as_deref().unwrap_or("none"),
            fence_counter.as_deref().unwrap_or("none")
        ),
        What::Evicted { key, value } => format!(
            "EVICTED {key} (was {}) by an allkeys policy",
            value.as_deref().unwrap_or("missing")
        ),
        What::NodeRestart { node, down_ms: 0 } => {
            format!("REDIS-{node} RESTART without persistence")
        }
        What::NodeRestart { node, down_ms } => {
            format!("REDIS-{node} CRASH, keyspace lost; back in {down_ms}ms")
        }
        What::NodeBack { node } => format!("redis-{node} is back, empty"),
        What::ClockJump { server, jump_ms } => {
            format!("clock of {server} jumps {jump_ms:+}ms")
        }
        What::Horizon { unfinished } => {
            format!("horizon reached with {unfinished} caller(s) unfinished")
        }
    };
    format!("{ms:>10.3}ms {:<9} {what}", event.host)
}

/// ` (got the lock, fence 33)`: a caller's reading after the reply it read.
fn reading_suffix(reading: &Option<Reading>) -> String {
    match reading {
        Some(reading) => format!(" ({})", reading.describe()),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_tagged_and_the_digest_follows_content() {
        let log = EventLog::new();
        log.push(-3_000, "app-1", What::Started);
        log.push(
            5_000,
            "redis",
            What::RedisExecuted {
                conn: 1,
                client: Some("app-1".into()),
                argv: vec!["GET".into(), "k".into()],
                reply: Reply::Nil,
                clock_ms: 1,
            },
        );
        let events = log.take();
        let json = serde_json::to_string(&events[0]).unwrap();
        assert_eq!(json, r#"{"t_us":-3000,"host":"app-1","event":"started"}"#);
        let back: Event =
            serde_json::from_str(&serde_json::to_string(&events[1]).unwrap()).expect("round trip");
        assert_eq!(back, events[1]);
        let first = digest(&events);
        assert_eq!(first.len(), 40);
        assert_eq!(first, digest(&events));
        assert_ne!(first, digest(&events[..1]));
    }
}
