//! Drives one caller — a safeguard machine inside the sans-IO client core
//! ([`leaselab_model::client::Client`]) — through the real `redis` and `tokio-postgres`
//! clients: the part of a caller that is the same on turmoil's simulated network
//! (`crate::caller`) and against real servers (`crate::real`).
//!
//! The client core decides everything a client library decides (deadlines, reconnects,
//! go-redis-style retries, what the machine is told on a timeout); [`drive`] only carries out
//! its outputs — dial, send, wait, draw a random number, sleep — and hands the answers back.
//! What differs between the two worlds — the clock, how a connection is opened, the network's
//! extra latency, where events and outcomes go — is behind [`Surroundings`]. This module
//! depends on nothing else of the simulation but the event type it logs and the servers'
//! host names.

use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use leaselab_model::client::SetUp;
use leaselab_model::client::{self, Client, ClientPolicy, CloseReason, Output, Server};
use leaselab_model::fault::Fault;
use leaselab_model::postgres::{Answer, ErrorObject, PgError, QueryResult, Statement};
use leaselab_model::redis::{Command, Reply, ScriptId};
use leaselab_model::safeguard::{
    Caller, CallerStats, Input, Machine, Outcome, Point, RedisRequest, SqlRequest,
};
use leaselab_model::scenario::Scenario;
use leaselab_model::world::FaultsOn;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use redis::aio::MultiplexedConnection;
use redis::Value;
use tokio::time::error::Elapsed;
use tokio::time::Instant;

use crate::clients::{node_host, POSTGRES_HOST, REDIS_HOST};
use crate::events::What;

/// Where a caller runs: its clock, how it reaches the servers, where its log and its end go.
///
/// Implemented by the simulation (turmoil's clock and network) and by real mode (tokio's
/// clock, real TCP). Both run every caller on one thread, so nothing here needs `Send`.
pub(crate) trait Surroundings {
    /// How the clients react to slow or broken connections.
    fn policy(&self) -> ClientPolicy;
    /// How long `duration` of the caller's clock lasts on tokio's clock (the simulation
    /// scales it to its tick, [`crate::clock::Timeline::raw`]; real mode's clocks are one).
    fn raw(&self, duration: Duration) -> Duration {
        duration
    }
    /// When a client timer set now for `duration` of the caller's clock fires, on tokio's
    /// clock. Real mode: now + `duration` (tokio's own timer wheel then fires it at the next
    /// whole millisecond of its runtime); the simulation models that wheel
    /// ([`crate::clock::TimerWheel`]).
    fn timer_fires(&self, duration: Duration) -> Instant {
        Instant::now() + self.raw(duration)
    }
    /// The caller's clock: whole milliseconds since the release (0 before it).
    fn caller_ms(&self) -> u64;
    /// Logs what `host` did now.
    fn log(&self, host: &str, what: What);
    /// Waits until the caller may start: the release plus `start_offset_ms`.
    async fn wait_for_start(&self, start_offset_ms: u64);
    /// Opens a connection to a Redis `server` (the single Redis, or a Redlock node), without
    /// the dial deadline, which [`drive`] adds.
    async fn open_redis(&self, server: Server) -> Result<MultiplexedConnection, String>;
    /// Opens a PostgreSQL session named `application_name` (without the dial deadline).
    async fn open_postgres(&self, application_name: &str)
        -> Result<tokio_postgres::Client, String>;
    /// Holds a message back for the network's latency, drawing from the caller's `rng`.
    async fn network_delay(&self, rng: &mut ChaCha8Rng);
    /// The client CPU time a command costs before it is sent (the simulation's shared
    /// client CPU; real mode spends its own).
    async fn client_cpu(&self) {}
    /// Records how caller `index` (1-based) ended.
    fn finish(&self, index: u32, end: CallerEnd);
    /// A Redis request got `reply` (the simulation sees this on the server instead).
    fn redis_replied(&self, _request: &RedisRequest, _reply: &Reply) {}
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

/// Everything one caller needs.
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
    pub(crate) pauses: PausePlan,
    /// The replies it will not get.
    pub(crate) reply_faults: ReplyFaultPlan,
    /// Open a Redis connection during set-up.
    pub(crate) uses_redis: bool,
    /// Open a PostgreSQL connection during set-up.
    pub(crate) uses_postgres: bool,
}

