//! `--speed`: the [`Speed`] type, validated once where a speed enters (clap's value parser
//! [`parse`], [`Speed::new`] for in-process callers), and the one saturating division every
//! speed-scaled duration goes through ([`Speed::scale`], [`scale`], [`scale_ms`]).
//!
//! # Bounds: 0.01 ..= 100
//!
//! - Above 100 the harness's own times stop meaning anything: expected transition times are
//!   reported in ms, and at ×100 the 250 ms probe spacing is already 2.5 ms and the 10 ms
//!   shortest `scrape_interval` 0.1 ms (below tokio's 1 ms timer resolution); at ×1e9 every
//!   expected time read 0.000s.
//! - Below 0.01 a 5-minute scenario would take over 8 hours and the one-hour cooldown cap more
//!   than four days, longer than the weekly schedule it serves.
//!
//! Within the bounds every duration a scenario can write stays representable after division;
//! outside them nothing is run (exit 2). [`scale`] still never panics, whatever it is given: a
//! quotient beyond [`Duration::MAX`] saturates, and a non-positive or non-finite speed counts as 1.

use std::time::Duration;

use tokio::time::Instant;

/// The slowest `--speed` accepted.
pub(crate) const MIN_SPEED: f64 = 0.01;
/// The fastest `--speed` accepted.
const MAX_SPEED: f64 = 100.0;

/// A `--speed` outside [`MIN_SPEED`]..=[`MAX_SPEED`] (or not a number).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--speed must be a number from 0.01 to 100 (durations are divided by it), got {0}")]
pub struct SpeedError(pub String);

/// A `--speed` within [`MIN_SPEED`]..=[`MAX_SPEED`]: every duration it scales stays
/// representable. Built only by [`Speed::new`] (or [`parse`]), so holding one means it was checked.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, serde::Serialize)]
#[serde(transparent)]
pub struct Speed(f64);

impl Speed {
    /// Real time (the weekly job's speed).
    pub const ONE: Speed = Speed(1.0);

    /// `speed` if it lies within [`MIN_SPEED`]..=[`MAX_SPEED`].
    pub fn new(speed: f64) -> Result<Self, SpeedError> {
        check(speed).map(Self)
    }

    /// The factor.
    pub fn get(self) -> f64 {
        self.0
    }

    /// `d / speed` ([`scale`]).
    pub fn scale(self, d: Duration) -> Duration {
        scale(d, self.0)
    }

    /// `d / speed` in whole milliseconds ([`scale_ms`]).
    pub fn scale_ms(self, d: Duration) -> i64 {
        scale_ms(d, self.0)
    }
}

impl Default for Speed {
    fn default() -> Self {
        Self::ONE
    }
}

impl std::fmt::Display for Speed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for Speed {
    type Err = SpeedError;

    fn from_str(s: &str) -> Result<Self, SpeedError> {
        parse(s)
    }
}

/// A speed for a test table: `v`, which must lie within the bounds.
#[cfg(test)]
pub(crate) fn sp(v: f64) -> Speed {
    match Speed::new(v) {
        Ok(s) => s,
        Err(e) => panic!("a test speed out of bounds: {e}"),
    }
}

/// `speed` if it lies within [`MIN_SPEED`]..=[`MAX_SPEED`].
pub(crate) fn check(speed: f64) -> Result<f64, SpeedError> {
    if (MIN_SPEED..=MAX_SPEED).contains(&speed) {
        Ok(speed)
    } else {
        Err(SpeedError(show(speed)))
    }
}

/// A number as a person would write it (`1e-20`, not twenty zeros).
fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-3..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// clap's value parser for `--speed` (the message names the bounds).
pub(crate) fn parse(s: &str) -> Result<Speed, SpeedError> {
    let bad = || SpeedError(format!("`{s}`"));
    let v: f64 = s.trim().parse().map_err(|_| bad())?;
    Speed::new(v).map_err(|_| bad())
}

