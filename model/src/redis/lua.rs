//! Scripts run in real Lua 5.1, as Redis 7.0 runs them.
//!
//! The stand-in's state holds only script sources (it must stay `Clone` and hashable for the
//! model checker); the Lua VM lives in a per-thread slot, created on first use, and runs one
//! script at a time against the server through a `ScriptHost` callback. Compiled chunks are
//! cached per thread by SHA1.
//!
//! What a script sees is what Redis 7.0 gives it: the base library without `print`,
//! `dofile`, `loadfile`, `require`, `getfenv`/`setfenv`; `string`, `table`, `math`,
//! `coroutine`; the `redis` table (`call`, `pcall`, `status_reply`, `error_reply`, `sha1hex`,
//! `log`, `setresp`, `set_repl`, `replicate_commands`, `breakpoint`, `debug`, the `LOG_*` and
//! `REPL_*` constants, `REDIS_VERSION`); `KEYS` and `ARGV`. Globals are read-only: reading a
//! missing global or writing any global is an error with Redis's text. `math.random` is Redis's
//! own generator (`rand48`), seeded as a fresh Redis 7.0 server seeds it and continuing across
//! scripts; its state is part of the server's state.
//!
//! `bit` (`lua_bit.rs`), `cjson` (`lua_cjson.rs`), `cmsgpack` (`lua_cmsgpack.rs`) and `struct`
//! (`lua_struct.rs`) are there as Redis 7.0 has them; `cjson`'s settings are server state
//! ([`LuaCarry`]). Their helpers hold no Rust handle per nesting level and at most a few
//! thousand at once: mlua's reference stack holds fewer than 8,000, and running out of it
//! panics.
//!
//! Deliberate differences: a `cjson.encode` or `cmsgpack.pack` result past [`MEMORY_LIMIT`]
//! stops the script as the instruction budget does; one `cmsgpack.unpack` or `struct.unpack`
//! returns at most 7,900 values (Redis: 7,999); library tables
//! are read-only proxies (so `pairs(string)` lists nothing); a script that runs more than
//! [`INSTRUCTION_BUDGET`] Lua instructions, allocates more than [`MEMORY_LIMIT`] bytes, or
//! takes more than [`MATCH_STEPS`] steps in one pattern-matching call, is stopped with an error (Redis would keep running it and answer `BUSY` to every other client
//! until `SCRIPT KILL`), and recorded ([`first_stopped_script`]) so that no verdict rests on
//! it; replies nested deeper than [`MAX_REPLY_DEPTH`] end in an error element.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::OnceLock;

use mlua::{
    Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value, Variadic, VmState,
};

use super::lua_cjson::CjsonConfig;
use super::reply::Reply;
use super::scripts::{sha1_hex_of, ScriptHost};

/// Lua instructions a script may run before the stand-in stops it. A lock script runs a few
/// dozen; ten million take about 50 ms here, so a script that never ends costs little before
/// it is stopped (and [`first_stopped_script`] tells the drivers).
pub const INSTRUCTION_BUDGET: u64 = 10_000_000;
/// Bytes the Lua VM may hold.
pub const MEMORY_LIMIT: usize = 32 * 1024 * 1024;

/// The most steps one call of `string.find`/`match`/`gmatch`/`gsub` may take: Lua's count
/// hook never fires inside them, so the vendored Lua counts them itself
/// (`model/vendor/lua-src/PATCH.md`) and raises [`MATCH_STOPPED`] past this many.
pub const MATCH_STEPS: u64 = 100_000_000;

/// The error the vendored Lua raises when a pattern match runs past [`MATCH_STEPS`].
const MATCH_STOPPED: &str = "leaselab: pattern matching stopped after 100000000 steps";

/// The first script this process stopped for its budget or memory limit.
static FIRST_STOPPED: OnceLock<String> = OnceLock::new();

/// The first script this process stopped (instruction budget or memory limit): its SHA1 and
/// why.
///
/// Such a script would hold a real Redis forever (`BUSY` to every other client), so no verdict
/// about a safeguard that sent one can stand: the command line reads this after its work and
/// refuses the result (a bad safeguard file, exit 2), and a check stops its search as soon as
/// there is one.
pub fn first_stopped_script() -> Option<&'static str> {
    FIRST_STOPPED.get().map(String::as_str)
}

fn note_stopped(sha1: &str, why: &str) {
    let _ = FIRST_STOPPED.set(format!("script {sha1} {why}"));
}
/// The deepest nesting of tables a reply may have.
pub const MAX_REPLY_DEPTH: usize = 1000;
/// Instructions between two budget checks.
const HOOK_EVERY: u32 = 10_000;
/// Slots of the Lua stack a C function may fill (Lua 5.1's `LUAI_MAXCSTACK`): the libraries'
/// helpers count the slots their C originals would fill, to fail where those fail.
pub(super) const MAX_C_STACK_SLOTS: usize = 8000;
/// Compiled chunks kept per thread before the cache starts over.
const COMPILED_LIMIT: usize = 4096;