/// The pauses one caller will take, each the first time it reaches its point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PausePlan {
    pending: Vec<(Point, u64)>,
}

impl PausePlan {
    /// Caller `caller`'s (1-based) pauses in `scenario`.
    pub fn for_caller(scenario: &Scenario, caller: u32) -> PausePlan {
        let pending = scenario
            .faults
            .iter()
            .filter_map(|fault| match fault {
                Fault::Pause {
                    caller: who,
                    at,
                    pause_ms,
                } if *who == caller => Some((*at, *pause_ms)),
                _ => None,
            })
            .collect();
        PausePlan { pending }
    }

    /// The pause to take at `point` now, if one is planned (used up by this call).
    pub fn take(&mut self, point: Point) -> Option<u64> {
        let index = self.pending.iter().position(|(at, _)| *at == point)?;
        Some(self.pending.remove(index).1)
    }
}

/// What a reply fault does to the caller whose request it strikes (the request has run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyFault {
    /// The reply never arrives: the caller waits until its read timeout.
    Lost,
    /// The connection breaks with the reply in flight: the client retries on a new one.
    Dropped,
}

/// The reply faults one caller will suffer, each on its first Redis request of the stage it
/// names ([`Fault::LostReply`], [`Fault::DroppedConnection`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplyFaultPlan {
    pending: Vec<(FaultsOn, ReplyFault)>,
}

impl ReplyFaultPlan {
    /// Caller `caller`'s (1-based) reply faults in `scenario`, in the scenario's order.
    pub fn for_caller(scenario: &Scenario, caller: u32) -> ReplyFaultPlan {
        let pending = scenario
            .faults
            .iter()
            .filter_map(|fault| match *fault {
                Fault::LostReply { caller: who, on } if who == caller => {
                    Some((on, ReplyFault::Lost))
                }
                Fault::DroppedConnection { caller: who, on } if who == caller => {
                    Some((on, ReplyFault::Dropped))
                }
                _ => None,
            })
            .collect();
        ReplyFaultPlan { pending }
    }

    /// The fault that strikes the reply to a request of `stage` (the machine's stage when
    /// the request was sent), if one is planned (used up by this call).
    pub fn take(&mut self, stage: Option<FaultsOn>) -> Option<ReplyFault> {
        let index = self
            .pending
            .iter()
            .position(|(on, _)| *on == FaultsOn::Any || Some(*on) == stage)?;
        Some(self.pending.remove(index).1)
    }
}

/// Runs `future` until `deadline` (if any).
async fn within<F: Future>(deadline: Option<Instant>, future: F) -> Result<F::Output, Elapsed> {
    match deadline {
        Some(deadline) => timeout_at(deadline, future).await,
        None => Ok(future.await),
    }
}

// Every timer of a caller goes through these three, which declare its deadline to the
// simulation (`turmoil::wake_at`) before setting it: turmoil skips a host with nothing to do
// until its next declared deadline. Outside a simulation (real mode) declaring does nothing.
// Each is `tokio::time`'s function of the same name, with the same deadline.

/// `tokio::time::sleep`, its deadline declared.
pub(crate) async fn sleep(duration: Duration) {
    sleep_until(Instant::now() + duration).await;
}

/// `tokio::time::sleep_until`, its deadline declared.
pub(crate) async fn sleep_until(deadline: Instant) {
    turmoil::wake_at(deadline);
    tokio::time::sleep_until(deadline).await;
}

/// `tokio::time::timeout_at`, its deadline declared.
pub(crate) async fn timeout_at<F: Future>(
    deadline: Instant,
    future: F,
) -> Result<F::Output, Elapsed> {
    turmoil::wake_at(deadline);
    tokio::time::timeout_at(deadline, future).await
}

/// `tokio::time::timeout`, its deadline declared.
async fn timeout<F: Future>(duration: Duration, future: F) -> Result<F::Output, Elapsed> {
    timeout_at(Instant::now() + duration, future).await
}

