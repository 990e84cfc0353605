//! The bit commands on strings: `SETBIT`, `GETBIT`, `BITCOUNT`, `BITPOS` and `BITOP` (Redis
//! 7.0's `bitops.c`). A string is a row of bits, the most significant bit of its first byte
//! being bit 0; past its end every bit reads 0. Each command arrives as its argument vector,
//! already checked against the command table's arity, and reads its arguments in Redis's
//! order, so that a command wrong in two ways gets the error Redis gives first.

use super::strings::MAX_STRING_BYTES;
use super::Redis;
use crate::redis::command::{integer_arg, SYNTAX_ERROR};
use crate::redis::reply::Reply;

/// `getBitOffsetFromArgument`'s error.
const BIT_OFFSET_ERROR: &str = "ERR bit offset is not an integer or out of range";
/// `SETBIT`'s error for a bit value other than 0 or 1.
const BIT_VALUE_ERROR: &str = "ERR bit is not an integer or out of range";

/// Where a bit is: its byte, and the mask of it within that byte.
fn bit_at(offset: u64) -> (usize, u8) {
    let byte = usize::try_from(offset >> 3).expect("offsets are below 2^32 bits");
    (byte, 0x80 >> (offset & 7))
}

/// A bit offset as `SETBIT` and `GETBIT` read it: a 64-bit integer, not negative, inside the
/// longest string Redis makes (512 MiB, so below 2^32 bits).
fn bit_offset(arg: &[u8]) -> Result<u64, Reply> {
    let offset = integer_arg(arg).map_err(|_| Reply::error(BIT_OFFSET_ERROR))?;
    match u64::try_from(offset) {
        Ok(offset) if (offset >> 3) < MAX_STRING_BYTES as u64 => Ok(offset),
        _ => Err(Reply::error(BIT_OFFSET_ERROR)),
    }
}

/// How a `BITCOUNT` or `BITPOS` range counts: in bytes (the default) or in bits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Byte,
    Bit,
}

fn unit(arg: &[u8]) -> Result<Unit, Reply> {
    if arg.eq_ignore_ascii_case(b"bit") {
        Ok(Unit::Bit)
    } else if arg.eq_ignore_ascii_case(b"byte") {
        Ok(Unit::Byte)
    } else {
        Err(Reply::error(SYNTAX_ERROR))
    }
}

/// The bits `[first, last]` (bit offsets, inclusive) a range of `start` and `end` in `unit`
/// covers in a string of `length` bytes, Redis's index rules applied (negative from the end,
/// clamped to the string); `None` when it covers none.
fn bit_range(length: usize, start: i64, end: i64, unit: Unit) -> Option<(u64, u64)> {
    let bytes = i64::try_from(length).expect("strings are at most 512 MiB");
    let total = match unit {
        Unit::Byte => bytes,
        Unit::Bit => bytes << 3,
    };
    let start = if start < 0 {
        total.saturating_add(start)
    } else {
        start
    }
    .max(0);
    let end = if end < 0 {
        total.saturating_add(end)
    } else {
        end
    }
    .max(0);
    let end = end.min(total - 1);
    if start > end {
        return None;
    }
    let (start, end) = (start as u64, end as u64);
    Some(match unit {
        Unit::Byte => (start << 3, (end << 3) + 7),
        Unit::Bit => (start, end),
    })
}

fn bit_is_set(value: &[u8], offset: u64) -> bool {
    let (byte, mask) = bit_at(offset);
    value.get(byte).is_some_and(|b| b & mask != 0)
}

/// How many bits of `value` in `[first, last]` are set.
fn count_ones(value: &[u8], first: u64, last: u64) -> u64 {
    let (first_byte, _) = bit_at(first);
    let (last_byte, _) = bit_at(last);
    let whole: u64 = value[first_byte..=last_byte]
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum();
    // The bits of the edge bytes outside the range: the first byte's before `first`, the last
    // byte's after `last`.
    let before = match first & 7 {
        0 => 0,
        inside => value[first_byte] >> (8 - inside),
    };
    let after = match (last & 7) + 1 {
        8 => 0,
        inside => value[last_byte] & (0xff >> inside),
    };
    whole - u64::from(before.count_ones()) - u64::from(after.count_ones())
}

/// The first bit equal to `set` in `[first, last]`.
fn first_bit(value: &[u8], set: bool, first: u64, last: u64) -> Option<u64> {
    let (first_byte, _) = bit_at(first);
    let (last_byte, _) = bit_at(last);
    let skip = if set { 0x00 } else { 0xff };
    (first_byte..=last_byte)
        .filter(|&byte| value[byte] != skip)
        .flat_map(|byte| {
            let base = (byte as u64) << 3;
            (base.max(first)..=(base + 7).min(last)).find(|&bit| bit_is_set(value, bit) == set)
        })
        .next()
}

