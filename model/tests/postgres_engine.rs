//! One session at a time: results, command tags, errors and transaction blocks.

use leaselab_model::postgres::{
    Exec, PgError, Postgres, QueryResult, RowLock, SessionId, Statement, TxStatus, Wallet,
    WriteGuard,
};

const ID: i64 = 42;
const SELECT: Statement = Statement::Select { id: ID, lock: None };
const FOR_UPDATE: Statement = Statement::Select {
    id: ID,
    lock: Some(RowLock::ForUpdate),
};
const FENCED: Statement = Statement::WriteFenced {
    id: ID,
    guard: WriteGuard::FenceBelow,
};
const CHECK_AND_SET: Statement = Statement::WriteFenced {
    id: ID,
    guard: WriteGuard::FenceBelowAndEqual,
};
const UNFENCED: Statement = Statement::WriteFenced {
    id: ID,
    guard: WriteGuard::Unfenced,
};
const WRITE_BALANCE: Statement = Statement::WriteBalance { id: ID };
const DEBIT: Statement = Statement::Debit { id: ID };

/// A database with wallet 42 at balance 100, fence 3, and one session.
fn setup() -> (Postgres, SessionId) {
    let mut db = Postgres::new();
    db.seed_wallet(
        ID,
        Wallet {
            balance: 100,
            fence: 3,
        },
    );
    let session = db.connect();
    (db, session)
}

/// Runs a statement that must finish successfully.
fn ok(db: &mut Postgres, session: SessionId, statement: Statement, params: &[i64]) -> QueryResult {
    match db.execute(session, &statement, params) {
        Exec::Done(Ok(result)) => result,
        other => panic!("{} {params:?}: {other:?}", statement.sql()),
    }
}

/// Runs a statement that must fail.
fn err(db: &mut Postgres, session: SessionId, statement: Statement, params: &[i64]) -> PgError {
    match db.execute(session, &statement, params) {
        Exec::Done(Err(error)) => error,
        other => panic!("{} {params:?}: {other:?}", statement.sql()),
    }
}

/// Runs `sql` (any statement, parsed whole) on `session`: its rows, or the error as `CODE
/// message`, or `blocked`.
fn general(
    db: &mut Postgres,
    session: SessionId,
    sql: &str,
) -> Result<Vec<Vec<leaselab_model::postgres::Value>>, String> {
    use leaselab_model::postgres::{parse_general, SqlExec};
    let statement = parse_general(sql).map_err(|e| e.message)?;
    match db.execute_sql(session, &statement, &[]).exec {
        SqlExec::Done(Ok(result)) => Ok(result.rows),
        SqlExec::Done(Err(error)) => Err(format!("{} {}", error.code, error.message)),
        SqlExec::Blocked { .. } => Err("blocked".to_string()),
    }
}

/// Runs each of `statements` on `session`; each must succeed.
fn run_all(db: &mut Postgres, session: SessionId, statements: &[&str]) {
    for sql in statements {
        if let Err(error) = general(db, session, sql) {
            panic!("{sql}: {error}");
        }
    }
}

fn wallet(balance: i64, fence: i64) -> Wallet {
    Wallet { balance, fence }
}

#[test]
fn plain_select_returns_the_row_with_its_columns_and_tag() {
    let (mut db, s) = setup();
    let result = ok(&mut db, s, SELECT, &[]);
    assert_eq!(result.columns, ["balance", "fence"]);
    assert_eq!(result.rows, [[100, 3]]);
    assert_eq!(result.tag, "SELECT 1");
    assert_eq!(result.rows_affected, 1);
}

#[test]
fn select_of_a_missing_row_returns_no_rows() {
    let (mut db, s) = setup();
    for lock in [
        None,
        Some(RowLock::ForUpdate),
        Some(RowLock::ForUpdateNowait),
    ] {
        let result = ok(&mut db, s, Statement::Select { id: 7, lock }, &[]);
        assert_eq!(result.columns, ["balance", "fence"]);
        assert!(result.rows.is_empty());
        assert_eq!(result.tag, "SELECT 0");
        assert_eq!(result.rows_affected, 0);
    }
}

#[test]
fn select_for_update_outside_a_block_returns_the_row_and_keeps_no_lock() {
    let (mut db, s) = setup();
    let result = ok(&mut db, s, FOR_UPDATE, &[]);
    assert_eq!(
        (result.rows, result.tag),
        (vec![vec![100, 3]], "SELECT 1".into())
    );
    assert_eq!(db.locks(), []);
}

#[test]
fn fenced_write_lands_only_with_a_higher_token() {
    let (mut db, s) = setup();
    let result = ok(&mut db, s, FENCED, &[90, 3]);
    assert_eq!((result.tag.as_str(), result.rows_affected), ("UPDATE 0", 0));
    assert!(result.columns.is_empty() && result.rows.is_empty());
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    let result = ok(&mut db, s, FENCED, &[90, 4]);
    assert_eq!((result.tag.as_str(), result.rows_affected), ("UPDATE 1", 1));
    assert_eq!(db.wallet(ID), Some(wallet(90, 4)));
    assert_eq!(ok(&mut db, s, FENCED, &[80, 2]).tag, "UPDATE 0");
    assert_eq!(db.wallet(ID), Some(wallet(90, 4)));
}

#[test]
fn check_and_set_also_requires_the_fence_read() {
    let (mut db, s) = setup();
    assert_eq!(ok(&mut db, s, CHECK_AND_SET, &[90, 5, 2]).tag, "UPDATE 0");
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    assert_eq!(ok(&mut db, s, CHECK_AND_SET, &[90, 5, 3]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(90, 5)));
    assert_eq!(ok(&mut db, s, CHECK_AND_SET, &[80, 4, 5]).tag, "UPDATE 0");
}

#[test]
fn unfenced_write_always_lands_even_lowering_the_fence() {
    let (mut db, s) = setup();
    assert_eq!(ok(&mut db, s, UNFENCED, &[90, 1]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(90, 1)));
}

#[test]
fn write_balance_keeps_the_fence() {
    let (mut db, s) = setup();
    assert_eq!(ok(&mut db, s, WRITE_BALANCE, &[55]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(55, 3)));
}

#[test]
fn debit_applies_only_when_the_balance_covers_it() {
    let (mut db, s) = setup();
    assert_eq!(ok(&mut db, s, DEBIT, &[30]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(70, 3)));
    assert_eq!(ok(&mut db, s, DEBIT, &[71]).tag, "UPDATE 0");
    assert_eq!(ok(&mut db, s, DEBIT, &[70]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(0, 3)));
}

#[test]
fn updates_of_a_missing_row_change_nothing() {
    let (mut db, s) = setup();
    for (statement, params) in [
        (Statement::WriteBalance { id: 7 }, vec![1]),
        (Statement::Debit { id: 7 }, vec![1]),
        (
            Statement::WriteFenced {
                id: 7,
                guard: WriteGuard::Unfenced,
            },
            vec![1, 1],
        ),
    ] {
        assert_eq!(ok(&mut db, s, statement, &params).tag, "UPDATE 0");
    }
    assert_eq!(db.wallet(7), None);
}

