//! The client core: a sans-IO machine that wraps a safeguard machine and owns the client
//! policy — connections, per-request deadlines, go-redis-style retries, what a caller is told
//! when a server does not answer.
//!
//! A safeguard machine ([`Machine`]) speaks in requests and answers; it never sees a
//! connection. [`Client`] stands between it and a driver, in the style of quinn-proto: the
//! driver asks [`Client::poll`] what to do next ([`Output`]: open connection N, send this on
//! connection N, close it, wait, done), carries it out, and hands the answer back through a
//! `handle_*` method. Timers are data: [`Client::poll_timeout`] is the instant (caller clock,
//! ms) when the outstanding request is given up on, and the driver calls
//! [`Client::handle_timeout`] once it has passed. Randomness is data too: a retry's backoff is
//! asked for ([`Output::DrawBackoff`]) and its value handed back. Nothing here reads a clock,
//! touches a socket or draws a random number.
//!
//! Three drivers use it: the simulation and real mode (`leaselab-sim`'s driver, through the
//! real `redis` and `tokio-postgres` clients) and [`crate::world::World`], which answers at
//! once and can lose a reply or drop a connection to let the model checker explore both.
//!
//! # The policy ([`ClientPolicy`], go-redis's and pgx's defaults)
//!
//! - every Redis request has a deadline: the safeguard's own timeout (the watchdog's TTL/3),
//!   else the read timeout (3 s). A request that misses it gives the machine
//!   [`Input::RedisTimeout`], and its connection is closed (a partitioned TCP connection never
//!   recovers); the next request opens a new one;
//! - a connection that broke (reset, end of stream, refused) is closed too, and the request is
//!   sent again on a new connection up to [`ClientPolicy::max_retries`] times (go-redis
//!   `MaxRetries`) after a backoff drawn below `min_retry_backoff_ms << attempt`, capped at
//!   `max_retry_backoff_ms` — as long as the backoff ends before the request's deadline. Like
//!   go-redis, this runs a script twice when only its reply was lost. When the retries are
//!   used up the machine gets [`Input::ConnectionError`];
//! - opening a connection has its own deadline ([`ClientPolicy::dial_timeout_ms`]);
//! - PostgreSQL statements are never retried (pgx does not retry `Exec`); a statement that
//!   gets no answer within [`ClientPolicy::sql_timeout_ms`], or whose connection broke, gives
//!   the machine [`Input::ConnectionError`] and the next statement opens a new session.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::postgres::{PgError, QueryResult};
use crate::redis::Reply;
use crate::safeguard::{
    CallerStats, Input, Machine, Outcome, Point, RedisRequest, SqlRequest, Step,
};

/// How the clients behave when the network or a server misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientPolicy {
    /// Deadline for opening a connection (go-redis `DialTimeout`: 5 s).
    pub dial_timeout_ms: u64,
    /// Deadline of a Redis request without its own timeout (go-redis `ReadTimeout`: 3 s).
    pub read_timeout_ms: u64,
    /// Deadline of a SQL statement (`None`: wait as long as it takes, e.g. for a row lock).
    pub sql_timeout_ms: Option<u64>,
    /// How often a Redis request is sent again after its connection broke (go-redis
    /// `MaxRetries`: 3; 0: never).
    pub max_retries: u32,
    /// Backoff before retry `n` is random below `min_retry_backoff_ms << n` ...
    pub min_retry_backoff_ms: u64,
    /// ... capped at this (go-redis: 8 ms and 512 ms).
    pub max_retry_backoff_ms: u64,
}

impl Default for ClientPolicy {
    fn default() -> ClientPolicy {
        ClientPolicy {
            dial_timeout_ms: 5_000,
            read_timeout_ms: 3_000,
            sql_timeout_ms: Some(5_000),
            max_retries: 3,
            min_retry_backoff_ms: 8,
            max_retry_backoff_ms: 512,
        }
    }
}

