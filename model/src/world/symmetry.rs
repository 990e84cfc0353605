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
//!
//! A caller's local fingerprint, with the callers its slot mentions besides itself, is cached
//! in the slot and forgotten whenever the slot changes; a caller's part of the final hash is
//! that fingerprint plus the ranks of the callers it mentions, which determines the renamed
//! slot exactly.

use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use smallvec::SmallVec;

use crate::fingerprint::FingerprintHasher;
use crate::postgres::{Postgres, SessionId};

use super::{Slot, SlotState, World};

/// What the caller itself is written as in its local fingerprint.
const SELF: u64 = u64::MAX;
/// What another caller is written as in a local fingerprint.
const OTHER: u64 = u64::MAX - 1;
/// A session no caller owns.
const UNKNOWN: u64 = u64::MAX - 2;
/// Tokens are 32 hex digits.
const TOKEN_LEN: usize = 32;
/// Callers and sessions sorted on the stack when there are at most this many (a hash of a
/// checker state must not allocate for the usual two or three callers).
const INLINE: usize = 8;

/// A slot's local fingerprint and the callers it mentions besides itself, in order.
#[derive(Debug)]
struct Canon {
    local: u64,
    others: Vec<usize>,
}

/// The cache of a slot's [`Canon`]. It takes no part in comparisons or hashes, and a copy
/// starts empty: a slot is copied exactly when it is about to change.
#[derive(Default)]
pub(super) struct SlotCanon(OnceLock<Canon>);

impl Clone for SlotCanon {
    fn clone(&self) -> SlotCanon {
        SlotCanon::default()
    }
}

impl std::fmt::Debug for SlotCanon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("..")
    }
}

impl PartialEq for SlotCanon {
    fn eq(&self, _: &SlotCanon) -> bool {
        true
    }
}

impl Eq for SlotCanon {}

