//! Expected times and tolerances scaled to a run's `--speed`, and said back in scenario time: the
//! one arithmetic `diff` and `probe_spacing` share. Pure.

use std::time::Duration;

use super::scenario_ms;

/// Floor of every scaled tolerance.
const MIN_TOLERANCE_MS: i64 = 20;

/// A duration at speed 1 → ms at `speed` (saturating; see [`crate::util::speed::scale_ms`]).
pub fn scaled_ms(d: Duration, speed: f64) -> i64 {
    crate::util::speed::scale_ms(d, speed)
}

/// A tolerance at speed 1 → ms at `speed`, never below 20 ms.
pub fn scaled_tolerance(d: Duration, speed: f64) -> i64 {
    scaled_ms(d, speed).max(MIN_TOLERANCE_MS)
}

/// A scenario duration in ms (saturating).
pub fn nominal_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The tolerance [`scaled_tolerance`] applies, said in scenario time: the nominal tolerance, or
/// the 20 ms wall-clock floor × speed when that is larger.
pub fn shown_tolerance(d: Duration, speed: f64) -> i64 {
    nominal_ms(d).max(scenario_ms(MIN_TOLERANCE_MS, speed))
}
