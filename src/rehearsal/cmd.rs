//! `rehearse run` / `rehearse --scenario`: the CLI edge. Builds the plan (bad input → exit 2),
//! takes the run lock (held → exit 3 naming the holder), runs every scenario and policy, writes
//! the reports and prints `report: PATH` as the last stdout line. Exit: 0 pass, 1 an expectation
//! failed, 3 incomplete (signal, the machine's sleep) or harness failure; a suite exits with its
//! worst scenario. On macOS the whole run holds a no-sleep assertion
//! ([`crate::util::suspend::Awake`]); when it cannot, every report's notes say so.

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, anyhow};

use super::after::{self, After};
use super::sut::SystemUnderTest;
use crate::cli::RunArgs;
use crate::exit::{CmdError, CmdResult};
use crate::report::model::{ExpectStatus, Report, Verdict};
use crate::report::rfc3339;
use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::plan::{RunPlan, ScenarioPlan, build};
use crate::rundir::{self, safe_name};
use crate::rehearsal::suite::{Index, IndexRow, worst, write_index};
use crate::util::shutdown::Shutdown;

/// Runs `rehearse run`.
pub(crate) fn command(args: RunArgs) -> CmdResult {
    let plan = build(&args).map_err(CmdError::bad_input)?;
    for sp in &plan.scenarios {
        for w in &sp.checked.warnings {
            crate::errln!("warning: {}: {w}", crate::builtin::shown(&sp.checked.path));
        }
    }
    std::fs::create_dir_all(&plan.report_dir)
        .with_context(|| format!("creating {}", plan.report_dir.display()))
        .map_err(CmdError::harness)?;
    let names: Vec<String> = plan
        .scenarios
        .iter()
        .map(|s| s.name().to_string())
        .collect();
    let lock = crate::rundir::lock::RunLock::acquire_for(&plan.report_dir, &names)
        .map_err(|e| CmdError::harness(anyhow!("{e}")))?;
    if let Some(stale) = lock.took_over() {
        crate::errln!(
            "note: took over the stale run lock {} of pid {} on {} since {} (a run that was killed)",
            lock.path().display(),
            stale.pid,
            stale.host,
            stale.since
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
        .map_err(CmdError::harness)?;
    let result = rt.block_on(execute(&plan, &After::of(&args)));
    // Stalled upstream connections may still sleep; never wait for them.
    rt.shutdown_timeout(Duration::from_millis(500));
    result
}

async fn execute(plan: &RunPlan, after: &After) -> CmdResult {
    let stop = Shutdown::new();
    stop.listen_for_signals()
        .context("installing SIGINT/SIGTERM handlers")
        .map_err(CmdError::harness)?;
    // Held until every report is written and its housekeeping done; released on every return.
    let awake = crate::util::suspend::Awake::hold();
    let note = awake.note();
    let now = SystemTime::now();
    if let [only] = plan.scenarios.as_slice() {
        let dir = rundir::create(&plan.report_dir, only.name(), now)
            .with_context(|| {
                format!(
                    "creating a run directory under {}",
                    plan.report_dir.display()
                )
            })
            .map_err(CmdError::harness)?;
        after::mark(&dir, &[only.name().to_string()], now);
        let started = tokio::time::Instant::now();
        let report = match run_scenario(only, &dir, &plan.report_dir, &stop, plan.plain_progress, note).await {
            Ok(r) => r,
            Err(e) => {
                after::harness_failed(after, only.name(), &dir, started.elapsed()).await;
                return Err(e);
            }
        };
        let report = after::single(after, &plan.report_dir, &dir, report, started.elapsed()).await;
        print_outcome(&report);
        crate::outln!("report: {}", dir.join("report.md").display());
        return report.verdict.into_result(report.reason.as_deref());
    }
    let dir = rundir::create(&plan.report_dir, "suite", now)
        .with_context(|| {
            format!(
                "creating a run directory under {}",
                plan.report_dir.display()
            )
        })
        .map_err(CmdError::harness)?;
    let names: Vec<String> = plan.scenarios.iter().map(|s| s.name().to_string()).collect();
    after::mark(&dir, &names, now);
    let mut rows = Vec::new();
    for sp in &plan.scenarios {
        let sub = safe_name(sp.name());
        let sub = unique_subdir(&dir, &sub);
        let started = tokio::time::Instant::now();
        let (verdict, reason) = if let Some(why) = stop.reason() {
            (Verdict::Incomplete, Some(format!("not run: {why}")))
        } else {
            std::fs::create_dir_all(dir.join(&sub))
                .with_context(|| format!("creating {}", dir.join(&sub).display()))
                .map_err(CmdError::harness)?;
            match run_scenario(
                sp,
                &dir.join(&sub),
                &plan.report_dir,
                &stop,
                plan.plain_progress,
                note,
            )
            .await
            {
                Ok(r) => {
                    let r = after::suite_member(after, &dir.join(&sub), r, started.elapsed()).await;
                    print_outcome(&r);
                    crate::outln!("report: {}", dir.join(&sub).join("report.md").display());
                    (r.verdict, r.reason)
                }
                Err(e) => {
                    let outcome = after::error_outcome(sp.name(), started.elapsed());
                    after::publish(after, &outcome).await;
                    (Verdict::Error, Some(format!("{:#}", e.error)))
                }
            }
        };
        rows.push(IndexRow {
            scenario: sp.name().to_string(),
            verdict,
            reason,
            duration_ms: started.elapsed().as_millis() as u64,
            report: format!("{sub}/report.md"),
        });
    }
    let mut index = Index {
        schema_version: 1,
        verdict: worst(rows.iter().map(|r| r.verdict)),
        started_at: rfc3339(now),
        speed: plan
            .scenarios
            .first()
            .map_or(crate::util::speed::Speed::ONE, |s| s.speed),
        scenarios: rows,
        housekeeping: None,
    };
    write_index(&dir, &index)
        .with_context(|| format!("writing the index of {}", dir.display()))
        .map_err(CmdError::harness)?;
    after::suite(after, &plan.report_dir, &dir, &names, &mut index).await;
    crate::outln!("suite: {}", index.verdict.as_str());
    crate::outln!("report: {}", dir.join("index.md").display());
    index
        .verdict
        .into_result(Some("a scenario's harness failed"))
}

fn unique_subdir(dir: &Path, name: &str) -> String {
    let mut n = 1;
    let mut candidate = name.to_string();
    while dir.join(&candidate).exists() {
        n += 1;
        candidate = format!("{name}-{n}");
    }
    candidate
}

/// Prints the verdict with its tally, where a stopped run stopped, how much traffic `duration`
/// cut, and every failed expectation (stdout), before the `report:` line.
fn print_outcome(r: &Report) {
    let reason = r
        .reason
        .as_deref()
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    crate::outln!("{}: {}{reason}", r.scenario, r.verdict.as_str());
    if let Some((stop, rest)) = crate::report::lead::stop_line(r) {
        crate::outln!("  {stop} ({rest})");
    }
    crate::outln!("  {}", crate::report::counts::Counts::of(r).sentence());
    if let Some(t) = r.traffic.as_ref().filter(|t| t.beyond_duration > 0) {
        crate::outln!(
            "  traffic: {} of {} requests fall at or after `duration` and were left out",
            t.beyond_duration,
            t.requests
        );
    }
    for p in &r.policies {
        for e in p
            .expectations
            .iter()
            .filter(|e| e.status == ExpectStatus::Fail)
        {
            crate::outln!("  FAIL [{}] {}", p.policy, e.detail);
        }
    }
}

/// One scenario, whatever its system under test: run it into `dir` (under `report_dir`), judge
/// it, compare it with the runs before it (drift, `[[expect.drift]]`), add the run's `note`
/// (no no-sleep assertion), then [`finish`].
async fn run_scenario(
    sp: &ScenarioPlan,
    dir: &Path,
    report_dir: &Path,
    stop: &Shutdown,
    plain: bool,
    note: Option<&str>,
) -> Result<Report, CmdError> {
    if !sp.alongside.is_empty() {
        // Several targets side by side: each its own directory and run files.
        let mut report = crate::rehearsal::targets::rehearse(sp, dir, stop, plain).await?;
        let drift = crate::rehearsal::targets::drift_expectations(sp, &report);
        crate::history::drift::apply(&mut report, report_dir, dir, &|arm| {
            drift.get(arm).cloned().unwrap_or_default()
        });
        report.notes.extend(note.map(str::to_string));
        crate::report::write_all(dir, &report)
            .with_context(|| format!("writing the report into {}", dir.display()))
            .map_err(CmdError::harness)?;
        return Ok(report);
    }
    let files = RunFiles::open(dir)
        .with_context(|| format!("opening the run files in {}", dir.display()))
        .map_err(CmdError::harness)?;
    let sut = SystemUnderTest::of(sp);
    let mut report = sut.rehearse(sp, dir, &files, stop, plain).await;
    let file = &sp.checked.file;
    crate::history::drift::apply(&mut report, report_dir, dir, &|arm| {
        file.expect_for(arm).drift
    });
    report.notes.extend(note.map(str::to_string));
    finish(dir, &files, report)
}

/// Every kind of run ends here: checks scrapes.prom.gz and writes the report.
fn finish(dir: &Path, files: &RunFiles, report: Report) -> Result<Report, CmdError> {
    // scrapes.prom.gz was written scrape by scrape during the runs.
    if let Some(e) = files.scrapes.last_error() {
        return Err(CmdError::harness(anyhow!(
            "{e} (scrapes.prom.gz in {} is incomplete)",
            dir.display()
        )));
    }
    crate::report::write_all(dir, &report)
        .with_context(|| format!("writing the report into {}", dir.display()))
        .map_err(CmdError::harness)?;
    Ok(report)
}
