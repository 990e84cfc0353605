//! Scripts: EVAL/EVALSHA/SCRIPT, the known scripts' semantics and their error texts.
//!
//! Expected texts were checked with redis-cli against Redis 7.0.15 running the same sources.

use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::{Redis, Reply, ScriptId};

fn words(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn run(redis: &mut Redis, list: &[&str], now_ms: u64) -> Reply {
    redis.execute(&words(list), now_ms)
}

/// `EVAL <source of script> <keys.len()> keys... args...`.
fn eval(redis: &mut Redis, script: ScriptId, keys: &[&str], args: &[&str], now_ms: u64) -> Reply {
    let mut argv = vec![
        b"EVAL".to_vec(),
        script.source().as_bytes().to_vec(),
        keys.len().to_string().into_bytes(),
    ];
    argv.extend(words(keys));
    argv.extend(words(args));
    redis.execute(&argv, now_ms)
}

fn evalsha(redis: &mut Redis, sha1: &str, keys: &[&str], args: &[&str], now_ms: u64) -> Reply {
    let mut argv = vec![
        b"EVALSHA".to_vec(),
        sha1.as_bytes().to_vec(),
        keys.len().to_string().into_bytes(),
    ];
    argv.extend(words(keys));
    argv.extend(words(args));
    redis.execute(&argv, now_ms)
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_string())
}

fn script_error(message: &str, script: ScriptId, line: u32) -> Reply {
    err(&format!(
        "{message} script: {}, on @user_script:{line}.",
        script.sha1_hex()
    ))
}

const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

#[test]
fn release_is_compare_and_delete() {
    let mut redis = Redis::new();
    run(
        &mut redis,
        &["SET", "lock", "token-a", "NX", "PX", "30000"],
        0,
    );
    assert_eq!(
        eval(&mut redis, ScriptId::Release, &["lock"], &["token-b"], 1),
        Reply::Integer(0)
    );
    assert_eq!(redis.peek(b"lock", 1), Some(&b"token-a"[..]));
    assert_eq!(
        eval(&mut redis, ScriptId::Release, &["lock"], &["token-a"], 1),
        Reply::Integer(1)
    );
    assert_eq!(redis.peek(b"lock", 1), None);
    assert_eq!(
        eval(&mut redis, ScriptId::Release, &["lock"], &["token-a"], 1),
        Reply::Integer(0)
    );
}

#[test]
fn release_without_a_key_fails_like_redis() {
    let mut redis = Redis::new();
    assert_eq!(
        eval(&mut redis, ScriptId::Release, &[], &[], 0),
        script_error(
            "ERR Lua redis lib command arguments must be strings or integers",
            ScriptId::Release,
            2
        )
    );
}

#[test]
fn evalsha_needs_the_script_cached() {
    let mut redis = Redis::new();
    let sha = ScriptId::Release.sha1_hex();
    assert_eq!(
        evalsha(&mut redis, &sha, &["lock"], &["t"], 0),
        err(NOSCRIPT)
    );
    assert_eq!(
        run(
            &mut redis,
            &["SCRIPT", "LOAD", ScriptId::Release.source()],
            0
        ),
        bulk(&sha)
    );
    assert!(redis.script_cached(ScriptId::Release));
    assert_eq!(
        evalsha(&mut redis, &sha, &["lock"], &["t"], 0),
        Reply::Integer(0)
    );
    // Any case of the hash works.
    assert_eq!(
        evalsha(&mut redis, &sha.to_ascii_uppercase(), &["lock"], &["t"], 0),
        Reply::Integer(0)
    );
}

