//! `rehearse report RUN_DIR`: re-render report.md, report.html and report.junit.xml from the run's
//! report.json.
//! A missing or malformed report.json is bad input (exit 2) naming the file (and line:col).
//! Otherwise it exits with the report's own verdict (0 pass, 1 fail, 3 incomplete or error), so
//! a CI step that re-renders a report still fails on a failed run.

use anyhow::anyhow;

use super::model::Report;
use super::write::write_rendered;
use crate::cli::ReportArgs;
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse report`: re-renders, prints the verdict, exits with it.
pub(crate) fn command(args: ReportArgs) -> CmdResult {
    let path = args.run_dir.join("report.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CmdError::bad_input(anyhow!("{}: {e}", path.display())))?;
    let report: Report = serde_json::from_str(&text).or_else(|e| {
        // A report.json from before a field existed: fill it in, else name the first error.
        serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|mut v| {
                Report::upgrade_json(&mut v);
                serde_json::from_value(v).ok()
            })
            .ok_or_else(|| {
                CmdError::bad_input(anyhow!(
                    "{}:{}:{}: {e}",
                    path.display(),
                    e.line(),
                    e.column()
                ))
            })
    })?;
    write_rendered(&args.run_dir, &report).map_err(|e| {
        CmdError::harness(anyhow!(
            "writing reports in {}: {e}",
            args.run_dir.display()
        ))
    })?;
    let reason = report
        .reason
        .as_deref()
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    crate::outln!("{}: {}{reason}", report.scenario, report.verdict.as_str());
    crate::outln!("report: {}", args.run_dir.join("report.md").display());
    report.verdict.into_result(report.reason.as_deref())
}
