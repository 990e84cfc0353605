//! Table locks (`model/src/postgres/table_lock.rs`) on three sessions, which the two-session
//! differential (`tests/fidelity_postgres.rs`) cannot play: the queue behind a waiting `LOCK`
//! (run against PostgreSQL 15 with three psql sessions and `pg_locks`: a plain `SELECT` that
//! comes after a waiting `LOCK TABLE` waits behind it), DDL waiting for a reader, a deadlock
//! of table locks, and the state a second read of a table leaves.

use leaselab_model::postgres::exec::SqlExec;
use leaselab_model::postgres::sql::parse_general;
use leaselab_model::postgres::{DeadlockCheck, Postgres, SessionId};

/// Runs `sql` in `session`: `Ok(tag)`, `Err(sqlstate)` or, when it waits, `Blocked`.
#[derive(Debug, PartialEq, Eq)]
enum Ran {
    Tag(String),
    Error(String),
    Blocked(SessionId),
}

fn run(db: &mut Postgres, session: SessionId, sql: &str) -> Ran {
    let statement = parse_general(sql).expect("parses");
    match db.execute_sql(session, &statement, &[]).exec {
        SqlExec::Done(Ok(result)) => Ran::Tag(result.tag),
        SqlExec::Done(Err(error)) => Ran::Error(error.code.to_string()),
        SqlExec::Blocked { by } => Ran::Blocked(by),
    }
}

fn tag(text: &str) -> Ran {
    Ran::Tag(text.to_string())
}

fn three_sessions() -> (Postgres, SessionId, SessionId, SessionId) {
    let mut db = Postgres::new();
    let (a, b, c) = (db.connect(), db.connect(), db.connect());
    assert_eq!(
        run(
            &mut db,
            a,
            "CREATE TABLE jobs (id bigint PRIMARY KEY, state text)"
        ),
        tag("CREATE TABLE")
    );
    assert_eq!(
        run(&mut db, a, "INSERT INTO jobs VALUES (1, 'new')"),
        tag("INSERT 0 1")
    );
    (db, a, b, c)
}

#[test]
fn a_reader_after_a_waiting_lock_table_waits_behind_it() {
    let (mut db, a, b, c) = three_sessions();
    assert_eq!(run(&mut db, a, "BEGIN"), tag("BEGIN"));
    assert_eq!(
        run(&mut db, a, "SELECT count(*) FROM jobs"),
        tag("SELECT 1")
    );
    assert_eq!(run(&mut db, b, "BEGIN"), tag("BEGIN"));
    assert_eq!(run(&mut db, b, "LOCK TABLE jobs"), Ran::Blocked(a));
    // C's ACCESS SHARE conflicts with the ACCESS EXCLUSIVE B waits for: it queues behind B.
    assert_eq!(
        run(&mut db, c, "SELECT count(*) FROM jobs"),
        Ran::Blocked(b)
    );
    // A holds a lock on the table already: its next read goes on.
    assert_eq!(run(&mut db, a, "SELECT state FROM jobs"), tag("SELECT 1"));
    assert!(!db.lock_wait_over(b, a));
    assert_eq!(run(&mut db, a, "COMMIT"), tag("COMMIT"));
    assert!(db.lock_wait_over(b, a));
    assert!(!db.lock_wait_over(c, b), "C waits behind B");
    assert_eq!(run(&mut db, b, "LOCK TABLE jobs"), tag("LOCK TABLE"));
    assert_eq!(
        run(&mut db, c, "SELECT count(*) FROM jobs"),
        Ran::Blocked(b)
    );
    assert_eq!(run(&mut db, b, "DELETE FROM jobs"), tag("DELETE 1"));
    assert_eq!(run(&mut db, b, "COMMIT"), tag("COMMIT"));
    assert!(db.lock_wait_over(c, b));
    assert_eq!(
        run(&mut db, c, "SELECT count(*) FROM jobs"),
        tag("SELECT 1")
    );
}

