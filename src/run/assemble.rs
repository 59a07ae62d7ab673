//! Turning policy runs into the report model: timeline from the scrapes, the diff against the
//! scenario's expectations (filtered per policy), the A/B numbers, fault windows and replay
//! accuracy; then the whole `Report` with host facts, contradictions and the verdict.

use std::collections::BTreeSet;

use super::dispatch::Counters;
use super::fault_scope::{assign_lanes, fault_windows};
use super::harness::PolicyRun;
use super::plan::ScenarioPlan;
use crate::engine::Profile;
use crate::replay::traffic::TrafficKind;
use crate::report::build::{PolicyRun as BuildInput, build_policy};
use crate::report::model::{
    Lag, PolicyReport, PolicyStatus, ProfileInfo, ReplayInfo, Report, SCHEMA_VERSION, TimeBase,
    Verdict,
};

/// Replay accuracy of one run.
pub fn replay_info(run: &PolicyRun) -> ReplayInfo {
    ReplayInfo {
        sent: run.replay.sent,
        lag_ms: Lag {
            p50: run.replay.lag_p50_ms,
            p99: run.replay.lag_p99_ms,
            max: run.replay.lag_max_ms,
        },
    }
}

/// The report section of one policy run.
pub fn policy_report(plan: &ScenarioPlan, run: &PolicyRun) -> PolicyReport {
    let file = &plan.checked.file;
    let mut report = build_policy(BuildInput {
        policy: run.policy.as_str(),
        expect: &file.expect,
        scrapes: &run.scrapes,
        start_unix_s: run.start_unix_s,
        arrivals: &run.arrivals,
        speed: plan.speed,
        fault_windows: fault_windows(&file.fault, &file.profile, run.fault_hits.snapshot()),
        latency: run.observed.latency(),
        marks: run.observed.marks(),
        replay: Some(replay_info(run)),
        failed_requests: Some(run.replay.error_count()),
        user_visible_errors: Some(Counters::get(&run.counters.user_errors)),
        elapsed_ms: run.elapsed_ms,
        canaries: run
            .health
            .iter()
            .map(|(dep, c)| (dep.clone(), (c.calls, c.failures)))
            .collect(),
    });
    let lanes: Vec<String> = report.breaker_states.keys().cloned().collect();
    let ws: BTreeSet<String> = plan
        .checked
        .traffic
        .iter()
        .filter_map(|l| match &l.kind {
            TrafficKind::Ws { channel, .. } => Some(channel.clone()),
            _ => None,
        })
        .collect();
    assign_lanes(&mut report.fault_windows, &file.fault, &lanes, &ws);
    // A run cut short by a signal cannot vouch for its expectations.
    if run.stopped.is_some() {
        report.ok = false;
        if report.status == PolicyStatus::Pass {
            report.status = PolicyStatus::Incomplete;
        }
    }
    report
}

/// The profile table: the scenario's profiles, then the implicit `PROVIDER:default` profile of
/// every provider whose endpoint shows up in a timeline without a configured profile (a fallback
/// model's provider, say), so every `PROVIDER/REGION/FP` lane can be read.
pub fn profile_table(profiles: &[Profile], policies: &[PolicyReport]) -> Vec<ProfileInfo> {
    let info = |p: &Profile, implicit: bool| ProfileInfo {
        id: p.id.clone(),
        dep: p.dep(),
        provider: p.provider.clone(),
        region: p.region().to_string(),
        implicit,
    };
    let mut out: Vec<ProfileInfo> = profiles.iter().map(|p| info(p, false)).collect();
    let lanes: BTreeSet<&String> = policies
        .iter()
        .flat_map(|p| p.breaker_states.keys())
        .collect();
    for dep in lanes {
        if out.iter().any(|p| &p.dep == dep) {
            continue;
        }
        let Some(provider) = dep.split('/').next() else {
            continue;
        };
        let implicit = Profile::implicit(provider);
        if &implicit.dep() == dep {
            out.push(info(&implicit, true));
        }
    }
    out
}

/// Everything the report needs besides the runs.
#[derive(Debug, Clone)]
pub struct ReportContext {
    /// RFC 3339 start time.
    pub started_at: String,
    /// `host::fingerprint()` as JSON.
    pub host: serde_json::Value,
    /// Contradictions between host facts and the scenario's timing.
    pub contradictions: Vec<serde_json::Value>,
    /// A harness error that ended the run, if any (verdict `error`).
    pub error: Option<String>,
}

/// The whole report of one scenario.
pub fn report(plan: &ScenarioPlan, runs: &[PolicyRun], ctx: ReportContext) -> Report {
    let file = &plan.checked.file;
    let policies: Vec<PolicyReport> = runs.iter().map(|r| policy_report(plan, r)).collect();
    let stopped = runs.iter().find_map(|r| r.stopped.clone());
    let (verdict, reason) = match (&ctx.error, stopped) {
        (Some(e), _) => (Verdict::Error, Some(e.clone())),
        (None, Some(why)) => (Verdict::Incomplete, Some(why)),
        (None, None) if policies.len() < plan.policies.len() => (
            Verdict::Incomplete,
            Some("not every policy run finished".to_string()),
        ),
        (None, None) => (Report::verdict_from_policies(&policies), None),
    };
    let replay = ReplayInfo::combine(&runs.iter().map(replay_info).collect::<Vec<_>>());
    let config = serde_json::json!({
        "scenario_file": plan.checked.path.display().to_string(),
        "traffic_file": plan.checked.traffic_path.display().to_string(),
        "duration_ms": file.duration.as_millis() as u64,
        "scrape_interval_ms": file.scrape_interval.as_millis() as u64,
        "workers": file.workers,
        "policies": plan.policies.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "engine": serde_json::to_value(&file.engine).unwrap_or_default(),
        "profiles": file.profile.iter().map(|p| serde_json::json!({
            "provider": p.provider, "id": p.id, "region": p.region(),
            "dep": p.dep(),
        })).collect::<Vec<_>>(),
        "faults": serde_json::to_value(&file.fault).unwrap_or_default(),
        "read_failures": runs.iter().map(|r| (r.policy.as_str().to_string(),
            serde_json::to_value(r.diagnostics.snapshot()).unwrap_or_default()))
            .collect::<serde_json::Map<_, _>>(),
    });
    Report {
        schema_version: SCHEMA_VERSION,
        scenario: file.name.clone(),
        description: (!file.description.is_empty()).then(|| file.description.clone()),
        verdict,
        reason,
        stopped: None,
        started_at: ctx.started_at,
        duration_ms: file.duration.as_millis() as u64,
        time_base: TimeBase::Scenario,
        profiles: profile_table(&file.profile, &policies),
        speed: plan.speed,
        seed: plan.seed,
        host: ctx.host,
        policies,
        replay,
        contradictions: ctx.contradictions,
        config,
    }
}
