//! The Redis stand-in served over RESP2.
//!
//! One generic [`RedisServer::handle_connection`] serves any byte stream; the accept loops
//! for turmoil's simulated network and for a real port both use it. Connections are served
//! by tasks spawned with [`tokio::task::spawn_local`] (the stand-in is shared through an
//! `Rc`), so a real-port server must run inside a [`tokio::task::LocalSet`]; every turmoil
//! host already does.
//!
//! All requests that have arrived are executed back to back, in order, before the replies
//! are written, like Redis's pipelining. A malformed request gets Redis's protocol error
//! reply and the connection is closed after it.
//!
//! `BLPOP`/`BRPOP` (`BZPOPMIN`/`BZPOPMAX`) that find every list (sorted set) empty, and
//! `BRPOPLPUSH`/`BLMOVE` whose source list is empty, block their connection (outside `MULTI`):
//! the connection waits, reading but not running what else it is sent, until another client's
//! command leaves an element for it or its timeout passes (a nil array). Blocked connections
//! are served right after each command, in the order they blocked, each from the first of its
//! keys (in its order) that holds an element; Redis goes key by key in the order the keys
//! were made ready, which differs only when one command readies several keys that several
//! clients wait on.
//!
//! A connection that subscribes (`SUBSCRIBE`, `PSUBSCRIBE`, `SSUBSCRIBE`) is pushed every message
//! published to it: right after the command that published it, the messages wait in the
//! connection's inbox and are written before its next replies. Its subscriptions end with it.
//!
//! `WAIT numreplicas timeout` is answered from the server's [`Replicas`] (none: a lone server):
//! at once when enough replicas have applied the connection's last write (its offset, as
//! Redis's `c->woff`; a connection that wrote nothing is at offset 0), else when they have or
//! the timeout passed (0: no timeout), with the count then. The requests after it wait.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;

