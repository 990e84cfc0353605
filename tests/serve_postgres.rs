//! Smoke tests of `leaselab serve postgres`, run as a child process on a free loopback port:
//! `tokio-postgres` and `psql` (when installed) read and debit the tutorial's wallet 42.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

/// A running `leaselab serve postgres`, killed when dropped (also when a test fails).
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_leaselab"))
            .args(["serve", "postgres", "--port", &port.to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start leaselab serve postgres");
        let mut banner = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut banner)
            .expect("read the banner");
        let server = Server { child, port };
        assert!(
            banner.contains(&format!("listening on 127.0.0.1:{port}")),
            "unexpected banner {banner:?}"
        );
        server
    }
}

/// A runtime for one test's client.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Runs `body` with a client of a stand-in served without tables.
fn on_a_stand_in_without_tables<F: std::future::Future<Output = ()>>(
    body: impl FnOnce(tokio_postgres::Client) -> F,
) {
    let server = Server::start(&["--no-wallets"]);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    runtime().block_on(async { body(connect(&url).await).await });
}

/// A client of the served stand-in at `url`.
async fn connect(url: &str) -> tokio_postgres::Client {
    leaselab_sim::clients::postgres_url(url)
        .await
        .expect("connect to leaselab serve postgres")
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn tokio_postgres_reads_and_debits_the_default_wallet() {
    let server = Server::start(&[]);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    runtime().block_on(async {
        let client = connect(&url).await;
        let select = "SELECT balance, fence FROM wallets WHERE id = 42";
        let row = client.query_one(select, &[]).await.expect("wallet 42");
        assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (100, 0));
        let debit = "UPDATE wallets SET balance = balance - $1 WHERE id = 42 AND balance >= $1";
        assert_eq!(client.execute(debit, &[&30i64]).await.expect("debit"), 1);
        assert_eq!(client.execute(debit, &[&80i64]).await.expect("debit"), 0);
        let row = client.query_one(select, &[]).await.expect("wallet 42");
        assert_eq!(row.get::<_, i64>(0), 70);
    });
}

/// A typed client reads a `smallint` column as `i16` and binds `i16` parameters (binary
/// format, two bytes), as it does on PostgreSQL: the stand-in describes the column and the
/// parameter as `int2`.
#[test]
fn tokio_postgres_reads_and_binds_smallint_as_i16() {
    on_a_stand_in_without_tables(|client| async move {
        client
            .batch_execute("CREATE TABLE slots (id int PRIMARY KEY, weight smallint NOT NULL)")
            .await
            .expect("create");
        let insert = "INSERT INTO slots VALUES ($1, $2) RETURNING weight";
        let row = client
            .query_one(insert, &[&1i32, &-7i16])
            .await
            .expect("insert");
        assert_eq!(row.get::<_, i16>(0), -7);
        let select = "SELECT weight, weight + weight, sum(weight) FROM slots WHERE weight = $1 GROUP BY weight";
        let row = client.query_one(select, &[&-7i16]).await.expect("select");
        assert_eq!(
            (
                row.get::<_, i16>(0),
                row.get::<_, i16>(1),
                row.get::<_, i64>(2)
            ),
            (-7, -14, -7)
        );
        let statement = client.prepare(select).await.expect("prepare");
        assert_eq!(statement.params(), [tokio_postgres::types::Type::INT2]);
        let error = client
            .execute("UPDATE slots SET weight = weight * 5000", &[])
            .await
            .expect_err("out of range");
        assert_eq!(
            error.as_db_error().map(|e| e.message()),
            Some("smallint out of range")
        );
    });
}

