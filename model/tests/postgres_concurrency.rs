//! Several sessions: row locks, READ COMMITTED re-evaluation, NOWAIT, SKIP LOCKED, deadlocks.
//!
//! Each scenario was run against PostgreSQL 15 with two connections; the expected results are
//! what the server answered.

use leaselab_model::postgres::{
    DeadlockCheck, Exec, PgError, Postgres, QueryResult, RowLock, SessionId, Statement, TxStatus,
    Wallet, WriteGuard,
};

const ID: i64 = 42;
const OTHER_ID: i64 = 7;
const SELECT: Statement = Statement::Select { id: ID, lock: None };
const FOR_UPDATE: Statement = Statement::Select {
    id: ID,
    lock: Some(RowLock::ForUpdate),
};
const NOWAIT: Statement = Statement::Select {
    id: ID,
    lock: Some(RowLock::ForUpdateNowait),
};
const SKIP_LOCKED: Statement = Statement::Select {
    id: ID,
    lock: Some(RowLock::ForUpdateSkipLocked),
};
const FENCED: Statement = Statement::WriteFenced {
    id: ID,
    guard: WriteGuard::FenceBelow,
};
const CHECK_AND_SET: Statement = Statement::WriteFenced {
    id: ID,
    guard: WriteGuard::FenceBelowAndEqual,
};
const WRITE_BALANCE: Statement = Statement::WriteBalance { id: ID };
const DEBIT: Statement = Statement::Debit { id: ID };

/// Wallet 42 at (100, 3), wallet 7 at (50, 0), and sessions A and B.
fn setup() -> (Postgres, SessionId, SessionId) {
    let mut db = Postgres::new();
    db.seed_wallet(ID, wallet(100, 3));
    db.seed_wallet(OTHER_ID, wallet(50, 0));
    let a = db.connect();
    let b = db.connect();
    (db, a, b)
}

fn wallet(balance: i64, fence: i64) -> Wallet {
    Wallet { balance, fence }
}

fn ok(db: &mut Postgres, session: SessionId, statement: Statement, params: &[i64]) -> QueryResult {
    match db.execute(session, &statement, params) {
        Exec::Done(Ok(result)) => result,
        other => panic!("{} {params:?}: {other:?}", statement.sql()),
    }
}

fn err(db: &mut Postgres, session: SessionId, statement: Statement, params: &[i64]) -> PgError {
    match db.execute(session, &statement, params) {
        Exec::Done(Err(error)) => error,
        other => panic!("{} {params:?}: {other:?}", statement.sql()),
    }
}

fn blocked(
    db: &mut Postgres,
    session: SessionId,
    statement: Statement,
    params: &[i64],
) -> SessionId {
    match db.execute(session, &statement, params) {
        Exec::Blocked { by } => by,
        other => panic!("{} {params:?}: {other:?}", statement.sql()),
    }
}

#[test]
fn fenced_write_after_a_concurrent_higher_fence_commit_updates_nothing() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    assert_eq!(ok(&mut db, a, FENCED, &[90, 34]).tag, "UPDATE 1");
    // B's snapshot sees fence 3 < 33, so it needs the row lock and waits for A.
    assert_eq!(blocked(&mut db, b, FENCED, &[90, 33]), a);
    assert_eq!(db.waiting_on(b), Some(a));
    assert_eq!(
        db.wallet(ID),
        Some(wallet(100, 3)),
        "a blocked statement has no effect"
    );
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(db.waiting_on(b), None);
    // Re-executed, the WHERE clause sees fence 34.
    assert_eq!(ok(&mut db, b, FENCED, &[90, 33]).tag, "UPDATE 0");
    assert_eq!(db.wallet(ID), Some(wallet(90, 34)));
}

#[test]
fn debit_after_a_concurrent_commit_applies_to_the_new_balance() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    assert_eq!(ok(&mut db, a, DEBIT, &[10]).tag, "UPDATE 1");
    assert_eq!(blocked(&mut db, b, DEBIT, &[10]), a);
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, DEBIT, &[10]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(80, 3)));
}

#[test]
fn debit_after_a_concurrent_rollback_uses_the_original_row() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, DEBIT, &[10]);
    assert_eq!(blocked(&mut db, b, DEBIT, &[10]), a);
    assert_eq!(ok(&mut db, a, Statement::Rollback, &[]).tag, "ROLLBACK");
    assert_eq!(ok(&mut db, b, DEBIT, &[10]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(90, 3)));
}

#[test]
fn debit_that_no_longer_fits_after_a_commit_updates_nothing() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, DEBIT, &[95]);
    assert_eq!(blocked(&mut db, b, DEBIT, &[10]), a);
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, DEBIT, &[10]).tag, "UPDATE 0");
    assert_eq!(db.wallet(ID), Some(wallet(5, 3)));
}

