//! The batch-job series of DESIGN 13 (docs/weekly.md), pure: a run's outcome → its samples, the
//! text of a set of samples (one HELP/TYPE per family, every family a gauge), and the previous
//! `rehearse_last_success_timestamp_seconds` of a scenario found in what was written or pushed
//! before (a failing run carries it forward).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::model::{ExpectStatus, Report, Verdict};
use crate::scrape::{Exposition, Sample};

/// When the last run ended.
const LAST_RUN: &str = "rehearse_last_run_timestamp_seconds";
/// When the last passing run ended.
const LAST_SUCCESS: &str = "rehearse_last_success_timestamp_seconds";
/// Wall time of the last run.
const DURATION: &str = "rehearse_run_duration_seconds";
/// 1 for the last run's verdict, 0 for the others.
const VERDICT: &str = "rehearse_run_verdict";
/// The last run's expectations by status.
const EXPECTATIONS: &str = "rehearse_expectations";

/// Every family, in the order written, with its HELP text.
pub(crate) const FAMILIES: [(&str, &str); 5] = [
    (LAST_RUN, "Unix time the last rehearse run of the scenario ended."),
    (
        LAST_SUCCESS,
        "Unix time the last passing rehearse run of the scenario ended (0: none yet).",
    ),
    (DURATION, "Wall time of the last rehearse run of the scenario."),
    (
        VERDICT,
        "1 for the verdict of the last rehearse run of the scenario, 0 for the others.",
    ),
    (
        EXPECTATIONS,
        "Expectations of the last rehearse run of the scenario by status.",
    ),
];

const VERDICTS: [Verdict; 4] = [
    Verdict::Pass,
    Verdict::Fail,
    Verdict::Incomplete,
    Verdict::Error,
];

/// What the series say about one run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// The scenario (the `scenario` label and the Pushgateway grouping key).
    pub scenario: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Unix seconds when it ended.
    pub ended_unix_s: f64,
    /// Wall seconds it took.
    pub duration_s: f64,
    /// Expectations (checks) passed, failed, not reached.
    pub pass: u64,
    /// Failed.
    pub fail: u64,
    /// Not reached.
    pub not_reached: u64,
    /// Drift rows without a baseline yet (neither pass nor fail).
    pub no_baseline: u64,
}

impl Outcome {
    /// The outcome of `report`, which ended at `ended_unix_s` after `duration_s` of wall time.
    pub(crate) fn of(report: &Report, ended_unix_s: f64, duration_s: f64) -> Self {
        let mut o = Self {
            scenario: report.scenario.clone(),
            verdict: report.verdict,
            ended_unix_s,
            duration_s,
            pass: 0,
            fail: 0,
            not_reached: 0,
            no_baseline: 0,
        };
        for e in report.policies.iter().flat_map(|p| &p.expectations) {
            match e.status {
                ExpectStatus::Pass => o.pass += 1,
                ExpectStatus::Fail => o.fail += 1,
                ExpectStatus::NotReached => o.not_reached += 1,
                ExpectStatus::NoBaseline => o.no_baseline += 1,
            }
        }
        o
    }

    /// The run's samples, each with its `scenario` label when `with_scenario` (the textfile;
    /// a push leaves it to the grouping key). `previous_success` is the last passing run's end
    /// from before: a passing run replaces it, any other carries it forward (0 when none).
    pub(crate) fn samples(&self, previous_success: Option<f64>, with_scenario: bool) -> Vec<Sample> {
        let last_success = if self.verdict == Verdict::Pass {
            self.ended_unix_s
        } else {
            previous_success.unwrap_or(0.0)
        };
        let labels = |extra: Option<(&str, &str)>| {
            let mut l = BTreeMap::new();
            if with_scenario {
                l.insert("scenario".to_string(), self.scenario.clone());
            }
            if let Some((k, v)) = extra {
                l.insert(k.to_string(), v.to_string());
            }
            l
        };
        let sample = |name: &str, labels: BTreeMap<String, String>, value: f64| Sample {
            name: name.to_string(),
            labels,
            value,
            timestamp_ms: None,
        };
        let mut v = vec![
            sample(LAST_RUN, labels(None), self.ended_unix_s),
            sample(LAST_SUCCESS, labels(None), last_success),
            sample(DURATION, labels(None), self.duration_s),
        ];
        for verdict in VERDICTS {
            let on = f64::from(u8::from(verdict == self.verdict));
            v.push(sample(VERDICT, labels(Some(("verdict", verdict.as_str()))), on));
        }
        for (status, n) in [
            ("pass", self.pass),
            ("fail", self.fail),
            ("not_reached", self.not_reached),
            ("no_baseline", self.no_baseline),
        ] {
            v.push(sample(
                EXPECTATIONS,
                labels(Some(("status", status))),
                n as f64,
            ));
        }
        v
    }
}

