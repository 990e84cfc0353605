//! Time as PostgreSQL 15 keeps it: `timestamp with time zone` and `timestamp` as microseconds
//! since 2000-01-01 00:00 UTC (`i64::MAX`/`i64::MIN` for `infinity`/`-infinity`), `interval`
//! as months, days and microseconds. Their text forms are those of `DateStyle = ISO` and
//! `IntervalStyle = postgres` in time zone UTC (the stand-in's only zone); their input is
//! the ISO 8601 form (`2026-12-05 21:25:13.5+01`) and the postgres interval units
//! (`5 seconds`, `1 day 02:00:00`, `-3 mins ago`); their arithmetic follows `timestamp.c`.

use super::error::PgError;

/// Microseconds in a second.
pub const USECS_PER_SEC: i64 = 1_000_000;
/// Microseconds in a day.
pub const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;
/// Seconds from the Unix epoch (1970) to PostgreSQL's (2000-01-01).
pub const PG_EPOCH_UNIX_SECS: i64 = 946_684_800;
/// `infinity`.
pub const INFINITY: i64 = i64::MAX;
/// `-infinity`.
pub const NEG_INFINITY: i64 = i64::MIN;
/// Days from 1970-01-01 to 2000-01-01.
const PG_EPOCH_DAYS: i64 = 10_957;
/// The earliest timestamp the stand-in keeps: 0001-01-01 00:00 (PostgreSQL goes back to
/// 4714 BC).
const MIN_TIMESTAMP: i64 = -63_082_281_600 * USECS_PER_SEC;
/// The first timestamp past PostgreSQL's range: 294277-01-01 00:00.
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
/// `DAYS_PER_MONTH` of PostgreSQL's interval arithmetic.
const DAYS_PER_MONTH: i64 = 30;

/// An `interval`: months, days and microseconds, each kept apart as PostgreSQL keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Months (a year is 12).
    pub months: i32,
    /// Days.
    pub days: i32,
    /// Microseconds.
    pub micros: i64,
}

impl Interval {
    /// The value intervals are compared by: a month is 30 days, a day 24 hours
    /// (`interval_cmp_value`), so `1 day` equals `24 hours`.
    pub fn span(self) -> i128 {
        (i128::from(self.months) * 30 + i128::from(self.days)) * i128::from(USECS_PER_DAY)
            + i128::from(self.micros)
    }

    /// `-interval` (22008 for the most negative months or days).
    pub fn negated(self) -> Result<Interval, PgError> {
        Ok(Interval {
            months: self
                .months
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
            days: self.days.checked_neg().ok_or_else(interval_out_of_range)?,
            micros: self
                .micros
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
        })
    }

    /// `self + other`, part by part.
    pub fn checked_add(self, other: Interval) -> Result<Interval, PgError> {
        Ok(Interval {
            months: self
                .months
                .checked_add(other.months)
                .ok_or_else(interval_out_of_range)?,
            days: self
                .days
                .checked_add(other.days)
                .ok_or_else(interval_out_of_range)?,
            micros: self
                .micros
                .checked_add(other.micros)
                .ok_or_else(interval_out_of_range)?,
        })
    }

    /// `self - other`, part by part.
    pub fn checked_sub(self, other: Interval) -> Result<Interval, PgError> {
        self.checked_add(other.negated()?)
    }

    /// `interval * factor` (`interval_mul`): fractions of a month go to days (30 a month),
    /// fractions of a day to microseconds.
    pub fn checked_mul(self, factor: f64) -> Result<Interval, PgError> {
        self.scaled(|part| part * factor)
    }

    /// `interval / divisor` (`interval_div`), 22012 for zero.
    pub fn checked_div(self, divisor: f64) -> Result<Interval, PgError> {
        if divisor == 0.0 {
            return Err(PgError::error("22012", "division by zero"));
        }
        self.scaled(|part| part / divisor)
    }

