//! UTC timestamps (ground layer, shared): "UTC-now" for the collaboration engine's writes
//! (`docs/collab-protocol.md#conventions`), ISO-8601 parsing for its validator's `at` checks
//! (`docs/collab-protocol.md#validation`, step 7) and for the publish times `update` reads from
//! npm, `PyPI` and GitHub. Hand-written to avoid a date crate for a few small conversions.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time truncated to whole seconds, `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    format_utc(now_secs())
}

/// The clock in whole seconds since the Unix epoch (0 before it).
pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Seconds since the Unix epoch of an ISO-8601 date-time with a zone (fractions dropped
/// toward the past), as [`parse_iso_utc_nanos`] reads it.
pub fn parse_iso_utc_seconds(text: &str) -> Option<i64> {
    i64::try_from(parse_iso_utc_nanos(text)?.div_euclid(1_000_000_000)).ok()
}

/// Parses an ISO-8601 date-time that carries a zone (`Z` or `±HH:MM[:SS]`,
/// also `±HHMM`), returning nanoseconds since the epoch in UTC. Naive times
/// and anything else unparseable give `None`, like Python's
/// `datetime.fromisoformat` plus the "must have a zone" rule.
pub fn parse_iso_utc_nanos(text: &str) -> Option<i128> {
    let b = text.as_bytes();
    if b.len() < 16 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' {
        return None;
    }
    let (year, month, day) = (digits(b, 0..4)?, digits(b, 5..7)?, digits(b, 8..10)?);
    // Python accepts any single character as the date/time separator.
    if !b[10].is_ascii() {
        return None;
    }
    let (hour, minute) = (digits(b, 11..13)?, digits(b, 14..16)?);
    let (second, nanos, pos) = seconds_and_fraction(text, 16)?;
    let offset_secs = zone_offset(&text[pos..])?;
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
        || year < 1
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    Some(i128::from(secs) * 1_000_000_000 + i128::from(nanos))
}

/// The decimal number in `b[range]`, all ASCII digits.
fn digits(b: &[u8], range: std::ops::Range<usize>) -> Option<i64> {
    let part = b.get(range)?;
    if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(part.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
}

/// The optional `:SS[.fff…]` after the minutes at `pos`: seconds, nanoseconds (digits past
/// the ninth are dropped) and where the zone starts.
fn seconds_and_fraction(text: &str, mut pos: usize) -> Option<(i64, i64, usize)> {
    let b = text.as_bytes();
    if b.get(pos) != Some(&b':') {
        return Some((0, 0, pos));
    }
    let second = digits(b, pos + 1..pos + 3)?;
    pos += 3;
    let mut nanos = 0;
    if matches!(b.get(pos), Some(b'.' | b',')) {
        let start = pos + 1;
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end == start {
            return None;
        }
        let kept = end.min(start + 9);
        let scale = 10i64.pow(u32::try_from(9 - (kept - start)).ok()?);
        nanos = digits(b, start..kept)? * scale;
        pos = end;
    }
    Some((second, nanos, pos))
}

/// The zone designator's offset east of UTC in seconds: `Z`, `±HH:MM[:SS[.f]]` or `±HHMM`.
fn zone_offset(zone: &str) -> Option<i64> {
    if matches!(zone, "Z" | "z") {
        return Some(0);
    }
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = &zone[1..];
    let parts: Vec<&str> = if body.contains(':') {
        body.split(':').collect()
    } else if body.len() == 4 && body.is_ascii() {
        vec![&body[..2], &body[2..]]
    } else {
        return None;
    };
    let field = |s: &str| -> Option<i64> {
        (s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let h = field(parts.first()?)?;
    let m = field(parts.get(1)?)?;
    let s = match parts.get(2) {
        Some(p) => field(p.split('.').next()?)?,
        None => 0,
    };
    if parts.len() > 3 || h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + s))
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil-calendar
/// algorithms, as is [`civil_from_days`]).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_round_trip() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(1_796_003_047), "2026-11-30T01:44:07Z");
        let t = parse_iso_utc_nanos("2026-11-30T01:44:07Z").unwrap();
        assert_eq!(t, 1_796_003_047_000_000_000);
        assert_eq!(parse_iso_utc_nanos("2026-11-30T06:44:07+05:00"), Some(t));
        assert_eq!(
            parse_iso_utc_nanos("2026-11-30T01:44:07.5Z"),
            Some(t + 500_000_000)
        );
    }

    #[test]
    fn rejects_naive_and_garbage() {
        assert_eq!(parse_iso_utc_nanos("2026-11-30T01:44:07"), None);
        assert_eq!(parse_iso_utc_nanos("yesterday"), None);
        assert_eq!(parse_iso_utc_nanos("2026-02-30T01:44:07Z"), None);
        assert_eq!(parse_iso_utc_nanos("2026-11-30T01:44:07é"), None);
    }
}
