//! The string and key commands no safeguard of ours sends, but a user's script, pipeline or
//! `redis-cli` session may: `MGET`, `MSET`, `MSETNX`, `GETSET`, `SETEX`, `PSETEX`, `STRLEN`,
//! `APPEND`, `GETRANGE`, `UNLINK`, `EXPIRETIME`, `PEXPIRETIME`, `RENAME`, `RENAMENX`, `TOUCH`,
//! `GETEX`, `KEYS`, `SCAN`, `SETRANGE`, `COPY`, `DBSIZE`, `MOVE`, `SWAPDB` (Redis 7.0's
//! `t_string.c`, `expire.c` and `db.c`; the last two in `databases.rs`). Each arrives as its argument vector, already checked against the command
//! table's arity; its numbers are read here, when it runs, as Redis reads them.

use std::sync::Arc;

use super::Redis;
use super::{Deadline, Entry};
use crate::redis::command::{
    integer_arg, is_option, wrong_arity_error, SetCondition, SetExpiry, SYNTAX_ERROR,
};
use crate::redis::replication::Effect;
use crate::redis::reply::Reply;

/// Redis's `proto-max-bulk-len` default: the longest string `APPEND` may make.
pub(super) const MAX_STRING_BYTES: usize = 512 * 1024 * 1024;

impl Redis {
    /// `RENAME source destination` / `RENAMENX` (`renameGenericCommand`): the value and its
    /// TTL move, replacing what `destination` held (`RENAMENX`: 0 when it exists). A missing
    /// source is `ERR no such key`; a key renamed to itself is `OK` (`RENAMENX`: 0).
    fn rename(&mut self, source: &[u8], destination: &[u8], nx: bool, now_ms: u64) -> Reply {
        let Some(entry) = self.lookup(source, now_ms) else {
            return Reply::Error("ERR no such key".to_string());
        };
        if source == destination {
            return if nx { Reply::Integer(0) } else { Reply::ok() };
        }
        if nx && self.lookup(destination, now_ms).is_some() {
            return Reply::Integer(0);
        }
        self.delete_key(source);
        self.write_entry(destination, entry);
        if nx {
            Reply::Integer(1)
        } else {
            Reply::ok()
        }
    }

