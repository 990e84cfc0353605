//! The commands the stand-in supports, parsed from a RESP argument vector.
//!
//! [`Command::parse`] validates exactly as Redis 7 does (same order, same error texts), and
//! [`Command::to_argv`] renders a command back into the argument vector a client sends.
//!
//! Validation happens in the order Redis 7.0 uses (`processCommand`, then the command itself):
//! 1. the command table: an unknown command, an unknown subcommand of `CLIENT`/`SCRIPT`, or a
//!    wrong number of arguments (the error names the command in lower case, with `|` between a
//!    command and its subcommand, e.g. `'script|load'`);
//! 2. in [`Redis::execute`](super::Redis::execute): the cluster slot check and the read-only
//!    replica check;
//! 3. the command's own options and numbers (this module).
//!
//! Everything outside the supported set gets Redis's unknown command (or subcommand) error, as
//! a server without that command would send. Deliberate differences from Redis 7.0:
//! - `DELEX` (Redis 8.4) is supported, with the `IFEQ`/`IFNE` conditions only; Redis 7.0 answers
//!   `ERR unknown command 'DELEX', ...`.
//! - `CLIENT SETINFO` (Redis 7.2) is answered `+OK` as Redis 7.2+ does; Redis 7.0 answers
//!   `ERR unknown subcommand 'SETINFO'. Try CLIENT HELP.` (clients ignore either reply).
//! - `HELLO 3` is refused with `NOPROTO unsupported protocol version`: the stand-in speaks RESP2
//!   only. `HELLO` and `HELLO 2` get the RESP2 answer of Redis 7.0.

use super::reply::Reply;

/// The condition of a `SET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SetCondition {
    /// Always write.
    Always,
    /// `NX`: only when the key does not exist.
    IfMissing,
    /// `XX`: only when the key exists.
    IfExists,
}

/// The expiry option of a `SET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SetExpiry {
    /// No option: a plain SET clears any TTL.
    Clear,
    /// `EX seconds`.
    Seconds(i64),
    /// `PX milliseconds`.
    Millis(i64),
    /// `EXAT unix-seconds`.
    AtSeconds(i64),
    /// `PXAT unix-milliseconds` (also how a primary propagates `PX` to replicas).
    AtMillis(i64),
    /// `KEEPTTL`.
    Keep,
}

/// Which of the expire commands ([`Command::PExpire`] is a plain `PEXPIRE`; one with
/// options is [`Command::Expire`] with [`ExpireKind::Millis`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExpireKind {
    /// `PEXPIRE key milliseconds`.
    Millis,
    /// `EXPIRE key seconds`.
    Seconds,
    /// `EXPIREAT key unix-seconds`.
    AtSeconds,
    /// `PEXPIREAT key unix-milliseconds`.
    AtMillis,
}

impl ExpireKind {
    /// The command's name, lower case.
    pub fn name(self) -> &'static str {
        match self {
            ExpireKind::Millis => "pexpire",
            ExpireKind::Seconds => "expire",
            ExpireKind::AtSeconds => "expireat",
            ExpireKind::AtMillis => "pexpireat",
        }
    }
}

/// The `NX|XX|GT|LT` options of the expire commands (Redis 7.0). `NX` excludes the others,
/// `GT` excludes `LT`; `XX` goes with `GT` or `LT`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExpireFlags {
    /// `NX`: only when the key has no TTL.
    pub nx: bool,
    /// `XX`: only when the key has a TTL.
    pub xx: bool,
    /// `GT`: only when the new deadline is later than the current one (a key without a TTL
    /// counts as never expiring, so `GT` never applies to it).
    pub gt: bool,
    /// `LT`: only when the new deadline is earlier than the current one (or there is none).
    pub lt: bool,
}

impl ExpireFlags {
    /// The options as Redis takes them, in a fixed order.
    fn words(self) -> impl Iterator<Item = Vec<u8>> {
        [
            (self.nx, "NX"),
            (self.xx, "XX"),
            (self.gt, "GT"),
            (self.lt, "LT"),
        ]
        .into_iter()
        .filter(|(set, _)| *set)
        .map(|(_, name)| name.as_bytes().to_vec())
    }

    /// Whether a key whose deadline is `current_ms` (none: no TTL) takes `new_ms`, as
    /// Redis's `expireGenericCommand` decides.
    pub fn allow(self, current_ms: Option<i64>, new_ms: i64) -> bool {
        !(self.nx && current_ms.is_some()
            || self.xx && current_ms.is_none()
            || self.gt && current_ms.is_none_or(|current| new_ms <= current)
            || self.lt && current_ms.is_some_and(|current| new_ms >= current))
    }
}

/// The condition of a `DELEX` (Redis 8.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DelexCondition {
    /// No condition: delete like `DEL` of one key.
    Always,
    /// `IFEQ value`: delete only if the value equals.
    IfEqual(Vec<u8>),
    /// `IFNE value`: delete only if the value differs.
    IfNotEqual(Vec<u8>),
}

/// A parsed command.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Command {
    /// `PING [message]`.
    Ping(Option<Vec<u8>>),
    /// `GET key`.
    Get(Vec<u8>),
    /// `SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT|KEEPTTL]`.
    Set {
        /// The key.
        key: Vec<u8>,
        /// The new value.
        value: Vec<u8>,
        /// NX / XX.
        condition: SetCondition,
        /// EX / PX / EXAT / PXAT / KEEPTTL.
        expiry: SetExpiry,
        /// `GET`: reply with the old value.
        get: bool,
    },
    /// `SETNX key value`.
    SetNx(Vec<u8>, Vec<u8>),
    /// `DEL key [key ...]`.
    Del(Vec<Vec<u8>>),
    /// `EXISTS key [key ...]`.
    Exists(Vec<Vec<u8>>),
    /// `INCR key`.
    Incr(Vec<u8>),
    /// `PEXPIRE key milliseconds`.
    PExpire(Vec<u8>, i64),
    /// `PTTL key`.
    PTtl(Vec<u8>),
    /// `TTL key`.
    Ttl(Vec<u8>),
    /// `EXPIRE key seconds`, `EXPIREAT key unix-seconds`, `PEXPIREAT key unix-ms`, each with
    /// its `NX|XX|GT|LT` options, and `PEXPIRE key ms` with options.
    Expire(Vec<u8>, ExpireKind, i64, ExpireFlags),
    /// `PERSIST key`.
    Persist(Vec<u8>),
    /// `GETDEL key`.
    GetDel(Vec<u8>),
    /// `INCRBY key increment`.
    IncrBy(Vec<u8>, i64),
    /// `DECRBY key decrement` (`DECR key` is `DecrBy(key, 1)`).
    DecrBy(Vec<u8>, i64),
    /// `ECHO message`.
    Echo(Vec<u8>),
    /// `TYPE key`.
    Type(Vec<u8>),
    /// `PUBLISH channel message`: the count of subscribers it reached.
    Publish(Vec<u8>, Vec<u8>),
    /// Publish/subscribe as its argument vector, checked against the command table (arity):
    /// `SPUBLISH`, `(P|S)SUBSCRIBE`, `(P|S)UNSUBSCRIBE` (which act on the connection's
    /// [`Session`](super::Session)) and `PUBSUB`'s subcommands.
    PubSub(Vec<Vec<u8>>),
    /// `WAIT numreplicas timeout` (a lone server: answers 0 at once).
    Wait(i64, i64),
    /// `TIME`: the server's clock as seconds and microseconds (the stand-in's clock has whole
    /// milliseconds, so the microseconds are a multiple of 1000).
    Time,
    /// A hash command (`HSET`, `HGET`, `HINCRBY`, `HEXISTS`, `HDEL`, `HGETALL`, `HLEN`, `HMGET`,
    /// `HMSET`, `HSETNX`, `HKEYS`, `HVALS`, `HSTRLEN`), as its validated argument vector.
    Hash(Vec<Vec<u8>>),
    /// A string or key command no safeguard of ours sends (`MGET`, `MSET`, `MSETNX`,
    /// `GETSET`, `SETEX`, `PSETEX`, `STRLEN`, `APPEND`, `SETRANGE`, `GETRANGE`, `COPY`, `DBSIZE`,
    /// `UNLINK`, `EXPIRETIME`, `PEXPIRETIME`, `MOVE`, `SWAPDB`, ... `server/strings.rs` runs them), as its argument vector, checked against the command table (arity); its
    /// arguments are read when it runs, as Redis reads them (so inside `MULTI` a bad number
    /// fails at `EXEC`, not when queued).
    Strings(Vec<Vec<u8>>),
    /// `INFO [section ...]`, as its argument vector (`server/info.rs`).
    Info(Vec<Vec<u8>>),
    /// A list, set or sorted-set command (see [`COLLECTION_COMMANDS`]), as its argument
    /// vector checked against the command table (arity); read when it runs, as `Strings`.
    Collection(Vec<Vec<u8>>),
    /// `DELEX key [IFEQ v | IFNE v]` (Redis 8.4 semantics).
    DelEx(Vec<u8>, DelexCondition),
    /// `EVAL script numkeys key... arg...` (`EVAL_RO` when `read_only`).
    Eval {
        /// The script source.
        script: Vec<u8>,
        /// KEYS.
        keys: Vec<Vec<u8>>,
        /// ARGV.
        args: Vec<Vec<u8>>,
        /// `EVAL_RO`: the script may not write.
        read_only: bool,
    },
    /// `EVALSHA sha1 numkeys key... arg...` (`EVALSHA_RO` when `read_only`).
    EvalSha {
        /// The SHA1 of the script, as 40 hex digits (any case).
        sha1: String,
        /// KEYS.
        keys: Vec<Vec<u8>>,
        /// ARGV.
        args: Vec<Vec<u8>>,
        /// `EVALSHA_RO`: the script may not write.
        read_only: bool,
    },
    /// `SCRIPT LOAD script`.
    ScriptLoad(Vec<u8>),
    /// `SCRIPT FLUSH`.
    ScriptFlush,
    /// `SCRIPT EXISTS sha1 [sha1 ...]`.
    ScriptExists(Vec<String>),
    /// `FLUSHALL`: empty every database.
    FlushAll,
    /// Connection housekeeping a client sends: `CLIENT SETINFO`, `CLIENT SETNAME`, `SELECT`
    /// (which changes the connection's database), `HELLO`, ...
    Housekeeping(Vec<Vec<u8>>),
    /// `MULTI`, `EXEC`, `DISCARD`, `WATCH`, `UNWATCH`: they act on the connection's
    /// transaction state, so they run through [`Redis::apply_in`](super::Redis::apply_in) with
    /// the connection's [`Session`](super::Session).
    Transaction(Transaction),
    /// `FLUSHDB`: empty the connection's database.
    FlushDb,
}

