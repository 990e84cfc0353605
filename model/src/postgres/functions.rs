//! The values of PostgreSQL's built-in functions and pattern operators that the stand-in
//! computes beyond plain arithmetic: `LIKE`/`ILIKE` (with `ESCAPE`), the rounding family
//! (`round`, `trunc`, `floor`, `ceil`, `sign`) on `numeric` and `double precision`, and the
//! text functions a ledger or lock user writes (`replace`, `strpos`, the trims, the pads,
//! `left`, `right`, `repeat`, `reverse`, `octet_length`).
//!
//! Each follows the PostgreSQL 15 source it is named after, down to when it raises an error:
//! `LIKE`'s matcher (`like_match.c`) only complains about a pattern ending in its escape
//! character when it reaches that character, so `'abc' LIKE 'abc\'` is false while `'abcd'
//! LIKE 'abc\'` fails. NULL arguments never reach these functions (the caller answers NULL).

use super::error::{sqlstate, PgError};
use super::value::Decimal;

/// What PostgreSQL's `MatchText` answers: a match, no match here, or no match anywhere later
/// either (the text ran out), which lets a `%` stop trying further positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Match {
    True,
    False,
    Abort,
}

fn ends_in_escape() -> PgError {
    PgError::error(
        sqlstate::INVALID_ESCAPE_SEQUENCE,
        "LIKE pattern must not end with escape character",
    )
}

/// How deep [`match_text`] recurses (one level per `%` followed by more pattern) before it
/// answers PostgreSQL's 54001, as PostgreSQL's own stack check would (later: it allows some
/// tens of thousands). Keeps a hostile pattern from overflowing the stack of the thread that
/// serves it.
pub const LIKE_DEPTH_LIMIT: usize = 1_000;

/// `text LIKE pattern`, the pattern's escape character being `\` (see [`like_escape`]).
pub fn like(text: &str, pattern: &str) -> Result<bool, PgError> {
    let text: Vec<char> = text.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    Ok(match_text(&text, &pattern, 0)? == Match::True)
}

/// `text ILIKE pattern`: both lower-cased first, as PostgreSQL does outside the C locale.
pub fn ilike(text: &str, pattern: &str) -> Result<bool, PgError> {
    like(&text.to_lowercase(), &pattern.to_lowercase())
}

/// `like_match.c`'s `MatchText`, on characters, `depth` calls deep.
fn match_text(mut t: &[char], mut p: &[char], depth: usize) -> Result<Match, PgError> {
    if p == ['%'] {
        return Ok(Match::True);
    }
    if depth >= LIKE_DEPTH_LIMIT {
        return Err(super::sql::stack_depth_exceeded());
    }
    while !t.is_empty() && !p.is_empty() {
        match p[0] {
            '\\' => {
                p = &p[1..];
                let Some(&literal) = p.first() else {
                    return Err(ends_in_escape());
                };
                if literal != t[0] {
                    return Ok(Match::False);
                }
            }
            '%' => {
                p = &p[1..];
                // Any run of `%` and `_` after the first `%`: the `_`s each take a character.
                while let Some(&next) = p.first() {
                    match next {
                        '%' => p = &p[1..],
                        '_' => {
                            if t.is_empty() {
                                return Ok(Match::Abort);
                            }
                            t = &t[1..];
                            p = &p[1..];
                        }
                        _ => break,
                    }
                }
                if p.is_empty() {
                    return Ok(Match::True);
                }
                let first = if p[0] == '\\' {
                    *p.get(1).ok_or_else(ends_in_escape)?
                } else {
                    p[0]
                };
                while !t.is_empty() {
                    if t[0] == first {
                        let matched = match_text(t, p, depth + 1)?;
                        if matched != Match::False {
                            return Ok(matched);
                        }
                    }
                    t = &t[1..];
                }
                return Ok(Match::Abort);
            }
            '_' => {
                t = &t[1..];
                p = &p[1..];
                continue;
            }
            literal if literal != t[0] => return Ok(Match::False),
            _ => {}
        }
        t = &t[1..];
        p = &p[1..];
    }
    if !t.is_empty() {
        return Ok(Match::False);
    }
    while p.first() == Some(&'%') {
        p = &p[1..];
    }
    Ok(if p.is_empty() {
        Match::True
    } else {
        Match::Abort
    })
}

