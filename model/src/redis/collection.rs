//! The values a key holds other than a string: hashes, lists, sets and sorted sets, with the
//! number rules Redis 7.0 applies to sorted-set scores (`strtod` when reading one, `%.17g`
//! when replying with one).
//!
//! A collection is changed where it is stored, and compared, hashed and replicated whole (see
//! [`crate::redis::replication::Effect::Collection`]); the commands that work on them are in
//! `server/collections.rs` (lists, sets, sorted sets) and `server.rs` (hashes).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A key's value when it is not a string. Redis never keeps an empty one: the command that
/// removes the last element deletes the key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collection {
    /// Fields and values in insertion order (as Redis keeps a small hash).
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    /// Elements from head (index 0) to tail.
    List(VecDeque<Vec<u8>>),
    /// Members, byte-ordered. Redis answers `SMEMBERS` in its hash table's order, which
    /// depends on a seed chosen at start-up; the stand-in answers in [`set_members_order`].
    Set(BTreeSet<Vec<u8>>),
    /// Members with their scores, ordered by score and then by member bytes (Redis's order).
    SortedSet(SortedSet),
}

impl Collection {
    /// What `TYPE` answers for it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Collection::Hash(_) => "hash",
            Collection::List(_) => "list",
            Collection::Set(_) => "set",
            Collection::SortedSet(_) => "zset",
        }
    }

    /// True when it has no elements (then the key must not exist).
    pub fn is_empty(&self) -> bool {
        match self {
            Collection::Hash(fields) => fields.is_empty(),
            Collection::List(elements) => elements.is_empty(),
            Collection::Set(members) => members.is_empty(),
            Collection::SortedSet(members) => members.is_empty(),
        }
    }

    /// The collection as a person reads it in a trace, e.g. `LIST queue "a" "b"`.
    pub fn describe(&self, key: &str) -> String {
        let quoted = |bytes: &[u8]| format!("\"{}\"", String::from_utf8_lossy(bytes));
        let parts: Vec<String> = match self {
            Collection::Hash(fields) => fields
                .iter()
                .map(|(f, v)| format!("{} {}", quoted(f), quoted(v)))
                .collect(),
            Collection::List(elements) => elements.iter().map(|e| quoted(e)).collect(),
            Collection::Set(members) => members.iter().map(|m| quoted(m)).collect(),
            Collection::SortedSet(members) => members
                .iter()
                .map(|(score, m)| {
                    format!("{} {}", String::from_utf8_lossy(&score.text()), quoted(m))
                })
                .collect(),
        };
        let kind = match self {
            Collection::Hash(_) => "HASH",
            Collection::List(_) => "LIST",
            Collection::Set(_) => "SETOF",
            Collection::SortedSet(_) => "ZSET",
        };
        format!("{kind} {key} {}", parts.join(" "))
    }
}

/// A sorted set: each member's score, and the members in Redis's order (score, then member
/// bytes), kept together so that finding a member's score and an insertion are logarithmic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SortedSet {
    ordered: BTreeSet<(Score, Vec<u8>)>,
    scores: BTreeMap<Vec<u8>, Score>,
}

impl SortedSet {
    /// How many members.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// True without members.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// A member's score.
    pub fn score(&self, member: &[u8]) -> Option<Score> {
        self.scores.get(member).copied()
    }

    /// Sets a member's score (adding the member when new).
    pub fn insert(&mut self, member: &[u8], score: Score) {
        if let Some(old) = self.scores.insert(member.to_vec(), score) {
            self.ordered.remove(&(old, member.to_vec()));
        }
        self.ordered.insert((score, member.to_vec()));
        debug_assert_eq!(self.ordered.len(), self.scores.len());
    }

