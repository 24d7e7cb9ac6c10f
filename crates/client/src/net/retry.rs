//! When to try again: exponential backoff with jitter, and `Retry-After`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Delay before retry number `attempt` (0-based): `base * 2^attempt`, with "equal jitter"
/// (a random point in its upper half) so that clients started together do not retry in step.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let full = base.saturating_mul(1 << attempt.min(16));
    let half = full / 2;
    half + half.mul_f64(fastrand::f64())
}

/// Whether a status is worth retrying: rate limited or a server error.
pub(crate) fn retryable_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// The delay a `Retry-After` header asks for: delta-seconds or an IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), measured from `now`. Unparseable values give `None`.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = UNIX_EPOCH + Duration::from_secs(parse_http_date(value)?);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Seconds since the epoch of an IMF-fixdate.
fn parse_http_date(text: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = MONTHS.iter().position(|m| m == month)? as u64 + 1;
    let (day, year): (u64, u64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || year < 1970 || *h > 23 || *m > 59 || *s > 60 {
        return None;
    }
    let days = acp_registry_core::time::days_from_civil(
        i64::try_from(year).ok()?,
        i64::try_from(month).ok()?,
        i64::try_from(day).ok()?,
    );
    Some(u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_stays_in_the_upper_half() {
        let base = Duration::from_millis(100);
        for attempt in 0..4 {
            let d = backoff(base, attempt);
            let full = base * (1 << attempt);
            assert!(
                d >= full / 2 && d <= full,
                "{d:?} outside [{:?}, {full:?}]",
                full / 2
            );
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(retry_after("7", now), Some(Duration::from_secs(7)));
        // 784111777 is Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example).
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(
                "Sun, 06 Nov 1994 08:49:37 GMT",
                now + Duration::from_secs(60)
            ),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon", now), None);
    }
}
