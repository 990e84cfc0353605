//! Replication, replicas, promotion, restarts and cluster slot checks of the Redis stand-in.

use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::server::Role;
use leaselab_model::redis::{Redis, Reply, ScriptId};

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

/// Feeds everything the primary recorded to the replica.
fn replicate(primary: &mut Redis, replica: &mut Redis) {
    for effect in primary.drain_effects() {
        replica.apply_effect(&effect);
    }
}

const READONLY: &str = "READONLY You can't write against a read only replica.";
const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";

#[test]
fn set_px_is_propagated_with_an_absolute_expiry() {
    let mut primary = Redis::new();
    run(&mut primary, &["SET", "lock", "t", "PX", "100"], 1_000);
    assert_eq!(
        primary.drain_effects(),
        vec![Effect::Set {
            key: b"lock".to_vec(),
            value: b"t".to_vec(),
            expire_at_ms: Some(1_100),
            db: 0,
        }]
    );
    assert!(primary.drain_effects().is_empty());
}

#[test]
fn replica_applies_effects_and_answers_reads() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    assert_eq!(replica.role(), Role::Replica);
    run(&mut primary, &["SET", "lock", "t", "PX", "100"], 1_000);
    run(&mut primary, &["INCR", "fence"], 1_000);
    run(&mut primary, &["PEXPIRE", "fence", "500"], 1_000);
    replicate(&mut primary, &mut replica);
    assert_eq!(run(&mut replica, &["GET", "lock"], 1_050), bulk("t"));
    assert_eq!(
        run(&mut replica, &["PTTL", "lock"], 1_050),
        Reply::Integer(50)
    );
    assert_eq!(
        run(&mut replica, &["PTTL", "fence"], 1_000),
        Reply::Integer(500)
    );
    run(&mut primary, &["DEL", "lock"], 1_060);
    replicate(&mut primary, &mut replica);
    assert_eq!(
        run(&mut replica, &["EXISTS", "lock"], 1_060),
        Reply::Integer(0)
    );
}

#[test]
fn replica_refuses_writes() {
    let mut replica = Redis::replica();
    for words in [
        &["SET", "k", "v"][..],
        // Refused before the options are even parsed, as Redis does.
        &["SET", "k", "v", "FOO"],
        &["SET", "k", "v", "NX", "PX", "0"],
        &["SETNX", "k", "v"],
        &["DEL", "k"],
        &["INCR", "k"],
        &["PEXPIRE", "k", "100"],
        &["DELEX", "k", "IFEQ", "v"],
        &["FLUSHALL"],
    ] {
        assert_eq!(run(&mut replica, words, 0), err(READONLY), "{words:?}");
    }
    // Reads and script loading are fine.
    assert_eq!(run(&mut replica, &["GET", "k"], 0), Reply::Nil);
    assert_eq!(
        run(
            &mut replica,
            &["SCRIPT", "LOAD", ScriptId::Release.source()],
            0
        ),
        bulk(&ScriptId::Release.sha1_hex())
    );
}

#[test]
fn scripts_on_a_replica_fail_at_their_first_write() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    run(&mut primary, &["SET", "lk", "tok"], 0);
    replicate(&mut primary, &mut replica);
    let release = |redis: &mut Redis, token: &str| {
        let mut argv = argv(&["EVAL", ScriptId::Release.source(), "1", "lk"]);
        argv.push(token.as_bytes().to_vec());
        redis.execute(&argv, 0)
    };
    assert_eq!(release(&mut replica, "nope"), Reply::Integer(0));
    assert_eq!(
        release(&mut replica, "tok"),
        err(&format!(
            "{READONLY} script: {}, on @user_script:3.",
            ScriptId::Release.sha1_hex()
        ))
    );
    // The read-only check comes before the SET's own validation (PX 0).
    let fenced = argv(&[
        "EVAL",
        ScriptId::FencedAcquire.source(),
        "2",
        "l",
        "f",
        "t",
        "0",
    ]);
    assert_eq!(
        replica.execute(&fenced, 0),
        err(&format!(
            "{READONLY} script: {}, on @user_script:2.",
            ScriptId::FencedAcquire.sha1_hex()
        ))
    );
}

