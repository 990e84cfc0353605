//! MULTI/EXEC/DISCARD and WATCH/UNWATCH per connection ([`Session`]). Expected replies are
//! Redis 7.0.15's for the same commands on one or two connections.

use leaselab_model::redis::{Redis, Reply, Session};

fn run(redis: &mut Redis, session: &mut Session, list: &[&str], now_ms: u64) -> Reply {
    let argv: Vec<Vec<u8>> = list.iter().map(|w| w.as_bytes().to_vec()).collect();
    redis.execute_in(session, &argv, now_ms)
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_string())
}

fn status(text: &str) -> Reply {
    Reply::Status(text.to_string())
}

#[test]
fn transaction_errors_are_redis_texts() {
    let mut redis = Redis::new();
    let mut a = Session::new();
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        err("ERR EXEC without MULTI")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["DISCARD"], 0),
        err("ERR DISCARD without MULTI")
    );
    assert_eq!(run(&mut redis, &mut a, &["MULTI"], 0), Reply::ok());
    assert_eq!(
        run(&mut redis, &mut a, &["MULTI"], 0),
        err("ERR MULTI calls can not be nested")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["WATCH", "w"], 0),
        err("ERR WATCH inside MULTI is not allowed")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["SET", "w", "1"], 0),
        status("QUEUED")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["INCR", "w", "x"], 0),
        err("ERR wrong number of arguments for 'incr' command")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["NOSUCH"], 0),
        err("ERR unknown command 'NOSUCH', with args beginning with: ")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(redis.peek(b"w", 0), None, "nothing ran");
    assert!(!a.in_transaction());
}

#[test]
fn exec_runs_the_queue_atomically_with_errors_in_place() {
    let mut redis = Redis::new();
    let mut a = Session::new();
    run(&mut redis, &mut a, &["MULTI"], 0);
    for command in [
        &["SET", "w", "a"][..],
        &["INCR", "w"],
        &["SET", "w", "a", "FOO"],
        &["GET", "w"],
        &["UNWATCH"],
    ] {
        assert_eq!(run(&mut redis, &mut a, command, 0), status("QUEUED"));
    }
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        Reply::Array(vec![
            Reply::ok(),
            err("ERR value is not an integer or out of range"),
            err("ERR syntax error"),
            Reply::Bulk(b"a".to_vec()),
            Reply::ok(),
        ])
    );
    run(&mut redis, &mut a, &["MULTI"], 0);
    assert_eq!(run(&mut redis, &mut a, &["DISCARD"], 0), Reply::ok());
    run(&mut redis, &mut a, &["MULTI"], 0);
    assert_eq!(run(&mut redis, &mut a, &["EXEC"], 0), Reply::Array(vec![]));
    assert_eq!(
        run(&mut redis, &mut a, &["WATCH"], 0),
        err("ERR wrong number of arguments for 'watch' command")
    );
}

#[test]
fn a_watched_key_written_by_anyone_fails_exec() {
    let mut redis = Redis::new();
    let (mut a, mut b) = (Session::new(), Session::new());
    run(&mut redis, &mut a, &["SET", "lock", "me"], 0);
    // Written by another connection, even with the same value.
    run(&mut redis, &mut a, &["WATCH", "lock"], 0);
    run(&mut redis, &mut b, &["SET", "lock", "me"], 0);
    run(&mut redis, &mut a, &["MULTI"], 0);
    run(&mut redis, &mut a, &["DEL", "lock"], 0);
    assert_eq!(run(&mut redis, &mut a, &["EXEC"], 0), Reply::NilArray);
    assert_eq!(redis.peek(b"lock", 0), Some(&b"me"[..]));
    // Written by the same connection before MULTI.
    run(&mut redis, &mut a, &["WATCH", "lock"], 0);
    run(&mut redis, &mut a, &["PEXPIRE", "lock", "100"], 0);
    run(&mut redis, &mut a, &["MULTI"], 0);
    run(&mut redis, &mut a, &["GET", "lock"], 0);
    assert_eq!(run(&mut redis, &mut a, &["EXEC"], 0), Reply::NilArray);
    // Untouched: runs; a write to another key does not matter.
    run(&mut redis, &mut a, &["WATCH", "lock"], 0);
    run(&mut redis, &mut b, &["SET", "other", "x"], 0);
    run(&mut redis, &mut a, &["MULTI"], 0);
    run(&mut redis, &mut a, &["GET", "lock"], 0);
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        Reply::Array(vec![Reply::Bulk(b"me".to_vec())])
    );
    // UNWATCH forgets.
    run(&mut redis, &mut a, &["WATCH", "lock"], 0);
    run(&mut redis, &mut b, &["SET", "lock", "you"], 0);
    run(&mut redis, &mut a, &["UNWATCH"], 0);
    run(&mut redis, &mut a, &["MULTI"], 0);
    run(&mut redis, &mut a, &["GET", "lock"], 0);
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        Reply::Array(vec![Reply::Bulk(b"you".to_vec())])
    );
}

