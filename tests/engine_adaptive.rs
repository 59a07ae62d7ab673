//! Adaptive deadlines through the engine (docs/engine.md, "Adaptive deadlines"): on paused time,
//! a scripted transport, `Breakers` and `Metrics` — warm-up on the fixed value, the adapted
//! deadline in the gauge, the expired deadline in the event and log line, a hung light tool cut
//! at its floor and tripping, and a heavy tool still answering that does not trip on deadlines
//! alone (while fixed deadlines trip it on the same script).

use std::sync::Arc;
use std::time::Duration;

use crate::support::breaker::observed_engine;
use crate::support::fake::{Answer, CountBy, FakeTransport};
use rehearse::engine::events::EventKind;
use rehearse::engine::timeouts::AdaptiveSwitch;
use rehearse::engine::{
    AttemptResult, BreakerState, Call, DeadlineSource, EngineConfig, EngineRequest, RequestKind,
    TimeoutPhase, Transport,
};

#[derive(Clone)]
struct Fake(FakeTransport);

/// Enforces the call's total deadline as the real transport does (`Timeout{total}`, nothing
/// received).
impl Transport for Fake {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        let total = call.deadlines.total;
        let answer = self.0.send(call);
        async move {
            tokio::time::timeout(total, answer)
                .await
                .unwrap_or(AttemptResult::Timeout {
                    phase: TimeoutPhase::Total,
                    tokens_received: 0,
                })
        }
    }
}

fn ok_after(ms: u64) -> Answer {
    Answer::after_ms(
        ms,
        AttemptResult::Ok {
            tokens: 0,
            latency: Duration::from_millis(ms),
            ttfb: None,
            longest_gap: None,
        },
    )
}

fn tool(id: u64, name: &str) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Tool {
            name: name.into(),
            body: serde_json::json!({}),
            idempotent: true,
            idempotency_key: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

/// toolCall 15 s; adaptive (or not) with minSamples 3, factor 1.5, floor 1 s, cap 15 s; no retries.
fn config(adaptive: bool) -> EngineConfig {
    let mut c = EngineConfig::from_toml(
        "[timeouts]\ntoolCall = \"15s\"\nminSamples = 3\nfactor = 1.5\ntoolCallFloor = \"1s\"\n\
         toolCallCap = \"15s\"\n[budget]\nmaxAttempts = 1\n[health]\nenabled = false\n",
        "test",
    )
    .unwrap();
    c.timeouts.adaptive = AdaptiveSwitch::All(adaptive);
    c
}

fn gauge(text: &str, dep: &str) -> Option<f64> {
    let prefix =
        format!("timeout_deadline_seconds{{class=\"tool_call\",dep=\"{dep}\",phase=\"total\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|v| v.trim().parse().ok())
}

/// heavy: 3 answers at 10 s (warm-up), then calls 4–8 take 30 s (cut at 15 s) and the rest 10 s.
/// light: 3 answers at 200 ms, then it hangs (an answer an hour later).
fn script() -> Fake {
    Fake(FakeTransport::new(CountBy::Dep, |call, n| {
        match call.dep.as_str() {
            "heavy" if (4..=8).contains(&n) => ok_after(30_000),
            "heavy" => ok_after(10_000),
            _ if n <= 3 => ok_after(200),
            _ => ok_after(3_600_000),
        }
    }))
}

/// Warm-up, then five slow heavy calls 100 ms apart and one ordinary one after them, whose
/// answer (at 10.5 s) comes before the five expiries (15–15.4 s): in completion order five
/// deadline expiries in a row, while the tool was still answering.
async fn heavy_batch(adaptive: bool) -> (BreakerState, Vec<u64>, Option<f64>) {
    let o = observed_engine(config(adaptive), vec![], script());
    let engine = Arc::new(o.engine);
    for i in 0..3 {
        assert!(engine.handle(tool(i, "heavy"), 0).await.is_ok());
    }
    let mut tasks = Vec::new();
    for i in 0..6u64 {
        let e = engine.clone();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100 * i)).await;
            e.handle(tool(10 + i, "heavy"), i as usize).await
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let expired: Vec<u64> = o
        .events
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::AttemptFinished {
                deadline: Some(d), ..
            } => Some(d.ms),
            _ => None,
        })
        .collect();
    let state = o.breakers.state("heavy");
    (state, expired, gauge(&o.metrics.render(), "heavy"))
}

