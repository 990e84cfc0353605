//! Redis's 16 databases: `SELECT` per connection ([`Session`]), in `MULTI` and in scripts;
//! `MOVE`, `COPY ... DB`, `SWAPDB`, `FLUSHDB`/`FLUSHALL` and `WATCH` across databases; `INFO`'s
//! keyspace lines; effects that carry their database to a replica and an AOF. Expected replies
//! are Redis 7.0.15's for the same commands on one or two connections (`redis-cli` and raw
//! connections to a private server; `FLUSHDB`, `FLUSHALL` and `SWAPDB` are checked here only,
//! never against a shared server).

use std::hash::{Hash, Hasher};

use leaselab_model::redis::aof::{Aof, Appendfsync};
use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::{Redis, Reply, Session};

fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn run(redis: &mut Redis, session: &mut Session, words: &[&str], now_ms: u64) -> Reply {
    redis.execute_in(session, &argv(words), now_ms)
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_string())
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

fn ok() -> Reply {
    Reply::ok()
}

/// A session that has selected `db`.
fn session_in(redis: &mut Redis, db: u8) -> Session {
    let mut session = Session::new();
    let index = db.to_string();
    assert_eq!(run(redis, &mut session, &["SELECT", &index], 0), ok());
    assert_eq!(session.db(), db);
    session
}

fn hash_of<T: Hash>(value: &T) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

#[test]
fn select_takes_0_to_15_with_redis_errors() {
    let mut redis = Redis::new();
    let mut a = Session::new();
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "15"], 0), ok());
    assert_eq!(a.db(), 15);
    for (index, error) in [
        ("16", "ERR DB index is out of range"),
        ("-1", "ERR DB index is out of range"),
        ("abc", "ERR value is not an integer or out of range"),
        ("01", "ERR value is not an integer or out of range"),
        ("1.5", "ERR value is not an integer or out of range"),
        (
            "2147483648",
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        ),
    ] {
        assert_eq!(run(&mut redis, &mut a, &["SELECT", index], 0), err(error));
    }
    assert_eq!(a.db(), 15, "a refused SELECT keeps the database");
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "0"], 0), ok());
    assert_eq!(
        a,
        Session::new(),
        "back in database 0 the session is as new"
    );
    redis.set_cluster_mode(true);
    assert_eq!(
        run(&mut redis, &mut a, &["SELECT", "1"], 0),
        err("ERR SELECT is not allowed in cluster mode")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["SELECT", "99"], 0),
        err("ERR SELECT is not allowed in cluster mode")
    );
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "0"], 0), ok());
}

#[test]
fn every_key_command_runs_in_the_connections_database() {
    let mut redis = Redis::new();
    let mut a = session_in(&mut redis, 2);
    let mut b = Session::new();
    assert_eq!(run(&mut redis, &mut a, &["SET", "k", "v2"], 0), ok());
    assert_eq!(
        run(&mut redis, &mut a, &["SET", "t", "x", "PX", "100000"], 0),
        ok()
    );
    assert_eq!(run(&mut redis, &mut b, &["GET", "k"], 0), Reply::Nil);
    assert_eq!(run(&mut redis, &mut b, &["DBSIZE"], 0), Reply::Integer(0));
    assert_eq!(run(&mut redis, &mut a, &["DBSIZE"], 0), Reply::Integer(2));
    assert_eq!(
        run(&mut redis, &mut a, &["KEYS", "*"], 0),
        Reply::Array(vec![bulk("k"), bulk("t")])
    );
    assert_eq!(
        run(&mut redis, &mut a, &["SCAN", "0"], 0),
        Reply::Array(vec![bulk("0"), Reply::Array(vec![bulk("k"), bulk("t")])])
    );
    assert_eq!(run(&mut redis, &mut b, &["SET", "k", "v0"], 0), ok());
    assert_eq!(run(&mut redis, &mut b, &["SELECT", "15"], 0), ok());
    assert_eq!(
        run(&mut redis, &mut b, &["HSET", "h", "f", "v"], 0),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &mut a, &["INFO", "keyspace"], 0),
        bulk(
            "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\ndb2:keys=2,expires=1,avg_ttl=0\r\n\
             db15:keys=1,expires=0,avg_ttl=0\r\n"
        )
    );
    assert_eq!(
        run(&mut redis, &mut a, &["EXISTS", "k", "t", "h"], 0),
        Reply::Integer(2)
    );
    assert_eq!(run(&mut redis, &mut a, &["GET", "k"], 0), bulk("v2"));
    // The calls without a session run in database 0, and a SELECT there lasts one command.
    assert_eq!(redis.execute(&argv(&["GET", "k"]), 0), bulk("v0"));
    assert_eq!(redis.execute(&argv(&["SELECT", "2"]), 0), ok());
    assert_eq!(redis.execute(&argv(&["GET", "k"]), 0), bulk("v0"));
    assert_eq!(redis.peek(b"k", 0), Some(&b"v0"[..]));
    // Expiry in another database: gone after its deadline, deleted when touched.
    assert_eq!(run(&mut redis, &mut a, &["GET", "t"], 100_001), Reply::Nil);
    assert_eq!(
        run(&mut redis, &mut a, &["DBSIZE"], 100_001),
        Reply::Integer(1)
    );
}

