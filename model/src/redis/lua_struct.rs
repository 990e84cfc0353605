//! The `struct` library scripts see, as Redis 7.0 gives it (Roberto Ierusalimschy's struct
//! 1.4 with Redis's bounds checks).
//!
//! `struct.pack(fmt, ...)`, `struct.unpack(fmt, s [, i])` and `struct.size(fmt)` on x86-64:
//! little-endian by default, `>`/`<` to choose, `![n]` for alignment (8 at most by default),
//! `b`/`B` 1 byte, `h`/`H` 2, `l`/`L`/`T` 8, `i`/`I[n]` n bytes (4 by default, 32 at most),
//! `f`/`d` IEEE floats, `x` a zero byte, `c[n]` n bytes of a string (`c0`: the whole string
//! when packing, the previous number's worth when unpacking), `s` a zero-terminated string.
//! What C does with odd input is done too, checked against Redis 7.0.15: an integer is cut to
//! 64 bits as C's casts cut it and wider fields are padded with zeros, unpacking keeps the
//! last 8 bytes of a wider field, an unknown option is an error when packing and ignored by
//! `size` when it is a letter or digit, and the argument errors name the argument C names
//! (one past the string, for "string too short").

use mlua::{Lua, Value, Variadic};

use super::lua::{
    arg_error, c_int64, check_integer, check_number, check_output_size, format_g, helper_error,
    type_error, MAX_C_STACK_SLOTS,
};

/// Values one `unpack` may return (see `lua_cmsgpack.rs`'s bound of the same name).
const MAX_RETURNED_VALUES: usize = 7_900;

/// The widest integer field (`MAXINTSIZE`).
const MAX_INT_SIZE: i32 = 32;

/// The default and largest alignment on x86-64 (`MAXALIGN`: a double's).
const MAX_ALIGN: i32 = 8;

/// The format's endianness and alignment so far.
struct Header {
    little: bool,
    align: usize,
}

impl Header {
    fn new() -> Header {
        Header {
            little: true,
            align: 1,
        }
    }
}

/// A format string read option by option (it ends at its first NUL, as a C string).
struct Format<'a> {
    text: &'a [u8],
    at: usize,
}

impl Format<'_> {
    fn peek(&self) -> u8 {
        self.text.get(self.at).copied().unwrap_or(0)
    }

    fn next_option(&mut self) -> Option<u8> {
        let option = self.peek();
        if option == 0 {
            return None;
        }
        self.at += 1;
        Some(option)
    }

    /// `getnum`: a decimal count after an option, or `default`.
    fn number(&mut self, lua: &Lua, default: i32) -> mlua::Result<i32> {
        if !self.peek().is_ascii_digit() {
            return Ok(default);
        }
        let mut value: i32 = 0;
        while self.peek().is_ascii_digit() {
            let digit = i32::from(self.peek() - b'0');
            if value > i32::MAX / 10 || value * 10 > i32::MAX - digit {
                return Err(helper_error(lua, "integral size overflow"));
            }
            value = value * 10 + digit;
            self.at += 1;
        }
        Ok(value)
    }

    /// `optsize`: the bytes `option` takes (0 for the options that take none).
    fn size(&mut self, lua: &Lua, option: u8) -> mlua::Result<usize> {
        Ok(match option {
            b'b' | b'B' | b'x' => 1,
            b'h' | b'H' => 2,
            b'f' => 4,
            b'l' | b'L' | b'T' | b'd' => 8,
            b'c' => self.number(lua, 1)? as usize,
            b'i' | b'I' => {
                let size = self.number(lua, 4)?;
                if size > MAX_INT_SIZE {
                    return Err(helper_error(
                        lua,
                        &format!("integral size {size} is larger than limit of {MAX_INT_SIZE}"),
                    ));
                }
                size as usize
            }
            _ => 0,
        })
    }

    /// `controloptions`: spaces, endianness and alignment; anything else is an error.
    fn control(&mut self, lua: &Lua, option: u8, header: &mut Header) -> mlua::Result<()> {
        match option {
            b' ' => {}
            b'>' => header.little = false,
            b'<' => header.little = true,
            b'!' => {
                let align = self.number(lua, MAX_ALIGN)?;
                if !(align > 0 && align & (align - 1) == 0) {
                    return Err(helper_error(
                        lua,
                        &format!("alignment {align} is not a power of 2"),
                    ));
                }
                header.align = align as usize;
            }
            other => {
                return Err(arg_error(
                    lua,
                    0,
                    &format!("invalid format option '{}'", char::from(other)),
                ));
            }
        }
        Ok(())
    }
}

/// `gettoalign`: padding before a field of `size` bytes at offset `len`.
fn padding(len: usize, header: &Header, option: u8, size: usize) -> usize {
    if size == 0 || option == b'c' {
        return 0;
    }
    let size = size.min(header.align);
    (size.wrapping_sub(len & size.wrapping_sub(1))) & size.wrapping_sub(1)
}