#[test]
fn replica_does_not_expire_keys_but_reports_them_missing() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    run(&mut primary, &["SET", "e", "v", "PX", "200"], 0);
    replicate(&mut primary, &mut replica);
    assert_eq!(run(&mut replica, &["PTTL", "e"], 200), Reply::Integer(0));
    assert_eq!(run(&mut replica, &["GET", "e"], 201), Reply::Nil);
    assert_eq!(run(&mut replica, &["EXISTS", "e"], 201), Reply::Integer(0));
    assert_eq!(run(&mut replica, &["PTTL", "e"], 201), Reply::Integer(-2));
    assert_eq!(replica.peek(b"e", 201), None);
    // Still stored: only the primary's DEL removes it.
    assert_eq!(replica.stored(b"e"), Some((&b"v"[..], Some(200))));
    assert!(replica.drain_effects().is_empty());
    // The primary deletes the key when it touches it, and tells the replica.
    assert_eq!(run(&mut primary, &["GET", "e"], 201), Reply::Nil);
    assert_eq!(
        primary.drain_effects(),
        vec![Effect::Del {
            key: b"e".to_vec(),
            db: 0
        }]
    );
    replica.apply_effect(&Effect::Del {
        key: b"e".to_vec(),
        db: 0,
    });
    assert_eq!(replica.stored(b"e"), None);
}

#[test]
fn lazy_expiry_on_a_primary_is_recorded_as_del() {
    let mut primary = Redis::new();
    run(&mut primary, &["SET", "lock", "a", "PX", "10"], 0);
    primary.drain_effects();
    // SET NX on an expired key: the expired key is deleted first, then written.
    assert_eq!(
        run(&mut primary, &["SET", "lock", "b", "NX", "PX", "10"], 11),
        Reply::ok()
    );
    assert_eq!(
        primary.drain_effects(),
        vec![
            Effect::Del {
                key: b"lock".to_vec(),
                db: 0
            },
            Effect::Set {
                key: b"lock".to_vec(),
                value: b"b".to_vec(),
                expire_at_ms: Some(21),
                db: 0,
            },
        ]
    );
    // DEL of an expired key: the expiry's DEL only, and a count of 0.
    assert_eq!(run(&mut primary, &["DEL", "lock"], 22), Reply::Integer(0));
    assert_eq!(
        primary.drain_effects(),
        vec![Effect::Del {
            key: b"lock".to_vec(),
            db: 0
        }]
    );
}

#[test]
fn promotion_loses_undrained_effects() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    let fenced = |redis: &mut Redis, token: &str, now_ms: u64| {
        let mut argv = argv(&[
            "EVAL",
            ScriptId::FencedAcquire.source(),
            "2",
            "lock:{w}",
            "fence:{w}",
        ]);
        argv.extend([token.as_bytes().to_vec(), b"100".to_vec()]);
        redis.execute(&argv, now_ms)
    };
    assert_eq!(fenced(&mut primary, "a", 0), Reply::Integer(1));
    replicate(&mut primary, &mut replica);
    assert_eq!(
        run(&mut primary, &["DEL", "lock:{w}"], 10),
        Reply::Integer(1)
    );
    assert_eq!(fenced(&mut primary, "b", 10), Reply::Integer(2));
    // The primary fails before the second acquisition reached the replica.
    replica.promote();
    assert_eq!(replica.role(), Role::Primary);
    assert_eq!(replica.peek(b"lock:{w}", 10), Some(&b"a"[..]));
    assert_eq!(replica.peek(b"fence:{w}", 10), Some(&b"1"[..]));
    // Fence 2 is issued a second time once the old lease ends.
    assert_eq!(fenced(&mut replica, "c", 101), Reply::Integer(2));
}

