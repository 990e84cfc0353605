//! Durations on the command line: `1ms`, `250ms`, `2s`, `1.5s`, `1m`.

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
    } else {
        return Err(format!(
            "'{text}' has no unit; write it as e.g. 1ms, 250ms, 2s or 1m"
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
    if ms > 1e12 {
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
    fn formats_round_trip() {
        for ms in [0, 1, 999, 1_000, 1_520, 2_000, 60_000] {
            assert_eq!(parse_ms(&format_ms(ms)), Ok(ms));
        }
        assert_eq!(format_ms(1_520), "1.52s");
    }
}
