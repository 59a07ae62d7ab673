//! Semantic checks of a parsed scenario: everything a run would reject, found without running —
//! traffic file errors, engine config values, profiles, faults, expectations and policies.
//! Checks that stop a vacuous pass: a metric series the engine does not export or a label its
//! family lacks, an expectation about a dep the traffic and profiles cannot produce, traffic
//! that sends nothing (empty, or every request at or after `duration`), a scenario with no
//! expectation at all, and the checks against what the run can produce
//! ([`super::validate_reach`]) and the `[[expect.drift]]` subjects a run can count
//! ([`super::validate_drift`]), fault names and the anchors naming them
//! ([`super::validate_anchors`]), `[prometheus]` and the alert tables
//! ([`super::validate_alerts`]). Each error names the
//! file, line and column of the offending value. Warnings: requests cut at `duration`, traffic
//! that ends well before it.

use crate::gateway::openclaw::user_config::UserConfig;
use super::field::FieldError;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::format::{ScenarioError, ScenarioFile};
use super::locate::locate_within;
use super::validate_alerts::check_alerts;
use crate::engine::RequestKind;
use crate::engine::failover::profiles::ProfileBook;
use crate::replay::traffic::{TrafficLine, load_traffic};
use crate::util::speed::Speed;
use crate::util::suggest::closest;
use crate::wire::dep::provider_of;

/// The most engine workers a scenario may ask for.
const MAX_WORKERS: usize = 256;

/// A scenario that passed every check, with its traffic loaded.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The scenario file.
    pub path: PathBuf,
    /// Its content.
    pub file: ScenarioFile,
    /// The traffic file, resolved against the scenario's directory.
    pub traffic_path: PathBuf,
    /// The traffic lines (shared: a run's pacer thread reads them without a second copy).
    pub traffic: std::sync::Arc<Vec<TrafficLine>>,
    /// How many traffic lines fall at or after `duration`: the replay leaves them out.
    pub beyond_duration: usize,
    /// Things that do not stop a run but are probably mistakes.
    pub warnings: Vec<String>,
    /// `[target] config`: the user's own OpenClaw configuration, read and checked.
    pub user_config: Option<UserConfig>,
    /// `[target] config` of a `portkey` target: the user's own Portkey config, its keys checked
    /// against the harness's list and its profiles against the scenario's.
    pub portkey_config: Option<crate::gateway::portkey::user_file::UserFile>,
    /// `[target] config` of a `litellm` target: the user's own LiteLLM config, read (its keys
    /// are checked by the plan, against the release it runs).
    pub litellm_config: Option<crate::gateway::litellm::user_config::UserConfig>,
    /// The scenario's digest ([`super::digest`]): its file and the files it names (and the
    /// `--target` file, when one replaced its `[target]`).
    pub digest: String,
    /// The `--target` file that replaced the scenario's `[target]`, when one did.
    pub target_file: Option<super::target_file::TargetFileUsed>,
}

/// Loads and checks a scenario file for a run at speed 1. Every error names the file, and
/// semantic ones the line and column of the offending value.
pub fn check(path: &Path) -> Result<Checked, ScenarioError> {
    check_with(path, Speed::ONE, None)
}

/// [`check`] for a run at `speed` — what no conversion to scenario time keeps is refused at a
/// speed other than 1 ([`super::validate_metrics::at_speed`]) — with a `--target` file, when
/// given, in place of the scenario's `[target]` (and `[upstream]`, when it writes one): the
/// scenario is checked as if it had been written with that table; an error in the target's
/// keys is named in the target file.
pub fn check_with(
    path: &Path,
    speed: Speed,
    target: Option<&super::target_file::TargetFile>,
) -> Result<Checked, ScenarioError> {
    let origin = crate::builtin::shown(path);
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        path: origin.clone(),
        source,
    })?;
    let mut file = ScenarioFile::parse(&text, &origin)?;
    let Some(t) = target else {
        return check_parsed(path, &text, file, speed, None).map_err(|e| e.located(&text));
    };
    t.apply(&mut file);
    check_parsed(path, &text, file, speed, Some(t)).map_err(|e| t.relocate(e).located(&text))
}

