//! `kind = "rate_limit"`: 429 with a `Retry-After` header in seconds or as an HTTP date.

use std::time::Duration;

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
            RetryAfterFormat::HttpDate => {
                // HTTP dates have whole-second resolution: round the wait up so a client never
                // retries earlier than asked.
                // `FaultSpec::validate` caps the wait at a year; past year 9999 (which httpdate
                // cannot write) or an overflowing clock, the latest date it can write.
                let latest = std::time::UNIX_EPOCH + Duration::from_secs(LATEST_HTTP_DATE);
                let at = ctx
                    .wall_now
                    .checked_add(Duration::from_secs(retry_after_seconds(wait)))
                    .map_or(latest, |at| at.min(latest));
                httpdate::fmt_http_date(at)
            }
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

/// 9999-12-31T23:59:59Z, the last instant an HTTP date can name.
const LATEST_HTTP_DATE: u64 = 253_402_300_799;

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

    fn header(f: &RateLimitFault, speed: f64, now: SystemTime) -> String {
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
        assert_eq!(header(&f, 1.0, UNIX_EPOCH), "120");
        assert_eq!(header(&f, 10.0, UNIX_EPOCH), "12");
        assert_eq!(header(&f, 7.0, UNIX_EPOCH), "18"); // 17.14 s → 18
    }

    #[test]
    fn http_date_is_now_plus_wait() {
        let f = RateLimitFault {
            retry_after: Duration::from_secs(90),
            retry_after_format: RetryAfterFormat::HttpDate,
        };
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let v = header(&f, 1.0, now);
        let parsed = httpdate::parse_http_date(&v).unwrap();
        assert_eq!(parsed, now + Duration::from_secs(90));
    }

    /// Found by `tests/props.rs` (acting out any fault that parses): `retry_after = "10000years"`
    /// as an HTTP date panicked inside httpdate (years past 9999), killing the connection's task.
    #[test]
    fn http_date_past_year_9999_is_the_latest_date_not_a_panic() {
        let f = RateLimitFault {
            // ~35 000 years (what `retry_after = "35000years"` used to be accepted as).
            retry_after: Duration::from_secs(1 << 40),
            retry_after_format: RetryAfterFormat::HttpDate,
        };
        assert_eq!(header(&f, 1.0, UNIX_EPOCH), "Fri, 31 Dec 9999 23:59:59 GMT");
        let secs = RateLimitFault {
            retry_after_format: RetryAfterFormat::Seconds,
            ..f
        };
        assert_eq!(header(&secs, 1.0, UNIX_EPOCH), (1u64 << 40).to_string());
    }
}
