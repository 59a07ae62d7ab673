//! The executor's seams: admission (open breakers skipped, rejections counted, probes marked),
//! context fallbacks, tool and WebSocket calls, speed scaling.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rehearse::engine::RequestKind;
use rehearse::engine::events::Collector;
use rehearse::engine::{
    Admission, Admit, AlwaysAllow, AttemptOutcome, AttemptResult, Engine, EngineConfig,
    EngineOptions, EngineRequest, EventKind, OpClass, Policy, Profile,
};
use tokio::time::Instant;

use crate::support::engine::{Reply, Scripted, logs, of_kind};

const MODEL: &str = "openai-codex/gpt-5";

fn llm(model: &str) -> EngineRequest {
    EngineRequest {
        id: 9,
        kind: RequestKind::Llm {
            model: model.into(),
            stream: true,
            max_tokens: None,
            messages: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

fn two_profiles() -> Vec<Profile> {
    vec![
        Profile::new("openai-codex", "openai-codex:p1"),
        Profile::new("openai-codex", "openai-codex:p2"),
    ]
}

/// An admission with a fixed set of open deps, one that rejects, and one that marks probes.
#[derive(Default)]
struct FakeAdmission {
    open: BTreeSet<String>,
    reject: BTreeSet<String>,
    probe: BTreeSet<String>,
    recorded: Mutex<Vec<(String, bool)>>,
}

impl Admission for FakeAdmission {
    fn admit(&self, dep: &str, _: usize, now: Instant) -> Admit {
        if self.reject.contains(dep) {
            Admit::Reject {
                until: now + Duration::from_secs(30),
            }
        } else {
            Admit::Allow {
                probe: self.probe.contains(dep),
                timeout: self
                    .probe
                    .contains(dep)
                    .then_some(Duration::from_millis(700)),
            }
        }
    }
    fn record(
        &self,
        dep: &str,
        _: usize,
        probe: bool,
        _: &AttemptResult,
        _: rehearse::engine::Now,
    ) {
        self.recorded.lock().unwrap().push((dep.to_string(), probe));
    }
    fn is_open(&self, dep: &str, _: Instant) -> bool {
        self.open.contains(dep)
    }
}

fn build(
    cfg: EngineConfig,
    adm: Arc<dyn Admission>,
    t: Scripted,
    speed: f64,
) -> (Engine<Scripted>, Arc<Collector>) {
    let sink = Arc::new(Collector::default());
    let mut opts = EngineOptions::new(Instant::now());
    opts.speed = crate::support::speed(speed);
    opts.policy = Policy::RetryGate;
    let e = Engine::new(cfg, two_profiles(), opts, t, adm, sink.clone()).unwrap();
    (e, sink)
}

fn dep(id: &str) -> String {
    Profile::new("openai-codex", id).dep()
}

#[tokio::test(start_paused = true)]
async fn a_model_endpoint_with_an_open_breaker_is_skipped_like_a_cooling_profile() {
    let adm = FakeAdmission {
        open: [dep("openai-codex:p1")].into(),
        ..Default::default()
    };
    let t = Scripted::new(|_, _| Reply::Ok);
    let (e, _) = build(EngineConfig::default(), Arc::new(adm), t.clone(), 1.0);
    assert!(e.handle(llm(MODEL), 0).await.is_ok());
    assert_eq!(t.profiles(), ["openai-codex:p2"]);
}

#[tokio::test(start_paused = true)]
async fn every_endpoint_open_logs_no_profile_and_falls_back() {
    let adm = FakeAdmission {
        open: [dep("openai-codex:p1"), dep("openai-codex:p2")].into(),
        ..Default::default()
    };
    let t = Scripted::new(|_, _| Reply::Ok);
    let cfg = EngineConfig::from_toml(
        "[modelFailover]\nfallbacks = [\"anthropic/claude-opus\"]",
        "t",
    )
    .unwrap();
    let (e, sink) = build(cfg, Arc::new(adm), t.clone(), 1.0);
    let resp = e.handle(llm(MODEL), 0).await;
    assert!(resp.is_ok() && resp.fallback, "{resp:?}");
    assert_eq!(resp.model.as_deref(), Some("anthropic/claude-opus"));
    assert_eq!(t.profiles(), ["anthropic:default"]);
    assert!(logs(&sink).contains(
        &"No available auth profile for openai-codex (all in cooldown or unavailable).".to_string()
    ));
}

#[tokio::test(start_paused = true)]
async fn a_rejection_is_an_attempt_with_outcome_rejected_and_failover_moves_on() {
    let adm = FakeAdmission {
        reject: [dep("openai-codex:p1")].into(),
        ..Default::default()
    };
    let t = Scripted::new(|_, _| Reply::Ok);
    let (e, sink) = build(EngineConfig::default(), Arc::new(adm), t.clone(), 1.0);
    let resp = e.handle(llm(MODEL), 0).await;
    assert!(resp.is_ok(), "{resp:?}");
    assert_eq!(resp.attempts, 2);
    assert_eq!(
        t.profiles(),
        ["openai-codex:p2"],
        "the rejected endpoint was never called"
    );
    let outcomes: Vec<_> = of_kind(&sink, "attempt_finished")
        .into_iter()
        .map(|e| match e.kind {
            EventKind::AttemptFinished { outcome, .. } => outcome,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(outcomes, [AttemptOutcome::Rejected, AttemptOutcome::Ok]);
}

#[tokio::test(start_paused = true)]
async fn a_probe_carries_the_dep_in_x_breaker_probe_and_the_tighter_timeout() {
    let d1 = dep("openai-codex:p1");
    let adm = Arc::new(FakeAdmission {
        probe: [d1.clone()].into(),
        ..Default::default()
    });
    let t = Scripted::new(|c, _| {
        assert_eq!(c.deadlines.ttfb, Some(Duration::from_millis(700)));
        assert!(c.deadlines.total <= Duration::from_millis(700));
        Reply::Ok
    });
    let (e, _) = build(EngineConfig::default(), adm.clone(), t.clone(), 1.0);
    assert!(e.handle(llm(MODEL), 3).await.is_ok());
    assert_eq!(t.sent()[0].probe.as_deref(), Some(d1.as_str()));
    assert_eq!(*adm.recorded.lock().unwrap(), [(d1, true)]);
}

#[tokio::test(start_paused = true)]
async fn context_overflow_goes_to_a_context_capable_fallback_without_cooling() {
    let t = Scripted::new(|c, _| match c.bearer.as_deref() {
        Some("google:default") => Reply::Ok,
        _ => Reply::Status(400, Some("context_length_exceeded".into())),
    });
    let cfg = EngineConfig::from_toml(
        "[modelFailover]\nfallbacks = [\"anthropic/claude-opus\"]\ncontextFallbacks = [\"google/gemini-long\"]",
        "t",
    )
    .unwrap();
    let (e, sink) = build(cfg, Arc::new(AlwaysAllow), t.clone(), 1.0);
    let resp = e.handle(llm(MODEL), 0).await;
    assert_eq!(
        resp.model.as_deref(),
        Some("google/gemini-long"),
        "{resp:?}"
    );
    assert!(resp.is_ok() && resp.fallback);
    assert_eq!(
        t.profiles(),
        ["openai-codex:p1", "google:default"],
        "no profile rotation"
    );
    assert!(of_kind(&sink, "cooldown_applied").is_empty());
    let fb = of_kind(&sink, "model_fallback");
    assert_eq!(fb.len(), 1);
    assert!(
        matches!(&fb[0].kind, EventKind::ModelFallback { reason, .. } if reason.as_str() == "context_overflow")
    );
}

#[tokio::test(start_paused = true)]
async fn speed_divides_deadlines_backoff_and_cooldowns_but_events_stay_nominal() {
    let t = Scripted::new(|c, _| match c.bearer.as_deref() {
        Some("openai-codex:p1") => Reply::Timeout,
        _ => Reply::Ok,
    });
    let (e, sink) = build(
        EngineConfig::default(),
        Arc::new(AlwaysAllow),
        t.clone(),
        10.0,
    );
    let start = Instant::now();
    assert!(e.handle(llm(MODEL), 0).await.is_ok());
    let sent = t.sent();
    // Two 3 s timeouts (30 s / 10) and a 30-120 ms jitter (300-1200 ms / 10).
    let retry_gap = (sent[1].at - sent[0].at).as_millis();
    assert!((3_030..=3_120).contains(&retry_gap), "{retry_gap}");
    assert!(sent[2].at - start < Duration::from_millis(6_200));
    let cd = of_kind(&sink, "cooldown_applied");
    assert!(matches!(
        cd[0].kind,
        EventKind::CooldownApplied {
            cooldown_ms: 10_000,
            ..
        }
    ));
    let stats = e
        .store_snapshot()
        .stats("openai-codex:p1")
        .cloned()
        .unwrap();
    assert_eq!(
        stats.cooldown_until.unwrap() - stats.last_failure_at.unwrap(),
        1_000
    );
}

#[tokio::test(start_paused = true)]
async fn tool_and_ws_requests_are_admitted_sent_and_recorded_under_their_names() {
    let adm = Arc::new(FakeAdmission {
        reject: ["calculator".to_string()].into(),
        ..Default::default()
    });
    let t = Scripted::new(|c, _| {
        if c.dep == "crm_search" {
            Reply::Status(503, None)
        } else {
            Reply::Ok
        }
    });
    // One attempt per request: this test is about admission and naming; budget-bounded tool
    // retries are tested in `breaker_executor`.
    let mut cfg = EngineConfig::default();
    cfg.budget.max_attempts = 1;
    let (e, sink) = build(cfg, adm.clone(), t.clone(), 1.0);
    let tool = |name: &str, key: Option<&str>| EngineRequest {
        id: 1,
        kind: RequestKind::Tool {
            name: name.into(),
            body: serde_json::json!({"q": 1}),
            idempotent: key.is_none(),
            idempotency_key: key.map(str::to_string),
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    };
    let r = e.handle(tool("crm_search", None), 1).await;
    assert_eq!((r.outcome, r.attempts), (AttemptOutcome::Http5xx, 1));
    let r = e.handle(tool("calculator", None), 1).await;
    assert_eq!(r.outcome, AttemptOutcome::Rejected);
    let r = e.handle(tool("ticket_create", Some("k-1")), 1).await;
    assert!(r.is_ok());
    let ws = EngineRequest {
        kind: RequestKind::Ws {
            channel: "events".into(),
            messages: 3,
        },
        ..tool("x", None)
    };
    assert!(e.handle(ws, 2).await.is_ok());
    let deps: Vec<_> = t.sent().into_iter().map(|s| s.dep).collect();
    assert_eq!(deps, ["crm_search", "ticket_create", "events"]);
    assert_eq!(adm.recorded.lock().unwrap().len(), 3);
    let classes: Vec<_> = of_kind(&sink, "attempt_finished")
        .into_iter()
        .map(|e| match e.kind {
            EventKind::AttemptFinished { class, .. } => class,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        classes,
        [
            OpClass::ToolCall,
            OpClass::ToolCall,
            OpClass::ToolCall,
            OpClass::Session
        ]
    );
    assert_eq!(of_kind(&sink, "request_finished").len(), 4);
}

#[tokio::test(start_paused = true)]
async fn server_errors_rotate_without_cooling_and_fail_once_every_profile_was_tried() {
    let t = Scripted::new(|_, _| Reply::Status(503, None));
    let cfg = EngineConfig::from_toml(
        "[modelFailover]\nfallbacks = [\"anthropic/claude-opus\"]",
        "t",
    )
    .unwrap();
    let (e, sink) = build(cfg, Arc::new(AlwaysAllow), t.clone(), 1.0);
    let r = e.handle(llm(MODEL), 0).await;
    assert_eq!(
        (r.outcome, r.attempts, r.fallback),
        (AttemptOutcome::Http5xx, 2, false),
        "{r:?}"
    );
    assert_eq!(
        r.user_error.as_deref(),
        Some("request failed (server_error)")
    );
    assert_eq!(t.profiles(), ["openai-codex:p1", "openai-codex:p2"]);
    assert!(of_kind(&sink, "cooldown_applied").is_empty());
    assert_eq!(
        logs(&sink),
        [
            "Profile openai-codex:p1 failed (server_error). Trying next account...",
            "Profile openai-codex:p2 failed (server_error). Trying next account..."
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn workers_share_one_engine_across_spawned_tasks() {
    let t = Scripted::new(|_, n| {
        if n % 4 == 0 {
            Reply::Timeout
        } else {
            Reply::Ok
        }
    });
    let (e, sink) = build(
        EngineConfig::default(),
        Arc::new(AlwaysAllow),
        t.clone(),
        1.0,
    );
    let e = Arc::new(e);
    let tasks: Vec<_> = (0..8)
        .map(|w| {
            let e = e.clone();
            tokio::spawn(async move { e.handle(llm(MODEL), w).await })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap().is_ok());
    }
    assert_eq!(of_kind(&sink, "request_finished").len(), 8);
}