    /// Runs one of this module's commands (see the module documentation).
    pub(super) fn strings_command(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let name = argv[0].to_ascii_lowercase();
        match name.as_slice() {
            b"mget" => self.mget(&argv[1..], now_ms),
            b"mset" => self.mset(argv, false, now_ms),
            b"msetnx" => self.mset(argv, true, now_ms),
            b"getrange" => self.getrange(argv, now_ms),
            b"setbit" | b"getbit" | b"bitcount" | b"bitpos" | b"bitop" => {
                self.bits_command(&name, argv, now_ms)
            }
            b"unlink" => self.del(&argv[1..], now_ms),
            // `GETSET key value` is `SET key value GET`: the old string or nil, the TTL gone.
            b"getset" => self.set(
                &argv[1],
                &argv[2],
                SetCondition::Always,
                SetExpiry::Clear,
                true,
                now_ms,
            ),
            b"setex" | b"psetex" => {
                let amount = match integer_arg(&argv[2]) {
                    Ok(amount) => amount,
                    Err(error) => return error,
                };
                let (command, expiry) = if name == b"setex" {
                    ("setex", SetExpiry::Seconds(amount))
                } else {
                    ("psetex", SetExpiry::Millis(amount))
                };
                let deadline = match Self::deadline(expiry, now_ms, command) {
                    Ok(super::Deadline::At(at_ms)) => at_ms,
                    Ok(_) => unreachable!("a relative expiry has a deadline"),
                    Err(error) => return error,
                };
                self.write_key(&argv[1], argv[3].clone(), Some(deadline));
                Reply::ok()
            }
            b"strlen" => match self.lookup(&argv[1], now_ms) {
                None => Reply::Integer(0),
                Some(entry) => match entry.string_value() {
                    Ok(value) => Reply::Integer(length(value)),
                    Err(error) => error,
                },
            },
            b"append" => self.append(&argv[1], &argv[2], now_ms),
            b"setrange" => self.setrange(argv, now_ms),
            b"copy" => self.copy(argv, now_ms),
            b"move" => self.move_key(argv, now_ms),
            b"swapdb" => self.swapdb(argv, now_ms),
            b"dbsize" => {
                // Keys past their deadline are not counted (Redis counts the ones its active
                // expiry has not removed yet, which depends on when it last sampled).
                let live = self
                    .keyspace
                    .values()
                    .filter(|entry| !entry.is_expired_at(now_ms))
                    .count();
                Reply::Integer(i64::try_from(live).unwrap_or(i64::MAX))
            }
            b"getex" => self.getex(argv, now_ms),
            b"keys" => {
                // `keysCommand`: expired keys are skipped, not deleted.
                let keys = self
                    .keyspace
                    .iter()
                    .filter(|(key, entry)| {
                        !entry.is_expired_at(now_ms)
                            && (argv[1] == b"*" || crate::redis::glob::matches(&argv[1], key))
                    })
                    .map(|(key, _)| Reply::Bulk(key.to_vec()))
                    .collect();
                Reply::Array(keys)
            }
            b"scan" => self.scan(argv, now_ms),
            b"rename" | b"renamenx" => self.rename(&argv[1], &argv[2], name == b"renamenx", now_ms),
            b"touch" => {
                let present = argv[1..]
                    .iter()
                    .filter(|key| self.lookup(key, now_ms).is_some())
                    .count();
                Reply::Integer(i64::try_from(present).unwrap_or(i64::MAX))
            }
            b"expiretime" | b"pexpiretime" => {
                let Some(entry) = self.lookup(&argv[1], now_ms) else {
                    return Reply::Integer(-2);
                };
                match entry.expire_at_ms {
                    None => Reply::Integer(-1),
                    Some(at_ms) => {
                        let at_ms = i64::try_from(at_ms).unwrap_or(i64::MAX);
                        if name == b"pexpiretime" {
                            Reply::Integer(at_ms)
                        } else {
                            // Rounded to the nearest second, as `TTL` is.
                            Reply::Integer(at_ms.saturating_add(500) / 1000)
                        }
                    }
                }
            }
            other => {
                debug_assert!(false, "{:?} is not a string command", other);
                wrong_arity_error(&String::from_utf8_lossy(other))
            }
        }
    }

    /// `GETEX key [EX s | PX ms | EXAT ts | PXAT ms-ts | PERSIST]` (`getexCommand`): the
    /// options are read first (a syntax error even for a missing key; one expiry kind, given
    /// again it is the later value, `PERSIST` only without one), then the key (nil when
    /// missing, with nothing else checked), its type, and only then the expiry's number. The
    /// value is answered as it was; a deadline already past (`EXAT`/`PXAT`) deletes the key.
    fn getex(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let mut expiry: Option<(&[u8], &[u8])> = None;
        let mut persist = false;
        let mut j = 2;
        while j < argv.len() {
            let option = argv[j].as_slice();
            let next = argv.get(j + 1).map(Vec::as_slice);
            let kind = ["ex", "px", "exat", "pxat"]
                .into_iter()
                .find(|name| is_option(option, name));
            match (kind, next) {
                (Some(kind), Some(number))
                    if !persist && expiry.is_none_or(|(set, _)| is_option(set, kind)) =>
                {
                    expiry = Some((option, number));
                    j += 1;
                }
                _ if is_option(option, "persist") && expiry.is_none() => persist = true,
                _ => return Reply::error(SYNTAX_ERROR),
            }
            j += 1;
        }
        let Some(entry) = self.lookup(&argv[1], now_ms) else {
            return Reply::Nil;
        };
        let value = match entry.string_value() {
            Ok(value) => value.to_vec(),
            Err(error) => return error,
        };
        if let Some((kind, number)) = expiry {
            let amount = match integer_arg(number) {
                Ok(amount) => amount,
                Err(error) => return error,
            };
            let expiry = match kind.to_ascii_lowercase().as_slice() {
                b"ex" => SetExpiry::Seconds(amount),
                b"px" => SetExpiry::Millis(amount),
                b"exat" => SetExpiry::AtSeconds(amount),
                _ => SetExpiry::AtMillis(amount),
            };
            let at_ms = match Self::deadline(expiry, now_ms, "getex") {
                Ok(Deadline::At(at_ms)) => at_ms,
                Ok(_) => unreachable!("an expiry option has a deadline"),
                Err(error) => return error,
            };
            if at_ms <= now_ms {
                self.delete_key(&argv[1]);
            } else {
                self.touch(&argv[1]);
                if let Some(entry) = self.keyspace.get_mut(argv[1].as_slice()) {
                    entry.expire_at_ms = Some(at_ms);
                }
                self.record(|db| Effect::Expire {
                    key: argv[1].clone(),
                    expire_at_ms: at_ms,
                    db,
                });
            }
        } else if persist && entry.expire_at_ms.is_some() {
            self.write_key(&argv[1], value.clone(), None);
        }
        Reply::Bulk(value)
    }

