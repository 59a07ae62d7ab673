//! `[[expect.drift]]`: a key figure (`report::figures`; their names are here, [`FIGURES`], since the scenario checks them) must stay within a bound relative to
//! the median of the previous runs of the same scenario and kind of system. Judged when the
//! report is finished (`history::drift`), since it reads the report dir.
//!
//! With fewer than [`MIN_BASELINE`] earlier runs holding the figure, the row is
//! `no_baseline`: neither a pass nor a failure, and it never keeps a run from passing (a new
//! install must not page for its first weeks).

use serde::{Deserialize, Serialize};

use super::{ExpectKind, ExpectStatus, ExpectationResult};

/// Earlier runs needed before a drift row is judged.
pub const MIN_BASELINE: usize = 2;

/// One `[[expect.drift]]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectDrift {
    /// The figure (`open_ms`, `rotations`, `replay_lag_p99_ms`, ...: docs/history.md).
    pub figure: String,
    /// Only this dep's value (dep figures; every dep when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dep: Option<String>,
    /// Only this provider's value (provider figures; every provider when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// How far from the median it may move, as a percentage of the median (`"50%"`).
    pub within: String,
    /// Only for this policy run; all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

impl ExpectDrift {
    /// `within` as a fraction (`"50%"` → 0.5), or why not.
    pub fn fraction(&self) -> Result<f64, String> {
        let s = self.within.trim();
        let n = s
            .strip_suffix('%')
            .ok_or_else(|| format!("`{s}`: give a percentage of the median, like \"50%\""))?;
        match n.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / 100.0),
            _ => Err(format!("`{s}`: not a percentage ≥ 0%")),
        }
    }

    /// Whether it covers the flat figure name `flat` (`open_ms{crm_search}`).
    pub fn covers(&self, flat: &str) -> bool {
        let (base, scope) = split_name(flat);
        base == self.figure
            && self
                .dep
                .as_deref()
                .or(self.provider.as_deref())
                .is_none_or(|want| scope == Some(want))
    }
}

/// The figure names, for validation and did-you-mean: (name, scope), scope `dep`, `provider`
/// or `` (run-wide).
pub const FIGURES: &[(&str, &str)] = &[
    ("time_to_open_ms", "dep"),
    ("open_ms", "dep"),
    ("probes_per_half_open", "dep"),
    ("half_open_to_closed_ms", "dep"),
    ("rotations", "provider"),
    ("cooldowns", "provider"),
    ("fallbacks", "provider"),
    ("time_to_first_rotation_ms", "provider"),
    ("time_to_first_fallback_ms", "provider"),
    ("replay_lag_p99_ms", ""),
    ("expectations_passed", ""),
    ("expectations_failed", ""),
    ("expectations_not_reached", ""),
];

/// A flat name's figure and scope: `open_ms{crm_search}` → (`open_ms`, Some(`crm_search`)).
pub fn split_name(flat: &str) -> (&str, Option<&str>) {
    match flat.split_once('{') {
        Some((n, rest)) => (n, Some(rest.trim_end_matches('}'))),
        None => (flat, None),
    }
}

