//! What the servers report about every command and statement they execute.
//!
//! The Redis and PostgreSQL servers call an [`Observer`] once per executed command or
//! statement, in execution order, with the connection it came from. The simulation logs
//! events through it; [`TextLog`] records them as text lines, [`NoopObserver`] ignores them.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::rc::Rc;

use leaselab_model::postgres::{PgError, QueryResult, SessionId};
pub use leaselab_model::redis::reply::escape_bytes;
use leaselab_model::redis::Reply;

/// The protocol a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Protocol {
    /// RESP2 (Redis).
    Redis,
    /// The PostgreSQL frontend/backend protocol v3.
    Postgres,
}

impl Protocol {
    /// A short lower-case name: `redis` or `postgres`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Redis => "redis",
            Protocol::Postgres => "postgres",
        }
    }
}

/// Receives an event for every command or statement a server executes.
///
/// Connection ids are assigned by each server in accept order, starting at 1.
pub trait Observer {
    /// A Redis command was executed and answered with `reply`.
    fn redis_command(&self, conn_id: u64, argv: &[Vec<u8>], reply: &Reply);

    /// A SQL statement finished (it was not blocked, or it was re-executed after a wait).
    fn sql_statement(
        &self,
        conn_id: u64,
        sql: &str,
        params: &[i64],
        result: &Result<QueryResult, PgError>,
    );

    /// A SQL statement waits for a row lock held by session `blocked_by`; it is executed again
    /// when some session commits, rolls back or disconnects.
    fn sql_blocked(&self, conn_id: u64, sql: &str, params: &[i64], blocked_by: SessionId) {
        let _ = (conn_id, sql, params, blocked_by);
    }

    /// A connection was accepted from `peer` (when the server knows it; on turmoil's
    /// network the address of the caller's host).
    fn connection_opened(&self, protocol: Protocol, conn_id: u64, peer: Option<SocketAddr>) {
        let _ = (protocol, conn_id, peer);
    }

    /// A connection ended (EOF, Terminate, protocol error or the task being dropped).
    fn connection_closed(&self, protocol: Protocol, conn_id: u64) {
        let _ = (protocol, conn_id);
    }
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopObserver;

impl Observer for NoopObserver {
    fn redis_command(&self, _conn_id: u64, _argv: &[Vec<u8>], _reply: &Reply) {}

    fn sql_statement(
        &self,
        _conn_id: u64,
        _sql: &str,
        _params: &[i64],
        _result: &Result<QueryResult, PgError>,
    ) {
    }
}

/// Records every event as one line of text, in order.
///
/// The format is stable and contains nothing process-specific, so two runs with the same seed
/// produce identical logs.
#[derive(Debug, Default)]
pub struct TextLog {
    lines: RefCell<Vec<String>>,
}

impl TextLog {
    /// An empty log.
    pub fn new() -> TextLog {
        TextLog::default()
    }

    /// The lines recorded so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.borrow().clone()
    }

    /// All lines joined with `\n` (each line terminated).
    pub fn text(&self) -> String {
        let mut text = String::new();
        for line in self.lines.borrow().iter() {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    fn push(&self, line: String) {
        self.lines.borrow_mut().push(line);
    }
}

impl Observer for TextLog {
    fn redis_command(&self, conn_id: u64, argv: &[Vec<u8>], reply: &Reply) {
        let mut line = format!("redis conn={conn_id} cmd=[");
        for (index, arg) in argv.iter().enumerate() {
            if index > 0 {
                line.push(' ');
            }
            line.push_str(&escape_bytes(arg));
        }
        line.push_str("] reply=");
        line.push_str(&reply.describe());
        self.push(line);
    }

    fn sql_statement(
        &self,
        conn_id: u64,
        sql: &str,
        params: &[i64],
        result: &Result<QueryResult, PgError>,
    ) {
        let mut line = format!(
            "sql conn={conn_id} sql={} params={params:?} ",
            escape_bytes(sql.as_bytes())
        );
        match result {
            Ok(result) => {
                let _ = write!(line, "ok tag={:?} rows={:?}", result.tag, result.rows);
            }
            Err(error) => {
                let _ = write!(
                    line,
                    "error code={} message={:?}",
                    error.code, error.message
                );
            }
        }
        self.push(line);
    }

    fn sql_blocked(&self, conn_id: u64, sql: &str, params: &[i64], blocked_by: SessionId) {
        self.push(format!(
            "sql conn={conn_id} sql={} params={params:?} blocked_by_session={}",
            escape_bytes(sql.as_bytes()),
            blocked_by.0
        ));
    }

    fn connection_opened(&self, protocol: Protocol, conn_id: u64, peer: Option<SocketAddr>) {
        let peer = peer.map_or_else(|| "unknown".to_string(), |peer| peer.to_string());
        self.push(format!(
            "{} conn={conn_id} opened peer={peer}",
            protocol.name()
        ));
    }

    fn connection_closed(&self, protocol: Protocol, conn_id: u64) {
        self.push(format!("{} conn={conn_id} closed", protocol.name()));
    }
}

/// Reports a connection's opening when made and its closing when dropped (also when the task
/// serving it is dropped, e.g. by a host crash).
pub(crate) struct ConnectionEvents {
    observer: Rc<dyn Observer>,
    protocol: Protocol,
    conn_id: u64,
}

impl ConnectionEvents {
    /// Reports `conn_id` of `protocol` as opened from `peer`.
    pub(crate) fn opened(
        observer: Rc<dyn Observer>,
        protocol: Protocol,
        conn_id: u64,
        peer: Option<SocketAddr>,
    ) -> ConnectionEvents {
        observer.connection_opened(protocol, conn_id, peer);
        ConnectionEvents {
            observer,
            protocol,
            conn_id,
        }
    }
}

impl Drop for ConnectionEvents {
    fn drop(&mut self) {
        self.observer.connection_closed(self.protocol, self.conn_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_log_renders_each_event_on_one_line() {
        let log = TextLog::new();
        log.connection_opened(Protocol::Redis, 1, Some(([10, 0, 0, 2], 49152).into()));
        log.redis_command(
            1,
            &[b"SET".to_vec(), b"k\n".to_vec(), vec![0xff]],
            &Reply::Array(vec![Reply::ok(), Reply::Nil, Reply::Integer(-2)]),
        );
        log.redis_command(1, &[b"X".to_vec()], &Reply::error("ERR bad"));
        log.sql_blocked(2, "UPDATE x", &[1, 2], SessionId(7));
        log.connection_closed(Protocol::Postgres, 2);
        assert_eq!(
            log.text(),
            "redis conn=1 opened peer=10.0.0.2:49152\n\
             redis conn=1 cmd=[\"SET\" \"k\\n\" \"\\xff\"] reply=[OK, (nil), (integer) -2]\n\
             redis conn=1 cmd=[\"X\"] reply=(error) ERR bad\n\
             sql conn=2 sql=\"UPDATE x\" params=[1, 2] blocked_by_session=7\n\
             postgres conn=2 closed\n"
        );
    }
}
