//! Pure evaluators of the OpenClaw-only expectations ([`super::ground`]): its log decisions
//! (typed by `gateway::openclaw::log`) counted by kind, reason and profile, and each profile's
//! cooldown in its auth state after the run (`cooldownUntil − lastFailureAt`).

use std::time::Duration;

use super::ground::{ExpectGatewayCooldown, ExpectGatewayDecision, counts_hold, counts_text};
use super::{ExpectKind, ExpectStatus, ExpectationResult, Witness, secs};
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
        witness: Default::default(),
        ok,
        status: ExpectStatus::from_ok(ok),
        detail,
        ..ExpectationResult::counted(kind, dep, expected, observed)
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

/// `[[expect.openclaw_cooldown]]`, judged on the auth state read after the stop (a missing or
/// unreadable database never reaches here: [`evaluate`] fails the row with the reason). A
/// database the gateway kept without the `authProfiles.state` row holds no profile state at all,
/// so no cooldown (OpenClaw 2026.9.6 writes none after a stall before headers: measured); a
/// disable (`disabledUntil`, the billing lane) is no "no cooldown".
pub(crate) fn cooldown(e: &ExpectGatewayCooldown, state: &AuthState) -> ExpectationResult {
    let p = state.profile(&e.profile);
    let length = p.and_then(|p| p.cooldown_ms);
    let reason = p.and_then(|p| p.cooldown_reason.as_deref());
    let disabled = p.filter(|p| p.disabled_until_ms.is_some_and(|d| d > 0));
    let observed = match (length, reason, disabled) {
        _ if !state.found => "no auth state written (no authProfiles.state row)".to_string(),
        (Some(ms), r, _) => format!("{} reason {}", secs(ms as i64), r.unwrap_or("none")),
        (None, _, Some(d)) => format!(
            "disabled, reason {}",
            d.disabled_reason.as_deref().unwrap_or("none")
        ),
        (None, _, None) => "no cooldown".to_string(),
    };
    let tol = e.tolerance.unwrap_or(Duration::from_secs(1));
    let tol_ms = u64::try_from(tol.as_millis()).unwrap_or(u64::MAX);
    let (expected, ok) = if e.none {
        (
            "no cooldown".to_string(),
            length.is_none() && disabled.is_none(),
        )
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

/// A row of `e` failed because what it reads could not be read (`why`).
fn unread(mut r: ExpectationResult, what: &str, why: &str) -> ExpectationResult {
    r.ok = false;
    r.status = ExpectStatus::Fail;
    r.observed = format!("{what} unreadable");
    r.observed_ms = None;
    r.delta_ms = None;
    r.detail = format!(
        "{} {}: {why}",
        r.dep.as_deref().unwrap_or("openclaw"),
        r.expected
    );
    r
}

/// Every OpenClaw expectation of `e`, in table order. `log` and `state` are what was read of
/// the gateway's log and auth state, or why they could not be (a missing file included): each
/// expectation that reads one then fails, saying why — never a pass on nothing.
///
/// Witnesses: a decision row's is the log's lines and the decisions parsed from them (a log
/// with no line showed no decision because it showed nothing); a cooldown row's is the one read
/// of the auth state and the profiles it held.
pub(crate) fn evaluate(
    e: &crate::verdict::Expectations,
    log: Result<(&[LoggedDecision], u64), &str>,
    state: Result<&AuthState, &str>,
    stopped: bool,
) -> Vec<ExpectationResult> {
    let mut out: Vec<ExpectationResult> = e
        .openclaw_decision
        .iter()
        .map(|x| match log {
            Ok((l, lines)) => {
                let mut r = decision(x, l, stopped);
                r.witness = Witness::of(&[("log_lines", lines), ("decisions", l.len() as u64)]);
                r
            }
            Err(why) => unread(decision(x, &[], false), "log", why),
        })
        .collect();
    let none = AuthState::default();
    for c in &e.openclaw_cooldown {
        out.push(match state {
            Ok(s) => {
                let mut r = cooldown(c, s);
                r.witness = Witness::of(&[
                    ("auth_state_reads", 1),
                    ("profiles_in_state", s.profiles.len() as u64),
                ]);
                r
            }
            Err(why) => unread(cooldown(c, &none), "auth state", why),
        });
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
            assert_eq!(
                profile,
                profile_of(d).is_some(),
                "{}: profile",
                event_name(d)
            );
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
            !got.ok && got.observed.starts_with("no auth state written"),
            "{got:?}"
        );
    }

    #[test]
    fn a_missing_log_or_state_fails_what_reads_it_with_the_reason_never_passes() {
        // Each of these holds on nothing: zero decisions, no cooldown.
        let expect = crate::verdict::Expectations {
            openclaw_decision: vec![ExpectGatewayDecision {
                event: "rotate_profile".into(),
                equals: Some(0),
                ..Default::default()
            }],
            openclaw_cooldown: vec![ExpectGatewayCooldown {
                profile: "mockai:a".into(),
                none: true,
                ..Default::default()
            }],
            ..Default::default()
        };
        let rows = evaluate(
            &expect,
            Err("reading OpenClaw's log /x/openclaw.log: No such file or directory"),
            Err("reading OpenClaw's auth state: no auth state database at /x/openclaw.sqlite"),
            false,
        );
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r.status, ExpectStatus::Fail, "{r:?}");
            assert!(!r.ok);
        }
        assert!(
            rows[0].detail.contains("No such file"),
            "{}",
            rows[0].detail
        );
        assert!(
            rows[1].detail.contains("no auth state database"),
            "{}",
            rows[1].detail
        );
        // Read, zero decisions and a database without the authProfiles.state row (what OpenClaw
        // 2026.9.6 leaves after a stall before headers): judged on what was read.
        let no_row = parse_state(None).unwrap();
        let got = evaluate(&expect, Ok((&[], 0)), Ok(&no_row), false);
        assert_eq!(
            got[0].status,
            ExpectStatus::Pass,
            "zero decisions read from a log"
        );
        assert_eq!(got[1].status, ExpectStatus::Pass, "{:?}", got[1]);
        assert!(
            got[1].observed.contains("no authProfiles.state row"),
            "{}",
            got[1].observed
        );
        // A disabled profile (billing lane) has no "no cooldown".
        let disabled = parse_state(Some(
            r#"{"usageStats":{"mockai:a":{"disabledUntil":90000,"disabledReason":"billing","errorCount":1}}}"#,
        ))
        .unwrap();
        let got = evaluate(&expect, Ok((&[], 0)), Ok(&disabled), false);
        assert_eq!(got[1].status, ExpectStatus::Fail, "{:?}", got[1]);
        assert!(got[1].observed.contains("disabled"), "{}", got[1].observed);
    }
}
