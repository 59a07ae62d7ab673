//! `scorecard.json`'s model (docs/scorecard.schema.json) and the one pure step from the runs of
//! a matrix to its cells: K of K per class, the range of the key figures, the reason, and
//! whether each cell meets what the matrix file expects of it ([`meets`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::class::Class;
use super::facts::{Figures, Header};
use super::file::Expected;

/// The scorecard's schema version: new fields are optional on read; a change that is not is a
/// new version.
pub const SCHEMA_VERSION: u32 = 1;

/// The file names a matrix writes in its output directory.
pub const JSON: &str = "scorecard.json";
/// The Markdown table.
pub const MD: &str = "scorecard.md";
/// The self-contained HTML table.
pub const HTML: &str = "scorecard.html";

/// One matrix's scorecard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scorecard {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The matrix file as given.
    pub matrix: String,
    /// Its description.
    #[serde(default)]
    pub description: Option<String>,
    /// When the matrix started, RFC 3339 UTC.
    pub started_at: String,
    /// Its wall time, ms.
    pub duration_ms: u64,
    /// The `rehearse --version` that ran it.
    #[serde(default)]
    pub rehearse_version: Option<String>,
    /// Repeats of every cell.
    pub repeats: u32,
    /// Most cells at once (`--jobs`).
    pub jobs: u32,
    /// Most runs starting at once (`--starts`; `None`: a scorecard from before it).
    #[serde(default)]
    pub starts: Option<u32>,
    /// Why it stopped before every run was done (`None`: it finished).
    #[serde(default)]
    pub stopped: Option<String>,
    /// Every cell met what the matrix file expects of it.
    pub ok: bool,
    /// The cases, rows in order.
    pub cases: Vec<String>,
    /// The targets, columns in order.
    pub targets: Vec<Column>,
    /// One per case × target the matrix runs, case-major.
    pub cells: Vec<Cell>,
}

/// One column: the target as the matrix file names it and as its reports describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// Its name in the matrix file.
    pub name: String,
    /// Its target file (`None`: the embedded engine).
    #[serde(default)]
    pub file: Option<String>,
    /// Its speed.
    pub speed: f64,
    /// Kind, gateway version and config digest, from its first report that says them.
    #[serde(flatten)]
    pub header: Header,
}

/// One case × target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The case.
    pub case: String,
    /// The target's name.
    pub target: String,
    /// The class every repeat had (`None`: they differ — `flaky`).
    #[serde(default)]
    pub class: Option<Class>,
    /// Repeats per class (only the classes that occurred).
    pub counts: BTreeMap<Class, u32>,
    /// The repeats differ in class.
    pub flaky: bool,
    /// What the matrix file expects of it.
    pub expected: Vec<Class>,
    /// Whether the file lets its repeats differ.
    #[serde(default)]
    pub flaky_ok: bool,
    /// It meets what is expected of it.
    pub meets: bool,
    /// One line: the first non-passing repeat's reason (the first failed row's detail, else
    /// its report's reason, else what the run said).
    #[serde(default)]
    pub reason: Option<String>,
    /// Each key figure's range over the repeats that have it.
    #[serde(default)]
    pub figures: BTreeMap<String, Range>,
    /// Every repeat.
    pub runs: Vec<Run>,
}

/// A figure's least and greatest value over the repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    /// Least.
    pub min: u64,
    /// Greatest.
    pub max: u64,
}

impl Range {
    /// `3` or `2–4`.
    pub fn text(&self) -> String {
        if self.min == self.max {
            self.min.to_string()
        } else {
            format!("{}–{}", self.min, self.max)
        }
    }
}

/// One repeat of a cell: one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// 1-based repeat.
    pub repeat: u32,
    /// Its class.
    pub class: Class,
    /// Its exit code (`None`: not run, or killed by a signal).
    #[serde(default)]
    pub exit: Option<i32>,
    /// Its wall time, s.
    #[serde(default)]
    pub seconds: f64,
    /// Its report directory, relative to the scorecard (`None`: none was written).
    #[serde(default)]
    pub report_dir: Option<String>,
    /// Its verdict, from its report.
    #[serde(default)]
    pub verdict: Option<String>,
    /// Why, in one line (its report's, or what the run said on stderr).
    #[serde(default)]
    pub reason: Option<String>,
    /// It ended after the matrix's stop request (stopped by it, or ending as it came).
    #[serde(default)]
    pub stopped: bool,
    /// Its key figures.
    #[serde(default)]
    pub figures: Figures,
}

