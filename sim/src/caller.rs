//! A caller host: one safeguard machine driven through the real `redis` and `tokio-postgres`
//! clients over turmoil's network.
//!
//! The host opens its connections during set-up, waits for the common release instant (plus
//! its start offset), then loops: ask the machine for its next step, carry it out, hand back
//! the answer. The machine is the caller's only activity — a GC pause is a sleep of the loop,
//! during which nothing of the caller runs.
//!
//! # Client policy
//!
//! How the clients react to a slow or broken connection is fixed by [`ClientPolicy`] and is
//! deterministic:
//!
//! - every Redis request has a deadline: the safeguard's own timeout (the watchdog's TTL/3),
//!   else the client's read timeout (3 s, go-redis's default). A request that misses it gives
//!   the machine [`Input::RedisTimeout`], and its connection is closed (a partitioned TCP
//!   connection never recovers);
//! - a connection that broke (reset, end of stream, refused) is closed too; the request is
//!   sent again on a new connection up to [`ClientPolicy::max_retries`] times (go-redis
//!   `MaxRetries`, 3) after a random backoff below `8 ms << attempt`, capped at 512 ms —
//!   within the request's deadline. Like go-redis, this can run a script twice when only its
//!   reply was lost. When the retries are used up the machine gets
//!   [`Input::ConnectionError`];
//! - opening a connection has its own deadline (5 s, go-redis's `DialTimeout`);
//! - PostgreSQL statements are never retried (pgx does not retry `Exec`); a statement that
//!   gets no answer within 5 s, or whose connection broke, gives the machine
//!   [`Input::ConnectionError`] and the next statement reconnects (a new session). Statements
//!   are prepared once per connection and then executed in one round trip, as pgx's statement
//!   cache does.
//!
//! # Network timing
//!
//! A request reaches its server at the next tick and the reply comes back within that tick
//! (the servers are ticked before the callers), so a round trip takes 1 ms. The scenario's
//! one-way latency `L` (100–500 µs by default) is drawn per message, and the message is held
//! back one more tick with probability `L / 1 ms` (whole milliseconds of `L` add whole ticks).
//! So sub-millisecond latencies decide how often messages sent in the same tick arrive in
//! different ticks: they spread callers that would otherwise move in lockstep.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use leaselab_model::postgres::{PgError, QueryResult, Statement};
use leaselab_model::redis::{Reply, ScriptId};
use leaselab_model::safeguard::{
    Caller, CallerStats, Input, Machine, Outcome, RedisRequest, SqlRequest, Step,
};
use leaselab_model::world::{describe_reply, describe_request};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use redis::aio::MultiplexedConnection;
use redis::{RedisConnectionInfo, Value};
use tokio::time::Instant;

use crate::clients::{postgres_over_stream, postgres_sim_config, redis_over_stream};
use crate::clients::{POSTGRES_HOST, POSTGRES_PORT, REDIS_HOST, REDIS_PORT};
use crate::events::What;
use crate::run::Shared;

/// How the clients behave when the network or a server misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientPolicy {
    /// Deadline for opening a connection (go-redis `DialTimeout`: 5 s).
    pub dial_timeout_ms: u64,
    /// Deadline of a Redis request without its own timeout (go-redis `ReadTimeout`: 3 s).
    pub read_timeout_ms: u64,
    /// Deadline of a SQL statement.
    pub sql_timeout_ms: u64,
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
            sql_timeout_ms: 5_000,
            max_retries: 3,
            min_retry_backoff_ms: 8,
            max_retry_backoff_ms: 512,
        }
    }
}

/// How one caller ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallerEnd {
    /// Its outcome.
    pub outcome: Outcome,
    /// Its counters.
    pub stats: CallerStats,
    /// When it finished, ms after the release.
    pub done_at_ms: u64,
}

/// Everything one caller host needs.
pub(crate) struct CallerSpec {
    /// 1-based.
    pub(crate) index: u32,
    /// `app-N`.
    pub(crate) name: String,
    /// The safeguard machine.
    pub(crate) machine: Caller,
    /// The caller's own random stream.
    pub(crate) rng: ChaCha8Rng,
    /// When it starts, ms after the release.
    pub(crate) start_offset_ms: u64,
    /// Its pauses.
    pub(crate) pauses: crate::faults::PausePlan,
    /// Open a Redis connection during set-up.
    pub(crate) uses_redis: bool,
    /// Open a PostgreSQL connection during set-up.
    pub(crate) uses_postgres: bool,
}

