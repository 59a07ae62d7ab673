//! `kind = "rate_limit"`: 429 with a `Retry-After` header in seconds or as an HTTP date.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault};

/// How `Retry-After` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryAfterFormat {
    /// Delta seconds (`Retry-After: 120`), rounded up.
    #[default]
    Seconds,
    /// An IMF-fixdate (`Retry-After: Sun, 29 Nov 2026 19:02:00 GMT`).
    HttpDate,
}

/// Attributes of a `rate_limit` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitFault {
    /// How long the client should wait (divided by the speed factor).
    #[serde(with = "humantime_serde")]
    pub retry_after: Duration,
    /// `seconds` (default) or `http-date`.
    #[serde(default)]
    pub retry_after_format: RetryAfterFormat,
}

impl Fault for RateLimitFault {
    fn name(&self) -> &'static str {
        "rate_limit"
    }

    fn action(&self, ctx: &mut ActionCtx<'_>) -> Action {
        let wait = ctx.scale(self.retry_after);
        let value = match self.retry_after_format {
            RetryAfterFormat::Seconds => retry_after_seconds(wait).to_string(),
            RetryAfterFormat::HttpDate => httpdate::fmt_http_date(retry_at(ctx.wall_now, wait)),
        };
        Action::Respond {
            status: 429,
            headers: vec![("retry-after", value)],
            body: Bytes::from_static(
                b"{\"error\":{\"message\":\"rate limited\",\"type\":\"rate_limit_exceeded\"}}",
            ),
        }
    }
}

/// The instant a client may retry at, as an HTTP date can say it: `now + wait` rounded up to
/// the next whole second. HTTP dates have one-second resolution and a client subtracts its own
/// clock's `now` (with its fraction), so rounding the wait instead of the instant would let the
/// client compute up to a second less than configured (OpenClaw computed 1.18–1.88 s for 2 s).
/// A wait past the last HTTP date (the end of year 9999) saturates there.
fn retry_at(now: SystemTime, wait: Duration) -> SystemTime {
    let secs = match now.checked_add(wait) {
        None => LAST_HTTP_DATE_SECS,
        Some(at) => match at.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0)),
            Err(_) => 0,
        },
    };
    SystemTime::UNIX_EPOCH + Duration::from_secs(secs.min(LAST_HTTP_DATE_SECS))
}

/// 9999-12-31T23:59:59Z, the last instant an IMF-fixdate can name.
const LAST_HTTP_DATE_SECS: u64 = 253_402_300_799;

