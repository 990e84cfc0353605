//! SQL values and types: `bigint`, `integer`, `text`, `boolean`, `numeric`, `double precision`,
//! `timestamp with time zone`, `timestamp`, `interval` (kept in `datetime.rs`), `uuid`, and
//! one-dimensional arrays of them (`array.rs`), with PostgreSQL's text forms, input syntax and
//! range errors.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use super::datetime::{self, Interval};
use super::error::PgError;

/// A column or expression type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SqlType {
    /// `smallint` (`int2`).
    Int2,
    /// `integer` (`int4`).
    Int4,
    /// `bigint` (`int8`).
    Int8,
    /// `text`.
    Text,
    /// `boolean`.
    Bool,
    /// `numeric`.
    Numeric,
    /// `double precision` (`float8`).
    Float8,
    /// A literal whose type the context decides (a quoted string, `NULL`).
    Unknown,
    /// `void`: what `pg_advisory_lock` and other functions without a result answer (an
    /// empty text).
    Void,
    /// `timestamp with time zone` (`timestamptz`).
    TimestampTz,
    /// `timestamp` (without time zone).
    Timestamp,
    /// `interval`.
    Interval,
    /// `uuid`.
    Uuid,
    /// `regtype`: a type, as `pg_typeof` answers it; its value is the type's name
    /// ([`SqlType::name`]), which is also its text form.
    RegType,
    /// `xid`: a transaction id, what the system column `xmax` holds (the stand-in shows it
    /// only in an `INSERT`'s `RETURNING`); an `Int` value, compared with `=` and `<>` only.
    Xid,
    /// A one-dimensional array of an element type (never `unknown`, `void` or an array:
    /// [`SqlType::array_of`] makes them).
    Array(&'static SqlType),
}

impl SqlType {
    /// The type's OID as the protocol reports it.
    pub fn oid(self) -> u32 {
        match self {
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Int8 => 20,
            SqlType::Text | SqlType::Unknown => 25,
            SqlType::Bool => 16,
            SqlType::Numeric => 1700,
            SqlType::Float8 => 701,
            SqlType::Void => 2278,
            SqlType::TimestampTz => 1184,
            SqlType::Timestamp => 1114,
            SqlType::Interval => 1186,
            SqlType::Uuid => 2950,
            SqlType::RegType => 2206,
            SqlType::Xid => 28,
            SqlType::Array(element) => match element {
                SqlType::Int2 => 1005,
                SqlType::Int4 => 1007,
                SqlType::Int8 => 1016,
                SqlType::Bool => 1000,
                SqlType::Numeric => 1231,
                SqlType::Float8 => 1022,
                SqlType::TimestampTz => 1185,
                SqlType::Timestamp => 1115,
                SqlType::Interval => 1187,
                SqlType::Uuid => 2951,
                _ => 1009,
            },
        }
    }

    /// The array type of this element type (None for `unknown`, `void` and arrays, which
    /// have none here).
    pub fn array_of(self) -> Option<SqlType> {
        const INT2: SqlType = SqlType::Int2;
        const INT4: SqlType = SqlType::Int4;
        const INT8: SqlType = SqlType::Int8;
        const TEXT: SqlType = SqlType::Text;
        const BOOL: SqlType = SqlType::Bool;
        const NUMERIC: SqlType = SqlType::Numeric;
        const FLOAT8: SqlType = SqlType::Float8;
        const TIMESTAMPTZ: SqlType = SqlType::TimestampTz;
        const TIMESTAMP: SqlType = SqlType::Timestamp;
        const INTERVAL: SqlType = SqlType::Interval;
        const UUID: SqlType = SqlType::Uuid;
        Some(SqlType::Array(match self {
            SqlType::Int2 => &INT2,
            SqlType::Int4 => &INT4,
            SqlType::Int8 => &INT8,
            SqlType::Text => &TEXT,
            SqlType::Bool => &BOOL,
            SqlType::Numeric => &NUMERIC,
            SqlType::Float8 => &FLOAT8,
            SqlType::TimestampTz => &TIMESTAMPTZ,
            SqlType::Timestamp => &TIMESTAMP,
            SqlType::Interval => &INTERVAL,
            SqlType::Uuid => &UUID,
            SqlType::Unknown
            | SqlType::Void
            | SqlType::RegType
            | SqlType::Xid
            | SqlType::Array(_) => return None,
        }))
    }