#[test]
fn a_server_back_to_database_0_only_is_as_before() {
    let mut redis = Redis::new();
    redis.record_effects(false);
    let mut a = session_in(&mut redis, 7);
    assert_eq!(run(&mut redis, &mut a, &["SET", "k", "v"], 0), ok());
    assert_ne!(redis, Redis::new());
    assert_eq!(run(&mut redis, &mut a, &["DEL", "k"], 0), Reply::Integer(1));
    assert_eq!(redis, Redis::new(), "an emptied database is dropped");
    assert_eq!(hash_of(&redis), hash_of(&Redis::new()));
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "0"], 0), ok());
    assert_eq!(hash_of(&a), hash_of(&Session::new()));
}

#[test]
fn select_queued_in_multi_runs_at_exec_and_stays() {
    let mut redis = Redis::new();
    let mut a = session_in(&mut redis, 2);
    assert_eq!(run(&mut redis, &mut a, &["SET", "k", "v2"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["MULTI"], 0), ok());
    let queued = Reply::Status("QUEUED".into());
    for command in [
        &["SELECT", "99"][..],
        &["SELECT", "abc"],
        &["SELECT", "3"],
        &["SET", "k", "v3"],
        &["GET", "k"],
    ] {
        assert_eq!(run(&mut redis, &mut a, command, 0), queued);
    }
    assert_eq!(a.db(), 2, "queued, not run");
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        Reply::Array(vec![
            err("ERR DB index is out of range"),
            err("ERR value is not an integer or out of range"),
            ok(),
            ok(),
            bulk("v3"),
        ])
    );
    assert_eq!(a.db(), 3);
    assert_eq!(run(&mut redis, &mut a, &["GET", "k"], 0), bulk("v3"));
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "2"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["GET", "k"], 0), bulk("v2"));
}

#[test]
fn select_in_a_script_lasts_until_the_script_ends() {
    let mut redis = Redis::new();
    let mut a = session_in(&mut redis, 2);
    assert_eq!(run(&mut redis, &mut a, &["SET", "k", "v2"], 0), ok());
    let script = "redis.call('select', 4); redis.call('set', 'k', 'v4'); \
                  return redis.call('get', 'k')";
    assert_eq!(
        run(&mut redis, &mut a, &["EVAL", script, "0"], 0),
        bulk("v4")
    );
    assert_eq!(a.db(), 2, "the caller's database is unchanged");
    assert_eq!(run(&mut redis, &mut a, &["GET", "k"], 0), bulk("v2"));
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "4"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["GET", "k"], 0), bulk("v4"));
    assert_eq!(
        run(
            &mut redis,
            &mut a,
            &["EVAL", "return redis.pcall('select', 'x')", "0"],
            0
        ),
        err("ERR value is not an integer or out of range")
    );
    let Reply::Error(text) = run(
        &mut redis,
        &mut a,
        &["EVAL", "return redis.call('select', 16)", "0"],
        0,
    ) else {
        panic!("SELECT 16 fails the script");
    };
    assert!(
        text.starts_with("ERR DB index is out of range script: "),
        "{text}"
    );
    // A script that selects and fails still leaves the caller where it was.
    let failing = "redis.call('select', 5); redis.call('set', 'f', '1'); \
                   return redis.call('incr', 'nosuch', 'x')";
    assert!(matches!(
        run(&mut redis, &mut a, &["EVAL", failing, "0"], 0),
        Reply::Error(_)
    ));
    assert_eq!(a.db(), 4);
    assert_eq!(
        run(&mut redis, &mut a, &["EXISTS", "f"], 0),
        Reply::Integer(0)
    );
}

