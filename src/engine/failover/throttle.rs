//! The wait a throttled response announced, whichever header said it (docs/engine.md, "What a
//! 429 says"): providers throttle with more than `Retry-After`. Pure; garbage yields nothing,
//! never a panic.
//!
//! Precedence, the most specific first — milliseconds before seconds, a wait before a reset:
//! 1. `retry-after-ms` (OpenAI, Portkey: milliseconds, a fraction allowed);
//! 2. `x-ms-retry-after-ms` (Azure OpenAI: milliseconds);
//! 3. `Retry-After` (whole seconds or an HTTP date, [`super::retry_after`]);
//! 4. `x-ratelimit-reset-requests` (OpenAI: when the request budget resets, a Go-style duration
//!    like `1s`, `6m0s`, `1h2m3.5s`, `250ms`).
//!
//! A header whose value does not parse, or is absurd (negative, not finite, longer than
//! [`MAX_RETRY_AFTER`]), is ignored and the next one read; `Retry-After` keeps its own rule (a
//! longer value is clamped to [`MAX_RETRY_AFTER`]). The order is the one the mock upstream
//! records a response's wait by (docs/faults.md, "Extra headers"), so what the engine honours is
//! what `[[expect.cooldown]] until_retry_after` judges. The header names and the parsers of
//! their values are the wire's (`crate::wire::throttle`), shared with the mock upstream.

use std::time::{Duration, SystemTime};

use super::retry_after::{MAX_RETRY_AFTER, parse_retry_after};
use crate::wire::throttle::{RESET_REQUESTS, RETRY_AFTER_MS, X_MS_RETRY_AFTER_MS};

/// The millisecond headers, in their order.
const MS_HEADERS: [&str; 2] = [RETRY_AFTER_MS, X_MS_RETRY_AFTER_MS];

/// Whether a response header named `name` (any case) is one [`announced_wait`] reads besides
/// `Retry-After`: what a transport keeps of a failed response's headers.
pub fn is_throttle_header(name: &str) -> bool {
    MS_HEADERS
        .iter()
        .chain(std::iter::once(&RESET_REQUESTS))
        .any(|h| h.eq_ignore_ascii_case(name))
}

/// The wait a non-2xx attempt's response announced, whichever header said it; `now` resolves
/// an HTTP-date Retry-After. Nothing for any other result.
pub fn of_result(
    result: &crate::engine::outcome::AttemptResult,
    now: SystemTime,
) -> Option<Duration> {
    match result {
        crate::engine::outcome::AttemptResult::Http {
            retry_after,
            throttle,
            ..
        } => announced_wait(retry_after.as_deref(), throttle, now),
        _ => None,
    }
}