#[test]
fn noscript_after_script_flush() {
    let mut redis = Redis::new();
    let sha = ScriptId::Refresh.sha1_hex();
    assert_eq!(
        eval(&mut redis, ScriptId::Refresh, &["lock"], &["t", "100"], 0),
        Reply::Integer(0)
    );
    // A previous EVAL caches the script.
    assert_eq!(
        evalsha(&mut redis, &sha, &["lock"], &["t", "100"], 0),
        Reply::Integer(0)
    );
    assert_eq!(run(&mut redis, &["SCRIPT", "FLUSH"], 0), Reply::ok());
    assert_eq!(
        evalsha(&mut redis, &sha, &["lock"], &["t", "100"], 0),
        err(NOSCRIPT)
    );
}

#[test]
fn script_exists() {
    let mut redis = Redis::new();
    let release = ScriptId::Release.sha1_hex();
    let refresh = ScriptId::Refresh.sha1_hex();
    run(
        &mut redis,
        &["SCRIPT", "LOAD", ScriptId::Release.source()],
        0,
    );
    assert_eq!(
        run(
            &mut redis,
            &[
                "SCRIPT",
                "EXISTS",
                &release,
                &release.to_ascii_uppercase(),
                &refresh,
                "abc"
            ],
            0
        ),
        Reply::Array(vec![
            Reply::Integer(1),
            Reply::Integer(1),
            Reply::Integer(0),
            Reply::Integer(0)
        ])
    );
}

#[test]
fn evalsha_validation_order() {
    let mut redis = Redis::new();
    let zeros = "0".repeat(40);
    assert_eq!(
        run(&mut redis, &["EVALSHA", "abc", "5", "x"], 0),
        err(NOSCRIPT)
    );
    assert_eq!(
        run(&mut redis, &["EVALSHA", &zeros, "5", "x"], 0),
        err("ERR Number of keys can't be greater than number of args")
    );
    assert_eq!(
        run(&mut redis, &["EVALSHA", &zeros, "1", "x"], 0),
        err(NOSCRIPT)
    );
}

#[test]
fn eval_numkeys_errors() {
    let mut redis = Redis::new();
    let source = ScriptId::Release.source();
    assert_eq!(
        run(&mut redis, &["EVAL", source, "2", "x"], 0),
        err("ERR Number of keys can't be greater than number of args")
    );
    assert_eq!(
        run(&mut redis, &["EVAL", source, "-1", "x"], 0),
        err("ERR Number of keys can't be negative")
    );
    assert_eq!(
        run(&mut redis, &["EVAL", source, "abc", "x"], 0),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(&mut redis, &["EVAL", source], 0),
        err("ERR wrong number of arguments for 'eval' command")
    );
}

#[test]
fn any_script_runs_and_is_named_by_its_sha1() {
    let mut redis = Redis::new();
    // SHA1 of "return 1", as Redis 7.0.15 reports it.
    let sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
    assert_eq!(evalsha(&mut redis, sha, &[], &[], 0), err(NOSCRIPT));
    assert_eq!(
        run(&mut redis, &["EVAL", "return 1", "0"], 0),
        Reply::Integer(1)
    );
    assert_eq!(evalsha(&mut redis, sha, &[], &[], 0), Reply::Integer(1));
    run(&mut redis, &["SCRIPT", "FLUSH"], 0);
    assert_eq!(
        run(&mut redis, &["SCRIPT", "LOAD", "return 1"], 0),
        bulk(sha)
    );
    assert_eq!(evalsha(&mut redis, sha, &[], &[], 0), Reply::Integer(1));
    // The tutorial's release with CRLF line ends is another script that does the same.
    let crlf = ScriptId::Release.source().replace('\n', "\r\n");
    run(&mut redis, &["SET", "lock", "me"], 0);
    assert_eq!(
        run(&mut redis, &["EVAL", &crlf, "1", "lock", "you"], 0),
        Reply::Integer(0)
    );
    assert_eq!(
        run(&mut redis, &["EVAL", &crlf, "1", "lock", "me"], 0),
        Reply::Integer(1)
    );
}

