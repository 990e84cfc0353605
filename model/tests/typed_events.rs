//! The values drivers log, serialised and read back: requests as argv or a script by name,
//! statements as their SQL text, readings tagged by kind. What is read back is what was sent.

use leaselab_model::postgres::{Answer, PgError, QueryResult, RowLock, Statement, WriteGuard};
use leaselab_model::redis::command::{Command, SetCondition, SetExpiry};
use leaselab_model::redis::ScriptId;
use leaselab_model::safeguard::{Reading, RedisRequest};

fn round_trip<T>(value: &T) -> (String, T)
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let json = serde_json::to_string(value).expect("serialises");
    let back = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
    (json, back)
}

#[test]
fn requests_are_argv_or_a_script_by_name_and_read_back_equal() {
    let acquire = RedisRequest::Command(Command::Set {
        key: b"lock:{wallet:42}".to_vec(),
        value: b"00ab".to_vec(),
        condition: SetCondition::IfMissing,
        expiry: SetExpiry::Millis(100),
        get: false,
    });
    let (json, back) = round_trip(&acquire);
    assert_eq!(
        json,
        r#"{"command":["SET","lock:{wallet:42}","00ab","NX","PX","100"]}"#
    );
    assert_eq!(back, acquire);

    let release = RedisRequest::Script {
        script: ScriptId::RedislockRelease,
        keys: vec![b"lock:{wallet:42}".to_vec()],
        args: vec![vec![0xff, 0x00, b'a']],
    };
    let (json, back) = round_trip(&release);
    assert_eq!(
        json,
        r#"{"script":{"name":"redislock-release","keys":["lock:{wallet:42}"],"args":[[255,0,97]]}}"#
    );
    assert_eq!(back, release);

    for request in [
        RedisRequest::Command(Command::SetNx(b"k".to_vec(), b"v".to_vec())),
        RedisRequest::Command(Command::Del(vec![b"k".to_vec()])),
        RedisRequest::Command(Command::Get(b"wallet:42:balance".to_vec())),
    ] {
        assert_eq!(round_trip(&request).1, request);
    }
}

#[test]
fn a_request_redis_would_refuse_or_an_unknown_script_is_an_error_naming_it() {
    let error = serde_json::from_str::<RedisRequest>(r#"{"command":["SET","k"]}"#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("wrong number of arguments"), "{error}");
    let error =
        serde_json::from_str::<RedisRequest>(r#"{"script":{"name":"nope","keys":[],"args":[]}}"#)
            .unwrap_err()
            .to_string();
    assert!(error.contains("unknown script \"nope\""), "{error}");
    assert!(error.contains("redislock-release"), "{error}");
}

#[test]
fn statements_are_their_sql_text_and_read_back_equal() {
    let statements = [
        Statement::Begin,
        Statement::Commit,
        Statement::Rollback,
        Statement::Select { id: 42, lock: None },
        Statement::Select {
            id: 42,
            lock: Some(RowLock::ForUpdate),
        },
        Statement::WriteFenced {
            id: 42,
            guard: WriteGuard::FenceBelowAndEqual,
        },
        Statement::WriteBalance { id: 42 },
        Statement::Debit { id: 42 },
    ];
    for statement in statements {
        let (json, back) = round_trip(&statement);
        assert_eq!(json, serde_json::to_string(&statement.sql()).unwrap());
        assert_eq!(back, statement);
    }
    let error = serde_json::from_str::<Statement>(r#""DROP TABLE wallets""#)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("not a statement of the wallets table"),
        "{error}"
    );
}

#[test]
fn answers_and_readings_are_tagged_and_described_once() {
    let refused = Answer::of(&Err(PgError::error("40P01", "deadlock detected")));
    let (json, back) = round_trip(&refused);
    assert_eq!(
        json,
        r#"{"error":{"severity":"ERROR","code":"40P01","message":"deadlock detected"}}"#
    );
    assert_eq!(back, refused);
    assert_eq!(refused.describe(), "ERROR 40P01 deadlock detected");
    let updated = Answer::of(&Ok(QueryResult {
        columns: vec![],
        rows: vec![],
        tag: "UPDATE 0".into(),
        rows_affected: 0,
    }));
    assert_eq!(updated.describe(), "UPDATE 0");

    let reading = Reading::WriteRefused {
        balance: 90,
        fence: Some(33),
        seen: None,
    };
    let (json, back) = round_trip(&reading);
    assert_eq!(
        json,
        r#"{"reading":"write-refused","balance":90,"fence":33,"seen":null}"#
    );
    assert_eq!(back, reading);
    assert_eq!(reading.describe(), "write with fence 33 REJECTED");
    assert_eq!(
        Reading::Acquired { fence: Some(34) }.describe(),
        "got the lock, fence 34"
    );
}