    /// The element type of an array type.
    pub fn element(self) -> Option<SqlType> {
        match self {
            SqlType::Array(element) => Some(*element),
            _ => None,
        }
    }

    /// The type of a protocol OID.
    pub fn from_oid(oid: u32) -> Option<SqlType> {
        Some(match oid {
            21 => SqlType::Int2,
            23 => SqlType::Int4,
            20 => SqlType::Int8,
            25 | 1043 => SqlType::Text,
            16 => SqlType::Bool,
            1700 => SqlType::Numeric,
            700 | 701 => SqlType::Float8,
            0 | 705 => SqlType::Unknown,
            1184 => SqlType::TimestampTz,
            1114 => SqlType::Timestamp,
            1186 => SqlType::Interval,
            2950 => SqlType::Uuid,
            2206 => SqlType::RegType,
            1005 => SqlType::Int2.array_of()?,
            1007 => SqlType::Int4.array_of()?,
            1016 => SqlType::Int8.array_of()?,
            1009 | 1015 => SqlType::Text.array_of()?,
            1000 => SqlType::Bool.array_of()?,
            1231 => SqlType::Numeric.array_of()?,
            1021 | 1022 => SqlType::Float8.array_of()?,
            1185 => SqlType::TimestampTz.array_of()?,
            1115 => SqlType::Timestamp.array_of()?,
            1187 => SqlType::Interval.array_of()?,
            2951 => SqlType::Uuid.array_of()?,
            _ => return None,
        })
    }

    /// The OID of the type a `regtype` value names (its binary form), if the stand-in has it.
    pub fn regtype_oid(value: &str) -> Option<u32> {
        regtype_of(value).ok().map(SqlType::oid)
    }

    /// The name PostgreSQL uses in messages.
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Int8 => "bigint",
            SqlType::Text => "text",
            SqlType::Bool => "boolean",
            SqlType::Numeric => "numeric",
            SqlType::Float8 => "double precision",
            SqlType::Void => "void",
            SqlType::Unknown => "unknown",
            SqlType::TimestampTz => "timestamp with time zone",
            SqlType::Timestamp => "timestamp without time zone",
            SqlType::Interval => "interval",
            SqlType::Uuid => "uuid",
            SqlType::RegType => "regtype",
            SqlType::Xid => "xid",
            SqlType::Array(element) => match element {
                SqlType::Int2 => "smallint[]",
                SqlType::Int4 => "integer[]",
                SqlType::Int8 => "bigint[]",
                SqlType::Bool => "boolean[]",
                SqlType::Numeric => "numeric[]",
                SqlType::Float8 => "double precision[]",
                SqlType::TimestampTz => "timestamp with time zone[]",
                SqlType::Timestamp => "timestamp without time zone[]",
                SqlType::Interval => "interval[]",
                SqlType::Uuid => "uuid[]",
                _ => "text[]",
            },
        }
    }

    /// True for `timestamp with time zone` and `timestamp`.
    pub fn is_timestamp(self) -> bool {
        matches!(self, SqlType::TimestampTz | SqlType::Timestamp)
    }

    /// True for the time types (the timestamps and `interval`).
    pub fn is_time(self) -> bool {
        self.is_timestamp() || self == SqlType::Interval
    }

    /// True for the number types.
    pub fn is_number(self) -> bool {
        matches!(
            self,
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Numeric | SqlType::Float8
        )
    }

    /// True for `smallint`, `integer` and `bigint`.
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
    }
}

/// A `numeric` value: `mantissa × 10^-scale`, the scale being the number of digits shown after
/// the point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The digits.
    pub mantissa: i128,
    /// Digits after the point.
    pub scale: u32,
}

/// Why [`Decimal::read`] could not read a `numeric`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumericInput {
    /// Not numeric input at all: PostgreSQL's 22P02.
    NotANumber,
    /// A number PostgreSQL accepts past the stand-in's 38 digits and 60 decimals, or `NaN`
    /// or an infinity.
    Beyond,
}

