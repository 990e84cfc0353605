//! Differential tests: the PostgreSQL stand-in against a real PostgreSQL 15.
//!
//! The same sequence of statements (the safeguards' own texts, [`Statement::sql`], with random
//! `bigint` parameters) runs on two sessions of a real server and on two sessions of the
//! stand-in served over the wire protocol on a loopback port; both are driven by
//! `tokio-postgres`. Rows, rows affected, warnings, SQLSTATEs, messages and details must match,
//! and so must *when* each statement finishes: a statement that waits for another session's
//! row lock must wait on both, and finish after the same later step.
//!
//! Needs `LEASELAB_DATABASE_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`); without it
//! every test here prints one line saying it was skipped and passes. Each test works in its
//! own schema (`SET search_path`), dropped at the end, also when the test fails.
//!
//! Deadlocks are kept out of the generated cases (two sessions never lock two rows each). The
//! fixed deadlock cases run the stand-in checking at once (the model checker's setting) and
//! the real sessions with `deadlock_timeout` at 1 ms: the first waiter's check then finds no
//! cycle yet, and the session that closes the cycle fails on both. One more case runs both
//! servers with the same 300 ms `deadlock_timeout`, the stand-in checking on its timer as
//! PostgreSQL does, and compares which session PostgreSQL chooses as the victim. The DETAIL's
//! process and transaction numbers are compared by their pattern (which number repeats
//! where), not their values.

mod common;

use common::{cases, report, runtime};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;
use std::time::{Duration, Instant};

use leaselab_model::postgres::{
    Isolation, Postgres, RowLock, SessionId, Statement, Wallet, WriteGuard,
};
use leaselab_sim::observer::NoopObserver;
use leaselab_sim::pg_server::PgServer;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, LocalSet};
use tokio_postgres::tls::NoTls;
use tokio_postgres::{AsyncMessage, Client, SimpleQueryMessage};

/// The environment variable naming the real server.
const URL_VAR: &str = "LEASELAB_DATABASE_URL";

/// How long a statement may take to either finish or be seen waiting for a lock.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Generated cases with one session.
const SOLO_CASES: u32 = 200;
/// Generated cases with two concurrent sessions.
const DUO_CASES: u32 = 600;

// ---------------------------------------------------------------------------------------------
// The environment.

/// The real server's URL, or `None` after printing one line saying why the test is skipped.
fn database_url(test: &str) -> Option<String> {
    common::server_url(
        URL_VAR,
        test,
        "postgres://postgres@127.0.0.1:5432/test",
        "PostgreSQL",
    )
}

/// A warning or error as the server sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ServerMessage {
    severity: String,
    code: String,
    message: String,
    detail: Option<String>,
    hint: Option<String>,
}

impl ServerMessage {
    fn from_db(error: &tokio_postgres::error::DbError) -> ServerMessage {
        let code = error.code().code().to_string();
        let detail = error.detail().map(|detail| {
            if code == "40P01" {
                numbered_by_appearance(detail)
            } else {
                detail.to_string()
            }
        });
        ServerMessage {
            severity: error.severity().to_string(),
            code,
            message: error.message().to_string(),
            detail,
            hint: error.hint().map(str::to_string),
        }
    }
}

/// A deadlock DETAIL with each process id replaced by `P<n>`, each transaction id by `T<n>`,
/// each relation's and database's by `R<n>` and `D<n>`, numbered in order of first
/// appearance: the two servers' numbers differ, the pattern (who waits for whom, for what)
/// must not.
fn numbered_by_appearance(detail: &str) -> String {
    let mut processes: Vec<String> = Vec::new();
    let mut transactions: Vec<String> = Vec::new();
    let mut relations: Vec<String> = Vec::new();
    let mut databases: Vec<String> = Vec::new();
    let mut previous = String::new();
    let mut words = Vec::new();
    for word in detail.split(' ') {
        let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
        let rest = &word[digits.len()..];
        let numbered = if digits.is_empty() {
            word.to_string()
        } else {
            let (kind, seen) = match previous.to_ascii_lowercase().as_str() {
                "transaction" => ("T", &mut transactions),
                "relation" => ("R", &mut relations),
                "database" => ("D", &mut databases),
                _ => ("P", &mut processes),
            };
            let at = match seen.iter().position(|d| *d == digits) {
                Some(at) => at,
                None => {
                    seen.push(digits.clone());
                    seen.len() - 1
                }
            };
            format!("{kind}{}{rest}", at + 1)
        };
        previous = word.rsplit('\n').next().unwrap_or(word).to_string();
        words.push(numbered);
    }
    words.join(" ")
}

#[test]
fn deadlock_details_compare_by_pattern() {
    let detail = "Process 812 waits for ShareLock on transaction 771; blocked by process 813.\n\
                  Process 813 waits for ShareLock on transaction 770; blocked by process 812.";
    assert_eq!(
        numbered_by_appearance(detail),
        "Process P1 waits for ShareLock on transaction T1; blocked by process P2.\n\
         Process P2 waits for ShareLock on transaction T2; blocked by process P1."
    );
}

impl fmt::Display for ServerMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {:?}", self.severity, self.code, self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, " DETAIL {detail:?}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, " HINT {hint:?}")?;
        }
        Ok(())
    }
}

/// A session: the client, the warnings its connection received, and how to find out whether
/// it waits for a lock.
struct Session {
    client: Rc<Client>,
    notices: mpsc::UnboundedReceiver<ServerMessage>,
    /// The backend pid on the real server.
    pid: i32,
    /// The session on the stand-in.
    stand_in_session: Option<SessionId>,
}

impl Session {
    fn take_notices(&mut self) -> Vec<ServerMessage> {
        let mut notices = Vec::new();
        while let Ok(notice) = self.notices.try_recv() {
            notices.push(notice);
        }
        notices
    }
}

