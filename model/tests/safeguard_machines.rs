//! Each safeguard machine, driven step by step with scripted replies: the requests it makes,
//! in order, and how it reads the answers.

use leaselab_model::postgres::{QueryResult, RowLock, Statement, WriteGuard};
use leaselab_model::redis::command::{Command, SetCondition, SetExpiry};
use leaselab_model::redis::{Reply, ScriptId};
use leaselab_model::safeguard::{
    Caller, Input, Keys, Machine, Outcome, Params, Point, Reading, RedisRequest, RetryStrategy,
    Safeguard, SqlRequest, Step,
};

fn params(ttl_ms: u64, work_ms: u64) -> Params {
    Params {
        wallet_id: 42,
        amount: 10,
        work_ms,
        ttl_ms,
        acquire_timeout_ms: Some(50),
        keys: Keys::for_wallet("", 42),
    }
}

fn caller(safeguard: Safeguard, ttl_ms: u64, work_ms: u64) -> Caller {
    safeguard
        .build(&params(ttl_ms, work_ms), 0xabc)
        .expect("valid parameters")
}

const TOKEN: &str = "00000000000000000000000000000abc";

fn bulk(text: &str) -> Input {
    Input::Redis(Reply::Bulk(text.as_bytes().to_vec()))
}

fn ok() -> Input {
    Input::Redis(Reply::ok())
}

fn int(n: i64) -> Input {
    Input::Redis(Reply::Integer(n))
}

fn rows(rows: Vec<Vec<i64>>, tag: &str) -> Input {
    let n = rows.len() as u64;
    Input::Sql(Ok(QueryResult {
        columns: vec!["balance", "fence"],
        rows,
        tag: tag.into(),
        rows_affected: n,
    }))
}

fn updated(n: u64) -> Input {
    Input::Sql(Ok(QueryResult {
        columns: vec![],
        rows: vec![],
        tag: format!("UPDATE {n}"),
        rows_affected: n,
    }))
}

fn tag(tag: &str) -> Input {
    Input::Sql(Ok(QueryResult {
        columns: vec![],
        rows: vec![],
        tag: tag.into(),
        rows_affected: 0,
    }))
}

fn redis_command(step: &Step) -> &Command {
    match step {
        Step::Redis {
            request: RedisRequest::Command(command),
            ..
        } => command,
        other => panic!("expected a Redis command, got {other:?}"),
    }
}

fn script(step: &Step) -> (ScriptId, &[Vec<u8>], &[Vec<u8>]) {
    match step {
        Step::Redis {
            request: RedisRequest::Script { script, keys, args },
            ..
        } => (*script, keys, args),
        other => panic!("expected a script, got {other:?}"),
    }
}

fn sql(step: &Step) -> &SqlRequest {
    match step {
        Step::Sql(request) => request,
        other => panic!("expected SQL, got {other:?}"),
    }
}

