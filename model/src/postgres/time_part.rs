//! `extract(field FROM value)` and `date_part(unit, value)`: one part of a timestamp or an
//! interval, as PostgreSQL 15's `timestamp.c` computes it (`timestamp_part_common`,
//! `timestamptz_part_common`, `interval_part_common`): `extract` answers `numeric`,
//! `date_part` `double precision` by its own floating-point formulas.
//!
//! A unit's name is looked up as `datetime.c` looks it up: lowercased, first among the
//! interval units (`DecodeUnits`: `secs`, `mon`, `millisecon`, ...) and then among the special
//! words (`DecodeSpecial`: `dow`, `julian`, `epoch`, `now`, ...), each table comparing only
//! the first 10 characters (`TOKMAXLEN`), so `millisecondsxyz` reads as milliseconds.

use super::datetime::{
    days_from_civil, is_infinite, split, Interval, INFINITY, PG_EPOCH_UNIX_SECS, USECS_PER_SEC,
};
use super::error::PgError;
use super::value::{Decimal, Float, SqlType, Value};

/// Characters of a unit's name PostgreSQL compares (`TOKMAXLEN`).
const TOKEN_LENGTH: usize = 10;
/// The Julian day number of 1970-01-01.
const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;

/// A part of a time value `extract` and `date_part` read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimeUnit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Julian,
    IsoYear,
    Dow,
    IsoDow,
    Doy,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
    /// The one special word (`RESERV`) that is a part: seconds since 1970, or in all.
    Epoch,
}

/// What a unit's name is to PostgreSQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Name {
    Unit(TimeUnit),
    /// A special word that names no part (`now`, `infinity`, `today`, ...).
    OtherSpecial,
    Unknown,
}

/// The interval units (`deltatktbl`, its `UNITS` entries).
const INTERVAL_UNITS: &[(&str, TimeUnit)] = {
    use TimeUnit::*;
    &[
        ("c", Century),
        ("cent", Century),
        ("centuries", Century),
        ("century", Century),
        ("d", Day),
        ("day", Day),
        ("days", Day),
        ("dec", Decade),
        ("decade", Decade),
        ("decades", Decade),
        ("decs", Decade),
        ("h", Hour),
        ("hour", Hour),
        ("hours", Hour),
        ("hr", Hour),
        ("hrs", Hour),
        ("m", Minute),
        ("microsecon", Microseconds),
        ("mil", Millennium),
        ("millennia", Millennium),
        ("millennium", Millennium),
        ("millisecon", Milliseconds),
        ("mils", Millennium),
        ("min", Minute),
        ("mins", Minute),
        ("minute", Minute),
        ("minutes", Minute),
        ("mon", Month),
        ("mons", Month),
        ("month", Month),
        ("months", Month),
        ("ms", Milliseconds),
        ("msec", Milliseconds),
        ("msecond", Milliseconds),
        ("mseconds", Milliseconds),
        ("msecs", Milliseconds),
        ("qtr", Quarter),
        ("quarter", Quarter),
        ("s", Second),
        ("sec", Second),
        ("second", Second),
        ("seconds", Second),
        ("secs", Second),
        ("timezone", Timezone),
        ("timezone_h", TimezoneHour),
        ("timezone_m", TimezoneMinute),
        ("us", Microseconds),
        ("usec", Microseconds),
        ("usecond", Microseconds),
        ("useconds", Microseconds),
        ("usecs", Microseconds),
        ("w", Week),
        ("week", Week),
        ("weeks", Week),
        ("y", Year),
        ("year", Year),
        ("years", Year),
        ("yr", Year),
        ("yrs", Year),
    ]
};

/// The special words that name a part (`datetktbl`'s `UNITS` entries and `epoch`), after the
/// interval units.
const SPECIAL_UNITS: &[(&str, TimeUnit)] = {
    use TimeUnit::*;
    &[
        ("dow", Dow),
        ("doy", Doy),
        ("epoch", Epoch),
        ("isodow", IsoDow),
        ("isoyear", IsoYear),
        ("j", Julian),
        ("jd", Julian),
        ("julian", Julian),
        ("mm", Minute),
    ]
};

/// The special words that are no part (`datetktbl`'s other `RESERV` entries).
const OTHER_SPECIAL: &[&str] = &[
    "-infinity",
    "allballs",
    "infinity",
    "now",
    "today",
    "tomorrow",
    "yesterday",
];