/// `pattern ESCAPE escape` rewritten to use `\` (PostgreSQL's `like_escape`): an empty escape
/// makes every `\` literal; `\` keeps the pattern; any other single character becomes `\`
/// and a `\` not following it is doubled. A longer escape is 22025.
pub fn like_escape(pattern: &str, escape: &str) -> Result<String, PgError> {
    let mut chars = escape.chars();
    let escape = match (chars.next(), chars.next()) {
        (None, _) => return Ok(pattern.replace('\\', "\\\\")),
        (Some(only), None) => only,
        _ => {
            return Err(
                PgError::error(sqlstate::INVALID_ESCAPE_SEQUENCE, "invalid escape string")
                    .with_hint("Escape string must be empty or one character."),
            )
        }
    };
    if escape == '\\' {
        return Ok(pattern.to_string());
    }
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut after_escape = false;
    for c in pattern.chars() {
        if c == escape && !after_escape {
            out.push('\\');
            after_escape = true;
        } else if c == '\\' {
            out.push('\\');
            if !after_escape {
                out.push('\\');
            }
            after_escape = false;
        } else {
            out.push(c);
            after_escape = false;
        }
    }
    Ok(out)
}

fn numeric_out_of_range() -> PgError {
    PgError::error(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value overflows numeric format",
    )
}

/// How a `numeric` is cut to fewer digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Half away from zero (`round`).
    Round,
    /// Towards zero (`trunc`).
    Trunc,
    /// Towards minus infinity (`floor`).
    Floor,
    /// Towards plus infinity (`ceil`).
    Ceil,
}

/// `div(a, b)`: `a / b` truncated toward zero, with no decimals (`numeric_div_trunc`); 22012
/// for a zero divisor, 0A000 past the stand-in's 128-bit `numeric`.
pub fn numeric_div_trunc(a: Decimal, b: Decimal) -> Result<Decimal, PgError> {
    if b.mantissa == 0 {
        return Err(super::catalog::division_by_zero());
    }
    // a / b = (a.mantissa * 10^b.scale) / (b.mantissa * 10^a.scale).
    let scaled = |mantissa: i128, scale: u32| {
        10i128
            .checked_pow(scale)
            .and_then(|power| mantissa.checked_mul(power))
    };
    let beyond = || PgError::unsupported_statement("div() of numbers past 38 digits");
    let dividend = scaled(a.mantissa, b.scale).ok_or_else(beyond)?;
    let divisor = scaled(b.mantissa, a.scale).ok_or_else(beyond)?;
    Ok(Decimal {
        mantissa: dividend / divisor,
        scale: 0,
    })
}

/// `value` cut to `digits` after the point (negative: before it), as `round(numeric, int)`
/// and its kin do: the result shows `max(digits, 0)` digits after the point.
pub fn cut_numeric(value: Decimal, digits: i64, how: Cut) -> Result<Decimal, PgError> {
    let scale = i64::from(value.scale);
    if digits >= scale {
        // More digits than it has: zeros appended.
        let extra = u32::try_from(digits - scale).map_err(|_| numeric_out_of_range())?;
        let mantissa = 10i128
            .checked_pow(extra)
            .and_then(|factor| value.mantissa.checked_mul(factor))
            .filter(|_| digits <= 1000)
            .ok_or_else(numeric_out_of_range)?;
        return Ok(Decimal {
            mantissa,
            scale: digits as u32,
        });
    }
    let dropped = scale - digits;
    let result_scale = digits.max(0) as u32;
    // Past 38 dropped digits every mantissa is a fraction of one unit of the last kept digit.
    let (quotient, remainder, factor) = match u32::try_from(dropped)
        .ok()
        .and_then(|d| 10i128.checked_pow(d))
    {
        Some(factor) => (value.mantissa / factor, value.mantissa % factor, factor),
        None => (0, value.mantissa, i128::MAX),
    };
    let away = match how {
        Cut::Round => remainder.unsigned_abs() >= factor.unsigned_abs().div_ceil(2),
        Cut::Trunc => false,
        Cut::Floor => remainder < 0,
        Cut::Ceil => remainder > 0,
    };
    let step = match how {
        Cut::Round => value.mantissa.signum(),
        Cut::Floor => -1,
        _ => 1,
    };
    let kept = if away { quotient + step } else { quotient };
    // Digits dropped before the point come back as zeros.
    let mantissa = if digits < 0 {
        let back = u32::try_from(-digits).map_err(|_| numeric_out_of_range())?;
        match 10i128.checked_pow(back) {
            Some(factor) => kept.checked_mul(factor).ok_or_else(numeric_out_of_range)?,
            None if kept == 0 => 0,
            None => return Err(numeric_out_of_range()),
        }
    } else {
        kept
    };
    Ok(Decimal {
        mantissa,
        scale: result_scale,
    })
}