/// Starts a client over `stream`, with a driver task that forwards warnings.
async fn start_client<S>(
    stream: S,
    config: &tokio_postgres::Config,
) -> (Client, mpsc::UnboundedReceiver<ServerMessage>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + 'static,
{
    let (client, mut connection) = config
        .connect_raw(stream, NoTls)
        .await
        .expect("PostgreSQL startup");
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::task::spawn_local(async move {
        while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            match message {
                Ok(AsyncMessage::Notice(notice)) => {
                    let _ = sender.send(ServerMessage::from_db(&notice));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    (client, receiver)
}

/// A client and the notices its server sends.
type Connected = (Client, mpsc::UnboundedReceiver<ServerMessage>);

/// Serves `server` on a loopback port and connects `sessions` clients to it, one after
/// another (the stand-in numbers its sessions in that order); the accept loop's task is
/// returned to be aborted at the end.
async fn serve_stand_in(server: PgServer, sessions: usize) -> (Vec<Connected>, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let accept_loop = tokio::task::spawn_local(async move {
        let _ = server.serve_tokio(listener).await;
    });
    let mut config = tokio_postgres::Config::new();
    config.user("postgres").dbname("test");
    let mut clients = Vec::new();
    for _ in 0..sessions {
        let stream = tokio::net::TcpStream::connect(address)
            .await
            .expect("connect to the stand-in");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        clients.push(start_client(stream, &config).await);
    }
    (clients, accept_loop)
}

/// The real server's configuration from the URL.
fn real_config(url: &str) -> tokio_postgres::Config {
    let config: tokio_postgres::Config = url
        .parse()
        .unwrap_or_else(|error| panic!("{URL_VAR}={url:?} is not a PostgreSQL URL: {error}"));
    assert!(
        config.get_user().is_some(),
        "{URL_VAR}={url:?} names no user; write postgres://USER@HOST:PORT/DB"
    );
    config
}

async fn connect_real(url: &str) -> (Client, mpsc::UnboundedReceiver<ServerMessage>) {
    let config = real_config(url);
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        _ => panic!("{URL_VAR}={url:?}: name one TCP host"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let stream = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .unwrap_or_else(|error| panic!("cannot connect to {URL_VAR}={url:?}: {error}"));
    stream.set_nodelay(true).expect("TCP_NODELAY");
    start_client(stream, &config).await
}

/// The test's own schema on the real server, dropped when this value is dropped (also while
/// a failing test unwinds).
struct Schema {
    url: String,
    name: String,
}

impl Schema {
    async fn create(url: &str, test: &str) -> (Schema, Client) {
        let name = format!("leaselab_fidelity_{}_{test}", std::process::id());
        let (admin, _notices) = connect_real(url).await;
        admin
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE;
                 CREATE SCHEMA {name};
                 CREATE TABLE {name}.wallets (
                     id bigint PRIMARY KEY,
                     balance bigint NOT NULL CHECK (balance >= 0),
                     fence bigint NOT NULL DEFAULT 0
                 );"
            ))
            .await
            .expect("create the test schema");
        (
            Schema {
                url: url.to_string(),
                name,
            },
            admin,
        )
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        // The test's runtime may be gone or busy (we may be unwinding from a failure inside
        // it): drop the schema from a thread with a runtime of its own.
        let url = self.url.clone();
        let name = self.name.clone();
        let dropped = std::thread::spawn(move || {
            let local = LocalSet::new();
            local.block_on(&runtime(), async {
                let (admin, _notices) = connect_real(&url).await;
                admin
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                    .await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            report(&format!(
                "warning: could not drop schema {} on {URL_VAR}: drop it by hand",
                self.name
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The two sides.

/// The real server: an admin connection (resets the table, watches locks) and two sessions.
struct RealSide {
    schema: Schema,
    admin: Client,
    sessions: [Session; 2],
}

impl RealSide {
    async fn connect(url: &str, test: &str) -> RealSide {
        let (schema, admin) = Schema::create(url, test).await;
        let a = RealSide::session(url, &schema.name).await;
        let b = RealSide::session(url, &schema.name).await;
        RealSide {
            schema,
            admin,
            sessions: [a, b],
        }
    }

    async fn session(url: &str, schema: &str) -> Session {
        let (client, notices) = connect_real(url).await;
        // deadlock_timeout 1ms: see the module documentation.
        client
            .batch_execute(&format!(
                "SET search_path TO {schema}; SET deadlock_timeout = '1ms'"
            ))
            .await
            .expect("SET search_path, deadlock_timeout");
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .expect("pg_backend_pid()")
            .get(0);
        Session {
            client: Rc::new(client),
            notices,
            pid,
            stand_in_session: None,
        }
    }

    /// Makes `wallets` hold exactly `wallets`; both sessions must be idle.
    async fn reset(&mut self, wallets: &[(i64, Wallet)]) {
        let schema = &self.schema.name;
        let mut sql = format!("DELETE FROM {schema}.wallets;");
        for (id, wallet) in wallets {
            sql.push_str(&format!(
                "INSERT INTO {schema}.wallets (id, balance, fence) VALUES ({id}, {}, {});",
                wallet.balance, wallet.fence
            ));
        }
        self.admin.batch_execute(&sql).await.expect("reset wallets");
        for session in &mut self.sessions {
            session.take_notices();
        }
    }

    async fn is_waiting(&self, who: Who) -> bool {
        self.admin
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)",
                &[&self.sessions[who.index()].pid],
            )
            .await
            .expect("pg_locks")
            .get(0)
    }
}

/// The stand-in, served on a loopback port for the duration of one case.
struct StandInSide {
    postgres: Rc<RefCell<Postgres>>,
    accept_loop: JoinHandle<()>,
    sessions: [Session; 2],
}

impl StandInSide {
    async fn start(wallets: &[(i64, Wallet)]) -> StandInSide {
        let mut postgres = Postgres::new();
        for &(id, wallet) in wallets {
            postgres.seed_wallet(id, wallet);
        }
        let postgres = Rc::new(RefCell::new(postgres));
        let server = PgServer::new(postgres.clone(), Rc::new(NoopObserver));
        let (clients, accept_loop) = serve_stand_in(server, 2).await;
        let ids = postgres.borrow().sessions();
        let sessions: Vec<Session> = clients
            .into_iter()
            .zip(ids)
            .map(|((client, notices), session)| Session {
                client: Rc::new(client),
                notices,
                pid: 0,
                stand_in_session: Some(session),
            })
            .collect();
        let [a, b]: [Session; 2] = sessions.try_into().ok().expect("two sessions");
        StandInSide {
            postgres,
            accept_loop,
            sessions: [a, b],
        }
    }

    fn is_waiting(&self, who: Who) -> bool {
        let session = self.sessions[who.index()]
            .stand_in_session
            .expect("a stand-in session");
        self.postgres.borrow().waiting_on(session).is_some()
    }
}

impl Drop for StandInSide {
    fn drop(&mut self) {
        self.accept_loop.abort();
    }
}

/// One side of the comparison.
enum Side<'a> {
    Real(&'a mut RealSide),
    StandIn(StandInSide),
}

impl Side<'_> {
    fn name(&self) -> &'static str {
        match self {
            Side::Real(_) => "PostgreSQL",
            Side::StandIn(_) => "stand-in",
        }
    }

    fn session(&mut self, who: Who) -> &mut Session {
        match self {
            Side::Real(real) => &mut real.sessions[who.index()],
            Side::StandIn(stand_in) => &mut stand_in.sessions[who.index()],
        }
    }

    async fn is_waiting(&self, who: Who) -> bool {
        match self {
            Side::Real(real) => real.is_waiting(who).await,
            Side::StandIn(stand_in) => stand_in.is_waiting(who),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cases.

/// Which session a step runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    A,
    B,
}

impl Who {
    fn index(self) -> usize {
        match self {
            Who::A => 0,
            Who::B => 1,
        }
    }

    fn other(self) -> Who {
        match self {
            Who::A => Who::B,
            Who::B => Who::A,
        }
    }
}

/// How a statement is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    /// Parse/Bind/Execute with `$n` parameters (`query` or `execute`).
    Extended,
    /// A simple Query message (only for statements without parameters).
    Simple,
}

/// One statement with its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sql {
    statement: Statement,
    params: Vec<i64>,
    wire: Wire,
}

impl fmt::Display for Sql {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.statement.sql())?;
        if !self.params.is_empty() {
            write!(f, " {:?}", self.params)?;
        }
        if self.wire == Wire::Simple {
            write!(f, " (simple query)")?;
        }
        Ok(())
    }
}

/// One step: a statement in a session.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    who: Who,
    sql: Sql,
}

/// A generated case: the rows to start with and the steps.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Case {
    wallets: Vec<(i64, Wallet)>,
    steps: Vec<Step>,
}

/// What a statement returned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// Rows (SELECT via `query`).
    Rows(Vec<Vec<i64>>),
    /// Rows affected (`execute`).
    Affected(u64),
    /// Rows and the count of the command tag (a simple query).
    Simple { rows: Vec<Vec<i64>>, count: u64 },
    /// An error from the server.
    Error(ServerMessage),
    /// The client failed for another reason (a closed connection, an unexpected message).
    Client(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Rows(rows) => write!(f, "rows {rows:?}"),
            Outcome::Affected(count) => write!(f, "{count} rows affected"),
            Outcome::Simple { rows, count } => write!(f, "rows {rows:?}, tag count {count}"),
            Outcome::Error(error) => write!(f, "ERROR {error}"),
            Outcome::Client(error) => write!(f, "client error: {error}"),
        }
    }
}

/// One line of a transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    /// A step's statement finished at once (with the warnings received with it).
    Done {
        step: String,
        outcome: Outcome,
        notices: Vec<ServerMessage>,
    },
    /// A step's statement waits for a row lock.
    Waits { step: String },
    /// A statement that was waiting finished.
    Finished {
        who: Who,
        outcome: Outcome,
        notices: Vec<ServerMessage>,
    },
    /// A step was held back because its session still waits; it is sent (and shows up again)
    /// once the session is free.
    Postponed { step: String },
    /// The rows at the end, as session A sees them after both sessions rolled back.
    Final(Vec<Vec<i64>>),
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let notices = |f: &mut fmt::Formatter<'_>, notices: &[ServerMessage]| {
            for notice in notices {
                write!(f, " + {notice}")?;
            }
            Ok(())
        };
        match self {
            Event::Done {
                step,
                outcome,
                notices: n,
            } => {
                write!(f, "{step} -> {outcome}")?;
                notices(f, n)
            }
            Event::Waits { step } => write!(f, "{step} -> waits for a row lock"),
            Event::Finished {
                who,
                outcome,
                notices: n,
            } => {
                write!(
                    f,
                    "   ... {who:?}'s waiting statement finished -> {outcome}"
                )?;
                notices(f, n)
            }
            Event::Postponed { step } => write!(f, "{step} -> held back (its session waits)"),
            Event::Final(rows) => write!(f, "final rows {rows:?}"),
        }
    }
}