#[test]
fn check_and_set_after_a_concurrent_commit_sees_the_changed_version() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, CHECK_AND_SET, &[90, 4, 3]);
    assert_eq!(blocked(&mut db, b, CHECK_AND_SET, &[90, 5, 3]), a);
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, CHECK_AND_SET, &[90, 5, 3]).tag, "UPDATE 0");
    assert_eq!(db.wallet(ID), Some(wallet(90, 4)));
}

#[test]
fn a_row_whose_committed_version_does_not_match_is_skipped_without_waiting() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[500]);
    // Committed balance 100 < 200 and fence 3 >= 2: no match, no wait.
    assert_eq!(ok(&mut db, b, DEBIT, &[200]).tag, "UPDATE 0");
    assert_eq!(ok(&mut db, b, FENCED, &[1, 2]).tag, "UPDATE 0");
    assert_eq!(db.waiting_on(b), None);
}

#[test]
fn check_violation_and_overflow_are_reported_before_waiting() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[500]);
    let error = err(&mut db, b, WRITE_BALANCE, &[-5]);
    assert_eq!(error.code, "23514");
    assert_eq!(
        error.detail.as_deref(),
        Some("Failing row contains (42, -5, 3).")
    );
    assert_eq!(err(&mut db, b, DEBIT, &[i64::MIN]).code, "22003");
    assert_eq!(db.waiting_on(b), None);
}

#[test]
fn plain_select_never_waits_and_sees_committed_data() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[500]);
    assert_eq!(ok(&mut db, b, SELECT, &[]).rows, [[100, 3]]);
    assert_eq!(ok(&mut db, a, SELECT, &[]).rows, [[500, 3]]);
}

#[test]
fn for_update_nowait_fails_on_a_locked_row() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, FOR_UPDATE, &[]);
    let error = err(&mut db, b, NOWAIT, &[]);
    assert_eq!(error.code, "55P03");
    assert_eq!(
        error.message,
        "could not obtain lock on row in relation \"wallets\""
    );
    assert_eq!(error.detail, None);
    // Inside a block the error aborts B's transaction.
    ok(&mut db, b, Statement::Begin, &[]);
    assert_eq!(err(&mut db, b, NOWAIT, &[]).code, "55P03");
    assert_eq!(db.status(b), Some(TxStatus::Failed));
    // Once A is done, NOWAIT gets the row.
    ok(&mut db, b, Statement::Rollback, &[]);
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, NOWAIT, &[]).rows, [[100, 3]]);
}

#[test]
fn for_update_skip_locked_leaves_a_locked_row_out() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, DEBIT, &[10]);
    let result = ok(&mut db, b, SKIP_LOCKED, &[]);
    assert_eq!(result.columns, ["balance", "fence"]);
    assert!(result.rows.is_empty());
    assert_eq!(result.tag, "SELECT 0");
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, SKIP_LOCKED, &[]).rows, [[90, 3]]);
}

#[test]
fn for_update_waits_for_a_writer_and_then_reads_its_commit() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, FENCED, &[70, 9]);
    ok(&mut db, b, Statement::Begin, &[]);
    assert_eq!(blocked(&mut db, b, FOR_UPDATE, &[]), a);
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, FOR_UPDATE, &[]).rows, [[70, 9]]);
    assert_eq!(db.locks(), [(ID, b)]);
}

#[test]
fn a_for_update_lock_blocks_writers_until_commit() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    assert_eq!(ok(&mut db, a, FOR_UPDATE, &[]).rows, [[100, 3]]);
    assert_eq!(blocked(&mut db, b, FENCED, &[10, 99]), a);
    assert_eq!(db.lock_holder(ID), Some(a));
    ok(&mut db, a, WRITE_BALANCE, &[90]);
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, FENCED, &[10, 99]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(10, 99)));
}

#[test]
fn an_error_in_the_holders_block_releases_its_locks_at_once() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[60]);
    assert_eq!(blocked(&mut db, b, DEBIT, &[10]), a);
    assert_eq!(err(&mut db, a, WRITE_BALANCE, &[-1]).code, "23514");
    assert_eq!(db.waiting_on(b), None);
    assert_eq!(ok(&mut db, b, DEBIT, &[10]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(90, 3)));
    assert_eq!(ok(&mut db, a, Statement::Commit, &[]).tag, "ROLLBACK");
}

#[test]
fn disconnecting_the_holder_releases_its_locks() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[60]);
    assert_eq!(blocked(&mut db, b, WRITE_BALANCE, &[70]), a);
    db.disconnect(a);
    assert_eq!(db.waiting_on(b), None);
    assert_eq!(ok(&mut db, b, WRITE_BALANCE, &[70]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(70, 3)));
}