#[tokio::test(start_paused = true)]
async fn a_heavy_tool_still_answering_does_not_trip_on_deadlines_alone() {
    let (fixed_state, fixed_expired, fixed_gauge) = heavy_batch(false).await;
    let (adaptive_state, adaptive_expired, adaptive_gauge) = heavy_batch(true).await;
    // Same script, same five cuts at 15 s (10 s × 1.5 = the cap):
    assert_eq!(fixed_expired, vec![15_000; 5]);
    assert_eq!(adaptive_expired, vec![15_000; 5]);
    assert_eq!((fixed_gauge, adaptive_gauge), (Some(15.0), Some(15.0)));
    // fixed deadlines count each expiry and open the breaker; adaptive ones see the answer that
    // came while each waited and keep it closed.
    assert_eq!(fixed_state, BreakerState::Open);
    assert_eq!(adaptive_state, BreakerState::Closed);
}

#[tokio::test(start_paused = true)]
async fn warm_up_adapts_then_a_hung_light_tool_is_cut_at_its_floor_and_trips() {
    let o = observed_engine(config(true), vec![], script());
    let t0 = tokio::time::Instant::now();
    // Warm-up: the fixed 15 s until 3 successes, then 200 ms × 1.5 = 300 ms, floored at 1 s.
    for i in 0..3 {
        assert!(o.engine.handle(tool(i, "light"), 0).await.is_ok());
        // Announced at the call's start: still the fixed value after the third success.
        assert_eq!(
            gauge(&o.metrics.render(), "light"),
            Some(15.0),
            "after call {i}"
        );
    }
    // The 4th call is the first with the adapted deadline.
    let hung_from = tokio::time::Instant::now();
    for i in 3..8 {
        let r = o.engine.handle(tool(i, "light"), (i % 2) as usize).await;
        assert!(!r.is_ok());
    }
    assert_eq!(gauge(&o.metrics.render(), "light"), Some(1.0));
    // Five expiries of 1 s each (not 15 s): the breaker opened at the fifth.
    assert_eq!(
        tokio::time::Instant::now() - hung_from,
        Duration::from_secs(5)
    );
    assert_eq!(o.breakers.state("light"), BreakerState::Open);
    let events = o.events.events();
    let expired: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::AttemptFinished {
                deadline: Some(d),
                dep,
                ..
            } if dep == "light" => Some((d.ms, d.source, e.log.clone().unwrap_or_default())),
            _ => None,
        })
        .collect();
    assert_eq!(expired.len(), 5, "{expired:?}");
    for (ms, source, log) in &expired {
        assert_eq!((*ms, *source), (1_000, DeadlineSource::Adaptive));
        assert_eq!(
            log,
            "Deadline expired: light tool_call total after 1000ms (adaptive deadline)"
        );
    }
    // The gauge's story: 15 s at the first call, 1 s from the 4th.
    let changes: Vec<(u64, DeadlineSource)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::DeadlineChanged {
                deadline_ms,
                source,
                ..
            } => Some((*deadline_ms, *source)),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        vec![
            (15_000, DeadlineSource::Fixed),
            (1_000, DeadlineSource::Adaptive)
        ]
    );
    assert!(hung_from - t0 >= Duration::from_millis(600));
}

/// Model streams: the first three send their head after 2 s and their frames at most 1 s apart
/// (complete after 5 s, the transport reporting that TTFB and longest gap); every later one sends
/// its head after 2 s and then stalls, so the call's inter-token deadline cuts it. Records the
/// deadlines each call was given.
#[derive(Clone, Default)]
struct Streams {
    calls: Arc<std::sync::Mutex<Vec<rehearse::engine::transport::Deadlines>>>,
}

impl Transport for Streams {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        let d = call.deadlines;
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(d);
            calls.len()
        };
        async move {
            let head = Duration::from_secs(2);
            if d.ttfb.is_some_and(|t| t < head) {
                tokio::time::sleep(d.ttfb.unwrap_or(head)).await;
                return AttemptResult::Timeout {
                    phase: TimeoutPhase::Ttfb,
                    tokens_received: 0,
                };
            }
            tokio::time::sleep(head).await;
            if n <= 3 {
                tokio::time::sleep(Duration::from_secs(3)).await;
                return AttemptResult::Ok {
                    tokens: 4,
                    latency: Duration::from_secs(5),
                    ttfb: Some(head),
                    longest_gap: Some(Duration::from_secs(1)),
                };
            }
            tokio::time::sleep(d.inter_token.unwrap_or(Duration::from_secs(3600))).await;
            AttemptResult::Timeout {
                phase: TimeoutPhase::InterToken,
                tokens_received: 1,
            }
        }
    }
}

