//! Statement text: canonical SQL, parameter counts, parsing and its errors.

use leaselab_model::postgres::{Isolation, RowLock, Statement, WriteGuard};
use proptest::prelude::*;

/// Every statement shape, for wallet `id`.
fn every_statement(id: i64) -> Vec<Statement> {
    let mut all = vec![Statement::Begin, Statement::Commit, Statement::Rollback];
    for lock in [
        None,
        Some(RowLock::ForUpdate),
        Some(RowLock::ForUpdateNowait),
        Some(RowLock::ForUpdateSkipLocked),
    ] {
        all.push(Statement::Select { id, lock });
    }
    for guard in [
        WriteGuard::Unfenced,
        WriteGuard::FenceBelow,
        WriteGuard::FenceBelowAndEqual,
    ] {
        all.push(Statement::WriteFenced { id, guard });
    }
    all.push(Statement::WriteBalance { id });
    all.push(Statement::Debit { id });
    all
}

#[test]
fn canonical_sql_text() {
    let expected = [
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SELECT balance, fence FROM wallets WHERE id = 42",
        "SELECT balance, fence FROM wallets WHERE id = 42 FOR UPDATE",
        "SELECT balance, fence FROM wallets WHERE id = 42 FOR UPDATE NOWAIT",
        "SELECT balance, fence FROM wallets WHERE id = 42 FOR UPDATE SKIP LOCKED",
        "UPDATE wallets SET balance = $1, fence = $2 WHERE id = 42",
        "UPDATE wallets SET balance = $1, fence = $2 WHERE id = 42 AND fence < $2",
        "UPDATE wallets SET balance = $1, fence = $2 WHERE id = 42 AND fence < $2 AND fence = $3",
        "UPDATE wallets SET balance = $1 WHERE id = 42",
        "UPDATE wallets SET balance = balance - $1 WHERE id = 42 AND balance >= $1",
    ];
    let rendered: Vec<String> = every_statement(42).iter().map(Statement::sql).collect();
    assert_eq!(rendered, expected);
}

#[test]
fn param_counts_match_the_highest_placeholder() {
    let counts: Vec<usize> = every_statement(42)
        .iter()
        .map(Statement::param_count)
        .collect();
    assert_eq!(counts, [0, 0, 0, 0, 0, 0, 0, 2, 2, 3, 1, 1]);
    for statement in every_statement(7) {
        let sql = statement.sql();
        let highest = (1..=9)
            .rev()
            .find(|n| sql.contains(&format!("${n}")))
            .unwrap_or(0);
        assert_eq!(statement.param_count(), highest, "{sql}");
    }
}

#[test]
fn parse_round_trips_every_statement() {
    for id in [0, 42, -5, i64::MAX, i64::MIN] {
        for statement in every_statement(id) {
            assert_eq!(Statement::parse(&statement.sql()), Ok(statement), "{id}");
        }
    }
}

#[test]
fn parse_tolerates_case_white_space_newlines_and_a_trailing_semicolon() {
    let fenced = Statement::WriteFenced {
        id: 42,
        guard: WriteGuard::FenceBelow,
    };
    // The tutorial's text, as pgx sends it.
    let tutorial = "\nUPDATE wallets SET balance = $1, fence = $2\nWHERE id = 42 AND fence < $2";
    assert_eq!(Statement::parse(tutorial), Ok(fenced));
    let step6 = "UPDATE wallets SET balance = $1, fence = $2\n               WHERE id = 42 AND fence < $2 AND fence = $3";
    assert_eq!(
        Statement::parse(step6),
        Ok(Statement::WriteFenced {
            id: 42,
            guard: WriteGuard::FenceBelowAndEqual
        })
    );
    assert_eq!(
        Statement::parse("update WALLETS set balance=$1,fence=$2 where id=42 and fence<$2 ;"),
        Ok(fenced)
    );
    assert_eq!(
        Statement::parse(
            "  select Balance ,\tFENCE from wallets where ID = 42\r\n for update  skip locked;;"
        ),
        Ok(Statement::Select {
            id: 42,
            lock: Some(RowLock::ForUpdateSkipLocked)
        })
    );
    assert_eq!(
        Statement::parse("UPDATE \"wallets\" SET balance = balance-$1 -- debit\n WHERE id = 42 /* a /* nested */ comment */ AND balance >= $1"),
        Ok(Statement::Debit { id: 42 })
    );
}