use leaselab_model::redis::command::blocking_deadline_ms;
use leaselab_model::redis::{
    is_subscription_command, message_bytes, Command, Redis, Reply, Session,
    PUBSUB_OUTPUT_LIMIT_BYTES,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::accept::{self, ServeConnection};
use crate::observer::{ConnectionEvents, Observer, Protocol};
use crate::resp::{encode_reply, RequestReader};

/// How many bytes to read from the socket at a time.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// A server clock: milliseconds since the Unix epoch on the server's own (possibly skewed)
/// wall clock.
pub type ClockMs = Rc<dyn Fn() -> u64>;

/// What a primary knows of its replicas, for `WAIT`.
pub trait Replicas {
    /// The primary's replication offset now (a connection's last write is at the offset
    /// right after it).
    fn offset(&self) -> u64;
    /// How many replicas have applied every change up to `offset`, now.
    fn acked(&self, offset: u64) -> i64;
}

/// Serves a shared Redis stand-in to any number of connections.
#[derive(Clone)]
pub struct RedisServer {
    redis: Rc<RefCell<Redis>>,
    clock_ms: ClockMs,
    observer: Rc<dyn Observer>,
    last_conn_id: Rc<Cell<u64>>,
    replicas: Option<Rc<dyn Replicas>>,
    /// How long one millisecond of the server's time (a `WAIT` timeout's unit) lasts on
    /// tokio's clock: 1 ms, or the simulation's ticks for it.
    millisecond: std::time::Duration,
    /// The connections blocked in a blocking pop or move, in the order they blocked.
    blocked: Rc<RefCell<Vec<Blocked>>>,
    /// Each open connection's published messages not yet written, by client id.
    inboxes: Rc<RefCell<BTreeMap<u64, Rc<Inbox>>>>,
}

/// Messages published to one connection, waiting to be written to it.
#[derive(Default)]
struct Inbox {
    messages: RefCell<Vec<Reply>>,
    /// Their bytes on the wire, about; past [`PUBSUB_OUTPUT_LIMIT_BYTES`] the connection is
    /// closed, as Redis closes a subscriber over its output buffer limit.
    waiting_bytes: Cell<usize>,
    arrived: tokio::sync::Notify,
}

/// Forgets a connection's inbox and subscriptions when it ends in any way (closed, QUIT, an
/// error, or its task dropped with the host's software).
struct Goodbye {
    redis: Rc<RefCell<Redis>>,
    inboxes: Rc<RefCell<BTreeMap<u64, Rc<Inbox>>>>,
    conn_id: u64,
}

impl Drop for Goodbye {
    fn drop(&mut self) {
        self.inboxes.borrow_mut().remove(&self.conn_id);
        if let Ok(mut redis) = self.redis.try_borrow_mut() {
            redis.end_client(self.conn_id);
        }
    }
}

/// A connection blocked in `BLPOP`, `BRPOP`, `BZPOPMIN`, `BZPOPMAX`, `BRPOPLPUSH` or `BLMOVE`.
struct Blocked {
    conn_id: u64,
    /// The database its keys are in.
    db: u8,
    keys: Vec<Vec<u8>>,
    /// How it takes its element.
    take: Take,
    /// Its reply, once another client's command left it an element.
    served: Rc<RefCell<Option<Reply>>>,
    woken: Rc<tokio::sync::Notify>,
}

/// How a blocked connection takes its element once one of its keys holds one.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Take {
    /// `LPOP`, `RPOP`, `ZPOPMIN` or `ZPOPMAX` from the first of its keys that holds an element,
    /// answered `[key, element]` (`[key, member, score]`).
    Pop(&'static [u8]),
    /// This `LMOVE` (`BLMOVE`'s, or `BRPOPLPUSH`'s `RIGHT LEFT`) once its source is a list,
    /// answered as `LMOVE` answers (the element, or `WRONGTYPE` for a destination of another
    /// type, the element left in place, as Redis 7.0 serves it).
    Move(Vec<Vec<u8>>),
}

impl Take {
    /// How the blocking command `argv` takes its element (arity checked: it was answered
    /// nothing, not an error).
    fn of(argv: &[Vec<u8>]) -> Take {
        let named = |name: &str| argv[0].eq_ignore_ascii_case(name.as_bytes());
        let lmove = |from: &[u8], to: &[u8]| {
            Take::Move(vec![
                b"LMOVE".to_vec(),
                argv[1].clone(),
                argv[2].clone(),
                from.to_vec(),
                to.to_vec(),
            ])
        };
        if named("brpoplpush") {
            lmove(b"RIGHT", b"LEFT")
        } else if named("blmove") {
            lmove(&argv[3], &argv[4])
        } else {
            Take::Pop(taking_command(&argv[0]).expect("a blocking command"))
        }
    }

    /// The keys it waits on.
    fn keys(&self, argv: &[Vec<u8>]) -> Vec<Vec<u8>> {
        match self {
            Take::Pop(_) => argv[1..argv.len() - 1].to_vec(),
            Take::Move(_) => vec![argv[1].clone()],
        }
    }
}

/// What the blocking command `name` answers when there is nothing to take yet (and inside
/// `MULTI`): a nil array for the pops, nil for the moves.
fn nothing_yet(name: &[u8]) -> Option<Reply> {
    if taking_command(name).is_some() {
        Some(Reply::NilArray)
    } else if name.eq_ignore_ascii_case(b"brpoplpush") || name.eq_ignore_ascii_case(b"blmove") {
        Some(Reply::Nil)
    } else {
        None
    }
}

/// Takes a blocked connection out of the list when its wait ends in any way (served, timed
/// out, closed, or its task dropped with the host's software).
struct Unblock {
    blocked: Rc<RefCell<Vec<Blocked>>>,
    conn_id: u64,
}

impl Drop for Unblock {
    fn drop(&mut self) {
        self.blocked
            .borrow_mut()
            .retain(|blocked| blocked.conn_id != self.conn_id);
    }
}

/// One connection's state beyond its transaction: its id (`CLIENT ID`, `HELLO`'s `id`), its
/// name (`CLIENT SETNAME`, `HELLO ... SETNAME`; `CLIENT GETNAME`), and its replication offset
/// for `WAIT`.
#[derive(Clone, Debug, Default)]
struct Conn {
    id: u64,
    name: Option<Vec<u8>>,
    /// The primary's offset right after this connection's last write.
    write_offset: u64,
}

/// What to do after a batch of requests.
#[derive(Clone, Debug, PartialEq, Eq)]
enum AfterBatch {
    /// Read more.
    KeepOpen,
    /// Write the replies, then close (QUIT or a protocol error).
    Close,
    /// Write the replies, then block on `WAIT` (its argv, replicas, timeout in ms, 0: none)
    /// before the requests after it.
    Wait(Vec<Vec<u8>>, i64, u64),
    /// Write the replies, then block on a blocking pop (its argv, its database, the server
    /// time it gives up at, `None`: never) before the requests after it.
    Pop(Vec<Vec<u8>>, u8, Option<u64>),
}

/// What to do after one command.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Next {
    /// Its reply is written; go on.
    Reply(Reply),
    /// QUIT: its reply is written, then the connection closes.
    Quit(Reply),
    /// A blocking pop that found nothing: no reply yet (its database, its deadline).
    Block(u8, Option<u64>),
}