fn stream(id: u64) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Llm {
            model: "openai-codex/gpt-5".into(),
            stream: true,
            max_tokens: Some(4),
            messages: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

/// llmTtfb 10 s, llmInterToken 8 s; adaptive (or not) with minSamples 3, factor 1.5, floors 1 s.
fn model_config(adaptive: bool) -> EngineConfig {
    let mut c = EngineConfig::from_toml(
        "[timeouts]\nllmTtfb = \"10s\"\nllmInterToken = \"8s\"\nminSamples = 3\nfactor = 1.5\n\
         llmTtfbFloor = \"1s\"\nllmInterTokenFloor = \"1s\"\nllmInterTokenCap = \"8s\"\n\
         [budget]\nmaxAttempts = 1\n[health]\nenabled = false\n",
        "test",
    )
    .unwrap();
    c.timeouts.adaptive = AdaptiveSwitch::All(adaptive);
    c
}

/// The deadlines of the fourth call, the stalled stream's expired deadline and log line, and
/// the gauges `(ttfb, inter_token)` at the end.
async fn model_run(
    adaptive: bool,
) -> (
    rehearse::engine::transport::Deadlines,
    (u64, DeadlineSource, String),
    (Option<f64>, Option<f64>),
) {
    let t = Streams::default();
    let profiles = vec![rehearse::engine::Profile::new(
        "openai-codex",
        "openai-codex:p1",
    )];
    let o = observed_engine(model_config(adaptive), profiles, t.clone());
    for i in 0..4 {
        o.engine.handle(stream(i), 0).await;
    }
    let calls = t.calls.lock().unwrap().clone();
    assert!(calls.len() >= 4, "{calls:?}");
    for c in &calls[..3] {
        assert_eq!(
            (c.ttfb, c.inter_token),
            (Some(Duration::from_secs(10)), Some(Duration::from_secs(8))),
            "the fixed deadlines while warming up"
        );
    }
    let expired = o
        .events
        .events()
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::AttemptFinished {
                deadline: Some(d),
                phase: Some(TimeoutPhase::InterToken),
                ..
            } => Some((d.ms, d.source, e.log.clone().unwrap_or_default())),
            _ => None,
        })
        .expect("the stalled stream's expiry");
    let text = o.metrics.render();
    let gauge = |phase: &str| {
        text.lines()
            .find(|l| {
                l.starts_with("timeout_deadline_seconds{class=\"llm_inference\"")
                    && l.contains(&format!("phase=\"{phase}\""))
            })
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    };
    (calls[3], expired, (gauge("ttfb"), gauge("inter_token")))
}

#[tokio::test(start_paused = true)]
async fn a_model_streams_ttfb_and_inter_token_deadlines_adapt_and_cut_a_stall_early() {
    // Adaptive: after three streams (head 2 s, longest gap 1 s) the TTFB deadline is 2 s × 1.5
    // and the inter-token one 1 s × 1.5; the stall is cut 1.5 s after the head.
    let (d, (ms, source, log), gauges) = model_run(true).await;
    assert_eq!(
        (d.ttfb, d.inter_token),
        (
            Some(Duration::from_secs(3)),
            Some(Duration::from_millis(1_500))
        )
    );
    assert_eq!((ms, source), (1_500, DeadlineSource::Adaptive));
    assert!(
        log.ends_with("llm_inference inter_token after 1500ms (adaptive deadline)"),
        "{log}"
    );
    assert_eq!(gauges, (Some(3.0), Some(1.5)));
    // Fixed, the same script: the stall is held the whole 8 s.
    let (d, (ms, source, log), gauges) = model_run(false).await;
    assert_eq!(
        (d.ttfb, d.inter_token),
        (Some(Duration::from_secs(10)), Some(Duration::from_secs(8)))
    );
    assert_eq!((ms, source), (8_000, DeadlineSource::Fixed));
    assert!(
        log.ends_with("inter_token after 8000ms (fixed deadline)"),
        "{log}"
    );
    assert_eq!(gauges, (Some(10.0), Some(8.0)));
}