#[test]
fn negative_balance_violates_the_check_constraint() {
    let (mut db, s) = setup();
    let error = err(&mut db, s, WRITE_BALANCE, &[-10]);
    assert_eq!(error.severity, "ERROR");
    assert_eq!(error.code, "23514");
    assert_eq!(
        error.message,
        "new row for relation \"wallets\" violates check constraint \"wallets_balance_check\""
    );
    assert_eq!(
        error.detail.as_deref(),
        Some("Failing row contains (42, -10, 3).")
    );
    let error = err(&mut db, s, CHECK_AND_SET, &[-10, 5, 3]);
    assert_eq!(
        error.detail.as_deref(),
        Some("Failing row contains (42, -10, 5).")
    );
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
}

#[test]
fn debit_overflow_is_bigint_out_of_range() {
    let (mut db, s) = setup();
    let error = err(&mut db, s, DEBIT, &[i64::MIN]);
    assert_eq!(error.code, "22003");
    assert_eq!(error.message, "bigint out of range");
    assert_eq!(error.detail, None);
    assert_eq!(ok(&mut db, s, DEBIT, &[i64::MAX]).tag, "UPDATE 0");
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
}

#[test]
fn wrong_parameter_count_is_a_protocol_violation() {
    let (mut db, s) = setup();
    let error = err(&mut db, s, FENCED, &[1]);
    assert_eq!(error.code, "08P01");
    assert_eq!(
        error.message,
        "bind message supplies 1 parameters, but prepared statement \"\" requires 2"
    );
    let error = err(&mut db, s, Statement::Begin, &[1]);
    assert_eq!(
        error.message,
        "bind message supplies 1 parameters, but prepared statement \"\" requires 0"
    );
    assert_eq!(db.status(s), Some(TxStatus::Idle));
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
}

#[test]
fn transaction_block_tags_and_visibility() {
    let (mut db, s) = setup();
    let other = db.connect();
    let begin = ok(&mut db, s, Statement::Begin, &[]);
    assert_eq!((begin.tag.as_str(), begin.rows_affected), ("BEGIN", 0));
    assert!(db.in_transaction(s));
    assert_eq!(db.status(s), Some(TxStatus::InBlock));
    assert_eq!(ok(&mut db, s, DEBIT, &[10]).tag, "UPDATE 1");
    assert_eq!(ok(&mut db, s, DEBIT, &[10]).tag, "UPDATE 1");
    assert_eq!(ok(&mut db, s, SELECT, &[]).rows, [[80, 3]]);
    assert_eq!(ok(&mut db, other, SELECT, &[]).rows, [[100, 3]]);
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    assert_eq!(db.visible_wallet(s, ID), Some(wallet(80, 3)));
    assert_eq!(db.lock_holder(ID), Some(s));
    assert_eq!(ok(&mut db, s, Statement::Commit, &[]).tag, "COMMIT");
    assert!(!db.in_transaction(s));
    assert_eq!(db.wallet(ID), Some(wallet(80, 3)));
    assert_eq!(db.locks(), []);
}

#[test]
fn rollback_discards_the_block() {
    let (mut db, s) = setup();
    ok(&mut db, s, Statement::Begin, &[]);
    ok(&mut db, s, FENCED, &[1, 9]);
    assert_eq!(ok(&mut db, s, Statement::Rollback, &[]).tag, "ROLLBACK");
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    assert_eq!(db.locks(), []);
    assert_eq!(db.status(s), Some(TxStatus::Idle));
}

#[test]
fn select_for_update_in_a_block_keeps_the_lock_and_the_own_version() {
    let (mut db, s) = setup();
    ok(&mut db, s, Statement::Begin, &[]);
    ok(&mut db, s, WRITE_BALANCE, &[60]);
    assert_eq!(ok(&mut db, s, FOR_UPDATE, &[]).rows, [[60, 3]]);
    assert_eq!(db.locks(), [(ID, s)]);
    ok(&mut db, s, Statement::Commit, &[]);
    assert_eq!(db.wallet(ID), Some(wallet(60, 3)));

    ok(&mut db, s, Statement::Begin, &[]);
    assert_eq!(ok(&mut db, s, FOR_UPDATE, &[]).rows, [[60, 3]]);
    assert_eq!(db.locks(), [(ID, s)]);
    ok(&mut db, s, Statement::Commit, &[]);
    assert_eq!(db.wallet(ID), Some(wallet(60, 3)));
}

#[test]
fn begin_inside_a_block_warns_and_keeps_the_tag() {
    let (mut db, s) = setup();
    ok(&mut db, s, Statement::Begin, &[]);
    let executed = db.execute_with_notice(s, &Statement::Begin, &[]);
    let Exec::Done(Ok(result)) = executed.exec else {
        panic!("{executed:?}")
    };
    assert_eq!(result.tag, "BEGIN");
    let notice = executed.notice.expect("a warning");
    assert_eq!(
        (notice.severity, notice.code, notice.message.as_str()),
        (
            "WARNING",
            "25001",
            "there is already a transaction in progress"
        )
    );
    assert_eq!(db.status(s), Some(TxStatus::InBlock));
}

#[test]
fn commit_and_rollback_outside_a_block_warn_and_keep_their_tags() {
    let (mut db, s) = setup();
    for (statement, tag) in [
        (Statement::Commit, "COMMIT"),
        (Statement::Rollback, "ROLLBACK"),
    ] {
        let executed = db.execute_with_notice(s, &statement, &[]);
        let Exec::Done(Ok(result)) = executed.exec else {
            panic!("{executed:?}")
        };
        assert_eq!(result.tag, tag);
        let notice = executed.notice.expect("a warning");
        assert_eq!(
            (notice.severity, notice.code, notice.message.as_str()),
            ("WARNING", "25P01", "there is no transaction in progress")
        );
    }
    let quiet = db.execute_with_notice(s, &SELECT, &[]);
    assert_eq!(quiet.notice, None);
}

#[test]
fn an_error_aborts_the_block_until_rollback() {
    let (mut db, s) = setup();
    ok(&mut db, s, Statement::Begin, &[]);
    ok(&mut db, s, DEBIT, &[10]);
    assert_eq!(err(&mut db, s, WRITE_BALANCE, &[-1]).code, "23514");
    assert_eq!(db.status(s), Some(TxStatus::Failed));
    assert!(db.in_transaction(s));
    assert_eq!(db.locks(), [], "an aborted block releases its locks");
    for statement in [SELECT, FOR_UPDATE, Statement::Begin] {
        let error = err(&mut db, s, statement, &[]);
        assert_eq!(error.code, "25P02");
        assert_eq!(
            error.message,
            "current transaction is aborted, commands ignored until end of transaction block"
        );
    }
    // The aborted check comes before the parameter count, as Parse comes before Bind.
    assert_eq!(err(&mut db, s, FENCED, &[1]).code, "25P02");
    // COMMIT with parameters fails at Bind and leaves the block failed.
    assert_eq!(err(&mut db, s, Statement::Commit, &[1]).code, "08P01");
    assert_eq!(db.status(s), Some(TxStatus::Failed));
    assert_eq!(ok(&mut db, s, Statement::Rollback, &[]).tag, "ROLLBACK");
    assert_eq!(db.status(s), Some(TxStatus::Idle));
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    assert_eq!(ok(&mut db, s, SELECT, &[]).tag, "SELECT 1");
}

