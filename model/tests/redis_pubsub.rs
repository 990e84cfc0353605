//! Publish/subscribe in the model: what `PUBLISH` counts and leaves for each served connection
//! ([`Redis::take_deliveries`]), `PUBSUB NUMPAT` (server-wide, so not compared against a shared
//! Redis), a closed connection forgotten, a restart dropping every subscriber, and a session
//! without a client id (the model checker's) that subscribes without being counted. The bytes a
//! connection receives are compared with a real Redis in `tests/fidelity_redis.rs`
//! (`publish_subscribe_matches_redis`).

use std::hash::{Hash, Hasher};

use leaselab_model::redis::{Redis, Reply, Session};

fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn run(redis: &mut Redis, session: &mut Session, words: &[&str]) -> Reply {
    redis.execute_in(session, &argv(words), 0)
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

fn message(channel: &str, text: &str) -> Reply {
    Reply::Array(vec![bulk("message"), bulk(channel), bulk(text)])
}

fn pmessage(pattern: &str, channel: &str, text: &str) -> Reply {
    Reply::Array(vec![
        bulk("pmessage"),
        bulk(pattern),
        bulk(channel),
        bulk(text),
    ])
}

fn hash_of<T: Hash>(value: &T) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

#[test]
fn publish_counts_and_leaves_one_message_per_receiver() {
    let mut redis = Redis::new();
    let (mut one, mut two, mut three) = (
        Session::for_client(1),
        Session::for_client(2),
        Session::for_client(3),
    );
    run(&mut redis, &mut one, &["SUBSCRIBE", "lock:a"]);
    run(&mut redis, &mut one, &["PSUBSCRIBE", "lock:*", "*:a"]);
    run(&mut redis, &mut two, &["SUBSCRIBE", "lock:a", "lock:b"]);
    assert!(one.subscribed() && two.subscribed() && !three.subscribed());
    assert_eq!(
        run(&mut redis, &mut three, &["PUBLISH", "lock:a", "x"]),
        Reply::Integer(4)
    );
    assert_eq!(
        redis.take_deliveries(),
        vec![
            (1, message("lock:a", "x")),
            (2, message("lock:a", "x")),
            (1, pmessage("*:a", "lock:a", "x")),
            (1, pmessage("lock:*", "lock:a", "x")),
        ]
    );
    assert_eq!(redis.take_deliveries(), Vec::new(), "taken once");
    // From a script, and counted by `PUBSUB`.
    let script = "return redis.call('publish', KEYS[1], ARGV[1])";
    assert_eq!(
        run(
            &mut redis,
            &mut three,
            &["EVAL", script, "1", "lock:b", "y"]
        ),
        Reply::Integer(2)
    );
    assert_eq!(redis.take_deliveries().len(), 2);
    assert_eq!(
        run(&mut redis, &mut three, &["PUBSUB", "NUMPAT"]),
        Reply::Integer(2)
    );
    run(&mut redis, &mut two, &["PSUBSCRIBE", "lock:*"]);
    assert_eq!(
        run(&mut redis, &mut three, &["PUBSUB", "NUMPAT"]),
        Reply::Integer(2),
        "distinct patterns"
    );
    // A closed connection is forgotten, with its messages not yet taken.
    run(&mut redis, &mut three, &["PUBLISH", "lock:b", "z"]);
    redis.end_client(2);
    assert_eq!(
        redis.take_deliveries(),
        vec![(1, pmessage("lock:*", "lock:b", "z"))]
    );
    assert_eq!(
        run(
            &mut redis,
            &mut three,
            &["PUBSUB", "NUMSUB", "lock:a", "lock:b"]
        ),
        Reply::Array(vec![
            bulk("lock:a"),
            Reply::Integer(1),
            bulk("lock:b"),
            Reply::Integer(0)
        ])
    );
    // A restart drops every connection.
    redis.restart_keeping_keys();
    assert_eq!(
        run(&mut redis, &mut three, &["PUBLISH", "lock:a", "w"]),
        Reply::Integer(0)
    );
    assert_eq!(redis.take_deliveries(), Vec::new());
}

#[test]
fn a_session_without_a_client_answers_as_subscribed_but_is_not_counted() {
    let mut redis = Redis::new();
    let before = hash_of(&redis);
    let mut checker = Session::new();
    assert_eq!(hash_of(&checker), hash_of(&Session::default()));
    assert_eq!(
        run(&mut redis, &mut checker, &["SUBSCRIBE", "c"]),
        Reply::Array(vec![Reply::Array(vec![
            bulk("subscribe"),
            bulk("c"),
            Reply::Integer(1)
        ])])
    );
    assert!(checker.subscribed());
    assert_eq!(
        run(&mut redis, &mut checker, &["GET", "k"]),
        Reply::error(
            "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / \
             RESET are allowed in this context"
        )
    );
    let mut other = Session::new();
    assert_eq!(
        run(&mut redis, &mut other, &["PUBLISH", "c", "m"]),
        Reply::Integer(0)
    );
    assert_eq!(redis.take_deliveries(), Vec::new());
    assert_eq!(hash_of(&redis), before, "the server holds no subscriber");
    // `RESET` leaves the channel.
    assert_eq!(
        run(&mut redis, &mut checker, &["RESET"]),
        Reply::Status("RESET".into())
    );
    assert!(!checker.subscribed());
    assert_eq!(run(&mut redis, &mut checker, &["GET", "k"]), Reply::Nil);
}
