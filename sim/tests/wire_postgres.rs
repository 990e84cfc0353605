//! The PostgreSQL stand-in served on turmoil's network, driven by `tokio-postgres` (and, for
//! what that client does not expose, by raw protocol messages).

mod wire_support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use bytes::BytesMut;
use leaselab_model::postgres::Wallet;
use leaselab_sim::clients::{postgres_sim, POSTGRES_HOST, POSTGRES_PORT};
use leaselab_sim::observer::{NoopObserver, Observer, TextLog};
use postgres_protocol::message::{backend, frontend};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_postgres::error::SqlState;
use tokio_postgres::SimpleQueryMessage;
use wire_support::{serve_postgres, sim, wallets};

const SELECT_WALLET: &str = "SELECT balance, fence FROM wallets WHERE id = 1";
const FENCED_WRITE: &str =
    "UPDATE wallets SET balance = $1, fence = $2 WHERE id = 1 AND fence < $2";

fn noop() -> Rc<dyn Observer> {
    Rc::new(NoopObserver)
}

#[test]
fn select_returns_a_row_of_bigints_in_binary_and_text() {
    let mut sim = sim(1);
    serve_postgres(&mut sim, wallets(), noop());
    sim.client("caller", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        let row = client.query_one(SELECT_WALLET, &[]).await?;
        assert_eq!(row.columns()[0].name(), "balance");
        assert_eq!(row.columns()[1].type_(), &tokio_postgres::types::Type::INT8);
        assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>("fence")), (100, 0));

        let messages = client.simple_query(SELECT_WALLET).await?;
        let SimpleQueryMessage::Row(row) = &messages[1] else {
            panic!("{messages:?}")
        };
        assert_eq!((row.get(0), row.get("fence")), (Some("100"), Some("0")));
        let SimpleQueryMessage::CommandComplete(rows) = messages[2] else {
            panic!("{messages:?}")
        };
        assert_eq!(rows, 1);
        Ok(())
    });
    sim.run().unwrap();
}

#[test]
fn fenced_update_affects_one_row_then_none() {
    let postgres = wallets();
    let mut sim = sim(2);
    serve_postgres(&mut sim, postgres.clone(), noop());
    sim.client("caller", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        let first = client.execute(FENCED_WRITE, &[&90i64, &5i64]).await?;
        let stale = client.execute(FENCED_WRITE, &[&80i64, &5i64]).await?;
        assert_eq!((first, stale), (1, 0));
        // A prepared statement reused with int4 parameters declared by the client.
        let statement = client
            .prepare_typed(FENCED_WRITE, &[tokio_postgres::types::Type::INT4; 2])
            .await?;
        assert_eq!(client.execute(&statement, &[&70i32, &6i32]).await?, 1);
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        postgres.borrow().wallet(1),
        Some(Wallet {
            balance: 70,
            fence: 6
        })
    );
}

#[test]
fn check_violation_reaches_the_client_with_its_sqlstate_and_detail() {
    let mut sim = sim(3);
    serve_postgres(&mut sim, wallets(), noop());
    sim.client("caller", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        let error = client
            .execute(FENCED_WRITE, &[&-5i64, &1i64])
            .await
            .unwrap_err();
        let db = error.as_db_error().expect("a server error");
        assert_eq!(db.code(), &SqlState::CHECK_VIOLATION);
        assert_eq!(db.severity(), "ERROR");
        assert_eq!(
            db.message(),
            "new row for relation \"wallets\" violates check constraint \"wallets_balance_check\""
        );
        assert_eq!(db.detail(), Some("Failing row contains (1, -5, 1)."));

        let error = client
            .batch_execute("SELECT t.id FROM wallets w, LATERAL (SELECT w.id) AS t")
            .await
            .unwrap_err();
        assert_eq!(
            error.as_db_error().unwrap().code(),
            &SqlState::FEATURE_NOT_SUPPORTED
        );
        // The connection is still usable after both errors.
        let row = client.query_one(SELECT_WALLET, &[]).await?;
        assert_eq!(row.get::<_, i64>(0), 100);
        Ok(())
    });
    sim.run().unwrap();
}