/// `d / speed`, rounded to the nearest nanosecond (so integer speeds compress exactly),
/// saturating at [`Duration::MAX`]; a non-positive or non-finite `speed` counts as 1.
pub(crate) fn scale(d: Duration, speed: f64) -> Duration {
    if !(speed.is_finite() && speed > 0.0) || speed == 1.0 {
        return d;
    }
    let nanos = (d.as_nanos() as f64 / speed).round();
    if nanos.is_nan() || nanos >= Duration::MAX.as_nanos() as f64 {
        return Duration::MAX;
    }
    // `as` saturates; the bound above keeps the seconds inside u64.
    let n = nanos as u128;
    Duration::new((n / 1_000_000_000) as u64, (n % 1_000_000_000) as u32)
}

/// `d / speed` in whole milliseconds (rounded), saturating at `i64::MAX`.
pub(crate) fn scale_ms(d: Duration, speed: f64) -> i64 {
    i64::try_from(scale(d, speed).as_nanos().saturating_add(500_000) / 1_000_000)
        .unwrap_or(i64::MAX)
}

/// `t + d`, saturating at a far future (about 30 years on) instead of panicking on overflow.
pub(crate) fn after(t: Instant, d: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(30 * 365 * 86_400);
    t.checked_add(d.min(FAR))
        .or_else(|| t.checked_add(FAR))
        .unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_inclusive_and_everything_else_is_refused() {
        for ok in [0.01, 0.5, 1.0, 10.0, 100.0] {
            assert_eq!(check(ok), Ok(ok));
        }
        for bad in [
            0.0,
            -1.0,
            0.009_999,
            100.000_1,
            1e9,
            1e-20,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let e = check(bad).unwrap_err().to_string();
            assert!(e.contains("0.01 to 100"), "{bad}: {e}");
        }
        assert_eq!(parse(" 4 ").map(Speed::get), Ok(4.0));
        assert_eq!(
            Speed::new(0.5).map(|s| s.scale(Duration::from_secs(1))),
            Ok(Duration::from_secs(2))
        );
        assert!(Speed::new(0.0).is_err());
        assert!(parse("fast").unwrap_err().to_string().contains("`fast`"));
        assert!(parse("1e9").unwrap_err().to_string().ends_with("got `1e9`"));
        assert!(check(1e-20).unwrap_err().to_string().ends_with("got 1e-20"));
    }

    #[test]
    fn integer_speeds_compress_exactly() {
        assert_eq!(
            scale(Duration::from_millis(100), 10.0),
            Duration::from_millis(10)
        );
        assert_eq!(
            scale(Duration::from_secs(300), 4.0),
            Duration::from_secs(75)
        );
        assert_eq!(scale_ms(Duration::from_secs(74), 10.0), 7_400);
        assert_eq!(scale_ms(Duration::from_micros(1_500), 1.0), 2);
    }

    #[test]
    fn absurd_inputs_saturate_instead_of_panicking() {
        assert_eq!(scale(Duration::from_secs(1), 1e-20), Duration::MAX);
        assert_eq!(scale(Duration::MAX, 0.5), Duration::MAX);
        assert_eq!(scale(Duration::MAX, 1e-300), Duration::MAX);
        assert_eq!(scale(Duration::from_secs(1), 1e300), Duration::ZERO);
        for bad in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            assert_eq!(scale(Duration::from_secs(7), bad), Duration::from_secs(7));
        }
        assert_eq!(scale_ms(Duration::MAX, 0.01), i64::MAX);
    }

    #[test]
    fn scale_never_panics_and_matches_the_quotient_over_random_inputs() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        for _ in 0..20_000 {
            let shift = rng.gen_range(0..64);
            let d = Duration::new(
                rng.gen_range(0..=u64::MAX >> shift),
                rng.gen_range(0..1_000_000_000),
            );
            // Any f64 bit pattern: NaNs, infinities, subnormals, huge and tiny exponents.
            let speed = f64::from_bits(rng.r#gen());
            let got = scale(d, speed);
            let _ = scale_ms(d, speed);
            if !(speed.is_finite() && speed > 0.0) {
                assert_eq!(got, d);
            } else if check(speed).is_ok() && got != Duration::MAX {
                let want = d.as_secs_f64() / speed;
                let err = (got.as_secs_f64() - want).abs();
                assert!(err <= want * 1e-12 + 1e-9, "{d:?} / {speed} = {got:?}");
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn after_saturates() {
        let t = Instant::now();
        assert_eq!(after(t, Duration::from_secs(5)), t + Duration::from_secs(5));
        assert!(after(t, Duration::MAX) > t + Duration::from_secs(86_400 * 365));
    }
}