/// `sign(numeric)`: -1, 0 or 1, with no digits after the point.
pub fn sign_numeric(value: Decimal) -> Decimal {
    Decimal::from_int(value.mantissa.signum() as i64)
}

/// `round(double precision)`: to the nearest integer, ties to even (C's `rint`).
pub fn round_float(value: f64) -> f64 {
    value.round_ties_even()
}

/// `double precision ^ double precision` (and `power`, `pow`) as PostgreSQL 15's `dpow`
/// computes it: NaN cases and infinities by POSIX's rules spelt out, 2201F for zero to a
/// negative power and for a negative number to a fraction, 22003 when the result overflows,
/// or underflows to zero from a base that is not zero.
pub fn power(base: f64, exponent: f64) -> Result<f64, PgError> {
    let invalid = |message: &str| PgError::error("2201F", message);
    if base.is_nan() {
        return Ok(if exponent.is_nan() || exponent != 0.0 {
            f64::NAN
        } else {
            1.0
        });
    }
    if exponent.is_nan() {
        return Ok(if base != 1.0 { f64::NAN } else { 1.0 });
    }
    if base == 0.0 && exponent < 0.0 {
        return Err(invalid("zero raised to a negative power is undefined"));
    }
    if base < 0.0 && exponent.floor() != exponent {
        return Err(invalid(
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if exponent.is_infinite() {
        let magnitude = base.abs();
        return Ok(if magnitude == 1.0 {
            1.0
        } else if (exponent > 0.0) == (magnitude > 1.0) {
            f64::INFINITY
        } else {
            0.0
        });
    }
    if base.is_infinite() {
        let half = exponent / 2.0;
        let odd_integer = half.floor() != half;
        return Ok(match (exponent == 0.0, base > 0.0, exponent > 0.0) {
            (true, _, _) => 1.0,
            (false, true, true) => base,
            (false, true, false) => 0.0,
            (false, false, true) => {
                if odd_integer {
                    base
                } else {
                    -base
                }
            }
            (false, false, false) => {
                if odd_integer {
                    -0.0
                } else {
                    0.0
                }
            }
        });
    }
    let result = base.powf(exponent);
    let out_of_range = |what: &str| {
        PgError::error(
            super::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value out of range: {what}"),
        )
    };
    if result.is_infinite() {
        return Err(out_of_range("overflow"));
    }
    if result == 0.0 && base != 0.0 {
        return Err(out_of_range("underflow"));
    }
    Ok(result)
}

/// `sign(double precision)`.
pub fn sign_float(value: f64) -> f64 {
    if value > 0.0 {
        1.0
    } else if value < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// `replace(text, from, to)`: every occurrence, left to right; an empty `from` changes nothing.
pub fn replace(text: &str, from: &str, to: &str) -> Result<String, PgError> {
    if from.is_empty() {
        return Ok(text.to_string());
    }
    // Each occurrence may grow the text: count them before building anything.
    if to.len() > from.len() {
        let grown = text
            .matches(from)
            .count()
            .saturating_mul(to.len() - from.len());
        built_text_fits(text.len().saturating_add(grown))?;
    }
    Ok(text.replace(from, to))
}

/// `strpos(text, needle)` / `position(needle IN text)`: the first occurrence's character
/// position (1-based), 0 when there is none; an empty needle is at 1.
pub fn strpos(text: &str, needle: &str) -> i64 {
    match text.find(needle) {
        Some(at) => text[..at].chars().count() as i64 + 1,
        None => 0,
    }
}

/// Which ends [`trim`] takes characters from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ends {
    /// `btrim`, `trim(BOTH ...)`.
    Both,
    /// `ltrim`, `trim(LEADING ...)`.
    Leading,
    /// `rtrim`, `trim(TRAILING ...)`.
    Trailing,
}

/// `btrim`/`ltrim`/`rtrim(text [, characters])`: every character of `characters` (a space
/// by default) removed from the chosen ends.
pub fn trim(text: &str, characters: &str, ends: Ends) -> String {
    let remove = |c: char| characters.contains(c);
    match ends {
        Ends::Both => text.trim_matches(remove),
        Ends::Leading => text.trim_start_matches(remove),
        Ends::Trailing => text.trim_end_matches(remove),
    }
    .to_string()
}

/// `lpad`/`rpad(text, length [, fill])`: cut to `length` characters, or filled up to it with
/// `fill` repeated (a space by default; an empty fill leaves the text as it is).
pub fn pad(text: &str, length: i64, fill: &str, left: bool) -> Result<String, PgError> {
    let length = usize::try_from(length).unwrap_or(0);
    let have = text.chars().count();
    if have >= length {
        return Ok(text.chars().take(length).collect());
    }
    if fill.is_empty() {
        return Ok(text.to_string());
    }
    // Characters take up to four bytes.
    if length.saturating_mul(4) > BUILT_TEXT_LIMIT_BYTES {
        return Err(too_long());
    }
    let padding: String = fill.chars().cycle().take(length - have).collect();
    Ok(if left {
        padding + text
    } else {
        text.to_string() + &padding
    })
}

/// `left(text, n)`: the first `n` characters; a negative `n` drops the last `-n`.
pub fn left(text: &str, n: i64) -> String {
    let count = text.chars().count() as i64;
    let take = if n >= 0 { n } else { (count + n).max(0) };
    text.chars().take(take as usize).collect()
}

/// `right(text, n)`: the last `n` characters; a negative `n` drops the first `-n`.
pub fn right(text: &str, n: i64) -> String {
    let count = text.chars().count() as i64;
    let skip = if n >= 0 { (count - n).max(0) } else { -n };
    text.chars().skip(skip as usize).collect()
}

/// The longest text `repeat`, `lpad` and `rpad` build. PostgreSQL's limit is a value of
/// 1 GB; past this smaller one the stand-in already answers PostgreSQL's error, so a hostile
/// argument cannot make it allocate gigabytes.
pub const BUILT_TEXT_LIMIT_BYTES: usize = 64 << 20;

/// 54000 `requested length too large` when a text of `bytes` would pass
/// [`BUILT_TEXT_LIMIT_BYTES`]: every function and operator that builds a text longer than its
/// inputs checks it before building (`repeat`, `lpad`, `replace`, `||`, `concat`, `format`,
/// `string_agg`, `array_to_string`), so no query makes an unbounded text from a short one.
pub fn built_text_fits(bytes: usize) -> Result<(), PgError> {
    if bytes > BUILT_TEXT_LIMIT_BYTES {
        Err(too_long())
    } else {
        Ok(())
    }
}

fn too_long() -> PgError {
    PgError::error(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        "requested length too large",
    )
}

/// `repeat(text, n)`: `n` copies (none for `n <= 0`).
pub fn repeat(text: &str, n: i64) -> Result<String, PgError> {
    let copies = usize::try_from(n).unwrap_or(0);
    if text.len().saturating_mul(copies) > BUILT_TEXT_LIMIT_BYTES {
        return Err(too_long());
    }
    Ok(text.repeat(copies))
}

/// `reverse(text)`, by characters.
pub fn reverse(text: &str) -> String {
    text.chars().rev().collect()
}

/// The keywords PostgreSQL 15 does not take as a bare identifier everywhere (its
/// `pg_get_keywords()` whose `catcode` is not `U`): `quote_ident` quotes them.
const NON_UNRESERVED_KEYWORDS: [&str; 151] = [
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

/// `quote_ident(text)`, as `ruleutils.c`'s `quote_identifier`: unchanged when it starts with
/// a lowercase letter or `_`, holds only lowercase letters, digits and `_`, and is no keyword
/// that needs quoting; else in double quotes, each `"` doubled.
pub fn quote_ident(ident: &str) -> String {
    let plain = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    let safe = ident
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && ident.chars().all(plain)
        && NON_UNRESERVED_KEYWORDS.binary_search(&ident).is_err();
    if safe {
        return ident.to_string();
    }
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// `quote_literal(text)`, as `quote.c` quotes it: in single quotes with `'` doubled, and with
/// `\\` doubled and an `E` in front when the text holds a backslash.
pub fn quote_literal(text: &str) -> String {
    let escape = if text.contains('\\') { "E" } else { "" };
    format!(
        "{escape}'{}'",
        text.replace('\\', "\\\\").replace('\'', "''")
    )
}

/// A `format()` error: 22023 with PostgreSQL's hint about `%%` where it gives one.
fn format_error(message: String, hint: bool) -> PgError {
    let error = PgError::error(sqlstate::INVALID_PARAMETER_VALUE, message);
    if hint {
        error.with_hint("For a single \"%\" use \"%%\".")
    } else {
        error
    }
}

fn unterminated() -> PgError {
    format_error("unterminated format() type specifier".to_string(), true)
}

fn numbered_from_one() -> PgError {
    format_error(
        "format specifies argument 0, but arguments are numbered from 1".to_string(),
        false,
    )
}

/// Digits at `chars[*at..]` as a number (None when there are none), as `varlena.c`'s
/// `text_format_parse_digits`: past an `int` is 22003, running off the end 22023.
fn format_digits(chars: &[char], at: &mut usize) -> Result<Option<i64>, PgError> {
    let mut value: Option<i64> = None;
    while let Some(digit) = chars.get(*at).and_then(|c| c.to_digit(10)) {
        let next = value.unwrap_or(0) * 10 + i64::from(digit);
        if next > i64::from(i32::MAX) {
            return Err(PgError::error(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                "number is out of range",
            ));
        }
        value = Some(next);
        *at += 1;
        if *at >= chars.len() {
            return Err(unterminated());
        }
    }
    Ok(value)
}

/// One `%` specification after its `%`: (argument position, width argument position (0: the
/// next argument), minus flag, width), as `text_format_parse_format` reads it; `at` is left
/// on the type character.
fn format_spec(
    chars: &[char],
    at: &mut usize,
) -> Result<(Option<i64>, Option<i64>, bool, i64), PgError> {
    let advance = |at: &mut usize| {
        *at += 1;
        if *at >= chars.len() {
            Err(unterminated())
        } else {
            Ok(())
        }
    };
    let mut position = None;
    if let Some(n) = format_digits(chars, at)? {
        if chars[*at] != '$' {
            return Ok((None, None, false, n));
        }
        if n == 0 {
            return Err(numbered_from_one());
        }
        position = Some(n);
        advance(at)?;
    }
    let mut minus = false;
    while chars[*at] == '-' {
        minus = true;
        advance(at)?;
    }
    let (mut width_position, mut width) = (None, 0);
    if chars[*at] == '*' {
        advance(at)?;
        match format_digits(chars, at)? {
            Some(n) => {
                if chars[*at] != '$' {
                    return Err(format_error(
                        "width argument position must be ended by \"$\"".to_string(),
                        false,
                    ));
                }
                if n == 0 {
                    return Err(numbered_from_one());
                }
                width_position = Some(n);
                advance(at)?;
            }
            None => width_position = Some(0),
        }
    } else if let Some(n) = format_digits(chars, at)? {
        width = n;
    }
    Ok((position, width_position, minus, width))
}

/// `text` padded to `width` characters, on the right when `left` or the width is negative
/// (`text_format_append_string`); past [`BUILT_TEXT_LIMIT_BYTES`] is 54000.
fn format_pad(out: &mut String, text: &str, left: bool, width: i64) -> Result<(), PgError> {
    // -INT_MIN has no int: PostgreSQL refuses it before taking the absolute value.
    if width <= i64::from(i32::MIN) {
        return Err(PgError::error(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "number is out of range",
        ));
    }
    let left = left || width < 0;
    let width = usize::try_from(width.unsigned_abs()).unwrap_or(usize::MAX);
    let have = text.chars().count();
    if have >= width {
        out.push_str(text);
        return Ok(());
    }
    if out.len().saturating_add(width) > BUILT_TEXT_LIMIT_BYTES {
        return Err(too_long());
    }
    let spaces = " ".repeat(width - have);
    if left {
        out.push_str(text);
        out.push_str(&spaces);
    } else {
        out.push_str(&spaces);
        out.push_str(text);
    }
    Ok(())
}

/// `format(formatstr, args...)` as `varlena.c`'s `text_format` runs it: `%s` (the value's
/// text, NULL as nothing), `%I` (`quote_ident`; NULL is 22004), `%L` (`quote_literal`; NULL
/// as `NULL`), `%%`; an argument position `n$`, the `-` flag, a width, `*` or `*n$` for a width
/// taken from an argument. `arguments` are the values after the format, as text (None: NULL).
pub fn format(formatstr: &str, arguments: &[Option<String>]) -> Result<String, PgError> {
    let chars: Vec<char> = formatstr.chars().collect();
    let mut out = String::new();
    let mut next = 0usize; // the next argument, counted from 0 after the format
    let mut at = 0;
    while at < chars.len() {
        if chars[at] != '%' {
            out.push(chars[at]);
            at += 1;
            continue;
        }
        at += 1;
        if at >= chars.len() {
            return Err(unterminated());
        }
        if chars[at] == '%' {
            out.push('%');
            at += 1;
            continue;
        }
        let (position, width_position, minus, mut width) = format_spec(&chars, &mut at)?;
        let kind = chars[at];
        if !matches!(kind, 's' | 'I' | 'L') {
            return Err(format_error(
                format!("unrecognized format() type specifier \"{kind}\""),
                true,
            ));
        }
        let mut take = |wanted: Option<i64>| -> Result<Option<String>, PgError> {
            if let Some(n) = wanted.filter(|n| *n > 0) {
                next = usize::try_from(n - 1).unwrap_or(usize::MAX);
            }
            let value = arguments
                .get(next)
                .cloned()
                .ok_or_else(|| format_error("too few arguments for format()".to_string(), false))?;
            next += 1;
            Ok(value)
        };
        if let Some(wanted) = width_position {
            width = match take(Some(wanted))? {
                None => 0,
                Some(text) => text.trim().parse::<i32>().map(i64::from).map_err(|_| {
                    PgError::error(
                        sqlstate::INVALID_TEXT_REPRESENTATION,
                        format!("invalid input syntax for type integer: \"{text}\""),
                    )
                })?,
            };
        }
        let value = take(position)?;
        let text = match (kind, value) {
            (_, None) if kind == 's' => String::new(),
            ('L', None) => "NULL".to_string(),
            (_, None) => {
                return Err(PgError::error(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "null values cannot be formatted as an SQL identifier",
                ))
            }
            ('I', Some(text)) => quote_ident(&text),
            ('L', Some(text)) => quote_literal(&text),
            (_, Some(text)) => text,
        };
        built_text_fits(out.len().saturating_add(text.len()))?;
        format_pad(&mut out, &text, minus, width)?;
        at += 1;
    }
    Ok(out)
}

/// `md5(text)`: the digest of the text's bytes in lowercase hex.
pub fn md5_hex(text: &str) -> String {
    use md5::Digest;
    hex::encode(md5::Md5::digest(text.as_bytes()))
}

/// Bob Jenkins' `mix` of three words, as PostgreSQL's `hashfn.c` writes it.
fn jenkins_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

/// Its `final`.
fn jenkins_final(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(14));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(11));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(25));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(16));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(4));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(14));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(24));
}