#[test]
fn move_and_copy_between_databases() {
    let mut redis = Redis::new();
    let mut a = Session::new();
    assert_eq!(run(&mut redis, &mut a, &["SET", "k", "v"], 0), ok());
    for (words, reply) in [
        (
            &["MOVE", "k", "0"][..],
            err("ERR source and destination objects are the same"),
        ),
        (
            &["MOVE", "nosuch", "0"],
            err("ERR source and destination objects are the same"),
        ),
        (
            &["MOVE", "k", "a"],
            err("ERR value is not an integer or out of range"),
        ),
        (&["MOVE", "k", "16"], err("ERR DB index is out of range")),
        (&["MOVE", "k", "-1"], err("ERR DB index is out of range")),
        (
            &["MOVE", "k", "2147483648"],
            err("ERR value is out of range, value must between -2147483648 and 2147483647"),
        ),
        (&["MOVE", "nosuch", "1"], Reply::Integer(0)),
        (&["MOVE", "k", "1"], Reply::Integer(1)),
        (&["MOVE", "k", "1"], Reply::Integer(0)),
    ] {
        assert_eq!(run(&mut redis, &mut a, words, 0), reply, "{words:?}");
    }
    // A key moves with its TTL; an expired key in the destination does not stop it.
    let mut one = session_in(&mut redis, 1);
    assert_eq!(
        run(&mut redis, &mut one, &["SET", "t", "x", "PX", "100000"], 0),
        ok()
    );
    assert_eq!(
        run(&mut redis, &mut one, &["SET", "e", "old", "PX", "1"], 0),
        ok()
    );
    assert_eq!(
        run(&mut redis, &mut one, &["MOVE", "t", "0"], 0),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &mut a, &["PTTL", "t"], 0),
        Reply::Integer(100_000)
    );
    assert_eq!(run(&mut redis, &mut a, &["SET", "e", "new"], 10), ok());
    assert_eq!(
        run(&mut redis, &mut a, &["MOVE", "e", "1"], 10),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &mut one, &["GET", "e"], 10), bulk("new"));
    assert_eq!(
        run(&mut redis, &mut one, &["PTTL", "e"], 10),
        Reply::Integer(-1)
    );
    // A hash moves whole.
    assert_eq!(
        run(&mut redis, &mut one, &["HSET", "h", "f", "v"], 10),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &mut one, &["MOVE", "h", "0"], 10),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &mut a, &["HGETALL", "h"], 10),
        Reply::Array(vec![bulk("f"), bulk("v")])
    );
    // COPY ... DB.
    assert_eq!(run(&mut redis, &mut a, &["SET", "c", "0"], 10), ok());
    assert_eq!(run(&mut redis, &mut one, &["SET", "c", "1"], 10), ok());
    for (words, reply) in [
        (
            &["COPY", "c", "c"][..],
            err("ERR source and destination objects are the same"),
        ),
        (
            &["COPY", "c", "c", "DB", "0"],
            err("ERR source and destination objects are the same"),
        ),
        (&["COPY", "c", "c", "DB", "1"], Reply::Integer(0)),
        (
            &["COPY", "c", "x", "DB", "16"],
            err("ERR DB index is out of range"),
        ),
        (
            &["COPY", "c", "x", "DB", "a"],
            err("ERR value is not an integer or out of range"),
        ),
        (&["COPY", "c", "x", "DB"], err("ERR syntax error")),
        (
            &["COPY", "c", "x", "REPLACE", "DB", "99", "FOO"],
            err("ERR DB index is out of range"),
        ),
        (
            &["COPY", "c", "x", "FOO", "DB", "99"],
            err("ERR syntax error"),
        ),
        (&["COPY", "nosuch", "c", "DB", "1"], Reply::Integer(0)),
        (&["COPY", "c", "x", "DB", "3", "DB", "2"], Reply::Integer(1)),
        (&["COPY", "c", "c", "DB", "1", "REPLACE"], Reply::Integer(1)),
    ] {
        assert_eq!(run(&mut redis, &mut a, words, 10), reply, "{words:?}");
    }
    assert_eq!(run(&mut redis, &mut one, &["GET", "c"], 10), bulk("0"));
    let mut two = session_in(&mut redis, 2);
    assert_eq!(run(&mut redis, &mut two, &["GET", "x"], 10), bulk("0"));
    let mut three = session_in(&mut redis, 3);
    assert_eq!(
        run(&mut redis, &mut three, &["EXISTS", "x"], 10),
        Reply::Integer(0)
    );
    // Cluster mode has database 0 only.
    redis.set_cluster_mode(true);
    assert_eq!(
        run(&mut redis, &mut a, &["MOVE", "c", "1"], 10),
        err("ERR MOVE is not allowed in cluster mode")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["COPY", "c", "c", "DB", "1"], 10),
        err("ERR Copying to another database is not allowed in cluster mode")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["COPY", "c", "c", "DB", "0"], 10),
        err("ERR source and destination objects are the same")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["COPY", "c", "c", "DB", "16"], 10),
        err("ERR DB index is out of range")
    );
    assert_eq!(
        run(&mut redis, &mut a, &["COPY", "c", "{c}d", "DB", "0"], 10),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &mut a, &["SWAPDB", "a", "1"], 10),
        err("ERR SWAPDB is not allowed in cluster mode")
    );
}