#[test]
fn commit_of_an_aborted_block_reports_rollback() {
    let (mut db, s) = setup();
    ok(&mut db, s, Statement::Begin, &[]);
    ok(&mut db, s, DEBIT, &[10]);
    assert_eq!(err(&mut db, s, DEBIT, &[i64::MIN]).code, "22003");
    let executed = db.execute_with_notice(s, &Statement::Commit, &[]);
    let Exec::Done(Ok(result)) = executed.exec else {
        panic!("{executed:?}")
    };
    assert_eq!(result.tag, "ROLLBACK");
    assert_eq!(executed.notice, None);
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    assert_eq!(db.status(s), Some(TxStatus::Idle));
}

#[test]
fn a_wrong_parameter_count_inside_a_block_aborts_it() {
    let (mut db, s) = setup();
    ok(&mut db, s, Statement::Begin, &[]);
    let error = err(&mut db, s, WRITE_BALANCE, &[1, 2]);
    assert_eq!(
        error.message,
        "bind message supplies 2 parameters, but prepared statement \"\" requires 1"
    );
    assert_eq!(db.status(s), Some(TxStatus::Failed));
}

#[test]
fn an_error_outside_a_block_leaves_the_session_idle() {
    let (mut db, s) = setup();
    assert_eq!(err(&mut db, s, WRITE_BALANCE, &[-1]).code, "23514");
    assert_eq!(db.status(s), Some(TxStatus::Idle));
    assert_eq!(ok(&mut db, s, SELECT, &[]).tag, "SELECT 1");
}

#[test]
fn disconnect_rolls_back_and_forgets_the_session() {
    let (mut db, s) = setup();
    ok(&mut db, s, Statement::Begin, &[]);
    ok(&mut db, s, WRITE_BALANCE, &[1]);
    db.disconnect(s);
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    assert_eq!(db.locks(), []);
    assert_eq!(db.sessions(), []);
    assert_eq!(db.status(s), None);
    assert!(!db.in_transaction(s));
    let error = err(&mut db, s, SELECT, &[]);
    assert_eq!(
        (error.code, error.message.as_str()),
        ("08003", "connection does not exist")
    );
    db.disconnect(s);
}

#[test]
fn sessions_are_numbered_in_connection_order() {
    let mut db = Postgres::new();
    let ids: Vec<SessionId> = (0..3).map(|_| db.connect()).collect();
    assert_eq!(ids, [SessionId(0), SessionId(1), SessionId(2)]);
    db.disconnect(SessionId(1));
    assert_eq!(db.connect(), SessionId(3));
    assert_eq!(db.sessions(), [SessionId(0), SessionId(2), SessionId(3)]);
    assert_eq!(SessionId(3).pid(), 10_003);
}

#[test]
fn seeding_overwrites_the_committed_row() {
    let (mut db, _) = setup();
    db.seed_wallet(ID, wallet(5, 6));
    assert_eq!(db.wallet(ID), Some(wallet(5, 6)));
    assert_eq!(db.wallet(1), None);
}

#[test]
fn equal_histories_give_equal_states() {
    let (mut a, s) = setup();
    let (mut b, t) = setup();
    assert_eq!(a, b);
    ok(&mut a, s, DEBIT, &[10]);
    assert_ne!(a, b);
    ok(&mut b, t, DEBIT, &[10]);
    assert_eq!(a, b);
    // The same committed state reached by seeding instead of a debit.
    let mut seeded = Postgres::default();
    seeded.seed_wallet(ID, wallet(90, 3));
    seeded.connect();
    assert_eq!(a, seeded);
}

#[test]
fn ready_for_query_bytes() {
    assert_eq!(TxStatus::Idle.ready_for_query_byte(), b'I');
    assert_eq!(TxStatus::InBlock.ready_for_query_byte(), b'T');
    assert_eq!(TxStatus::Failed.ready_for_query_byte(), b'E');
}

#[test]
fn errors_display_like_psql() {
    let error = PgError::balance_check_violation(42, -10, 3);
    assert_eq!(
        error.to_string(),
        "ERROR:  new row for relation \"wallets\" violates check constraint \"wallets_balance_check\" (SQLSTATE 23514)\nDETAIL:  Failing row contains (42, -10, 3)."
    );
}

/// Expressions nest one level per operator in a chain like `1 + 1 + ...` (set operations in
/// `SELECT 1 UNION ALL SELECT 1 ...`), and the stand-in
/// works on them recursively: up to the operator limit they run on a test thread's 2 MiB stack
/// (the checker's threads have the same), past it they are refused as PostgreSQL refuses what
/// overflows its stack. A long `IN` list is no chain.
#[test]
fn deep_expressions_run_or_are_refused_never_overflow_the_stack() {
    use leaselab_model::postgres::sql::OPERATOR_LIMIT;
    use leaselab_model::postgres::{parse_general, SqlExec, Value};
    let mut pg = Postgres::new();
    let session = pg.connect();
    let mut run = |sql: &str| -> Result<Vec<Vec<Value>>, PgError> {
        let statement = parse_general(sql)?;
        match pg.execute_sql(session, &statement, &[]).exec {
            SqlExec::Done(result) => result.map(|r| r.rows),
            SqlExec::Blocked { .. } => panic!("nothing to wait for"),
        }
    };
    let chain = |terms: usize| format!("SELECT {}", vec!["1"; terms].join(" + "));
    let terms = OPERATOR_LIMIT + 1;
    assert_eq!(
        run(&chain(terms)).unwrap(),
        vec![vec![Value::Int(terms as i64)]]
    );
    for too_many in [terms + 1, 200_000] {
        let error = run(&chain(too_many)).unwrap_err();
        assert_eq!(error.code, "54001", "{error:?}");
        assert_eq!(error.message, "stack depth limit exceeded");
    }
    // `SELECT 1 UNION ALL SELECT 1 ...` nests one level per operator too.
    let unions = |terms: usize| vec!["SELECT 1"; terms].join(" UNION ALL ");
    assert_eq!(run(&unions(terms)).unwrap().len(), terms);
    for too_many in [terms + 1, 20_000] {
        let error = run(&unions(too_many)).unwrap_err();
        assert_eq!(error.code, "54001", "{error:?}");
    }
    let list: Vec<String> = (0..20_000).map(|n| n.to_string()).collect();
    let sql = format!(
        "SELECT 19999 IN ({}), -1 IN ({})",
        list.join(", "),
        list.join(", ")
    );
    assert_eq!(
        run(&sql).unwrap(),
        vec![vec![Value::Bool(true), Value::Bool(false)]]
    );
}

