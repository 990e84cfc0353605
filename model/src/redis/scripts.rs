//! The Lua scripts the safeguards send, recognised by SHA1 and executed natively: a fast path
//! for the model checker. Every other script runs in Lua ([`super::lua`]);
//! `model/tests/redis_native_vs_lua.rs` proves on generated keyspaces and arguments that the
//! native run of each known script equals its Lua run (reply, keys, expiry times, effects).
//!
//! Scripts run atomically with time frozen: the whole script sees one `now_ms`.
//!
//! Each script is a Rust function that follows its Lua source statement by statement: every
//! `redis.call` goes through the server's script call path (argument check, command table and
//! arity, read-only replica check, then the command itself), and a failing call ends the script
//! with the error Redis 7.0 sends for a script, `<error> script: <sha1>, on @user_script:<line>.`
//! Writes made before the failing call stay (scripts have no rollback). Replies convert as
//! Redis converts them through Lua: an integer stays an integer, a bulk string a bulk string,
//! `+OK` a status, and a nil bulk becomes `false`, which a script returns as a nil bulk.

use std::sync::OnceLock;

use sha1::{Digest, Sha1};

use super::reply::Reply;

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
    /// The tutorial's compare-and-delete as typed into `redis-cli` (the same statements as
    /// [`ScriptId::Release`] on one line, so a different SHA1, and a failing call reports
    /// line 1). No safeguard sends it; it makes the tutorial's `redis-cli` session work against
    /// `leaselab serve redis`.
    ReleaseOneLine,
    /// A script from a user's safeguard file (any Lua 5.1; it always runs in Lua).
    User(crate::intern::TextId),
}