/// A command on a connection's transaction state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transaction {
    /// `MULTI`: queue the following commands.
    Multi,
    /// `EXEC`: run the queue, or answer nil when a watched key changed.
    Exec,
    /// `DISCARD`: drop the queue and the watched keys.
    Discard,
    /// `WATCH key [key ...]`.
    Watch(Vec<Vec<u8>>),
    /// `UNWATCH`.
    Unwatch,
}

/// `ERR syntax error`.
pub const SYNTAX_ERROR: &str = "ERR syntax error";
/// The error for an argument that is not a 64-bit integer (or out of range).
pub const NOT_AN_INTEGER_ERROR: &str = "ERR value is not an integer or out of range";
/// The error for an `EVALSHA` of a script that is not in the script cache.
pub const NOSCRIPT_ERROR: &str = "NOSCRIPT No matching script. Please use EVAL.";
/// The error a read-only replica sends for a write.
pub const READONLY_ERROR: &str = "READONLY You can't write against a read only replica.";

/// The longest part of a user-supplied name Redis quotes in an error.
const QUOTE_LIMIT: usize = 128;

/// Which arguments of a command are keys (for the cluster slot check before parsing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyRule {
    /// No keys.
    None,
    /// `argv[1]`.
    First,
    /// `argv[1..]`.
    AllFromFirst,
    /// `EVAL`/`EVALSHA`: `argv[2]` says how many keys follow it.
    Eval,
    /// `MSET`/`MSETNX`: `argv[1]`, `argv[3]`, ... (each key before its value).
    Pairs,
    /// `BLPOP`/`BRPOP`/`BZPOPMIN`/`BZPOPMAX`: `argv[1..]` but the last (the timeout).
    AllButLast,
    /// `BITOP`: `argv[2..]` (the destination, then the sources).
    FromSecond,
    /// `LMOVE`/`SMOVE`: `argv[1]` and `argv[2]`.
    FirstTwo,
    /// `SINTERCARD`: `argv[1]` says how many keys follow it.
    Counted,
}

/// One entry of the command table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    /// The name Redis reports in errors: lower case, `command|subcommand` for subcommands.
    pub(crate) fullname: &'static str,
    /// Redis's arity: `n` means exactly `n` arguments (name included), `-n` at least `n`.
    pub(crate) arity: i32,
    /// A write command: refused by a read-only replica.
    pub(crate) write: bool,
    /// Where the keys are.
    pub(crate) keys: KeyRule,
}

const fn spec(fullname: &'static str, arity: i32, write: bool, keys: KeyRule) -> Spec {
    Spec {
        fullname,
        arity,
        write,
        keys,
    }
}

/// The plain commands (arity and flags as in Redis 7.0's command table; `delex` as in 8.4).
const COMMANDS: [Spec; 153] = [
    spec("auth", -2, false, KeyRule::None),
    spec("readonly", 1, false, KeyRule::None),
    spec("readwrite", 1, false, KeyRule::None),
    spec("hset", -4, true, KeyRule::First),
    spec("hget", 3, false, KeyRule::First),
    spec("hincrby", 4, true, KeyRule::First),
    spec("hexists", 3, false, KeyRule::First),
    spec("hdel", -3, true, KeyRule::First),
    spec("hgetall", 2, false, KeyRule::First),
    spec("hlen", 2, false, KeyRule::First),
    spec("ttl", 2, false, KeyRule::First),
    spec("expire", -3, true, KeyRule::First),
    spec("expireat", -3, true, KeyRule::First),
    spec("pexpireat", -3, true, KeyRule::First),
    spec("persist", 2, true, KeyRule::First),
    spec("getdel", 2, true, KeyRule::First),
    spec("incrby", 3, true, KeyRule::First),
    spec("decr", 2, true, KeyRule::First),
    spec("decrby", 3, true, KeyRule::First),
    spec("echo", 2, false, KeyRule::None),
    spec("type", 2, false, KeyRule::First),
    spec("publish", 3, false, KeyRule::None),
    spec("spublish", 3, false, KeyRule::First),
    spec("subscribe", -2, false, KeyRule::None),
    spec("unsubscribe", -1, false, KeyRule::None),
    spec("psubscribe", -2, false, KeyRule::None),
    spec("punsubscribe", -1, false, KeyRule::None),
    spec("ssubscribe", -2, false, KeyRule::AllFromFirst),
    spec("sunsubscribe", -1, false, KeyRule::AllFromFirst),
    spec("wait", 3, false, KeyRule::None),
    spec("time", 1, false, KeyRule::None),
    spec("info", -1, false, KeyRule::None),
    spec("ping", -1, false, KeyRule::None),
    spec("get", 2, false, KeyRule::First),
    spec("set", -3, true, KeyRule::First),
    spec("setnx", 3, true, KeyRule::First),
    spec("del", -2, true, KeyRule::AllFromFirst),
    spec("exists", -2, false, KeyRule::AllFromFirst),
    spec("incr", 2, true, KeyRule::First),
    spec("pexpire", -3, true, KeyRule::First),
    spec("pttl", 2, false, KeyRule::First),
    spec("delex", -2, true, KeyRule::First),
    spec("eval", -3, false, KeyRule::Eval),
    spec("evalsha", -3, false, KeyRule::Eval),
    spec("eval_ro", -3, false, KeyRule::Eval),
    spec("evalsha_ro", -3, false, KeyRule::Eval),
    spec("flushall", -1, true, KeyRule::None),
    spec("flushdb", -1, true, KeyRule::None),
    spec("select", 2, false, KeyRule::None),
    spec("hello", -1, false, KeyRule::None),
    spec("multi", 1, false, KeyRule::None),
    spec("exec", 1, false, KeyRule::None),
    spec("discard", 1, false, KeyRule::None),
    spec("watch", -2, false, KeyRule::AllFromFirst),
    spec("unwatch", 1, false, KeyRule::None),
    spec("mget", -2, false, KeyRule::AllFromFirst),
    spec("mset", -3, true, KeyRule::Pairs),
    spec("msetnx", -3, true, KeyRule::Pairs),
    spec("getset", 3, true, KeyRule::First),
    spec("setex", 4, true, KeyRule::First),
    spec("psetex", 4, true, KeyRule::First),
    spec("strlen", 2, false, KeyRule::First),
    spec("append", 3, true, KeyRule::First),
    spec("setrange", 4, true, KeyRule::First),
    spec("copy", -3, true, KeyRule::FirstTwo),
    spec("dbsize", 1, false, KeyRule::None),
    spec("getrange", 4, false, KeyRule::First),
    spec("unlink", -2, true, KeyRule::AllFromFirst),
    spec("expiretime", 2, false, KeyRule::First),
    spec("pexpiretime", 2, false, KeyRule::First),
    spec("hmget", -3, false, KeyRule::First),
    spec("hmset", -4, true, KeyRule::First),
    spec("hsetnx", 4, true, KeyRule::First),
    spec("hkeys", 2, false, KeyRule::First),
    spec("hvals", 2, false, KeyRule::First),
    spec("hstrlen", 3, false, KeyRule::First),
    // Lists, sets and sorted sets (`Command::Collection`), arities as in Redis 7.0.
    spec("lpush", -3, true, KeyRule::First),
    spec("rpush", -3, true, KeyRule::First),
    spec("lpushx", -3, true, KeyRule::First),
    spec("rpushx", -3, true, KeyRule::First),
    spec("lpop", -2, true, KeyRule::First),
    spec("rpop", -2, true, KeyRule::First),
    spec("llen", 2, false, KeyRule::First),
    spec("lindex", 3, false, KeyRule::First),
    spec("lrange", 4, false, KeyRule::First),
    spec("lrem", 4, true, KeyRule::First),
    spec("lset", 4, true, KeyRule::First),
    spec("ltrim", 4, true, KeyRule::First),
    spec("linsert", 5, true, KeyRule::First),
    spec("sadd", -3, true, KeyRule::First),
    spec("srem", -3, true, KeyRule::First),
    spec("sismember", 3, false, KeyRule::First),
    spec("smismember", -3, false, KeyRule::First),
    spec("smembers", 2, false, KeyRule::First),
    spec("scard", 2, false, KeyRule::First),
    spec("spop", -2, true, KeyRule::First),
    spec("srandmember", -2, false, KeyRule::First),
    spec("zadd", -4, true, KeyRule::First),
    spec("zincrby", 4, true, KeyRule::First),
    spec("zrem", -3, true, KeyRule::First),
    spec("zscore", 3, false, KeyRule::First),
    spec("zmscore", -3, false, KeyRule::First),
    spec("zcard", 2, false, KeyRule::First),
    spec("zcount", 4, false, KeyRule::First),
    spec("zrank", 3, false, KeyRule::First),
    spec("zrevrank", 3, false, KeyRule::First),
    spec("zrange", -4, false, KeyRule::First),
    spec("zrevrange", -4, false, KeyRule::First),
    spec("zrangebyscore", -4, false, KeyRule::First),
    spec("zrevrangebyscore", -4, false, KeyRule::First),
    spec("zremrangebyscore", 4, true, KeyRule::First),
    spec("zremrangebyrank", 4, true, KeyRule::First),
    spec("zpopmin", -2, true, KeyRule::First),
    spec("zpopmax", -2, true, KeyRule::First),
    spec("zrangebylex", -4, false, KeyRule::First),
    spec("zrevrangebylex", -4, false, KeyRule::First),
    spec("zlexcount", 4, false, KeyRule::First),
    spec("zremrangebylex", 4, true, KeyRule::First),
    spec("rpoplpush", 3, true, KeyRule::AllFromFirst),
    spec("lmove", 5, true, KeyRule::FirstTwo),
    spec("brpoplpush", 4, true, KeyRule::FirstTwo),
    spec("blmove", 6, true, KeyRule::FirstTwo),
    spec("smove", 4, true, KeyRule::FirstTwo),
    spec("sinter", -2, false, KeyRule::AllFromFirst),
    spec("sunion", -2, false, KeyRule::AllFromFirst),
    spec("sdiff", -2, false, KeyRule::AllFromFirst),
    spec("sinterstore", -3, true, KeyRule::AllFromFirst),
    spec("sunionstore", -3, true, KeyRule::AllFromFirst),
    spec("sdiffstore", -3, true, KeyRule::AllFromFirst),
    spec("rename", 3, true, KeyRule::FirstTwo),
    spec("renamenx", 3, true, KeyRule::FirstTwo),
    spec("touch", -2, false, KeyRule::AllFromFirst),
    spec("getex", -2, true, KeyRule::First),
    spec("lpos", -3, false, KeyRule::First),
    spec("sintercard", -3, false, KeyRule::Counted),
    spec("keys", 2, false, KeyRule::None),
    spec("scan", -2, false, KeyRule::None),
    spec("hscan", -3, false, KeyRule::First),
    spec("sscan", -3, false, KeyRule::First),
    spec("zscan", -3, false, KeyRule::First),
    spec("move", 3, true, KeyRule::First),
    spec("swapdb", 3, true, KeyRule::None),
    spec("setbit", 4, true, KeyRule::First),
    spec("getbit", 3, false, KeyRule::First),
    spec("bitcount", -2, false, KeyRule::First),
    spec("bitpos", -3, false, KeyRule::First),
    spec("bitop", -4, true, KeyRule::FromSecond),
    spec("role", 1, false, KeyRule::None),
    spec("reset", 1, false, KeyRule::None),
    spec("blpop", -3, true, KeyRule::AllButLast),
    spec("brpop", -3, true, KeyRule::AllButLast),
    spec("bzpopmin", -3, true, KeyRule::AllButLast),
    spec("bzpopmax", -3, true, KeyRule::AllButLast),
];

