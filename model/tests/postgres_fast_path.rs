//! The typed statements' native path against the general SQL path, on generated sequences.
//!
//! The safeguards' statements run natively ([`Postgres::execute`]); the same statements as SQL
//! text go through the SQL front end ([`Postgres::execute_sql`]). Both must give the same
//! result (rows, command tag, error, or the session they wait for) at every step, and leave
//! the same rows, locks and transaction states.

use leaselab_model::postgres::{
    parse_general, Exec, PgError, Postgres, RowLock, SessionId, SqlExec, Statement, Value, Wallet,
    WriteGuard,
};
use proptest::prelude::*;

/// What a step did, in a form both paths share.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Rows(String, Vec<Vec<i64>>),
    Error(PgError),
    Blocked(SessionId),
}

fn statement() -> impl Strategy<Value = Statement> {
    let id = prop_oneof![Just(1i64), Just(2), Just(3)];
    prop_oneof![
        Just(Statement::Begin),
        Just(Statement::Commit),
        Just(Statement::Rollback),
        (
            id.clone(),
            prop_oneof![
                Just(None),
                Just(Some(RowLock::ForUpdate)),
                Just(Some(RowLock::ForUpdateNowait)),
                Just(Some(RowLock::ForUpdateSkipLocked)),
            ]
        )
            .prop_map(|(id, lock)| Statement::Select { id, lock }),
        (
            id.clone(),
            prop_oneof![
                Just(WriteGuard::Unfenced),
                Just(WriteGuard::FenceBelow),
                Just(WriteGuard::FenceBelowAndEqual),
            ]
        )
            .prop_map(|(id, guard)| Statement::WriteFenced { id, guard }),
        id.clone().prop_map(|id| Statement::WriteBalance { id }),
        id.prop_map(|id| Statement::Debit { id }),
    ]
}

fn param() -> impl Strategy<Value = i64> {
    prop_oneof![4 => -5i64..120, 1 => Just(i64::MAX), 1 => Just(i64::MIN)]
}

fn seeded() -> Postgres {
    let mut db = Postgres::new();
    db.seed_wallet(
        1,
        Wallet {
            balance: 100,
            fence: 0,
        },
    );
    db.seed_wallet(
        2,
        Wallet {
            balance: 5,
            fence: 7,
        },
    );
    db
}

fn native(db: &mut Postgres, session: SessionId, statement: &Statement, params: &[i64]) -> Outcome {
    match db.execute(session, statement, params) {
        Exec::Blocked { by } => Outcome::Blocked(by),
        Exec::Done(Ok(result)) => Outcome::Rows(result.tag, result.rows),
        Exec::Done(Err(error)) => Outcome::Error(error),
    }
}

fn general(
    db: &mut Postgres,
    session: SessionId,
    statement: &Statement,
    params: &[i64],
) -> Outcome {
    let parsed = parse_general(&statement.sql()).expect("the safeguards' SQL parses");
    let values: Vec<Value> = params.iter().map(|&v| Value::Int(v)).collect();
    match db.execute_sql(session, &parsed, &values).exec {
        SqlExec::Blocked { by } => Outcome::Blocked(by),
        SqlExec::Done(Ok(result)) => Outcome::Rows(
            result.tag,
            result
                .rows
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|v| match v {
                            Value::Int(i) => *i,
                            other => panic!("a non-bigint value {other:?}"),
                        })
                        .collect()
                })
                .collect(),
        ),
        SqlExec::Done(Err(error)) => Outcome::Error(error),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_native_path_equals_the_general_path(
        steps in proptest::collection::vec((0usize..3, statement(), proptest::collection::vec(param(), 3)), 1..30)
    ) {
        let (mut fast, mut slow) = (seeded(), seeded());
        let sessions: Vec<SessionId> = (0..3).map(|_| fast.connect()).collect();
        for _ in 0..3 {
            slow.connect();
        }
        for (index, (who, statement, params)) in steps.iter().enumerate() {
            let session = sessions[*who];
            let params = &params[..statement.param_count()];
            let a = native(&mut fast, session, statement, params);
            let b = general(&mut slow, session, statement, params);
            prop_assert_eq!(&a, &b, "step {}: {:?} {:?} in {:?}", index, statement.sql(), params, session);
            for id in 1..=3 {
                prop_assert_eq!(fast.wallet(id), slow.wallet(id));
                prop_assert_eq!(fast.lock_holder(id), slow.lock_holder(id));
                for &s in &sessions {
                    prop_assert_eq!(fast.visible_wallet(s, id), slow.visible_wallet(s, id));
                }
            }
            for &s in &sessions {
                prop_assert_eq!(fast.status(s), slow.status(s));
                prop_assert_eq!(fast.waiting_on(s), slow.waiting_on(s));
            }
        }
    }
}