    /// `SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]` (`scanGenericCommand`): the cursor
    /// must be an unsigned 64-bit number, `COUNT` at least 1; then every key is visited in one
    /// call (a `COUNT` is a hint) and the answer's cursor is 0, which the `SCAN` contract
    /// allows: every key present throughout the iteration is returned. (Redis continues from
    /// any cursor in its table's order; a cursor this never gave ends the iteration.) A visited key that has
    /// expired is deleted, as Redis's scan does; `TYPE` compares the type's name (any case).
    fn scan(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let Some(cursor) = scan_cursor(&argv[1]) else {
            return Reply::error("ERR invalid cursor");
        };
        let ScanOptions { pattern, type_name } = match scan_options(argv, 2, true) {
            Ok(options) => options,
            Err(error) => return error,
        };
        // Every iteration ends in its first call, so a cursor other than 0 was never given
        // out: it is taken as past the end.
        if cursor != 0 {
            return empty_scan();
        }
        let candidates: Vec<Arc<[u8]>> = self
            .keyspace
            .keys()
            .filter(|key| pattern.is_none_or(|p| crate::redis::glob::matches(p, key)))
            .cloned()
            .collect();
        let mut keys = Vec::with_capacity(candidates.len());
        for key in candidates {
            let type_matches = type_name.is_none_or(|wanted| {
                let name = match self.keyspace.get(&key) {
                    Some(Entry {
                        collection: Some(collection),
                        ..
                    }) => collection.type_name(),
                    Some(_) => "string",
                    None => "none",
                };
                wanted.eq_ignore_ascii_case(name.as_bytes())
            });
            if !type_matches {
                continue;
            }
            self.expire_if_needed(&key, now_ms);
            if self.keyspace.contains_key(&key) {
                keys.push(Reply::Bulk(key.to_vec()));
            }
        }
        Reply::Array(vec![Reply::Bulk(b"0".to_vec()), Reply::Array(keys)])
    }

    /// `SETRANGE key offset value` (`setrangeCommand`): `value` written at `offset`, the string
    /// padded with zero bytes up to it; the new length. An empty `value` changes nothing (and
    /// creates no key); a negative offset is `ERR offset is out of range`, a string past 512
    /// MiB is refused before anything is allocated. The TTL stays.
    fn setrange(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let offset = match integer_arg(&argv[2]) {
            Ok(offset) => offset,
            Err(error) => return error,
        };
        let Ok(offset) = usize::try_from(offset) else {
            return Reply::error("ERR offset is out of range");
        };
        let value = &argv[3];
        let (mut current, expire_at_ms) = match self.lookup(&argv[1], now_ms) {
            None if value.is_empty() => return Reply::Integer(0),
            None => (Vec::new(), None),
            Some(entry) => match entry.string_value() {
                Ok(current) if value.is_empty() => return Reply::Integer(length(current)),
                Ok(_) => (entry.value, entry.expire_at_ms),
                Err(error) => return error,
            },
        };
        let end = offset.saturating_add(value.len());
        if end > MAX_STRING_BYTES {
            return Reply::error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        }
        if current.len() < end {
            current.resize(end, 0);
        }
        current[offset..end].copy_from_slice(value);
        let total = length(&current);
        self.write_key(&argv[1], current, expire_at_ms);
        Reply::Integer(total)
    }