/// The caller host's future: set up, wait for the release, drive the machine to its end.
pub(crate) async fn run_caller(spec: CallerSpec, shared: Rc<Shared>) -> turmoil::Result {
    let CallerSpec {
        index,
        name,
        mut machine,
        rng,
        start_offset_ms,
        mut pauses,
        uses_redis,
        uses_postgres,
    } = spec;
    let mut host = Host {
        name,
        rng,
        shared: shared.clone(),
        redis: None,
        postgres: None,
        prepared: BTreeMap::new(),
        scripts: BTreeMap::new(),
    };
    if uses_redis {
        // A failure here is retried on the first request.
        let _ = host.connect_redis().await;
    }
    if uses_postgres {
        let _ = host.connect_postgres().await;
    }
    let start = shared.timeline.at_ms(start_offset_ms);
    let now = turmoil::sim_elapsed().unwrap_or_default();
    if start > now {
        tokio::time::sleep(start - now).await;
    }
    host.log(What::Started);
    let mut input = Input::Start;
    loop {
        let step = machine.next(host.caller_ms(), input);
        input = match step {
            Step::Redis {
                request,
                timeout_ms,
            } => host.redis_request(&request, timeout_ms).await,
            Step::Sql(request) => host.sql(&request).await,
            Step::Sleep {
                min_ms,
                max_ms,
                deadline_ms,
            } => {
                let drawn = if max_ms > min_ms {
                    host.rng.random_range(min_ms..=max_ms)
                } else {
                    min_ms
                };
                let now_ms = host.caller_ms();
                let wake_ms = match deadline_ms {
                    Some(deadline) => (now_ms + drawn).min(deadline.max(now_ms)),
                    None => now_ms + drawn,
                };
                let ms = wake_ms - now_ms;
                if ms > 0 {
                    host.log(What::Sleep { ms });
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
                Input::Woke
            }
            Step::Reached(point) => {
                if let Some(ms) = pauses.take(point) {
                    host.log(What::PauseStart {
                        point: point.name().to_string(),
                        ms,
                    });
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    host.log(What::PauseEnd {
                        point: point.name().to_string(),
                    });
                } else {
                    host.log(What::Reached {
                        point: point.name().to_string(),
                    });
                }
                Input::Resumed
            }
            Step::Done(outcome) => {
                let done_at_ms = host.caller_ms();
                host.log(What::Done {
                    outcome: outcome.name().to_string(),
                    detail: crate::run::describe_outcome(&outcome),
                });
                shared.finish(
                    index,
                    CallerEnd {
                        outcome,
                        stats: machine.stats(),
                        done_at_ms,
                    },
                );
                break;
            }
        };
    }
    // Close the connections so the servers end their sessions, and let the client drivers
    // send their goodbyes before the host stops.
    host.redis = None;
    host.postgres = None;
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    Ok(())
}

/// Why a Redis attempt failed.
enum AttemptError {
    /// The connection broke or could not be made.
    Connection(String),
}

/// A caller's connections and state.
struct Host {
    name: String,
    rng: ChaCha8Rng,
    shared: Rc<Shared>,
    redis: Option<MultiplexedConnection>,
    postgres: Option<tokio_postgres::Client>,
    prepared: BTreeMap<String, tokio_postgres::Statement>,
    scripts: BTreeMap<ScriptId, redis::Script>,
}

impl Host {
    fn sim_now(&self) -> Duration {
        turmoil::sim_elapsed().unwrap_or_default()
    }

    fn caller_ms(&self) -> u64 {
        self.shared.timeline.caller_ms(self.sim_now())
    }

    fn log(&self, what: What) {
        let t_us = self.shared.timeline.t_us(self.sim_now());
        self.shared.events.push(t_us, &self.name, what);
    }

    /// Holds a message back for the network's latency (see the module docs).
    async fn network_delay(&mut self) {
        let network = self.shared.network;
        let latency_us = if network.latency_max_us > network.latency_min_us {
            self.rng
                .random_range(network.latency_min_us..=network.latency_max_us)
        } else {
            network.latency_min_us
        };
        let mut ticks = latency_us / 1_000;
        if self.rng.random_range(0..1_000) < latency_us % 1_000 {
            ticks += 1;
        }
        if ticks > 0 {
            tokio::time::sleep(Duration::from_millis(ticks)).await;
        }
    }

    async fn connect_redis(&mut self) -> Result<(), String> {
        let dial = Duration::from_millis(self.shared.policy.dial_timeout_ms);
        let attempt = async move {
            let stream = turmoil::net::TcpStream::connect((REDIS_HOST, REDIS_PORT))
                .await
                .map_err(|error| format!("cannot connect: {error}"))?;
            redis_over_stream(stream, &RedisConnectionInfo::default(), None)
                .await
                .map_err(|error| error.to_string())
        };
        match tokio::time::timeout(dial, attempt).await {
            Ok(Ok(connection)) => {
                self.redis = Some(connection);
                self.log(What::Connected {
                    server: REDIS_HOST.to_string(),
                });
                Ok(())
            }
            Ok(Err(error)) => {
                self.log(What::ConnectFailed {
                    server: REDIS_HOST.to_string(),
                    error: error.clone(),
                });
                Err(error)
            }
            Err(_) => {
                let error = format!("no connection within {}ms", dial.as_millis());
                self.log(What::ConnectFailed {
                    server: REDIS_HOST.to_string(),
                    error: error.clone(),
                });
                Err(error)
            }
        }
    }

    async fn connect_postgres(&mut self) -> Result<(), String> {
        let dial = Duration::from_millis(self.shared.policy.dial_timeout_ms);
        let mut config = postgres_sim_config();
        config.application_name(&self.name);
        let attempt = async move {
            let stream = turmoil::net::TcpStream::connect((POSTGRES_HOST, POSTGRES_PORT))
                .await
                .map_err(|error| format!("cannot connect: {error}"))?;
            postgres_over_stream(stream, &config)
                .await
                .map_err(|error| error.to_string())
        };
        let result = match tokio::time::timeout(dial, attempt).await {
            Ok(result) => result,
            Err(_) => Err(format!("no connection within {}ms", dial.as_millis())),
        };
        match result {
            Ok(client) => {
                self.postgres = Some(client);
                self.prepared.clear();
                self.log(What::Connected {
                    server: POSTGRES_HOST.to_string(),
                });
                Ok(())
            }
            Err(error) => {
                self.log(What::ConnectFailed {
                    server: POSTGRES_HOST.to_string(),
                    error: error.clone(),
                });
                Err(error)
            }
        }
    }

    /// Carries out a Redis step under the client policy.
    async fn redis_request(&mut self, request: &RedisRequest, timeout_ms: Option<u64>) -> Input {
        let policy = self.shared.policy;
        let timeout_ms = timeout_ms.unwrap_or(policy.read_timeout_ms);
        let deadline = Instant::now() + Duration::from_millis(timeout_ms);
        self.log(What::RedisRequest {
            command: describe_request(request),
            timeout_ms,
        });
        let mut attempt = 0;
        loop {
            let result = tokio::time::timeout_at(deadline, self.redis_attempt(request)).await;
            match result {
                Ok(Ok(reply)) => {
                    self.log(What::RedisReply {
                        reply: describe_reply(&reply),
                    });
                    return Input::Redis(reply);
                }
                Ok(Err(AttemptError::Connection(error))) => {
                    self.redis = None;
                    self.log(What::ConnectionError {
                        server: REDIS_HOST.to_string(),
                        error: error.clone(),
                    });
                    if attempt >= policy.max_retries {
                        return Input::ConnectionError(error);
                    }
                    attempt += 1;
                    let backoff_ms = self.retry_backoff_ms(attempt);
                    if Instant::now() + Duration::from_millis(backoff_ms) >= deadline {
                        return Input::ConnectionError(error);
                    }
                    self.log(What::Retry {
                        server: REDIS_HOST.to_string(),
                        attempt,
                        backoff_ms,
                    });
                    if backoff_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(backoff_ms)).await;
                    }
                }
                Err(_) => {
                    // The connection is in an unknown state (a partition hangs it for
                    // good): close it; the next request opens a new one.
                    self.redis = None;
                    self.log(What::RedisTimeout {
                        after_ms: timeout_ms,
                    });
                    return Input::RedisTimeout;
                }
            }
        }
    }

    /// go-redis's `RetryBackoff`: random below `min << attempt`, capped at `max`.
    fn retry_backoff_ms(&mut self, attempt: u32) -> u64 {
        let policy = self.shared.policy;
        let mut cap = policy
            .min_retry_backoff_ms
            .checked_shl(attempt)
            .unwrap_or(u64::MAX);
        if cap > policy.max_retry_backoff_ms || cap < policy.min_retry_backoff_ms {
            cap = policy.max_retry_backoff_ms;
        }
        if cap == 0 {
            0
        } else {
            self.rng.random_range(0..cap)
        }
    }

    /// One attempt: (re)connect if needed, send, wait for the reply.
    async fn redis_attempt(&mut self, request: &RedisRequest) -> Result<Reply, AttemptError> {
        if self.redis.is_none() {
            self.connect_redis()
                .await
                .map_err(AttemptError::Connection)?;
        }
        self.network_delay().await;
        let connection = self.redis.as_mut().expect("connected above");
        let result = match request {
            RedisRequest::Command(command) => {
                let mut cmd = redis::Cmd::new();
                for arg in command.to_argv() {
                    cmd.arg(arg);
                }
                connection.send_packed_command(&cmd).await
            }
            RedisRequest::Script { script, keys, args } => {
                let script = self
                    .scripts
                    .entry(*script)
                    .or_insert_with(|| redis::Script::new(script.source()));
                let mut invocation = script.prepare_invoke();
                for key in keys {
                    invocation.key(key.as_slice());
                }
                for arg in args {
                    invocation.arg(arg.as_slice());
                }
                invocation.invoke_async::<Value>(connection).await
            }
        };
        let reply = match result {
            Ok(value) => value_to_reply(value),
            Err(error) => match error.code() {
                Some(code) => Reply::Error(match error.detail() {
                    Some(detail) => format!("{code} {detail}"),
                    None => code.to_string(),
                }),
                None => return Err(AttemptError::Connection(error.to_string())),
            },
        };
        self.network_delay().await;
        Ok(reply)
    }

    /// Carries out a SQL step.
    async fn sql(&mut self, request: &SqlRequest) -> Input {
        let sql = request.statement.sql();
        self.log(What::SqlRequest {
            sql: sql.clone(),
            params: request.params.clone(),
        });
        let timeout = Duration::from_millis(self.shared.policy.sql_timeout_ms);
        let result = tokio::time::timeout(timeout, self.sql_attempt(request, &sql)).await;
        let input = match result {
            Ok(Ok(result)) => {
                let (text, rows) = match &result {
                    Ok(ok) => (ok.tag.clone(), ok.rows.clone()),
                    Err(error) => (format!("ERROR {} {}", error.code, error.message), vec![]),
                };
                self.log(What::SqlReply { result: text, rows });
                Input::Sql(result)
            }
            Ok(Err(error)) => {
                self.postgres = None;
                self.log(What::ConnectionError {
                    server: POSTGRES_HOST.to_string(),
                    error: error.clone(),
                });
                Input::ConnectionError(error)
            }
            Err(_) => {
                self.postgres = None;
                let error = format!("no answer within {}ms", timeout.as_millis());
                self.log(What::ConnectionError {
                    server: POSTGRES_HOST.to_string(),
                    error: error.clone(),
                });
                Input::ConnectionError(error)
            }
        };
        input
    }

    /// One statement: (re)connect if needed, prepare once, execute. The outer error is a
    /// broken connection; the inner one PostgreSQL's answer.
    async fn sql_attempt(
        &mut self,
        request: &SqlRequest,
        sql: &str,
    ) -> Result<Result<QueryResult, PgError>, String> {
        if self
            .postgres
            .as_ref()
            .is_none_or(|client| client.is_closed())
        {
            self.postgres = None;
            self.connect_postgres().await?;
        }
        self.network_delay().await;
        let client = self.postgres.as_ref().expect("connected above");
        let statement = match self.prepared.get(sql) {
            Some(statement) => statement.clone(),
            None => match client.prepare(sql).await {
                Ok(statement) => {
                    self.prepared.insert(sql.to_string(), statement.clone());
                    statement
                }
                Err(error) => return pg_failure(error).map(Err),
            },
        };
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = request
            .params
            .iter()
            .map(|param| param as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let result = match request.statement {
            Statement::Select { .. } => match client.query(&statement, &params).await {
                Ok(rows) => {
                    let columns: Vec<&'static str> = statement
                        .columns()
                        .iter()
                        .map(|column| intern(column.name()))
                        .collect();
                    let mut values = Vec::with_capacity(rows.len());
                    for row in &rows {
                        let mut cells = Vec::with_capacity(row.len());
                        for index in 0..row.len() {
                            match row.try_get::<_, i64>(index) {
                                Ok(value) => cells.push(value),
                                Err(error) => return Err(format!("unexpected column: {error}")),
                            }
                        }
                        values.push(cells);
                    }
                    Ok(QueryResult {
                        columns,
                        tag: format!("SELECT {}", values.len()),
                        rows_affected: values.len() as u64,
                        rows: values,
                    })
                }
                Err(error) => return pg_failure(error).map(Err),
            },
            other => match client.execute(&statement, &params).await {
                Ok(count) => Ok(QueryResult {
                    columns: vec![],
                    rows: vec![],
                    tag: command_tag(other, count),
                    rows_affected: count,
                }),
                Err(error) => return pg_failure(error).map(Err),
            },
        };
        self.network_delay().await;
        Ok(result)
    }
}

