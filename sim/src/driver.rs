//! Drives one safeguard machine through the real `redis` and `tokio-postgres` clients: the
//! part of a caller that is the same on turmoil's simulated network ([`crate::caller`]) and
//! against real servers ([`crate::real`]).
//!
//! [`drive`] loops: ask the machine for its next step, carry it out under the
//! [`ClientPolicy`], hand back the answer. What differs between the two worlds — the clock,
//! how a connection is opened, the network's extra latency, where events and outcomes go — is
//! behind [`Surroundings`].

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use leaselab_model::postgres::{PgError, QueryResult, Statement};
use leaselab_model::redis::{Reply, ScriptId};
use leaselab_model::safeguard::{Input, Machine, RedisRequest, SqlRequest, Step};
use leaselab_model::world::{describe_reply, describe_request};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use redis::aio::MultiplexedConnection;
use redis::Value;
use tokio::time::Instant;

use crate::caller::{CallerEnd, CallerSpec, ClientPolicy};
use crate::clients::{POSTGRES_HOST, REDIS_HOST};
use crate::events::What;

/// Where a caller runs: its clock, how it reaches the servers, where its log and its end go.
///
/// Implemented by the simulation (turmoil's clock and network) and by real mode (tokio's
/// clock, real TCP). Both run every caller on one thread, so nothing here needs `Send`.
pub(crate) trait Surroundings {
    /// How the clients react to slow or broken connections.
    fn policy(&self) -> ClientPolicy;
    /// The caller's clock: whole milliseconds since the release (0 before it).
    fn caller_ms(&self) -> u64;
    /// Logs what `host` did now.
    fn log(&self, host: &str, what: What);
    /// Waits until the caller may start: the release plus `start_offset_ms`.
    async fn wait_for_start(&self, start_offset_ms: u64);
    /// Opens a Redis connection (without the dial deadline, which [`drive`] adds).
    async fn open_redis(&self) -> Result<MultiplexedConnection, String>;
    /// Opens a PostgreSQL session named `application_name` (without the dial deadline).
    async fn open_postgres(&self, application_name: &str)
        -> Result<tokio_postgres::Client, String>;
    /// Holds a message back for the network's latency, drawing from the caller's `rng`.
    async fn network_delay(&self, rng: &mut ChaCha8Rng);
    /// Records how caller `index` (1-based) ended.
    fn finish(&self, index: u32, end: CallerEnd);
    /// A Redis request got `reply` (the simulation sees this on the server instead).
    fn redis_replied(&self, _request: &RedisRequest, _reply: &Reply) {}
}

/// Sets up a caller (opens its connections), waits for its start, and drives its machine to
/// its end, which goes to [`Surroundings::finish`]. A GC pause is a sleep of this loop,
/// during which nothing of the caller runs.
pub(crate) async fn drive<E: Surroundings>(spec: CallerSpec, env: Rc<E>) {
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
        env: env.clone(),
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
    env.wait_for_start(start_offset_ms).await;
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
                env.finish(
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
    // send their goodbyes before the caller stops.
    host.redis = None;
    host.postgres = None;
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

/// Why a Redis attempt failed.
enum AttemptError {
    /// The connection broke or could not be made.
    Connection(String),
}

/// A caller's connections and state.
struct Host<E> {
    name: String,
    rng: ChaCha8Rng,
    env: Rc<E>,
    redis: Option<MultiplexedConnection>,
    postgres: Option<tokio_postgres::Client>,
    prepared: BTreeMap<String, tokio_postgres::Statement>,
    scripts: BTreeMap<ScriptId, redis::Script>,
}

impl<E: Surroundings> Host<E> {
    fn caller_ms(&self) -> u64 {
        self.env.caller_ms()
    }

    fn log(&self, what: What) {
        self.env.log(&self.name, what);
    }

    /// Holds a message back for the network's latency.
    async fn network_delay(&mut self) {
        self.env.network_delay(&mut self.rng).await;
    }

    async fn connect_redis(&mut self) -> Result<(), String> {
        let dial = Duration::from_millis(self.env.policy().dial_timeout_ms);
        match tokio::time::timeout(dial, self.env.open_redis()).await {
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
        let dial = Duration::from_millis(self.env.policy().dial_timeout_ms);
        let env = self.env.clone();
        let result = match tokio::time::timeout(dial, env.open_postgres(&self.name)).await {
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
        let policy = self.env.policy();
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
                    self.env.redis_replied(request, &reply);
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
        let policy = self.env.policy();
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
        let timeout = Duration::from_millis(self.env.policy().sql_timeout_ms);
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
            hint: db.hint().map(str::to_string),
            position: match db.position() {
                Some(tokio_postgres::error::ErrorPosition::Original(at)) => Some(*at),
                _ => None,
            },
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