/// The list, set and sorted-set commands, run by `server/collections.rs`.
pub const COLLECTION_COMMANDS: [&str; 62] = [
    "blpop",
    "brpop",
    "bzpopmin",
    "bzpopmax",
    "lpush",
    "rpush",
    "lpushx",
    "rpushx",
    "lpop",
    "rpop",
    "llen",
    "lindex",
    "lrange",
    "lrem",
    "lset",
    "ltrim",
    "linsert",
    "sadd",
    "srem",
    "sismember",
    "smismember",
    "smembers",
    "scard",
    "spop",
    "srandmember",
    "zadd",
    "zincrby",
    "zrem",
    "zscore",
    "zmscore",
    "zcard",
    "zcount",
    "zrank",
    "zrevrank",
    "zrange",
    "zrevrange",
    "zrangebyscore",
    "zrevrangebyscore",
    "zremrangebyscore",
    "zremrangebyrank",
    "zpopmin",
    "zpopmax",
    "zrangebylex",
    "zrevrangebylex",
    "zlexcount",
    "zremrangebylex",
    "rpoplpush",
    "lmove",
    "brpoplpush",
    "blmove",
    "smove",
    "sinter",
    "sunion",
    "sdiff",
    "sinterstore",
    "sunionstore",
    "sdiffstore",
    "lpos",
    "sintercard",
    "hscan",
    "sscan",
    "zscan",
];

/// Commands that only exist as containers of subcommands.
const CONTAINERS: [Spec; 4] = [
    spec("client", -2, false, KeyRule::None),
    spec("pubsub", -2, false, KeyRule::None),
    spec("script", -2, false, KeyRule::None),
    spec("cluster", -2, false, KeyRule::None),
];

/// The supported subcommands, and every subcommand of `CLUSTER` in Redis 7.0 with its arity
/// (outside cluster mode each is refused the same way, after the arity check).
const SUBCOMMANDS: [Spec; 40] = [
    spec("client|setinfo", 4, false, KeyRule::None),
    spec("client|setname", 3, false, KeyRule::None),
    spec("client|getname", 2, false, KeyRule::None),
    spec("client|id", 2, false, KeyRule::None),
    spec("cluster|addslots", -3, false, KeyRule::None),
    spec("cluster|addslotsrange", -4, false, KeyRule::None),
    spec("cluster|bumpepoch", 2, false, KeyRule::None),
    spec("cluster|count-failure-reports", 3, false, KeyRule::None),
    spec("cluster|countkeysinslot", 3, false, KeyRule::None),
    spec("cluster|delslots", -3, false, KeyRule::None),
    spec("cluster|delslotsrange", -4, false, KeyRule::None),
    spec("cluster|failover", -2, false, KeyRule::None),
    spec("cluster|flushslots", 2, false, KeyRule::None),
    spec("cluster|forget", 3, false, KeyRule::None),
    spec("cluster|getkeysinslot", 4, false, KeyRule::None),
    spec("cluster|help", 2, false, KeyRule::None),
    spec("cluster|info", 2, false, KeyRule::None),
    spec("cluster|keyslot", 3, false, KeyRule::None),
    spec("cluster|links", 2, false, KeyRule::None),
    spec("cluster|meet", -4, false, KeyRule::None),
    spec("cluster|myid", 2, false, KeyRule::None),
    spec("cluster|nodes", 2, false, KeyRule::None),
    spec("cluster|replicas", 3, false, KeyRule::None),
    spec("cluster|replicate", 3, false, KeyRule::None),
    spec("cluster|reset", -2, false, KeyRule::None),
    spec("cluster|saveconfig", 2, false, KeyRule::None),
    spec("cluster|set-config-epoch", 3, false, KeyRule::None),
    spec("cluster|setslot", -4, false, KeyRule::None),
    spec("cluster|shards", 2, false, KeyRule::None),
    spec("cluster|slaves", 3, false, KeyRule::None),
    spec("cluster|slots", 2, false, KeyRule::None),
    spec("pubsub|channels", -2, false, KeyRule::None),
    spec("pubsub|numsub", -2, false, KeyRule::None),
    spec("pubsub|numpat", 2, false, KeyRule::None),
    spec("pubsub|shardchannels", -2, false, KeyRule::None),
    spec("pubsub|shardnumsub", -2, false, KeyRule::None),
    spec("pubsub|help", 2, false, KeyRule::None),
    spec("script|load", 3, false, KeyRule::None),
    spec("script|flush", -2, false, KeyRule::None),
    spec("script|exists", -3, false, KeyRule::None),
];

/// What is known about a command before its options are parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Precheck {
    /// A write command.
    pub(crate) write: bool,
    /// Its keys, as the cluster slot check finds them.
    pub(crate) keys: Vec<Vec<u8>>,
}

/// Looks the command up in the table and checks its arity, with Redis's error texts.
pub(crate) fn lookup(argv: &[Vec<u8>]) -> Result<Spec, Reply> {
    let Some(name) = argv.first() else {
        return Err(unknown_command_error(&[Vec::new()]));
    };
    // The table's names are lower-case ASCII: comparing without case is comparing the
    // lower-cased name, without making it.
    let named = |fullname: &str| name.eq_ignore_ascii_case(fullname.as_bytes());
    if let Some(container) = CONTAINERS.iter().find(|c| named(c.fullname)) {
        if argv.len() == 1 {
            return Err(wrong_arity_error(container.fullname));
        }
        let mut fullname = name.to_ascii_lowercase();
        fullname.push(b'|');
        fullname.extend(argv[1].to_ascii_lowercase());
        let Some(sub) = SUBCOMMANDS
            .iter()
            .find(|s| s.fullname.as_bytes() == fullname.as_slice())
        else {
            return Err(unknown_subcommand_error(name, &argv[1]));
        };
        check_arity(sub, argv.len())?;
        return Ok(*sub);
    }
    let Some(found) = COMMANDS.iter().find(|c| named(c.fullname)) else {
        return Err(unknown_command_error(argv));
    };
    check_arity(found, argv.len())?;
    Ok(*found)
}

/// The subcommand `argv[1]` of the container `argv[0]` (any case), if the table has it.
pub(crate) fn subcommand_spec(argv: &[Vec<u8>]) -> Option<Spec> {
    let (container, sub) = (argv.first()?, argv.get(1)?);
    SUBCOMMANDS.iter().copied().find(|spec| {
        spec.fullname.split_once('|').is_some_and(|(outer, inner)| {
            container.eq_ignore_ascii_case(outer.as_bytes())
                && sub.eq_ignore_ascii_case(inner.as_bytes())
        })
    })
}

/// The commands that block their connection until another client pushes (lower case); a script
/// may not call them, nor may a safeguard file send them.
pub const BLOCKING_COMMANDS: [&str; 6] = [
    "blpop",
    "brpop",
    "bzpopmin",
    "bzpopmax",
    "brpoplpush",
    "blmove",
];

/// The plain command named `lower_name` (for calls made from scripts).
pub(crate) fn plain_spec(lower_name: &str) -> Option<Spec> {
    COMMANDS.iter().find(|c| c.fullname == lower_name).copied()
}

/// True when `argc` arguments (name included) satisfy Redis's `arity`.
pub(crate) fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = i64::try_from(argc).unwrap_or(i64::MAX);
    let arity = i64::from(arity);
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