#[test]
fn fenced_acquire_returns_increasing_fences() {
    let mut redis = Redis::new();
    redis.seed(b"fence:{w}", b"32");
    let keys = ["lock:{w}", "fence:{w}"];
    assert_eq!(
        eval(&mut redis, ScriptId::FencedAcquire, &keys, &["a", "100"], 0),
        Reply::Integer(33)
    );
    // Held: false → nil, and the counter does not move.
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::FencedAcquire,
            &keys,
            &["b", "100"],
            50
        ),
        Reply::Nil
    );
    assert_eq!(redis.peek(b"fence:{w}", 50), Some(&b"33"[..]));
    // At the deadline the lock still exists; one ms later it can be taken again.
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::FencedAcquire,
            &keys,
            &["b", "100"],
            100
        ),
        Reply::Nil
    );
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::FencedAcquire,
            &keys,
            &["b", "100"],
            101
        ),
        Reply::Integer(34)
    );
    assert_eq!(redis.peek(b"lock:{w}", 101), Some(&b"b"[..]));
}

#[test]
fn fenced_acquire_with_px_0_fails_like_redis() {
    let mut redis = Redis::new();
    let keys = ["lock", "fence"];
    assert_eq!(
        eval(&mut redis, ScriptId::FencedAcquire, &keys, &["t", "0"], 0),
        script_error(
            "ERR invalid expire time in 'set' command",
            ScriptId::FencedAcquire,
            2
        )
    );
    assert_eq!(
        eval(&mut redis, ScriptId::FencedAcquire, &keys, &["t", "abc"], 0),
        script_error(
            "ERR value is not an integer or out of range",
            ScriptId::FencedAcquire,
            2
        )
    );
    assert_eq!(
        run(&mut redis, &["EXISTS", "lock", "fence"], 0),
        Reply::Integer(0)
    );
}

#[test]
fn failing_call_keeps_earlier_writes() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "fence", "abc"], 0);
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::FencedAcquire,
            &["lock", "fence"],
            &["t", "1000"],
            0
        ),
        script_error(
            "ERR value is not an integer or out of range",
            ScriptId::FencedAcquire,
            3
        )
    );
    // No rollback: the SET before the failing INCR stays.
    assert_eq!(redis.peek(b"lock", 0), Some(&b"t"[..]));
    // With one key, KEYS[2] is nil: the SET succeeds, the INCR call is refused.
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::FencedAcquire,
            &["lock3"],
            &["t", "1000"],
            0
        ),
        script_error(
            "ERR Lua redis lib command arguments must be strings or integers",
            ScriptId::FencedAcquire,
            3
        )
    );
    assert_eq!(redis.peek(b"lock3", 0), Some(&b"t"[..]));
}

#[test]
fn script_effects_are_recorded_one_by_one() {
    let mut redis = Redis::new();
    eval(
        &mut redis,
        ScriptId::FencedAcquire,
        &["lock", "fence"],
        &["t", "100"],
        1_000,
    );
    assert_eq!(
        redis.drain_effects(),
        vec![
            Effect::Set {
                key: b"lock".to_vec(),
                value: b"t".to_vec(),
                expire_at_ms: Some(1_100),
                db: 0,
            },
            Effect::Set {
                key: b"fence".to_vec(),
                value: b"1".to_vec(),
                expire_at_ms: None,
                db: 0,
            },
        ]
    );
}