/// A `READ ONLY` transaction refuses writes and row locks with 25006 (PostgreSQL's message),
/// reads and advisory locks go on; `default_transaction_read_only` makes every later
/// transaction read only, a statement outside a block included, until `READ WRITE` says
/// otherwise.
#[test]
fn read_only_transactions_refuse_writes() {
    use leaselab_model::postgres::{parse_general, SqlExec};
    let mut db = Postgres::new();
    let a = db.connect();
    let mut run = |sql: &str| {
        let statement = parse_general(sql).expect("parses");
        match db.execute_sql(a, &statement, &[]).exec {
            SqlExec::Done(Ok(result)) => Ok(result.tag),
            SqlExec::Done(Err(error)) => Err(format!("{} {}", error.code, error.message)),
            SqlExec::Blocked { .. } => Err("blocked".to_string()),
        }
    };
    run("CREATE TABLE r (id bigint PRIMARY KEY, n bigint)").unwrap();
    run("INSERT INTO r VALUES (1, 10)").unwrap();
    run("BEGIN READ ONLY").unwrap();
    assert!(run("SELECT n FROM r").is_ok());
    assert!(run("SELECT pg_try_advisory_lock(1)").is_ok());
    assert_eq!(
        run("UPDATE r SET n = 11"),
        Err("25006 cannot execute UPDATE in a read-only transaction".to_string())
    );
    run("ROLLBACK").unwrap();
    run("SET default_transaction_read_only = on").unwrap();
    assert_eq!(
        run("SELECT n FROM r FOR UPDATE"),
        Err("25006 cannot execute SELECT FOR UPDATE in a read-only transaction".to_string())
    );
    run("BEGIN READ WRITE").unwrap();
    assert!(run("UPDATE r SET n = 12").is_ok());
    run("COMMIT").unwrap();
    assert_eq!(
        run("DELETE FROM r"),
        Err("25006 cannot execute DELETE in a read-only transaction".to_string())
    );
    // The safeguards' typed statements too (they have a native fast path).
    let mut db = Postgres::new();
    db.seed_wallet(
        42,
        Wallet {
            balance: 100,
            fence: 0,
        },
    );
    let b = db.connect();
    let begin = parse_general("BEGIN READ ONLY").expect("parses");
    assert!(matches!(
        db.execute_sql(b, &begin, &[]).exec,
        SqlExec::Done(Ok(_))
    ));
    match db.execute(b, &Statement::WriteBalance { id: 42 }, &[90]) {
        Exec::Done(Err(error)) => assert_eq!(error.code, "25006"),
        other => panic!("a write in a read-only transaction: {other:?}"),
    }
    // After a typed query a block's isolation level is fixed, as after any other.
    let c = db.connect();
    assert!(matches!(
        db.execute(c, &Statement::Begin, &[]),
        Exec::Done(Ok(_))
    ));
    assert!(matches!(db.execute(c, &SELECT, &[]), Exec::Done(Ok(_))));
    let statement = parse_general("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").expect("parses");
    match db.execute_sql(c, &statement, &[]).exec {
        SqlExec::Done(Err(error)) => assert_eq!(error.code, "25001"),
        other => panic!("SET TRANSACTION after a query: {other:?}"),
    }
}

/// A sequence's numbers as PostgreSQL 15 gives them while statements wait (checked there with
/// two psql sessions): an `UPDATE ... SET token = nextval(..)` that waited for a row takes a
/// second number when it resumes (its recheck of the row computes the new row again), so the
/// first is lost; an advisory lock call that waits gives back the numbers the calls before it
/// in the same select list took (the statement runs again from the start).
#[test]
fn sequence_numbers_of_waiting_statements() {
    use leaselab_model::postgres::{parse_general, SqlExec};
    let mut db = Postgres::new();
    let a = db.connect();
    let b = db.connect();
    let run = |db: &mut Postgres, session, sql: &str| {
        let statement = parse_general(sql).expect("parses");
        match db.execute_sql(session, &statement, &[]).exec {
            SqlExec::Done(Ok(result)) => Ok(result
                .rows
                .iter()
                .map(|row| format!("{row:?}"))
                .collect::<Vec<_>>()
                .join(";")),
            SqlExec::Done(Err(error)) => Err(format!("{} {}", error.code, error.message)),
            SqlExec::Blocked { .. } => Err("blocked".to_string()),
        }
    };
    run(&mut db, a, "CREATE SEQUENCE f").unwrap();
    run(
        &mut db,
        a,
        "CREATE TABLE l (name text PRIMARY KEY, token bigint)",
    )
    .unwrap();
    run(&mut db, a, "INSERT INTO l VALUES ('x', 0)").unwrap();
    run(&mut db, a, "BEGIN").unwrap();
    let update = "UPDATE l SET token = nextval('f') WHERE name = 'x' RETURNING token";
    assert_eq!(run(&mut db, a, update).unwrap(), "[Int(1)]");
    assert_eq!(run(&mut db, b, update), Err("blocked".to_string()));
    run(&mut db, a, "COMMIT").unwrap();
    assert_eq!(run(&mut db, b, update).unwrap(), "[Int(3)]");
    assert_eq!(run(&mut db, b, "SELECT currval('f')").unwrap(), "[Int(3)]");

    run(&mut db, a, "SELECT pg_advisory_lock(7)").unwrap();
    let both = "SELECT nextval('f'), pg_advisory_lock(7)";
    assert_eq!(run(&mut db, b, both), Err("blocked".to_string()));
    assert_eq!(run(&mut db, a, "SELECT nextval('f')").unwrap(), "[Int(4)]");
    run(&mut db, a, "SELECT pg_advisory_unlock(7)").unwrap();
    assert_eq!(run(&mut db, b, both).unwrap(), "[Int(5), Text(\"\")]");
}