/// C's `(unsigned long)` of a double as gcc compiles it on x86-64.
fn to_unsigned(number: f64) -> u64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if number >= TWO_POW_63 {
        (c_int64(number - TWO_POW_63) as u64) ^ (1 << 63)
    } else {
        c_int64(number) as u64
    }
}

/// `putinteger`: `size` bytes of the number's 64 bits (zeros past them).
fn put_integer(out: &mut Vec<u8>, number: f64, little: bool, size: usize) {
    let mut value = if number < 0.0 {
        c_int64(number) as u64
    } else {
        to_unsigned(number)
    };
    let mut bytes = vec![0u8; size];
    for i in 0..size {
        let place = if little { i } else { size - 1 - i };
        bytes[place] = (value & 0xff) as u8;
        value = value.checked_shr(8).unwrap_or(0);
    }
    out.extend_from_slice(&bytes);
}

/// `getinteger`: a field read back (its last 8 bytes, in order), sign-extended if signed.
fn get_integer(bytes: &[u8], little: bool, signed: bool) -> f64 {
    let size = bytes.len();
    let mut value: u64 = 0;
    for i in 0..size {
        let byte = if little {
            bytes[size - 1 - i]
        } else {
            bytes[i]
        };
        value = (value << 8) | u64::from(byte);
    }
    if !signed {
        return value as f64;
    }
    // C shifts by `size * 8 - 1`; x86 takes the count modulo 64.
    let shift = ((size as i64) * 8 - 1) & 63;
    let mask = u64::MAX << shift;
    if value & mask != 0 {
        value |= mask;
    }
    value as i64 as f64
}

/// `luaL_checkstring` of argument `index` (0-based; a number is read as its text).
fn check_bytes(lua: &Lua, args: &[Value], index: usize) -> mlua::Result<Vec<u8>> {
    match args.get(index) {
        Some(Value::String(text)) => Ok(text.as_bytes().to_vec()),
        Some(Value::Integer(n)) => Ok(format_g(*n as f64, 14).into_bytes()),
        Some(Value::Number(n)) => Ok(format_g(*n, 14).into_bytes()),
        _ => Err(type_error(lua, args, index, "string")),
    }
}

fn pack(lua: &Lua, args: &[Value]) -> mlua::Result<mlua::String> {
    let text = check_bytes(lua, args, 0)?;
    // C pushes a nil after the arguments before it reads them: one argument too many reads
    // as nil, not as none.
    let mut args = args.to_vec();
    args.push(Value::Nil);
    let mut format = Format { text: &text, at: 0 };
    let mut header = Header::new();
    let mut next_arg = 1;
    let mut out: Vec<u8> = Vec::new();
    while let Some(option) = format.next_option() {
        let mut size = format.size(lua, option)?;
        let pad = padding(out.len(), &header, option, size);
        out.resize(out.len() + pad, 0);
        match option {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let number = check_number(lua, &args, next_arg)?;
                next_arg += 1;
                put_integer(&mut out, number, header.little, size);
            }
            b'x' => out.push(0),
            b'f' => {
                let single = check_number(lua, &args, next_arg)? as f32;
                next_arg += 1;
                let bytes = if header.little {
                    single.to_le_bytes()
                } else {
                    single.to_be_bytes()
                };
                out.extend_from_slice(&bytes);
            }
            b'd' => {
                let double = check_number(lua, &args, next_arg)?;
                next_arg += 1;
                let bytes = if header.little {
                    double.to_le_bytes()
                } else {
                    double.to_be_bytes()
                };
                out.extend_from_slice(&bytes);
            }
            b'c' | b's' => {
                let string = check_bytes(lua, &args, next_arg)?;
                next_arg += 1;
                if size == 0 {
                    size = string.len();
                }
                if string.len() < size {
                    // C checks after counting the argument: it names the next one.
                    return Err(arg_error(lua, next_arg, "string too short"));
                }
                out.extend_from_slice(&string[..size]);
                if option == b's' {
                    out.push(0);
                }
            }
            other => format.control(lua, other, &mut header)?,
        }
        check_output_size(out.len())?;
    }
    lua.create_string(out)
}

