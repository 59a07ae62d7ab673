//! The weekly job's outputs after its report (docs/weekly.md, DESIGN 13): the batch-job series
//! for Prometheus — `--textfile-dir DIR` (`DIR/rehearse.prom`, node_exporter's textfile
//! collector) and `--pushgateway URL` (job `rehearse`, grouping key `scenario`) — and
//! `--on-fail CMD`. Nothing here changes a verdict or an exit code: every failure comes back as
//! a warning for the report and stderr.
//!
//! # Layout
//! - [`series`]: the series of a run's outcome and their text (pure).
//! - [`textfile`]: the shared textfile, rewritten atomically under a lock.
//! - [`push`]: the Pushgateway (read the previous last success, PUT the group).
//! - [`on_fail`]: the command run on a failed run.

pub(crate) mod on_fail;
pub(crate) mod push;
pub(crate) mod series;
pub(crate) mod textfile;

use std::path::{Path, PathBuf};

pub(crate) use series::Outcome;

/// Where the run's outputs go (the flags of `rehearse run`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Outputs {
    /// `--textfile-dir`.
    pub textfile_dir: Option<PathBuf>,
    /// `--pushgateway`.
    pub pushgateway: Option<String>,
    /// `--on-fail`.
    pub on_fail: Option<String>,
}

impl Outputs {
    /// True when no metrics output was asked for.
    pub(crate) fn no_metrics(&self) -> bool {
        self.textfile_dir.is_none() && self.pushgateway.is_none()
    }
}

/// Writes and pushes `outcome`'s series; returns the warnings (each also printed on stderr).
pub(crate) async fn publish(outputs: &Outputs, outcome: &Outcome) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut warn = |w: String| {
        crate::errln!("warning: {w}");
        warnings.push(w);
    };
    // The last success either output knew of before this run.
    let mut pushed_success = None;
    if let Some(url) = &outputs.pushgateway {
        match push::previous_success(url, &outcome.scenario).await {
            Ok(v) => pushed_success = v,
            Err(e) => warn(format!("pushgateway: reading the previous series: {e}")),
        }
    }
    let mut file_success = None;
    if let Some(dir) = &outputs.textfile_dir {
        file_success = textfile::read_previous(dir, &outcome.scenario).last_success;
        match textfile::write(dir, outcome, pushed_success) {
            Ok((_, None)) => {}
            Ok((_, Some(note))) => warn(format!("textfile: {note}")),
            Err(e) => warn(format!("textfile: {e}")),
        }
    }
    if let Some(url) = &outputs.pushgateway {
        let carried = [pushed_success, file_success]
            .into_iter()
            .flatten()
            .reduce(f64::max);
        if let Err(e) = push::push(url, outcome, carried).await {
            warn(format!("pushgateway: {e}"));
        }
    }
    warnings
}

/// Runs `--on-fail` when the verdict asks for it; returns its warning.
pub(crate) async fn on_fail(
    outputs: &Outputs,
    report: &Path,
    scenario: &str,
    verdict: crate::report::model::Verdict,
) -> Option<String> {
    let cmd = outputs.on_fail.as_deref()?;
    if !on_fail::wanted(verdict) {
        return None;
    }
    let e = on_fail::run(cmd, report, scenario, verdict, on_fail::TIMEOUT)
        .await
        .err()?;
    let w = crate::util::text::chain(&e);
    crate::errln!("warning: {w}");
    Some(w)
}