#[test]
fn two_rows_locked_in_opposite_orders_deadlock() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, b, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[1]);
    ok(&mut db, b, Statement::WriteBalance { id: OTHER_ID }, &[2]);
    assert_eq!(
        blocked(&mut db, a, Statement::WriteBalance { id: OTHER_ID }, &[3]),
        b
    );
    let error = err(&mut db, b, WRITE_BALANCE, &[4]);
    assert_eq!(error.code, "40P01");
    assert_eq!(error.message, "deadlock detected");
    assert_eq!(
        error.detail.as_deref(),
        Some(
            "Process 10001 waits for ShareLock on transaction 1000; blocked by process 10000.\n\
             Process 10000 waits for ShareLock on transaction 1001; blocked by process 10001."
        )
    );
    // B's block is aborted and its lock on row 7 released: A goes on.
    assert_eq!(db.status(b), Some(TxStatus::Failed));
    assert_eq!(db.waiting_on(a), None);
    assert_eq!(
        ok(&mut db, a, Statement::WriteBalance { id: OTHER_ID }, &[3]).tag,
        "UPDATE 1"
    );
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, b, Statement::Commit, &[]).tag, "ROLLBACK");
    assert_eq!(db.wallet(ID), Some(wallet(1, 3)));
    assert_eq!(db.wallet(OTHER_ID), Some(wallet(3, 0)));
}

#[test]
fn for_update_in_opposite_orders_deadlocks_too() {
    let (mut db, a, b) = setup();
    let for_update_other = Statement::Select {
        id: OTHER_ID,
        lock: Some(RowLock::ForUpdate),
    };
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, b, Statement::Begin, &[]);
    ok(&mut db, a, FOR_UPDATE, &[]);
    ok(&mut db, b, for_update_other, &[]);
    assert_eq!(blocked(&mut db, a, for_update_other, &[]), b);
    assert_eq!(err(&mut db, b, FOR_UPDATE, &[]).code, "40P01");
    assert_eq!(ok(&mut db, a, for_update_other, &[]).rows, [[50, 0]]);
}

#[test]
fn a_three_session_cycle_is_detected() {
    let (mut db, a, b) = setup();
    let c = db.connect();
    db.seed_wallet(1, wallet(10, 0));
    let write = |id| Statement::WriteBalance { id };
    for (session, id) in [(a, ID), (b, OTHER_ID), (c, 1)] {
        ok(&mut db, session, Statement::Begin, &[]);
        ok(&mut db, session, write(id), &[5]);
    }
    assert_eq!(blocked(&mut db, a, write(OTHER_ID), &[6]), b);
    assert_eq!(blocked(&mut db, b, write(1), &[6]), c);
    let error = err(&mut db, c, write(ID), &[6]);
    assert_eq!(error.code, "40P01");
    assert_eq!(
        error.detail.as_deref(),
        Some(
            "Process 10002 waits for ShareLock on transaction 1000; blocked by process 10000.\n\
             Process 10000 waits for ShareLock on transaction 1001; blocked by process 10001.\n\
             Process 10001 waits for ShareLock on transaction 1002; blocked by process 10002."
        )
    );
    assert_eq!(db.waiting_on(b), None, "C's abort released row 1");
    assert_eq!(db.waiting_on(a), Some(b));
}

#[test]
fn a_stale_wait_does_not_cause_a_false_deadlock() {
    let (mut db, a, b) = setup();
    ok(&mut db, b, Statement::Begin, &[]);
    ok(&mut db, b, WRITE_BALANCE, &[1]);
    // A (autocommit) waits for B, then B commits; A has not re-executed yet.
    assert_eq!(blocked(&mut db, a, WRITE_BALANCE, &[2]), b);
    ok(&mut db, b, Statement::Commit, &[]);
    // A now opens a block and locks row 42; B waiting on A is no cycle.
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[2]);
    assert_eq!(blocked(&mut db, b, WRITE_BALANCE, &[3]), a);
}

#[test]
fn an_autocommit_statement_waiting_holds_no_lock() {
    let (mut db, a, b) = setup();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[1]);
    assert_eq!(blocked(&mut db, b, WRITE_BALANCE, &[2]), a);
    assert_eq!(db.locks(), [(ID, a)]);
    // A can still lock another row: nothing waits on B.
    assert_eq!(
        ok(&mut db, a, Statement::WriteBalance { id: OTHER_ID }, &[3]).tag,
        "UPDATE 1"
    );
}

