//! The PostgreSQL stand-in served over the frontend/backend protocol v3.
//!
//! Trust authentication, the simple Query protocol and the extended protocol (Parse, Bind,
//! Describe, Execute, Sync, Flush, Close) with `bigint` parameters and results in text or
//! binary format: what `tokio-postgres` and `psql` need.
//!
//! Each connection is a session of the stand-in. A statement that has to wait for another
//! session's row lock ([`Exec::Blocked`]) makes its connection task wait until some session
//! ends a transaction (commit, rollback or disconnect) and then executes it again. When a
//! connection ends for any reason, including its task being dropped, its session is
//! disconnected, which rolls back an open transaction.
//!
//! Like [`crate::redis_server`], connections are served by local tasks: a real-port server
//! must run inside a [`tokio::task::LocalSet`].

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;

use leaselab_model::postgres::{
    parse_query, DeadlockCheck, Description, Exec, GeneralStatement, Parsed, PgError, Postgres,
    QueryResult, SessionId, SqlExec, SqlResult, SqlType, Statement, TxStatus, Value,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use crate::accept::{self, ServeConnection};
use crate::observer::{ConnectionEvents, Observer, Protocol};
use crate::pg_wire::{
    bind_statement_name, decode_frontend, decode_int_param, decode_startup, encode_int8, error,
    fatal, is_extended_type, BackendMessage, Column, Format, FrontendError, FrontendMessage,
    IntType, StartupPacket, Target, TransactionStatus, GSSENC_REQUEST_CODE, INT8_OID,
    PROTOCOL_VIOLATION, SSL_REQUEST_CODE,
};

/// What a blocked statement last waited for: the session, and whether it was queued behind
/// another for the row.
#[derive(Clone, Copy, Debug, Default)]
struct Wait {
    blocker: Option<SessionId>,
    behind: bool,
}

/// The timers of a statement's sleep on a lock, started again by each new sleep: when it
/// looks for a deadlock (`deadlock_timeout`), and when `lock_timeout` cancels it.
#[derive(Clone, Copy, Debug, Default)]
struct SleepTimers {
    deadlock_check: Option<tokio::time::Instant>,
    lock_timeout: Option<tokio::time::Instant>,
}

/// How many bytes to read from the socket at a time.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// The `server_version` reported at startup (`SHOW server_version`'s and `version()`'s).
pub use leaselab_model::postgres::settings::SERVER_VERSION;

/// The roles and databases a server knows; connections naming others are refused as
/// PostgreSQL refuses them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accounts {
    /// Role (user) names.
    pub roles: std::collections::BTreeSet<String>,
    /// Database names.
    pub databases: std::collections::BTreeSet<String>,
}

impl Accounts {
    /// PostgreSQL's FATAL error for a startup naming an unknown role or database, if any.
    /// A missing or empty database name means the user name, as in PostgreSQL.
    pub fn refusal(&self, user: &str, database: Option<&str>) -> Option<PgError> {
        if !self.roles.contains(user) {
            return Some(fatal("28000", format!("role \"{user}\" does not exist")));
        }
        let database = database.filter(|d| !d.is_empty()).unwrap_or(user);
        if !self.databases.contains(database) {
            return Some(fatal(
                "3D000",
                format!("database \"{database}\" does not exist"),
            ));
        }
        None
    }
}

/// How long PostgreSQL takes to answer beyond the network, in the runtime's time: nothing by
/// default. Measured against PostgreSQL 15 on this project's 2-core machine (docs/real-mode.md,
/// "Where the real step 6 spends its time"): a new session's first statement costs about
/// 1 ms more than later ones (a fresh backend's empty caches), and a commit that wrote waits
/// for its WAL to reach the disk (`synchronous_commit = on`: 1.5–4 ms there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgService {
    /// Added to the first statement a session runs.
    pub first_statement: std::time::Duration,
    /// The mean of a random part added to a session's first statement besides
    /// `first_statement`, drawn from an exponential distribution for each connection
    /// ([`PgService::first_statement_of`]); zero: none.
    pub first_statement_tail: std::time::Duration,
    /// Seeds the draws of `first_statement_tail` (the run's seed).
    pub seed: u64,
    /// Added to a statement that commits a write: an `INSERT`, `UPDATE` or `DELETE` that
    /// changed rows outside a transaction block, or the `COMMIT` of a block that did.
    pub commit: std::time::Duration,
}

impl PgService {
    /// What the first statement of connection `conn_id` adds: `first_statement`, plus, with a
    /// tail, `first_statement_tail` times a draw from the unit exponential distribution. The
    /// draw comes from a ChaCha stream of the seed and the connection's number alone, so it
    /// does not depend on the order in which sessions start, and it is capped at ten times
    /// the mean (a chance of 1 in 22,000).
    pub fn first_statement_of(&self, conn_id: u64) -> std::time::Duration {
        if self.first_statement_tail.is_zero() {
            return self.first_statement;
        }
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(FIRST_STATEMENT_STREAM ^ conn_id);
        let uniform: f64 = rng.random();
        let factor = (-(1.0 - uniform).ln()).min(10.0);
        let tail_us = (self.first_statement_tail.as_micros() as f64 * factor).round() as u64;
        self.first_statement + std::time::Duration::from_micros(tail_us)
    }
}

/// The ChaCha stream of the first-statement draws (`first_statement_of`), apart from every
/// host's own stream.
const FIRST_STATEMENT_STREAM: u64 = 0x7067_2d66_6972_7374; // "pg-first"

/// Serves a shared PostgreSQL stand-in to any number of connections.
#[derive(Clone)]
pub struct PgServer {
    postgres: Rc<RefCell<Postgres>>,
    /// Known roles and databases; `None` accepts any names (simulations, tests).
    accounts: Option<Rc<Accounts>>,
    observer: Rc<dyn Observer>,
    transaction_ended: Rc<Notify>,
    last_conn_id: Rc<Cell<u64>>,
    /// PostgreSQL's `deadlock_timeout` (in the runtime's time): a waiting statement looks for
    /// a deadlock through itself once, this long after it started waiting. `None`: the
    /// statement that would close a cycle fails at once.
    deadlock_timeout: Option<std::time::Duration>,
    /// The answering time beyond the network ([`PgService`]).
    service: PgService,
    /// The server's wall clock (microseconds since 2000-01-01 UTC), read before each
    /// statement for `now()` and its family; `None`: the engine's fixed default.
    clock: Option<PgClock>,
}

/// A PostgreSQL server's wall clock: microseconds since 2000-01-01 UTC
/// (`leaselab_model::postgres::datetime::from_unix_micros`).
pub type PgClock = Rc<dyn Fn() -> i64>;

impl PgServer {
    /// A server for `postgres`, reporting every statement to `observer`.
    pub fn new(postgres: Rc<RefCell<Postgres>>, observer: Rc<dyn Observer>) -> PgServer {
        PgServer {
            postgres,
            accounts: None,
            observer,
            transaction_ended: Rc::new(Notify::new()),
            last_conn_id: Rc::new(Cell::new(0)),
            deadlock_timeout: None,
            service: PgService::default(),
            clock: None,
        }
    }

    /// Reads `clock` before each statement: what `now()`, `statement_timestamp()` and the
    /// others answer.
    pub fn with_clock(mut self, clock: PgClock) -> PgServer {
        self.clock = Some(clock);
        self
    }

    /// Answers with the service times of `service` (see [`PgService`]).
    pub fn with_service(mut self, service: PgService) -> PgServer {
        self.service = service;
        self
    }

    /// Looks for deadlocks as PostgreSQL does: once per wait, `timeout` after a statement
    /// started waiting for a row lock (`deadlock_timeout`, 1 s by default in PostgreSQL).
    pub fn with_deadlock_timeout(mut self, timeout: std::time::Duration) -> PgServer {
        self.postgres
            .borrow_mut()
            .set_deadlock_check(DeadlockCheck::OnTimeout);
        self.deadlock_timeout = Some(timeout);
        self
    }

    /// Refuses connections naming a role or database outside `accounts`.
    pub fn with_accounts(mut self, accounts: Accounts) -> PgServer {
        self.accounts = Some(Rc::new(accounts));
        self
    }

    /// The stand-in this server serves.
    pub fn postgres(&self) -> &Rc<RefCell<Postgres>> {
        &self.postgres
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

    /// Serves one connection from `peer` (if known): startup, then messages until
    /// Terminate, EOF or a fatal error.
    pub async fn handle_connection<S>(&self, stream: S, peer: Option<SocketAddr>) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let conn_id = self.next_conn_id();
        let _events =
            ConnectionEvents::opened(self.observer.clone(), Protocol::Postgres, conn_id, peer);
        let mut io = Wire {
            stream,
            input: Vec::new(),
            output: Vec::new(),
        };
        let Some(startup) = accept_startup(&mut io).await? else {
            return io.close().await;
        };
        if let Some(accounts) = &self.accounts {
            if let Some(refusal) = accounts.refusal(&startup.user, startup.database.as_deref()) {
                io.send(&BackendMessage::ErrorResponse(refusal));
                return io.close().await;
            }
        }
        let session = SessionGuard::connect(self.postgres.clone(), self.transaction_ended.clone());
        // A missing or empty database name means the user's, as in PostgreSQL.
        let database = startup
            .database
            .as_deref()
            .filter(|database| !database.is_empty())
            .unwrap_or(&startup.user);
        {
            let mut postgres = self.postgres.borrow_mut();
            postgres.set_identity(session.id, &startup.user, database);
            postgres.set_application_name(session.id, &startup.application_name);
        }
        let mut connection = PgConnection {
            server: self,
            io,
            conn_id,
            session,
            statements: BTreeMap::new(),
            portals: BTreeMap::new(),
            skipping_to_sync: false,
            aborted_by_wire_error: false,
            statements_run: 0,
            wrote_in_block: false,
            message_clock: None,
            message_at: None,
        };
        connection.greet(&startup);
        connection.io.flush().await?;
        connection.serve().await
    }
}

