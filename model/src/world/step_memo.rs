//! Remembered stand-in steps: the same request to the same stand-in gives the same answer.
//!
//! The checker's worlds share their stand-ins (one copy of each distinct Redis and PostgreSQL
//! among the worlds of a search), and a level asks the same shared copy the same request from
//! many worlds: every interleaving of the other callers' steps reaches the lock or the row in
//! the same state. A stand-in is a pure function of its value, the request and the time it is
//! asked at, so each thread remembers the last [`ENTRIES`] steps it took: the stand-in before
//! (by pointer, kept alive by the entry so the address cannot be reused), the request and the
//! time, and what came of it (the stand-in after, shared, its reply and the effects it
//! recorded for replicas). A remembered step copies, runs and frees nothing, and the stand-in
//! after keeps the fingerprints symmetry reduction remembered for it (`symmetry::Memo`).
//!
//! Entries also name the world's `Setup` by pointer: stand-ins are only shared among the
//! worlds of one search, and so are the steps remembered here. Only the single Redis and
//! PostgreSQL are remembered (not a caller's pipeline with its connection's transaction
//! state, nor Redlock's nodes).
//!
//! A caller's whole step is remembered the same way ([`recall_caller`]): its slot, the two
//! stand-ins, the rarer faults' state and the time, each shared among the worlds of a level,
//! are all a step of one caller reads in a world with no replica and no Redlock node (the
//! other callers only through the lock's value, which names them by the setup's tokens), so
//! a remembered step gives the caller after, the stand-ins after and the trespass, shared,
//! without copying the caller's slot or running its machine; the slot after keeps the
//! fingerprint symmetry reduction computed for it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::fingerprint::{BuildPassThrough, FingerprintHasher};
use crate::postgres::{Exec, Postgres, SessionId};
use crate::redis::replication::Effect;
use crate::redis::{Redis, Reply};
use crate::safeguard::{RedisRequest, SqlRequest};

use super::symmetry::Memo;
use super::{ExtraFaults, ReplyFaults, Setup, Slot, Trespass};

/// How many steps of each kind (Redis, PostgreSQL, a caller's) a thread remembers before it
/// forgets that kind's all (a few megabytes: the stand-ins and slots they keep alive are
/// mostly shared with the worlds anyway).
pub(super) const ENTRIES: usize = 4096;

/// An `Arc`'s address, as the key of a remembered step names it.
fn address<T>(arc: &Arc<T>) -> usize {
    Arc::as_ptr(arc) as *const u8 as usize
}

/// A Redis step remembered: what it was asked (the `Arc`s kept so their addresses stay
/// theirs) and what it gave.
struct RedisEntry {
    setup: Arc<Setup>,
    before: Arc<Memo<Redis>>,
    request: RedisRequest,
    now_ms: u64,
    step: RedisStep,
}

/// What a Redis step gave: the stand-in after, its reply, the effects it recorded.
pub(super) type RedisStep = (Arc<Memo<Redis>>, Reply, Vec<Effect>);

/// A PostgreSQL step remembered.
struct PostgresEntry {
    setup: Arc<Setup>,
    before: Arc<Memo<Postgres>>,
    session: SessionId,
    request: SqlRequest,
    /// The server's clock, for statements that may read it (a user's SQL); else None.
    clock: Option<i64>,
    step: PostgresStep,
}

/// What a PostgreSQL step gave: the stand-in after and what the statement did.
pub(super) type PostgresStep = (Arc<Memo<Postgres>>, Exec);

/// Entries by the hash of what they were asked, one per hash: a step whose hash an earlier
/// one had takes its place (a lookup compares the whole key, so that only forgets a step).
struct Table<E> {
    entries: HashMap<u64, E, BuildPassThrough>,
}

impl<E> Default for Table<E> {
    fn default() -> Table<E> {
        Table {
            entries: HashMap::default(),
        }
    }
}

impl<E> Table<E> {
    fn find(&self, hash: u64, matches: impl Fn(&E) -> bool) -> Option<&E> {
        self.entries.get(&hash).filter(|entry| matches(entry))
    }

