//! Command-by-command replies and error texts of the Redis stand-in.
//!
//! Expected texts were checked with redis-cli against Redis 7.0.15.

use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::{Redis, Reply};

fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn run(redis: &mut Redis, words: &[&str], now_ms: u64) -> Reply {
    redis.execute(&argv(words), now_ms)
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_string())
}

const INVALID_SET_EXPIRE: &str = "ERR invalid expire time in 'set' command";
const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

#[test]
fn ping() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["PING"], 0), Reply::Status("PONG".into()));
    assert_eq!(run(&mut redis, &["ping", "hi"], 0), bulk("hi"));
    assert_eq!(
        run(&mut redis, &["ping", "a", "b"], 0),
        err("ERR wrong number of arguments for 'ping' command")
    );
}

#[test]
fn unknown_command_and_arity() {
    let mut redis = Redis::new();
    assert_eq!(
        run(&mut redis, &["FOO", "a", "b"], 0),
        err("ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")
    );
    assert_eq!(
        run(&mut redis, &["BLMPOP", "0", "1", "a", "LEFT"], 0),
        err("ERR unknown command 'BLMPOP', with args beginning with: '0' '1' 'a' 'LEFT' ")
    );
    // Without a connection to block, a blocking pop that finds nothing answers as it does
    // inside MULTI.
    assert_eq!(run(&mut redis, &["BLPOP", "a", "0"], 0), Reply::NilArray);
    assert_eq!(
        run(&mut redis, &["set", "k"], 0),
        err("ERR wrong number of arguments for 'set' command")
    );
    assert_eq!(
        run(&mut redis, &["GET"], 0),
        err("ERR wrong number of arguments for 'get' command")
    );
}

#[test]
fn get_and_plain_set() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["GET", "k"], 0), Reply::Nil);
    assert_eq!(run(&mut redis, &["SET", "k", "v"], 0), Reply::ok());
    assert_eq!(run(&mut redis, &["GET", "k"], 0), bulk("v"));
}

#[test]
fn set_nx_xx_and_get() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["SET", "k", "a", "XX"], 0), Reply::Nil);
    assert_eq!(run(&mut redis, &["GET", "k"], 0), Reply::Nil);
    assert_eq!(run(&mut redis, &["SET", "k", "a", "NX"], 0), Reply::ok());
    assert_eq!(run(&mut redis, &["SET", "k", "b", "NX"], 0), Reply::Nil);
    assert_eq!(run(&mut redis, &["GET", "k"], 0), bulk("a"));
    // With GET, a write stopped by NX still answers the old value.
    assert_eq!(
        run(&mut redis, &["SET", "k", "b", "NX", "GET"], 0),
        bulk("a")
    );
    assert_eq!(run(&mut redis, &["GET", "k"], 0), bulk("a"));
    assert_eq!(
        run(&mut redis, &["SET", "k", "c", "XX", "GET"], 0),
        bulk("a")
    );
    assert_eq!(run(&mut redis, &["GET", "k"], 0), bulk("c"));
    assert_eq!(run(&mut redis, &["SET", "n", "x", "GET"], 0), Reply::Nil);
}

#[test]
fn set_validation_order() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["SET", "k", "held"], 0), Reply::ok());
    // The expiry is validated before NX: an error even though NX would stop the write.
    assert_eq!(
        run(&mut redis, &["SET", "k", "v", "NX", "PX", "0"], 0),
        err(INVALID_SET_EXPIRE)
    );
    assert_eq!(
        run(&mut redis, &["SET", "fresh", "v", "NX", "PX", "0"], 0),
        err(INVALID_SET_EXPIRE)
    );
    assert_eq!(
        run(&mut redis, &["SET", "k", "v", "NX", "PX", "abc"], 0),
        err(NOT_INTEGER)
    );
    // Syntax comes before numbers.
    assert_eq!(
        run(&mut redis, &["SET", "k", "v", "NX", "XX", "PX", "0"], 0),
        err("ERR syntax error")
    );
    // PX plus the clock overflowing is an invalid expire time too.
    assert_eq!(
        run(
            &mut redis,
            &["SET", "k", "v", "PX", "9223372036854775807"],
            5
        ),
        err(INVALID_SET_EXPIRE)
    );
    assert_eq!(run(&mut redis, &["GET", "k"], 0), bulk("held"));
    assert_eq!(run(&mut redis, &["EXISTS", "fresh"], 0), Reply::Integer(0));
}