impl ClientPolicy {
    /// go-redis's `RetryBackoff` bound for retry `attempt` (1-based): the backoff is drawn
    /// uniformly below it (0 when it is 0).
    pub fn backoff_below_ms(&self, attempt: u32) -> u64 {
        let mut cap = self
            .min_retry_backoff_ms
            .checked_shl(attempt)
            .unwrap_or(u64::MAX);
        if cap > self.max_retry_backoff_ms || cap < self.min_retry_backoff_ms {
            cap = self.max_retry_backoff_ms;
        }
        cap
    }
}

/// Which server a connection goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Server {
    /// The Redis primary.
    Redis,
    /// PostgreSQL.
    Postgres,
    /// Redlock's independent Redis node `n` (1-based; host `redis-n`).
    Node(u8),
}

impl Server {
    /// The Redis server of a [`Step::Redis`]'s `node`: the single Redis for
    /// [`crate::safeguard::step::SINGLE_REDIS`], else a Redlock node.
    pub fn redis_node(node: u8) -> Server {
        if node == crate::safeguard::step::SINGLE_REDIS {
            Server::Redis
        } else {
            Server::Node(node)
        }
    }
}

/// A connection, numbered in the order the client opened them (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u32);

/// Why the client closes a connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CloseReason {
    /// It broke, or could not be opened; the text says how.
    Broken(String),
    /// A Redis request got no reply within `after_ms`: the connection is in an unknown state.
    RedisTimeout {
        /// The request's timeout.
        after_ms: u64,
    },
    /// A statement got no answer within `after_ms`.
    SqlTimeout {
        /// The statement's timeout.
        after_ms: u64,
    },
}

impl CloseReason {
    /// The error a caller is told, e.g. `no answer within 5000ms`.
    pub fn error(&self) -> String {
        match self {
            CloseReason::Broken(error) => error.clone(),
            CloseReason::RedisTimeout { after_ms } => format!("no reply within {after_ms}ms"),
            CloseReason::SqlTimeout { after_ms } => format!("no answer within {after_ms}ms"),
        }
    }
}

/// What the client wants its driver to do next.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Output {
    /// A Redis request begins; it is given up on after `timeout_ms`
    /// ([`Client::poll_timeout`]). Nothing to answer.
    BeginRedis {
        /// Which Redis server.
        server: Server,
        /// The request.
        request: Arc<RedisRequest>,
        /// Its timeout.
        timeout_ms: u64,
    },
    /// A statement begins. Nothing to answer.
    BeginSql {
        /// The statement.
        request: Arc<SqlRequest>,
    },
    /// Open connection `conn` to `server`, giving up after `dial_timeout_ms`. Answer with
    /// [`Client::handle_connected`] or [`Client::handle_connect_failed`].
    Connect {
        /// Where.
        server: Server,
        /// Its number.
        conn: ConnId,
        /// The dial deadline.
        dial_timeout_ms: u64,
    },
    /// Send `request` on `conn`. Answer with [`Client::handle_redis_reply`],
    /// [`Client::handle_connection_broke`] or (after the deadline) [`Client::handle_timeout`].
    SendRedis {
        /// Which Redis server.
        server: Server,
        /// The connection.
        conn: ConnId,
        /// The request.
        request: Arc<RedisRequest>,
        /// 0 for the first send, n for the n-th retry.
        attempt: u32,
    },
    /// Run `request` on `conn`. Answer with [`Client::handle_sql_result`],
    /// [`Client::handle_connection_broke`] or (after the deadline) [`Client::handle_timeout`].
    /// A driver that finds the session closed before sending calls
    /// [`Client::handle_found_closed`].
    SendSql {
        /// The connection.
        conn: ConnId,
        /// The statement.
        request: Arc<SqlRequest>,
    },
    /// Close `conn`: it broke or is in an unknown state. Nothing to answer.
    Close {
        /// Where it went.
        server: Server,
        /// Its number.
        conn: ConnId,
        /// Why.
        reason: CloseReason,
    },
    /// Draw retry `attempt`'s backoff uniformly below `below_ms` (0 when `below_ms` is 0) and
    /// hand it to [`Client::handle_backoff_drawn`].
    DrawBackoff {
        /// Which retry (1-based).
        attempt: u32,
        /// The exclusive bound.
        below_ms: u64,
    },
    /// Wait `backoff_ms`, then call [`Client::handle_woke`]: the request is sent again.
    Retry {
        /// Where.
        server: Server,
        /// Which retry (1-based).
        attempt: u32,
        /// How long to wait.
        backoff_ms: u64,
    },
    /// The safeguard sleeps ([`Step::Sleep`]); call [`Client::handle_woke`] when it ends.
    /// [`wake_ms`] clips a drawn duration to the deadline.
    Sleep {
        /// Shortest sleep.
        min_ms: u64,
        /// Longest sleep.
        max_ms: u64,
        /// Wake at this time at the latest.
        deadline_ms: Option<u64>,
    },
    /// The caller reached a named point where a driver may pause it; call
    /// [`Client::handle_resumed`] to go on.
    Reached(Point),
    /// The caller is finished.
    Done(Outcome),
}