/// `name` as PostgreSQL reads it: its lowercased text cut to 63 bytes as an identifier is
/// (`downcase_truncate_identifier`, for messages) and what it names.
fn read_name(name: &str) -> (String, Name) {
    let lowered = super::sequence::truncated(name.to_ascii_lowercase());
    let bytes = lowered.as_bytes();
    let key = &bytes[..bytes.len().min(TOKEN_LENGTH)];
    let find = |table: &[(&str, TimeUnit)]| {
        table
            .iter()
            .find(|(token, _)| token.as_bytes() == key)
            .map(|&(_, unit)| unit)
    };
    let named = match find(INTERVAL_UNITS).or_else(|| find(SPECIAL_UNITS)) {
        Some(unit) => Name::Unit(unit),
        None if OTHER_SPECIAL.iter().any(|word| word.as_bytes() == key) => Name::OtherSpecial,
        None => Name::Unknown,
    };
    (lowered, named)
}

fn not_recognized(lowered: &str, ty: SqlType) -> PgError {
    PgError::error(
        "22023",
        format!("unit \"{lowered}\" not recognized for type {}", ty.name()),
    )
}

fn not_supported(lowered: &str, ty: SqlType) -> PgError {
    PgError::error(
        "0A000",
        format!("unit \"{lowered}\" not supported for type {}", ty.name()),
    )
}

/// A part before it is answered in one type or the other.
enum Part {
    /// A whole number (both answers).
    Whole(i64),
    /// A count of microseconds read as `numeric` with `scale` decimals (6: seconds, 3:
    /// milliseconds), and its
    /// `double precision` as PostgreSQL computes it.
    Scaled {
        micros: i128,
        scale: u32,
        float: f64,
    },
    /// A Julian date with the fraction of its day: `day + micros / 86,400,000,000` by
    /// `numeric` division (its scale as PostgreSQL chooses it), and the `double precision`
    /// PostgreSQL computes.
    Julian { day: i64, micros: i64, float: f64 },
    /// An infinite timestamp's part: `Some(negative)` for a part that grows with time
    /// (±Infinity), `None` for the others (NULL).
    Infinite(Option<bool>),
}

/// `extract(unit FROM value)`, as `numeric`.
pub fn extract(unit: &str, value: &Value) -> Result<Value, PgError> {
    Ok(match part_of(unit, value)? {
        None => Value::Null,
        Some(Part::Whole(n)) => Value::Numeric(Decimal::from_int(n)),
        Some(Part::Scaled { micros, scale, .. }) => Value::Numeric(Decimal {
            mantissa: micros,
            scale,
        }),
        Some(Part::Infinite(None)) => Value::Null,
        Some(Part::Infinite(Some(_))) => {
            return Err(PgError::unsupported_statement(
                "extract from an infinite timestamp (PostgreSQL answers a numeric Infinity)",
            ))
        }
        Some(Part::Julian { day, micros, .. }) => {
            let fraction = Decimal::from_int(micros).checked_div(Decimal::from_int(86_400_000_000));
            let sum = fraction.and_then(|f| Decimal::from_int(day).checked_add(f));
            Value::Numeric(sum.ok_or_else(|| {
                PgError::unsupported_statement("extract(julian ...) past the stand-in's numeric")
            })?)
        }
    })
}