/// The tutorial's compare-and-delete release (the text of its Go raw string, which starts
/// with a newline, so that a go-redis client running the tutorial sends the same SHA1).
const RELEASE_SOURCE: &str = "
if redis.call(\"GET\", KEYS[1]) == ARGV[1] then
  return redis.call(\"DEL\", KEYS[1])
end
return 0";

/// The tutorial's `redis-cli` compare-and-delete, exactly as typed between its single quotes.
const RELEASE_ONE_LINE_SOURCE: &str = "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then \
                                       return redis.call(\"DEL\", KEYS[1]) end return 0";

/// The tutorial's token-checked refresh.
const REFRESH_SOURCE: &str = "
if redis.call(\"GET\", KEYS[1]) == ARGV[1] then
  return redis.call(\"PEXPIRE\", KEYS[1], ARGV[2])
end
return 0";

/// The tutorial's fenced acquire: SET NX PX, then INCR of the fence counter.
const FENCED_ACQUIRE_SOURCE: &str = "
if redis.call(\"SET\", KEYS[1], ARGV[1], \"NX\", \"PX\", ARGV[2]) then
  return redis.call(\"INCR\", KEYS[2])
end
return false";

/// bsm/redislock v0.10.0 `obtain.lua`, byte for byte (go:embed; no final newline).
const REDISLOCK_OBTAIN_SOURCE: &str = "-- obtain.lua: arguments => [value, tokenLen, ttl]
-- Obtain.lua try to set provided keys's with value and ttl if they do not exists.
-- Keys can be overriden if they already exists and the correct value+tokenLen is provided. 

local function pexpire(ttl)
\t-- Update keys ttls.
\tfor _, key in ipairs(KEYS) do
\t\tredis.call(\"pexpire\", key, ttl)
\tend
end

-- canOverrideLock check either or not the provided token match
-- previously set lock's tokens.
local function canOverrideKeys() 
\tlocal offset = tonumber(ARGV[2])

\tfor _, key in ipairs(KEYS) do
\t\tif redis.call(\"getrange\", key, 0, offset-1) ~= string.sub(ARGV[1], 1, offset) then
\t\t\treturn false
\t\tend
\tend
\treturn true
end

-- Prepare mset arguments.
local setArgs = {}
for _, key in ipairs(KEYS) do
\ttable.insert(setArgs, key)
\ttable.insert(setArgs, ARGV[1])
end

if redis.call(\"msetnx\", unpack(setArgs)) ~= 1 then
\tif canOverrideKeys() == false then
\t\treturn false
\tend
\tredis.call(\"mset\", unpack(setArgs))
end

pexpire(ARGV[3])
return redis.status_reply(\"OK\")";

/// bsm/redislock v0.10.0 `refresh.lua`, byte for byte.
const REDISLOCK_REFRESH_SOURCE: &str = "-- refresh.lua: => Arguments: [value, ttl]
-- refresh.lua refreshes provided keys's ttls if all their values match the input. 

-- Check all keys values matches provided input.
local values = redis.call(\"mget\", unpack(KEYS))
for i, _ in ipairs(KEYS) do
\tif values[i] ~= ARGV[1] then
\t\treturn false
\tend
end

-- Update keys ttls.
for _, key in ipairs(KEYS) do
\tredis.call(\"pexpire\", key, ARGV[2]) 
end

return redis.status_reply(\"OK\")";

/// bsm/redislock v0.10.0 `release.lua`, byte for byte.
const REDISLOCK_RELEASE_SOURCE: &str = "-- release.lua: => Arguments: [value]
-- Release.lua deletes provided keys if all their values match the input. 

-- Check all keys values matches provided input.
local values = redis.call(\"mget\", unpack(KEYS))
for i, _ in ipairs(KEYS) do
\tif values[i] ~= ARGV[1] then
\t\treturn false
\tend
end

-- Delete keys.
redis.call(\"del\", unpack(KEYS))

return redis.status_reply(\"OK\")";

/// bsm/redislock v0.10.0 `pttl.lua`, byte for byte.
const REDISLOCK_PTTL_SOURCE: &str = "-- pttl.lua: => Arguments: [value]
-- pttl.lua returns provided keys's ttls if all their values match the input. 

-- Check all keys values matches provided input.
local values = redis.call(\"mget\", unpack(KEYS))
for i, _ in ipairs(KEYS) do
\tif values[i] ~= ARGV[1] then
\t\treturn false
\tend
end

-- Find and return shortest TTL among keys.
local minTTL = 0
for _, key in ipairs(KEYS) do
\tlocal ttl = redis.call(\"pttl\", key)
\t-- Note: ttl < 0 probably means the key no longer exists.
\tif ttl > 0 and (minTTL == 0 or ttl < minTTL) then
\t\tminTTL = ttl
\tend
end
return minTTL";

impl ScriptId {
    /// Every known script.
    pub const ALL: [ScriptId; 8] = [
        ScriptId::Release,
        ScriptId::Refresh,
        ScriptId::FencedAcquire,
        ScriptId::RedislockObtain,
        ScriptId::RedislockRefresh,
        ScriptId::RedislockRelease,
        ScriptId::RedislockPttl,
        ScriptId::ReleaseOneLine,
    ];

    /// The exact Lua source a client sends.
    pub fn source(self) -> &'static str {
        match self {
            ScriptId::Release => RELEASE_SOURCE,
            ScriptId::Refresh => REFRESH_SOURCE,
            ScriptId::FencedAcquire => FENCED_ACQUIRE_SOURCE,
            ScriptId::RedislockObtain => REDISLOCK_OBTAIN_SOURCE,
            ScriptId::RedislockRefresh => REDISLOCK_REFRESH_SOURCE,
            ScriptId::RedislockRelease => REDISLOCK_RELEASE_SOURCE,
            ScriptId::RedislockPttl => REDISLOCK_PTTL_SOURCE,
            ScriptId::ReleaseOneLine => RELEASE_ONE_LINE_SOURCE,
            ScriptId::User(id) => crate::intern::get(id).text,
        }
    }

    /// The lower-case hex SHA1 of [`ScriptId::source`], as `SCRIPT LOAD` returns it.
    pub fn sha1_hex(self) -> String {
        self.cached_sha1_hex().to_string()
    }

    /// The hash, computed once per process (the model checker asks for it often).
    fn cached_sha1_hex(self) -> &'static str {
        if let ScriptId::User(id) = self {
            return crate::intern::get(id).sha1_hex;
        }
        static HASHES: OnceLock<[String; ScriptId::ALL.len()]> = OnceLock::new();
        let hashes =
            HASHES.get_or_init(|| ScriptId::ALL.map(|id| sha1_hex_of(id.source().as_bytes())));
        let index = ScriptId::ALL
            .iter()
            .position(|&id| id == self)
            .expect("every script is in ScriptId::ALL");
        &hashes[index]
    }

    /// The SHA1 of [`ScriptId::source`] as 20 bytes, computed once per process.
    pub fn digest(self) -> [u8; 20] {
        if let ScriptId::User(id) = self {
            return crate::intern::get(id).digest;
        }
        static DIGESTS: OnceLock<[[u8; 20]; ScriptId::ALL.len()]> = OnceLock::new();
        let digests = DIGESTS
            .get_or_init(|| ScriptId::ALL.map(|id| Sha1::digest(id.source().as_bytes()).into()));
        let index = ScriptId::ALL
            .iter()
            .position(|&id| id == self)
            .expect("every built-in script is in ScriptId::ALL");
        digests[index]
    }

    /// Recognises a script by its SHA1 digest.
    pub fn from_digest(digest: [u8; 20]) -> Option<ScriptId> {
        ScriptId::ALL.into_iter().find(|id| id.digest() == digest)
    }

    /// Recognises a script by the SHA1 of its source (lower-case hex; upper case is accepted
    /// too, as Redis accepts it in `EVALSHA`).
    pub fn from_sha1_hex(sha1_hex: &str) -> Option<ScriptId> {
        ScriptId::ALL
            .into_iter()
            .find(|id| id.cached_sha1_hex().eq_ignore_ascii_case(sha1_hex))
    }

    /// Recognises a script by its exact source.
    pub fn from_source(source: &[u8]) -> Option<ScriptId> {
        ScriptId::ALL
            .into_iter()
            .find(|id| id.source().as_bytes() == source)
    }

    /// A short name for traces and errors, e.g. `release`.
    pub fn name(self) -> &'static str {
        match self {
            ScriptId::Release => "release",
            ScriptId::Refresh => "refresh",
            ScriptId::FencedAcquire => "fenced-acquire",
            ScriptId::RedislockObtain => "redislock-obtain",
            ScriptId::RedislockRefresh => "redislock-refresh",
            ScriptId::RedislockRelease => "redislock-release",
            ScriptId::RedislockPttl => "redislock-pttl",
            ScriptId::ReleaseOneLine => "release-one-line",
            ScriptId::User(id) => crate::intern::get(id).name,
        }
    }
}

/// The lower-case hex SHA1 of a script source, as Redis names scripts.
pub fn sha1_hex_of(source: &[u8]) -> String {
    hex::encode(Sha1::digest(source))
}

/// A failed `redis.call` (or Lua runtime error) inside a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ScriptFailure {
    /// The error text, with its code (`ERR ...`, `READONLY ...`).
    message: String,
    /// The script line of the failing statement.
    line: u32,
}

impl ScriptFailure {
    /// A Lua runtime error (not a Redis error), as Redis 7.0 reports it.
    fn runtime(line: u32, text: &str) -> ScriptFailure {
        ScriptFailure {
            message: format!("ERR user_script:{line}: {text}"),
            line,
        }
    }

    /// The error reply of the whole script.
    fn into_reply(self, sha1_hex: &str) -> Reply {
        Reply::Error(format!(
            "{} script: {sha1_hex}, on @user_script:{}.",
            self.message, self.line
        ))
    }
}

/// The server side of `redis.call`: runs one command from inside a script (command table and
/// arity check with the script's wording, read-only replica check, the command itself) at the
/// script's frozen time.
pub(crate) trait ScriptHost {
    /// Runs `argv` (all arguments present) and returns the reply, an error reply on failure.
    fn call(&mut self, argv: &[Vec<u8>]) -> Reply;
}

/// A Lua value passed to `redis.call`: a string, or `nil` (which Redis refuses).
type LuaArg = Option<Vec<u8>>;

/// Runs a known script with its KEYS and ARGV; returns the script's reply.
pub(crate) fn run(
    script: ScriptId,
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Reply {
    let result = match script {
        ScriptId::Release => run_release(host, keys, args, [2, 3]),
        ScriptId::Refresh => run_refresh(host, keys, args),
        ScriptId::FencedAcquire => run_fenced_acquire(host, keys, args),
        ScriptId::RedislockObtain => run_redislock_obtain(host, keys, args),
        ScriptId::RedislockRefresh => run_redislock_refresh(host, keys, args),
        ScriptId::RedislockRelease => run_redislock_release(host, keys, args),
        ScriptId::RedislockPttl => run_redislock_pttl(host, keys, args),
        ScriptId::ReleaseOneLine => run_release(host, keys, args, [1, 1]),
        // Never reached: `from_digest` knows only the built-in scripts, so a user's script
        // runs in Lua. Answered as an error rather than a panic all the same.
        ScriptId::User(_) => Ok(Reply::error(
            "ERR leaselab: a user script has no native run",
        )),
    };
    match result {
        // Every integer a script returns went through a Lua number (a double).
        Ok(Reply::Integer(n)) => Reply::Integer(lua_number_to_reply_integer(n as f64)),
        Ok(reply) => reply,
        Err(failure) => failure.into_reply(&script.sha1_hex()),
    }
}

/// How Redis 7.0 turns a Lua number a script returns into an integer reply: C's
/// `(long long)` cast of the double. Integers beyond 2^53 lose precision on the way, and a
/// double at or past 2^63 becomes `i64::MIN`, as the cast does on x86-64 (an `INCR` to
/// `i64::MAX` inside a script returns -9223372036854775808).
fn lua_number_to_reply_integer(number: f64) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if number.is_nan() || !(-TWO_POW_63..TWO_POW_63).contains(&number) {
        i64::MIN
    } else {
        number as i64
    }
}

/// `redis.call(...)` on script line `line`.
fn redis_call(
    host: &mut impl ScriptHost,
    line: u32,
    args: impl IntoIterator<Item = LuaArg>,
) -> Result<Reply, ScriptFailure> {
    let Some(argv) = args.into_iter().collect::<Option<Vec<Vec<u8>>>>() else {
        return Err(ScriptFailure {
            message: "ERR Lua redis lib command arguments must be strings or integers".into(),
            line,
        });
    };
    match host.call(&argv) {
        Reply::Error(message) => Err(ScriptFailure { message, line }),
        reply => Ok(reply),
    }
}

/// A literal argument.
fn word(text: &str) -> LuaArg {
    Some(text.as_bytes().to_vec())
}

/// `KEYS[i]` / `ARGV[i]` (1-based in Lua): nil past the end.
fn nth(values: &[Vec<u8>], lua_index: usize) -> LuaArg {
    values.get(lua_index - 1).cloned()
}

/// Lua truthiness of a converted reply: only a nil bulk (`false`) is false.
fn lua_truthy(reply: &Reply) -> bool {
    !matches!(reply, Reply::Nil)
}

/// Lua `==` between a converted reply and a string-or-nil: true only for equal strings.
fn lua_equals_string(reply: &Reply, other: Option<&[u8]>) -> bool {
    matches!((reply, other), (Reply::Bulk(value), Some(other)) if value.as_slice() == other)
}

/// `unpack(KEYS)`-style argument list after a command name.
fn with_name(name: &str, rest: impl IntoIterator<Item = LuaArg>) -> Vec<LuaArg> {
    let mut args = vec![word(name)];
    args.extend(rest);
    args
}

/// The tutorial's release (see [`RELEASE_SOURCE`] and [`RELEASE_ONE_LINE_SOURCE`]), with the
/// script lines of its `GET` and `DEL` calls.
fn run_release(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
    [get_line, del_line]: [u32; 2],
) -> Result<Reply, ScriptFailure> {
    let key = nth(keys, 1);
    let current = redis_call(host, get_line, [word("GET"), key.clone()])?;
    if lua_equals_string(&current, args.first().map(Vec::as_slice)) {
        return redis_call(host, del_line, [word("DEL"), key]);
    }
    Ok(Reply::Integer(0))
}

/// The tutorial's refresh (see [`REFRESH_SOURCE`]).
fn run_refresh(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<Reply, ScriptFailure> {
    let key = nth(keys, 1);
    let current = redis_call(host, 2, [word("GET"), key.clone()])?;
    if lua_equals_string(&current, args.first().map(Vec::as_slice)) {
        return redis_call(host, 3, [word("PEXPIRE"), key, nth(args, 2)]);
    }
    Ok(Reply::Integer(0))
}

/// The tutorial's fenced acquire (see [`FENCED_ACQUIRE_SOURCE`]).
fn run_fenced_acquire(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<Reply, ScriptFailure> {
    let set = redis_call(
        host,
        2,
        [
            word("SET"),
            nth(keys, 1),
            nth(args, 1),
            word("NX"),
            word("PX"),
            nth(args, 2),
        ],
    )?;
    if lua_truthy(&set) {
        return redis_call(host, 3, [word("INCR"), nth(keys, 2)]);
    }
    Ok(Reply::Nil)
}

/// bsm/redislock `obtain.lua`: MSETNX every key to the value; if some key exists, accept it
/// only when every key starts with the same token (`ARGV[2]` bytes of `ARGV[1]`) and MSET them
/// again; then PEXPIRE every key with `ARGV[3]` (0 deletes them, and the script still answers
/// `+OK`).
fn run_redislock_obtain(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<Reply, ScriptFailure> {
    // `table.insert(setArgs, ARGV[1])` with a nil value inserts nothing.
    let value = nth(args, 1);
    let mut set_args: Vec<LuaArg> = Vec::new();
    for key in keys {
        set_args.push(Some(key.clone()));
        if value.is_some() {
            set_args.push(value.clone());
        }
    }
    let created = redis_call(host, 32, with_name("msetnx", set_args.clone()))?;
    if created != Reply::Integer(1) {
        if !redislock_can_override_keys(host, keys, args)? {
            return Ok(Reply::Nil);
        }
        redis_call(host, 36, with_name("mset", set_args))?;
    }
    for key in keys {
        redis_call(host, 8, [word("pexpire"), Some(key.clone()), nth(args, 3)])?;
    }
    Ok(Reply::Status("OK".into()))
}

/// `canOverrideKeys()` of `obtain.lua` (lines 14-23).
fn redislock_can_override_keys(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<bool, ScriptFailure> {
    const LINE: u32 = 18;
    let offset = args.get(1).and_then(|text| lua_tonumber(text));
    for key in keys {
        let Some(offset) = offset else {
            return Err(ScriptFailure::runtime(
                LINE,
                "attempt to perform arithmetic on local 'offset' (a nil value)",
            ));
        };
        let range = redis_call(
            host,
            LINE,
            [
                word("getrange"),
                Some(key.clone()),
                word("0"),
                Some(lua_number_as_arg(offset - 1.0)),
            ],
        )?;
        // GETRANGE accepted `offset - 1`, so `offset` is an integer well inside i64.
        let token = lua_string_sub_prefix(args.first().map_or(&[][..], Vec::as_slice), offset);
        if !lua_equals_string(&range, Some(token)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The MGET at line 5 of the redislock refresh, release and pttl scripts, and the check that
/// every key holds `ARGV[1]`.
fn redislock_all_hold_value(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<bool, ScriptFailure> {
    let values = redis_call(host, 5, with_name("mget", keys.iter().cloned().map(Some)))?;
    let Reply::Array(values) = values else {
        unreachable!("MGET answers an array");
    };
    let expected = args.first().map(Vec::as_slice);
    Ok(keys.iter().enumerate().all(|(i, _)| {
        values
            .get(i)
            .is_some_and(|v| lua_equals_string(v, expected))
    }))
}

/// bsm/redislock `refresh.lua`: PEXPIRE every key with `ARGV[2]` if all hold `ARGV[1]`.
fn run_redislock_refresh(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<Reply, ScriptFailure> {
    if !redislock_all_hold_value(host, keys, args)? {
        return Ok(Reply::Nil);
    }
    for key in keys {
        redis_call(host, 14, [word("pexpire"), Some(key.clone()), nth(args, 2)])?;
    }
    Ok(Reply::Status("OK".into()))
}

/// bsm/redislock `release.lua`: DEL all keys if all hold `ARGV[1]`.
fn run_redislock_release(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<Reply, ScriptFailure> {
    if !redislock_all_hold_value(host, keys, args)? {
        return Ok(Reply::Nil);
    }
    redis_call(host, 13, with_name("del", keys.iter().cloned().map(Some)))?;
    Ok(Reply::Status("OK".into()))
}

/// bsm/redislock `pttl.lua`: the smallest positive PTTL of the keys (0 when none is positive)
/// if all hold `ARGV[1]`.
fn run_redislock_pttl(
    host: &mut impl ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
) -> Result<Reply, ScriptFailure> {
    if !redislock_all_hold_value(host, keys, args)? {
        return Ok(Reply::Nil);
    }
    let mut min_ttl_ms: i64 = 0;
    for key in keys {
        let Reply::Integer(ttl_ms) = redis_call(host, 15, [word("pttl"), Some(key.clone())])?
        else {
            unreachable!("PTTL answers an integer");
        };
        if ttl_ms > 0 && (min_ttl_ms == 0 || ttl_ms < min_ttl_ms) {
            min_ttl_ms = ttl_ms;
        }
    }
    Ok(Reply::Integer(min_ttl_ms))
}

/// Lua 5.1 `tonumber(s)` for a string (C `strtod` plus hexadecimal integers, surrounding
/// white space allowed). Exotic spellings `strtod` accepts and Rust does not (hexadecimal
/// fractions) are treated as not a number.
fn lua_tonumber(text: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(text).ok()?;
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\u{b}');
    if trimmed.is_empty() {
        return None;
    }
    let (negative, unsigned) = match trimmed.as_bytes()[0] {
        b'-' => (true, &trimmed[1..]),
        b'+' => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    if let Some(hex_digits) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        let magnitude = u64::from_str_radix(hex_digits, 16).ok()? as f64;
        return Some(if negative { -magnitude } else { magnitude });
    }
    trimmed.parse::<f64>().ok()
}

/// How Redis 7.0 turns a Lua number into a command argument: C `"%.17g"`. Integers below
/// 10^17 print as plain digits; anything else prints in a form that is not a Redis integer
/// (a fraction or an exponent), which is all that matters to the commands receiving it.
fn lua_number_as_arg(number: f64) -> Vec<u8> {
    const PLAIN_LIMIT: f64 = 1e17;
    if number.fract() == 0.0 && number.abs() < PLAIN_LIMIT {
        // Exact: an integral f64 below 10^17 converts to i64 without loss.
        return (number as i64).to_string().into_bytes();
    }
    format!("{number:e}").into_bytes()
}

/// Lua 5.1 `string.sub(s, 1, end)` for an integral `end`.
fn lua_string_sub_prefix(text: &[u8], end: f64) -> &[u8] {
    let length = i64::try_from(text.len()).unwrap_or(i64::MAX);
    let mut end = end as i64;
    if end < 0 {
        end = (end + length + 1).max(0);
    }
    let end = usize::try_from(end.min(length)).unwrap_or(0);
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_a_script_returns_go_through_a_double() {
        assert_eq!(lua_number_to_reply_integer(42.0), 42);
        assert_eq!(lua_number_to_reply_integer(-7.0), -7);
        assert_eq!(
            lua_number_to_reply_integer(9_007_199_254_740_993_i64 as f64),
            9_007_199_254_740_992
        );
        assert_eq!(lua_number_to_reply_integer(i64::MAX as f64), i64::MIN);
        assert_eq!(lua_number_to_reply_integer(i64::MIN as f64), i64::MIN);
    }

    #[test]
    fn every_script_hash_is_the_sha1_of_its_source() {
        for id in ScriptId::ALL {
            let expected = hex::encode(Sha1::digest(id.source().as_bytes()));
            assert_eq!(id.sha1_hex(), expected, "{}", id.name());
            assert_eq!(id.sha1_hex().len(), 40);
            assert_eq!(ScriptId::from_sha1_hex(&expected), Some(id));
            assert_eq!(
                ScriptId::from_sha1_hex(&expected.to_ascii_uppercase()),
                Some(id)
            );
            assert_eq!(ScriptId::from_source(id.source().as_bytes()), Some(id));
            assert_eq!(hex::encode(id.digest()), expected);
            assert_eq!(ScriptId::from_digest(id.digest()), Some(id));
        }
    }

    /// The hashes real Redis 7.0.15 reported for these sources (SCRIPT LOAD / error texts).
    #[test]
    fn hashes_match_real_redis() {
        let known = [
            (
                ScriptId::Release,
                "da225123b2af4a41136fdba7ffac1e045e344da1",
            ),
            (
                ScriptId::Refresh,
                "267625c7e1d8cd825d1903c75a4f1fe1330682c3",
            ),
            (
                ScriptId::FencedAcquire,
                "3d6b84a42af5f1b711f67a026a5a527c7edf3365",
            ),
            (
                ScriptId::RedislockObtain,
                "eb0c00d98f6f33b4262419a509002884540f30be",
            ),
            (
                ScriptId::RedislockRefresh,
                "5a22d7e8431313862816d4416b5e46dd70fc340d",
            ),
            (
                ScriptId::RedislockRelease,
                "9470c810040e272ee6c579d8d4331aaf6332a7b1",
            ),
            (
                ScriptId::RedislockPttl,
                "66e1084c2d842a7e8c271925aae90219fac4e129",
            ),
            (
                ScriptId::ReleaseOneLine,
                "bb69021340f0876bd55888dfc77dd19b7caf5a78",
            ),
        ];
        for (id, sha) in known {
            assert_eq!(id.sha1_hex(), sha, "{}", id.name());
        }
    }

    #[test]
    fn redislock_sources_have_their_published_lengths() {
        assert_eq!(ScriptId::RedislockObtain.source().len(), 1018);
        assert_eq!(ScriptId::RedislockRefresh.source().len(), 433);
        assert_eq!(ScriptId::RedislockRelease.source().len(), 374);
        assert_eq!(ScriptId::RedislockPttl.source().len(), 570);
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<&str> = ScriptId::ALL.iter().map(|id| id.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ScriptId::ALL.len());
    }

    #[test]
    fn lua_numbers() {
        assert_eq!(lua_tonumber(b"26"), Some(26.0));
        assert_eq!(lua_tonumber(b" 0x10 "), Some(16.0));
        assert_eq!(lua_tonumber(b"1e2"), Some(100.0));
        assert_eq!(lua_tonumber(b"-3"), Some(-3.0));
        assert_eq!(lua_tonumber(b"abc"), None);
        assert_eq!(lua_tonumber(b""), None);
        assert_eq!(lua_number_as_arg(25.0), b"25".to_vec());
        assert_eq!(lua_number_as_arg(-1.0), b"-1".to_vec());
        assert_eq!(lua_number_as_arg(1e16), b"10000000000000000".to_vec());
        assert!(crate::redis::command::parse_i64(&lua_number_as_arg(1e17)).is_none());
        assert!(crate::redis::command::parse_i64(&lua_number_as_arg(2.5)).is_none());
    }

    #[test]
    fn lua_string_sub_prefixes() {
        assert_eq!(lua_string_sub_prefix(b"token", 3.0), b"tok");
        assert_eq!(lua_string_sub_prefix(b"token", 0.0), b"");
        assert_eq!(lua_string_sub_prefix(b"token", 10.0), b"token");
        assert_eq!(lua_string_sub_prefix(b"token", -1.0), b"token");
        assert_eq!(lua_string_sub_prefix(b"token", -2.0), b"toke");
        assert_eq!(lua_string_sub_prefix(b"token", -9.0), b"");
    }
}