/// The socket with its input and output buffers.
struct Wire<S> {
    stream: S,
    input: Vec<u8>,
    output: Vec<u8>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Wire<S> {
    fn send(&mut self, message: &BackendMessage) {
        message.encode(&mut self.output);
    }

    async fn flush(&mut self) -> io::Result<()> {
        if !self.output.is_empty() {
            self.stream.write_all(&self.output).await?;
            self.stream.flush().await?;
            self.output.clear();
        }
        Ok(())
    }

    /// Reads more input; false at EOF.
    async fn fill(&mut self) -> io::Result<bool> {
        self.input.reserve(READ_CHUNK_BYTES);
        let read_bytes = self.stream.read_buf(&mut self.input).await?;
        Ok(read_bytes > 0)
    }

    async fn close(&mut self) -> io::Result<()> {
        self.flush().await?;
        self.stream.shutdown().await
    }
}

/// What the client said at startup.
struct Startup {
    user: String,
    database: Option<String>,
    application_name: String,
}

/// Answers SSL/GSS requests with `N` and reads the StartupMessage. `None` when the
/// connection is to be closed (EOF, CancelRequest, or a fatal error already queued).
async fn accept_startup<S>(io: &mut Wire<S>) -> io::Result<Option<Startup>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut ssl_done = false;
    let mut gss_done = false;
    loop {
        let decoded = match decode_startup(&io.input) {
            Ok(Some(decoded)) => decoded,
            Ok(None) => {
                if io.fill().await? {
                    continue;
                }
                return Ok(None);
            }
            Err(fatal_error) => {
                if let Some(error) = fatal_error.error {
                    io.send(&BackendMessage::ErrorResponse(error));
                }
                return Ok(None);
            }
        };
        io.input.drain(..decoded.consumed_bytes);
        // As PostgreSQL: a second SSLRequest (or GSSENCRequest) is read as a StartupMessage
        // with the request code as its protocol version, which is refused.
        let (request, done) = match decoded.message {
            StartupPacket::SslRequest if !ssl_done => ("SSL request", &mut ssl_done),
            StartupPacket::GssEncRequest if !gss_done => {
                ("GSSAPI encryption request", &mut gss_done)
            }
            StartupPacket::SslRequest => {
                return Ok(check_startup(io, SSL_REQUEST_CODE, Vec::new()))
            }
            StartupPacket::GssEncRequest => {
                return Ok(check_startup(io, GSSENC_REQUEST_CODE, Vec::new()))
            }
            // Cancellation is not supported: PostgreSQL closes these connections silently.
            StartupPacket::CancelRequest { .. } => return Ok(None),
            StartupPacket::Startup {
                protocol_version,
                params,
            } => return Ok(check_startup(io, protocol_version, params)),
        };
        *done = true;
        io.output.push(b'N');
        // Bytes sent before the answer was read were not encrypted (they may have been
        // injected): PostgreSQL refuses them.
        if !io.input.is_empty() {
            io.send(&BackendMessage::ErrorResponse(PgError {
                detail: Some(
                    "This could be either a client-software bug or evidence of an attempted \
                     man-in-the-middle attack."
                        .to_string(),
                ),
                ..fatal(
                    PROTOCOL_VIOLATION,
                    format!("received unencrypted data after {request}"),
                )
            }));
            return Ok(None);
        }
        io.flush().await?;
    }
}

/// Validates a StartupMessage as PostgreSQL 15 does; queues the FATAL error when refused.
fn check_startup<S: AsyncRead + AsyncWrite + Unpin>(
    io: &mut Wire<S>,
    protocol_version: i32,
    params: Vec<(String, String)>,
) -> Option<Startup> {
    let major = protocol_version >> 16;
    let minor = protocol_version & 0xffff;
    if major != 3 {
        let message =
            format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0");
        if major < 3 {
            // A client of protocol 2 gets the error in protocol 2's form: `E`, the text, NUL.
            io.output.push(b'E');
            io.output
                .extend_from_slice(format!("FATAL:  {message}\n").as_bytes());
            io.output.push(0);
        } else {
            io.send(&BackendMessage::ErrorResponse(fatal("0A000", message)));
        }
        return None;
    }
    let unrecognized_options: Vec<String> = params
        .iter()
        .filter(|(name, _)| name.starts_with("_pq_."))
        .map(|(name, _)| name.clone())
        .collect();
    if minor > 0 || !unrecognized_options.is_empty() {
        io.send(&BackendMessage::NegotiateProtocolVersion {
            newest_minor: 0,
            unrecognized_options,
        });
    }
    let param = |wanted: &str| {
        params
            .iter()
            .find(|(name, _)| name == wanted)
            .map(|(_, value)| value.clone())
    };
    let Some(user) = param("user").filter(|user| !user.is_empty()) else {
        io.send(&BackendMessage::ErrorResponse(fatal(
            "28000",
            "no PostgreSQL user name specified in startup packet",
        )));
        return None;
    };
    Some(Startup {
        user,
        database: param("database"),
        application_name: param("application_name").unwrap_or_default(),
    })
}

/// A session of the stand-in, disconnected (rolling back) when dropped.
struct SessionGuard {
    postgres: Rc<RefCell<Postgres>>,
    transaction_ended: Rc<Notify>,
    id: SessionId,
}

impl SessionGuard {
    fn connect(postgres: Rc<RefCell<Postgres>>, transaction_ended: Rc<Notify>) -> SessionGuard {
        let id = postgres.borrow_mut().connect();
        SessionGuard {
            postgres,
            transaction_ended,
            id,
        }
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        // Never panic in drop: if the stand-in is borrowed (a panic is unwinding through it),
        // leave it alone.
        if let Ok(mut postgres) = self.postgres.try_borrow_mut() {
            postgres.disconnect(self.id);
        }
        self.transaction_ended.notify_waiters();
    }
}

/// A prepared statement.
#[derive(Clone, Debug)]
struct Prepared {
    sql: String,
    /// `None` for an empty query string (or a general statement).
    statement: Option<Statement>,
    /// A statement of the general path, with its parameter types and result columns.
    general: Option<General>,
    /// The types of the parameters the statement uses (`$1` .. `$n`).
    param_types: Vec<IntType>,
    /// Types the client declared for further parameters the statement does not use: they
    /// must be bound, and are ignored.
    unused_param_oids: Vec<u32>,
}

/// A prepared statement of the general path.
#[derive(Clone, Debug)]
struct General {
    statement: Box<GeneralStatement>,
    params: Vec<SqlType>,
    columns: Vec<(String, SqlType)>,
}

impl Prepared {
    fn param_count(&self) -> usize {
        match &self.general {
            Some(general) => general.params.len(),
            None => self.param_types.len() + self.unused_param_oids.len(),
        }
    }

    fn param_oids(&self) -> Vec<u32> {
        if let Some(general) = &self.general {
            return general.params.iter().map(|ty| ty.oid()).collect();
        }
        let used = self.param_types.iter().map(|ty| ty.oid());
        used.chain(self.unused_param_oids.iter().copied()).collect()
    }

    /// The result columns: names and type OIDs.
    fn columns(&self) -> Vec<(String, u32)> {
        match &self.general {
            Some(general) => general
                .columns
                .iter()
                .map(|(name, ty)| (name.clone(), ty.oid()))
                .collect(),
            None => statement_columns(self.statement.as_ref())
                .iter()
                .map(|name| (name.to_string(), INT8_OID))
                .collect(),
        }
    }
}

/// A bound portal and how far its execution got.
#[derive(Clone, Debug)]
struct Portal {
    prepared: Prepared,
    params: Vec<i64>,
    /// The parameters of a general statement.
    values: Vec<Value>,
    /// One format per result column.
    result_formats: Vec<Format>,
    progress: PortalProgress,
}

#[derive(Clone, Debug)]
enum PortalProgress {
    NotRun,
    /// Executed; `sent_rows` of its rows sent so far (an Execute with a row limit stopped).
    Suspended {
        result: QueryResult,
        sent_rows: usize,
    },
    Finished,
}

/// Whether to keep serving after a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Close,
}

/// One client connection after startup.
struct PgConnection<'a, S> {
    server: &'a PgServer,
    io: Wire<S>,
    conn_id: u64,
    session: SessionGuard,
    statements: BTreeMap<String, Prepared>,
    portals: BTreeMap<String, Portal>,
    /// After an error in the extended protocol, everything up to the next Sync is ignored.
    skipping_to_sync: bool,
    /// The transaction block failed on an error this server raised (a statement it could not
    /// parse, a bad Bind, ...), not the stand-in: the stand-in's transaction was rolled back
    /// at once, as PostgreSQL aborts a block on any error, and until the client ends the
    /// block its statements get 25P02 and `COMMIT`/`ROLLBACK` answer `ROLLBACK`.
    aborted_by_wire_error: bool,
    /// Statements this session has run (the first one pays [`PgService::first_statement`]).
    statements_run: u64,
    /// The open transaction block changed rows (its `COMMIT` pays [`PgService::commit`]).
    wrote_in_block: bool,
    /// The server's clock when the last message arrived: what its statements read as their
    /// start (`statement_timestamp()`, PostgreSQL's "time of receipt of the latest command
    /// message"), also when one runs again after a lock wait.
    message_clock: Option<i64>,
    /// When the last message arrived, on the runtime's clock (`statement_timeout` counts
    /// from it).
    message_at: Option<tokio::time::Instant>,
}

/// The column names a statement returns.
fn statement_columns(statement: Option<&Statement>) -> &'static [&'static str] {
    match statement {
        Some(Statement::Select { .. }) => &["balance", "fence"],
        _ => &[],
    }
}