#[test]
fn lease_happy_path_acquires_reads_works_writes_and_releases() {
    let mut m = caller(
        Safeguard::Lease {
            release: leaselab_model::safeguard::lease::ReleaseVia::Script,
        },
        100,
        2,
    );
    let acquire = m.next(0, Input::Start);
    assert_eq!(
        redis_command(&acquire),
        &Command::Set {
            key: b"lock:{wallet:42}".to_vec(),
            value: TOKEN.as_bytes().to_vec(),
            condition: SetCondition::IfMissing,
            expiry: SetExpiry::Millis(100),
            get: false,
        }
    );
    assert_eq!(m.next(1, ok()), Step::Reached(Point::AfterAcquire));
    assert_eq!(
        redis_command(&m.next(1, Input::Resumed)),
        &Command::Get(b"wallet:42:balance".to_vec())
    );
    assert_eq!(m.next(2, bulk("100")), Step::Reached(Point::AfterRead));
    assert_eq!(
        m.next(2, Input::Resumed),
        Step::Sleep {
            min_ms: 2,
            max_ms: 2,
            deadline_ms: None
        }
    );
    assert_eq!(m.next(4, Input::Woke), Step::Reached(Point::BeforeWrite));
    match redis_command(&m.next(4, Input::Resumed)) {
        Command::Set {
            key,
            value,
            condition: SetCondition::Always,
            expiry: SetExpiry::Clear,
            ..
        } => {
            assert_eq!(key, b"wallet:42:balance");
            assert_eq!(value, b"90");
        }
        other => panic!("expected SET of the balance, got {other:?}"),
    }
    assert_eq!(m.next(5, ok()), Step::Reached(Point::BeforeRelease));
    let release = m.next(5, Input::Resumed);
    let (id, keys, args) = script(&release);
    assert_eq!(id, ScriptId::Release);
    assert_eq!(keys, [b"lock:{wallet:42}".to_vec()]);
    assert_eq!(args, [TOKEN.as_bytes().to_vec()]);
    assert_eq!(
        m.next(6, int(1)),
        Step::Done(Outcome::Accepted {
            read_balance: Some(100),
            fence: None,
            write_acked_ms: 5
        })
    );
    assert_eq!(m.stats().stale_releases_refused, 0);
}

#[test]
fn lease_busy_waits_5_to_15ms_and_gives_up_at_the_deadline() {
    let mut m = caller(
        Safeguard::Lease {
            release: leaselab_model::safeguard::lease::ReleaseVia::Script,
        },
        100,
        2,
    );
    m.next(0, Input::Start);
    assert_eq!(
        m.next(1, Input::Redis(Reply::Nil)),
        Step::Sleep {
            min_ms: 5,
            max_ms: 14,
            deadline_ms: Some(50)
        }
    );
    assert!(
        matches!(m.next(10, Input::Woke), Step::Redis { .. }),
        "retries after the wait"
    );
    m.next(11, Input::Redis(Reply::Nil));
    assert_eq!(m.next(50, Input::Woke), Step::Done(Outcome::GaveUp));
    assert_eq!(m.stats().busy_retries, 2);
}

#[test]
fn a_refused_release_is_counted_as_stale() {
    let mut m = caller(
        Safeguard::Lease {
            release: leaselab_model::safeguard::lease::ReleaseVia::Script,
        },
        100,
        0,
    );
    m.next(0, Input::Start);
    m.next(0, ok());
    m.next(0, Input::Resumed);
    m.next(0, bulk("5"));
    // 5 < 10: insufficient funds, straight to release.
    assert_eq!(
        m.next(0, Input::Resumed),
        Step::Reached(Point::BeforeRelease)
    );
    m.next(0, Input::Resumed);
    assert_eq!(
        m.next(0, int(0)),
        Step::Done(Outcome::InsufficientFunds {
            read_balance: Some(5)
        })
    );
    assert_eq!(m.stats().stale_releases_refused, 1);
}

#[test]
fn no_lock_reads_and_writes_without_acquiring() {
    let mut m = caller(Safeguard::NoLock, 100, 2);
    assert_eq!(
        redis_command(&m.next(0, Input::Start)),
        &Command::Get(b"wallet:42:balance".to_vec())
    );
    assert_eq!(m.next(0, bulk("100")), Step::Reached(Point::AfterRead));
    m.next(0, Input::Resumed);
    m.next(2, Input::Woke);
    m.next(2, Input::Resumed);
    // No release step: done right after the write.
    assert_eq!(
        m.next(3, ok()),
        Step::Done(Outcome::Accepted {
            read_balance: Some(100),
            fence: None,
            write_acked_ms: 3
        })
    );
}

