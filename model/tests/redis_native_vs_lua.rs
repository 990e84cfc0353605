//! The known scripts run natively (a fast path for the model checker); this proves, on
//! generated keyspaces and arguments, that the native run and the Lua run of the same source
//! give the same reply, the same keyspace (values and expiry times) and the same effects for
//! replicas.

use leaselab_model::redis::replication::Effect;
use leaselab_model::redis::{Redis, Reply, ScriptId};
use proptest::prelude::*;

const KEYS: [&str; 4] = ["k1", "k2", "k3", "fence"];
const VALUES: [&str; 8] = [
    "tok",
    "tokX",
    "to",
    "other",
    "5",
    "0",
    "-3",
    "9223372036854775807",
];
const ARGS: [&str; 12] = [
    "tok", "tokX", "to", "other", "3", "2", "0", "-5", "100", "abc", "1e2", "0x10",
];

#[derive(Clone, Debug)]
struct Case {
    script: usize,
    /// (key, value, ttl_ms) stored before the script.
    stored: Vec<(usize, usize, Option<u64>)>,
    keys: Vec<usize>,
    args: Vec<usize>,
    /// Time passed after seeding, before the script runs.
    later_ms: u64,
    replica: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..ScriptId::ALL.len(),
        prop::collection::vec(
            (0..KEYS.len(), 0..VALUES.len(), prop::option::of(0u64..50)),
            0..5,
        ),
        prop::collection::vec(0..KEYS.len(), 0..4),
        prop::collection::vec(0..ARGS.len(), 0..4),
        0u64..60,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(script, stored, keys, args, later_ms, replica)| Case {
            script,
            stored,
            keys,
            args,
            later_ms,
            replica,
        })
}

fn build(case: &Case) -> Redis {
    let mut redis = if case.replica {
        Redis::replica()
    } else {
        Redis::new()
    };
    for &(key, value, ttl) in &case.stored {
        redis.apply_effect(&Effect::Set {
            key: KEYS[key].as_bytes().to_vec(),
            value: VALUES[value].as_bytes().to_vec(),
            expire_at_ms: ttl.map(|t| 1_000 + t),
            db: 0,
        });
    }
    redis
}

/// A key's stored value and absolute expiry, if stored.
type Stored = Option<(Vec<u8>, Option<u64>)>;

fn snapshot(redis: &Redis) -> Vec<(String, Stored)> {
    KEYS.iter()
        .map(|k| {
            let stored = redis.stored(k.as_bytes()).map(|(v, at)| (v.to_vec(), at));
            (k.to_string(), stored)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn native_scripts_equal_their_lua_run(case in case()) {
        let script = ScriptId::ALL[case.script];
        let keys: Vec<Vec<u8>> = case.keys.iter().map(|&k| KEYS[k].as_bytes().to_vec()).collect();
        let args: Vec<Vec<u8>> = case.args.iter().map(|&a| ARGS[a].as_bytes().to_vec()).collect();
        let now_ms = 1_000 + case.later_ms;

        let mut native = build(&case);
        let mut argv = vec![
            b"EVAL".to_vec(),
            script.source().as_bytes().to_vec(),
            keys.len().to_string().into_bytes(),
        ];
        argv.extend(keys.iter().cloned());
        argv.extend(args.iter().cloned());
        let native_reply = native.execute(&argv, now_ms);

        let mut lua = build(&case);
        let lua_reply = lua.eval_in_lua(script.source().as_bytes(), &keys, &args, now_ms);

        prop_assert_eq!(&native_reply, &lua_reply, "{}", script.name());
        prop_assert_eq!(snapshot(&native), snapshot(&lua), "{}", script.name());
        prop_assert_eq!(native.drain_effects(), lua.drain_effects(), "{}", script.name());
    }
}

#[test]
fn the_comparison_can_see_a_difference() {
    // A script that differs from the release script only in its reply must be told apart.
    let mut a = Redis::new();
    let mut b = Redis::new();
    let keys = vec![b"k1".to_vec()];
    let args = vec![b"tok".to_vec()];
    let release = a.eval_in_lua(ScriptId::Release.source().as_bytes(), &keys, &args, 0);
    let other = b.eval_in_lua(b"return 1", &keys, &args, 0);
    assert_ne!(release, other);
    assert_eq!(release, Reply::Integer(0));
}
