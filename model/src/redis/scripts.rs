//! The Lua scripts the stand-in knows, recognised by SHA1 and executed natively.
//!
//! Scripts run atomically with time frozen: the whole script sees one `now_ms`.
//! Any other script gets an error that names its SHA1 and says which scripts are supported.

/// A script the stand-in can execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScriptId {
    /// Compare-and-delete: `DEL KEYS[1]` only if its value is `ARGV[1]`; returns 1 or 0.
    Release,
    /// Token-checked refresh: `PEXPIRE KEYS[1] ARGV[2]` only if its value is `ARGV[1]`.
    Refresh,
    /// Fenced acquire: `SET KEYS[1] ARGV[1] NX PX ARGV[2]`, and only if that worked
    /// `INCR KEYS[2]`; returns the new fence, or nil when the lock is held.
    FencedAcquire,
    /// bsm/redislock v0.10.0 `obtain.lua`.
    RedislockObtain,
    /// bsm/redislock v0.10.0 `refresh.lua`.
    RedislockRefresh,
    /// bsm/redislock v0.10.0 `release.lua`.
    RedislockRelease,
    /// bsm/redislock v0.10.0 `pttl.lua`.
    RedislockPttl,
}

impl ScriptId {
    /// Every known script.
    pub const ALL: [ScriptId; 7] = [
        ScriptId::Release,
        ScriptId::Refresh,
        ScriptId::FencedAcquire,
        ScriptId::RedislockObtain,
        ScriptId::RedislockRefresh,
        ScriptId::RedislockRelease,
        ScriptId::RedislockPttl,
    ];

    /// The exact Lua source a client sends.
    pub fn source(self) -> &'static str {
        todo!("redis stand-in: ScriptId::source")
    }

    /// The lower-case hex SHA1 of [`ScriptId::source`], as `SCRIPT LOAD` returns it.
    pub fn sha1_hex(self) -> String {
        todo!("redis stand-in: ScriptId::sha1_hex")
    }

    /// Recognises a script by the SHA1 of its source (lower-case hex).
    pub fn from_sha1_hex(sha1_hex: &str) -> Option<ScriptId> {
        let _ = sha1_hex;
        todo!("redis stand-in: ScriptId::from_sha1_hex")
    }

    /// A short name for traces and errors, e.g. `release`.
    pub fn name(self) -> &'static str {
        todo!("redis stand-in: ScriptId::name")
    }
}