fn check_arity(spec: &Spec, argc: usize) -> Result<(), Reply> {
    if arity_ok(spec.arity, argc) {
        Ok(())
    } else {
        Err(wrong_arity_error(spec.fullname))
    }
}

/// Looks the command up and finds its write flag and keys, without parsing its options (what
/// Redis knows before the cluster and read-only checks).
pub(crate) fn precheck(argv: &[Vec<u8>]) -> Result<Precheck, Reply> {
    let spec = lookup(argv)?;
    Ok(Precheck {
        write: spec.write,
        keys: spec.keys.of(argv).into_iter().map(<[u8]>::to_vec).collect(),
    })
}

impl KeyRule {
    /// The keys of an argument vector whose arity was checked against the table.
    fn of(self, argv: &[Vec<u8>]) -> Vec<&[u8]> {
        match self {
            KeyRule::None => Vec::new(),
            KeyRule::First => vec![argv[1].as_slice()],
            KeyRule::AllFromFirst => argv[1..].iter().map(Vec::as_slice).collect(),
            KeyRule::FromSecond => argv[2..].iter().map(Vec::as_slice).collect(),
            KeyRule::AllButLast => argv[1..argv.len() - 1].iter().map(Vec::as_slice).collect(),
            KeyRule::Eval => counted_keys_for_slot_check(argv, 2),
            KeyRule::Counted => counted_keys_for_slot_check(argv, 1),
            KeyRule::Pairs => argv[1..].iter().step_by(2).map(Vec::as_slice).collect(),
            KeyRule::FirstTwo => argv[1..3].iter().map(Vec::as_slice).collect(),
        }
    }
}

/// The keys of an `EVAL`/`EVALSHA` (count at `argv[2]`) or a `SINTERCARD` (at `argv[1]`) as
/// Redis finds them for the cluster check: when `numkeys` is not a strict integer Redis falls
/// back to C `atoi` (so `2abc` counts as 2), and a count outside `1..=available` means no keys
/// (the command itself reports the error later).
fn counted_keys_for_slot_check(argv: &[Vec<u8>], at: usize) -> Vec<&[u8]> {
    let available = argv.len().saturating_sub(at + 1);
    let count = parse_i64(&argv[at]).unwrap_or_else(|| c_atoi(&argv[at]));
    match usize::try_from(count) {
        Ok(n) if n >= 1 && n <= available => {
            argv[at + 1..at + 1 + n].iter().map(Vec::as_slice).collect()
        }
        _ => Vec::new(),
    }
}

/// C `atoi`: optional leading whitespace and sign, then as many digits as there are.
fn c_atoi(bytes: &[u8]) -> i64 {
    let mut rest = bytes;
    while let [first, tail @ ..] = rest {
        if first.is_ascii_whitespace() {
            rest = tail;
        } else {
            break;
        }
    }
    let negative = matches!(rest.first(), Some(b'-'));
    if matches!(rest.first(), Some(b'-' | b'+')) {
        rest = &rest[1..];
    }
    let mut value: i64 = 0;
    for &digit in rest.iter().take_while(|b| b.is_ascii_digit()) {
        value = value
            .saturating_mul(10)
            .saturating_add(i64::from(digit - b'0'));
    }
    if negative {
        -value
    } else {
        value
    }
}

/// Parses a 64-bit integer exactly as Redis's `string2ll` does: optional `-`, no `+`, no
/// leading zeros (except `0` itself), no spaces, no `-0`, at most 20 bytes.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > 20 {
        return None;
    }
    if bytes == b"0" {
        return Some(0);
    }
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let (first, _) = digits.split_first()?;
    if !(b'1'..=b'9').contains(first) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut magnitude: u64 = 0;
    for &digit in digits {
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(digit - b'0'))?;
    }
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Parses an integer argument, or the error Redis sends for a non-integer.
pub(crate) fn integer_arg(bytes: &[u8]) -> Result<i64, Reply> {
    parse_i64(bytes).ok_or_else(|| Reply::error(NOT_AN_INTEGER_ERROR))
}

/// The deadline of a blocking command's `timeout` argument (seconds, a float), as Redis 7.0's
/// `getTimeoutFromObjectOrReply` reads it at `now_ms`: `None` for 0 (no deadline), else the
/// server time in milliseconds at which the command gives up. The seconds are read as
/// `strtod` reads them and their milliseconds rounded up (`ceill`), so `0.0001` is 1 ms and
/// `-0.0001` is 0; a value out of the 64-bit range (infinities too) is negative, as C's
/// conversion makes it. A deadline past the end of the 64-bit clock is none: Redis 7.0.15's
/// sum overflows there and the command waits on (measured against it).
pub fn blocking_deadline_ms(timeout: &[u8], now_ms: u64) -> Result<Option<u64>, Reply> {
    let seconds = crate::redis::collection::parse_score(timeout)
        .ok_or_else(|| Reply::error("ERR timeout is not a float or out of range"))?;
    let millis = (seconds * 1000.0).ceil();
    // 2^63 as a float: every finite value below it in magnitude converts.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let millis = if millis.is_finite() && millis.abs() < LIMIT {
        millis as i64
    } else {
        i64::MIN
    };
    if millis < 0 {
        return Err(Reply::error("ERR timeout is negative"));
    }
    let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
    Ok(millis
        .checked_add(now)
        .filter(|_| millis > 0)
        .map(|at| at as u64))
}

/// `ERR wrong number of arguments for '<fullname>' command`.
pub fn wrong_arity_error(fullname: &str) -> Reply {
    Reply::error(format!(
        "ERR wrong number of arguments for '{fullname}' command"
    ))
}

/// Redis 7.0's error for an unknown command: the name (up to 128 bytes) and the arguments,
/// each quoted and followed by a space, until 128 bytes of them are shown.
pub fn unknown_command_error(argv: &[Vec<u8>]) -> Reply {
    let name = c_string_prefix(argv.first().map_or(&[][..], Vec::as_slice), QUOTE_LIMIT);
    let mut args: Vec<u8> = Vec::new();
    for arg in argv.iter().skip(1) {
        if args.len() >= QUOTE_LIMIT {
            break;
        }
        let room = QUOTE_LIMIT - args.len();
        args.push(b'\'');
        args.extend_from_slice(c_string_prefix(arg, room));
        args.extend_from_slice(b"' ");
    }
    let mut text = b"ERR unknown command '".to_vec();
    text.extend_from_slice(name);
    text.extend_from_slice(b"', with args beginning with: ");
    text.extend_from_slice(&args);
    Reply::Error(error_text(&text))
}

/// Redis 7.0's error for an unknown subcommand of a container command (`CLIENT`, `SCRIPT`).
fn unknown_subcommand_error(container: &[u8], subcommand: &[u8]) -> Reply {
    let mut text = b"ERR unknown subcommand '".to_vec();
    text.extend_from_slice(c_string_prefix(subcommand, QUOTE_LIMIT));
    text.extend_from_slice(b"'. Try ");
    text.extend_from_slice(&container.to_ascii_uppercase());
    text.extend_from_slice(b" HELP.");
    Reply::Error(error_text(&text))
}

/// What C's `%.Ns` prints of a byte string: up to the first NUL, at most `limit` bytes.
fn c_string_prefix(bytes: &[u8], limit: usize) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end.min(limit)]
}

/// An error text as Redis sends it: newlines become spaces (they would break the protocol).
fn error_text(bytes: &[u8]) -> String {
    let mapped: Vec<u8> = bytes
        .iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect();
    String::from_utf8_lossy(&mapped).into_owned()
}

/// True for a byte string that is an ASCII option name, in any case.
pub(crate) fn is_option(bytes: &[u8], name: &str) -> bool {
    bytes.eq_ignore_ascii_case(name.as_bytes())
}

/// True when every byte is printable ASCII without spaces (`!` to `~`), the rule for client
/// names and library attributes.
fn is_printable_token(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| (b'!'..=b'~').contains(b))
}