#[test]
fn tokio_postgres_binds_and_reads_arrays_in_binary() {
    on_a_stand_in_without_tables(|client| async move {
        client
            .batch_execute(
                "CREATE TABLE jobs (id bigint PRIMARY KEY, state text NOT NULL, tags text[]); \
                 INSERT INTO jobs VALUES (1, 'ready', NULL), (2, 'ready', NULL), (3, 'done', NULL)",
            )
            .await
            .expect("set up");
        // The batch claim: a list of ids bound as one bigint[] parameter.
        let claim =
            "UPDATE jobs SET state = 'claimed' WHERE id = ANY($1) AND state = 'ready' RETURNING id";
        let statement = client.prepare(claim).await.expect("prepare");
        assert_eq!(
            statement.params(),
            [tokio_postgres::types::Type::INT8_ARRAY]
        );
        let ids: Vec<i64> = vec![1, 3, 9];
        let rows = client.query(&statement, &[&ids]).await.expect("claim");
        let claimed: Vec<i64> = rows.iter().map(|row| row.get(0)).collect();
        assert_eq!(claimed, [1]);
        // Text arrays both ways, a NULL element kept.
        let tags: Vec<Option<String>> = vec![Some("a b".into()), None, Some("\"q\"".into())];
        let row = client
            .query_one(
                "UPDATE jobs SET tags = $1 WHERE id = 2 RETURNING tags",
                &[&tags],
            )
            .await
            .expect("tags");
        assert_eq!(row.get::<_, Vec<Option<String>>>(0), tags);
        let row = client
            .query_one(
                "SELECT array_agg(id), cardinality(max(tags)) FROM jobs WHERE state = ANY($1)",
                &[&vec!["claimed", "ready"]],
            )
            .await
            .expect("aggregate");
        let mut ids: Vec<i64> = row.get(0);
        ids.sort_unstable();
        assert_eq!((ids, row.get::<_, i32>(1)), (vec![1, 2], 3));
        // An empty array binds and reads back empty; a list of numbers is refused for a
        // text[] parameter (the client checks the type the server described).
        let empty: Vec<i64> = Vec::new();
        let row = client
            .query_one("SELECT $1::bigint[] || 5::bigint", &[&empty])
            .await
            .expect("empty");
        assert_eq!(row.get::<_, Vec<i64>>(0), [5]);
        let error = client
            .query_one("SELECT id FROM jobs WHERE state = ANY($1)", &[&vec![1i64]])
            .await
            .expect_err("wrong element type");
        assert!(
            error.to_string().contains("serializing parameter 0"),
            "{error}"
        );
    });
}

/// `pg_sleep` holds its session's answer for the time asked, on the server's clock, while
/// another session's statements go on; a lock taken before it is held all along (the classic
/// way to watch a lock in psql).
#[test]
fn pg_sleep_holds_the_answer_and_the_locks_taken_before_it() {
    let server = Server::start(&["--no-wallets"]);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    runtime().block_on(async {
        let (sleeper, other) = (connect(&url).await, connect(&url).await);
        sleeper
            .batch_execute(
                "CREATE TABLE jobs (id int PRIMARY KEY, state text); \
                 INSERT INTO jobs VALUES (1, 'new')",
            )
            .await
            .expect("a table");
        sleeper
            .batch_execute("BEGIN; LOCK TABLE jobs IN EXCLUSIVE MODE")
            .await
            .expect("the lock");
        let started = std::time::Instant::now();
        let sleep = sleeper.batch_execute("SELECT pg_sleep(0.3); COMMIT");
        let write = async {
            // Wait until the sleep has started, then write: the EXCLUSIVE lock holds it up.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let read = other
                .query_one("SELECT state FROM jobs", &[])
                .await
                .expect("a read goes on beside EXCLUSIVE");
            assert_eq!(read.get::<_, String>(0), "new");
            assert!(started.elapsed() < std::time::Duration::from_millis(250));
            other
                .execute("UPDATE jobs SET state = 'done'", &[])
                .await
                .expect("the write, once the sleeper committed");
            started.elapsed()
        };
        let (slept, written_after) = tokio::join!(sleep, write);
        slept.expect("pg_sleep and COMMIT");
        let slept_for = started.elapsed();
        assert!(
            written_after >= std::time::Duration::from_millis(300),
            "the UPDATE waited for the lock: {written_after:?}"
        );
        assert!(
            slept_for >= std::time::Duration::from_millis(300),
            "{slept_for:?}"
        );
    });
}

#[test]
fn psql_reads_the_wallets_given_on_the_command_line() {
    let server = Server::start(&["--wallet", "7=250", "--wallet", "8=0"]);
    let output = match Command::new("psql")
        .args(["-h", "127.0.0.1", "-p", &server.port.to_string()])
        .args(["-U", "postgres", "-d", "postgres", "-X", "-A", "-t", "-c"])
        .arg("SELECT balance, fence FROM wallets WHERE id = 7")
        .stdin(Stdio::null())
        .output()
    {
        Ok(output) => output,
        Err(_) => {
            eprintln!(
                "psql_reads_the_wallets_given_on_the_command_line: skipped: psql is not \
                 installed"
            );
            return;
        }
    };
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "250|0");
}