#[test]
fn expiry_boundary() {
    let mut redis = Redis::new();
    assert_eq!(
        run(&mut redis, &["SET", "k", "v", "PX", "100"], 1_000),
        Reply::ok()
    );
    assert_eq!(run(&mut redis, &["PTTL", "k"], 1_040), Reply::Integer(60));
    // At the deadline the key still exists and PTTL is 0.
    assert_eq!(run(&mut redis, &["PTTL", "k"], 1_100), Reply::Integer(0));
    assert_eq!(run(&mut redis, &["GET", "k"], 1_100), bulk("v"));
    assert_eq!(redis.peek(b"k", 1_100), Some(&b"v"[..]));
    assert_eq!(redis.peek(b"k", 1_101), None);
    // One millisecond later it is gone.
    assert_eq!(run(&mut redis, &["GET", "k"], 1_101), Reply::Nil);
    assert_eq!(run(&mut redis, &["PTTL", "k"], 1_101), Reply::Integer(-2));
}

#[test]
fn set_expiry_forms() {
    let mut redis = Redis::new();
    assert_eq!(
        run(&mut redis, &["SET", "s", "v", "EX", "2"], 1_000),
        Reply::ok()
    );
    assert_eq!(redis.stored(b"s"), Some((&b"v"[..], Some(3_000))));
    assert_eq!(
        run(&mut redis, &["SET", "a", "v", "PXAT", "5000"], 1_000),
        Reply::ok()
    );
    assert_eq!(
        run(&mut redis, &["PTTL", "a"], 1_000),
        Reply::Integer(4_000)
    );
    assert_eq!(
        run(&mut redis, &["SET", "b", "v", "EXAT", "7"], 1_000),
        Reply::ok()
    );
    assert_eq!(redis.stored(b"b"), Some((&b"v"[..], Some(7_000))));
    // A deadline already in the past: accepted, and the key is gone at once.
    assert_eq!(
        run(&mut redis, &["SET", "p", "v", "PXAT", "1"], 1_000),
        Reply::ok()
    );
    assert_eq!(run(&mut redis, &["EXISTS", "p"], 1_000), Reply::Integer(0));
}

#[test]
fn plain_set_clears_ttl_and_keepttl_keeps_it() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "k", "a", "PX", "100"], 0);
    assert_eq!(
        run(&mut redis, &["SET", "k", "b", "KEEPTTL"], 10),
        Reply::ok()
    );
    assert_eq!(run(&mut redis, &["PTTL", "k"], 10), Reply::Integer(90));
    assert_eq!(run(&mut redis, &["SET", "k", "c"], 20), Reply::ok());
    assert_eq!(run(&mut redis, &["PTTL", "k"], 20), Reply::Integer(-1));
}

#[test]
fn setnx() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["SETNX", "k", "a"], 0), Reply::Integer(1));
    assert_eq!(run(&mut redis, &["SETNX", "k", "b"], 0), Reply::Integer(0));
    assert_eq!(run(&mut redis, &["GET", "k"], 0), bulk("a"));
    assert_eq!(
        run(&mut redis, &["SETNX", "k"], 0),
        err("ERR wrong number of arguments for 'setnx' command")
    );
}

#[test]
fn del_and_exists_counts() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "a", "1"], 0);
    run(&mut redis, &["SET", "b", "1"], 0);
    assert_eq!(
        run(&mut redis, &["EXISTS", "a", "a", "b", "zz"], 0),
        Reply::Integer(3)
    );
    assert_eq!(
        run(&mut redis, &["DEL", "a", "a", "zz"], 0),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "a", "b"], 0), Reply::Integer(1));
    assert_eq!(
        run(&mut redis, &["DEL"], 0),
        err("ERR wrong number of arguments for 'del' command")
    );
}

#[test]
fn incr() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["INCR", "n"], 0), Reply::Integer(1));
    assert_eq!(run(&mut redis, &["INCR", "n"], 0), Reply::Integer(2));
    assert_eq!(run(&mut redis, &["GET", "n"], 0), bulk("2"));
}