impl Redis {
    /// Runs one of this module's commands (see the module documentation).
    pub(super) fn bits_command(&mut self, name: &[u8], argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let reply = match name {
            b"setbit" => self.setbit(argv, now_ms),
            b"getbit" => self.getbit(argv, now_ms),
            b"bitcount" => self.bitcount(argv, now_ms),
            b"bitpos" => self.bitpos(argv, now_ms),
            b"bitop" => self.bitop(argv, now_ms),
            other => unreachable!("{} is not a bit command", String::from_utf8_lossy(other)),
        };
        reply.unwrap_or_else(|error| error)
    }

    /// The string at `key` as a bit command reads it (`None` when missing or expired), or
    /// `WRONGTYPE`.
    fn string_for_bits(&mut self, key: &[u8], now_ms: u64) -> Result<Option<&[u8]>, Reply> {
        self.expire_if_needed(key, now_ms);
        match self.visible(key, now_ms) {
            None => Ok(None),
            Some(entry) => entry.string_value().map(Some),
        }
    }

    /// `SETBIT key offset value` (`setbitCommand`): the bit's old value. The string grows
    /// with zero bytes to reach the bit (a missing key becomes such a string); the TTL stays.
    /// A bit set to the value it had in a string that did not grow is no write.
    fn setbit(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let offset = bit_offset(&argv[2])?;
        let on = match integer_arg(&argv[3]) {
            Ok(bit @ (0 | 1)) => bit == 1,
            _ => return Err(Reply::error(BIT_VALUE_ERROR)),
        };
        let (mut value, expire_at_ms, mut changed) = match self.lookup(&argv[1], now_ms) {
            None => (Vec::new(), None, true),
            Some(entry) => {
                entry.string_value()?;
                (entry.value, entry.expire_at_ms, false)
            }
        };
        let (byte, mask) = bit_at(offset);
        if value.len() <= byte {
            value.resize(byte + 1, 0);
            changed = true;
        }
        let was = value[byte] & mask != 0;
        if changed || was != on {
            if on {
                value[byte] |= mask;
            } else {
                value[byte] &= !mask;
            }
            self.write_key(&argv[1], value, expire_at_ms);
        }
        Ok(Reply::Integer(i64::from(was)))
    }

    /// `GETBIT key offset` (`getbitCommand`): 0 or 1; 0 past the string's end or for a missing
    /// key.
    fn getbit(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let offset = bit_offset(&argv[2])?;
        let set = self
            .string_for_bits(&argv[1], now_ms)?
            .is_some_and(|value| bit_is_set(value, offset));
        Ok(Reply::Integer(i64::from(set)))
    }

    /// `BITCOUNT key [start end [BYTE | BIT]]` (`bitcountCommand`, Redis 7.0): the set bits of
    /// the string, or of a range of it. Redis 7.0 looks the key up before it reads the range:
    /// a missing key counts 0 whatever follows it, and `WRONGTYPE` comes first. A range whose
    /// ends are both negative and out of order counts 0 before its unit is read.
    fn bitcount(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let Some(value) = self.string_for_bits(&argv[1], now_ms)? else {
            return Ok(Reply::Integer(0));
        };
        let range = match argv.len() {
            2 => bit_range(value.len(), 0, -1, Unit::Byte),
            4 | 5 => {
                let start = integer_arg(&argv[2])?;
                let end = integer_arg(&argv[3])?;
                if start < 0 && end < 0 && start > end {
                    return Ok(Reply::Integer(0));
                }
                let unit = match argv.get(4) {
                    Some(arg) => unit(arg)?,
                    None => Unit::Byte,
                };
                bit_range(value.len(), start, end, unit)
            }
            _ => return Err(Reply::error(SYNTAX_ERROR)),
        };
        let count = range.map_or(0, |(first, last)| count_ones(value, first, last));
        Ok(Reply::Integer(
            i64::try_from(count).expect("at most 2^32 bits"),
        ))
    }

