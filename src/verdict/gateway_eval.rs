//! Pure evaluators of the OpenClaw-only expectations ([`super::ground`]): its log decisions
//! (typed by `gateway::openclaw::log`) counted by kind, reason and profile, and each profile's
//! cooldown in its auth state after the run (`cooldownUntil − lastFailureAt`).

use std::time::Duration;

use super::ground::{ExpectGatewayCooldown, ExpectGatewayDecision, counts_hold, counts_text};
use super::{ExpectKind, ExpectStatus, ExpectationResult, secs};
use crate::gateway::openclaw::log::{Decision, LoggedDecision, profile_hash};
use crate::gateway::openclaw::state::AuthState;

/// The `[[expect.openclaw_decision]]` event name of a decision.
pub(crate) fn event_name(d: &Decision) -> &str {
    match d {
        Decision::Failover { decision, .. } => decision.as_str(),
        Decision::ModelFallback { decision, .. } => decision.as_str(),
        Decision::FallbackChainStopped { .. } => "chain_stopped",
        Decision::SameModelRetry { .. } => "same_model_retry",
        Decision::RetryWindowElapsed { .. } => "retry_window_elapsed",
        Decision::IdleTimeoutBreakerTripped { .. } => "idle_timeout_breaker_tripped",
        Decision::ProfileFailureState { .. } => "profile_failure_state",
    }
}

fn reason_of(d: &Decision) -> Option<&str> {
    match d {
        Decision::Failover { reason, .. }
        | Decision::ModelFallback { reason, .. }
        | Decision::FallbackChainStopped { reason }
        | Decision::SameModelRetry { reason, .. }
        | Decision::ProfileFailureState { reason, .. } => reason.as_deref(),
        _ => None,
    }
}

fn profile_of(d: &Decision) -> Option<&str> {
    match d {
        Decision::Failover { profile_hash, .. }
        | Decision::ProfileFailureState { profile_hash, .. } => profile_hash.as_deref(),
        _ => None,
    }
}

fn result(
    kind: ExpectKind,
    dep: String,
    expected: String,
    observed: String,
    ok: bool,
) -> ExpectationResult {
    let detail = format!("{dep} {expected}: observed {observed}");
    ExpectationResult {
        kind,
        dep: Some(dep),
        series: None,
        expected,
        observed,
        expected_ms: None,
        observed_ms: None,
        delta_ms: None,
        tolerance_ms: None,
        ok,
        status: ExpectStatus::from_ok(ok),
        detail,
    }
}

/// `[[expect.openclaw_decision]]`. `stopped`: the run ended early (a pass is then not reached).
pub(crate) fn decision(
    e: &ExpectGatewayDecision,
    log: &[LoggedDecision],
    stopped: bool,
) -> ExpectationResult {
    let hash = e.profile.as_deref().map(profile_hash);
    let n = log
        .iter()
        .map(|d| &d.decision)
        .filter(|d| event_name(d) == e.event)
        .filter(|d| e.reason.as_deref().is_none_or(|r| reason_of(d) == Some(r)))
        .filter(|d| hash.as_deref().is_none_or(|h| profile_of(d) == Some(h)))
        .count() as u64;
    let reason = e
        .reason
        .as_ref()
        .map(|r| format!(" reason={r}"))
        .unwrap_or_default();
    let expected = format!(
        "{}{reason} {}",
        e.event,
        counts_text(e.equals, e.at_least, e.at_most)
    );
    let dep = e.profile.clone().unwrap_or_else(|| "openclaw".into());
    let ok = counts_hold(n, e.equals, e.at_least, e.at_most);
    let mut r = result(
        ExpectKind::GatewayDecision,
        dep,
        expected,
        n.to_string(),
        ok,
    );
    if stopped && ok {
        r.status = ExpectStatus::NotReached;
        r.ok = false;
    }
    r
}

