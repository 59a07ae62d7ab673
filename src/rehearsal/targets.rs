//! One scenario against several `--target` files side by side (docs/scenario.md, "Several
//! targets side by side"): each target's plan (`ScenarioPlan::each_target`, labelled with its
//! file's stem) run in turn, whatever its kind, as a run of its own — its own directory
//! `RUN/LABEL/` with its own run files, its own fresh mock upstream and recorder per arm, its
//! own gateway (never a port held by another arm: the arms run one after another) — and judged
//! on its own by the one assembly; then the reports folded into one ([`fold`]): every arm's
//! section renamed after its target (`LABEL`, `LABEL@VERSION`, `LABEL/POLICY`), the
//! side-by-side table (`report.targets`), and the run's verdict the worst arm's. A harness
//! failure of one target does not stop the others (each is a fresh system under test); a stop
//! request does: the targets not reached are `not_run`, and the verdict says so.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, anyhow};

use super::sut::SystemUnderTest;
use crate::exit::CmdError;
use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::suite::{severity, worst};
use crate::report::model::{PolicyReport, ReplayInfo, Report, Verdict};
use crate::report::targets::{TargetArm, TargetsSection, VERDICT_RULE};
use crate::scenario::target_file::TargetFileUsed;
use crate::util::shutdown::Shutdown;

/// One target's run: its plan, its label (its directory), and its report judged alone.
struct Ran<'a> {
    plan: &'a ScenarioPlan,
    label: String,
    report: Report,
}

/// Runs every target of `sp` into its own directory under `dir`, in order; the one report.
/// A run file that could not be written is the harness's failure (as for one target).
pub(crate) async fn rehearse(
    sp: &ScenarioPlan,
    dir: &Path,
    stop: &Shutdown,
    plain: bool,
) -> Result<Report, CmdError> {
    let mut ran = Vec::new();
    for plan in sp.each_target() {
        let label = plan.label.clone().unwrap_or_else(|| "target".into());
        let sub = dir.join(&label);
        let sut = SystemUnderTest::of(plan);
        let report = if stop.reason().is_some() {
            crate::rehearsal::assemble::report(plan, sut.not_started(plan, None))
        } else {
            std::fs::create_dir_all(&sub)
                .with_context(|| format!("creating {}", sub.display()))
                .map_err(CmdError::harness)?;
            let files = RunFiles::open(&sub)
                .with_context(|| format!("opening the run files in {}", sub.display()))
                .map_err(CmdError::harness)?;
            crate::errln!("{}: target {label} ({})", plan.name(), plan.target_kind().as_str());
            let report = sut.rehearse(plan, &sub, &files, stop, plain).await;
            if let Some(e) = files.scrapes.last_error() {
                return Err(CmdError::harness(anyhow!(
                    "{e} (scrapes.prom.gz in {} is incomplete)",
                    sub.display()
                )));
            }
            report
        };
        ran.push(Ran { plan, label, report });
    }
    Ok(fold(sp, ran))
}

/// The arm name of section `s` of a target labelled `label` whose report is `r`.
fn arm_name(label: &str, r: &Report, s: &PolicyReport) -> String {
    if r.versions.is_some() {
        format!("{label}@{}", s.policy)
    } else if r.policies.len() > 1 {
        format!("{label}/{}", s.policy)
    } else {
        label.to_string()
    }
}

/// Model requests at the upstream per lane (profile id, else dep) of a section's picture.
fn attempts(s: &PolicyReport) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for l in s.requests.iter().flat_map(|q| &q.lanes).filter(|l| l.route == "llm") {
        *out.entry(l.name.clone()).or_insert(0) += l.requests;
    }
    out
}

/// Which expectations drift rows judge an arm by: its target's scenario's, for the arm's name
/// within its target.
pub(crate) fn drift_expectations(
    sp: &ScenarioPlan,
    report: &Report,
) -> BTreeMap<String, Vec<crate::verdict::drift::ExpectDrift>> {
    let mut out = BTreeMap::new();
    let Some(t) = &report.targets else { return out };
    for a in &t.arms {
        let Some(plan) = sp
            .each_target()
            .find(|p| p.label.as_deref().is_some_and(|l| a.dir == l))
        else {
            continue;
        };
        let inner = a
            .arm
            .strip_prefix(a.dir.as_str())
            .and_then(|rest| rest.get(1..))
            .filter(|rest| !rest.is_empty());
        let arm = match inner {
            Some(inner) => inner.to_string(),
            None => plan.gateways.first().map_or_else(
                || plan.policies.first().map(|p| p.as_str().to_string()).unwrap_or_default(),
                |g| g.arm.clone(),
            ),
        };
        out.insert(a.arm.clone(), plan.checked.file.expect_for(&arm).drift);
    }
    out
}