    fn insert(&mut self, hash: u64, entry: E) {
        if self.entries.len() >= ENTRIES {
            // Forgotten all at once; the table keeps its room.
            self.entries.clear();
        }
        self.entries.insert(hash, entry);
    }
}

/// What one caller's step reads of its world: the parts shared among worlds by pointer,
/// the small ones by value.
#[derive(Clone, Copy)]
pub(super) struct CallerBefore<'a> {
    pub setup: &'a Arc<Setup>,
    pub slot: &'a Arc<Slot>,
    pub redis: &'a Arc<Memo<Redis>>,
    pub postgres: &'a Arc<Memo<Postgres>>,
    pub extra: &'a Arc<ExtraFaults>,
    pub index: usize,
    pub now_ms: u64,
    pub faults_left: ReplyFaults,
    pub trespass: Option<Trespass>,
}

impl CallerBefore<'_> {
    fn hash(&self) -> u64 {
        let mut hasher = FingerprintHasher::default();
        hasher.write_usize(address(self.setup));
        hasher.write_usize(address(self.slot));
        hasher.write_usize(address(self.redis));
        hasher.write_usize(address(self.postgres));
        hasher.write_usize(address(self.extra));
        hasher.write_usize(self.index);
        hasher.write_u64(self.now_ms);
        self.faults_left.hash(&mut hasher);
        self.trespass.hash(&mut hasher);
        hasher.finish()
    }

    /// The same step: the same shared parts (by pointer) and the same small ones.
    fn same(&self, other: &CallerBefore<'_>) -> bool {
        Arc::ptr_eq(self.slot, other.slot)
            && Arc::ptr_eq(self.redis, other.redis)
            && Arc::ptr_eq(self.postgres, other.postgres)
            && Arc::ptr_eq(self.extra, other.extra)
            && Arc::ptr_eq(self.setup, other.setup)
            && self.index == other.index
            && self.now_ms == other.now_ms
            && self.faults_left == other.faults_left
            && self.trespass == other.trespass
    }

    /// The key kept: the `Arc`s held so that their addresses stay theirs (taken before the
    /// step, which may replace the world's).
    pub(super) fn kept(&self) -> CallerKept {
        CallerKept {
            setup: Arc::clone(self.setup),
            slot: Arc::clone(self.slot),
            redis: Arc::clone(self.redis),
            postgres: Arc::clone(self.postgres),
            extra: Arc::clone(self.extra),
            index: self.index,
            now_ms: self.now_ms,
            faults_left: self.faults_left,
            trespass: self.trespass,
        }
    }
}

/// A [`CallerBefore`] as an entry keeps it.
pub(super) struct CallerKept {
    setup: Arc<Setup>,
    slot: Arc<Slot>,
    redis: Arc<Memo<Redis>>,
    postgres: Arc<Memo<Postgres>>,
    extra: Arc<ExtraFaults>,
    index: usize,
    now_ms: u64,
    faults_left: ReplyFaults,
    trespass: Option<Trespass>,
}

impl CallerKept {
    /// The key as a lookup names it.
    fn view(&self) -> CallerBefore<'_> {
        CallerBefore {
            setup: &self.setup,
            slot: &self.slot,
            redis: &self.redis,
            postgres: &self.postgres,
            extra: &self.extra,
            index: self.index,
            now_ms: self.now_ms,
            faults_left: self.faults_left,
            trespass: self.trespass,
        }
    }
}

/// What one caller's step gave: its slot, the stand-ins and the trespass after.
#[derive(Clone)]
pub(super) struct CallerAfter {
    pub slot: Arc<Slot>,
    pub redis: Arc<Memo<Redis>>,
    pub postgres: Arc<Memo<Postgres>>,
    pub trespass: Option<Trespass>,
}

struct CallerEntry {
    before: CallerKept,
    after: CallerAfter,
}

#[derive(Default)]
struct Steps {
    redis: Table<RedisEntry>,
    postgres: Table<PostgresEntry>,
    callers: Table<CallerEntry>,
}