    /// `BITPOS key bit [start [end [BYTE | BIT]]]` (`bitposCommand`, Redis 7.0): the first bit
    /// equal to `bit` in the string or the range, or -1. A missing key is endless zeros (0 for
    /// a clear bit, -1 for a set one); looking for a clear bit without an `end`, the string is
    /// zero-padded on the right, so a string of set bits answers its length in bits. An empty
    /// range answers -1.
    fn bitpos(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        let set = match integer_arg(&argv[2])? {
            0 => false,
            1 => true,
            _ => return Err(Reply::error("ERR The bit argument must be 1 or 0.")),
        };
        let Some(value) = self.string_for_bits(&argv[1], now_ms)? else {
            return Ok(Reply::Integer(if set { -1 } else { 0 }));
        };
        let (range, end_given) = match argv.len() {
            3 => (bit_range(value.len(), 0, -1, Unit::Byte), false),
            4..=6 => {
                let start = integer_arg(&argv[3])?;
                let unit = match argv.get(5) {
                    Some(arg) => unit(arg)?,
                    None => Unit::Byte,
                };
                let end = match argv.get(4) {
                    Some(arg) => integer_arg(arg)?,
                    None => -1,
                };
                (bit_range(value.len(), start, end, unit), argv.len() >= 5)
            }
            _ => return Err(Reply::error(SYNTAX_ERROR)),
        };
        let Some((first, last)) = range else {
            return Ok(Reply::Integer(-1));
        };
        let position = match first_bit(value, set, first, last) {
            Some(bit) => i64::try_from(bit).expect("at most 2^32 bits"),
            // No clear bit up to the string's end: the first one past it, unless the range
            // had an end of its own.
            None if !set && !end_given => i64::try_from(last + 1).expect("at most 2^32 bits"),
            None => -1,
        };
        Ok(Reply::Integer(position))
    }

    /// `BITOP AND | OR | XOR | NOT destkey key [key ...]` (`bitopCommand`): the sources
    /// combined byte by byte (a shorter or missing one padded with zero bytes) into
    /// `destkey`, which loses its TTL; when every source is empty or missing, `destkey` is
    /// deleted instead. Answers the result's length.
    fn bitop(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply, Reply> {
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum Op {
            And,
            Or,
            Xor,
            Not,
        }
        let op = match argv[1].to_ascii_lowercase().as_slice() {
            b"and" => Op::And,
            b"or" => Op::Or,
            b"xor" => Op::Xor,
            b"not" => Op::Not,
            _ => return Err(Reply::error(SYNTAX_ERROR)),
        };
        if op == Op::Not && argv.len() != 4 {
            return Err(Reply::error(
                "ERR BITOP NOT must be called with a single source key.",
            ));
        }
        let mut sources: Vec<Vec<u8>> = Vec::with_capacity(argv.len() - 3);
        for key in &argv[3..] {
            let source = self.string_for_bits(key, now_ms)?;
            sources.push(source.map(<[u8]>::to_vec).unwrap_or_default());
        }
        let length = sources.iter().map(Vec::len).max().unwrap_or(0);
        let destination = &argv[2];
        if length == 0 {
            // `DEL destkey`, whatever it holds.
            self.del(std::slice::from_ref(destination), now_ms);
            return Ok(Reply::Integer(0));
        }
        let byte = |source: &Vec<u8>, at: usize| source.get(at).copied().unwrap_or(0);
        let result: Vec<u8> = (0..length)
            .map(|at| {
                let first = byte(&sources[0], at);
                let rest = sources[1..].iter().map(|source| byte(source, at));
                match op {
                    Op::Not => !first,
                    Op::And => rest.fold(first, |acc, b| acc & b),
                    Op::Or => rest.fold(first, |acc, b| acc | b),
                    Op::Xor => rest.fold(first, |acc, b| acc ^ b),
                }
            })
            .collect();
        self.expire_if_needed(destination, now_ms);
        self.write_key(destination, result, None);
        Ok(Reply::Integer(
            i64::try_from(length).expect("at most 512 MiB"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_count_the_bits_inside_them_only() {
        // 0xff 0xf0 0x0f: bits 0-11 and 20-23 set.
        let value = [0xff, 0xf0, 0x0f];
        for first in 0..24u64 {
            for last in first..24 {
                let expected = (first..=last).filter(|&b| bit_is_set(&value, b)).count() as u64;
                assert_eq!(
                    count_ones(&value, first, last),
                    expected,
                    "{first}..={last}"
                );
            }
        }
        assert_eq!(bit_range(3, 0, -1, Unit::Byte), Some((0, 23)));
        assert_eq!(bit_range(3, -2, -1, Unit::Bit), Some((22, 23)));
        assert_eq!(bit_range(3, 5, 100, Unit::Bit), Some((5, 23)));
        assert_eq!(bit_range(3, 2, 1, Unit::Byte), None);
        assert_eq!(bit_range(0, 0, -1, Unit::Byte), None);
        assert_eq!(bit_range(3, i64::MIN, i64::MAX, Unit::Bit), Some((0, 23)));
    }

    #[test]
    fn the_first_bit_is_found_within_the_range() {
        let value = [0x00, 0x10, 0xff];
        assert_eq!(first_bit(&value, true, 0, 23), Some(11));
        assert_eq!(first_bit(&value, true, 12, 15), None);
        assert_eq!(first_bit(&value, false, 16, 23), None);
        assert_eq!(first_bit(&value, false, 11, 23), Some(12));
        assert_eq!(bit_offset(b"4294967295"), Ok(4_294_967_295));
        assert!(bit_offset(b"4294967296").is_err());
        assert!(bit_offset(b"-1").is_err());
    }
}
