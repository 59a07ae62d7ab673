//! Checks that depend on the scenario's `[target]`: an external gateway's breakers are not
//! visible, so breaker-transition and probe-spacing expectations (and metric ones without a
//! `metrics_url`) would judge nothing; OpenClaw expectations need an OpenClaw target; profiles
//! named by expectations must exist; turn expectations need model calls in the traffic (a
//! fleet's hosts report no turns); an OpenClaw or Portkey target must be configurable from the
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
        if model_calls(traffic, duration_ms) == 0 {
            return Err(FieldError::new(
                "traffic",
                "an external target is driven by model calls: none falls before `duration`".into(),
            ));
        }
    }
    if !kind.is_external() && !e.turn.is_empty() {
        engine_turns(file, traffic, duration_ms)?;
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

/// The model calls of `traffic` before `duration_ms`: the turns a run sends.
fn model_calls(traffic: &[TrafficLine], duration_ms: u64) -> usize {
    traffic
        .iter()
        .filter(|l| l.at_ms < duration_ms && matches!(l.kind, RequestKind::Llm { .. }))
        .count()
}

/// `[[expect.turn]]` for the embedded engine: each model call of the traffic is a turn, as its
/// client sees it end (docs/scenario.md, "Turn outcomes"). A fleet's hosts report no turns;
/// a traffic with no model call before `duration` gives the rows nothing to judge; the
/// engine's answer carries no usage block to compare; a latency bound at or above the turn
/// bound bounds nothing.
fn engine_turns(
    file: &ScenarioFile,
    traffic: &[TrafficLine],
    duration_ms: u64,
) -> Result<(), FieldError> {
    if file.fleet.is_fleet() {
        return Err(FieldError::new(
            "expect.turn[0]",
            "judges the turns a client sent and what came back; a fleet's hosts do not report \
             theirs: judge the fleet at the upstream (expect.per_turn, expect.attempts) or run \
             the scenario without [fleet] (one embedded engine)"
                .into(),
        ));
    }
    if model_calls(traffic, duration_ms) == 0 {
        return Err(FieldError::new(
            "expect.turn[0]",
            "judges the engine's turns, its traffic's model calls: none falls before `duration`, \
             so nothing would be judged"
                .into(),
        ));
    }
    if let Some(i) = file.expect.turn.iter().position(|t| t.usage.is_some()) {
        return Err(FieldError::new(
            format!("expect.turn[{i}].usage"),
            "the embedded engine's answer is the tokens its call received, with no usage block \
             of its own to compare with the upstream's: use `reported_model` or count \
             `truncated` turns"
                .into(),
        ));
    }
    latency_below_turn_timeout(file)
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