impl RedisServer {
    /// A server for `redis` whose commands run at `clock_ms()`, reporting to `observer`.
    pub fn new(
        redis: Rc<RefCell<Redis>>,
        clock_ms: ClockMs,
        observer: Rc<dyn Observer>,
    ) -> RedisServer {
        RedisServer {
            redis,
            clock_ms,
            observer,
            last_conn_id: Rc::new(Cell::new(0)),
            replicas: None,
            millisecond: std::time::Duration::from_millis(1),
            blocked: Rc::new(RefCell::new(Vec::new())),
            inboxes: Rc::default(),
        }
    }

    /// The same server on a clock where one of its milliseconds lasts `millisecond` of
    /// tokio's time (the simulation's ticks for a millisecond of run time).
    pub fn with_millisecond(mut self, millisecond: std::time::Duration) -> RedisServer {
        self.millisecond = millisecond;
        self
    }

    /// The same server, answering `WAIT` from `replicas`.
    pub fn with_replicas(mut self, replicas: Rc<dyn Replicas>) -> RedisServer {
        self.replicas = Some(replicas);
        self
    }

    /// The primary's replication offset (0 without replicas).
    fn offset(&self) -> u64 {
        self.replicas
            .as_ref()
            .map_or(0, |replicas| replicas.offset())
    }

    /// Replicas that have applied everything up to `offset` (0 without replicas).
    fn acked(&self, offset: u64) -> i64 {
        self.replicas
            .as_ref()
            .map_or(0, |replicas| replicas.acked(offset))
    }

    /// The stand-in this server serves.
    pub fn redis(&self) -> &Rc<RefCell<Redis>> {
        &self.redis
    }

    fn next_conn_id(&self) -> u64 {
        let conn_id = self.last_conn_id.get() + 1;
        self.last_conn_id.set(conn_id);
        conn_id
    }

    /// Accepts connections on a turmoil listener forever, serving each in its own local task.
    pub async fn serve_turmoil(self, listener: turmoil::net::TcpListener) -> io::Result<()> {
        accept::accept_turmoil(self, listener).await
    }

    /// Accepts connections on a real listener forever, serving each in its own local task
    /// (call inside a [`tokio::task::LocalSet`]).
    pub async fn serve_tokio(self, listener: tokio::net::TcpListener) -> io::Result<()> {
        accept::accept_tokio(self, listener).await
    }

