//! The scorecards under a report dir (`rehearse matrix`'s output directories, each holding a
//! scorecard.json): listed by `rehearse history` beside the runs, each with what changed since
//! the previous scorecard of the same matrix file (cells that flipped, figures that drifted:
//! `history::scorecard_diff`). A directory with a scorecard.json is a scorecard, never a foreign note.

use std::path::Path;

use serde::Serialize;

use super::scorecard_diff::{ScorecardComparison, compare, read};
use crate::report::drift::DEFAULT_THRESHOLD;

/// One scorecard of a report dir.
#[derive(Debug, Clone, Serialize)]
pub struct ScorecardRow {
    /// Its directory, relative to the report dir.
    pub dir: String,
    /// The matrix file it ran.
    pub matrix: Option<String>,
    /// When it started.
    pub started_at: Option<String>,
    /// Cells that met what the matrix expects, of all cells.
    pub cells_met: usize,
    /// All cells.
    pub cells: usize,
    /// Why it stopped early.
    pub stopped: Option<String>,
    /// Every cell as expected, and it finished.
    pub ok: bool,
    /// What changed since the previous scorecard of the same matrix (`None`: the first).
    pub since_previous: Option<ScorecardComparison>,
    /// Why its scorecard.json could not be read.
    pub note: Option<String>,
}

/// Every child directory of `dir` that holds a scorecard.json, by start (oldest first).
pub fn list(dir: &Path) -> Vec<ScorecardRow> {
    let Ok(read_dir) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, Result<crate::matrix::scorecard::Scorecard, String>)> = read_dir
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            read(&e.path()).map(|r| (name, r))
        })
        .collect();
    found.sort_by(|a, b| {
        let key = |x: &(String, Result<crate::matrix::scorecard::Scorecard, String>)| {
            (x.1.as_ref().map(|s| s.started_at.clone()).unwrap_or_default(), x.0.clone())
        };
        key(a).cmp(&key(b))
    });
    let mut rows = Vec::new();
    for (i, (name, card)) in found.iter().enumerate() {
        let row = match card {
            Err(e) => ScorecardRow {
                dir: name.clone(),
                matrix: None,
                started_at: None,
                cells_met: 0,
                cells: 0,
                stopped: None,
                ok: false,
                since_previous: None,
                note: Some(format!("scorecard.json unreadable: {e}")),
            },
            Ok(s) => {
                let previous = found[..i].iter().rev().find_map(|(n, c)| {
                    c.as_ref().ok().filter(|p| p.matrix == s.matrix).map(|p| (n, p))
                });
                ScorecardRow {
                    dir: name.clone(),
                    matrix: Some(s.matrix.clone()),
                    started_at: Some(s.started_at.clone()),
                    cells_met: s.cells.iter().filter(|c| c.meets).count(),
                    cells: s.cells.len(),
                    stopped: s.stopped.clone(),
                    ok: s.ok,
                    since_previous: previous
                        .map(|(n, p)| compare(n, p, name, s, DEFAULT_THRESHOLD)),
                    note: None,
                }
            }
        };
        rows.push(row);
    }
    rows
}

/// Whether `dir` (a child of a report dir) is a scorecard's.
pub fn is_scorecard_dir(dir: &Path) -> bool {
    dir.join(crate::matrix::scorecard::JSON).is_file()
}

impl ScorecardRow {
    /// The lines `rehearse history` prints for it.
    pub fn lines(&self) -> Vec<String> {
        if let Some(n) = &self.note {
            return vec![format!("{}  note: {n}", self.dir)];
        }
        let mut v = vec![format!(
            "{}  scorecard {}  {}/{} cells as expected{}  {}",
            self.started_at.as_deref().unwrap_or(""),
            self.matrix.as_deref().unwrap_or(""),
            self.cells_met,
            self.cells,
            self.stopped.as_deref().map(|s| format!(" (stopped: {s})")).unwrap_or_default(),
            self.dir
        )];
        if let Some(c) = &self.since_previous {
            if c.unchanged() {
                v.push(format!("    since {}: no cell flipped, no figure drifted", c.a));
            }
            for f in &c.flipped {
                v.push(format!("    since {}: flipped {} × {}: {} → {}", c.a, f.case, f.target, f.a, f.b));
            }
            for d in &c.drifted {
                let r = |x: &Option<crate::matrix::scorecard::Range>| x.map_or("—".to_string(), |r| r.text());
                v.push(format!("    since {}: drifted {} × {} {}: {} → {}", c.a, d.case, d.target, d.figure, r(&d.a), r(&d.b)));
            }
        }
        v
    }
}
