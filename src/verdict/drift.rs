//! `[[expect.drift]]`: a key figure (`report::figures`; their names are in
//! [`super::baseline`], [`FIGURES`], since the scenario checks them) must stay within a bound
//! relative to the median of the previous runs of the same scenario, scenario digest and kind
//! of system. Judged when the report is finished (`history::drift`), since it reads the report
//! dir; how one figure compares with those runs is [`change`].
//!
//! The row of a figure ([`judge`]): compared with the median where this run and the runs before
//! have values; a failure when it is new (none of the runs before had it, though each watched
//! for it: a breaker opening for the first time) or gone; a pass when it did not happen, nor in
//! any run before, each having watched for it; a failure when this run could not count it
//! ("unknown" is not 0). With fewer than [`MIN_BASELINE`] earlier runs that could count it, the
//! row is `no_baseline`: neither a pass nor a failure, and it never keeps a run from passing (a
//! new install must not page for its first weeks).

use serde::{Deserialize, Serialize};

use super::{ExpectKind, ExpectStatus, ExpectationResult};
pub use super::baseline::{
    Baseline, Change, FIGURES, MIN_BASELINE, Seen, change, median, seen, split_name,
};

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

/// Why this run could not count `flat` (for a row that says so).
fn uncounted(flat: &str) -> String {
    let (base, scope) = split_name(flat);
    match (scope, FIGURES.iter().find(|(n, _)| *n == base).map(|(_, s)| *s)) {
        (Some(dep), Some("dep")) => format!(
            "the run watched no breaker `{dep}`: its system under test showed no breaker series              or event for it"
        ),
        (Some(p), _) if base == "cooldowns" => format!(
            "the run could not see `{p}`'s cooldowns (no auth state of the gateway was read)"
        ),
        (Some(p), Some("provider")) => format!("the run counted nothing of provider `{p}`"),
        (None, Some("dep")) => "the run watched no breaker at all".into(),
        (None, Some("provider")) => "the run counted no provider at all".into(),
        _ => "the run has no key figures for this arm".into(),
    }
}

