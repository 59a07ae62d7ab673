//! Times and numbers as reports and messages write them: a wall-clock instant in scenario time at a
//! speed, milliseconds as seconds with three decimals, a metric value without a needless fraction.
//! Below every module that writes them (verdict, scrape, report), so none of those reaches up for them.

/// Wall-clock ms since the run start at `speed` → the same instant in scenario ms (× speed; a
/// speed that is not a positive number counts as 1). Saturates instead of overflowing.
pub(crate) fn scenario_ms(wall_ms: i64, speed: f64) -> i64 {
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
pub(crate) fn scenario_ms_u(wall_ms: u64, speed: f64) -> u64 {
    scenario_ms(i64::try_from(wall_ms).unwrap_or(i64::MAX), speed).max(0) as u64
}

/// Formats milliseconds as seconds with three decimals (`22.000s`).
pub fn secs(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let a = ms.unsigned_abs();
    format!("{sign}{}.{:03}s", a / 1000, a % 1000)
}

/// Formats a signed delta (`+4.120s`, `-0.300s`).
pub fn signed_secs(ms: i64) -> String {
    if ms >= 0 {
        format!("+{}", secs(ms))
    } else {
        secs(ms)
    }
}

/// Formats a metric value: integers without a fraction.
pub(crate) fn num(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn seconds_and_values_read_as_written() {
        assert_eq!(secs(22_000), "22.000s");
        assert_eq!(secs(-300), "-0.300s");
        assert_eq!(signed_secs(4120), "+4.120s");
        assert_eq!(num(3.0), "3");
        assert_eq!(num(0.25), "0.25");
    }
}
