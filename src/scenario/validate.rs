//! Semantic checks of a parsed scenario: everything a run would reject, found without running —
//! traffic file errors, engine config values, profiles, faults, expectations and policies —
//! plus warnings for expectations about deps the traffic never exercises.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::format::{ScenarioError, ScenarioFile};
use crate::engine::dep::provider_of;
use crate::engine::profiles::ProfileBook;
use crate::replay::traffic::{TrafficKind, TrafficLine, load_traffic};

/// The most engine workers a scenario may ask for.
pub const MAX_WORKERS: usize = 256;

/// A scenario that passed every check, with its traffic loaded.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The scenario file.
    pub path: PathBuf,
    /// Its content.
    pub file: ScenarioFile,
    /// The traffic file, resolved against the scenario's directory.
    pub traffic_path: PathBuf,
    /// The traffic lines.
    pub traffic: Vec<TrafficLine>,
    /// Things that do not stop a run but are probably mistakes.
    pub warnings: Vec<String>,
}

/// Loads and checks a scenario file.
pub fn check(path: &Path) -> Result<Checked, ScenarioError> {
    let file = ScenarioFile::load(path)?;
    check_file(path, file)
}

/// Checks an already parsed scenario (`path` locates the traffic file and names errors).
pub fn check_file(path: &Path, file: ScenarioFile) -> Result<Checked, ScenarioError> {
    let origin = path.display().to_string();
    let invalid = |field: &str, msg: String| ScenarioError::Invalid {
        path: origin.clone(),
        field: field.to_string(),
        msg,
    };
    if file.name.trim().is_empty() {
        return Err(invalid("name", "must not be empty".into()));
    }
    if file.duration.is_zero() {
        return Err(invalid("duration", "must be longer than 0".into()));
    }
    if file.scrape_interval < Duration::from_millis(10) || file.scrape_interval > file.duration {
        return Err(invalid(
            "scrape_interval",
            "must be at least 10ms and at most `duration`".into(),
        ));
    }
    if file.workers == 0 || file.workers > MAX_WORKERS {
        return Err(invalid("workers", format!("must be 1..={MAX_WORKERS}")));
    }
    if file.policies.is_empty() {
        return Err(invalid("policies", "name at least one policy".into()));
    }
    let mut seen = BTreeSet::new();
    for p in &file.policies {
        if !seen.insert(p.as_str()) {
            return Err(invalid(
                "policies",
                format!("`{}` appears twice", p.as_str()),
            ));
        }
    }
    file.tcp
        .validate()
        .map_err(|e| invalid(&format!("tcp.{}", e.field), e.reason))?;
    file.engine
        .validate()
        .map_err(|e| invalid("engine", e.to_string()))?;
    let book =
        ProfileBook::new(file.profile.clone()).map_err(|e| invalid("profile", e.to_string()))?;
    for (i, f) in file.fault.iter().enumerate() {
        f.validate()
            .map_err(|e| invalid(&format!("fault[{i}]"), e))?;
    }
    let names: Vec<&str> = file.policies.iter().map(|p| p.as_str()).collect();
    file.expect
        .validate(&names)
        .map_err(|e| invalid(&e.field, e.msg))?;

    let traffic_path = match path.parent() {
        Some(dir) => dir.join(&file.traffic),
        None => file.traffic.clone(),
    };
    let traffic = load_traffic(&traffic_path).map_err(|e| ScenarioError::Invalid {
        path: origin.clone(),
        field: "traffic".into(),
        msg: e.to_string(),
    })?;
    let warnings = warnings(&file, &book, &traffic);
    Ok(Checked {
        path: path.to_path_buf(),
        file,
        traffic_path,
        traffic,
        warnings,
    })
}

/// Every dep the traffic can reach: tool names, ws channels, and the model endpoints of every
/// profile of every provider the traffic (or a configured fallback) uses.
pub fn exercised_deps(
    file: &ScenarioFile,
    book: &ProfileBook,
    traffic: &[TrafficLine],
) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    let mut providers = BTreeSet::new();
    for line in traffic {
        match &line.kind {
            TrafficKind::Llm { model, .. } => {
                providers.insert(provider_of(model).to_string());
            }
            TrafficKind::Tool { tool, .. } => {
                deps.insert(tool.clone());
            }
            TrafficKind::Ws { channel, .. } => {
                deps.insert(channel.clone());
            }
        }
    }
    let mf = &file.engine.model_failover;
    for m in mf.fallbacks.iter().chain(mf.context_fallbacks.iter()) {
        providers.insert(provider_of(m).to_string());
    }
    for p in providers {
        for e in book.for_provider(&p) {
            deps.insert(e.dep);
        }
    }
    deps
}

fn warnings(file: &ScenarioFile, book: &ProfileBook, traffic: &[TrafficLine]) -> Vec<String> {
    let deps = exercised_deps(file, book, traffic);
    let mut out = Vec::new();
    let mut warn = |field: String, dep: &str| {
        if !deps.contains(dep) {
            out.push(format!(
                "{field}.dep: `{dep}` is never exercised by the traffic (known deps: {})",
                deps.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    };
    for (i, t) in file.expect.transition.iter().enumerate() {
        warn(format!("expect.transition[{i}]"), &t.dep);
    }
    for (i, t) in file.expect.no_transition.iter().enumerate() {
        warn(format!("expect.no_transition[{i}]"), &t.dep);
    }
    for (i, t) in file.expect.probe_spacing.iter().enumerate() {
        warn(format!("expect.probe_spacing[{i}]"), &t.dep);
    }
    let last = traffic.last().map_or(0, |l| l.at_ms);
    if traffic.is_empty() {
        out.push("traffic: the traffic file has no requests".into());
    } else if Duration::from_millis(last) < file.duration / 2 {
        out.push(format!(
            "traffic: the last request is at {last} ms, well before `duration` ({})",
            humantime::format_duration(file.duration)
        ));
    }
    out
}
