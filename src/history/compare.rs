//! `rehearse compare RUN_A RUN_B`: two runs' key figures and expectations side by side, with
//! what changed (for an incident review). Pure: [`compare`] over two reports.
//!
//! Figures are matched by arm and flat name; a figure counts as changed when it moved past the
//! drift threshold and noise floor (`history::drift::moved`) or is in one run only.
//! Expectations are matched by arm, kind, subject and what was expected (in order where a
//! scenario repeats one); a row counts as changed when its status differs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde::Serialize;

use super::drift::{arm_figures, moved, system_of};
use crate::report::counts::Counts;
use crate::report::drift::DEFAULT_THRESHOLD;
use crate::report::model::Report;
use crate::verdict::Witness;
use crate::verdict::drift::{change_text, show};

/// One side of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// The run directory as given.
    pub dir: String,
    /// Scenario.
    pub scenario: String,
    /// Start, RFC 3339.
    pub started_at: String,
    /// System under test.
    pub system: String,
    /// Verdict.
    pub verdict: String,
    /// Checks, failed, not reached.
    pub checks: usize,
    /// Failed checks.
    pub failed: usize,
    /// Not reached checks.
    pub not_reached: usize,
}

/// One figure in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct FigureDiff {
    /// The arm.
    pub policy: String,
    /// The flat name.
    pub figure: String,
    /// RUN_A's value.
    pub a: Option<f64>,
    /// RUN_B's value.
    pub b: Option<f64>,
    /// `+42%`, `new`, `gone`.
    pub change: String,
    /// It changed (past the threshold and noise floor, or in one run only).
    pub changed: bool,
}

/// One expectation in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct ExpectationDiff {
    /// The arm.
    pub policy: String,
    /// The kind.
    pub kind: String,
    /// Its subject (dep, profile, a metric's series).
    pub dep: Option<String>,
    /// What was expected.
    pub expected: String,
    /// RUN_A's status and observed value (null: not in RUN_A).
    pub a: Option<(String, String)>,
    /// RUN_B's.
    pub b: Option<(String, String)>,
    /// What RUN_A's row was judged on (`{}`: a report written before witnesses; null: not in
    /// RUN_A).
    pub a_witness: Option<Witness>,
    /// RUN_B's.
    pub b_witness: Option<Witness>,
    /// The status differs (or the row is in one run only).
    pub changed: bool,
}

/// A way the two runs differ besides their system under test, which makes a starred
/// difference something other than a regression: seed, speed, scenario digest, rehearse
/// version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Caveat {
    /// `seed`, `speed`, `scenario digest`, `rehearse version`.
    pub what: String,
    /// RUN_A's (null: not recorded).
    pub a: Option<String>,
    /// RUN_B's.
    pub b: Option<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// How the runs differ in seed, speed, scenario digest or rehearse version (first, so a
    /// reader sees it before any starred difference).
    pub caveats: Vec<Caveat>,
    /// The caveats in one sentence (null when there are none).
    pub caveat: Option<String>,
    /// RUN_A.
    pub a: Side,
    /// RUN_B.
    pub b: Side,
    /// `OpenClaw 2026.9.2 → 2026.9.6` when the system or its version differs.
    pub system_change: Option<String>,
    /// `the runs are of different scenarios` and the like.
    pub warnings: Vec<String>,
    /// Figures, arm then name order.
    pub figures: Vec<FigureDiff>,
    /// Expectations, in RUN_A's order then RUN_B's extra ones.
    pub expectations: Vec<ExpectationDiff>,
}

fn side(dir: &str, r: &Report) -> Side {
    let c = Counts::of(r);
    Side {
        dir: dir.to_string(),
        scenario: r.scenario.clone(),
        started_at: r.started_at.clone(),
        system: system_of(r).label(),
        verdict: r.verdict.as_str().to_string(),
        checks: c.checks,
        failed: c.failed,
        not_reached: c.not_reached,
    }
}

type Key = (String, String, Option<String>, String);
type Seen = ((String, String), Witness);

