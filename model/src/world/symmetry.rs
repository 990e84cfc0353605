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
//! slot exactly. The single Redis and PostgreSQL each enter the final hash as their own
//! fingerprint under the renaming, which they remember per renaming ([`Memo`]): most steps
//! leave a stand-in as it was, and the worlds of a search share few distinct ones.

use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, OnceLock};

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

/// The cache of a slot's [`Canon`] (with symmetry) or its own fingerprint (without). It
/// takes no part in comparisons or hashes, and a copy starts empty: a slot is copied exactly
/// when it is about to change.
#[derive(Default)]
pub(super) struct SlotCanon(OnceLock<Canon>, OnceLock<u64>);

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

/// How many renamings a [`Memo`] remembers fingerprints for (the renamings of three callers
/// are six; a stand-in seen under more is hashed anew each time).
const MEMO_RENAMINGS: usize = 8;

/// A stand-in as the worlds of one search share it (behind an `Arc`), remembering the
/// fingerprints symmetry reduction gave it, one per renaming of callers.
///
/// Every mutable access forgets them (`DerefMut`), and so does a copy, so a remembered
/// fingerprint is always of the value as it is. The renaming's other inputs (the callers'
/// tokens and sessions, the wallet) are the same for every world of a search, which is all a
/// stand-in is ever shared among. Comparisons and hashes see the value only.
pub struct Memo<T> {
    value: T,
    /// (renaming, fingerprint) pairs; tried, never waited for.
    renamed: Mutex<SmallVec<[(u64, u64); 2]>>,
}

impl<T> Memo<T> {
    /// `value`, with nothing remembered.
    pub fn new(value: T) -> Memo<T> {
        Memo {
            value,
            renamed: Mutex::new(SmallVec::new()),
        }
    }

    /// The fingerprint under `renaming` (`None`: a renaming too large to remember), from
    /// memory or from `compute`. A lock held by another thread is not waited for: the
    /// fingerprint is computed instead.
    fn fingerprint(&self, renaming: Option<u64>, compute: impl FnOnce(&T) -> u64) -> u64 {
        let Some(renaming) = renaming else {
            return compute(&self.value);
        };
        let known = self.renamed.try_lock().ok().and_then(|renamed| {
            renamed
                .iter()
                .find(|(key, _)| *key == renaming)
                .map(|&(_, fp)| fp)
        });
        if let Some(fp) = known {
            debug_assert_eq!(
                fp,
                compute(&self.value),
                "a remembered fingerprint is current"
            );
            return fp;
        }
        let fp = compute(&self.value);
        if let Ok(mut renamed) = self.renamed.try_lock() {
            if renamed.len() < MEMO_RENAMINGS {
                renamed.push((renaming, fp));
            }
        }
        fp
    }
}

/// The [`Memo`] key of no renaming at all (never a renaming's key: those give distinct
/// callers distinct names, and this one would name 16 callers alike).
const PLAIN: u64 = u64::MAX;

impl<T: Hash> Memo<T> {
    /// The value's own fingerprint (no renaming), remembered.
    pub fn plain_fingerprint(&self) -> u64 {
        self.fingerprint(Some(PLAIN), |value| crate::fingerprint::fingerprint(value))
    }
}

impl<T> Deref for Memo<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Memo<T> {
    /// The value to change: what was remembered of it is forgotten.
    fn deref_mut(&mut self) -> &mut T {
        match self.renamed.get_mut() {
            Ok(renamed) => renamed.clear(),
            Err(poisoned) => poisoned.into_inner().clear(),
        }
        &mut self.value
    }
}

impl<T: Clone> Clone for Memo<T> {
    fn clone(&self) -> Memo<T> {
        Memo::new(self.value.clone())
    }
}

