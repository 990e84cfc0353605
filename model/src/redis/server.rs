//! The keyspace and command execution.
//!
//! Keys hold strings, hashes, lists, sets or sorted sets with an optional absolute expiry (`expire_at_ms`, on the server's clock).
//! A key is logically gone when `now_ms > expire_at_ms`: at `now_ms == expire_at_ms` it still
//! exists and `PTTL` answers 0 (Redis's lazy expiry rule). A primary deletes an expired key
//! when a command touches it and records an [`Effect::Del`] for its replicas; a replica never
//! deletes keys itself but reports logically expired keys as missing.
//!
//! There is no active expiry cycle: an expired key nobody touches stays stored until it is
//! touched. That is invisible to clients (every read applies the rule above); it only delays
//! the `DEL` a replica receives, which [`Redis::drain_effects`] callers may want to know.
//!
//! There are 16 databases (`server/databases.rs`). The calls without a [`Session`] run in
//! database 0; [`Redis::execute_in`] and [`Redis::apply_in`] run in the session's, which
//! `SELECT` changes.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::cluster::{same_slot, CROSSSLOT_ERROR};
use super::collection::Collection;
use super::command::{
    arity_ok, integer_arg, invalid_expire_error, is_hello, lookup, parse_i64, plain_spec, precheck,
    select_index, subcommand_spec, wrong_arity_error, Command, DelexCondition, ExpireFlags,
    ExpireKind, SetCondition, SetExpiry, BLOCKING_COMMANDS, NOSCRIPT_ERROR, READONLY_ERROR,
};
use super::lua;
use super::replication::Effect;
use super::reply::Reply;
use sha1::{Digest, Sha1};

use super::scripts::{self, ScriptHost, ScriptId};
use super::shebang;

mod bits;
mod collections;
mod databases;
mod info;
mod pubsub;
mod strings;

pub use pubsub::{is_subscription_command, message_bytes, PUBSUB_OUTPUT_LIMIT_BYTES};
use pubsub::{PubSub, SessionPubSub};

pub use databases::DATABASES;
use databases::{DbIndex, Keyspace, OtherDbs, WatchTouches};

/// The version this stand-in answers as (the real server it is checked against).
pub const REDIS_VERSION: &str = "7.0.15";

/// Whether this instance accepts writes and expires keys itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Accepts writes, expires keys, records effects for replicas.
    Primary,
    /// Applies a primary's effects; never expires keys itself (reads report a logically
    /// expired key as missing); refuses writes with `READONLY`.
    Replica,
}

/// One stored key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Entry {
    /// A string's bytes (empty for a collection).
    value: Vec<u8>,
    /// Absolute expiry on the server clock, if any.
    expire_at_ms: Option<u64>,
    /// A hash, list, set or sorted set; `None` for a string.
    collection: Option<Collection>,
}

/// A hash's fields and values, in insertion order.
type HashFields = Vec<(Vec<u8>, Vec<u8>)>;

/// Redis's error for a command used on a key of another type.
pub(crate) const WRONGTYPE_ERROR: &str =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

impl Entry {
    /// A string entry.
    fn string(value: Vec<u8>, expire_at_ms: Option<u64>) -> Entry {
        Entry {
            value,
            expire_at_ms,
            collection: None,
        }
    }

    /// A collection entry.
    fn collection(collection: Collection, expire_at_ms: Option<u64>) -> Entry {
        debug_assert!(!collection.is_empty(), "Redis keeps no empty collection");
        Entry {
            value: Vec::new(),
            expire_at_ms,
            collection: Some(collection),
        }
    }

    /// The string's bytes, or `WRONGTYPE` for a collection.
    fn string_value(&self) -> Result<&[u8], Reply> {
        match self.collection {
            None => Ok(&self.value),
            Some(_) => Err(Reply::error(WRONGTYPE_ERROR)),
        }
    }

    /// Redis's lazy-expiry rule: gone only strictly after the expiry time.
    fn is_expired_at(&self, now_ms: u64) -> bool {
        self.expire_at_ms.is_some_and(|at_ms| now_ms > at_ms)
    }
}

/// A script's SHA1, as 20 bytes (cheap to clone and hash in the checker's states).
type Sha1Digest = [u8; 20];

/// The SHA1 of a script source.
fn digest_of(source: &[u8]) -> Sha1Digest {
    Sha1::digest(source).into()
}

/// 40 hexadecimal digits (either case) as a digest; `None` for anything else.
fn parse_sha1_hex(text: &str) -> Option<Sha1Digest> {
    let mut digest = [0u8; 20];
    hex::decode_to_slice(text, &mut digest).ok()?;
    Some(digest)
}

/// A script in the script cache: its source, shared between clones of the server. Two cached
/// scripts with the same SHA1 have the same source, so equality and hashing look at the
/// SHA1 (the map key) only.
#[derive(Clone, Debug)]
struct CachedScript(Arc<[u8]>);

impl PartialEq for CachedScript {
    fn eq(&self, _: &CachedScript) -> bool {
        true
    }
}

impl Eq for CachedScript {}

impl std::hash::Hash for CachedScript {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// Whether a primary records its effects: a setting of the driver's, not part of the state
/// (every value compares and hashes alike).
#[derive(Clone, Copy, Debug)]
struct Recording(bool);

impl PartialEq for Recording {
    fn eq(&self, _: &Recording) -> bool {
        true
    }
}

impl Eq for Recording {}

impl std::hash::Hash for Recording {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// An in-memory Redis 7 instance.
///
/// Equal instances compare and hash equal (all collections are ordered), so the stand-in can
/// live inside a model checker's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Redis {
    role: Role,
    cluster_mode: bool,
    /// The selected database's keys (database 0's between calls).
    keyspace: Keyspace,
    /// Scripts loaded by `SCRIPT LOAD` or a previous `EVAL`, by lower-case SHA1.
    script_cache: Arc<BTreeMap<Sha1Digest, CachedScript>>,
    /// What the scripting engine keeps from one script to the next: the `rand48` generator
    /// behind `math.random` (a restart resets it) and `cjson`'s settings (`SCRIPT FLUSH`, which
    /// starts Redis's Lua afresh, resets them too).
    lua_carry: lua::LuaCarry,
    /// Effects recorded since the last [`Redis::drain_effects`] (primary only).
    effects: Vec<Effect>,
    /// Whether effects are recorded at all (a setting: see [`Redis::record_effects`]).
    recording: Recording,
    /// How often each key some session ever `WATCH`ed in the selected database was written
    /// since (other keys are not counted, so a server nobody watches carries an empty map).
    watch_touches: WatchTouches,
    /// The other databases that hold keys or watched keys (none when database 0 holds every
    /// key: then this is empty and not hashed).
    other_dbs: OtherDbs,
    /// The database in `keyspace`: 0 between calls, another while a command of a connection
    /// that selected it runs (not hashed when 0).
    selected: DbIndex,
    /// Which connections listen to which channels (`server/pubsub.rs`; none, and not hashed,
    /// where no served connection subscribed).
    pubsub: PubSub,
}

/// One client connection's state: its `MULTI` queue, `WATCH`ed keys and selected database.
///
/// Database 0 (every session's at first) is left out of the hash, so a session of database 0
/// hashes as it did before databases were kept.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Session {
    /// The queued commands while inside `MULTI`.
    queue: Option<Vec<Vec<Vec<u8>>>>,
    /// A queued command was refused: `EXEC` answers `EXECABORT`.
    aborted: bool,
    /// `(key, touches at WATCH, existed at WATCH, the database it was watched in)`.
    watched: Vec<(Vec<u8>, u64, bool, DbIndex)>,
    /// The selected database (`SELECT`).
    db: DbIndex,
    /// What the connection subscribed to (none, and not hashed, until it subscribes or a
    /// server gives it a client id).
    pubsub: SessionPubSub,
}

impl Session {
    /// A connection outside any transaction, watching nothing.
    pub fn new() -> Session {
        Session::default()
    }

    /// True inside `MULTI`.
    pub fn in_transaction(&self) -> bool {
        self.queue.is_some()
    }

    /// The selected database (0 to 15).
    pub fn db(&self) -> u8 {
        self.db.0
    }

    /// A session for the served connection with this client id: messages published to what
    /// it subscribes to are left for it ([`Redis::take_deliveries`]).
    pub fn for_client(client: u64) -> Session {
        Session {
            pubsub: SessionPubSub::for_client(client),
            ..Session::default()
        }
    }