    /// `COPY source destination [DB index] [REPLACE]` (`copyCommand`): 1 when `destination`
    /// (in database `index`, else this one) now holds a copy of `source`'s value and TTL, 0
    /// when `source` is missing or `destination` exists (without `REPLACE`). Each `DB` index
    /// is checked where it stands among the options; in cluster mode only database 0 is.
    fn copy(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Reply {
        let mut replace = false;
        let mut target = self.selected_db();
        let mut j = 3;
        while j < argv.len() {
            if is_option(&argv[j], "replace") {
                replace = true;
            } else if is_option(&argv[j], "db") && j + 1 < argv.len() {
                match self.copy_target(&argv[j + 1]) {
                    Ok(db) => target = db,
                    Err(error) => return error,
                }
                j += 1;
            } else {
                return Reply::error(SYNTAX_ERROR);
            }
            j += 1;
        }
        if self.cluster_mode && (self.selected_db() != 0 || target != 0) {
            return Reply::error("ERR Copying to another database is not allowed in cluster mode");
        }
        let (source, destination) = (&argv[1], &argv[2]);
        if target == self.selected_db() && source == destination {
            return Reply::error("ERR source and destination objects are the same");
        }
        let Some(entry) = self.lookup(source, now_ms) else {
            return Reply::Integer(0);
        };
        self.in_db(target, |redis| {
            if redis.lookup(destination, now_ms).is_some() {
                if !replace {
                    return Reply::Integer(0);
                }
                redis.delete_key(destination);
            }
            redis.write_entry(destination, entry);
            Reply::Integer(1)
        })
    }

    /// `APPEND key value`: the new length; a missing key starts empty; the TTL stays.
    fn append(&mut self, key: &[u8], value: &[u8], now_ms: u64) -> Reply {
        let (mut current, expire_at_ms) = match self.lookup(key, now_ms) {
            None => (Vec::new(), None),
            Some(entry) => match entry.string_value() {
                Ok(_) => (entry.value, entry.expire_at_ms),
                Err(error) => return error,
            },
        };
        if current.len().saturating_add(value.len()) > MAX_STRING_BYTES {
            return Reply::error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        }
        current.extend_from_slice(value);
        let total = length(&current);
        self.write_key(key, current, expire_at_ms);
        Reply::Integer(total)
    }
}

/// A length as Redis's integer reply.
/// The options of the `SCAN` family from `argv[from]` on (`scanGenericCommand`): `COUNT n`
/// (an integer of at least 1; only a hint here), `MATCH pattern` (none for `*`, which matches
/// everything), and, for `SCAN` alone (`with_type`), `TYPE name`. Anything else, or an
/// option without its value, is a syntax error.
pub(in crate::redis) fn scan_options(
    argv: &[Vec<u8>],
    from: usize,
    with_type: bool,
) -> Result<ScanOptions<'_>, Reply> {
    let mut pattern: Option<&[u8]> = None;
    let mut type_name: Option<&[u8]> = None;
    let mut j = from;
    while j < argv.len() {
        let Some(value) = argv.get(j + 1) else {
            return Err(Reply::error(SYNTAX_ERROR));
        };
        if is_option(&argv[j], "count") {
            match integer_arg(value) {
                Ok(count) if count >= 1 => {}
                Ok(_) => return Err(Reply::error(SYNTAX_ERROR)),
                Err(error) => return Err(error),
            }
        } else if is_option(&argv[j], "match") {
            pattern = Some(value)
                .filter(|p| p.as_slice() != b"*")
                .map(Vec::as_slice);
        } else if with_type && is_option(&argv[j], "type") {
            type_name = Some(value);
        } else {
            return Err(Reply::error(SYNTAX_ERROR));
        }
        j += 2;
    }
    Ok(ScanOptions { pattern, type_name })
}

/// What the options of a `SCAN` family call ask for.
pub(in crate::redis) struct ScanOptions<'a> {
    /// `MATCH`'s pattern (none: everything).
    pub pattern: Option<&'a [u8]>,
    /// `TYPE`'s name (`SCAN` only).
    pub type_name: Option<&'a [u8]>,
}

