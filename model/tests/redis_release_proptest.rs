//! Property: the compare-and-delete release script never deletes another holder's lock, over
//! random interleavings of acquisitions, releases and time passing, by two or three holders.

use leaselab_model::redis::{Redis, Reply, ScriptId};
use proptest::prelude::*;

const LOCK: &[u8] = b"lock:{wallet:42}";

#[derive(Clone, Debug)]
enum Op {
    /// `SET lock token NX PX ttl_ms` by a holder.
    Acquire { holder: usize, ttl_ms: u64 },
    /// The release script by a holder, sent as EVALSHA (falling back to EVAL on NOSCRIPT, as
    /// clients do) or as EVAL.
    Release { holder: usize, by_hash: bool },
    /// The server clock moves on.
    Advance { elapsed_ms: u64 },
    /// The script cache is flushed (as a restart or failover would do to it).
    FlushScripts,
}

fn op(holders: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..holders, 1u64..50).prop_map(|(holder, ttl_ms)| Op::Acquire { holder, ttl_ms }),
        3 => (0..holders, any::<bool>()).prop_map(|(holder, by_hash)| Op::Release { holder, by_hash }),
        3 => (0u64..60).prop_map(|elapsed_ms| Op::Advance { elapsed_ms }),
        1 => Just(Op::FlushScripts),
    ]
}

fn scenario() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (2usize..=3).prop_flat_map(|holders| (Just(holders), prop::collection::vec(op(holders), 1..80)))
}

fn token(holder: usize) -> Vec<u8> {
    format!("token-{holder}").into_bytes()
}

fn release(redis: &mut Redis, holder: usize, by_hash: bool, now_ms: u64) -> Reply {
    let tail = [b"1".to_vec(), LOCK.to_vec(), token(holder)];
    if by_hash {
        let mut argv = vec![
            b"EVALSHA".to_vec(),
            ScriptId::Release.sha1_hex().into_bytes(),
        ];
        argv.extend(tail.iter().cloned());
        let reply = redis.execute(&argv, now_ms);
        if !matches!(&reply, Reply::Error(text) if text.starts_with("NOSCRIPT")) {
            return reply;
        }
    }
    let mut argv = vec![
        b"EVAL".to_vec(),
        ScriptId::Release.source().as_bytes().to_vec(),
    ];
    argv.extend(tail);
    redis.execute(&argv, now_ms)
}

/// The independent expectation: who holds the lock, and until when.
#[derive(Clone, Copy, Debug, Default)]
struct Lease {
    holder: Option<(usize, u64)>,
}

impl Lease {
    fn current(&self, now_ms: u64) -> Option<usize> {
        self.holder
            .filter(|&(_, expire_at_ms)| now_ms <= expire_at_ms)
            .map(|(holder, _)| holder)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn release_never_deletes_another_holders_lock((_holders, ops) in scenario()) {
        let mut redis = Redis::new();
        let mut lease = Lease::default();
        let mut now_ms: u64 = 1_000;
        for op in ops {
            match op {
                Op::Acquire { holder, ttl_ms } => {
                    let mut argv = vec![b"SET".to_vec(), LOCK.to_vec(), token(holder)];
                    argv.extend([b"NX".to_vec(), b"PX".to_vec(), ttl_ms.to_string().into_bytes()]);
                    let reply = redis.execute(&argv, now_ms);
                    if lease.current(now_ms).is_none() {
                        prop_assert_eq!(reply, Reply::ok());
                        lease.holder = Some((holder, now_ms + ttl_ms));
                    } else {
                        prop_assert_eq!(reply, Reply::Nil);
                    }
                }
                Op::Release { holder, by_hash } => {
                    let before = redis.peek(LOCK, now_ms).map(<[u8]>::to_vec);
                    let reply = release(&mut redis, holder, by_hash, now_ms);
                    let after = redis.peek(LOCK, now_ms).map(<[u8]>::to_vec);
                    if before.as_deref() == Some(token(holder).as_slice()) {
                        prop_assert_eq!(lease.current(now_ms), Some(holder));
                        prop_assert_eq!(reply, Reply::Integer(1));
                        prop_assert_eq!(after, None);
                        lease.holder = None;
                    } else {
                        // Someone else's lock, or none: untouched.
                        prop_assert_eq!(reply, Reply::Integer(0));
                        prop_assert_eq!(&after, &before);
                        prop_assert_ne!(lease.current(now_ms), Some(holder));
                    }
                }
                Op::Advance { elapsed_ms } => now_ms += elapsed_ms,
                Op::FlushScripts => {
                    prop_assert_eq!(
                        redis.execute(&[b"SCRIPT".to_vec(), b"FLUSH".to_vec()], now_ms),
                        Reply::ok()
                    );
                }
            }
            // The stand-in and the expectation agree on the holder at every step.
            let holder_now = redis.peek(LOCK, now_ms).map(<[u8]>::to_vec);
            prop_assert_eq!(holder_now, lease.current(now_ms).map(token));
        }
    }
}