    /// [`Interval::mul`] and [`Interval::div`]: `scale` applied to each part, its fractions
    /// carried down as PostgreSQL 15 carries them.
    fn scaled(self, scale: impl Fn(f64) -> f64) -> Result<Interval, PgError> {
        let months = scale(f64::from(self.months));
        let days = scale(f64::from(self.days));
        if months.is_nan() || !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&months) {
            return Err(interval_out_of_range());
        }
        if days.is_nan() || !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&days) {
            return Err(interval_out_of_range());
        }
        let (months_whole, mut days_whole) = (months as i32, days as i32);
        let month_remainder_days = ts_round((months - f64::from(months_whole)) * 30.0);
        let mut sec_remainder = ts_round(
            (days - f64::from(days_whole) + month_remainder_days
                - f64::from(month_remainder_days as i32))
                * 86_400.0,
        );
        if sec_remainder.abs() >= 86_400.0 {
            let whole_days = (sec_remainder / 86_400.0) as i32;
            days_whole = days_whole
                .checked_add(whole_days)
                .ok_or_else(interval_out_of_range)?;
            sec_remainder -= f64::from(whole_days) * 86_400.0;
        }
        days_whole = days_whole
            .checked_add(month_remainder_days as i32)
            .ok_or_else(interval_out_of_range)?;
        let micros =
            (scale(self.micros as f64) + sec_remainder * USECS_PER_SEC as f64).round_ties_even();
        if micros.is_nan()
            || !(-9.223_372_036_854_775e18..9.223_372_036_854_775e18).contains(&micros)
        {
            return Err(interval_out_of_range());
        }
        Ok(Interval {
            months: months_whole,
            days: days_whole,
            micros: micros as i64,
        })
    }

    /// The `IntervalStyle = postgres` text: `1 year 2 mons -3 days +04:05:06.5`.
    pub fn to_text(self) -> String {
        let mut out = String::new();
        let (mut is_zero, mut is_before) = (true, false);
        let years = i64::from(self.months / 12);
        let months = i64::from(self.months % 12);
        for (value, unit) in [
            (years, "year"),
            (months, "mon"),
            (i64::from(self.days), "day"),
        ] {
            if value == 0 {
                continue;
            }
            let space = if is_zero { "" } else { " " };
            let plus = if is_before && value > 0 { "+" } else { "" };
            let plural = if value != 1 { "s" } else { "" };
            out.push_str(&format!("{space}{plus}{value} {unit}{plural}"));
            is_before = value < 0;
            is_zero = false;
        }
        let micros = self.micros;
        if is_zero || micros != 0 {
            let space = if is_zero { "" } else { " " };
            let sign = if micros < 0 {
                "-"
            } else if is_before {
                "+"
            } else {
                ""
            };
            let magnitude = micros.unsigned_abs();
            let hours = magnitude / 3_600_000_000;
            let minutes = magnitude / 60_000_000 % 60;
            let seconds = magnitude / 1_000_000 % 60;
            let fraction = magnitude % 1_000_000;
            out.push_str(&format!(
                "{space}{sign}{hours:02}:{minutes:02}:{seconds:02}{}",
                fraction_text(fraction)
            ));
        }
        out
    }

    /// Reads the postgres interval syntax: `[@] quantity unit [quantity unit ...] [ago]`,
    /// a bare number of seconds, and `[-]hh:mm[:ss[.frac]]`; units from microseconds to
    /// millennia, singular, plural or abbreviated, a quantity with a fraction carried down
    /// (`1.5 days` is 1 day 12:00:00). 22007 for anything else, 22008 for a field out of
    /// range; the ISO 8601 (`P1DT2H`) and SQL standard (`1-2`) forms are 0A000.
    pub fn parse(text: &str) -> Result<Interval, PgError> {
        let invalid = || {
            PgError::error(
                "22007",
                format!("invalid input syntax for type interval: \"{text}\""),
            )
        };
        let out_of_range = || {
            PgError::error(
                "22015",
                format!("interval field value out of range: \"{text}\""),
            )
        };
        let trimmed = text.trim();
        if trimmed.starts_with(['P', 'p']) && trimmed.len() > 1 {
            return Err(PgError::unsupported_statement(&format!(
                "interval input in ISO 8601 form: \"{text}\""
            )));
        }
        let tokens = interval_tokens(trimmed).ok_or_else(invalid)?;
        let mut parts = IntervalParts::default();
        let mut seen_any = false;
        let mut ago = false;
        let mut index = 0;
        while index < tokens.len() {
            match &tokens[index] {
                Token::At if index == 0 => {}
                Token::Word(word) if word == "ago" && index + 1 == tokens.len() && seen_any => {
                    ago = true;
                }
                Token::Clock(clock) => {
                    parts.take(CLOCK_TIME).ok_or_else(invalid)?;
                    parts.add_clock(clock).ok_or_else(out_of_range)?;
                    seen_any = true;
                }
                Token::Number(number) => {
                    let unit = match tokens.get(index + 1) {
                        Some(Token::Word(word)) if word != "ago" => {
                            index += 1;
                            Unit::parse(word).ok_or_else(invalid)?
                        }
                        _ => Unit::Second,
                    };
                    let fraction = number
                        .split_once('.')
                        .is_some_and(|(_, digits)| digits.bytes().any(|b| b != b'0'));
                    parts.take(unit.bits(fraction)).ok_or_else(invalid)?;
                    parts.add(number, unit).ok_or_else(out_of_range)?;
                    seen_any = true;
                }
                Token::Word(word) if word.contains('-') => {
                    return Err(PgError::unsupported_statement(&format!(
                        "interval input in the SQL standard form: \"{text}\""
                    )))
                }
                _ => return Err(invalid()),
            }
            index += 1;
        }
        if !seen_any {
            return Err(invalid());
        }
        let mut interval = parts.interval().ok_or_else(out_of_range)?;
        if ago {
            interval = interval.negated().map_err(|_| out_of_range())?;
        }
        Ok(interval)
    }
}

/// `TSROUND`: a double rounded to microseconds.
fn ts_round(value: f64) -> f64 {
    (value * 1e6).round_ties_even() / 1e6
}

