//! Drift: a finished run's key figures against the median of the previous runs of the same
//! scenario and kind of system (the last [`DEFAULT_WINDOW`]), the report's "Since the last
//! runs" section ([`section`]) and the `[[expect.drift]]` rows ([`rows`]). [`apply`] does both
//! to a report before it is written.
//!
//! The rules: the runs compared against are the readable runs of the report dir with the same
//! scenario and kind of system (embedded engine, fleet, OpenClaw, HTTP gateway) that finished
//! (`pass` or `fail`) and started before this one. A change of system or version since the
//! previous of them is named (`OpenClaw 2026.9.2 → 2026.9.6`) and this run is compared against
//! the runs before it. A figure is flagged when it moved more than the threshold of its median
//! and more than its noise floor (100 ms for times, half a unit for counts), or when the runs
//! before had it and this one does not; never with fewer than `MIN_BASELINE` runs before. A
//! run that did not finish (`incomplete`, `error`) is not compared and gets no drift rows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::list::{RunEntry, list_runs};
use crate::report::drift::{DEFAULT_THRESHOLD, DEFAULT_WINDOW, DriftRow, DriftSection};
use crate::report::judge::{Ending, judge, settle};
use crate::report::model::{Report, Verdict};
use crate::verdict::ExpectationResult;
use crate::verdict::drift::{ExpectDrift, MIN_BASELINE, median, split_name};

/// Which system ran, as the history compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct System {
    /// `engine`, `fleet`, `openclaw`, `http`: runs are compared only within one kind.
    pub kind: String,
    /// `rehearse engine`, `rehearse fleet`, `OpenClaw`, `HTTP gateway`.
    pub name: String,
    /// Its version, when known.
    pub version: Option<String>,
}

impl System {
    /// `OpenClaw 2026.9.6`.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The system a report's run was against.
pub fn system_of(r: &Report) -> System {
    let (kind, name, version) = match (&r.target, &r.fleet) {
        (Some(t), _) => (
            t.kind.clone(),
            match t.kind.as_str() {
                "openclaw" => "OpenClaw".to_string(),
                "http" => "HTTP gateway".to_string(),
                k => k.to_string(),
            },
            t.version.clone(),
        ),
        (None, Some(_)) => ("fleet".into(), "rehearse fleet".into(), r.rehearse_version.clone()),
        (None, None) => ("engine".into(), "rehearse engine".into(), r.rehearse_version.clone()),
    };
    // Versions side by side: the system is all of them (`2026.9.2 + 2026.9.6`).
    let version = match &r.versions {
        Some(v) => Some(
            v.arms
                .iter()
                .map(|a| a.version.as_str())
                .collect::<Vec<_>>()
                .join(" + "),
        ),
        None => version,
    };
    System {
        kind,
        name,
        version,
    }
}

/// The runs of `entries` a run of `current` is compared against, oldest first: same scenario
/// and kind of system, finished, started before it, not in `own_dir`.
pub fn earlier_runs<'a>(
    entries: &'a [RunEntry],
    current: &Report,
    own_dir: Option<&Path>,
) -> Vec<(&'a str, &'a Report)> {
    let kind = system_of(current).kind;
    let mut out: Vec<(&str, &Report)> = entries
        .iter()
        .filter(|e| own_dir.is_none_or(|d| !same_dir(&e.dir, d)))
        .filter_map(|e| e.report().map(|r| (e.rel.as_str(), r)))
        .filter(|(_, r)| {
            r.scenario == current.scenario
                && matches!(r.verdict, Verdict::Pass | Verdict::Fail)
                && system_of(r).kind == kind
                && r.started_at < current.started_at
        })
        .collect();
    out.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at));
    out
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Each arm's flat figures in a report.
pub fn arm_figures(r: &Report) -> BTreeMap<&str, BTreeMap<String, f64>> {
    r.policies
        .iter()
        .filter_map(|p| p.figures.as_ref().map(|f| (p.policy.as_str(), f.flat())))
        .collect()
}