#[test]
fn swapdb_trades_keys_and_checks_its_indexes() {
    let mut redis = Redis::new();
    let mut zero = Session::new();
    let mut two = session_in(&mut redis, 2);
    assert_eq!(run(&mut redis, &mut zero, &["SET", "k", "v0"], 0), ok());
    assert_eq!(run(&mut redis, &mut two, &["SET", "k", "v2"], 0), ok());
    assert_eq!(run(&mut redis, &mut two, &["SET", "e", "x"], 0), ok());
    for (words, reply) in [
        (&["SWAPDB", "a", "1"][..], err("ERR invalid first DB index")),
        (&["SWAPDB", "1", "a"], err("ERR invalid second DB index")),
        (&["SWAPDB", "a", "b"], err("ERR invalid first DB index")),
        (
            &["SWAPDB", "2147483648", "0"],
            err("ERR invalid first DB index"),
        ),
        (
            &["SWAPDB", "0", "2147483648"],
            err("ERR invalid second DB index"),
        ),
        (&["SWAPDB", "1", "16"], err("ERR DB index is out of range")),
        (&["SWAPDB", "-1", "0"], err("ERR DB index is out of range")),
        (
            &["SWAPDB", "1"],
            err("ERR wrong number of arguments for 'swapdb' command"),
        ),
        (&["SWAPDB", "1", "1"], ok()),
        (&["SWAPDB", "0", "2"], ok()),
    ] {
        assert_eq!(run(&mut redis, &mut zero, words, 0), reply, "{words:?}");
    }
    assert_eq!(run(&mut redis, &mut zero, &["GET", "k"], 0), bulk("v2"));
    assert_eq!(run(&mut redis, &mut zero, &["GET", "e"], 0), bulk("x"));
    assert_eq!(run(&mut redis, &mut two, &["GET", "k"], 0), bulk("v0"));
    assert_eq!(
        run(&mut redis, &mut zero, &["INFO", "keyspace"], 0),
        bulk("# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\ndb2:keys=1,expires=0,avg_ttl=0\r\n")
    );
    assert_eq!(run(&mut redis, &mut two, &["SWAPDB", "2", "9"], 0), ok());
    assert_eq!(run(&mut redis, &mut two, &["DBSIZE"], 0), Reply::Integer(0));
    let mut nine = session_in(&mut redis, 9);
    assert_eq!(run(&mut redis, &mut nine, &["GET", "k"], 0), bulk("v0"));
}