/// PostgreSQL's `hash_bytes_extended` (`hash_bytes` is its `c` with no seed): lookup3 over
/// little-endian words of twelve bytes, the last few bytes added into `a`, `b` and the top
/// three bytes of `c`. Returns `(b, c)` after the final mix.
fn hash_bytes(bytes: &[u8], seed: u64) -> (u32, u32) {
    // The length is mixed in as a 32-bit count, as PostgreSQL's `int keylen` is.
    let start = 0x9e37_79b9_u32
        .wrapping_add(bytes.len() as u32)
        .wrapping_add(3_923_095);
    let (mut a, mut b, mut c) = (start, start, start);
    if seed != 0 {
        a = a.wrapping_add((seed >> 32) as u32);
        b = b.wrapping_add(seed as u32);
        jenkins_mix(&mut a, &mut b, &mut c);
    }
    let word = |chunk: &[u8]| {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        u32::from_le_bytes(word)
    };
    let mut blocks = bytes.chunks_exact(12);
    for block in &mut blocks {
        a = a.wrapping_add(word(&block[0..4]));
        b = b.wrapping_add(word(&block[4..8]));
        c = c.wrapping_add(word(&block[8..12]));
        jenkins_mix(&mut a, &mut b, &mut c);
    }
    let rest = blocks.remainder();
    a = a.wrapping_add(word(&rest[..rest.len().min(4)]));
    if rest.len() > 4 {
        b = b.wrapping_add(word(&rest[4..rest.len().min(8)]));
    }
    if rest.len() > 8 {
        // The lowest byte of `c` is left for the length.
        c = c.wrapping_add(word(&rest[8..]) << 8);
    }
    jenkins_final(&mut a, &mut b, &mut c);
    (b, c)
}