/// Whether `value` moved away from `median` past the threshold and the figure's noise floor.
pub fn moved(figure: &str, median: f64, value: f64, threshold: f64) -> bool {
    let (base, _) = split_name(figure);
    let floor = if base.ends_with("_ms") { 100.0 } else { 0.5 };
    let d = (value - median).abs();
    d > threshold * median.abs() && d > floor
}

/// The "Since the last runs" section of `current` against `earlier` (oldest first).
pub fn section(
    current: &Report,
    earlier: &[(&str, &Report)],
    window: usize,
    threshold: f64,
) -> DriftSection {
    let base = &earlier[earlier.len().saturating_sub(window)..];
    let sys = system_of(current);
    let change = earlier.last().map(|(_, r)| system_of(r)).and_then(|prev| {
        (prev != sys).then(|| {
            if prev.name == sys.name {
                format!(
                    "{} {} → {}",
                    sys.name,
                    prev.version.as_deref().unwrap_or("?"),
                    sys.version.as_deref().unwrap_or("?")
                )
            } else {
                format!("{} → {}", prev.label(), sys.label())
            }
        })
    });
    let mut d = DriftSection {
        system: sys.label(),
        change,
        baseline: base.iter().map(|(rel, _)| rel.to_string()).collect(),
        window,
        threshold,
        rows: Vec::new(),
        note: None,
    };
    if !matches!(current.verdict, Verdict::Pass | Verdict::Fail) {
        d.note = Some(format!(
            "Not compared: the run is {} (only finished runs are compared).",
            current.verdict.as_str()
        ));
        return d;
    }
    if base.is_empty() {
        d.note = Some(
            "No baseline yet: no earlier finished run of this scenario and kind of system."
                .into(),
        );
        return d;
    }
    let before: Vec<BTreeMap<&str, BTreeMap<String, f64>>> =
        base.iter().map(|(_, r)| arm_figures(r)).collect();
    for (arm, now) in arm_figures(current) {
        let mut names: BTreeSet<String> = now.keys().cloned().collect();
        for b in &before {
            names.extend(b.get(arm).into_iter().flat_map(|m| m.keys().cloned()));
        }
        for figure in names {
            let values: Vec<f64> = before
                .iter()
                .filter_map(|b| b.get(arm).and_then(|m| m.get(&figure)).copied())
                .collect();
            let m = median(&values);
            let value = now.get(&figure).copied();
            let judged = base.len() >= MIN_BASELINE;
            let flagged = judged
                && match (m, value) {
                    (Some(m), Some(v)) => moved(&figure, m, v, threshold),
                    (Some(_), None) => true,
                    _ => false,
                };
            d.rows.push(DriftRow {
                policy: arm.to_string(),
                figure,
                value,
                median: m,
                runs: values.len(),
                flagged,
            });
        }
    }
    d
}

/// The `[[expect.drift]]` rows of one arm: `expect` the tables that apply to it, `now` its
/// figures, `before` each earlier run's figures of the same arm (the baseline's runs).
pub fn rows(
    expect: &[ExpectDrift],
    now: &BTreeMap<String, f64>,
    before: &[Option<&BTreeMap<String, f64>>],
) -> Vec<ExpectationResult> {
    let mut out = Vec::new();
    for e in expect {
        let mut names: BTreeSet<&str> = now.keys().map(String::as_str).collect();
        for b in before.iter().flatten() {
            names.extend(b.keys().map(String::as_str));
        }
        let mut covered: Vec<String> = names
            .into_iter()
            .filter(|n| e.covers(n))
            .map(str::to_string)
            .collect();
        if covered.is_empty() {
            covered.push(match e.dep.as_deref().or(e.provider.as_deref()) {
                Some(s) => format!("{}{{{s}}}", e.figure),
                None => e.figure.clone(),
            });
        }
        for flat in covered {
            let values: Vec<f64> = before
                .iter()
                .filter_map(|b| b.and_then(|m| m.get(&flat)).copied())
                .collect();
            out.push(crate::verdict::drift::judge(
                e,
                &flat,
                now.get(&flat).copied(),
                &values,
                before.len(),
            ));
        }
    }
    out
}