#[test]
fn flushdb_empties_one_database_and_flushall_every_one() {
    let mut redis = Redis::new();
    let mut zero = Session::new();
    let mut three = session_in(&mut redis, 3);
    assert_eq!(run(&mut redis, &mut zero, &["SET", "k", "v0"], 0), ok());
    assert_eq!(run(&mut redis, &mut three, &["SET", "k", "v3"], 0), ok());
    assert_eq!(run(&mut redis, &mut three, &["FLUSHDB"], 0), ok());
    assert_eq!(
        run(&mut redis, &mut three, &["DBSIZE"], 0),
        Reply::Integer(0)
    );
    assert_eq!(run(&mut redis, &mut zero, &["GET", "k"], 0), bulk("v0"));
    assert_eq!(run(&mut redis, &mut three, &["SET", "k", "v3"], 0), ok());
    assert_eq!(run(&mut redis, &mut three, &["FLUSHALL"], 0), ok());
    assert_eq!(run(&mut redis, &mut zero, &["GET", "k"], 0), Reply::Nil);
    assert_eq!(
        run(&mut redis, &mut zero, &["INFO", "keyspace"], 0),
        bulk("# Keyspace\r\n")
    );
    assert_eq!(run(&mut redis, &mut three, &["SELECT", "0"], 0), ok());
    assert_eq!(redis.drain_effects().last(), Some(&Effect::FlushAll));
    assert_eq!(redis, Redis::new(), "nothing is left in any database");
}

/// One client watches `k` in database 1; the other runs `between`; the first runs
/// `MULTI`/`PING`/`EXEC`. True when `EXEC` ran the transaction. Each case's answer is Redis
/// 7.0.15's.
fn exec_runs_after(setup: &[(u8, &[&str])], between: &[(u8, &[&str])], now_ms: u64) -> bool {
    let mut redis = Redis::new();
    for (db, words) in setup {
        let mut session = session_in(&mut redis, *db);
        run(&mut redis, &mut session, words, 0);
    }
    let mut watcher = session_in(&mut redis, 1);
    assert_eq!(run(&mut redis, &mut watcher, &["WATCH", "k"], 0), ok());
    for (db, words) in between {
        let mut session = session_in(&mut redis, *db);
        run(&mut redis, &mut session, words, now_ms);
    }
    assert_eq!(run(&mut redis, &mut watcher, &["MULTI"], now_ms), ok());
    run(&mut redis, &mut watcher, &["PING"], now_ms);
    match run(&mut redis, &mut watcher, &["EXEC"], now_ms) {
        Reply::Array(replies) => {
            assert_eq!(replies, vec![Reply::Status("PONG".into())]);
            true
        }
        Reply::NilArray => false,
        other => panic!("EXEC answered {other:?}"),
    }
}