    /// Removes a member; true when it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            Some(score) => {
                self.ordered.remove(&(score, member.to_vec()));
                true
            }
            None => false,
        }
    }

    /// The members with their scores, lowest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &(Score, Vec<u8>)> + '_ {
        self.ordered.iter()
    }

    /// A member's rank from the lowest (0-based).
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(self.ordered.range(..(score, member.to_vec())).count())
    }

    /// Removes and returns the lowest (`first`) or highest member.
    pub fn pop(&mut self, first: bool) -> Option<(Score, Vec<u8>)> {
        let popped = if first {
            self.ordered.pop_first()
        } else {
            self.ordered.pop_last()
        }?;
        self.scores.remove(&popped.1);
        Some(popped)
    }

    /// Keeps the members for which `keep` holds (given their rank and entry); returns how
    /// many went.
    pub fn retain(&mut self, mut keep: impl FnMut(usize, &(Score, Vec<u8>)) -> bool) -> usize {
        let gone: Vec<(Score, Vec<u8>)> = self
            .ordered
            .iter()
            .enumerate()
            .filter(|(rank, entry)| !keep(*rank, entry))
            .map(|(_, entry)| entry.clone())
            .collect();
        for entry in &gone {
            self.ordered.remove(entry);
            self.scores.remove(&entry.1);
        }
        gone.len()
    }
}

/// The order the stand-in gives a set's members: numerically when every member is an integer
/// as Redis writes one (Redis then keeps the set as a sorted array of integers, an "intset",
/// and answers in that order too), else byte order.
pub fn set_members_order(members: &BTreeSet<Vec<u8>>) -> Vec<Vec<u8>> {
    let integers: Option<Vec<i64>> = members.iter().map(|m| canonical_integer(m)).collect();
    match integers {
        Some(mut numbers) => {
            numbers.sort_unstable();
            numbers
                .into_iter()
                .map(|n| n.to_string().into_bytes())
                .collect()
        }
        None => members.iter().cloned().collect(),
    }
}

/// The integer `bytes` spells exactly as Redis would write it back (no sign on zero, no
/// leading zeros, no `+`), as Redis's `string2ll` accepts it for an intset.
fn canonical_integer(bytes: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let n: i64 = text.parse().ok()?;
    (n.to_string() == text).then_some(n)
}

/// A sorted-set score: never NaN (Redis refuses one). `-0` is kept as `0`, which is what
/// Redis 7.0 answers for it.
#[derive(Clone, Copy, Debug)]
pub struct Score(f64);

impl Score {
    /// A score from a computed value; `None` for NaN.
    pub fn new(value: f64) -> Option<Score> {
        if value.is_nan() {
            None
        } else if value == 0.0 {
            Some(Score(0.0))
        } else {
            Some(Score(value))
        }
    }

    /// The value.
    pub fn value(self) -> f64 {
        self.0
    }

    /// The score as Redis 7.0 replies with it (`%.17g`; `inf` and `-inf`).
    pub fn text(self) -> Vec<u8> {
        format_g17(self.0).into_bytes()
    }
}

impl PartialEq for Score {
    fn eq(&self, other: &Score) -> bool {
        self.0 == other.0
    }
}

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Score) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Score) -> Ordering {
        // Never NaN, and -0 is stored as 0: the partial order is total here.
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}