/// Checks an already parsed scenario for a run at speed 1: `path` locates the traffic file and
/// names errors, `text` (the file's content) locates the offending values.
pub fn check_file(path: &Path, text: &str, file: ScenarioFile) -> Result<Checked, ScenarioError> {
    check_parsed(path, text, file, Speed::ONE, None).map_err(|e| e.located(text))
}

fn check_parsed(
    path: &Path,
    text: &str,
    file: ScenarioFile,
    speed: Speed,
    target_file: Option<&super::target_file::TargetFile>,
) -> Result<Checked, ScenarioError> {
    let origin = crate::builtin::shown(path);
    let invalid = |field: &str, msg: String| ScenarioError::invalid(&origin, field, msg);
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
    file.target
        .validate()
        .map_err(|e| invalid(&format!("target.{}", e.field), e.message))?;
    file.upstream
        .validate()
        .map_err(|e| invalid(&format!("upstream.{}", e.field), e.message))?;
    file.engine.validate().map_err(|e| {
        let field = e.key().map_or("engine".into(), |k| format!("engine.{k}"));
        invalid(&field, e.to_string())
    })?;
    if let crate::engine::timeouts::AdaptiveSwitch::Policies(names) = &file.engine.timeouts.adaptive
        && let Some(n) = names
            .iter()
            .find(|n| !file.policies.iter().any(|p| p.as_str() == n.as_str()))
    {
        return Err(invalid(
            "engine.timeouts.adaptive",
            format!("`{n}` is not one of this scenario's policies"),
        ));
    }
    let book = ProfileBook::new(file.profile.clone()).map_err(|e| {
        let field = e.key().unwrap_or("profile").to_string();
        invalid(&field, e.to_string())
    })?;
    for (i, f) in file.fault.iter().enumerate() {
        f.validate()
            .map_err(|e| invalid(&format!("fault[{i}]"), e.to_string()))?;
    }
    super::validate_anchors::check(&file).map_err(|e| invalid(&e.field, e.message))?;
    file.fleet
        .validate(file.coordinator.as_ref(), file.policies.len())
        .map_err(|e| invalid(&e.field, e.msg))?;
    check_fleet_extras(&file).map_err(|e| invalid(&e.field, e.message))?;
    // An external target is one "policy" run, named after its kind; OpenClaw versions side by
    // side are one run each, named after its version.
    let versions = !file.target.versions.is_empty();
    let mut names: Vec<&str> = if versions {
        file.target.versions.iter().map(String::as_str).collect()
    } else if file.target.kind.is_external() {
        vec![file.target.kind.as_str()]
    } else {
        file.policies.iter().map(|p| p.as_str()).collect()
    };
    if file.fleet.is_fleet() {
        // A fleet run's sections are named after its coordination runs.
        names.extend(file.fleet.coordination.iter().map(|c| c.as_str()));
    }
    file.expect.validate(&names).map_err(|e| {
        let (field, msg) = super::locate::run_scope(text, &e.field, &e.msg, versions);
        invalid(&field, msg)
    })?;
    check_alerts(path, &file).map_err(|e| invalid(&e.field, e.message))?;

    // A foreign gateway's metrics (`[target] metrics_url`) are not the engine's catalogue: its
    // selectors are checked against what its scrapes held, when judged (`rehearsal::section`).
    let engine_metrics = !file.target.kind.is_external();
    let refused = |r: super::validate_metrics::Refusal| {
        located_within(&origin, text, &r.field, &r.needle, r.msg)
    };
    if engine_metrics {
        super::validate_metrics::catalogue(&file).map_err(refused)?;
    }

    let traffic_path = match path.parent() {
        Some(dir) => dir.join(&file.traffic),
        None => file.traffic.clone(),
    };
    let traffic = load_traffic(&traffic_path).map_err(|e| invalid("traffic", e.to_string()))?;
    let shown = traffic_path.display();
    super::validate_gateway::not_applicable(&file, &traffic, &traffic_path)?;
    let duration_ms = u64::try_from(file.duration.as_millis()).unwrap_or(u64::MAX);
    let Some(first) = traffic.first() else {
        return Err(invalid(
            "traffic",
            format!("{shown} has no requests: a run would send nothing and judge nothing"),
        ));
    };
    let beyond_duration = traffic.iter().filter(|l| l.at_ms >= duration_ms).count();
    if beyond_duration == traffic.len() {
        return Err(invalid(
            "traffic",
            format!(
                "every one of the {} requests of {shown} falls at or after `duration` ({}): \
                 the first is at {} ms, so a run would send nothing",
                traffic.len(),
                humantime::format_duration(file.duration),
                first.at_ms
            ),
        ));
    }
    let super::validate_gateway::GatewayFiles {
        openclaw: user_config,
        portkey: portkey_config,
        litellm: litellm_config,
    } = super::validate_gateway::files(path, &file, &origin)?;
    super::models::check(&file.models, &file.engine.model_failover.fallbacks, &traffic)
        .map_err(|e| invalid(&e.field, e.message))?;
    super::validate_target::check_target(&file, &traffic, duration_ms, user_config.as_ref())
        .map_err(|e| invalid(&e.field, e.message))?;
    super::validate_reach::check_reach(&file, &traffic)
        .map_err(|e| invalid(&e.field, e.message))?;
    let deps = exercised_deps(&file, &book, &traffic);
    if let Some(e) = unknown_dep(&file, &deps) {
        let (field, dep) = e;
        let hint = closest(&dep, deps.iter().map(String::as_str))
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        let known = deps.iter().cloned().collect::<Vec<_>>().join(", ");
        let msg = format!(
            "`{dep}` is not a dep this scenario can produce: no traffic line, profile or \
             configured model reaches it{hint} (deps: {known})"
        );
        return Err(located_within(&origin, text, &field, &dep, msg));
    }
    super::validate_drift::check_drift(&file, &deps).map_err(|e| invalid(&e.field, e.message))?;
    super::validate_alerts::check(path, text, &file, &deps, &names)?;
    if engine_metrics {
        let producible = super::validate_metrics::Producible::of(&file, &book, &traffic, deps);
        super::validate_metrics::label_values(&file, &producible).map_err(refused)?;
        super::validate_metrics::at_speed(&file, speed).map_err(refused)?;
    }
    if file.expect.is_empty() {
        return Err(invalid(
            "expect",
            "the scenario has no expectations: a run would judge nothing, and nothing judged \
             is never a pass; add at least one [[expect.*]] table (docs/scenario.md)"
                .into(),
        ));
    }
    let digest = super::digest::of_scenario_with(
        path,
        text,
        &file,
        target_file.map(super::target_file::TargetFile::bytes),
    )
        .map_err(|e| invalid("traffic", format!("reading it for the scenario's digest: {e}")))?;
    let mut warnings = warnings(&file, &traffic, beyond_duration);
    warnings.extend(super::validate_target::target_warnings(&file, &traffic));
    Ok(Checked {
        path: path.to_path_buf(),
        file,
        traffic_path,
        traffic: std::sync::Arc::new(traffic),
        beyond_duration,
        warnings,
        user_config,
        portkey_config,
        litellm_config,
        digest,
        target_file: target_file.map(super::target_file::TargetFile::used),
    })
}