fn unpack(lua: &Lua, args: &[Value]) -> mlua::Result<Variadic<Value>> {
    let text = check_bytes(lua, args, 0)?;
    let data = check_bytes(lua, args, 1)?;
    let start = match args.get(2) {
        None | Some(Value::Nil) => 1,
        Some(_) => check_integer(lua, args, 2)?,
    };
    // `size_t pos = start; argcheck(pos > 0)`: only 0 fails (a negative one wraps around).
    if start == 0 {
        return Err(arg_error(lua, 2, "offset must be 1 or greater"));
    }
    let mut pos = (start as u64 as usize).wrapping_sub(1);
    let len = data.len();
    let mut format = Format { text: &text, at: 0 };
    let mut header = Header::new();
    let mut values: Vec<Value> = Vec::new();
    while let Some(option) = format.next_option() {
        let mut size = format.size(lua, option)?;
        pos = pos.wrapping_add(padding(pos, &header, option, size));
        if !(size <= len && pos <= len - size) {
            return Err(arg_error(lua, 1, "data string too short"));
        }
        if args.len() + values.len() + 2 > MAX_C_STACK_SLOTS
            || values.len() + 1 >= MAX_RETURNED_VALUES
        {
            return Err(helper_error(lua, "stack overflow (too many results)"));
        }
        match option {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let signed = option.is_ascii_lowercase();
                let number = get_integer(&data[pos..pos + size], header.little, signed);
                values.push(Value::Number(number));
            }
            b'x' => {}
            b'f' => {
                let bytes: [u8; 4] = data[pos..pos + 4].try_into().expect("4 bytes");
                let single = if header.little {
                    f32::from_le_bytes(bytes)
                } else {
                    f32::from_be_bytes(bytes)
                };
                values.push(Value::Number(f64::from(single)));
            }
            b'd' => {
                let bytes: [u8; 8] = data[pos..pos + 8].try_into().expect("8 bytes");
                let double = if header.little {
                    f64::from_le_bytes(bytes)
                } else {
                    f64::from_be_bytes(bytes)
                };
                values.push(Value::Number(double));
            }
            b'c' => {
                if size == 0 {
                    let previous = match values.last() {
                        Some(value) => lua.coerce_number(value.clone())?,
                        None => None,
                    };
                    let Some(previous) = previous else {
                        return Err(helper_error(lua, "format 'c0' needs a previous size"));
                    };
                    size = to_unsigned(previous) as usize;
                    values.pop();
                    if !(size <= len && pos <= len - size) {
                        return Err(arg_error(lua, 1, "data string too short"));
                    }
                }
                values.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(end) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(helper_error(lua, "unfinished string in data"));
                };
                size = end + 1;
                values.push(Value::String(lua.create_string(&data[pos..pos + end])?));
            }
            other => format.control(lua, other, &mut header)?,
        }
        pos = pos.wrapping_add(size);
    }
    values.push(Value::Number(pos.wrapping_add(1) as i64 as f64));
    Ok(Variadic::from_iter(values))
}

fn size(lua: &Lua, args: &[Value]) -> mlua::Result<f64> {
    let text = check_bytes(lua, args, 0)?;
    let mut format = Format { text: &text, at: 0 };
    let mut header = Header::new();
    let mut pos: usize = 0;
    while let Some(option) = format.next_option() {
        let size = format.size(lua, option)?;
        pos = pos.wrapping_add(padding(pos, &header, option, size));
        if option == b's' {
            return Err(arg_error(lua, 0, "option 's' has no fixed size"));
        }
        if option == b'c' && size == 0 {
            return Err(arg_error(lua, 0, "option 'c0' has no fixed size"));
        }
        // An unknown letter or digit takes no room and is passed over.
        if !option.is_ascii_alphanumeric() {
            format.control(lua, option, &mut header)?;
        }
        pos = pos.wrapping_add(size);
    }
    Ok(pos as i64 as f64)
}

/// The `struct` table (made read-only by the sandbox).
pub(super) fn library(lua: &Lua) -> mlua::Result<mlua::Table> {
    let table = lua.create_table()?;
    table.raw_set(
        "pack",
        lua.create_function(|lua, args: Variadic<Value>| pack(lua, &args))?,
    )?;
    table.raw_set(
        "unpack",
        lua.create_function(|lua, args: Variadic<Value>| unpack(lua, &args))?,
    )?;
    table.raw_set(
        "size",
        lua.create_function(|lua, args: Variadic<Value>| size(lua, &args))?,
    )?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_go_through_cs_casts() {
        let packed = |number: f64, little: bool, size: usize| {
            let mut out = Vec::new();
            put_integer(&mut out, number, little, size);
            out
        };
        assert_eq!(packed(1.0, false, 4), vec![0, 0, 0, 1]);
        assert_eq!(packed(-2.0, true, 4), vec![0xfe, 0xff, 0xff, 0xff]);
        assert_eq!(packed(f64::NAN, false, 8), vec![0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(packed(f64::INFINITY, false, 8), vec![0; 8]);
        assert_eq!(
            packed(2f64.powi(63), false, 8),
            vec![0x80, 0, 0, 0, 0, 0, 0, 0]
        );
        let mut wide = vec![0u8; 8];
        wide.extend_from_slice(&[0xff; 8]);
        assert_eq!(packed(-1.0, false, 16), wide);
        assert_eq!(get_integer(&[0xff, 0xff, 0xfe], false, true), -2.0);
        assert_eq!(get_integer(&[0xfb; 1], true, true), -5.0);
        assert_eq!(get_integer(&[], false, true), 0.0);
    }
}
