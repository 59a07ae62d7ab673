//! `--speed`: the [`Speed`] type, validated once where a speed enters (clap's value parser
//! [`parse`], [`Speed::new`] for in-process callers, its `Deserialize` for a spec handed to a
//! child process), and every rule that converts between the wall clock and scenario time: the
//! one saturating division every speed-scaled duration goes through ([`Speed::scale`],
//! [`Speed::scale_ms`]), wall ms → scenario ms ([`Speed::scenario_ms`]), the expectation
//! tolerances scaled to the run and said back in scenario time ([`Speed::scaled_tolerance`],
//! [`Speed::shown_tolerance`], [`nominal_ms`]), a wall duration in nominal time
//! ([`Speed::nominal`]) and unrounded quantities ([`Speed::to_scenario`],
//! [`Speed::per_scenario_second`]). Past the run's plan a speed is always a [`Speed`]; no other
//! module multiplies or divides by one.
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
//! outside them nothing is run (exit 2). The arithmetic still never panics, whatever it is
//! given: a quotient beyond [`Duration::MAX`] saturates, and a non-positive or non-finite speed
//! counts as 1 (the free helpers below keep that rule for any `f64`; a [`Speed`] never holds one).
//!
//! # Where a speed is a number
//!
//! - On disk: [`Speed`] is `#[serde(transparent)]`, so the fleet host spec (the JSON a host
//!   process is handed) and a suite's index.json hold it as the number they always did; reading
//!   one back goes through [`Speed::new`]. report.json's `speed` is a [`RecordedSpeed`]: the
//!   same number, read back whatever it holds, because reports written before the bounds
//!   (schema 1 too) may hold a speed outside them and `rehearse history`, `compare` and `report`
//!   still read those; its wall-clock notes go through [`RecordedSpeed::to_wall`].
//! - The engine keeps nominal durations and is handed a [`Speed`] (`EngineOptions::speed`).

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
/// representable. Built only by [`Speed::new`] (or [`parse`], or deserializing a number, which
/// goes through [`Speed::new`]), so holding one means it was checked.
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

    /// `d / speed` in whole milliseconds ([`scale_ms`]): a duration at speed 1 → wall ms at
    /// this speed.
    pub fn scale_ms(self, d: Duration) -> i64 {
        scale_ms(d, self.0)
    }

    /// Wall-clock ms since the run start → the same instant in scenario ms (× speed, rounded;
    /// saturating).
    pub fn scenario_ms(self, wall_ms: i64) -> i64 {
        scenario_ms(wall_ms, self.0)
    }

    /// [`Speed::scenario_ms`] for unsigned wall times.
    pub fn scenario_ms_u(self, wall_ms: u64) -> u64 {
        scenario_ms_u(wall_ms, self.0)
    }

    /// A tolerance at speed 1 → wall ms at this speed, never below 20 ms.
    pub fn scaled_tolerance(self, d: Duration) -> i64 {
        self.scale_ms(d).max(MIN_TOLERANCE_MS)
    }

    /// The tolerance [`Speed::scaled_tolerance`] applies, said in scenario time: the nominal
    /// tolerance, or the 20 ms wall-clock floor × speed when that is larger.
    pub fn shown_tolerance(self, d: Duration) -> i64 {
        nominal_ms(d).max(self.scenario_ms(MIN_TOLERANCE_MS))
    }

    /// A wall-clock duration → the same in scenario (nominal) time: `wall × speed`, saturating at
    /// [`Duration::MAX`].
    pub fn nominal(self, wall: Duration) -> Duration {
        Duration::try_from_secs_f64(wall.as_secs_f64() * self.0).unwrap_or(Duration::MAX)
    }

    /// A wall-clock quantity (seconds, ms) → the same in scenario time: `wall × speed`,
    /// unrounded.
    pub fn to_scenario(self, wall: f64) -> f64 {
        wall * self.0
    }

    /// A rate per wall-clock second → per second of scenario time: `rate / speed`, unrounded.
    pub fn per_scenario_second(self, per_wall_second: f64) -> f64 {
        per_wall_second / self.0
    }
}