/// The largest scale kept (results are rounded to it).
const MAX_SCALE: u32 = 30;

impl Decimal {
    /// An integer as a decimal.
    pub fn from_int(value: i64) -> Decimal {
        Decimal {
            mantissa: i128::from(value),
            scale: 0,
        }
    }

    fn rescaled(self, scale: u32) -> Option<i128> {
        let factor = 10i128.checked_pow(scale.checked_sub(self.scale)?)?;
        self.mantissa.checked_mul(factor)
    }

    /// `self` and `other` on a common scale.
    fn aligned(self, other: Decimal) -> Option<(i128, i128, u32)> {
        let scale = self.scale.max(other.scale);
        Some((self.rescaled(scale)?, other.rescaled(scale)?, scale))
    }

    /// Parses PostgreSQL's numeric input (`-12.50`, `+3`, `.5`, `1e3`).
    pub fn parse(text: &str) -> Option<Decimal> {
        Decimal::read(text).ok()
    }

    /// Reads PostgreSQL's numeric input, saying why when it cannot: not a number at all, or a
    /// number PostgreSQL accepts that the stand-in's 38 digits and 60 decimals cannot hold
    /// (also `NaN` and the infinities).
    pub fn read(text: &str) -> Result<Decimal, NumericInput> {
        use NumericInput::{Beyond, NotANumber};
        let text = text.trim();
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        let lowered = unsigned.to_ascii_lowercase();
        if matches!(lowered.as_str(), "inf" | "infinity")
            || (lowered == "nan" && unsigned.len() == text.len())
        {
            return Err(Beyond);
        }
        let (mantissa_text, exponent) = match text.find(['e', 'E']) {
            Some(at) => {
                let exponent = &text[at + 1..];
                let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(NotANumber);
                }
                (&text[..at], exponent.parse::<i32>().map_err(|_| Beyond)?)
            }
            None => (text, 0),
        };
        let (negative, digits) = match mantissa_text.as_bytes().first() {
            Some(b'-') => (true, &mantissa_text[1..]),
            Some(b'+') => (false, &mantissa_text[1..]),
            _ => (false, mantissa_text),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        if whole.is_empty() && fraction.is_empty() {
            return Err(NotANumber);
        }
        if !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
        {
            return Err(NotANumber);
        }
        let mut mantissa: i128 = 0;
        for b in whole.bytes().chain(fraction.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(b - b'0')))
                .ok_or(Beyond)?;
        }
        let mut scale = fraction.len() as i64 - i64::from(exponent);
        while scale < 0 {
            mantissa = mantissa.checked_mul(10).ok_or(Beyond)?;
            scale += 1;
        }
        let scale = u32::try_from(scale)
            .ok()
            .filter(|&s| s <= 60)
            .ok_or(Beyond)?;
        Ok(Decimal {
            mantissa: if negative { -mantissa } else { mantissa },
            scale,
        })
    }

    /// Rounds half away from zero to `scale` digits.
    pub fn round_to(self, scale: u32) -> Decimal {
        if scale >= self.scale {
            return self;
        }
        let factor = 10i128.pow(self.scale - scale);
        let quotient = self.mantissa / factor;
        let remainder = self.mantissa % factor;
        let rounded = if remainder.abs() * 2 >= factor {
            quotient + self.mantissa.signum()
        } else {
            quotient
        };
        Decimal {
            mantissa: rounded,
            scale,
        }
    }

    /// The integer this rounds to (half away from zero), as `numeric` to `bigint` does.
    pub fn to_i64(self) -> Option<i64> {
        i64::try_from(self.round_to(0).mantissa).ok()
    }

    /// As a double.
    pub fn to_f64(self) -> f64 {
        format!("{self}").parse().unwrap_or(f64::NAN)
    }

    /// `self + other`, None on overflow.
    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        let (a, b, scale) = self.aligned(other)?;
        Some(Decimal {
            mantissa: a.checked_add(b)?,
            scale,
        })
    }

    /// `self - other`.
    pub fn checked_sub(self, other: Decimal) -> Option<Decimal> {
        self.checked_add(Decimal {
            mantissa: -other.mantissa,
            ..other
        })
    }

    /// `self * other`.
    pub fn checked_mul(self, other: Decimal) -> Option<Decimal> {
        let product = Decimal {
            mantissa: self.mantissa.checked_mul(other.mantissa)?,
            scale: self.scale + other.scale,
        };
        Some(product.round_to(MAX_SCALE))
    }

    /// `self / other` with PostgreSQL's result scale (at least 16 significant digits); None
    /// when `other` is zero or the result does not fit.
    pub fn checked_div(self, other: Decimal) -> Option<Decimal> {
        if other.mantissa == 0 {
            return None;
        }
        // PostgreSQL's `select_div_scale`, on base-10000 digits: the weight and value of each
        // side's first non-zero digit (a zero has weight 0 and first digit 0); when the first
        // digits are equal the quotient is taken to be below one.
        let weight = |d: Decimal| -> i64 {
            if d.mantissa == 0 {
                return 0;
            }
            let digits = d.mantissa.unsigned_abs().to_string().len() as i64;
            let integer_digits = digits - i64::from(d.scale);
            (integer_digits - 1).div_euclid(4)
        };
        let first_group = |d: Decimal| -> i128 {
            let w = weight(d);
            let shift = 4 * w - -(i64::from(d.scale));
            let value = d.mantissa.abs();
            if shift >= 0 {
                value / 10i128.pow(shift as u32)
            } else {
                value * 10i128.pow((-shift) as u32)
            }
        };
        let mut qweight = weight(self) - weight(other);
        if first_group(self) <= first_group(other) {
            qweight -= 1;
        }
        let scale = (16 - qweight * 4)
            .max(i64::from(self.scale))
            .max(i64::from(other.scale))
            .clamp(0, i64::from(MAX_SCALE)) as u32;
        // mantissa_a × 10^(scale + 1 + scale_b - scale_a) / mantissa_b, then round once.
        let exponent = i64::from(scale) + 1 + i64::from(other.scale) - i64::from(self.scale);
        let numerator = if exponent >= 0 {
            self.mantissa
                .checked_mul(10i128.checked_pow(exponent as u32)?)?
        } else {
            self.mantissa / 10i128.pow((-exponent) as u32)
        };
        let quotient = Decimal {
            mantissa: numerator / other.mantissa,
            scale: scale + 1,
        };
        Some(quotient.round_to(scale))
    }

    fn cmp_value(self, other: Decimal) -> Ordering {
        match self.aligned(other) {
            Some((a, b, _)) => a.cmp(&b),
            None => self.to_f64().total_cmp(&other.to_f64()),
        }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.mantissa.unsigned_abs().to_string();
        let sign = if self.mantissa < 0 { "-" } else { "" };
        let scale = self.scale as usize;
        if scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (whole, fraction) = padded.split_at(padded.len() - scale);
        write!(f, "{sign}{whole}.{fraction}")
    }
}

