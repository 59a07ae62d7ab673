//! OpenClaw versions side by side (`[target] versions`, `--gateway-version`): the same traffic
//! and faults against each version in turn, one arm each, named after its version — each arm a
//! whole external run ([`crate::rehearsal::gateway::run::run_arm`]: its own mock upstream, a fresh gateway of
//! that version found by [`crate::gateway::openclaw::Install::find_version`], its warm-up, its
//! kept files suffixed with the version) — then every arm judged alike by
//! [`crate::rehearsal::assemble::report`], which builds the behaviour-diff table
//! ([`crate::report::versions`]). A stop request or a harness failure ends the run where it is:
//! the versions not reached are `not_run` and the verdict says so; never a pass.

use std::path::Path;

use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::observation::{KindPart, Observation, Observed};
use crate::rehearsal::plan::ScenarioPlan;
use crate::report::versions::VersionArm;
use crate::upstream::RequestRoute;
use crate::util::shutdown::Shutdown;

/// Runs `plan` against its external target into `dir`; what it observed. Never fails: a
/// harness failure is the run's error (the report's verdict `error` and reason). Without
/// `versions` one run ([`crate::rehearsal::gateway::run::run_arm`]); with them one run per version in turn.
pub(crate) async fn run_external(
    plan: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
) -> Observed {
    if plan.versions.is_empty() {
        crate::rehearsal::gateway::run::run_arm(plan, dir, files, stop, None).await
    } else {
        run_versions(plan, dir, files, stop).await
    }
}

/// Runs every version of `plan` into `dir`, in order.
async fn run_versions(
    plan: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
) -> Observed {
    let mut arms: Vec<VersionArm> = Vec::new();
    let mut observations: Vec<Observation> = Vec::new();
    let mut error: Option<String> = None;
    let mut started_at: Option<String> = None;
    for v in &plan.versions {
        if stop.reason().is_some() || error.is_some() {
            break;
        }
        let observed = crate::rehearsal::gateway::run::run_arm(plan, dir, files, stop, Some(v)).await;
        started_at.get_or_insert(observed.started_at);
        if let Some(e) = observed.error {
            error = Some(format!("OpenClaw {v}: {e}"));
        }
        let target = match observed.part {
            KindPart::Gateway(t) => Some(*t),
            _ => None,
        };
        let obs = observed.observations;
        arms.push(VersionArm {
            version: v.clone(),
            reported: target.as_ref().and_then(|t| t.reported_version.clone()),
            attempts: obs.first().map(|o| attempts(plan, o)).unwrap_or_default(),
            target,
        });
        observations.extend(obs);
    }
    // The versions never reached, listed as such.
    for v in plan.versions.iter().skip(arms.len()) {
        arms.push(VersionArm {
            version: v.clone(),
            ..VersionArm::default()
        });
    }
    Observed {
        arm: "version",
        arms: plan.versions.clone(),
        observations,
        error,
        started_at: started_at
            .unwrap_or_else(|| crate::report::rfc3339(std::time::SystemTime::now())),
        host: serde_json::to_value(crate::host::fingerprint()).unwrap_or_default(),
        contradictions: Vec::new(),
        speed: crate::util::speed::Speed::ONE,
        part: KindPart::Versions(arms),
    }
}

/// Model requests the upstream received per profile id during the arm (warm-up, probes and
/// canaries left out); a token no profile holds is counted under its fingerprint.
fn attempts(plan: &ScenarioPlan, o: &Observation) -> std::collections::BTreeMap<String, u64> {
    let ids: Vec<(String, &str)> = plan
        .checked
        .file
        .profile
        .iter()
        .map(|p| (crate::util::fingerprint(p.credential()), p.id.as_str()))
        .collect();
    let mut out = std::collections::BTreeMap::new();
    for r in o
        .upstream
        .records
        .iter()
        .filter(|r| r.route == RequestRoute::Llm && !r.warmup && !r.probe && !r.canary)
    {
        let fp = r.profile_fp.clone().unwrap_or_else(|| "-".into());
        let name = ids
            .iter()
            .find(|(f, _)| *f == fp)
            .map_or(fp, |(_, id)| id.to_string());
        *out.entry(name).or_insert(0) += 1;
    }
    out
}
