//! Times and numbers as reports and messages write them: milliseconds as seconds with three
//! decimals, a metric value without a needless fraction (a wall-clock instant in scenario time is
//! [`super::speed::Speed::scenario_ms`]). Below every module that writes them (verdict, scrape,
//! report), so none of those reaches up for them.

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
    fn seconds_and_values_read_as_written() {
        assert_eq!(secs(22_000), "22.000s");
        assert_eq!(secs(-300), "-0.300s");
        assert_eq!(signed_secs(4120), "+4.120s");
        assert_eq!(num(3.0), "3");
        assert_eq!(num(0.25), "0.25");
    }
}