impl<'de> serde::Deserialize<'de> for Speed {
    /// A number, checked by [`Speed::new`] (a speed out of bounds is an error naming them).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        Speed::new(v).map_err(serde::de::Error::custom)
    }
}

/// report.json's `speed`: the speed a report says its run went at, the number as written. Read
/// back whatever it holds (unlike [`Speed`]): a report from before the bounds may hold a speed
/// outside them, and the history still reads it. Rehearse writes only a [`Speed`]'s.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct RecordedSpeed(f64);

impl RecordedSpeed {
    /// The number.
    pub fn get(self) -> f64 {
        self.0
    }

    /// True when the report says wall-clock times beside scenario times: a positive, finite
    /// speed other than 1.
    pub fn has_wall(self) -> bool {
        self.0.is_finite() && self.0 > 0.0 && self.0 != 1.0
    }

    /// A scenario-time quantity → the wall clock (`scenario / speed`, unrounded); meaningful
    /// when [`RecordedSpeed::has_wall`].
    pub fn to_wall(self, scenario: f64) -> f64 {
        scenario / self.0
    }
}

impl From<Speed> for RecordedSpeed {
    fn from(s: Speed) -> Self {
        Self(s.0)
    }
}

impl std::fmt::Display for RecordedSpeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
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
fn check(speed: f64) -> Result<f64, SpeedError> {
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
fn scale(d: Duration, speed: f64) -> Duration {
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
fn scale_ms(d: Duration, speed: f64) -> i64 {
    i64::try_from(scale(d, speed).as_nanos().saturating_add(500_000) / 1_000_000)
        .unwrap_or(i64::MAX)
}

/// Wall-clock ms since the run start at `speed` → the same instant in scenario ms (× speed; a
/// speed that is not a positive number counts as 1). Saturates instead of overflowing.
fn scenario_ms(wall_ms: i64, speed: f64) -> i64 {
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    let v = (wall_ms as f64 * speed).round();
    if v >= i64::MAX as f64 {
        i64::MAX
    } else if v <= i64::MIN as f64 {
        i64::MIN
    } else {
        v as i64
    }
}

/// [`scenario_ms`] for unsigned wall times.
fn scenario_ms_u(wall_ms: u64, speed: f64) -> u64 {
    scenario_ms(i64::try_from(wall_ms).unwrap_or(i64::MAX), speed).max(0) as u64
}

/// Floor of every scaled tolerance, wall ms.
const MIN_TOLERANCE_MS: i64 = 20;

/// A scenario duration in ms, as the scenario wrote it (no speed; saturating).
pub fn nominal_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
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

    #[test]
    fn scenario_time_scales_and_saturates() {
        assert_eq!(scenario_ms(1500, 2.0), 3000);
        assert_eq!(scenario_ms(1500, f64::NAN), 1500);
        assert_eq!(scenario_ms(i64::MAX, 1e9), i64::MAX);
        assert_eq!(
            scenario_ms_u(u64::MAX, 2.0),
            u64::try_from(i64::MAX).unwrap_or(0)
        );
    }

    #[test]
    fn the_methods_are_the_rules_at_a_checked_speed() {
        let (one, two, ten) = (Speed::ONE, sp(2.0), sp(10.0));
        // Wall ms → scenario ms, rounded; the unsigned form clamps at 0 and i64::MAX.
        assert_eq!(two.scenario_ms(1500), 3000);
        assert_eq!(sp(0.5).scenario_ms(-3), -2);
        assert_eq!(sp(100.0).scenario_ms(i64::MAX), i64::MAX);
        assert_eq!(sp(100.0).scenario_ms(i64::MIN), i64::MIN);
        assert_eq!(two.scenario_ms_u(1500), 3000);
        assert_eq!(sp(100.0).scenario_ms_u(u64::MAX), i64::MAX as u64);
        assert_eq!(one.scenario_ms_u(7), 7);
        // A tolerance at speed 1 → wall ms, floored at 20 ms; said in scenario time.
        let tol = Duration::from_millis(100);
        assert_eq!(ten.scaled_tolerance(tol), 20, "10 ms floored");
        assert_eq!(two.scaled_tolerance(tol), 50);
        assert_eq!(ten.shown_tolerance(tol), 200, "the floor × 10");
        assert_eq!(two.shown_tolerance(tol), 100, "as written");
        assert_eq!(sp(0.5).shown_tolerance(Duration::ZERO), 10);
        assert_eq!(one.scaled_tolerance(Duration::MAX), i64::MAX);
        assert_eq!(nominal_ms(Duration::from_micros(2_999)), 2);
        assert_eq!(nominal_ms(Duration::MAX), i64::MAX);
        // Unrounded quantities either way, and a wall duration in nominal time.
        assert_eq!(sp(4.0).to_scenario(0.25), 1.0);
        assert_eq!(sp(4.0).per_scenario_second(10.0), 2.5);
        assert_eq!(
            ten.nominal(Duration::from_millis(150)),
            Duration::from_millis(1500)
        );
        assert_eq!(sp(100.0).nominal(Duration::MAX), Duration::MAX);
        assert_eq!(sp(0.01).nominal(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn a_speed_is_a_number_on_disk_and_is_checked_when_read() {
        assert_eq!(serde_json::to_string(&sp(4.0)).unwrap(), "4.0");
        assert_eq!(serde_json::to_string(&sp(0.25)).unwrap(), "0.25");
        assert_eq!(serde_json::from_str::<Speed>("4").unwrap(), sp(4.0));
        assert_eq!(serde_json::from_str::<Speed>("0.01").unwrap(), sp(0.01));
        for bad in ["0", "-1", "1000", "1e-3"] {
            let e = serde_json::from_str::<Speed>(bad).unwrap_err().to_string();
            assert!(e.contains("0.01 to 100"), "{bad}: {e}");
        }
        assert!(serde_json::from_str::<Speed>("\"fast\"").is_err());
    }

    #[test]
    fn a_recorded_speed_reads_back_whatever_a_report_holds() {
        // Written as the number a Speed is, byte for byte.
        let r = RecordedSpeed::from(sp(4.0));
        assert_eq!(serde_json::to_string(&r).unwrap(), "4.0");
        assert_eq!(r.to_string(), "4");
        // Out of today's bounds (a report from before them): read back as written.
        for (text, v) in [
            ("1000.0", 1000.0),
            ("0.001", 0.001),
            ("0.0", 0.0),
            ("-2.0", -2.0),
        ] {
            let r: RecordedSpeed = serde_json::from_str(text).unwrap();
            assert_eq!(r.get(), v);
            assert_eq!(serde_json::to_string(&r).unwrap(), text);
        }
        // Wall-clock notes: only for a positive, finite speed other than 1.
        let at = |v: &str| serde_json::from_str::<RecordedSpeed>(v).unwrap();
        assert!(at("4").has_wall() && at("1000").has_wall() && at("0.001").has_wall());
        assert!(!at("1").has_wall() && !at("0").has_wall() && !at("-2").has_wall());
        assert_eq!(at("4").to_wall(10.0), 2.5);
        assert_eq!(at("1000").to_wall(5.0), 0.005);
    }

    #[tokio::test(start_paused = true)]
    async fn after_saturates() {
        let t = Instant::now();
        assert_eq!(after(t, Duration::from_secs(5)), t + Duration::from_secs(5));
        assert!(after(t, Duration::MAX) > t + Duration::from_secs(86_400 * 365));
    }
}
