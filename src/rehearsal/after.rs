//! What a run does once its report is written (docs/weekly.md): the batch-job series
//! (`--textfile-dir`, `--pushgateway`), retention (`--keep N`), then `--on-fail`. The report is
//! written again with a `housekeeping` section saying what was removed and what went wrong;
//! nothing here changes the verdict or the exit code.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cli::RunArgs;
use crate::jobmetrics::{self, Outcome, Outputs};
use crate::report::housekeeping::{Housekeeping, RemovedRun};
use crate::report::model::{Report, Verdict};

/// The flags that act after the report.
#[derive(Debug, Clone, Default)]
pub(crate) struct After {
    /// `--keep N`.
    pub keep: Option<u32>,
    /// Metrics and `--on-fail`.
    pub outputs: Outputs,
}

impl After {
    /// From the run's flags.
    pub(crate) fn of(args: &RunArgs) -> Self {
        Self {
            keep: args.keep,
            outputs: Outputs {
                textfile_dir: args.textfile_dir.clone(),
                pushgateway: args.pushgateway.clone(),
                on_fail: args.on_fail.clone(),
            },
        }
    }
}

/// Unix seconds now.
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Writes the marker into a fresh run directory; a failure is a warning (the directory is then
/// not ours, and retention leaves it alone).
pub(crate) fn mark(dir: &Path, scenarios: &[String], now: SystemTime) {
    let m = crate::rundir::marker::Marker::now(scenarios, now);
    if let Err(e) = crate::rundir::marker::write(dir, &m) {
        crate::errln!(
            "warning: writing {}: {e} (retention will never remove this run)",
            dir.join(crate::rundir::marker::MARKER_FILE).display()
        );
    }
}

/// The series of one scenario's run (its report, or a harness failure without one).
pub(crate) async fn publish(after: &After, outcome: &Outcome) -> Vec<String> {
    if after.outputs.no_metrics() {
        return Vec::new();
    }
    jobmetrics::publish(&after.outputs, outcome).await
}

/// Retention of `key` under `report_dir`, the run at `dir` being the newest; the removed
/// directories and the warnings go to stderr and into `hk`.
pub(crate) fn prune(after: &After, report_dir: &Path, key: &str, dir: &Path, hk: &mut Housekeeping) {
    let Some(keep) = after.keep else {
        return;
    };
    hk.keep = Some(keep);
    let pruned = crate::retention::prune(report_dir, key, keep as usize, dir);
    for r in pruned.removed {
        crate::errln!("retention: removed {} ({})", r.dir.display(), r.reason);
        hk.removed.push(RemovedRun {
            dir: r
                .dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            reason: r.reason,
        });
    }
    for (r, e) in pruned.failed {
        let w = format!("retention: could not remove {}: {e}", r.dir.display());
        crate::errln!("warning: {w}");
        hk.warnings.push(w);
    }
    if pruned.foreign > 0 {
        crate::errln!(
            "retention: left {} entr{} of {} alone: not run directories of rehearse (no {}, or \
             a copy or renamed run whose marker names another directory)",
            pruned.foreign,
            if pruned.foreign == 1 { "y" } else { "ies" },
            report_dir.display(),
            crate::rundir::marker::MARKER_FILE
        );
    }
}

/// After a single scenario's report is written into `dir`: metrics, retention, the report
/// rewritten with its housekeeping, then `--on-fail`.
pub(crate) async fn single(
    after: &After,
    report_dir: &Path,
    dir: &Path,
    mut report: Report,
    elapsed: Duration,
) -> Report {
    let mut hk = Housekeeping::default();
    let outcome = Outcome::of(&report, unix_now(), elapsed.as_secs_f64());
    hk.warnings.extend(publish(after, &outcome).await);
    let key = crate::rundir::marker::key_of(std::slice::from_ref(&report.scenario));
    prune(after, report_dir, &key, dir, &mut hk);
    rewrite(dir, &mut report, &hk);
    let md = dir.join("report.md");
    if let Some(w) = jobmetrics::on_fail(&after.outputs, &md, &report.scenario, report.verdict).await
    {
        hk.warnings.push(w);
        rewrite(dir, &mut report, &hk);
    }
    report
}

/// A scenario whose harness failed before its report: its series say `error`, and `--on-fail`
/// runs with the path its report would have had.
pub(crate) async fn harness_failed(after: &After, scenario: &str, dir: &Path, elapsed: Duration) {
    publish(after, &error_outcome(scenario, elapsed)).await;
    jobmetrics::on_fail(&after.outputs, &dir.join("report.md"), scenario, Verdict::Error).await;
}

/// The series of a scenario whose harness failed before it had a report.
pub(crate) fn error_outcome(scenario: &str, elapsed: Duration) -> Outcome {
    Outcome {
        scenario: scenario.to_string(),
        verdict: Verdict::Error,
        ended_unix_s: unix_now(),
        duration_s: elapsed.as_secs_f64(),
        pass: 0,
        fail: 0,
        not_reached: 0,
        no_baseline: 0,
    }
}

/// One scenario of a suite, its report written into `dir`: its series, and its report
/// rewritten with their warnings (retention and `--on-fail` act on the whole suite).
pub(crate) async fn suite_member(
    after: &After,
    dir: &Path,
    mut report: Report,
    elapsed: Duration,
) -> Report {
    let outcome = Outcome::of(&report, unix_now(), elapsed.as_secs_f64());
    let hk = Housekeeping {
        warnings: publish(after, &outcome).await,
        ..Housekeeping::default()
    };
    rewrite(dir, &mut report, &hk);
    report
}

/// A suite, its index written into `dir`: retention of its scenario set, the index rewritten
/// with its housekeeping, then `--on-fail` with the index's path.
pub(crate) async fn suite(
    after: &After,
    report_dir: &Path,
    dir: &Path,
    scenarios: &[String],
    index: &mut crate::rehearsal::suite::Index,
) {
    let mut hk = Housekeeping::default();
    let key = crate::rundir::marker::key_of(scenarios);
    prune(after, report_dir, &key, dir, &mut hk);
    let md = dir.join("index.md");
    if let Some(w) = jobmetrics::on_fail(&after.outputs, &md, &key, index.verdict).await {
        hk.warnings.push(w);
    }
    if hk.is_empty() {
        return;
    }
    index.housekeeping = Some(hk);
    if let Err(e) = crate::rehearsal::suite::write_index(dir, index) {
        crate::errln!(
            "warning: rewriting the index of {} with its housekeeping: {e}",
            dir.display()
        );
    }
}

fn rewrite(dir: &Path, report: &mut Report, hk: &Housekeeping) {
    if hk.is_empty() {
        return;
    }
    report.housekeeping = Some(hk.clone());
    if let Err(e) = crate::report::write_all(dir, report) {
        crate::errln!(
            "warning: rewriting the report in {} with its housekeeping: {e}",
            dir.display()
        );
    }
}
