//! One row per entry of a report dir, as `rehearse history` prints it, `--json` writes it and
//! the index pages show it: a run's time, scenario, system under test, verdict, expectation
//! counts and key figures, or an entry's note.

use std::collections::BTreeMap;

use serde::Serialize;

use super::drift::{arm_figures, system_of};
use super::list::RunEntry;
use crate::report::counts::Counts;
use crate::verdict::Witness;

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The run directory, relative to the report dir.
    pub dir: String,
    /// RFC 3339 start (null for a note).
    pub started_at: Option<String>,
    /// The scenario.
    pub scenario: Option<String>,
    /// The system under test (`rehearse engine 0.9.0`, `OpenClaw 2026.9.6`).
    pub system: Option<String>,
    /// Its kind (`engine`, `fleet`, `openclaw`, `http`).
    pub system_kind: Option<String>,
    /// pass | fail | incomplete | error.
    pub verdict: Option<String>,
    /// Why it is incomplete or errored.
    pub reason: Option<String>,
    /// The expectation counts.
    pub expectations: Option<ExpectationCounts>,
    /// Per arm, its key figures by flat name (empty in reports written before them).
    pub figures: BTreeMap<String, BTreeMap<String, f64>>,
    /// Figures flagged by the run's drift section (`arm/figure`).
    pub drifted: Vec<String>,
    /// The same, with how each changed (`new`, `gone`, `+42%`).
    pub drift: Vec<DriftFlag>,
    /// The scenario's digest (null: a report written before it).
    pub scenario_digest: Option<String>,
    /// Every expectation row of the run with what it was judged on.
    pub checks: Vec<Check>,
    /// Why the entry is not a readable run.
    pub note: Option<String>,
}

/// A figure the run's drift section flagged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftFlag {
    /// The arm.
    pub policy: String,
    /// The flat name.
    pub figure: String,
    /// `new`, `gone`, `+42%`, `from 0`.
    pub change: String,
}

/// One expectation row of a run, with its witness.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The arm.
    pub policy: String,
    /// The kind (`transition`, `drift`, ...).
    pub kind: String,
    /// Its subject (dep, profile, a metric's series, a figure).
    pub subject: Option<String>,
    /// What was expected.
    pub expected: String,
    /// pass | fail | not_reached | no_baseline.
    pub status: String,
    /// What was observed.
    pub observed: String,
    /// The row's explanation.
    pub detail: String,
    /// What it was judged on (`{}` in a report written before witnesses).
    pub witness: Witness,
}

impl Check {
    /// `FAIL [arm] drift open_ms{crm}: DETAIL (witness: baseline runs 3, ...)`.
    pub fn line(&self) -> String {
        let w = if self.witness.is_empty() {
            "not recorded".to_string()
        } else {
            self.witness.line()
        };
        format!(
            "{} [{}] {} {}: {} (witness: {w})",
            self.status.to_uppercase(),
            self.policy,
            self.kind,
            self.subject.as_deref().unwrap_or(""),
            self.detail
        )
    }

    /// Whether the listing shows it: a row that did not pass, and every drift row.
    pub fn shown(&self) -> bool {
        self.status != "pass" || self.kind == "drift"
    }
}

/// A run's expectations by status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExpectationCounts {
    /// Checks (one expectation in one arm).
    pub checks: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Not reached.
    pub not_reached: usize,
    /// Drift rows with no baseline yet.
    pub no_baseline: usize,
}