/// The tutorial's own schema, load and checks run unchanged (simple and extended protocol,
/// the id as a parameter, RETURNING) on a stand-in started without tables.
#[test]
fn the_tutorials_sql_runs_unchanged() {
    on_a_stand_in_without_tables(|client| async move {
        client
            .batch_execute(
                "CREATE TABLE wallets (
                    id      bigint PRIMARY KEY,
                    balance bigint NOT NULL CHECK (balance >= 0),
                    fence   bigint NOT NULL DEFAULT 0  -- highest fencing token that has written
                );

                INSERT INTO wallets (id, balance) VALUES (42, 100);",
            )
            .await
            .expect("the tutorial's schema.sql");
        let all = client
            .query("SELECT * FROM wallets", &[])
            .await
            .expect("SELECT *");
        let row = &all[0];
        assert_eq!(
            (
                row.get::<_, i64>(0),
                row.get::<_, i64>(1),
                row.get::<_, i64>(2)
            ),
            (42, 100, 0)
        );
        let debit = "UPDATE wallets SET balance = balance - 10 WHERE id = 42 AND balance >= 10";
        assert_eq!(client.execute(debit, &[]).await.expect("debit"), 1);
        let returning = client
            .query_one(
                "UPDATE wallets SET balance = balance - $1 WHERE id = $2 AND balance >= $1 RETURNING balance",
                &[&5i64, &42i64],
            )
            .await
            .expect("debit with RETURNING");
        assert_eq!(returning.get::<_, i64>(0), 85);
        let reset = "UPDATE wallets SET balance = 100, fence = 0 WHERE id = 42";
        assert_eq!(client.execute(reset, &[]).await.expect("reset"), 1);
        let row = client
            .query_one("SELECT balance FROM wallets WHERE id = 42", &[])
            .await
            .expect("SELECT balance");
        assert_eq!(row.get::<_, i64>(0), 100);
        let error = client
            .batch_execute("BEGIN; SELEC 1")
            .await
            .expect_err("a syntax error");
        let db = error.as_db_error().expect("a server error");
        assert_eq!(db.code().code(), "42601");
        assert_eq!(db.message(), "syntax error at or near \"SELEC\"");
        // Nothing ran: the session is not in a block.
        client.batch_execute("COMMIT").await.expect("COMMIT");
    });
}

/// Unknown roles and databases are refused as PostgreSQL refuses them, unless named with
/// `--role` / `--database`.
#[test]
fn unknown_roles_and_databases_are_refused() {
    let server = Server::start(&["--role", "app", "--database", "ledger"]);
    runtime().block_on(async {
        let connect = |user: &str, database: &str| {
            format!("postgres://{user}@127.0.0.1:{}/{database}", server.port)
        };
        let refusal = |url: String| async move {
            let error = leaselab_sim::clients::postgres_url(&url)
                .await
                .expect_err("refused");
            format!("{error}")
        };
        let role = refusal(connect("nobody", "ledger")).await;
        assert!(role.contains("role \"nobody\" does not exist"), "{role}");
        let database = refusal(connect("app", "nosuch")).await;
        assert!(
            database.contains("database \"nosuch\" does not exist"),
            "{database}"
        );
        let client = leaselab_sim::clients::postgres_url(&connect("app", "ledger"))
            .await
            .expect("a known role and database");
        let row = client
            .query_one("SELECT balance FROM wallets WHERE id = 42", &[])
            .await
            .expect("the default wallet");
        assert_eq!(row.get::<_, i64>(0), 100);
    });
}

