//! The `cjson` library scripts see, as Redis 7.0 gives it (Lua CJSON 2.1.0).
//!
//! `cjson.encode(value)` and `cjson.decode(text)` with CJSON's own rules, checked against a
//! real Redis 7.0.15: numbers written with C's `%.14g` (the precision is a setting), `/`
//! escaped as `\/`, a table with only positive integer keys written as an array (an
//! "excessively sparse" one refused), others as an object in the order Lua's `next` gives,
//! `cjson.null` (a NULL light userdata) for JSON's null; decoding reads numbers as C's
//! `strtod` does (so `0x10`, `+1`, `Infinity` and `nan` are numbers, as CJSON allows by
//! default), stops at a NUL byte, and fails with CJSON's texts (`Expected value but found
//! invalid token at character 1`). Nesting is bounded as CJSON bounds it: by the depth settings
//! (1,000 by default) and by the Lua stack CJSON fills (8,000 slots from the call).
//!
//! The settings (`encode_number_precision`, `encode_sparse_array`, ...) belong to the server,
//! as in Redis: a script that changes them changes them for later scripts, until `SCRIPT
//! FLUSH` or a restart. [`CjsonConfig`] is that part of the server's state. `cjson.new()` gives
//! a table with settings of its own.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{LightUserData, Lua, Table, Value, Variadic};

use super::lua::{
    arg_error, c_int32, check_integer, check_output_size, format_g, helper_error, type_error,
    type_name, MAX_C_STACK_SLOTS,
};

/// CJSON's settings, as Redis 7.0 starts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CjsonConfig {
    /// `encode_sparse_array`'s first value: write a too sparse array as an object.
    sparse_convert: bool,
    /// Its second: how much larger than its count a sparse array's largest index may be.
    sparse_ratio: i32,
    /// Its third: an array whose largest index is at most this is never too sparse.
    sparse_safe: i32,
    encode_max_depth: i32,
    decode_max_depth: i32,
    /// 0: refuse NaN and infinities; 1: write them (`nan`, `inf`); 2: write them as `null`.
    encode_invalid_numbers: u8,
    decode_invalid_numbers: bool,
    /// `encode_keep_buffer` (it changes no result).
    keep_buffer: bool,
    /// Significant digits of a number written (1 to 14).
    precision: i32,
}

impl Default for CjsonConfig {
    fn default() -> CjsonConfig {
        CjsonConfig {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: true,
            keep_buffer: true,
            precision: 14,
        }
    }
}

/// Settings shared by one `cjson` table's functions.
type Shared = Rc<Cell<CjsonConfig>>;

/// What one `cjson` table's functions share: its settings, and the sandbox's map from each
/// read-only proxy to the table behind it.
#[derive(Clone)]
struct Context {
    config: Shared,
    proxies: Table,
}

/// JSON's null as CJSON gives it.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

// ---------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------

/// `json_arg_init`: at most `count` arguments.
fn check_count(lua: &Lua, args: &[Value], count: usize) -> mlua::Result<()> {
    if args.len() > count {
        return Err(arg_error(lua, count, "found too many arguments"));
    }
    Ok(())
}

/// `luaL_checkinteger` brought to a C `int` (its low 32 bits).
fn check_int(lua: &Lua, args: &[Value], index: usize) -> mlua::Result<i32> {
    Ok(check_integer(lua, args, index)? as i32)
}

