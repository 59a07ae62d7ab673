//! Two scorecards side by side (pure): the cells that flipped class (or meet/miss what their
//! matrix expects), the key figures whose range moved past the drift threshold and noise floor
//! the runs' figures use (`history::drift::moved`: 25 %, 100 ms for a time, 0.5 for a count),
//! and the cells in one scorecard only. `rehearse compare A B` when both hold a scorecard.json;
//! `rehearse history` says what changed since the previous scorecard of the same matrix.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::drift::moved;
use crate::matrix::scorecard::{Cell, Range, Scorecard};

/// A cell in both scorecards whose class or meeting changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flip {
    /// The case.
    pub case: String,
    /// The target.
    pub target: String,
    /// A's repeats per class (`2/2 pass`).
    pub a: String,
    /// B's.
    pub b: String,
    /// A's cell met what its matrix expected.
    pub a_meets: bool,
    /// B's.
    pub b_meets: bool,
}

/// A figure whose range moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// The case.
    pub case: String,
    /// The target.
    pub target: String,
    /// The figure.
    pub figure: String,
    /// A's range (`None`: A has none).
    pub a: Option<Range>,
    /// B's range.
    pub b: Option<Range>,
}

/// What changed from A to B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScorecardComparison {
    /// A as given.
    pub a: String,
    /// B as given.
    pub b: String,
    /// Cells that flipped.
    pub flipped: Vec<Flip>,
    /// Figures that drifted.
    pub drifted: Vec<Drift>,
    /// Cells in B only (`case × target`).
    pub added: Vec<String>,
    /// Cells in A only.
    pub gone: Vec<String>,
}

fn shown(c: &Cell) -> String {
    c.counts_text()
}

/// What changed from `a` to `b`, figures judged at `threshold` (a fraction).
pub fn compare(a_name: &str, a: &Scorecard, b_name: &str, b: &Scorecard, threshold: f64) -> ScorecardComparison {
    let find = |s: &'_ Scorecard, c: &Cell| {
        s.cells
            .iter()
            .find(|x| x.case == c.case && x.target == c.target)
            .cloned()
    };
    let mut out = ScorecardComparison {
        a: a_name.to_string(),
        b: b_name.to_string(),
        flipped: Vec::new(),
        drifted: Vec::new(),
        added: Vec::new(),
        gone: Vec::new(),
    };
    for cb in &b.cells {
        let Some(ca) = find(a, cb) else {
            out.added.push(format!("{} × {}", cb.case, cb.target));
            continue;
        };
        if ca.class != cb.class || ca.counts != cb.counts || ca.meets != cb.meets {
            out.flipped.push(Flip {
                case: cb.case.clone(),
                target: cb.target.clone(),
                a: shown(&ca),
                b: shown(cb),
                a_meets: ca.meets,
                b_meets: cb.meets,
            });
        }
        let names: std::collections::BTreeSet<&String> =
            ca.figures.keys().chain(cb.figures.keys()).collect();
        for n in names {
            let (ra, rb) = (ca.figures.get(n).copied(), cb.figures.get(n).copied());
            let drifted = match (ra, rb) {
                (Some(x), Some(y)) => {
                    moved(n, x.min as f64, y.min as f64, threshold)
                        || moved(n, x.max as f64, y.max as f64, threshold)
                }
                (None, None) => false,
                _ => true,
            };
            if drifted {
                out.drifted.push(Drift {
                    case: cb.case.clone(),
                    target: cb.target.clone(),
                    figure: n.clone(),
                    a: ra,
                    b: rb,
                });
            }
        }
    }
    for ca in &a.cells {
        if find(b, ca).is_none() {
            out.gone.push(format!("{} × {}", ca.case, ca.target));
        }
    }
    out
}

impl ScorecardComparison {
    /// Nothing changed.
    pub fn unchanged(&self) -> bool {
        self.flipped.is_empty() && self.drifted.is_empty() && self.added.is_empty() && self.gone.is_empty()
    }