#[test]
fn watch_watches_a_key_in_the_database_it_ran_in() {
    let k_in_1: &[(u8, &[&str])] = &[(1, &["SET", "k", "v"])];
    let k_in_2: &[(u8, &[&str])] = &[(2, &["SET", "k", "v"])];
    assert!(exec_runs_after(k_in_1, &[(0, &["SET", "k", "x"])], 0));
    assert!(!exec_runs_after(k_in_1, &[(1, &["SET", "k", "x"])], 0));
    assert!(exec_runs_after(k_in_1, &[(0, &["FLUSHDB"])], 0));
    assert!(!exec_runs_after(k_in_1, &[(1, &["FLUSHDB"])], 0));
    assert!(exec_runs_after(
        &[(1, &["SET", "j", "v"])],
        &[(1, &["FLUSHDB"])],
        0
    ));
    assert!(!exec_runs_after(k_in_1, &[(5, &["FLUSHALL"])], 0));
    assert!(!exec_runs_after(k_in_1, &[(1, &["MOVE", "k", "2"])], 0));
    assert!(!exec_runs_after(k_in_2, &[(2, &["MOVE", "k", "1"])], 0));
    assert!(exec_runs_after(
        k_in_1,
        &[(1, &["COPY", "k", "k", "DB", "2"])],
        0
    ));
    assert!(!exec_runs_after(
        k_in_2,
        &[(2, &["COPY", "k", "k", "DB", "1"])],
        0
    ));
    // SWAPDB: a watched key of either database counts as written if either holds it.
    assert!(exec_runs_after(&[], &[(0, &["SWAPDB", "1", "2"])], 0));
    assert!(!exec_runs_after(k_in_2, &[(0, &["SWAPDB", "1", "2"])], 0));
    assert!(!exec_runs_after(k_in_1, &[(0, &["SWAPDB", "1", "2"])], 0));
    assert!(!exec_runs_after(k_in_1, &[(0, &["SWAPDB", "2", "1"])], 0));
    assert!(exec_runs_after(k_in_1, &[(0, &["SWAPDB", "0", "3"])], 0));
    // An expired key swapped in for a missing one changes nothing a client sees; one the
    // watcher saw expires before EXEC either way.
    let expiring_in_2: &[(u8, &[&str])] = &[(2, &["SET", "k", "v", "PX", "5"])];
    assert!(exec_runs_after(
        expiring_in_2,
        &[(0, &["SWAPDB", "1", "2"])],
        50
    ));
    let expiring_in_1: &[(u8, &[&str])] = &[(1, &["SET", "k", "v", "PX", "5"])];
    assert!(!exec_runs_after(
        expiring_in_1,
        &[(0, &["SWAPDB", "1", "2"])],
        50
    ));
    assert!(!exec_runs_after(expiring_in_1, &[(1, &["FLUSHDB"])], 50));
}