/// PostgreSQL queues a row's waiters on its tuple lock: when the holder ends, the first waiter
/// takes the row and a later one waits behind it, whichever of them runs again first. (Run
/// against PostgreSQL 15 as `tests/fidelity_postgres.rs`'s
/// `waiters_take_a_released_row_in_the_order_they_began_waiting`.)
#[test]
fn waiters_take_a_released_row_in_the_order_they_began_waiting() {
    let (mut db, a, b) = setup();
    let c = db.connect();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[10]);
    for waiter in [b, c] {
        ok(&mut db, waiter, Statement::Begin, &[]);
    }
    assert_eq!(blocked(&mut db, b, DEBIT, &[1]), a);
    // B, first in the queue, holds PostgreSQL's tuple lock: C waits for B.
    assert_eq!(blocked(&mut db, c, DEBIT, &[1]), b);
    assert_eq!(db.lock_queue(ID), &[b, c]);
    assert!(!db.lock_wait_over(b, a) && !db.lock_wait_over(c, b));
    ok(&mut db, a, Statement::Commit, &[]);
    assert!(db.lock_wait_over(b, a), "the first waiter goes on");
    assert!(!db.lock_wait_over(c, b), "the second waits behind it");
    // C runs again first: it still waits for B, which holds nothing yet but is ahead of it.
    assert_eq!(blocked(&mut db, c, DEBIT, &[1]), b);
    assert_eq!(db.lock_queue(ID), &[b, c], "C keeps its place");
    assert_eq!(ok(&mut db, b, DEBIT, &[1]).tag, "UPDATE 1");
    assert_eq!(db.lock_queue(ID), &[c]);
    assert_eq!(db.lock_holder(ID), Some(b));
    assert!(!db.lock_wait_over(c, b), "B holds the row until it ends");
    ok(&mut db, b, Statement::Commit, &[]);
    assert!(db.lock_wait_over(c, b));
    assert_eq!(ok(&mut db, c, DEBIT, &[1]).tag, "UPDATE 1");
    assert!(db.lock_queue(ID).is_empty());
    ok(&mut db, c, Statement::Commit, &[]);
    assert_eq!(db.wallet(ID), Some(wallet(8, 3)));
}

/// An autocommit waiter at the head of the queue holds the others back until its statement
/// has run; then they no longer wait for it.
#[test]
fn an_autocommit_waiter_ahead_holds_the_queue_until_it_has_run() {
    let (mut db, a, b) = setup();
    let c = db.connect();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[10]);
    assert_eq!(blocked(&mut db, b, DEBIT, &[1]), a);
    assert_eq!(blocked(&mut db, c, DEBIT, &[2]), b);
    ok(&mut db, a, Statement::Commit, &[]);
    assert_eq!(blocked(&mut db, c, DEBIT, &[2]), b);
    assert!(!db.lock_wait_over(c, b));
    assert_eq!(ok(&mut db, b, DEBIT, &[1]).tag, "UPDATE 1");
    assert_eq!(
        db.waiting_on(c),
        None,
        "B's statement ran and took its lock with it"
    );
    assert!(db.lock_wait_over(c, b));
    assert_eq!(ok(&mut db, c, DEBIT, &[2]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(7, 3)));
}

/// A session that never waited for the row may take it while it is free, before the first
/// waiter runs again (as in PostgreSQL between the commit and the waiter waking up); the
/// waiter then waits for it, keeping its place. A waiter that gives up (disconnects) leaves
/// the queue.
#[test]
fn a_newcomer_may_take_a_free_row_and_a_waiter_that_leaves_gives_up_its_place() {
    let (mut db, a, b) = setup();
    let c = db.connect();
    let d = db.connect();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[10]);
    assert_eq!(blocked(&mut db, b, DEBIT, &[1]), a);
    assert_eq!(blocked(&mut db, c, DEBIT, &[1]), b);
    ok(&mut db, a, Statement::Commit, &[]);
    ok(&mut db, d, Statement::Begin, &[]);
    assert_eq!(ok(&mut db, d, DEBIT, &[5]).tag, "UPDATE 1");
    assert_eq!(blocked(&mut db, b, DEBIT, &[1]), d);
    assert_eq!(db.lock_queue(ID), &[b, c]);
    db.disconnect(b);
    assert_eq!(db.lock_queue(ID), &[c]);
    assert_eq!(blocked(&mut db, c, DEBIT, &[1]), d);
    ok(&mut db, d, Statement::Commit, &[]);
    assert_eq!(ok(&mut db, c, DEBIT, &[1]).tag, "UPDATE 1");
    assert_eq!(db.wallet(ID), Some(wallet(4, 3)));
}

/// A deadlock check reads the waits as they stand, as PostgreSQL's reads its lock table: when
/// the first waiter of a row's queue is aborted, the waiters behind it wait for the next in
/// line at once, without running again. A check that read the wait a session stored when it
/// last ran would miss the cycle below, and since a wait looks for a deadlock only once, the
/// sessions in it would wait forever (PostgreSQL always finds such a cycle).
#[test]
fn a_cycle_through_a_queue_whose_first_waiter_changed_is_found() {
    let (mut db, [h42, h43, first, second]) = two_holders_and_two_more();
    assert_eq!(blocked(&mut db, first, for_update(OTHER_ID), &[]), h43);
    assert_eq!(blocked(&mut db, second, for_update(OTHER_ID), &[]), first);
    assert_eq!(blocked(&mut db, h43, for_update(ID), &[]), h42);
    assert_eq!(blocked(&mut db, h42, for_update(OTHER_ID), &[]), first);
    assert_eq!(db.lock_queue(OTHER_ID), &[first, second, h42]);
    // first -> h43 -> h42 -> first.
    let error = db
        .check_deadlock(first)
        .expect("a cycle through the first waiter");
    assert_eq!(error.code, "40P01");
    assert_eq!(db.lock_queue(OTHER_ID), &[second, h42]);
    // `second` comes first and runs again: it waits for h43. h42, behind it, has not run
    // since, yet it now waits for `second`: h43 -> h42 -> second -> h43.
    assert_eq!(blocked(&mut db, second, for_update(OTHER_ID), &[]), h43);
    let error = db
        .check_deadlock(h43)
        .expect("a cycle through the new first waiter");
    assert_eq!(error.code, "40P01");
    assert_eq!(db.lock_holder(ID), Some(h42));
    assert_eq!(
        db.lock_holder(OTHER_ID),
        None,
        "h43's abort released its row"
    );
}

