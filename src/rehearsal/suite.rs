//! Suites: several scenarios run into one `<stamp>-suite/` directory, one
//! subdirectory per scenario, with an index (index.md + index.json: verdict, duration and report
//! link per scenario). The suite's exit code is the worst of its scenarios.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::report::model::Verdict;
use crate::util::write_atomic;

/// How bad a verdict is, for "the worst of them": pass < fail < incomplete < error.
pub(crate) fn severity(v: Verdict) -> u8 {
    match v {
        Verdict::Pass => 0,
        Verdict::Fail => 1,
        Verdict::Incomplete => 2,
        Verdict::Error => 3,
    }
}

/// The worst of several verdicts (pass when there are none).
pub(crate) fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    verdicts
        .into_iter()
        .max_by_key(|v| severity(*v))
        .unwrap_or(Verdict::Pass)
}

/// One row of the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexRow {
    /// Scenario name.
    pub scenario: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Why it is incomplete or errored.
    #[serde(default)]
    pub reason: Option<String>,
    /// Wall time the scenario took, ms.
    pub duration_ms: u64,
    /// Its report, relative to the suite directory (`smoke/report.md`).
    pub report: String,
}

/// index.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Index {
    /// Schema version of index.json.
    pub schema_version: u32,
    /// The worst verdict.
    pub verdict: Verdict,
    /// Suite start, RFC 3339.
    pub started_at: String,
    /// The `--speed` divisor (a number in index.json).
    pub speed: crate::util::speed::Speed,
    /// One row per scenario, in run order.
    pub scenarios: Vec<IndexRow>,
    /// What the suite did after its index: retention (`--keep`), `--on-fail` warnings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub housekeeping: Option<crate::report::housekeeping::Housekeeping>,
}

/// index.md.
fn render_markdown(index: &Index) -> String {
    let mut md = format!(
        "# Rehearsal suite: {}\n\nStarted {} · speed {} · {} scenarios\n\n",
        index.verdict.as_str().to_uppercase(),
        index.started_at,
        index.speed,
        index.scenarios.len()
    );
    md.push_str("| scenario | verdict | duration | report |\n|---|---|---|---|\n");
    for r in &index.scenarios {
        let verdict = match &r.reason {
            Some(why) => format!("{} ({})", r.verdict.as_str(), why.replace('|', "\\|")),
            None => r.verdict.as_str().to_string(),
        };
        md.push_str(&format!(
            "| {} | {} | {:.1} s | [{}]({}) |\n",
            r.scenario,
            verdict,
            r.duration_ms as f64 / 1000.0,
            r.report,
            r.report
        ));
    }
    crate::report::housekeeping::markdown(index.housekeeping.as_ref(), &mut md);
    md
}

/// Writes index.md and index.json into `dir` atomically.
pub(crate) fn write_index(dir: &Path, index: &Index) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(index).map_err(std::io::Error::other)?;
    write_atomic(&dir.join("index.json"), &json)?;
    write_atomic(&dir.join("index.md"), render_markdown(index).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, v: Verdict) -> IndexRow {
        IndexRow {
            scenario: name.into(),
            verdict: v,
            reason: None,
            duration_ms: 1500,
            report: format!("{name}/report.md"),
        }
    }

    #[test]
    fn worst_verdict_wins() {
        assert_eq!(
            worst([Verdict::Pass, Verdict::Fail, Verdict::Pass]),
            Verdict::Fail
        );
        assert_eq!(
            worst([Verdict::Fail, Verdict::Incomplete]),
            Verdict::Incomplete
        );
        assert_eq!(worst([]), Verdict::Pass);
    }

    #[test]
    fn index_has_one_row_per_scenario_with_links() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index {
            schema_version: 1,
            verdict: Verdict::Fail,
            started_at: "2026-11-29T19:00:00Z".into(),
            speed: crate::util::speed::sp(4.0),
            scenarios: vec![row("smoke", Verdict::Pass), row("weekly", Verdict::Fail)],
            housekeeping: None,
        };
        write_index(dir.path(), &index).unwrap();
        let md = std::fs::read_to_string(dir.path().join("index.md")).unwrap();
        assert!(
            md.contains("| smoke | pass | 1.5 s | [smoke/report.md](smoke/report.md) |"),
            "{md}"
        );
        assert!(md.contains("| weekly | fail |"), "{md}");
        let back: Index =
            serde_json::from_slice(&std::fs::read(dir.path().join("index.json")).unwrap()).unwrap();
        assert_eq!(back, index);
    }
}