/// Runs one statement in its own task, so that a statement waiting for a lock does not hold
/// up the other session.
fn spawn_sql(client: Rc<Client>, sql: Sql) -> JoinHandle<Outcome> {
    tokio::task::spawn_local(async move {
        let text = sql.statement.sql();
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = sql
            .params
            .iter()
            .map(|param| param as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let error = |error: tokio_postgres::Error| match error.as_db_error() {
            Some(db) => Outcome::Error(ServerMessage::from_db(db)),
            None => Outcome::Client(error.to_string()),
        };
        match (sql.wire, &sql.statement) {
            (Wire::Simple, _) => match client.simple_query(&text).await {
                Ok(messages) => {
                    let mut rows = Vec::new();
                    let mut count = 0;
                    for message in messages {
                        match message {
                            SimpleQueryMessage::Row(row) => rows.push(
                                (0..row.len())
                                    .map(|at| {
                                        row.get(at)
                                            .and_then(|text| text.parse().ok())
                                            .unwrap_or(i64::MIN)
                                    })
                                    .collect(),
                            ),
                            SimpleQueryMessage::CommandComplete(n) => count = n,
                            _ => {}
                        }
                    }
                    Outcome::Simple { rows, count }
                }
                Err(e) => error(e),
            },
            (Wire::Extended, Statement::Select { .. }) => {
                match client.query(&text, &params).await {
                    Ok(rows) => Outcome::Rows(
                        rows.iter()
                            .map(|row| (0..row.len()).map(|at| row.get::<_, i64>(at)).collect())
                            .collect(),
                    ),
                    Err(e) => error(e),
                }
            }
            (Wire::Extended, _) => match client.execute(&text, &params).await {
                Ok(count) => Outcome::Affected(count),
                Err(e) => error(e),
            },
        }
    })
}

/// Waits until a statement finished (its outcome) or is seen waiting for a lock (`None`).
/// For up to `patience` it only waits for the outcome (most statements finish within a
/// millisecond), then it also asks the server whether the session waits for a lock.
async fn settle(
    side: &Side<'_>,
    who: Who,
    handle: &mut JoinHandle<Outcome>,
    patience: Duration,
) -> Option<Outcome> {
    if let Ok(outcome) = tokio::time::timeout(patience, &mut *handle).await {
        return Some(outcome.expect("the statement task"));
    }
    let started = Instant::now();
    loop {
        if handle.is_finished() {
            return Some(handle.await.expect("the statement task"));
        }
        if side.is_waiting(who).await {
            return None;
        }
        assert!(
            started.elapsed() < SETTLE_TIMEOUT,
            "{}: a statement of session {who:?} neither finished nor waited for a lock within \
             {SETTLE_TIMEOUT:?}",
            side.name()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// After an error, waits until the server has finished handling it. PostgreSQL sends the
/// ErrorResponse *before* it aborts the transaction (and releases its row locks), and
/// `tokio-postgres` returns the error as soon as it arrives; an empty query on the same
/// connection is answered only after that.
async fn after_error(session: &Session, outcome: &Outcome) {
    if matches!(outcome, Outcome::Error(_)) {
        let answer = session.client.simple_query("").await;
        assert!(answer.is_ok(), "an empty query after an error: {answer:?}");
    }
}

/// Runs a case on one side and returns its transcript. Both sessions are idle at the end.
async fn run_case(side: &mut Side<'_>, case: &Case) -> Vec<Event> {
    let mut transcript = Vec::new();
    let mut waiting: [Option<JoinHandle<Outcome>>; 2] = [None, None];
    // Steps of a session that was waiting when their turn came: sent as soon as it is free,
    // as a client sends its next statement when the previous one returns.
    let mut postponed: [VecDeque<Step>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut steps: VecDeque<Step> = case.steps.iter().cloned().collect();
    let control = |who: Who, statement: Statement| Step {
        who,
        sql: Sql {
            statement,
            params: vec![],
            wire: Wire::Extended,
        },
    };
    let mut finishing = false;
    loop {
        let free_with_backlog = [Who::A, Who::B]
            .into_iter()
            .find(|who| waiting[who.index()].is_none() && !postponed[who.index()].is_empty());
        let next = match free_with_backlog {
            Some(who) => postponed[who.index()].pop_front(),
            None => steps.pop_front(),
        };
        let Some(step) = next else {
            if finishing {
                break;
            }
            // Finish: a session that still waits goes on when the other one commits; then
            // both roll back, so that the next case starts clean.
            finishing = true;
            for who in [Who::A, Who::B] {
                if waiting[who.index()].is_some() {
                    steps.push_back(control(who.other(), Statement::Commit));
                }
            }
            steps.push_back(control(Who::A, Statement::Rollback));
            steps.push_back(control(Who::B, Statement::Rollback));
            continue;
        };
        let label = format!("{:?}: {}", step.who, step.sql);
        if waiting[step.who.index()].is_some() {
            transcript.push(Event::Postponed { step: label });
            postponed[step.who.index()].push_back(step);
            continue;
        }
        let session = side.session(step.who);
        let mut handle = spawn_sql(session.client.clone(), step.sql.clone());
        match settle(side, step.who, &mut handle, Duration::from_millis(20)).await {
            Some(outcome) => {
                after_error(side.session(step.who), &outcome).await;
                let notices = side.session(step.who).take_notices();
                transcript.push(Event::Done {
                    step: label,
                    outcome,
                    notices,
                });
            }
            None => {
                transcript.push(Event::Waits { step: label });
                waiting[step.who.index()] = Some(handle);
            }
        }
        // Did the step let a waiting statement go on?
        for who in [Who::A, Who::B] {
            let Some(mut handle) = waiting[who.index()].take() else {
                continue;
            };
            match settle(side, who, &mut handle, Duration::ZERO).await {
                Some(outcome) => {
                    after_error(side.session(who), &outcome).await;
                    let notices = side.session(who).take_notices();
                    transcript.push(Event::Finished {
                        who,
                        outcome,
                        notices,
                    });
                }
                None => waiting[who.index()] = Some(handle),
            }
        }
    }
    for (who, handle) in [Who::A, Who::B].into_iter().zip(&mut waiting) {
        if let Some(handle) = handle.take() {
            handle.abort();
            panic!(
                "{}: session {who:?} still waits after both sessions ended their transactions",
                side.name()
            );
        }
    }
    let mut rows = Vec::new();
    for (id, _) in &case.wallets {
        let select = Sql {
            statement: Statement::Select {
                id: *id,
                lock: None,
            },
            params: vec![],
            wire: Wire::Extended,
        };
        let session = side.session(Who::A);
        match spawn_sql(session.client.clone(), select).await {
            Ok(Outcome::Rows(found)) => {
                rows.extend(found.into_iter().map(|row| [vec![*id], row].concat()));
            }
            other => panic!("{}: reading the final rows: {other:?}", side.name()),
        }
    }
    transcript.push(Event::Final(rows));
    transcript
}

/// What the generated cases exercised, for the summary line.
#[derive(Debug, Default)]
struct Tally {
    lines: usize,
    waits: usize,
    errors: std::collections::BTreeMap<String, usize>,
    warnings: usize,
}

impl Tally {
    fn add(&mut self, transcript: &[Event]) {
        self.lines += transcript.len();
        for event in transcript {
            match event {
                Event::Waits { .. } => self.waits += 1,
                Event::Done {
                    outcome, notices, ..
                }
                | Event::Finished {
                    outcome, notices, ..
                } => {
                    self.warnings += notices.len();
                    if let Outcome::Error(error) = outcome {
                        *self.errors.entry(error.code.clone()).or_default() += 1;
                    }
                }
                Event::Postponed { .. } | Event::Final(_) => {}
            }
        }
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} transcript lines, {} lock waits, {} warnings, errors by SQLSTATE {:?}",
            self.lines, self.waits, self.warnings, self.errors
        )
    }
}

/// Runs a case on both sides; `Err` with both transcripts when they differ.
async fn compare(real: &mut RealSide, case: &Case) -> Result<Vec<Event>, String> {
    real.reset(&case.wallets).await;
    let real_transcript = run_case(&mut Side::Real(real), case).await;
    let stand_in = StandInSide::start(&case.wallets).await;
    let stand_in_transcript = run_case(&mut Side::StandIn(stand_in), case).await;
    if real_transcript == stand_in_transcript {
        return Ok(real_transcript);
    }
    let mut text = String::from("the stand-in answered differently from PostgreSQL\n");
    text.push_str(&format!(
        "wallets (id, balance, fence): {:?}\n",
        case.wallets
    ));
    let longest = real_transcript.len().max(stand_in_transcript.len());
    for at in 0..longest {
        let real_line = real_transcript.get(at).map(ToString::to_string);
        let stand_in_line = stand_in_transcript.get(at).map(ToString::to_string);
        if real_line == stand_in_line {
            text.push_str(&format!("  same       {}\n", real_line.unwrap_or_default()));
        } else {
            text.push_str(&format!(
                "  PostgreSQL {}\n  stand-in   {}\n",
                real_line.unwrap_or_else(|| "(nothing)".to_string()),
                stand_in_line.unwrap_or_else(|| "(nothing)".to_string())
            ));
        }
    }
    Err(text)
}

/// Runs fixed cases (named regressions and scenarios) against both sides.
fn check_cases(test: &str, cases: &[Case]) {
    let Some(url) = database_url(test) else {
        return;
    };
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let mut real = RealSide::connect(&url, test).await;
        for case in cases {
            if let Err(difference) = compare(&mut real, case).await {
                panic!("{difference}\ncase: {case:#?}");
            }
        }
    });
}

/// Runs `count` generated cases against both sides and shrinks a difference to a minimal case.
fn check_generated(test: &str, count: u32, strategy: impl Strategy<Value = Case>) {
    let Some(url) = database_url(test) else {
        return;
    };
    let runtime = runtime();
    let local = LocalSet::new();
    let real = RefCell::new(local.block_on(&runtime, RealSide::connect(&url, test)));
    let tally = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(Config {
        cases: count,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |case| {
        let outcome = local.block_on(&runtime, compare(&mut real.borrow_mut(), &case));
        match outcome {
            Ok(transcript) => {
                tally.borrow_mut().add(&transcript);
                Ok(())
            }
            Err(difference) => Err(TestCaseError::fail(difference)),
        }
    });
    match result {
        Ok(()) => report(&format!(
            "{test}: {count} generated SQL cases answered as PostgreSQL does ({})",
            tally.borrow()
        )),
        Err(TestError::Fail(reason, case)) => panic!("{reason}\nminimal case: {case:#?}"),
        Err(error) => panic!("{error}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Generators.

/// The wallet ids the steps use: `1` and `2` exist (2 sometimes), `9` never does.
const PRESENT: i64 = 1;
const SOMETIMES: i64 = 2;
const MISSING: i64 = 9;

fn param() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => 0i64..=150,
        1 => -3i64..0,
        1 => prop::sample::select(vec![i64::MAX, i64::MIN, i64::MAX - 50, 1 << 40]),
    ]
}

fn row_lock() -> impl Strategy<Value = Option<RowLock>> {
    prop::sample::select(vec![
        None,
        Some(RowLock::ForUpdate),
        Some(RowLock::ForUpdateNowait),
        Some(RowLock::ForUpdateSkipLocked),
    ])
}

fn guard() -> impl Strategy<Value = WriteGuard> {
    prop::sample::select(vec![
        WriteGuard::Unfenced,
        WriteGuard::FenceBelow,
        WriteGuard::FenceBelowAndEqual,
    ])
}

fn bare(statement: Statement) -> Sql {
    Sql {
        statement,
        params: vec![],
        wire: Wire::Extended,
    }
}

/// `BEGIN`, `COMMIT` or `ROLLBACK`, over either protocol.
fn control() -> impl Strategy<Value = Sql> {
    let statement = prop::sample::select(vec![
        Statement::Begin,
        Statement::Begin,
        Statement::Commit,
        Statement::Rollback,
    ]);
    let wire = prop::sample::select(vec![Wire::Extended, Wire::Simple]);
    (statement, wire).prop_map(|(statement, wire)| Sql {
        wire,
        ..bare(statement)
    })
}

/// Any statement about one of `ids`, with random parameters, or transaction control.
fn sql(ids: Vec<i64>) -> impl Strategy<Value = Sql> {
    prop_oneof![
        1 => control(),
        2 => statement(ids),
    ]
}

/// A `SELECT` or `UPDATE` about one of `ids`, with random parameters.
fn statement(ids: Vec<i64>) -> impl Strategy<Value = Sql> {
    let id = prop::sample::select(ids);
    let wire = prop::sample::select(vec![Wire::Extended, Wire::Simple]);
    prop_oneof![
        2 => (id.clone(), row_lock(), wire).prop_map(|(id, lock, wire)| Sql {
            wire,
            ..bare(Statement::Select { id, lock })
        }),
        2 => (id.clone(), guard(), param(), 0i64..=6, 0i64..=6).prop_map(
            |(id, guard, balance, fence, version)| {
                let statement = Statement::WriteFenced { id, guard };
                let mut params = vec![balance, fence, version];
                params.truncate(statement.param_count());
                Sql { statement, params, wire: Wire::Extended }
            }
        ),
        1 => (id.clone(), param()).prop_map(|(id, balance)| Sql {
            params: vec![balance],
            ..bare(Statement::WriteBalance { id })
        }),
        2 => (id, param()).prop_map(|(id, amount)| Sql {
            params: vec![amount],
            ..bare(Statement::Debit { id })
        }),
    ]
}

fn wallet() -> impl Strategy<Value = Wallet> {
    (prop_oneof![9 => 0i64..=200, 1 => Just(i64::MAX)], 0i64..=4)
        .prop_map(|(balance, fence)| Wallet { balance, fence })
}

fn wallets() -> impl Strategy<Value = Vec<(i64, Wallet)>> {
    (wallet(), proptest::option::weighted(0.6, wallet())).prop_map(|(first, second)| {
        let mut wallets = vec![(PRESENT, first)];
        wallets.extend(second.map(|wallet| (SOMETIMES, wallet)));
        wallets
    })
}

/// One session, all three ids.
fn solo_case() -> impl Strategy<Value = Case> {
    let step = sql(vec![PRESENT, SOMETIMES, MISSING]).prop_map(|sql| Step { who: Who::A, sql });
    (wallets(), prop::collection::vec(step, 1..=10))
        .prop_map(|(wallets, steps)| Case { wallets, steps })
}

/// A transaction block: BEGIN, a few statements, and usually COMMIT or ROLLBACK.
fn block(ids: Vec<i64>) -> impl Strategy<Value = Vec<Sql>> {
    let end = prop_oneof![
        3 => Just(Some(Statement::Commit)),
        2 => Just(Some(Statement::Rollback)),
        1 => Just(None),
    ];
    let body = prop_oneof![8 => statement(ids), 1 => control()];
    (prop::collection::vec(body, 1..=3), end).prop_map(|(body, end)| {
        let mut block = vec![bare(Statement::Begin)];
        block.extend(body);
        block.extend(end.map(bare));
        block
    })
}

/// What one session sends: transaction blocks and single statements.
fn script(ids: Vec<i64>) -> impl Strategy<Value = Vec<Sql>> {
    let piece = prop_oneof![
        3 => block(ids.clone()),
        1 => sql(ids).prop_map(|sql| vec![sql]),
    ];
    prop::collection::vec(piece, 1..=3).prop_map(|pieces| pieces.concat())
}

/// Two sessions on one row (and a missing one), their scripts interleaved at random: lock
/// waits, re-evaluation after commit and rollback, NOWAIT and SKIP LOCKED, but never a
/// deadlock.
fn duo_case() -> impl Strategy<Value = Case> {
    let ids = vec![PRESENT, PRESENT, PRESENT, MISSING];
    (
        wallets(),
        script(ids.clone()),
        script(ids),
        prop::collection::vec(any::<bool>(), 32),
    )
        .prop_map(|(wallets, a, b, turns)| {
            let (mut a, mut b) = (VecDeque::from(a), VecDeque::from(b));
            let mut steps = Vec::new();
            for turn in turns.iter().cycle() {
                let (who, next) = match (*turn, a.is_empty(), b.is_empty()) {
                    (_, true, true) => break,
                    (true, false, _) | (false, false, true) => (Who::A, a.pop_front()),
                    _ => (Who::B, b.pop_front()),
                };
                steps.extend(next.map(|sql| Step { who, sql }));
            }
            Case { wallets, steps }
        })
}

// ---------------------------------------------------------------------------------------------
// Fixed cases.

fn step(who: Who, statement: Statement, params: &[i64]) -> Step {
    Step {
        who,
        sql: Sql {
            statement,
            params: params.to_vec(),
            wire: Wire::Extended,
        },
    }
}

fn wallet_row(balance: i64, fence: i64) -> Vec<(i64, Wallet)> {
    vec![(PRESENT, Wallet { balance, fence })]
}

const FENCED: Statement = Statement::WriteFenced {
    id: PRESENT,
    guard: WriteGuard::FenceBelow,
};
const DEBIT: Statement = Statement::Debit { id: PRESENT };

#[test]
fn generated_single_session_sequences_match_postgres() {
    check_generated(
        "generated_single_session_sequences_match_postgres",
        cases(SOLO_CASES),
        solo_case(),
    );
}

#[test]
fn generated_two_session_interleavings_match_postgres() {
    check_generated(
        "generated_two_session_interleavings_match_postgres",
        cases(DUO_CASES),
        duo_case(),
    );
}

/// A fenced write waits for the row lock of a transaction that wrote a higher fence; after
/// that commits, PostgreSQL re-evaluates `fence < $2` on the new row and updates nothing.
/// After a rollback it evaluates the original row and the write lands.
#[test]
fn a_waiting_update_reevaluates_its_where_clause_after_commit_and_after_rollback() {
    let case = |end: Statement| Case {
        wallets: wallet_row(100, 1),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            step(Who::A, FENCED, &[90, 5]),
            step(Who::B, FENCED, &[80, 3]),
            step(Who::A, end, &[]),
        ],
    };
    let debit = |end: Statement| Case {
        wallets: wallet_row(15, 0),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            step(Who::A, DEBIT, &[10]),
            step(Who::B, DEBIT, &[10]),
            step(Who::A, end, &[]),
        ],
    };
    check_cases(
        "a_waiting_update_reevaluates_its_where_clause_after_commit_and_after_rollback",
        &[
            case(Statement::Commit),
            case(Statement::Rollback),
            debit(Statement::Commit),
            debit(Statement::Rollback),
        ],
    );
}

/// A step that sends `sql` as a simple query (a statement of a user's own, such as `LOCK
/// TABLE`).
fn text(who: Who, sql: &str) -> Step {
    Step {
        who,
        sql: Sql {
            statement: Statement::text(sql).expect("a statement within the interner's limits"),
            params: Vec::new(),
            wire: Wire::Simple,
        },
    }
}

/// `LOCK TABLE` against the safeguards' own statements: which modes make a reader, a
/// `FOR UPDATE` and a writer wait and which let them by, a `LOCK` that waits for a reader's
/// or a writer's transaction, two lockers one after the other, `NOWAIT`'s 55P03, the locks a
/// savepoint gives back, and a deadlock of two `SHARE` locks whose holders both write (its
/// DETAIL names the relation lock each waits for).
#[test]
fn lock_table_modes_against_the_safeguards_statements() {
    let select = |lock| Statement::Select { id: PRESENT, lock };
    let blocks = |mode: &str, statement: Statement, params: &[i64]| Case {
        wallets: wallet_row(100, 1),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            text(Who::A, &format!("LOCK TABLE wallets IN {mode} MODE")),
            step(Who::B, statement, params),
            step(Who::A, select(None), &[]),
            step(Who::A, Statement::Commit, &[]),
            step(Who::B, select(None), &[]),
        ],
    };
    let mut cases = Vec::new();
    for mode in [
        "ACCESS SHARE",
        "ROW SHARE",
        "ROW EXCLUSIVE",
        "SHARE UPDATE EXCLUSIVE",
        "SHARE",
        "SHARE ROW EXCLUSIVE",
        "EXCLUSIVE",
        "ACCESS EXCLUSIVE",
    ] {
        cases.push(blocks(mode, select(None), &[]));
        cases.push(blocks(mode, select(Some(RowLock::ForUpdate)), &[]));
        cases.push(blocks(mode, DEBIT, &[10]));
    }
    // A LOCK waits for the transactions that read or wrote the table.
    for (reader, params, mode) in [
        (select(None), &[][..], "ACCESS EXCLUSIVE"),
        (select(Some(RowLock::ForUpdate)), &[][..], "EXCLUSIVE"),
        (DEBIT, &[10][..], "SHARE"),
        (DEBIT, &[10][..], "SHARE UPDATE EXCLUSIVE"),
    ] {
        cases.push(Case {
            wallets: wallet_row(100, 1),
            steps: vec![
                step(Who::A, Statement::Begin, &[]),
                step(Who::A, reader, params),
                step(Who::B, Statement::Begin, &[]),
                text(Who::B, &format!("LOCK TABLE wallets IN {mode} MODE")),
                step(Who::A, DEBIT, &[5]),
                step(Who::A, Statement::Rollback, &[]),
                step(Who::B, DEBIT, &[1]),
                step(Who::B, Statement::Commit, &[]),
            ],
        });
    }
    // Two lockers, one after the other; NOWAIT; a savepoint.
    cases.push(Case {
        wallets: wallet_row(100, 1),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            text(Who::A, "LOCK wallets IN SHARE ROW EXCLUSIVE MODE"),
            step(Who::B, Statement::Begin, &[]),
            text(Who::B, "LOCK TABLE wallets IN SHARE ROW EXCLUSIVE MODE"),
            step(Who::A, DEBIT, &[10]),
            step(Who::A, Statement::Commit, &[]),
            step(Who::B, DEBIT, &[10]),
            step(Who::B, Statement::Commit, &[]),
            step(Who::A, select(None), &[]),
        ],
    });
    cases.push(Case {
        wallets: wallet_row(100, 1),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            step(Who::A, select(Some(RowLock::ForUpdate)), &[]),
            step(Who::B, Statement::Begin, &[]),
            text(Who::B, "LOCK TABLE wallets IN SHARE MODE NOWAIT"),
            text(Who::B, "LOCK TABLE wallets IN EXCLUSIVE MODE NOWAIT"),
            step(Who::B, Statement::Rollback, &[]),
            text(Who::B, "LOCK TABLE wallets IN EXCLUSIVE MODE NOWAIT"),
            step(Who::A, Statement::Commit, &[]),
        ],
    });
    cases.push(Case {
        wallets: wallet_row(100, 1),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            text(Who::A, "LOCK TABLE wallets IN ROW SHARE MODE"),
            text(Who::A, "SAVEPOINT s"),
            text(Who::A, "LOCK TABLE wallets IN EXCLUSIVE MODE"),
            step(Who::B, Statement::Begin, &[]),
            step(Who::B, select(Some(RowLock::ForUpdate)), &[]),
            text(Who::A, "ROLLBACK TO SAVEPOINT s"),
            text(Who::A, "SAVEPOINT t"),
            text(Who::A, "LOCK TABLE wallets IN SHARE MODE"),
            text(Who::A, "RELEASE SAVEPOINT t"),
            step(Who::B, DEBIT, &[10]),
            step(Who::A, Statement::Commit, &[]),
            step(Who::B, Statement::Commit, &[]),
        ],
    });
    cases.push(Case {
        wallets: wallet_row(100, 1),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            text(Who::A, "LOCK TABLE wallets IN SHARE MODE"),
            step(Who::B, Statement::Begin, &[]),
            text(Who::B, "LOCK TABLE wallets IN SHARE MODE"),
            step(Who::A, DEBIT, &[10]),
            step(Who::B, DEBIT, &[10]),
            step(Who::A, Statement::Commit, &[]),
            step(Who::B, select(None), &[]),
        ],
    });
    check_cases("lock_table_modes_against_the_safeguards_statements", &cases);
}

