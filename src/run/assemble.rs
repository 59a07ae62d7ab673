//! Turning policy runs into the report model: timeline from the scrapes, the diff against the
//! scenario's expectations (filtered per policy), the A/B numbers, fault windows and replay
//! accuracy; then the whole `Report` with host facts, contradictions and the verdict. A run
//! stopped by a signal says where (`stopped`), and policies it never started are `not_run`.

use std::collections::BTreeSet;

use super::dispatch::Counters;
use super::fault_scope::{assign_lanes, fault_windows};
use super::harness::PolicyRun;
use super::plan::ScenarioPlan;
use super::recorder::KeptRecords;
use crate::engine::RequestKind;
use crate::engine::{Policy, Profile};
use crate::report::build::{PolicyRun as BuildInput, build_policy};
use crate::report::judge::{Ending, judge, settle};
use crate::report::model::{
    Lag, PolicyReport, PolicyStatus, ProfileInfo, ReplayInfo, Report, SCHEMA_VERSION, Stopped,
    Summary, TimeBase, TrafficInfo, UpstreamCap,
};
use crate::scrape::{Disagreement, DisagreementKind};
use crate::upstream::FaultSpec;
use crate::util::shutdown::cause;
use crate::verdict::diff_until;
use crate::verdict::scenario_ms_u;

/// The scenario's faults for the report's config block: a fault's `profile` is the bearer
/// token it matches (a secret when the profile has a `token`), so it appears as its fingerprint
/// (`profile_fp`), as `upstream.jsonl` names tokens.
pub(crate) fn faults_without_tokens(faults: &[FaultSpec]) -> serde_json::Value {
    let mut v = serde_json::to_value(faults).unwrap_or_default();
    if let Some(list) = v.as_array_mut() {
        for f in list.iter_mut().filter_map(serde_json::Value::as_object_mut) {
            if let Some(token) = f.remove("profile") {
                let fp = token.as_str().map(crate::util::fingerprint);
                f.insert("profile_fp".into(), serde_json::json!(fp));
            }
        }
    }
    v
}

