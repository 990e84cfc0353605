//! Hashes (HSET, HGET, HINCRBY, HEXISTS, HDEL, HGETALL, HLEN, WRONGTYPE), TTL, EXPIRE, EXPIREAT, PEXPIREAT, PERSIST, GETDEL, INCRBY, DECR, DECRBY, ECHO, TYPE,
//! PUBLISH and WAIT. Expected replies are those of Redis 7.0.15 for the same commands
//! (`tests/fidelity_redis.rs` compares generated sequences of them against the real server).

use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::{Redis, Reply};

fn run(redis: &mut Redis, list: &[&str], now_ms: u64) -> Reply {
    let argv: Vec<Vec<u8>> = list.iter().map(|w| w.as_bytes().to_vec()).collect();
    redis.execute(&argv, now_ms)
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_string())
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

const NOW: u64 = 1_700_000_000_000;

#[test]
fn expire_family() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "k", "v"], NOW);
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "abc"], NOW),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "9223372036854775807"], NOW),
        err("ERR invalid expire time in 'expire' command")
    );
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "10", "foo"], NOW),
        err("ERR Unsupported option foo")
    );
    assert_eq!(run(&mut redis, &["TTL", "k"], NOW), Reply::Integer(-1));
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "100"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["TTL", "k"], NOW), Reply::Integer(100));
    assert_eq!(
        run(&mut redis, &["PTTL", "k"], NOW),
        Reply::Integer(100_000)
    );
    // TTL rounds to the nearest second.
    assert_eq!(
        run(&mut redis, &["TTL", "k"], NOW + 99_501),
        Reply::Integer(0)
    );
    assert_eq!(
        run(&mut redis, &["TTL", "k"], NOW + 98_501),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &["PEXPIREAT", "k", "9223372036854775807"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &["EXPIREAT", "k", "9223372036854775807"], NOW),
        err("ERR invalid expire time in 'expireat' command")
    );
    let at = (NOW / 1000 + 50).to_string();
    assert_eq!(
        run(&mut redis, &["EXPIREAT", "k", &at], NOW),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["TTL", "k"], NOW), Reply::Integer(50));
    assert_eq!(
        run(&mut redis, &["EXPIREAT", "k", "-5"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "k"], NOW), Reply::Integer(0));
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "10"], NOW),
        Reply::Integer(0)
    );
    assert_eq!(run(&mut redis, &["TTL", "k"], NOW), Reply::Integer(-2));
}

#[test]
fn expire_options_compare_with_the_ttl_in_place() {
    let mut redis = Redis::new();
    let ttl = |redis: &mut Redis| run(redis, &["PTTL", "k"], NOW);
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "10", "NX"], NOW),
        Reply::Integer(0),
        "a missing key"
    );
    run(&mut redis, &["SET", "k", "v"], NOW);
    // No TTL: XX and GT refuse (no TTL counts as never expiring), NX and LT set one.
    for options in [["XX"], ["GT"]] {
        let command = [&["PEXPIRE", "k", "5000"][..], &options[..]].concat();
        assert_eq!(run(&mut redis, &command, NOW), Reply::Integer(0));
    }
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "50", "lt"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(ttl(&mut redis), Reply::Integer(50_000));
    assert_eq!(
        run(&mut redis, &["EXPIRE", "k", "100", "nx"], NOW),
        Reply::Integer(0)
    );
    // With a TTL: GT only lengthens, LT only shortens, XX goes with either.
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "40000", "XX", "GT"], NOW),
        Reply::Integer(0)
    );
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "50000", "GT"], NOW),
        Reply::Integer(0),
        "equal is not greater"
    );
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "k", "60000", "xx", "gt"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(ttl(&mut redis), Reply::Integer(60_000));
    let at_secs = (NOW / 1000 + 30).to_string();
    assert_eq!(
        run(&mut redis, &["EXPIREAT", "k", &at_secs, "LT"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(ttl(&mut redis), Reply::Integer(30_000));
    // A deadline in the past that the options allow deletes the key.
    assert_eq!(
        run(&mut redis, &["PEXPIREAT", "k", "1", "LT"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "k"], NOW), Reply::Integer(0));
}

#[test]
fn persist_removes_a_ttl_and_replicas_follow() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "k", "v"], NOW);
    assert_eq!(run(&mut redis, &["PERSIST", "k"], NOW), Reply::Integer(0));
    assert_eq!(
        run(&mut redis, &["PERSIST", "missing"], NOW),
        Reply::Integer(0)
    );
    run(&mut redis, &["SET", "k", "v", "EX", "100"], NOW);
    redis.drain_effects();
    assert_eq!(run(&mut redis, &["PERSIST", "k"], NOW), Reply::Integer(1));
    assert_eq!(run(&mut redis, &["TTL", "k"], NOW), Reply::Integer(-1));
    let mut replica = Redis::replica();
    replica.apply_effect(&Effect::Set {
        key: b"k".to_vec(),
        value: b"v".to_vec(),
        expire_at_ms: Some(NOW + 100_000),
        db: 0,
    });
    for effect in redis.drain_effects() {
        replica.apply_effect(&effect);
    }
    assert_eq!(replica.stored(b"k"), Some((&b"v"[..], None)));
}