/// Regression: an UPDATE that waited for a concurrent writer and, after that committed, no
/// longer matches its WHERE clause updates nothing but keeps the row lock until its
/// transaction ends, so the next writer waits for it (the stand-in released it at once).
#[test]
fn regression_a_resumed_update_that_no_longer_matches_keeps_the_row_lock() {
    let case = |writer: Statement, params: &[i64]| Case {
        wallets: wallet_row(115, 0),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            step(
                Who::A,
                Statement::WriteFenced {
                    id: PRESENT,
                    guard: WriteGuard::Unfenced,
                },
                &[1, 1],
            ),
            step(Who::B, Statement::Begin, &[]),
            step(Who::B, FENCED, &[0, 1]),
            step(Who::A, Statement::Commit, &[]),
            step(Who::A, writer, params),
            step(Who::B, Statement::Commit, &[]),
        ],
    };
    check_cases(
        "regression_a_resumed_update_that_no_longer_matches_keeps_the_row_lock",
        &[
            case(DEBIT, &[0]),
            case(
                Statement::Select {
                    id: PRESENT,
                    lock: Some(RowLock::ForUpdateNowait),
                },
                &[],
            ),
        ],
    );
}

/// Regression (of the comparison itself): an error in a transaction block releases its row
/// lock, but PostgreSQL reports the error before it has released it; the next statement of
/// another session must not race the abort.
#[test]
fn regression_an_error_releases_the_row_lock_before_the_next_step() {
    check_cases(
        "regression_an_error_releases_the_row_lock_before_the_next_step",
        &[Case {
            wallets: wallet_row(46, 1),
            steps: vec![
                step(Who::B, Statement::Begin, &[]),
                step(Who::B, DEBIT, &[41]),
                step(Who::B, DEBIT, &[i64::MIN]),
                step(
                    Who::A,
                    Statement::Select {
                        id: PRESENT,
                        lock: Some(RowLock::ForUpdateSkipLocked),
                    },
                    &[],
                ),
                step(Who::A, FENCED, &[73, 4]),
            ],
        }],
    );
}

