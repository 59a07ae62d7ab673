//! Rounding of measured floats where they are written out (report.json): a lag of
//! `40.79371500000002` ms is `40.794`. Only measurements go through here, never values a user
//! wrote (a fault probability of 0.0005 stays as given).

use serde::Serializer;

/// `v` rounded to 3 decimals (µs for a value in ms); non-finite values unchanged.
pub fn round3(v: f64) -> f64 {
    if !v.is_finite() {
        return v;
    }
    let r = (v * 1000.0).round() / 1000.0;
    match r {
        // Beyond ±1.8e305 the product overflows: keep the value as it was.
        r if !r.is_finite() => v,
        // No `-0` in the output.
        0.0 => 0.0,
        r => r,
    }
}

/// serde `serialize_with` for an `f64` measurement: [`round3`].
pub(crate) fn ser3<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round3(*v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_decimals_and_shortest_json() {
        assert_eq!(round3(40.79371500000002), 40.794);
        assert_eq!(round3(-0.0004).to_string(), "0");
        assert_eq!(round3(2.5), 2.5);
        assert!(round3(f64::NAN).is_nan());
        assert_eq!(round3(f64::MAX), f64::MAX);
        #[derive(serde::Serialize)]
        struct M {
            #[serde(serialize_with = "ser3")]
            v: f64,
        }
        let json = serde_json::to_string(&M {
            v: 40.79371500000002,
        })
        .unwrap();
        assert_eq!(json, r#"{"v":40.794}"#);
        let json = serde_json::to_string(&M { v: 0.1 + 0.2 }).unwrap();
        assert_eq!(json, r#"{"v":0.3}"#);
    }
}