/// Whole seconds, rounded up (a zero wait stays 0).
fn retry_after_seconds(d: Duration) -> u64 {
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::util::speed::{Speed, sp};

    /// The wait an action's `Retry-After` header tells the client, in scenario ms: its delta
    /// seconds, or its HTTP date less `wall_now` (the request's wall time; a date already past is
    /// 0), × `speed` (the harness divided the configured wait by it, so this is the wait the
    /// scenario's time says). `None` when the action sends no such header, or one that is neither.
    /// With a fault's `headers` the record reads [`crate::upstream::faults::announced_wait`] instead.
    fn retry_after_ms(action: &Action, wall_now: SystemTime, speed: Speed) -> Option<u64> {
        crate::upstream::faults::announced_wait(action, &[], wall_now, speed)
    }

    fn header(f: &RateLimitFault, speed: Speed, now: SystemTime) -> String {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut ctx = ActionCtx {
            speed,
            wall_now: now,
            rng: &mut rng,
        };
        match f.action(&mut ctx) {
            Action::Respond {
                status: 429,
                headers,
                ..
            } => headers[0].1.clone(),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn seconds_are_scaled_and_rounded_up() {
        let f = RateLimitFault {
            retry_after: Duration::from_secs(120),
            retry_after_format: RetryAfterFormat::Seconds,
        };
        assert_eq!(header(&f, sp(1.0), UNIX_EPOCH), "120");
        assert_eq!(header(&f, sp(10.0), UNIX_EPOCH), "12");
        assert_eq!(header(&f, sp(7.0), UNIX_EPOCH), "18"); // 17.14 s → 18
    }

    #[test]
    fn http_date_is_now_plus_wait() {
        let f = RateLimitFault {
            retry_after: Duration::from_secs(90),
            retry_after_format: RetryAfterFormat::HttpDate,
        };
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let v = header(&f, sp(1.0), now);
        let parsed = httpdate::parse_http_date(&v).unwrap();
        assert_eq!(parsed, now + Duration::from_secs(90));
    }

    /// Found by `tests/props/main.rs` (acting out any fault that parses): `retry_after = "10000years"`
    /// as an HTTP date panicked inside httpdate (years past 9999), killing the connection's task.
    #[test]
    fn http_date_past_year_9999_is_the_latest_date_not_a_panic() {
        let f = RateLimitFault {
            // ~35 000 years (what `retry_after = "35000years"` used to be accepted as).
            retry_after: Duration::from_secs(1 << 40),
            retry_after_format: RetryAfterFormat::HttpDate,
        };
        assert_eq!(header(&f, sp(1.0), UNIX_EPOCH), "Fri, 31 Dec 9999 23:59:59 GMT");
        let secs = RateLimitFault {
            retry_after_format: RetryAfterFormat::Seconds,
            ..f
        };
        assert_eq!(header(&secs, sp(1.0), UNIX_EPOCH), (1u64 << 40).to_string());
    }

    #[test]
    fn http_date_rounds_the_instant_up_so_the_wait_is_never_shorter() {
        let f = RateLimitFault {
            retry_after: Duration::from_secs(2),
            retry_after_format: RetryAfterFormat::HttpDate,
        };
        let base = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        for ms in [1, 180, 500, 880, 999] {
            let now = base + Duration::from_millis(ms);
            let at = httpdate::parse_http_date(&header(&f, sp(1.0), now)).unwrap();
            // What a client computes from its own clock: never below the configured 2 s.
            let wait = at.duration_since(now).unwrap();
            assert!(wait >= Duration::from_secs(2), "{ms} ms: {wait:?}");
            assert!(wait < Duration::from_secs(3), "{ms} ms: {wait:?}");
            assert_eq!(at, base + Duration::from_secs(3), "{ms} ms");
        }
        // A sped-up wait of 0.25 s is still at least 0.25 s away.
        let now = base + Duration::from_millis(900);
        let at = httpdate::parse_http_date(&header(&f, sp(8.0), now)).unwrap();
        assert!(at.duration_since(now).unwrap() >= Duration::from_millis(250));
        assert_eq!(at, base + Duration::from_secs(2));
    }

    /// The record keeps the wait the header said, in scenario time: at ×4 a 10 s Retry-After
    /// goes out as `3` (2.5 s rounded up) and reads back as 12 s of scenario time; an HTTP date
    /// reads as the date less the request's wall time; a response without the header has none.
    #[test]
    fn the_recorded_wait_is_the_header_in_scenario_time() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000) + Duration::from_millis(400);
        let act = |f: &RateLimitFault, speed: Speed| {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let mut ctx = ActionCtx {
                speed,
                wall_now: now,
                rng: &mut rng,
            };
            f.action(&mut ctx)
        };
        let secs = RateLimitFault {
            retry_after: Duration::from_secs(10),
            retry_after_format: RetryAfterFormat::Seconds,
        };
        assert_eq!(retry_after_ms(&act(&secs, sp(1.0)), now, sp(1.0)), Some(10_000));
        assert_eq!(retry_after_ms(&act(&secs, sp(4.0)), now, sp(4.0)), Some(12_000));
        assert_eq!(retry_after_ms(&act(&secs, sp(2.0)), now, sp(2.0)), Some(10_000));
        let date = RateLimitFault {
            retry_after: Duration::from_secs(2),
            retry_after_format: RetryAfterFormat::HttpDate,
        };
        // now + 2 s rounded up to the whole second: 2.6 s of wall time.
        assert_eq!(retry_after_ms(&act(&date, sp(1.0)), now, sp(1.0)), Some(2_600));
        assert_eq!(retry_after_ms(&Action::Reset, now, sp(1.0)), None);
        let plain = Action::Respond {
            status: 503,
            headers: vec![],
            body: Bytes::new(),
        };
        assert_eq!(retry_after_ms(&plain, now, sp(1.0)), None);
    }

    #[test]
    fn an_enormous_wait_does_not_panic() {
        let f = RateLimitFault {
            retry_after: Duration::MAX,
            retry_after_format: RetryAfterFormat::HttpDate,
        };
        let v = header(&f, sp(1.0), UNIX_EPOCH + Duration::from_millis(1_500));
        assert!(httpdate::parse_http_date(&v).is_ok(), "{v}");
    }
}