/// A figure's value as the reports print it: times in seconds, counts as integers.
pub fn show(name: &str, v: f64) -> String {
    let (base, _) = split_name(name);
    if base.ends_with("_ms") {
        format!("{:.3}s", v / 1000.0)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Checks one table: a known figure (did-you-mean on a misspelt one), a scope that fits it, a
/// percentage. Errors are (key, message).
pub(crate) fn check(d: &ExpectDrift) -> Result<(), (&'static str, String)> {
    let Some((_, scope)) = FIGURES.iter().find(|(n, _)| *n == d.figure) else {
        let hint = crate::util::suggest::closest(&d.figure, FIGURES.iter().map(|(n, _)| *n))
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        let known: Vec<&str> = FIGURES.iter().map(|(n, _)| *n).collect();
        return Err((
            "figure",
            format!(
                "`{}` is not a key figure{hint} (figures: {})",
                d.figure,
                known.join(", ")
            ),
        ));
    };
    if d.dep.is_some() && *scope != "dep" {
        return Err(("dep", format!("`{}` is not a per-dep figure", d.figure)));
    }
    if d.provider.is_some() && *scope != "provider" {
        return Err(("provider", format!("`{}` is not a per-provider figure", d.figure)));
    }
    d.fraction().map(|_| ()).map_err(|m| ("within", m))
}

/// The median of some values (`None` when empty).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The row of `e` for the figure `flat`: `value` this run's (None: not observed), `baseline`
/// the earlier runs' values (the runs that held it), `earlier` how many earlier runs were
/// compared at all.
pub fn judge(
    e: &ExpectDrift,
    flat: &str,
    value: Option<f64>,
    baseline: &[f64],
    earlier: usize,
) -> ExpectationResult {
    let within = e.fraction().unwrap_or(0.0);
    let mut row =
        ExpectationResult::counted(ExpectKind::Drift, flat.to_string(), String::new(), String::new());
    row.dep = e.dep.clone().or_else(|| e.provider.clone());
    row.series = Some(flat.to_string());
    row.expected = format!("within ±{} of the median", e.within.trim());
    row.observed = value.map_or("not observed".into(), |v| show(flat, v));
    let (status, detail) = match (median(baseline), value) {
        _ if earlier < MIN_BASELINE => (
            ExpectStatus::NoBaseline,
            format!(
                "{flat}: no baseline yet ({earlier} earlier run{}, {MIN_BASELINE} needed)",
                if earlier == 1 { "" } else { "s" }
            ),
        ),
        (None, None) => (
            ExpectStatus::Pass,
            format!("{flat}: not observed, nor in the {earlier} runs before"),
        ),
        (None, Some(v)) => (
            ExpectStatus::NoBaseline,
            format!(
                "{flat} = {}: no baseline yet (none of the {earlier} runs before had it)",
                show(flat, v)
            ),
        ),
        (Some(m), None) => (
            ExpectStatus::Fail,
            format!(
                "{flat}: not observed in this run (median {} over {} runs before)",
                show(flat, m),
                baseline.len()
            ),
        ),
        (Some(m), Some(v)) => {
            let ok = (v - m).abs() <= within * m.abs() + 1e-9;
            let change = change_text(m, v);
            (
                ExpectStatus::from_ok(ok),
                format!(
                    "{flat} = {} against the median {} of {} runs before ({change}; bound ±{})",
                    show(flat, v),
                    show(flat, m),
                    baseline.len(),
                    e.within.trim()
                ),
            )
        }
    };
    row.ok = status == ExpectStatus::Pass;
    row.status = status;
    row.detail = detail;
    row.witness = super::Witness::of(&[
        ("baseline_runs", baseline.len() as u64),
        ("earlier_runs", earlier as u64),
    ]);
    row
}

/// `+42%`, `-10%`, or `from 0` when the median is 0.
pub fn change_text(median: f64, value: f64) -> String {
    if median == 0.0 {
        if value == 0.0 {
            "no change".into()
        } else {
            "from 0".into()
        }
    } else {
        format!("{:+.0}%", (value - median) / median.abs() * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(within: &str) -> ExpectDrift {
        ExpectDrift {
            figure: "open_ms".into(),
            dep: Some("crm".into()),
            provider: None,
            within: within.into(),
            policy: None,
        }
    }

    #[test]
    fn within_is_a_percentage() {
        assert_eq!(e("50%").fraction(), Ok(0.5));
        assert!(e("0.5").fraction().is_err());
        assert!(e("-3%").fraction().is_err());
        assert!(e("50%").covers("open_ms{crm}"));
        assert!(!e("50%").covers("open_ms{other}"));
        assert!(!e("50%").covers("time_to_open_ms{crm}"));
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn rows_pass_fail_or_wait_for_a_baseline() {
        let d = e("50%");
        let r = judge(&d, "open_ms{crm}", Some(5_000.0), &[5_000.0], 1);
        assert_eq!(r.status, ExpectStatus::NoBaseline);
        assert!(r.detail.contains("no baseline yet (1 earlier run, 2 needed)"), "{}", r.detail);
        let r = judge(&d, "open_ms{crm}", Some(7_000.0), &[5_000.0, 5_200.0, 4_800.0], 3);
        assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
        let r = judge(&d, "open_ms{crm}", Some(8_000.0), &[5_000.0, 5_200.0, 4_800.0], 3);
        assert_eq!(r.status, ExpectStatus::Fail);
        assert!(r.detail.contains("+60%"), "{}", r.detail);
        let r = judge(&d, "open_ms{crm}", None, &[5_000.0, 5_000.0], 2);
        assert_eq!(r.status, ExpectStatus::Fail);
        let r = judge(&d, "open_ms{crm}", None, &[], 2);
        assert_eq!(r.status, ExpectStatus::Pass);
    }
}