impl<T: PartialEq> PartialEq for Memo<T> {
    fn eq(&self, other: &Memo<T>) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Memo<T> {}

impl<T: Hash> Hash for Memo<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

/// A renaming of callers as a [`Memo`] key: each caller's new name (its rank) in four bits,
/// or `None` past 16 callers.
fn renaming_key(names: &[u64]) -> Option<u64> {
    if names.len() > 16 {
        return None;
    }
    Some(
        names
            .iter()
            .enumerate()
            .fold(0, |key, (caller, &name)| key | (name << (4 * caller))),
    )
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

    /// A hasher over `inner` that writes each caller's token and check-and-set value as
    /// `name(owner)`.
    fn renamer<'a, H: Hasher>(
        &'a self,
        inner: &'a mut H,
        name: &'a mut dyn FnMut(usize) -> u64,
    ) -> Renamer<'a, H> {
        Renamer {
            inner,
            tokens: &self.setup.tokens,
            cas_values: &self.setup.cas_values,
            name,
        }
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
                let mut renamer = self.renamer(&mut local, &mut name);
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

    /// A fingerprint of slot `index` that equal slots of this search share, remembered in the
    /// slot: its local fingerprint under symmetry, else the slot's own.
    pub fn slot_fingerprint(&self, index: usize) -> u64 {
        if self.setup.symmetric {
            self.canon(index).local
        } else {
            let slot: &Slot = &self.slots[index];
            *slot
                .canon
                .1
                .get_or_init(|| crate::fingerprint::fingerprint(slot))
        }
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
        let renaming = renaming_key(&names);
        let mut name = |owner: usize| names[owner];
        let redis = self.redis.fingerprint(renaming, |redis| {
            let mut hasher = FingerprintHasher::default();
            redis.hash(&mut self.renamer(&mut hasher, &mut name));
            hasher.finish()
        });
        state.write_u64(redis);
        {
            let mut renamer = self.renamer(state, &mut name);
            self.replica.hash(&mut renamer);
            self.hash_aof(&mut renamer);
            // Redlock's nodes: each keyspace holds the tokens of the callers whose keys it
            // kept.
            if !self.nodes.is_empty() {
                self.nodes.hash(&mut renamer);
                self.extra.node_faults_left.hash(&mut renamer);
            }
        }
        // PostgreSQL through the renamer too: `redlock-cas` writes its check-and-set value
        // there.
        let postgres = self.postgres.fingerprint(renaming, |postgres| {
            let mut hasher = FingerprintHasher::default();
            hash_postgres(
                postgres,
                self.setup.wallet_id,
                &mut self.renamer(&mut hasher, &mut name),
                &session_name,
            );
            hasher.finish()
        });
        state.write_u64(postgres);
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
    // Advisory locks (none in the built-in safeguards: nothing is written then, so the
    // fingerprints of their states stay what they were).
    let mut advisory: Vec<_> = postgres
        .advisory_holds()
        .map(|(key, mode, holder, session, xact)| (key, mode, session_name(holder), session, xact))
        .collect();
    if !advisory.is_empty() {
        advisory.sort_unstable();
        advisory.hash(state);
    }
    // Table locks held and asked for (none but the `wallets` locks a block's statements take
    // in the built-in safeguards).
    let mut table_locks: Vec<_> = postgres
        .table_lock_holds()
        .map(|(table, mode, holder, level)| (table, mode, session_name(holder), level))
        .collect();
    if !table_locks.is_empty() {
        table_locks.sort_unstable();
        table_locks.hash(state);
    }
    for (waiter, table, mode) in postgres.table_lock_queue() {
        (session_name(waiter), table, mode).hash(state);
    }
    // Transaction numbers (only a safeguard file's `txid_current()` gives them).
    let (next_txid, given) = postgres.transaction_numbers();
    if let Some(next) = next_txid {
        next.hash(state);
        let mut given: Vec<(u64, i64)> = given
            .map(|(session, txid)| (session_name(session), txid))
            .collect();
        given.sort_unstable();
        given.hash(state);
    }
}