impl Command {
    /// Parses an argument vector (command name first, any case) the way Redis 7 validates it.
    ///
    /// Returns the error reply Redis would send for an unknown command, a wrong number of
    /// arguments or an invalid option.
    pub fn parse(argv: &[Vec<u8>]) -> Result<Command, Reply> {
        let found = lookup(argv)?;
        match found.fullname {
            "ping" => parse_ping(argv),
            "get" => Ok(Command::Get(argv[1].clone())),
            "set" => parse_set(argv),
            "setnx" => Ok(Command::SetNx(argv[1].clone(), argv[2].clone())),
            "del" => Ok(Command::Del(argv[1..].to_vec())),
            "exists" => Ok(Command::Exists(argv[1..].to_vec())),
            "incr" => Ok(Command::Incr(argv[1].clone())),
            "pexpire" => parse_pexpire(argv),
            "ttl" => Ok(Command::Ttl(argv[1].clone())),
            "expire" => parse_expire(argv, ExpireKind::Seconds),
            "expireat" => parse_expire(argv, ExpireKind::AtSeconds),
            "pexpireat" => parse_expire(argv, ExpireKind::AtMillis),
            "persist" => Ok(Command::Persist(argv[1].clone())),
            "getdel" => Ok(Command::GetDel(argv[1].clone())),
            "incrby" => Ok(Command::IncrBy(argv[1].clone(), integer_arg(&argv[2])?)),
            "decr" => Ok(Command::DecrBy(argv[1].clone(), 1)),
            "decrby" => Ok(Command::DecrBy(argv[1].clone(), integer_arg(&argv[2])?)),
            "echo" => Ok(Command::Echo(argv[1].clone())),
            "type" => Ok(Command::Type(argv[1].clone())),
            "publish" => Ok(Command::Publish(argv[1].clone(), argv[2].clone())),
            "spublish" | "subscribe" | "unsubscribe" | "psubscribe" | "punsubscribe"
            | "ssubscribe" | "sunsubscribe" => Ok(Command::PubSub(argv.to_vec())),
            name if name.starts_with("pubsub|") => Ok(Command::PubSub(argv.to_vec())),
            "wait" => parse_wait(argv),
            "time" => Ok(Command::Time),
            "info" => Ok(Command::Info(argv.to_vec())),
            "hset" if argv.len() % 2 == 1 => Err(wrong_arity_error("hset")),
            "hmset" if argv.len() % 2 == 1 => Err(wrong_arity_error("hmset")),
            "hset" | "hget" | "hincrby" | "hexists" | "hdel" | "hgetall" | "hlen" | "hmget"
            | "hmset" | "hsetnx" | "hkeys" | "hvals" | "hstrlen" => {
                Ok(Command::Hash(argv.to_vec()))
            }
            "mget" | "mset" | "msetnx" | "getset" | "setex" | "psetex" | "strlen" | "append"
            | "getrange" | "unlink" | "expiretime" | "pexpiretime" | "rename" | "renamenx"
            | "touch" | "getex" | "keys" | "scan" | "setrange" | "copy" | "dbsize" | "move"
            | "swapdb" | "setbit" | "getbit" | "bitcount" | "bitpos" | "bitop" => {
                Ok(Command::Strings(argv.to_vec()))
            }
            "pttl" => Ok(Command::PTtl(argv[1].clone())),
            name if COLLECTION_COMMANDS.contains(&name) => Ok(Command::Collection(argv.to_vec())),
            "multi" => Ok(Command::Transaction(Transaction::Multi)),
            "exec" => Ok(Command::Transaction(Transaction::Exec)),
            "discard" => Ok(Command::Transaction(Transaction::Discard)),
            "watch" => Ok(Command::Transaction(Transaction::Watch(argv[1..].to_vec()))),
            "unwatch" => Ok(Command::Transaction(Transaction::Unwatch)),
            "delex" => parse_delex(argv),
            "eval" | "eval_ro" => parse_eval(argv, found.fullname == "eval_ro"),
            "evalsha" | "evalsha_ro" => parse_evalsha(argv, found.fullname == "evalsha_ro"),
            "flushall" => parse_flush(argv).map(|()| Command::FlushAll),
            "flushdb" => parse_flush(argv).map(|()| Command::FlushDb),
            "select" => parse_select(argv),
            "hello" => parse_hello(argv),
            "auth" => parse_auth(argv),
            "readonly" | "readwrite" | "role" | "reset" => Ok(Command::Housekeeping(argv.to_vec())),
            "client|getname" | "client|id" => Ok(Command::Housekeeping(argv.to_vec())),
            name if name.starts_with("cluster|") => Ok(Command::Housekeeping(argv.to_vec())),
            "client|setinfo" => parse_client_setinfo(argv),
            "client|setname" => parse_client_setname(argv),
            "script|load" => Ok(Command::ScriptLoad(argv[2].clone())),
            "script|flush" => parse_script_flush(argv),
            "script|exists" => Ok(Command::ScriptExists(
                argv[2..]
                    .iter()
                    .map(|sha| String::from_utf8_lossy(sha).into_owned())
                    .collect(),
            )),
            other => unreachable!("command table entry {other} has no parser"),
        }
    }

    /// Renders the command as the argument vector a client sends.
    pub fn to_argv(&self) -> Vec<Vec<u8>> {
        let word = |w: &str| w.as_bytes().to_vec();
        let number = |n: i64| n.to_string().into_bytes();
        match self {
            Command::Ping(None) => vec![word("PING")],
            Command::Ping(Some(message)) => vec![word("PING"), message.clone()],
            Command::Get(key) => vec![word("GET"), key.clone()],
            Command::Set {
                key,
                value,
                condition,
                expiry,
                get,
            } => {
                let mut argv = vec![word("SET"), key.clone(), value.clone()];
                match condition {
                    SetCondition::Always => {}
                    SetCondition::IfMissing => argv.push(word("NX")),
                    SetCondition::IfExists => argv.push(word("XX")),
                }
                if *get {
                    argv.push(word("GET"));
                }
                match expiry {
                    SetExpiry::Clear => {}
                    SetExpiry::Seconds(s) => argv.extend([word("EX"), number(*s)]),
                    SetExpiry::Millis(ms) => argv.extend([word("PX"), number(*ms)]),
                    SetExpiry::AtSeconds(s) => argv.extend([word("EXAT"), number(*s)]),
                    SetExpiry::AtMillis(ms) => argv.extend([word("PXAT"), number(*ms)]),
                    SetExpiry::Keep => argv.push(word("KEEPTTL")),
                }
                argv
            }
            Command::SetNx(key, value) => vec![word("SETNX"), key.clone(), value.clone()],
            Command::Del(keys) => prefixed(word("DEL"), keys),
            Command::Exists(keys) => prefixed(word("EXISTS"), keys),
            Command::Incr(key) => vec![word("INCR"), key.clone()],
            Command::PExpire(key, ttl_ms) => vec![word("PEXPIRE"), key.clone(), number(*ttl_ms)],
            Command::PTtl(key) => vec![word("PTTL"), key.clone()],
            Command::Ttl(key) => vec![word("TTL"), key.clone()],
            Command::Expire(key, kind, amount, flags) => {
                let mut argv = vec![
                    kind.name().to_ascii_uppercase().into_bytes(),
                    key.clone(),
                    number(*amount),
                ];
                argv.extend(flags.words());
                argv
            }
            Command::Persist(key) => vec![word("PERSIST"), key.clone()],
            Command::GetDel(key) => vec![word("GETDEL"), key.clone()],
            Command::IncrBy(key, n) => vec![word("INCRBY"), key.clone(), number(*n)],
            Command::DecrBy(key, n) => vec![word("DECRBY"), key.clone(), number(*n)],
            Command::Echo(message) => vec![word("ECHO"), message.clone()],
            Command::Type(key) => vec![word("TYPE"), key.clone()],
            Command::Publish(channel, message) => {
                vec![word("PUBLISH"), channel.clone(), message.clone()]
            }
            Command::Wait(replicas, timeout) => {
                vec![word("WAIT"), number(*replicas), number(*timeout)]
            }
            Command::Time => vec![word("TIME")],
            Command::Hash(argv)
            | Command::Strings(argv)
            | Command::Collection(argv)
            | Command::Info(argv) => argv.clone(),
            Command::DelEx(key, condition) => match condition {
                DelexCondition::Always => vec![word("DELEX"), key.clone()],
                DelexCondition::IfEqual(v) => {
                    vec![word("DELEX"), key.clone(), word("IFEQ"), v.clone()]
                }
                DelexCondition::IfNotEqual(v) => {
                    vec![word("DELEX"), key.clone(), word("IFNE"), v.clone()]
                }
            },
            Command::Eval {
                script,
                keys,
                args,
                read_only,
            } => {
                let name = if *read_only { "EVAL_RO" } else { "EVAL" };
                script_call_argv(word(name), script.clone(), keys, args)
            }
            Command::EvalSha {
                sha1,
                keys,
                args,
                read_only,
            } => {
                let name = if *read_only { "EVALSHA_RO" } else { "EVALSHA" };
                script_call_argv(word(name), sha1.clone().into_bytes(), keys, args)
            }
            Command::ScriptLoad(source) => vec![word("SCRIPT"), word("LOAD"), source.clone()],
            Command::ScriptFlush => vec![word("SCRIPT"), word("FLUSH")],
            Command::ScriptExists(shas) => {
                let mut argv = vec![word("SCRIPT"), word("EXISTS")];
                argv.extend(shas.iter().map(|s| s.clone().into_bytes()));
                argv
            }
            Command::FlushAll => vec![word("FLUSHALL")],
            Command::FlushDb => vec![word("FLUSHDB")],
            Command::Housekeeping(argv) | Command::PubSub(argv) => argv.clone(),
            Command::Transaction(Transaction::Multi) => vec![word("MULTI")],
            Command::Transaction(Transaction::Exec) => vec![word("EXEC")],
            Command::Transaction(Transaction::Discard) => vec![word("DISCARD")],
            Command::Transaction(Transaction::Watch(keys)) => prefixed(word("WATCH"), keys),
            Command::Transaction(Transaction::Unwatch) => vec![word("UNWATCH")],
        }
    }

    /// The keys this command touches (for hash-slot checks and traces).
    pub fn keys(&self) -> Vec<&[u8]> {
        match self {
            Command::Get(key)
            | Command::Set { key, .. }
            | Command::SetNx(key, _)
            | Command::Incr(key)
            | Command::PExpire(key, _)
            | Command::PTtl(key)
            | Command::Ttl(key)
            | Command::Expire(key, ..)
            | Command::Persist(key)
            | Command::GetDel(key)
            | Command::IncrBy(key, _)
            | Command::DecrBy(key, _)
            | Command::Type(key)
            | Command::DelEx(key, _) => vec![key.as_slice()],
            Command::Hash(argv) => vec![argv[1].as_slice()],
            Command::Strings(argv) | Command::Collection(argv) | Command::PubSub(argv) => {
                lookup(argv).map_or_else(|_| Vec::new(), |spec| spec.keys.of(argv))
            }
            Command::Del(keys)
            | Command::Exists(keys)
            | Command::Transaction(Transaction::Watch(keys))
            | Command::Eval { keys, .. }
            | Command::EvalSha { keys, .. } => keys.iter().map(Vec::as_slice).collect(),
            Command::Ping(_)
            | Command::Echo(_)
            | Command::Publish(..)
            | Command::Wait(..)
            | Command::Time
            | Command::Info(_)
            | Command::ScriptLoad(_)
            | Command::ScriptFlush
            | Command::ScriptExists(_)
            | Command::FlushAll
            | Command::FlushDb
            | Command::Transaction(_)
            | Command::Housekeeping(_) => Vec::new(),
        }
    }