/// What only a fleet run can do: `[[expect.fleet]]`, coordinator faults (and `down` only on a
/// redis-server the run starts itself).
fn check_fleet_extras(file: &ScenarioFile) -> Result<(), FieldError> {
    use crate::upstream::faults::{FaultKind, RouteSel};
    let fleet = file.fleet.is_fleet();
    if !fleet && !file.expect.fleet.is_empty() {
        return Err(FieldError::new(
            "expect.fleet[0]",
            "needs a fleet run ([fleet] hosts > 1)".into(),
        ));
    }
    let spawned = file.coordinator.as_ref().is_some_and(|c| c.spawn);
    let redis = file
        .fleet
        .coordination
        .contains(&crate::scenario::fleet::Coordination::Redis);
    for (i, f) in file.fault.iter().enumerate() {
        if f.route != RouteSel::Coordinator {
            continue;
        }
        let field = format!("fault[{i}].route");
        if !fleet || !redis {
            return Err(FieldError::new(
                field,
                "a coordinator fault needs a fleet run with `redis` in [fleet] coordination".into(),
            ));
        }
        if matches!(f.kind, FaultKind::Down(_)) && !spawned {
            return Err(FieldError::new(
                field,
                "kind `down` stops the run's own redis-server: needs [coordinator] spawn = true"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// An `Invalid` error located at `needle` inside `field`'s value (else at the value).
fn located_within(
    origin: &str,
    text: &str,
    field: &str,
    needle: &str,
    msg: String,
) -> ScenarioError {
    ScenarioError::Invalid {
        path: origin.to_string(),
        at: locate_within(text, field, needle),
        field: field.to_string(),
        msg,
    }
}

/// The first expectation (field path of its dep, dep) naming a dep outside `deps`: the `dep`
/// of a transition, no_transition or probe_spacing table, or a `dep` label of a metric series.
fn unknown_dep(file: &ScenarioFile, deps: &BTreeSet<String>) -> Option<(String, String)> {
    let e = &file.expect;
    let named = e
        .transition
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("expect.transition[{i}].dep"), &t.dep))
        .chain(
            e.no_transition
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("expect.no_transition[{i}].dep"), &t.dep)),
        )
        .chain(
            e.probe_spacing
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("expect.probe_spacing[{i}].dep"), &t.dep)),
        )
        // A foreign gateway's `dep` labels are its own (judged on its scrapes), not the engine's.
        .chain(e.metric.iter().enumerate().filter(|_| !file.target.kind.is_external()).filter_map(|(i, m)| {
            m.series
                .labels
                .get("dep")
                .map(|d| (format!("expect.metric[{i}].series"), d))
        }));
    for (field, dep) in named {
        if !deps.contains(dep) {
            return Some((field, dep.clone()));
        }
    }
    None
}

