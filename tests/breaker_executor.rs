//! Budgets, idempotency, throttle and breakers wired into the engine's executor:
//! a scripted transport on paused time, `Breakers` as admission, `Metrics` as a sink.

use std::sync::Arc;
use std::time::Duration;

use crate::support::breaker::exhausted;
use crate::support::fake::{Answer, CountBy, FakeTransport};
use rehearse::engine::RequestKind;
use rehearse::engine::breaker::Breakers;
use rehearse::engine::events::Collector;
use rehearse::engine::metrics::Metrics;
use rehearse::engine::{
    AttemptResult, BreakerState, Call, Endpoint, Engine, EngineConfig, EngineRequest, Transport,
    TransportFailure,
};
use tokio::time::Instant;

/// Answers every call with `script(call)` after 10 ms and records (time, call): the one fake
/// transport (`support::fake`).
#[derive(Clone)]
struct Fake(FakeTransport);

impl Fake {
    fn new(script: impl Fn(&Call) -> AttemptResult + Send + Sync + 'static) -> Self {
        Self(FakeTransport::new(CountBy::Dep, move |call, _| {
            Answer::after_ms(10, script(call))
        }))
    }
    fn calls(&self) -> Vec<(Instant, Call)> {
        self.0.calls()
    }
}

impl Transport for Fake {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        self.0.send(call)
    }
}

struct Rig {
    engine: Engine<Fake>,
    fake: Fake,
    events: Arc<Collector>,
    metrics: Arc<Metrics>,
    breakers: Arc<Breakers>,
}

fn rig(config: EngineConfig, fake: Fake) -> Rig {
    let o = crate::support::breaker::observed_engine(config, vec![], fake.clone());
    Rig {
        engine: o.engine,
        fake,
        events: o.events,
        metrics: o.metrics,
        breakers: o.breakers,
    }
}

