//! Properties over random interleavings of statements from two or three sessions.

use leaselab_model::postgres::{
    Exec, Postgres, RowLock, SessionId, Statement, TxStatus, Wallet, WriteGuard,
};
use proptest::prelude::*;

const ID: i64 = 42;
const INITIAL: Wallet = Wallet {
    balance: 100,
    fence: 3,
};

/// What a session does next.
#[derive(Clone, Copy, Debug)]
enum Op {
    Begin,
    Commit,
    Rollback,
    /// `AND fence < $2`.
    Fenced {
        balance: i64,
        fence: i64,
    },
    /// `AND fence < $2 AND fence = $3`.
    CheckAndSet {
        balance: i64,
        fence: i64,
        read: i64,
    },
    ForUpdate,
    Select,
    Debit {
        amount: i64,
    },
    Disconnect,
}

impl Op {
    /// The statement and its parameters (None for a disconnect).
    fn request(self) -> Option<(Statement, Vec<i64>)> {
        let select = |lock| Statement::Select { id: ID, lock };
        let fenced = |guard| Statement::WriteFenced { id: ID, guard };
        Some(match self {
            Op::Begin => (Statement::Begin, vec![]),
            Op::Commit => (Statement::Commit, vec![]),
            Op::Rollback => (Statement::Rollback, vec![]),
            Op::Fenced { balance, fence } => (fenced(WriteGuard::FenceBelow), vec![balance, fence]),
            Op::CheckAndSet {
                balance,
                fence,
                read,
            } => (
                fenced(WriteGuard::FenceBelowAndEqual),
                vec![balance, fence, read],
            ),
            Op::ForUpdate => (select(Some(RowLock::ForUpdate)), vec![]),
            Op::Select => (select(None), vec![]),
            Op::Debit { amount } => (Statement::Debit { id: ID }, vec![amount]),
            Op::Disconnect => return None,
        })
    }
}

fn control() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Begin),
        Just(Op::Commit),
        Just(Op::Rollback),
        Just(Op::ForUpdate),
        Just(Op::Select),
        Just(Op::Disconnect),
    ]
}

/// Fenced writes and transaction control, with negative balances now and then (23514).
fn fenced_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (-10i64..200, 0i64..12).prop_map(|(balance, fence)| Op::Fenced { balance, fence }),
        2 => (-10i64..200, 0i64..12, 0i64..12)
            .prop_map(|(balance, fence, read)| Op::CheckAndSet { balance, fence, read }),
        3 => control(),
    ]
}

/// Debits and transaction control.
fn debit_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0i64..60).prop_map(|amount| Op::Debit { amount }),
        2 => control(),
    ]
}

/// A driver that behaves like a client: a blocked statement is executed again the next
/// time its session gets a turn.
struct Driver {
    db: Postgres,
    sessions: Vec<SessionId>,
    blocked: Vec<Option<(Statement, Vec<i64>)>>,
}

impl Driver {
    fn new(session_count: usize) -> Driver {
        let mut db = Postgres::new();
        db.seed_wallet(ID, INITIAL);
        let sessions = (0..session_count).map(|_| db.connect()).collect();
        Driver {
            db,
            sessions,
            blocked: vec![None; session_count],
        }
    }

    /// Gives session `index` a turn; returns the statement run, its parameters and what it
    /// did (None for a disconnect, which reconnects the session).
    fn turn(&mut self, index: usize, op: Op) -> Option<(Statement, Vec<i64>, Exec)> {
        let session = self.sessions[index];
        let request = match self.blocked[index].take() {
            Some(waiting) => Some(waiting),
            None => op.request(),
        };
        let Some((statement, params)) = request else {
            self.db.disconnect(session);
            self.sessions[index] = self.db.connect();
            return None;
        };
        let exec = self.db.execute(session, &statement, &params);
        if let Exec::Blocked { by } = exec {
            assert_ne!(by, session);
            self.blocked[index] = Some((statement, params.clone()));
        }
        Some((statement, params, exec))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A fenced write never lowers the stored fence, and the CHECK keeps the balance
    /// non-negative, whatever the interleaving.
    #[test]
    fn fenced_writes_never_lower_the_stored_fence(
        session_count in 2usize..=3,
        turns in prop::collection::vec((0usize..3, fenced_op()), 1..60),
    ) {
        let mut driver = Driver::new(session_count);
        let mut fence = INITIAL.fence;
        for (index, op) in turns {
            driver.turn(index % session_count, op);
            let stored = driver.db.wallet(ID).expect("the row exists");
            prop_assert!(stored.fence >= fence, "fence went from {} to {}", fence, stored.fence);
            prop_assert!(stored.balance >= 0);
            fence = stored.fence;
        }
    }

    /// Conditional debits from several sessions: the committed balance is the initial
    /// balance minus the debits that committed, and never negative.
    #[test]
    fn committed_debits_add_up(
        session_count in 2usize..=3,
        turns in prop::collection::vec((0usize..3, debit_op()), 1..60),
    ) {
        let mut driver = Driver::new(session_count);
        let mut committed_total = 0i64;
        let mut in_flight = vec![0i64; session_count];
        for (index, op) in turns {
            let index = index % session_count;
            let outcome = driver.turn(index, op);
            let in_block = driver.db.status(driver.sessions[index]) == Some(TxStatus::InBlock);
            match outcome {
                Some((Statement::Debit { .. }, params, Exec::Done(Ok(result))))
                    if result.rows_affected == 1 =>
                {
                    if in_block {
                        in_flight[index] += params[0];
                    } else {
                        committed_total += params[0];
                    }
                }
                Some((Statement::Commit, _, Exec::Done(Ok(result)))) if result.tag == "COMMIT" => {
                    committed_total += std::mem::take(&mut in_flight[index]);
                }
                _ => {}
            }
            // A block that ended any other way (rollback, abort, disconnect) discarded its debits.
            if !in_block {
                in_flight[index] = 0;
            }
            let stored = driver.db.wallet(ID).expect("the row exists");
            prop_assert_eq!(stored.balance, INITIAL.balance - committed_total);
            prop_assert!(stored.balance >= 0);
        }
    }
}
