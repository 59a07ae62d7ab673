//! The entry of an external target's run: its one arm, or OpenClaw versions side by side
//! (`[target] versions`, `--gateway-version`) — the same traffic and faults against each
//! version in turn, one arm each as the plan has them ([`crate::rehearsal::plan::GatewayPlan`]:
//! the install of that version found at plan time), named after its version — each arm a whole
//! external run ([`crate::rehearsal::gateway::run::run_arm`]: its own mock upstream, a fresh
//! gateway of that version, its warm-up, its kept files suffixed with the version) — then every
//! arm judged alike by [`crate::rehearsal::assemble::report`], which builds the behaviour-diff
//! table ([`crate::report::versions`]). A stop request or a harness failure ends the run where
//! it is: the versions not reached are `not_run` and the verdict says so; never a pass.

use std::path::Path;

use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::observation::{KindPart, Observation, Observed};
use crate::rehearsal::plan::{GatewayPlan, ScenarioPlan};
use crate::report::versions::VersionArm;
use crate::upstream::RequestRoute;
use crate::util::shutdown::Shutdown;

/// Runs `plan` against its external target into `dir`; what it observed. Never fails: a
/// harness failure is the run's error (the report's verdict `error` and reason). Without
/// `versions` its one arm ([`crate::rehearsal::gateway::run::run_arm`]); with them one arm per
/// version in turn.
pub(crate) async fn run_external(
    plan: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
) -> Observed {
    match plan.gateways.as_slice() {
        [one] if plan.versions.is_empty() => {
            crate::rehearsal::gateway::run::run_arm(plan, one, dir, files, stop).await
        }
        _ => run_versions(plan, dir, files, stop).await,
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
    for gw in &plan.gateways {
        if stop.reason().is_some() || error.is_some() {
            break;
        }
        let observed = crate::rehearsal::gateway::run::run_arm(plan, gw, dir, files, stop).await;
        started_at.get_or_insert(observed.started_at);
        if let Some(e) = observed.error {
            error = Some(format!("{} {}: {e}", gw.gateway.facts().name, gw.arm));
        }
        let target = match observed.part {
            KindPart::Gateway(t) => Some(*t),
            _ => None,
        };
        let obs = observed.observations;
        arms.push(VersionArm {
            version: gw.arm.clone(),
            reported: target.as_ref().and_then(|t| t.reported_version.clone()),
            attempts: obs.first().map(|o| attempts(gw, o)).unwrap_or_default(),
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
fn attempts(gw: &GatewayPlan, o: &Observation) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for r in o
        .upstream
        .records
        .iter()
        .filter(|r| r.route == RequestRoute::Llm && !r.warmup && !r.probe && !r.canary)
    {
        let fp = r.profile_fp.clone().unwrap_or_else(|| "-".into());
        let name = gw.tokens.profile_of(&fp).map_or(fp, str::to_string);
        *out.entry(name).or_insert(0) += 1;
    }
    out
}
