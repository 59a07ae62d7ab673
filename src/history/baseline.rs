//! Which earlier runs a finished run is compared with: the readable runs of its report dir with
//! the same scenario, scenario digest and kind of system (embedded engine, fleet, OpenClaw, HTTP
//! gateway) that finished (`pass` or `fail`) and started before it ([`earlier_runs`]); those of
//! another digest are left out and counted ([`left_out`]): the scenario or a file it names was
//! edited since, so their figures are not this scenario's.

use std::path::Path;

use super::list::RunEntry;
use crate::report::drift::LeftOut;
use crate::report::model::{Report, Verdict};

/// Which system ran, as the history compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct System {
    /// `engine`, `fleet`, `openclaw`, `http`: runs are compared only within one kind.
    pub kind: String,
    /// `rehearse engine`, `rehearse fleet`, `OpenClaw`, `HTTP gateway`.
    pub name: String,
    /// Its version, when known.
    pub version: Option<String>,
}

impl System {
    /// `OpenClaw 2026.9.6`.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The system a report's run was against.
pub fn system_of(r: &Report) -> System {
    let (kind, name, version) = match (&r.target, &r.fleet) {
        (Some(t), _) => (
            t.kind.clone(),
            match t.kind.as_str() {
                "openclaw" => "OpenClaw".to_string(),
                "http" => "HTTP gateway".to_string(),
                k => k.to_string(),
            },
            t.version.clone(),
        ),
        (None, Some(_)) => ("fleet".into(), "rehearse fleet".into(), r.rehearse_version.clone()),
        (None, None) => ("engine".into(), "rehearse engine".into(), r.rehearse_version.clone()),
    };
    // Versions side by side: the system is all of them (`2026.9.2 + 2026.9.6`).
    let version = match &r.versions {
        Some(v) => Some(
            v.arms
                .iter()
                .map(|a| a.version.as_str())
                .collect::<Vec<_>>()
                .join(" + "),
        ),
        None => version,
    };
    System {
        kind,
        name,
        version,
    }
}

/// The runs of `entries` a run of `current` is compared against, oldest first: same scenario,
/// scenario digest and kind of system, finished, started before it, not in `own_dir`.
pub fn earlier_runs<'a>(
    entries: &'a [RunEntry],
    current: &Report,
    own_dir: Option<&Path>,
) -> Vec<(&'a str, &'a Report)> {
    candidates(entries, current, own_dir)
        .into_iter()
        .filter(|(_, r)| r.scenario_digest == current.scenario_digest)
        .collect()
}

/// The runs [`earlier_runs`] leaves out for their scenario digest: how many per digest, the
/// digest of the latest of them first.
pub fn left_out(entries: &[RunEntry], current: &Report, own_dir: Option<&Path>) -> Vec<LeftOut> {
    let mut out: Vec<LeftOut> = Vec::new();
    for (_, r) in candidates(entries, current, own_dir).into_iter().rev() {
        if r.scenario_digest == current.scenario_digest {
            continue;
        }
        match out.iter_mut().find(|l| l.digest == r.scenario_digest) {
            Some(l) => l.runs += 1,
            None => out.push(LeftOut {
                digest: r.scenario_digest.clone(),
                runs: 1,
            }),
        }
    }
    out
}

/// Same scenario and kind of system, finished, started before `current`, not in `own_dir`;
/// oldest first.
fn candidates<'a>(
    entries: &'a [RunEntry],
    current: &Report,
    own_dir: Option<&Path>,
) -> Vec<(&'a str, &'a Report)> {
    let kind = system_of(current).kind;
    let mut out: Vec<(&str, &Report)> = entries
        .iter()
        .filter(|e| own_dir.is_none_or(|d| !same_dir(&e.dir, d)))
        .filter_map(|e| e.report().map(|r| (e.rel.as_str(), r)))
        .filter(|(_, r)| {
            r.scenario == current.scenario
                && matches!(r.verdict, Verdict::Pass | Verdict::Fail)
                && system_of(r).kind == kind
                && r.started_at < current.started_at
        })
        .collect();
    out.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at));
    out
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