/// `FOR UPDATE NOWAIT` on a row another transaction locked fails with 55P03, aborts its own
/// transaction (25P02 afterwards), and `SKIP LOCKED` leaves the row out.
#[test]
fn for_update_nowait_and_skip_locked_on_a_locked_row() {
    let select = |lock| Statement::Select { id: PRESENT, lock };
    check_cases(
        "for_update_nowait_and_skip_locked_on_a_locked_row",
        &[Case {
            wallets: wallet_row(100, 0),
            steps: vec![
                step(Who::A, Statement::Begin, &[]),
                step(Who::A, select(Some(RowLock::ForUpdate)), &[]),
                step(Who::B, Statement::Begin, &[]),
                step(Who::B, select(Some(RowLock::ForUpdateSkipLocked)), &[]),
                step(Who::B, select(Some(RowLock::ForUpdateNowait)), &[]),
                step(Who::B, select(None), &[]),
                step(Who::B, Statement::Commit, &[]),
                step(Who::B, select(Some(RowLock::ForUpdate)), &[]),
                step(Who::A, Statement::Commit, &[]),
            ],
        }],
    );
}

/// A debit below zero violates `wallets_balance_check` (23514, with the failing row), also
/// while the row is locked by another transaction: the check comes before the lock wait.
#[test]
fn check_violation_with_the_failing_row() {
    check_cases(
        "check_violation_with_the_failing_row",
        &[
            Case {
                wallets: wallet_row(5, 2),
                steps: vec![
                    step(Who::A, Statement::WriteBalance { id: PRESENT }, &[-1]),
                    step(Who::A, Statement::Begin, &[]),
                    step(Who::A, FENCED, &[-5, 7]),
                    step(Who::A, DEBIT, &[1]),
                    step(Who::A, Statement::Commit, &[]),
                ],
            },
            Case {
                wallets: wallet_row(5, 2),
                steps: vec![
                    step(Who::A, Statement::Begin, &[]),
                    step(Who::A, DEBIT, &[1]),
                    step(Who::B, Statement::WriteBalance { id: PRESENT }, &[-1]),
                    step(Who::A, Statement::Rollback, &[]),
                ],
            },
        ],
    );
}

/// Arithmetic past `bigint` fails with 22003, and warnings for `BEGIN` in a block and
/// `COMMIT` outside one.
#[test]
fn overflow_and_transaction_warnings() {
    check_cases(
        "overflow_and_transaction_warnings",
        &[Case {
            wallets: wallet_row(0, 0),
            steps: vec![
                step(Who::A, DEBIT, &[i64::MIN]),
                step(Who::A, Statement::Commit, &[]),
                step(Who::A, Statement::Begin, &[]),
                step(Who::A, Statement::Begin, &[]),
                step(Who::A, Statement::Rollback, &[]),
                step(Who::A, Statement::Rollback, &[]),
            ],
        }],
    );
}

/// Two transactions lock two rows in opposite orders (`SELECT ... FOR UPDATE`, or the
/// transfer's `UPDATE`s): the statement that closes the cycle fails with 40P01 `deadlock
/// detected` (DETAIL: who waits for whom; HINT: see the server log), its transaction is
/// aborted, and the other one goes on. Locked in the same order, the second one just waits.
#[test]
fn opposite_lock_orders_deadlock_and_one_order_waits() {
    let lock = |id| Statement::Select {
        id,
        lock: Some(RowLock::ForUpdate),
    };
    let write = |id| Statement::WriteBalance { id };
    let two_rows = vec![
        (
            PRESENT,
            Wallet {
                balance: 100,
                fence: 0,
            },
        ),
        (
            SOMETIMES,
            Wallet {
                balance: 100,
                fence: 0,
            },
        ),
    ];
    let transfer = |first: Statement, second: Statement, params: &[i64], b_first, b_second| Case {
        wallets: two_rows.clone(),
        steps: vec![
            step(Who::A, Statement::Begin, &[]),
            step(Who::A, first, params),
            step(Who::B, Statement::Begin, &[]),
            step(Who::B, b_first, params),
            step(Who::A, second, params),
            step(Who::B, b_second, params),
            step(Who::B, Statement::Rollback, &[]),
            step(Who::A, Statement::Commit, &[]),
        ],
    };
    check_cases(
        "opposite_lock_orders_deadlock_and_one_order_waits",
        &[
            transfer(
                lock(PRESENT),
                lock(SOMETIMES),
                &[],
                lock(SOMETIMES),
                lock(PRESENT),
            ),
            transfer(
                write(PRESENT),
                write(SOMETIMES),
                &[90],
                write(SOMETIMES),
                write(PRESENT),
            ),
            transfer(
                lock(PRESENT),
                lock(SOMETIMES),
                &[],
                lock(PRESENT),
                lock(SOMETIMES),
            ),
        ],
    );
}

/// Read-modify-write under REPEATABLE READ and SERIALIZABLE: a write of a row another
/// transaction changed since the snapshot fails with 40001 `could not serialize access due to
/// concurrent update` (at once, or after waiting for the writer to commit); after the writer
/// rolls back it goes on; a read-only transaction keeps its snapshot and commits. Under READ
/// COMMITTED the same write lands over the other (a lost update).
#[test]
fn isolation_levels_decide_when_a_read_modify_write_fails_with_40001() {
    let select = Statement::Select {
        id: PRESENT,
        lock: None,
    };
    let write = Statement::WriteBalance { id: PRESENT };
    let mut cases = Vec::new();
    for isolation in [
        Isolation::ReadCommitted,
        Isolation::RepeatableRead,
        Isolation::Serializable,
    ] {
        let begin = Statement::BeginIsolated { isolation };
        // The other session's write commits before ours.
        cases.push(Case {
            wallets: wallet_row(100, 0),
            steps: vec![
                step(Who::A, begin, &[]),
                step(Who::A, select, &[]),
                step(Who::B, write, &[90]),
                step(Who::A, select, &[]),
                step(Who::A, write, &[90]),
                step(Who::A, Statement::Commit, &[]),
            ],
        });
        // Both read, both write: the second waits for the first, which commits or rolls back.
        for end in [Statement::Commit, Statement::Rollback] {
            cases.push(Case {
                wallets: wallet_row(100, 0),
                steps: vec![
                    step(Who::A, begin, &[]),
                    step(Who::A, select, &[]),
                    step(Who::B, begin, &[]),
                    step(Who::B, select, &[]),
                    step(Who::A, write, &[90]),
                    step(Who::B, write, &[90]),
                    step(Who::A, end, &[]),
                    step(Who::B, Statement::Commit, &[]),
                ],
            });
        }
        // A reader that decides not to write keeps its snapshot and commits.
        cases.push(Case {
            wallets: wallet_row(100, 0),
            steps: vec![
                step(Who::A, begin, &[]),
                step(Who::A, select, &[]),
                step(Who::B, begin, &[]),
                step(Who::B, select, &[]),
                step(Who::A, write, &[90]),
                step(Who::A, Statement::Commit, &[]),
                step(Who::B, select, &[]),
                step(Who::B, Statement::Commit, &[]),
            ],
        });
    }
    check_cases(
        "isolation_levels_decide_when_a_read_modify_write_fails_with_40001",
        &cases,
    );
}

/// A self-test of the harness: a case whose transcripts must differ (the stand-in gets a
/// different starting balance) is reported as a difference.
#[test]
fn the_comparison_can_fail() {
    let Some(url) = database_url("the_comparison_can_fail") else {
        return;
    };
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let mut real = RealSide::connect(&url, "the_comparison_can_fail").await;
        let case = Case {
            wallets: wallet_row(100, 0),
            steps: vec![step(
                Who::A,
                Statement::Select {
                    id: PRESENT,
                    lock: None,
                },
                &[],
            )],
        };
        real.reset(&case.wallets).await;
        let real_transcript = run_case(&mut Side::Real(&mut real), &case).await;
        let stand_in = StandInSide::start(&wallet_row(99, 0)).await;
        let stand_in_transcript = run_case(&mut Side::StandIn(stand_in), &case).await;
        assert_ne!(real_transcript, stand_in_transcript);
    });
}

/// Which session a deadlock fails, when the checks run after `deadlock_timeout` as in
/// PostgreSQL: A waits for B's row, then B, `gap` later, for A's. Each waiter looks for a
/// cycle once, `deadlock_timeout` after it started waiting. When the cycle closes within A's
/// timeout, A (the first waiter) finds it and fails; when it closes later, A's check has
/// already found nothing and B fails. Both sides run with `deadlock_timeout` = 300 ms; the
/// session that failed, its SQLSTATE, message and HINT, and the other's outcome must match.
#[test]
fn the_deadlock_victim_is_the_first_waiter_whose_timeout_passes_after_the_cycle_closed() {
    let Some(url) = database_url("the_deadlock_victim_is_the_first_waiter") else {
        return;
    };
    const TIMEOUT: Duration = Duration::from_millis(300);
    /// What each of A's and B's waiting UPDATEs ended with: `Ok(rows)` or the error's
    /// SQLSTATE, message and HINT.
    type Ends = [End; 2];
    type End = Result<u64, (String, String, Option<String>)>;
    async fn update(client: &Client, id: i64) -> End {
        let sql = format!("UPDATE wallets SET balance = balance - 10 WHERE id = {id}");
        client.execute(&sql, &[]).await.map_err(|error| {
            let db = error.as_db_error().expect("a server error");
            (
                db.code().code().to_string(),
                db.message().to_string(),
                db.hint().map(str::to_string),
            )
        })
    }
    async fn play(clients: [&Client; 2], gap: Duration) -> Ends {
        let [a, b] = clients;
        for (client, first) in [(a, 1), (b, 2)] {
            client
                .batch_execute(&format!(
                    "BEGIN; UPDATE wallets SET balance = balance - 10 WHERE id = {first}"
                ))
                .await
                .expect("lock the first row");
        }
        let a_waits = update(a, 2);
        let b_waits = async {
            tokio::time::sleep(gap).await;
            update(b, 1).await
        };
        let (a_end, b_end) = tokio::join!(a_waits, b_waits);
        for client in [a, b] {
            client
                .batch_execute("ROLLBACK")
                .await
                .expect("end the block");
        }
        [a_end, b_end]
    }
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let (schema, admin) = Schema::create(&url, "deadlock_victim").await;
        seed_wallets(&admin, &schema.name, &[1, 2]).await;
        let (real_a, _) = connect_real(&url).await;
        let (real_b, _) = connect_real(&url).await;
        for client in [&real_a, &real_b] {
            client
                .batch_execute(&format!(
                    "SET search_path = {}; SET deadlock_timeout = '{}ms'",
                    schema.name,
                    TIMEOUT.as_millis()
                ))
                .await
                .expect("set the session up");
        }

        let mut postgres = Postgres::new();
        for id in [1, 2] {
            postgres.seed_wallet(
                id,
                Wallet {
                    balance: 100,
                    fence: 0,
                },
            );
        }
        let postgres = Rc::new(RefCell::new(postgres));
        let server =
            PgServer::new(postgres.clone(), Rc::new(NoopObserver)).with_deadlock_timeout(TIMEOUT);
        let (stand_in, accept_loop) = serve_stand_in(server, 2).await;
        let stand_in: Vec<Client> = stand_in.into_iter().map(|(client, _)| client).collect();

        for (gap, victim) in [(Duration::from_millis(50), 0), (TIMEOUT * 2, 1)] {
            let started = Instant::now();
            let real = play([&real_a, &real_b], gap).await;
            let real_took = started.elapsed();
            let started = Instant::now();
            let ours = play([&stand_in[0], &stand_in[1]], gap).await;
            let ours_took = started.elapsed();
            assert_eq!(ours, real, "gap {gap:?}: stand-in vs PostgreSQL");
            let failed: Vec<usize> = (0..2).filter(|&at| real[at].is_err()).collect();
            assert_eq!(failed, vec![victim], "gap {gap:?}: {real:?}");
            let (code, message, hint) = real[victim].clone().unwrap_err();
            assert_eq!(
                (code.as_str(), message.as_str()),
                ("40P01", "deadlock detected")
            );
            assert_eq!(hint.as_deref(), Some("See server log for query details."));
            assert_eq!(real[1 - victim], Ok(1));
            // Neither side fails before the victim's own timeout has passed.
            let least = if victim == 0 { TIMEOUT } else { gap + TIMEOUT };
            assert!(real_took >= least, "PostgreSQL took {real_took:?}");
            assert!(ours_took >= least, "the stand-in took {ours_took:?}");
        }
        accept_loop.abort();
        drop(schema);
    });
}

