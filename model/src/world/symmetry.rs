//! Symmetry reduction by hashing: worlds that differ only by which caller is which hash equal.
//!
//! Callers run identical machines and differ only by their token and their PostgreSQL
//! session. Swapping two callers therefore means swapping their slots *and* renaming their
//! tokens and sessions wherever they appear: in the machines, in Redis (the lock's value, the
//! replication backlog) and in PostgreSQL (sessions, the row lock's holder). The stand-ins
//! offer no way to rename inside them, so instead of building a representative world this
//! hashes a canonical *description* of the world:
//!
//! 1. each caller gets a local fingerprint, its own token and session written as "self" and
//!    any other caller's as "other";
//! 2. callers are ranked by that fingerprint (ties by number);
//! 3. the world is hashed with callers in rank order and every token and session replaced
//!    by its owner's rank: Redis through a hasher that rewrites token bytes as they go by,
//!    PostgreSQL through its public view (the wallet row, its lock holder and uncommitted
//!    version, the sessions with their status and what they wait on), sorted by rank.
//!
//! Equal hashes mean the worlds are the same up to a renaming of callers, hence behave the
//! same (properties do not mention caller numbers). Ties in step 2 only cost reduction, never
//! soundness: the hash is always of *some* consistent renaming.

use std::hash::{Hash, Hasher};

use crate::postgres::{Postgres, SessionId};

use super::{Slot, SlotState, World};

/// What a token or session is written as: the owner's rank, or these markers.
const SELF: u64 = u64::MAX;
const OTHER: u64 = u64::MAX - 1;
const UNKNOWN: u64 = u64::MAX - 2;
/// Tokens are 32 hex digits.
const TOKEN_LEN: usize = 32;

/// Forwards everything to `inner`, writing a known token's bytes as its owner's name.
struct Renamer<'a, H: Hasher> {
    inner: &'a mut H,
    tokens: &'a [Vec<u8>],
    names: &'a [u64],
}

impl<H: Hasher> Hasher for Renamer<'_, H> {
    fn write(&mut self, bytes: &[u8]) {
        if bytes.len() == TOKEN_LEN {
            if let Some(owner) = self.tokens.iter().position(|t| t.as_slice() == bytes) {
                self.inner
                    .write_u64(0x746f_6b65_6e00_0000 ^ self.names[owner]);
                return;
            }
        }
        self.inner.write(bytes);
    }
    fn write_u8(&mut self, n: u8) {
        self.inner.write_u8(n);
    }
    fn write_u16(&mut self, n: u16) {
        self.inner.write_u16(n);
    }
    fn write_u32(&mut self, n: u32) {
        self.inner.write_u32(n);
    }
    fn write_u64(&mut self, n: u64) {
        self.inner.write_u64(n);
    }
    fn write_u128(&mut self, n: u128) {
        self.inner.write_u128(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.inner.write_usize(n);
    }
    fn write_i8(&mut self, n: i8) {
        self.inner.write_i8(n);
    }
    fn write_i16(&mut self, n: i16) {
        self.inner.write_i16(n);
    }
    fn write_i32(&mut self, n: i32) {
        self.inner.write_i32(n);
    }
    fn write_i64(&mut self, n: i64) {
        self.inner.write_i64(n);
    }
    fn write_i128(&mut self, n: i128) {
        self.inner.write_i128(n);
    }
    fn write_isize(&mut self, n: isize) {
        self.inner.write_isize(n);
    }
    fn finish(&self) -> u64 {
        self.inner.finish()
    }
}

/// Hashes `slot` with tokens named by `names` and sessions by `session_name`.
fn hash_slot<H: Hasher>(
    slot: &Slot,
    state: &mut H,
    tokens: &[Vec<u8>],
    names: &[u64],
    session_name: &dyn Fn(SessionId) -> u64,
) {
    let mut renamer = Renamer {
        inner: state,
        tokens,
        names,
    };
    slot.machine.hash(&mut renamer);
    match &slot.state {
        SlotState::Blocked { request, by } => {
            renamer.write_u8(0xB1);
            request.hash(&mut renamer);
            renamer.write_u64(session_name(*by));
        }
        other => {
            renamer.write_u8(0xA0);
            other.hash(&mut renamer);
        }
    }
    renamer.write_u64(session_name(slot.session));
    slot.paused_ms.hash(&mut renamer);
    slot.slack_ms.hash(&mut renamer);
    slot.outcome.hash(&mut renamer);
}

/// Hashes the PostgreSQL state the world can observe, sessions named by `session_name`.
fn hash_postgres<H: Hasher>(
    postgres: &Postgres,
    wallet_id: i64,
    state: &mut H,
    session_name: &dyn Fn(SessionId) -> u64,
) {
    postgres.wallet(wallet_id).hash(state);
    match postgres.lock_holder(wallet_id) {
        Some(holder) => {
            state.write_u8(1);
            state.write_u64(session_name(holder));
            postgres.visible_wallet(holder, wallet_id).hash(state);
        }
        None => state.write_u8(0),
    }
    let mut sessions: Vec<(u64, Option<u8>, Option<u64>)> = postgres
        .sessions()
        .into_iter()
        .map(|session| {
            (
                session_name(session),
                postgres.status(session).map(|s| s.ready_for_query_byte()),
                postgres.waiting_on(session).map(session_name),
            )
        })
        .collect();
    sessions.sort_unstable();
    sessions.hash(state);
}

impl World {
    /// The tokens of the callers, as Redis holds them.
    fn token_texts(&self) -> &[Vec<u8>] {
        &self.setup.tokens
    }

    /// Hashes the world up to a renaming of callers (see the module documentation).
    pub(super) fn hash_canonical<H: Hasher>(&self, state: &mut H) {
        let n = self.slots.len();
        let tokens = self.token_texts();
        let owner_of = |session: SessionId| self.slots.iter().position(|s| s.session == session);
        // 1. Local fingerprints.
        let mut order: Vec<(u64, usize)> = (0..n)
            .map(|index| {
                let mut names = vec![OTHER; n];
                names[index] = SELF;
                let mut local = crate::checker::fingerprint::FingerprintHasher::default();
                let own = self.slots[index].session;
                hash_slot(&self.slots[index], &mut local, tokens, &names, &|s| {
                    if s == own {
                        SELF
                    } else if owner_of(s).is_some() {
                        OTHER
                    } else {
                        UNKNOWN
                    }
                });
                (local.finish(), index)
            })
            .collect();
        // 2. Ranks.
        order.sort_unstable();
        let mut names = vec![0u64; n];
        for (rank, (_, index)) in order.iter().enumerate() {
            names[*index] = rank as u64;
        }
        let session_name = |session: SessionId| match owner_of(session) {
            Some(owner) => names[owner],
            None => UNKNOWN ^ u64::from(session.0),
        };
        // 3. The world in rank order, renamed.
        self.now_ms.hash(state);
        for (_, index) in &order {
            hash_slot(&self.slots[*index], state, tokens, &names, &session_name);
        }
        {
            let mut renamer = Renamer {
                inner: state,
                tokens,
                names: &names,
            };
            self.redis.hash(&mut renamer);
            self.replica.hash(&mut renamer);
        }
        hash_postgres(&self.postgres, self.setup.wallet_id, state, &session_name);
        self.failovers_left.hash(state);
    }
}