    /// True while subscribed to a channel, pattern or shard channel (a RESP2 connection then
    /// runs only the subscription commands, `PING`, `QUIT` and `RESET`).
    pub fn subscribed(&self) -> bool {
        self.pubsub.subscribed()
    }
}

impl Default for Redis {
    fn default() -> Self {
        Redis::new()
    }
}

/// The deadline a `SET` asks for, resolved against the clock.
enum Deadline {
    Clear,
    Keep,
    At(u64),
}

/// The server clock as Redis's signed milliseconds.
fn now_i64(now_ms: u64) -> i64 {
    i64::try_from(now_ms).unwrap_or(i64::MAX)
}

/// Commands Redis refuses inside a script (`This Redis command is not allowed from script`).
const SCRIPT_FORBIDDEN_COMMANDS: [&str; 22] = [
    "subscribe",
    "unsubscribe",
    "psubscribe",
    "punsubscribe",
    "ssubscribe",
    "sunsubscribe",
    "role",
    "reset",
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "script",
    "client",
    "hello",
    "multi",
    "exec",
    "discard",
    "watch",
    "unwatch",
    "wait",
    "auth",
];

/// Commands the stand-in does not have that Redis 7.0 refuses inside a script (the other
/// blocking list commands), with their arity: a script calling one gets Redis's errors (the
/// arity's, else `not allowed from script`), not the unknown command's.
const SCRIPT_FORBIDDEN_ELSEWHERE: [(&str, i32); 2] = [("blmpop", -5), ("bzmpop", -5)];

impl Redis {
    /// An empty primary, cluster mode off.
    pub fn new() -> Redis {
        Redis {
            role: Role::Primary,
            cluster_mode: false,
            keyspace: BTreeMap::new(),
            script_cache: Arc::default(),
            lua_carry: lua::LuaCarry::default(),
            effects: Vec::new(),
            recording: Recording(true),
            watch_touches: BTreeMap::new(),
            other_dbs: OtherDbs::default(),
            selected: DbIndex(0),
            pubsub: PubSub::default(),
        }
    }

    /// Whether a primary records its effects for [`Redis::drain_effects`] (on by default).
    /// A driver with no replica to feed turns it off and saves copying every write.
    pub fn record_effects(&mut self, on: bool) {
        self.recording = Recording(on);
        if !on {
            self.effects.clear();
        }
    }

    /// Turns Redis Cluster slot checks on: a command or script whose keys hash to different
    /// slots gets `CROSSSLOT Keys in request don't hash to the same slot`.
    pub fn set_cluster_mode(&mut self, on: bool) {
        self.cluster_mode = on;
    }

    /// True when cluster slot checks are on.
    pub fn cluster_mode(&self) -> bool {
        self.cluster_mode
    }

    /// Parses and executes one command received at server time `now_ms`, in database 0 (a
    /// `SELECT` lasts for this command only: there is no connection to remember it).
    ///
    /// The checks come in Redis's order: command table and arity, then the cluster slot check
    /// and the read-only replica check (so `SET k v FOO` on a replica is `READONLY`), then the
    /// command's own options.
    pub fn execute(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let reply = self.execute_here(argv, now_ms);
        self.switch_to(0);
        reply
    }

    /// [`Redis::execute`] in the selected database, which a `SELECT` changes.
    fn execute_here(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let before_parsing = match precheck(argv) {
            Ok(found) => found,
            Err(error) => return error,
        };
        if let Err(error) = self.admit(before_parsing.write, &before_parsing.keys) {
            return error;
        }
        match Command::parse(argv) {
            Ok(command) => self.run(&command, now_ms),
            Err(error) => error,
        }
    }

    /// Executes a parsed command at server time `now_ms`, in database 0 (as
    /// [`Redis::execute`]).
    pub fn apply(&mut self, command: &Command, now_ms: u64) -> Reply {
        let reply = self.apply_here(command, now_ms);
        self.switch_to(0);
        reply
    }

    /// [`Redis::apply`] in the selected database, which a `SELECT` changes.
    fn apply_here(&mut self, command: &Command, now_ms: u64) -> Reply {
        // The keys are listed only for a cluster's slot check (a list costs an allocation).
        let keys = if self.cluster_mode {
            command.keys()
        } else {
            Vec::new()
        };
        if let Err(error) = self.admit(command.is_write(), &keys) {
            return error;
        }
        self.run(command, now_ms)
    }

    /// Calls `script` as a client library does: `EVALSHA`, and `EVAL` with its source when
    /// the answer is `NOSCRIPT`. The same replies as [`Redis::apply`] of those two commands,
    /// without building them (in database 0).
    pub fn call_script(
        &mut self,
        script: ScriptId,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        now_ms: u64,
    ) -> Reply {
        // EVALSHA and EVAL are not writes (the script's own calls are checked).
        if let Err(error) = self.admit(false, keys) {
            return error;
        }
        let digest = script.digest();
        match self.script_cache.get(&digest) {
            Some(cached) => {
                let source = Arc::clone(&cached.0);
                self.run_script(&source, digest, keys, args, false, now_ms)
            }
            None => self.eval(script.source().as_bytes(), keys, args, false, now_ms),
        }
    }

    /// The value of `key` at `now_ms` without touching anything (no lazy expiry); for
    /// inspection by drivers and reports.
    pub fn peek(&self, key: &[u8], now_ms: u64) -> Option<&[u8]> {
        self.visible(key, now_ms)
            .and_then(|entry| entry.string_value().ok())
    }

    /// The stored value and absolute expiry of `key`, even when it is logically expired (a
    /// replica keeps such keys until the primary's `DEL` arrives); for inspection.
    pub fn stored(&self, key: &[u8]) -> Option<(&[u8], Option<u64>)> {
        self.keyspace
            .get(key)
            .filter(|entry| entry.collection.is_none())
            .map(|entry| (entry.value.as_slice(), entry.expire_at_ms))
    }

    /// True when `script` is in the script cache (`EVALSHA` of it would run).
    pub fn script_cached(&self, script: ScriptId) -> bool {
        self.script_cache.contains_key(&script.digest())
    }

    /// True when a script with this SHA1 (any case) is in the script cache.
    pub fn script_cached_sha1(&self, sha1_hex: &str) -> bool {
        parse_sha1_hex(sha1_hex).is_some_and(|digest| self.script_cache.contains_key(&digest))
    }

    /// Sets `key` directly, with no TTL, bypassing the command path (scenario set-up).
    ///
    /// A primary also records the [`Effect::Set`], so replicas fed from
    /// [`Redis::drain_effects`] start from the same data.
    pub fn seed(&mut self, key: &[u8], value: &[u8]) {
        let entry = Entry::string(value.to_vec(), None);
        self.keyspace.insert(Arc::from(key), entry);
        self.record(|db| Effect::Set {
            key: key.to_vec(),
            value: value.to_vec(),
            expire_at_ms: None,
            db,
        });
    }

    /// This instance's role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Takes the effects recorded since the last call, in order, for the replication stream.
    /// A primary records one [`Effect`] per change it makes (a script's effects one by one).
    pub fn drain_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// Applies an effect received from the primary (on a replica).
    ///
    /// Effects change the stored keys as they are, expired or not (the primary decides what
    /// expired), and are not recorded again.
    pub fn apply_effect(&mut self, effect: &Effect) {
        match effect {
            Effect::Set {
                key,
                value,
                expire_at_ms,
                db,
            } => self.in_db(*db, |redis| {
                let entry = Entry::string(value.clone(), *expire_at_ms);
                redis.keyspace.insert(Arc::from(key.as_slice()), entry);
            }),
            Effect::Collection {
                key,
                value,
                expire_at_ms,
                db,
            } => self.in_db(*db, |redis| {
                let entry = Entry::collection(value.clone(), *expire_at_ms);
                redis.keyspace.insert(Arc::from(key.as_slice()), entry);
            }),
            Effect::Del { key, db } => self.in_db(*db, |redis| {
                redis.keyspace.remove(key.as_slice());
            }),
            Effect::Expire {
                key,
                expire_at_ms,
                db,
            } => self.in_db(*db, |redis| {
                if let Some(entry) = redis.keyspace.get_mut(key.as_slice()) {
                    entry.expire_at_ms = Some(*expire_at_ms);
                }
            }),
            Effect::FlushAll => {
                self.keyspace.clear();
                self.other_dbs.clear_keys();
            }
            Effect::FlushDb { db } => self.in_db(*db, |redis| redis.keyspace.clear()),
            Effect::SwapDb { first, second } => self.swap_keys(*first, *second),
        }
    }