/// The wait announced by a response's `Retry-After` (`retry_after`, raw) and its other throttle
/// headers (`other`: name and raw value, any case), by the precedence above; `now` resolves an
/// HTTP date. A millisecond or reset value is parsed by `wire::throttle` and honoured when at
/// most [`MAX_RETRY_AFTER`], else the next header is read.
pub fn announced_wait(
    retry_after: Option<&str>,
    other: &[(String, String)],
    now: SystemTime,
) -> Option<Duration> {
    use crate::wire::throttle::{parse_go_duration, parse_millis};
    let header = |name: &str| {
        other
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    MS_HEADERS
        .iter()
        .find_map(|h| header(h).and_then(parse_millis).and_then(sane))
        .or_else(|| retry_after.and_then(|v| parse_retry_after(v, now)))
        .or_else(|| {
            header(RESET_REQUESTS)
                .and_then(parse_go_duration)
                .and_then(sane)
        })
        .filter(|d| *d <= MAX_RETRY_AFTER)
}

/// `d` when it is a wait worth honouring: at most [`MAX_RETRY_AFTER`].
fn sane(d: Duration) -> Option<Duration> {
    (d <= MAX_RETRY_AFTER).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn wait(ra: Option<&str>, other: &[(&str, &str)]) -> Option<Duration> {
        announced_wait(ra, &h(other), now())
    }

    #[test]
    fn each_header_alone_is_read_in_its_own_unit() {
        let ms = Duration::from_millis;
        assert_eq!(wait(None, &[("retry-after-ms", "9000")]), Some(ms(9_000)));
        assert_eq!(
            wait(None, &[("Retry-After-Ms", " 1500.5 ")]),
            Some(Duration::from_micros(1_500_500))
        );
        assert_eq!(wait(None, &[("x-ms-retry-after-ms", "250")]), Some(ms(250)));
        assert_eq!(wait(Some("7"), &[]), Some(ms(7_000)));
        for (v, want) in [
            ("1s", 1_000),
            ("6m0s", 360_000),
            ("1h2m3.5s", 3_723_500),
            ("250ms", 250),
            ("0s", 0),
            ("1m30s", 90_000),
        ] {
            assert_eq!(
                wait(None, &[("x-ratelimit-reset-requests", v)]),
                Some(ms(want)),
                "{v}"
            );
        }
        assert_eq!(
            wait(None, &[("x-ratelimit-reset-tokens", "5s")]),
            None,
            "not read"
        );
        assert_eq!(wait(None, &[]), None);
    }

    #[test]
    fn the_most_specific_header_wins_and_a_bad_one_gives_way_to_the_next() {
        let ms = Duration::from_millis;
        let all = [
            ("x-ratelimit-reset-requests", "6m0s"),
            ("x-ms-retry-after-ms", "3000"),
            ("retry-after-ms", "2500"),
        ];
        assert_eq!(wait(Some("10"), &all), Some(ms(2_500)));
        assert_eq!(wait(Some("10"), &all[..2]), Some(ms(3_000)));
        assert_eq!(wait(Some("10"), &all[..1]), Some(ms(10_000)));
        assert_eq!(wait(None, &all[..1]), Some(ms(360_000)));
        // Garbage and absurd values are ignored: the next header speaks.
        for bad in [
            "soon",
            "-5",
            "1e3",
            "",
            "NaN",
            "inf",
            "99999999999999999999999",
            "1.2.3",
        ] {
            assert_eq!(
                wait(Some("4"), &[("retry-after-ms", bad)]),
                Some(ms(4_000)),
                "{bad:?}"
            );
        }
        assert_eq!(
            wait(
                None,
                &[
                    ("retry-after-ms", "86400001"),
                    ("x-ratelimit-reset-requests", "2s")
                ]
            ),
            Some(ms(2_000)),
            "longer than a day is absurd"
        );
        for bad in ["6x", "s", "1", "m1s", "-1s", "25h0m0.001s", "1..5s", "ms"] {
            assert_eq!(
                wait(None, &[("x-ratelimit-reset-requests", bad)]),
                None,
                "{bad:?}"
            );
        }
        // Retry-After keeps its own rule: clamped to a day.
        assert_eq!(wait(Some("999999999"), &[]), Some(MAX_RETRY_AFTER));
        assert!(is_throttle_header("X-MS-Retry-After-Ms") && !is_throttle_header("retry-after"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// No input panics, and whatever is read is a wait of at most a day.
        #[test]
        fn no_header_value_panics_or_reads_past_a_day(
            ra in proptest::option::of(".{0,24}"),
            ms_value in ".{0,24}",
            go in "[0-9.hms]{0,16}|.{0,16}",
            names in 0usize..3,
        ) {
            let name = ["retry-after-ms", "x-ms-retry-after-ms", "X-RateLimit-Reset-Requests"][names];
            let other = vec![(name.to_string(), ms_value.clone()), (RESET_REQUESTS.to_string(), go.clone())];
            if let Some(d) = announced_wait(ra.as_deref(), &other, now()) {
                prop_assert!(d <= MAX_RETRY_AFTER);
            }
        }
    }
}