/// The reports of every target folded into the one report of the run.
fn fold(sp: &ScenarioPlan, ran: Vec<Ran<'_>>) -> Report {
    let mut arms = Vec::new();
    let mut policies = Vec::new();
    let mut configs = Vec::new();
    let mut notes = Vec::new();
    let mut contradictions = Vec::new();
    let mut read_failures = serde_json::Map::new();
    let mut worst_of: Option<(Verdict, String, Option<String>)> = None;
    for Ran { plan, label, report } in &ran {
        let used = plan.checked.target_file.clone().unwrap_or_else(|| TargetFileUsed {
            path: label.clone(),
            digest: plan.checked.digest.clone(),
        });
        for s in &report.policies {
            let name = arm_name(label, report, s);
            let version_arm = report
                .versions
                .as_ref()
                .and_then(|v| v.arms.iter().find(|a| a.version == s.policy));
            let target = match version_arm {
                Some(v) => v.target.clone(),
                None => report.target.clone(),
            };
            arms.push(TargetArm {
                arm: name.clone(),
                target_file: used.clone(),
                kind: plan.target_kind().as_str().to_string(),
                gateway: target.as_ref().map(|t| match (&t.url, t.kind.as_str()) {
                    (Some(u), "http") => u.clone(),
                    _ => t.kind.clone(),
                }),
                version: target
                    .as_ref()
                    .and_then(|t| t.version.clone().or_else(|| t.reported_version.clone())),
                verdict: report.verdict.as_str().to_string(),
                dir: label.clone(),
                attempts: attempts(s),
                target,
            });
            let mut s = s.clone();
            s.policy = name;
            policies.push(s);
        }
        if let Some(rf) = report.config.get("read_failures").and_then(|v| v.as_object()) {
            for (arm, v) in rf {
                read_failures.insert(format!("{label}/{arm}"), v.clone());
            }
        }
        configs.push(serde_json::json!({
            "label": label,
            "dir": label,
            "target_file": used,
            "verdict": report.verdict,
            "config": report.config,
        }));
        notes.extend(report.notes.iter().map(|n| format!("[{label}] {n}")));
        contradictions.extend(report.contradictions.iter().cloned());
        let bad = worst_of.as_ref().is_none_or(|(v, ..)| severity(report.verdict) > severity(*v));
        if bad {
            worst_of = Some((report.verdict, label.clone(), report.reason.clone()));
        }
    }
    let diff = crate::report::targets::diff(&arms, &policies);
    let verdict = worst(ran.iter().map(|r| r.report.verdict));
    let reason = worst_of.filter(|(v, ..)| *v != Verdict::Pass).map(|(v, label, why)| {
        let why = why.map(|w| format!(": {w}")).unwrap_or_default();
        format!("the worst arm's verdict: target {label} {}{why}", v.as_str())
    });
    let digest = crate::scenario::digest::of_bytes(
        ran.iter()
            .map(|r| r.plan.checked.digest.as_str())
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
    );
    let first = &ran[0].report;
    Report {
        verdict,
        reason,
        stopped: ran.iter().find_map(|r| r.report.stopped.clone()),
        replay: ReplayInfo::combine(&ran.iter().map(|r| r.report.replay).collect::<Vec<_>>()),
        contradictions,
        notes,
        config: serde_json::json!({
            "scenario_file": crate::builtin::shown(&sp.checked.path),
            "traffic_file": crate::builtin::shown(&sp.checked.traffic_path),
            "targets": configs,
            "read_failures": read_failures,
        }),
        // `target` keeps its one-gateway meaning (history, compare): the first gateway arm's.
        target: arms.iter().find_map(|a| a.target.clone()),
        versions: None,
        fleet: None,
        targets: Some(TargetsSection {
            verdict_rule: VERDICT_RULE.to_string(),
            arms,
            diff,
        }),
        policies,
        scenario_digest: Some(digest),
        target_file: None,
        ..first.clone()
    }
}