/// 22008 `interval out of range`.
pub fn interval_out_of_range() -> PgError {
    PgError::error("22008", "interval out of range")
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)` as PostgreSQL 15's
/// computes it: 22008 for an infinite or NaN `secs`; the seconds rounded to microseconds
/// half to even (`rint`); every other overflow wraps, as its C arithmetic does on x86-64 (a
/// number of microseconds past 64 bits becomes the most negative one, as the conversion
/// instruction makes it).
pub fn make_interval(fields: [i32; 6], secs: f64) -> Result<Interval, PgError> {
    let [years, months, weeks, days, hours, mins] = fields;
    if !secs.is_finite() {
        return Err(interval_out_of_range());
    }
    let micros = (secs * USECS_PER_SEC as f64).round_ties_even();
    // `(int64) micros`: x86-64's conversion answers the most negative number out of range.
    let limit = 2f64.powi(63);
    let micros = if (-limit..limit).contains(&micros) {
        micros as i64
    } else {
        i64::MIN
    };
    Ok(Interval {
        months: years.wrapping_mul(12).wrapping_add(months),
        days: weeks.wrapping_mul(7).wrapping_add(days),
        micros: i64::from(hours)
            .wrapping_mul(3_600 * USECS_PER_SEC)
            .wrapping_add(i64::from(mins).wrapping_mul(60 * USECS_PER_SEC))
            .wrapping_add(micros),
    })
}

/// 22008 `timestamp out of range`.
pub fn timestamp_out_of_range() -> PgError {
    PgError::error("22008", "timestamp out of range")
}

/// `.5`, `.123456`: the microseconds' digits without trailing zeros (nothing for none).
fn fraction_text(micros: u64) -> String {
    if micros == 0 {
        return String::new();
    }
    let digits = format!("{micros:06}");
    format!(".{}", digits.trim_end_matches('0'))
}

/// A unit of the postgres interval syntax.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Unit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
}

/// The bits of the seconds and their fractions (`DTK_ALL_SECS_M`).
const ALL_SECONDS: u16 = 0b111;
/// The bits a clock time takes (`DTK_TIME_M`): hours, minutes and all of the seconds.
const CLOCK_TIME: u16 = ALL_SECONDS | 1 << 3 | 1 << 4;

impl Unit {
    /// The unit's bit among the fields given (a fraction of a second takes all the second's
    /// bits).
    fn bits(self, fraction: bool) -> u16 {
        match self {
            Unit::Second if fraction => ALL_SECONDS,
            unit => 1 << unit as u16,
        }
    }

    fn parse(word: &str) -> Option<Unit> {
        Some(match word {
            "microsecond" | "microseconds" | "microsecon" | "us" | "usec" | "usecs"
            | "useconds" => Unit::Microsecond,
            "millisecond" | "milliseconds" | "millisecon" | "ms" | "msec" | "msecs"
            | "mseconds" => Unit::Millisecond,
            "second" | "seconds" | "s" | "sec" | "secs" => Unit::Second,
            "minute" | "minutes" | "m" | "min" | "mins" => Unit::Minute,
            "hour" | "hours" | "h" | "hr" | "hrs" => Unit::Hour,
            "day" | "days" | "d" => Unit::Day,
            "week" | "weeks" | "w" => Unit::Week,
            "month" | "months" | "mon" | "mons" => Unit::Month,
            "year" | "years" | "y" | "yr" | "yrs" => Unit::Year,
            "decade" | "decades" | "dec" | "decs" => Unit::Decade,
            "century" | "centuries" | "c" | "cent" => Unit::Century,
            "millennium" | "millennia" | "mil" | "mils" => Unit::Millennium,
            _ => return None,
        })
    }
}

/// A piece of interval input.
#[derive(Debug)]
enum Token {
    /// `@` (allowed first only).
    At,
    /// A signed number, its text (`-1.5`).
    Number(String),
    /// `[-]hh:mm[:ss[.frac]]`.
    Clock(String),
    /// A unit or `ago`, lowercased.
    Word(String),
}

/// `text` cut into tokens: numbers, clock times, words (a number directly followed by its
/// unit, `5s`, is two tokens). None for a character no token takes.
fn interval_tokens(text: &str) -> Option<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_whitespace() {
            at += 1;
        } else if byte == b'@' {
            tokens.push(Token::At);
            at += 1;
        } else if byte.is_ascii_digit() || byte == b'.' || byte == b'+' || byte == b'-' {
            let start = at;
            at += 1;
            while at < bytes.len() && (bytes[at].is_ascii_digit() || b".:".contains(&bytes[at])) {
                at += 1;
            }
            let piece = &text[start..at];
            if at < bytes.len() && bytes[at] == b'-' {
                // `1-2`: the SQL standard's year-month form.
                while at < bytes.len() && !bytes[at].is_ascii_whitespace() {
                    at += 1;
                }
                tokens.push(Token::Word(text[start..at].to_string()));
            } else if piece.contains(':') {
                tokens.push(Token::Clock(piece.to_string()));
            } else {
                tokens.push(Token::Number(piece.to_string()));
            }
        } else if byte.is_ascii_alphabetic() {
            let start = at;
            while at < bytes.len() && bytes[at].is_ascii_alphabetic() {
                at += 1;
            }
            tokens.push(Token::Word(text[start..at].to_ascii_lowercase()));
        } else {
            return None;
        }
    }
    Some(tokens)
}

/// The fields an interval's input adds up (`struct pg_itm` and `fsec`), before they make an
/// [`Interval`].
#[derive(Default)]
struct IntervalParts {
    /// The units given so far, one bit each ([`Unit::bits`]): each may come once.
    seen: u16,
    years: i64,
    months: i64,
    days: i64,
    hours: i64,
    minutes: i64,
    seconds: i64,
    micros: i64,
}

impl IntervalParts {
    /// `number unit` added (`DecodeInterval`): the whole part to the unit's field, the
    /// fraction carried down (`AdjustFractSeconds`, `AdjustFractDays`). None on overflow.
    fn add(&mut self, number: &str, unit: Unit) -> Option<()> {
        let negative = number.starts_with('-');
        let body = number.trim_start_matches(['+', '-']);
        let (whole_text, fraction_text) = body.split_once('.').unwrap_or((body, ""));
        if whole_text.is_empty() && fraction_text.is_empty() {
            return None;
        }
        if !whole_text.bytes().all(|b| b.is_ascii_digit())
            || !fraction_text.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let whole: i64 = if whole_text.is_empty() {
            0
        } else {
            whole_text.parse::<i64>().ok()?
        };
        let fraction: f64 = if fraction_text.is_empty() {
            0.0
        } else {
            format!("0.{fraction_text}").parse().ok()?
        };
        let (whole, fraction) = if negative {
            (-whole, -fraction)
        } else {
            (whole, fraction)
        };
        match unit {
            // Whole microseconds and milliseconds in integers: a quantity may take all of an
            // interval's 64 bits of microseconds.
            Unit::Microsecond => {
                let micros = whole.checked_add(fraction.round_ties_even() as i64)?;
                self.micros = self.micros.checked_add(micros)?;
            }
            Unit::Millisecond => {
                let micros = whole
                    .checked_mul(1000)?
                    .checked_add((fraction * 1000.0).round_ties_even() as i64)?;
                self.micros = self.micros.checked_add(micros)?;
            }
            Unit::Second => {
                self.seconds = self.seconds.checked_add(whole)?;
                self.micros = self
                    .micros
                    .checked_add((fraction * 1e6).round_ties_even() as i64)?;
            }
            Unit::Minute => {
                self.minutes = self.minutes.checked_add(whole)?;
                self.fract_seconds(fraction, 60.0)?;
            }
            Unit::Hour => {
                self.hours = self.hours.checked_add(whole)?;
                self.fract_seconds(fraction, 3600.0)?;
            }
            Unit::Day => {
                self.days = self.days.checked_add(whole)?;
                self.fract_seconds(fraction, 86_400.0)?;
            }
            Unit::Week => {
                self.days = self.days.checked_add(whole.checked_mul(7)?)?;
                self.fract_days(fraction, 7.0)?;
            }
            Unit::Month => {
                self.months = self.months.checked_add(whole)?;
                self.fract_days(fraction, DAYS_PER_MONTH as f64)?;
            }
            Unit::Year | Unit::Decade | Unit::Century | Unit::Millennium => {
                let years = match unit {
                    Unit::Year => 1,
                    Unit::Decade => 10,
                    Unit::Century => 100,
                    _ => 1000,
                };
                self.years = self.years.checked_add(whole.checked_mul(years)?)?;
                self.months = self
                    .months
                    .checked_add((fraction * 12.0 * years as f64).round_ties_even() as i64)?;
            }
        }
        Some(())
    }

    /// Marks the fields of `bits` as given; None when one was given before (PostgreSQL
    /// takes each unit once).
    fn take(&mut self, bits: u16) -> Option<()> {
        if self.seen & bits != 0 {
            return None;
        }
        self.seen |= bits;
        Some(())
    }

    /// `AdjustFractSeconds`: `fraction × scale` seconds, whole seconds to seconds, the rest
    /// to microseconds.
    fn fract_seconds(&mut self, fraction: f64, scale: f64) -> Option<()> {
        if fraction == 0.0 {
            return Some(());
        }
        let scaled = fraction * scale;
        let seconds = scaled as i64;
        self.seconds = self.seconds.checked_add(seconds)?;
        self.micros = self
            .micros
            .checked_add(((scaled - seconds as f64) * 1e6).round_ties_even() as i64)?;
        Some(())
    }

    /// `AdjustFractDays`: `fraction × scale` days, whole days to days, the rest to seconds.
    fn fract_days(&mut self, fraction: f64, scale: f64) -> Option<()> {
        if fraction == 0.0 {
            return Some(());
        }
        let scaled = fraction * scale;
        let days = scaled as i64;
        self.days = self.days.checked_add(days)?;
        self.fract_seconds(scaled - days as f64, 86_400.0)
    }

    /// `[-]hh:mm[:ss[.frac]]` added (a leading sign applies to every field).
    fn add_clock(&mut self, clock: &str) -> Option<()> {
        let negative = clock.starts_with('-');
        let body = clock.trim_start_matches(['+', '-']);
        let fields: Vec<&str> = body.split(':').collect();
        if !(2..=3).contains(&fields.len()) {
            return None;
        }
        let number = |text: &str| -> Option<i64> {
            (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                .then(|| text.parse().ok())
                .flatten()
        };
        let hours = number(fields[0])?;
        let minutes = number(fields[1])?;
        let (seconds, micros) = match fields.get(2) {
            None => (0, 0),
            Some(field) => {
                let (whole, fraction) = field.split_once('.').unwrap_or((field, ""));
                let seconds = number(whole)?;
                let micros = if fraction.is_empty() {
                    0
                } else {
                    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    let value: f64 = format!("0.{fraction}").parse().ok()?;
                    (value * 1e6).round_ties_even() as i64
                };
                (seconds, micros)
            }
        };
        if minutes > 59 || seconds > 60 {
            return None;
        }
        let sign = if negative { -1 } else { 1 };
        self.hours = self.hours.checked_add(sign * hours)?;
        self.minutes = self.minutes.checked_add(sign * minutes)?;
        self.seconds = self.seconds.checked_add(sign * seconds)?;
        self.micros = self.micros.checked_add(sign * micros)?;
        Some(())
    }

    /// The interval the fields make (`itm2interval`); None when a part overflows.
    fn interval(&self) -> Option<Interval> {
        let months = self.years.checked_mul(12)?.checked_add(self.months)?;
        let micros = self
            .hours
            .checked_mul(60)?
            .checked_add(self.minutes)?
            .checked_mul(60)?
            .checked_add(self.seconds)?
            .checked_mul(USECS_PER_SEC)?
            .checked_add(self.micros)?;
        Some(Interval {
            months: i32::try_from(months).ok()?,
            days: i32::try_from(self.days).ok()?,
            micros,
        })
    }
}

/// Days from 1970-01-01 of a proleptic Gregorian date.
pub(super) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A finite timestamp's date and time of day: (year, month, day, microseconds of the day).
pub(super) fn split(timestamp: i64) -> (i64, i64, i64, i64) {
    let days = timestamp.div_euclid(USECS_PER_DAY);
    let (year, month, day) = civil_from_days(days + PG_EPOCH_DAYS);
    (year, month, day, timestamp.rem_euclid(USECS_PER_DAY))
}

/// The timestamp of a date and a time of day (22008 when outside the range kept).
fn join(year: i64, month: i64, day: i64, time_of_day: i64) -> Result<i64, PgError> {
    let days = days_from_civil(year, month, day) - PG_EPOCH_DAYS;
    let timestamp = i128::from(days) * i128::from(USECS_PER_DAY) + i128::from(time_of_day);
    in_range(timestamp)
}

fn in_range(timestamp: i128) -> Result<i64, PgError> {
    if timestamp < i128::from(MIN_TIMESTAMP) || timestamp >= i128::from(END_TIMESTAMP) {
        return Err(timestamp_out_of_range());
    }
    Ok(timestamp as i64)
}

/// `timestamp` if PostgreSQL (and the stand-in, from year 1 on) keeps it, `infinity` and
/// `-infinity` included; 22008 otherwise (a binary parameter out of range).
pub fn checked(timestamp: i64) -> Result<i64, PgError> {
    if is_infinite(timestamp) {
        return Ok(timestamp);
    }
    in_range(i128::from(timestamp))
}

/// True for `infinity` and `-infinity`.
pub fn is_infinite(timestamp: i64) -> bool {
    timestamp == INFINITY || timestamp == NEG_INFINITY
}

/// A timestamp's ISO text: `2026-12-05 21:25:13.5`, with `+00` for `timestamp with time
/// zone` (shown in UTC).
pub fn timestamp_text(timestamp: i64, with_zone: bool) -> String {
    match timestamp {
        INFINITY => return "infinity".to_string(),
        NEG_INFINITY => return "-infinity".to_string(),
        _ => {}
    }
    let (year, month, day, time) = split(timestamp);
    let seconds = time / USECS_PER_SEC;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}{}{}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        fraction_text((time % USECS_PER_SEC) as u64),
        if with_zone { "+00" } else { "" }
    )
}