#[test]
fn incr_keeps_ttl() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "n", "5", "PX", "100"], 0);
    assert_eq!(run(&mut redis, &["INCR", "n"], 30), Reply::Integer(6));
    assert_eq!(run(&mut redis, &["PTTL", "n"], 30), Reply::Integer(70));
}

#[test]
fn incr_errors() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "n", "9223372036854775807"], 0);
    assert_eq!(
        run(&mut redis, &["INCR", "n"], 0),
        err("ERR increment or decrement would overflow")
    );
    for bad in ["abc", " 1", "007", "1.5", ""] {
        run(&mut redis, &["SET", "n", bad], 0);
        assert_eq!(
            run(&mut redis, &["INCR", "n"], 0),
            err(NOT_INTEGER),
            "{bad:?}"
        );
    }
}

#[test]
fn pexpire() {
    let mut redis = Redis::new();
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "missing", "100"], 0),
        Reply::Integer(0)
    );
    run(&mut redis, &["SET", "k", "v"], 0);
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "100"], 10),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["PTTL", "k"], 10), Reply::Integer(100));
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "abc"], 10),
        err(NOT_INTEGER)
    );
    // The overflow check comes before the key lookup.
    assert_eq!(
        run(
            &mut redis,
            &["PEXPIRE", "missing", "9223372036854775807"],
            10
        ),
        err("ERR invalid expire time in 'pexpire' command")
    );
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "10", "FOO"], 10),
        err("ERR Unsupported option FOO")
    );
}

#[test]
fn pexpire_zero_or_negative_deletes() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "k", "v"], 0);
    redis.drain_effects();
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "0"], 10),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "k"], 10), Reply::Integer(0));
    assert_eq!(redis.stored(b"k"), None);
    assert_eq!(
        redis.drain_effects(),
        vec![Effect::Del {
            key: b"k".to_vec(),
            db: 0
        }]
    );
    run(&mut redis, &["SET", "k", "v"], 0);
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "-9223372036854775808"], 10),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "k"], 10), Reply::Integer(0));
}

#[test]
fn pttl() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["PTTL", "k"], 0), Reply::Integer(-2));
    run(&mut redis, &["SET", "k", "v"], 0);
    assert_eq!(run(&mut redis, &["PTTL", "k"], 0), Reply::Integer(-1));
    run(&mut redis, &["SET", "k", "v", "PX", "30000"], 0);
    assert_eq!(run(&mut redis, &["PTTL", "k"], 116), Reply::Integer(29_884));
}

#[test]
fn delex_redis_8_4_semantics() {
    let mut redis = Redis::new();
    assert_eq!(
        run(&mut redis, &["DELEX", "k", "IFEQ", "a"], 0),
        Reply::Integer(0)
    );
    run(&mut redis, &["SET", "k", "a"], 0);
    assert_eq!(
        run(&mut redis, &["DELEX", "k", "IFEQ", "b"], 0),
        Reply::Integer(0)
    );
    assert_eq!(
        run(&mut redis, &["DELEX", "k", "IFNE", "a"], 0),
        Reply::Integer(0)
    );
    assert_eq!(run(&mut redis, &["GET", "k"], 0), bulk("a"));
    assert_eq!(
        run(&mut redis, &["DELEX", "k", "IFEQ", "a"], 0),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "k"], 0), Reply::Integer(0));
    run(&mut redis, &["SET", "k", "a"], 0);
    assert_eq!(
        run(&mut redis, &["DELEX", "k", "IFNE", "b"], 0),
        Reply::Integer(1)
    );
    run(&mut redis, &["SET", "k", "a"], 0);
    assert_eq!(run(&mut redis, &["DELEX", "k"], 0), Reply::Integer(1));
    assert_eq!(
        run(&mut redis, &["DELEX", "k", "IFEQ"], 0),
        err("ERR syntax error")
    );
}

#[test]
fn flushall_and_flushdb() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "a", "1"], 0);
    assert_eq!(run(&mut redis, &["FLUSHALL"], 0), Reply::ok());
    assert_eq!(run(&mut redis, &["EXISTS", "a"], 0), Reply::Integer(0));
    run(&mut redis, &["SET", "a", "1"], 0);
    assert_eq!(run(&mut redis, &["flushdb", "async"], 0), Reply::ok());
    assert_eq!(run(&mut redis, &["EXISTS", "a"], 0), Reply::Integer(0));
    assert_eq!(
        run(&mut redis, &["FLUSHDB", "foo"], 0),
        err("ERR syntax error")
    );
}