/// Replay accuracy of one run.
pub(crate) fn replay_info(run: &PolicyRun) -> ReplayInfo {
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
pub(crate) fn policy_report(plan: &ScenarioPlan, run: &PolicyRun) -> PolicyReport {
    let file = &plan.checked.file;
    let mut report = build_policy(BuildInput {
        policy: run.policy.as_str(),
        expect: &file.expect,
        scrapes: &run.scrapes,
        events: Some(&run.transitions),
        scrape_interval_ms: run.scrape_interval_ms,
        arrivals: &run.arrivals,
        speed: plan.speed.get(),
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
        // A run cut short by a signal vouches only for what came before the stop.
        stopped_at_ms: run.stopped.as_ref().map(|_| run.elapsed_ms),
        final_exposition: None,
    });
    let expect = file.expect.for_policy(run.policy.as_str());
    let ground = judge_at_upstream(&mut report, plan, &expect, &run.upstream_records);
    add_results(&mut report, ground);
    let lanes: Vec<String> = report.breaker_states.keys().cloned().collect();
    let ws: BTreeSet<String> = plan
        .checked
        .traffic
        .iter()
        .filter_map(|l| match &l.kind {
            RequestKind::Ws { channel, .. } => Some(channel.clone()),
            _ => None,
        })
        .collect();
    assign_lanes(&mut report.fault_windows, &file.fault, &lanes, &ws);
    if run.transitions_dropped > 0 {
        report.disagreements.push(Disagreement {
            kind: DisagreementKind::Truncated,
            dep: String::new(),
            t_ms: scenario_ms_u(
                run.transitions.last().map_or(0, |t| t.t_ms),
                plan.speed.get(),
            ),
            detail: format!(
                "events.jsonl holds {} more transitions than the report kept ({} kept)",
                run.transitions_dropped,
                run.transitions.len()
            ),
        });
    }
    report
}

/// The expectations judged at the upstream (`[[expect.attempts]]`, ...) over the model requests
/// the run's recorder kept, in the section's scenario time: its end, its stop, and — when the
/// recorder reached its cap — the cut, which ends what was observed there (windows past it are
/// `not_reached`) and is said in the section (`upstream_cap`). Every kind of run calls this.
pub(crate) fn judge_at_upstream(
    section: &mut PolicyReport,
    plan: &ScenarioPlan,
    expect: &crate::verdict::Expectations,
    kept: &KeptRecords,
) -> Vec<crate::verdict::ExpectationResult> {
    let speed = plan.speed.get();
    let truncated_at_ms = kept.truncated_at_ms.map(|t| scenario_ms_u(t, speed));
    section.upstream_cap = truncated_at_ms.map(|at_ms| UpstreamCap {
        kept: kept.records.len() as u64,
        dropped: kept.dropped,
        at_ms,
    });
    let fps = crate::scenario::gateway::profile_fingerprints(&plan.checked.file);
    let facts = crate::verdict::ground_eval::UpstreamFacts {
        records: &kept.records,
        profile_fps: &fps,
        speed,
        end_ms: section.elapsed_ms,
        stopped_at_ms: section.stopped_at_ms,
        truncated_at_ms,
    };
    crate::verdict::ground_eval::evaluate(expect, &facts)
}

/// Appends checked expectations to a policy's section and recomputes its status.
pub(crate) fn add_results(report: &mut PolicyReport, results: Vec<crate::verdict::ExpectationResult>) {
    if results.is_empty() {
        return;
    }
    report.expectations.extend(results);
    settle(report);
}

/// The profile table: the scenario's profiles, then the implicit `PROVIDER:default` profile of
/// every provider whose endpoint shows up in a timeline without a configured profile (a fallback
/// model's provider, say), so every `PROVIDER/REGION/FP` lane can be read.
pub(crate) fn profile_table(profiles: &[Profile], policies: &[PolicyReport]) -> Vec<ProfileInfo> {
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

/// The report section of a policy that never started (`why`): listed with status `not_run`,
/// every expectation `not_reached`, nothing observed.
pub(crate) fn not_run_report(plan: &ScenarioPlan, policy: Policy, why: &str) -> PolicyReport {
    let file = &plan.checked.file;
    let name = policy.as_str();
    let mut expectations = diff_until(
        &file.expect.for_policy(name),
        &[],
        None,
        &[],
        plan.speed.get(),
        Some(0),
    );
    for e in &mut expectations {
        let subject = e.dep.as_deref().map_or(String::new(), |d| format!("{d} "));
        e.detail = format!(
            "{subject}{}: not reached (policy `{name}` never ran: {why})",
            e.expected
        );
    }
    PolicyReport {
        policy: name.to_string(),
        ok: false,
        status: PolicyStatus::NotRun,
        expectations,
        transitions: Vec::new(),
        transition_times: Default::default(),
        disagreements: Vec::new(),
        summary: Summary::default(),
        breaker_states: Default::default(),
        rates: Vec::new(),
        fault_windows: fault_windows(&file.fault, &file.profile, Default::default()),
        replay: None,
        scrapes: Default::default(),
        elapsed_ms: 0,
        wall_elapsed_ms: 0,
        marks: Default::default(),
        stopped_at_ms: None,
        health: Default::default(),
        upstream_cap: None,
    }
}

/// Everything the report needs besides the runs.
#[derive(Debug, Clone)]
pub(crate) struct ReportContext {
    /// RFC 3339 start time.
    pub started_at: String,
    /// `host::fingerprint()` as JSON.
    pub host: serde_json::Value,
    /// Contradictions between host facts and the scenario's timing.
    pub contradictions: Vec<serde_json::Value>,
    /// A harness error that ended the run, if any (verdict `error`).
    pub error: Option<String>,
}

/// The whole report of one scenario: a section per policy run, then one per policy that never
/// started (a stop or a harness error came first).
pub(crate) fn report(plan: &ScenarioPlan, runs: &[PolicyRun], ctx: ReportContext) -> Report {
    let file = &plan.checked.file;
    let mut policies: Vec<PolicyReport> = runs.iter().map(|r| policy_report(plan, r)).collect();
    let cut = runs.iter().find(|r| r.stopped.is_some());
    let stopped = cut.map(|r| Stopped {
        reason: cause(r.stopped.as_deref().unwrap_or_default()).to_string(),
        at_ms: (r.elapsed_ms as f64 * plan.speed.get()).round() as u64,
        of_ms: u64::try_from(file.duration.as_millis()).unwrap_or(u64::MAX),
        policy: r.policy.as_str().to_string(),
    });
    let why_not = match (&ctx.error, &stopped) {
        (Some(e), _) => format!("the run ended on a harness error first ({e})"),
        (None, Some(s)) => format!("the run was stopped by {} before it", s.reason),
        (None, None) => "the run ended before it".to_string(),
    };
    for &p in plan.policies.iter().skip(runs.len()) {
        policies.push(not_run_report(plan, p, &why_not));
    }
    let (verdict, reason) = judge(
        &policies,
        &Ending {
            error: ctx.error.as_deref(),
            stopped: cut.and_then(|r| r.stopped.as_deref()),
            not_started: plan.policies.len().saturating_sub(runs.len()),
            arm: "policy",
        },
    );
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
        "faults": faults_without_tokens(&file.fault),
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
        stopped,
        started_at: ctx.started_at,
        duration_ms: file.duration.as_millis() as u64,
        time_base: TimeBase::Scenario,
        profiles: profile_table(&file.profile, &policies),
        speed: plan.speed.get(),
        seed: plan.seed,
        host: ctx.host,
        traffic: Some(TrafficInfo {
            file: plan.checked.traffic_path.display().to_string(),
            requests: plan.checked.traffic.len() as u64,
            beyond_duration: plan.checked.beyond_duration as u64,
        }),
        policies,
        replay,
        contradictions: ctx.contradictions,
        config,
        fleet: None,
        target: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_profile_tokens_become_fingerprints() {
        let faults = crate::upstream::parse_fault_file(
            "[[fault]]\nroute = \"llm\"\nprofile = \"sk-secret-token-1\"\nkind = \"reset\"\n\
             [[fault]]\nroute = \"llm\"\nkind = \"stall\"\n",
            "t",
        )
        .unwrap();
        let v = faults_without_tokens(&faults);
        assert!(!v.to_string().contains("sk-secret-token-1"), "{v}");
        assert_eq!(
            v[0]["profile_fp"],
            crate::util::fingerprint("sk-secret-token-1")
        );
        assert_eq!(v[0]["kind"], "reset");
        assert!(v[1].get("profile_fp").is_none());
    }
}