/// The state of Redis's `rand48` generator when a Redis 7.0 server starts (`0x1234ABCD330E`).
pub const RAND48_INITIAL: u64 = 0x1234_ABCD_330E;

/// What Redis's Lua keeps from one script to the next, which the server carries between runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LuaCarry {
    /// The state of `math.random`'s `rand48` generator.
    pub rand48: u64,
    /// `cjson`'s settings.
    pub cjson: CjsonConfig,
}

impl Default for LuaCarry {
    fn default() -> LuaCarry {
        LuaCarry {
            rand48: RAND48_INITIAL,
            cjson: CjsonConfig::default(),
        }
    }
}

impl LuaCarry {
    /// `SCRIPT FLUSH`: Redis starts a new Lua (libraries' settings as new); the generator is
    /// the server's and goes on.
    pub fn flush(&mut self) {
        self.cjson = CjsonConfig::default();
    }
}

/// The version scripts see in `redis.REDIS_VERSION`.
const VERSION: &str = "7.0.15";
/// `redis.REDIS_VERSION_NUM` (0x00MMmmpp).
const VERSION_NUM: i64 = 0x07_00_0f;

/// The sandbox, built once per VM. It receives the raw globals and the Rust helpers, and
/// returns the environment scripts run in and the function that runs one script.
const PRELUDE: &str = r#"
local G, redis, random, srand, where, exhausted, describe, bit, cjson, cmsgpack, struct, protected = ...
local error, type, tostring, tonumber, select, setmetatable, rawget, rawset, xpcall, floor =
  G.error, G.type, G.tostring, G.tonumber, G.select, G.setmetatable, G.rawget, G.rawset,
  G.xpcall, G.math.floor
local setfenv, loadstring, load = G.setfenv, G.loadstring, G.load