#[test]
fn setnx_del_releases_with_a_plain_del_and_setnx_expire_sets_the_ttl_separately() {
    let mut m = caller(Safeguard::SetnxDel, 100, 0);
    assert!(matches!(
        redis_command(&m.next(0, Input::Start)),
        Command::SetNx(..)
    ));
    assert_eq!(m.next(0, int(1)), Step::Reached(Point::AfterAcquire));
    assert!(matches!(
        redis_command(&m.next(0, Input::Resumed)),
        Command::Get(_)
    ));

    let mut m = caller(Safeguard::SetnxExpire, 100, 0);
    m.next(0, Input::Start);
    // The pause point comes between SETNX and PEXPIRE: a crash there leaves no expiry.
    assert_eq!(m.next(0, int(1)), Step::Reached(Point::AfterAcquire));
    assert_eq!(
        redis_command(&m.next(0, Input::Resumed)),
        &Command::PExpire(b"lock:{wallet:42}".to_vec(), 100)
    );
    assert!(matches!(redis_command(&m.next(0, int(1))), Command::Get(_)));
    m.next(0, bulk("100"));
    m.next(0, Input::Resumed);
    m.next(0, Input::Resumed);
    m.next(0, ok());
    assert_eq!(
        redis_command(&m.next(0, Input::Resumed)),
        &Command::Del(vec![b"lock:{wallet:42}".to_vec()])
    );
}

#[test]
fn watchdog_refreshes_every_third_of_the_ttl_and_a_failed_refresh_stops_the_write() {
    let mut m = caller(Safeguard::LeaseWatchdog, 90, 100);
    m.next(0, Input::Start);
    m.next(0, ok());
    m.next(0, Input::Resumed); // watchdog starts: refresh due at 30
    m.next(0, bulk("100"));
    assert_eq!(
        m.next(0, Input::Resumed),
        Step::Sleep {
            min_ms: 30,
            max_ms: 30,
            deadline_ms: None
        }
    );
    let refresh = m.next(30, Input::Woke);
    assert!(
        matches!(
            refresh,
            Step::Redis {
                timeout_ms: Some(30),
                ..
            }
        ),
        "{refresh:?}"
    );
    let (id, _, args) = script(&refresh);
    assert_eq!(id, ScriptId::Refresh);
    assert_eq!(args[1], b"90");
    assert_eq!(
        m.next(31, int(1)),
        Step::Sleep {
            min_ms: 29,
            max_ms: 29,
            deadline_ms: None
        }
    );
    m.next(60, Input::Woke);
    // The second refresh times out: the lock is lost; work continues until 100, then no write.
    assert_eq!(
        m.next(90, Input::RedisTimeout),
        Step::Sleep {
            min_ms: 10,
            max_ms: 10,
            deadline_ms: None
        }
    );
    assert_eq!(m.next(100, Input::Woke), Step::Reached(Point::BeforeWrite));
    assert_eq!(
        m.next(100, Input::Resumed),
        Step::Reached(Point::BeforeRelease)
    );
    m.next(100, Input::Resumed);
    assert_eq!(m.next(101, int(0)), Step::Done(Outcome::LostLock));
    assert_eq!(m.stats().refreshes, 1);
}

#[test]
fn fenced_write_carries_the_token_and_a_refused_update_is_a_rejection() {
    let mut m = caller(
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelow,
        },
        100,
        0,
    );
    let acquire = m.next(0, Input::Start);
    let (id, keys, args) = script(&acquire);
    assert_eq!(id, ScriptId::FencedAcquire);
    assert_eq!(
        keys,
        [b"lock:{wallet:42}".to_vec(), b"fence:{wallet:42}".to_vec()]
    );
    assert_eq!(args[1], b"100");
    m.next(0, int(33));
    assert_eq!(
        sql(&m.next(0, Input::Resumed)).statement,
        Statement::Select { id: 42, lock: None }
    );
    m.next(0, rows(vec![vec![100, 0]], "SELECT 1"));
    // No work: straight from after-read to before-write.
    assert_eq!(m.next(0, Input::Resumed), Step::Reached(Point::BeforeWrite));
    let write = m.next(0, Input::Resumed);
    assert_eq!(
        sql(&write),
        &SqlRequest {
            statement: Statement::WriteFenced {
                id: 42,
                guard: WriteGuard::FenceBelow
            },
            params: vec![90, 33]
        }
    );
    m.next(1, updated(0));
    m.next(1, Input::Resumed);
    assert_eq!(
        m.next(2, int(0)),
        Step::Done(Outcome::WriteRejected {
            read_balance: 100,
            fence: Some(33)
        })
    );
}