/// When a sleep that started at `now_ms` and drew `drawn_ms` ends: no later than its
/// deadline, never before `now_ms`.
pub fn wake_ms(now_ms: u64, drawn_ms: u64, deadline_ms: Option<u64>) -> u64 {
    match deadline_ms {
        Some(deadline) => now_ms.saturating_add(drawn_ms).min(deadline.max(now_ms)),
        None => now_ms.saturating_add(drawn_ms),
    }
}

/// Which servers a caller connects to during set-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SetUp {
    /// Open a Redis connection.
    pub redis: bool,
    /// Open a PostgreSQL session.
    pub postgres: bool,
}

/// Where an outstanding Redis request is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum RedisStage {
    /// Opening this connection.
    Connecting(ConnId),
    /// Sent on this connection, waiting for the reply.
    Sent(ConnId),
    /// Waiting for the backoff of the current attempt to be drawn; `error` is what broke.
    Drawing { error: String },
    /// Waiting out the backoff.
    BackingOff,
}

/// Where an outstanding statement is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum SqlStage {
    /// Opening this connection.
    Connecting(ConnId),
    /// Sent on this connection.
    Sent(ConnId),
}

/// What the client is doing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Op {
    /// Nothing outstanding: the machine runs when it has an input.
    Idle,
    /// Opening a set-up connection.
    SetUp(Server, ConnId),
    /// A Redis request (shared with the outputs that carry it, and behind a pointer: a
    /// client spends most of its life idle, and the world keeps millions of them).
    Redis {
        server: Server,
        request: Arc<RedisRequest>,
        timeout_ms: u64,
        deadline_ms: u64,
        attempt: u32,
        stage: RedisStage,
    },
    /// A statement.
    Sql {
        request: Arc<SqlRequest>,
        deadline_ms: Option<u64>,
        stage: SqlStage,
    },
    /// The safeguard sleeps.
    Sleeping,
    /// The caller is at a named point.
    AtPoint,
    /// Finished.
    Done,
}

/// A safeguard machine with its connections and client policy (see the module docs).
///
/// Equal clients behave the same; a client between two requests holds only the machine,
/// which connections are open, and the input the machine gets next.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Client<M> {
    machine: M,
    policy: Arc<ClientPolicy>,
    redis: Option<ConnId>,
    /// Connections to Redlock's nodes, by node number − 1 (empty for a single Redis).
    nodes: Vec<Option<ConnId>>,
    postgres: Option<ConnId>,
    opened: u32,
    op: Op,
    /// The input the machine gets at the next [`Client::poll`].
    /// (Boxed: it is there only between an answer and the next poll.)
    input: Option<Box<Input>>,
    /// Outputs not yet polled.
    /// (Inline: one step queues at most a few, and a copied client would otherwise allocate
    /// its queue anew on its first step.)
    queue: SmallVec<[Output; 2]>,
    /// Set-up connections still to open.
    set_up: SetUp,
}

