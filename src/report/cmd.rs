//! `rehearse report RUN_DIR`: re-render report.md and report.html from the run's report.json.
//! A missing or malformed report.json is bad input (exit 2) naming the file (and line:col).

use anyhow::anyhow;

use super::model::Report;
use super::write::write_rendered;
use crate::cli::ReportArgs;
use crate::exit::{CmdError, CmdResult, Status};

/// Runs `rehearse report`. Exits 0 when the files were re-rendered, whatever the run's verdict.
pub fn command(args: ReportArgs) -> CmdResult {
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
    println!("report: {}", args.run_dir.join("report.md").display());
    Ok(Status::Pass)
}
