//! `Retry-After` parsing (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, relative to a given
//! wall-clock `now`. Garbage yields `None`, never a panic.

use std::time::{Duration, SystemTime};

/// The longest Retry-After honoured (anything longer is clamped): one day.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Parses a `Retry-After` value. Seconds must be a non-negative integer; a date in the past gives
/// zero. The result is clamped to [`MAX_RETRY_AFTER`].
pub fn parse_retry_after(raw: &str, now: SystemTime) -> Option<Duration> {
    let v = raw.trim();
    if v.is_empty() {
        return None;
    }
    let d = if v.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for u64 still means "very long".
        Duration::from_secs(v.parse::<u64>().unwrap_or(u64::MAX))
    } else {
        let at = httpdate::parse_http_date(v).ok()?;
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(d.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    #[test]
    fn seconds_and_http_dates() {
        assert_eq!(
            parse_retry_after("120", now()),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now()), Some(Duration::ZERO));
        let later = httpdate::fmt_http_date(now() + Duration::from_secs(90));
        assert_eq!(
            parse_retry_after(&later, now()),
            Some(Duration::from_secs(90))
        );
        let earlier = httpdate::fmt_http_date(now() - Duration::from_secs(90));
        assert_eq!(parse_retry_after(&earlier, now()), Some(Duration::ZERO));
    }

    #[test]
    fn garbage_is_none_and_huge_is_clamped() {
        for g in [
            "",
            "soon",
            "-5",
            "1.5",
            "12s",
            "Mon, 99 Foo 2026",
            "\u{1F600}",
        ] {
            assert_eq!(parse_retry_after(g, now()), None, "{g:?}");
        }
        assert_eq!(
            parse_retry_after("999999999999999999999999", now()),
            Some(MAX_RETRY_AFTER)
        );
    }
}