/// Reads a timestamp: `YYYY-MM-DD[( |T)hh:mm[:ss[.frac]]][zone]`, the zone `Z`, `UTC`,
/// `GMT` or `±hh[[:]mm]` (ignored for `timestamp` without time zone, as PostgreSQL ignores
/// it), or `infinity`, `-infinity`, `epoch`. 22007 for other text, 22008 for a field out of
/// range; `now`, `today` and the forms with month names are 0A000.
pub fn parse_timestamp(text: &str, with_zone: bool) -> Result<i64, PgError> {
    let type_name = if with_zone {
        "timestamp with time zone"
    } else {
        "timestamp without time zone"
    };
    let invalid = || {
        PgError::error(
            "22007",
            format!("invalid input syntax for type {type_name}: \"{text}\""),
        )
    };
    let field_out_of_range = || {
        PgError::error(
            "22008",
            format!("date/time field value out of range: \"{text}\""),
        )
    };
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    match lower.as_str() {
        "infinity" | "+infinity" => return Ok(INFINITY),
        "-infinity" => return Ok(NEG_INFINITY),
        "epoch" => return Ok(-PG_EPOCH_UNIX_SECS * USECS_PER_SEC),
        _ => {}
    }
    const WORDS: [&str; 24] = [
        "now",
        "today",
        "tomorrow",
        "yesterday",
        "allballs",
        "jan",
        "feb",
        "mar",
        "apr",
        "may",
        "jun",
        "jul",
        "aug",
        "sep",
        "oct",
        "nov",
        "dec",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
    ];
    let (date, rest) = match lower.find([' ', 't']) {
        Some(at) => (&lower[..at], lower[at + 1..].trim_start()),
        None => (lower.as_str(), ""),
    };
    let date_fields: Vec<&str> = date.split('-').collect();
    let numeric = |field: &str| -> Option<i64> {
        (!field.is_empty() && field.len() <= 9 && field.bytes().all(|b| b.is_ascii_digit()))
            .then(|| field.parse().ok())
            .flatten()
    };
    let [year, month, day] = date_fields.as_slice() else {
        if WORDS.iter().any(|w| lower.contains(w)) || lower.ends_with(" bc") {
            return Err(PgError::unsupported_statement(&format!(
                "{type_name} input other than ISO 8601 dates: \"{text}\""
            )));
        }
        return Err(invalid());
    };
    let (Some(year), Some(month), Some(day)) = (numeric(year), numeric(month), numeric(day)) else {
        // Digits too many for a field are a field out of range, anything else bad syntax.
        let digits = |field: &str| !field.is_empty() && field.bytes().all(|b| b.is_ascii_digit());
        if [year, month, day].into_iter().all(|field| digits(field)) {
            return Err(field_out_of_range());
        }
        return Err(invalid());
    };
    // The time of day, then the zone.
    let zone_at = rest
        .find(|c: char| c.is_ascii_alphabetic() || c == '+' || c == '-')
        .unwrap_or(rest.len());
    let (clock, zone) = (rest[..zone_at].trim(), rest[zone_at..].trim());
    let mut time_of_day = 0i64;
    if !clock.is_empty() {
        let fields: Vec<&str> = clock.split(':').collect();
        if !(2..=3).contains(&fields.len()) {
            return Err(invalid());
        }
        let hours = numeric(fields[0]).ok_or_else(invalid)?;
        let minutes = numeric(fields[1]).ok_or_else(invalid)?;
        let (seconds, micros) = match fields.get(2) {
            None => (0, 0),
            Some(field) => {
                let (whole, fraction) = field.split_once('.').unwrap_or((field, ""));
                let seconds = numeric(whole).ok_or_else(invalid)?;
                let micros = if fraction.is_empty() {
                    0
                } else if fraction.bytes().all(|b| b.is_ascii_digit()) {
                    let value: f64 = format!("0.{fraction}").parse().map_err(|_| invalid())?;
                    (value * 1e6).round_ties_even() as i64
                } else {
                    return Err(invalid());
                };
                (seconds, micros)
            }
        };
        if hours > 24
            || minutes > 59
            || seconds > 60
            || (hours == 24 && (minutes, seconds, micros) != (0, 0, 0))
        {
            return Err(field_out_of_range());
        }
        time_of_day = ((hours * 60 + minutes) * 60 + seconds) * USECS_PER_SEC + micros;
    }
    if !(1..=12).contains(&month) {
        // The month could be a day in another `DateStyle`.
        return Err(
            field_out_of_range().with_hint("Perhaps you need a different \"datestyle\" setting.")
        );
    }
    if day < 1 || day > days_in_month(year, month) || year < 1 {
        return Err(field_out_of_range());
    }
    let offset_secs = match zone {
        "" | "z" | "utc" | "gmt" => 0,
        _ if zone.starts_with(['+', '-']) => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
            if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(invalid());
            }
            let padded = format!("{digits:0<6}");
            let (h, m, s) = (
                numeric(&padded[0..2]).ok_or_else(invalid)?,
                numeric(&padded[2..4]).ok_or_else(invalid)?,
                numeric(&padded[4..6]).ok_or_else(invalid)?,
            );
            if digits.len() % 2 == 1 && digits.len() > 2 {
                return Err(invalid());
            }
            let (h, m, s) = if digits.len() == 1 {
                (numeric(&digits).ok_or_else(invalid)?, 0, 0)
            } else {
                (h, m, s)
            };
            if h > 15 || m > 59 || s > 59 {
                return Err(PgError::error(
                    "22009",
                    format!("time zone displacement out of range: \"{text}\""),
                ));
            }
            sign * (h * 3600 + m * 60 + s)
        }
        _ => {
            return Err(PgError::unsupported_statement(&format!(
                "{type_name} input with a time zone other than UTC or an offset: \"{text}\""
            )))
        }
    };
    let out_of_range = || PgError::error("22008", format!("timestamp out of range: \"{text}\""));
    let local = join(year, month, day, time_of_day).map_err(|_| out_of_range())?;
    if !with_zone {
        return Ok(local);
    }
    in_range(i128::from(local) - i128::from(offset_secs) * i128::from(USECS_PER_SEC))
}

