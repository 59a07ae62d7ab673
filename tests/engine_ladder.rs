//! Content self-correction retries, context fallbacks and the degradation ladder (lighter model →
//! partial result → fail) in the model-call loop, on paused time with a
//! scripted transport, `Breakers` as admission and `Metrics` as a sink.

use std::time::Duration;

use rehearse::engine::events::{Collector, EventKind, LadderRung};
use rehearse::engine::{
    Admission, AttemptOutcome, AttemptResult, EngineConfig, EngineResponse, TransportFailure,
};
use tokio::time::Instant;

use crate::support::breaker::exhausted;
use crate::support::engine::of_kind;
use crate::support::ladder::*;

#[tokio::test(start_paused = true)]
async fn a_content_error_is_retried_on_the_same_profile_then_succeeds() {
    let r = rig("", Fake::new(|_, n| if n == 1 { schema() } else { ok(10) }));
    let resp = r.engine.handle(llm(1, false), 0).await;
    assert!(resp.is_ok(), "{resp:?}");
    assert_eq!((resp.attempts, resp.tokens, resp.fallback), (2, 10, false));
    let calls = r.fake.calls();
    let profiles: Vec<&str> = calls.iter().map(|(_, _, p)| p.as_str()).collect();
    assert_eq!(
        profiles,
        ["openai-codex:p1", "openai-codex:p1"],
        "same profile"
    );
    let rs = retries(&r.events);
    assert_eq!(rs.len(), 1, "{rs:?}");
    let (reason, retry, of, delay_ms) = rs[0].clone();
    assert_eq!((reason.as_str(), retry, of), ("content", 1, 2));
    assert!(
        delay_ms <= 200,
        "full jitter under budget.backoffBase: {delay_ms}"
    );
    let gap = calls[1].0 - calls[0].0;
    let answer_and_backoff = Duration::from_millis(10 + delay_ms);
    assert!(
        gap >= answer_and_backoff && gap <= answer_and_backoff + Duration::from_millis(2),
        "answer + backoff: {gap:?}, delay {delay_ms} ms"
    );
    assert!(of_kind(&r.events, "cooldown_applied").is_empty());
    assert!(rungs(&r.events).is_empty(), "no ladder on success");
    has(
        &r.metrics,
        "profile_retries_total{provider=\"openai-codex\",reason=\"content\"} 1\n",
    );
}

/// A session that already spent `spent` tokens, then a request with a 1000-token budget whose
/// model answers only with schema violations.
async fn content_after_spending(spent: u32) -> Rig {
    let r = rig(
        "",
        Fake::new(move |_, n| if n == 1 { ok(spent) } else { schema() }),
    );
    let mut first = llm(1, false);
    first.session = Some("s1".into());
    assert!(r.engine.handle(first, 0).await.is_ok());
    let mut second = llm(2, false);
    second.session = Some("s1".into());
    second.budget_tokens = Some(1000);
    let resp = r.engine.handle(second, 0).await;
    assert_eq!(resp.outcome, AttemptOutcome::Content);
    assert!(resp.user_error.is_some() && !resp.partial);
    r
}

