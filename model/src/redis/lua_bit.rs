//! The `bit` library scripts see, as Redis 7.0 gives it (Lua BitOp 1.0.2).
//!
//! Every operation works on 32-bit integers. An argument is read as `luaL_checknumber` reads
//! it (numbers and numeric strings), then brought to 32 bits as BitOp does: add 2^52 + 2^51 to
//! the double and keep the low 32 bits of its representation (round half to even, then modulo
//! 2^32, for any number below 2^51; BitOp's own result for anything larger). Results are
//! signed: `bit.tobit(0xffffffff)` is -1.

use mlua::{Lua, Table, Value, Variadic};

use super::lua::check_number;

/// 2^52 + 2^51: added to a double, it leaves the integer part in the low bits.
const BIT_SHIFT: f64 = 6_755_399_441_055_744.0;

/// BitOp's `barg`: argument `index` (0-based) as 32 bits.
fn bits(lua: &Lua, args: &[Value], index: usize) -> mlua::Result<u32> {
    let number = check_number(lua, args, index)?;
    Ok((number + BIT_SHIFT).to_bits() as u32)
}

/// A result as BitOp pushes it: the 32 bits read as a signed integer.
fn signed(bits: u32) -> f64 {
    f64::from(bits as i32)
}

/// `band`/`bor`/`bxor`: the first argument, then the others from the last to the second (the
/// order in which BitOp checks them).
fn fold(lua: &Lua, args: &[Value], op: Binary) -> mlua::Result<f64> {
    let mut acc = bits(lua, args, 0)?;
    for index in (1..args.len()).rev() {
        acc = op(acc, bits(lua, args, index)?);
    }
    Ok(signed(acc))
}

/// A shift or rotation: the value, then the count modulo 32.
fn shift(lua: &Lua, args: &[Value], op: Binary) -> mlua::Result<f64> {
    let value = bits(lua, args, 0)?;
    let count = bits(lua, args, 1)? & 31;
    Ok(signed(op(value, count)))
}

/// `bit.tohex(x [, n])`: the low `n` hexadecimal digits of `x` (8 by default, at most 8;
/// upper case when `n` is negative).
fn tohex(lua: &Lua, args: &[Value]) -> mlua::Result<String> {
    let mut value = bits(lua, args, 0)?;
    // `lua_isnone`: an explicit nil is an argument (and then not a number).
    let mut digits = if args.len() < 2 {
        8
    } else {
        bits(lua, args, 1)? as i32
    };
    let alphabet: &[u8; 16] = if digits < 0 {
        digits = digits.wrapping_neg();
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    // BitOp caps at 8; a count still negative (the most negative int) gives nothing.
    let digits = usize::try_from(digits.min(8)).unwrap_or(0);
    let mut text = vec![b'0'; digits];
    for place in text.iter_mut().rev() {
        *place = alphabet[(value & 15) as usize];
        value >>= 4;
    }
    Ok(String::from_utf8(text).expect("hexadecimal digits are ASCII"))
}

/// A two-operand operation on 32 bits.
type Binary = fn(u32, u32) -> u32;
/// A one-operand operation on 32 bits.
type Unary = fn(u32) -> u32;

/// The `bit` table (made read-only by the sandbox).
pub(super) fn library(lua: &Lua) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    let folds: [(&str, Binary); 3] = [
        ("band", |a, b| a & b),
        ("bor", |a, b| a | b),
        ("bxor", |a, b| a ^ b),
    ];
    for (name, op) in folds {
        let function =
            lua.create_function(move |lua, args: Variadic<Value>| fold(lua, &args, op))?;
        table.raw_set(name, function)?;
    }
    let shifts: [(&str, Binary); 5] = [
        ("lshift", |v, n| v << n),
        ("rshift", |v, n| v >> n),
        ("arshift", |v, n| ((v as i32) >> n) as u32),
        ("rol", |v, n| v.rotate_left(n)),
        ("ror", |v, n| v.rotate_right(n)),
    ];
    for (name, op) in shifts {
        let function =
            lua.create_function(move |lua, args: Variadic<Value>| shift(lua, &args, op))?;
        table.raw_set(name, function)?;
    }
    let unary: [(&str, Unary); 3] = [
        ("tobit", |v| v),
        ("bnot", |v| !v),
        ("bswap", u32::swap_bytes),
    ];
    for (name, op) in unary {
        let function = lua.create_function(move |lua, args: Variadic<Value>| {
            Ok(signed(op(bits(lua, &args, 0)?)))
        })?;
        table.raw_set(name, function)?;
    }
    let hex = lua.create_function(|lua, args: Variadic<Value>| tohex(lua, &args))?;
    table.raw_set("tohex", hex)?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_bits(number: f64) -> u32 {
        (number + BIT_SHIFT).to_bits() as u32
    }

    #[test]
    fn numbers_come_to_32_bits_as_bitop_brings_them() {
        assert_eq!(to_bits(1.0), 1);
        assert_eq!(to_bits(-1.0), u32::MAX);
        assert_eq!(to_bits(4_294_967_296.0), 0);
        assert_eq!(to_bits(4_294_967_297.0), 1);
        // Round half to even.
        assert_eq!(to_bits(2.5), 2);
        assert_eq!(to_bits(3.5), 4);
        assert_eq!(to_bits(-0.5), 0);
        assert_eq!(signed(to_bits(2_147_483_648.0)), -2_147_483_648.0);
    }
}
