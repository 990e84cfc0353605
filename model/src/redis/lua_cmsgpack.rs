//! The `cmsgpack` library scripts see, as Redis 7.0 gives it (lua-cmsgpack 0.4.0).
//!
//! `cmsgpack.pack(...)` writes each argument as MessagePack and joins them; `unpack(s)` reads
//! every value back (`unpack_one(s [, offset])` one, `unpack_limit(s, limit [, offset])` up
//! to `limit`, both returning the offset to go on from, or -1 at the end). What Redis's copy
//! does, checked against Redis 7.0.15: a table is an array when its keys are exactly 1..n
//! (else a map, in `next` order), tables nested 16 deep are written as nil, a number is an
//! integer when a 64-bit integer holds it exactly (else a float if a 32-bit float does, else a
//! double), functions and other values are nil; strings are read back from `str` and `raw`
//! forms (not `bin`), 64-bit unsigned integers past 2^63 come back negative, and a value
//! cut short is "Missing bytes in input." Nesting is bounded only by the Lua stack (8,000
//! slots from the call), as in C.

use mlua::{Lua, Table, Value, Variadic};

use super::lua::{
    c_int32, c_int64, check_integer, check_output_size, helper_error, numbered_arg_error,
    type_error, MAX_C_STACK_SLOTS,
};

/// Values one `unpack` may return: a string or table is a handle on mlua's reference stack
/// until Lua has it, and mlua pushes the values only if the Lua stack has room for all of them
/// and some more; both hold fewer than 8,000. Past this, `unpack` fails as Redis fails at
/// 8,000 (Redis returns up to 7,999).
const MAX_RETURNED_VALUES: usize = 7_900;

/// Tables nested this deep are written as nil (lua-cmsgpack's `LUACMSGPACK_MAX_NESTING`).
const MAX_NESTING: u32 = 16;

fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => Some(*n),
        Value::Integer(n) => Some(*n as f64),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Packing
// ---------------------------------------------------------------------------------------

fn encode_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_number(out: &mut Vec<u8>, n: f64) {
    let integer = c_int64(n);
    if !n.is_infinite() && integer as f64 == n {
        encode_int(out, integer);
        return;
    }
    let single = n as f32;
    if f64::from(single) == n {
        out.push(0xca);
        out.extend_from_slice(&single.to_bits().to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_bits().to_be_bytes());
    }
}