/// `timestamp + interval` (`timestamp_pl_interval`): months first (the day of the month
/// kept, or the month's last day), then days, then microseconds. Infinite timestamps stay.
pub fn add_interval(timestamp: i64, interval: Interval) -> Result<i64, PgError> {
    if is_infinite(timestamp) {
        return Ok(timestamp);
    }
    let mut timestamp = timestamp;
    if interval.months != 0 {
        let (year, month, day, time) = split(timestamp);
        let month_index = year * 12 + (month - 1) + i64::from(interval.months);
        let (year, month) = (month_index.div_euclid(12), month_index.rem_euclid(12) + 1);
        let day = day.min(days_in_month(year, month));
        timestamp = join(year, month, day, time)?;
    }
    let moved = i128::from(timestamp)
        + i128::from(interval.days) * i128::from(USECS_PER_DAY)
        + i128::from(interval.micros);
    in_range(moved)
}

/// `timestamp - timestamp` (`timestamp_mi`): the microseconds between them, whole days as
/// days (`justify_hours`).
pub fn difference(left: i64, right: i64) -> Result<Interval, PgError> {
    if is_infinite(left) || is_infinite(right) {
        return Err(PgError::error(
            "22008",
            "cannot subtract infinite timestamps",
        ));
    }
    let micros = left.checked_sub(right).ok_or_else(interval_out_of_range)?;
    let days = micros / USECS_PER_DAY;
    Ok(Interval {
        months: 0,
        days: i32::try_from(days).map_err(|_| interval_out_of_range())?,
        micros: micros - days * USECS_PER_DAY,
    })
}

