//! The throttle headers providers announce a wait with, written once: their names, the form of
//! each one's value, and the parsers of those forms — read by the engine (the wait a 429 asked
//! for, `engine::failover::throttle`) and by the mock upstream (a fault's `headers`, checked,
//! scaled with `--speed` and read back, `upstream::faults::headers`).
//!
//! - `retry-after-ms` (OpenAI, Portkey) and `x-ms-retry-after-ms` (Azure OpenAI): milliseconds;
//! - `retry-after`: whole seconds (or an HTTP date, which only a reader resolves);
//! - `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` (OpenAI): a Go-style duration
//!   like `1s`, `6m0s`, `1h2m3.5s`, `250ms`.
//!
//! Pure; garbage yields nothing, never a panic. No cap here: a caller bounds what it honours.

use std::time::Duration;

/// `retry-after-ms`: milliseconds.
pub const RETRY_AFTER_MS: &str = "retry-after-ms";
/// `x-ms-retry-after-ms` (Azure OpenAI): milliseconds.
pub const X_MS_RETRY_AFTER_MS: &str = "x-ms-retry-after-ms";
/// `retry-after`: whole seconds or an HTTP date.
const RETRY_AFTER: &str = "retry-after";
/// `x-ratelimit-reset-requests`: when the request budget resets, a Go-style duration.
pub const RESET_REQUESTS: &str = "x-ratelimit-reset-requests";
/// `x-ratelimit-reset-tokens`: when the token budget resets, a Go-style duration.
const RESET_TOKENS: &str = "x-ratelimit-reset-tokens";

/// The form a duration header's value is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Whole seconds (`Retry-After`'s delta form).
    Seconds,
    /// Milliseconds.
    Millis,
    /// A Go-style duration as OpenAI writes its reset headers: `1s`, `6m0s`, `1h2m3.5s`, `20ms`.
    Go,
}

/// Every duration header with its unit, the most specific first — milliseconds before seconds,
/// a wait before a reset (a client reading `retry-after-ms` first, as the OpenAI SDKs do).
pub const DURATION_HEADERS: [(&str, Unit); 5] = [
    (RETRY_AFTER_MS, Unit::Millis),
    (X_MS_RETRY_AFTER_MS, Unit::Millis),
    (RETRY_AFTER, Unit::Seconds),
    (RESET_REQUESTS, Unit::Go),
    (RESET_TOKENS, Unit::Go),
];

/// The unit of the duration header named `name` (lower case, as written), if it is one.
pub fn unit_of(name: &str) -> Option<Unit> {
    DURATION_HEADERS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, u)| *u)
}

/// A value in its header's unit as a fault writes it (trimmed): a whole number of seconds or
/// milliseconds, or a Go-style duration.
pub fn parse(unit: Unit, value: &str) -> Option<Duration> {
    let v = value.trim();
    match unit {
        Unit::Seconds => v.parse::<u64>().ok().map(Duration::from_secs),
        Unit::Millis => v.parse::<u64>().ok().map(Duration::from_millis),
        Unit::Go => parse_go_duration(v),
    }
}

/// A millisecond count as a provider may send it: a non-negative decimal (`9000`, `1500.5`).
pub fn parse_millis(raw: &str) -> Option<Duration> {
    let v = raw.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let ms: f64 = v.parse().ok()?;
    Duration::try_from_secs_f64(ms / 1000.0).ok()
}

/// A Go-style duration as OpenAI writes its reset headers: one or more `NUMBER UNIT`, the
/// units `h`, `m`, `s`, `ms` (a number may have a fraction): `6m0s`, `1h2m3.5s`, `250ms`, `0s`.
pub fn parse_go_duration(raw: &str) -> Option<Duration> {
    let s = raw.trim();
    if s.is_empty() {
        return None;
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(num_len);
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        if num.is_empty() {
            return None;
        }
        let n: f64 = num.parse().ok()?;
        let secs = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total = total.checked_add(Duration::try_from_secs_f64(n * secs).ok()?)?;
        rest = next;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn go_durations_read_as_openai_writes_them() {
        assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(
            parse_go_duration(" 1h2m3.5s "),
            Some(Duration::from_millis(3_723_500))
        );
        assert_eq!(parse_go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(parse_go_duration("0s"), Some(Duration::ZERO));
        for bad in ["", "5", "1x", "s", "1.2.3s", "-1s", "m1s", "1..5s", "ms"] {
            assert_eq!(parse_go_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn milliseconds_take_a_fraction_and_whole_units_do_not() {
        assert_eq!(
            parse_millis(" 1500.5 "),
            Some(Duration::from_micros(1_500_500))
        );
        for bad in ["soon", "-5", "1e3", "", "NaN", "inf", "1.2.3"] {
            assert_eq!(parse_millis(bad), None, "{bad:?}");
        }
        assert_eq!(parse(Unit::Millis, "1.5"), None);
        assert_eq!(parse(Unit::Millis, " 250 "), Some(Duration::from_millis(250)));
        assert_eq!(parse(Unit::Seconds, "7"), Some(Duration::from_secs(7)));
        assert_eq!(parse(Unit::Go, "1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(unit_of(RESET_TOKENS), Some(Unit::Go));
        assert_eq!(unit_of("Retry-After"), None, "names are lower case");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// No value panics a parser.
        #[test]
        fn no_value_panics(v in "[0-9.hms]{0,16}|.{0,24}") {
            let _ = parse_go_duration(&v);
            let _ = parse_millis(&v);
            for (_, unit) in DURATION_HEADERS {
                let _ = parse(unit, &v);
            }
        }
    }
}
