//! Checks that depend on the scenario's `[target]`: an external gateway's breakers are not
//! visible, so breaker-transition and probe-spacing expectations (and metric ones without a
//! `metrics_url`) would judge nothing; OpenClaw expectations need an OpenClaw target, turn
//! expectations an external one; profiles
//! named by expectations must exist; an OpenClaw or Portkey target must be configurable from the
//! scenario (one primary model, a key per provider); Portkey exports no metrics.

use super::format::ScenarioFile;
use super::gateway::FieldError;
use super::target::TargetKind;
use crate::engine::RequestKind;
use crate::replay::traffic::TrafficLine;

/// The first check that fails, naming its field.
pub(super) fn check_target(
    file: &ScenarioFile,
    traffic: &[TrafficLine],
    duration_ms: u64,
    user: Option<&crate::gateway::openclaw::user_config::UserConfig>,
) -> Result<(), FieldError> {
    let kind = file.target.kind;
    let e = &file.expect;
    for (i, p) in e.named_profiles() {
        if !file.profile.iter().any(|q| q.id == p) {
            let hint = crate::util::suggest::closest(&p, file.profile.iter().map(|q| q.id.as_str()))
                .map(|c| format!(": did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(FieldError::new(
                i,
                format!("`{p}` is not the id of a [[profile]]{hint}"),
            ));
        }
    }
    if kind.is_external() {
        let invisible = [
            ("transition", e.transition.len()),
            ("no_transition", e.no_transition.len()),
            ("probe_spacing", e.probe_spacing.len()),
        ];
        for (table, n) in invisible {
            if n > 0 {
                return Err(FieldError::new(
                    format!("expect.{table}[0]"),
                    format!(
                        "judges the embedded engine's breakers, which this `{}` target does not expose: \
                         use expect.attempts, first_request, no_request, retry_gaps or recovered (judged at \
                         the upstream)",
                        kind.as_str()
                    ),
                ));
            }
        }
        if !e.metric.is_empty() && kind == TargetKind::Portkey {
            return Err(FieldError::new(
                "expect.metric[0]",
                "Portkey's open-source gateway exports no metrics (it has no /metrics): a metric \
                 row would judge nothing; ask the upstream instead (expect.attempts, \
                 expect.per_turn, expect.cooldown)"
                    .into(),
            ));
        }
        if !e.metric.is_empty() && file.target.metrics_url.is_none() {
            return Err(FieldError::new(
                "expect.metric[0]",
                "needs `[target] metrics_url` to scrape: this target exports no metrics the \
                 harness can read"
                    .into(),
            ));
        }
        latency_below_turn_timeout(file)?;
        let calls = traffic
            .iter()
            .filter(|l| l.at_ms < duration_ms && matches!(l.kind, RequestKind::Llm { .. }))
            .count();
        if calls == 0 {
            return Err(FieldError::new(
                "traffic",
                "an external target is driven by model calls: none falls before `duration`".into(),
            ));
        }
    }
    if !kind.is_external() && !e.turn.is_empty() {
        return Err(FieldError::new(
            "expect.turn[0]",
            "judges the turns the harness sends an external gateway ([target] kind = \
             \"openclaw\" or \"http\"); the embedded engine is sent requests, not turns: use \
             expect.metric or expect.attempts"
                .into(),
        ));
    }
    if kind != TargetKind::Openclaw {
        for (table, n) in [
            ("openclaw_decision", e.openclaw_decision.len()),
            ("openclaw_cooldown", e.openclaw_cooldown.len()),
        ] {
            if n > 0 {
                return Err(FieldError::new(
                    format!("expect.{table}[0]"),
                    format!(
                        "is about an OpenClaw gateway's log and state; this target is `{}`",
                        kind.as_str()
                    ),
                ));
            }
        }
    }
    if kind.is_supervised() {
        super::gateway::gateway_config_with(file, traffic, super::gateway::UPSTREAM_SLOT, user)?;
    }
    if kind == TargetKind::Portkey {
        // Its x-portkey-config is made from the same configuration (`gateway::portkey::config`).
        super::gateway::gateway_config(file, traffic, super::gateway::UPSTREAM_SLOT)?;
    }
    Ok(())
}

/// A `latency_at_most` of `[[expect.turn]]` below the turns' timeout: a turn is cut at
/// `turn_timeout` (it has no latency then), so every answered turn took less and a bound at or
/// above the timeout bounds nothing.
fn latency_below_turn_timeout(file: &ScenarioFile) -> Result<(), FieldError> {
    let timeout = file.target.turn_timeout();
    let shown = humantime::format_duration(timeout);
    for (i, t) in file.expect.turn.iter().enumerate() {
        let Some(at_most) = t.latency_at_most.filter(|l| *l >= timeout) else {
            continue;
        };
        return Err(FieldError::new(
            format!("expect.turn[{i}].latency_at_most"),
            format!(
                "`{}` could never fail: a turn that takes longer than `[target] turn_timeout` \
                 ({shown}) is cut there and has no latency, so every turn that is timed took \
                 less than this bound; give a bound below {shown}, or count the cut turns \
                 (`outcome = \"timed_out\"`, `equals = 0`)",
                humantime::format_duration(at_most)
            ),
        ));
    }
    Ok(())
}

/// Warnings: tool and WebSocket lines an external target does not get.
pub(super) fn target_warnings(file: &ScenarioFile, traffic: &[TrafficLine]) -> Vec<String> {
    if !file.target.kind.is_external() {
        return Vec::new();
    }
    let other = traffic
        .iter()
        .filter(|l| !matches!(l.kind, RequestKind::Llm { .. }))
        .count();
    if other == 0 {
        return Vec::new();
    }
    vec![format!(
        "traffic: {other} tool/WebSocket lines are left out: a `{}` target is driven over \
         /v1/chat/completions only",
        file.target.kind.as_str()
    )]
}