/// The previous last-success time of `scenario` in an exposition (the textfile, or the
/// Pushgateway's `/metrics`, whose samples also carry `job="rehearse"`): the largest found.
pub(crate) fn last_success_in(e: &Exposition, scenario: &str) -> Option<f64> {
    e.families
        .iter()
        .filter(|f| f.name == LAST_SUCCESS)
        .flat_map(|f| &f.samples)
        .filter(|s| s.labels.get("scenario").map(String::as_str) == Some(scenario))
        .filter(|s| s.labels.get("job").is_none_or(|j| j == "rehearse"))
        .map(|s| s.value)
        .filter(|v| v.is_finite() && *v > 0.0)
        .reduce(f64::max)
}

/// Samples of our families in `e` whose `scenario` is not `scenario` (the other scenarios'
/// series a run keeps when it rewrites the textfile).
pub(crate) fn others(e: &Exposition, scenario: &str) -> Vec<Sample> {
    e.families
        .iter()
        .filter(|f| FAMILIES.iter().any(|(n, _)| *n == f.name))
        .flat_map(|f| &f.samples)
        .filter(|s| {
            s.labels
                .get("scenario")
                .is_some_and(|v| v.as_str() != scenario)
        })
        .cloned()
        .collect()
}

/// The text format 0.0.4 of `samples`: each family once, with HELP and TYPE gauge, its samples
/// sorted by labels.
pub(crate) fn render(samples: &[Sample]) -> String {
    render_families(&FAMILIES, samples)
}

/// [`render`] over other families (the matrix's, `matrix::textfile`): the same text rules.
pub(crate) fn render_families(families: &[(&str, &str)], samples: &[Sample]) -> String {
    let mut o = String::new();
    for &(family, help) in families {
        let mut mine: Vec<&Sample> = samples.iter().filter(|s| s.name == family).collect();
        if mine.is_empty() {
            continue;
        }
        mine.sort_by(|a, b| a.labels.cmp(&b.labels));
        let _ = writeln!(o, "# HELP {family} {help}");
        let _ = writeln!(o, "# TYPE {family} gauge");
        for s in mine {
            o.push_str(family);
            if !s.labels.is_empty() {
                o.push('{');
                let parts: Vec<String> = s
                    .labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                    .collect();
                o.push_str(&parts.join(","));
                o.push('}');
            }
            let _ = writeln!(o, " {}", value(s.value));
        }
    }
    o
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf".into() } else { "-Inf".into() }
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(verdict: Verdict, ended: f64) -> Outcome {
        Outcome {
            scenario: "weekly".into(),
            verdict,
            ended_unix_s: ended,
            duration_s: 301.25,
            pass: 9,
            fail: 1,
            not_reached: 0,
            no_baseline: 0,
        }
    }

    #[test]
    fn a_failing_run_carries_the_last_success_forward_and_a_pass_moves_it() {
        let text = render(&outcome(Verdict::Fail, 2000.0).samples(Some(1000.0), true));
        let e = crate::scrape::parse(&text).unwrap();
        assert_eq!(last_success_in(&e, "weekly"), Some(1000.0));
        assert!(text.contains("rehearse_last_run_timestamp_seconds{scenario=\"weekly\"} 2000\n"));
        assert!(text.contains("rehearse_run_verdict{scenario=\"weekly\",verdict=\"fail\"} 1\n"));
        assert!(text.contains("rehearse_run_verdict{scenario=\"weekly\",verdict=\"pass\"} 0\n"));
        assert!(text.contains("rehearse_expectations{scenario=\"weekly\",status=\"fail\"} 1\n"));
        assert!(text.contains("rehearse_run_duration_seconds{scenario=\"weekly\"} 301.250\n"));
        let text = render(&outcome(Verdict::Pass, 3000.0).samples(Some(1000.0), true));
        let e = crate::scrape::parse(&text).unwrap();
        assert_eq!(last_success_in(&e, "weekly"), Some(3000.0));
        // None before and a failure: 0, which an alert on its age fires on.
        let text = render(&outcome(Verdict::Error, 3000.0).samples(None, true));
        assert!(text.contains("rehearse_last_success_timestamp_seconds{scenario=\"weekly\"} 0\n"));
        // Each family once, whatever the number of scenarios.
        let mut all = outcome(Verdict::Pass, 1.0).samples(None, true);
        let mut other = outcome(Verdict::Fail, 1.0);
        other.scenario = "smoke \"x\"".into();
        all.extend(other.samples(None, true));
        let text = render(&all);
        assert_eq!(text.matches("# TYPE rehearse_run_verdict gauge").count(), 1);
        let e = crate::scrape::parse(&text).unwrap();
        assert_eq!(others(&e, "weekly").len(), 11, "{text}");
        assert!(others(&e, "weekly").iter().all(|s| s.labels["scenario"] == "smoke \"x\""));
    }

    #[test]
    fn pushed_samples_leave_the_scenario_to_the_grouping_key() {
        let s = outcome(Verdict::Pass, 1.0).samples(None, false);
        assert!(s.iter().all(|s| !s.labels.contains_key("scenario")));
        assert_eq!(s.len(), 11);
    }
}