    /// Makes a replica an empty-script-cache primary that starts expiring keys itself.
    pub fn promote(&mut self) {
        self.role = Role::Primary;
        self.script_cache = Arc::default();
        self.effects.clear();
    }

    /// A replica that has completed a full resync with this primary: the same keys (expiries
    /// included), no scripts, nothing recorded.
    pub fn resynced_replica(&self) -> Redis {
        Redis {
            role: Role::Replica,
            cluster_mode: self.cluster_mode,
            keyspace: self.keyspace.clone(),
            other_dbs: self.other_dbs.keys_only(),
            ..Redis::new()
        }
    }

    /// A fresh replica (empty keyspace).
    pub fn replica() -> Redis {
        Redis {
            role: Role::Replica,
            ..Redis::new()
        }
    }

    /// Restarts from an append-only file whose last fsync saw `snapshot`'s keys: the keyspace
    /// is the snapshot's, the script cache is empty (as after [`Redis::restart_empty`]).
    pub fn restart_from(&mut self, snapshot: &Redis) {
        self.restart_empty();
        self.keyspace = snapshot.keyspace.clone();
        self.other_dbs.replace_keys(&snapshot.other_dbs);
    }

    /// Keeps every key (with its absolute expiry) and forgets the rest: a restart that
    /// reloads an append-only file fsynced before every reply.
    pub fn restart_keeping_keys(&mut self) {
        let keyspace = std::mem::take(&mut self.keyspace);
        let other_dbs = self.other_dbs.keys_only();
        self.restart_empty();
        self.keyspace = keyspace;
        self.other_dbs.replace_keys(&other_dbs);
    }

    /// Forgets everything, script cache included: a restart without persistence.
    ///
    /// The role and cluster mode (configuration) stay. Nothing is recorded for replicas: what a
    /// restarted primary does to them (a full resync to an empty data set) is the caller's to
    /// model.
    pub fn restart_empty(&mut self) {
        self.keyspace.clear();
        self.other_dbs.clear_keys();
        self.script_cache = Arc::default();
        self.lua_carry = lua::LuaCarry::default();
        self.effects.clear();
        self.forget_subscribers();
    }

    /// The checks Redis makes before a command runs: cluster slots, then read-only replica.
    fn admit<K: AsRef<[u8]>>(&self, write: bool, keys: &[K]) -> Result<(), Reply> {
        if self.cluster_mode && !same_slot(keys) {
            return Err(Reply::error(CROSSSLOT_ERROR));
        }
        if write && self.role == Role::Replica {
            return Err(Reply::error(READONLY_ERROR));
        }
        Ok(())
    }

    /// Runs an admitted command.
    fn run(&mut self, command: &Command, now_ms: u64) -> Reply {
        match command {
            Command::Ping(None) => Reply::Status("PONG".into()),
            Command::Ping(Some(message)) => Reply::Bulk(message.clone()),
            Command::Get(key) => self.get(key, now_ms),
            Command::Set {
                key,
                value,
                condition,
                expiry,
                get,
            } => self.set(key, value, *condition, *expiry, *get, now_ms),
            Command::SetNx(key, value) => self.setnx(key, value, now_ms),
            Command::Del(keys) => self.del(keys, now_ms),
            Command::Exists(keys) => self.exists(keys, now_ms),
            Command::Incr(key) => self.incr_by(key, 1, now_ms),
            Command::PExpire(key, ttl_ms) => self.pexpire(key, *ttl_ms, now_ms),
            Command::PTtl(key) => self.pttl(key, now_ms),
            Command::Ttl(key) => match self.pttl(key, now_ms) {
                Reply::Integer(ms) if ms >= 0 => Reply::Integer((ms + 500) / 1000),
                other => other,
            },
            Command::Expire(key, kind, amount, flags) => {
                self.expire(key, *kind, *amount, *flags, now_ms)
            }
            Command::Persist(key) => self.persist(key, now_ms),
            Command::GetDel(key) => {
                let reply = self.get(key, now_ms);
                if matches!(reply, Reply::Bulk(_)) {
                    self.delete_key(key);
                }
                reply
            }
            Command::IncrBy(key, n) => self.incr_by(key, *n, now_ms),
            Command::DecrBy(key, n) => match n.checked_neg() {
                Some(negated) => self.incr_by(key, negated, now_ms),
                None => Reply::error("ERR decrement would overflow"),
            },
            Command::Echo(message) => Reply::Bulk(message.clone()),
            Command::Type(key) => Reply::Status(
                match self.lookup(key, now_ms) {
                    Some(Entry {
                        collection: Some(collection),
                        ..
                    }) => collection.type_name(),
                    Some(_) => "string",
                    None => "none",
                }
                .into(),
            ),
            Command::Hash(argv) => self.hash_command(argv, now_ms),
            Command::Collection(argv) => self.collection_command(argv, now_ms),
            Command::Strings(argv) => self.strings_command(argv, now_ms),
            Command::Info(argv) => self.info(argv, now_ms),
            Command::Publish(channel, message) => self.publish(channel, message, false),
            Command::PubSub(argv) if argv[0].eq_ignore_ascii_case(b"spublish") => {
                self.publish(&argv[1], &argv[2], true)
            }
            Command::PubSub(argv) if argv[0].eq_ignore_ascii_case(b"pubsub") => {
                self.pubsub_command(argv)
            }
            // A subscription without a connection's state: as on a connection that sends only
            // this command.
            Command::PubSub(argv) => {
                let mut session = Session {
                    db: self.selected,
                    ..Session::new()
                };
                self.subscription(&mut session, argv)
            }
            Command::Wait(..) => Reply::Integer(0),
            Command::Time => Reply::Array(vec![
                Reply::Bulk((now_ms / 1_000).to_string().into_bytes()),
                Reply::Bulk(((now_ms % 1_000) * 1_000).to_string().into_bytes()),
            ]),
            Command::DelEx(key, condition) => self.delex(key, condition, now_ms),
            Command::Eval {
                script,
                keys,
                args,
                read_only,
            } => self.eval(script, keys, args, *read_only, now_ms),
            Command::EvalSha {
                sha1,
                keys,
                args,
                read_only,
            } => self.evalsha(sha1, keys, args, *read_only, now_ms),
            Command::ScriptLoad(source) => self.script_load(source),
            Command::ScriptFlush => {
                self.script_cache = Arc::default();
                self.lua_carry.flush();
                Reply::ok()
            }
            Command::ScriptExists(shas) => self.script_exists(shas),
            // A watched key is touched only if the flush removed it as a key a command would
            // have seen: Redis 7.0's `touchAllWatchedKeysInDb` skips keys that do not exist and
            // keys already expired when they were watched (here: a key expired by now, whose
            // watchers' EXEC sees that anyway, see `transaction_command`).
            Command::FlushAll => self.flush(true, now_ms),
            Command::FlushDb => self.flush(false, now_ms),
            Command::Housekeeping(argv) => self.housekeeping(argv),
            // Without a connection's state: as on a connection that sends only this command.
            Command::Transaction(_) => {
                let mut session = Session {
                    db: self.selected,
                    ..Session::new()
                };
                self.execute_in_here(&mut session, &command.to_argv(), now_ms)
            }
        }
    }

    // ----- keyspace access -------------------------------------------------------------

    /// The entry a read sees at `now_ms`, without changing anything.
    fn visible(&self, key: &[u8], now_ms: u64) -> Option<&Entry> {
        self.keyspace
            .get(key)
            .filter(|entry| !entry.is_expired_at(now_ms))
    }

    /// The entry a command sees at `now_ms`. On a primary an expired key is deleted first
    /// (and the deletion recorded); a replica only hides it.
    fn lookup(&mut self, key: &[u8], now_ms: u64) -> Option<Entry> {
        self.expire_if_needed(key, now_ms);
        self.visible(key, now_ms).cloned()
    }

    fn expire_if_needed(&mut self, key: &[u8], now_ms: u64) {
        if self.role != Role::Primary {
            return;
        }
        let expired = self
            .keyspace
            .get(key)
            .is_some_and(|entry| entry.is_expired_at(now_ms));
        if expired {
            self.keyspace.remove(key);
            self.record(|db| Effect::Del {
                key: key.to_vec(),
                db,
            });
        }
    }

    /// Counts a write to `key` for the sessions watching it.
    fn touch(&mut self, key: &[u8]) {
        if let Some(touches) = self.watch_touches.get_mut(key) {
            *touches += 1;
        }
    }