/// Four sessions in blocks, deadlocks looked for only when a driver asks (after
/// `deadlock_timeout`): the first holds row 42 (`FOR UPDATE`), the second row 7, the other two
/// hold nothing yet.
fn two_holders_and_two_more() -> (Postgres, [SessionId; 4]) {
    let (mut db, h42, h43) = setup_on_timeout();
    let sessions = [h42, h43, db.connect(), db.connect()];
    for session in sessions {
        ok(&mut db, session, Statement::Begin, &[]);
    }
    ok(&mut db, h42, for_update(ID), &[]);
    ok(&mut db, h43, for_update(OTHER_ID), &[]);
    (db, sessions)
}

/// `SELECT balance, fence ... FOR UPDATE` of row `id`.
fn for_update(id: i64) -> Statement {
    Statement::Select {
        id,
        lock: Some(RowLock::ForUpdate),
    }
}

/// [`setup`] with deadlocks looked for only when a driver asks (after `deadlock_timeout`).
fn setup_on_timeout() -> (Postgres, SessionId, SessionId) {
    let (mut db, a, b) = setup();
    db.set_deadlock_check(DeadlockCheck::OnTimeout);
    (db, a, b)
}

/// PostgreSQL's "soft" deadlock: a waiter's check finds a cycle through itself only because a
/// session later in the same queue waits for it by being behind it. Here `h43`, holding row 7
/// and queued last for row 42, closes a cycle `w1 -> h42 -> h43 -> w1`; `w2`, between them in
/// row 42's queue, is in it only through that soft edge `h43 -> w2`. PostgreSQL would move
/// `h43` ahead of `w2`, but `h43` is in a cycle of real waits, so it aborts `w2` (run against
/// PostgreSQL 15 as `tests/fidelity_postgres.rs`'s
/// `a_soft_deadlock_aborts_the_waiter_that_finds_it`).
#[test]
fn a_soft_deadlock_aborts_the_waiter_that_finds_it() {
    let (mut db, [h42, h43, w1, w2]) = two_holders_and_two_more();
    assert_eq!(blocked(&mut db, w1, for_update(ID), &[]), h42);
    assert_eq!(blocked(&mut db, w2, for_update(ID), &[]), w1);
    assert_eq!(db.check_deadlock(w2), None, "no cycle yet");
    assert_eq!(blocked(&mut db, h43, for_update(ID), &[]), w1);
    assert_eq!(blocked(&mut db, h42, for_update(OTHER_ID), &[]), h43);
    assert_eq!(db.lock_queue(ID), &[w1, w2, h43]);
    let error = db.check_deadlock(w2).expect("w2 -> w1 -> h42 -> h43 -> w2");
    assert_eq!(error.code, "40P01");
    assert_eq!(db.lock_queue(ID), &[w1, h43]);
    assert_eq!(db.status(w2), Some(TxStatus::Failed));
    let error = db.check_deadlock(h43).expect("h43 -> w1 -> h42 -> h43");
    assert_eq!(error.code, "40P01");
    assert_eq!(db.lock_queue(ID), &[w1], "h43 left row 42's queue");
    assert_eq!(db.lock_holder(OTHER_ID), None, "and released row 7");
}

/// A waiter that runs another statement instead (a driver that gave up on the wait) leaves the
/// queue; the session behind it then waits for it no more, even if its new statement opened a
/// block, since it holds no lock.
#[test]
fn a_waiter_that_runs_something_else_leaves_the_queue_and_no_one_waits_for_it() {
    let (mut db, a, b) = setup();
    let c = db.connect();
    ok(&mut db, a, Statement::Begin, &[]);
    ok(&mut db, a, WRITE_BALANCE, &[10]);
    assert_eq!(blocked(&mut db, b, WRITE_BALANCE, &[1]), a);
    assert_eq!(blocked(&mut db, c, WRITE_BALANCE, &[2]), b);
    ok(&mut db, b, Statement::Begin, &[]);
    assert_eq!(db.lock_queue(ID), &[c]);
    assert_eq!(db.waiting_on(c), None, "b holds nothing c could wait for");
    assert_eq!(blocked(&mut db, c, WRITE_BALANCE, &[2]), a);
}