impl<M: Machine> Client<M> {
    /// A client for `machine` that first opens the connections of `set_up`, then waits for
    /// [`Client::start`].
    pub fn new(machine: M, policy: ClientPolicy, set_up: SetUp) -> Client<M> {
        let mut client = Client {
            machine,
            policy: Arc::new(policy),
            redis: None,
            nodes: Vec::new(),
            postgres: None,
            opened: 0,
            op: Op::Idle,
            input: None,
            queue: SmallVec::new(),
            set_up,
        };
        client.next_set_up();
        client
    }

    /// The safeguard machine.
    pub fn machine(&self) -> &M {
        &self.machine
    }

    /// The machine's counters.
    pub fn stats(&self) -> CallerStats {
        self.machine.stats()
    }

    /// The policy.
    pub fn policy(&self) -> &ClientPolicy {
        &self.policy
    }

    /// The open connection to `server`, if any.
    pub fn connection(&self, server: Server) -> Option<ConnId> {
        match server {
            Server::Redis => self.redis,
            Server::Postgres => self.postgres,
            Server::Node(node) => self.nodes.get(usize::from(node) - 1).copied().flatten(),
        }
    }

    /// Records the open connection to a Redis `server` (none: closed).
    fn set_redis_conn(&mut self, server: Server, conn: Option<ConnId>) {
        match server {
            Server::Redis => self.redis = conn,
            Server::Node(node) => {
                assert!(node >= 1, "Redlock nodes are numbered from 1");
                let index = usize::from(node) - 1;
                if self.nodes.len() <= index {
                    self.nodes.resize(index + 1, None);
                }
                self.nodes[index] = conn;
            }
            Server::Postgres => unreachable!("not a Redis server"),
        }
    }

    /// How many connections the client has opened (or tried to).
    pub fn connections_opened(&self) -> u32 {
        self.opened
    }

    /// The caller starts: the machine gets [`Input::Start`] at the next poll.
    pub fn start(&mut self) {
        self.deliver(Input::Start);
    }

    /// Hands the machine `input` for its next step: for a driver that keeps the answer to a
    /// step itself until the caller runs again (the [`crate::world::World`]), after taking it
    /// with [`Client::take_input`]. [`Input::Woke`] also ends a retry's backoff.
    pub fn deliver(&mut self, input: Input) {
        match (&self.op, &input) {
            (Op::Sleeping, Input::Woke)
            | (
                Op::Redis {
                    stage: RedisStage::BackingOff,
                    ..
                },
                Input::Woke,
            ) => return self.handle_woke(),
            (Op::AtPoint, Input::Resumed) => return self.handle_resumed(),
            _ => {}
        }
        assert!(
            self.input.is_none() && matches!(self.op, Op::Idle),
            "input {input:?} delivered while {:?}",
            self.op
        );
        self.input = Some(Box::new(input));
    }

    /// Takes back the input the machine would get at the next poll (see [`Client::deliver`]).
    pub fn take_input(&mut self) -> Option<Input> {
        self.input.take().map(|input| *input)
    }

    /// The next thing to do, or `None` while the client waits for an answer (or for
    /// [`Client::start`]). Runs the machine when it has an input, at caller time `now_ms`.
    pub fn poll(&mut self, now_ms: u64) -> Option<Output> {
        if let Some(output) = self.next_queued() {
            return Some(output);
        }
        if self.op != Op::Idle {
            return None;
        }
        let input = self.input.take()?;
        let step = self.machine.next(now_ms, *input);
        self.begin(now_ms, step);
        self.next_queued()
    }

    /// The first output not yet polled.
    fn next_queued(&mut self) -> Option<Output> {
        (!self.queue.is_empty()).then(|| self.queue.remove(0))
    }

    /// When the outstanding request is given up on (caller clock), if one is outstanding.
    pub fn poll_timeout(&self) -> Option<u64> {
        match &self.op {
            Op::Redis {
                deadline_ms,
                stage: RedisStage::Connecting(_) | RedisStage::Sent(_),
                ..
            } => Some(*deadline_ms),
            Op::Sql { deadline_ms, .. } => *deadline_ms,
            _ => None,
        }
    }