/// `json_integer_option`: sets `setting` from argument `index` when given; its value.
fn integer_option(
    lua: &Lua,
    args: &[Value],
    index: usize,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> mlua::Result<Value> {
    if !matches!(args.get(index), None | Some(Value::Nil)) {
        let value = check_int(lua, args, index)?;
        if !(min <= value && value <= max) {
            // CJSON names the first argument whichever it checks.
            return Err(arg_error(
                lua,
                0,
                &format!("expected integer between {min} and {max}"),
            ));
        }
        *setting = value;
    }
    Ok(Value::Number(f64::from(*setting)))
}

/// `json_enum_option` with `bool_true` 1: a boolean, or one of `options` by name.
fn enum_option(
    lua: &Lua,
    args: &[Value],
    index: usize,
    setting: &mut u8,
    options: &[&str],
) -> mlua::Result<Value> {
    match args.get(index) {
        None | Some(Value::Nil) => {}
        Some(Value::Boolean(on)) => *setting = u8::from(*on),
        Some(value) => {
            let name: Vec<u8> = match value {
                Value::String(text) => text.as_bytes().to_vec(),
                Value::Integer(n) => format_g(*n as f64, 14).into_bytes(),
                Value::Number(n) => format_g(*n, 14).into_bytes(),
                _ => return Err(type_error(lua, args, index, "string")),
            };
            match options.iter().position(|option| option.as_bytes() == name) {
                Some(position) => *setting = position as u8,
                None => {
                    let shown = String::from_utf8_lossy(&name).into_owned();
                    return Err(arg_error(lua, index, &format!("invalid option '{shown}'")));
                }
            }
        }
    }
    Ok(if *setting <= 1 {
        Value::Boolean(*setting == 1)
    } else {
        Value::String(lua.create_string(options[usize::from(*setting)])?)
    })
}

const ON_OFF: [&str; 2] = ["off", "on"];

fn bool_option(lua: &Lua, args: &[Value], index: usize, setting: &mut bool) -> mlua::Result<Value> {
    let mut value = u8::from(*setting);
    let result = enum_option(lua, args, index, &mut value, &ON_OFF);
    *setting = value == 1;
    result
}

/// Runs `change` on the settings. As in CJSON, the options a setter set before one that
/// fails stay set.
fn configure(
    shared: &Shared,
    change: impl FnOnce(&mut CjsonConfig) -> mlua::Result<Variadic<Value>>,
) -> mlua::Result<Variadic<Value>> {
    let mut config = shared.get();
    let result = change(&mut config);
    shared.set(config);
    result
}

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

/// CJSON's escape for a byte, if it has one.
fn escape(byte: u8) -> Option<&'static str> {
    const CONTROL: [&str; 32] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011",
        "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
        "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    ];
    match byte {
        0..=31 => Some(CONTROL[usize::from(byte)]),
        b'"' => Some("\\\""),
        b'/' => Some("\\/"),
        b'\\' => Some("\\\\"),
        127 => Some("\\u007f"),
        _ => None,
    }
}

fn append_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &byte in bytes {
        match escape(byte) {
            Some(escaped) => out.extend_from_slice(escaped.as_bytes()),
            None => out.push(byte),
        }
    }
    out.push(b'"');
}

fn append_number(
    lua: &Lua,
    config: &CjsonConfig,
    out: &mut Vec<u8>,
    number: f64,
) -> mlua::Result<()> {
    match config.encode_invalid_numbers {
        0 if !number.is_finite() => {
            return Err(helper_error(
                lua,
                "Cannot serialise number: must not be NaN or Inf",
            ));
        }
        1 if number.is_nan() => {
            out.extend_from_slice(b"nan");
            return Ok(());
        }
        2 if !number.is_finite() => {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        _ => {}
    }
    out.extend_from_slice(format_g(number, config.precision).as_bytes());
    Ok(())
}

fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => Some(*n),
        Value::Integer(n) => Some(*n as f64),
        _ => None,
    }
}

/// How a table is written: CJSON's `lua_array_length`.
enum Shape {
    Array(i32),
    Object,
}

/// A table being written. The tables themselves (and an object's last key) wait in Lua
/// tables, not in Rust handles: every value a Rust function holds takes a slot of a stack
/// that nesting as deep as CJSON allows (8,000 levels) would exhaust.
enum Open {
    /// Elements `next..=len` still to write.
    Array { next: i32, len: i32 },
    /// Pairs still to write, in `next` order; `first` until one is written.
    Object { first: bool },
}

/// How a table is written: CJSON's `lua_array_length`, over the keys in `next` order.
fn shape(lua: &Lua, config: &CjsonConfig, table: &Table) -> mlua::Result<Shape> {
    let mut max: i32 = 0;
    let mut items: i32 = 0;
    for pair in table.pairs::<Value, Value>() {
        let (key, _) = pair?;
        match number_of(&key) {
            Some(k) if k != 0.0 && k.floor() == k && k >= 1.0 => {
                if k > f64::from(max) {
                    max = c_int32(k);
                }
                items = items.wrapping_add(1);
            }
            _ => return Ok(Shape::Object),
        }
    }
    if config.sparse_ratio > 0
        && max > items.wrapping_mul(config.sparse_ratio)
        && max > config.sparse_safe
    {
        if !config.sparse_convert {
            return Err(helper_error(
                lua,
                "Cannot serialise table: excessively sparse array",
            ));
        }
        return Ok(Shape::Object);
    }
    Ok(if max > 0 {
        Shape::Array(max)
    } else {
        Shape::Object
    })
}