/// Advisory locks in the engine, as the model checker and the simulation drive it: a
/// `pg_advisory_lock` that conflicts is blocked by the holder and its wait is over only when
/// the lock is free (a session-level lock outlives the holder's transactions); it then takes
/// the lock; a disconnect gives every lock back; and with the checker's deadlock check at once
/// the call that would close a cycle of advisory waits fails with 40P01.
#[test]
fn advisory_lock_waits_end_when_the_lock_is_free() {
    use leaselab_model::postgres::{parse_general, SqlExec, Value};
    let mut db = Postgres::new();
    let (a, b, c) = (db.connect(), db.connect(), db.connect());
    let run = |db: &mut Postgres, session: SessionId, sql: &str| {
        let statement = parse_general(sql).expect("parses");
        match db.execute_sql(session, &statement, &[]).exec {
            SqlExec::Done(Ok(result)) => Ok(result.rows[0][0].clone()),
            SqlExec::Done(Err(error)) => Err(error.code.to_string()),
            SqlExec::Blocked { by } => Err(format!("blocked by {}", by.0)),
        }
    };
    let void = Ok(Value::Text(String::new()));
    assert_eq!(run(&mut db, a, "SELECT pg_advisory_lock(7)"), void);
    let blocked = run(&mut db, b, "SELECT pg_advisory_lock(7)");
    assert_eq!(blocked, Err(format!("blocked by {}", a.0)));
    assert_eq!(db.waiting_on(b), Some(a));
    assert!(
        !db.lock_wait_over(b, a),
        "a still holds the lock, in no transaction"
    );
    assert_eq!(
        run(&mut db, a, "SELECT pg_advisory_unlock(7)"),
        Ok(Value::Bool(true))
    );
    assert!(db.take_lock_released());
    assert!(db.lock_wait_over(b, a));
    assert_eq!(run(&mut db, b, "SELECT pg_advisory_lock(7)"), void);
    assert_eq!(
        run(&mut db, c, "SELECT pg_try_advisory_lock(7)"),
        Ok(Value::Bool(false))
    );
    db.disconnect(b);
    assert_eq!(
        run(&mut db, c, "SELECT pg_try_advisory_lock(7)"),
        Ok(Value::Bool(true))
    );
    // A cycle: a holds 1 and waits for 2, c holds 2 (and 7) and asks for 1.
    assert_eq!(run(&mut db, a, "SELECT pg_advisory_lock(1)"), void);
    assert_eq!(run(&mut db, c, "SELECT pg_advisory_lock(2)"), void);
    assert_eq!(
        run(&mut db, a, "SELECT pg_advisory_lock(2)"),
        Err(format!("blocked by {}", c.0))
    );
    assert_eq!(
        run(&mut db, c, "SELECT pg_advisory_lock(1)"),
        Err("40P01".to_string())
    );
    assert!(!db.lock_wait_over(a, c), "c keeps its session-level lock");
}