    /// The text `rehearse compare` prints.
    pub fn text(&self) -> String {
        let mut o = format!("scorecard A: {}\nscorecard B: {}\n", self.a, self.b);
        if self.unchanged() {
            o.push_str("no cell flipped, no figure drifted\n");
        }
        for f in &self.flipped {
            let meets = |m: bool| if m { "as expected" } else { "NOT as expected" };
            let _ = writeln!(
                o,
                "flipped  {} × {}: {} ({}) → {} ({})",
                f.case,
                f.target,
                f.a,
                meets(f.a_meets),
                f.b,
                meets(f.b_meets)
            );
        }
        for d in &self.drifted {
            let r = |x: &Option<Range>| x.map_or("—".to_string(), |r| r.text());
            let _ = writeln!(o, "drifted  {} × {}: {} {} → {}", d.case, d.target, d.figure, r(&d.a), r(&d.b));
        }
        for c in &self.added {
            let _ = writeln!(o, "new      {c}");
        }
        for c in &self.gone {
            let _ = writeln!(o, "gone     {c}");
        }
        o
    }
}

/// The scorecard at `path` (a scorecard.json, or a directory holding one); `None` when there is
/// none, `Err` when there is one that does not parse (with line:col).
pub fn read(path: &Path) -> Option<Result<Scorecard, String>> {
    let file = if path.is_dir() {
        path.join(crate::matrix::scorecard::JSON)
    } else {
        path.to_path_buf()
    };
    if file.file_name()? != crate::matrix::scorecard::JSON || !file.is_file() {
        return None;
    }
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => return Some(Err(format!("{}: {e}", file.display()))),
    };
    Some(serde_json::from_str(&text).map_err(|e| {
        format!("{}:{}:{}: {e}", file.display(), e.line(), e.column())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::class::Class;
    use crate::matrix::facts::Figures;
    use crate::matrix::file::Expected;
    use crate::matrix::scorecard::{Run, SCHEMA_VERSION, cell};

    fn card(cells: &[(&str, Class, u64)]) -> Scorecard {
        let cells = cells
            .iter()
            .map(|(case, class, up)| {
                let run = Run {
                    repeat: 1,
                    class: *class,
                    exit: Some(0),
                    seconds: 1.0,
                    report_dir: None,
                    verdict: None,
                    reason: None,
                    stopped: false,
                    figures: Figures {
                        upstream_requests: Some(*up),
                        answer_ms_max: Some(1000),
                        ..Figures::default()
                    },
                };
                cell(case, "gw", vec![run], &Expected::default())
            })
            .collect();
        Scorecard {
            schema_version: SCHEMA_VERSION,
            matrix: "m.toml".into(),
            description: None,
            started_at: String::new(),
            duration_ms: 0,
            rehearse_version: None,
            repeats: 1,
            jobs: 1,
            starts: None,
            stopped: None,
            ok: true,
            cases: vec![],
            targets: vec![],
            cells,
        }
    }

    #[test]
    fn a_flipped_cell_and_a_drifted_figure_are_named_noise_is_not() {
        let a = card(&[("500-once", Class::Pass, 12), ("silence", Class::Pass, 20), ("old", Class::Pass, 1)]);
        let b = card(&[("500-once", Class::Fail, 13), ("silence", Class::Pass, 40), ("new", Class::Pass, 1)]);
        let c = compare("A", &a, "B", &b, 0.25);
        assert_eq!(c.flipped.len(), 1);
        assert_eq!(c.flipped[0].case, "500-once");
        assert_eq!((c.flipped[0].a.as_str(), c.flipped[0].b.as_str()), ("1/1 pass", "1/1 fail"));
        assert!(c.flipped[0].a_meets && !c.flipped[0].b_meets);
        // 12 → 13 is within 25 %; 20 → 40 is not.
        assert_eq!(c.drifted.len(), 1, "{:?}", c.drifted);
        assert_eq!((c.drifted[0].case.as_str(), c.drifted[0].figure.as_str()), ("silence", "upstream_requests"));
        assert_eq!(c.added, ["new × gw"]);
        assert_eq!(c.gone, ["old × gw"]);
        assert!(c.text().contains("flipped  500-once × gw: 1/1 pass (as expected) → 1/1 fail (NOT as expected)"));
        assert!(compare("A", &a, "A", &a, 0.25).unchanged());
    }
}