#[test]
fn getdel_and_type() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "k", "v"], NOW);
    assert_eq!(
        run(&mut redis, &["TYPE", "k"], NOW),
        Reply::Status("string".into())
    );
    assert_eq!(run(&mut redis, &["GETDEL", "k"], NOW), bulk("v"));
    assert_eq!(run(&mut redis, &["GETDEL", "k"], NOW), Reply::Nil);
    assert_eq!(
        run(&mut redis, &["TYPE", "k"], NOW),
        Reply::Status("none".into())
    );
    assert_eq!(
        redis.drain_effects().last(),
        Some(&Effect::Del {
            key: b"k".to_vec(),
            db: 0
        })
    );
}

#[test]
fn increments_and_decrements() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "k", "5"], NOW);
    assert_eq!(
        run(&mut redis, &["INCRBY", "k", "abc"], NOW),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(&mut redis, &["INCRBY", "k", "9223372036854775807"], NOW),
        err("ERR increment or decrement would overflow")
    );
    assert_eq!(
        run(&mut redis, &["DECRBY", "k", "-9223372036854775808"], NOW),
        err("ERR decrement would overflow")
    );
    assert_eq!(
        run(&mut redis, &["DECRBY", "k", "9223372036854775807"], NOW),
        Reply::Integer(-9_223_372_036_854_775_802)
    );
    assert_eq!(
        run(&mut redis, &["DECR", "k"], NOW),
        Reply::Integer(-9_223_372_036_854_775_803)
    );
    assert_eq!(
        run(&mut redis, &["INCRBY", "n", "7"], NOW),
        Reply::Integer(7)
    );
    assert_eq!(run(&mut redis, &["DECR", "n"], NOW), Reply::Integer(6));
}

#[test]
fn echo_publish_wait() {
    let mut redis = Redis::new();
    assert_eq!(run(&mut redis, &["ECHO", "hi"], NOW), bulk("hi"));
    assert_eq!(
        run(&mut redis, &["ECHO"], NOW),
        err("ERR wrong number of arguments for 'echo' command")
    );
    assert_eq!(
        run(&mut redis, &["PUBLISH", "ch", "m"], NOW),
        Reply::Integer(0)
    );
    assert_eq!(run(&mut redis, &["WAIT", "0", "0"], NOW), Reply::Integer(0));
    assert_eq!(
        run(&mut redis, &["WAIT", "x", "0"], NOW),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(&mut redis, &["WAIT", "0", "-1"], NOW),
        err("ERR timeout is negative")
    );
    assert_eq!(
        run(&mut redis, &["WAIT", "0", "x"], NOW),
        err("ERR timeout is not an integer or out of range")
    );
    let source = "return redis.call('wait', 0, 0)";
    let reply = run(&mut redis, &["EVAL", source, "0"], NOW);
    let Reply::Error(text) = reply else {
        panic!("WAIT is refused inside a script");
    };
    assert!(text.starts_with("ERR This Redis command is not allowed from script script: "));
    assert_eq!(
        run(
            &mut redis,
            &["EVAL", "return redis.call('publish', 'c', 'm')", "0"],
            NOW
        ),
        Reply::Integer(0)
    );
}