fn row_description(names: &[&str], formats: &[Format]) -> BackendMessage {
    BackendMessage::RowDescription(
        names
            .iter()
            .zip(formats)
            .map(|(name, &format)| Column {
                name: name.to_string(),
                type_oid: INT8_OID,
                format,
            })
            .collect(),
    )
}

fn typed_row_description(columns: &[(String, u32)], formats: &[Format]) -> BackendMessage {
    BackendMessage::RowDescription(
        columns
            .iter()
            .zip(formats)
            .map(|((name, oid), &format)| Column {
                name: name.clone(),
                type_oid: *oid,
                format,
            })
            .collect(),
    )
}

/// True for statements that begin or end a block or a savepoint.
fn is_transaction_control(piece: &Parsed) -> bool {
    use leaselab_model::postgres::sql::Ast;
    match piece {
        Parsed::Typed(statement, _) => matches!(
            statement,
            Statement::Begin | Statement::Commit | Statement::Rollback
        ),
        Parsed::General(general) => matches!(
            general.ast,
            Ast::StartTransaction { .. }
                | Ast::Commit { .. }
                | Ast::Rollback { .. }
                | Ast::Savepoint { .. }
                | Ast::ReleaseSavepoint { .. }
        ),
    }
}

/// A value in the text or binary form of its column type.
fn encode_value(value: &Value, ty: SqlType, format: Format) -> Option<Vec<u8>> {
    if format == Format::Text {
        return value.to_text().map(String::into_bytes);
    }
    Some(match value {
        Value::Null => return None,
        Value::Int(v) if ty == SqlType::Int2 => (*v as i16).to_be_bytes().to_vec(),
        Value::Int(v) if ty == SqlType::Int4 => (*v as i32).to_be_bytes().to_vec(),
        Value::Int(v) if ty == SqlType::Xid => (*v as u32).to_be_bytes().to_vec(),
        Value::Int(v) => v.to_be_bytes().to_vec(),
        Value::Bool(b) => vec![u8::from(*b)],
        Value::Float(f) => f.0.to_be_bytes().to_vec(),
        Value::Text(t) if ty == SqlType::RegType => SqlType::regtype_oid(t)?.to_be_bytes().to_vec(),
        Value::Text(t) => t.clone().into_bytes(),
        Value::Numeric(decimal) => encode_numeric_binary(*decimal),
        Value::TimestampTz(t) | Value::Timestamp(t) => t.to_be_bytes().to_vec(),
        Value::Interval(interval) => {
            let mut bytes = interval.micros.to_be_bytes().to_vec();
            bytes.extend_from_slice(&interval.days.to_be_bytes());
            bytes.extend_from_slice(&interval.months.to_be_bytes());
            bytes
        }
        Value::Uuid(uuid) => uuid.to_be_bytes().to_vec(),
        Value::Array(elements) => {
            let element = ty.element().unwrap_or(SqlType::Text);
            encode_array_binary(elements, element)
        }
    })
}

/// An array in PostgreSQL's binary form: dimensions (0 when empty, else 1), a has-NULLs
/// flag, the element type's OID, the length and lower bound (1), then each element's length
/// (-1 for NULL) and binary form.
fn encode_array_binary(elements: &[Value], element: SqlType) -> Vec<u8> {
    let mut out = Vec::new();
    let dimensions: i32 = if elements.is_empty() { 0 } else { 1 };
    out.extend_from_slice(&dimensions.to_be_bytes());
    out.extend_from_slice(&i32::from(elements.iter().any(Value::is_null)).to_be_bytes());
    out.extend_from_slice(&element.oid().to_be_bytes());
    if !elements.is_empty() {
        out.extend_from_slice(&(elements.len() as i32).to_be_bytes());
        out.extend_from_slice(&1i32.to_be_bytes());
    }
    for value in elements {
        match encode_value(value, element, Format::Binary) {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(bytes) => {
                out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                out.extend_from_slice(&bytes);
            }
        }
    }
    out
}

/// Reads an array parameter's binary form (one dimension at most): 22P03 where it is cut
/// short or its flags are not 0 or 1, 42804 for another element type, 0A000 for several
/// dimensions.
fn decode_array_binary(bytes: &[u8], element: SqlType, index: usize) -> Result<Value, PgError> {
    let bad = || {
        error(
            "22P03",
            format!("incorrect binary data format in bind parameter {index}"),
        )
    };
    let mut at = 0usize;
    let word = |at: &mut usize| -> Result<[u8; 4], PgError> {
        let chunk: [u8; 4] = bytes
            .get(*at..*at + 4)
            .and_then(|chunk| chunk.try_into().ok())
            .ok_or_else(bad)?;
        *at += 4;
        Ok(chunk)
    };
    let dimensions = i32::from_be_bytes(word(&mut at)?);
    let flags = i32::from_be_bytes(word(&mut at)?);
    let oid = u32::from_be_bytes(word(&mut at)?);
    if !(0..=1).contains(&flags) {
        return Err(error("22P03", "invalid array flags"));
    }
    if SqlType::from_oid(oid) != Some(element) {
        return Err(error(
            "42804",
            format!(
                "binary data has array element type {oid} ({}) instead of expected {} ({})",
                SqlType::from_oid(oid).map_or("unknown", SqlType::name),
                element.oid(),
                element.name()
            ),
        ));
    }
    let count = match dimensions {
        0 => 0,
        1 => {
            let length = i32::from_be_bytes(word(&mut at)?);
            let _lower_bound = i32::from_be_bytes(word(&mut at)?);
            usize::try_from(length).map_err(|_| bad())?
        }
        d if d < 0 => return Err(error("22P03", format!("invalid number of dimensions: {d}"))),
        _ => {
            return Err(error(
                "0A000",
                "leaselab: arrays of more than one dimension are not supported",
            ))
        }
    };
    // Each element takes four bytes at least: a count past what was sent is malformed,
    // never an allocation.
    if count > bytes.len() / 4 {
        return Err(bad());
    }
    let mut elements = Vec::with_capacity(count);
    for _ in 0..count {
        let length = i32::from_be_bytes(word(&mut at)?);
        if length == -1 {
            elements.push(Value::Null);
            continue;
        }
        let length = usize::try_from(length).map_err(|_| bad())?;
        let start = at;
        let end = start.checked_add(length).ok_or_else(bad)?;
        let element_bytes = bytes.get(start..end).ok_or_else(bad)?;
        at = end;
        elements.push(decode_value(element_bytes, element, Format::Binary, index)?);
    }
    if at != bytes.len() {
        return Err(bad());
    }
    Ok(Value::Array(std::sync::Arc::new(elements)))
}