/// Whether runs of these classes meet `expected`: all one class and that class expected; or,
/// with `flaky_ok`, each an expected class. A run not run never meets.
pub fn meets(classes: &[Class], expected: &Expected) -> bool {
    if classes.is_empty() || classes.contains(&Class::NotRun) {
        return false;
    }
    let all_expected = classes.iter().all(|c| expected.classes.contains(c));
    let same = classes.windows(2).all(|w| w[0] == w[1]);
    all_expected && (same || expected.flaky_ok)
}

/// The cell of `runs` (one per repeat, in order).
pub fn cell(case: &str, target: &str, runs: Vec<Run>, expected: &Expected) -> Cell {
    let classes: Vec<Class> = runs.iter().map(|r| r.class).collect();
    let mut counts = BTreeMap::new();
    for c in &classes {
        *counts.entry(*c).or_insert(0) += 1;
    }
    let flaky = counts.len() > 1;
    let mut figures: BTreeMap<String, Range> = BTreeMap::new();
    for r in &runs {
        for (name, v) in r.figures.named() {
            let Some(v) = v else { continue };
            figures
                .entry(name.to_string())
                .and_modify(|g| {
                    g.min = g.min.min(v);
                    g.max = g.max.max(v);
                })
                .or_insert(Range { min: v, max: v });
        }
    }
    let reason = runs
        .iter()
        .find(|r| r.class != Class::Pass)
        .and_then(|r| r.reason.clone());
    Cell {
        case: case.to_string(),
        target: target.to_string(),
        class: (!flaky).then(|| classes.first().copied()).flatten(),
        counts,
        flaky,
        expected: expected.classes.clone(),
        flaky_ok: expected.flaky_ok,
        meets: meets(&classes, expected),
        reason,
        figures,
        runs,
    }
}

impl Cell {
    /// `2/2 pass` or `1/2 pass, 1/2 fail`.
    pub fn counts_text(&self) -> String {
        let k = self.runs.len();
        self.counts
            .iter()
            .map(|(c, n)| format!("{n}/{k} {}", c.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The class shown (`flaky` when the repeats differ).
    pub fn shown_class(&self) -> &'static str {
        self.class.map_or("flaky", Class::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(repeat: u32, class: Class, upstream: u64) -> Run {
        Run {
            repeat,
            class,
            exit: Some(0),
            seconds: 1.0,
            report_dir: None,
            verdict: None,
            reason: (class != Class::Pass).then(|| format!("why {repeat}")),
            stopped: false,
            figures: Figures {
                upstream_requests: Some(upstream),
                ..Figures::default()
            },
        }
    }

    fn expect(classes: &[Class], flaky_ok: bool) -> Expected {
        Expected {
            classes: classes.to_vec(),
            flaky_ok,
        }
    }

    #[test]
    fn a_cell_counts_its_repeats_and_ranges_its_figures() {
        let c = cell(
            "500-once",
            "gw",
            vec![run(1, Class::Pass, 14), run(2, Class::Fail, 12), run(3, Class::Pass, 13)],
            &expect(&[Class::Pass], false),
        );
        assert!(c.flaky);
        assert_eq!(c.class, None);
        assert_eq!(c.shown_class(), "flaky");
        assert_eq!(c.counts_text(), "2/3 pass, 1/3 fail");
        assert_eq!(c.figures["upstream_requests"], Range { min: 12, max: 14 });
        assert_eq!(c.figures["upstream_requests"].text(), "12–14");
        assert_eq!(c.reason.as_deref(), Some("why 2"));
        assert!(!c.meets, "a flaky cell meets nothing without flaky_ok");
    }

    #[test]
    fn meets_needs_one_expected_class_or_flaky_ok() {
        use Class::*;
        let pass = expect(&[Pass], false);
        assert!(meets(&[Pass, Pass], &pass));
        assert!(!meets(&[Fail, Fail], &pass));
        assert!(!meets(&[Pass, Fail], &pass));
        assert!(meets(&[Fail, Fail], &expect(&[Fail], false)));
        assert!(meets(&[Fail, Fail], &expect(&[Pass, Fail], false)));
        assert!(!meets(&[Pass, Fail], &expect(&[Pass, Fail], false)));
        assert!(meets(&[Pass, Fail], &expect(&[Pass, Fail], true)));
        assert!(!meets(&[Pass, Error], &expect(&[Pass, Fail], true)));
        assert!(!meets(&[Pass, NotRun], &expect(&[Pass], true)));
        assert!(!meets(&[], &pass));
    }
}