/// `age(a, b)`: `a - b` told in years, months and days as a calendar counts them
/// (PostgreSQL 15's `timestamp_age`): each field subtracted, the order flipped when `a` is
/// the earlier, borrows carried up (a day borrowed from the months is the length of `a`'s
/// month when `a` is the earlier, of `b`'s otherwise), the sign put back.
/// Infinite timestamps are 0A000 (PostgreSQL reads them as dates some 292,000 years away).
pub fn age(a: i64, b: i64) -> Result<Interval, PgError> {
    if is_infinite(a) || is_infinite(b) {
        return Err(PgError::unsupported_statement(
            "age() of an infinite timestamp",
        ));
    }
    let fields = |t: i64| {
        let (year, month, day, time) = split(t);
        let (hour, rest) = (time / (3600 * USECS_PER_SEC), time % (3600 * USECS_PER_SEC));
        let (minute, rest) = (rest / (60 * USECS_PER_SEC), rest % (60 * USECS_PER_SEC));
        let (second, micros) = (rest / USECS_PER_SEC, rest % USECS_PER_SEC);
        [year, month, day, hour, minute, second, micros]
    };
    let (first, second) = (fields(a), fields(b));
    let earlier = a < b;
    let sign = if earlier { -1 } else { 1 };
    let mut d: [i64; 7] = std::array::from_fn(|i| sign * (first[i] - second[i]));
    let [year, month, day, hour, minute, sec, micros] = [0, 1, 2, 3, 4, 5, 6];
    // Carried up from the smallest field: (field, how many make one of the next).
    for (field, per) in [(micros, USECS_PER_SEC), (sec, 60), (minute, 60), (hour, 24)] {
        while d[field] < 0 {
            d[field] += per;
            d[field - 1] -= 1;
        }
    }
    let lender = if earlier { first } else { second };
    while d[day] < 0 {
        d[day] += days_in_month(lender[year], lender[month]);
        d[month] -= 1;
    }
    while d[month] < 0 {
        d[month] += 12;
        d[year] -= 1;
    }
    let d = d.map(|field| sign * field);
    let months = d[year]
        .checked_mul(12)
        .and_then(|m| m.checked_add(d[month]))
        .and_then(|m| i32::try_from(m).ok())
        .ok_or_else(interval_out_of_range)?;
    Ok(Interval {
        months,
        days: i32::try_from(d[day]).map_err(|_| interval_out_of_range())?,
        micros: ((d[hour] * 60 + d[minute]) * 60 + d[sec]) * USECS_PER_SEC + d[micros],
    })
}