    /// The outstanding Redis request's or statement's deadline, whatever it is doing now
    /// (also while it backs off before a retry).
    pub fn request_deadline_ms(&self) -> Option<u64> {
        match &self.op {
            Op::Redis { deadline_ms, .. } => Some(*deadline_ms),
            Op::Sql { deadline_ms, .. } => *deadline_ms,
            _ => None,
        }
    }

    /// Gives up on the outstanding request if its deadline has passed at `now_ms`.
    pub fn handle_timeout(&mut self, now_ms: u64) {
        if self.poll_timeout().is_none_or(|deadline| now_ms < deadline) {
            return;
        }
        match std::mem::replace(&mut self.op, Op::Idle) {
            Op::Redis {
                server,
                timeout_ms,
                stage,
                ..
            } => {
                let conn = match stage {
                    RedisStage::Connecting(conn) | RedisStage::Sent(conn) => conn,
                    _ => unreachable!("a deadline only while connecting or sent"),
                };
                self.set_redis_conn(server, None);
                self.queue.push(Output::Close {
                    server,
                    conn,
                    reason: CloseReason::RedisTimeout {
                        after_ms: timeout_ms,
                    },
                });
                self.input = Some(Box::new(Input::RedisTimeout));
            }
            Op::Sql { stage, .. } => {
                let conn = match stage {
                    SqlStage::Connecting(conn) | SqlStage::Sent(conn) => conn,
                };
                let reason = CloseReason::SqlTimeout {
                    after_ms: self.policy.sql_timeout_ms.unwrap_or_default(),
                };
                self.postgres = None;
                self.input = Some(Box::new(Input::ConnectionError(reason.error())));
                self.queue.push(Output::Close {
                    server: Server::Postgres,
                    conn,
                    reason,
                });
            }
            _ => unreachable!("poll_timeout is set"),
        }
    }

    /// Connection `conn` is open.
    pub fn handle_connected(&mut self, conn: ConnId) {
        match &mut self.op {
            Op::SetUp(server, opening) if *opening == conn => {
                match *server {
                    Server::Postgres => self.postgres = Some(conn),
                    redis => self.set_redis_conn(redis, Some(conn)),
                }
                self.op = Op::Idle;
                self.next_set_up();
            }
            Op::Redis { stage, server, .. } if *stage == RedisStage::Connecting(conn) => {
                let server = *server;
                self.set_redis_conn(server, Some(conn));
                self.send_redis();
            }
            Op::Sql { stage, .. } if *stage == SqlStage::Connecting(conn) => {
                self.postgres = Some(conn);
                self.send_sql();
            }
            other => panic!("connection {conn:?} opened while {other:?}"),
        }
    }

    /// Connection `conn` could not be opened.
    pub fn handle_connect_failed(&mut self, conn: ConnId, error: String) {
        match &self.op {
            Op::SetUp(_, opening) if *opening == conn => {
                // Set-up is best effort: the first request tries again.
                self.op = Op::Idle;
                self.next_set_up();
            }
            Op::Redis { stage, .. } if *stage == RedisStage::Connecting(conn) => {
                self.redis_broke(conn, error);
            }
            Op::Sql { stage, .. } if *stage == SqlStage::Connecting(conn) => {
                self.sql_broke(conn, error);
            }
            other => panic!("connection {conn:?} failed while {other:?}"),
        }
    }

    /// The connection of the outstanding request broke before its answer came.
    pub fn handle_connection_broke(&mut self, error: String) {
        match &self.op {
            Op::Redis {
                stage: RedisStage::Sent(conn),
                ..
            } => {
                let conn = *conn;
                self.redis_broke(conn, error);
            }
            Op::Sql {
                stage: SqlStage::Sent(conn),
                ..
            } => {
                let conn = *conn;
                self.sql_broke(conn, error);
            }
            other => panic!("a connection broke while {other:?}"),
        }
    }

    /// The outstanding statement's session turned out closed before it was sent: open a new
    /// one (without an error: nothing was sent).
    pub fn handle_found_closed(&mut self) {
        let Op::Sql {
            stage: SqlStage::Sent(_),
            ..
        } = self.op
        else {
            panic!("found a session closed while {:?}", self.op);
        };
        self.postgres = None;
        self.send_sql();
    }

