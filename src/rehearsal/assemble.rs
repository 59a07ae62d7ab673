//! The one report of every kind of run: what its system under test observed ([`Observed`]) →
//! a section per arm that ran ([`crate::rehearsal::section::section`]), one per arm it never started
//! ([`crate::rehearsal::section::not_run`]), the one judge's verdict and reason
//! ([`crate::report::judge::judge`]), the run's facts (host, contradictions, replay accuracy,
//! profiles, the config block) and the kind's own part (a gateway's `target` block, a fleet's
//! `fleet` section). A run stopped by a signal says where (`stopped`).

use std::collections::BTreeSet;

use crate::rehearsal::observation::{KindPart, Observed};
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::section::{not_run, section, unapplied_faults};
use crate::engine::Profile;
use crate::report::judge::{Ending, judge};
use crate::report::model::{
    PolicyReport, ProfileInfo, ReplayInfo, Report, SCHEMA_VERSION, Stopped, TimeBase, TrafficInfo,
};
use crate::upstream::FaultSpec;
use crate::util::shutdown::cause;

/// The scenario's faults for the report's config block: a fault's `profile` is the bearer
/// token it matches (a secret when the profile has a `token`), so it appears as its fingerprint
/// (`profile_fp`), as `upstream.jsonl` names tokens.
fn faults_without_tokens(faults: &[FaultSpec]) -> serde_json::Value {
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

/// The profile table: the scenario's profiles, then the implicit `PROVIDER:default` profile of
/// every provider whose endpoint shows up in a timeline without a configured profile (a fallback
/// model's provider, say), so every `PROVIDER/REGION/FP` lane can be read.
fn profile_table(profiles: &[Profile], policies: &[PolicyReport]) -> Vec<ProfileInfo> {
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

/// The whole report of one scenario from what its system under test observed.
pub fn report(plan: &ScenarioPlan, observed: Observed) -> Report {
    let file = &plan.checked.file;
    let runs = &observed.observations;
    let hits: Vec<&crate::rehearsal::observation::Hits> = runs.iter().map(|o| &o.fault_hits).collect();
    let never = unapplied_faults(&file.fault, &hits);
    let mut policies: Vec<PolicyReport> = runs.iter().map(|o| section(plan, o, &never)).collect();
    let cut = runs.iter().find(|o| o.stopped.is_some());
    let duration_ms = u64::try_from(file.duration.as_millis()).unwrap_or(u64::MAX);
    let stopped = cut.map(|o| Stopped {
        reason: cause(o.stopped.as_deref().unwrap_or_default()).to_string(),
        at_ms: observed.speed.to_scenario(o.elapsed_ms as f64).round() as u64,
        of_ms: duration_ms,
        policy: o.arm.clone(),
    });
    let why_not = match (&observed.error, &stopped) {
        (Some(e), _) => format!("the run ended on a harness error first ({e})"),
        (None, Some(s)) => format!("the run was stopped by {} before it", s.reason),
        (None, None) => "the run ended before it".to_string(),
    };
    for arm in observed.arms.iter().skip(runs.len()) {
        policies.push(not_run(plan, arm, &why_not));
    }
    let (verdict, reason) = judge(
        &policies,
        &Ending {
            error: observed.error.as_deref(),
            stopped: cut.and_then(|o| o.stopped.as_deref()),
            not_started: observed.arms.len().saturating_sub(runs.len()),
            arm: observed.arm,
        },
    );
    let replay = ReplayInfo::combine(&policies.iter().filter_map(|s| s.replay).collect::<Vec<_>>());
    let config = config(plan, &observed);
    let (target, fleet, versions) = match observed.part {
        KindPart::Embedded => (None, None, None),
        KindPart::Gateway(t) => (Some(*t), None, None),
        KindPart::Fleet(f) => (None, Some(f), None),
        KindPart::Versions(arms) => {
            let diff = crate::report::versions::diff(&arms, &policies);
            // `target` keeps its one-gateway meaning (history, compare): the first version's.
            let first = arms.iter().find_map(|a| a.target.clone());
            let section = crate::report::versions::VersionsSection { arms, diff };
            (first, None, Some(section))
        }
    };
    Report {
        schema_version: SCHEMA_VERSION,
        scenario: file.name.clone(),
        description: (!file.description.is_empty()).then(|| file.description.clone()),
        verdict,
        reason,
        stopped,
        started_at: observed.started_at,
        duration_ms,
        time_base: TimeBase::Scenario,
        profiles: profile_table(&file.profile, &policies),
        speed: observed.speed.into(),
        seed: plan.seed,
        host: observed.host,
        traffic: Some(TrafficInfo {
            file: plan.checked.traffic_path.display().to_string(),
            requests: plan.checked.traffic.len() as u64,
            beyond_duration: plan.checked.beyond_duration as u64,
        }),
        policies,
        replay,
        contradictions: observed.contradictions,
        notes: Vec::new(),
        config,
        fleet,
        target,
        versions,
        targets: None,
        rehearse_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        scenario_digest: Some(plan.checked.digest.clone()),
        target_file: plan.checked.target_file.clone(),
        drift: None,
        housekeeping: None,
    }
}

/// The report's config block: the scenario as the run used it. A gateway's names its target,
/// upstream and fallbacks; an engine's (embedded, fleet) its engine and arms, a fleet's its
/// `[fleet]` table besides.
fn config(plan: &ScenarioPlan, observed: &Observed) -> serde_json::Value {
    let file = &plan.checked.file;
    let duration_ms = u64::try_from(file.duration.as_millis()).unwrap_or(u64::MAX);
    if let KindPart::Gateway(_) | KindPart::Versions(_) = observed.part {
        return serde_json::json!({
            "scenario_file": crate::builtin::shown(&plan.checked.path),
            "traffic_file": crate::builtin::shown(&plan.checked.traffic_path),
            "duration_ms": duration_ms,
            "target": file.target_table(),
            "versions": plan.versions,
            "upstream": serde_json::to_value(&file.upstream).unwrap_or_default(),
            "fallbacks": file.gateway_fallbacks().map_or(&[][..], |(f, _)| f),
            "profiles": file.profile.iter().map(|p| serde_json::json!({
                "provider": p.provider, "id": p.id,
                "token_fp": crate::util::fingerprint(p.credential()),
            })).collect::<Vec<_>>(),
            "faults": faults_without_tokens(&file.fault),
        });
    }
    let mut config = serde_json::json!({
        "scenario_file": crate::builtin::shown(&plan.checked.path),
        "traffic_file": crate::builtin::shown(&plan.checked.traffic_path),
        "duration_ms": file.duration.as_millis() as u64,
        "scrape_interval_ms": file.scrape_interval.as_millis() as u64,
        "workers": file.workers,
        "policies": observed.arms,
        "engine": serde_json::to_value(file.engine_config()).unwrap_or_default(),
        "profiles": file.profile.iter().map(|p| serde_json::json!({
            "provider": p.provider, "id": p.id, "region": p.region(),
            "dep": p.dep(),
        })).collect::<Vec<_>>(),
        "faults": faults_without_tokens(&file.fault),
        "read_failures": observed.observations.iter()
            .filter_map(|o| o.read_failures.clone().map(|r| (o.arm.clone(), r)))
            .collect::<serde_json::Map<_, _>>(),
    });
    if let (KindPart::Fleet(_), Some(obj)) = (&observed.part, config.as_object_mut()) {
        obj.insert(
            "fleet".into(),
            serde_json::to_value(&file.fleet).unwrap_or_default(),
        );
    }
    config
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