/// The row of `e` for the figure `flat`: `now` what this run holds of it, `before` the runs it
/// is compared with (the same scenario digest and kind of system), `earlier` how many they are,
/// `left_out` how many earlier runs of another scenario digest were not compared.
pub fn judge(
    e: &ExpectDrift,
    flat: &str,
    now: Seen,
    before: &Baseline,
    earlier: usize,
    left_out: usize,
) -> ExpectationResult {
    let within = e.fraction().unwrap_or(0.0);
    let mut row =
        ExpectationResult::counted(ExpectKind::Drift, flat.to_string(), String::new(), String::new());
    row.dep = e.dep.clone().or_else(|| e.provider.clone());
    row.series = Some(flat.to_string());
    row.expected = format!("within ±{} of the median", e.within.trim());
    row.observed = match now {
        Seen::Value(v) => show(flat, v),
        Seen::Absent => "not observed".into(),
        Seen::Unknown => "not counted".into(),
    };
    let known = before.known();
    let runs = |n: usize| format!("{n} run{}", if n == 1 { "" } else { "s" });
    let (status, detail) = match change(now, before) {
        Change::NotCounted => (
            ExpectStatus::Fail,
            format!("{flat}: not counted by this run ({})", uncounted(flat)),
        ),
        Change::NoBaseline => {
            let left = if left_out > 0 {
                format!(
                    "; {} of another scenario digest left out",
                    runs(left_out)
                )
            } else {
                String::new()
            };
            (
                ExpectStatus::NoBaseline,
                format!(
                    "{flat}: no baseline yet ({} before could count it, {MIN_BASELINE} needed{left})",
                    runs(known)
                ),
            )
        }
        Change::Compared { value, median } => {
            let ok = (value - median).abs() <= within * median.abs() + 1e-9;
            (
                ExpectStatus::from_ok(ok),
                format!(
                    "{flat} = {} against the median {} of {} before ({}; bound ±{})",
                    show(flat, value),
                    show(flat, median),
                    runs(before.values.len()),
                    change_text(median, value),
                    e.within.trim()
                ),
            )
        }
        Change::New { value } => (
            ExpectStatus::Fail,
            format!(
                "{flat} = {}: new — none of the {} before had it, though each watched for it",
                show(flat, value),
                runs(known)
            ),
        ),
        Change::Gone { median } => (
            ExpectStatus::Fail,
            format!(
                "{flat}: not observed in this run (median {} over {} before)",
                show(flat, median),
                runs(before.values.len())
            ),
        ),
        Change::StillAbsent => (
            ExpectStatus::Pass,
            format!(
                "{flat}: did not happen, nor in any of the {} before (each watched for it)",
                runs(known)
            ),
        ),
    };
    row.ok = status == ExpectStatus::Pass;
    row.status = status;
    row.detail = detail;
    row.witness = super::Witness::of(&[
        ("baseline_runs", known as u64),
        ("baseline_values", before.values.len() as u64),
        ("earlier_runs", earlier as u64),
    ]);
    if left_out > 0 {
        row.witness.set("left_out_runs", left_out as u64);
    }
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

    fn values(v: &[f64]) -> Baseline {
        Baseline::of(v.iter().map(|x| Seen::Value(*x)))
    }

    #[test]
    fn rows_pass_fail_or_wait_for_a_baseline() {
        let d = e("50%");
        let v = |x: f64| Seen::Value(x);
        let r = judge(&d, "open_ms{crm}", v(5_000.0), &values(&[5_000.0]), 1, 0);
        assert_eq!(r.status, ExpectStatus::NoBaseline);
        assert!(r.detail.contains("no baseline yet (1 run before could count it, 2 needed)"), "{}", r.detail);
        let three = values(&[5_000.0, 5_200.0, 4_800.0]);
        let r = judge(&d, "open_ms{crm}", v(7_000.0), &three, 3, 0);
        assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
        assert_eq!(r.witness.get("baseline_runs"), 3);
        let r = judge(&d, "open_ms{crm}", v(8_000.0), &three, 3, 0);
        assert_eq!(r.status, ExpectStatus::Fail);
        assert!(r.detail.contains("+60%"), "{}", r.detail);
        let r = judge(&d, "open_ms{crm}", Seen::Absent, &values(&[5_000.0, 5_000.0]), 2, 0);
        assert_eq!(r.status, ExpectStatus::Fail);
        // Runs of another digest are said when they leave it without a baseline.
        let r = judge(&d, "open_ms{crm}", v(5_000.0), &Baseline::default(), 0, 4);
        assert_eq!(r.status, ExpectStatus::NoBaseline);
        assert!(r.detail.contains("4 runs of another scenario digest left out"), "{}", r.detail);
        assert_eq!(r.witness.get("left_out_runs"), 4);
    }

    #[test]
    fn what_is_new_fails_and_what_never_happened_passes_only_where_it_was_watched() {
        let d = e("50%");
        let never = Baseline::of([Seen::Absent; 3]);
        // The breaker opens for the first time after three runs that watched it never open.
        let r = judge(&d, "open_ms{crm}", Seen::Value(5_000.0), &never, 3, 0);
        assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
        assert!(r.detail.contains("new — none of the 3 runs before had it"), "{}", r.detail);
        assert_eq!(change(Seen::Value(5_000.0), &never), Change::New { value: 5_000.0 });
        // Still never opened: a pass judged on the three runs that watched it.
        let r = judge(&d, "open_ms{crm}", Seen::Absent, &never, 3, 0);
        assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
        assert_eq!(r.witness.get("baseline_runs"), 3);
        // Runs that could not count it are no baseline, whatever this run holds.
        let blind = Baseline::of([Seen::Unknown; 4]);
        let r = judge(&d, "open_ms{crm}", Seen::Value(5_000.0), &blind, 4, 0);
        assert_eq!(r.status, ExpectStatus::NoBaseline, "{}", r.detail);
        // This run could not count it: a failure saying why, never a pass.
        let r = judge(&d, "open_ms{crm}", Seen::Unknown, &never, 3, 0);
        assert_eq!(r.status, ExpectStatus::Fail);
        assert!(r.detail.contains("watched no breaker `crm`"), "{}", r.detail);
        // A first fallback is a count from 0: compared, and past any percentage of 0.
        let mut f = e("50%");
        f.figure = "fallbacks".into();
        f.dep = None;
        f.provider = Some("openai".into());
        let r = judge(&f, "fallbacks{openai}", Seen::Value(1.0), &values(&[0.0, 0.0, 0.0]), 3, 0);
        assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
        assert!(r.detail.contains("from 0"), "{}", r.detail);
    }
}