/// `date_part(unit, value)`, as `double precision`.
pub fn date_part(unit: &str, value: &Value) -> Result<Value, PgError> {
    let float = match part_of(unit, value)? {
        None | Some(Part::Infinite(None)) => return Ok(Value::Null),
        Some(Part::Whole(n)) => n as f64,
        Some(Part::Scaled { float, .. } | Part::Julian { float, .. }) => float,
        Some(Part::Infinite(Some(negative))) => {
            if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
    };
    Ok(Value::Float(Float(float)))
}

/// The part `unit` names of `value` (None for a value that is no time, NULL).
fn part_of(unit: &str, value: &Value) -> Result<Option<Part>, PgError> {
    let (lowered, name) = read_name(unit);
    match *value {
        Value::TimestampTz(t) => timestamp_part(&lowered, name, t, SqlType::TimestampTz).map(Some),
        Value::Timestamp(t) => timestamp_part(&lowered, name, t, SqlType::Timestamp).map(Some),
        Value::Interval(i) => interval_part(&lowered, name, i).map(Some),
        _ => Ok(None),
    }
}

/// A part of a timestamp; `ty` tells `timestamptz` (in UTC, the stand-in's only zone) from
/// `timestamp`.
fn timestamp_part(lowered: &str, name: Name, timestamp: i64, ty: SqlType) -> Result<Part, PgError> {
    use TimeUnit::*;
    let unit = match name {
        Name::Unit(unit) => unit,
        Name::OtherSpecial => return Err(not_supported(lowered, ty)),
        Name::Unknown => return Err(not_recognized(lowered, ty)),
    };
    if is_infinite(timestamp) {
        let negative = timestamp != INFINITY;
        return Ok(Part::Infinite(match unit {
            Year | Decade | Century | Millennium | Julian | IsoYear | Epoch => Some(negative),
            _ => None,
        }));
    }
    let (year, month, day, time) = split(timestamp);
    let hour = time / (3600 * USECS_PER_SEC);
    let minute = time / (60 * USECS_PER_SEC) % 60;
    let second = time / USECS_PER_SEC % 60;
    let fraction = time % USECS_PER_SEC;
    let julian_day = days_from_civil(year, month, day) + UNIX_EPOCH_JULIAN_DAY;
    if let Some(part) = seconds_part(unit, second, fraction) {
        return Ok(part);
    }
    Ok(Part::Whole(match unit {
        Microseconds | Milliseconds | Second => unreachable!("seconds_part answers these"),
        Minute => minute,
        Hour => hour,
        Day => day,
        Month => month,
        Quarter => (month - 1) / 3 + 1,
        Week => iso_week(year, month, day).0,
        // The stand-in keeps timestamps from year 1 on, so no year is BC.
        Year => year,
        Decade => year / 10,
        Century => (year + 99) / 100,
        Millennium => (year + 999) / 1000,
        Julian => {
            let seconds = (hour * 60 + minute) * 60 + second;
            let of_day = (seconds as f64 + fraction as f64 / 1_000_000.0) / 86_400.0;
            return Ok(Part::Julian {
                day: julian_day,
                micros: seconds * USECS_PER_SEC + fraction,
                float: julian_day as f64 + of_day,
            });
        }
        IsoYear => iso_week(year, month, day).1,
        Dow => weekday(julian_day),
        IsoDow => match weekday(julian_day) {
            0 => 7,
            dow => dow,
        },
        Doy => julian_day - (days_from_civil(year, 1, 1) + UNIX_EPOCH_JULIAN_DAY) + 1,
        Timezone | TimezoneHour | TimezoneMinute if ty == SqlType::TimestampTz => 0,
        Timezone | TimezoneHour | TimezoneMinute => return Err(not_supported(lowered, ty)),
        Epoch => {
            let micros = timestamp + PG_EPOCH_UNIX_SECS * USECS_PER_SEC;
            return Ok(Part::Scaled {
                micros: i128::from(micros),
                scale: 6,
                float: micros as f64 / 1_000_000.0,
            });
        }
    }))
}

/// A part of an interval (its time split with C's truncating division, as `interval2itm`).
fn interval_part(lowered: &str, name: Name, interval: Interval) -> Result<Part, PgError> {
    use TimeUnit::*;
    let ty = SqlType::Interval;
    let unit = match name {
        Name::Unit(unit) => unit,
        Name::OtherSpecial | Name::Unknown => return Err(not_recognized(lowered, ty)),
    };
    let years = i64::from(interval.months / 12);
    let months = i64::from(interval.months % 12);
    let time = interval.micros;
    let second = time / USECS_PER_SEC % 60;
    let fraction = time % USECS_PER_SEC;
    if let Some(part) = seconds_part(unit, second, fraction) {
        return Ok(part);
    }
    Ok(Part::Whole(match unit {
        Microseconds | Milliseconds | Second => unreachable!("seconds_part answers these"),
        Minute => time / (60 * USECS_PER_SEC) % 60,
        Hour => time / (3600 * USECS_PER_SEC),
        Day => i64::from(interval.days),
        Month => months,
        Quarter => months / 3 + 1,
        Year => years,
        Decade => years / 10,
        Century => years / 100,
        Millennium => years / 1000,
        Epoch => {
            // A year counts 365.25 days, a month 30 (the seconds fit in 64 bits, their
            // microseconds may not).
            let seconds =
                (years * 1_461 * 86_400) / 4 + (months * 30 + i64::from(interval.days)) * 86_400;
            let mut float = time as f64 / 1_000_000.0;
            float += 365.25 * 86_400.0 * years as f64;
            float += 30.0 * 86_400.0 * months as f64;
            float += 86_400.0 * f64::from(interval.days);
            return Ok(Part::Scaled {
                micros: i128::from(seconds) * i128::from(USECS_PER_SEC) + i128::from(time),
                scale: 6,
                float,
            });
        }
        Week | Julian | IsoYear | Dow | IsoDow | Doy | Timezone | TimezoneHour | TimezoneMinute => {
            return Err(not_supported(lowered, ty))
        }
    }))
}

/// The parts made of the seconds of the minute and their fraction, alike for timestamps and
/// intervals (None for the other units).
fn seconds_part(unit: TimeUnit, second: i64, fraction: i64) -> Option<Part> {
    let micros = i128::from(second * USECS_PER_SEC + fraction);
    Some(match unit {
        TimeUnit::Microseconds => Part::Whole(second * USECS_PER_SEC + fraction),
        TimeUnit::Milliseconds => Part::Scaled {
            micros,
            scale: 3,
            float: second as f64 * 1000.0 + fraction as f64 / 1000.0,
        },
        TimeUnit::Second => Part::Scaled {
            micros,
            scale: 6,
            float: second as f64 + fraction as f64 / 1_000_000.0,
        },
        _ => return None,
    })
}

/// The day of the week of a Julian day, 0 for Sunday (`j2day`).
fn weekday(julian_day: i64) -> i64 {
    (julian_day + 1).rem_euclid(7)
}

/// The ISO week number and ISO year of a date (`date2isoweek`, `date2isoyear`): weeks start
/// on Monday, and week 1 is the one holding 4 January.
fn iso_week(year: i64, month: i64, day: i64) -> (i64, i64) {
    let julian = |y: i64, m: i64, d: i64| days_from_civil(y, m, d) + UNIX_EPOCH_JULIAN_DAY;
    let day_number = julian(year, month, day);
    // The Monday starting week 1 of `y`.
    let week_one = |y: i64| {
        let fourth = julian(y, 1, 4);
        fourth - weekday(fourth - 1)
    };
    let mut iso_year = year;
    let mut start = week_one(year);
    if day_number < start {
        iso_year -= 1;
        start = week_one(iso_year);
    }
    let mut week = (day_number - start) / 7 + 1;
    if week >= 52 {
        let next = week_one(iso_year + 1);
        if day_number >= next {
            iso_year += 1;
            week = (day_number - next) / 7 + 1;
        }
    }
    (week, iso_year)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timestamp(text: &str) -> Value {
        Value::parse_input(text, SqlType::Timestamp).unwrap()
    }

    #[test]
    fn names_are_read_as_datetime_c_reads_them() {
        assert_eq!(read_name("SECS").1, Name::Unit(TimeUnit::Second));
        assert_eq!(
            read_name("millisecondsxyz").1,
            Name::Unit(TimeUnit::Milliseconds)
        );
        assert_eq!(read_name("mm").1, Name::Unit(TimeUnit::Minute));
        assert_eq!(read_name("dec").1, Name::Unit(TimeUnit::Decade));
        assert_eq!(read_name("now").1, Name::OtherSpecial);
        assert_eq!(read_name("jan").1, Name::Unknown);
        assert_eq!(read_name(" epoch").1, Name::Unknown);
        assert_eq!(read_name(&"x".repeat(100)).0, "x".repeat(63));
    }

    #[test]
    fn iso_weeks_cross_years() {
        // 2021-01-03 is a Sunday in week 53 of 2020; 2024-12-30 a Monday in week 1 of 2025.
        assert_eq!(iso_week(2021, 1, 3), (53, 2020));
        assert_eq!(iso_week(2024, 12, 30), (1, 2025));
        assert_eq!(iso_week(2024, 3, 1), (9, 2024));
    }

    #[test]
    fn parts_of_a_timestamp() {
        let t = timestamp("2024-03-02 10:20:30.123456");
        let numeric = |unit: &str| extract(unit, &t).unwrap().to_text().unwrap();
        let float = |unit: &str| date_part(unit, &t).unwrap().to_text().unwrap();
        assert_eq!(numeric("second"), "30.123456");
        assert_eq!(numeric("ms"), "30123.456");
        assert_eq!(numeric("doy"), "62");
        assert_eq!(numeric("dow"), "6");
        assert_eq!(float("julian"), "2460372.430904207");
        assert_eq!(float("epoch"), "1709374830.123456");
        assert_eq!(
            date_part("timezone", &t).unwrap_err().code,
            "0A000",
            "a timestamp without time zone has none"
        );
        assert_eq!(extract("foo", &t).unwrap_err().code, "22023");
    }
}