fn encode_value(
    lua: &Lua,
    config: &CjsonConfig,
    proxies: &Table,
    value: &Value,
) -> mlua::Result<Vec<u8>> {
    let mut out = Vec::new();
    let next: mlua::Function = lua.globals().raw_get("next")?;
    // `tables[d]` is the open table at depth d, `keys[d]` an open object's last key.
    let tables = lua.create_table()?;
    let keys = lua.create_table()?;
    let mut open: Vec<Open> = Vec::new();
    // The Lua stack slots CJSON would fill: the argument, then per open table its element
    // (an array) or its key and value (an object).
    let mut slots: usize = 1;
    let mut pending = Some(value.clone());
    loop {
        check_output_size(out.len())?;
        if let Some(value) = pending.take() {
            match &value {
                Value::String(text) => append_string(&mut out, &text.as_bytes()),
                Value::Integer(_) | Value::Number(_) => {
                    append_number(lua, config, &mut out, number_of(&value).unwrap_or(0.0))?;
                }
                Value::Boolean(true) => out.extend_from_slice(b"true"),
                Value::Boolean(false) => out.extend_from_slice(b"false"),
                Value::Nil => out.extend_from_slice(b"null"),
                Value::LightUserData(data) if data.0.is_null() => {
                    out.extend_from_slice(b"null");
                }
                Value::Table(table) => {
                    // A library table behind its read-only proxy is written as itself.
                    let table = match proxies.raw_get::<Value>(table)? {
                        Value::Table(behind) => behind,
                        _ => table.clone(),
                    };
                    let table = &table;
                    let depth = open.len() + 1;
                    if depth > usize::try_from(config.encode_max_depth).unwrap_or(0)
                        || slots + 3 > MAX_C_STACK_SLOTS
                    {
                        return Err(helper_error(
                            lua,
                            &format!("Cannot serialise, excessive nesting ({depth})"),
                        ));
                    }
                    match shape(lua, config, table)? {
                        Shape::Array(len) => {
                            out.push(b'[');
                            slots += 1;
                            open.push(Open::Array { next: 1, len });
                        }
                        Shape::Object => {
                            out.push(b'{');
                            slots += 2;
                            open.push(Open::Object { first: true });
                        }
                    }
                    tables.raw_set(depth, table)?;
                }
                other => {
                    return Err(helper_error(
                        lua,
                        &format!("Cannot serialise {}: type not supported", type_name(other)),
                    ));
                }
            }
        }
        // The next element of the innermost open table, or close it.
        let depth = open.len();
        let Some(top) = open.last_mut() else {
            return Ok(out);
        };
        let table: Table = tables.raw_get(depth)?;
        match top {
            Open::Array { next, len } => {
                if *next > *len {
                    out.push(b']');
                    open.pop();
                    tables.raw_set(depth, Value::Nil)?;
                    slots -= 1;
                    continue;
                }
                if *next > 1 {
                    out.push(b',');
                }
                pending = Some(table.raw_get::<Value>(*next)?);
                *next += 1;
            }
            Open::Object { first } => {
                let last: Value = keys.raw_get(depth)?;
                let (key, value): (Value, Value) = next.call((table, last))?;
                if key.is_nil() {
                    out.push(b'}');
                    open.pop();
                    tables.raw_set(depth, Value::Nil)?;
                    keys.raw_set(depth, Value::Nil)?;
                    slots -= 2;
                    continue;
                }
                if !*first {
                    out.push(b',');
                }
                *first = false;
                match &key {
                    Value::Integer(_) | Value::Number(_) => {
                        out.push(b'"');
                        append_number(lua, config, &mut out, number_of(&key).unwrap_or(0.0))?;
                        out.extend_from_slice(b"\":");
                    }
                    Value::String(text) => {
                        append_string(&mut out, &text.as_bytes());
                        out.push(b':');
                    }
                    other => {
                        return Err(helper_error(
                            lua,
                            &format!(
                                "Cannot serialise {}: table key must be a number or string",
                                type_name(other)
                            ),
                        ));
                    }
                }
                keys.raw_set(depth, key)?;
                pending = Some(value);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TokenType {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    String,
    Number,
    Boolean,
    Null,
    Colon,
    Comma,
    End,
    Error,
}

impl TokenType {
    fn name(self) -> &'static str {
        match self {
            TokenType::ObjBegin => "T_OBJ_BEGIN",
            TokenType::ObjEnd => "T_OBJ_END",
            TokenType::ArrBegin => "T_ARR_BEGIN",
            TokenType::ArrEnd => "T_ARR_END",
            TokenType::String => "T_STRING",
            TokenType::Number => "T_NUMBER",
            TokenType::Boolean => "T_BOOLEAN",
            TokenType::Null => "T_NULL",
            TokenType::Colon => "T_COLON",
            TokenType::Comma => "T_COMMA",
            TokenType::End => "T_END",
            TokenType::Error => "T_ERROR",
        }
    }
}

struct Token {
    kind: TokenType,
    /// Where it starts (where the error is, for an error), 0-based.
    index: usize,
    /// An error token's reason.
    error: &'static str,
    string: Vec<u8>,
    number: f64,
    boolean: bool,
}

impl Token {
    fn new(kind: TokenType, index: usize) -> Token {
        Token {
            kind,
            index,
            error: "",
            string: Vec::new(),
            number: 0.0,
            boolean: false,
        }
    }

    fn error(index: usize, reason: &'static str) -> Token {
        Token {
            error: reason,
            ..Token::new(TokenType::Error, index)
        }
    }
}

struct Parser<'a> {
    data: &'a [u8],
    at: usize,
    decode_invalid_numbers: bool,
}

impl Parser<'_> {
    /// The byte at `index`, NUL past the end (the C string's terminator).
    fn byte(&self, index: usize) -> u8 {
        self.data.get(index).copied().unwrap_or(0)
    }

    fn starts_with(&self, index: usize, word: &[u8]) -> bool {
        word.iter()
            .enumerate()
            .all(|(i, &b)| self.byte(index + i) == b)
    }

    fn starts_with_ignore_case(&self, index: usize, word: &[u8]) -> bool {
        word.iter()
            .enumerate()
            .all(|(i, &b)| self.byte(index + i).to_ascii_lowercase() == b)
    }

    /// CJSON's `json_is_invalid_number`: text `strtod` reads but strict JSON does not.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.at;
        if self.byte(p) == b'+' {
            return true;
        }
        if self.byte(p) == b'-' {
            p += 1;
        }
        let ch = self.byte(p);
        if ch == b'0' {
            let ch2 = self.byte(p + 1);
            return (ch2 | 0x20) == b'x' || ch2.is_ascii_digit();
        }
        // A C `char` is signed: bytes from 0x80 compare below '9'.
        if (ch as i8) <= b'9' as i8 {
            return false;
        }
        self.starts_with_ignore_case(p, b"inf") || self.starts_with_ignore_case(p, b"nan")
    }

    fn number_token(&mut self) -> Token {
        let start = self.at;
        match strtod(self.data, start) {
            Some((number, end)) => {
                self.at = end;
                let mut token = Token::new(TokenType::Number, start);
                token.number = number;
                token
            }
            None => Token::error(start, "invalid number"),
        }
    }

    fn string_token(&mut self) -> Token {
        let start = self.at;
        self.at += 1;
        let mut text = Vec::new();
        loop {
            let ch = self.byte(self.at);
            if ch == b'"' {
                break;
            }
            if ch == 0 {
                return Token::error(self.at, "unexpected end of string");
            }
            if ch == b'\\' {
                let escaped = match self.byte(self.at + 1) {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'f' => 12,
                    b'r' => b'\r',
                    b'u' => {
                        if self.unicode_escape(&mut text) {
                            continue;
                        }
                        return Token::error(self.at, "invalid unicode escape code");
                    }
                    _ => return Token::error(self.at, "invalid escape code"),
                };
                text.push(escaped);
                self.at += 2;
                continue;
            }
            text.push(ch);
            self.at += 1;
        }
        self.at += 1;
        let mut token = Token::new(TokenType::String, start);
        token.string = text;
        token
    }

    fn hex4(&self, index: usize) -> Option<u32> {
        let mut value = 0;
        for i in 0..4 {
            let digit = char::from(self.byte(index + i)).to_digit(16)?;
            value = (value << 4) | digit;
        }
        Some(value)
    }

    /// `\uXXXX` (a surrogate pair as two), appended as UTF-8; false if malformed.
    fn unicode_escape(&mut self, text: &mut Vec<u8>) -> bool {
        let Some(mut code) = self.hex4(self.at + 2) else {
            return false;
        };
        let mut length = 6;
        if code & 0xF800 == 0xD800 {
            if code & 0x400 != 0 {
                return false;
            }
            if self.byte(self.at + 6) != b'\\' || self.byte(self.at + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.at + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            code = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            length = 12;
        }
        // CJSON's own UTF-8 writer (any code point below 0x200000).
        if code <= 0x7F {
            text.push(code as u8);
        } else if code <= 0x7FF {
            text.extend_from_slice(&[(code >> 6) as u8 | 0xC0, (code & 0x3F) as u8 | 0x80]);
        } else if code <= 0xFFFF {
            text.extend_from_slice(&[
                (code >> 12) as u8 | 0xE0,
                ((code >> 6) & 0x3F) as u8 | 0x80,
                (code & 0x3F) as u8 | 0x80,
            ]);
        } else {
            text.extend_from_slice(&[
                (code >> 18) as u8 | 0xF0,
                ((code >> 12) & 0x3F) as u8 | 0x80,
                ((code >> 6) & 0x3F) as u8 | 0x80,
                (code & 0x3F) as u8 | 0x80,
            ]);
        }
        self.at += length;
        true
    }

    /// CJSON's `json_next_token`.
    fn next_token(&mut self) -> Token {
        while matches!(self.byte(self.at), b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
        let index = self.at;
        let single = match self.byte(index) {
            b'{' => Some(TokenType::ObjBegin),
            b'}' => Some(TokenType::ObjEnd),
            b'[' => Some(TokenType::ArrBegin),
            b']' => Some(TokenType::ArrEnd),
            b',' => Some(TokenType::Comma),
            b':' => Some(TokenType::Colon),
            0 => return Token::new(TokenType::End, index),
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'"' | b'+' | b'-' | b'0'..=b'9' => None,
            _ => return Token::error(index, "invalid token"),
        };
        if let Some(kind) = single {
            self.at += 1;
            return Token::new(kind, index);
        }
        let ch = self.byte(index);
        if ch == b'"' {
            return self.string_token();
        }
        if ch == b'-' || ch.is_ascii_digit() {
            if !self.decode_invalid_numbers && self.is_invalid_number() {
                return Token::error(index, "invalid number");
            }
            return self.number_token();
        }
        for (word, kind, value) in [
            (&b"true"[..], TokenType::Boolean, true),
            (&b"false"[..], TokenType::Boolean, false),
            (&b"null"[..], TokenType::Null, false),
        ] {
            if self.starts_with(index, word) {
                self.at += word.len();
                let mut token = Token::new(kind, index);
                token.boolean = value;
                return token;
            }
        }
        if self.decode_invalid_numbers && self.is_invalid_number() {
            return self.number_token();
        }
        Token::error(index, "invalid token")
    }
}

/// C's `strtod` from `start` (no leading space here): the number and where it ends, or
/// `None` when nothing there is a number.
fn strtod(data: &[u8], start: usize) -> Option<(f64, usize)> {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let mut at = start;
    let negative = match byte(at) {
        b'-' => {
            at += 1;
            true
        }
        b'+' => {
            at += 1;
            false
        }
        _ => false,
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let lower_at = |i: usize, word: &[u8]| {
        word.iter()
            .enumerate()
            .all(|(k, &b)| byte(i + k).to_ascii_lowercase() == b)
    };
    if lower_at(at, b"inf") {
        let end = if lower_at(at, b"infinity") {
            at + 8
        } else {
            at + 3
        };
        return Some((sign * f64::INFINITY, end));
    }
    if lower_at(at, b"nan") {
        let mut end = at + 3;
        if byte(end) == b'(' {
            let mut k = end + 1;
            while byte(k).is_ascii_alphanumeric() || byte(k) == b'_' {
                k += 1;
            }
            if byte(k) == b')' {
                end = k + 1;
            }
        }
        let nan = if negative { -f64::NAN } else { f64::NAN };
        return Some((nan, end));
    }
    if byte(at) == b'0' && (byte(at + 1) | 0x20) == b'x' {
        let hex_start = at + 2;
        let has_digits = byte(hex_start).is_ascii_hexdigit()
            || (byte(hex_start) == b'.' && byte(hex_start + 1).is_ascii_hexdigit());
        if has_digits {
            let (value, end) = hex_float(data, hex_start);
            return Some((sign * value, end));
        }
        // "0x" with no digit: the "0" alone.
        return Some((sign * 0.0, at + 1));
    }
    let digits_start = at;
    while byte(at).is_ascii_digit() {
        at += 1;
    }
    let mut digits = at - digits_start;
    if byte(at) == b'.' {
        let fraction_start = at + 1;
        let mut k = fraction_start;
        while byte(k).is_ascii_digit() {
            k += 1;
        }
        digits += k - fraction_start;
        if digits > 0 {
            at = k;
        }
    }
    if digits == 0 {
        return None;
    }
    if (byte(at) | 0x20) == b'e' {
        let mut k = at + 1;
        if matches!(byte(k), b'+' | b'-') {
            k += 1;
        }
        if byte(k).is_ascii_digit() {
            while byte(k).is_ascii_digit() {
                k += 1;
            }
            at = k;
        }
    }
    let text = std::str::from_utf8(&data[digits_start..at]).ok()?;
    let magnitude: f64 = text.parse().ok()?;
    Some((sign * magnitude, at))
}

/// A hexadecimal floating-point number's digits from `start` (after `0x`): its value and end.
fn hex_float(data: &[u8], start: usize) -> (f64, usize) {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let mut at = start;
    let mut mantissa: u128 = 0;
    let mut exponent: i64 = 0;
    let mut sticky = false;
    let mut seen_point = false;
    loop {
        let ch = byte(at);
        if ch == b'.' && !seen_point {
            seen_point = true;
            at += 1;
            continue;
        }
        let Some(digit) = char::from(ch).to_digit(16) else {
            break;
        };
        if mantissa >> 120 == 0 {
            mantissa = (mantissa << 4) | u128::from(digit);
            if seen_point {
                exponent -= 4;
            }
        } else {
            sticky |= digit != 0;
            if !seen_point {
                exponent += 4;
            }
        }
        at += 1;
    }
    if (byte(at) | 0x20) == b'p' {
        let mut k = at + 1;
        let negative = match byte(k) {
            b'-' => {
                k += 1;
                true
            }
            b'+' => {
                k += 1;
                false
            }
            _ => false,
        };
        if byte(k).is_ascii_digit() {
            let mut value: i64 = 0;
            while byte(k).is_ascii_digit() {
                value = (value * 10 + i64::from(byte(k) - b'0')).min(1_000_000);
                k += 1;
            }
            exponent += if negative { -value } else { value };
            at = k;
        }
    }
    let mantissa = mantissa | u128::from(sticky);
    let value = (mantissa as f64) * 2f64.powi(exponent.clamp(-2000, 2000) as i32);
    (value, at)
}

/// An open JSON container being read (its table waits in a Lua table, see [`Open`]).
enum Building {
    /// The index the next element takes.
    Array { next: i64 },
    /// The key waiting for its value.
    Object { key: Vec<u8> },
}

fn decode_text(lua: &Lua, config: &CjsonConfig, data: &[u8]) -> mlua::Result<Value> {
    if data.len() >= 2 && (data[0] == 0 || data[1] == 0) {
        return Err(helper_error(
            lua,
            "JSON parser does not support UTF-16 or UTF-32",
        ));
    }
    let mut parser = Parser {
        data,
        at: 0,
        decode_invalid_numbers: config.decode_invalid_numbers,
    };
    // `tables[d]` is the open container at depth d.
    let tables = lua.create_table()?;
    let mut open: Vec<Building> = Vec::new();
    // Lua stack slots in use from the call (the text, then each open table and key).
    let mut slots: usize = 1;
    let mut token = parser.next_token();
    loop {
        // A value starts at `token`.
        let mut value = match token.kind {
            TokenType::String => Value::String(lua.create_string(&token.string)?),
            TokenType::Number => Value::Number(token.number),
            TokenType::Boolean => Value::Boolean(token.boolean),
            TokenType::Null => null(),
            TokenType::ObjBegin | TokenType::ArrBegin => {
                let object = token.kind == TokenType::ObjBegin;
                let needed = if object { 3 } else { 2 };
                let depth = open.len() + 1;
                if depth > usize::try_from(config.decode_max_depth).unwrap_or(0)
                    || slots + needed > MAX_C_STACK_SLOTS
                {
                    return Err(helper_error(
                        lua,
                        &format!(
                            "Found too many nested data structures ({depth}) at character {}",
                            parser.at
                        ),
                    ));
                }
                let table = lua.create_table()?;
                token = parser.next_token();
                let end = if object {
                    TokenType::ObjEnd
                } else {
                    TokenType::ArrEnd
                };
                if token.kind == end {
                    Value::Table(table)
                } else {
                    tables.raw_set(depth, table)?;
                    slots += 1;
                    if object {
                        let key = read_key(lua, &mut parser, &mut token)?;
                        open.push(Building::Object { key });
                        slots += 1;
                    } else {
                        open.push(Building::Array { next: 1 });
                    }
                    continue;
                }
            }
            _ => return Err(parse_error(lua, "value", &token)),
        };
        // Store the value in the innermost container; close those that end.
        loop {
            let depth = open.len();
            let Some(container) = open.last_mut() else {
                let end = parser.next_token();
                if end.kind != TokenType::End {
                    return Err(parse_error(lua, "the end", &end));
                }
                return Ok(value);
            };
            let table: Table = tables.raw_get(depth)?;
            let closing = match container {
                Building::Array { next } => {
                    table.raw_set(*next, value)?;
                    *next += 1;
                    TokenType::ArrEnd
                }
                Building::Object { key } => {
                    table.raw_set(lua.create_string(&*key)?, value)?;
                    slots -= 1;
                    TokenType::ObjEnd
                }
            };
            token = parser.next_token();
            if token.kind == closing {
                open.pop();
                tables.raw_set(depth, Value::Nil)?;
                slots -= 1;
                value = Value::Table(table);
                continue;
            }
            if token.kind != TokenType::Comma {
                let expected = if closing == TokenType::ArrEnd {
                    "comma or array end"
                } else {
                    "comma or object end"
                };
                return Err(parse_error(lua, expected, &token));
            }
            token = parser.next_token();
            if let Building::Object { key } = container {
                *key = read_key(lua, &mut parser, &mut token)?;
                slots += 1;
            }
            break;
        }
    }
}

/// An object's `"key":` from `token` on; leaves `token` at the value that follows.
fn read_key(lua: &Lua, parser: &mut Parser<'_>, token: &mut Token) -> mlua::Result<Vec<u8>> {
    if token.kind != TokenType::String {
        return Err(parse_error(lua, "object key string", token));
    }
    let key = std::mem::take(&mut token.string);
    *token = parser.next_token();
    if token.kind != TokenType::Colon {
        return Err(parse_error(lua, "colon", token));
    }
    *token = parser.next_token();
    Ok(key)
}

/// CJSON's `json_throw_parse_error`.
fn parse_error(lua: &Lua, expected: &str, token: &Token) -> mlua::Error {
    let found = if token.kind == TokenType::Error {
        token.error
    } else {
        token.kind.name()
    };
    helper_error(
        lua,
        &format!(
            "Expected {expected} but found {found} at character {}",
            token.index + 1
        ),
    )
}

// ---------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------

/// A `cjson` table whose functions share the settings `config`; `proxies` maps the
/// sandbox's read-only proxies to the tables behind them.
pub(super) fn library(lua: &Lua, config: Shared, proxies: Table) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    let context = Context {
        config,
        proxies: proxies.clone(),
    };
    let with = |f: fn(&Lua, &Context, &[Value]) -> mlua::Result<Variadic<Value>>| {
        let context = context.clone();
        lua.create_function(move |lua, args: Variadic<Value>| f(lua, &context, &args))
    };
    table.raw_set("encode", with(encode)?)?;
    table.raw_set("decode", with(decode)?)?;
    table.raw_set("encode_sparse_array", with(encode_sparse_array)?)?;
    table.raw_set("encode_max_depth", with(encode_max_depth)?)?;
    table.raw_set("decode_max_depth", with(decode_max_depth)?)?;
    table.raw_set("encode_number_precision", with(encode_number_precision)?)?;
    table.raw_set("encode_keep_buffer", with(encode_keep_buffer)?)?;
    table.raw_set("encode_invalid_numbers", with(encode_invalid_numbers)?)?;
    table.raw_set("decode_invalid_numbers", with(decode_invalid_numbers)?)?;
    let new = lua.create_function(move |lua, _: Variadic<Value>| {
        library(
            lua,
            Rc::new(Cell::new(CjsonConfig::default())),
            proxies.clone(),
        )
    })?;
    table.raw_set("new", new)?;
    table.raw_set("null", null())?;
    table.raw_set("_NAME", "cjson")?;
    table.raw_set("_VERSION", "2.1.0")?;
    Ok(table)
}

fn one(value: Value) -> Variadic<Value> {
    Variadic::from_iter([value])
}

fn encode(lua: &Lua, context: &Context, args: &[Value]) -> mlua::Result<Variadic<Value>> {
    if args.len() != 1 {
        return Err(arg_error(lua, 0, "expected 1 argument"));
    }
    let text = encode_value(lua, &context.config.get(), &context.proxies, &args[0])?;
    Ok(one(Value::String(lua.create_string(text)?)))
}

fn decode(lua: &Lua, context: &Context, args: &[Value]) -> mlua::Result<Variadic<Value>> {
    if args.len() != 1 {
        return Err(arg_error(lua, 0, "expected 1 argument"));
    }
    // `luaL_checklstring`: a number is read as its text.
    let text: Vec<u8> = match &args[0] {
        Value::String(text) => text.as_bytes().to_vec(),
        Value::Integer(n) => format_g(*n as f64, 14).into_bytes(),
        Value::Number(n) => format_g(*n, 14).into_bytes(),
        _ => return Err(type_error(lua, args, 0, "string")),
    };
    Ok(one(decode_text(lua, &context.config.get(), &text)?))
}

fn encode_sparse_array(
    lua: &Lua,
    context: &Context,
    args: &[Value],
) -> mlua::Result<Variadic<Value>> {
    check_count(lua, args, 3)?;
    configure(&context.config, |config| {
        let convert = bool_option(lua, args, 0, &mut config.sparse_convert)?;
        let ratio = integer_option(lua, args, 1, &mut config.sparse_ratio, 0, i32::MAX)?;
        let safe = integer_option(lua, args, 2, &mut config.sparse_safe, 0, i32::MAX)?;
        Ok(Variadic::from_iter([convert, ratio, safe]))
    })
}

fn encode_max_depth(lua: &Lua, context: &Context, args: &[Value]) -> mlua::Result<Variadic<Value>> {
    check_count(lua, args, 1)?;
    configure(&context.config, |config| {
        integer_option(lua, args, 0, &mut config.encode_max_depth, 1, i32::MAX).map(one)
    })
}

fn decode_max_depth(lua: &Lua, context: &Context, args: &[Value]) -> mlua::Result<Variadic<Value>> {
    check_count(lua, args, 1)?;
    configure(&context.config, |config| {
        integer_option(lua, args, 0, &mut config.decode_max_depth, 1, i32::MAX).map(one)
    })
}

fn encode_number_precision(
    lua: &Lua,
    context: &Context,
    args: &[Value],
) -> mlua::Result<Variadic<Value>> {
    check_count(lua, args, 1)?;
    configure(&context.config, |config| {
        integer_option(lua, args, 0, &mut config.precision, 1, 14).map(one)
    })
}

fn encode_keep_buffer(
    lua: &Lua,
    context: &Context,
    args: &[Value],
) -> mlua::Result<Variadic<Value>> {
    check_count(lua, args, 1)?;
    configure(&context.config, |config| {
        bool_option(lua, args, 0, &mut config.keep_buffer).map(one)
    })
}

fn encode_invalid_numbers(
    lua: &Lua,
    context: &Context,
    args: &[Value],
) -> mlua::Result<Variadic<Value>> {
    check_count(lua, args, 1)?;
    configure(&context.config, |config| {
        enum_option(
            lua,
            args,
            0,
            &mut config.encode_invalid_numbers,
            &["off", "on", "null"],
        )
        .map(one)
    })
}

fn decode_invalid_numbers(
    lua: &Lua,
    context: &Context,
    args: &[Value],
) -> mlua::Result<Variadic<Value>> {
    check_count(lua, args, 1)?;
    configure(&context.config, |config| {
        bool_option(lua, args, 0, &mut config.decode_invalid_numbers).map(one)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_reads_what_c_reads() {
        let read = |text: &str| strtod(text.as_bytes(), 0);
        assert_eq!(read("12abc"), Some((12.0, 2)));
        assert_eq!(read("-1.5e3,"), Some((-1500.0, 6)));
        assert_eq!(read("1e"), Some((1.0, 1)));
        assert_eq!(read("1.]"), Some((1.0, 2)));
        assert_eq!(read("-.5"), Some((-0.5, 3)));
        assert_eq!(read("0x10"), Some((16.0, 4)));
        assert_eq!(read("0x"), Some((0.0, 1)));
        assert_eq!(read("0x1p4"), Some((16.0, 5)));
        assert_eq!(read("+7"), Some((7.0, 2)));
        assert_eq!(read("Infinity"), Some((f64::INFINITY, 8)));
        assert_eq!(read("-inf"), Some((f64::NEG_INFINITY, 4)));
        assert!(read("nan(x1)").is_some_and(|(n, end)| n.is_nan() && end == 7));
        assert_eq!(read("-"), None);
        assert_eq!(read("."), None);
        assert_eq!(read("- 1"), None);
    }

    #[test]
    fn escapes_are_cjsons() {
        let mut out = Vec::new();
        append_string(&mut out, b"a/\"\\\n\x01\x7f\xc3\xa9");
        assert_eq!(out, b"\"a\\/\\\"\\\\\\n\\u0001\\u007f\xc3\xa9\"".to_vec());
    }
}