fn tool(id: u64, name: &str, idempotent: bool, key: Option<&str>) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Tool {
            name: name.into(),
            body: serde_json::json!({}),
            idempotent,
            idempotency_key: key.map(str::to_string),
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

fn llm(id: u64, model: &str) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Llm {
            model: model.into(),
            stream: false,
            max_tokens: Some(64),
            messages: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

fn status(code: u16) -> AttemptResult {
    AttemptResult::Http {
        status: code,
        retry_after: None,
        throttle: Vec::new(),
        provider_code: None,
        latency: Duration::from_millis(10),
    }
}

fn ok(tokens: u32) -> AttemptResult {
    AttemptResult::Ok {
        tokens,
        latency: Duration::from_millis(10),
        ttfb: None,
        longest_gap: None,
    }
}

#[tokio::test(start_paused = true)]
async fn non_idempotent_tool_call_without_a_key_is_attempted_exactly_once() {
    let r = rig(EngineConfig::default(), Fake::new(|_| status(503)));
    let resp = r
        .engine
        .handle(tool(1, "ticket_create", false, None), 0)
        .await;
    assert!(!resp.is_ok());
    assert_eq!(resp.attempts, 1);
    assert_eq!(r.fake.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn with_an_idempotency_key_every_attempt_carries_it_and_backoff_is_full_jitter() {
    let r = rig(EngineConfig::default(), Fake::new(|_| status(503)));
    let resp = r
        .engine
        .handle(tool(1, "ticket_create", false, Some("k-17")), 0)
        .await;
    assert_eq!(resp.attempts, 3, "budget.maxAttempts");
    let calls = r.fake.calls();
    assert_eq!(calls.len(), 3);
    for (n, (_, c)) in calls.iter().enumerate() {
        assert_eq!(c.idempotency_key.as_deref(), Some("k-17"));
        assert_eq!(c.attempt, n as u32 + 1);
    }
    // gaps = 10 ms answer + backoff in [0, 200 ms] then [0, 400 ms]
    let gap = |i: usize| calls[i + 1].0 - calls[i].0;
    assert!(gap(0) >= Duration::from_millis(10) && gap(0) <= Duration::from_millis(210));
    assert!(gap(1) >= Duration::from_millis(10) && gap(1) <= Duration::from_millis(410));
}

/// A session that already spent `spent` of a 1000-token budget, then a tool call that fails.
async fn tool_after_spending(spent: u32) -> Rig {
    let fake = Fake::new(move |c: &Call| match &c.endpoint {
        Endpoint::Llm { .. } => ok(spent),
        _ => status(503),
    });
    let r = rig(EngineConfig::default(), fake);
    let mut first = llm(1, "openai/gpt-5.2");
    first.session = Some("s1".into());
    assert!(r.engine.handle(first, 0).await.is_ok());
    let mut second = tool(2, "crm_search", true, None);
    second.session = Some("s1".into());
    second.budget_tokens = Some(1000);
    r.engine.handle(second, 0).await;
    r
}

#[tokio::test(start_paused = true)]
async fn a_request_whose_budget_is_90_percent_spent_gets_no_transient_retry_and_is_counted() {
    let r = tool_after_spending(900).await;
    let tool_calls = r
        .fake
        .calls()
        .iter()
        .filter(|(_, c)| c.dep == "crm_search")
        .count();
    assert_eq!(tool_calls, 1, "no retry at 90 % spent");
    assert_eq!(exhausted(&r.events), vec![(900, 1000)]);
    let text = r.metrics.render();
    assert!(
        text.contains("retry_budget_exhausted_total{class=\"tool_call\"} 1\n"),
        "{text}"
    );

    let r = tool_after_spending(899).await;
    let tool_calls = r
        .fake
        .calls()
        .iter()
        .filter(|(_, c)| c.dep == "crm_search")
        .count();
    assert_eq!(tool_calls, 3, "under 90 % the transient failure is retried");
    assert!(exhausted(&r.events).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_model_request_over_its_budget_is_not_retried_by_the_retry_gate() {
    let fake = Fake::new(|_| AttemptResult::Timeout {
        phase: rehearse::engine::TimeoutPhase::Ttfb,
        tokens_received: 0,
    });
    let r = rig(EngineConfig::default(), fake);
    let mut req = llm(1, "openai/gpt-5.2");
    req.budget_tokens = Some(0);
    let resp = r.engine.handle(req, 0).await;
    assert_eq!(resp.attempts, 1, "the same-profile retry was refused");
    assert_eq!(exhausted(&r.events).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn tool_breaker_trips_then_rejects_without_calling_and_metrics_show_it() {
    let r = rig(
        EngineConfig::default(),
        Fake::new(|_| AttemptResult::Transport {
            failure: TransportFailure::Reset,
        }),
    );
    // idempotent: false, no key → one attempt each, five requests → five resets
    for id in 0..5 {
        r.engine
            .handle(tool(id, "crm_search", false, None), 0)
            .await;
    }
    assert_eq!(r.breakers.state("crm_search"), BreakerState::Open);
    let resp = r.engine.handle(tool(9, "crm_search", false, None), 0).await;
    assert_eq!(resp.outcome, rehearse::engine::AttemptOutcome::Rejected);
    assert_eq!(r.fake.calls().len(), 5, "rejected at once, never sent");
    let text = r.metrics.render();
    for want in [
        "breaker_state{dep=\"crm_search\"} 2\n",
        "breaker_rejections_total{dep=\"crm_search\"} 1\n",
        "breaker_transitions_total{dep=\"crm_search\",from=\"closed\",to=\"open\"} 1\n",
        "requests_total{dep=\"crm_search\",outcome=\"transport\"} 5\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[tokio::test(start_paused = true)]
async fn tenant_over_its_tokens_per_minute_goes_to_the_cheaper_model() {
    let mut config = EngineConfig::default();
    config.throttle.tokens_per_minute = Some(100);
    config.throttle.cheaper_model = Some("openai/gpt-5-mini".into());
    let r = rig(config, Fake::new(|_| ok(80)));
    let mut models = Vec::new();
    for id in 0..3 {
        let mut req = llm(id, "openai/gpt-5.2");
        req.tenant = Some("team-a".into());
        models.push(r.engine.handle(req, 0).await.model.unwrap_or_default());
    }
    assert_eq!(
        models,
        ["openai/gpt-5.2", "openai/gpt-5.2", "openai/gpt-5-mini"]
    );
    let text = r.metrics.render();
    assert!(
        text.contains("throttled_total{tenant=\"team-a\"} 1\n"),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_plan_pinned_to_a_model_whose_breaker_is_open_is_unavailable() {
    let mut config = EngineConfig::default();
    config
        .throttle
        .pinned
        .insert("team-b".into(), "anthropic/claude-opus".into());
    let r = rig(
        config,
        Fake::new(|_| AttemptResult::Transport {
            failure: TransportFailure::Refused,
        }),
    );
    let dep = rehearse::wire::dep::model_dep("anthropic", "default", "anthropic:default");
    let now = Instant::now();
    for _ in 0..5 {
        use rehearse::engine::Admission;
        r.breakers.record(
            &dep,
            0,
            false,
            &AttemptResult::Transport {
                failure: TransportFailure::Refused,
            },
            crate::support::at(now),
        );
    }
    assert_eq!(r.breakers.state(&dep), BreakerState::Open, "{dep}");
    let mut req = llm(1, "openai/gpt-5.2");
    req.tenant = Some("team-b".into());
    let resp = r.engine.handle(req, 0).await;
    assert!(!resp.is_ok());
    assert_eq!(resp.attempts, 0);
    assert!(r.fake.calls().is_empty(), "nothing sent");
    assert!(resp.user_error.unwrap_or_default().contains("unavailable"));
}