#[test]
fn unsupported_commands_get_redis_unknown_command_error() {
    let mut redis = Redis::new();
    assert_eq!(
        run(&mut redis, &["ZRANDMEMBER", "l", "a", "b"], NOW),
        err("ERR unknown command 'ZRANDMEMBER', with args beginning with: 'l' 'a' 'b' ")
    );
}

#[test]
fn hashes_keep_insertion_order_and_types_do_not_mix() {
    let mut redis = Redis::new();
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(
        run(&mut redis, &["HSET", "h", "b", "1", "a", "2"], NOW),
        Reply::Integer(2)
    );
    assert_eq!(
        run(&mut redis, &["HSET", "h", "b", "3", "c", "x"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &["HGETALL", "h"], NOW),
        Reply::Array(["b", "3", "a", "2", "c", "x"].map(bulk).to_vec())
    );
    assert_eq!(
        run(&mut redis, &["HSET", "h", "x"], NOW),
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(
        run(&mut redis, &["HINCRBY", "h", "c", "1"], NOW),
        err("ERR hash value is not an integer")
    );
    assert_eq!(
        run(&mut redis, &["HINCRBY", "h", "b", "x"], NOW),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(
            &mut redis,
            &["HINCRBY", "h", "b", "9223372036854775807"],
            NOW
        ),
        err("ERR increment or decrement would overflow")
    );
    assert_eq!(
        run(&mut redis, &["HINCRBY", "h", "z", "5"], NOW),
        Reply::Integer(5)
    );
    assert_eq!(run(&mut redis, &["GET", "h"], NOW), wrongtype);
    assert_eq!(run(&mut redis, &["INCR", "h"], NOW), wrongtype);
    assert_eq!(run(&mut redis, &["SET", "h", "s", "GET"], NOW), wrongtype);
    assert_eq!(
        run(&mut redis, &["TYPE", "h"], NOW),
        Reply::Status("hash".into())
    );
    assert_eq!(run(&mut redis, &["HGET", "h", "b"], NOW), bulk("3"));
    assert_eq!(
        run(&mut redis, &["HEXISTS", "h", "q"], NOW),
        Reply::Integer(0)
    );
    assert_eq!(run(&mut redis, &["HLEN", "h"], NOW), Reply::Integer(4));
    assert_eq!(
        run(&mut redis, &["PEXPIRE", "h", "5000"], NOW),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["PTTL", "h"], NOW), Reply::Integer(5000));
    assert_eq!(
        run(&mut redis, &["HDEL", "h", "b", "a", "c", "z"], NOW),
        Reply::Integer(4)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "h"], NOW), Reply::Integer(0));
    run(&mut redis, &["SET", "s", "v"], NOW);
    for command in [
        &["HGET", "s", "b"][..],
        &["HGETALL", "s"],
        &["HLEN", "s"],
        &["HEXISTS", "s", "b"],
        &["HDEL", "s", "b"],
        &["HSET", "s", "f", "v"],
    ] {
        assert_eq!(run(&mut redis, command, NOW), wrongtype, "{command:?}");
    }
    assert_eq!(
        run(&mut redis, &["HGETALL", "missing"], NOW),
        Reply::Array(vec![])
    );
    assert_eq!(run(&mut redis, &["HGET", "missing", "f"], NOW), Reply::Nil);
}