    /// Applies a parsed command a client connection sent, with its transaction state and in
    /// its database (see [`Redis::execute_in`]); outside `MULTI` a command other than the
    /// transaction commands is [`Redis::apply`] in the session's database.
    pub fn apply_in(&mut self, session: &mut Session, command: &Command, now_ms: u64) -> Reply {
        self.switch_to(session.db.0);
        let reply = if matches!(command, Command::Transaction(_)) || session.in_transaction() {
            self.execute_in_here(session, &command.to_argv(), now_ms)
        } else {
            self.apply_here(command, now_ms)
        };
        session.db = self.selected;
        self.switch_to(0);
        reply
    }

    /// Executes one command a client connection sent, with its transaction state: `MULTI`,
    /// `EXEC`, `DISCARD`, `WATCH`, `UNWATCH` as Redis 7.0 answers them; inside `MULTI` other
    /// commands are checked against the command table (and the cluster and read-only checks)
    /// and answer `+QUEUED`. `EXEC` of a transaction whose watched keys were written (by anyone)
    /// or expired since `WATCH` answers nil. Commands run in the session's database; a `SELECT`
    /// (also one run by `EXEC`) changes it for the commands after it.
    pub fn execute_in(&mut self, session: &mut Session, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        self.switch_to(session.db.0);
        let reply = self.execute_in_here(session, argv, now_ms);
        session.db = self.selected;
        self.switch_to(0);
        reply
    }

    /// [`Redis::execute_in`] with the session's database in place.
    fn execute_in_here(&mut self, session: &mut Session, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        debug_assert_eq!(
            session.db, self.selected,
            "the session's database is in place"
        );
        let name = argv
            .first()
            .map(|n| n.to_ascii_lowercase())
            .unwrap_or_default();
        let arity = |n: usize, exact: bool, fullname: &str| {
            let fits = if exact {
                argv.len() == n
            } else {
                argv.len() >= n
            };
            if fits {
                Ok(())
            } else {
                Err(wrong_arity_error(fullname))
            }
        };
        if session.subscribed() {
            // A subscribed RESP2 connection: the command table and arity first, then only the
            // subscription commands, `PING`, `QUIT` and `RESET` (`processCommand`).
            match lookup(argv) {
                Err(error) => return error,
                Ok(spec) if !pubsub::ALLOWED_WHILE_SUBSCRIBED.contains(&spec.fullname) => {
                    return pubsub::subscribed_context_error(spec.fullname);
                }
                Ok(spec) if spec.fullname == "ping" => return pubsub::subscribed_ping(argv),
                Ok(_) => {}
            }
        }
        let in_multi = session.queue.is_some();
        let transaction_command = match name.as_slice() {
            b"multi" => Some(arity(1, true, "multi")),
            b"exec" => Some(arity(1, true, "exec")),
            b"discard" => Some(arity(1, true, "discard")),
            b"watch" => Some(arity(2, false, "watch")),
            b"unwatch" if !in_multi => Some(arity(1, true, "unwatch")),
            // `RESET` is not queued inside `MULTI`: it ends the transaction (Redis 7.0's
            // `processCommand` runs it at once, as it runs `EXEC`).
            b"reset" => Some(arity(1, true, "reset")),
            _ => None,
        };
        match transaction_command {
            // Redis 7.0 rejects an EXEC it cannot run by discarding the transaction (and the
            // watched keys) with EXECABORT, inside MULTI or not (`rejectCommand`).
            Some(Err(_)) if name == b"exec" => {
                session.queue = None;
                session.aborted = false;
                session.watched.clear();
                Reply::error(
                    "EXECABORT Transaction discarded because of: wrong number of arguments for \
                     'exec' command",
                )
            }
            Some(Err(error)) => {
                if in_multi {
                    session.aborted = true;
                }
                error
            }
            Some(Ok(())) => self.transaction_command(session, &name, argv, now_ms),
            None if in_multi && name == b"unwatch" => {
                if argv.len() != 1 {
                    session.aborted = true;
                    return wrong_arity_error("unwatch");
                }
                session
                    .queue
                    .get_or_insert_with(Vec::new)
                    .push(argv.to_vec());
                Reply::Status("QUEUED".into())
            }
            None if in_multi => {
                let admitted = precheck(argv)
                    .and_then(|found| self.admit(found.write, &found.keys).map(|()| found));
                match admitted {
                    Ok(_) => {
                        session
                            .queue
                            .get_or_insert_with(Vec::new)
                            .push(argv.to_vec());
                        Reply::Status("QUEUED".into())
                    }
                    Err(error) => {
                        session.aborted = true;
                        error
                    }
                }
            }
            None if is_subscription_command(&name) => match lookup(argv) {
                Ok(_) => self.subscription(session, argv),
                Err(error) => error,
            },
            None => self.execute_here(argv, now_ms),
        }
    }

    fn transaction_command(
        &mut self,
        session: &mut Session,
        name: &[u8],
        argv: &[Vec<u8>],
        now_ms: u64,
    ) -> Reply {
        let in_multi = session.queue.is_some();
        match (name, in_multi) {
            (b"multi", true) => Reply::error("ERR MULTI calls can not be nested"),
            (b"multi", false) => {
                session.queue = Some(Vec::new());
                session.aborted = false;
                Reply::ok()
            }
            (b"exec", false) => Reply::error("ERR EXEC without MULTI"),
            (b"discard", false) => Reply::error("ERR DISCARD without MULTI"),
            (b"discard", true) => {
                session.queue = None;
                session.aborted = false;
                session.watched.clear();
                Reply::ok()
            }
            (b"watch", true) => Reply::error("ERR WATCH inside MULTI is not allowed"),
            (b"watch", false) => {
                for key in &argv[1..] {
                    let touches = *self.watch_touches.entry(key.clone()).or_insert(0);
                    let exists = self.visible(key, now_ms).is_some();
                    session
                        .watched
                        .push((key.clone(), touches, exists, self.selected));
                }
                Reply::ok()
            }
            (b"unwatch", _) => {
                session.watched.clear();
                Reply::ok()
            }
            // `RESET` (`clearClientConnectionState`): the transaction discarded, nothing
            // watched, database 0. (The connection's name and protocol are the serving
            // connection's to reset.)
            (b"reset", _) => {
                session.queue = None;
                session.aborted = false;
                session.watched.clear();
                self.switch_to(0);
                self.unsubscribe_all(session);
                Reply::Status("RESET".into())
            }
            (b"exec", true) => {
                let queue = session.queue.take().unwrap_or_default();
                let aborted = std::mem::replace(&mut session.aborted, false);
                let watched = std::mem::take(&mut session.watched);
                if aborted {
                    return Reply::error(
                        "EXECABORT Transaction discarded because of previous errors.",
                    );
                }
                // Each key in the database it was watched in.
                let dirty = watched.iter().any(|(key, touches, existed, db)| {
                    let (keyspace, watch_touches) = self.db_of(db.0);
                    let visible = keyspace
                        .and_then(|keyspace| keyspace.get(key.as_slice()))
                        .is_some_and(|entry| !entry.is_expired_at(now_ms));
                    watch_touches.and_then(|counts| counts.get(key)) != Some(touches)
                        || (*existed && !visible)
                });
                if dirty {
                    return Reply::NilArray;
                }
                let mut replies = Vec::with_capacity(queue.len());
                for queued in &queue {
                    match self.execute_queued(session, queued, now_ms) {
                        // Each channel's confirmation is an element of its own (with several
                        // channels Redis's array then holds more elements than it announces;
                        // here it announces them all).
                        Reply::Array(confirmations) if is_subscription_command(&queued[0]) => {
                            replies.extend(confirmations);
                        }
                        reply => replies.push(reply),
                    }
                }
                Reply::Array(replies)
            }
            _ => unreachable!("only transaction commands get here"),
        }
    }

    /// A queued command inside `EXEC` (an `UNWATCH` there is a no-op answering `+OK`).
    fn execute_queued(&mut self, session: &mut Session, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        if argv[0].eq_ignore_ascii_case(b"unwatch") {
            session.watched.clear();
            return Reply::ok();
        }
        // A subscription queued in the transaction acts on the connection; a `PING` after it
        // answers as on a subscribed connection (the other commands still run: the subscribed
        // connection's restriction is checked when a command arrives, not inside `EXEC`).
        if is_subscription_command(&argv[0]) {
            return self.subscription(session, argv);
        }
        if session.subscribed() && argv[0].eq_ignore_ascii_case(b"ping") {
            return pubsub::subscribed_ping(argv);
        }
        self.execute_here(argv, now_ms)
    }