/// Every dep the traffic can reach: tool names, ws channels, and the model endpoints of every
/// profile of every provider the traffic uses or the engine config can route to (fallbacks,
/// context fallbacks, the ladder's lighter model, the throttle's cheaper and pinned models).
pub(crate) fn exercised_deps(
    file: &ScenarioFile,
    book: &ProfileBook,
    traffic: &[TrafficLine],
) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    let mut providers = BTreeSet::new();
    for line in traffic {
        match &line.kind {
            RequestKind::Llm { model, .. } => {
                providers.insert(provider_of(model).to_string());
            }
            RequestKind::Tool { name: tool, .. } => {
                deps.insert(tool.clone());
            }
            RequestKind::Ws { channel, .. } => {
                deps.insert(channel.clone());
            }
        }
    }
    let mf = &file.engine.model_failover;
    let th = &file.engine.throttle;
    let configured = file
        .all_fallbacks()
        .chain(mf.context_fallbacks.iter())
        .chain(mf.lighter_model.iter())
        .chain(th.cheaper_model.iter())
        .chain(th.pinned.values());
    for m in configured {
        providers.insert(provider_of(m).to_string());
    }
    for p in providers {
        for e in book.for_provider(&p) {
            deps.insert(e.dep);
        }
    }
    deps
}

fn warnings(file: &ScenarioFile, traffic: &[TrafficLine], beyond_duration: usize) -> Vec<String> {
    let mut out = Vec::new();
    let duration = humantime::format_duration(file.duration);
    if beyond_duration > 0 {
        out.push(format!(
            "traffic: {beyond_duration} of {} requests fall at or after `duration` ({duration}) \
             and are left out of the replay",
            traffic.len()
        ));
    }
    let last = traffic.last().map_or(0, |l| l.at_ms);
    // An external target's turns outlast their send times (its own retries take minutes).
    if Duration::from_millis(last) < file.duration / 2 && !file.target.kind.is_external() {
        out.push(format!(
            "traffic: the last request is at {last} ms, well before `duration` ({duration})"
        ));
    }
    out
}