/// How `a` and `b` differ in what makes their figures comparable.
pub fn caveats(a: &Report, b: &Report) -> Vec<Caveat> {
    let mut out = Vec::new();
    let mut differ = |what: &str, x: Option<String>, y: Option<String>| {
        if x != y {
            out.push(Caveat {
                what: what.into(),
                a: x,
                b: y,
            });
        }
    };
    differ("seed", Some(a.seed.to_string()), Some(b.seed.to_string()));
    differ("speed", Some(format!("×{}", a.speed)), Some(format!("×{}", b.speed)));
    let short = |r: &Report| {
        r.scenario_digest
            .as_deref()
            .map(|d| crate::scenario::digest::short(d).to_string())
    };
    differ("scenario digest", short(a), short(b));
    differ(
        "rehearse version",
        a.rehearse_version.clone(),
        b.rehearse_version.clone(),
    );
    out
}

/// The caveats as one sentence for the top of the output.
fn caveat_text(c: &[Caveat]) -> Option<String> {
    if c.is_empty() {
        return None;
    }
    let parts: Vec<String> = c
        .iter()
        .map(|x| {
            let v = |s: &Option<String>| s.clone().unwrap_or_else(|| "not recorded".into());
            format!("{} (A {}, B {})", x.what, v(&x.a), v(&x.b))
        })
        .collect();
    Some(format!(
        "the runs differ in {}: a starred difference below may come from that, not from a \
         regression of the system under test",
        parts.join(", ")
    ))
}

fn rows(r: &Report) -> Vec<(Key, Seen)> {
    r.policies
        .iter()
        .flat_map(|p| {
            p.expectations.iter().map(move |e| {
                (
                    (
                        p.policy.clone(),
                        e.kind.as_str().to_string(),
                        e.dep.clone().or_else(|| e.series.clone()),
                        e.expected.clone(),
                    ),
                    (
                        (e.status.as_str().to_string(), e.observed.clone()),
                        e.witness.clone(),
                    ),
                )
            })
        })
        .collect()
}

/// Compares two reports.
pub fn compare(dir_a: &str, a: &Report, dir_b: &str, b: &Report) -> Comparison {
    let mut warnings = Vec::new();
    if a.scenario != b.scenario {
        warnings.push(format!(
            "the runs are of different scenarios (`{}`, `{}`)",
            a.scenario, b.scenario
        ));
    }
    let (sa, sb) = (system_of(a), system_of(b));
    let system_change = (sa != sb).then(|| format!("{} → {}", sa.label(), sb.label()));
    let (fa, fb) = (arm_figures(a), arm_figures(b));
    if fa.is_empty() || fb.is_empty() {
        warnings.push(
            "a run has no key figures (its report.json was written before they existed)".into(),
        );
    }
    let arms: BTreeSet<&str> = fa.keys().chain(fb.keys()).copied().collect();
    let mut figures = Vec::new();
    let empty = BTreeMap::new();
    for arm in arms {
        let (ma, mb) = (fa.get(arm).unwrap_or(&empty), fb.get(arm).unwrap_or(&empty));
        let names: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
        for n in names {
            let (va, vb) = (ma.get(n).copied(), mb.get(n).copied());
            let (change, changed) = match (va, vb) {
                (Some(x), Some(y)) => (change_text(x, y), moved(n, x, y, DEFAULT_THRESHOLD)),
                (None, Some(_)) => ("new".into(), true),
                (Some(_), None) => ("gone".into(), true),
                (None, None) => ("–".into(), false),
            };
            figures.push(FigureDiff {
                policy: arm.to_string(),
                figure: n.clone(),
                a: va,
                b: vb,
                change,
                changed,
            });
        }
    }
    let mut rb = rows(b);
    let mut expectations = Vec::new();
    for (key, (va, wa)) in rows(a) {
        let vb = rb
            .iter()
            .position(|(k, _)| *k == key)
            .map(|i| rb.remove(i).1);
        let changed = vb.as_ref().is_none_or(|vb| vb.0.0 != va.0);
        let (vb, wb) = vb.map_or((None, None), |(v, w)| (Some(v), Some(w)));
        expectations.push(ExpectationDiff {
            policy: key.0,
            kind: key.1,
            dep: key.2,
            expected: key.3,
            a: Some(va),
            b: vb,
            a_witness: Some(wa),
            b_witness: wb,
            changed,
        });
    }
    for (key, (vb, wb)) in rb {
        expectations.push(ExpectationDiff {
            policy: key.0,
            kind: key.1,
            dep: key.2,
            expected: key.3,
            a: None,
            b: Some(vb),
            a_witness: None,
            b_witness: Some(wb),
            changed: true,
        });
    }
    let caveats = caveats(a, b);
    Comparison {
        caveat: caveat_text(&caveats),
        caveats,
        a: side(dir_a, a),
        b: side(dir_b, b),
        system_change,
        warnings,
        figures,
        expectations,
    }
}