/// A header of one of three sizes: `small` (the low bits hold the count up to `small_max`),
/// then 16 and 32 bits.
fn encode_header(out: &mut Vec<u8>, n: u64, small: u8, small_max: u64, big: [u8; 2]) {
    if n <= small_max {
        out.push(small | n as u8);
    } else if n <= 0xffff {
        out.push(big[0]);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(big[1]);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(bytes);
}

/// lua-cmsgpack's `table_is_an_array`: keys exactly 1..n.
fn is_array(table: &Table) -> mlua::Result<bool> {
    let mut count: i32 = 0;
    let mut max: i32 = 0;
    for pair in table.pairs::<Value, Value>() {
        let (key, _) = pair?;
        match number_of(&key) {
            Some(n) if n > 0.0 && !n.is_infinite() && f64::from(c_int32(n)) == n => {
                max = max.max(c_int32(n));
                count = count.wrapping_add(1);
            }
            _ => return Ok(false),
        }
    }
    Ok(max == count)
}

fn encode_value(proxies: &Table, value: &Value, level: u32, out: &mut Vec<u8>) -> mlua::Result<()> {
    check_output_size(out.len())?;
    match value {
        Value::String(text) => encode_bytes(out, &text.as_bytes()),
        Value::Boolean(true) => out.push(0xc3),
        Value::Boolean(false) => out.push(0xc2),
        Value::Integer(_) | Value::Number(_) => encode_number(out, number_of(value).unwrap_or(0.0)),
        Value::Table(table) if level < MAX_NESTING => {
            // A library table behind its read-only proxy is written as itself.
            let table = match proxies.raw_get::<Value>(table)? {
                Value::Table(behind) => behind,
                _ => table.clone(),
            };
            if is_array(&table)? {
                let len = table.raw_len();
                encode_header(out, len as u64, 0x90, 15, [0xdc, 0xdd]);
                for index in 1..=len {
                    let item: Value = table.raw_get(index)?;
                    encode_value(proxies, &item, level + 1, out)?;
                }
            } else {
                let mut count: u64 = 0;
                for pair in table.pairs::<Value, Value>() {
                    pair?;
                    count += 1;
                }
                encode_header(out, count, 0x80, 15, [0xde, 0xdf]);
                for pair in table.pairs::<Value, Value>() {
                    let (key, item) = pair?;
                    encode_value(proxies, &key, level + 1, out)?;
                    encode_value(proxies, &item, level + 1, out)?;
                }
            }
        }
        _ => out.push(0xc0),
    }
    Ok(())
}

fn pack(lua: &Lua, proxies: &Table, args: &[Value]) -> mlua::Result<mlua::String> {
    if args.is_empty() {
        return Err(numbered_arg_error(lua, 0, "MessagePack pack needs input."));
    }
    // `lua_checkstack(L, nargs)` above the arguments themselves.
    if args.len() * 2 > MAX_C_STACK_SLOTS {
        return Err(numbered_arg_error(
            lua,
            0,
            "Too many arguments for MessagePack pack.",
        ));
    }
    let mut out = Vec::new();
    for arg in args {
        encode_value(proxies, arg, 0, &mut out)?;
    }
    lua.create_string(out)
}

// ---------------------------------------------------------------------------------------
// Unpacking
// ---------------------------------------------------------------------------------------

/// Why reading stopped.
enum Stop {
    /// The input ended inside a value ("Missing bytes in input.").
    Missing,
    /// A byte that starts no value lua-cmsgpack reads ("Bad data format in input.").
    Bad,
    /// A Lua error (the stack is full, a nil or NaN key).
    Lua(mlua::Error),
}

impl From<mlua::Error> for Stop {
    fn from(error: mlua::Error) -> Stop {
        Stop::Lua(error)
    }
}

/// What starts at the cursor.
enum Start {
    Scalar(Value),
    Array(u64),
    Map(u64),
}

/// An open array or map being read (its table waits in a Lua table: a Rust handle per level
/// would fill mlua's reference stack before nesting reaches the Lua stack's bound).
enum Open {
    Array {
        next: i64,
        left: u64,
    },
    /// `keyed` once its key (kept in the keys table) is read.
    Map {
        left: u64,
        keyed: bool,
    },
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    /// Lua stack slots in use from the C function's base, as lua-cmsgpack fills them.
    slots: usize,
}

impl Reader<'_> {
    fn left(&self) -> usize {
        self.data.len() - self.at
    }

    fn need(&self, n: usize) -> Result<(), Stop> {
        if self.left() < n {
            Err(Stop::Missing)
        } else {
            Ok(())
        }
    }

    fn be(&self, from: usize, n: usize) -> u64 {
        self.data[from..from + n]
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
    }

    /// `luaL_checkstack(L, 1, message)`.
    fn check_stack(&self, lua: &Lua, message: &str) -> Result<(), Stop> {
        if self.slots + 1 > MAX_C_STACK_SLOTS {
            return Err(Stop::Lua(helper_error(
                lua,
                &format!("stack overflow ({message})"),
            )));
        }
        Ok(())
    }

    /// Reads what starts at the cursor: a whole scalar, or an array's or map's header.
    fn start(&mut self, lua: &Lua) -> Result<Start, Stop> {
        self.need(1)?;
        self.check_stack(
            lua,
            "too many return values at once; use unpack_one or unpack_limit instead.",
        )?;
        let at = self.at;
        let first = self.data[at];
        let (start, length) = match first {
            0xcc => {
                self.need(2)?;
                (
                    Start::Scalar(Value::Number(f64::from(self.data[at + 1]))),
                    2,
                )
            }
            0xd0 => {
                self.need(2)?;
                (
                    Start::Scalar(Value::Number(f64::from(self.data[at + 1] as i8))),
                    2,
                )
            }
            0xcd => {
                self.need(3)?;
                (Start::Scalar(Value::Number(self.be(at + 1, 2) as f64)), 3)
            }
            0xd1 => {
                self.need(3)?;
                let n = self.be(at + 1, 2) as u16 as i16;
                (Start::Scalar(Value::Number(f64::from(n))), 3)
            }
            0xce => {
                self.need(5)?;
                (Start::Scalar(Value::Number(self.be(at + 1, 4) as f64)), 5)
            }
            0xd2 => {
                self.need(5)?;
                let n = self.be(at + 1, 4) as u32 as i32;
                (Start::Scalar(Value::Number(f64::from(n))), 5)
            }
            // An unsigned 64-bit value goes through `lua_Integer` (signed) on its way.
            0xcf | 0xd3 => {
                self.need(9)?;
                (
                    Start::Scalar(Value::Number(self.be(at + 1, 8) as i64 as f64)),
                    9,
                )
            }
            0xc0 => (Start::Scalar(Value::Nil), 1),
            0xc3 => (Start::Scalar(Value::Boolean(true)), 1),
            0xc2 => (Start::Scalar(Value::Boolean(false)), 1),
            0xca => {
                self.need(5)?;
                let single = f32::from_bits(self.be(at + 1, 4) as u32);
                (Start::Scalar(Value::Number(f64::from(single))), 5)
            }
            0xcb => {
                self.need(9)?;
                (
                    Start::Scalar(Value::Number(f64::from_bits(self.be(at + 1, 8)))),
                    9,
                )
            }
            0xd9..=0xdb => {
                let size = match first {
                    0xd9 => 1,
                    0xda => 2,
                    _ => 4,
                };
                self.need(1 + size)?;
                let len = self.be(at + 1, size) as usize;
                self.need(1 + size + len)?;
                let bytes = &self.data[at + 1 + size..at + 1 + size + len];
                (
                    Start::Scalar(Value::String(lua.create_string(bytes)?)),
                    1 + size + len,
                )
            }
            0xdc..=0xdf => {
                let size = if matches!(first, 0xdc | 0xde) { 2 } else { 4 };
                self.need(1 + size)?;
                let n = self.be(at + 1, size);
                let start = if first <= 0xdd {
                    Start::Array(n)
                } else {
                    Start::Map(n)
                };
                (start, 1 + size)
            }
            _ if first & 0x80 == 0 => (Start::Scalar(Value::Number(f64::from(first))), 1),
            _ if first & 0xe0 == 0xe0 => (Start::Scalar(Value::Number(f64::from(first as i8))), 1),
            _ if first & 0xe0 == 0xa0 => {
                let len = usize::from(first & 0x1f);
                self.need(1 + len)?;
                let bytes = &self.data[at + 1..at + 1 + len];
                (
                    Start::Scalar(Value::String(lua.create_string(bytes)?)),
                    1 + len,
                )
            }
            _ if first & 0xf0 == 0x90 => (Start::Array(u64::from(first & 0xf)), 1),
            _ if first & 0xf0 == 0x80 => (Start::Map(u64::from(first & 0xf)), 1),
            _ => return Err(Stop::Bad),
        };
        self.at += length;
        Ok(start)
    }

    /// One whole value from the cursor (lua-cmsgpack's `mp_decode_to_lua_type`).
    fn value(&mut self, lua: &Lua) -> Result<Value, Stop> {
        let tables = lua.create_table()?;
        let keys = lua.create_table()?;
        let mut open: Vec<Open> = Vec::new();
        loop {
            // Start a value; an empty container is whole at once.
            let mut value = match self.start(lua)? {
                Start::Scalar(value) => {
                    self.slots += 1;
                    value
                }
                Start::Array(n) => {
                    let table = lua.create_table()?;
                    self.slots += 1;
                    self.check_stack(lua, "in function mp_decode_to_lua_array")?;
                    if n == 0 {
                        Value::Table(table)
                    } else {
                        tables.raw_set(open.len() + 1, table)?;
                        open.push(Open::Array { next: 1, left: n });
                        // The index is pushed before the element is read.
                        self.slots += 1;
                        continue;
                    }
                }
                Start::Map(n) => {
                    let table = lua.create_table()?;
                    self.slots += 1;
                    if n == 0 {
                        Value::Table(table)
                    } else {
                        tables.raw_set(open.len() + 1, table)?;
                        open.push(Open::Map {
                            left: n,
                            keyed: false,
                        });
                        continue;
                    }
                }
            };
            // Put it where it belongs, closing what it completes.
            loop {
                let depth = open.len();
                let Some(top) = open.last_mut() else {
                    return Ok(value);
                };
                let table: Table = tables.raw_get(depth)?;
                let left = match top {
                    Open::Array { next, left } => {
                        table.raw_set(*next, value)?;
                        *next += 1;
                        self.slots -= 2;
                        *left -= 1;
                        *left
                    }
                    Open::Map { keyed, .. } if !*keyed => {
                        keys.raw_set(depth, value)?;
                        *keyed = true;
                        break;
                    }
                    Open::Map { left, keyed } => {
                        let key: Value = keys.raw_get(depth)?;
                        match &key {
                            Value::Nil => {
                                return Err(Stop::Lua(mlua::Error::runtime("table index is nil")))
                            }
                            Value::Number(n) if n.is_nan() => {
                                return Err(Stop::Lua(mlua::Error::runtime("table index is NaN")))
                            }
                            _ => {}
                        }
                        table.raw_set(key, value)?;
                        keys.raw_set(depth, Value::Nil)?;
                        *keyed = false;
                        self.slots -= 2;
                        *left -= 1;
                        *left
                    }
                };
                if left == 0 {
                    open.pop();
                    tables.raw_set(depth, Value::Nil)?;
                    value = Value::Table(table);
                    continue;
                }
                if let Some(Open::Array { .. }) = open.last() {
                    self.slots += 1;
                }
                break;
            }
        }
    }
}

