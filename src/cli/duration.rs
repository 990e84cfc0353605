//! Durations on the command line: `1ms`, `250ms`, `2s`, `1.5s`, `1m`, `1h`.

/// Parses a duration into whole milliseconds. A bare number is refused, so that `--ttl 100`
/// cannot silently mean 100 seconds or 100 milliseconds.
pub fn parse_ms(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, scale_ms) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1_000.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60_000.0)
    } else if let Some(n) = text.strip_suffix('h') {
        (n, 3_600_000.0)
    } else if text.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "'{text}' has no unit; write it as e.g. 1ms, 250ms, 2s or 1m"
        ));
    } else {
        return Err(format!(
            "'{text}': the units are ms, s, m and h; write it as e.g. 1ms, 250ms, 2s, 1m or 1h"
        ));
    };
    let value: f64 = number.trim().parse().map_err(|_| {
        format!("'{text}' is not a duration; write it as e.g. 1ms, 250ms, 2s or 1m")
    })?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("'{text}' must be a non-negative duration"));
    }
    let ms = value * scale_ms;
    if ms.fract() != 0.0 {
        return Err(format!("'{text}' is not a whole number of milliseconds"));
    }
    if ms > crate::trace::load::MAX_DURATION_MS as f64 {
        return Err(format!("'{text}' is too long (at most about 31 years)"));
    }
    Ok(ms as u64)
}

/// Formats milliseconds the way people write them: `250ms`, `2s`, `1.52s`.
pub fn format_ms(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        let text = format!("{:.3}", ms as f64 / 1_000.0);
        format!("{}s", text.trim_end_matches('0'))
    }
}

/// The most one-way latency `--latency-us` takes, µs (10 s): beyond it a simulated message
/// would outlast every client deadline.
pub const MAX_LATENCY_US: u64 = 10_000_000;

/// Parses a one-way network latency in microseconds: `N` (every message) or `MIN-MAX` (drawn
/// per message), e.g. `50` or `0-100`.
pub fn parse_latency_us(text: &str) -> Result<(u64, u64), String> {
    let text = text.trim();
    let number = |part: &str| -> Result<u64, String> {
        let value: u64 = part.trim().parse().map_err(|_| {
            format!("'{text}' is not a latency in µs; write it as e.g. 50 or 0-100")
        })?;
        if value > MAX_LATENCY_US {
            return Err(format!(
                "'{text}': at most {MAX_LATENCY_US} µs of one-way latency"
            ));
        }
        Ok(value)
    };
    let (min, max) = match text.split_once('-') {
        Some((min, max)) => (number(min)?, number(max)?),
        None => {
            let value = number(text)?;
            (value, value)
        }
    };
    if min > max {
        return Err(format!(
            "'{text}': the shortest latency is longer than the longest; write MIN-MAX, e.g. 0-100"
        ));
    }
    Ok((min, max))
}

/// Parses a named timing model (`--timing`): `localhost` or `tick-1ms`
/// ([`Timing::NAMES`](leaselab_model::scenario::Timing::NAMES)), with the network latency that
/// goes with it.
pub fn parse_timing(text: &str) -> Result<leaselab_model::scenario::TimingPreset, String> {
    use leaselab_model::scenario::Timing;
    Timing::named(text.trim()).ok_or_else(|| {
        format!(
            "'{text}' is not a timing model; use one of: {}",
            Timing::NAMES.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_ms("1ms"), Ok(1));
        assert_eq!(parse_ms("250ms"), Ok(250));
        assert_eq!(parse_ms("2s"), Ok(2_000));
        assert_eq!(parse_ms("1.5s"), Ok(1_500));
        assert_eq!(parse_ms("1m"), Ok(60_000));
        assert_eq!(parse_ms("0ms"), Ok(0));
    }

    #[test]
    fn refuses_bare_numbers_and_fractions_of_a_millisecond() {
        assert!(parse_ms("100").unwrap_err().contains("no unit"));
        assert!(parse_ms("0.5ms").unwrap_err().contains("whole number"));
        assert!(parse_ms("-1ms").is_err());
        assert!(parse_ms("fast").is_err());
    }

    #[test]
    fn parses_latencies_as_one_value_or_a_range() {
        assert_eq!(parse_latency_us("50"), Ok((50, 50)));
        assert_eq!(parse_latency_us("0-100"), Ok((0, 100)));
        assert!(parse_latency_us("100-0").unwrap_err().contains("shortest"));
        assert!(parse_latency_us("50us")
            .unwrap_err()
            .contains("not a latency"));
        assert!(parse_latency_us("-5").is_err());
        assert!(parse_latency_us("20000000")
            .unwrap_err()
            .contains("at most"));
    }

    #[test]
    fn formats_round_trip() {
        for ms in [0, 1, 999, 1_000, 1_520, 2_000, 60_000] {
            assert_eq!(parse_ms(&format_ms(ms)), Ok(ms));
        }
        assert_eq!(format_ms(1_520), "1.52s");
    }
}