impl Comparison {
    /// The plain-text side by side.
    pub fn text(&self) -> String {
        let mut o = String::new();
        if let Some(c) = &self.caveat {
            let _ = writeln!(o, "CAVEAT: {c}");
        }
        for (label, s) in [("A", &self.a), ("B", &self.b)] {
            let _ = writeln!(
                o,
                "{label}: {}  {}  {}  {}  {}  ({} checks, {} failed, {} not reached)",
                s.dir, s.scenario, s.started_at, s.system, s.verdict, s.checks, s.failed, s.not_reached
            );
        }
        if let Some(c) = &self.system_change {
            let _ = writeln!(o, "system changed: {c}");
        }
        for w in &self.warnings {
            let _ = writeln!(o, "note: {w}");
        }
        let changed = self.figures.iter().filter(|f| f.changed).count();
        let _ = writeln!(o, "\nkey figures ({changed} changed):");
        for f in &self.figures {
            let v = |x: Option<f64>| x.map_or("–".into(), |x| show(&f.figure, x));
            let _ = writeln!(
                o,
                "  {} [{}] {}: {} → {} ({})",
                if f.changed { "*" } else { " " },
                f.policy,
                f.figure,
                v(f.a),
                v(f.b),
                f.change
            );
        }
        let changed = self.expectations.iter().filter(|e| e.changed).count();
        let _ = writeln!(o, "\nexpectations ({changed} changed):");
        for e in &self.expectations {
            let v = |x: &Option<(String, String)>| {
                x.as_ref().map_or("absent".into(), |(s, ob)| format!("{s} ({ob})"))
            };
            let _ = writeln!(
                o,
                "  {} [{}] {} {} {}: {} → {}",
                if e.changed { "*" } else { " " },
                e.policy,
                e.kind,
                e.dep.as_deref().unwrap_or(""),
                e.expected,
                v(&e.a),
                v(&e.b)
            );
            let w = |x: &Option<Witness>| match x {
                None => "absent".to_string(),
                Some(w) if w.is_empty() => "not recorded".to_string(),
                Some(w) => w.line(),
            };
            let _ = writeln!(
                o,
                "      witness: {} | {}",
                w(&e.a_witness),
                w(&e.b_witness)
            );
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(seed: u64, speed: f64, digest: Option<&str>, version: Option<&str>) -> Report {
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "scenario": "smoke", "verdict": "pass",
            "started_at": "2026-11-01T06:00:00.000Z", "speed": speed, "seed": seed, "host": {},
            "policies": [], "replay": {"sent": 0, "lag_ms": {"p50": 0.0, "p99": 0.0, "max": 0.0}},
            "config": {}, "rehearse_version": version, "scenario_digest": digest,
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn seed_speed_digest_and_version_differences_come_first_as_caveats() {
        let d = "sha256:1a2b3c4d5e6f00000000000000000000000000000000000000000000000000aa";
        let a = report(1, 5.0, Some(d), Some("0.1.0"));
        assert!(compare("a", &a, "b", &a).caveats.is_empty());
        assert_eq!(compare("a", &a, "b", &a).caveat, None);
        let b = report(2, 1.0, None, Some("0.2.0"));
        let c = compare("a", &a, "b", &b);
        let what: Vec<&str> = c.caveats.iter().map(|x| x.what.as_str()).collect();
        assert_eq!(what, ["seed", "speed", "scenario digest", "rehearse version"]);
        let text = c.text();
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with("CAVEAT: the runs differ in seed (A 1, B 2), speed (A ×5, B ×1), scenario digest (A 1a2b3c4d5e6f, B not recorded)"), "{first}");
        let json = serde_json::to_value(&c).unwrap_or_default();
        let keys: Vec<&String> = json.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        assert!(keys.contains(&&"caveats".to_string()), "{json}");
        assert_eq!(json["caveats"][3]["b"], "0.2.0");
    }
}
