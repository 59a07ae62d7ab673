//! `rehearse history` and `rehearse compare`: the CLI edge. A report dir that does not exist
//! or is not a directory, a run directory without a readable report.json given to `compare`:
//! bad input (exit 2). Whatever a report dir holds is listed (notes for what is not a run),
//! never an error.

use std::path::Path;

use anyhow::anyhow;

use super::compare::{Comparison, compare};
use super::list::{EntryKind, list_runs, read_run};
use super::rows::Row;
use crate::cli::{CompareArgs, HistoryArgs};
use crate::exit::{CmdError, CmdResult, Status};
use crate::report::model::Report;
use crate::util::write_atomic;

/// Runs `rehearse history`: lists, writes index.html and index.md, exits 0.
pub(crate) fn history_command(args: HistoryArgs) -> CmdResult {
    let dir = &args.report_dir;
    if !dir.is_dir() {
        return Err(CmdError::bad_input(anyhow!(
            "{}: not a report directory (no such directory)",
            dir.display()
        )));
    }
    let cards = super::scorecards::list(dir);
    let rows: Vec<Row> = list_runs(dir)
        .iter()
        // A scorecard's directory is listed as a scorecard, not as a foreign entry.
        .filter(|e| e.report().is_some() || !super::scorecards::is_scorecard_dir(&e.dir))
        .map(Row::of)
        .filter(|r| {
            args.scenario
                .as_deref()
                .is_none_or(|s| r.note.is_some() || r.scenario.as_deref() == Some(s))
        })
        .collect();
    let write = |name: &str, text: String| {
        write_atomic(&dir.join(name), text.as_bytes())
            .map_err(|e| CmdError::harness(anyhow!("writing {}: {e}", dir.join(name).display())))
    };
    write("index.md", super::index::markdown(&rows))?;
    write("index.html", super::index::html(&rows))?;
    if args.json {
        let v = serde_json::json!({
            "report_dir": dir.display().to_string(),
            "runs": rows.iter().filter(|r| r.note.is_none()).collect::<Vec<_>>(),
            "notes": rows.iter().filter(|r| r.note.is_some()).collect::<Vec<_>>(),
            "scorecards": cards,
        });
        crate::outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print_table(&rows);
        for c in &cards {
            for l in c.lines() {
                crate::outln!("{l}");
            }
        }
        crate::outln!("index: {}", dir.join("index.html").display());
    }
    Ok(Status::Pass)
}

fn print_table(rows: &[Row]) {
    for r in rows {
        match &r.note {
            Some(n) => crate::outln!("{}  note: {n}", r.dir),
            None => {
                let figures: Vec<String> = r
                    .figures
                    .iter()
                    .flat_map(|(arm, f)| {
                        let prefix = if r.figures.len() > 1 { format!("{arm}/") } else { String::new() };
                        f.iter()
                            .map(move |(n, v)| format!("{prefix}{n}={}", crate::verdict::drift::show(n, *v)))
                    })
                    .collect();
                crate::outln!(
                    "{}  {}  {}  {}  {}  {}{}",
                    r.started_at.as_deref().unwrap_or(""),
                    r.scenario.as_deref().unwrap_or(""),
                    r.system.as_deref().unwrap_or(""),
                    r.verdict.as_deref().unwrap_or(""),
                    r.counts_text(),
                    r.dir,
                    if r.drift.is_empty() { String::new() } else { format!("  drift: {}", r.drift_text().join(", ")) }
                );
                if !figures.is_empty() {
                    crate::outln!("    {}", figures.join("  "));
                }
                for c in r.checks.iter().filter(|c| c.shown()) {
                    crate::outln!("    {}", c.line());
                }
            }
        }
    }
}

/// A run directory's report, or bad input naming it and why.
fn load(dir: &Path) -> Result<Report, CmdError> {
    match read_run(dir) {
        EntryKind::Run(r) => Ok(*r),
        EntryKind::Note(n) => Err(CmdError::bad_input(anyhow!(
            "{}: {}",
            dir.display(),
            n.text()
        ))),
    }
}

/// Runs `rehearse compare`: prints the two runs (or two scorecards) side by side, exits 0.
pub(crate) fn compare_command(args: CompareArgs) -> CmdResult {
    use super::scorecard_diff as cards;
    match (cards::read(&args.run_a), cards::read(&args.run_b)) {
        (None, None) => {}
        (Some(a), Some(b)) => {
            let a = a.map_err(|e| CmdError::bad_input(anyhow!("{e}")))?;
            let b = b.map_err(|e| CmdError::bad_input(anyhow!("{e}")))?;
            let c = cards::compare(
                &args.run_a.display().to_string(),
                &a,
                &args.run_b.display().to_string(),
                &b,
                crate::report::drift::DEFAULT_THRESHOLD,
            );
            if args.json {
                crate::outln!("{}", serde_json::to_string_pretty(&c).unwrap_or_default());
            } else {
                crate::outln!("{}", c.text().trim_end());
            }
            return Ok(Status::Pass);
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(CmdError::bad_input(anyhow!(
                "{} and {}: one is a scorecard, the other is not: compare two runs or two scorecards",
                args.run_a.display(),
                args.run_b.display()
            )));
        }
    }
    let a = load(&args.run_a)?;
    let b = load(&args.run_b)?;
    let c: Comparison = compare(
        &args.run_a.display().to_string(),
        &a,
        &args.run_b.display().to_string(),
        &b,
    );
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&c).unwrap_or_default());
    } else {
        crate::outln!("{}", c.text());
    }
    Ok(Status::Pass)
}