/// A double with a total order (PostgreSQL orders NaN above every number).
#[derive(Clone, Copy, Debug)]
pub struct Float(pub f64);

impl PartialEq for Float {
    fn eq(&self, other: &Float) -> bool {
        self.0.total_cmp(&other.0) == Ordering::Equal
    }
}

impl Eq for Float {}

impl std::hash::Hash for Float {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// A value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// `NULL`.
    Null,
    /// An `integer` or `bigint`.
    Int(i64),
    /// `text`.
    Text(String),
    /// `boolean`.
    Bool(bool),
    /// `numeric`.
    Numeric(Decimal),
    /// `double precision`.
    Float(Float),
    /// `timestamp with time zone`: microseconds since 2000-01-01 00:00 UTC ([`datetime`]).
    TimestampTz(i64),
    /// `timestamp`: microseconds since 2000-01-01 00:00, shown without a zone.
    Timestamp(i64),
    /// `interval`.
    Interval(Interval),
    /// `uuid`: its 16 bytes, most significant first (so they order as PostgreSQL's
    /// `memcmp`).
    Uuid(u128),
    /// A one-dimensional array (lower bound 1), its elements of the array type's element
    /// type.
    Array(Arc<Vec<Value>>),
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    /// SQL order for values of comparable types (numbers compare across types); `NULL` sorts
    /// last, as PostgreSQL sorts it ascending.
    fn cmp(&self, other: &Value) -> Ordering {
        use Value::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Greater,
            (_, Null) => Ordering::Less,
            (Int(a), Int(b)) => a.cmp(b),
            (Text(a), Text(b)) => a.cmp(b),
            (Bool(a), Bool(b)) => a.cmp(b),
            (Float(a), b) | (b, Float(a)) if !matches!(b, Float(_)) => {
                let ordering = a.0.total_cmp(&b.as_f64().unwrap_or(f64::NAN));
                if matches!(self, Float(_)) {
                    ordering
                } else {
                    ordering.reverse()
                }
            }
            (Float(a), Float(b)) => a.0.total_cmp(&b.0),
            // In time zone UTC a timestamp and a timestamptz with the same digits are the
            // same instant.
            (TimestampTz(a) | Timestamp(a), TimestampTz(b) | Timestamp(b)) => a.cmp(b),
            (Interval(a), Interval(b)) => a.span().cmp(&b.span()),
            (Uuid(a), Uuid(b)) => a.cmp(b),
            // Element by element (NULL elements equal to each other and after the rest),
            // then the longer one after.
            (Array(a), Array(b)) => a.iter().cmp(b.iter()),
            (a, b) => match (a.as_decimal(), b.as_decimal()) {
                (Some(x), Some(y)) => x.cmp_value(y),
                _ => a.rank().cmp(&b.rank()),
            },
        }
    }
}