#[test]
fn a_hash_replicates_whole_and_keeps_its_ttl() {
    let mut redis = Redis::new();
    run(&mut redis, &["HSET", "h", "f", "1"], NOW);
    run(&mut redis, &["PEXPIRE", "h", "5000"], NOW);
    run(&mut redis, &["HINCRBY", "h", "f", "2"], NOW);
    let mut replica = Redis::replica();
    for effect in redis.drain_effects() {
        replica.apply_effect(&effect);
    }
    assert_eq!(run(&mut replica, &["HGET", "h", "f"], NOW), bulk("3"));
    assert_eq!(run(&mut replica, &["PTTL", "h"], NOW), Reply::Integer(5000));
    assert_eq!(run(&mut redis, &["PERSIST", "h"], NOW), Reply::Integer(1));
    for effect in redis.drain_effects() {
        replica.apply_effect(&effect);
    }
    assert_eq!(run(&mut replica, &["PTTL", "h"], NOW), Reply::Integer(-1));
}

/// A replica fed the primary's effects holds the same lists, sets and sorted sets (their
/// order, scores and TTLs included), and an emptied collection is deleted on both.
#[test]
fn collections_replicate_whole_and_disappear_when_empty() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    let commands: &[&[&str]] = &[
        &["RPUSH", "queue", "a", "b", "c"],
        &["LPOP", "queue"],
        &["PEXPIRE", "queue", "5000"],
        &["SADD", "members", "10", "2", "x"],
        &["ZADD", "timeouts", "2.5", "w1", "1", "w2"],
        &["ZINCRBY", "timeouts", "0.1", "w2"],
        &["SADD", "gone", "only"],
        &["SREM", "gone", "only"],
    ];
    for command in commands {
        run(&mut primary, command, NOW);
    }
    for effect in primary.drain_effects() {
        replica.apply_effect(&effect);
    }
    for probe in [
        &["LRANGE", "queue", "0", "-1"][..],
        &["PTTL", "queue"],
        &["SMEMBERS", "members"],
        &["ZRANGE", "timeouts", "0", "-1", "WITHSCORES"],
        &["EXISTS", "gone"],
        &["TYPE", "timeouts"],
    ] {
        assert_eq!(
            run(&mut replica, probe, NOW),
            run(&mut primary, probe, NOW),
            "{probe:?}"
        );
    }
    assert_eq!(
        run(
            &mut replica,
            &["ZRANGE", "timeouts", "0", "-1", "WITHSCORES"],
            NOW
        ),
        Reply::Array(
            ["w2", "1.1000000000000001", "w1", "2.5"]
                .iter()
                .map(|s| Reply::Bulk(s.as_bytes().to_vec()))
                .collect()
        )
    );
    assert_eq!(
        run(&mut replica, &["EXISTS", "gone"], NOW),
        Reply::Integer(0)
    );
    // The TTL set on the list expires it on the replica's reads too.
    assert_eq!(
        run(&mut replica, &["LLEN", "queue"], NOW + 5_001),
        Reply::Integer(0)
    );
}