/// Wallet 1's fence goes to 10 in caller A's open transaction; caller B's write with fence 7
/// waits for A's row lock and, after A commits, re-evaluates `fence < 7` against the new row.
#[test]
fn update_waits_for_the_row_lock_and_reevaluates_after_commit() {
    let postgres = wallets();
    let log = Rc::new(TextLog::new());
    let mut sim = sim(4);
    serve_postgres(&mut sim, postgres.clone(), log.clone());
    let committed_at = Rc::new(RefCell::new(None));
    let committed_at_a = committed_at.clone();
    sim.client("caller-a", async move {
        let mut client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        let transaction = client.transaction().await?;
        assert_eq!(
            transaction.execute(FENCED_WRITE, &[&80i64, &10i64]).await?,
            1
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        transaction.commit().await?;
        *committed_at_a.borrow_mut() = Some(turmoil::sim_elapsed().unwrap());
        Ok(())
    });
    let committed_at_b = committed_at.clone();
    sim.client("caller-b", async move {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let rows = client.execute(FENCED_WRITE, &[&95i64, &7i64]).await?;
        let finished_at = turmoil::sim_elapsed().unwrap();
        assert_eq!(rows, 0, "the stale fence must lose after the commit");
        let committed_at = committed_at_b.borrow().expect("A committed first");
        assert!(
            finished_at >= committed_at,
            "B finished at {finished_at:?}, before A's commit at {committed_at:?}"
        );
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        postgres.borrow().wallet(1),
        Some(Wallet {
            balance: 80,
            fence: 10
        })
    );
    let text = log.text();
    let blocked = text
        .lines()
        .position(|line| line.contains("params=[95, 7] blocked_by_session="))
        .unwrap_or_else(|| panic!("no wait recorded:\n{text}"));
    let commit = text
        .lines()
        .position(|line| line.contains("sql=\"COMMIT\""))
        .unwrap();
    let retried = text
        .lines()
        .position(|line| line.contains("params=[95, 7] ok tag=\"UPDATE 0\""))
        .unwrap_or_else(|| panic!("no re-executed update:\n{text}"));
    assert!(blocked < commit && commit < retried, "{text}");
}

/// A waiting writer proceeds with the original row when the lock holder disconnects (its
/// transaction is rolled back).
#[test]
fn a_disconnect_rolls_back_and_releases_the_waiting_writer() {
    let postgres = wallets();
    let mut sim = sim(5);
    serve_postgres(&mut sim, postgres.clone(), noop());
    sim.client("caller-a", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        client.batch_execute("BEGIN").await?;
        client.execute(FENCED_WRITE, &[&80i64, &10i64]).await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(client);
        Ok(())
    });
    sim.client("caller-b", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(client.execute(FENCED_WRITE, &[&95i64, &7i64]).await?, 1);
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        postgres.borrow().wallet(1),
        Some(Wallet {
            balance: 95,
            fence: 7
        })
    );
}

/// An error the server raises itself (an unsupported statement) inside a transaction block
/// aborts the block at once, as PostgreSQL does: the row lock is released and the waiting
/// writer goes on with the original row while the block is still open.
#[test]
fn a_wire_error_in_a_block_releases_its_locks_at_once() {
    let postgres = wallets();
    let mut sim = sim(7);
    serve_postgres(&mut sim, postgres.clone(), noop());
    sim.client("caller-a", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        client.batch_execute("BEGIN").await?;
        client.execute(FENCED_WRITE, &[&80i64, &10i64]).await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let error = client.batch_execute("VACUUM wallets").await.unwrap_err();
        assert_eq!(
            error.as_db_error().unwrap().code(),
            &SqlState::FEATURE_NOT_SUPPORTED
        );
        let error = client.query(SELECT_WALLET, &[]).await.unwrap_err();
        assert_eq!(
            error.as_db_error().unwrap().code(),
            &SqlState::IN_FAILED_SQL_TRANSACTION
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        client.batch_execute("ROLLBACK").await?;
        Ok(())
    });
    sim.client("caller-b", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        tokio::time::sleep(Duration::from_millis(20)).await;
        let started = tokio::time::Instant::now();
        assert_eq!(client.execute(FENCED_WRITE, &[&95i64, &7i64]).await?, 1);
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(70) && waited < Duration::from_millis(150),
            "waited {waited:?}: should end at A's error, not at A's ROLLBACK"
        );
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        postgres.borrow().wallet(1),
        Some(Wallet {
            balance: 95,
            fence: 7
        })
    );
}

/// Raw protocol: a client that speaks the messages itself.
struct RawClient {
    stream: turmoil::net::TcpStream,
    input: BytesMut,
}

impl RawClient {
    async fn connect() -> std::io::Result<RawClient> {
        let stream = turmoil::net::TcpStream::connect((POSTGRES_HOST, POSTGRES_PORT)).await?;
        let mut client = RawClient {
            stream,
            input: BytesMut::new(),
        };
        let mut buf = BytesMut::new();
        frontend::ssl_request(&mut buf);
        client.stream.write_all(&buf).await?;
        let mut answer = [0u8];
        client.stream.read_exact(&mut answer).await?;
        assert_eq!(&answer, b"N");
        let mut buf = BytesMut::new();
        frontend::startup_message([("user", "raw")], &mut buf)?;
        client.stream.write_all(&buf).await?;
        Ok(client)
    }