/// `[[expect.openclaw_cooldown]]`, judged on the auth state read after the stop.
pub(crate) fn cooldown(e: &ExpectGatewayCooldown, state: &AuthState) -> ExpectationResult {
    let p = state.profile(&e.profile);
    let length = p.and_then(|p| p.cooldown_ms);
    let reason = p.and_then(|p| p.cooldown_reason.as_deref());
    let observed = match (length, reason) {
        (Some(ms), r) => format!("{} reason {}", secs(ms as i64), r.unwrap_or("none")),
        (None, _) if !state.found => "no auth state written".to_string(),
        (None, _) => "no cooldown".to_string(),
    };
    let tol = e.tolerance.unwrap_or(Duration::from_secs(1));
    let tol_ms = u64::try_from(tol.as_millis()).unwrap_or(u64::MAX);
    let (expected, ok) = if e.none {
        ("no cooldown".to_string(), length.is_none())
    } else {
        let want = e
            .cooldown
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let mut text = "cooldown".to_string();
        if let Some(w) = want {
            text.push_str(&format!(" {} ±{}", secs(w as i64), secs(tol_ms as i64)));
        }
        if let Some(r) = &e.reason {
            text.push_str(&format!(" reason {r}"));
        }
        let ok = length.is_some_and(|l| want.is_none_or(|w| l.abs_diff(w) <= tol_ms))
            && e.reason.as_deref().is_none_or(|r| reason == Some(r));
        (text, ok)
    };
    let mut r = result(
        ExpectKind::GatewayCooldown,
        e.profile.clone(),
        expected,
        observed,
        ok,
    );
    r.observed_ms = length.map(|l| l as i64);
    r.expected_ms = e.cooldown.map(|d| d.as_millis() as i64);
    r.tolerance_ms = (!e.none).then_some(tol_ms as i64);
    r.delta_ms = r.observed_ms.zip(r.expected_ms).map(|(o, x)| o - x);
    r
}