#[test]
fn ddl_waits_for_a_reader_and_a_reader_for_ddl() {
    let (mut db, a, b, _) = three_sessions();
    assert_eq!(run(&mut db, a, "BEGIN"), tag("BEGIN"));
    assert_eq!(run(&mut db, a, "SELECT * FROM jobs"), tag("SELECT 1"));
    assert_eq!(run(&mut db, b, "DROP TABLE jobs"), Ran::Blocked(a));
    assert_eq!(run(&mut db, b, "TRUNCATE jobs"), Ran::Blocked(a));
    assert_eq!(
        run(&mut db, b, "CREATE INDEX ON jobs (state)"),
        tag("CREATE INDEX"),
        "SHARE does not conflict with ACCESS SHARE"
    );
    assert_eq!(run(&mut db, a, "ROLLBACK"), tag("ROLLBACK"));
    assert_eq!(run(&mut db, b, "TRUNCATE jobs"), tag("TRUNCATE TABLE"));
    // Outside a block a statement's locks end with it.
    assert_eq!(run(&mut db, a, "SELECT * FROM jobs"), tag("SELECT 0"));
    assert_eq!(run(&mut db, b, "DROP TABLE jobs"), tag("DROP TABLE"));
}

#[test]
fn lock_table_outside_a_block_and_on_what_is_not_a_table() {
    let (mut db, a, _, _) = three_sessions();
    assert_eq!(
        run(&mut db, a, "LOCK TABLE jobs"),
        Ran::Error("25P01".into())
    );
    assert_eq!(
        run(&mut db, a, "CREATE SEQUENCE ids"),
        tag("CREATE SEQUENCE")
    );
    assert_eq!(run(&mut db, a, "BEGIN"), tag("BEGIN"));
    assert_eq!(
        run(&mut db, a, "LOCK TABLE ids"),
        Ran::Error("42809".into())
    );
    assert_eq!(run(&mut db, a, "ROLLBACK"), tag("ROLLBACK"));
    assert_eq!(run(&mut db, a, "BEGIN"), tag("BEGIN"));
    assert_eq!(
        run(&mut db, a, "LOCK TABLE jobs_pkey"),
        Ran::Error("42809".into())
    );
    assert_eq!(run(&mut db, a, "ROLLBACK"), tag("ROLLBACK"));
    assert_eq!(run(&mut db, a, "BEGIN"), tag("BEGIN"));
    assert_eq!(
        run(&mut db, a, "LOCK TABLE nothing"),
        Ran::Error("42P01".into())
    );
}

#[test]
fn two_share_locks_whose_holders_both_write_deadlock() {
    let (mut db, a, b, _) = three_sessions();
    db.set_deadlock_check(DeadlockCheck::AtOnce);
    for session in [a, b] {
        assert_eq!(run(&mut db, session, "BEGIN"), tag("BEGIN"));
        assert_eq!(
            run(&mut db, session, "LOCK TABLE jobs IN SHARE MODE"),
            tag("LOCK TABLE")
        );
    }
    assert_eq!(
        run(&mut db, a, "UPDATE jobs SET state = 'a'"),
        Ran::Blocked(b)
    );
    let statement = parse_general("UPDATE jobs SET state = 'b'").expect("parses");
    let SqlExec::Done(Err(error)) = db.execute_sql(b, &statement, &[]).exec else {
        panic!("B closes the cycle and is its victim");
    };
    assert_eq!(error.code, "40P01");
    let detail = error.detail.expect("a deadlock's DETAIL");
    assert!(
        detail.contains("waits for RowExclusiveLock on relation") && detail.contains("of database"),
        "{detail}"
    );
    assert!(
        db.lock_wait_over(a, b),
        "B's locks went with its transaction"
    );
    assert_eq!(
        run(&mut db, a, "UPDATE jobs SET state = 'a'"),
        tag("UPDATE 1")
    );
}

#[test]
fn reading_a_table_again_leaves_the_state_of_one_read() {
    let (mut db, a, _, _) = three_sessions();
    assert_eq!(run(&mut db, a, "BEGIN"), tag("BEGIN"));
    assert_eq!(
        run(&mut db, a, "SELECT * FROM jobs FOR UPDATE"),
        tag("SELECT 1")
    );
    let once = db.clone();
    assert_eq!(run(&mut db, a, "SELECT * FROM jobs"), tag("SELECT 1"));
    assert_eq!(
        run(&mut db, a, "SELECT * FROM jobs FOR UPDATE"),
        tag("SELECT 1")
    );
    assert_eq!(db, once, "ACCESS SHARE and ROW SHARE again add nothing");
    assert_eq!(
        run(&mut db, a, "UPDATE jobs SET state = 'x'"),
        tag("UPDATE 1")
    );
    assert_ne!(db, once, "ROW EXCLUSIVE is more than ROW SHARE");
}
