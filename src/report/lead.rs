//! The lines a report opens with, as plain text for both renderers (so report.md and
//! report.html cannot disagree): where a stopped run stopped and what it left unjudged, the
//! verdict with its tally by status, and how much traffic `duration` cut.

use super::model::{ExpectStatus, Report};

/// When the run was stopped: the stop line (`stopped by SIGTERM at 5.0 s of 300 s`) and what
/// follows it (`in policy `retry-gate`; not run: `legacy`. Nothing after the stop is judged…`).
pub(crate) fn stop_line(r: &Report) -> Option<(String, String)> {
    let s = r.stopped.as_ref()?;
    let mut rest = format!("in policy `{}`", s.policy);
    let not_run = r.not_run();
    if !not_run.is_empty() {
        let names: Vec<String> = not_run.iter().map(|p| format!("`{p}`")).collect();
        rest.push_str(&format!("; not run: {}", names.join(", ")));
    }
    rest.push_str(
        ". Nothing after the stop is judged: expectations due later, and every end-of-run \
         check, are not reached.",
    );
    Some((s.line(r.speed), rest))
}

/// `3007 requests from PATH; 800 at or after `duration` (300 s) were left out`, when known.
pub(crate) fn traffic_line(r: &Report) -> Option<String> {
    let t = r.traffic.as_ref()?;
    let mut line = format!("{} requests from {}", t.requests, t.file);
    if t.beyond_duration > 0 {
        line.push_str(&format!(
            "; {} at or after `duration` ({:.1} s) were left out",
            t.beyond_duration,
            r.duration_ms as f64 / 1000.0
        ));
    }
    Some(line)
}

/// ` · scenario digest 1a2b3c4d5e6f` for the report's "started" line (empty in a report
/// written before the digest).
/// With a `--target` file, ` · target FILE (1a2b3c4d5e6f)` after it.
pub(crate) fn digest_part(r: &Report) -> String {
    let mut part = r
        .scenario_digest
        .as_deref()
        .map(|d| format!(" · scenario digest {}", crate::scenario::digest::short(d)))
        .unwrap_or_default();
    if let Some(t) = &r.target_file {
        part.push_str(&format!(
            " · target {} ({})",
            t.path,
            crate::scenario::digest::short(&t.digest)
        ));
    }
    part
}

/// A row's witness as its table cell: what it was judged on (`scrapes 118, series 1`), or
/// `not recorded` for a row of a report written before witnesses.
pub(crate) fn witness(e: &crate::verdict::ExpectationResult) -> String {
    if e.witness.is_empty() {
        "not recorded".to_string()
    } else {
        e.witness.line()
    }
}

/// The mark of an expectation row: ✓ pass, ✗ fail, ○ not reached (neither), · no baseline
/// yet (a drift row with too few runs before it: neither).
pub(crate) fn mark(s: ExpectStatus) -> &'static str {
    match s {
        ExpectStatus::Pass => "✓",
        ExpectStatus::Fail => "✗",
        ExpectStatus::NotReached => "○",
        ExpectStatus::NoBaseline => "·",
    }
}

/// Whether `p` is an arm of the embedded engine (its breaker timing and engine tables belong in
/// the report): every arm without a gateway `target`; side by side (`targets`), the arms whose
/// target file is `kind = "embedded"`.
pub(crate) fn engine_arm(r: &super::model::Report, p: &super::model::PolicyReport) -> bool {
    match &r.targets {
        Some(t) => t.arms.iter().any(|a| a.arm == p.policy && a.kind == "embedded"),
        None => r.target.is_none(),
    }
}