    /// True for a command a read-only replica refuses with `READONLY`.
    pub fn is_write(&self) -> bool {
        if let Command::Hash(argv) | Command::Strings(argv) | Command::Collection(argv) = self {
            return lookup(argv).is_ok_and(|spec| spec.write);
        }
        matches!(
            self,
            Command::Set { .. }
                | Command::SetNx(..)
                | Command::Del(_)
                | Command::Incr(_)
                | Command::PExpire(..)
                | Command::Expire(..)
                | Command::Persist(_)
                | Command::GetDel(_)
                | Command::IncrBy(..)
                | Command::DecrBy(..)
                | Command::DelEx(..)
                | Command::FlushAll
                | Command::FlushDb
        )
    }
}

fn prefixed(name: Vec<u8>, rest: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut argv = vec![name];
    argv.extend(rest.iter().cloned());
    argv
}

fn script_call_argv(
    name: Vec<u8>,
    script: Vec<u8>,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Vec<Vec<u8>> {
    let mut argv = vec![name, script, keys.len().to_string().into_bytes()];
    argv.extend(keys.iter().cloned());
    argv.extend(args.iter().cloned());
    argv
}

fn parse_ping(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    match argv.len() {
        1 => Ok(Command::Ping(None)),
        2 => Ok(Command::Ping(Some(argv[1].clone()))),
        _ => Err(wrong_arity_error("ping")),
    }
}

/// The expiry option of a `SET` as written, before its number is checked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ExpiryOption {
    Ex,
    Px,
    ExAt,
    PxAt,
}

/// `SET`: Redis's `parseExtendedStringArgumentsOrReply` (any option conflict is
/// `ERR syntax error`), then the expiry number (`getExpireMillisecondsOrReply`). The check that
/// needs the clock (`PX` + now overflowing) is made when the command runs.
fn parse_set(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    let mut condition = SetCondition::Always;
    let mut get = false;
    let mut keep_ttl = false;
    let mut expiry: Option<(ExpiryOption, &[u8])> = None;
    let mut j = 3;
    while j < argv.len() {
        let option = argv[j].as_slice();
        let next = argv.get(j + 1).map(Vec::as_slice);
        let expiry_allows = |kind: ExpiryOption| {
            !keep_ttl && expiry.is_none_or(|(set, _)| set == kind) && next.is_some()
        };
        let kind = [
            ("ex", ExpiryOption::Ex),
            ("px", ExpiryOption::Px),
            ("exat", ExpiryOption::ExAt),
            ("pxat", ExpiryOption::PxAt),
        ]
        .into_iter()
        .find(|(name, _)| is_option(option, name))
        .map(|(_, kind)| kind);
        if is_option(option, "nx") && condition != SetCondition::IfExists {
            condition = SetCondition::IfMissing;
        } else if is_option(option, "xx") && condition != SetCondition::IfMissing {
            condition = SetCondition::IfExists;
        } else if is_option(option, "get") {
            get = true;
        } else if is_option(option, "keepttl") && expiry.is_none() {
            keep_ttl = true;
        } else if let Some(kind) = kind.filter(|&kind| expiry_allows(kind)) {
            expiry = next.map(|number| (kind, number));
            j += 1;
        } else {
            return Err(Reply::error(SYNTAX_ERROR));
        }
        j += 1;
    }
    let expiry = match expiry {
        None if keep_ttl => SetExpiry::Keep,
        None => SetExpiry::Clear,
        Some((kind, number)) => set_expiry(kind, integer_arg(number)?)?,
    };
    Ok(Command::Set {
        key: argv[1].clone(),
        value: argv[2].clone(),
        condition,
        expiry,
        get,
    })
}

/// The `ERR invalid expire time in '<command>' command` error.
pub(crate) fn invalid_expire_error(command: &str) -> Reply {
    Reply::error(format!("ERR invalid expire time in '{command}' command"))
}

/// Checks a `SET` expiry number the way Redis does before it reads the clock.
fn set_expiry(kind: ExpiryOption, number: i64) -> Result<SetExpiry, Reply> {
    let in_seconds = matches!(kind, ExpiryOption::Ex | ExpiryOption::ExAt);
    if number <= 0 || (in_seconds && number > i64::MAX / 1000) {
        return Err(invalid_expire_error("set"));
    }
    Ok(match kind {
        ExpiryOption::Ex => SetExpiry::Seconds(number),
        ExpiryOption::Px => SetExpiry::Millis(number),
        ExpiryOption::ExAt => SetExpiry::AtSeconds(number),
        ExpiryOption::PxAt => SetExpiry::AtMillis(number),
    })
}

/// `EXPIRE`, `EXPIREAT`, `PEXPIREAT` (and `PEXPIRE` with options): options first (as
/// Redis checks them), then the number.
fn parse_expire(argv: &[Vec<u8>], kind: ExpireKind) -> Result<Command, Reply> {
    let flags = parse_expire_flags(&argv[3..])?;
    Ok(Command::Expire(
        argv[1].clone(),
        kind,
        integer_arg(&argv[2])?,
        flags,
    ))
}

