//! The commands the stand-in supports, parsed from a RESP argument vector.
//!
//! [`Command::parse`] validates exactly as Redis 7 does (same order, same error texts), and
//! [`Command::to_argv`] renders a command back into the argument vector a client sends.

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
    /// `DELEX key [IFEQ v | IFNE v]` (Redis 8.4 semantics).
    DelEx(Vec<u8>, DelexCondition),
    /// `EVAL script numkeys key... arg...`.
    Eval {
        /// The script source.
        script: Vec<u8>,
        /// KEYS.
        keys: Vec<Vec<u8>>,
        /// ARGV.
        args: Vec<Vec<u8>>,
    },
    /// `EVALSHA sha1 numkeys key... arg...`.
    EvalSha {
        /// The SHA1 of the script, as 40 hex digits (any case).
        sha1: String,
        /// KEYS.
        keys: Vec<Vec<u8>>,
        /// ARGV.
        args: Vec<Vec<u8>>,
    },
    /// `SCRIPT LOAD script`.
    ScriptLoad(Vec<u8>),
    /// `SCRIPT FLUSH`.
    ScriptFlush,
    /// `SCRIPT EXISTS sha1 [sha1 ...]`.
    ScriptExists(Vec<String>),
    /// `FLUSHALL` / `FLUSHDB`: empty the keyspace.
    FlushAll,
    /// Connection housekeeping a client sends that needs no effect: `CLIENT SETINFO`,
    /// `CLIENT SETNAME`, `SELECT 0`, ... Replies `+OK`.
    Housekeeping(Vec<Vec<u8>>),
}

impl Command {
    /// Parses an argument vector (command name first, any case) the way Redis 7 validates it.
    ///
    /// Returns the error reply Redis would send for an unknown command, a wrong number of
    /// arguments or an invalid option.
    pub fn parse(argv: &[Vec<u8>]) -> Result<Command, Reply> {
        let _ = argv;
        todo!("redis stand-in: Command::parse")
    }

    /// Renders the command as the argument vector a client sends.
    pub fn to_argv(&self) -> Vec<Vec<u8>> {
        todo!("redis stand-in: Command::to_argv")
    }

    /// The keys this command touches (for hash-slot checks and traces).
    pub fn keys(&self) -> Vec<&[u8]> {
        todo!("redis stand-in: Command::keys")
    }
}