/// lua-cmsgpack's `mp_unpack_full`: the values (the offset to go on from first, unless all
/// were asked for) in a table, and how many.
fn unpack_full(
    lua: &Lua,
    data: &[u8],
    base_slots: usize,
    limit: i64,
    offset: i64,
) -> mlua::Result<Vec<Value>> {
    let len = data.len();
    if offset < 0 || limit < 0 {
        return Err(helper_error(
            lua,
            &format!(
                "Invalid request to unpack with offset of {} and limit of {}.",
                offset as i32, len as i32
            ),
        ));
    }
    if offset as u64 > len as u64 {
        return Err(helper_error(
            lua,
            &format!(
                "Start offset {} greater than input length {}.",
                offset as i32, len as i32
            ),
        ));
    }
    let decode_all = limit == 0 && offset == 0;
    let limit = if decode_all {
        i64::from(i32::MAX)
    } else {
        limit
    };
    let mut reader = Reader {
        data,
        at: offset as usize,
        slots: base_slots,
    };
    let mut values = Vec::new();
    let mut count: i64 = 0;
    while reader.left() > 0 && count < limit {
        if values.len() + usize::from(!decode_all) >= MAX_RETURNED_VALUES {
            return Err(helper_error(
                lua,
                "stack overflow (too many return values at once; use unpack_one or \
                 unpack_limit instead.)",
            ));
        }
        match reader.value(lua) {
            Ok(value) => values.push(value),
            Err(Stop::Missing) => return Err(helper_error(lua, "Missing bytes in input.")),
            Err(Stop::Bad) => return Err(helper_error(lua, "Bad data format in input.")),
            Err(Stop::Lua(error)) => return Err(error),
        }
        count += 1;
    }
    if !decode_all {
        if reader.slots + 1 > MAX_C_STACK_SLOTS {
            return Err(helper_error(
                lua,
                "stack overflow (in function mp_unpack_full)",
            ));
        }
        let next = if reader.left() == 0 {
            -1.0
        } else {
            reader.at as f64
        };
        values.insert(0, Value::Number(next));
    }
    Ok(values)
}