#[test]
fn refresh_extends_only_the_holders_lease() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "lock", "tok", "PX", "100"], 0);
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::Refresh,
            &["lock"],
            &["other", "5000"],
            10
        ),
        Reply::Integer(0)
    );
    assert_eq!(run(&mut redis, &["PTTL", "lock"], 10), Reply::Integer(90));
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::Refresh,
            &["lock"],
            &["tok", "5000"],
            10
        ),
        Reply::Integer(1)
    );
    assert_eq!(
        run(&mut redis, &["PTTL", "lock"], 10),
        Reply::Integer(5_000)
    );
    assert_eq!(
        eval(
            &mut redis,
            ScriptId::Refresh,
            &["lock"],
            &["tok", "abc"],
            10
        ),
        script_error(
            "ERR value is not an integer or out of range",
            ScriptId::Refresh,
            3
        )
    );
    assert_eq!(
        eval(&mut redis, ScriptId::Refresh, &["lock"], &["tok"], 10),
        script_error(
            "ERR Lua redis lib command arguments must be strings or integers",
            ScriptId::Refresh,
            3
        )
    );
    // PEXPIRE 0 from the script deletes the key.
    assert_eq!(
        eval(&mut redis, ScriptId::Refresh, &["lock"], &["tok", "0"], 10),
        Reply::Integer(1)
    );
    assert_eq!(run(&mut redis, &["EXISTS", "lock"], 10), Reply::Integer(0));
}

#[test]
fn redislock_obtain_takes_a_free_lock_and_refuses_others() {
    let mut redis = Redis::new();
    let obtain = ScriptId::RedislockObtain;
    assert_eq!(
        eval(&mut redis, obtain, &["lk"], &["tokAmeta", "4", "1000"], 0),
        Reply::ok()
    );
    assert_eq!(run(&mut redis, &["PTTL", "lk"], 4), Reply::Integer(996));
    assert_eq!(
        eval(&mut redis, obtain, &["lk"], &["tokBmeta", "4", "1000"], 4),
        Reply::Nil
    );
    assert_eq!(redis.peek(b"lk", 4), Some(&b"tokAmeta"[..]));
}

#[test]
fn redislock_obtain_re_accepts_its_own_token() {
    let mut redis = Redis::new();
    let obtain = ScriptId::RedislockObtain;
    eval(&mut redis, obtain, &["lk"], &["tokAmeta", "4", "1000"], 0);
    // Same 4-byte token, other metadata: accepted, value replaced, TTL reset.
    assert_eq!(
        eval(&mut redis, obtain, &["lk"], &["tokAother", "4", "2000"], 7),
        Reply::ok()
    );
    assert_eq!(redis.peek(b"lk", 7), Some(&b"tokAother"[..]));
    assert_eq!(run(&mut redis, &["PTTL", "lk"], 7), Reply::Integer(2_000));
}

#[test]
fn redislock_obtain_with_ttl_0_reports_success_and_deletes_the_key() {
    let mut redis = Redis::new();
    let obtain = ScriptId::RedislockObtain;
    assert_eq!(
        eval(&mut redis, obtain, &["lk"], &["tok", "3", "0"], 0),
        Reply::ok()
    );
    assert_eq!(run(&mut redis, &["EXISTS", "lk"], 0), Reply::Integer(0));
    assert_eq!(
        redis.drain_effects(),
        vec![
            Effect::Set {
                key: b"lk".to_vec(),
                value: b"tok".to_vec(),
                expire_at_ms: None,
                db: 0,
            },
            Effect::Del {
                key: b"lk".to_vec(),
                db: 0
            },
        ]
    );
}

#[test]
fn redislock_obtain_multi_key_is_all_or_nothing() {
    let mut redis = Redis::new();
    let obtain = ScriptId::RedislockObtain;
    eval(&mut redis, obtain, &["a"], &["tokAmeta", "4", "1000"], 0);
    assert_eq!(
        eval(
            &mut redis,
            obtain,
            &["d", "a"],
            &["tokXmeta", "4", "1000"],
            0
        ),
        Reply::Nil
    );
    assert_eq!(run(&mut redis, &["EXISTS", "d"], 0), Reply::Integer(0));
}