/// The `NX|XX|GT|LT` options of an expire command, with Redis's texts for an unknown or
/// incompatible one.
fn parse_expire_flags(options: &[Vec<u8>]) -> Result<ExpireFlags, Reply> {
    let mut flags = ExpireFlags::default();
    for option in options {
        let flag = if is_option(option, "nx") {
            &mut flags.nx
        } else if is_option(option, "xx") {
            &mut flags.xx
        } else if is_option(option, "gt") {
            &mut flags.gt
        } else if is_option(option, "lt") {
            &mut flags.lt
        } else {
            let shown = String::from_utf8_lossy(c_string_prefix(option, usize::MAX)).into_owned();
            return Err(Reply::Error(error_text(
                format!("ERR Unsupported option {shown}").as_bytes(),
            )));
        };
        *flag = true;
    }
    if flags.nx && (flags.xx || flags.gt || flags.lt) {
        return Err(Reply::error(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if flags.gt && flags.lt {
        return Err(Reply::error(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    Ok(flags)
}

/// `WAIT numreplicas timeout`, with Redis's checks.
fn parse_wait(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    let replicas = integer_arg(&argv[1])?;
    let Some(timeout) = parse_i64(&argv[2]) else {
        return Err(Reply::error(
            "ERR timeout is not an integer or out of range",
        ));
    };
    if timeout < 0 {
        return Err(Reply::error("ERR timeout is negative"));
    }
    Ok(Command::Wait(replicas, timeout))
}

/// `PEXPIRE key ms [NX|XX|GT|LT ...]`: a plain one is [`Command::PExpire`] (what the
/// safeguards send), one with options [`Command::Expire`].
fn parse_pexpire(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    if argv.len() > 3 {
        return parse_expire(argv, ExpireKind::Millis);
    }
    let ttl_ms = integer_arg(&argv[2])?;
    Ok(Command::PExpire(argv[1].clone(), ttl_ms))
}

/// `DELEX key [IFEQ value | IFNE value]` (Redis 8.4). The digest conditions are refused.
fn parse_delex(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    let key = argv[1].clone();
    if argv.len() == 2 {
        return Ok(Command::DelEx(key, DelexCondition::Always));
    }
    if argv.len() != 4 {
        return Err(Reply::error(SYNTAX_ERROR));
    }
    let value = argv[3].clone();
    let condition = &argv[2];
    if is_option(condition, "ifeq") {
        Ok(Command::DelEx(key, DelexCondition::IfEqual(value)))
    } else if is_option(condition, "ifne") {
        Ok(Command::DelEx(key, DelexCondition::IfNotEqual(value)))
    } else if is_option(condition, "ifdeq") || is_option(condition, "ifdne") {
        Err(Reply::error(
            "ERR the leaselab stand-in does not support DELEX digest conditions \
             (IFDEQ|IFDNE); use IFEQ or IFNE",
        ))
    } else {
        Err(Reply::error(SYNTAX_ERROR))
    }
}

/// KEYS and ARGV of `EVAL`/`EVALSHA` after `numkeys`, with Redis's errors.
/// KEYS and ARGV of a script call.
type KeysAndArgs = (Vec<Vec<u8>>, Vec<Vec<u8>>);

fn split_script_args(argv: &[Vec<u8>]) -> Result<KeysAndArgs, Reply> {
    let numkeys = integer_arg(&argv[2])?;
    let available = i64::try_from(argv.len() - 3).unwrap_or(i64::MAX);
    if numkeys > available {
        return Err(Reply::error(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let Ok(numkeys) = usize::try_from(numkeys) else {
        return Err(Reply::error("ERR Number of keys can't be negative"));
    };
    let keys = argv[3..3 + numkeys].to_vec();
    let args = argv[3 + numkeys..].to_vec();
    Ok((keys, args))
}

fn parse_eval(argv: &[Vec<u8>], read_only: bool) -> Result<Command, Reply> {
    let (keys, args) = split_script_args(argv)?;
    Ok(Command::Eval {
        script: argv[1].clone(),
        keys,
        args,
        read_only,
    })
}

/// `EVALSHA`: a hash that is not 40 bytes long cannot match, and Redis says `NOSCRIPT` before
/// it even looks at `numkeys`.
fn parse_evalsha(argv: &[Vec<u8>], read_only: bool) -> Result<Command, Reply> {
    if argv[1].len() != 40 {
        return Err(Reply::error(NOSCRIPT_ERROR));
    }
    let (keys, args) = split_script_args(argv)?;
    let Ok(sha1) = String::from_utf8(argv[1].clone()) else {
        return Err(Reply::error(NOSCRIPT_ERROR));
    };
    Ok(Command::EvalSha {
        sha1,
        keys,
        args,
        read_only,
    })
}

/// `FLUSHALL`/`FLUSHDB [SYNC|ASYNC]`'s option.
fn parse_flush(argv: &[Vec<u8>]) -> Result<(), Reply> {
    let ok = match argv {
        [_] => true,
        [_, mode] => is_option(mode, "sync") || is_option(mode, "async"),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Reply::error(SYNTAX_ERROR))
    }
}

fn parse_script_flush(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    let ok = match argv {
        [_, _] => true,
        [_, _, mode] => is_option(mode, "sync") || is_option(mode, "async"),
        _ => false,
    };
    if ok {
        Ok(Command::ScriptFlush)
    } else {
        Err(Reply::error(
            "ERR SCRIPT FLUSH only support SYNC|ASYNC option",
        ))
    }
}

/// `SELECT index`: the index must be a 32-bit integer; which indexes exist is decided when the
/// command runs (0 to 15; in cluster mode only 0, and Redis says so differently).
fn parse_select(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    let index = integer_arg(&argv[1])?;
    if i32::try_from(index).is_err() {
        return Err(Reply::error(
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        ));
    }
    Ok(Command::Housekeeping(argv.to_vec()))
}

/// The database index of a `SELECT` housekeeping command, if it is one.
pub(crate) fn select_index(argv: &[Vec<u8>]) -> Option<i64> {
    match argv {
        [name, index] if is_option(name, "select") => parse_i64(index),
        _ => None,
    }
}

/// True when `argv` is a `HELLO` (answered with the server's description).
pub(crate) fn is_hello(argv: &[Vec<u8>]) -> bool {
    argv.first().is_some_and(|name| is_option(name, "hello"))
}

const CLIENT_NAME_ERROR: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";

/// `HELLO [protover [AUTH username password] [SETNAME clientname]]` as Redis 7.0 validates it;
/// the default user has no password, so only `AUTH default <anything>` succeeds. Protocol 3 is
/// refused at the point where Redis would switch: the stand-in speaks RESP2 only.
fn parse_hello(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    const NOPROTO: &str = "NOPROTO unsupported protocol version";
    let mut protocol = None;
    if let Some(version) = argv.get(1) {
        let version = parse_i64(version).ok_or_else(|| {
            Reply::error("ERR Protocol version is not an integer or out of range")
        })?;
        if !(2..=3).contains(&version) {
            return Err(Reply::error(NOPROTO));
        }
        protocol = Some(version);
    }
    let mut username: Option<&[u8]> = None;
    let mut client_name: Option<&[u8]> = None;
    let mut j = 2;
    while j < argv.len() {
        let more = argv.len() - 1 - j;
        let option = &argv[j];
        if is_option(option, "auth") && more >= 2 {
            username = Some(&argv[j + 1]);
            j += 2;
        } else if is_option(option, "setname") && more >= 1 {
            client_name = Some(&argv[j + 1]);
            j += 1;
        } else {
            let shown = String::from_utf8_lossy(c_string_prefix(option, usize::MAX)).into_owned();
            return Err(Reply::Error(error_text(
                format!("ERR Syntax error in HELLO option '{shown}'").as_bytes(),
            )));
        }
        j += 1;
    }
    if username.is_some_and(|user| user != b"default") {
        return Err(Reply::error(
            "WRONGPASS invalid username-password pair or user is disabled.",
        ));
    }
    if client_name.is_some_and(|name| !is_printable_token(name)) {
        return Err(Reply::error(CLIENT_NAME_ERROR));
    }
    if protocol == Some(3) {
        return Err(Reply::error(NOPROTO));
    }
    Ok(Command::Housekeeping(argv.to_vec()))
}

/// `AUTH [username] password` on a server whose default user has no password (Redis 7.0's
/// default): the password alone is refused with Redis's hint, `default` with any password is
/// accepted, any other user does not exist.
fn parse_auth(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    match argv.len() {
        2 => Err(Reply::error(
            "ERR AUTH <password> called without any password configured for the default \
             user. Are you sure your configuration is correct?",
        )),
        3 if argv[1] == b"default" => Ok(Command::Housekeeping(argv.to_vec())),
        3 => Err(Reply::error(
            "WRONGPASS invalid username-password pair or user is disabled.",
        )),
        _ => Err(Reply::error(SYNTAX_ERROR)),
    }
}

/// `CLIENT SETINFO <LIB-NAME|LIB-VER> value`, as Redis 7.2 validates it.
fn parse_client_setinfo(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    let attribute = &argv[2];
    let shown = String::from_utf8_lossy(c_string_prefix(attribute, usize::MAX)).into_owned();
    if !is_option(attribute, "lib-name") && !is_option(attribute, "lib-ver") {
        return Err(Reply::Error(error_text(
            format!("ERR Unrecognized option '{shown}'").as_bytes(),
        )));
    }
    if !is_printable_token(&argv[3]) {
        return Err(Reply::Error(error_text(
            format!("ERR {shown} cannot contain spaces, newlines or special characters.")
                .as_bytes(),
        )));
    }
    Ok(Command::Housekeeping(argv.to_vec()))
}

/// `CLIENT SETNAME name`: an empty name is allowed (it clears the name).
fn parse_client_setname(argv: &[Vec<u8>]) -> Result<Command, Reply> {
    if !is_printable_token(&argv[2]) {
        return Err(Reply::error(CLIENT_NAME_ERROR));
    }
    Ok(Command::Housekeeping(argv.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn parse_error(words: &[&str]) -> String {
        match Command::parse(&argv(words)) {
            Err(Reply::Error(text)) => text,
            other => panic!("expected an error for {words:?}, got {other:?}"),
        }
    }

    #[test]
    fn strict_integers_like_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"42"), Some(42));
        assert_eq!(parse_i64(b"-42"), Some(-42));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "007",
            "+5",
            "-0",
            " 5",
            "5 ",
            "-",
            "1.5",
            "9223372036854775808",
            "abc",
        ] {
            assert_eq!(parse_i64(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn c_atoi_is_lenient() {
        assert_eq!(c_atoi(b"2abc"), 2);
        assert_eq!(c_atoi(b"  -3"), -3);
        assert_eq!(c_atoi(b"abc"), 0);
    }

    #[test]
    fn unknown_command_text() {
        assert_eq!(
            parse_error(&["foo", "a", "b"]),
            "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
        );
        assert_eq!(
            parse_error(&["foo"]),
            "ERR unknown command 'foo', with args beginning with: "
        );
        assert_eq!(
            parse_error(&["fo\no", "a\r\nb"]),
            "ERR unknown command 'fo o', with args beginning with: 'a  b' "
        );
    }

    #[test]
    fn unknown_command_arguments_stop_after_128_bytes() {
        let long = "x".repeat(200);
        let text = parse_error(&["nope", &long, "more"]);
        let expected = format!(
            "ERR unknown command 'nope', with args beginning with: '{}' ",
            "x".repeat(128)
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn unknown_subcommand_text() {
        assert_eq!(
            parse_error(&["client", "foo"]),
            "ERR unknown subcommand 'foo'. Try CLIENT HELP."
        );
        assert_eq!(
            parse_error(&["Script", "kill"]),
            "ERR unknown subcommand 'kill'. Try SCRIPT HELP."
        );
    }

    #[test]
    fn arity_errors_name_the_command_in_lower_case() {
        assert_eq!(
            parse_error(&["SET", "k"]),
            "ERR wrong number of arguments for 'set' command"
        );
        assert_eq!(
            parse_error(&["Get", "a", "b"]),
            "ERR wrong number of arguments for 'get' command"
        );
        assert_eq!(
            parse_error(&["CLIENT"]),
            "ERR wrong number of arguments for 'client' command"
        );
        assert_eq!(
            parse_error(&["client", "setname"]),
            "ERR wrong number of arguments for 'client|setname' command"
        );
        assert_eq!(
            parse_error(&["CLIENT", "SETINFO", "LIB-NAME"]),
            "ERR wrong number of arguments for 'client|setinfo' command"
        );
        assert_eq!(
            parse_error(&["Script", "Load"]),
            "ERR wrong number of arguments for 'script|load' command"
        );
        assert_eq!(
            parse_error(&["script", "exists"]),
            "ERR wrong number of arguments for 'script|exists' command"
        );
        assert_eq!(
            parse_error(&["ping", "a", "b"]),
            "ERR wrong number of arguments for 'ping' command"
        );
        assert_eq!(
            parse_error(&["eval", "return 1"]),
            "ERR wrong number of arguments for 'eval' command"
        );
    }

    #[test]
    fn set_options() {
        let parsed = Command::parse(&argv(&["set", "k", "v", "nx", "px", "100", "get"]));
        assert_eq!(
            parsed,
            Ok(Command::Set {
                key: b"k".to_vec(),
                value: b"v".to_vec(),
                condition: SetCondition::IfMissing,
                expiry: SetExpiry::Millis(100),
                get: true,
            })
        );
        // A repeated expiry of the same kind is allowed: the last one wins.
        let parsed = Command::parse(&argv(&["SET", "k", "v", "EX", "1", "EX", "2"]));
        assert!(matches!(
            parsed,
            Ok(Command::Set {
                expiry: SetExpiry::Seconds(2),
                ..
            })
        ));
        let parsed = Command::parse(&argv(&["SET", "k", "v", "XX", "KEEPTTL"]));
        assert!(matches!(
            parsed,
            Ok(Command::Set {
                expiry: SetExpiry::Keep,
                condition: SetCondition::IfExists,
                ..
            })
        ));
    }

    /// Texts and order checked with redis-cli against Redis 7.0.15.
    #[test]
    fn set_validation_order_and_texts() {
        let invalid = "ERR invalid expire time in 'set' command";
        assert_eq!(parse_error(&["set", "k", "v", "NX", "PX", "0"]), invalid);
        assert_eq!(parse_error(&["set", "k", "v", "PX", "-5"]), invalid);
        assert_eq!(parse_error(&["set", "k", "v", "EXAT", "0"]), invalid);
        assert_eq!(
            parse_error(&["set", "k", "v", "EX", "9223372036854775807"]),
            invalid
        );
        assert_eq!(
            parse_error(&["set", "k", "v", "PX", "abc"]),
            NOT_AN_INTEGER_ERROR
        );
        assert_eq!(
            parse_error(&["set", "k", "v", "PX", "1.5"]),
            NOT_AN_INTEGER_ERROR
        );
        // Option conflicts are syntax errors, found before the expiry number is looked at.
        for words in [
            &["set", "k", "v", "NX", "XX"][..],
            &["set", "k", "v", "NX", "XX", "PX", "0"],
            &["set", "k", "v", "PX", "0", "NX", "XX"],
            &["set", "k", "v", "EX", "1", "PX", "1"],
            &["set", "k", "v", "KEEPTTL", "PX", "10"],
            &["set", "k", "v", "PX", "10", "KEEPTTL"],
            &["set", "k", "v", "PX"],
            &["set", "k", "v", "FOO"],
            &["set", "k", "v", "PX", "abc", "FOO"],
        ] {
            assert_eq!(parse_error(words), SYNTAX_ERROR, "{words:?}");
        }
    }

    #[test]
    fn pexpire_options_and_numbers() {
        assert_eq!(
            Command::parse(&argv(&["PEXPIRE", "k", "-5"])),
            Ok(Command::PExpire(b"k".to_vec(), -5))
        );
        assert_eq!(parse_error(&["pexpire", "k", "abc"]), NOT_AN_INTEGER_ERROR);
        assert_eq!(
            parse_error(&["pexpire", "k", "abc", "foo"]),
            "ERR Unsupported option foo"
        );
        assert_eq!(
            parse_error(&["pexpire", "k", "10", "nx", "xx"]),
            "ERR NX and XX, GT or LT options at the same time are not compatible"
        );
        assert_eq!(
            parse_error(&["pexpire", "k", "10", "gt", "lt"]),
            "ERR GT and LT options at the same time are not compatible"
        );
        assert_eq!(
            Command::parse(&argv(&["pexpire", "k", "10", "XX", "gt"])),
            Ok(Command::Expire(
                b"k".to_vec(),
                ExpireKind::Millis,
                10,
                ExpireFlags {
                    xx: true,
                    gt: true,
                    ..ExpireFlags::default()
                }
            ))
        );
    }

    #[test]
    fn eval_numkeys_errors() {
        assert_eq!(
            parse_error(&["eval", "return 1", "2", "x"]),
            "ERR Number of keys can't be greater than number of args"
        );
        assert_eq!(
            parse_error(&["eval", "return 1", "-1", "x"]),
            "ERR Number of keys can't be negative"
        );
        assert_eq!(
            parse_error(&["eval", "return 1", "abc", "x"]),
            NOT_AN_INTEGER_ERROR
        );
        assert_eq!(
            Command::parse(&argv(&["EVAL", "s", "1", "k", "a", "b"])),
            Ok(Command::Eval {
                script: b"s".to_vec(),
                keys: vec![b"k".to_vec()],
                args: vec![b"a".to_vec(), b"b".to_vec()],
                read_only: false,
            })
        );
    }

    #[test]
    fn evalsha_checks_the_hash_length_first() {
        assert_eq!(parse_error(&["evalsha", "abc", "5", "x"]), NOSCRIPT_ERROR);
        let zeros = "0".repeat(40);
        assert_eq!(
            parse_error(&["evalsha", &zeros, "5", "x"]),
            "ERR Number of keys can't be greater than number of args"
        );
        assert_eq!(
            parse_error(&["evalsha", &zeros, "-1"]),
            "ERR Number of keys can't be negative"
        );
    }

    #[test]
    fn script_and_flush_options() {
        assert_eq!(
            Command::parse(&argv(&["script", "flush", "async"])),
            Ok(Command::ScriptFlush)
        );
        assert_eq!(
            parse_error(&["script", "flush", "foo"]),
            "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
        );
        assert_eq!(
            Command::parse(&argv(&["FLUSHDB", "SYNC"])),
            Ok(Command::FlushDb)
        );
        assert_eq!(parse_error(&["flushdb", "foo"]), SYNTAX_ERROR);
        assert_eq!(parse_error(&["flushall", "sync", "async"]), SYNTAX_ERROR);
    }

    #[test]
    fn housekeeping_validation() {
        assert!(matches!(
            Command::parse(&argv(&["CLIENT", "SETINFO", "LIB-NAME", "redis-rs"])),
            Ok(Command::Housekeeping(_))
        ));
        assert!(matches!(
            Command::parse(&argv(&["CLIENT", "SETINFO", "LIB-VER", "1.8.1"])),
            Ok(Command::Housekeeping(_))
        ));
        assert_eq!(
            parse_error(&["CLIENT", "SETINFO", "color", "x"]),
            "ERR Unrecognized option 'color'"
        );
        assert!(matches!(
            Command::parse(&argv(&["client", "setname", ""])),
            Ok(Command::Housekeeping(_))
        ));
        assert_eq!(
            parse_error(&["client", "setname", "a b"]),
            CLIENT_NAME_ERROR
        );
        assert_eq!(parse_error(&["select", "abc"]), NOT_AN_INTEGER_ERROR);
        assert_eq!(
            parse_error(&["select", "2147483648"]),
            "ERR value is out of range, value must between -2147483648 and 2147483647"
        );
        assert_eq!(
            parse_error(&["select"]),
            "ERR wrong number of arguments for 'select' command"
        );
        assert_eq!(
            parse_error(&["hello", "3"]),
            "NOPROTO unsupported protocol version"
        );
        assert_eq!(
            parse_error(&["hello", "4"]),
            "NOPROTO unsupported protocol version"
        );
        assert_eq!(
            parse_error(&["hello", "2.5"]),
            "ERR Protocol version is not an integer or out of range"
        );
        assert_eq!(
            parse_error(&["hello", "2", "foo"]),
            "ERR Syntax error in HELLO option 'foo'"
        );
        assert_eq!(
            parse_error(&["hello", "2", "auth", "default"]),
            "ERR Syntax error in HELLO option 'auth'"
        );
        assert_eq!(
            parse_error(&["hello", "2", "auth", "bob", "x"]),
            "WRONGPASS invalid username-password pair or user is disabled."
        );
        assert_eq!(
            parse_error(&["hello", "2", "setname", "a b"]),
            CLIENT_NAME_ERROR
        );
    }

    #[test]
    fn delex_forms() {
        assert_eq!(
            Command::parse(&argv(&["DELEX", "k", "ifeq", "v"])),
            Ok(Command::DelEx(
                b"k".to_vec(),
                DelexCondition::IfEqual(b"v".to_vec())
            ))
        );
        assert_eq!(
            Command::parse(&argv(&["delex", "k"])),
            Ok(Command::DelEx(b"k".to_vec(), DelexCondition::Always))
        );
        assert_eq!(parse_error(&["delex", "k", "ifeq"]), SYNTAX_ERROR);
        assert_eq!(parse_error(&["delex", "k", "other", "v"]), SYNTAX_ERROR);
        assert!(parse_error(&["delex", "k", "IFDEQ", "abc"]).contains("digest"));
    }

    #[test]
    fn to_argv_round_trips() {
        let commands = [
            Command::Ping(None),
            Command::Ping(Some(b"hi".to_vec())),
            Command::Get(b"k".to_vec()),
            Command::Set {
                key: b"k".to_vec(),
                value: b"v".to_vec(),
                condition: SetCondition::IfExists,
                expiry: SetExpiry::AtMillis(5),
                get: true,
            },
            Command::Set {
                key: b"k".to_vec(),
                value: b"v".to_vec(),
                condition: SetCondition::Always,
                expiry: SetExpiry::Keep,
                get: false,
            },
            Command::SetNx(b"k".to_vec(), b"v".to_vec()),
            Command::Del(vec![b"a".to_vec(), b"b".to_vec()]),
            Command::Exists(vec![b"a".to_vec(), b"a".to_vec()]),
            Command::Incr(b"n".to_vec()),
            Command::PExpire(b"k".to_vec(), -3),
            Command::PTtl(b"k".to_vec()),
            Command::DelEx(b"k".to_vec(), DelexCondition::IfNotEqual(b"v".to_vec())),
            Command::Eval {
                script: b"return 1".to_vec(),
                keys: vec![b"k".to_vec()],
                args: vec![b"1".to_vec()],
                read_only: false,
            },
            Command::Eval {
                script: b"return 1".to_vec(),
                keys: vec![],
                args: vec![],
                read_only: true,
            },
            Command::EvalSha {
                sha1: "A".repeat(40),
                keys: vec![],
                args: vec![b"x".to_vec()],
                read_only: false,
            },
            Command::EvalSha {
                sha1: "b".repeat(40),
                keys: vec![b"k".to_vec()],
                args: vec![],
                read_only: true,
            },
            Command::ScriptLoad(b"return 1".to_vec()),
            Command::ScriptFlush,
            Command::ScriptExists(vec!["abc".to_string()]),
            Command::FlushAll,
            Command::FlushDb,
            Command::Housekeeping(argv(&["SELECT", "0"])),
            Command::Strings(argv(&["MOVE", "k", "3"])),
            Command::Strings(argv(&["SWAPDB", "0", "1"])),
        ];
        for command in commands {
            assert_eq!(
                Command::parse(&command.to_argv()),
                Ok(command.clone()),
                "{command:?}"
            );
        }
    }

    #[test]
    fn keys_of_commands() {
        let eval = Command::Eval {
            script: vec![],
            keys: vec![b"a".to_vec(), b"b".to_vec()],
            args: vec![b"c".to_vec()],
            read_only: false,
        };
        assert_eq!(eval.keys(), vec![&b"a"[..], &b"b"[..]]);
        assert_eq!(Command::Get(b"k".to_vec()).keys(), vec![&b"k"[..]]);
        assert!(Command::FlushAll.keys().is_empty());
    }

    #[test]
    fn precheck_finds_eval_keys_like_redis() {
        let found = precheck(&argv(&["eval", "s", "2abc", "a", "b"])).unwrap();
        assert_eq!(found.keys, argv(&["a", "b"]));
        let found = precheck(&argv(&["eval", "s", "-1", "a", "b"])).unwrap();
        assert!(found.keys.is_empty());
        let found = precheck(&argv(&["set", "k", "v", "FOO"])).unwrap();
        assert!(found.write);
        assert_eq!(found.keys, argv(&["k"]));
    }
}