    async fn send(&mut self, write: impl FnOnce(&mut BytesMut)) -> std::io::Result<()> {
        let mut buf = BytesMut::new();
        write(&mut buf);
        self.stream.write_all(&buf).await
    }

    async fn next(&mut self) -> std::io::Result<backend::Message> {
        loop {
            if let Some(message) = backend::Message::parse(&mut self.input)? {
                return Ok(message);
            }
            let mut chunk = [0u8; 4096];
            let read = self.stream.read(&mut chunk).await?;
            assert!(read > 0, "server closed the connection");
            self.input.extend_from_slice(&chunk[..read]);
        }
    }

    /// Short names of the messages up to and including ReadyForQuery, which is shown with
    /// its status (`Z:I`).
    async fn until_ready(&mut self) -> std::io::Result<Vec<String>> {
        let mut names = Vec::new();
        loop {
            let message = self.next().await?;
            let name = match &message {
                backend::Message::ReadyForQuery(body) => {
                    format!("Z:{}", body.status() as char)
                }
                backend::Message::ErrorResponse(body) => {
                    use tokio_postgres::fallible_iterator::FallibleIterator;
                    let code = body
                        .fields()
                        .find(|field| Ok(field.type_() == b'C'))
                        .unwrap()
                        .map(|field| String::from_utf8_lossy(field.value_bytes()).into_owned());
                    format!("E:{}", code.unwrap_or_default())
                }
                backend::Message::NoticeResponse(_) => "N".to_string(),
                backend::Message::AuthenticationOk => "R".to_string(),
                backend::Message::ParameterStatus(_) => continue,
                backend::Message::BackendKeyData(_) => "K".to_string(),
                backend::Message::RowDescription(_) => "T".to_string(),
                backend::Message::DataRow(_) => "D".to_string(),
                backend::Message::CommandComplete(body) => format!("C:{}", body.tag()?),
                backend::Message::ParseComplete => "1".to_string(),
                backend::Message::BindComplete => "2".to_string(),
                backend::Message::CloseComplete => "3".to_string(),
                backend::Message::NoData => "n".to_string(),
                backend::Message::ParameterDescription(_) => "t".to_string(),
                backend::Message::EmptyQueryResponse => "I".to_string(),
                backend::Message::PortalSuspended => "s".to_string(),
                _ => "?".to_string(),
            };
            let done = name.starts_with("Z:");
            names.push(name);
            if done {
                return Ok(names);
            }
        }
    }
}

#[test]
fn raw_protocol_transaction_states_errors_and_skip_to_sync() {
    let mut sim = sim(6);
    serve_postgres(&mut sim, wallets(), noop());
    sim.client("raw", async {
        let mut client = RawClient::connect().await?;
        assert_eq!(client.until_ready().await?, ["R", "K", "Z:I"]);

        client
            .send(|buf| frontend::query("BEGIN", buf).unwrap())
            .await?;
        assert_eq!(client.until_ready().await?, ["C:BEGIN", "Z:T"]);
        client
            .send(|buf| frontend::query("BEGIN", buf).unwrap())
            .await?;
        assert_eq!(client.until_ready().await?, ["N", "C:BEGIN", "Z:T"]);
        client
            .send(|buf| frontend::query("SELECT nope FROM wallets", buf).unwrap())
            .await?;
        assert_eq!(client.until_ready().await?, ["E:42703", "Z:E"]);
        client
            .send(|buf| frontend::query(SELECT_WALLET, buf).unwrap())
            .await?;
        assert_eq!(client.until_ready().await?, ["E:25P02", "Z:E"]);
        // COMMIT of a failed block rolls back.
        client
            .send(|buf| frontend::query("COMMIT", buf).unwrap())
            .await?;
        assert_eq!(client.until_ready().await?, ["C:ROLLBACK", "Z:I"]);

        // Several statements in one Query; an empty one.
        let query = format!("BEGIN; {SELECT_WALLET}; COMMIT;");
        client
            .send(|buf| frontend::query(&query, buf).unwrap())
            .await?;
        assert_eq!(
            client.until_ready().await?,
            ["C:BEGIN", "T", "D", "C:SELECT 1", "C:COMMIT", "Z:I"]
        );
        client
            .send(|buf| frontend::query(" ; ", buf).unwrap())
            .await?;
        assert_eq!(client.until_ready().await?, ["I", "Z:I"]);

        // Extended protocol: an error skips everything up to Sync.
        client
            .send(|buf| {
                frontend::parse("", "SELECT nope", [], buf).unwrap();
                frontend::describe(b'S', "", buf).unwrap();
                frontend::execute("", 0, buf).unwrap();
                frontend::sync(buf);
            })
            .await?;
        assert_eq!(client.until_ready().await?, ["E:42703", "Z:I"]);

        // A wrong parameter count at Bind; then a full round with a row limit.
        client
            .send(|buf| {
                frontend::parse("w", FENCED_WRITE, [], buf).unwrap();
                frontend::bind("", "w", [0], [b"1".to_vec()], text_param, [], buf)
                    .map_err(|_| "bind")
                    .unwrap();
                frontend::sync(buf);
            })
            .await?;
        assert_eq!(client.until_ready().await?, ["1", "E:08P01", "Z:I"]);
        client
            .send(|buf| {
                frontend::parse("s", SELECT_WALLET, [], buf).unwrap();
                frontend::describe(b'S', "s", buf).unwrap();
                frontend::bind("p", "s", [], Vec::<Vec<u8>>::new(), text_param, [1], buf)
                    .map_err(|_| "bind")
                    .unwrap();
                frontend::describe(b'P', "p", buf).unwrap();
                frontend::execute("p", 0, buf).unwrap();
                frontend::execute("p", 0, buf).unwrap();
                frontend::close(b'S', "s", buf).unwrap();
                frontend::sync(buf);
            })
            .await?;
        assert_eq!(
            client.until_ready().await?,
            [
                "1",
                "t",
                "T",
                "2",
                "T",
                "D",
                "C:SELECT 1",
                "C:SELECT 0",
                "3",
                "Z:I"
            ]
        );
        client.send(frontend::terminate).await?;
        Ok(())
    });
    sim.run().unwrap();
}