/// `hashtext(text)`: PostgreSQL's hash of the text's bytes, as an `integer` (the key
/// `pg_advisory_lock(hashtext('name'))` takes a named lock by).
pub fn hashtext(text: &str) -> i32 {
    hash_bytes(text.as_bytes(), 0).1 as i32
}

/// `hashtextextended(text, seed)`, as a `bigint`.
pub fn hashtext_extended(text: &str, seed: i64) -> i64 {
    let (b, c) = hash_bytes(text.as_bytes(), seed as u64);
    ((u64::from(b) << 32) | u64::from(c)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keyword_list_is_sorted_for_its_binary_search() {
        assert!(NON_UNRESERVED_KEYWORDS.windows(2).all(|w| w[0] < w[1]));
        for keyword in NON_UNRESERVED_KEYWORDS {
            assert_eq!(quote_ident(keyword), format!("\"{keyword}\""));
        }
        // Unreserved keywords stay bare.
        assert_eq!(quote_ident("balance"), "balance");
        assert_eq!(quote_ident("begin"), "begin");
    }

    #[test]
    fn format_reads_positions_flags_and_widths_as_postgres_does() {
        let args = |values: &[Option<&str>]| -> Vec<Option<String>> {
            values.iter().map(|v| v.map(str::to_string)).collect()
        };
        assert_eq!(format("%s-%s", &args(&[Some("a"), None])).unwrap(), "a-");
        assert_eq!(
            format("%2$s%1$s%s", &args(&[Some("a"), Some("b")])).unwrap(),
            "bab"
        );
        assert_eq!(
            format("|%-3s|%3s|", &args(&[Some("a"), Some("b")])).unwrap(),
            "|a  |  b|"
        );
        assert_eq!(
            format("|%*s|", &args(&[Some("-3"), Some("x")])).unwrap(),
            "|x  |"
        );
        assert_eq!(
            format("%L %L", &args(&[None, Some("it's")])).unwrap(),
            "NULL 'it''s'"
        );
        assert_eq!(
            format("%I", &args(&[Some("Wallets")])).unwrap(),
            "\"Wallets\""
        );
        assert_eq!(format("100%%", &[]).unwrap(), "100%");
        let code = |f: &str, a: &[Option<&str>]| format(f, &args(a)).unwrap_err().code;
        assert_eq!(code("%s %s", &[Some("a")]), "22023");
        assert_eq!(code("%", &[]), "22023");
        assert_eq!(code("%5", &[]), "22023");
        assert_eq!(code("%q", &[]), "22023");
        assert_eq!(code("%0$s", &[Some("a")]), "22023");
        assert_eq!(code("%I", &[None]), "22004");
        assert_eq!(code("%99999999999s", &[Some("a")]), "22003");
        assert_eq!(code("%*s", &[Some("wide"), Some("a")]), "22P02");
        // A width the result cannot hold is refused before anything is allocated.
        assert_eq!(code("%2147483647s", &[Some("a")]), "54000");
        assert_eq!(code("%*s", &[Some("-2147483648"), Some("a")]), "22003");
        assert_eq!(quote_literal("a\\b'c"), "E'a\\\\b''c'");
    }

    /// What PostgreSQL 15 answers.
    #[test]
    fn hashes_are_postgresqls() {
        assert_eq!(hashtext("migration"), -1_537_331_349);
        assert_eq!(hashtext_extended("abc", 0), -6_747_756_470_228_489_321);
        assert_eq!(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
    }

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).expect("a number")
    }

    #[test]
    fn like_follows_match_text_including_when_it_errs() {
        assert!(like("abc", "a%").unwrap());
        assert!(like("abc", "_b_").unwrap());
        assert!(!like("abc", "_b").unwrap());
        assert!(like("", "%").unwrap());
        assert!(like("a_c", "a\\_c").unwrap());
        assert!(!like("abc", "a\\_c").unwrap());
        assert!(like("100%", "%\\%").unwrap());
        // The escape at the end is only an error once the matcher reaches it.
        assert!(!like("abc", "abc\\").unwrap());
        assert!(like("abcd", "abc\\").is_err());
        assert!(like("abc", "%\\").is_err());
        assert!(ilike("ÄB", "äb").unwrap());
        // A pattern of many `%a` pieces against a text that almost matches: an error, not a
        // stack overflow.
        let deep = "%a".repeat(5_000) + "b";
        assert_eq!(like(&"a".repeat(5_000), &deep).unwrap_err().code, "54001");
        assert!(like(&"a".repeat(50), &("%a".repeat(50) + "%")).unwrap());
    }

    #[test]
    fn an_escape_clause_is_rewritten_to_backslashes() {
        assert_eq!(like_escape("a!%", "!").unwrap(), "a\\%");
        assert_eq!(like_escape("a\\b", "!").unwrap(), "a\\\\b");
        assert_eq!(like_escape("a!\\", "!").unwrap(), "a\\\\");
        assert_eq!(like_escape("a\\b", "").unwrap(), "a\\\\b");
        assert_eq!(like_escape("a\\b", "\\").unwrap(), "a\\b");
        assert!(like_escape("a", "ab").is_err());
    }

    #[test]
    fn numerics_are_cut_as_postgres_cuts_them() {
        let cut = |v: &str, digits: i64, how: Cut| cut_numeric(d(v), digits, how).unwrap();
        assert_eq!(cut("2.5", 0, Cut::Round).to_string(), "3");
        assert_eq!(cut("-2.5", 0, Cut::Round).to_string(), "-3");
        assert_eq!(cut("1.23456", 3, Cut::Round).to_string(), "1.235");
        assert_eq!(cut("1234.5", -2, Cut::Round).to_string(), "1200");
        assert_eq!(cut("1250", -2, Cut::Round).to_string(), "1300");
        assert_eq!(cut("1.5", 3, Cut::Round).to_string(), "1.500");
        assert_eq!(cut("-2.7", 0, Cut::Floor).to_string(), "-3");
        assert_eq!(cut("-2.1", 0, Cut::Ceil).to_string(), "-2");
        assert_eq!(cut("-2.9", 0, Cut::Trunc).to_string(), "-2");
        assert_eq!(cut("1.2345", 2, Cut::Trunc).to_string(), "1.23");
        assert_eq!(cut("5", -100, Cut::Round).to_string(), "0");
        assert_eq!(round_float(2.5), 2.0);
        assert_eq!(round_float(3.5), 4.0);
    }

    #[test]
    fn text_functions_count_characters() {
        assert_eq!(strpos("héllo", "l"), 3);
        assert_eq!(strpos("abc", ""), 1);
        assert_eq!(strpos("abc", "z"), 0);
        assert_eq!(pad("7", 3, "0", true).unwrap(), "007");
        assert_eq!(pad("abcdef", 3, " ", true).unwrap(), "abc");
        assert_eq!(pad("ab", 5, "xy", false).unwrap(), "abxyx");
        assert_eq!(pad("ab", 5, "", false).unwrap(), "ab");
        assert!(pad("ab", 2_147_483_647, "x", true).is_err());
        assert_eq!(left("abc", -1), "ab");
        assert_eq!(right("abc", -1), "bc");
        assert_eq!(right("abc", 5), "abc");
        assert_eq!(trim("xxaxx", "x", Ends::Leading), "axx");
        assert_eq!(repeat("ab", -1).unwrap(), "");
        assert!(repeat("ab", 1 << 40).is_err());
    }
}