/// The command tag PostgreSQL sends for `statement` with `count` rows.
fn command_tag(statement: Statement, count: u64) -> String {
    match statement {
        Statement::Begin => "BEGIN".to_string(),
        Statement::Commit => "COMMIT".to_string(),
        Statement::Rollback => "ROLLBACK".to_string(),
        Statement::Select { .. } => format!("SELECT {count}"),
        _ => format!("UPDATE {count}"),
    }
}

/// A server error becomes PostgreSQL's answer; anything else is a broken connection.
fn pg_failure(error: tokio_postgres::Error) -> Result<PgError, String> {
    match error.as_db_error() {
        Some(db) => Ok(PgError {
            severity: intern(db.severity()),
            code: intern(db.code().code()),
            message: db.message().to_string(),
            detail: db.detail().map(str::to_string),
        }),
        None => Err(error.to_string()),
    }
}

/// A `&'static str` for a short server-supplied name (SQLSTATE, severity, column): each
/// distinct text is leaked once per process.
fn intern(text: &str) -> &'static str {
    thread_local! {
        static INTERNED: std::cell::RefCell<BTreeMap<String, &'static str>> =
            const { std::cell::RefCell::new(BTreeMap::new()) };
    }
    INTERNED.with(|interned| {
        let mut interned = interned.borrow_mut();
        if let Some(found) = interned.get(text) {
            return *found;
        }
        let leaked: &'static str = Box::leak(text.to_string().into_boxed_str());
        interned.insert(text.to_string(), leaked);
        leaked
    })
}

/// A `redis` value as the stand-in's RESP2 reply.
pub fn value_to_reply(value: Value) -> Reply {
    match value {
        Value::Nil => Reply::Nil,
        Value::Int(n) => Reply::Integer(n),
        Value::BulkString(bytes) => Reply::Bulk(bytes),
        Value::Array(items) | Value::Set(items) => {
            Reply::Array(items.into_iter().map(value_to_reply).collect())
        }
        Value::SimpleString(text) => Reply::Status(text),
        Value::Okay => Reply::ok(),
        Value::ServerError(error) => Reply::Error(match error.details() {
            Some(detail) => format!("{} {detail}", error.code()),
            None => error.code().to_string(),
        }),
        other => Reply::Error(format!("unexpected RESP3 value {other:?}")),
    }
}