    /// Records an effect for the replicas, built for the selected database (a replica records
    /// nothing; nor does a primary told not to, which then does not even build it).
    fn record(&mut self, effect: impl FnOnce(u8) -> Effect) {
        if self.role == Role::Primary && self.recording.0 {
            let db = self.selected.0;
            self.effects.push(effect(db));
        }
    }

    /// Stores `key` and records the write.
    fn write_key(&mut self, key: &[u8], value: Vec<u8>, expire_at_ms: Option<u64>) {
        debug_assert_eq!(self.role, Role::Primary, "only a primary writes keys");
        self.touch(key);
        self.record(|db| Effect::Set {
            key: key.to_vec(),
            value: value.clone(),
            expire_at_ms,
            db,
        });
        self.keyspace
            .insert(Arc::from(key), Entry::string(value, expire_at_ms));
    }

    /// Stores `entry` whole at `key` (a string or a collection, with its expiry) and records
    /// the write.
    fn write_entry(&mut self, key: &[u8], entry: Entry) {
        match &entry.collection {
            Some(_) => {
                self.keyspace.insert(Arc::from(key), entry);
                self.collection_written(key);
            }
            None => self.write_key(key, entry.value, entry.expire_at_ms),
        }
    }

    /// Deletes `key` (which must be stored) and records the deletion.
    fn delete_key(&mut self, key: &[u8]) {
        debug_assert_eq!(self.role, Role::Primary, "only a primary deletes keys");
        self.touch(key);
        let removed = self.keyspace.remove(key);
        debug_assert!(removed.is_some(), "deleting a key that is not stored");
        self.record(|db| Effect::Del {
            key: key.to_vec(),
            db,
        });
    }

    // ----- commands --------------------------------------------------------------------

    fn get(&mut self, key: &[u8], now_ms: u64) -> Reply {
        match self.lookup(key, now_ms) {
            Some(entry) => match entry.string_value() {
                Ok(value) => Reply::Bulk(value.to_vec()),
                Err(error) => error,
            },
            None => Reply::Nil,
        }
    }

    /// Resolves a `SET` expiry against the clock (`getExpireMillisecondsOrReply`).
    fn deadline(expiry: SetExpiry, now_ms: u64, command: &str) -> Result<Deadline, Reply> {
        let (amount, in_seconds, relative) = match expiry {
            SetExpiry::Clear => return Ok(Deadline::Clear),
            SetExpiry::Keep => return Ok(Deadline::Keep),
            SetExpiry::Seconds(s) => (s, true, true),
            SetExpiry::Millis(ms) => (ms, false, true),
            SetExpiry::AtSeconds(s) => (s, true, false),
            SetExpiry::AtMillis(ms) => (ms, false, false),
        };
        let invalid = || invalid_expire_error(command);
        if amount <= 0 {
            return Err(invalid());
        }
        let millis = if in_seconds {
            amount.checked_mul(1000).ok_or_else(invalid)?
        } else {
            amount
        };
        let at_ms = if relative {
            millis.checked_add(now_i64(now_ms)).ok_or_else(invalid)?
        } else {
            millis
        };
        let at_ms = u64::try_from(at_ms).map_err(|_| invalid())?;
        Ok(Deadline::At(at_ms))
    }

    fn set(
        &mut self,
        key: &[u8],
        value: &[u8],
        condition: SetCondition,
        expiry: SetExpiry,
        get: bool,
        now_ms: u64,
    ) -> Reply {
        let deadline = match Self::deadline(expiry, now_ms, "set") {
            Ok(deadline) => deadline,
            Err(error) => return error,
        };
        let old = self.lookup(key, now_ms);
        let old_reply = match &old {
            Some(entry) => match entry.string_value() {
                Ok(value) => Reply::Bulk(value.to_vec()),
                Err(error) if get => return error,
                Err(error) => error,
            },
            None => Reply::Nil,
        };
        let blocked = match condition {
            SetCondition::Always => false,
            SetCondition::IfMissing => old.is_some(),
            SetCondition::IfExists => old.is_none(),
        };
        if blocked {
            return if get { old_reply } else { Reply::Nil };
        }
        let expire_at_ms = match deadline {
            Deadline::Clear => None,
            Deadline::Keep => old.as_ref().and_then(|entry| entry.expire_at_ms),
            Deadline::At(at_ms) => Some(at_ms),
        };
        self.write_key(key, value.to_vec(), expire_at_ms);
        if get {
            old_reply
        } else {
            Reply::ok()
        }
    }

    fn setnx(&mut self, key: &[u8], value: &[u8], now_ms: u64) -> Reply {
        if self.lookup(key, now_ms).is_some() {
            return Reply::Integer(0);
        }
        self.write_key(key, value.to_vec(), None);
        Reply::Integer(1)
    }

    fn del(&mut self, keys: &[Vec<u8>], now_ms: u64) -> Reply {
        let mut deleted = 0;
        for key in keys {
            if self.lookup(key, now_ms).is_some() {
                self.delete_key(key);
                deleted += 1;
            }
        }
        Reply::Integer(deleted)
    }

    /// `EXISTS`: a key named twice counts twice.
    fn exists(&mut self, keys: &[Vec<u8>], now_ms: u64) -> Reply {
        let mut found = 0;
        for key in keys {
            if self.lookup(key, now_ms).is_some() {
                found += 1;
            }
        }
        Reply::Integer(found)
    }

    /// `INCR`/`INCRBY`/`DECR`/`DECRBY`: a missing key counts as 0; the key keeps its TTL.
    fn incr_by(&mut self, key: &[u8], delta: i64, now_ms: u64) -> Reply {
        let (current, expire_at_ms) = match self.lookup(key, now_ms) {
            None => (0, None),
            Some(entry) => match entry.string_value().and_then(integer_arg) {
                Ok(current) => (current, entry.expire_at_ms),
                Err(error) => return error,
            },
        };
        let Some(next) = current.checked_add(delta) else {
            return Reply::error("ERR increment or decrement would overflow");
        };
        self.write_key(key, next.to_string().into_bytes(), expire_at_ms);
        Reply::Integer(next)
    }

    /// `PEXPIRE`: 0 for a missing key; a deadline at or before now deletes the key (recorded
    /// as a `DEL`, as Redis propagates it) and answers 1.
    fn pexpire(&mut self, key: &[u8], ttl_ms: i64, now_ms: u64) -> Reply {
        let now = now_i64(now_ms);
        let Some(at_ms) = ttl_ms.checked_add(now) else {
            return invalid_expire_error("pexpire");
        };
        if self.lookup(key, now_ms).is_none() {
            return Reply::Integer(0);
        }
        if at_ms <= now {
            self.delete_key(key);
            return Reply::Integer(1);
        }
        let at_ms = u64::try_from(at_ms).expect("a deadline after now is positive");
        self.touch(key);
        if let Some(entry) = self.keyspace.get_mut(key) {
            entry.expire_at_ms = Some(at_ms);
        }
        self.record(|db| Effect::Expire {
            key: key.to_vec(),
            expire_at_ms: at_ms,
            db,
        });
        Reply::Integer(1)
    }

    /// `EXPIRE`/`EXPIREAT`/`PEXPIREAT`, and `PEXPIRE` with options (Redis's
    /// `expireGenericCommand`): the deadline must fit in 64 bits after the unit conversion and
    /// adding the base time; a missing key answers 0; so does a key the options rule out; a
    /// deadline at or before now deletes the key and answers 1.
    fn expire(
        &mut self,
        key: &[u8],
        kind: ExpireKind,
        amount: i64,
        flags: ExpireFlags,
        now_ms: u64,
    ) -> Reply {
        let invalid = || invalid_expire_error(kind.name());
        let (in_seconds, base) = match kind {
            ExpireKind::Millis => (false, now_i64(now_ms)),
            ExpireKind::Seconds => (true, now_i64(now_ms)),
            ExpireKind::AtSeconds => (true, 0),
            ExpireKind::AtMillis => (false, 0),
        };
        let millis = if in_seconds {
            match amount.checked_mul(1000) {
                Some(ms) => ms,
                None => return invalid(),
            }
        } else {
            amount
        };
        let Some(at_ms) = millis.checked_add(base) else {
            return invalid();
        };
        let Some(entry) = self.lookup(key, now_ms) else {
            return Reply::Integer(0);
        };
        let current_ms = entry.expire_at_ms.map(now_i64);
        if !flags.allow(current_ms, at_ms) {
            return Reply::Integer(0);
        }
        if at_ms <= now_i64(now_ms) {
            self.delete_key(key);
            return Reply::Integer(1);
        }
        let at_ms = u64::try_from(at_ms).expect("a deadline after now is positive");
        self.touch(key);
        if let Some(entry) = self.keyspace.get_mut(key) {
            entry.expire_at_ms = Some(at_ms);
        }
        self.record(|db| Effect::Expire {
            key: key.to_vec(),
            expire_at_ms: at_ms,
            db,
        });
        Reply::Integer(1)
    }