#[test]
fn parse_accepts_the_transaction_control_spellings() {
    let cases = [
        ("begin", Statement::Begin),
        ("BEGIN WORK", Statement::Begin),
        ("begin transaction;", Statement::Begin),
        ("START TRANSACTION", Statement::Begin),
        (
            "BEGIN ISOLATION LEVEL REPEATABLE READ",
            Statement::BeginIsolated {
                isolation: Isolation::RepeatableRead,
            },
        ),
        (
            "begin transaction isolation level serializable;",
            Statement::BeginIsolated {
                isolation: Isolation::Serializable,
            },
        ),
        (
            "BEGIN ISOLATION LEVEL READ COMMITTED",
            Statement::BeginIsolated {
                isolation: Isolation::ReadCommitted,
            },
        ),
        ("commit", Statement::Commit),
        ("COMMIT WORK", Statement::Commit),
        ("END", Statement::Commit),
        ("end transaction", Statement::Commit),
        ("rollback;", Statement::Rollback),
        ("ABORT", Statement::Rollback),
        ("ROLLBACK TRANSACTION", Statement::Rollback),
    ];
    for (sql, expected) in cases {
        assert_eq!(Statement::parse(sql), Ok(expected), "{sql}");
    }
}

#[test]
fn unsupported_statements_get_0a000_naming_them() {
    let cases = [
        "DELETE FROM wallets WHERE id = 1",
        "SELECT balance FROM wallets WHERE id = 42",
        "UPDATE wallets SET balance = 100, fence = 0 WHERE id = 42",
        "UPDATE wallets SET fence = $2, balance = $1 WHERE id = 42",
        "UPDATE accounts SET balance = $1 WHERE id = 42",
        "SELECT balance, fence FROM wallets WHERE id = 42 FOR SHARE",
        "SELECT balance, fence FROM wallets WHERE id = 4.2",
        "SELECT balance, fence FROM wallets WHERE id = 99999999999999999999",
        "BEGIN ISOLATION LEVEL READ UNCOMMITTED",
        "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY",
        "START WORK",
        "BEGIN; COMMIT",
        "UPDATE wallets SET balance = balance - $1 WHERE id = 42",
    ];
    for sql in cases {
        let error = Statement::parse(sql).expect_err(sql);
        assert_eq!(error.code, "0A000", "{sql}");
        assert_eq!(error.severity, "ERROR");
        assert_eq!(
            error.message,
            format!("leaselab stand-in does not support this statement: {sql}")
        );
    }
    let error = Statement::parse("DELETE   FROM wallets\n  WHERE id = 1 ;").unwrap_err();
    assert_eq!(
        error.message,
        "leaselab stand-in does not support this statement: DELETE FROM wallets WHERE id = 1"
    );
}

#[test]
fn text_that_is_not_a_command_is_a_syntax_error_as_on_the_server() {
    let error = Statement::parse("hello world").unwrap_err();
    assert_eq!(error.code, "42601");
    assert_eq!(error.message, "syntax error at or near \"hello\"");
    let error = Statement::parse("42").unwrap_err();
    assert_eq!(error.message, "syntax error at or near \"42\"");
}

#[test]
fn empty_queries_are_recognised_and_not_parsed() {
    for sql in ["", "   ", ";", " ; ;\n", "-- nothing\n", "/* */"] {
        assert!(Statement::is_empty_query(sql), "{sql:?}");
        assert_eq!(Statement::parse(sql).unwrap_err().code, "42601", "{sql:?}");
    }
    assert!(!Statement::is_empty_query("BEGIN"));
    assert!(!Statement::is_empty_query("; x"));
}

#[test]
fn wallet_ids_and_transaction_ends() {
    assert_eq!(Statement::Debit { id: 3 }.wallet_id(), Some(3));
    assert_eq!(Statement::Begin.wallet_id(), None);
    let ends: Vec<bool> = every_statement(1)
        .iter()
        .map(Statement::ends_transaction)
        .collect();
    assert_eq!(ends.iter().filter(|&&e| e).count(), 2);
    assert!(Statement::Commit.ends_transaction() && Statement::Rollback.ends_transaction());
}

/// Any statement.
fn statement() -> impl Strategy<Value = Statement> {
    (any::<i64>(), 0..12usize).prop_map(|(id, pick)| every_statement(id)[pick])
}

/// `sql` with each white space run replaced by one of several runs and letters in random case.
fn reformat(sql: &str, seed: &[u8]) -> String {
    let spaces = [" ", "  ", "\n", "\t ", " \r\n  "];
    let mut out = String::new();
    for (at, word) in sql.split(' ').enumerate() {
        let pick = seed.get(at % seed.len().max(1)).copied().unwrap_or(0);
        if at > 0 {
            out.push_str(spaces[pick as usize % spaces.len()]);
        }
        for (k, c) in word.chars().enumerate() {
            if (pick >> (k % 8)) & 1 == 1 {
                out.extend(c.to_uppercase());
            } else {
                out.extend(c.to_lowercase());
            }
        }
    }
    out
}

proptest! {
    #[test]
    fn parse_inverts_sql(statement in statement()) {
        prop_assert_eq!(Statement::parse(&statement.sql()), Ok(statement));
    }

    #[test]
    fn parse_ignores_case_and_spacing(statement in statement(), seed in prop::collection::vec(any::<u8>(), 1..16), semicolon in any::<bool>()) {
        let mut sql = reformat(&statement.sql(), &seed);
        if semicolon {
            sql.push(';');
        }
        prop_assert_eq!(Statement::parse(&sql), Ok(statement), "{}", sql);
    }
}