-- `protected[proxy]` is the table behind a read-only proxy (weak keys; `cjson.encode` looks
-- through a proxy as Redis's encoder sees the library table itself).
local function readonly(t)
  local proxy = {}
  setmetatable(proxy, {
    __index = t,
    __newindex = function() error('Attempt to modify a readonly table', 2) end,
    __metatable = false,
  })
  protected[proxy] = t
  return proxy
end

local function copy(t)
  local c = {}
  for k, v in G.pairs(t) do c[k] = v end
  return c
end

local globals = {}
for _, name in G.ipairs({'assert', 'collectgarbage', 'error', 'gcinfo', 'getmetatable',
    'ipairs', 'next', 'pairs', 'pcall', 'rawequal', 'rawget', 'select', 'setmetatable',
    'tonumber', 'tostring', 'type', 'unpack', 'xpcall', '_VERSION'}) do
  globals[name] = G[name]
end

local env

-- A script stopped for its instruction budget must not catch that and carry on.
-- A caught error is what Redis 7.0's `pcall` gives: the text of an error table
-- (`redis.call`'s errors), the text of a Rust helper's error.
local function rethrow(ok, ...)
  if ok then return ok, ... end
  local e = ...
  if exhausted() or (type(e) == 'string' and G.string.find(e, MATCH_STOPPED, 1, true)) then
    error(e, 0)
  end
  if type(e) == 'userdata' then return ok, describe(e, true) end
  if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then return ok, e.err end
  return ok, ...
end
local pcall, resume = G.pcall, G.coroutine.resume
globals.pcall = function(...) return rethrow(pcall(...)) end
globals.xpcall = function(...) return rethrow(xpcall(...)) end
local coroutine = copy(G.coroutine)
coroutine.resume = function(...) return rethrow(resume(...)) end

globals.rawset = function(t, k, v)
  if protected[t] then error('Attempt to modify a readonly table', 0) end
  return rawset(t, k, v)
end
globals.loadstring = function(s, name)
  local f, e = loadstring(s, name)
  if f then setfenv(f, env) end
  return f, e
end
globals.load = function(fn, name)
  local f, e = load(fn, name)
  if f then setfenv(f, env) end
  return f, e
end

local math = copy(G.math)
math.random = random
math.randomseed = function(seed)
  local x = tonumber(seed)
  if x == nil then
    error("bad argument #1 to 'randomseed' (number expected, got " ..
      (seed == nil and 'no value' or type(seed)) .. ")", 2)
  end
  srand(x >= 0 and floor(x) or -floor(-x))
end

local function error_table(text)
  local code, msg
  if text:sub(1, 1) == '-' then
    local space = text:find(' ', 1, true)
    if space then
      code, msg = text:sub(2, space - 1), text:sub(space + 1)
    else
      code, msg = 'ERR', text:sub(2)
    end
  else
    code, msg = 'ERR', text
  end
  msg = msg:gsub('^[\r\n]+', ''):gsub('[\r\n]+$', '')
  return {err = code .. ' ' .. msg}
end

redis.status_reply = function(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return error_table('wrong number or type of arguments')
  end
  return {ok = s}
end
redis.error_reply = function(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return error_table('wrong number or type of arguments')
  end
  if s:sub(1, 1) ~= '-' then s = '-' .. s end
  return error_table(s)
end
redis.debug = function() end
redis.breakpoint = function() return false end
redis.replicate_commands = function() return true end
redis.set_repl = function() end
redis.setresp = function(v)
  if v ~= 2 then error('RESP version must be 2 in the leaselab stand-in', 2) end
end
redis.acl_check_cmd = function() return true end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL =
  0, 1, 2, 2, 3
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = VERSION_TEXT, VERSION_NUMBER

globals.math = readonly(math)
globals.string = readonly(G.string)
globals.table = readonly(G.table)
globals.coroutine = readonly(coroutine)
globals.redis = readonly(redis)
globals.bit = readonly(bit)
globals.cjson = readonly(cjson)
globals.cmsgpack = readonly(cmsgpack)
globals.struct = readonly(struct)
-- Methods on strings ("x"):upper() go through the read-only string table too.
G.getmetatable('').__index = globals.string

setmetatable(globals, {
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
})
env = readonly(globals)
globals._G = env

local function handler(e)
  if type(e) == 'userdata' then
    e = {err = describe(e)}
  elseif type(e) ~= 'table' then
    e = {err = 'ERR ' .. tostring(e)}
  end
  e.line = where()
  return e
end

local function run(f, keys, argv)
  globals.KEYS, globals.ARGV = keys, argv
  local ok, v = xpcall(f, handler)
  globals.KEYS, globals.ARGV = nil, nil
  return ok, v
end

return env, run
"#;

/// One thread's Lua VM.
struct Vm {
    lua: Lua,
    /// The environment scripts run in.
    env: Table,
    /// `run(f, KEYS, ARGV)` → `ok, value`.
    run: Function,
    /// The `redis` table behind its read-only proxy: `call` and `pcall` are put there for
    /// each run (they borrow the server).
    redis: Table,
    /// Compiled scripts by SHA1, kept in a Lua table (a Rust handle for each would hold a slot
    /// of mlua's reference stack, which the values a script's helpers return need).
    compiled: Table,
    /// How many `compiled` holds.
    compiled_count: usize,
    /// The settings of the global `cjson` table (the server's, set for each run).
    cjson: Rc<Cell<CjsonConfig>>,
}

thread_local! {
    static VM: RefCell<Option<Vm>> = const { RefCell::new(None) };
    /// The `rand48` state during a run.
    static RAND: Cell<u64> = const { Cell::new(RAND48_INITIAL) };
    /// Instruction-budget checks left in this run.
    static BUDGET_LEFT: Cell<u64> = const { Cell::new(0) };
    /// Set when the budget ran out.
    static OUT_OF_BUDGET: Cell<bool> = const { Cell::new(false) };
    /// Set when a library helper's result grew past [`MEMORY_LIMIT`].
    static OUTPUT_TOO_LARGE: Cell<bool> = const { Cell::new(false) };
}

/// Redis's `redisLrand48`: the next 31-bit value.
fn lrand48(state: &mut u64) -> i32 {
    const A: u64 = 0x5_DEEC_E66D;
    const C: u64 = 0xB;
    *state = (state.wrapping_mul(A).wrapping_add(C)) & ((1 << 48) - 1);
    i32::try_from(*state >> 17).expect("31 bits")
}

/// Redis's `redisSrand48`.
fn srand48(seed: i32) -> u64 {
    let seed = u64::from(seed as u32);
    ((seed >> 16) << 32) | ((seed & 0xFFFF) << 16) | 0x330E
}

/// Redis's `math.random` base value: `(lrand48() % INT32_MAX) / INT32_MAX`.
pub fn rand01(state: &mut u64) -> f64 {
    let max = i32::MAX;
    f64::from(lrand48(state) % max) / f64::from(max)
}

fn new_vm() -> mlua::Result<Vm> {
    let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH;
    let lua = Lua::new_with(libs, LuaOptions::default())?;
    lua.set_memory_limit(MEMORY_LIMIT)?;
    let redis = lua.create_table()?;
    let sha1 = lua.create_function(|_, args: Variadic<Value>| {
        if args.len() != 1 {
            return Err(raised("ERR wrong number of arguments"));
        }
        let bytes = match &args[0] {
            Value::String(text) => text.as_bytes().to_vec(),
            Value::Number(n) => format_g14(*n).into_bytes(),
            Value::Integer(n) => format_g14(*n as f64).into_bytes(),
            _ => Vec::new(),
        };
        Ok(sha1_hex_of(&bytes))
    })?;
    redis.raw_set("sha1hex", sha1)?;
    // `redis.log(level, message, ...)`: checked as Redis 7.0's `luaLogCommand` checks it (a
    // function of C's, so that a script's `return redis.log(...)` keeps its own frame and
    // an error its line); the stand-in keeps no log.
    let log = lua.create_function(|lua, args: Variadic<Value>| {
        if args.len() < 2 {
            return Err(raised("ERR redis.log() requires two arguments or more."));
        }
        let Some(level) = lua.coerce_number(args[0].clone())? else {
            return Err(raised("ERR First argument must be a number (log level)."));
        };
        // C's conversion to int, toward zero: 3.7 is 3, -0.5 is 0.
        if !(level.trunc() >= 0.0 && level.trunc() <= 3.0) {
            return Err(raised("ERR Invalid debug level."));
        }
        Ok(())
    })?;
    redis.raw_set("log", log)?;
    let random = lua.create_function(|lua, args: Variadic<Value>| {
        let r = RAND.with(|cell| {
            let mut state = cell.get();
            let value = rand01(&mut state);
            cell.set(state);
            value
        });
        let int_arg = |index: usize| -> mlua::Result<f64> {
            let value = args.get(index).cloned().unwrap_or(Value::Nil);
            let number = match &value {
                Value::Number(n) => Some(*n),
                Value::Integer(n) => Some(*n as f64),
                Value::String(text) => lua_tonumber(&text.as_bytes()),
                _ => None,
            };
            match number {
                Some(n) => Ok(n.trunc()),
                None => Err(type_error(lua, &args, index, "number")),
            }
        };
        let empty = |n: usize| arg_error(lua, n - 1, "interval is empty");
        match args.len() {
            0 => Ok(r),
            1 => {
                let u = int_arg(0)?;
                if u < 1.0 {
                    return Err(empty(1));
                }
                Ok((r * u).floor() + 1.0)
            }
            2 => {
                let (l, u) = (int_arg(0)?, int_arg(1)?);
                if l > u {
                    return Err(empty(2));
                }
                Ok((r * (u - l + 1.0)).floor() + l)
            }
            _ => Err(mlua::Error::runtime(format!(
                "{}wrong number of arguments",
                caller_position(lua)
            ))),
        }
    })?;
    let srand = lua.create_function(|_, seed: f64| {
        let seed = if seed.is_finite() {
            seed as i64 as i32
        } else {
            0
        };
        RAND.with(|cell| cell.set(srand48(seed)));
        Ok(())
    })?;
    let where_fn = lua.create_function(|lua, ()| Ok(user_script_line(lua)))?;
    let exhausted = lua.create_function(|_, ()| {
        Ok(OUT_OF_BUDGET.with(Cell::get) || OUTPUT_TOO_LARGE.with(Cell::get))
    })?;
    let describe = lua.create_function(|_, (value, caught): (Value, Option<bool>)| {
        Ok(describe_error(&value, caught.unwrap_or(false)))
    })?;
    let bit = super::lua_bit::library(&lua)?;
    let protected = lua.create_table()?;
    let weak_keys = lua.create_table()?;
    weak_keys.raw_set("__mode", "k")?;
    protected.set_metatable(Some(weak_keys))?;
    let cjson_config = Rc::new(Cell::new(CjsonConfig::default()));
    let cjson = super::lua_cjson::library(&lua, cjson_config.clone(), protected.clone())?;
    let cmsgpack = super::lua_cmsgpack::library(&lua, protected.clone())?;
    let struct_library = super::lua_struct::library(&lua)?;
    let prelude = PRELUDE
        .replace("VERSION_TEXT", &format!("'{VERSION}'"))
        .replace("VERSION_NUMBER", &VERSION_NUM.to_string())
        .replace("MATCH_STOPPED", &format!("'{MATCH_STOPPED}'"));
    let (env, run): (Table, Function) = lua.load(prelude).set_name("=leaselab").call((
        lua.globals(),
        redis.clone(),
        random,
        srand,
        where_fn,
        exhausted,
        describe,
        bit,
        cjson,
        cmsgpack,
        struct_library,
        protected,
    ))?;
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        |_, _| {
            let left = BUDGET_LEFT.with(Cell::get);
            if left == 0 {
                OUT_OF_BUDGET.with(|flag| flag.set(true));
                return Err(mlua::Error::runtime("instruction budget exhausted"));
            }
            BUDGET_LEFT.with(|cell| cell.set(left - 1));
            Ok(VmState::Continue)
        },
    )?;
    let compiled = lua.create_table()?;
    Ok(Vm {
        lua,
        env,
        run,
        redis,
        compiled,
        compiled_count: 0,
        cjson: cjson_config,
    })
}

/// The current line of the innermost frame of the user's script (0 if none).
fn user_script_line(lua: &Lua) -> i64 {
    for level in 0..200 {
        let found = lua.inspect_stack(level, |debug| {
            let source = debug.source();
            let is_user = source.source.as_deref() == Some("@user_script");
            (is_user, debug.current_line())
        });
        match found {
            None => return 0,
            Some((true, line)) => return line.map_or(0, |l| l as i64),
            Some((false, _)) => continue,
        }
    }
    0
}

/// An error a Rust helper raises with its full Redis text (`ERR ...`, `WRONGTYPE ...`).
#[derive(Debug)]
struct Raised(String);

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

fn raised(text: &str) -> mlua::Error {
    mlua::Error::external(Raised(text.to_string()))
}

/// The Redis error text of an error a Rust helper raised: a [`Raised`] as it is, a runtime
/// error with `ERR ` in front, or as it is when a script's `pcall` `caught` it (a C helper's
/// `luaL_error` raises a plain string).
fn describe_error(value: &Value, caught: bool) -> String {
    let inner = |error: &mlua::Error| -> String {
        let mut error = error;
        while let mlua::Error::CallbackError { cause, .. } = error {
            error = cause;
        }
        match error {
            mlua::Error::ExternalError(external) => match external.downcast_ref::<Raised>() {
                Some(Raised(text)) => text.clone(),
                None => format!("ERR {external}"),
            },
            mlua::Error::RuntimeError(text) if caught => text.clone(),
            mlua::Error::RuntimeError(text) => format!("ERR {text}"),
            mlua::Error::MemoryError(_) => "ERR not enough memory".to_string(),
            other => format!("ERR {other}"),
        }
    };
    match value {
        Value::Error(error) => inner(error),
        other => format!("ERR {}", other.to_string().unwrap_or_default()),
    }
}

/// Checks the size of a result a library helper is building (`cjson.encode`,
/// `cmsgpack.pack`): past [`MEMORY_LIMIT`] the script is stopped, as one past its instruction
/// budget is (no `pcall` catches it, and no verdict rests on it). Without this, a table that
/// holds one long string many times would make the helper allocate without bound.
pub(super) fn check_output_size(bytes: usize) -> mlua::Result<()> {
    if bytes > MEMORY_LIMIT {
        OUTPUT_TOO_LARGE.with(|flag| flag.set(true));
        return Err(mlua::Error::runtime(
            "leaselab: a library result grew past the memory limit",
        ));
    }
    Ok(())
}

/// `luaL_error` from inside a helper: the message after the caller's position.
pub(super) fn helper_error(lua: &Lua, message: &str) -> mlua::Error {
    mlua::Error::runtime(format!("{}{message}", caller_position(lua)))
}

/// `luaL_where(L, 1)`: `user_script:<line>: ` for the Lua function calling a helper.
pub(super) fn caller_position(lua: &Lua) -> String {
    lua.inspect_stack(1, |debug| {
        let line = debug.current_line().unwrap_or(0);
        let source = debug.source();
        let short = source.short_src.as_deref().unwrap_or("?").to_string();
        if line > 0 {
            format!("{short}:{line}: ")
        } else {
            String::new()
        }
    })
    .unwrap_or_default()
}

/// Lua's name for a value's type (`lua_typename`), as a C helper's errors say it.
pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::LightUserData(_) | Value::UserData(_) => "userdata",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// `luaL_argerror`: `bad argument #n to 'name' (message)` for argument `index` (0-based) of
/// the running helper, named as its caller named it, after the caller's position.
pub(super) fn arg_error(lua: &Lua, index: usize, message: &str) -> mlua::Error {
    numbered_arg_error(lua, index + 1, message)
}

/// `luaL_argerror` for argument `number` as Lua counts them (1 is the first; some C libraries
/// blame argument 0, the call itself).
pub(super) fn numbered_arg_error(lua: &Lua, number: usize, message: &str) -> mlua::Error {
    let position = caller_position(lua);
    let (name, method) = lua
        .inspect_stack(0, |debug| {
            let names = debug.names();
            let name = names.name.map(|name| name.into_owned());
            (name, names.name_what == Some("method"))
        })
        .unwrap_or((None, false));
    let name = name.unwrap_or_else(|| "?".to_string());
    let mut number = number as i64;
    if method {
        number -= 1;
        if number == 0 {
            return mlua::Error::runtime(format!(
                "{position}calling '{name}' on bad self ({message})"
            ));
        }
    }
    mlua::Error::runtime(format!(
        "{position}bad argument #{number} to '{name}' ({message})"
    ))
}

/// `luaL_typerror`'s message for argument `index` (0-based) where `expected` was wanted.
pub(super) fn type_error(lua: &Lua, args: &[Value], index: usize, expected: &str) -> mlua::Error {
    let got = args.get(index).map_or("no value", type_name);
    arg_error(lua, index, &format!("{expected} expected, got {got}"))
}

/// `luaL_checkinteger` of argument `index` (0-based): the number cut toward zero, as
/// `lua_Integer` (C's cast on x86-64: out of range and NaN give `i64::MIN`).
pub(super) fn check_integer(lua: &Lua, args: &[Value], index: usize) -> mlua::Result<i64> {
    Ok(c_int64(check_number(lua, args, index)?))
}

/// `luaL_checknumber` of argument `index` (0-based): a number, or a string Lua reads as one.
pub(super) fn check_number(lua: &Lua, args: &[Value], index: usize) -> mlua::Result<f64> {
    let value = args.get(index).cloned().unwrap_or(Value::Nil);
    match lua.coerce_number(value)? {
        Some(number) => Ok(number),
        None => Err(type_error(lua, args, index, "number")),
    }
}

/// Lua 5.1 `tonumber` of a string: decimal (C `strtod`) or hexadecimal, spaces around.
fn lua_tonumber(text: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(text).ok()?;
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\u{b}');
    if let Some(hex) = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
    {
        return u64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    let parsed: f64 = trimmed.parse().ok()?;
    let lower = trimmed.to_ascii_lowercase();
    (!lower.contains("inf") && !lower.contains("nan")).then_some(parsed)
}

/// Lua 5.1's `tostring` of a number: C `"%.14g"`.
fn format_g14(x: f64) -> String {
    format_g(x, 14)
}

/// `redis.call` / `redis.pcall` body: `true, reply` or `false, {err = text}`.
fn redis_call(lua: &Lua, args: &[Value], host: &mut dyn ScriptHost) -> mlua::Result<(bool, Value)> {
    let error = |text: &str| -> mlua::Result<(bool, Value)> {
        let table = lua.create_table()?;
        table.raw_set("err", text)?;
        Ok((false, Value::Table(table)))
    };
    if args.is_empty() {
        return error("ERR Please specify at least one argument for this redis lib call");
    }
    let mut argv = Vec::with_capacity(args.len());
    for arg in args {
        match arg {
            Value::String(text) => argv.push(text.as_bytes().to_vec()),
            Value::Number(number) => argv.push(lua_number_as_arg(*number)),
            Value::Integer(number) => argv.push(lua_number_as_arg(*number as f64)),
            _ => return error("ERR Lua redis lib command arguments must be strings or integers"),
        }
    }
    match host.call(&argv) {
        Reply::Error(text) => error(&text),
        reply => Ok((true, reply_to_lua(lua, &reply)?)),
    }
}

/// How Redis 7.0 formats a Lua number passed to a command: `%.17g`.
pub fn lua_number_as_arg(number: f64) -> Vec<u8> {
    format_g17(number).into_bytes()
}

/// C's `printf("%.17g", x)`.
fn format_g17(x: f64) -> String {
    format_g(x, 17)
}

/// C's `printf("%.<precision>g", x)`.
pub(super) fn format_g(x: f64, precision: i32) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{:.*e}", (precision - 1) as usize, x);
    let (mantissa, exponent) = sci.split_once('e').expect("scientific notation");
    let exponent: i32 = exponent.parse().expect("an exponent");
    if exponent < -4 || exponent >= precision {
        let mantissa = trim_fraction(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = usize::try_from(precision - 1 - exponent).unwrap_or(0);
        trim_fraction(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// A RESP2 reply as Redis 7.0 hands it to Lua.
fn reply_to_lua(lua: &Lua, reply: &Reply) -> mlua::Result<Value> {
    Ok(match reply {
        Reply::Integer(n) => Value::Number(*n as f64),
        Reply::Bulk(bytes) => Value::String(lua.create_string(bytes)?),
        Reply::Nil | Reply::NilArray => Value::Boolean(false),
        Reply::Status(text) => {
            let table = lua.create_table()?;
            table.raw_set("ok", text.as_str())?;
            Value::Table(table)
        }
        Reply::Error(text) => {
            let table = lua.create_table()?;
            table.raw_set("err", text.as_str())?;
            Value::Table(table)
        }
        Reply::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                table.raw_set(i + 1, reply_to_lua(lua, item)?)?;
            }
            Value::Table(table)
        }
    })
}

/// Redis replaces CR and LF in error and status texts with spaces.
fn one_line(text: &[u8]) -> String {
    String::from_utf8_lossy(text).replace(['\r', '\n'], " ")
}

/// A Lua value a script returns, as Redis 7.0 turns it into a RESP2 reply.
fn lua_to_reply(value: &Value, depth: usize) -> Reply {
    if depth > MAX_REPLY_DEPTH {
        return Reply::error("ERR reached lua stack limit");
    }
    match value {
        Value::String(text) => Reply::Bulk(text.as_bytes().to_vec()),
        Value::Boolean(true) => Reply::Integer(1),
        Value::Integer(n) => Reply::Integer(*n),
        Value::Number(n) => Reply::Integer(lua_number_to_reply_integer(*n)),
        Value::Table(table) => {
            if let Ok(Value::String(err)) = table.raw_get::<Value>("err") {
                return Reply::Error(one_line(&err.as_bytes()));
            }
            if let Ok(Value::String(ok)) = table.raw_get::<Value>("ok") {
                return Reply::Status(one_line(&ok.as_bytes()));
            }
            let mut items = Vec::new();
            for i in 1.. {
                match table.raw_get::<Value>(i) {
                    Ok(Value::Nil) | Err(_) => break,
                    Ok(item) => items.push(lua_to_reply(&item, depth + 1)),
                }
            }
            Reply::Array(items)
        }
        _ => Reply::Nil,
    }
}

/// How Redis 7.0 turns a Lua number a script returns into an integer reply: C's
/// `(long long)` cast of the double (a double at or past 2^63, or NaN, becomes `i64::MIN`,
/// as the cast does on x86-64).
pub fn lua_number_to_reply_integer(number: f64) -> i64 {
    c_int64(number)
}

/// C's conversion of a double to a 64-bit integer on x86-64 (`(long)`, `(long long)`,
/// `lua_Integer`): toward zero; out of range and NaN give `i64::MIN`.
pub(super) fn c_int64(number: f64) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if (-TWO_POW_63..TWO_POW_63).contains(&number) {
        number as i64
    } else {
        i64::MIN
    }
}

/// C's `(int)` of a double on x86-64: toward zero; out of range and NaN give `i32::MIN`.
pub(super) fn c_int32(number: f64) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&number) {
        number as i32
    } else {
        i32::MIN
    }
}

/// Compiles `source` (or finds it compiled); the error reply is Redis's compile error.
fn compiled(vm: &mut Vm, source: &[u8], sha1: &str) -> Result<Function, Reply> {
    if let Ok(Some(function)) = vm.compiled.raw_get::<Option<Function>>(sha1) {
        return Ok(function);
    }
    // Redis reads the shebang line before it compiles the rest.
    if let Err(error) = super::shebang::flags(source) {
        return Err(Reply::Error(format!("ERR {error}")));
    }
    let loaded = vm
        .lua
        .load(super::shebang::lua_body(source))
        .set_name("@user_script")
        .set_environment(vm.env.clone())
        .into_function();
    match loaded {
        Ok(function) => {
            if vm.compiled_count >= COMPILED_LIMIT {
                vm.compiled = vm.lua.create_table().map_err(|e| lua_failure(&e, sha1))?;
                vm.compiled_count = 0;
            }
            vm.compiled
                .raw_set(sha1, function.clone())
                .map_err(|e| lua_failure(&e, sha1))?;
            vm.compiled_count += 1;
            Ok(function)
        }
        Err(mlua::Error::SyntaxError { message, .. }) => Err(Reply::Error(format!(
            "ERR Error compiling script (new function): {}",
            one_line(message.as_bytes())
        ))),
        Err(other) => Err(Reply::Error(format!(
            "ERR Error compiling script (new function): {}",
            one_line(other.to_string().as_bytes())
        ))),
    }
}

/// Runs `f` with this thread's VM (created on first use).
fn with_vm<R>(f: impl FnOnce(&mut Vm) -> R) -> Result<R, Reply> {
    VM.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            match new_vm() {
                Ok(vm) => *slot = Some(vm),
                Err(error) => {
                    return Err(Reply::Error(format!(
                        "ERR the leaselab stand-in could not start Lua: {}",
                        one_line(error.to_string().as_bytes())
                    )))
                }
            }
        }
        let vm = slot.as_mut().expect("created above");
        let result = f(vm);
        // Lua 5.1 has no emergency collection: garbage a script left near the memory limit
        // (its own tables, after it failed for memory) would make every later allocation, and
        // so every later script, fail. Collect it now; a VM still that full is started anew.
        if vm.lua.used_memory() > MEMORY_LIMIT / 2 {
            let _ = vm.lua.gc_collect();
            if vm.lua.used_memory() > MEMORY_LIMIT / 2 {
                *slot = None;
            }
        }
        Ok(result)
    })
}