    /// `PERSIST`: 1 when a TTL was removed. Replicas get the value again without a TTL.
    fn persist(&mut self, key: &[u8], now_ms: u64) -> Reply {
        match self.lookup(key, now_ms) {
            Some(Entry {
                value,
                expire_at_ms: Some(_),
                collection: None,
            }) => {
                self.write_key(key, value, None);
                Reply::Integer(1)
            }
            Some(Entry {
                expire_at_ms: Some(_),
                collection: Some(collection),
                ..
            }) => {
                self.write_collection(key, collection, None);
                Reply::Integer(1)
            }
            _ => Reply::Integer(0),
        }
    }

    /// `PTTL`: -2 missing, -1 no TTL, else the remaining milliseconds (0 at the deadline).
    fn pttl(&mut self, key: &[u8], now_ms: u64) -> Reply {
        match self.lookup(key, now_ms) {
            None => Reply::Integer(-2),
            Some(Entry {
                expire_at_ms: None, ..
            }) => Reply::Integer(-1),
            Some(Entry {
                expire_at_ms: Some(at_ms),
                ..
            }) => {
                let remaining_ms = at_ms.saturating_sub(now_ms);
                Reply::Integer(i64::try_from(remaining_ms).unwrap_or(i64::MAX))
            }
        }
    }

    /// `DELEX` (Redis 8.4): 1 when deleted, 0 when missing or the condition is false.
    fn delex(&mut self, key: &[u8], condition: &DelexCondition, now_ms: u64) -> Reply {
        let Some(entry) = self.lookup(key, now_ms) else {
            return Reply::Integer(0);
        };
        let matches = match condition {
            DelexCondition::Always => true,
            DelexCondition::IfEqual(expected) => {
                entry.value == *expected && entry.collection.is_none()
            }
            DelexCondition::IfNotEqual(unexpected) => {
                entry.value != *unexpected || entry.collection.is_some()
            }
        };
        if !matches {
            return Reply::Integer(0);
        }
        self.delete_key(key);
        Reply::Integer(1)
    }

    /// `MGET`: a missing key or a hash is nil.
    fn mget(&mut self, keys: &[Vec<u8>], now_ms: u64) -> Reply {
        let values = keys
            .iter()
            .map(|key| match self.lookup(key, now_ms) {
                Some(Entry {
                    value,
                    collection: None,
                    ..
                }) => Reply::Bulk(value),
                _ => Reply::Nil,
            })
            .collect();
        Reply::Array(values)
    }

    /// `MSET` / `MSETNX`: pairs after the name (an odd count is an arity error when it runs,
    /// as in Redis); MSETNX writes nothing when any key exists. Written keys lose their TTL.
    fn mset(&mut self, argv: &[Vec<u8>], only_if_none_exist: bool, now_ms: u64) -> Reply {
        let name = if only_if_none_exist { "msetnx" } else { "mset" };
        let chunks = argv[1..].chunks_exact(2);
        if !chunks.remainder().is_empty() {
            return wrong_arity_error(name);
        }
        let pairs: Vec<(&Vec<u8>, &Vec<u8>)> = chunks.map(|pair| (&pair[0], &pair[1])).collect();
        if only_if_none_exist {
            for (key, _) in &pairs {
                if self.lookup(key, now_ms).is_some() {
                    return Reply::Integer(0);
                }
            }
        }
        for (key, value) in pairs {
            self.write_key(key, value.clone(), None);
        }
        if only_if_none_exist {
            Reply::Integer(1)
        } else {
            Reply::ok()
        }
    }

    /// `GETRANGE key start end`, with Redis's index rules.
    fn getrange(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let (start, end) = match (integer_arg(&argv[2]), integer_arg(&argv[3])) {
            (Ok(start), Ok(end)) => (start, end),
            (Err(error), _) | (_, Err(error)) => return error,
        };
        let Some(entry) = self.lookup(&argv[1], now_ms) else {
            return Reply::Bulk(Vec::new());
        };
        match entry.string_value() {
            Ok(value) => Reply::Bulk(byte_range(value, start, end).to_vec()),
            Err(error) => error,
        }
    }

    // ----- hashes ----------------------------------------------------------------------

    /// Stores the hash `key` (which must have at least one field) and records it whole.
    fn write_hash(&mut self, key: &[u8], fields: HashFields, expire_at_ms: Option<u64>) {
        self.write_collection(key, Collection::Hash(fields), expire_at_ms);
    }

    /// Stores the collection `key` holds now (deleting the key when it is empty, as Redis
    /// does) and records it whole.
    fn write_collection(&mut self, key: &[u8], value: Collection, expire_at_ms: Option<u64>) {
        debug_assert_eq!(self.role, Role::Primary, "only a primary writes keys");
        if value.is_empty() {
            if self.keyspace.contains_key(key) {
                self.delete_key(key);
            }
            return;
        }
        self.touch(key);
        self.record(|db| Effect::Collection {
            key: key.to_vec(),
            value: value.clone(),
            expire_at_ms,
            db,
        });
        self.keyspace
            .insert(Arc::from(key), Entry::collection(value, expire_at_ms));
    }

    /// The hash at `key` (empty when missing; its expiry), or `WRONGTYPE`.
    fn hash_at(&mut self, key: &[u8], now_ms: u64) -> Result<(HashFields, Option<u64>), Reply> {
        match self.lookup(key, now_ms) {
            None => Ok((Vec::new(), None)),
            Some(Entry {
                collection: Some(Collection::Hash(fields)),
                expire_at_ms,
                ..
            }) => Ok((fields, expire_at_ms)),
            Some(_) => Err(Reply::error(WRONGTYPE_ERROR)),
        }
    }

    /// `HSET`, `HGET`, `HINCRBY`, `HEXISTS`, `HDEL`, `HGETALL`, `HLEN`, `HMGET`, `HMSET`,
    /// `HSETNX`, `HKEYS`, `HVALS`, `HSTRLEN` (argv validated by the command table: arity, and
    /// pairs for `HSET` and `HMSET`).
    fn hash_command(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let name = argv[0].to_ascii_lowercase();
        let key = &argv[1];
        let increment = if name == b"hincrby" {
            match integer_arg(&argv[3]) {
                Ok(n) => Some(n),
                Err(error) => return error,
            }
        } else {
            None
        };
        let (mut fields, expire_at_ms) = match self.hash_at(key, now_ms) {
            Ok(found) => found,
            Err(error) => return error,
        };
        let position = |fields: &[(Vec<u8>, Vec<u8>)], field: &[u8]| {
            fields.iter().position(|(f, _)| f.as_slice() == field)
        };
        match name.as_slice() {
            b"hget" => match position(&fields, &argv[2]) {
                Some(at) => Reply::Bulk(fields[at].1.clone()),
                None => Reply::Nil,
            },
            b"hexists" => Reply::Integer(i64::from(position(&fields, &argv[2]).is_some())),
            b"hlen" => Reply::Integer(i64::try_from(fields.len()).unwrap_or(i64::MAX)),
            b"hgetall" => Reply::Array(
                fields
                    .into_iter()
                    .flat_map(|(f, v)| [Reply::Bulk(f), Reply::Bulk(v)])
                    .collect(),
            ),
            b"hmget" => Reply::Array(
                argv[2..]
                    .iter()
                    .map(|field| match position(&fields, field) {
                        Some(at) => Reply::Bulk(fields[at].1.clone()),
                        None => Reply::Nil,
                    })
                    .collect(),
            ),
            b"hkeys" => Reply::Array(fields.into_iter().map(|(f, _)| Reply::Bulk(f)).collect()),
            b"hvals" => Reply::Array(fields.into_iter().map(|(_, v)| Reply::Bulk(v)).collect()),
            b"hstrlen" => Reply::Integer(position(&fields, &argv[2]).map_or(0, |at| {
                i64::try_from(fields[at].1.len()).unwrap_or(i64::MAX)
            })),
            b"hsetnx" => {
                if position(&fields, &argv[2]).is_some() {
                    return Reply::Integer(0);
                }
                fields.push((argv[2].clone(), argv[3].clone()));
                self.write_hash(key, fields, expire_at_ms);
                Reply::Integer(1)
            }
            b"hset" | b"hmset" => {
                let mut added = 0;
                for pair in argv[2..].chunks_exact(2) {
                    match position(&fields, &pair[0]) {
                        Some(at) => fields[at].1 = pair[1].clone(),
                        None => {
                            fields.push((pair[0].clone(), pair[1].clone()));
                            added += 1;
                        }
                    }
                }
                self.write_hash(key, fields, expire_at_ms);
                if name == b"hmset" {
                    Reply::ok()
                } else {
                    Reply::Integer(added)
                }
            }
            b"hincrby" => {
                let increment = increment.expect("parsed above");
                let at = position(&fields, &argv[2]);
                let current = match at {
                    None => 0,
                    Some(at) => match parse_i64(&fields[at].1) {
                        Some(n) => n,
                        None => return Reply::error("ERR hash value is not an integer"),
                    },
                };
                let Some(next) = current.checked_add(increment) else {
                    return Reply::error("ERR increment or decrement would overflow");
                };
                let text = next.to_string().into_bytes();
                match at {
                    Some(at) => fields[at].1 = text,
                    None => fields.push((argv[2].clone(), text)),
                }
                self.write_hash(key, fields, expire_at_ms);
                Reply::Integer(next)
            }
            b"hdel" => {
                let before = fields.len();
                for field in &argv[2..] {
                    if let Some(at) = position(&fields, field) {
                        fields.remove(at);
                    }
                }
                let removed = i64::try_from(before - fields.len()).unwrap_or(i64::MAX);
                if removed > 0 {
                    if fields.is_empty() {
                        self.delete_key(key);
                    } else {
                        self.write_hash(key, fields, expire_at_ms);
                    }
                }
                Reply::Integer(removed)
            }
            _ => unreachable!("not a hash command"),
        }
    }

