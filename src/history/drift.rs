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

pub use super::baseline::{System, earlier_runs, left_out, system_of};
use super::list::list_runs;
use crate::report::drift::{DEFAULT_THRESHOLD, DEFAULT_WINDOW, DriftRow, DriftSection, LeftOut};
use crate::report::judge::{Ending, judge, settle};
use crate::report::model::{Report, Verdict};
use crate::verdict::ExpectationResult;
use crate::verdict::drift::{Baseline, Change, ExpectDrift, Seen, change, seen, split_name};

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

/// The "Since the last runs" section of `current` against `earlier` (oldest first, the same
/// scenario digest), naming the runs `left_out` for another digest.
pub fn section(
    current: &Report,
    earlier: &[(&str, &Report)],
    left_out: Vec<LeftOut>,
    window: usize,
    threshold: f64,
) -> DriftSection {
    let base = &earlier[earlier.len().saturating_sub(window)..];
    let sys = system_of(current);
    let system_change = earlier.last().map(|(_, r)| system_of(r)).and_then(|prev| {
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
        change: system_change,
        baseline: base.iter().map(|(rel, _)| rel.to_string()).collect(),
        window,
        threshold,
        rows: Vec::new(),
        note: None,
        left_out,
    };
    if !matches!(current.verdict, Verdict::Pass | Verdict::Fail) {
        d.note = Some(format!(
            "Not compared: the run is {} (only finished runs are compared).",
            current.verdict.as_str()
        ));
        return d;
    }
    if base.is_empty() {
        let what = if d.left_out.is_empty() {
            "this scenario"
        } else {
            "this version of the scenario (its digest)"
        };
        d.note = Some(format!(
            "No baseline yet: no earlier finished run of {what} and kind of system."
        ));
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
            let baseline = Baseline::of(before.iter().map(|b| seen(b.get(arm), &figure)));
            let now_seen = seen(Some(&now), &figure);
            let flagged = match change(now_seen, &baseline) {
                Change::Compared { value, median } => moved(&figure, median, value, threshold),
                Change::New { .. } | Change::Gone { .. } => true,
                Change::NotCounted | Change::NoBaseline | Change::StillAbsent => false,
            };
            d.rows.push(DriftRow {
                policy: arm.to_string(),
                value: now.get(&figure).copied(),
                median: baseline.median(),
                runs: baseline.values.len(),
                known_runs: Some(baseline.known()),
                counted: now_seen != Seen::Unknown,
                flagged,
                figure,
            });
        }
    }
    d
}

/// The flat names `e` covers: its one subject's when it names one; else the figure for every
/// subject this run or a run before watched (every dep whose breaker was watched, every
/// provider counted) or had it for; the bare figure name when there is none (judged as not
/// counted: nothing of its kind was watched).
fn covered(e: &ExpectDrift, runs: &[Option<&BTreeMap<String, f64>>]) -> Vec<String> {
    if let Some(s) = e.dep.as_deref().or(e.provider.as_deref()) {
        return vec![format!("{}{{{s}}}", e.figure)];
    }
    let witness = match crate::verdict::drift::FIGURES
        .iter()
        .find(|(n, _)| *n == e.figure)
        .map(|(_, s)| *s)
    {
        Some("dep") => "openings",
        Some("provider") => "rotations",
        _ => return vec![e.figure.clone()],
    };
    let mut subjects: BTreeSet<&str> = BTreeSet::new();
    for m in runs.iter().flatten() {
        for name in m.keys() {
            let (base, scope) = split_name(name);
            if let Some(s) = scope.filter(|_| base == witness || base == e.figure) {
                subjects.insert(s);
            }
        }
    }
    if subjects.is_empty() {
        return vec![e.figure.clone()];
    }
    subjects
        .into_iter()
        .map(|s| format!("{}{{{s}}}", e.figure))
        .collect()
}