thread_local! {
    static STEPS: RefCell<Steps> = RefCell::new(Steps::default());
}

fn key_hash(setup: &Arc<Setup>, before: usize, what: impl Hash) -> u64 {
    let mut hasher = FingerprintHasher::default();
    hasher.write_usize(address(setup));
    hasher.write_usize(before);
    what.hash(&mut hasher);
    hasher.finish()
}

/// The remembered step of `before` on `request` at `now_ms`, if this thread took it lately.
pub(super) fn recall_redis(
    setup: &Arc<Setup>,
    before: &Arc<Memo<Redis>>,
    request: &RedisRequest,
    now_ms: u64,
) -> Option<RedisStep> {
    let hash = key_hash(setup, address(before), (request, now_ms));
    STEPS.with(|steps| {
        steps
            .borrow()
            .redis
            .find(hash, |entry| {
                Arc::ptr_eq(&entry.setup, setup)
                    && Arc::ptr_eq(&entry.before, before)
                    && entry.now_ms == now_ms
                    && entry.request == *request
            })
            .map(|entry| entry.step.clone())
    })
}

/// Remembers that `before` on `request` at `now_ms` gave `step`.
pub(super) fn remember_redis(
    setup: &Arc<Setup>,
    before: &Arc<Memo<Redis>>,
    request: &RedisRequest,
    now_ms: u64,
    step: RedisStep,
) {
    let hash = key_hash(setup, address(before), (request, now_ms));
    let entry = RedisEntry {
        setup: Arc::clone(setup),
        before: Arc::clone(before),
        request: request.clone(),
        now_ms,
        step,
    };
    STEPS.with(|steps| steps.borrow_mut().redis.insert(hash, entry));
}

/// The remembered step of `before` on `session`'s `request`, if this thread took it lately.
pub(super) fn recall_postgres(
    setup: &Arc<Setup>,
    before: &Arc<Memo<Postgres>>,
    session: SessionId,
    request: &SqlRequest,
    clock: Option<i64>,
) -> Option<PostgresStep> {
    let hash = key_hash(setup, address(before), (session, request, clock));
    STEPS.with(|steps| {
        steps
            .borrow()
            .postgres
            .find(hash, |entry| {
                Arc::ptr_eq(&entry.setup, setup)
                    && Arc::ptr_eq(&entry.before, before)
                    && entry.session == session
                    && entry.clock == clock
                    && entry.request == *request
            })
            .map(|entry| entry.step.clone())
    })
}

/// Remembers that `before` on `session`'s `request` gave `step`.
pub(super) fn remember_postgres(
    setup: &Arc<Setup>,
    before: &Arc<Memo<Postgres>>,
    session: SessionId,
    request: &SqlRequest,
    clock: Option<i64>,
    step: PostgresStep,
) {
    let hash = key_hash(setup, address(before), (session, request, clock));
    let entry = PostgresEntry {
        setup: Arc::clone(setup),
        before: Arc::clone(before),
        session,
        request: request.clone(),
        clock,
        step,
    };
    STEPS.with(|steps| steps.borrow_mut().postgres.insert(hash, entry));
}

/// The remembered step of the caller `before` describes, if this thread took it lately.
pub(super) fn recall_caller(before: &CallerBefore<'_>) -> Option<CallerAfter> {
    let hash = before.hash();
    STEPS.with(|steps| {
        steps
            .borrow()
            .callers
            .find(hash, |entry| entry.before.view().same(before))
            .map(|entry| entry.after.clone())
    })
}

/// Remembers that the caller step `before` describes gave `after`.
pub(super) fn remember_caller(before: CallerKept, after: CallerAfter) {
    let hash = before.view().hash();
    let entry = CallerEntry { before, after };
    STEPS.with(|steps| steps.borrow_mut().callers.insert(hash, entry));
}

/// Forgets every remembered step of this thread (and lets go of the stand-ins they kept).
pub fn forget() {
    STEPS.with(|steps| *steps.borrow_mut() = Steps::default());
}