#[test]
fn a_watched_key_that_expires_fails_exec() {
    let mut redis = Redis::new();
    let mut a = Session::new();
    run(&mut redis, &mut a, &["SET", "lock", "me", "PX", "100"], 0);
    run(&mut redis, &mut a, &["WATCH", "lock"], 0);
    run(&mut redis, &mut a, &["MULTI"], 0);
    run(&mut redis, &mut a, &["SET", "lock", "again"], 0);
    assert_eq!(run(&mut redis, &mut a, &["EXEC"], 101), Reply::NilArray);
    assert_eq!(redis.peek(b"lock", 101), None);
}

#[test]
fn a_server_nobody_watches_tracks_nothing() {
    let mut watched = Redis::new();
    let mut plain = Redis::new();
    let mut a = Session::new();
    run(&mut watched, &mut a, &["SET", "k", "v"], 0);
    plain.execute(&[b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()], 0);
    assert_eq!(watched, plain);
    run(&mut watched, &mut a, &["WATCH", "k"], 0);
    assert_ne!(watched, plain, "a watched key is counted");
}

/// `FLUSHALL`/`FLUSHDB` break the watch only of keys it removed that a command would have
/// seen, as Redis 7.0's `touchAllWatchedKeysInDb` does (checked by hand against Redis 7.0.15:
/// a watched key that did not exist, or had expired, survives the flush's EXEC).
#[test]
fn a_flush_touches_only_watched_keys_it_removed() {
    for (setup, expect_exec) in [
        // Absent when watched and flushed: the EXEC runs.
        (&[][..], Reply::Array(vec![Reply::ok()])),
        // There when watched and flushed: the EXEC is refused.
        (&[&["SET", "w", "1"][..]][..], Reply::NilArray),
        // Expired before the watch, still stored when flushed: the EXEC runs.
        (
            &[&["SET", "w", "1", "PX", "5"][..]][..],
            Reply::Array(vec![Reply::ok()]),
        ),
    ] {
        let mut redis = Redis::new();
        let (mut a, mut b) = (Session::new(), Session::new());
        for command in setup {
            run(&mut redis, &mut b, command, 0);
        }
        assert_eq!(run(&mut redis, &mut a, &["WATCH", "w"], 10), Reply::ok());
        assert_eq!(run(&mut redis, &mut b, &["FLUSHDB"], 10), Reply::ok());
        assert_eq!(run(&mut redis, &mut a, &["MULTI"], 10), Reply::ok());
        assert_eq!(
            run(&mut redis, &mut a, &["SET", "w", "3"], 10),
            status("QUEUED")
        );
        assert_eq!(
            run(&mut redis, &mut a, &["EXEC"], 10),
            expect_exec,
            "after {setup:?}"
        );
    }
}

/// An `EXEC` with arguments is refused with EXECABORT and discards the transaction and the
/// watched keys, inside `MULTI` or not (Redis 7.0's `rejectCommand`).
#[test]
fn exec_with_arguments_discards_the_transaction() {
    const ABORT: &str =
        "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command";
    let mut redis = Redis::new();
    let mut a = Session::new();
    assert_eq!(run(&mut redis, &mut a, &["EXEC", "x"], 0), err(ABORT));
    assert_eq!(run(&mut redis, &mut a, &["MULTI"], 0), Reply::ok());
    assert_eq!(
        run(&mut redis, &mut a, &["SET", "k", "v"], 0),
        status("QUEUED")
    );
    assert_eq!(run(&mut redis, &mut a, &["EXEC", "x"], 0), err(ABORT));
    assert!(!a.in_transaction());
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        err("ERR EXEC without MULTI")
    );
    assert_eq!(redis.peek(b"k", 0), None, "the queued SET never ran");
}