    /// Serves one connection from `peer` (if known) until the client closes it, sends QUIT
    /// or sends a malformed request.
    pub async fn handle_connection<S>(
        &self,
        mut stream: S,
        peer: Option<SocketAddr>,
    ) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let conn_id = self.next_conn_id();
        let _events =
            ConnectionEvents::opened(self.observer.clone(), Protocol::Redis, conn_id, peer);
        let mut conn = Conn {
            id: conn_id,
            name: None,
            write_offset: 0,
        };
        let mut input = RequestReader::new();
        let mut output = Vec::new();
        // This connection's MULTI queue, WATCHed keys, selected database and subscriptions.
        let mut session = Session::for_client(conn_id);
        let inbox = Rc::new(Inbox::default());
        self.inboxes.borrow_mut().insert(conn_id, inbox.clone());
        let _goodbye = Goodbye {
            redis: self.redis.clone(),
            inboxes: self.inboxes.clone(),
            conn_id,
        };
        // Read at most 16 KiB at a time and execute what has arrived after each read, as
        // Redis does: its limits on lines without an end apply at the same points.
        let mut chunk = vec![0u8; READ_CHUNK_BYTES];
        loop {
            // Messages published to it since its last write go before the replies after them.
            if inbox.waiting_bytes.get() > PUBSUB_OUTPUT_LIMIT_BYTES {
                return Ok(());
            }
            for message in inbox.messages.borrow_mut().drain(..) {
                encode_reply(&message, &mut output);
            }
            inbox.waiting_bytes.set(0);
            let after = self.execute_batch(&mut conn, &mut session, &mut input, &mut output);
            if !output.is_empty() {
                stream.write_all(&output).await?;
                stream.flush().await?;
                output.clear();
            }
            match after {
                AfterBatch::Close => return stream.shutdown().await,
                AfterBatch::Wait(argv, replicas, timeout_ms) => {
                    let reply = self.wait(&conn, replicas, timeout_ms).await;
                    self.observer.redis_command(conn.id, &argv, &reply);
                    encode_reply(&reply, &mut output);
                    // The requests after WAIT that have arrived run before the next read.
                    continue;
                }
                AfterBatch::Pop(argv, db, deadline_ms) => {
                    let conn_id = conn.id;
                    let waited = self
                        .pop_when_ready(conn_id, &argv, db, deadline_ms, &mut stream, &mut input)
                        .await?;
                    let Some(reply) = waited else {
                        // Closed by the client while it waited.
                        return Ok(());
                    };
                    self.observer.redis_command(conn.id, &argv, &reply);
                    encode_reply(&reply, &mut output);
                    continue;
                }
                AfterBatch::KeepOpen => {}
            }
            let read_bytes = if session.subscribed() {
                // Also woken by a message published to it.
                tokio::select! {
                    biased;
                    () = inbox.arrived.notified() => continue,
                    read = stream.read(&mut chunk) => read?,
                }
            } else {
                stream.read(&mut chunk).await?
            };
            if read_bytes == 0 {
                return Ok(());
            }
            input.push(&chunk[..read_bytes]);
            if input.over_limit() {
                // Redis disconnects a client over `client-query-buffer-limit` without a reply.
                return stream.shutdown().await;
            }
        }
    }

    /// Executes every complete request that has arrived and appends the replies to `output`.
    fn execute_batch(
        &self,
        conn: &mut Conn,
        session: &mut Session,
        input: &mut RequestReader,
        output: &mut Vec<u8>,
    ) -> AfterBatch {
        loop {
            match input.next_request() {
                Ok(None) => return AfterBatch::KeepOpen,
                Ok(Some(argv)) => {
                    if argv.is_empty() {
                        continue;
                    }
                    if is_cross_protocol(&argv) {
                        // Redis 7.0 takes `POST` and `Host:` for an HTTP request sent to it (a
                        // cross-protocol attack) and closes the connection without a reply.
                        return AfterBatch::Close;
                    }
                    if let Some((replicas, timeout_ms)) = self.must_block(conn, session, &argv) {
                        return AfterBatch::Wait(argv, replicas, timeout_ms);
                    }
                    match self.execute(conn, session, &argv) {
                        // A subscription's confirmations, one message per channel.
                        Next::Reply(Reply::Array(replies)) if is_subscription_command(&argv[0]) => {
                            for reply in &replies {
                                encode_reply(reply, output);
                            }
                        }
                        Next::Reply(reply) => encode_reply(&reply, output),
                        Next::Quit(reply) => {
                            encode_reply(&reply, output);
                            return AfterBatch::Close;
                        }
                        Next::Block(db, deadline_ms) => {
                            return AfterBatch::Pop(argv, db, deadline_ms);
                        }
                    }
                }
                Err(error) => {
                    error.encode_reply(output);
                    return AfterBatch::Close;
                }
            }
        }
    }

    /// Executes one command in the connection's session (MULTI/EXEC/WATCH), then serves the
    /// connections it unblocked.
    fn execute(&self, conn: &mut Conn, session: &mut Session, argv: &[Vec<u8>]) -> Next {
        // Redis 7.0 answers QUIT before looking at its arguments, inside MULTI too.
        let quit = argv[0].eq_ignore_ascii_case(b"QUIT");
        let nothing = (!session.in_transaction())
            .then(|| nothing_yet(&argv[0]))
            .flatten();
        let now_ms = (self.clock_ms)();
        let before = self.offset();
        let reply = if quit {
            Reply::ok()
        } else if let Some(Command::Wait(..)) = wait_outside_multi(session, argv) {
            // Enough replicas already (`must_block` said so): the count, at once.
            Reply::Integer(self.acked(conn.write_offset))
        } else {
            let reply = self.redis.borrow_mut().execute_in(session, argv, now_ms);
            if session.in_transaction() {
                reply
            } else {
                conn.about_itself(argv, reply)
            }
        };
        if nothing.is_some_and(|nothing| reply == nothing) {
            // Nothing to take: the connection blocks (the timeout was read above, at the same
            // time, so it is valid).
            let timeout = argv.last().expect("the arity check leaves a timeout");
            let deadline_ms = blocking_deadline_ms(timeout, now_ms).unwrap_or(None);
            return Next::Block(session.db(), deadline_ms);
        }
        self.observer.redis_command(conn.id, argv, &reply);
        // The observer shipped the command's changes: a write moves the connection's offset.
        let after = self.offset();
        if after != before {
            conn.write_offset = after;
        }
        self.serve_blocked();
        self.deliver();
        if quit {
            Next::Quit(reply)
        } else {
            Next::Reply(reply)
        }
    }

    /// Hands elements to the blocked connections, in the order they blocked: each takes one
    /// from the first of its keys that holds one, by running its [`Take`] in the stand-in (so
    /// `WATCH` sees the change and replicas get it). The connection is woken to send its reply.
    fn serve_blocked(&self) {
        let mut blocked = self.blocked.borrow_mut();
        if blocked.is_empty() {
            return;
        }
        let now_ms = (self.clock_ms)();
        let mut at = 0;
        while at < blocked.len() {
            let waiting = &blocked[at];
            let mut redis = self.redis.borrow_mut();
            let mut session = Session::new();
            if waiting.db != 0 {
                let select = [b"SELECT".to_vec(), waiting.db.to_string().into_bytes()];
                redis.execute_in(&mut session, &select, now_ms);
            }
            let served = match &waiting.take {
                Take::Pop(pop) => waiting.keys.iter().find_map(|key| {
                    // A key that now holds another type is skipped, as Redis skips it.
                    let taken =
                        redis.execute_in(&mut session, &[pop.to_vec(), key.clone()], now_ms);
                    let mut reply = vec![Reply::Bulk(key.clone())];
                    match taken {
                        // A list's element.
                        Reply::Bulk(element) => reply.push(Reply::Bulk(element)),
                        // A sorted set's member and score.
                        Reply::Array(popped) if !popped.is_empty() => reply.extend(popped),
                        _ => return None,
                    }
                    Some(Reply::Array(reply))
                }),
                Take::Move(lmove) => {
                    // Only a source that is a list with an element serves it (a source that
                    // became another type is skipped, as Redis skips it).
                    let length = [b"LLEN".to_vec(), lmove[1].clone()];
                    match redis.execute_in(&mut session, &length, now_ms) {
                        Reply::Integer(length) if length > 0 => {
                            Some(redis.execute_in(&mut session, lmove, now_ms))
                        }
                        _ => None,
                    }
                }
            };
            drop(redis);
            match served {
                Some(reply) => {
                    let waiting = blocked.remove(at);
                    *waiting.served.borrow_mut() = Some(reply);
                    waiting.woken.notify_one();
                }
                None => at += 1,
            }
        }
    }

    /// Hands the messages the last command published to the connections subscribed to them.
    fn deliver(&self) {
        let deliveries = self.redis.borrow_mut().take_deliveries();
        if deliveries.is_empty() {
            return;
        }
        let inboxes = self.inboxes.borrow();
        for (conn_id, message) in deliveries {
            let Some(inbox) = inboxes.get(&conn_id) else {
                continue;
            };
            let waiting_bytes = inbox.waiting_bytes.get();
            if waiting_bytes <= PUBSUB_OUTPUT_LIMIT_BYTES {
                inbox
                    .waiting_bytes
                    .set(waiting_bytes + message_bytes(&message));
                inbox.messages.borrow_mut().push(message);
            }
            inbox.arrived.notify_one();
        }
    }

    /// Blocks the connection in a blocking pop until [`RedisServer::serve_blocked`] hands
    /// it an element (its reply), its deadline passes on the server's clock (a nil array), or
    /// the client closes the connection (`None`). What the client sends meanwhile is read
    /// into `input`, to run after the reply, as Redis reads a blocked client's socket without
    /// running its commands.
    async fn pop_when_ready<S>(
        &self,
        conn_id: u64,
        argv: &[Vec<u8>],
        db: u8,
        deadline_ms: Option<u64>,
        stream: &mut S,
        input: &mut RequestReader,
    ) -> io::Result<Option<Reply>>
    where
        S: AsyncRead + Unpin,
    {
        let served = Rc::new(RefCell::new(None));
        let woken = Rc::new(tokio::sync::Notify::new());
        let take = Take::of(argv);
        self.blocked.borrow_mut().push(Blocked {
            conn_id,
            db,
            keys: take.keys(argv),
            take,
            served: served.clone(),
            woken: woken.clone(),
        });
        let _unblock = Unblock {
            blocked: self.blocked.clone(),
            conn_id,
        };
        // Look at the clock once per tick (every millisecond outside the simulation): the
        // deadline is on the server's clock, which may run apart from tokio's.
        let step = self.millisecond.min(std::time::Duration::from_millis(1));
        let mut chunk = vec![0u8; READ_CHUNK_BYTES];
        loop {
            if let Some(reply) = served.borrow_mut().take() {
                return Ok(Some(reply));
            }
            if deadline_ms.is_some_and(|deadline_ms| (self.clock_ms)() >= deadline_ms) {
                return Ok(Some(Reply::NilArray));
            }
            let next = tokio::time::Instant::now() + step;
            if deadline_ms.is_some() {
                turmoil::wake_at(next);
            }
            let ticking = async {
                match deadline_ms {
                    Some(_) => tokio::time::sleep_until(next).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = woken.notified() => {}
                () = ticking => {}
                read = stream.read(&mut chunk) => {
                    let read_bytes = read?;
                    if read_bytes == 0 {
                        return Ok(None);
                    }
                    input.push(&chunk[..read_bytes]);
                    if input.over_limit() {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// `WAIT numreplicas timeout` outside `MULTI` that finds too few replicas caught up: what
    /// to wait for.
    fn must_block(&self, conn: &Conn, session: &Session, argv: &[Vec<u8>]) -> Option<(i64, u64)> {
        let Some(Command::Wait(replicas, timeout_ms)) = wait_outside_multi(session, argv) else {
            return None;
        };
        (self.acked(conn.write_offset) < replicas).then_some((replicas, timeout_ms as u64))
    }

    /// Blocks until `replicas` replicas have applied the connection's last write or
    /// `timeout_ms` passed (0: no timeout); the count then. Looks once per tick, each wake-up
    /// declared to the simulation.
    async fn wait(&self, conn: &Conn, replicas: i64, timeout_ms: u64) -> Reply {
        // Look again every tick (every millisecond outside the simulation), so that a WAIT
        // answers in the tick its replicas caught up, as Redis answers in the event-loop turn.
        let step = self.millisecond.min(std::time::Duration::from_millis(1));
        let deadline = (timeout_ms > 0).then(|| {
            tokio::time::Instant::now()
                + self
                    .millisecond
                    .saturating_mul(u32::try_from(timeout_ms).unwrap_or(u32::MAX))
        });
        loop {
            let acked = self.acked(conn.write_offset);
            let now = tokio::time::Instant::now();
            if acked >= replicas || deadline.is_some_and(|deadline| now >= deadline) {
                return Reply::Integer(acked);
            }
            let next = deadline.map_or(now + step, |deadline| deadline.min(now + step));
            turmoil::wake_at(next);
            tokio::time::sleep_until(next).await;
        }
    }
}

impl Conn {
    /// The stand-in's `reply` to `argv` (run outside a transaction), with what only the
    /// connection knows: its id in `CLIENT ID` and `HELLO`, its name in `CLIENT GETNAME`, the
    /// name a successful `CLIENT SETNAME` or `HELLO ... SETNAME` gives it, and `RESET`
    /// forgetting it.
    fn about_itself(&mut self, argv: &[Vec<u8>], reply: Reply) -> Reply {
        if matches!(reply, Reply::Error(_)) {
            return reply;
        }
        let is = |index: usize, word: &str| {
            argv.get(index)
                .is_some_and(|arg| arg.eq_ignore_ascii_case(word.as_bytes()))
        };
        if is(0, "client") && is(1, "id") {
            return Reply::Integer(i64::try_from(self.id).unwrap_or(i64::MAX));
        }
        if is(0, "client") && is(1, "getname") {
            return self.name.clone().map_or(Reply::Nil, Reply::Bulk);
        }
        if is(0, "reset") {
            self.name = None;
            return reply;
        }
        if is(0, "client") && is(1, "setname") {
            // An empty name clears it.
            self.name = Some(argv[2].clone()).filter(|name| !name.is_empty());
            return reply;
        }
        if is(0, "hello") {
            if let Some(at) = (2..argv.len()).rev().find(|&at| is(at - 1, "setname")) {
                self.name = Some(argv[at].clone()).filter(|name| !name.is_empty());
            }
            if let Reply::Array(mut fields) = reply {
                // `server, redis, version, V, proto, 2, id, N, ...`
                if let Some(id) = fields.get_mut(7) {
                    *id = Reply::Integer(i64::try_from(self.id).unwrap_or(i64::MAX));
                }
                return Reply::Array(fields);
            }
        }
        reply
    }
}

/// For a blocking pop (`BLPOP`, `BRPOP`, `BZPOPMIN`, `BZPOPMAX`), the command that takes an
/// element for it once one is there.
fn taking_command(name: &[u8]) -> Option<&'static [u8]> {
    [
        (&b"BLPOP"[..], &b"LPOP"[..]),
        (b"BRPOP", b"RPOP"),
        (b"BZPOPMIN", b"ZPOPMIN"),
        (b"BZPOPMAX", b"ZPOPMAX"),
    ]
    .into_iter()
    .find(|(blocking, _)| name.eq_ignore_ascii_case(blocking))
    .map(|(_, taking)| taking)
}

/// True for the first word of an HTTP request (`POST`, a `Host:` header), which Redis 7.0
/// treats as a cross-protocol attack.
fn is_cross_protocol(argv: &[Vec<u8>]) -> bool {
    argv[0].eq_ignore_ascii_case(b"post") || argv[0].eq_ignore_ascii_case(b"host:")
}

/// The command if `argv` is a valid `WAIT` that runs now (not queued inside `MULTI`).
fn wait_outside_multi(session: &Session, argv: &[Vec<u8>]) -> Option<Command> {
    // (A subscribed connection may not send it: the stand-in answers with the error.)
    if session.in_transaction() || session.subscribed() || !argv[0].eq_ignore_ascii_case(b"WAIT") {
        return None;
    }
    Command::parse(argv)
        .ok()
        .filter(|command| matches!(command, Command::Wait(..)))
}

impl ServeConnection for RedisServer {
    async fn serve_connection<S>(&self, stream: S, peer: Option<SocketAddr>) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin + 'static,
    {
        self.handle_connection(stream, peer).await
    }
}