/// A statement outside a block runs at the session's `default_transaction_isolation`: at
/// REPEATABLE READ an `UPDATE` that waited for a concurrent writer fails with 40001 once the
/// writer commits (PostgreSQL 15 answered so: `could not serialize access due to concurrent
/// update`, the row left at the writer's value); at READ COMMITTED it updates the new version.
/// `SET TRANSACTION ISOLATION LEVEL` in a block changes that block only.
#[test]
fn a_statement_outside_a_block_runs_at_the_default_isolation() {
    use leaselab_model::postgres::{parse_general, SqlExec, Value};
    let run = |db: &mut Postgres, session: SessionId, sql: &str| {
        let statement = parse_general(sql).expect("parses");
        match db.execute_sql(session, &statement, &[]).exec {
            SqlExec::Done(Ok(result)) => Ok(result.rows.first().map(|row| row[0].clone())),
            SqlExec::Done(Err(error)) => Err(error.code.to_string()),
            SqlExec::Blocked { by } => Err(format!("blocked by {}", by.0)),
        }
    };
    for (level, expected) in [
        ("repeatable read", Err("40001".to_string())),
        ("read committed", Ok(Some(Value::Int(12)))),
    ] {
        let mut db = Postgres::new();
        let (a, b) = (db.connect(), db.connect());
        run(
            &mut db,
            a,
            "CREATE TABLE s (id bigint PRIMARY KEY, n bigint)",
        )
        .unwrap();
        run(&mut db, a, "INSERT INTO s VALUES (1, 10)").unwrap();
        let set = format!("SET default_transaction_isolation = '{level}'");
        run(&mut db, a, &set).unwrap();
        run(&mut db, b, "BEGIN").unwrap();
        run(&mut db, b, "UPDATE s SET n = 11 WHERE id = 1").unwrap();
        let update = "UPDATE s SET n = n + 1 WHERE id = 1 RETURNING n";
        assert_eq!(run(&mut db, a, update), Err(format!("blocked by {}", b.0)));
        run(&mut db, b, "COMMIT").unwrap();
        assert_eq!(run(&mut db, a, update), expected, "{level}");
        assert_eq!(db.status(a), Some(TxStatus::Idle));
        // The next statement starts from a fresh snapshot.
        let read = run(&mut db, a, "SELECT n FROM s WHERE id = 1").unwrap();
        assert_eq!(
            read,
            Some(Value::Int(if level == "read committed" { 12 } else { 11 }))
        );
    }
    // A block's own level, set before its first query, is the block's only.
    let mut db = Postgres::new();
    let a = db.connect();
    run(&mut db, a, "BEGIN").unwrap();
    run(&mut db, a, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").unwrap();
    assert_eq!(
        run(&mut db, a, "SHOW transaction_isolation"),
        Ok(Some(Value::Text("serializable".into())))
    );
    run(&mut db, a, "COMMIT").unwrap();
    assert_eq!(
        run(&mut db, a, "SHOW transaction_isolation"),
        Ok(Some(Value::Text("read committed".into())))
    );
}

/// The queue pattern with a subquery that waits: `DELETE ... WHERE id = (SELECT id ... LIMIT 1
/// FOR UPDATE)` while another session deletes the first row. The subquery waits for that
/// row; when the deleter commits, the row is gone and the subquery takes the next one.
/// PostgreSQL 15 answered 2, leaving only 3.
#[test]
fn a_subquery_that_waits_for_a_row_takes_the_next_when_it_is_deleted() {
    use leaselab_model::postgres::Value;
    let run = run_rows;
    let mut db = Postgres::new();
    let (a, b) = (db.connect(), db.connect());
    run(&mut db, a, "CREATE TABLE q (id bigint PRIMARY KEY)").unwrap();
    run(&mut db, a, "INSERT INTO q VALUES (1), (2), (3)").unwrap();
    run(&mut db, a, "BEGIN").unwrap();
    run(&mut db, a, "DELETE FROM q WHERE id = 1").unwrap();
    let take =
        "DELETE FROM q WHERE id = (SELECT id FROM q ORDER BY id LIMIT 1 FOR UPDATE) RETURNING id";
    assert_eq!(run(&mut db, b, take), Err(format!("blocked by {}", a.0)));
    run(&mut db, a, "COMMIT").unwrap();
    assert_eq!(run(&mut db, b, take), Ok(vec![vec![Value::Int(2)]]));
    assert_eq!(
        run(&mut db, b, "SELECT id FROM q"),
        Ok(vec![vec![Value::Int(3)]])
    );
}

/// A subquery in `FROM` or a `WITH` query is made into a table of the statement's own, gone
/// when the statement is over, whether it answered, failed or waited for a row lock: the
/// server is then equal to one that ran the same statement without it. (The checker hashes
/// and compares servers: a leftover would split equal states.)
#[test]
fn a_statements_own_relations_leave_nothing_behind() {
    use leaselab_model::postgres::Value;
    let run = run_rows;
    let mut db = Postgres::new();
    let (a, b) = (db.connect(), db.connect());
    run(
        &mut db,
        a,
        "CREATE TABLE jobs (id bigint PRIMARY KEY, state text NOT NULL)",
    )
    .expect("creates");
    run(
        &mut db,
        a,
        "INSERT INTO jobs VALUES (1, 'queued'), (2, 'queued')",
    )
    .expect("inserts");
    let before = db.clone();
    let rows = run(
        &mut db,
        b,
        "WITH q AS (SELECT id FROM jobs WHERE state = 'queued') SELECT count(*) FROM (SELECT * FROM q) s",
    );
    assert_eq!(rows, Ok(vec![vec![Value::Int(2)]]));
    assert_eq!(db, before, "a query through relations changes nothing");
    let rows = run(
        &mut db,
        b,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 4) SELECT sum(n) FROM r UNION SELECT 0",
    );
    assert_eq!(rows.map(|r| r.len()), Ok(2));
    assert_eq!(db, before, "nor do recursion and set operations");
    let too_long = run(
        &mut db,
        b,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    );
    assert_eq!(too_long, Err("54000".to_string()));
    assert_eq!(
        db, before,
        "a recursion stopped at its limit leaves nothing either"
    );
    let failed = run(
        &mut db,
        b,
        "WITH q AS (SELECT id FROM jobs) SELECT 1 / (id - id) FROM q",
    );
    assert_eq!(failed, Err("22012".to_string()));
    assert_eq!(db, before, "a failed statement leaves no relation behind");

    // A claim that waits for a's row lock, against the same claim without a relation.
    run(&mut db, a, "BEGIN").expect("begins");
    run(&mut db, a, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE").expect("locks");
    let mut plain = db.clone();
    let waited = run(
        &mut db,
        b,
        "WITH q AS (SELECT 1 AS id) UPDATE jobs SET state = 'running' FROM q WHERE jobs.id = q.id",
    );
    assert_eq!(waited, Err(format!("blocked by {}", a.0)));
    let waited_plain = run(
        &mut plain,
        b,
        "UPDATE jobs SET state = 'running' WHERE jobs.id = 1",
    );
    assert_eq!(waited_plain, waited);
    assert_eq!(db, plain, "a waiting statement leaves no relation behind");
    // Once a commits, the claim runs again from the start, relation and all.
    run(&mut db, a, "COMMIT").expect("commits");
    let resumed = run(
        &mut db,
        b,
        "WITH q AS (SELECT 1 AS id) UPDATE jobs SET state = 'running' FROM q WHERE jobs.id = q.id RETURNING jobs.state",
    );
    assert_eq!(resumed, Ok(vec![vec![Value::Text("running".to_string())]]));
}

/// A `WITH` query that changes data: a statement that fails after it changed rows is undone
/// whole but for the numbers its sequences gave; one that would have to wait for a lock after
/// it changed rows is refused (0A000: run again from the start, it would change them twice)
/// and undone; one whose change waits first waits as any statement does.
#[test]
fn a_statement_that_changes_data_in_a_with_query_is_undone_whole() {
    use leaselab_model::postgres::Value;
    let run = run_rows;
    let mut db = Postgres::new();
    let (a, b) = (db.connect(), db.connect());
    for sql in [
        "CREATE TABLE w (id bigint PRIMARY KEY, balance bigint NOT NULL)",
        "CREATE TABLE other (id bigint PRIMARY KEY, n bigint)",
        "CREATE TABLE ledger (id serial PRIMARY KEY, wallet bigint)",
        "INSERT INTO w VALUES (1, 100)",
        "INSERT INTO other VALUES (1, 0)",
    ] {
        run(&mut db, a, sql).expect(sql);
    }
    // Fails after the debit: nothing of it stays, but the ledger's number is gone.
    let failed = run(
        &mut db,
        b,
        "WITH d AS (UPDATE w SET balance = balance - 10 WHERE id = 1 RETURNING id), l AS (INSERT INTO ledger (wallet) SELECT id FROM d RETURNING id) SELECT 1 / (SELECT count(*) - 1 FROM l)",
    );
    assert_eq!(failed, Err("22012".to_string()));
    let balance = run(&mut db, a, "SELECT balance FROM w");
    assert_eq!(balance, Ok(vec![vec![Value::Int(100)]]));
    let next = run(
        &mut db,
        a,
        "INSERT INTO ledger (wallet) VALUES (1) RETURNING id",
    );
    assert_eq!(next, Ok(vec![vec![Value::Int(2)]]), "number 1 was taken");

    // a holds other's row: b's statement changed w, then would wait for it.
    run(&mut db, a, "BEGIN").expect("begins");
    run(&mut db, a, "UPDATE other SET n = 1 WHERE id = 1").expect("locks");
    let before = db.clone();
    let refused = run(
        &mut db,
        b,
        "WITH d AS (UPDATE w SET balance = balance - 10 WHERE id = 1 RETURNING id) UPDATE other SET n = 2 WHERE id IN (SELECT id FROM d)",
    );
    assert_eq!(refused, Err("0A000".to_string()));
    assert_eq!(db, before, "the refused statement is undone");
    // The change that waits comes first: b waits, as for any statement, holding nothing.
    let waits = run(
        &mut db,
        b,
        "WITH d AS (UPDATE other SET n = 2 WHERE id = 1 RETURNING id) UPDATE w SET balance = balance - 10 WHERE id IN (SELECT id FROM d)",
    );
    assert_eq!(waits, Err(format!("blocked by {}", a.0)));
    run(&mut db, a, "COMMIT").expect("commits");
    let resumed = run(
        &mut db,
        b,
        "WITH d AS (UPDATE other SET n = 2 WHERE id = 1 RETURNING id) UPDATE w SET balance = balance - 10 WHERE id IN (SELECT id FROM d) RETURNING balance",
    );
    assert_eq!(resumed, Ok(vec![vec![Value::Int(90)]]));
}

/// Runs `sql` in `session`: its rows, its SQLSTATE, or `blocked by N`.
fn run_rows(
    db: &mut Postgres,
    session: SessionId,
    sql: &str,
) -> Result<Vec<Vec<leaselab_model::postgres::Value>>, String> {
    use leaselab_model::postgres::{parse_general, SqlExec};
    let statement = parse_general(sql).expect("parses");
    match db.execute_sql(session, &statement, &[]).exec {
        SqlExec::Done(Ok(result)) => Ok(result.rows),
        SqlExec::Done(Err(error)) => Err(error.code.to_string()),
        SqlExec::Blocked { by } => Err(format!("blocked by {}", by.0)),
    }
}
