//! Points in time as users write them: `30m`, `1h`, `3d`, `2w` (ago),
//! `2026-11-01` (midnight UTC) or a full RFC 3339 timestamp.

use jiff::{Timestamp, civil::Date, tz::TimeZone};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "`{0}` is not a time: use a duration ago (30m, 1h, 3d, 2w), a date (2026-11-01) or a timestamp (2026-11-01T09:00:00Z)"
)]
pub struct BadTime(pub String);

/// Resolves `spec` relative to `now`.
pub fn parse(spec: &str, now: Timestamp) -> Result<Timestamp, BadTime> {
    let spec = spec.trim();
    let bad = || BadTime(spec.to_owned());
    if let Some(seconds) = duration_seconds(spec) {
        return now
            .checked_sub(jiff::SignedDuration::from_secs(seconds))
            .map_err(|_| bad());
    }
    if let Ok(timestamp) = spec.parse::<Timestamp>() {
        return Ok(timestamp);
    }
    if let Ok(date) = spec.parse::<Date>() {
        return date
            .to_zoned(TimeZone::UTC)
            .map(|zoned| zoned.timestamp())
            .map_err(|_| bad());
    }
    Err(bad())
}

fn duration_seconds(spec: &str) -> Option<i64> {
    let split = spec.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = spec.split_at(split);
    let number: i64 = number.parse().ok()?;
    let unit_seconds = match unit {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return None,
    };
    number.checked_mul(unit_seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let now: Timestamp = "2026-11-21T12:00:00Z".parse().unwrap();
        let at = |s| parse(s, now).unwrap().to_string();
        assert_eq!(at("1h"), "2026-11-21T11:00:00Z");
        assert_eq!(at("3d"), "2026-11-18T12:00:00Z");
        assert_eq!(at("2w"), "2026-11-07T12:00:00Z");
        assert_eq!(at("2026-11-01"), "2026-11-01T00:00:00Z");
        assert_eq!(at("2026-11-01T09:30:00Z"), "2026-11-01T09:30:00Z");
        assert_eq!(parse("yesterday", now), Err(BadTime("yesterday".into())));
        assert!(parse("5y", now).is_err());
    }
}