#[test]
fn watched_keys_of_several_databases_are_each_checked_in_their_own() {
    let mut redis = Redis::new();
    let mut a = Session::new();
    let mut b = session_in(&mut redis, 4);
    assert_eq!(run(&mut redis, &mut a, &["WATCH", "k"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "4"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["WATCH", "j"], 0), ok());
    assert_eq!(run(&mut redis, &mut b, &["SET", "k", "x"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["MULTI"], 0), ok());
    run(&mut redis, &mut a, &["PING"], 0);
    assert_eq!(
        run(&mut redis, &mut a, &["EXEC"], 0),
        Reply::Array(vec![Reply::Status("PONG".into())]),
        "k was written in database 4, not in 0 where it is watched"
    );
    assert_eq!(run(&mut redis, &mut a, &["WATCH", "k"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["SELECT", "0"], 0), ok());
    assert_eq!(run(&mut redis, &mut b, &["SET", "k", "y"], 0), ok());
    assert_eq!(run(&mut redis, &mut a, &["MULTI"], 0), ok());
    run(&mut redis, &mut a, &["PING"], 0);
    assert_eq!(run(&mut redis, &mut a, &["EXEC"], 0), Reply::NilArray);
}

#[test]
fn effects_carry_their_database_to_a_replica() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    let mut three = session_in(&mut primary, 3);
    assert_eq!(run(&mut primary, &mut three, &["SET", "k", "v3"], 0), ok());
    assert_eq!(
        run(&mut primary, &mut three, &["SET", "t", "x", "PX", "10"], 0),
        ok()
    );
    assert_eq!(
        run(&mut primary, &mut three, &["RPUSH", "l", "a"], 0),
        Reply::Integer(1)
    );
    assert_eq!(
        primary.drain_effects(),
        vec![
            Effect::Set {
                key: b"k".to_vec(),
                value: b"v3".to_vec(),
                expire_at_ms: None,
                db: 3
            },
            Effect::Set {
                key: b"t".to_vec(),
                value: b"x".to_vec(),
                expire_at_ms: Some(10),
                db: 3
            },
            Effect::Collection {
                key: b"l".to_vec(),
                value: leaselab_model::redis::collection::Collection::List(
                    [b"a".to_vec()].into_iter().collect()
                ),
                expire_at_ms: None,
                db: 3
            },
        ]
    );
    // Expiry in database 3: the primary deletes the key when touched and says where.
    assert_eq!(run(&mut primary, &mut three, &["GET", "t"], 11), Reply::Nil);
    let mut zero = Session::new();
    assert_eq!(run(&mut primary, &mut zero, &["SET", "k", "v0"], 11), ok());
    assert_eq!(
        run(&mut primary, &mut three, &["MOVE", "k", "5"], 11),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut primary, &mut zero, &["SWAPDB", "5", "6"], 11),
        ok()
    );
    let effects = primary.drain_effects();
    let described: Vec<String> = effects.iter().map(Effect::describe).collect();
    assert_eq!(
        described,
        [
            "DEL t in db 3",
            "SET k \"v0\"",
            "SET k \"v3\" in db 5",
            "DEL k in db 3",
            "SWAPDB 5 6"
        ]
    );
    for effect in &effects {
        replica.apply_effect(effect);
    }
    let mut six = Session::new();
    assert_eq!(run(&mut replica, &mut six, &["SELECT", "6"], 11), ok());
    assert_eq!(run(&mut replica, &mut six, &["GET", "k"], 11), bulk("v3"));
    let mut zero_on_replica = Session::new();
    assert_eq!(
        run(&mut replica, &mut zero_on_replica, &["GET", "k"], 11),
        bulk("v0")
    );
    // FLUSHDB reaches the replica as a flush of that database only.
    let mut six_on_primary = session_in(&mut primary, 6);
    assert_eq!(
        run(&mut primary, &mut six_on_primary, &["FLUSHDB"], 11),
        ok()
    );
    let effects = primary.drain_effects();
    assert_eq!(effects, vec![Effect::FlushDb { db: 6 }]);
    replica.apply_effect(&effects[0]);
    assert_eq!(
        run(&mut replica, &mut six, &["DBSIZE"], 11),
        Reply::Integer(0)
    );
    assert_eq!(
        run(&mut replica, &mut zero_on_replica, &["GET", "k"], 11),
        bulk("v0")
    );
    // A full resync copies every database.
    let mut two = session_in(&mut primary, 2);
    assert_eq!(run(&mut primary, &mut two, &["SET", "r", "2"], 11), ok());
    let mut resynced = primary.resynced_replica();
    assert_eq!(run(&mut resynced, &mut two, &["GET", "r"], 11), bulk("2"));
}

#[test]
fn an_aof_reload_puts_keys_back_in_their_databases() {
    let mut primary = Redis::new();
    let mut aof = Aof::new(Appendfsync::Always, &[], 0);
    let mut five = session_in(&mut primary, 5);
    assert_eq!(run(&mut primary, &mut five, &["SET", "k", "v5"], 1), ok());
    assert_eq!(
        run(&mut primary, &mut five, &["SET", "t", "x", "PX", "100"], 1),
        ok()
    );
    aof.append(1, primary.drain_effects());
    let (mut loaded, lost) = aof.crash_and_load(2);
    assert!(lost.is_empty());
    let mut zero = Session::new();
    assert_eq!(
        run(&mut loaded, &mut zero, &["EXISTS", "k", "t"], 2),
        Reply::Integer(0)
    );
    let mut five = session_in(&mut loaded, 5);
    assert_eq!(run(&mut loaded, &mut five, &["GET", "k"], 2), bulk("v5"));
    assert_eq!(
        run(&mut loaded, &mut five, &["PTTL", "t"], 2),
        Reply::Integer(99)
    );
    // The loaded primary expires keys in database 5 itself.
    assert_eq!(run(&mut loaded, &mut five, &["GET", "t"], 102), Reply::Nil);
    assert_eq!(
        loaded.drain_effects(),
        vec![Effect::Del {
            key: b"t".to_vec(),
            db: 5
        }]
    );
    // A restart from a snapshot, or keeping its keys, keeps every database.
    let mut restarted = Redis::new();
    restarted.restart_from(&loaded);
    assert_eq!(
        run(&mut restarted, &mut five, &["GET", "k"], 102),
        bulk("v5")
    );
    restarted.restart_keeping_keys();
    assert_eq!(
        run(&mut restarted, &mut five, &["GET", "k"], 102),
        bulk("v5")
    );
    restarted.restart_empty();
    assert_eq!(
        run(&mut restarted, &mut five, &["DBSIZE"], 102),
        Reply::Integer(0)
    );
}