    /// Redis answered the outstanding request.
    pub fn handle_redis_reply(&mut self, reply: Reply) {
        assert!(
            matches!(
                self.op,
                Op::Redis {
                    stage: RedisStage::Sent(_),
                    ..
                }
            ),
            "a Redis reply while {:?}",
            self.op
        );
        self.op = Op::Idle;
        self.input = Some(Box::new(Input::Redis(reply)));
    }

    /// PostgreSQL answered the outstanding statement.
    pub fn handle_sql_result(&mut self, result: Result<QueryResult, PgError>) {
        assert!(
            matches!(
                self.op,
                Op::Sql {
                    stage: SqlStage::Sent(_),
                    ..
                }
            ),
            "a SQL result while {:?}",
            self.op
        );
        self.op = Op::Idle;
        self.input = Some(Box::new(Input::Sql(result)));
    }

    /// The backoff asked for by [`Output::DrawBackoff`] is `backoff_ms`: retry after it, or
    /// give up when it would end at or after the request's deadline.
    pub fn handle_backoff_drawn(&mut self, now_ms: u64, backoff_ms: u64) {
        let Op::Redis {
            server,
            deadline_ms,
            attempt,
            stage: RedisStage::Drawing { error },
            ..
        } = &mut self.op
        else {
            panic!("a backoff drawn while {:?}", self.op);
        };
        if now_ms + backoff_ms >= *deadline_ms {
            let error = std::mem::take(error);
            self.op = Op::Idle;
            self.input = Some(Box::new(Input::ConnectionError(error)));
            return;
        }
        let (attempt, server) = (*attempt, *server);
        self.op_redis_stage(RedisStage::BackingOff);
        self.queue.push(Output::Retry {
            server,
            attempt,
            backoff_ms,
        });
    }

    /// A sleep or a retry's backoff ended.
    pub fn handle_woke(&mut self) {
        match self.op {
            Op::Sleeping => {
                self.op = Op::Idle;
                self.input = Some(Box::new(Input::Woke));
            }
            Op::Redis {
                stage: RedisStage::BackingOff,
                ..
            } => self.send_redis(),
            _ => panic!("woke while {:?}", self.op),
        }
    }

    /// The caller goes on after a named point.
    pub fn handle_resumed(&mut self) {
        assert_eq!(self.op, Op::AtPoint, "resumed while not at a point");
        self.op = Op::Idle;
        self.input = Some(Box::new(Input::Resumed));
    }

    fn next_set_up(&mut self) {
        let server = if std::mem::take(&mut self.set_up.redis) {
            Server::Redis
        } else if std::mem::take(&mut self.set_up.postgres) {
            Server::Postgres
        } else {
            return;
        };
        let conn = self.open();
        self.op = Op::SetUp(server, conn);
        self.queue.push(Output::Connect {
            server,
            conn,
            dial_timeout_ms: self.policy.dial_timeout_ms,
        });
    }

    fn open(&mut self) -> ConnId {
        self.opened += 1;
        ConnId(self.opened)
    }

    /// Turns the machine's step into outputs.
    fn begin(&mut self, now_ms: u64, step: Step) {
        match step {
            Step::Redis {
                node,
                request,
                timeout_ms,
            } => {
                let server = Server::redis_node(node);
                let timeout_ms = timeout_ms.unwrap_or(self.policy.read_timeout_ms);
                let request = Arc::new(request);
                self.queue.push(Output::BeginRedis {
                    server,
                    request: Arc::clone(&request),
                    timeout_ms,
                });
                self.op = Op::Redis {
                    server,
                    request,
                    timeout_ms,
                    deadline_ms: now_ms + timeout_ms,
                    attempt: 0,
                    stage: RedisStage::BackingOff,
                };
                self.send_redis();
            }
            Step::Sql(request) => {
                let request = Arc::new(request);
                self.queue.push(Output::BeginSql {
                    request: Arc::clone(&request),
                });
                self.op = Op::Sql {
                    request,
                    deadline_ms: self.policy.sql_timeout_ms.map(|timeout| now_ms + timeout),
                    stage: SqlStage::Sent(ConnId(0)),
                };
                self.send_sql();
            }
            Step::Sleep {
                min_ms,
                max_ms,
                deadline_ms,
            } => {
                self.op = Op::Sleeping;
                self.queue.push(Output::Sleep {
                    min_ms,
                    max_ms,
                    deadline_ms,
                });
            }
            Step::Reached(point) => {
                self.op = Op::AtPoint;
                self.queue.push(Output::Reached(point));
            }
            Step::Done(outcome) => {
                self.op = Op::Done;
                self.queue.push(Output::Done(outcome));
            }
        }
    }