impl Value {
    fn rank(&self) -> u8 {
        match self {
            Value::Null => 5,
            Value::Int(_) | Value::Numeric(_) | Value::Float(_) => 0,
            Value::Text(_) => 1,
            Value::Bool(_) => 2,
            Value::TimestampTz(_) | Value::Timestamp(_) => 3,
            Value::Interval(_) => 4,
            Value::Uuid(_) => 6,
            Value::Array(_) => 7,
        }
    }

    /// The value as a decimal, for numbers.
    pub fn as_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Int(v) => Some(Decimal::from_int(*v)),
            Value::Numeric(d) => Some(*d),
            _ => None,
        }
    }

    /// The value as a double, for numbers.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::Numeric(d) => Some(d.to_f64()),
            Value::Float(f) => Some(f.0),
            _ => None,
        }
    }

    /// True for `NULL`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The text form PostgreSQL sends (None for `NULL`).
    pub fn to_text(&self) -> Option<String> {
        Some(match self {
            Value::Null => return None,
            Value::Int(v) => v.to_string(),
            Value::Text(t) => t.clone(),
            Value::Bool(b) => if *b { "t" } else { "f" }.to_string(),
            Value::Numeric(d) => d.to_string(),
            Value::Float(f) => format_float(f.0),
            Value::TimestampTz(t) => datetime::timestamp_text(*t, true),
            Value::Timestamp(t) => datetime::timestamp_text(*t, false),
            Value::Interval(i) => i.to_text(),
            Value::Uuid(u) => uuid_text(*u),
            Value::Array(elements) => super::array::array_text(elements),
        })
    }

    /// The form used in `Failing row contains (...)` and `Key (...)=(...)`.
    pub fn detail_text(&self) -> String {
        self.to_text().unwrap_or_else(|| "null".to_string())
    }

    /// Converts text input to `ty` (22P02 or 22003 as PostgreSQL reports them).
    pub fn parse_input(text: &str, ty: SqlType) -> Result<Value, PgError> {
        let invalid = || PgError::invalid_input(ty, text);
        match ty {
            SqlType::Uuid => parse_uuid(text).map(Value::Uuid).ok_or_else(invalid),
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => {
                let trimmed = text.trim();
                let body = trimmed.strip_prefix(['+', '-']).unwrap_or(trimmed);
                if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(invalid());
                }
                let value: i128 = trimmed
                    .parse()
                    .map_err(|_| PgError::out_of_range_input(ty, text))?;
                let value =
                    i64::try_from(value).map_err(|_| PgError::out_of_range_input(ty, text))?;
                check_range(value, ty).map_err(|_| PgError::out_of_range_input(ty, text))
            }
            SqlType::Numeric => match Decimal::read(text) {
                Ok(decimal) => Ok(Value::Numeric(decimal)),
                Err(NumericInput::Beyond) => Err(PgError::error(
                    super::error::sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "leaselab stand-in does not support this statement: the numeric value \
                         \"{}\" (the stand-in's numeric keeps 38 digits and 60 decimals, \
                         and no NaN or infinity)",
                        text.trim()
                    ),
                )),
                Err(NumericInput::NotANumber) => Err(invalid()),
            },
            SqlType::Float8 => parse_float8(text).map(|v| Value::Float(Float(v))),
            SqlType::Bool => match text.trim().to_ascii_lowercase().as_str() {
                "t" | "true" | "y" | "yes" | "on" | "1" | "tr" | "tru" | "ye" => {
                    Ok(Value::Bool(true))
                }
                "f" | "false" | "n" | "no" | "off" | "0" | "fa" | "fal" | "fals" => {
                    Ok(Value::Bool(false))
                }
                _ => Err(invalid()),
            },
            SqlType::Text | SqlType::Unknown => Ok(Value::Text(text.to_string())),
            SqlType::RegType => regtype_input(text).map(Value::Text),
            SqlType::Xid => Ok(Value::Int(i64::from(xid_input(text)))),
            SqlType::TimestampTz => datetime::parse_timestamp(text, true).map(Value::TimestampTz),
            SqlType::Timestamp => datetime::parse_timestamp(text, false).map(Value::Timestamp),
            SqlType::Interval => Interval::parse(text).map(Value::Interval),
            // void_in accepts anything and makes nothing of it.
            SqlType::Void => Ok(Value::Text(String::new())),
            SqlType::Array(element) => super::array::parse_array(text, *element),
        }
    }
}