/// Joins: inner, outer and `USING` rows as PostgreSQL makes them, names resolved across the
/// tables (ambiguous and duplicate names refused), and a join that would make more rows than
/// `JOIN_ROW_LIMIT` refused with 54000 instead of growing without bound.
#[test]
fn joins_pair_rows_and_stay_bounded() {
    use leaselab_model::postgres::{parse_general, SqlExec, Value, JOIN_PAIR_LIMIT};
    let mut db = Postgres::new();
    let a = db.connect();
    let mut run = |sql: &str| general(&mut db, a, sql);
    run("CREATE TABLE w (id bigint PRIMARY KEY, balance bigint)").unwrap();
    run("CREATE TABLE h (id bigint PRIMARY KEY, w_id bigint, amount bigint)").unwrap();
    run("INSERT INTO w VALUES (1, 100), (2, 50)").unwrap();
    run("INSERT INTO h VALUES (10, 1, 5), (11, 1, 7), (12, 3, 1)").unwrap();
    let int = Value::Int;
    assert_eq!(
        run("SELECT w.id, h.id FROM w JOIN h ON h.w_id = w.id ORDER BY h.id").unwrap(),
        vec![vec![int(1), int(10)], vec![int(1), int(11)]]
    );
    assert_eq!(
        run("SELECT w.id, h.id FROM w FULL JOIN h ON h.w_id = w.id ORDER BY w.id, h.id").unwrap(),
        vec![
            vec![int(1), int(10)],
            vec![int(1), int(11)],
            vec![int(2), Value::Null],
            vec![Value::Null, int(12)],
        ]
    );
    assert_eq!(
        run("SELECT w.id, count(h.id) FROM w LEFT JOIN h ON h.w_id = w.id GROUP BY w.id ORDER BY w.id")
            .unwrap(),
        vec![vec![int(1), int(2)], vec![int(2), int(0)]]
    );
    // `USING` merges the column: `*` lists it once, first.
    run("CREATE TABLE o (w_id bigint PRIMARY KEY, who text)").unwrap();
    run("INSERT INTO o VALUES (1, 'ann')").unwrap();
    assert_eq!(
        run("SELECT * FROM h JOIN o USING (w_id) ORDER BY h.id").unwrap(),
        vec![
            vec![int(1), int(10), int(5), Value::Text("ann".into())],
            vec![int(1), int(11), int(7), Value::Text("ann".into())],
        ]
    );
    assert_eq!(
        run("SELECT id FROM w, h"),
        Err("42702 column reference \"id\" is ambiguous".to_string())
    );
    assert_eq!(
        run("SELECT * FROM w, w"),
        Err("42712 table name \"w\" specified more than once".to_string())
    );
    // 1,001 × 1,000 pairs are more than the limit allows, whatever the condition.
    let rows = |n: usize| {
        (0..n)
            .map(|i| format!("({i})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    run("CREATE TABLE big (n bigint PRIMARY KEY)").unwrap();
    run(&format!("INSERT INTO big VALUES {}", rows(1_001))).unwrap();
    run("CREATE TABLE small (n bigint PRIMARY KEY)").unwrap();
    run(&format!("INSERT INTO small VALUES {}", rows(1_000))).unwrap();
    assert_eq!(JOIN_PAIR_LIMIT, 1_000_000);
    let error = run("SELECT count(*) FROM big b JOIN small s ON s.n = b.n").unwrap_err();
    assert!(error.starts_with("54000 "), "{error}");
    assert!(run("SELECT count(*) FROM big, small WHERE false").is_err());
    assert_eq!(
        run("SELECT count(*) FROM small a JOIN small b ON b.n = a.n").unwrap(),
        vec![vec![int(1_000)]]
    );

    // A locking clause on a join locks the row of each table a result row came from: a
    // second session waits for the wallet row, and `OF h` alone does not.
    let b = db.connect();
    let mut on = |session, sql: &str| {
        let statement = parse_general(sql).expect("parses");
        db.execute_sql(session, &statement, &[]).exec
    };
    let lock_both = "SELECT h.id FROM w JOIN h ON h.w_id = w.id WHERE h.id = 10 FOR UPDATE";
    assert!(matches!(on(a, "BEGIN"), SqlExec::Done(Ok(_))));
    assert!(matches!(on(a, lock_both), SqlExec::Done(Ok(_))));
    assert!(matches!(on(b, "BEGIN"), SqlExec::Done(Ok(_))));
    assert!(matches!(
        on(
            b,
            "SELECT h.id FROM w JOIN h ON h.w_id = w.id WHERE h.id = 11 FOR UPDATE OF h"
        ),
        SqlExec::Done(Ok(_))
    ));
    assert!(matches!(
        on(
            b,
            "SELECT h.id FROM w JOIN h ON h.w_id = w.id WHERE h.id = 11 FOR UPDATE"
        ),
        SqlExec::Blocked { .. }
    ));
}

/// `UPDATE ... FROM` and `DELETE ... USING`: each target row changes once, with the first
/// combination of the other tables that passes; only the target's rows are locked; a later
/// item of a `FROM` list is joined on its own, then paired with the rows before it.
#[test]
fn update_from_and_delete_using_change_each_target_row_once() {
    use leaselab_model::postgres::Value;
    let mut db = Postgres::new();
    let a = db.connect();
    let b = db.connect();
    let mut on = |session, sql: &str| general(&mut db, session, sql);
    let int = Value::Int;
    on(a, "CREATE TABLE w (id bigint PRIMARY KEY, balance bigint)").unwrap();
    on(
        a,
        "CREATE TABLE h (id bigint PRIMARY KEY, w_id bigint, amount bigint)",
    )
    .unwrap();
    on(a, "INSERT INTO w VALUES (1, 100), (2, 50)").unwrap();
    on(a, "INSERT INTO h VALUES (10, 1, 5), (11, 1, 7), (12, 2, 1)").unwrap();
    // Wallet 1 meets two holds: it is debited once, by the first (h 10).
    assert_eq!(
        on(
            a,
            "UPDATE w SET balance = w.balance - h.amount FROM h WHERE h.w_id = w.id RETURNING w.id, w.balance, h.id"
        )
        .unwrap(),
        vec![
            vec![int(1), int(95), int(10)],
            vec![int(2), int(49), int(12)]
        ]
    );
    // The target's columns are out of reach in a `FROM` item's join condition.
    let error = on(
        a,
        "UPDATE w SET balance = 0 FROM h JOIN h AS g ON g.id = w.id",
    )
    .unwrap_err();
    assert!(
        error.starts_with("42P01 invalid reference to FROM-clause entry for table \"w\""),
        "{error}"
    );
    // A right join in a later item keeps its unmatched rows for every row before it.
    assert_eq!(
        on(
            a,
            "SELECT count(*) FROM w, h RIGHT JOIN h AS g ON g.id = h.id + 100"
        )
        .unwrap(),
        vec![vec![int(6)]]
    );
    // b holds hold 10's row; a's update through it is not blocked, its delete of it is.
    on(b, "BEGIN").unwrap();
    on(b, "SELECT id FROM h WHERE id = 10 FOR UPDATE").unwrap();
    assert_eq!(
        on(
            a,
            "UPDATE w SET balance = 0 FROM h WHERE h.w_id = w.id AND h.id = 10 RETURNING w.balance"
        )
        .unwrap(),
        vec![vec![int(0)]]
    );
    assert_eq!(
        on(
            a,
            "DELETE FROM h USING w WHERE h.w_id = w.id AND w.balance = 0"
        ),
        Err("blocked".to_string())
    );
    on(b, "ROLLBACK").unwrap();
    assert_eq!(
        on(
            a,
            "DELETE FROM h USING w WHERE h.w_id = w.id AND w.balance = 0 RETURNING h.id"
        )
        .unwrap(),
        vec![vec![int(10)], vec![int(11)]]
    );
    // MySQL's LIMIT on a DELETE is PostgreSQL's syntax error, not a change of every row.
    let error = on(a, "DELETE FROM h WHERE id = 12 LIMIT 1").unwrap_err();
    assert_eq!(error, "42601 syntax error at or near \"LIMIT\"");
    assert_eq!(on(a, "SELECT count(*) FROM h").unwrap(), vec![vec![int(1)]]);
}

/// A correlated subquery runs for each row of its statement with that row's values: in a
/// select list, in `WHERE` (the claim queue's `NOT EXISTS`), in `UPDATE ... SET`; where it
/// does not run it is 0A000, never a wrong answer.
#[test]
fn correlated_subqueries_run_per_row() {
    use leaselab_model::postgres::Value;
    let mut db = Postgres::new();
    let a = db.connect();
    let mut run = |sql: &str| general(&mut db, a, sql);
    let int = Value::Int;
    run("CREATE TABLE jobs (id bigint PRIMARY KEY, state text)").unwrap();
    run("CREATE TABLE claims (job_id bigint PRIMARY KEY, owner text)").unwrap();
    run("INSERT INTO jobs VALUES (1, 'new'), (2, 'new'), (3, 'new')").unwrap();
    run("INSERT INTO claims VALUES (1, 'x'), (3, 'y')").unwrap();
    assert_eq!(
        run(
            "SELECT id FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM claims c WHERE c.job_id = j.id)"
        )
        .unwrap(),
        vec![vec![int(2)]]
    );
    assert_eq!(
        run("SELECT id, (SELECT owner FROM claims WHERE job_id = jobs.id) FROM jobs ORDER BY id")
            .unwrap(),
        vec![
            vec![int(1), Value::Text("x".into())],
            vec![int(2), Value::Null],
            vec![int(3), Value::Text("y".into())],
        ]
    );
    assert_eq!(
        run("UPDATE jobs j SET state = (SELECT owner FROM claims c WHERE c.job_id = j.id) WHERE id < 3 RETURNING id, state")
            .unwrap(),
        vec![
            vec![int(1), Value::Text("x".into())],
            vec![int(2), Value::Null]
        ]
    );
    // 1,001 rows each reading 1,000: more than the bound, refused before any runs.
    let rows = |n: usize| {
        (0..n)
            .map(|i| format!("({i})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    run("CREATE TABLE big (n bigint PRIMARY KEY)").unwrap();
    run(&format!("INSERT INTO big VALUES {}", rows(1_001))).unwrap();
    run("CREATE TABLE small (n bigint PRIMARY KEY)").unwrap();
    run(&format!("INSERT INTO small VALUES {}", rows(1_000))).unwrap();
    let error =
        run("SELECT count(*) FROM big b WHERE EXISTS (SELECT 1 FROM small s WHERE s.n = b.n)")
            .unwrap_err();
    assert!(error.starts_with("54000 "), "{error}");
    assert_eq!(
        run("SELECT count(*) FROM jobs j WHERE EXISTS (SELECT 1 FROM small s WHERE s.n = j.id)")
            .unwrap(),
        vec![vec![int(3)]]
    );
    let error = run("SELECT id FROM jobs j GROUP BY id HAVING count(*) > (SELECT count(*) FROM claims WHERE job_id = j.id)")
        .unwrap_err();
    assert!(error.starts_with("0A000 "), "{error}");
}

/// A `VALUES` list read as a query runs up to its row limit and is refused with 54000 past
/// it, before anything runs; an `INSERT`'s own list has no such limit.
#[test]
fn a_values_list_as_a_query_is_bounded() {
    use leaselab_model::postgres::Value;
    let mut db = Postgres::new();
    let a = db.connect();
    let mut run = |sql: &str| general(&mut db, a, sql);
    let rows = |n: usize| {
        (0..n)
            .map(|i| format!("({i})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert_eq!(
        run(&format!(
            "SELECT count(*), sum(x) FROM (VALUES {}) v(x)",
            rows(1_000)
        ))
        .unwrap(),
        vec![vec![Value::Int(1_000), Value::Int(499_500)]]
    );
    let error = run(&format!(
        "SELECT count(*) FROM (VALUES {}) v(x)",
        rows(1_001)
    ))
    .unwrap_err();
    assert!(error.starts_with("54000 "), "{error}");
    run("CREATE TABLE t (n bigint UNIQUE)").unwrap();
    run(&format!("INSERT INTO t VALUES {}", rows(3_000))).unwrap();
    assert_eq!(
        run("SELECT count(*) FROM t").unwrap(),
        vec![vec![Value::Int(3_000)]]
    );
}

#[test]
fn random_numbers_follow_the_servers_seed_and_setseed() {
    use leaselab_model::postgres::Value;
    // What a fresh session's first draws are, on a server seeded with `seed`.
    let draws = |seed: u64| {
        let mut db = Postgres::new();
        db.set_random_seed(seed);
        let a = db.connect();
        let b = db.connect();
        let mut run = |session, sql: &str| general(&mut db, session, sql).unwrap();
        let from_a = run(a, "SELECT random(), random(), gen_random_uuid()");
        let from_b = run(b, "SELECT random(), gen_random_uuid()");
        (from_a, from_b)
    };
    let (a1, b1) = draws(1);
    assert_eq!(draws(1), (a1.clone(), b1.clone()), "a seed replays");
    assert_ne!(draws(2).0, a1, "another seed draws other numbers");
    assert_ne!(a1[0][0], a1[0][1], "two draws differ");
    assert_ne!(a1[0][0], b1[0][0], "two sessions draw differently");
    assert_ne!(a1[0][2], b1[0][1], "uuids are never repeated");
    for value in [&a1[0][0], &a1[0][1], &b1[0][0]] {
        let Value::Float(x) = value else {
            panic!("random() is a double: {value:?}")
        };
        assert!((0.0..1.0).contains(&x.0), "{x:?}");
    }
    // After setseed, whatever the server's seed, PostgreSQL 15's own numbers.
    for seed in [1, 2] {
        let mut db = Postgres::new();
        db.set_random_seed(seed);
        let a = db.connect();
        let rows = general(&mut db, a, "SELECT setseed(0.5), random()").unwrap();
        assert_eq!(rows[0][1].to_text().as_deref(), Some("0.9851677175347999"));
    }
}

#[test]
fn generate_series_is_bounded_and_never_overflows() {
    use leaselab_model::postgres::Value;
    let mut db = Postgres::new();
    let a = db.connect();
    let mut run = |sql: &str| general(&mut db, a, sql);
    assert_eq!(
        run("SELECT count(*), sum(g) FROM generate_series(1, 100000) g").unwrap(),
        vec![vec![Value::Int(100_000), Value::Int(5_000_050_000)]]
    );
    for sql in [
        "SELECT count(*) FROM generate_series(1, 100001)",
        "SELECT count(*) FROM generate_series(-9223372036854775808, 9223372036854775807)",
        "SELECT count(*) FROM generate_series(9223372036854775807, -9223372036854775808, -1)",
    ] {
        let error = run(sql).unwrap_err();
        assert!(error.starts_with("54000 "), "{sql}: {error}");
    }
    // The last steps before the ends of the range, and a step past them.
    assert_eq!(
        run("SELECT count(*), min(g), max(g) FROM generate_series(9223372036854775800, 9223372036854775807, 5) g").unwrap(),
        vec![vec![
            Value::Int(2),
            Value::Int(9_223_372_036_854_775_800),
            Value::Int(9_223_372_036_854_775_805)
        ]]
    );
    assert!(run("SELECT * FROM generate_series(1, 2, 0)")
        .unwrap_err()
        .starts_with("22023 "));
}

#[test]
fn declared_modifiers_change_what_is_stored() {
    let mut db = Postgres::new();
    let a = db.connect();
    let mut run = |sql: &str| general(&mut db, a, sql);
    let text = |rows: Vec<Vec<leaselab_model::postgres::Value>>| -> Vec<Option<String>> {
        rows.into_iter()
            .flatten()
            .map(|value| value.to_text())
            .collect()
    };
    run("CREATE TABLE led (id int PRIMARY KEY, amount numeric(12,2), s smallint, v varchar(3))")
        .unwrap();
    run("INSERT INTO led VALUES (1, 1.005, 1, 'ab '), (2, -2.675, -32768, 'abc   ')").unwrap();
    assert_eq!(
        text(run("SELECT amount, v FROM led ORDER BY id").unwrap()),
        [Some("1.01"), Some("ab "), Some("-2.68"), Some("abc")].map(|t| t.map(String::from))
    );
    for (sql, code) in [
        (
            "INSERT INTO led VALUES (3, 10000000000, 1, 'a')",
            "22003 numeric field overflow",
        ),
        (
            "INSERT INTO led VALUES (3, 1, 32768, 'a')",
            "22003 smallint out of range",
        ),
        ("INSERT INTO led VALUES (3, 1, 1, 'abcd')", "22001 "),
        (
            "UPDATE led SET s = s * 2 WHERE id = 2",
            "22003 smallint out of range",
        ),
        ("INSERT INTO led (id, v) SELECT 3, 'abcd'", "22001 "),
        (
            "INSERT INTO led (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET s = 40000",
            "22003 smallint out of range",
        ),
    ] {
        let error = run(sql).unwrap_err();
        assert!(error.starts_with(code), "{sql}: {error}");
    }
    run("INSERT INTO led (id, amount) SELECT 4, 2.345").unwrap();
    assert_eq!(
        text(run("SELECT amount FROM led WHERE id = 4").unwrap()),
        [Some("2.35".to_string())]
    );
    // An explicit cast cuts a text where a stored one is refused.
    assert_eq!(
        text(run("SELECT 'abcdef'::varchar(3), 2.5::numeric(1)").unwrap()),
        [Some("abc"), Some("3")].map(|t| t.map(String::from))
    );
    assert!(run("CREATE TABLE r (x real)")
        .unwrap_err()
        .starts_with("0A000 "));
}

/// The safeguards' own statements (the typed fast path) wait like any other for a block that
/// holds `wallets` by DDL, and see what that block's end leaves: its rows back after a
/// rollback of `TRUNCATE`, none after a commit.
#[test]
fn typed_statements_wait_for_a_block_that_holds_wallets_by_ddl() {
    let (mut db, holder) = setup();
    let caller = db.connect();
    assert_eq!(general(&mut db, holder, "BEGIN"), Ok(vec![]));
    assert_eq!(general(&mut db, holder, "TRUNCATE wallets"), Ok(vec![]));
    for statement in [SELECT, FOR_UPDATE, DEBIT] {
        let params: &[i64] = if statement == DEBIT { &[10] } else { &[] };
        match db.execute(caller, &statement, params) {
            Exec::Blocked { by } => assert_eq!(by, holder),
            other => panic!("{}: {other:?}", statement.sql()),
        }
        assert!(db.waiting_on(caller) == Some(holder));
        assert!(!db.lock_wait_over(caller, holder));
    }
    assert_eq!(general(&mut db, holder, "ROLLBACK"), Ok(vec![]));
    assert!(db.lock_wait_over(caller, holder));
    let row = ok(&mut db, caller, SELECT, &[]);
    assert_eq!(row.rows.len(), 1, "the rollback gave the row back");
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));

    assert_eq!(general(&mut db, holder, "BEGIN"), Ok(vec![]));
    assert_eq!(general(&mut db, holder, "TRUNCATE wallets"), Ok(vec![]));
    assert!(matches!(
        db.execute(caller, &DEBIT, &[10]),
        Exec::Blocked { .. }
    ));
    assert_eq!(general(&mut db, holder, "COMMIT"), Ok(vec![]));
    assert_eq!(ok(&mut db, caller, DEBIT, &[10]).tag, "UPDATE 0");
    assert_eq!(db.wallet(ID), None);
}

/// A rollback gives back what DDL in the block changed, latest first, and a savepoint gives
/// back only what came after it; no relation is left held once the block is over.
#[test]
fn ddl_is_undone_by_rollback_and_by_rollback_to_savepoint() {
    let (mut db, s) = setup();
    let other = db.connect();
    let run = |db: &mut Postgres, sql: &str| general(db, s, sql);
    run(&mut db, "BEGIN").unwrap();
    run(&mut db, "CREATE TABLE a (n int)").unwrap();
    run(&mut db, "INSERT INTO a VALUES (1)").unwrap();
    run(&mut db, "SAVEPOINT one").unwrap();
    run(&mut db, "DROP TABLE wallets").unwrap();
    run(&mut db, "CREATE TABLE wallets (other text)").unwrap();
    run(&mut db, "SAVEPOINT two").unwrap();
    run(&mut db, "DROP TABLE a").unwrap();
    run(&mut db, "CREATE SEQUENCE s").unwrap();
    assert_eq!(
        general(&mut db, other, "SELECT * FROM wallets"),
        Err("blocked".to_string())
    );
    assert!(
        general(&mut db, other, "SELECT * FROM a").is_err_and(|e| e.starts_with("42P01")),
        "a was created in the block: the others never saw it"
    );
    run(&mut db, "ROLLBACK TO two").unwrap();
    assert_eq!(run(&mut db, "SELECT n FROM a").unwrap().len(), 1);
    assert!(run(&mut db, "SELECT nextval('s')").is_err());
    run(&mut db, "ROLLBACK TO one").unwrap();
    assert_eq!(
        run(&mut db, "SELECT balance FROM wallets").unwrap().len(),
        1
    );
    run(&mut db, "ROLLBACK").unwrap();
    assert!(run(&mut db, "SELECT * FROM a").is_err_and(|e| e.starts_with("42P01")));
    assert_eq!(db.wallet(ID), Some(wallet(100, 3)));
    assert_eq!(
        general(&mut db, other, "SELECT balance FROM wallets").map(|rows| rows.len()),
        Ok(1)
    );
}

/// A partial unique index compares only the rows its predicate holds for: a writer waits for
/// the transaction that wrote such a row with its key, and a row outside the index never
/// waits or clashes.
#[test]
fn a_partial_unique_index_waits_only_for_rows_it_holds() {
    let mut db = Postgres::new();
    let a = db.connect();
    let b = db.connect();
    run_all(
        &mut db,
        a,
        &[
            "CREATE TABLE leases (id int PRIMARY KEY, resource text, released boolean)",
            "CREATE UNIQUE INDEX ON leases (resource) WHERE NOT released",
            "BEGIN",
            "INSERT INTO leases VALUES (1, 'r', false)",
        ],
    );
    assert_eq!(
        general(&mut db, b, "INSERT INTO leases VALUES (2, 'r', true)").map(|r| r.len()),
        Ok(0)
    );
    assert_eq!(
        general(&mut db, b, "INSERT INTO leases VALUES (3, 'r', false)"),
        Err("blocked".to_string())
    );
    general(&mut db, a, "ROLLBACK").unwrap();
    assert!(db.lock_wait_over(b, a));
    assert_eq!(
        general(&mut db, b, "INSERT INTO leases VALUES (3, 'r', false)").map(|r| r.len()),
        Ok(0)
    );
    let clash = general(&mut db, a, "INSERT INTO leases VALUES (4, 'r', false)");
    assert!(clash.is_err_and(|e| e.starts_with("23505")));
}

/// A table a rollback gives back keeps in its rows' queues only the sessions still waiting:
/// one that gave up (a timeout) before the table was dropped holds no one back. (A `DROP
/// TABLE` while the other session still waits is a deadlock, as on PostgreSQL 15: the
/// waiting `UPDATE` holds `ROW EXCLUSIVE` on the table, which `DROP TABLE`'s `ACCESS
/// EXCLUSIVE` waits for.)
#[test]
fn a_table_given_back_by_a_rollback_keeps_no_stale_waiter() {
    let mut db = Postgres::new();
    let (a, b, c) = (db.connect(), db.connect(), db.connect());
    run_all(
        &mut db,
        a,
        &[
            "CREATE TABLE t (id int PRIMARY KEY, n int)",
            "INSERT INTO t VALUES (1, 0)",
            "BEGIN",
            "UPDATE t SET n = 1 WHERE id = 1",
        ],
    );
    assert_eq!(
        general(&mut db, b, "UPDATE t SET n = 2 WHERE id = 1"),
        Err("blocked".to_string())
    );
    assert_eq!(
        general(&mut db, a, "SAVEPOINT s").and_then(|_| general(&mut db, a, "DROP TABLE t")),
        Err("40P01 deadlock detected".to_string()),
        "b's waiting UPDATE holds ROW EXCLUSIVE on t"
    );
    general(&mut db, a, "ROLLBACK TO SAVEPOINT s").unwrap();
    db.cancel_wait(
        b,
        PgError::error("55P03", "canceling statement due to lock timeout"),
    );
    general(&mut db, a, "DROP TABLE t").unwrap();
    general(&mut db, a, "ROLLBACK").unwrap();
    assert_eq!(
        general(&mut db, c, "UPDATE t SET n = 3 WHERE id = 1 RETURNING n").map(|rows| rows.len()),
        Ok(1),
        "b no longer waits: c goes first"
    );
}

/// A short query cannot make a text without bound: every function and operator that builds
/// a longer text than its inputs (`replace` multiplies, `||` and `string_agg` add up, `format`
/// repeats an argument by position) is refused past 64 MiB before it builds anything, with
/// the 54000 `repeat` and `lpad` give. Just under it, they build.
#[test]
fn texts_built_from_short_queries_are_refused_past_the_limit_before_they_are_built() {
    let (mut db, session) = setup();
    let refused = "54000 requested length too large";
    for sql in [
        // 64 * 1 MiB... times a thousand: a petabyte, were it built.
        "SELECT length(replace(repeat('a', 60000000), 'a', repeat('b', 60000000)))",
        "SELECT length(replace(repeat('a', 100), 'a', repeat('b', 1000000)))",
        "SELECT length(repeat('x', 40000000) || repeat('x', 40000000))",
        "SELECT length(concat(repeat('x', 40000000), 'y', repeat('x', 40000000)))",
        "SELECT length(concat_ws(repeat('-', 20000000), 'a', 'b', 'c', 'd'))",
        "SELECT length(array_to_string(ARRAY[repeat('x', 40000000), repeat('y', 40000000)], ','))",
        "SELECT length(array_to_string(ARRAY[NULL, NULL, NULL]::text[], ',', repeat('n', 30000000)))",
        "SELECT length(string_agg(repeat('x', 10000000), '')) FROM generate_series(1, 8)",
        "SELECT length(format('%1$s%1$s', repeat('x', 40000000)))",
        "WITH RECURSIVE t(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM t) SELECT length(s) FROM t",
    ] {
        assert_eq!(general(&mut db, session, sql), Err(refused.to_string()), "{sql}");
    }
    use leaselab_model::postgres::Value;
    for (sql, length) in [
        (
            "SELECT length(replace(repeat('a', 60), 'a', repeat('b', 1000000)))",
            60_000_000,
        ),
        (
            "SELECT length(repeat('x', 30000000) || repeat('x', 30000000))",
            60_000_000,
        ),
        (
            "SELECT length(string_agg(repeat('x', 1000000), ',')) FROM generate_series(1, 20)",
            20_000_019,
        ),
        ("SELECT length(concat_ws(',', 'a', NULL, 'b'))", 3),
    ] {
        assert_eq!(
            general(&mut db, session, sql),
            Ok(vec![vec![Value::Int(length)]]),
            "{sql}"
        );
    }
}

/// `wrap` applied `depth` times, starting from `inner`.
fn nested(wrap: impl Fn(String) -> String, inner: &str, depth: usize) -> String {
    (0..depth).fold(inner.to_string(), |e, _| wrap(e))
}

#[test]
fn nested_nullif_coalesce_greatest_and_case_take_work_in_proportion_to_their_depth() {
    use leaselab_model::postgres::Value;
    let (mut db, session) = setup();
    // Each of these doubled its work (or its size) at every level: 40 levels would have
    // taken days. PostgreSQL answers them at once.
    let mut cases = vec![
        (
            nested(|e| format!("nullif({e}, 2)"), "1", 40),
            Value::Int(1),
        ),
        (
            nested(|e| format!("coalesce({e}, 2)"), "null", 40),
            Value::Int(2),
        ),
        (
            nested(|e| format!("coalesce(null, {e})"), "3", 40),
            Value::Int(3),
        ),
        (
            nested(|e| format!("greatest(1, {e})"), "2", 40),
            Value::Int(2),
        ),
        (
            nested(|e| format!("case when true then {e} else 4 end"), "3", 40),
            Value::Int(3),
        ),
        (
            nested(|e| format!("case when false then 1 else {e} end"), "5", 40),
            Value::Int(5),
        ),
    ];
    // A chain of 999 operators (the most a statement may hold): its every node used to
    // recompute the types below it, some n^3 steps in all.
    cases.push((vec!["1"; 1000].join(" + "), Value::Int(1000)));
    for (expression, expected) in cases {
        let sql = format!("SELECT {expression}");
        let rows = general(&mut db, session, &sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(rows, vec![vec![expected]], "{sql}");
    }
}

#[test]
fn nullif_evaluates_its_first_argument_once_and_keeps_its_types() {
    use leaselab_model::postgres::Value;
    let (mut db, session) = setup();
    let one = |db: &mut Postgres, sql: &str| {
        general(db, session, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    assert_eq!(one(&mut db, "SELECT nullif(1, 1)"), vec![vec![Value::Null]]);
    assert_eq!(
        one(&mut db, "SELECT nullif(1, 2)"),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        one(&mut db, "SELECT nullif(NULL, 2)"),
        vec![vec![Value::Null]]
    );
    assert_eq!(
        one(&mut db, "SELECT nullif(2, NULL)"),
        vec![vec![Value::Int(2)]]
    );
    assert_eq!(
        one(&mut db, "SELECT nullif('a', 'a'), nullif('a', 'b')"),
        vec![vec![Value::Null, Value::Text("a".into())]]
    );
    // Promoted as `=` promotes them: 1 = 1.0, and the result is numeric.
    assert_eq!(
        one(
            &mut db,
            "SELECT nullif(1, 1.0), pg_typeof(nullif(1, 2.5))::text"
        ),
        vec![vec![Value::Null, Value::Text("numeric".into())]]
    );
    // A sequence advanced once per NULLIF, not once per use of its first argument.
    run_all(&mut db, session, &["CREATE SEQUENCE s"]);
    assert_eq!(
        one(&mut db, "SELECT nullif(nextval('s'), 0)"),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        one(&mut db, "SELECT nextval('s')"),
        vec![vec![Value::Int(2)]]
    );
}

#[test]
fn a_parameter_number_no_bind_can_reach_is_42p02_not_all_of_memory() {
    let (mut db, session) = setup();
    for sql in ["SELECT $2147483647", "SELECT $65536", "SELECT 1 + $9999999"] {
        let error = general(&mut db, session, sql).expect_err(sql);
        assert!(
            error.starts_with("42P02 there is no parameter $"),
            "{sql}: {error}"
        );
    }
}