#[test]
fn check_and_set_also_sends_the_version_read() {
    let mut m = caller(
        Safeguard::Fenced {
            guard: WriteGuard::FenceBelowAndEqual,
        },
        100,
        0,
    );
    m.next(0, Input::Start);
    m.next(0, int(7));
    m.next(0, Input::Resumed);
    m.next(0, rows(vec![vec![60, 5]], "SELECT 1"));
    m.next(0, Input::Resumed);
    assert_eq!(sql(&m.next(0, Input::Resumed)).params, vec![50, 7, 5]);
}

#[test]
fn redislock_no_retry_gives_up_at_once_and_exponential_follows_its_schedule() {
    let no_retry = Safeguard::Redislock {
        retry: RetryStrategy::NoRetry,
        jitter: false,
    };
    let mut m = caller(no_retry, 100, 0);
    let obtain = m.next(0, Input::Start);
    let (id, _, args) = script(&obtain);
    assert_eq!(id, ScriptId::RedislockObtain);
    assert_eq!(
        args,
        [TOKEN.as_bytes().to_vec(), b"32".to_vec(), b"100".to_vec()]
    );
    assert_eq!(
        m.next(0, Input::Redis(Reply::Nil)),
        Step::Done(Outcome::GaveUp)
    );

    let exponential = Safeguard::Redislock {
        retry: RetryStrategy::Exponential {
            min_ms: 16,
            max_ms: 128,
        },
        jitter: true,
    };
    let mut m = exponential
        .build(
            &Params {
                acquire_timeout_ms: Some(5_000),
                ..params(2_000, 2)
            },
            1,
        )
        .unwrap();
    m.next(0, Input::Start);
    let mut waits = Vec::new();
    for now_ms in 0..5 {
        match m.next(now_ms, Input::Redis(Reply::Nil)) {
            Step::Sleep { min_ms, max_ms, .. } => waits.push((min_ms, max_ms)),
            other => panic!("expected a wait, got {other:?}"),
        }
        m.next(now_ms, Input::Woke);
    }
    assert_eq!(waits, vec![(1, 16), (1, 16), (1, 16), (1, 32), (1, 64)]);
}

#[test]
fn redislock_release_reads_ok_or_nil_from_its_script() {
    let safeguard = Safeguard::Redislock {
        retry: RetryStrategy::NoRetry,
        jitter: false,
    };
    for (reply, stale, reading) in [
        (Reply::ok(), 0, Reading::Released),
        (Reply::Nil, 1, Reading::NotHeld),
    ] {
        let mut m = caller(safeguard, 100, 0);
        m.next(0, Input::Start);
        assert_eq!(m.reading(&ok()), Some(Reading::Acquired { fence: None }));
        assert_eq!(m.reading(&Input::Redis(Reply::Nil)), Some(Reading::Busy));
        m.next(0, ok());
        assert_eq!(
            m.reading(&Input::Resumed),
            None,
            "a pause point has no answer"
        );
        m.next(0, Input::Resumed);
        assert_eq!(
            m.reading(&bulk("5")),
            Some(Reading::BalanceRead {
                balance: 5,
                fence: None
            })
        );
        m.next(0, bulk("5"));
        m.next(0, Input::Resumed);
        let release = m.next(0, Input::Resumed);
        assert_eq!(script(&release).0, ScriptId::RedislockRelease);
        // The machine's reading is what it then acts on: OK is a release, nil a refusal.
        assert_eq!(m.reading(&Input::Redis(reply.clone())), Some(reading));
        assert!(matches!(
            m.reading(&Input::Redis(Reply::Integer(1))),
            Some(Reading::Failed { .. })
        ));
        assert_eq!(
            m.next(1, Input::Redis(reply)),
            Step::Done(Outcome::InsufficientFunds {
                read_balance: Some(5)
            })
        );
        assert_eq!(m.stats().stale_releases_refused, stale);
    }
}