    // ----- scripts ---------------------------------------------------------------------

    fn eval(
        &mut self,
        source: &[u8],
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        read_only: bool,
        now_ms: u64,
    ) -> Reply {
        // The safeguards' own scripts are recognised by their bytes (no hashing).
        let known = ScriptId::from_source(source);
        let digest = known.map_or_else(|| digest_of(source), ScriptId::digest);
        if let Err(error) = self.cache_script(source, digest) {
            return error;
        }
        self.run_script(source, digest, keys, args, read_only, now_ms)
    }

    /// Compiles a script new to the cache (a compile error is Redis's) and caches it.
    fn cache_script(&mut self, source: &[u8], digest: Sha1Digest) -> Result<(), Reply> {
        if self.script_cache.contains_key(&digest) {
            return Ok(());
        }
        if ScriptId::from_digest(digest).is_none() {
            lua::compile(source, &hex::encode(digest))?;
        }
        Arc::make_mut(&mut self.script_cache).insert(digest, CachedScript(Arc::from(source)));
        Ok(())
    }

    fn evalsha(
        &mut self,
        sha1: &str,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        read_only: bool,
        now_ms: u64,
    ) -> Reply {
        let cached = parse_sha1_hex(sha1)
            .and_then(|digest| Some((digest, self.script_cache.get(&digest)?.0.clone())));
        match cached {
            Some((digest, source)) => {
                self.run_script(&source, digest, keys, args, read_only, now_ms)
            }
            None => Reply::error(NOSCRIPT_ERROR),
        }
    }

    fn script_load(&mut self, source: &[u8]) -> Reply {
        let digest = digest_of(source);
        if let Err(error) = self.cache_script(source, digest) {
            return error;
        }
        Reply::Bulk(hex::encode(digest).into_bytes())
    }

    fn script_exists(&self, shas: &[String]) -> Reply {
        let answers = shas
            .iter()
            .map(|sha| Reply::Integer(i64::from(self.script_cached_sha1(sha))))
            .collect();
        Reply::Array(answers)
    }

    /// Runs a script atomically: every call inside sees the same `now_ms`. The known scripts
    /// ([`ScriptId`]) run natively (proven equal to their Lua run by the tests); every other
    /// script, and any script `EVAL_RO`/`EVALSHA_RO` (`read_only`) runs, runs in Lua. A
    /// script's shebang flags are checked first, as Redis 7.0's `scriptPrepareForRun` checks
    /// them.
    fn run_script(
        &mut self,
        source: &[u8],
        digest: Sha1Digest,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        read_only: bool,
        now_ms: u64,
    ) -> Reply {
        if !read_only {
            if let Some(script) = ScriptId::from_digest(digest) {
                let mut session = ScriptSession {
                    redis: self,
                    now_ms,
                    read_only: false,
                };
                return scripts::run(script, &mut session, keys, args);
            }
        }
        self.run_in_lua(source, digest, keys, args, read_only, now_ms)
    }

    /// [`Redis::run_script`]'s Lua path: the shebang flags' refusals, then the script, read-only
    /// when `read_only` asks it or its flags say `no-writes`.
    fn run_in_lua(
        &mut self,
        source: &[u8],
        digest: Sha1Digest,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        read_only: bool,
        now_ms: u64,
    ) -> Reply {
        // A cached script's shebang was read when it was cached.
        let flags = shebang::flags(source).unwrap_or_default();
        if flags.shebang {
            if flags.no_cluster && self.cluster_mode {
                return Reply::error(
                    "ERR Can not run script on cluster, 'no-cluster' flag is set.",
                );
            }
            if !flags.no_writes && self.role == Role::Replica {
                return Reply::error(
                    "READONLY Can not run script with write flag on readonly replica",
                );
            }
            if !flags.no_writes && read_only {
                return Reply::error(
                    "ERR Can not execute a script with write flag using *_ro command.",
                );
            }
        }
        let read_only = read_only || flags.no_writes;
        self.run_lua(source, &hex::encode(digest), keys, args, read_only, now_ms)
    }

    /// Runs `source` in Lua, whatever it is (the native fast path is skipped); the script is
    /// not added to the script cache. For tests that compare the two paths.
    #[doc(hidden)]
    pub fn eval_in_lua(
        &mut self,
        source: &[u8],
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        now_ms: u64,
    ) -> Reply {
        let digest = digest_of(source);
        if let Err(error) = lua::compile(source, &hex::encode(digest)) {
            return error;
        }
        self.run_in_lua(source, digest, keys, args, false, now_ms)
    }

    fn run_lua(
        &mut self,
        source: &[u8],
        sha1: &str,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        read_only: bool,
        now_ms: u64,
    ) -> Reply {
        let mut carry = self.lua_carry;
        // A `SELECT` inside the script lasts until it ends (Redis 7.0 gives the script a client
        // of its own, in the caller's database).
        let db = self.selected.0;
        let mut session = ScriptSession {
            redis: self,
            now_ms,
            read_only,
        };
        let reply = lua::run_script(source, sha1, &mut session, keys, args, &mut carry);
        self.lua_carry = carry;
        self.switch_to(db);
        reply
    }

    /// `redis.call` from a script: command table and arity (script wording), read-only
    /// replica check, then the command. Slots need no check here: the known scripts touch only
    /// their declared keys, which `EVAL` already checked.
    fn script_call(&mut self, argv: &[Vec<u8>], read_only: bool, now_ms: u64) -> Reply {
        // Lower-cased on the stack when short and ASCII (every known name is): the same name
        // `from_utf8_lossy` and `to_ascii_lowercase` would make, without an allocation.
        let mut short = [0u8; 24];
        let lowered;
        let raw = argv[0].as_slice();
        let name: &str = if raw.len() <= short.len() && raw.is_ascii() {
            let short = &mut short[..raw.len()];
            short.copy_from_slice(raw);
            short.make_ascii_lowercase();
            std::str::from_utf8(short).expect("ASCII is UTF-8")
        } else {
            lowered = String::from_utf8_lossy(raw).to_ascii_lowercase();
            &lowered
        };
        if name == "pubsub" {
            // A container: `lookupCommand` finds `PUBSUB` alone (arity -2) or its subcommand.
            let sub = subcommand_spec(argv);
            if argv.len() == 1 || sub.is_some_and(|spec| !arity_ok(spec.arity, argv.len())) {
                return Reply::error("ERR Wrong number of args calling Redis command from script");
            }
            if sub.is_none() {
                return Reply::error("ERR Unknown Redis command called from script");
            }
        }
        let known = plain_spec(name)
            .or_else(|| (name == "pubsub").then(|| subcommand_spec(argv)).flatten())
            .map(|spec| (spec.arity, spec.write));
        let forbidden_elsewhere = SCRIPT_FORBIDDEN_ELSEWHERE
            .iter()
            .find(|(other, _)| *other == name)
            .map(|&(_, arity)| arity);
        // Redis's order: the command table, the arity, then the no-script flag.
        let arity = known.map(|(arity, _)| arity).or(forbidden_elsewhere);
        let wrong_arity = arity.is_some_and(|arity| !arity_ok(arity, argv.len()));
        if wrong_arity {
            return Reply::error("ERR Wrong number of args calling Redis command from script");
        }
        if SCRIPT_FORBIDDEN_COMMANDS.contains(&name)
            || BLOCKING_COMMANDS.contains(&name)
            || forbidden_elsewhere.is_some()
        {
            return Reply::error("ERR This Redis command is not allowed from script");
        }
        let Some((_, write)) = known else {
            return Reply::error("ERR Unknown Redis command called from script");
        };
        // A read-only script counts the commands that may replicate as writes (`PUBLISH`).
        if read_only && (write || name == "publish" || name == "spublish") {
            return Reply::error("ERR Write commands are not allowed from read-only scripts.");
        }
        if write && self.role == Role::Replica {
            return Reply::error(READONLY_ERROR);
        }
        match Command::parse(argv) {
            Ok(command) => self.run(&command, now_ms),
            Err(error) => error,
        }
    }