/// `date_trunc(unit, timestamp)`: the timestamp cut down to the start of its `unit`
/// (`microseconds` to `millennium`, singular, plural or abbreviated as in an interval, and
/// `quarter`; a week starts on Monday, a century and a millennium in their year 1). None
/// for a unit it does not know. Infinite timestamps stay.
pub fn truncate(timestamp: i64, unit: &str) -> Option<Result<i64, PgError>> {
    let unit = unit.trim().to_ascii_lowercase();
    let quarter = matches!(unit.as_str(), "quarter" | "qtr");
    let unit = if quarter {
        None
    } else {
        Some(Unit::parse(&unit)?)
    };
    if is_infinite(timestamp) {
        return Some(Ok(timestamp));
    }
    let (year, month, day, time) = split(timestamp);
    let second = time - time % USECS_PER_SEC;
    let (year, month, day, time) = match unit {
        None => (year, (month - 1) / 3 * 3 + 1, 1, 0),
        Some(Unit::Microsecond) => (year, month, day, time),
        Some(Unit::Millisecond) => (year, month, day, time - time % 1000),
        Some(Unit::Second) => (year, month, day, second),
        Some(Unit::Minute) => (year, month, day, time - time % (60 * USECS_PER_SEC)),
        Some(Unit::Hour) => (year, month, day, time - time % (3600 * USECS_PER_SEC)),
        Some(Unit::Day) => (year, month, day, 0),
        Some(Unit::Week) => {
            // 2000-01-01 was a Saturday: days since a Monday.
            let days = timestamp.div_euclid(USECS_PER_DAY);
            let since_monday = (days + 5).rem_euclid(7);
            return Some(Ok((days - since_monday) * USECS_PER_DAY));
        }
        Some(Unit::Month) => (year, month, 1, 0),
        Some(Unit::Year) => (year, 1, 1, 0),
        Some(Unit::Decade) => (year - year % 10, 1, 1, 0),
        Some(Unit::Century) => ((year - 1) / 100 * 100 + 1, 1, 1, 0),
        Some(Unit::Millennium) => ((year - 1) / 1000 * 1000 + 1, 1, 1, 0),
    };
    Some(join(year, month, day, time))
}