fn text_param(
    value: Vec<u8>,
    buf: &mut BytesMut,
) -> Result<postgres_protocol::IsNull, Box<dyn std::error::Error + Sync + Send>> {
    buf.extend_from_slice(&value);
    Ok(postgres_protocol::IsNull::No)
}

/// Timestamps travel in binary both ways (microseconds since 2000-01-01): a parameter read
/// back, moved by an interval, and `now()` on a server whose driver set no clock (the
/// simulation's epoch, 2024-01-01 UTC).
#[test]
fn timestamps_travel_in_binary_both_ways() {
    use std::time::{SystemTime, UNIX_EPOCH};
    let mut sim = sim(7);
    serve_postgres(&mut sim, wallets(), noop());
    sim.client("caller", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        let at = UNIX_EPOCH + Duration::from_micros(1_700_000_000_500_000);
        let row = client
            .query_one(
                "SELECT $1::timestamptz, $1::timestamptz + interval '1 day 1 ms', now()",
                &[&at],
            )
            .await?;
        assert_eq!(row.get::<_, SystemTime>(0), at);
        assert_eq!(
            row.get::<_, SystemTime>(1),
            at + Duration::from_secs(86_400) + Duration::from_millis(1)
        );
        assert_eq!(
            row.get::<_, SystemTime>(2),
            UNIX_EPOCH + Duration::from_secs(1_704_067_200)
        );
        Ok(())
    });
    sim.run().unwrap();
}

/// A `uuid` as its 16 bytes in binary format (the client has no uuid type of its own here).
#[derive(Debug, PartialEq)]
struct Uuid16([u8; 16]);

impl tokio_postgres::types::ToSql for Uuid16 {
    fn to_sql(
        &self,
        _: &tokio_postgres::types::Type,
        out: &mut BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(tokio_postgres::types::IsNull::No)
    }
    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        *ty == tokio_postgres::types::Type::UUID
    }
    tokio_postgres::types::to_sql_checked!();
}

impl<'a> tokio_postgres::types::FromSql<'a> for Uuid16 {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Uuid16, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Uuid16(raw.try_into()?))
    }
    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        *ty == tokio_postgres::types::Type::UUID
    }
}

#[test]
fn uuids_travel_in_binary_both_ways() {
    let mut sim = sim(7);
    serve_postgres(&mut sim, wallets(), noop());
    sim.client("caller", async {
        let client = postgres_sim(POSTGRES_HOST, POSTGRES_PORT).await?;
        let token = Uuid16(*b"\xa0\xee\xbc\x99\x9c\x0b\x4e\xf8\xbb\x6d\x6b\xb9\xbd\x38\x0a\x11");
        let row = client
            .query_one(
                "SELECT $1::uuid, $1::uuid::text, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid",
                &[&token],
            )
            .await?;
        assert_eq!(row.get::<_, Uuid16>(0), token);
        assert_eq!(
            row.get::<_, String>(1),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
        assert_eq!(row.get::<_, Uuid16>(2), Uuid16([0xff; 16]));
        Ok(())
    });
    sim.run().unwrap();
}