/// The answer of a `SCAN` family call that visits nothing more: cursor 0, no elements.
pub(in crate::redis) fn empty_scan() -> Reply {
    Reply::Array(vec![Reply::Bulk(b"0".to_vec()), Reply::Array(Vec::new())])
}

/// A cursor as Redis reads it (`parseScanCursorOrReply`, C `strtoul`): empty (0), or an
/// optional sign and decimal digits up to 2^64 - 1 (a minus wraps, as `strtoul` negates), no
/// leading blank, nothing after. None when Redis says `invalid cursor`.
pub(in crate::redis) fn scan_cursor(bytes: &[u8]) -> Option<u64> {
    let (negative, digits) = match bytes {
        [] => return Some(0),
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        all => (false, all),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

fn length(bytes: &[u8]) -> i64 {
    i64::try_from(bytes.len()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis::command::Command;

    fn run(redis: &mut Redis, words: &[&str], now_ms: u64) -> Reply {
        let argv: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        match Command::parse(&argv) {
            Ok(command) => redis.apply(&command, now_ms),
            Err(error) => error,
        }
    }

    #[test]
    fn dbsize_counts_the_keys_not_past_their_deadline() {
        let mut redis = Redis::new();
        assert_eq!(run(&mut redis, &["DBSIZE"], 0), Reply::Integer(0));
        run(&mut redis, &["SET", "a", "1"], 0);
        run(&mut redis, &["SET", "b", "1", "PX", "10"], 0);
        run(&mut redis, &["HSET", "h", "f", "v"], 0);
        assert_eq!(run(&mut redis, &["DBSIZE"], 9), Reply::Integer(3));
        // At its deadline a key is still there (Redis expires it once `now > when`).
        assert_eq!(run(&mut redis, &["DBSIZE"], 10), Reply::Integer(3));
        assert_eq!(run(&mut redis, &["DBSIZE"], 11), Reply::Integer(2));
        assert_eq!(
            run(&mut redis, &["DBSIZE", "x"], 11),
            wrong_arity_error("dbsize")
        );
    }

    #[test]
    fn copy_keeps_the_ttl_and_setrange_pads_with_zero_bytes() {
        let mut redis = Redis::new();
        run(&mut redis, &["SET", "a", "xy", "PX", "100"], 0);
        assert_eq!(
            run(&mut redis, &["SETRANGE", "a", "4", "z"], 0),
            Reply::Integer(5)
        );
        assert_eq!(
            run(&mut redis, &["GET", "a"], 0),
            Reply::Bulk(b"xy\0\0z".to_vec())
        );
        assert_eq!(run(&mut redis, &["COPY", "a", "b"], 10), Reply::Integer(1));
        assert_eq!(run(&mut redis, &["PTTL", "b"], 10), Reply::Integer(90));
        assert_eq!(run(&mut redis, &["COPY", "a", "b"], 10), Reply::Integer(0));
        assert_eq!(
            run(&mut redis, &["SETRANGE", "b", "536870911", "zz"], 10),
            Reply::error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
        );
        assert_eq!(run(&mut redis, &["GET", "b"], 101), Reply::Nil);
    }

    #[test]
    fn keys_and_scan_find_what_a_pattern_matches() {
        let mut redis = Redis::new();
        run(&mut redis, &["SET", "lock:a", "1"], 0);
        run(&mut redis, &["SET", "lock:b", "1", "PX", "10"], 0);
        run(&mut redis, &["HSET", "lease", "f", "v"], 0);
        run(&mut redis, &["SET", "", "empty"], 0);
        let bulks = |keys: &[&str]| {
            Reply::Array(
                keys.iter()
                    .map(|k| Reply::Bulk(k.as_bytes().to_vec()))
                    .collect(),
            )
        };
        assert_eq!(
            run(&mut redis, &["KEYS", "lock:*"], 0),
            bulks(&["lock:a", "lock:b"])
        );
        assert_eq!(
            run(&mut redis, &["KEYS", "*"], 0),
            bulks(&["", "lease", "lock:a", "lock:b"])
        );
        // An expired key is not listed; SCAN also deletes it.
        assert_eq!(run(&mut redis, &["KEYS", "lock:?"], 20), bulks(&["lock:a"]));
        assert_eq!(
            run(
                &mut redis,
                &["SCAN", "0", "MATCH", "l*", "TYPE", "STRING"],
                20
            ),
            Reply::Array(vec![Reply::Bulk(b"0".to_vec()), bulks(&["lock:a"])])
        );
        assert_eq!(
            run(&mut redis, &["SCAN", "0", "TYPE", "hash", "COUNT", "1"], 20),
            Reply::Array(vec![Reply::Bulk(b"0".to_vec()), bulks(&["lease"])])
        );
        assert_eq!(
            run(&mut redis, &["SCAN", " 0"], 20),
            Reply::error("ERR invalid cursor")
        );
        assert_eq!(
            run(&mut redis, &["SCAN", "0", "COUNT", "0"], 20),
            Reply::error(SYNTAX_ERROR)
        );
    }

    #[test]
    fn getex_reads_options_first_and_the_number_last() {
        let mut redis = Redis::new();
        let bulk = |v: &str| Reply::Bulk(v.as_bytes().to_vec());
        assert_eq!(
            run(&mut redis, &["GETEX", "missing", "EX", "x"], 0),
            Reply::Nil
        );
        assert_eq!(
            run(&mut redis, &["GETEX", "missing", "EX", "1", "PERSIST"], 0),
            Reply::error(SYNTAX_ERROR)
        );
        run(&mut redis, &["SET", "k", "v"], 0);
        assert_eq!(run(&mut redis, &["GETEX", "k", "PX", "500"], 0), bulk("v"));
        assert_eq!(run(&mut redis, &["PTTL", "k"], 100), Reply::Integer(400));
        assert_eq!(
            run(&mut redis, &["GETEX", "k", "EX", "0"], 100),
            Reply::error("ERR invalid expire time in 'getex' command")
        );
        assert_eq!(run(&mut redis, &["GETEX", "k", "persist"], 100), bulk("v"));
        assert_eq!(run(&mut redis, &["PTTL", "k"], 100), Reply::Integer(-1));
        // A deadline already past answers the value and deletes the key.
        assert_eq!(
            run(&mut redis, &["GETEX", "k", "PXAT", "50"], 100),
            bulk("v")
        );
        assert_eq!(run(&mut redis, &["EXISTS", "k"], 100), Reply::Integer(0));
        run(&mut redis, &["HSET", "h", "f", "v"], 0);
        assert_eq!(
            run(&mut redis, &["GETEX", "h", "EX", "x"], 0),
            Reply::error(crate::redis::server::WRONGTYPE_ERROR)
        );
    }

    #[test]
    fn rename_moves_value_and_ttl_and_set_algebra_stores_a_fresh_set() {
        let mut redis = Redis::new();
        run(&mut redis, &["SET", "a", "1", "PX", "5000"], 0);
        run(&mut redis, &["SET", "b", "2"], 0);
        assert_eq!(
            run(&mut redis, &["RENAMENX", "a", "b"], 10),
            Reply::Integer(0)
        );
        assert_eq!(run(&mut redis, &["RENAME", "a", "b"], 10), Reply::ok());
        assert_eq!(
            run(&mut redis, &["GET", "b"], 10),
            Reply::Bulk(b"1".to_vec())
        );
        assert_eq!(run(&mut redis, &["PTTL", "b"], 10), Reply::Integer(4_990));
        assert_eq!(
            run(&mut redis, &["RENAME", "a", "c"], 10),
            Reply::Error("ERR no such key".to_string())
        );
        // An expired source is no source.
        assert_eq!(
            run(&mut redis, &["RENAME", "b", "c"], 6_000),
            Reply::Error("ERR no such key".to_string())
        );
        run(&mut redis, &["SADD", "s", "x", "y"], 0);
        run(&mut redis, &["SADD", "t", "y", "z"], 0);
        run(&mut redis, &["SET", "d", "v", "PX", "9000"], 0);
        assert_eq!(
            run(&mut redis, &["SUNIONSTORE", "d", "s", "t"], 0),
            Reply::Integer(3)
        );
        assert_eq!(run(&mut redis, &["PTTL", "d"], 0), Reply::Integer(-1));
        assert_eq!(
            run(&mut redis, &["SINTER", "s", "t"], 0),
            Reply::Array(vec![Reply::Bulk(b"y".to_vec())])
        );
        assert_eq!(
            run(&mut redis, &["SDIFFSTORE", "d", "s", "s"], 0),
            Reply::Integer(0)
        );
        assert_eq!(run(&mut redis, &["EXISTS", "d"], 0), Reply::Integer(0));
        assert_eq!(
            run(&mut redis, &["TOUCH", "s", "t", "d", "s"], 0),
            Reply::Integer(3)
        );
    }

    #[test]
    fn setex_sets_a_deadline_and_refuses_what_redis_refuses() {
        let mut redis = Redis::new();
        assert_eq!(
            run(&mut redis, &["SETEX", "k", "10", "v"], 1_000),
            Reply::ok()
        );
        assert_eq!(
            run(&mut redis, &["PTTL", "k"], 1_000),
            Reply::Integer(10_000)
        );
        assert_eq!(
            run(&mut redis, &["PEXPIRETIME", "k"], 5_000),
            Reply::Integer(11_000)
        );
        assert_eq!(
            run(&mut redis, &["EXPIRETIME", "k"], 5_000),
            Reply::Integer(11)
        );
        assert_eq!(
            run(&mut redis, &["SETEX", "k", "0", "v"], 1_000),
            Reply::error("ERR invalid expire time in 'setex' command")
        );
        assert_eq!(
            run(&mut redis, &["PSETEX", "k", "x", "v"], 1_000),
            Reply::error("ERR value is not an integer or out of range")
        );
        assert_eq!(
            run(&mut redis, &["SETEX", "k", "9223372036854775", "v"], 1_000),
            Reply::error("ERR invalid expire time in 'setex' command")
        );
    }

    #[test]
    fn append_keeps_the_ttl_and_getset_drops_it() {
        let mut redis = Redis::new();
        assert_eq!(
            run(&mut redis, &["APPEND", "k", "ab"], 0),
            Reply::Integer(2)
        );
        assert_eq!(
            run(&mut redis, &["PEXPIRE", "k", "100"], 0),
            Reply::Integer(1)
        );
        assert_eq!(
            run(&mut redis, &["APPEND", "k", "cde"], 0),
            Reply::Integer(5)
        );
        assert_eq!(run(&mut redis, &["PTTL", "k"], 10), Reply::Integer(90));
        assert_eq!(
            run(&mut redis, &["GETSET", "k", "z"], 10),
            Reply::Bulk(b"abcde".to_vec())
        );
        assert_eq!(run(&mut redis, &["PTTL", "k"], 10), Reply::Integer(-1));
        assert_eq!(run(&mut redis, &["STRLEN", "k"], 10), Reply::Integer(1));
        assert_eq!(
            run(&mut redis, &["UNLINK", "k", "k", "n"], 10),
            Reply::Integer(1)
        );
        assert_eq!(
            run(&mut redis, &["EXPIRETIME", "k"], 10),
            Reply::Integer(-2)
        );
    }

    #[test]
    fn hash_keys_are_wrong_type_for_string_commands() {
        let mut redis = Redis::new();
        run(&mut redis, &["HSET", "h", "f", "v"], 0);
        let wrong = Reply::error(super::super::WRONGTYPE_ERROR);
        assert_eq!(run(&mut redis, &["STRLEN", "h"], 0), wrong);
        assert_eq!(run(&mut redis, &["APPEND", "h", "x"], 0), wrong);
        assert_eq!(run(&mut redis, &["GETSET", "h", "x"], 0), wrong);
        assert_eq!(
            run(&mut redis, &["MGET", "h", "nope"], 0),
            Reply::Array(vec![Reply::Nil, Reply::Nil])
        );
        assert_eq!(
            run(&mut redis, &["MSET", "a", "1", "b"], 0),
            Reply::error("ERR wrong number of arguments for 'mset' command")
        );
    }
}