/// The stand-in's wall clock where no driver sets one: 2024-01-01 00:00 UTC, the
/// simulation's epoch.
pub const DEFAULT_CLOCK: i64 = (1_704_067_200 - PG_EPOCH_UNIX_SECS) * USECS_PER_SEC;

/// Microseconds since the Unix epoch as a PostgreSQL timestamp.
pub fn from_unix_micros(unix_micros: i64) -> i64 {
    unix_micros - PG_EPOCH_UNIX_SECS * USECS_PER_SEC
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(text: &str) -> String {
        Interval::parse(text).unwrap().to_text()
    }

    #[test]
    fn intervals_read_and_print_as_postgres_does() {
        assert_eq!(interval("5 seconds"), "00:00:05");
        assert_eq!(interval("1.5 days"), "1 day 12:00:00");
        assert_eq!(interval("-1 day 5 seconds"), "-1 days +00:00:05");
        assert_eq!(
            interval("1 year 2 months 3 days 04:05:06.5"),
            "1 year 2 mons 3 days 04:05:06.5"
        );
        assert_eq!(interval("250ms"), "00:00:00.25");
        assert_eq!(interval("3 mins ago"), "-00:03:00");
        assert_eq!(interval("@ 1 week"), "7 days");
        assert_eq!(interval("0"), "00:00:00");
        assert_eq!(interval("1.5 months"), "1 mon 15 days");
        assert_eq!(Interval::parse("5 parsecs").unwrap_err().code, "22007");
        assert_eq!(Interval::parse("P1D").unwrap_err().code, "0A000");
    }

    #[test]
    fn timestamps_read_print_and_move_as_postgres_does() {
        let at = parse_timestamp("2026-12-05 21:25:13.5+01", true).unwrap();
        assert_eq!(timestamp_text(at, true), "2026-12-05 20:25:13.5+00");
        assert_eq!(timestamp_text(at, false), "2026-12-05 20:25:13.5");
        let jan31 = parse_timestamp("2024-01-31", true).unwrap();
        let plus_month = add_interval(jan31, Interval::parse("1 mon").unwrap()).unwrap();
        assert_eq!(timestamp_text(plus_month, true), "2024-02-29 00:00:00+00");
        let diff = difference(plus_month, jan31).unwrap();
        assert_eq!(diff.to_text(), "29 days");
        assert_eq!(
            timestamp_text(DEFAULT_CLOCK, true),
            "2024-01-01 00:00:00+00"
        );
        assert_eq!(
            parse_timestamp("2026-02-30", true).unwrap_err().code,
            "22008"
        );
        assert_eq!(parse_timestamp("garbage", true).unwrap_err().code, "22007");
        assert_eq!(
            super::super::time_part::extract(
                "epoch",
                &super::super::value::Value::TimestampTz(DEFAULT_CLOCK)
            )
            .unwrap()
            .to_text()
            .unwrap(),
            "1704067200.000000"
        );
    }

    #[test]
    fn age_borrows_the_lender_month() {
        let t = |text: &str| parse_timestamp(text, false).unwrap();
        let age_text = |a: &str, b: &str| age(t(a), t(b)).unwrap().to_text();
        assert_eq!(age_text("2024-03-01", "2024-01-31"), "1 mon 1 day");
        assert_eq!(age_text("2024-01-31", "2024-03-01"), "-1 mons -1 days");
        assert_eq!(
            age_text("2023-03-01", "2024-02-29 23:59:59.999999"),
            "-11 mons -28 days -23:59:59.999999"
        );
        assert_eq!(
            age_text("2001-04-10", "1957-06-13"),
            "43 years 9 mons 27 days"
        );
        assert_eq!(age(INFINITY, t("2024-01-01")).unwrap_err().code, "0A000");
    }

    #[test]
    fn interval_arithmetic_carries_fractions_down() {
        let day = Interval::parse("1 day").unwrap();
        assert_eq!(day.checked_mul(1.5).unwrap().to_text(), "1 day 12:00:00");
        let month = Interval::parse("1 mon").unwrap();
        assert_eq!(month.checked_div(4.0).unwrap().to_text(), "7 days 12:00:00");
        assert_eq!(day.span(), Interval::parse("24 hours").unwrap().span());
    }
}