/// A simple query's outcome: the first column of its rows, joined by commas, or its error's
/// SQLSTATE and message.
type StepEnd = Result<String, (String, String)>;

/// Sends `sql` as a simple query on `client`: its [`StepEnd`].
/// Wallet rows `ids`, each with a balance of 100, in the real server's `schema`.
async fn seed_wallets(admin: &Client, schema: &str, ids: &[i64]) {
    let rows: Vec<String> = ids.iter().map(|id| format!("({id}, 100)")).collect();
    admin
        .batch_execute(&format!(
            "INSERT INTO {schema}.wallets (id, balance) VALUES {}",
            rows.join(", ")
        ))
        .await
        .expect("seed the wallet rows");
}

/// Two sessions on the real server, each set up by `set_up`.
async fn real_pair(url: &str, set_up: &str) -> (Client, Client) {
    let (a, _) = connect_real(url).await;
    let (b, _) = connect_real(url).await;
    for client in [&a, &b] {
        client
            .batch_execute(set_up)
            .await
            .expect("set the session up");
    }
    (a, b)
}

async fn simple_step(client: &Client, sql: &str) -> StepEnd {
    match client.simple_query(sql).await {
        Ok(messages) => Ok(messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(row) => Some(row.get(0).unwrap_or("NULL").to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(",")),
        Err(error) => {
            let db = error.as_db_error().expect("a server error");
            Err((db.code().code().to_string(), db.message().to_string()))
        }
    }
}

/// `lock_timeout` cancels a statement's sleep on a row lock or an advisory lock (55P03) and
/// `statement_timeout` a statement that waits (57014), on PostgreSQL and on the stand-in: on
/// their own, in a block (which then fails), and neither before its time; with the settings
/// as `SHOW` prints them.
#[test]
fn lock_timeout_and_statement_timeout_cancel_a_wait() {
    let Some(url) = database_url("lock_timeout_and_statement_timeout_cancel_a_wait") else {
        return;
    };
    const LIMIT: Duration = Duration::from_millis(200);
    type End = StepEnd;
    use simple_step as step;
    async fn play(holder: &Client, waiter: &Client) -> (Vec<End>, Vec<Duration>) {
        holder
            .batch_execute(
                "BEGIN; UPDATE wallets SET balance = balance - 10 WHERE id = 1; \
                 SELECT pg_advisory_xact_lock(7)",
            )
            .await
            .expect("hold the row and the advisory lock");
        let script = [
            "SET lock_timeout = '0.2s'",
            "SHOW lock_timeout",
            "UPDATE wallets SET balance = balance - 1 WHERE id = 1",
            "SELECT pg_advisory_lock(7)",
            "BEGIN",
            "SELECT balance FROM wallets WHERE id = 1 FOR UPDATE",
            "SELECT 1",
            "ROLLBACK",
            "SET lock_timeout = 0",
            "SET statement_timeout = 200",
            "SHOW statement_timeout",
            "UPDATE wallets SET balance = balance - 1 WHERE id = 1",
            "SELECT balance FROM wallets WHERE id = 1",
            "RESET statement_timeout",
        ];
        let mut ends = Vec::new();
        let mut took = Vec::new();
        for sql in script {
            let started = Instant::now();
            ends.push(step(waiter, sql).await);
            took.push(started.elapsed());
        }
        holder.batch_execute("ROLLBACK").await.expect("let go");
        (ends, took)
    }
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let (schema, admin) = Schema::create(&url, "lock_timeout").await;
        seed_wallets(&admin, &schema.name, &[1]).await;
        let (real_a, real_b) = real_pair(&url, &format!("SET search_path = {}", schema.name)).await;
        let mut postgres = Postgres::new();
        postgres.seed_wallet(
            1,
            Wallet {
                balance: 100,
                fence: 0,
            },
        );
        let server = PgServer::new(Rc::new(RefCell::new(postgres)), Rc::new(NoopObserver))
            .with_deadlock_timeout(Duration::from_secs(1));
        let (stand_in, accept_loop) = serve_stand_in(server, 2).await;
        let stand_in: Vec<Client> = stand_in.into_iter().map(|(client, _)| client).collect();

        let (real, real_took) = play(&real_a, &real_b).await;
        let (ours, ours_took) = play(&stand_in[0], &stand_in[1]).await;
        assert_eq!(ours, real, "stand-in vs PostgreSQL");
        let lock_timeout = Err((
            "55P03".to_string(),
            "canceling statement due to lock timeout".to_string(),
        ));
        assert_eq!(real[2], lock_timeout);
        assert_eq!(real[3], lock_timeout);
        assert_eq!(real[5], lock_timeout);
        assert_eq!(real[6].as_ref().unwrap_err().0, "25P02");
        assert_eq!(
            real[11],
            Err((
                "57014".to_string(),
                "canceling statement due to statement timeout".to_string()
            ))
        );
        for at in [2, 3, 5, 11] {
            assert!(
                real_took[at] >= LIMIT,
                "PostgreSQL, step {at}: {:?}",
                real_took[at]
            );
            assert!(
                ours_took[at] >= LIMIT,
                "the stand-in, step {at}: {:?}",
                ours_took[at]
            );
        }
        accept_loop.abort();
        drop(schema);
    });
}