/// `xid` input as PostgreSQL 15's `xidin` reads it: C's `strtoul(text, NULL, 0)` cut to 32
/// bits (white space and a sign first, `0x` hexadecimal, a leading `0` octal, reading stops
/// at the first other character, so `'x'::xid` is 0; past 64 bits the largest value).
fn xid_input(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() && matches!(bytes[at], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        at += 1;
    }
    let negative = bytes.get(at) == Some(&b'-');
    if matches!(bytes.get(at), Some(b'-' | b'+')) {
        at += 1;
    }
    let hex_digit = bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit);
    let radix = if bytes.get(at) == Some(&b'0')
        && matches!(bytes.get(at + 1), Some(b'x' | b'X'))
        && hex_digit
    {
        at += 2;
        16
    } else if bytes.get(at) == Some(&b'0') {
        8
    } else {
        10
    };
    let mut value: u64 = 0;
    let mut overflow = false;
    while let Some(digit) = bytes.get(at).and_then(|&b| char::from(b).to_digit(radix)) {
        match value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(next) => value = next,
            None => overflow = true,
        }
        at += 1;
    }
    let value = if overflow {
        u64::MAX
    } else if negative {
        value.wrapping_neg()
    } else {
        value
    };
    value as u32
}

/// `value` if it fits `ty` (`smallint out of range` / `integer out of range` otherwise).
pub fn check_range(value: i64, ty: SqlType) -> Result<Value, PgError> {
    if ty == SqlType::Int2 && i16::try_from(value).is_err() {
        return Err(PgError::smallint_out_of_range());
    }
    if ty == SqlType::Int4 && i32::try_from(value).is_err() {
        return Err(PgError::integer_out_of_range());
    }
    Ok(Value::Int(value))
}

/// PostgreSQL's shortest round-trip text for a double.
pub fn format_float(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let text = format!("{value}");
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-4..1e15).contains(&magnitude) {
        let formatted = format!("{value:e}");
        let (mantissa, exponent) = formatted.split_once('e').unwrap_or((&formatted, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.abs());
    }
    text
}