    // ----- connection housekeeping -----------------------------------------------------

    /// `CLIENT SETINFO`, `CLIENT SETNAME`, `SELECT`, `HELLO` (validated by the parser).
    fn housekeeping(&mut self, argv: &[Vec<u8>]) -> Reply {
        if is_hello(argv) {
            return self.hello();
        }
        if let Some(reply) = self.cluster_housekeeping(argv) {
            return reply;
        }
        let is_select = argv
            .first()
            .is_some_and(|name| name.eq_ignore_ascii_case(b"select"));
        if is_select {
            return self.select(select_index(argv));
        }
        let named = |name: &str| argv[0].eq_ignore_ascii_case(name.as_bytes());
        if named("reset") {
            // Without a connection there is no state to reset.
            return Reply::Status("RESET".into());
        }
        if named("role") {
            return self.role_reply();
        }
        Reply::ok()
    }

    /// `ROLE` (`roleCommand`): a primary answers `master`, its replication offset and its
    /// replicas; the stand-in keeps no replication stream of its own, so it says offset 0 and
    /// no replicas, as a Redis that never had one does (and as its `INFO replication` gives
    /// only the role). A replica answers `slave`, its primary's address (unknown to the
    /// stand-in: an empty host and port 0), `connected` and offset 0.
    fn role_reply(&self) -> Reply {
        match self.role {
            Role::Primary => Reply::Array(vec![
                Reply::Bulk(b"master".to_vec()),
                Reply::Integer(0),
                Reply::Array(Vec::new()),
            ]),
            Role::Replica => Reply::Array(vec![
                Reply::Bulk(b"slave".to_vec()),
                Reply::Bulk(Vec::new()),
                Reply::Integer(0),
                Reply::Bulk(b"connected".to_vec()),
                Reply::Integer(0),
            ]),
        }
    }

    /// `READONLY`, `READWRITE`, `CLUSTER ...` and `CLIENT ID|GETNAME`: the first three are
    /// refused outside cluster mode as Redis 7.0 refuses them; in cluster mode `READONLY` and
    /// `READWRITE` answer `+OK` and `CLUSTER KEYSLOT` the key's slot. The stand-in keeps no
    /// connections, so `CLIENT ID` is 1 and `CLIENT GETNAME` nil here; a server that serves
    /// connections answers them itself (`leaselab-sim`'s `RedisServer`).
    fn cluster_housekeeping(&self, argv: &[Vec<u8>]) -> Option<Reply> {
        let name = argv.first()?;
        let named = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        let sub = |n: &str| {
            argv.get(1)
                .is_some_and(|s| s.eq_ignore_ascii_case(n.as_bytes()))
        };
        if named("client") {
            return if sub("id") {
                Some(Reply::Integer(1))
            } else if sub("getname") {
                Some(Reply::Nil)
            } else {
                None
            };
        }
        if !(named("readonly") || named("readwrite") || named("cluster")) {
            return None;
        }
        if !self.cluster_mode {
            return Some(Reply::error(
                "ERR This instance has cluster support disabled",
            ));
        }
        if !named("cluster") {
            return Some(Reply::ok());
        }
        if sub("keyslot") {
            return Some(Reply::Integer(i64::from(super::cluster::key_slot(
                &argv[2],
            ))));
        }
        let shown = String::from_utf8_lossy(&argv[1]).to_uppercase();
        Some(Reply::Error(format!(
            "ERR the leaselab stand-in does not support CLUSTER {shown}"
        )))
    }

    /// The RESP2 answer to `HELLO` / `HELLO 2`, as Redis 7.0 gives it (the stand-in has no
    /// connections, so the client id is always 1).
    fn hello(&self) -> Reply {
        let bulk = |text: &str| Reply::Bulk(text.as_bytes().to_vec());
        let mode = if self.cluster_mode {
            "cluster"
        } else {
            "standalone"
        };
        let role = match self.role {
            Role::Primary => "master",
            Role::Replica => "replica",
        };
        Reply::Array(vec![
            bulk("server"),
            bulk("redis"),
            bulk("version"),
            bulk(REDIS_VERSION),
            bulk("proto"),
            Reply::Integer(2),
            bulk("id"),
            Reply::Integer(1),
            bulk("mode"),
            bulk(mode),
            bulk("role"),
            bulk(role),
            bulk("modules"),
            Reply::Array(Vec::new()),
        ])
    }
}

/// The server side of a running script.
struct ScriptSession<'a> {
    redis: &'a mut Redis,
    /// The script's frozen time.
    now_ms: u64,
    /// `EVAL_RO`, `EVALSHA_RO` or a `no-writes` script: its writes fail.
    read_only: bool,
}

impl ScriptHost for ScriptSession<'_> {
    fn call(&mut self, argv: &[Vec<u8>]) -> Reply {
        self.redis.script_call(argv, self.read_only, self.now_ms)
    }
}

/// `GETRANGE`'s slice of `value` for inclusive `start..=end` (negative counts from the end).
fn byte_range(value: &[u8], start: i64, end: i64) -> &[u8] {
    let length = i64::try_from(value.len()).unwrap_or(i64::MAX);
    if start < 0 && end < 0 && start > end {
        return &[];
    }
    let start = if start < 0 { length + start } else { start }.max(0);
    let end = if end < 0 { length + end } else { end }.max(0);
    let end = end.min(length - 1);
    if start > end || length == 0 {
        return &[];
    }
    let start = usize::try_from(start).expect("start is within the value");
    let end = usize::try_from(end).expect("end is within the value");
    &value[start..=end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_of_database_0_hashes_as_before() {
        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        /// `Session` as it was before databases were kept.
        #[derive(Hash)]
        struct Before {
            queue: Option<Vec<Vec<Vec<u8>>>>,
            aborted: bool,
            watched: Vec<(Vec<u8>, u64, bool)>,
        }
        fn hash_of(value: &impl Hash) -> u64 {
            let mut hasher = DefaultHasher::new();
            value.hash(&mut hasher);
            hasher.finish()
        }
        let session = Session {
            queue: Some(vec![vec![b"GET".to_vec(), b"k".to_vec()]]),
            aborted: false,
            watched: vec![(b"k".to_vec(), 2, true, DbIndex(0))],
            db: DbIndex(0),
            pubsub: SessionPubSub::default(),
        };
        let before = Before {
            queue: Some(vec![vec![b"GET".to_vec(), b"k".to_vec()]]),
            aborted: false,
            watched: vec![(b"k".to_vec(), 2, true)],
        };
        assert_eq!(hash_of(&session), hash_of(&before));
        let elsewhere = Session {
            db: DbIndex(1),
            ..session.clone()
        };
        assert_ne!(hash_of(&session), hash_of(&elsewhere));
    }

    #[test]
    fn byte_range_rules() {
        assert_eq!(byte_range(b"token", 0, 2), b"tok");
        assert_eq!(byte_range(b"token", 0, -1), b"token");
        assert_eq!(byte_range(b"token", -3, -1), b"ken");
        assert_eq!(byte_range(b"token", 0, 100), b"token");
        assert_eq!(byte_range(b"token", 3, 1), b"");
        assert_eq!(byte_range(b"token", -1, -3), b"");
        assert_eq!(byte_range(b"", 0, -1), b"");
        assert_eq!(byte_range(b"token", i64::MIN, i64::MAX), b"token");
    }
}