impl Row {
    /// The row of one entry.
    pub fn of(e: &RunEntry) -> Row {
        let Some(r) = e.report() else {
            return Row {
                dir: e.rel.clone(),
                started_at: None,
                scenario: None,
                system: None,
                system_kind: None,
                verdict: None,
                reason: None,
                expectations: None,
                figures: BTreeMap::new(),
                drifted: Vec::new(),
                drift: Vec::new(),
                scenario_digest: None,
                checks: Vec::new(),
                note: e.note().map(|n| n.text()),
            };
        };
        let c = Counts::of(r);
        let sys = system_of(r);
        Row {
            dir: e.rel.clone(),
            started_at: Some(r.started_at.clone()),
            scenario: Some(r.scenario.clone()),
            system: Some(sys.label()),
            system_kind: Some(sys.kind),
            verdict: Some(r.verdict.as_str().to_string()),
            reason: r.reason.clone(),
            expectations: Some(ExpectationCounts {
                checks: c.checks,
                passed: c.checks - c.failed - c.not_reached - c.no_baseline,
                failed: c.failed,
                not_reached: c.not_reached,
                no_baseline: c.no_baseline,
            }),
            figures: arm_figures(r)
                .into_iter()
                .map(|(a, f)| (a.to_string(), f))
                .collect(),
            drifted: r
                .drift
                .iter()
                .flat_map(|d| d.rows.iter().filter(|x| x.flagged))
                .map(|x| format!("{}/{}", x.policy, x.figure))
                .collect(),
            drift: r
                .drift
                .iter()
                .flat_map(|d| d.rows.iter().filter(|x| x.flagged))
                .map(|x| DriftFlag {
                    policy: x.policy.clone(),
                    figure: x.figure.clone(),
                    change: x.change(),
                })
                .collect(),
            scenario_digest: r.scenario_digest.clone(),
            checks: r
                .policies
                .iter()
                .flat_map(|p| {
                    p.expectations.iter().map(move |e| Check {
                        policy: p.policy.clone(),
                        kind: e.kind.as_str().to_string(),
                        subject: e.dep.clone().or_else(|| e.series.clone()),
                        expected: e.expected.clone(),
                        status: e.status.as_str().to_string(),
                        observed: e.observed.clone(),
                        detail: e.detail.clone(),
                        witness: e.witness.clone(),
                    })
                })
                .collect(),
            note: None,
        }
    }

    /// The flagged figures with their change: `retry-gate/open_ms{crm} (new)`.
    pub fn drift_text(&self) -> Vec<String> {
        self.drift
            .iter()
            .map(|d| format!("{}/{} ({})", d.policy, d.figure, d.change))
            .collect()
    }

    /// True for a run that did not pass (fail, incomplete, error).
    pub fn failed(&self) -> bool {
        self.verdict.as_deref().is_some_and(|v| v != "pass")
    }

    /// `3/4 passed, 1 failed` (empty for a note).
    pub fn counts_text(&self) -> String {
        let Some(c) = self.expectations else {
            return String::new();
        };
        let mut s = format!("{}/{} passed", c.passed, c.checks);
        if c.failed > 0 {
            s.push_str(&format!(", {} failed", c.failed));
        }
        if c.not_reached > 0 {
            s.push_str(&format!(", {} not reached", c.not_reached));
        }
        if c.no_baseline > 0 {
            s.push_str(&format!(", {} no baseline", c.no_baseline));
        }
        s
    }

    /// The figure's value under a column name (`figure`, or `arm/figure` for runs of several
    /// arms).
    pub fn value(&self, column: &str) -> Option<f64> {
        // Dep names may hold `/` (`openai/default/06bfb5`); arm names never do.
        match column.split_once('/') {
            Some((arm, f)) if self.figures.contains_key(arm) => {
                self.figures.get(arm)?.get(f).copied()
            }
            _ => self.figures.values().next()?.get(column).copied(),
        }
    }
}

/// The figure columns of some runs of one scenario: `figure` when every run has one arm (the
/// same), else `arm/figure`; in name order.
pub fn columns(rows: &[&Row]) -> Vec<String> {
    let arms: std::collections::BTreeSet<&String> =
        rows.iter().flat_map(|r| r.figures.keys()).collect();
    let mut cols = std::collections::BTreeSet::new();
    for r in rows {
        for (arm, f) in &r.figures {
            for name in f.keys() {
                cols.insert(if arms.len() == 1 {
                    name.clone()
                } else {
                    format!("{arm}/{name}")
                });
            }
        }
    }
    cols.into_iter().collect()
}