/// Checks that `source` compiles (what `SCRIPT LOAD` and `EVAL` do first).
pub(crate) fn compile(source: &[u8], sha1: &str) -> Result<(), Reply> {
    with_vm(|vm| compiled(vm, source, sha1).map(|_| ()))?
}

/// Runs a script: `KEYS`, `ARGV`, every `redis.call` through `host`, `math.random`'s state and
/// `cjson`'s settings from and back into `carry`. The reply is the script's, converted as
/// Redis converts it.
pub(crate) fn run_script(
    source: &[u8],
    sha1: &str,
    host: &mut dyn ScriptHost,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
    carry: &mut LuaCarry,
) -> Reply {
    let outcome = with_vm(|vm| {
        let function = compiled(vm, source, sha1)?;
        let strings = |values: &[Vec<u8>]| -> mlua::Result<Table> {
            let table = vm.lua.create_table_with_capacity(values.len(), 0)?;
            for (i, value) in values.iter().enumerate() {
                table.raw_set(i + 1, vm.lua.create_string(value)?)?;
            }
            Ok(table)
        };
        let tables = strings(keys).and_then(|k| Ok((k, strings(args)?)));
        let (keys_table, args_table) = tables.map_err(|e| lua_failure(&e, sha1))?;
        RAND.with(|cell| cell.set(carry.rand48));
        vm.cjson.set(carry.cjson);
        BUDGET_LEFT.with(|cell| cell.set(INSTRUCTION_BUDGET / u64::from(HOOK_EVERY)));
        OUT_OF_BUDGET.with(|flag| flag.set(false));
        OUTPUT_TOO_LARGE.with(|flag| flag.set(false));
        let host = RefCell::new(host);
        let result = vm.lua.scope(|scope| {
            let call = scope.create_function(|lua, args: Variadic<Value>| {
                let (ok, value) = redis_call(lua, &args, &mut **host.borrow_mut())?;
                if ok {
                    return Ok(value);
                }
                let text = match &value {
                    Value::Table(table) => table.raw_get::<String>("err")?,
                    _ => String::new(),
                };
                Err(raised(&text))
            })?;
            let pcall = scope.create_function(|lua, args: Variadic<Value>| {
                Ok(redis_call(lua, &args, &mut **host.borrow_mut())?.1)
            })?;
            vm.redis.raw_set("call", call)?;
            vm.redis.raw_set("pcall", pcall)?;
            let result = vm
                .run
                .call::<MultiValue>((function, keys_table, args_table));
            vm.redis.raw_set("call", Value::Nil)?;
            vm.redis.raw_set("pcall", Value::Nil)?;
            result
        });
        carry.rand48 = RAND.with(Cell::get);
        carry.cjson = vm.cjson.get();
        let out_of_budget = OUT_OF_BUDGET.with(|flag| flag.replace(false));
        let output_too_large = OUTPUT_TOO_LARGE.with(|flag| flag.replace(false));
        let values = result.map_err(|e| lua_failure(&e, sha1))?;
        let mut values = values.into_iter();
        let ok = matches!(values.next(), Some(Value::Boolean(true)));
        let value = values.next().unwrap_or(Value::Nil);
        if ok {
            return Ok(lua_to_reply(&value, 0));
        }
        let error = match value {
            Value::Table(error) => error,
            // Errors that skip the handler (out of memory).
            other => {
                let text = other.to_string().unwrap_or_default();
                note_stopped(
                    sha1,
                    &format!("ran out of Lua memory ({} MiB)", MEMORY_LIMIT >> 20),
                );
                return Err(lua_failure(&mlua::Error::runtime(text), sha1));
            }
        };
        let line: i64 = error.raw_get("line").unwrap_or(0);
        let message = match error.raw_get::<Value>("err") {
            Ok(Value::String(text)) => one_line(&text.as_bytes()),
            _ => "ERR unknown error".to_string(),
        };
        if message.contains(MATCH_STOPPED) {
            note_stopped(
                sha1,
                &format!("ran past {MATCH_STEPS} pattern-matching steps in one call"),
            );
            return Err(Reply::Error(format!(
                "ERR the leaselab stand-in stopped this script after {MATCH_STEPS} steps of one \
                 pattern match (Redis would keep running it and answer BUSY to every other \
                 client) script: {sha1}, on @user_script:{line}."
            )));
        }
        if output_too_large {
            note_stopped(
                sha1,
                &format!(
                    "built a cjson or cmsgpack result over {} MiB",
                    MEMORY_LIMIT >> 20
                ),
            );
            return Err(Reply::Error(format!(
                "ERR the leaselab stand-in stopped this script: a cjson or cmsgpack result grew \
                 past {} MiB (Redis would build it) script: {sha1}, on @user_script:{line}.",
                MEMORY_LIMIT >> 20
            )));
        }
        if out_of_budget {
            note_stopped(
                sha1,
                &format!("ran past {INSTRUCTION_BUDGET} Lua instructions"),
            );
            return Err(Reply::Error(format!(
                "ERR the leaselab stand-in stopped this script after {INSTRUCTION_BUDGET} Lua \
                 instructions (Redis would keep running it and answer BUSY to every other \
                 client) script: {sha1}, on @user_script:{line}."
            )));
        }
        Ok(Reply::Error(format!(
            "{message} script: {sha1}, on @user_script:{line}."
        )))
    });
    match outcome {
        Ok(Ok(reply)) | Ok(Err(reply)) | Err(reply) => reply,
    }
}