/// Every OpenClaw expectation of `e`, in table order; `state` is `None` when it could not be
/// read (each cooldown expectation then fails saying so).
pub(crate) fn evaluate(
    e: &crate::verdict::Expectations,
    log: &[LoggedDecision],
    state: Option<&AuthState>,
    stopped: bool,
) -> Vec<ExpectationResult> {
    let mut out: Vec<ExpectationResult> = e
        .openclaw_decision
        .iter()
        .map(|x| decision(x, log, stopped))
        .collect();
    let unread = AuthState::default();
    for c in &e.openclaw_cooldown {
        let mut r = cooldown(c, state.unwrap_or(&unread));
        if state.is_none() {
            r.ok = false;
            r.status = ExpectStatus::Fail;
            r.observed = "auth state unreadable".into();
            r.detail = format!(
                "{} {}: the auth state could not be read",
                c.profile, r.expected
            );
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::openclaw::state::parse_state;

    fn logged(d: Decision) -> LoggedDecision {
        LoggedDecision {
            wall_ms: 0,
            decision: d,
        }
    }

    fn log() -> Vec<LoggedDecision> {
        let retry = |i| Decision::SameModelRetry {
            attempt: i,
            of: 8,
            target: "mockai/m1".into(),
            reason: Some("server_error".into()),
            delay_ms: 1000,
        };
        let mut v: Vec<LoggedDecision> = (1..=8).map(|i| logged(retry(i))).collect();
        v.push(logged(Decision::Failover {
            decision: "rotate_profile".into(),
            reason: Some("server_error".into()),
            retry_count: Some(8),
            profile_hash: Some(profile_hash("mockai:a")),
            provider: Some("mockai".into()),
            model: Some("m1".into()),
        }));
        v
    }

    #[test]
    fn the_filters_validate_allows_are_the_fields_each_event_carries() {
        let some = || Some("x".to_string());
        let every = [
            Decision::Failover {
                decision: "rotate_profile".into(),
                reason: some(),
                retry_count: None,
                profile_hash: some(),
                provider: None,
                model: None,
            },
            Decision::Failover {
                decision: "fallback_model".into(),
                reason: some(),
                retry_count: None,
                profile_hash: some(),
                provider: None,
                model: None,
            },
            Decision::ProfileFailureState {
                profile_hash: some(),
                reason: some(),
                cooldown_until_ms: None,
            },
            Decision::ModelFallback {
                decision: "candidate_failed".into(),
                candidate: None,
                reason: some(),
            },
            Decision::ModelFallback {
                decision: "candidate_succeeded".into(),
                candidate: None,
                reason: some(),
            },
            Decision::FallbackChainStopped { reason: some() },
            Decision::SameModelRetry {
                attempt: 1,
                of: 1,
                target: "p/m".into(),
                reason: some(),
                delay_ms: 0,
            },
            Decision::RetryWindowElapsed {
                target: "p/m".into(),
                retries: None,
            },
            Decision::IdleTimeoutBreakerTripped {
                consecutive: None,
                cap: None,
            },
        ];
        let mut names: Vec<&str> = Vec::new();
        for d in &every {
            let (reason, profile) = crate::verdict::ground::decision_filters(event_name(d));
            assert_eq!(reason, reason_of(d).is_some(), "{}: reason", event_name(d));
            assert_eq!(profile, profile_of(d).is_some(), "{}: profile", event_name(d));
            names.push(event_name(d));
        }
        names.sort_unstable();
        let mut known = crate::verdict::ground::DECISION_EVENTS.to_vec();
        known.sort_unstable();
        assert_eq!(names, known, "every event is covered");
    }

    #[test]
    fn decisions_count_by_event_reason_and_profile() {
        let l = log();
        let e = ExpectGatewayDecision {
            event: "same_model_retry".into(),
            equals: Some(8),
            ..Default::default()
        };
        assert!(decision(&e, &l, false).ok);
        assert!(
            !decision(
                &ExpectGatewayDecision {
                    equals: Some(7),
                    ..e.clone()
                },
                &l,
                false
            )
            .ok
        );
        let rot = ExpectGatewayDecision {
            event: "rotate_profile".into(),
            reason: Some("server_error".into()),
            profile: Some("mockai:a".into()),
            equals: Some(1),
            ..Default::default()
        };
        assert!(decision(&rot, &l, false).ok);
        let other = ExpectGatewayDecision {
            profile: Some("mockai:b".into()),
            ..rot.clone()
        };
        assert!(!decision(&other, &l, false).ok);
        let timeout = ExpectGatewayDecision {
            reason: Some("timeout".into()),
            ..rot.clone()
        };
        assert!(!decision(&timeout, &l, false).ok);
        assert_eq!(decision(&rot, &l, true).status, ExpectStatus::NotReached);
        let none = ExpectGatewayDecision {
            event: "fallback_model".into(),
            equals: Some(0),
            ..Default::default()
        };
        assert!(decision(&none, &l, false).ok);
    }

    #[test]
    fn cooldowns_compare_length_and_reason() {
        let s = parse_state(Some(
            r#"{"usageStats":{"mockai:a":{"cooldownUntil":40000,"cooldownReason":"rate_limit","lastFailureAt":10000}}}"#,
        ))
        .unwrap();
        let e = ExpectGatewayCooldown {
            profile: "mockai:a".into(),
            reason: Some("rate_limit".into()),
            cooldown: Some(Duration::from_secs(30)),
            ..Default::default()
        };
        let got = cooldown(&e, &s);
        assert!(got.ok, "{got:?}");
        assert_eq!(got.delta_ms, Some(0));
        assert!(
            !cooldown(
                &ExpectGatewayCooldown {
                    reason: Some("timeout".into()),
                    ..e.clone()
                },
                &s
            )
            .ok
        );
        assert!(
            !cooldown(
                &ExpectGatewayCooldown {
                    cooldown: Some(Duration::from_secs(60)),
                    ..e.clone()
                },
                &s
            )
            .ok
        );
        assert!(
            !cooldown(
                &ExpectGatewayCooldown {
                    none: true,
                    ..e.clone()
                },
                &s
            )
            .ok
        );
        let b = ExpectGatewayCooldown {
            profile: "mockai:b".into(),
            none: true,
            ..Default::default()
        };
        assert!(cooldown(&b, &s).ok);
        let empty = AuthState::default();
        let got = cooldown(&e, &empty);
        assert!(
            !got.ok && got.observed == "no auth state written",
            "{got:?}"
        );
    }
}