#[test]
fn redislock_without_a_deadline_derives_one_from_the_ttl() {
    let safeguard = Safeguard::Redislock {
        retry: RetryStrategy::Linear { backoff_ms: 10 },
        jitter: false,
    };
    let mut m = safeguard
        .build(
            &Params {
                acquire_timeout_ms: None,
                ..params(30, 0)
            },
            1,
        )
        .unwrap();
    m.next(100, Input::Start);
    assert_eq!(
        m.next(100, Input::Redis(Reply::Nil)),
        Step::Sleep {
            min_ms: 10,
            max_ms: 10,
            deadline_ms: Some(130)
        }
    );
}

#[test]
fn ttl_under_one_millisecond_is_refused_before_anything_is_sent() {
    for safeguard in Safeguard::catalogue() {
        let result = safeguard.build(&params(0, 2), 1);
        if safeguard.uses_lock() {
            assert_eq!(
                result.unwrap_err().0,
                "TTL must be at least 1ms",
                "{}",
                safeguard.name()
            );
        } else {
            assert!(
                result.is_ok(),
                "{} takes no lock, so no TTL",
                safeguard.name()
            );
        }
    }
}

#[test]
fn pg_for_update_runs_one_transaction() {
    let mut m = caller(Safeguard::PgForUpdate, 100, 3);
    assert_eq!(sql(&m.next(0, Input::Start)).statement, Statement::Begin);
    assert_eq!(
        sql(&m.next(0, tag("BEGIN"))).statement,
        Statement::Select {
            id: 42,
            lock: Some(RowLock::ForUpdate)
        }
    );
    assert_eq!(
        m.next(0, rows(vec![vec![100, 0]], "SELECT 1")),
        Step::Reached(Point::AfterRead)
    );
    assert_eq!(
        m.next(0, Input::Resumed),
        Step::Sleep {
            min_ms: 3,
            max_ms: 3,
            deadline_ms: None
        }
    );
    m.next(3, Input::Woke);
    assert_eq!(
        sql(&m.next(3, Input::Resumed)),
        &SqlRequest {
            statement: Statement::WriteBalance { id: 42 },
            params: vec![90]
        }
    );
    assert_eq!(sql(&m.next(3, updated(1))).statement, Statement::Commit);
    assert_eq!(
        m.next(4, tag("COMMIT")),
        Step::Done(Outcome::Accepted {
            read_balance: Some(100),
            fence: None,
            write_acked_ms: 4
        })
    );
}

#[test]
fn pg_debit_is_one_conditional_statement() {
    let mut m = caller(Safeguard::PgDebit, 100, 0);
    assert_eq!(
        m.next(0, Input::Start),
        Step::Sleep {
            min_ms: 0,
            max_ms: 0,
            deadline_ms: None
        }
    );
    m.next(0, Input::Woke);
    assert_eq!(
        sql(&m.next(0, Input::Resumed)),
        &SqlRequest {
            statement: Statement::Debit { id: 42 },
            params: vec![10]
        }
    );
    assert_eq!(
        m.next(1, updated(0)),
        Step::Done(Outcome::InsufficientFunds { read_balance: None })
    );
}

#[test]
fn every_safeguard_name_parses_back() {
    for safeguard in Safeguard::catalogue() {
        assert_eq!(Safeguard::parse(&safeguard.name()), Ok(safeguard));
    }
    assert_eq!(
        Safeguard::parse("redislock-linear-20ms+jitter"),
        Ok(Safeguard::Redislock {
            retry: RetryStrategy::Linear { backoff_ms: 20 },
            jitter: true
        })
    );
    assert!(Safeguard::parse("mutex")
        .unwrap_err()
        .0
        .contains("known safeguards: no-lock"));
}