/// The `[[expect.drift]]` rows of one arm: `expect` the tables that apply to it, `now` its
/// figures (`None`: it has none), `before` each earlier run's figures of the same arm (the
/// baseline's runs), `left_out` how many earlier runs of another scenario digest were not
/// compared.
pub fn rows(
    expect: &[ExpectDrift],
    now: Option<&BTreeMap<String, f64>>,
    before: &[Option<&BTreeMap<String, f64>>],
    left_out: usize,
) -> Vec<ExpectationResult> {
    let mut runs: Vec<Option<&BTreeMap<String, f64>>> = vec![now];
    runs.extend(before.iter().copied());
    let mut out = Vec::new();
    for e in expect {
        for flat in covered(e, &runs) {
            let baseline = Baseline::of(before.iter().map(|b| seen(*b, &flat)));
            out.push(crate::verdict::drift::judge(
                e,
                &flat,
                seen(now, &flat),
                &baseline,
                before.len(),
                left_out,
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
    let left = left_out(&entries, report, Some(own_dir));
    let left_n: usize = left.iter().map(|l| l.runs).sum();
    let section = section(report, &earlier, left, DEFAULT_WINDOW, DEFAULT_THRESHOLD);
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
            let now = p.figures.as_ref().map(|f| f.flat());
            let prev: Vec<Option<&BTreeMap<String, f64>>> =
                before.iter().map(|b| b.get(p.policy.as_str())).collect();
            p.expectations
                .extend(rows(&expect, now.as_ref(), &prev, left_n));
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
        let d = section(&now, &refs, Vec::new(), 4, 0.25);
        // The last 4 only: the outlier of run 1 is out of the window.
        assert_eq!(d.baseline.len(), 4);
        let row = d.rows.iter().find(|r| r.figure == "open_ms{crm}").unwrap();
        assert_eq!(row.median, Some(5_045.0));
        assert!(row.flagged);
        assert_eq!(d.change.as_deref(), Some("rehearse engine 0.9.0 → 0.9.1"));
        // A small move stays unflagged; expectation counts move by less than the floor.
        let calm = run("2026-11-09T06:00:00.000Z", "pass", Some(5_300), "0.9.0");
        let d = section(&calm, &refs, Vec::new(), 4, 0.25);
        assert!(d.rows.iter().all(|r| !r.flagged), "{:?}", d.rows);
        assert_eq!(d.change, None);
    }

    #[test]
    fn too_few_runs_or_an_unfinished_run_compare_nothing() {
        let one = run("2026-11-01T06:00:00.000Z", "pass", Some(5_000), "1");
        let now = run("2026-11-02T06:00:00.000Z", "pass", Some(9_000), "1");
        let d = section(&now, &[("a", &one)], Vec::new(), 4, 0.25);
        assert!(d.rows.iter().all(|r| !r.flagged), "one run is no baseline");
        let d = section(&now, &[], Vec::new(), 4, 0.25);
        assert!(d.note.unwrap().contains("No baseline yet"));
        let stopped = run("2026-11-02T06:00:00.000Z", "incomplete", Some(9_000), "1");
        let d = section(&stopped, &[("a", &one)], Vec::new(), 4, 0.25);
        assert!(d.note.unwrap().contains("Not compared"));
    }

    #[test]
    fn drift_rows_wait_for_a_baseline_then_judge() {
        let e = [expect("30%")];
        let now: BTreeMap<String, f64> = [("open_ms{crm}".to_string(), 9_000.0)].into();
        let b: BTreeMap<String, f64> = [("open_ms{crm}".to_string(), 5_000.0)].into();
        let rows1 = rows(&e, Some(&now), &[Some(&b)], 0);
        assert_eq!(rows1[0].status, ExpectStatus::NoBaseline);
        let rows2 = rows(&e, Some(&now), &[Some(&b), Some(&b)], 0);
        assert_eq!(rows2[0].status, ExpectStatus::Fail);
        // A no-baseline row alone leaves a passing section passing.
        let mut p = PolicyReport::empty("retry-gate", rows1);
        settle(&mut p);
        assert!(p.ok);
        assert_eq!(judge(&[p], &Ending::default()).0, Verdict::Pass);
        // The figure absent from every run, and its dep watched by none: one row for it,
        // judged on nothing, which is no pass.
        let none = rows(&[expect("30%")], Some(&BTreeMap::new()), &[None, None], 0);
        assert_eq!(none.len(), 1);
        assert_eq!(none[0].series.as_deref(), Some("open_ms{crm}"));
        assert_eq!(none[0].status, ExpectStatus::Fail);
        assert!(none[0].detail.contains("not counted"), "{}", none[0].detail);
        let mut p = PolicyReport::empty("retry-gate", none);
        settle(&mut p);
        assert_eq!(judge(&[p], &Ending::default()).0, Verdict::Fail);
        // Watched in every run and never opened: a pass on the runs that watched it.
        let calm: BTreeMap<String, f64> = [("openings{crm}".to_string(), 0.0)].into();
        let still = rows(&[expect("30%")], Some(&calm), &[Some(&calm), Some(&calm)], 0);
        assert_eq!(still[0].status, ExpectStatus::Pass, "{}", still[0].detail);
        assert_eq!(still[0].witness.get("baseline_runs"), 2);
    }

    #[test]
    fn a_breaker_that_opens_for_the_first_time_is_flagged_and_fails_its_drift_row() {
        let calm = |i: u32| {
            let mut r = run(&format!("2026-11-0{i}T06:00:00.000Z"), "pass", None, "1");
            r.policies[0].figures.as_mut().unwrap().deps.get_mut("crm").unwrap().openings = 0;
            r
        };
        let earlier: Vec<Report> = (1..=3).map(calm).collect();
        let refs: Vec<(&str, &Report)> = earlier.iter().map(|r| ("d", r)).collect();
        let mut now = run("2026-11-05T06:00:00.000Z", "pass", Some(5_000), "1");
        now.policies[0].figures.as_mut().unwrap().deps.get_mut("crm").unwrap().openings = 1;
        let d = section(&now, &refs, Vec::new(), 4, 0.25);
        let flagged: Vec<(&str, String)> = d
            .rows
            .iter()
            .filter(|r| r.flagged)
            .map(|r| (r.figure.as_str(), r.change()))
            .collect();
        assert!(flagged.contains(&("open_ms{crm}", "new".to_string())), "{flagged:?}");
        assert!(flagged.contains(&("openings{crm}", "from 0".to_string())), "{flagged:?}");
        // Every dep, no dep named: the row of crm fails.
        let every = ExpectDrift {
            dep: None,
            ..expect("50%")
        };
        let before: Vec<BTreeMap<String, f64>> = earlier
            .iter()
            .map(|r| r.policies[0].figures.as_ref().unwrap().flat())
            .collect();
        let prev: Vec<Option<&BTreeMap<String, f64>>> = before.iter().map(Some).collect();
        let flat = now.policies[0].figures.as_ref().unwrap().flat();
        let r = rows(&[every], Some(&flat), &prev, 0);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].status, ExpectStatus::Fail, "{}", r[0].detail);
        assert!(r[0].detail.contains("new"), "{}", r[0].detail);
    }

    /// `r` as `DIR/NAME/report.json`, a run directory of the report dir `dir`.
    fn write_report(dir: &std::path::Path, name: &str, r: &Report) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(
            dir.join(name).join("report.json"),
            serde_json::to_string(r).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn runs_of_another_scenario_digest_are_left_out_and_counted() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, r: &Report| write_report(d.path(), name, r);
        let with = |i: u32, digest: Option<&str>| {
            let mut r = run(&format!("2026-11-0{i}T06:00:00.000Z"), "pass", Some(1), "1");
            r.scenario_digest = digest.map(str::to_string);
            r
        };
        write("20261101T060000Z-smoke", &with(1, None));
        write("20261102T060000Z-smoke", &with(2, Some("sha256:aa")));
        write("20261103T060000Z-smoke", &with(3, Some("sha256:bb")));
        write("20261104T060000Z-smoke", &with(4, Some("sha256:aa")));
        let now = with(5, Some("sha256:bb"));
        let entries = list_runs(d.path());
        let rels: Vec<&str> = earlier_runs(&entries, &now, None)
            .iter()
            .map(|(r, _)| *r)
            .collect();
        assert_eq!(rels, ["20261103T060000Z-smoke"]);
        let left = left_out(&entries, &now, None);
        let want = vec![
            LeftOut {
                digest: Some("sha256:aa".into()),
                runs: 2,
            },
            LeftOut {
                digest: None,
                runs: 1,
            },
        ];
        assert_eq!(left, want);
        let s = section(&now, &[], left, 4, 0.25);
        assert!(s.note.as_deref().unwrap_or("").contains("this version of the scenario"), "{s:?}");
        let text = s.left_out_text().unwrap_or_default();
        assert!(text.contains("2 runs of scenario digest aa"), "{text}");
        assert!(text.contains("1 run written before reports recorded"), "{text}");
    }

    #[test]
    fn earlier_runs_are_the_same_scenario_and_kind_finished_and_before() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, r: &Report| write_report(d.path(), name, r);
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
