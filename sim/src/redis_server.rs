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

use std::cell::{Cell, RefCell};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;

use leaselab_model::redis::{Redis, Reply, Session};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::accept::{self, ServeConnection};
use crate::observer::{ConnectionEvents, Observer, Protocol};
use crate::resp::{encode_reply, RequestReader};

/// How many bytes to read from the socket at a time.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// A server clock: milliseconds since the Unix epoch on the server's own (possibly skewed)
/// wall clock.
pub type ClockMs = Rc<dyn Fn() -> u64>;

/// Serves a shared Redis stand-in to any number of connections.
#[derive(Clone)]
pub struct RedisServer {
    redis: Rc<RefCell<Redis>>,
    clock_ms: ClockMs,
    observer: Rc<dyn Observer>,
    last_conn_id: Rc<Cell<u64>>,
}

/// What to do after a batch of requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterBatch {
    /// Read more.
    KeepOpen,
    /// Write the replies, then close (QUIT or a protocol error).
    Close,
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
        }
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
        let mut input = RequestReader::new();
        let mut output = Vec::new();
        // This connection's MULTI queue and WATCHed keys.
        let mut session = Session::new();
        // Read at most 16 KiB at a time and execute what has arrived after each read, as
        // Redis does: its limits on lines without an end apply at the same points.
        let mut chunk = vec![0u8; READ_CHUNK_BYTES];
        loop {
            let after = self.execute_batch(conn_id, &mut session, &mut input, &mut output);
            if !output.is_empty() {
                stream.write_all(&output).await?;
                stream.flush().await?;
                output.clear();
            }
            if after == AfterBatch::Close {
                return stream.shutdown().await;
            }
            let read_bytes = stream.read(&mut chunk).await?;
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
        conn_id: u64,
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
                    let (reply, quit) = self.execute(conn_id, session, &argv);
                    encode_reply(&reply, output);
                    if quit {
                        return AfterBatch::Close;
                    }
                }
                Err(error) => {
                    error.encode_reply(output);
                    return AfterBatch::Close;
                }
            }
        }
    }

    /// Executes one command in the connection's session (MULTI/EXEC/WATCH); the flag says
    /// whether it was QUIT.
    fn execute(&self, conn_id: u64, session: &mut Session, argv: &[Vec<u8>]) -> (Reply, bool) {
        let quit = argv.len() == 1 && argv[0].eq_ignore_ascii_case(b"QUIT");
        let reply = if quit {
            Reply::ok()
        } else {
            let now_ms = (self.clock_ms)();
            self.redis.borrow_mut().execute_in(session, argv, now_ms)
        };
        self.observer.redis_command(conn_id, argv, &reply);
        (reply, quit)
    }
}

impl ServeConnection for RedisServer {
    async fn serve_connection<S>(&self, stream: S, peer: Option<SocketAddr>) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin + 'static,
    {
        self.handle_connection(stream, peer).await
    }
}