/// What redis-rs 1.x sends on connect (RESP2): `CLIENT SETINFO LIB-NAME/LIB-VER`, and
/// `SELECT n` when a database is configured.
#[test]
fn connection_housekeeping() {
    let mut redis = Redis::new();
    assert_eq!(
        run(
            &mut redis,
            &["CLIENT", "SETINFO", "LIB-NAME", "redis-rs"],
            0
        ),
        Reply::ok()
    );
    assert_eq!(
        run(&mut redis, &["CLIENT", "SETINFO", "LIB-VER", "1.8.1"], 0),
        Reply::ok()
    );
    assert_eq!(
        run(&mut redis, &["CLIENT", "SETNAME", "worker-1"], 0),
        Reply::ok()
    );
    assert_eq!(
        run(&mut redis, &["CLIENT", "SETNAME", "a b"], 0),
        err("ERR Client names cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(
        run(&mut redis, &["CLIENT", "KILL", "x"], 0),
        err("ERR unknown subcommand 'KILL'. Try CLIENT HELP.")
    );
    assert_eq!(run(&mut redis, &["SELECT", "0"], 0), Reply::ok());
    assert_eq!(run(&mut redis, &["SELECT", "15"], 0), Reply::ok());
    assert_eq!(
        run(&mut redis, &["SELECT", "16"], 0),
        err("ERR DB index is out of range")
    );
    assert_eq!(
        run(&mut redis, &["SELECT", "-1"], 0),
        err("ERR DB index is out of range")
    );
    redis.set_cluster_mode(true);
    assert_eq!(
        run(&mut redis, &["SELECT", "1"], 0),
        err("ERR SELECT is not allowed in cluster mode")
    );
}

#[test]
fn hello_answers_resp2_and_refuses_resp3() {
    let mut redis = Redis::new();
    let Reply::Array(fields) = run(&mut redis, &["HELLO", "2"], 0) else {
        panic!("HELLO 2 answers an array");
    };
    assert_eq!(fields.len(), 14);
    assert_eq!(fields[0], bulk("server"));
    assert_eq!(fields[1], bulk("redis"));
    assert_eq!(fields[4], bulk("proto"));
    assert_eq!(fields[5], Reply::Integer(2));
    assert_eq!(fields[10], bulk("role"));
    assert_eq!(fields[11], bulk("master"));
    assert!(matches!(run(&mut redis, &["HELLO"], 0), Reply::Array(_)));
    assert_eq!(
        run(&mut redis, &["HELLO", "3"], 0),
        err("NOPROTO unsupported protocol version")
    );
    let mut replica = Redis::replica();
    let Reply::Array(fields) = run(&mut replica, &["HELLO"], 0) else {
        panic!("HELLO answers an array");
    };
    assert_eq!(fields[11], bulk("replica"));
}

#[test]
fn apply_takes_parsed_commands() {
    use leaselab_model::redis::command::{SetCondition, SetExpiry};
    use leaselab_model::redis::Command;
    let mut redis = Redis::new();
    let acquire = Command::Set {
        key: b"lock".to_vec(),
        value: b"token".to_vec(),
        condition: SetCondition::IfMissing,
        expiry: SetExpiry::Millis(100),
        get: false,
    };
    assert_eq!(redis.apply(&acquire, 0), Reply::ok());
    assert_eq!(redis.apply(&acquire, 50), Reply::Nil);
    assert_eq!(redis.apply(&acquire, 101), Reply::ok());
    // A hand-built command with an invalid expiry gets Redis's error, not a panic.
    let invalid = Command::Set {
        key: b"lock".to_vec(),
        value: b"token".to_vec(),
        condition: SetCondition::Always,
        expiry: SetExpiry::Millis(0),
        get: false,
    };
    assert_eq!(redis.apply(&invalid, 0), err(INVALID_SET_EXPIRE));
}

#[test]
fn seed_sets_without_ttl() {
    let mut redis = Redis::new();
    redis.seed(b"balance", b"100");
    assert_eq!(run(&mut redis, &["GET", "balance"], 0), bulk("100"));
    assert_eq!(run(&mut redis, &["PTTL", "balance"], 0), Reply::Integer(-1));
}
