//! `headers = { NAME = "VALUE", ... }` in a fault's envelope: extra response headers on every
//! answer the fault makes over HTTP (a `status` or `rate_limit` answer, or the 200 a stream or
//! delay fault sends), set after the kind's own (a `retry-after` here replaces `rate_limit`'s).
//!
//! The duration headers providers throttle with scale with `--speed` as `retry_after` does:
//! `retry-after` (whole seconds), `retry-after-ms` and `x-ms-retry-after-ms` (milliseconds),
//! `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` (OpenAI's `1s`, `6m0s`, `20ms`).
//! Each is checked when the fault is read; a scaled wait is rounded up in the header's unit.
//! [`announced_wait`] reads the wait a response announced back, whichever header said it. The
//! names, units and parsers are the wire's (`crate::wire::throttle`), shared with the engine.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use super::{InvalidFault, MAX_FAULT_DURATION};
use crate::util::speed::Speed;
use crate::wire::throttle::{DURATION_HEADERS, Unit, parse, unit_of};

/// A fault's extra headers, by lower-cased name.
pub type FaultHeaders = BTreeMap<String, String>;

/// Headers a fault may not set: they frame the response, which the upstream writes itself.
const FRAMING: [&str; 6] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "content-type",
    "keep-alive",
];

/// Checks every header: a valid name (not one that frames the response) and value, and a
/// duration header's value in its header's form, at most 365 days.
pub(crate) fn validate(headers: &FaultHeaders) -> Result<(), InvalidFault> {
    for (name, value) in headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() || name.is_empty() {
            return Err(InvalidFault(format!("`headers`: {name:?} is not a header name")));
        }
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(InvalidFault(format!(
                "`headers`: write header names in lower case, got {name:?}"
            )));
        }
        if FRAMING.contains(&name.as_str()) {
            return Err(InvalidFault(format!(
                "`headers`: {name:?} frames the response, which the upstream writes itself"
            )));
        }
        if http::HeaderValue::from_str(value).is_err() {
            return Err(InvalidFault(format!(
                "`headers`: the value of {name:?} is not a header value"
            )));
        }
        if let Some(unit) = unit_of(name) {
            let d = parse(unit, value).ok_or_else(|| {
                InvalidFault(format!(
                    "`headers`: {name:?} must be {}, got {value:?}",
                    match unit {
                        Unit::Seconds =>
                            "whole seconds (an HTTP date cannot scale with --speed; use \
                             `rate_limit` with `retry_after_format = \"http-date\"`)",
                        Unit::Millis => "whole milliseconds",
                        Unit::Go => "a duration like `1s`, `6m0s`, `1h2m3.5s` or `20ms`",
                    }
                ))
            })?;
            if d > MAX_FAULT_DURATION {
                return Err(InvalidFault(format!(
                    "`headers`: {name:?} must be at most 365days, got {value:?}"
                )));
            }
        }
    }
    Ok(())
}

/// The headers as sent at `speed`: duration headers divided by it (rounded up in their unit),
/// the others as written.
pub(crate) fn scaled(headers: &FaultHeaders, speed: Speed) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let value = match unit_of(name).and_then(|u| parse(u, value).map(|d| (u, d))) {
                Some((unit, d)) => format(unit, speed.scale(d)),
                None => value.clone(),
            };
            (name.clone(), value)
        })
        .collect()
}

/// The wait a response with `headers` announced, in scenario ms: the first duration header
/// present in the order `retry-after-ms`, `x-ms-retry-after-ms`, `retry-after` (seconds or an
/// HTTP date less `wall_now`), `x-ratelimit-reset-requests`, `x-ratelimit-reset-tokens`, × `speed`.
pub(crate) fn announced_wait<'a>(
    headers: impl Iterator<Item = (&'a str, &'a str)> + Clone,
    wall_now: SystemTime,
    speed: Speed,
) -> Option<u64> {
    DURATION_HEADERS.iter().find_map(|(name, unit)| {
        let value = headers
            .clone()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())?;
        let wall = match parse(*unit, value) {
            Some(d) => d,
            None if *unit == Unit::Seconds => {
                let at = httpdate::parse_http_date(value).ok()?;
                at.duration_since(wall_now).unwrap_or_default()
            }
            None => return None,
        };
        let wall_ms = u64::try_from(wall.as_millis()).unwrap_or(u64::MAX);
        Some(speed.scenario_ms_u(wall_ms))
    })
}

fn format(unit: Unit, d: Duration) -> String {
    match unit {
        Unit::Seconds => round_up(d, 1000).to_string(),
        Unit::Millis => round_up(d, 1).to_string(),
        Unit::Go => format_go(d),
    }
}

/// `d` in units of `ms` milliseconds, rounded up.
fn round_up(d: Duration, ms: u128) -> u128 {
    d.as_nanos().div_ceil(ms * 1_000_000)
}

/// `d` as OpenAI writes its reset headers: under a second in whole ms (`20ms`, rounded up),
/// else `[Hh][Mm]S[.fff]s` with the seconds to the ms rounded up (`6m0s`, `1.5s`).
fn format_go(d: Duration) -> String {
    let ms = round_up(d, 1);
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let (h, m, s_ms) = (ms / 3_600_000, (ms / 60_000) % 60, ms % 60_000);
    let secs = if s_ms % 1000 == 0 {
        format!("{}s", s_ms / 1000)
    } else {
        let frac = format!("{:03}", s_ms % 1000);
        format!("{}.{}s", s_ms / 1000, frac.trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => secs,
        (0, m) => format!("{m}m{secs}"),
        (h, m) => format!("{h}h{m}m{secs}"),
    }
}

#[cfg(test)]
mod tests;