/// An error of the Lua machinery itself (memory limit, ...), as an error reply.
fn lua_failure(error: &mlua::Error, sha1: &str) -> Reply {
    let text = match error {
        mlua::Error::MemoryError(_) => {
            note_stopped(
                sha1,
                &format!("ran out of Lua memory ({} MiB)", MEMORY_LIMIT >> 20),
            );
            "not enough memory".to_string()
        }
        other => other.to_string(),
    };
    Reply::Error(format!(
        "ERR Error running script {sha1}: {}",
        one_line(text.as_bytes())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rand48_starts_as_a_fresh_redis_does() {
        // A fresh Redis 7.0.15: EVAL "return {math.random(1000000), ...}" answers these.
        let mut state = RAND48_INITIAL;
        let first: Vec<i64> = (0..3)
            .map(|_| (rand01(&mut state) * 1_000_000.0).floor() as i64 + 1)
            .collect();
        assert_eq!(first, vec![396_465, 840_486, 353_337]);
        assert_eq!(srand48(0), 0x330E);
    }

    #[test]
    fn numbers_format_as_percent_17g() {
        assert_eq!(format_g17(25.0), "25");
        assert_eq!(format_g17(-1.0), "-1");
        assert_eq!(format_g17(0.1), "0.10000000000000001");
        assert_eq!(format_g17(1e17), "1e+17");
        assert_eq!(format_g17(1e16), "10000000000000000");
        assert_eq!(format_g17(-0.0), "-0");
        assert_eq!(format_g17(f64::INFINITY), "inf");
        assert_eq!(format_g17(2.5), "2.5");
        assert_eq!(format_g17(1e-5), "1.0000000000000001e-05");
    }

    #[test]
    fn integers_a_script_returns_go_through_a_double() {
        assert_eq!(lua_number_to_reply_integer(42.9), 42);
        assert_eq!(lua_number_to_reply_integer(-7.9), -7);
        assert_eq!(lua_number_to_reply_integer(i64::MAX as f64), i64::MIN);
        assert_eq!(lua_number_to_reply_integer(f64::NAN), i64::MIN);
    }
}