#[test]
fn promoted_replica_has_an_empty_script_cache_and_expires_keys() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    run(
        &mut replica,
        &["SCRIPT", "LOAD", ScriptId::Release.source()],
        0,
    );
    run(&mut primary, &["SET", "k", "v", "PX", "5"], 0);
    replicate(&mut primary, &mut replica);
    replica.promote();
    assert!(!replica.script_cached(ScriptId::Release));
    let evalsha = argv(&["EVALSHA", &ScriptId::Release.sha1_hex(), "1", "k", "v"]);
    assert_eq!(
        replica.execute(&evalsha, 0),
        err("NOSCRIPT No matching script. Please use EVAL.")
    );
    assert_eq!(run(&mut replica, &["GET", "k"], 6), Reply::Nil);
    assert_eq!(replica.stored(b"k"), None);
    assert_eq!(
        replica.drain_effects(),
        vec![Effect::Del {
            key: b"k".to_vec(),
            db: 0
        }]
    );
    assert_eq!(run(&mut replica, &["SET", "k", "w"], 6), Reply::ok());
}

#[test]
fn restart_without_persistence_loses_everything() {
    let mut redis = Redis::new();
    run(&mut redis, &["SET", "fence", "41"], 0);
    run(
        &mut redis,
        &["SCRIPT", "LOAD", ScriptId::Release.source()],
        0,
    );
    redis.restart_empty();
    assert_eq!(redis.role(), Role::Primary);
    assert_eq!(run(&mut redis, &["EXISTS", "fence"], 0), Reply::Integer(0));
    assert!(!redis.script_cached(ScriptId::Release));
    assert!(redis.drain_effects().is_empty());
    assert_eq!(run(&mut redis, &["INCR", "fence"], 0), Reply::Integer(1));
}

#[test]
fn flushall_and_seed_are_replicated() {
    let mut primary = Redis::new();
    let mut replica = Redis::replica();
    primary.seed(b"balance", b"100");
    replicate(&mut primary, &mut replica);
    assert_eq!(replica.peek(b"balance", 0), Some(&b"100"[..]));
    run(&mut primary, &["FLUSHALL"], 0);
    assert_eq!(primary.drain_effects(), vec![Effect::FlushAll]);
    replica.apply_effect(&Effect::FlushAll);
    assert_eq!(replica.peek(b"balance", 0), None);
}

#[test]
fn crossslot_in_cluster_mode() {
    let mut redis = Redis::new();
    redis.set_cluster_mode(true);
    assert!(redis.cluster_mode());
    assert_eq!(run(&mut redis, &["DEL", "a", "b"], 0), err(CROSSSLOT));
    assert_eq!(run(&mut redis, &["EXISTS", "a", "b"], 0), err(CROSSSLOT));
    assert_eq!(run(&mut redis, &["EXISTS", "a", "a"], 0), Reply::Integer(0));
    assert_eq!(
        run(&mut redis, &["DEL", "{w}a", "{w}b"], 0),
        Reply::Integer(0)
    );
    let fenced = |keys: [&str; 2], px: &str| {
        argv(&[
            "EVAL",
            ScriptId::FencedAcquire.source(),
            "2",
            keys[0],
            keys[1],
            "t",
            px,
        ])
    };
    // The slot check comes before the script runs (and before its PX 0 error).
    assert_eq!(
        redis.execute(&fenced(["lock:wallet:42", "fence:wallet:42"], "0"), 0),
        err(CROSSSLOT)
    );
    assert_eq!(
        redis.execute(&fenced(["lock:{wallet:42}", "fence:{wallet:42}"], "100"), 0),
        Reply::Integer(1)
    );
    // EVALSHA of an unknown script: CROSSSLOT first, as Redis does.
    let zeros = "0".repeat(40);
    assert_eq!(
        run(&mut redis, &["EVALSHA", &zeros, "2", "a", "b"], 0),
        err(CROSSSLOT)
    );
    // A malformed numkeys is read like C atoi for the slot check.
    assert_eq!(
        run(&mut redis, &["EVAL", "return 1", "2abc", "a", "b"], 0),
        err(CROSSSLOT)
    );
    // Without cluster mode, no slot check.
    redis.set_cluster_mode(false);
    assert_eq!(run(&mut redis, &["DEL", "a", "b"], 0), Reply::Integer(0));
}

#[test]
fn crossslot_comes_before_readonly() {
    let mut replica = Redis::replica();
    replica.set_cluster_mode(true);
    assert_eq!(run(&mut replica, &["DEL", "a", "b"], 0), err(CROSSSLOT));
    assert_eq!(run(&mut replica, &["DEL", "a"], 0), err(READONLY));
}