/// `WATCH` sees a collection as modified exactly when Redis signals it: `SADD` of a member
/// already there and `LREM` that removes nothing leave it alone; `LTRIM` of an existing list
/// always counts, even when it keeps everything.
#[test]
fn collection_writes_touch_watched_keys_as_redis_does() {
    use leaselab_model::redis::Session;
    let argv =
        |words: &[&str]| -> Vec<Vec<u8>> { words.iter().map(|w| w.as_bytes().to_vec()).collect() };
    let cases: &[(&[&str], &[&str], bool)] = &[
        (&["SADD", "k", "a"], &["SADD", "k", "a"], false),
        (&["SADD", "k", "a"], &["SADD", "k", "b"], true),
        (&["RPUSH", "k", "a"], &["LREM", "k", "0", "z"], false),
        (&["RPUSH", "k", "a"], &["LTRIM", "k", "0", "-1"], true),
        (&["ZADD", "k", "1", "a"], &["ZADD", "k", "1", "a"], false),
        (&["ZADD", "k", "1", "a"], &["ZADD", "k", "2", "a"], true),
        (&["ZADD", "k", "1", "a"], &["ZREM", "k", "b"], false),
    ];
    for (setup, write, touches) in cases {
        let mut redis = Redis::new();
        let mut watcher = Session::new();
        let mut other = Session::new();
        redis.execute_in(&mut other, &argv(setup), NOW);
        redis.execute_in(&mut watcher, &argv(&["WATCH", "k"]), NOW);
        redis.execute_in(&mut other, &argv(write), NOW);
        redis.execute_in(&mut watcher, &argv(&["MULTI"]), NOW);
        redis.execute_in(&mut watcher, &argv(&["PING"]), NOW);
        let exec = redis.execute_in(&mut watcher, &argv(&["EXEC"]), NOW);
        let aborted = exec == Reply::NilArray;
        assert_eq!(
            aborted, *touches,
            "{setup:?} then {write:?}: EXEC gave {exec:?}"
        );
    }
}

/// `SPOP` and `SRANDMEMBER` draw as a function of the set and the clock: two servers with the
/// same set draw the same members at the same time (a run stays a function of its seed), other
/// times draw others, a script may call them, and a negative count past the limit is refused
/// instead of building that many replies.
#[test]
fn random_set_draws_are_a_function_of_the_set_and_bounded() {
    let two_of = |redis: &Redis| redis.clone();
    let members = ["SADD", "s", "a", "b", "c", "d", "e"];
    let mut one = Redis::new();
    let mut two = Redis::new();
    run(&mut one, &members, NOW);
    run(&mut two, &members, NOW);
    for argv in [
        &["SRANDMEMBER", "s", "-20"][..],
        &["SRANDMEMBER", "s", "3"],
        &["SPOP", "s"],
        &["SPOP", "s", "2"],
    ] {
        assert_eq!(
            run(&mut one, argv, NOW),
            run(&mut two, argv, NOW),
            "{argv:?}"
        );
    }
    assert_eq!(run(&mut one, &["SCARD", "s"], NOW), Reply::Integer(2));
    // Another millisecond, other draws (of 20 from a set of 8, some differ).
    run(
        &mut one,
        &["SADD", "u", "a", "b", "c", "d", "e", "f", "g", "h"],
        NOW,
    );
    let at = |redis: &mut Redis, now_ms| run(redis, &["SRANDMEMBER", "u", "-20"], now_ms);
    assert_eq!(at(&mut one, NOW), at(&mut two_of(&one), NOW));
    assert_ne!(at(&mut one, NOW), at(&mut one, NOW + 1));
    // Different draws of one call are not all the same member.
    run(
        &mut one,
        &["SADD", "t", "a", "b", "c", "d", "e", "f", "g", "h"],
        NOW,
    );
    let Reply::Array(drawn) = run(&mut one, &["SRANDMEMBER", "t", "-64"], NOW) else {
        panic!("an array");
    };
    let mut distinct = drawn.clone();
    distinct.sort_by_key(|r| format!("{r:?}"));
    distinct.dedup();
    assert!(distinct.len() > 4, "{distinct:?}");
    // From a script.
    let Reply::Bulk(member) = run(
        &mut one,
        &["EVAL", "return redis.call('SPOP', KEYS[1])", "1", "t"],
        NOW,
    ) else {
        panic!("a member");
    };
    assert_eq!(member.len(), 1);
    assert_eq!(run(&mut one, &["SCARD", "t"], NOW), Reply::Integer(7));
    // Bounded.
    assert!(matches!(
        run(&mut one, &["SRANDMEMBER", "t", "-1048577"], NOW),
        Reply::Error(_)
    ));
    let Reply::Array(most) = run(&mut one, &["SRANDMEMBER", "t", "-1048576"], NOW) else {
        panic!("an array");
    };
    assert_eq!(most.len(), 1_048_576);
}