/// Two sessions lock wallets 1 and 2 in opposite orders. The served stand-in looks for the
/// deadlock only when the first waiter's `--deadlock-timeout` has passed, and fails that
/// waiter (as PostgreSQL does), not the session whose statement closed the cycle.
#[test]
fn a_deadlock_fails_the_first_waiter_after_the_deadlock_timeout() {
    let server = Server::start(&[
        "--wallet",
        "1=100",
        "--wallet",
        "2=100",
        "--deadlock-timeout",
        "200ms",
    ]);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    runtime().block_on(async {
        let a = leaselab_sim::clients::postgres_url(&url).await.expect("a");
        let b = leaselab_sim::clients::postgres_url(&url).await.expect("b");
        let debit = |id: i64| format!("UPDATE wallets SET balance = balance - 10 WHERE id = {id}");
        a.batch_execute(&format!("BEGIN; {}", debit(1)))
            .await
            .expect("a locks 1");
        b.batch_execute(&format!("BEGIN; {}", debit(2)))
            .await
            .expect("b locks 2");
        let started = std::time::Instant::now();
        let a_second = debit(2);
        let a_waits = a.execute(&a_second, &[]);
        let b_waits = async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            b.execute(&debit(1), &[]).await
        };
        let (a_end, b_end) = tokio::join!(a_waits, b_waits);
        let took = started.elapsed();
        let error = a_end.expect_err("the first waiter is the victim");
        let db = error.as_db_error().expect("a server error");
        assert_eq!(
            (db.code().code(), db.message()),
            ("40P01", "deadlock detected")
        );
        assert_eq!(b_end.expect("the other session goes on"), 1);
        assert!(
            took >= std::time::Duration::from_millis(200),
            "took {took:?}"
        );
    });
}

/// The most memory the server process ever held (VmHWM), in KiB, where Linux tells it.
fn peak_kib(server: &Server) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A short query over many rows cannot take all of memory: a statement that comes to hold
/// more than the stand-in's limit (an aggregate gathering big texts, a sort of them, a join
/// copying big stored rows) fails with PostgreSQL's 53200 `out of memory`, the server's peak
/// stays near the limit, and the session goes on.
#[test]
fn a_statement_that_would_hold_too_much_memory_fails_with_53200() {
    let limit_mib = leaselab_model::memory::STATEMENT_MEMORY_LIMIT_BYTES >> 20;
    let server = Server::start(&["--no-wallets"]);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    runtime().block_on(async {
        let client = connect(&url).await;
        client
            .batch_execute(
                "CREATE TABLE big (t text); \
                 INSERT INTO big SELECT repeat('x', 20000000) FROM generate_series(1, 8)",
            )
            .await
            .expect("160 MB of rows are within the limit");
        for sql in [
            // array_agg gathers 1 GB before array_to_string could refuse its length.
            "SELECT length(array_to_string(array_agg(repeat('x', 10000000)), '')) \
             FROM generate_series(1, 100)",
            "SELECT length(r) FROM (SELECT repeat('x', 10000000) r \
             FROM generate_series(1, 100) ORDER BY 1) s LIMIT 1",
            // 64 pairs of 20 MB rows: 2.5 GB of copies before any expression runs, by
            // either way of joining.
            "SELECT count(*) FROM big a, big b",
            "SELECT count(*) FROM big a CROSS JOIN big b",
        ] {
            let error = client
                .simple_query(sql)
                .await
                .expect_err("past the statement's memory limit");
            let db = error.as_db_error().expect("a server error");
            assert_eq!(
                (db.code().code(), db.message()),
                ("53200", "out of memory"),
                "{sql}"
            );
            let detail = db.detail().expect("a DETAIL");
            assert!(
                detail.contains(&format!("past the {limit_mib} MiB")),
                "{detail}"
            );
            let row = client
                .query_one("SELECT 1", &[])
                .await
                .expect("the session goes on");
            assert_eq!(row.get::<_, i32>(0), 1);
        }
        let within = client
            .query_one(
                "SELECT count(*) FROM (SELECT repeat('x', 1000000) r \
                 FROM generate_series(1, 200) ORDER BY 1) s",
                &[],
            )
            .await
            .expect("200 MB held at once is within the limit");
        assert_eq!(within.get::<_, i64>(0), 200);
    });
    if let Some(peak) = peak_kib(&server) {
        let limit_kib = u64::try_from(limit_mib).expect("MiB") * 1024;
        assert!(
            peak < 3 * limit_kib,
            "the server peaked at {peak} KiB against a {limit_kib} KiB statement limit"
        );
    }
}