#[test]
fn redislock_obtain_errors_match_redis() {
    let mut redis = Redis::new();
    let obtain = ScriptId::RedislockObtain;
    assert_eq!(
        eval(&mut redis, obtain, &[], &["tok", "3", "100"], 0),
        script_error(
            "ERR Wrong number of args calling Redis command from script",
            obtain,
            32
        )
    );
    eval(&mut redis, obtain, &["a"], &["tokAmeta", "4", "1000"], 0);
    assert_eq!(
        eval(&mut redis, obtain, &["a"], &["x", "abc", "100"], 0),
        script_error(
            "ERR user_script:18: attempt to perform arithmetic on local 'offset' (a nil value)",
            obtain,
            18
        )
    );
    assert_eq!(
        eval(&mut redis, obtain, &["c"], &["x", "1", "abc"], 0),
        script_error("ERR value is not an integer or out of range", obtain, 8)
    );
    // The MSETNX before the failing PEXPIRE stays.
    assert_eq!(redis.peek(b"c", 0), Some(&b"x"[..]));
}

#[test]
fn redislock_refresh() {
    let mut redis = Redis::new();
    let refresh = ScriptId::RedislockRefresh;
    run(&mut redis, &["SET", "a", "tokA", "PX", "1000"], 0);
    assert_eq!(
        eval(&mut redis, refresh, &["a"], &["tokA", "5000"], 4),
        Reply::ok()
    );
    assert_eq!(run(&mut redis, &["PTTL", "a"], 4), Reply::Integer(5_000));
    assert_eq!(
        eval(&mut redis, refresh, &["a"], &["tok", "5000"], 4),
        Reply::Nil
    );
    assert_eq!(
        eval(&mut redis, refresh, &[], &["x", "1"], 4),
        script_error(
            "ERR Wrong number of args calling Redis command from script",
            refresh,
            5
        )
    );
    assert_eq!(
        eval(&mut redis, refresh, &["a"], &["tokA", "0"], 4),
        Reply::ok()
    );
    assert_eq!(run(&mut redis, &["EXISTS", "a"], 4), Reply::Integer(0));
}

#[test]
fn redislock_release() {
    let mut redis = Redis::new();
    let release = ScriptId::RedislockRelease;
    run(&mut redis, &["SET", "a", "v"], 0);
    assert_eq!(eval(&mut redis, release, &["a"], &["w"], 0), Reply::Nil);
    assert_eq!(eval(&mut redis, release, &["a"], &["v"], 0), Reply::ok());
    assert_eq!(eval(&mut redis, release, &["a"], &["v"], 0), Reply::Nil);
    assert_eq!(
        eval(&mut redis, release, &[], &["v"], 0),
        script_error(
            "ERR Wrong number of args calling Redis command from script",
            release,
            5
        )
    );
}

#[test]
fn redislock_pttl() {
    let mut redis = Redis::new();
    let pttl = ScriptId::RedislockPttl;
    run(&mut redis, &["SET", "a", "v", "PX", "5000"], 0);
    run(&mut redis, &["SET", "b", "v", "PX", "3000"], 0);
    assert_eq!(
        eval(&mut redis, pttl, &["a"], &["v"], 5),
        Reply::Integer(4_995)
    );
    assert_eq!(
        eval(&mut redis, pttl, &["a", "b"], &["v"], 5),
        Reply::Integer(2_995)
    );
    assert_eq!(eval(&mut redis, pttl, &["a"], &["w"], 5), Reply::Nil);
    run(&mut redis, &["SET", "a", "v"], 5);
    assert_eq!(eval(&mut redis, pttl, &["a"], &["v"], 5), Reply::Integer(0));
}

#[test]
fn tutorial_sources_are_the_go_raw_strings() {
    // The tutorial writes these scripts as Go raw strings starting with a newline.
    assert!(ScriptId::Release
        .source()
        .starts_with("\nif redis.call(\"GET\""));
    assert!(ScriptId::FencedAcquire
        .source()
        .contains("\"NX\", \"PX\", ARGV[2]"));
    assert!(ScriptId::Refresh.source().ends_with("\nreturn 0"));
}