fn host_name(server: Server) -> &'static str {
    match server {
        Server::Redis => REDIS_HOST,
        Server::Postgres => POSTGRES_HOST,
        Server::Node(node) => node_host(node),
    }
}

/// Sets up a caller (opens its connections), waits for its start, and drives its machine to
/// its end, which goes to [`Surroundings::finish`]. A GC pause is a sleep of this loop,
/// during which nothing of the caller runs.
pub(crate) async fn drive<E: Surroundings>(spec: CallerSpec, env: Rc<E>) {
    let CallerSpec {
        index,
        name,
        machine,
        rng,
        start_offset_ms,
        mut pauses,
        mut reply_faults,
        uses_redis,
        uses_postgres,
    } = spec;
    let mut client = Client::new(
        machine,
        env.policy(),
        SetUp {
            redis: uses_redis,
            postgres: uses_postgres,
        },
    );
    let mut host = CallerIo {
        name,
        rng,
        env: env.clone(),
        redis: BTreeMap::new(),
        postgres: None,
        prepared: BTreeMap::new(),
        scripts: BTreeMap::new(),
        deadline: None,
    };
    // Set-up: a failure here is retried on the first request.
    while let Some(output) = client.poll(host.caller_ms()) {
        let Output::Connect {
            server,
            conn,
            dial_timeout_ms,
        } = output
        else {
            unreachable!("set-up only connects, got {output:?}");
        };
        match host.connect(server, dial_timeout_ms).await {
            Ok(()) => client.handle_connected(conn),
            Err(error) => client.handle_connect_failed(conn, error),
        }
    }
    env.wait_for_start(start_offset_ms).await;
    host.log(What::Started);
    client.start();
    loop {
        let Some(output) = client.poll(host.caller_ms()) else {
            unreachable!("the driver answers every output before polling again");
        };
        match output {
            Output::BeginRedis {
                server,
                request,
                timeout_ms,
            } => {
                host.deadline = Some(env.timer_fires(Duration::from_millis(timeout_ms)));
                host.log(What::RedisRequest {
                    request: RedisRequest::clone(&request),
                    timeout_ms,
                    node: match server {
                        Server::Node(node) => Some(node),
                        Server::Redis | Server::Postgres => None,
                    },
                });
            }
            Output::BeginSql { request } => {
                host.deadline = client
                    .policy()
                    .sql_timeout_ms
                    .map(|timeout| env.timer_fires(Duration::from_millis(timeout)));
                let request = Arc::unwrap_or_clone(request);
                host.log(What::SqlRequest {
                    statement: request.statement,
                    params: request.params,
                });
            }
            Output::Connect {
                server,
                conn,
                dial_timeout_ms,
            } => match within(host.deadline, host.connect(server, dial_timeout_ms)).await {
                Ok(Ok(())) => client.handle_connected(conn),
                Ok(Err(error)) => client.handle_connect_failed(conn, error),
                Err(_) => host.timed_out(&mut client),
            },
            Output::SendRedis {
                server, request, ..
            } => match within(host.deadline, host.redis_attempt(server, &request)).await {
                Ok(Ok(reply)) => {
                    host.env.redis_replied(&request, &reply);
                    // The request ran; a planned fault may take its reply away.
                    match reply_faults.take(client.machine().stage()) {
                        Some(ReplyFault::Lost) => {
                            host.log(What::ReplyLost);
                            // Every Redis request has its deadline (`BeginRedis`): the caller
                            // waits it out. Without one it would wait forever, so it is told
                            // the connection broke instead.
                            if let Some(deadline) = host.deadline {
                                let _ = timeout_at(deadline, std::future::pending::<()>()).await;
                                host.timed_out(&mut client);
                            } else {
                                host.redis.remove(&server);
                                client.handle_connection_broke("no answer".into());
                            }
                        }
                        Some(ReplyFault::Dropped) => {
                            host.log(What::ConnectionDropped);
                            host.redis.remove(&server);
                            client.handle_connection_broke("connection reset by peer".into());
                        }
                        None => {
                            let reading = client.machine().reading(&Input::Redis(reply.clone()));
                            host.log(What::RedisReply {
                                reply: reply.clone(),
                                reading,
                            });
                            client.handle_redis_reply(reply);
                        }
                    }
                }
                Ok(Err(error)) => client.handle_connection_broke(error),
                Err(_) => host.timed_out(&mut client),
            },
            Output::SendSql { request, .. } => {
                if host
                    .postgres
                    .as_ref()
                    .is_none_or(|session| session.is_closed())
                {
                    host.postgres = None;
                    client.handle_found_closed();
                    continue;
                }
                match within(host.deadline, host.sql_attempt(&request)).await {
                    Ok(Ok(result)) => {
                        let answer = Answer::of(&result);
                        let reading = client.machine().reading(&Input::Sql(result.clone()));
                        host.log(What::SqlReply { answer, reading });
                        client.handle_sql_result(result);
                    }
                    Ok(Err(error)) => client.handle_connection_broke(error),
                    Err(_) => host.timed_out(&mut client),
                }
            }
            Output::Close { server, reason, .. } => {
                match server {
                    Server::Redis | Server::Node(_) => {
                        host.redis.remove(&server);
                    }
                    Server::Postgres => host.postgres = None,
                }
                host.log(match reason {
                    CloseReason::RedisTimeout { after_ms } => What::RedisTimeout { after_ms },
                    other => What::ConnectionError {
                        server: host_name(server).to_string(),
                        error: other.error(),
                    },
                });
            }
            Output::DrawBackoff { below_ms, .. } => {
                let backoff_ms = if below_ms == 0 {
                    0
                } else {
                    host.rng.random_range(0..below_ms)
                };
                client.handle_backoff_drawn(host.caller_ms(), backoff_ms);
            }
            Output::Retry {
                server,
                attempt,
                backoff_ms,
            } => {
                host.log(What::Retry {
                    server: host_name(server).to_string(),
                    attempt,
                    backoff_ms,
                });
                if backoff_ms > 0 {
                    sleep_until(env.timer_fires(Duration::from_millis(backoff_ms))).await;
                }
                client.handle_woke();
            }
            Output::Sleep {
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
                let ms = client::wake_ms(now_ms, drawn, deadline_ms) - now_ms;
                if ms > 0 {
                    host.log(What::Sleep { ms });
                    sleep_until(env.timer_fires(Duration::from_millis(ms))).await;
                }
                client.handle_woke();
            }
            Output::Reached(point) => {
                if let Some(ms) = pauses.take(point) {
                    host.log(What::PauseStart { point, ms });
                    sleep_until(env.timer_fires(Duration::from_millis(ms))).await;
                    host.log(What::PauseEnd { point });
                } else {
                    host.log(What::Reached { point });
                }
                client.handle_resumed();
            }
            Output::Done(outcome) => {
                let done_at_ms = host.caller_ms();
                host.log(What::Done {
                    outcome: outcome.clone(),
                });
                env.finish(
                    index,
                    CallerEnd {
                        outcome,
                        stats: client.stats(),
                        done_at_ms,
                    },
                );
                break;
            }
        }
    }
    // Close the connections so the servers end their sessions, and let the client drivers
    // send their goodbyes before the caller stops.
    host.redis.clear();
    host.postgres = None;
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

/// A caller's connections and state on its simulated (or real) host: what the client core
/// drives (named apart from [`leaselab_model::fault::Host`], a network endpoint).
struct CallerIo<E> {
    name: String,
    rng: ChaCha8Rng,
    env: Rc<E>,
    /// The open Redis connections: to the single Redis, or to each Redlock node.
    redis: BTreeMap<Server, MultiplexedConnection>,
    postgres: Option<tokio_postgres::Client>,
    prepared: BTreeMap<String, tokio_postgres::Statement>,
    scripts: BTreeMap<ScriptId, redis::Script>,
    /// The outstanding request's deadline (the client core's `poll_timeout` as an instant).
    deadline: Option<Instant>,
}

impl<E: Surroundings> CallerIo<E> {
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

    /// The outstanding request's deadline passed: the client core gives up on it. The timer
    /// was set for the core's own deadline, so that is at least the time now.
    fn timed_out(&mut self, client: &mut Client<Caller>) {
        let now_ms = self
            .caller_ms()
            .max(client.poll_timeout().unwrap_or_default());
        client.handle_timeout(now_ms);
    }

    /// Opens a connection to `server` within `dial_timeout_ms`.
    async fn connect(&mut self, server: Server, dial_timeout_ms: u64) -> Result<(), String> {
        let dial = self.env.raw(Duration::from_millis(dial_timeout_ms));
        let env = self.env.clone();
        let result = match server {
            Server::Redis | Server::Node(_) => match timeout(dial, env.open_redis(server)).await {
                Ok(Ok(connection)) => {
                    self.redis.insert(server, connection);
                    Ok(())
                }
                Ok(Err(error)) => Err(error),
                Err(_) => Err(format!("no connection within {dial_timeout_ms}ms")),
            },
            Server::Postgres => match timeout(dial, env.open_postgres(&self.name)).await {
                Ok(Ok(client)) => {
                    self.postgres = Some(client);
                    self.prepared.clear();
                    Ok(())
                }
                Ok(Err(error)) => Err(error),
                Err(_) => Err(format!("no connection within {dial_timeout_ms}ms")),
            },
        };
        let server = host_name(server).to_string();
        match &result {
            Ok(()) => self.log(What::Connected { server }),
            Err(error) => self.log(What::ConnectFailed {
                server,
                error: error.clone(),
            }),
        }
        result
    }

    /// One send on the open connection: the request, the reply (a pipeline's: the array of
    /// its commands' replies, errors among them). An error is a broken
    /// connection; a Redis error reply is a reply.
    async fn redis_attempt(
        &mut self,
        server: Server,
        request: &RedisRequest,
    ) -> Result<Reply, String> {
        self.env.client_cpu().await;
        self.network_delay().await;
        let connection = self
            .redis
            .get_mut(&server)
            .expect("the client core sends on an open connection");
        let result = match request {
            RedisRequest::Command(command) => connection.send_packed_command(&cmd(command)).await,
            RedisRequest::Pipeline(commands) => {
                let mut pipeline = redis::Pipeline::with_capacity(commands.len());
                for command in commands {
                    pipeline.add_command(cmd(command));
                }
                connection
                    .send_packed_commands(&pipeline, 0, commands.len())
                    .await
                    .map(Value::Array)
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
                None => return Err(error.to_string()),
            },
        };
        self.network_delay().await;
        Ok(reply)
    }

    /// One statement on the open session: prepare once, execute. The outer error is a broken
    /// connection; the inner one PostgreSQL's answer.
    async fn sql_attempt(
        &mut self,
        request: &SqlRequest,
    ) -> Result<Result<QueryResult, PgError>, String> {
        let sql = request.statement.sql();
        let sql = sql.as_str();
        self.env.client_cpu().await;
        self.network_delay().await;
        let client = self
            .postgres
            .as_ref()
            .expect("the client core sends on an open session");
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
        let returns_rows = match request.statement {
            Statement::Select { .. } => true,
            Statement::Text(_) => !statement.columns().is_empty(),
            _ => false,
        };
        let result = match request.statement {
            _ if returns_rows => match client.query(&statement, &params).await {
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
        Statement::Text(_) => {
            let sql = statement.sql();
            let verb = sql
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            match verb.as_str() {
                "INSERT" => format!("INSERT 0 {count}"),
                "SELECT" | "UPDATE" | "DELETE" | "MERGE" => format!("{verb} {count}"),
                _ => verb,
            }
        }
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
            object: db.table().map(|table| {
                Box::new(ErrorObject {
                    schema: db.schema().unwrap_or_default().to_string(),
                    table: table.to_string(),
                    column: db.column().map(str::to_string),
                    constraint: db.constraint().map(str::to_string),
                })
            }),
            rows_before: None,
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

/// A command as redis-rs sends it.
fn cmd(command: &Command) -> redis::Cmd {
    let mut cmd = redis::Cmd::new();
    for arg in command.to_argv() {
        cmd.arg(arg);
    }
    cmd
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