/// `luaL_checklstring` of the first argument (a number is read as its text).
fn check_string(lua: &Lua, args: &[Value]) -> mlua::Result<Vec<u8>> {
    match args.first() {
        Some(Value::String(text)) => Ok(text.as_bytes().to_vec()),
        Some(Value::Integer(n)) => Ok(super::lua::format_g(*n as f64, 14).into_bytes()),
        Some(Value::Number(n)) => Ok(super::lua::format_g(*n, 14).into_bytes()),
        _ => Err(type_error(lua, args, 0, "string")),
    }
}

/// `luaL_optinteger` of argument `index` (0-based).
fn opt_integer(lua: &Lua, args: &[Value], index: usize) -> mlua::Result<i64> {
    match args.get(index) {
        None | Some(Value::Nil) => Ok(0),
        Some(_) => check_integer(lua, args, index),
    }
}

/// The `cmsgpack` table (made read-only by the sandbox); `proxies` maps the sandbox's
/// read-only proxies to the tables behind them.
pub(super) fn library(lua: &Lua, proxies: Table) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    let pack = lua.create_function(move |lua, args: Variadic<Value>| pack(lua, &proxies, &args))?;
    table.raw_set("pack", pack)?;
    let unpack = lua.create_function(|lua, args: Variadic<Value>| {
        let data = check_string(lua, &args)?;
        unpack_full(lua, &data, args.len(), 0, 0).map(Variadic::from_iter)
    })?;
    table.raw_set("unpack", unpack)?;
    let unpack_one = lua.create_function(|lua, args: Variadic<Value>| {
        let offset = opt_integer(lua, &args, 1)?;
        let data = check_string(lua, &args[..args.len().min(1)])?;
        unpack_full(lua, &data, 1, 1, offset).map(Variadic::from_iter)
    })?;
    table.raw_set("unpack_one", unpack_one)?;
    let unpack_limit = lua.create_function(|lua, args: Variadic<Value>| {
        let limit = check_integer(lua, &args, 1)?;
        let offset = opt_integer(lua, &args, 2)?;
        let data = check_string(lua, &args[..args.len().min(1)])?;
        unpack_full(lua, &data, 1, limit, offset).map(Variadic::from_iter)
    })?;
    table.raw_set("unpack_limit", unpack_limit)?;
    table.raw_set("_NAME", "cmsgpack")?;
    table.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    table.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    table.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: i64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_int(&mut out, n);
        out
    }

    fn number(n: f64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_number(&mut out, n);
        out
    }

    #[test]
    fn integers_take_the_smallest_form() {
        assert_eq!(int(1), vec![0x01]);
        assert_eq!(int(-1), vec![0xff]);
        assert_eq!(int(128), vec![0xcc, 0x80]);
        assert_eq!(int(-33), vec![0xd0, 0xdf]);
        assert_eq!(int(65536), vec![0xce, 0, 1, 0, 0]);
        assert_eq!(int(1 << 32), vec![0xcf, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(int(-(1 << 40)), vec![0xd3, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn fractions_are_floats_when_a_float_holds_them() {
        assert_eq!(number(0.5), vec![0xca, 0x3f, 0, 0, 0]);
        assert_eq!(number(0.1)[0], 0xcb);
        assert_eq!(number(f64::INFINITY), vec![0xca, 0x7f, 0x80, 0, 0]);
        assert_eq!(number(2f64.powi(63))[0], 0xca);
        assert_eq!(number(-2f64.powi(63))[0], 0xd3);
    }
}