/// Adds the drift section and the `[[expect.drift]]` rows to `report`, a run just finished in
/// `own_dir` under `report_dir`; `expect_of(arm)` gives the drift tables of an arm. A finished
/// run's verdict is judged again with the rows (a failed drift row fails it; a `no_baseline`
/// one leaves it as it was).
pub fn apply(
    report: &mut Report,
    report_dir: &Path,
    own_dir: &Path,
    expect_of: &dyn Fn(&str) -> Vec<ExpectDrift>,
) {
    let entries = list_runs(report_dir);
    let earlier = earlier_runs(&entries, report, Some(own_dir));
    let section = section(report, &earlier, DEFAULT_WINDOW, DEFAULT_THRESHOLD);
    let finished = matches!(report.verdict, Verdict::Pass | Verdict::Fail);
    if finished {
        let base = &earlier[earlier.len().saturating_sub(DEFAULT_WINDOW)..];
        let before: Vec<BTreeMap<&str, BTreeMap<String, f64>>> =
            base.iter().map(|(_, r)| arm_figures(r)).collect();
        let mut added = false;
        for p in &mut report.policies {
            let expect = expect_of(&p.policy);
            if expect.is_empty() {
                continue;
            }
            let now = p.figures.as_ref().map(|f| f.flat()).unwrap_or_default();
            let prev: Vec<Option<&BTreeMap<String, f64>>> =
                before.iter().map(|b| b.get(p.policy.as_str())).collect();
            p.expectations.extend(rows(&expect, &now, &prev));
            settle(p);
            added = true;
        }
        if added {
            let (verdict, reason) = judge(&report.policies, &Ending::default());
            report.verdict = verdict;
            report.reason = reason;
        }
    }
    report.drift = Some(section);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::figures::{DepFigures, KeyFigures};
    use crate::report::model::PolicyReport;
    use crate::verdict::ExpectStatus;

    fn run(started: &str, verdict: &str, open_ms: Option<u64>, version: &str) -> Report {
        let mut r: Report = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "scenario": "smoke", "verdict": verdict,
            "started_at": started, "speed": 1.0, "seed": 1, "host": {}, "policies": [],
            "replay": {"sent": 0, "lag_ms": {"p50": 0.0, "p99": 0.0, "max": 0.0}},
            "config": {}, "rehearse_version": version,
        }))
        .unwrap();
        let mut p = PolicyReport::empty("retry-gate", Vec::new());
        let mut k = KeyFigures::default();
        k.deps.insert(
            "crm".into(),
            DepFigures {
                open_ms,
                ..Default::default()
            },
        );
        p.figures = Some(k);
        r.policies.push(p);
        r
    }

    fn expect(within: &str) -> ExpectDrift {
        ExpectDrift {
            figure: "open_ms".into(),
            dep: Some("crm".into()),
            provider: None,
            within: within.into(),
            policy: None,
        }
    }

    #[test]
    fn the_median_of_the_last_runs_flags_a_figure_that_moved_and_names_an_upgrade() {
        let earlier: Vec<Report> = (1..=6)
            .map(|i| {
                let v = if i == 1 { 50_000 } else { 5_000 + i * 10 };
                run(&format!("2026-11-0{i}T06:00:00.000Z"), "pass", Some(v), "0.9.0")
            })
            .collect();
        let refs: Vec<(&str, &Report)> = earlier.iter().map(|r| ("d", r)).collect();
        let now = run("2026-11-09T06:00:00.000Z", "pass", Some(8_000), "0.9.1");
        let d = section(&now, &refs, 4, 0.25);
        // The last 4 only: the outlier of run 1 is out of the window.
        assert_eq!(d.baseline.len(), 4);
        let row = d.rows.iter().find(|r| r.figure == "open_ms{crm}").unwrap();
        assert_eq!(row.median, Some(5_045.0));
        assert!(row.flagged);
        assert_eq!(d.change.as_deref(), Some("rehearse engine 0.9.0 → 0.9.1"));
        // A small move stays unflagged; expectation counts move by less than the floor.
        let calm = run("2026-11-09T06:00:00.000Z", "pass", Some(5_300), "0.9.0");
        let d = section(&calm, &refs, 4, 0.25);
        assert!(d.rows.iter().all(|r| !r.flagged), "{:?}", d.rows);
        assert_eq!(d.change, None);
    }

    #[test]
    fn too_few_runs_or_an_unfinished_run_compare_nothing() {
        let one = run("2026-11-01T06:00:00.000Z", "pass", Some(5_000), "1");
        let now = run("2026-11-02T06:00:00.000Z", "pass", Some(9_000), "1");
        let d = section(&now, &[("a", &one)], 4, 0.25);
        assert!(d.rows.iter().all(|r| !r.flagged), "one run is no baseline");
        let d = section(&now, &[], 4, 0.25);
        assert!(d.note.unwrap().contains("No baseline yet"));
        let stopped = run("2026-11-02T06:00:00.000Z", "incomplete", Some(9_000), "1");
        let d = section(&stopped, &[("a", &one)], 4, 0.25);
        assert!(d.note.unwrap().contains("Not compared"));
    }

    #[test]
    fn drift_rows_wait_for_a_baseline_then_judge() {
        let e = [expect("30%")];
        let now: BTreeMap<String, f64> = [("open_ms{crm}".to_string(), 9_000.0)].into();
        let b: BTreeMap<String, f64> = [("open_ms{crm}".to_string(), 5_000.0)].into();
        let rows1 = rows(&e, &now, &[Some(&b)]);
        assert_eq!(rows1[0].status, ExpectStatus::NoBaseline);
        let rows2 = rows(&e, &now, &[Some(&b), Some(&b)]);
        assert_eq!(rows2[0].status, ExpectStatus::Fail);
        // A no-baseline row alone leaves a passing section passing.
        let mut p = PolicyReport::empty("retry-gate", rows1);
        settle(&mut p);
        assert!(p.ok);
        assert_eq!(judge(&[p], &Ending::default()).0, Verdict::Pass);
        // The figure absent from every run: one row for it, judged on nothing.
        let none = rows(&[expect("30%")], &BTreeMap::new(), &[None, None]);
        assert_eq!(none.len(), 1);
        assert_eq!(none[0].series.as_deref(), Some("open_ms{crm}"));
        assert_eq!(none[0].status, ExpectStatus::Pass);
    }

    #[test]
    fn earlier_runs_are_the_same_scenario_and_kind_finished_and_before() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, r: &Report| {
            std::fs::create_dir_all(d.path().join(name)).unwrap();
            std::fs::write(
                d.path().join(name).join("report.json"),
                serde_json::to_string(r).unwrap(),
            )
            .unwrap();
        };
        write("20261101T060000Z-smoke", &run("2026-11-01T06:00:00.000Z", "pass", Some(1), "1"));
        write("20261102T060000Z-smoke", &run("2026-11-02T06:00:00.000Z", "error", Some(1), "1"));
        let mut other = run("2026-11-03T06:00:00.000Z", "fail", Some(1), "1");
        other.scenario = "other".into();
        write("20261103T060000Z-other", &other);
        write("20261104T060000Z-smoke", &run("2026-11-04T06:00:00.000Z", "fail", Some(1), "1"));
        write("20261106T060000Z-smoke", &run("2026-11-06T06:00:00.000Z", "pass", Some(1), "1"));
        let now = run("2026-11-05T06:00:00.000Z", "pass", Some(1), "1");
        let entries = list_runs(d.path());
        let e = earlier_runs(&entries, &now, None);
        let rels: Vec<&str> = e.iter().map(|(r, _)| *r).collect();
        assert_eq!(rels, ["20261101T060000Z-smoke", "20261104T060000Z-smoke"]);
    }
}