impl std::hash::Hash for Score {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// C's `printf("%.17g", value)`: 17 significant digits, trailing zeros removed, exponent form
/// when the exponent is below -4 or at least 17; `inf`/`-inf` as Redis spells them.
pub fn format_g17(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // 17 significant digits: one before the point, 16 after, and the decimal exponent.
    let scientific = format!("{value:.16e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("Rust's {:e} always has an exponent");
    let exponent: i32 = exponent.parse().expect("a decimal exponent");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    debug_assert_eq!(digits.len(), 17);
    let sign = if negative { "-" } else { "" };
    if !(-4..17).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let rest = rest.trim_end_matches('0');
        let point = if rest.is_empty() { "" } else { "." };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!(
            "{sign}{first}{point}{rest}e{exponent_sign}{:02}",
            exponent.unsigned_abs()
        );
    }
    // Fixed notation with 17 significant digits.
    let text = if exponent >= 0 {
        let split = usize::try_from(exponent).expect("non-negative") + 1;
        let (whole, fraction) = digits.split_at(split);
        format!("{whole}.{fraction}")
    } else {
        let zeros = "0".repeat(usize::try_from(-exponent - 1).expect("positive"));
        format!("0.{zeros}{digits}")
    };
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{sign}{text}")
}

/// A score argument read as Redis 7.0 reads one (`strtod` over the whole argument): decimal or
/// hexadecimal, `inf`/`infinity` in any case with an optional sign; no leading space, nothing
/// after the number, no NaN, and no value out of range (overflow to infinity or underflow to
/// zero). `None` when Redis would answer `ERR value is not a valid float`.
pub fn parse_score(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let value = strtod_whole(text)?;
    if value.is_nan() {
        return None;
    }
    Some(value)
}

/// `strtod` over the whole text, `None` when it does not take every byte or the result is out
/// of range (`ERANGE` with an infinite or zero result).
pub fn strtod_whole(text: &str) -> Option<f64> {
    let first = *text.as_bytes().first()?;
    if first.is_ascii_whitespace() {
        return None;
    }
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let lower = unsigned.to_ascii_lowercase();
    let magnitude = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if lower.starts_with("nan") {
        f64::NAN
    } else if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex_float(hex)?
    } else {
        parse_decimal(unsigned)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// An unsigned decimal floating-point number as `strtod` reads it, whole.
fn parse_decimal(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let digits_from = |at: &mut usize| {
        let start = *at;
        while *at < bytes.len() && bytes[*at].is_ascii_digit() {
            *at += 1;
        }
        *at - start
    };
    let whole = digits_from(&mut at);
    let mut fraction = 0;
    if at < bytes.len() && bytes[at] == b'.' {
        at += 1;
        fraction = digits_from(&mut at);
    }
    if whole + fraction == 0 {
        return None;
    }
    if at < bytes.len() && (bytes[at] == b'e' || bytes[at] == b'E') {
        at += 1;
        if at < bytes.len() && (bytes[at] == b'+' || bytes[at] == b'-') {
            at += 1;
        }
        if digits_from(&mut at) == 0 {
            return None;
        }
    }
    if at != bytes.len() {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    let mantissa_is_zero = text
        .split(['e', 'E'])
        .next()
        .is_some_and(|m| m.bytes().all(|b| b == b'0' || b == b'.'));
    if value.is_infinite() || (value == 0.0 && !mantissa_is_zero) {
        return None; // ERANGE
    }
    Some(value)
}

/// An unsigned hexadecimal floating-point number after its `0x`, as `strtod` reads it
/// (`1f`, `1.8`, `1p-3`), whole.
fn parse_hex_float(text: &str) -> Option<f64> {
    let (digits, exponent) = match text.split_once('p') {
        Some((digits, exponent)) => (digits, Some(exponent)),
        None => (text, None),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut value = 0.0f64;
    for c in whole.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in fraction.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    if let Some(exponent) = exponent {
        let exponent = exponent.strip_prefix('+').unwrap_or(exponent);
        if exponent.is_empty()
            || !exponent
                .trim_start_matches('-')
                .bytes()
                .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let power: i32 = exponent.parse().unwrap_or(if exponent.starts_with('-') {
            i32::MIN
        } else {
            i32::MAX
        });
        value *= 2f64.powi(power);
    }
    if value.is_infinite()
        || (value == 0.0
            && (whole.trim_start_matches('0').len() + fraction.trim_start_matches('0').len()) > 0)
    {
        return None;
    }
    Some(value)
}

/// One end of a score range (`ZRANGEBYSCORE`, `ZCOUNT`, ...): `(x` excludes `x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    /// The score.
    pub value: f64,
    /// True for `(x`.
    pub exclusive: bool,
}

impl ScoreBound {
    /// Reads `min` or `max` as Redis's `zslParseRange` does; `None` for `ERR min or max is not
    /// a float`.
    pub fn parse(bytes: &[u8]) -> Option<ScoreBound> {
        let (exclusive, number) = match bytes.strip_prefix(b"(") {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        let text = std::str::from_utf8(number).ok()?;
        // zslParseRange calls strtod and checks only that it took every byte and no NaN:
        // a leading space is allowed and out-of-range values saturate.
        let value = strtod_lenient(text)?;
        if value.is_nan() {
            return None;
        }
        Some(ScoreBound { value, exclusive })
    }

    /// True when `score` is at or above this lower bound.
    pub fn below(self, score: f64) -> bool {
        if self.exclusive {
            self.value < score
        } else {
            self.value <= score
        }
    }

    /// True when `score` is at or below this upper bound.
    pub fn above(self, score: f64) -> bool {
        if self.exclusive {
            score < self.value
        } else {
            score <= self.value
        }
    }
}

/// `strtod` that takes leading spaces and saturates out-of-range values (what `zslParseRange`
/// accepts); `None` when it does not take every byte.
fn strtod_lenient(text: &str) -> Option<f64> {
    if text.is_empty() {
        // strtod converts nothing and leaves its end pointer at the terminating NUL.
        return Some(0.0);
    }
    let trimmed = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    if let Some(value) = strtod_whole(trimmed) {
        return Some(value);
    }
    // Out of range: what strtod returns (infinity or zero) when the syntax is right.
    let negative = trimmed.starts_with('-');
    let unsigned = trimmed.trim_start_matches(['+', '-']);
    let mantissa_part = unsigned.split(['e', 'E']).next().unwrap_or("");
    let syntax_ok = !unsigned.to_ascii_lowercase().starts_with("0x")
        && unsigned
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && mantissa_part.bytes().any(|b| b.is_ascii_digit());
    if !syntax_ok {
        return None;
    }
    let value: f64 = unsigned.parse().ok()?;
    let value = if value.is_infinite() {
        f64::INFINITY
    } else {
        value
    };
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scores as Redis 7.0.15 answered them (`ZADD` then `ZSCORE`).
    #[test]
    fn scores_print_as_redis_prints_them() {
        for (value, text) in [
            (1.1, "1.1000000000000001"),
            (0.1, "0.10000000000000001"),
            (2.0, "2"),
            (1e20, "1e+20"),
            (1.5, "1.5"),
            (0.30000000000000004, "0.30000000000000004"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (1e-7, "9.9999999999999995e-08"),
            (16.0, "16"),
            (1.1 + 1e-5, "1.1000100000000002"),
            (-2.5, "-2.5"),
            (0.0001, "0.0001"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(format_g17(value), text, "{value}");
        }
        assert_eq!(Score::new(-0.0).map(Score::text), Some(b"0".to_vec()));
    }

    #[test]
    fn scores_parse_as_strtod_reads_them() {
        for (text, value) in [
            ("1.5", Some(1.5)),
            ("0x10", Some(16.0)),
            ("0x1p3", Some(8.0)),
            ("-inf", Some(f64::NEG_INFINITY)),
            ("+Infinity", Some(f64::INFINITY)),
            ("1e5", Some(1e5)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("1e400", None),
            ("1e-400", None),
            ("0e-400", Some(0.0)),
            ("nan", None),
            (" 1", None),
            ("1 ", None),
            ("", None),
            ("1e", None),
            ("x", None),
            ("--1", None),
        ] {
            assert_eq!(parse_score(text.as_bytes()), value, "{text:?}");
        }
    }

    #[test]
    fn ranges_parse_as_zsl_parse_range_reads_them() {
        let bound = |text: &str| ScoreBound::parse(text.as_bytes());
        assert_eq!(
            bound("(1"),
            Some(ScoreBound {
                value: 1.0,
                exclusive: true
            })
        );
        assert_eq!(bound("+inf").map(|b| b.value), Some(f64::INFINITY));
        assert_eq!(bound("1e400").map(|b| b.value), Some(f64::INFINITY));
        assert_eq!(bound(" 2").map(|b| b.value), Some(2.0));
        assert_eq!(bound("x"), None);
        assert_eq!(bound("(").map(|b| b.value), Some(0.0));
        assert_eq!(bound(" "), None);
        assert_eq!(bound("(nan"), None);
    }

    #[test]
    fn integer_sets_answer_in_numeric_order() {
        let set = |members: &[&str]| -> BTreeSet<Vec<u8>> {
            members.iter().map(|m| m.as_bytes().to_vec()).collect()
        };
        let texts = |members: Vec<Vec<u8>>| -> Vec<String> {
            members
                .into_iter()
                .map(|m| String::from_utf8(m).expect("utf-8"))
                .collect()
        };
        assert_eq!(
            texts(set_members_order(&set(&["10", "2", "-3"]))),
            ["-3", "2", "10"]
        );
        assert_eq!(
            texts(set_members_order(&set(&["10", "2", "a"]))),
            ["10", "2", "a"]
        );
        assert_eq!(texts(set_members_order(&set(&["02", "2"]))), ["02", "2"]);
    }
}