/// Where a lock-queue differential sees how many of its sessions wait for a lock: PostgreSQL's
/// `pg_locks` for the sessions' backends, or the stand-in's queues of rows 1 and 2.
enum LockWaits<'a> {
    Real {
        admin: &'a Client,
        pids: Vec<i32>,
    },
    StandIn(&'a RefCell<Postgres>),
    /// The stand-in's sessions that wait for anything (advisory locks have no row queue).
    StandInSessions(&'a RefCell<Postgres>),
}

impl LockWaits<'_> {
    /// Returns once `count` of the sessions wait for a lock (panics after 20 s).
    async fn waiting(&self, count: usize) {
        let started = Instant::now();
        loop {
            let now = match self {
                LockWaits::Real { admin, pids } => {
                    let row = admin
                        .query_one(
                            "SELECT count(DISTINCT pid) FROM pg_locks \
                             WHERE NOT granted AND pid = ANY($1)",
                            &[pids],
                        )
                        .await
                        .expect("read pg_locks");
                    usize::try_from(row.get::<_, i64>(0)).expect("a count")
                }
                LockWaits::StandIn(postgres) => {
                    let postgres = postgres.borrow();
                    postgres.lock_queue(1).len() + postgres.lock_queue(2).len()
                }
                LockWaits::StandInSessions(postgres) => {
                    let postgres = postgres.borrow();
                    postgres
                        .session_ids()
                        .filter(|&s| postgres.waiting_on(s).is_some())
                        .count()
                }
            };
            if now >= count {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{count} sessions never waited (only {now})"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Two sessions wait for a row that a third holds locked (`FOR UPDATE`); when it commits, PostgreSQL gives the row
/// to the one that began waiting first (its queue on the tuple lock), and the other waits
/// behind it, whichever of them the server happens to wake first. The first waiter doubles the
/// balance and the second adds one, so the order is in the numbers they return. Played with
/// either session waiting first, with the waiters in transaction blocks (the second then waits
/// for the first's commit) and on their own. Each step waits until the server shows the
/// waiter waiting (PostgreSQL's `pg_locks`, the stand-in's queue), so a loaded machine cannot
/// reorder them.
#[test]
fn waiters_take_a_released_row_in_the_order_they_began_waiting() {
    let Some(url) = database_url("waiters_take_a_released_row_in_order") else {
        return;
    };
    async fn returned(client: &Client, set: &str) -> i64 {
        let sql = format!("UPDATE wallets SET balance = {set} WHERE id = 1 RETURNING balance");
        client
            .query_one(&sql, &[])
            .await
            .expect("the update")
            .get(0)
    }
    /// What the first and the second waiter's UPDATEs returned, and the final balance.
    async fn play(
        server: &LockWaits<'_>,
        clients: [&Client; 3],
        first: usize,
        in_blocks: bool,
    ) -> [i64; 3] {
        let [holder, b, c] = clients;
        let (first, second) = if first == 1 { (b, c) } else { (c, b) };
        holder
            .batch_execute("UPDATE wallets SET balance = 10 WHERE id = 1")
            .await
            .expect("reset the row");
        // Locked, not written: had the holder written a new version, each waiter would
        // follow the update chain to it when the holder commits, and on PostgreSQL those two
        // race for the new version (the second wins now and then, about 1 run in 6 here).
        holder
            .batch_execute("BEGIN; SELECT balance FROM wallets WHERE id = 1 FOR UPDATE")
            .await
            .expect("lock the row");
        if in_blocks {
            for waiter in [first, second] {
                waiter.batch_execute("BEGIN").await.expect("open a block");
            }
        }
        let first_waits = async {
            let balance = returned(first, "balance * 2").await;
            if in_blocks {
                first.batch_execute("COMMIT").await.expect("commit");
            }
            balance
        };
        let second_waits = async {
            server.waiting(1).await;
            let balance = returned(second, "balance + 1").await;
            if in_blocks {
                second.batch_execute("COMMIT").await.expect("commit");
            }
            balance
        };
        let holder_commits = async {
            server.waiting(2).await;
            holder.batch_execute("COMMIT").await.expect("commit");
        };
        let (first_got, second_got, ()) = tokio::join!(first_waits, second_waits, holder_commits);
        let balance: i64 = holder
            .query_one("SELECT balance FROM wallets WHERE id = 1", &[])
            .await
            .expect("read the row")
            .get(0);
        [first_got, second_got, balance]
    }
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let (schema, admin) = Schema::create(&url, "lock_queue").await;
        seed_wallets(&admin, &schema.name, &[1]).await;
        let mut real = Vec::new();
        let mut pids = Vec::new();
        for _ in 0..3 {
            let (client, _) = connect_real(&url).await;
            client
                .batch_execute(&format!("SET search_path = {}", schema.name))
                .await
                .expect("set the session up");
            let pid: i32 = client
                .query_one("SELECT pg_backend_pid()", &[])
                .await
                .expect("the backend's pid")
                .get(0);
            pids.push(pid);
            real.push(client);
        }
        let real_server = LockWaits::Real {
            admin: &admin,
            pids,
        };
        let mut postgres = Postgres::new();
        postgres.seed_wallet(
            1,
            Wallet {
                balance: 100,
                fence: 0,
            },
        );
        let postgres = Rc::new(RefCell::new(postgres));
        let server = PgServer::new(postgres.clone(), Rc::new(NoopObserver));
        let (stand_in, accept_loop) = serve_stand_in(server, 3).await;
        let stand_in: Vec<Client> = stand_in.into_iter().map(|(client, _)| client).collect();
        let stand_in_server = LockWaits::StandIn(&postgres);
        for in_blocks in [true, false] {
            for first in [1, 2] {
                let clients = [&real[0], &real[1], &real[2]];
                let real_got = play(&real_server, clients, first, in_blocks).await;
                let clients = [&stand_in[0], &stand_in[1], &stand_in[2]];
                let ours = play(&stand_in_server, clients, first, in_blocks).await;
                assert_eq!(real_got, [20, 21, 21], "PostgreSQL, first waiter {first}");
                assert_eq!(
                    ours, real_got,
                    "first waiter {first}, in blocks {in_blocks}: stand-in vs PostgreSQL"
                );
            }
        }
        accept_loop.abort();
        drop(schema);
    });
}

/// PostgreSQL's "soft" deadlock. Row 1 is held by H, and W1, W2 and then W3 queue for it; W3
/// holds row 2, for which H then waits. The cycle `H -> W3 -> W1 -> H` runs through the queue's
/// first waiter W1 (it holds the tuple lock), and through W2 only by the soft edge `W3 -> W2`
/// (W3 is behind W2 in the same queue). The timeouts fire in turn: W1's before the cycle
/// closes (nothing found, and a wait checks once), then W2's, then H's. PostgreSQL would undo
/// W2's cycle by moving W3 ahead, but W3 is in a cycle of real waits, so W2 fails with 40P01;
/// then H does, W1 takes row 1 and commits, and W3 takes it. Each UPDATE subtracts 10 and
/// returns the balance, so the order is in the numbers; played again with `SELECT ... FOR
/// UPDATE`, where the same sessions fail.
#[test]
fn a_soft_deadlock_aborts_the_waiter_that_finds_it() {
    let Some(url) = database_url("a_soft_deadlock_aborts_the_waiter") else {
        return;
    };
    const TIMEOUT: Duration = Duration::from_millis(500);
    /// When, after W1 began waiting, each later step starts: W2 queues, H asks for row 2,
    /// W3 queues. W1 checks at TIMEOUT (500), W2 at 800, H at 1100, W3 at 1200.
    const W2_AT: Duration = Duration::from_millis(300);
    const H_AT: Duration = Duration::from_millis(600);
    const W3_AT: Duration = Duration::from_millis(700);
    /// An UPDATE's returned balance, or the error's SQLSTATE and message.
    type End = Result<i64, (String, String)>;
    async fn take(client: &Client, id: i64, lock: Lock) -> End {
        let sql = match lock {
            Lock::Update => {
                format!(
                    "UPDATE wallets SET balance = balance - 10 WHERE id = {id} RETURNING balance"
                )
            }
            Lock::ForUpdate => format!("SELECT balance FROM wallets WHERE id = {id} FOR UPDATE"),
        };
        match client.query_one(&sql, &[]).await {
            Ok(row) => Ok(row.get(0)),
            Err(error) => {
                let db = error.as_db_error().expect("a server error");
                Err((db.code().code().to_string(), db.message().to_string()))
            }
        }
    }
    /// How each session asks for its row: an UPDATE that subtracts 10 and returns the balance,
    /// or a `SELECT ... FOR UPDATE` of it.
    #[derive(Clone, Copy, Debug)]
    enum Lock {
        Update,
        ForUpdate,
    }
    /// How a block ends after its UPDATE did.
    fn ending(end: &End) -> &'static str {
        if end.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        }
    }
    /// What H's wait for row 2 and W1's, W2's and W3's for row 1 ended with.
    async fn play(server: &LockWaits<'_>, clients: [&Client; 4], lock: Lock) -> [End; 4] {
        let [h, w1, w2, w3] = clients;
        h.batch_execute(
            "UPDATE wallets SET balance = 100 WHERE id = 1; \
             UPDATE wallets SET balance = 100 WHERE id = 2",
        )
        .await
        .expect("reset the rows");
        h.batch_execute("BEGIN; UPDATE wallets SET balance = balance WHERE id = 1")
            .await
            .expect("H locks row 1");
        w3.batch_execute("BEGIN; UPDATE wallets SET balance = balance WHERE id = 2")
            .await
            .expect("W3 locks row 2");
        for waiter in [w1, w2] {
            waiter.batch_execute("BEGIN").await.expect("open a block");
        }
        /// Waits until `waiting` sessions wait and `at` has passed since `started`, then
        /// runs `client`'s UPDATE of row `id` and ends its block.
        async fn in_turn(
            server: &LockWaits<'_>,
            started: Instant,
            at: Duration,
            waiting: usize,
            client: &Client,
            id: i64,
            lock: Lock,
        ) -> End {
            server.waiting(waiting).await;
            tokio::time::sleep_until((started + at).into()).await;
            let end = take(client, id, lock).await;
            client
                .batch_execute(ending(&end))
                .await
                .expect("end the block");
            end
        }
        let started = Instant::now();
        let (w1_end, w2_end, h_end, w3_end) = tokio::join!(
            in_turn(server, started, Duration::ZERO, 0, w1, 1, lock),
            in_turn(server, started, W2_AT, 1, w2, 1, lock),
            in_turn(server, started, H_AT, 2, h, 2, lock),
            in_turn(server, started, W3_AT, 3, w3, 1, lock),
        );
        [h_end, w1_end, w2_end, w3_end]
    }
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let (schema, admin) = Schema::create(&url, "soft_deadlock").await;
        seed_wallets(&admin, &schema.name, &[1, 2]).await;
        let mut real = Vec::new();
        let mut pids = Vec::new();
        for _ in 0..4 {
            let (client, _) = connect_real(&url).await;
            client
                .batch_execute(&format!(
                    "SET search_path = {}; SET deadlock_timeout = '{}ms'",
                    schema.name,
                    TIMEOUT.as_millis()
                ))
                .await
                .expect("set the session up");
            let pid: i32 = client
                .query_one("SELECT pg_backend_pid()", &[])
                .await
                .expect("the backend's pid")
                .get(0);
            pids.push(pid);
            real.push(client);
        }
        let real_server = LockWaits::Real {
            admin: &admin,
            pids,
        };
        let mut postgres = Postgres::new();
        for id in [1, 2] {
            postgres.seed_wallet(
                id,
                Wallet {
                    balance: 100,
                    fence: 0,
                },
            );
        }
        let postgres = Rc::new(RefCell::new(postgres));
        let server =
            PgServer::new(postgres.clone(), Rc::new(NoopObserver)).with_deadlock_timeout(TIMEOUT);
        let (stand_in, accept_loop) = serve_stand_in(server, 4).await;
        let stand_in: Vec<Client> = stand_in.into_iter().map(|(client, _)| client).collect();
        let stand_in_server = LockWaits::StandIn(&postgres);

        let deadlock = || Err(("40P01".to_string(), "deadlock detected".to_string()));
        for (lock, taken) in [(Lock::Update, [90, 80]), (Lock::ForUpdate, [100, 100])] {
            let real_got = play(&real_server, [&real[0], &real[1], &real[2], &real[3]], lock).await;
            assert_eq!(
                real_got,
                [deadlock(), Ok(taken[0]), deadlock(), Ok(taken[1])],
                "PostgreSQL, {lock:?}: W2 and H fail, W1 takes the row, then W3"
            );
            let ours = play(
                &stand_in_server,
                [&stand_in[0], &stand_in[1], &stand_in[2], &stand_in[3]],
                lock,
            )
            .await;
            assert_eq!(ours, real_got, "{lock:?}: stand-in vs PostgreSQL");
        }
        accept_loop.abort();
        drop(schema);
    });
}

