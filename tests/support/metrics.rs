//! Helpers for the metrics tests: a registry fed one event of every kind.

use rehearse::engine::events::{
    AttemptOutcome, BreakerState, Event, EventKind, EventSink, OpClass,
};
use rehearse::engine::metrics::Metrics;
use rehearse::engine::outcome::{Reason, TimeoutPhase};

/// A dependency name with a comma, a quote and a backslash (label escaping).
pub const WEIRD_DEP: &str = "we\"ird,dep\\name";

/// The wall-clock time of engine ms 0 used by [`populated`].
pub const START_UNIX: f64 = 1_764_442_000.25;

fn ev(t_ms: u64, kind: EventKind) -> Event {
    Event {
        t_ms,
        kind,
        log: None,
    }
}

fn attempt(
    dep: &str,
    outcome: AttemptOutcome,
    phase: Option<TimeoutPhase>,
    probe: bool,
) -> EventKind {
    EventKind::AttemptFinished {
        dep: dep.to_string(),
        worker: 0,
        class: OpClass::LlmInference,
        outcome,
        phase,
        latency_ms: if outcome == AttemptOutcome::Rejected {
            0.0
        } else {
            120.0
        },
        probe,
        profile: None,
        model: None,
        deadline: None,
    }
}

/// Every event kind at least once, over two deps (one with a nasty name).
pub fn events() -> Vec<Event> {
    let tr = |dep: &str, from, to, open_for_ms: Option<u64>| EventKind::BreakerTransition {
        dep: dep.to_string(),
        from,
        to,
        open_for_ms,
        reason: open_for_ms.map(|_| rehearse::engine::TripReason::FailureRatio),
    };
    vec![
        ev(10, attempt("crm_search", AttemptOutcome::Ok, None, false)),
        ev(
            20,
            attempt(
                WEIRD_DEP,
                AttemptOutcome::Timeout,
                Some(TimeoutPhase::Ttfb),
                false,
            ),
        ),
        ev(
            21,
            attempt(WEIRD_DEP, AttemptOutcome::StreamCut, None, false),
        ),
        ev(
            22,
            attempt(
                WEIRD_DEP,
                AttemptOutcome::Timeout,
                Some(TimeoutPhase::InterToken),
                false,
            ),
        ),
        ev(
            1_234,
            tr(
                WEIRD_DEP,
                BreakerState::Closed,
                BreakerState::Open,
                Some(30_000),
            ),
        ),
        ev(
            1_300,
            attempt(WEIRD_DEP, AttemptOutcome::Rejected, None, false),
        ),
        ev(
            31_234,
            EventKind::RetryAfterSkip {
                dep: WEIRD_DEP.into(),
                until_ms: 121_234,
            },
        ),
        ev(
            121_234,
            tr(WEIRD_DEP, BreakerState::Open, BreakerState::HalfOpen, None),
        ),
        ev(121_300, attempt(WEIRD_DEP, AttemptOutcome::Ok, None, true)),
        ev(121_700, attempt(WEIRD_DEP, AttemptOutcome::Ok, None, true)),
        ev(
            121_701,
            tr(
                WEIRD_DEP,
                BreakerState::HalfOpen,
                BreakerState::Closed,
                None,
            ),
        ),
        ev(
            200,
            EventKind::SameProfileRetry {
                provider: "openai-codex".into(),
                profile: "openai-codex:default".into(),
                reason: Reason::Timeout,
                retry: 1,
                of: 1,
                delay_ms: 847,
            },
        ),
        ev(
            300,
            EventKind::CooldownApplied {
                provider: "openai-codex".into(),
                profile: "openai-codex:default".into(),
                reason: Reason::Timeout,
                cooldown_ms: 10_000,
                error_count: 1,
            },
        ),
        ev(
            301,
            EventKind::ProfileRotated {
                provider: "openai-codex".into(),
                from: "openai-codex:default".into(),
                to: Some("openai-codex:backup".into()),
                reason: Reason::Timeout,
            },
        ),
        ev(
            302,
            EventKind::NoProfileAvailable {
                provider: "openai-codex".into(),
            },
        ),
        ev(
            303,
            EventKind::ModelFallback {
                from: "openai-codex/gpt-5.2".into(),
                to: "anthropic/claude-opus".into(),
                reason: Reason::Timeout,
            },
        ),
        ev(
            400,
            EventKind::RetryBudgetExhausted {
                class: OpClass::ToolCall,
                spent: 900,
                budget: 1000,
            },
        ),
        ev(
            500,
            EventKind::Throttled {
                tenant: "team-a".into(),
                to_model: Some("openai-codex/gpt-5-mini".into()),
            },
        ),
        ev(
            600,
            EventKind::HealthCheck {
                dep: "crm_search".into(),
                ok: true,
            },
        ),
        ev(
            700,
            EventKind::IdempotentDuplicate {
                dep: "ticket_create".into(),
            },
        ),
        ev(
            800,
            EventKind::RequestFinished {
                request: 1,
                dep: "crm_search".into(),
                outcome: AttemptOutcome::Ok,
                attempts: 1,
                model: None,
                fallback: false,
                user_error: None,
                partial: false,
            },
        ),
    ]
}

/// A registry that has seen [`events`].
pub fn populated() -> Metrics {
    let m = Metrics::new(START_UNIX);
    for e in events() {
        m.emit(&e);
    }
    m
}

/// Runs `promtool check metrics` on `text`; panics with a clear message when promtool is
/// missing (the test must not pass silently without it).
pub fn promtool_check(text: &str) -> (bool, String) {
    use std::io::Write;
    let mut child = match std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!(
            "promtool is required for this test but could not be run ({e}); install Debian's \
             `prometheus` package (apt-get install prometheus) so /usr/bin/promtool exists"
        ),
    };
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes()).expect("write to promtool");
    }
    let out = child.wait_with_output().expect("wait for promtool");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), report)
}