/// A `uuid` as PostgreSQL writes it: 32 lower-case hex digits in groups of 8-4-4-4-12.
pub fn uuid_text(uuid: u128) -> String {
    let hex = format!("{uuid:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// `uuid` input as PostgreSQL's `string_to_uuid` reads it: 32 hex digits in either case, a
/// hyphen allowed after any group of four (not at the end), the whole optionally in braces;
/// nothing else, not even white space.
pub fn parse_uuid(text: &str) -> Option<u128> {
    let bytes = text.as_bytes();
    let (mut at, braces) = match bytes.first() {
        Some(b'{') => (1, true),
        _ => (0, false),
    };
    let mut uuid: u128 = 0;
    for byte_index in 0..16 {
        let pair = bytes.get(at..at + 2)?;
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        uuid = (uuid << 8) | u128::from(high * 16 + low);
        at += 2;
        if bytes.get(at) == Some(&b'-') && byte_index % 2 == 1 && byte_index < 15 {
            at += 1;
        }
    }
    if braces {
        if bytes.get(at) != Some(&b'}') {
            return None;
        }
        at += 1;
    }
    (at == bytes.len()).then_some(uuid)
}

/// `double precision` input as PostgreSQL 15's `float8in` reads it (through C's `strtod`):
/// white space around the number, `[+-]` `inf`/`infinity`/`nan` in any case; 22P02 for
/// anything else that is not a decimal number, 22003 naming the number (without the white
/// space) when it is too large, or too small to be told from zero. Numbers below the normal
/// range but not zero (`1e-320`) are kept, as PostgreSQL keeps them.
pub fn parse_float8(text: &str) -> Result<f64, PgError> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c');
    let number = text.trim_matches(is_space);
    let invalid = || PgError::invalid_input(SqlType::Float8, text);
    let unsigned = number.strip_prefix(['+', '-']).unwrap_or(number);
    let Ok(value) = number.parse::<f64>() else {
        return Err(invalid());
    };
    if unsigned.starts_with(|c: char| c.is_ascii_alphabetic()) {
        // `inf`, `infinity`, `nan`: what they say.
        return Ok(value);
    }
    let mantissa = unsigned.split(['e', 'E']).next().unwrap_or_default();
    let underflow = value == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    if value.is_infinite() || underflow {
        return Err(PgError::error(
            super::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("\"{number}\" is out of range for type double precision"),
        ));
    }
    Ok(value)
}

/// A type name read as `regtype` reads it (`'int4'`, `'integer'`, `'double precision'`,
/// `'bigint[]'`, any case, spaces around): the canonical name, which is the value. A name of a
/// type PostgreSQL has and the stand-in does not is 0A000; any other 42704.
fn regtype_input(text: &str) -> Result<String, PgError> {
    regtype_of(text).map(|ty| ty.name().to_string())
}

/// The type a `regtype` value (or input) names.
fn regtype_of(text: &str) -> Result<SqlType, PgError> {
    let lowered = text.trim().to_ascii_lowercase();
    let words: Vec<&str> = lowered.split_ascii_whitespace().collect();
    let joined = words.join(" ");
    let (base, array) = match joined.strip_suffix("[]") {
        Some(base) => (base.trim_end(), true),
        None => (joined.as_str(), false),
    };
    let ty = match base {
        "smallint" | "int2" => SqlType::Int2,
        "integer" | "int" | "int4" => SqlType::Int4,
        "bigint" | "int8" => SqlType::Int8,
        "text" => SqlType::Text,
        "boolean" | "bool" => SqlType::Bool,
        "numeric" | "decimal" => SqlType::Numeric,
        "double precision" | "float8" | "float" => SqlType::Float8,
        "timestamp with time zone" | "timestamptz" => SqlType::TimestampTz,
        "timestamp" | "timestamp without time zone" => SqlType::Timestamp,
        "interval" => SqlType::Interval,
        "uuid" => SqlType::Uuid,
        "void" if !array => SqlType::Void,
        "unknown" if !array => SqlType::Unknown,
        "regtype" if !array => SqlType::RegType,
        "xid" if !array => SqlType::Xid,
        "real" | "float4" | "character varying" | "varchar" | "character" | "char" | "bpchar"
        | "date" | "time" | "json" | "jsonb" | "bytea" | "name" | "oid" | "regclass" | "money"
        | "inet" | "xml" => {
            return Err(PgError::error(
                super::error::sqlstate::FEATURE_NOT_SUPPORTED,
                format!("type \"{}\" is not one this stand-in has", text.trim()),
            ))
        }
        _ => {
            return Err(PgError::error(
                "42704",
                format!("type \"{}\" does not exist", text.trim()),
            ))
        }
    };
    if array {
        ty.array_of().ok_or_else(|| {
            PgError::error("42704", format!("type \"{}\" does not exist", text.trim()))
        })
    } else {
        Ok(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_print_and_divide_as_postgres_does() {
        let d = |t: &str| Decimal::parse(t).unwrap();
        assert_eq!(d("10.50").to_string(), "10.50");
        assert_eq!(d("-2.25").to_string(), "-2.25");
        assert_eq!(d(".5").to_string(), "0.5");
        assert_eq!(d("1e3").to_string(), "1000");
        assert_eq!(d("10.50").checked_add(d("1")).unwrap().to_string(), "11.50");
        assert_eq!(d("10.50").checked_mul(d("2")).unwrap().to_string(), "21.00");
        assert_eq!(
            d("1.0").checked_div(d("3")).unwrap().to_string(),
            "0.33333333333333333333"
        );
        assert_eq!(
            d("7.5").checked_div(d("2")).unwrap().to_string(),
            "3.7500000000000000"
        );
        assert_eq!(d("2.5").to_i64(), Some(3));
        assert_eq!(d("-2.5").to_i64(), Some(-3));
        assert!(Decimal::parse("abc").is_none());
        assert!(d("1").checked_div(d("0")).is_none());
    }

    #[test]
    fn values_order_numbers_across_types_and_nulls_last() {
        let n = Value::Numeric(Decimal::parse("2.5").unwrap());
        assert!(Value::Int(2) < n && n < Value::Int(3));
        assert!(Value::Int(9) < Value::Null);
        assert_eq!(Value::parse_input("12", SqlType::Int8), Ok(Value::Int(12)));
        assert_eq!(
            Value::parse_input("abc", SqlType::Int8).unwrap_err().code,
            "22P02"
        );
        assert_eq!(
            Value::parse_input("3000000000", SqlType::Int4)
                .unwrap_err()
                .code,
            "22003"
        );
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(1e20), "1e+20");
    }

    #[test]
    fn numeric_input_says_why_it_cannot_be_read() {
        use NumericInput::{Beyond, NotANumber};
        assert_eq!(
            Decimal::read(" -1.50 "),
            Ok(Decimal {
                mantissa: -150,
                scale: 2
            })
        );
        assert_eq!(Decimal::read("2e3").map(|d| d.to_i64()), Ok(Some(2000)));
        for not_a_number in [
            "", "-", ".", "abc", "1e", "1e+", "1.2.3", "-nan", "1x", "e5",
        ] {
            assert_eq!(
                Decimal::read(not_a_number),
                Err(NotANumber),
                "{not_a_number:?}"
            );
        }
        let digits_40 = "1".repeat(40);
        for beyond in [
            "NaN",
            "nan",
            "-Infinity",
            "+inf",
            "1e400",
            "1e-61",
            "1e99999999999",
            digits_40.as_str(),
        ] {
            assert_eq!(Decimal::read(beyond), Err(Beyond), "{beyond:?}");
        }
    }

    #[test]
    fn uuids_are_read_and_written_as_postgresql_reads_and_writes_them() {
        let canonical = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        let value = parse_uuid(canonical).expect("canonical form");
        assert_eq!(uuid_text(value), canonical);
        for accepted in [
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
        ] {
            assert_eq!(parse_uuid(accepted), Some(value), "{accepted}");
        }
        for refused in [
            "",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a-0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11é",
        ] {
            assert_eq!(parse_uuid(refused), None, "{refused:?}");
        }
        assert_eq!(uuid_text(0), "00000000-0000-0000-0000-000000000000");
    }
}