/// `numeric` in PostgreSQL's binary form: digit count, weight, sign, display scale, then
/// base-10000 digits.
fn encode_numeric_binary(decimal: leaselab_model::postgres::value::Decimal) -> Vec<u8> {
    let digits = decimal.mantissa.unsigned_abs().to_string();
    let scale = decimal.scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    let whole = whole.trim_start_matches('0');
    let whole = format!("{}{whole}", "0".repeat((4 - whole.len() % 4) % 4));
    let fraction = format!("{fraction}{}", "0".repeat((4 - fraction.len() % 4) % 4));
    let group = |text: &str| -> Vec<i16> {
        text.as_bytes()
            .chunks(4)
            .map(|chunk| {
                std::str::from_utf8(chunk)
                    .unwrap_or("0")
                    .parse()
                    .unwrap_or(0)
            })
            .collect()
    };
    let mut groups = group(&whole);
    let mut weight = groups.len() as i16 - 1;
    groups.extend(group(&fraction));
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    let sign: u16 = if decimal.mantissa < 0 { 0x4000 } else { 0 };
    let mut out = Vec::with_capacity(8 + 2 * groups.len());
    out.extend_from_slice(&(groups.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&(decimal.scale as i16).to_be_bytes());
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
    out
}

/// The rows a query sent before its error ([`PgError::rows_before`]; none for most errors).
fn rows_before(error: &PgError) -> &[Vec<Value>] {
    error.rows_before.as_deref().map_or(&[], Vec::as_slice)
}

fn general_data_row(row: &[Value], types: &[SqlType], formats: &[Format]) -> BackendMessage {
    BackendMessage::DataRow(
        row.iter()
            .zip(types)
            .zip(formats)
            .map(|((value, &ty), &format)| encode_value(value, ty, format))
            .collect(),
    )
}

/// Decodes a general statement's parameter.
fn decode_value(bytes: &[u8], ty: SqlType, format: Format, index: usize) -> Result<Value, PgError> {
    match format {
        Format::Text => {
            let text = String::from_utf8(bytes.to_vec())
                .map_err(|_| error("22021", "invalid byte sequence for encoding \"UTF8\""))?;
            Value::parse_input(&text, ty)
        }
        Format::Binary => {
            let bad = || {
                error(
                    "22P03",
                    format!("incorrect binary data format in bind parameter {index}"),
                )
            };
            Ok(match ty {
                SqlType::Int8 => Value::Int(i64::from_be_bytes(bytes.try_into().map_err(|_| bad())?)),
                SqlType::Int4 => Value::Int(i64::from(i32::from_be_bytes(bytes.try_into().map_err(|_| bad())?))),
                SqlType::Int2 => Value::Int(i64::from(i16::from_be_bytes(bytes.try_into().map_err(|_| bad())?))),
                SqlType::Xid => Value::Int(i64::from(u32::from_be_bytes(bytes.try_into().map_err(|_| bad())?))),
                SqlType::Bool => match bytes {
                    [b] => Value::Bool(*b != 0),
                    _ => return Err(bad()),
                },
                SqlType::Float8 => Value::Float(leaselab_model::postgres::value::Float(
                    f64::from_be_bytes(bytes.try_into().map_err(|_| bad())?),
                )),
                SqlType::Text | SqlType::Unknown => {
                    Value::Text(String::from_utf8(bytes.to_vec()).map_err(|_| bad())?)
                }
                SqlType::Void => Value::Text(String::new()),
                SqlType::RegType => {
                    let oid = u32::from_be_bytes(bytes.try_into().map_err(|_| bad())?);
                    let ty = SqlType::from_oid(oid).filter(|ty| *ty != SqlType::Unknown);
                    Value::Text(ty.ok_or_else(bad)?.name().to_string())
                }
                SqlType::TimestampTz | SqlType::Timestamp => {
                    let micros = i64::from_be_bytes(bytes.try_into().map_err(|_| bad())?);
                    let micros = leaselab_model::postgres::datetime::checked(micros)?;
                    if ty == SqlType::TimestampTz {
                        Value::TimestampTz(micros)
                    } else {
                        Value::Timestamp(micros)
                    }
                }
                SqlType::Interval => {
                    let bytes: [u8; 16] = bytes.try_into().map_err(|_| bad())?;
                    let (micros, rest) = bytes.split_at(8);
                    let (days, months) = rest.split_at(4);
                    Value::Interval(leaselab_model::postgres::datetime::Interval {
                        micros: i64::from_be_bytes(micros.try_into().map_err(|_| bad())?),
                        days: i32::from_be_bytes(days.try_into().map_err(|_| bad())?),
                        months: i32::from_be_bytes(months.try_into().map_err(|_| bad())?),
                    })
                }
                SqlType::Uuid => {
                    Value::Uuid(u128::from_be_bytes(bytes.try_into().map_err(|_| bad())?))
                }
                SqlType::Array(element) => return decode_array_binary(bytes, *element, index),
                SqlType::Numeric => {
                    return Err(error(
                        "0A000",
                        "leaselab: numeric parameters in binary format are not supported; send them as text",
                    ))
                }
            })
        }
    }
}

fn data_row(row: &[i64], formats: &[Format]) -> BackendMessage {
    BackendMessage::DataRow(
        row.iter()
            .zip(formats)
            .map(|(&value, &format)| Some(encode_int8(value, format)))
            .collect(),
    )
}

fn quoted_statement_name(name: &str) -> String {
    if name.is_empty() {
        "unnamed prepared statement".to_string()
    } else {
        format!("prepared statement \"{name}\"")
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> PgConnection<'_, S> {
    /// The engine, its clock set to when this connection's last message arrived.
    fn engine_now(&self) -> std::cell::RefMut<'_, Postgres> {
        let mut postgres = self.server.postgres.borrow_mut();
        if let Some(clock) = self.message_clock {
            postgres.set_clock(clock);
        }
        postgres
    }

    fn greet(&mut self, startup: &Startup) {
        self.io.send(&BackendMessage::AuthenticationOk);
        let params = [
            ("application_name", startup.application_name.as_str()),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("default_transaction_read_only", "off"),
            ("in_hot_standby", "off"),
            ("integer_datetimes", "on"),
            ("IntervalStyle", "postgres"),
            ("is_superuser", "on"),
            ("server_encoding", "UTF8"),
            ("server_version", SERVER_VERSION),
            ("session_authorization", startup.user.as_str()),
            ("standard_conforming_strings", "on"),
            ("TimeZone", "UTC"),
        ];
        for (name, value) in params {
            self.io.send(&BackendMessage::ParameterStatus {
                name: name.to_string(),
                value: value.to_string(),
            });
        }
        let process_id = self.session.id.pid();
        self.io.send(&BackendMessage::BackendKeyData {
            process_id,
            secret_key: process_id.wrapping_mul(0x2545_f491),
        });
        self.send_ready_for_query();
    }

    async fn serve(&mut self) -> io::Result<()> {
        loop {
            match decode_frontend(&self.io.input) {
                Ok(Some(decoded)) => {
                    self.io.input.drain(..decoded.consumed_bytes);
                    self.message_clock = self.server.clock.as_ref().map(|clock| clock());
                    self.message_at = Some(tokio::time::Instant::now());
                    if self.handle_message(decoded.message).await? == Flow::Close {
                        return self.io.close().await;
                    }
                }
                Ok(None) => {
                    if !self.io.fill().await? {
                        return Ok(());
                    }
                }
                Err(FrontendError::Fatal(fatal_error)) => {
                    if let Some(error) = fatal_error.error {
                        self.io.send(&BackendMessage::ErrorResponse(error));
                    }
                    return self.io.close().await;
                }
                Err(FrontendError::Malformed {
                    mut error,
                    consumed_bytes,
                    type_byte,
                }) => {
                    // PostgreSQL looks the statement of a Bind up before it reads the rest.
                    if type_byte == b'B' {
                        if let Some(name) = bind_statement_name(&self.io.input[..consumed_bytes]) {
                            if !self.statements.contains_key(&name) {
                                *error = crate::pg_wire::error(
                                    "26000",
                                    format!("{} does not exist", quoted_statement_name(&name)),
                                );
                            }
                        }
                    }
                    self.io.input.drain(..consumed_bytes);
                    self.handle_malformed(*error, type_byte).await?;
                }
            }
        }
    }

    async fn handle_malformed(&mut self, error: PgError, type_byte: u8) -> io::Result<()> {
        if self.skipping_to_sync && type_byte != b'S' {
            return Ok(());
        }
        if type_byte == b'S' {
            // A Sync ends the skipping even when it is malformed itself.
            self.skipping_to_sync = false;
        }
        self.io.send(&BackendMessage::ErrorResponse(error));
        self.abort_block_on_wire_error();
        if is_extended_type(type_byte) {
            self.skipping_to_sync = true;
            Ok(())
        } else {
            self.send_ready_for_query();
            self.io.flush().await
        }
    }

    async fn handle_message(&mut self, message: FrontendMessage) -> io::Result<Flow> {
        if self.skipping_to_sync
            && !matches!(message, FrontendMessage::Sync | FrontendMessage::Terminate)
        {
            return Ok(Flow::Continue);
        }
        let outcome = match message {
            FrontendMessage::Query { sql } => {
                self.simple_query(&sql).await;
                self.send_ready_for_query();
                self.io.flush().await?;
                return Ok(Flow::Continue);
            }
            FrontendMessage::Terminate => return Ok(Flow::Close),
            FrontendMessage::CopyIgnored => return Ok(Flow::Continue),
            FrontendMessage::FunctionCall { oid } => {
                let refusal = if self.transaction_status() == TransactionStatus::Failed {
                    PgError::in_failed_transaction()
                } else {
                    error("42883", format!("function with OID {oid} does not exist"))
                };
                self.io.send(&BackendMessage::ErrorResponse(refusal));
                self.abort_block_on_wire_error();
                self.send_ready_for_query();
                self.io.flush().await?;
                return Ok(Flow::Continue);
            }
            FrontendMessage::Sync => {
                self.sync();
                self.io.flush().await?;
                return Ok(Flow::Continue);
            }
            FrontendMessage::Flush => {
                self.io.flush().await?;
                return Ok(Flow::Continue);
            }
            FrontendMessage::Parse {
                name,
                sql,
                param_oids,
            } => self.parse(name, sql, &param_oids),
            FrontendMessage::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            } => self.bind(portal, &statement, &param_formats, &params, &result_formats),
            FrontendMessage::Describe { target, name } => self.describe(target, &name),
            FrontendMessage::Execute { portal, max_rows } => {
                self.execute_portal(&portal, max_rows).await
            }
            FrontendMessage::Close { target, name } => {
                self.close(target, &name);
                Ok(())
            }
        };
        if let Err(error) = outcome {
            self.io.send(&BackendMessage::ErrorResponse(error));
            self.abort_block_on_wire_error();
            self.skipping_to_sync = true;
        }
        Ok(Flow::Continue)
    }

    fn transaction_status(&self) -> TransactionStatus {
        if self.aborted_by_wire_error {
            return TransactionStatus::Failed;
        }
        let status = self.server.postgres.borrow().status(self.session.id);
        match status {
            None | Some(TxStatus::Idle) => TransactionStatus::Idle,
            Some(TxStatus::InBlock) => TransactionStatus::InTransaction,
            Some(TxStatus::Failed) => TransactionStatus::Failed,
        }
    }

    /// After an error: if it left an open transaction block untouched (the stand-in did not
    /// see it), abort the block as PostgreSQL does, releasing its locks at once.
    fn abort_block_on_wire_error(&mut self) {
        if self.transaction_status() != TransactionStatus::InTransaction {
            return;
        }
        let executed = self
            .engine_now()
            .execute(self.session.id, &Statement::Rollback, &[]);
        debug_assert!(matches!(executed, Exec::Done(Ok(_))), "{executed:?}");
        self.aborted_by_wire_error = true;
        self.server.transaction_ended.notify_waiters();
    }

    /// A statement in a block aborted by [`Self::abort_block_on_wire_error`].
    fn run_in_aborted_block(&mut self, statement: &Statement) -> Result<QueryResult, PgError> {
        if statement.ends_transaction() {
            self.aborted_by_wire_error = false;
            Ok(QueryResult {
                columns: Vec::new(),
                rows: Vec::new(),
                tag: "ROLLBACK".to_string(),
                rows_affected: 0,
            })
        } else {
            Err(PgError::in_failed_transaction())
        }
    }

    fn send_ready_for_query(&mut self) {
        let status = self.transaction_status();
        self.io.send(&BackendMessage::ReadyForQuery(status));
    }

    fn sync(&mut self) {
        self.skipping_to_sync = false;
        if self.transaction_status() == TransactionStatus::Idle {
            // Portals do not outlive their transaction.
            self.portals.clear();
        }
        self.send_ready_for_query();
    }

    /// Executes a statement in this session, waiting for row locks as long as it is blocked,
    /// and reports it. A warning that comes with the result is sent at once.
    async fn run(
        &mut self,
        sql: &str,
        statement: &Statement,
        params: &[i64],
    ) -> Result<QueryResult, PgError> {
        if self.aborted_by_wire_error {
            let result = self.run_in_aborted_block(statement);
            self.server
                .observer
                .sql_statement(self.conn_id, sql, params, &result);
            return result;
        }
        let mut wait = Wait::default();
        let mut timers = SleepTimers::default();
        let in_block = self.transaction_status() == TransactionStatus::InTransaction;
        loop {
            let executed =
                self.engine_now()
                    .execute_with_notice(self.session.id, statement, params);
            match executed.exec {
                Exec::Done(result) => {
                    let result = match self.sleep_requested().await {
                        Some(canceled) => Err(canceled),
                        None => result,
                    };
                    let done = result.as_ref().ok();
                    self.take_service_time(
                        done.map(|r| (r.tag.as_str(), r.rows_affected)),
                        in_block,
                    )
                    .await;
                    if let Some(notice) = executed.notice {
                        self.io.send(&BackendMessage::NoticeResponse(notice));
                    }
                    self.wake_waiters_if_locks_released(wait.blocker.is_some());
                    self.server
                        .observer
                        .sql_statement(self.conn_id, sql, params, &result);
                    return result;
                }
                Exec::Blocked { by } => {
                    let (new_blocker, new_sleep) = self.note_wait(&mut wait, by);
                    if new_sleep {
                        timers = self.sleep_timers();
                    }
                    if new_blocker {
                        self.server
                            .observer
                            .sql_blocked(self.conn_id, sql, params, by);
                    }
                    // No other task runs between the execution above and this wait, so no
                    // wake-up can be missed.
                    if let Some(error) = self.wait_for_lock(&mut timers).await {
                        let result = Err(error);
                        self.server
                            .observer
                            .sql_statement(self.conn_id, sql, params, &result);
                        return result;
                    }
                }
            }
        }
    }

    /// Waits out the service time ([`PgService`]) of a statement that just ran: `done` is its
    /// tag and rows affected when it succeeded, `in_block` whether it ran inside a
    /// transaction block. Locks it released are handed on after the wait, as PostgreSQL
    /// releases them after the commit record is on disk.
    async fn take_service_time(&mut self, done: Option<(&str, u64)>, in_block: bool) {
        let service = self.server.service;
        let mut wait = std::time::Duration::ZERO;
        if self.statements_run == 0 {
            wait += service.first_statement_of(self.conn_id);
        }
        self.statements_run += 1;
        if let Some((tag, rows)) = done {
            let wrote = rows > 0
                && ["INSERT", "UPDATE", "DELETE"]
                    .iter()
                    .any(|w| tag.starts_with(w));
            if wrote && in_block {
                self.wrote_in_block = true;
            } else if wrote {
                wait += service.commit;
            }
            if tag == "COMMIT" && std::mem::take(&mut self.wrote_in_block) {
                wait += service.commit;
            }
            if tag == "ROLLBACK" {
                self.wrote_in_block = false;
            }
        }
        if !wait.is_zero() {
            let at = tokio::time::Instant::now() + wait;
            turmoil::wake_at(at);
            tokio::time::sleep_until(at).await;
        }
    }

    /// Waits out what the statement's `pg_sleep` calls asked for (on the runtime's clock:
    /// simulated time in a run, real time when served). At the session's `statement_timeout`
    /// (counted from when the message arrived) the statement is canceled instead, with
    /// PostgreSQL's 57014, failing its transaction block as any error does; the error then.
    async fn sleep_requested(&mut self) -> Option<PgError> {
        let asked = self.engine_now().take_requested_sleep()?;
        let now = tokio::time::Instant::now();
        // `pg_sleep('infinity')`: some 136 years.
        let until = now
            .checked_add(asked)
            .unwrap_or(now + std::time::Duration::from_secs(u64::from(u32::MAX)));
        let (at, canceled) = match self.cancel_at(&SleepTimers::default()) {
            Some((at, error)) if at < until => (at, Some(error)),
            _ => (until, None),
        };
        turmoil::wake_at(at);
        tokio::time::sleep_until(at).await;
        let error = canceled?;
        let error = self.engine_now().cancel_wait(self.session.id, error);
        self.server.transaction_ended.notify_waiters();
        Some(error)
    }

    /// Notes that the statement waits (again) for `by`: whether `by` is a new blocker (to be
    /// reported), and whether the wait is a new sleep in PostgreSQL's terms, which starts its
    /// `deadlock_timeout` again. A new sleep is the statement's first wait, a wait for another
    /// lock holder, or the moment the session becomes first in the row's queue (it then holds
    /// the tuple lock and sleeps on the holder's transaction). A session queued behind another
    /// sleeps on the tuple lock all along, whoever is first, so its timer runs on.
    fn note_wait(&self, wait: &mut Wait, by: SessionId) -> (bool, bool) {
        let behind = self.server.postgres.borrow().queued_behind(self.session.id);
        let new_blocker = wait.blocker != Some(by);
        let new_sleep =
            wait.blocker.is_none() || (new_blocker && !behind) || (wait.behind && !behind);
        *wait = Wait {
            blocker: Some(by),
            behind,
        };
        (new_blocker, new_sleep)
    }

    /// The timers of a sleep that starts now: its deadlock check (none: the engine checks at
    /// once) and its session's `lock_timeout` (none at 0).
    fn sleep_timers(&self) -> SleepTimers {
        let now = tokio::time::Instant::now();
        let (lock_ms, _) = self
            .server
            .postgres
            .borrow()
            .time_limits_ms(self.session.id);
        SleepTimers {
            deadlock_check: self.server.deadlock_timeout.map(|timeout| now + timeout),
            lock_timeout: (lock_ms > 0).then(|| now + std::time::Duration::from_millis(lock_ms)),
        }
    }

    /// When the statement is canceled, and with which error: its sleep's `lock_timeout`, or
    /// its session's `statement_timeout` counted from when its message arrived, whichever
    /// comes first.
    fn cancel_at(&self, timers: &SleepTimers) -> Option<(tokio::time::Instant, PgError)> {
        let (_, statement_ms) = self
            .server
            .postgres
            .borrow()
            .time_limits_ms(self.session.id);
        let statement = (statement_ms > 0)
            .then(|| {
                self.message_at
                    .map(|at| at + std::time::Duration::from_millis(statement_ms))
            })
            .flatten()
            .map(|at| {
                let error = error("57014", "canceling statement due to statement timeout");
                (at, error)
            });
        let lock = timers.lock_timeout.map(|at| {
            let error = error("55P03", "canceling statement due to lock timeout");
            (at, error)
        });
        match (lock, statement) {
            (Some(lock), Some(statement)) if statement.0 < lock.0 => Some(statement),
            (Some(lock), _) => Some(lock),
            (None, statement) => statement,
        }
    }

    /// Waits until some transaction ends (the blocked statement then runs again); once per
    /// sleep, at its deadlock check, the session looks for a deadlock through itself as
    /// PostgreSQL does after `deadlock_timeout`; at `lock_timeout` (per sleep) or
    /// `statement_timeout` (per statement) the wait is canceled. The error if it ended so
    /// (its transaction is aborted and its locks released; waiters are woken).
    async fn wait_for_lock(&self, timers: &mut SleepTimers) -> Option<PgError> {
        let ended = self.server.transaction_ended.notified();
        tokio::pin!(ended);
        loop {
            let cancel = self.cancel_at(timers);
            let next = match (timers.deadlock_check, &cancel) {
                (Some(check), Some((cancel, _))) => Some(check.min(*cancel)),
                (check, cancel) => check.or(cancel.as_ref().map(|(at, _)| *at)),
            };
            let Some(at) = next else {
                ended.await;
                return None;
            };
            turmoil::wake_at(at);
            tokio::select! {
                biased;
                () = &mut ended => return None,
                () = tokio::time::sleep_until(at) => {}
            }
            if timers.deadlock_check.is_some_and(|check| check <= at) {
                timers.deadlock_check = None;
                let found = self
                    .server
                    .postgres
                    .borrow_mut()
                    .check_deadlock(self.session.id);
                if let Some(error) = found {
                    self.server.transaction_ended.notify_waiters();
                    return Some(error);
                }
            }
            if let Some((_, error)) = cancel.filter(|(cancel_at, _)| *cancel_at <= at) {
                let error = self
                    .server
                    .postgres
                    .borrow_mut()
                    .cancel_wait(self.session.id, error);
                self.server.transaction_ended.notify_waiters();
                return Some(error);
            }
        }
    }

    /// Wakes waiting statements when this session holds no transaction open any more (it
    /// committed, rolled back, ran a statement on its own, or its transaction failed, which
    /// releases its locks at once), or when its statement had waited: it has left the row's
    /// queue, and the next in line now sleeps on the row's holder instead of on the tuple
    /// lock, a new sleep in PostgreSQL's terms that starts its `deadlock_timeout` again; or
    /// when a lock was let go without a transaction ending (an advisory lock, table locks
    /// given back by `ROLLBACK TO SAVEPOINT`).
    fn wake_waiters_if_locks_released(&self, left_a_queue: bool) {
        let lock_released = self.server.postgres.borrow_mut().take_lock_released();
        if left_a_queue
            || lock_released
            || self.transaction_status() != TransactionStatus::InTransaction
        {
            self.server.transaction_ended.notify_waiters();
        }
    }

    fn report_parse_error(&self, sql: &str, error: &PgError) {
        self.server
            .observer
            .sql_statement(self.conn_id, sql, &[], &Err(error.clone()));
    }

    /// The simple Query protocol: each statement in turn, stopping at the first error.
    async fn simple_query(&mut self, sql: &str) {
        // The unnamed portal does not survive a simple query.
        self.portals.remove("");
        let pieces = match parse_query(sql) {
            Ok(pieces) => pieces,
            Err(error) => {
                self.report_parse_error(sql, &error);
                self.io.send(&BackendMessage::ErrorResponse(error));
                self.abort_block_on_wire_error();
                return;
            }
        };
        if pieces.is_empty() {
            self.io.send(&BackendMessage::EmptyQueryResponse);
            return;
        }
        // Several statements outside a block run as one implicit transaction, as in
        // PostgreSQL: an error rolls back the ones before it. (With transaction control among
        // them, each runs on its own.)
        let implicit = pieces.len() > 1
            && self.transaction_status() == TransactionStatus::Idle
            && !pieces.iter().any(is_transaction_control);
        if implicit {
            self.engine_control(&Statement::Begin);
        }
        let outcome = self.run_pieces(pieces).await;
        if implicit {
            match outcome {
                Ok(()) => self.engine_control(&Statement::Commit),
                Err(()) => self.engine_control(&Statement::Rollback),
            }
            self.aborted_by_wire_error = false;
            self.server.transaction_ended.notify_waiters();
        }
    }

    /// Runs a transaction-control statement in the engine without reporting it (the implicit
    /// transaction of a multi-statement query).
    fn engine_control(&mut self, statement: &Statement) {
        let _ = self.engine_now().execute(self.session.id, statement, &[]);
    }

    /// Runs the statements of a simple query in turn, stopping at the first error.
    async fn run_pieces(&mut self, pieces: Vec<Parsed>) -> Result<(), ()> {
        for piece in pieces {
            let outcome = match &piece {
                Parsed::Typed(statement, text) if statement.param_count() > 0 => {
                    let error = error("42P02", "there is no parameter $1");
                    self.report_parse_error(text, &error);
                    Err(error)
                }
                Parsed::Typed(statement, text) => {
                    self.run(text, statement, &[]).await.map(|result| {
                        self.send_text_result(&result);
                    })
                }
                Parsed::General(general) => {
                    // PostgreSQL plans a query (analysis, constants folded), describes its
                    // rows and only then runs it: an error while it runs (a lock refused, an
                    // overflow in a row, a negative OFFSET) comes after the RowDescription.
                    let query =
                        matches!(&general.ast, leaselab_model::postgres::sql::Ast::Query(_));
                    let described = (query
                        && self.transaction_status() != TransactionStatus::Failed)
                        .then(|| {
                            let postgres = self.server.postgres.borrow();
                            postgres.plan_sql_in(self.session.id, general, &[]).ok()
                        })
                        .flatten()
                        .filter(|d| !d.columns.is_empty() && !d.changes_data);
                    match described {
                        None => self
                            .run_general(&general.text, general, &[], &[])
                            .await
                            .map(|result| self.send_general_result(&result)),
                        Some(description) => self.run_described(general, &description).await,
                    }
                }
            };
            if let Err(error) = outcome {
                self.io.send(&BackendMessage::ErrorResponse(error));
                self.abort_block_on_wire_error();
                return Err(());
            }
        }
        Ok(())
    }

    /// Runs a query whose rows were described by planning it: the row description first,
    /// then its rows, or the rows it read before an error and the error (as PostgreSQL
    /// sends them).
    async fn run_described(
        &mut self,
        general: &GeneralStatement,
        description: &Description,
    ) -> Result<(), PgError> {
        let columns: Vec<(String, u32)> = description
            .columns
            .iter()
            .map(|(name, ty)| (name.clone(), ty.oid()))
            .collect();
        let types: Vec<SqlType> = description.columns.iter().map(|(_, ty)| *ty).collect();
        let formats = vec![Format::Text; columns.len()];
        self.io.send(&typed_row_description(&columns, &formats));
        match self.run_general(&general.text, general, &[], &[]).await {
            Ok(result) => {
                self.send_data_rows(&result.rows, &types, &formats);
                self.io.send(&BackendMessage::CommandComplete(result.tag));
                Ok(())
            }
            Err(error) => {
                self.send_data_rows(rows_before(&error), &types, &formats);
                Err(error)
            }
        }
    }

    /// Sends `rows` as DataRows.
    fn send_data_rows(&mut self, rows: &[Vec<Value>], types: &[SqlType], formats: &[Format]) {
        for row in rows {
            self.io.send(&general_data_row(row, types, formats));
        }
    }

    fn send_general_result(&mut self, result: &SqlResult) {
        // A query of no columns (`SELECT;`) still describes its rows: none of them.
        if !result.columns.is_empty() || result.tag.starts_with("SELECT") {
            let formats = vec![Format::Text; result.columns.len()];
            let columns: Vec<(String, u32)> = result
                .columns
                .iter()
                .map(|(name, ty)| (name.clone(), ty.oid()))
                .collect();
            let types: Vec<SqlType> = result.columns.iter().map(|(_, ty)| *ty).collect();
            self.io.send(&typed_row_description(&columns, &formats));
            self.send_data_rows(&result.rows, &types, &formats);
        }
        self.io
            .send(&BackendMessage::CommandComplete(result.tag.clone()));
    }

    /// Executes a general statement, waiting for locks as [`Self::run`] does.
    async fn run_general(
        &mut self,
        sql: &str,
        statement: &GeneralStatement,
        declared: &[SqlType],
        params: &[Value],
    ) -> Result<SqlResult, PgError> {
        let report = |result: &Result<SqlResult, PgError>| -> Result<QueryResult, PgError> {
            match result {
                Ok(result) => Ok(QueryResult {
                    columns: Vec::new(),
                    rows: Vec::new(),
                    tag: result.tag.clone(),
                    rows_affected: result.rows_affected,
                }),
                Err(error) => Err(error.clone()),
            }
        };
        if self.aborted_by_wire_error {
            let ends = matches!(
                statement.ast,
                leaselab_model::postgres::sql::Ast::Commit { .. }
                    | leaselab_model::postgres::sql::Ast::Rollback {
                        savepoint: None,
                        ..
                    }
            );
            let result = if ends {
                self.aborted_by_wire_error = false;
                Ok(SqlResult {
                    columns: Vec::new(),
                    rows: Vec::new(),
                    tag: "ROLLBACK".to_string(),
                    rows_affected: 0,
                })
            } else {
                Err(PgError::in_failed_transaction())
            };
            self.server
                .observer
                .sql_statement(self.conn_id, sql, &[], &report(&result));
            return result;
        }
        let mut wait = Wait::default();
        let mut timers = SleepTimers::default();
        let in_block = self.transaction_status() == TransactionStatus::InTransaction;
        loop {
            let executed =
                self.engine_now()
                    .execute_prepared(self.session.id, statement, declared, params);
            match executed.exec {
                SqlExec::Done(result) => {
                    let result = match self.sleep_requested().await {
                        Some(canceled) => Err(canceled),
                        None => result,
                    };
                    let done = result.as_ref().ok();
                    self.take_service_time(
                        done.map(|r| (r.tag.as_str(), r.rows_affected)),
                        in_block,
                    )
                    .await;
                    if let Some(notice) = executed.notice {
                        self.io.send(&BackendMessage::NoticeResponse(notice));
                    }
                    self.wake_waiters_if_locks_released(wait.blocker.is_some());
                    self.server
                        .observer
                        .sql_statement(self.conn_id, sql, &[], &report(&result));
                    return result;
                }
                SqlExec::Blocked { by } => {
                    let (new_blocker, new_sleep) = self.note_wait(&mut wait, by);
                    if new_sleep {
                        timers = self.sleep_timers();
                    }
                    if new_blocker {
                        self.server.observer.sql_blocked(self.conn_id, sql, &[], by);
                    }
                    if let Some(error) = self.wait_for_lock(&mut timers).await {
                        let result = Err(error);
                        self.server.observer.sql_statement(
                            self.conn_id,
                            sql,
                            &[],
                            &report(&result),
                        );
                        return result;
                    }
                }
            }
        }
    }

    fn send_text_result(&mut self, result: &QueryResult) {
        if !result.columns.is_empty() {
            let formats = vec![Format::Text; result.columns.len()];
            self.io.send(&row_description(&result.columns, &formats));
            for row in &result.rows {
                self.io.send(&data_row(row, &formats));
            }
        }
        self.io
            .send(&BackendMessage::CommandComplete(result.tag.clone()));
    }

    fn parse(&mut self, name: String, sql: String, param_oids: &[u32]) -> Result<(), PgError> {
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(error(
                "42P05",
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let parsed = match parse_query(&sql) {
            Ok(parsed) => parsed,
            Err(error) => {
                self.report_parse_error(&sql, &error);
                return Err(error);
            }
        };
        let all_int = param_oids
            .iter()
            .all(|&oid| IntType::from_oid(oid).is_some());
        let (statement, general) = match parsed.as_slice() {
            [] => (None, None),
            [Parsed::Typed(statement, _)] if all_int => (Some(*statement), None),
            [one] => {
                let general = match one {
                    Parsed::General(general) => general.clone(),
                    Parsed::Typed(_, text) => {
                        Box::new(leaselab_model::postgres::parse_general(text)?)
                    }
                };
                let declared: Vec<SqlType> = param_oids
                    .iter()
                    .map(|&oid| {
                        SqlType::from_oid(oid).ok_or_else(|| {
                            error(
                                "0A000",
                                format!("leaselab: parameter type OID {oid} is not supported"),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?;
                let description = self
                    .server
                    .postgres
                    .borrow()
                    .describe_sql(&general, &declared)
                    .inspect_err(|error| self.report_parse_error(&sql, error))?;
                (
                    None,
                    Some(General {
                        statement: general,
                        params: description.params,
                        columns: description.columns,
                    }),
                )
            }
            _ => {
                return Err(error(
                    "42601",
                    "cannot insert multiple commands into a prepared statement",
                ))
            }
        };
        let used_count = statement.as_ref().map_or(0, Statement::param_count);
        let (param_types, unused_param_oids) = if general.is_some() {
            (Vec::new(), Vec::new())
        } else {
            (
                used_param_types(param_oids, used_count)?,
                unused_param_oids(param_oids, used_count)?,
            )
        };
        self.statements.insert(
            name,
            Prepared {
                sql,
                statement,
                general,
                param_types,
                unused_param_oids,
            },
        );
        self.io.send(&BackendMessage::ParseComplete);
        Ok(())
    }

    fn bind(
        &mut self,
        portal_name: String,
        statement_name: &str,
        param_formats: &[i16],
        params: &[Option<Vec<u8>>],
        result_format_codes: &[i16],
    ) -> Result<(), PgError> {
        let prepared = self
            .statements
            .get(statement_name)
            .cloned()
            .ok_or_else(|| {
                error(
                    "26000",
                    format!("{} does not exist", quoted_statement_name(statement_name)),
                )
            })?;
        if !portal_name.is_empty() && self.portals.contains_key(&portal_name) {
            return Err(error(
                "42P03",
                format!("cursor \"{portal_name}\" already exists"),
            ));
        }
        let (params, values) = if prepared.general.is_some() {
            (
                Vec::new(),
                decode_general_params(&prepared, statement_name, param_formats, params)?,
            )
        } else {
            (
                decode_params(&prepared, statement_name, param_formats, params)?,
                Vec::new(),
            )
        };
        let failed = self.transaction_status() == TransactionStatus::Failed;
        // In a failed block PostgreSQL's Bind refuses all but COMMIT and ROLLBACK [TO].
        let ends_block = match (&prepared.statement, &prepared.general) {
            (Some(statement), _) => matches!(statement, Statement::Commit | Statement::Rollback),
            (None, Some(general)) => matches!(
                general.statement.ast,
                leaselab_model::postgres::sql::Ast::Commit { .. }
                    | leaselab_model::postgres::sql::Ast::Rollback { .. }
            ),
            (None, None) => false,
        };
        if failed && !ends_block {
            return Err(PgError::in_failed_transaction());
        }
        if let Some(general) = prepared.general.as_ref().filter(|_| !failed) {
            // PostgreSQL plans the statement when it is bound (in a failed block it refuses
            // the statement when it runs): a constant's error is the Bind's.
            self.server.postgres.borrow().bind_sql_in(
                self.session.id,
                &general.statement,
                &general.params,
                &values,
            )?;
        }
        let column_count = prepared.columns().len();
        let result_formats = resolve_result_formats(result_format_codes, column_count)?;
        self.portals.insert(
            portal_name,
            Portal {
                prepared,
                params,
                values,
                result_formats,
                progress: PortalProgress::NotRun,
            },
        );
        self.io.send(&BackendMessage::BindComplete);
        Ok(())
    }

    fn describe(&mut self, target: Target, name: &str) -> Result<(), PgError> {
        let (columns, formats) = match target {
            Target::Statement => {
                let prepared = self.statements.get(name).ok_or_else(|| {
                    error(
                        "26000",
                        format!("{} does not exist", quoted_statement_name(name)),
                    )
                })?;
                let oids = prepared.param_oids();
                let columns = prepared.columns();
                self.io.send(&BackendMessage::ParameterDescription(oids));
                let formats = vec![Format::Text; columns.len()];
                (columns, formats)
            }
            Target::Portal => {
                let portal = self.portal(name)?;
                (portal.prepared.columns(), portal.result_formats.clone())
            }
        };
        if columns.is_empty() {
            self.io.send(&BackendMessage::NoData);
        } else {
            self.io.send(&typed_row_description(&columns, &formats));
        }
        Ok(())
    }

    fn portal(&self, name: &str) -> Result<&Portal, PgError> {
        self.portals
            .get(name)
            .ok_or_else(|| error("34000", format!("portal \"{name}\" does not exist")))
    }

    async fn execute_portal(&mut self, name: &str, max_rows: i32) -> Result<(), PgError> {
        let portal = self.portal(name)?.clone();
        if let Some(general) = &portal.prepared.general {
            if matches!(portal.progress, PortalProgress::Finished) {
                return Err(error("55000", format!("portal \"{name}\" cannot be run")));
            }
            let types: Vec<SqlType> = general.columns.iter().map(|(_, ty)| *ty).collect();
            let result = self
                .run_general(
                    &portal.prepared.sql,
                    &general.statement,
                    &general.params,
                    &portal.values,
                )
                .await
                .inspect_err(|error| {
                    self.send_data_rows(rows_before(error), &types, &portal.result_formats);
                })?;
            self.send_data_rows(&result.rows, &types, &portal.result_formats);
            self.io.send(&BackendMessage::CommandComplete(result.tag));
            if let Some(stored) = self.portals.get_mut(name) {
                stored.progress = PortalProgress::Finished;
            }
            return Ok(());
        }
        let Some(statement) = portal.prepared.statement else {
            self.io.send(&BackendMessage::EmptyQueryResponse);
            return Ok(());
        };
        let (result, sent_rows) = match portal.progress {
            PortalProgress::NotRun => {
                let result = self
                    .run(&portal.prepared.sql, &statement, &portal.params)
                    .await?;
                (result, 0)
            }
            PortalProgress::Suspended { result, sent_rows } => (result, sent_rows),
            PortalProgress::Finished => {
                // A finished SELECT portal has no more rows; other statements run only once.
                return match statement {
                    Statement::Select { .. } => {
                        self.io
                            .send(&BackendMessage::CommandComplete("SELECT 0".to_string()));
                        Ok(())
                    }
                    _ => Err(error("55000", format!("portal \"{name}\" cannot be run"))),
                };
            }
        };
        let limit = if max_rows > 0 {
            max_rows as usize
        } else {
            usize::MAX
        };
        let batch_end = result.rows.len().min(sent_rows.saturating_add(limit));
        for row in &result.rows[sent_rows..batch_end] {
            self.io.send(&data_row(row, &portal.result_formats));
        }
        let progress = if batch_end < result.rows.len() {
            self.io.send(&BackendMessage::PortalSuspended);
            PortalProgress::Suspended {
                result,
                sent_rows: batch_end,
            }
        } else {
            let tag = if sent_rows > 0 {
                format!("SELECT {}", batch_end - sent_rows)
            } else {
                result.tag
            };
            self.io.send(&BackendMessage::CommandComplete(tag));
            PortalProgress::Finished
        };
        if let Some(stored) = self.portals.get_mut(name) {
            stored.progress = progress;
        }
        Ok(())
    }

    fn close(&mut self, target: Target, name: &str) {
        match target {
            Target::Statement => {
                self.statements.remove(name);
            }
            Target::Portal => {
                self.portals.remove(name);
            }
        }
        self.io.send(&BackendMessage::CloseComplete);
    }
}

/// The types of the `used_count` parameters a statement uses: declared integer types, or
/// `bigint` where the client left the type to the server (OID 0).
fn used_param_types(param_oids: &[u32], used_count: usize) -> Result<Vec<IntType>, PgError> {
    (0..used_count)
        .map(|index| {
            let oid = param_oids.get(index).copied().unwrap_or(0);
            IntType::from_oid(oid).ok_or_else(|| {
                error(
                    "42804",
                    format!(
                        "leaselab: parameter ${} has type OID {oid}; the statement's parameters \
                         are bigint (smallint and integer are accepted too)",
                        index + 1
                    ),
                )
            })
        })
        .collect()
}

/// The declared types of parameters beyond those the statement uses; each needs a type.
fn unused_param_oids(param_oids: &[u32], used_count: usize) -> Result<Vec<u32>, PgError> {
    let unused = param_oids.get(used_count..).unwrap_or_default();
    if let Some(offset) = unused.iter().position(|&oid| oid == 0) {
        return Err(error(
            "42P18",
            format!(
                "could not determine data type of parameter ${}",
                used_count + offset + 1
            ),
        ));
    }
    Ok(unused.to_vec())
}

/// Decodes a Bind's parameter values with PostgreSQL's checks and errors; the values of
/// unused parameters are dropped.
fn decode_params(
    prepared: &Prepared,
    statement_name: &str,
    param_formats: &[i16],
    params: &[Option<Vec<u8>>],
) -> Result<Vec<i64>, PgError> {
    if param_formats.len() > 1 && param_formats.len() != params.len() {
        return Err(error(
            PROTOCOL_VIOLATION,
            format!(
                "bind message has {} parameter formats but {} parameters",
                param_formats.len(),
                params.len()
            ),
        ));
    }
    if params.len() != prepared.param_count() {
        return Err(error(
            PROTOCOL_VIOLATION,
            format!(
                "bind message supplies {} parameters, but prepared statement \"{}\" requires {}",
                params.len(),
                statement_name,
                prepared.param_count()
            ),
        ));
    }
    let formats = (0..params.len())
        .map(|index| match param_formats {
            [] => Ok(Format::Text),
            [code] => Format::from_code(*code),
            codes => Format::from_code(codes[index]),
        })
        .collect::<Result<Vec<Format>, PgError>>()?;
    let mut values = Vec::with_capacity(prepared.param_types.len());
    for (index, (value, &ty)) in params.iter().zip(&prepared.param_types).enumerate() {
        let format = formats[index];
        let Some(bytes) = value else {
            return Err(error(
                "0A000",
                format!(
                    "leaselab: NULL parameters are not supported (parameter ${})",
                    index + 1
                ),
            ));
        };
        values.push(decode_int_param(bytes, ty, format, index + 1)?);
    }
    Ok(values)
}

/// Decodes a general statement's parameter values by their types.
fn decode_general_params(
    prepared: &Prepared,
    statement_name: &str,
    param_formats: &[i16],
    params: &[Option<Vec<u8>>],
) -> Result<Vec<Value>, PgError> {
    let types = prepared
        .general
        .as_ref()
        .map(|g| g.params.clone())
        .unwrap_or_default();
    if param_formats.len() > 1 && param_formats.len() != params.len() {
        return Err(error(
            PROTOCOL_VIOLATION,
            format!(
                "bind message has {} parameter formats but {} parameters",
                param_formats.len(),
                params.len()
            ),
        ));
    }
    if params.len() != types.len() {
        return Err(error(
            PROTOCOL_VIOLATION,
            format!(
                "bind message supplies {} parameters, but prepared statement \"{}\" requires {}",
                params.len(),
                statement_name,
                types.len()
            ),
        ));
    }
    let mut values = Vec::with_capacity(params.len());
    for (index, (value, &ty)) in params.iter().zip(&types).enumerate() {
        let format = match param_formats {
            [] => Format::Text,
            [code] => Format::from_code(*code)?,
            codes => Format::from_code(codes[index])?,
        };
        values.push(match value {
            None => Value::Null,
            Some(bytes) => decode_value(bytes, ty, format, index + 1)?,
        });
    }
    Ok(values)
}

/// One format per result column from a Bind's result format codes.
fn resolve_result_formats(codes: &[i16], column_count: usize) -> Result<Vec<Format>, PgError> {
    match codes {
        [] => Ok(vec![Format::Text; column_count]),
        [code] => Ok(vec![Format::from_code(*code)?; column_count]),
        codes if codes.len() == column_count => {
            codes.iter().map(|&code| Format::from_code(code)).collect()
        }
        codes => Err(error(
            PROTOCOL_VIOLATION,
            format!(
                "bind message has {} result formats but query has {} columns",
                codes.len(),
                column_count
            ),
        )),
    }
}

impl ServeConnection for PgServer {
    async fn serve_connection<S>(&self, stream: S, peer: Option<SocketAddr>) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin + 'static,
    {
        self.handle_connection(stream, peer).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_statement_draw_depends_on_the_seed_and_connection_only() {
        let ms = std::time::Duration::from_millis;
        let service = PgService {
            first_statement: ms(2),
            first_statement_tail: ms(10),
            seed: 7,
            commit: ms(0),
        };
        let draws: Vec<_> = (1..=200)
            .map(|conn| service.first_statement_of(conn))
            .collect();
        assert!(draws.iter().all(|d| *d >= ms(2) && *d <= ms(2) + ms(100)));
        assert_eq!(
            draws[41],
            service.first_statement_of(42),
            "same connection, same draw"
        );
        let distinct: std::collections::BTreeSet<_> = draws.iter().collect();
        assert!(distinct.len() > 190, "{} distinct of 200", distinct.len());
        let other = PgService { seed: 8, ..service };
        assert_ne!(
            draws[0..10],
            (1..=10)
                .map(|c| other.first_statement_of(c))
                .collect::<Vec<_>>()[..]
        );
        let mean_us = draws.iter().map(|d| d.as_micros() as f64).sum::<f64>() / 200.0 - 2_000.0;
        assert!(
            (7_000.0..=13_000.0).contains(&mean_us),
            "mean tail {mean_us} µs"
        );
        let none = PgService {
            first_statement_tail: ms(0),
            ..service
        };
        assert_eq!(none.first_statement_of(5), ms(2));
    }

    #[test]
    fn regtype_binary_form_is_the_type_oid() {
        let regtype = |name: &str| Value::Text(name.to_string());
        for (name, oid) in [("integer", 23_u32), ("bigint[]", 1016), ("regtype", 2206)] {
            assert_eq!(
                encode_value(&regtype(name), SqlType::RegType, Format::Binary),
                Some(oid.to_be_bytes().to_vec()),
                "{name}"
            );
            assert_eq!(
                decode_value(&oid.to_be_bytes(), SqlType::RegType, Format::Binary, 1),
                Ok(regtype(name))
            );
        }
        assert_eq!(
            encode_value(&regtype("integer"), SqlType::RegType, Format::Text),
            Some(b"integer".to_vec())
        );
        assert!(decode_value(&[0, 0, 0], SqlType::RegType, Format::Binary, 1).is_err());
        assert!(decode_value(
            &999_999_u32.to_be_bytes(),
            SqlType::RegType,
            Format::Binary,
            1
        )
        .is_err());
    }

    #[test]
    fn numeric_binary_form_is_postgres_form() {
        let numeric = |text: &str| {
            encode_numeric_binary(
                leaselab_model::postgres::value::Decimal::parse(text).expect("a number"),
            )
        };
        // 12345.678: digits [1, 2345, 6780], weight 1, scale 3.
        assert_eq!(
            numeric("12345.678"),
            [0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]
        );
        // -0.05: digits [500], weight -1, negative, scale 2.
        assert_eq!(
            numeric("-0.05"),
            [0, 1, 0xff, 0xff, 0x40, 0, 0, 2, 0x01, 0xf4]
        );
        assert_eq!(numeric("0"), [0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn result_formats_resolve_per_column() {
        assert_eq!(
            resolve_result_formats(&[], 2),
            Ok(vec![Format::Text, Format::Text])
        );
        assert_eq!(
            resolve_result_formats(&[1], 2),
            Ok(vec![Format::Binary, Format::Binary])
        );
        assert_eq!(
            resolve_result_formats(&[0, 1], 2),
            Ok(vec![Format::Text, Format::Binary])
        );
        assert_eq!(
            resolve_result_formats(&[0, 1, 1], 2).unwrap_err().message,
            "bind message has 3 result formats but query has 2 columns"
        );
        assert_eq!(resolve_result_formats(&[1], 0), Ok(vec![]));
        assert_eq!(resolve_result_formats(&[7], 1).unwrap_err().code, "22023");
    }

    fn prepared(param_types: Vec<IntType>) -> Prepared {
        Prepared {
            sql: "UPDATE ...".to_string(),
            statement: None,
            general: None,
            param_types,
            unused_param_oids: Vec::new(),
        }
    }

    #[test]
    fn params_decode_with_postgres_checks() {
        let two = prepared(vec![IntType::Int8, IntType::Int4]);
        let binary = [
            Some(5i64.to_be_bytes().to_vec()),
            Some(6i32.to_be_bytes().to_vec()),
        ];
        assert_eq!(decode_params(&two, "s", &[1], &binary), Ok(vec![5, 6]));
        let mixed = [Some(b"5".to_vec()), Some(6i32.to_be_bytes().to_vec())];
        assert_eq!(decode_params(&two, "s", &[0, 1], &mixed), Ok(vec![5, 6]));
        assert_eq!(
            decode_params(&two, "s", &[], &[Some(b"1".to_vec())])
                .unwrap_err()
                .message,
            "bind message supplies 1 parameters, but prepared statement \"s\" requires 2"
        );
        assert_eq!(
            decode_params(&two, "s", &[0, 0, 0], &binary)
                .unwrap_err()
                .message,
            "bind message has 3 parameter formats but 2 parameters"
        );
        assert_eq!(
            decode_params(&two, "s", &[], &[None, Some(b"1".to_vec())])
                .unwrap_err()
                .code,
            "0A000"
        );
    }

    #[test]
    fn array_binary_form_round_trips_and_refuses_malformed_input() {
        let int8s = SqlType::Int8.array_of().expect("bigint[]");
        let value = Value::Array(std::sync::Arc::new(vec![
            Value::Int(1),
            Value::Null,
            Value::Int(-3),
        ]));
        let bytes = encode_value(&value, int8s, Format::Binary).expect("not NULL");
        assert_eq!(decode_value(&bytes, int8s, Format::Binary, 1), Ok(value));
        let empty = Value::Array(std::sync::Arc::new(Vec::new()));
        let bytes = encode_value(&empty, int8s, Format::Binary).expect("not NULL");
        assert_eq!(bytes.len(), 12, "dimensions, flags, element type only");
        assert_eq!(decode_value(&bytes, int8s, Format::Binary, 1), Ok(empty));
        // One dimension of a billion elements in 20 bytes: refused, never allocated.
        let mut huge = Vec::new();
        for word in [1i32, 0, 20, 1_000_000_000, 1] {
            huge.extend_from_slice(&word.to_be_bytes());
        }
        let code = |bytes: &[u8], ty| decode_value(bytes, ty, Format::Binary, 1).unwrap_err().code;
        assert_eq!(code(&huge, int8s), "22P03");
        assert_eq!(code(&huge[..7], int8s), "22P03");
        let texts = SqlType::Text.array_of().expect("text[]");
        let bytes = encode_value(
            &Value::Array(std::sync::Arc::new(vec![Value::Int(1)])),
            int8s,
            Format::Binary,
        )
        .expect("not NULL");
        assert_eq!(code(&bytes, texts), "42804");
        let mut two_dimensions = bytes.clone();
        two_dimensions[..4].copy_from_slice(&2i32.to_be_bytes());
        assert_eq!(code(&two_dimensions, int8s), "0A000");
        let mut flags = bytes;
        flags[4..8].copy_from_slice(&7i32.to_be_bytes());
        assert_eq!(code(&flags, int8s), "22P03");
    }

    #[test]
    fn declared_parameter_types() {
        assert_eq!(
            used_param_types(&[0, 23], 3),
            Ok(vec![IntType::Int8, IntType::Int4, IntType::Int8])
        );
        assert_eq!(used_param_types(&[25], 1).unwrap_err().code, "42804");
        assert_eq!(unused_param_oids(&[0, 25, 16], 1), Ok(vec![25, 16]));
        assert_eq!(
            unused_param_oids(&[20, 0], 1).unwrap_err().message,
            "could not determine data type of parameter $2"
        );
        let with_unused = Prepared {
            unused_param_oids: vec![25],
            ..prepared(vec![IntType::Int8])
        };
        assert_eq!(with_unused.param_oids(), vec![20, 25]);
        let params = [Some(b"4".to_vec()), Some(b"text".to_vec())];
        assert_eq!(decode_params(&with_unused, "s", &[], &params), Ok(vec![4]));
    }

    #[test]
    fn describe_columns_follow_the_statement() {
        let select = Statement::Select { id: 1, lock: None };
        assert_eq!(statement_columns(Some(&select)), ["balance", "fence"]);
        assert!(statement_columns(Some(&Statement::Begin)).is_empty());
        assert!(statement_columns(None).is_empty());
    }
}