/// Advisory locks that wait, on both servers: `pg_advisory_lock` waits for another session's
/// session-level lock until it is unlocked (not until a transaction ends), and for a
/// transaction-level lock until that transaction commits; a lock taken by a statement outside
/// a block is gone when the statement ends; and two sessions each waiting for the other's lock
/// deadlock, the first waiter failing with 40P01 when the cycle closes within its
/// `deadlock_timeout` (300 ms on both). Each waiting step first waits until the server shows
/// the waiter waiting (`pg_locks`; the stand-in's sessions).
#[test]
fn advisory_locks_wait_hand_over_and_deadlock() {
    let Some(url) = database_url("advisory_locks_wait") else {
        return;
    };
    const TIMEOUT: Duration = Duration::from_millis(300);
    type End = StepEnd;
    use simple_step as run;
    /// Every step's outcome, in the order the script defines.
    async fn play(server: &LockWaits<'_>, clients: [&Client; 2]) -> Vec<End> {
        let [a, b] = clients;
        let mut ends = Vec::new();
        // A session-level lock is handed over by an unlock, inside A's open block.
        ends.push(run(a, "BEGIN").await);
        ends.push(run(a, "SELECT pg_advisory_lock(73101)").await);
        let b_waits = run(b, "SELECT pg_advisory_lock(73101)");
        let a_unlocks = async {
            server.waiting(1).await;
            let unlocked = run(a, "SELECT pg_advisory_unlock(73101)").await;
            let tried = run(a, "SELECT pg_try_advisory_lock(73101)").await;
            (unlocked, tried)
        };
        let (b_end, (unlocked, tried_before)) = tokio::join!(b_waits, a_unlocks);
        ends.extend([b_end, unlocked, tried_before]);
        ends.push(run(a, "COMMIT").await);
        ends.push(run(a, "SELECT pg_try_advisory_lock(73101)").await);
        ends.push(run(b, "SELECT pg_advisory_unlock_all()").await);
        // A transaction-level lock is handed over when A commits; B's own, taken outside a
        // block, is gone when its statement ends.
        ends.push(run(a, "BEGIN").await);
        ends.push(run(a, "SELECT pg_advisory_xact_lock(73102)").await);
        let b_waits = run(b, "SELECT pg_advisory_xact_lock(73102)");
        let a_commits = async {
            server.waiting(1).await;
            run(a, "COMMIT").await
        };
        let (b_end, committed) = tokio::join!(b_waits, a_commits);
        ends.extend([b_end, committed]);
        ends.push(run(a, "SELECT pg_try_advisory_lock(73102)").await);
        ends.push(run(a, "SELECT pg_advisory_unlock_all()").await);
        // A deadlock of two session-level locks: B closes the cycle 50 ms after A waited.
        // The victim's failure does not release its session-level locks: B gets A's lock
        // once A unlocks it.
        ends.push(run(a, "SELECT pg_advisory_lock(73103)").await);
        ends.push(run(b, "SELECT pg_advisory_lock(73104)").await);
        let a_waits = async {
            let waited = run(a, "SELECT pg_advisory_lock(73104)").await;
            let unlocked = run(a, "SELECT pg_advisory_unlock(73103)").await;
            (waited, unlocked)
        };
        let b_closes = async {
            server.waiting(1).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            run(b, "SELECT pg_advisory_lock(73103)").await
        };
        let ((a_end, unlocked), b_end) = tokio::join!(a_waits, b_closes);
        ends.extend([a_end, unlocked, b_end]);
        for client in [a, b] {
            ends.push(run(client, "SELECT pg_advisory_unlock_all()").await);
        }
        ends
    }
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let (schema, admin) = Schema::create(&url, "advisory_waits").await;
        let mut real = Vec::new();
        let mut pids = Vec::new();
        for _ in 0..2 {
            let (client, _) = connect_real(&url).await;
            client
                .batch_execute(&format!(
                    "SET deadlock_timeout = '{}ms'",
                    TIMEOUT.as_millis()
                ))
                .await
                .expect("set the session up");
            let pid: i32 = client
                .query_one("SELECT pg_backend_pid()", &[])
                .await
                .expect("the backend's pid")
                .get(0);
            pids.push(pid);
            real.push(client);
        }
        let real_server = LockWaits::Real {
            admin: &admin,
            pids,
        };
        let postgres = Rc::new(RefCell::new(Postgres::new()));
        let server =
            PgServer::new(postgres.clone(), Rc::new(NoopObserver)).with_deadlock_timeout(TIMEOUT);
        let (stand_in, accept_loop) = serve_stand_in(server, 2).await;
        let stand_in: Vec<Client> = stand_in.into_iter().map(|(client, _)| client).collect();
        let real_ends = play(&real_server, [&real[0], &real[1]]).await;
        let ours = play(
            &LockWaits::StandInSessions(&postgres),
            [&stand_in[0], &stand_in[1]],
        )
        .await;
        // What PostgreSQL does, so that a change on its side shows here first.
        let deadlock = Err(("40P01".to_string(), "deadlock detected".to_string()));
        assert_eq!(real_ends[2], Ok(String::new()), "B got the lock A unlocked");
        assert_eq!(real_ends[4], Ok("f".to_string()), "B holds it now");
        assert_eq!(real_ends[12], Ok("t".to_string()), "B's xact lock ended");
        assert_eq!(real_ends[16], deadlock, "A waited first and fails");
        assert_eq!(real_ends[17], Ok("t".to_string()), "A still held its lock");
        assert_eq!(real_ends[18], Ok(String::new()), "B then gets A's lock");
        assert_eq!(ours, real_ends, "stand-in vs PostgreSQL, step by step");
        accept_loop.abort();
        drop(schema);
    });
}

/// Plays `script`, simple queries on two sessions (true: the first), on PostgreSQL (in a
/// schema of its own, named after `schema`) and on a stand-in, and checks that both end every
/// step alike and that each took at least `limit` per statement the real server cut short
/// with `lock_timeout` (55P03). Returns the step ends and which steps were cut short.
fn same_waits_on_both(
    url: &str,
    schema: &str,
    script: &[(bool, &str)],
    limit: Duration,
) -> (Vec<StepEnd>, Vec<usize>) {
    async fn play(script: &[(bool, &str)], first: &Client, second: &Client) -> Vec<StepEnd> {
        let mut ends = Vec::with_capacity(script.len());
        for &(by_first, sql) in script {
            ends.push(simple_step(if by_first { first } else { second }, sql).await);
        }
        ends
    }
    let local = LocalSet::new();
    local.block_on(&runtime(), async {
        let (schema, _admin) = Schema::create(url, schema).await;
        let (real_a, real_b) = real_pair(url, &format!("SET search_path = {}", schema.name)).await;
        let server = PgServer::new(
            Rc::new(RefCell::new(Postgres::new())),
            Rc::new(NoopObserver),
        )
        .with_deadlock_timeout(Duration::from_secs(1));
        let (stand_in, accept_loop) = serve_stand_in(server, 2).await;
        let stand_in: Vec<Client> = stand_in.into_iter().map(|(client, _)| client).collect();

        let started = Instant::now();
        let real = play(script, &real_a, &real_b).await;
        let real_took = started.elapsed();
        let started = Instant::now();
        let ours = play(script, &stand_in[0], &stand_in[1]).await;
        let ours_took = started.elapsed();
        assert_eq!(ours, real, "stand-in vs PostgreSQL");
        let lock_timeout = Err((
            "55P03".to_string(),
            "canceling statement due to lock timeout".to_string(),
        ));
        let waited: Vec<usize> = (0..real.len())
            .filter(|&i| real[i] == lock_timeout)
            .collect();
        for took in [real_took, ours_took] {
            assert!(took >= limit * waited.len() as u32, "{took:?}");
        }
        accept_loop.abort();
        drop(schema);
        (real, waited)
    })
}

/// DDL in a block holds what it changed until the block ends: another session's statement on
/// a table the block truncated or dropped waits, as does creating a relation under a name the
/// block created, while reading a table the block created answers at once that there is none;
/// a rollback (also to a savepoint) gives everything back and lets go of it. Each wait is seen
/// through `lock_timeout` (55P03 after it), on PostgreSQL and on the stand-in.
#[test]
fn ddl_in_a_block_holds_what_it_changed_until_the_block_ends() {
    let Some(url) = database_url("ddl_in_a_block_holds_what_it_changed_until_the_block_ends")
    else {
        return;
    };
    // (true: the holder, false: the other session, whose waits lock_timeout cuts short).
    let script = [
        (false, "CREATE TABLE t (id int PRIMARY KEY, v text)"),
        (false, "INSERT INTO t VALUES (1, 'x')"),
        (false, "SET lock_timeout = '0.2s'"),
        (true, "BEGIN"),
        (true, "CREATE TABLE fresh (a int)"),
        (false, "SELECT count(*) FROM fresh"),
        (false, "CREATE TABLE fresh (b int)"),
        (true, "TRUNCATE t"),
        (false, "SELECT v FROM t"),
        (false, "INSERT INTO t VALUES (2, 'y')"),
        (true, "ROLLBACK"),
        (false, "SELECT v FROM t ORDER BY id"),
        (false, "SELECT count(*) FROM fresh"),
        (true, "BEGIN"),
        (true, "DROP TABLE t"),
        (false, "SELECT v FROM t"),
        (false, "DROP TABLE t"),
        (true, "COMMIT"),
        (false, "SELECT v FROM t"),
        (true, "BEGIN"),
        (true, "CREATE TABLE t (id int)"),
        (true, "SAVEPOINT s"),
        (true, "CREATE TABLE u (id int)"),
        (true, "ROLLBACK TO s"),
        (false, "CREATE TABLE u (id int)"),
        (true, "INSERT INTO t VALUES (7)"),
        (true, "COMMIT"),
        (false, "SELECT count(*) FROM t"),
        (false, "SELECT count(*) FROM u"),
    ];
    let (real, waited) = same_waits_on_both(&url, "ddl_hold", &script, Duration::from_millis(200));
    assert_eq!(waited, [6, 8, 9, 15, 16], "{real:?}");
    assert_eq!(real[11], Ok("x".to_string()));
    assert_eq!(real[27], Ok("1".to_string()));
}

/// A unique index makes a writer wait for the transaction that wrote a row with the same key
/// (or deleted or changed one that had it), then refuses or lets it through as that
/// transaction ended; `CREATE INDEX` waits for a transaction that wrote a row of the table.
/// Each wait is seen through `lock_timeout` (55P03 after it), on PostgreSQL and on the stand-in.
#[test]
fn a_unique_key_waits_for_the_transaction_that_wrote_it() {
    let Some(url) = database_url("a_unique_key_waits_for_the_transaction_that_wrote_it") else {
        return;
    };
    // (true: the holder, false: the waiter, whose waits lock_timeout cuts short).
    let script = [
        (
            false,
            "CREATE TABLE keys (id int PRIMARY KEY, k text UNIQUE)",
        ),
        (false, "SET lock_timeout = '0.2s'"),
        (true, "BEGIN"),
        (true, "INSERT INTO keys VALUES (1, 'x')"),
        (false, "INSERT INTO keys VALUES (2, 'x')"),
        (false, "INSERT INTO keys VALUES (2, 'y')"),
        (
            false,
            "INSERT INTO keys VALUES (3, 'x') ON CONFLICT DO NOTHING",
        ),
        (
            false,
            "INSERT INTO keys VALUES (3, 'x') ON CONFLICT (k) DO UPDATE SET id = 30",
        ),
        (false, "UPDATE keys SET k = 'x' WHERE id = 2"),
        (false, "UPDATE keys SET id = 20 WHERE id = 2"),
        (false, "CREATE INDEX ON keys (k)"),
        (true, "COMMIT"),
        (false, "INSERT INTO keys VALUES (4, 'x')"),
        (true, "BEGIN"),
        (true, "UPDATE keys SET k = 'z' WHERE id = 1"),
        (false, "INSERT INTO keys VALUES (4, 'x')"),
        (false, "INSERT INTO keys VALUES (4, 'z')"),
        (true, "ROLLBACK"),
        (true, "BEGIN"),
        (true, "DELETE FROM keys WHERE id = 1"),
        (false, "INSERT INTO keys VALUES (4, 'x')"),
        (true, "COMMIT"),
        (false, "INSERT INTO keys VALUES (4, 'x') RETURNING id"),
        (false, "SELECT id || '=' || k FROM keys ORDER BY id"),
    ];
    let (real, waited) =
        same_waits_on_both(&url, "unique_wait", &script, Duration::from_millis(200));
    assert_eq!(waited, [4, 6, 7, 8, 10, 15, 16, 20], "{real:?}");
    assert_eq!(real.last(), Some(&Ok("4=x,20=y".to_string())));
}