impl PartialOrd for SlotCanon {
    fn partial_cmp(&self, other: &SlotCanon) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SlotCanon {
    fn cmp(&self, _: &SlotCanon) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl Hash for SlotCanon {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// Forwards everything to `inner`, writing a known token's bytes as `name(owner)`.
struct Renamer<'a, H: Hasher> {
    inner: &'a mut H,
    tokens: &'a [Vec<u8>],
    /// Each caller's check-and-set value (`redlock-cas`'s number derived from its token,
    /// never small, so never a balance or a fence); empty for the other safeguards.
    cas_values: &'a [i64],
    name: &'a mut dyn FnMut(usize) -> u64,
}

impl<H: Hasher> Hasher for Renamer<'_, H> {
    fn write(&mut self, bytes: &[u8]) {
        if bytes.len() == TOKEN_LEN {
            if let Some(owner) = self.tokens.iter().position(|t| t.as_slice() == bytes) {
                let name = (self.name)(owner);
                self.inner.write_u64(0x746f_6b65_6e00_0000 ^ name);
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
        if let Some(owner) = self.cas_values.iter().position(|&value| value == n) {
            let name = (self.name)(owner);
            self.inner.write_u64(0x6361_7300_0000_0000 ^ name);
            return;
        }
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

impl World {
    /// The caller owning `session`, if any.
    fn owner_of(&self, session: SessionId) -> Option<usize> {
        self.slots.iter().position(|slot| slot.session == session)
    }

    /// Slot `index`'s local fingerprint: itself written as [`SELF`], every other caller it
    /// mentions (by token or session) as [`OTHER`] and listed.
    fn canon(&self, index: usize) -> &Canon {
        let slot: &Slot = &self.slots[index];
        slot.canon.0.get_or_init(|| {
            let mut others = Vec::new();
            let mut name = |owner: usize| {
                if owner == index {
                    SELF
                } else {
                    others.push(owner);
                    OTHER
                }
            };
            let mut local = FingerprintHasher::default();
            {
                let mut renamer = Renamer {
                    inner: &mut local,
                    tokens: &self.setup.tokens,
                    cas_values: &self.setup.cas_values,
                    name: &mut name,
                };
                slot.client.hash(&mut renamer);
                match &slot.state {
                    SlotState::Blocked { request, by } => {
                        renamer.write_u8(0xB1);
                        request.hash(&mut renamer);
                        let by = match self.owner_of(*by) {
                            Some(owner) => (renamer.name)(owner),
                            None => UNKNOWN ^ u64::from(by.0),
                        };
                        renamer.write_u64(by);
                    }
                    other => {
                        renamer.write_u8(0xA0);
                        other.hash(&mut renamer);
                    }
                }
                slot.redis_session.hash(&mut renamer);
                slot.paused_ms.hash(&mut renamer);
                slot.slack_ms.hash(&mut renamer);
                slot.outcome.hash(&mut renamer);
                slot.write_landed.hash(&mut renamer);
            }
            Canon {
                local: local.finish(),
                others,
            }
        })
    }

    /// Hashes the world up to a renaming of callers (see the module documentation).
    pub(super) fn hash_canonical<H: Hasher>(&self, state: &mut H) {
        let n = self.slots.len();
        // Rank callers by their local fingerprints (ties by number).
        let mut order: SmallVec<[(u64, usize); INLINE]> = (0..n)
            .map(|index| (self.canon(index).local, index))
            .collect();
        order.sort_unstable();
        let mut names: SmallVec<[u64; INLINE]> = smallvec::smallvec![0u64; n];
        for (rank, (_, index)) in order.iter().enumerate() {
            names[*index] = rank as u64;
        }
        let session_name = |session: SessionId| match self.owner_of(session) {
            Some(owner) => names[owner],
            None => UNKNOWN ^ u64::from(session.0),
        };
        self.now_ms.hash(state);
        state.write_usize(n);
        for (local, index) in &order {
            state.write_u64(*local);
            let others = &self.canon(*index).others;
            state.write_usize(others.len());
            for other in others {
                state.write_u64(names[*other]);
            }
        }
        {
            let mut name = |owner: usize| names[owner];
            let mut renamer = Renamer {
                inner: state,
                tokens: &self.setup.tokens,
                cas_values: &self.setup.cas_values,
                name: &mut name,
            };
            self.redis.hash(&mut renamer);
            self.replica.hash(&mut renamer);
            self.hash_aof(&mut renamer);
            // Redlock's nodes: each keyspace holds the tokens of the callers whose keys it
            // kept.
            if !self.nodes.is_empty() {
                self.nodes.hash(&mut renamer);
                self.extra.node_faults_left.hash(&mut renamer);
            }
            // PostgreSQL through the renamer too: `redlock-cas` writes its check-and-set
            // value there.
            hash_postgres(
                &self.postgres,
                self.setup.wallet_id,
                &mut renamer,
                &session_name,
            );
        }
        self.failovers_left.hash(state);
        self.restarts_left.hash(state);
        self.evictions_left.hash(state);
        self.faults_left.hash(state);
        self.hash_redis_clock(state);
        self.hash_partitions(state, &|caller| names[caller]);
        // Whether a trespass happened (who did it is a naming the symmetry forgets).
        if self.trespass.is_some() {
            state.write_u8(1);
        }
    }
}

/// A session as the state hash sees it: its name, its transaction status byte, and the name
/// of the session it waits for.
type SessionView = (u64, Option<u8>, Option<u64>);

/// Hashes the PostgreSQL state the world can observe, sessions named by `session_name`.
fn hash_postgres<H: Hasher>(
    postgres: &Postgres,
    wallet_id: i64,
    state: &mut H,
    session_name: &dyn Fn(SessionId) -> u64,
) {
    let row = postgres.wallet_view(wallet_id);
    row.committed.hash(state);
    match row.holder {
        Some((holder, seen)) => {
            state.write_u8(1);
            state.write_u64(session_name(holder));
            seen.hash(state);
        }
        None => state.write_u8(0),
    }
    let mut sessions: SmallVec<[SessionView; INLINE]> = postgres
        .session_states()
        .map(|(session, status, waiting_on)| {
            (
                session_name(session),
                Some(status.ready_for_query_byte()),
                waiting_on.map(session_name),
            )
        })
        .collect();
    sessions.sort_unstable();
    // As a slice, which hashes as the vector it used to be.
    sessions.as_slice().hash(state);
    for &waiter in row.queue {
        state.write_u64(session_name(waiter));
    }
}