#[tokio::test(start_paused = true)]
async fn the_content_retry_stops_at_70_percent_of_the_budget_and_is_counted() {
    let r = content_after_spending(700).await;
    assert_eq!(
        r.fake.calls().len(),
        1 + 1,
        "70 % spent: no self-correction"
    );
    assert!(retries(&r.events).is_empty());
    assert_eq!(exhausted(&r.events), vec![(700, 1000)]);
    has(
        &r.metrics,
        "retry_budget_exhausted_total{class=\"llm_inference\"} 1\n",
    );
    assert_eq!(rungs(&r.events), taken(LadderRung::Fail, None, None));

    let r = content_after_spending(699).await;
    assert_eq!(r.fake.calls().len(), 1 + 3, "under 70 %: up to maxAttempts");
    let rs: Vec<u32> = retries(&r.events).iter().map(|x| x.1).collect();
    assert_eq!(rs, [1, 2]);
    assert!(exhausted(&r.events).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_context_error_is_not_retried_and_goes_to_the_context_fallback() {
    let cfg =
        format!("[modelFailover]\ncontextFallbacks = [\"{LONG}\"]\nlighterModel = \"{LIGHTER}\"");
    let overflow = || status(400, Some("context_length_exceeded"));
    let r = rig(
        &cfg,
        Fake::new(move |m, _| if m == LONG { ok(5) } else { overflow() }),
    );
    let resp = r.engine.handle(llm(1, false), 0).await;
    assert!(resp.is_ok() && resp.fallback, "{resp:?}");
    assert_eq!(resp.model.as_deref(), Some(LONG));
    assert_eq!(r.fake.models(), [PRIMARY, LONG], "one attempt, no retry");
    assert!(retries(&r.events).is_empty());
    assert!(of_kind(&r.events, "cooldown_applied").is_empty());
    assert!(rungs(&r.events).is_empty());
    has(
        &r.metrics,
        &format!(
            "model_fallbacks_total{{from=\"{PRIMARY}\",reason=\"context_overflow\",to=\"{LONG}\"}} 1\n"
        ),
    );

    // The larger window overflows too: no retry, and no lighter model (its window is smaller).
    let r = rig(&cfg, Fake::new(move |_, _| overflow()));
    let resp = r.engine.handle(llm(2, false), 0).await;
    assert_eq!(resp.outcome, AttemptOutcome::Context);
    assert_eq!(r.fake.models(), [PRIMARY, LONG]);
    let skip = (
        LadderRung::LighterModel,
        Some(LIGHTER.to_string()),
        None,
        Some("context_overflow".to_string()),
    );
    assert_eq!(
        rungs(&r.events),
        [skip, (LadderRung::Fail, None, None, None)]
    );
}

/// Every model but the lighter one is rate limited (a 429 cools the profile at once, so the
/// chain rotates and falls back before it is exhausted; a 5xx does not cool).
fn chain_fails_lighter_answers(m: &str, _: u32) -> AttemptResult {
    if m == LIGHTER {
        ok(7)
    } else {
        status(429, None)
    }
}

#[tokio::test(start_paused = true)]
async fn an_exhausted_failover_chain_degrades_to_the_lighter_model() {
    let cfg =
        format!("[modelFailover]\nfallbacks = [\"{FALLBACK}\"]\nlighterModel = \"{LIGHTER}\"");
    let r = rig(&cfg, Fake::new(chain_fails_lighter_answers));
    let resp = r.engine.handle(llm(1, false), 0).await;
    assert!(resp.is_ok(), "{resp:?}");
    assert_eq!(resp.model.as_deref(), Some(LIGHTER));
    assert!(resp.fallback && !resp.partial);
    assert_eq!(r.fake.models(), [PRIMARY, PRIMARY, FALLBACK, LIGHTER]);
    assert_eq!(
        rungs(&r.events),
        taken(LadderRung::LighterModel, Some(LIGHTER), None)
    );
    has(
        &r.metrics,
        &format!(
            "model_fallbacks_total{{from=\"{FALLBACK}\",reason=\"rate_limit\",to=\"{LIGHTER}\"}} 1\n"
        ),
    );

    // Control: the same chain without a lighter model fails, and the lighter model is never called.
    let cfg = format!("[modelFailover]\nfallbacks = [\"{FALLBACK}\"]");
    let r = rig(&cfg, Fake::new(chain_fails_lighter_answers));
    let resp = r.engine.handle(llm(2, false), 0).await;
    assert_eq!(resp.outcome, AttemptOutcome::RateLimited);
    assert_eq!(r.fake.models(), [PRIMARY, PRIMARY, FALLBACK]);
    assert_eq!(rungs(&r.events), taken(LadderRung::Fail, None, None));
}

#[tokio::test(start_paused = true)]
async fn a_lighter_model_whose_breaker_is_open_is_skipped() {
    let cfg = format!("[modelFailover]\nlighterModel = \"{LIGHTER}\"");
    let r = rig(&cfg, Fake::new(chain_fails_lighter_answers));
    let dep = rehearse::wire::dep::model_dep("google", "default", "google:default");
    let refused = AttemptResult::Transport {
        failure: TransportFailure::Refused,
    };
    for _ in 0..5 {
        r.breakers
            .record(&dep, 0, false, &refused, crate::support::at(Instant::now()));
    }
    assert!(r.breakers.is_open(&dep, Instant::now()), "{dep}");
    let resp = r.engine.handle(llm(1, false), 0).await;
    assert!(!resp.is_ok() && resp.user_error.is_some());
    assert_eq!(r.fake.models(), [PRIMARY, PRIMARY], "lighter never called");
    let skip = (
        LadderRung::LighterModel,
        Some(LIGHTER.to_string()),
        None,
        Some("circuit_open".to_string()),
    );
    assert_eq!(
        rungs(&r.events),
        [skip, (LadderRung::Fail, None, None, None)]
    );
}

fn finished_partial(events: &Collector) -> Vec<bool> {
    events
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::RequestFinished { partial, .. } => Some(partial),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_stream_cut_after_tokens_with_everything_exhausted_returns_the_partial_result() {
    let cfg = format!("[modelFailover]\nlighterModel = \"{LIGHTER}\"");
    let script = |m: &str, n: u32| match (m, n) {
        (PRIMARY, 1) => cut(37),
        (PRIMARY, _) => cut(12),
        _ => status(503, None),
    };
    let r = rig(&cfg, Fake::new(script));
    let resp: EngineResponse = r.engine.handle(llm(1, true), 0).await;
    assert!(resp.partial, "{resp:?}");
    assert_eq!(resp.tokens, 37, "the longest cut stream");
    assert_eq!(resp.outcome, AttemptOutcome::StreamCut);
    assert_eq!(resp.user_error, None);
    assert_eq!(resp.model.as_deref(), Some(PRIMARY));
    assert_eq!(
        r.fake.models(),
        [PRIMARY, PRIMARY, LIGHTER],
        "lighter first"
    );
    let mut want = taken(LadderRung::LighterModel, Some(LIGHTER), None);
    want.extend(taken(LadderRung::PartialResult, Some(PRIMARY), Some(37)));
    assert_eq!(rungs(&r.events), want);
    assert_eq!(finished_partial(&r.events), [true]);
    let json = serde_json::to_string(&resp).unwrap();
    assert!(json.contains("\"partial\":true"), "{json}");
}

#[tokio::test(start_paused = true)]
async fn everything_exhausted_with_nothing_partial_fails() {
    let cfg = format!("[modelFailover]\nlighterModel = \"{LIGHTER}\"");
    // A cut before any token is no partial result.
    let script = |m: &str, n: u32| match (m, n) {
        (PRIMARY, 1) => cut(0),
        _ => status(503, None),
    };
    let r = rig(&cfg, Fake::new(script));
    let resp = r.engine.handle(llm(1, true), 0).await;
    assert!(!resp.is_ok() && !resp.partial, "{resp:?}");
    assert_eq!((resp.tokens, resp.outcome), (0, AttemptOutcome::Http5xx));
    assert!(resp.user_error.is_some());
    assert_eq!(r.fake.models(), [PRIMARY, PRIMARY, LIGHTER]);
    let mut want = taken(LadderRung::LighterModel, Some(LIGHTER), None);
    want.extend(taken(LadderRung::Fail, None, None));
    assert_eq!(rungs(&r.events), want);
    assert_eq!(finished_partial(&r.events), [false]);
}

#[test]
fn lighter_model_is_a_validated_model_failover_key() {
    let c = EngineConfig::from_toml("[modelFailover]\nlighterModel = \"google/flash\"", "t")
        .expect("valid");
    assert_eq!(
        c.model_failover.lighter_model.as_deref(),
        Some("google/flash")
    );
    assert_eq!(EngineConfig::default().model_failover.lighter_model, None);
    for bad in ["\"\"", "\" google/flash\""] {
        let e = EngineConfig::from_toml(&format!("[modelFailover]\nlighterModel = {bad}"), "t")
            .expect_err(bad);
        assert_eq!(e.key(), Some("modelFailover.lighterModel"), "{e}");
    }
    let e = EngineConfig::from_toml("[modelFailover]\nlighterModels = [\"x\"]", "t").unwrap_err();
    assert!(e.to_string().contains("lighterModels"), "{e}");
}

#[test]
fn partial_and_degraded_serialise_compactly_and_old_records_still_parse() {
    use rehearse::engine::events::Event;
    let old = r#"{"t_ms":5,"event":"request_finished","request":1,"dep":"d","outcome":"ok","attempts":1,"fallback":false}"#;
    let e: Event = serde_json::from_str(old).expect("a record without `partial`");
    assert!(matches!(
        e.kind,
        EventKind::RequestFinished { partial: false, .. }
    ));
    assert!(!serde_json::to_string(&e).unwrap().contains("partial"));
    let resp: EngineResponse = serde_json::from_str(
        r#"{"outcome":"ok","attempts":1,"model":null,"fallback":false,"user_error":null,"tokens":3}"#,
    )
    .expect("a response without `partial`");
    assert!(!resp.partial);
    let d = Event {
        t_ms: 9,
        kind: EventKind::Degraded {
            request: 4,
            rung: LadderRung::PartialResult,
            model: Some(PRIMARY.into()),
            tokens: Some(37),
            skipped: None,
        },
        log: None,
    };
    let json = serde_json::to_string(&d).unwrap();
    assert_eq!(
        json,
        r#"{"t_ms":9,"event":"degraded","request":4,"rung":"partial_result","model":"openai-codex/gpt-5","tokens":37}"#
    );
    assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), d);
}