    fn op_redis_stage(&mut self, new: RedisStage) {
        if let Op::Redis { stage, .. } = &mut self.op {
            *stage = new;
        }
    }

    /// Sends the outstanding Redis request, opening a connection first if there is none.
    fn send_redis(&mut self) {
        let Op::Redis {
            server,
            request,
            attempt,
            ..
        } = &self.op
        else {
            unreachable!("sending a Redis request while {:?}", self.op)
        };
        let (server, request, attempt) = (*server, Arc::clone(request), *attempt);
        match self.connection(server) {
            Some(conn) => {
                self.op_redis_stage(RedisStage::Sent(conn));
                self.queue.push(Output::SendRedis {
                    server,
                    conn,
                    request,
                    attempt,
                });
            }
            None => {
                let conn = self.open();
                self.op_redis_stage(RedisStage::Connecting(conn));
                self.queue.push(Output::Connect {
                    server,
                    conn,
                    dial_timeout_ms: self.policy.dial_timeout_ms,
                });
            }
        }
    }

    /// Sends the outstanding statement, opening a session first if there is none.
    fn send_sql(&mut self) {
        let Op::Sql { request, stage, .. } = &mut self.op else {
            unreachable!("sending a statement while {:?}", self.op)
        };
        match self.postgres {
            Some(conn) => {
                *stage = SqlStage::Sent(conn);
                let request = Arc::clone(request);
                self.queue.push(Output::SendSql { conn, request });
            }
            None => {
                self.opened += 1;
                let conn = ConnId(self.opened);
                *stage = SqlStage::Connecting(conn);
                self.queue.push(Output::Connect {
                    server: Server::Postgres,
                    conn,
                    dial_timeout_ms: self.policy.dial_timeout_ms,
                });
            }
        }
    }

    /// The Redis connection broke (or could not be opened): close it, then retry or give up.
    fn redis_broke(&mut self, conn: ConnId, error: String) {
        let Op::Redis { server, .. } = self.op else {
            unreachable!("a Redis connection broke while {:?}", self.op)
        };
        self.set_redis_conn(server, None);
        self.queue.push(Output::Close {
            server,
            conn,
            reason: CloseReason::Broken(error.clone()),
        });
        let Op::Redis { attempt, .. } = &mut self.op else {
            unreachable!("a Redis connection broke while {:?}", self.op)
        };
        if *attempt >= self.policy.max_retries {
            self.op = Op::Idle;
            self.input = Some(Box::new(Input::ConnectionError(error)));
            return;
        }
        *attempt += 1;
        let attempt = *attempt;
        self.op_redis_stage(RedisStage::Drawing { error });
        self.queue.push(Output::DrawBackoff {
            attempt,
            below_ms: self.policy.backoff_below_ms(attempt),
        });
    }

    /// The PostgreSQL session broke (or could not be opened): close it; statements are never
    /// retried.
    fn sql_broke(&mut self, conn: ConnId, error: String) {
        self.postgres = None;
        self.queue.push(Output::Close {
            server: Server::Postgres,
            conn,
            reason: CloseReason::Broken(error.clone()),
        });
        self.op = Op::Idle;
        self.input = Some(Box::new(Input::ConnectionError(error)));
    }
}
