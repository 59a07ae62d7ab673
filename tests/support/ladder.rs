//! The degradation-ladder tests' rig: a transport scripted per model on paused time, an engine
//! with two `openai-codex` profiles, `Breakers` as admission, and event/metric readers.

use std::sync::Arc;
use std::time::Duration;

use rehearse::engine::RequestKind;
use rehearse::engine::breaker::Breakers;
use rehearse::engine::events::{Collector, EventKind, LadderRung};
use rehearse::engine::metrics::Metrics;
use rehearse::engine::{
    AttemptResult, Call, Engine, EngineConfig, EngineRequest, Profile, Transport,
};
use tokio::time::Instant;

use super::fake::{Answer, CountBy, FakeTransport, model_of};

/// The requested model (profiles `openai-codex:p1`, `p2`).
pub const PRIMARY: &str = "openai-codex/gpt-5";
/// A `modelFailover.fallbacks` entry.
pub const FALLBACK: &str = "anthropic/claude-opus";
/// The `modelFailover.lighterModel` of the tests.
pub const LIGHTER: &str = "google/gemini-flash";
/// A `modelFailover.contextFallbacks` entry (a larger window).
pub const LONG: &str = "mistral/large-ctx";

/// Answers `script(model, n)` (n: 1-based count of calls to that model) after 10 ms: the one
/// fake transport (`support::fake`) counting by model. Model calls only.
#[derive(Clone)]
pub struct Fake(FakeTransport);

impl Fake {
    pub fn new(script: impl Fn(&str, u32) -> AttemptResult + Send + Sync + 'static) -> Self {
        Self(FakeTransport::new(CountBy::Model, move |call, n| {
            let Some(model) = model_of(call) else {
                panic!("model calls only: {call:?}")
            };
            Answer::after_ms(10, script(model, n))
        }))
    }
    /// (time, model, profile) of every call.
    pub fn calls(&self) -> Vec<(Instant, String, String)> {
        self.0
            .calls()
            .into_iter()
            .map(|(at, call)| {
                let model = model_of(&call).unwrap_or_default().to_string();
                (at, model, call.bearer.unwrap_or_default())
            })
            .collect()
    }
    pub fn models(&self) -> Vec<String> {
        self.calls().into_iter().map(|(_, m, _)| m).collect()
    }
}

impl Transport for Fake {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        self.0.send(call)
    }
}

/// An engine and what observes it.
pub struct Rig {
    pub engine: Engine<Fake>,
    pub fake: Fake,
    pub events: Arc<Collector>,
    pub metrics: Arc<Metrics>,
    pub breakers: Arc<Breakers>,
}

/// An engine configured by `toml` (an `[engine]` table) over `fake`.
pub fn rig(toml: &str, fake: Fake) -> Rig {
    let config = EngineConfig::from_toml(toml, "test").expect("config");
    let profiles = vec![
        Profile::new("openai-codex", "openai-codex:p1"),
        Profile::new("openai-codex", "openai-codex:p2"),
    ];
    let o = super::breaker::observed_engine(config, profiles, fake.clone());
    Rig {
        engine: o.engine,
        fake,
        events: o.events,
        metrics: o.metrics,
        breakers: o.breakers,
    }
}

/// A request for [`PRIMARY`].
pub fn llm(id: u64, stream: bool) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Llm {
            model: PRIMARY.into(),
            stream,
            max_tokens: Some(256),
            messages: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

/// A complete non-2xx response.
pub fn status(code: u16, provider_code: Option<&str>) -> AttemptResult {
    AttemptResult::Http {
        status: code,
        retry_after: None,
        throttle: Vec::new(),
        provider_code: provider_code.map(str::to_string),
        latency: Duration::from_millis(10),
    }
}

/// A schema violation: a 4xx that is neither rate limit, auth, billing nor context.
pub fn schema() -> AttemptResult {
    status(400, Some("invalid_response_schema"))
}

/// A complete answer of `tokens` tokens.
pub fn ok(tokens: u32) -> AttemptResult {
    AttemptResult::Ok {
        tokens,
        latency: Duration::from_millis(10),
        ttfb: None,
        longest_gap: None,
    }
}

/// A stream reset after `tokens_received` tokens.
pub fn cut(tokens_received: u32) -> AttemptResult {
    AttemptResult::StreamCut { tokens_received }
}

/// The `Degraded` events: (rung, model, tokens, skipped).
pub type Rungs = Vec<(LadderRung, Option<String>, Option<u64>, Option<String>)>;

/// The `Degraded` events in order.
pub fn rungs(events: &Collector) -> Rungs {
    events
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Degraded {
                rung,
                model,
                tokens,
                skipped,
                ..
            } => Some((rung, model, tokens, skipped)),
            _ => None,
        })
        .collect()
}

/// One rung taken (not skipped).
pub fn taken(rung: LadderRung, model: Option<&str>, tokens: Option<u64>) -> Rungs {
    vec![(rung, model.map(str::to_string), tokens, None)]
}

/// Asserts that the rendered `/metrics` contains `line`.
pub fn has(metrics: &Metrics, line: &str) {
    let text = metrics.render();
    assert!(text.contains(line), "missing {line:?} in\n{text}");
}

/// (reason, retry, of, delay_ms) of every `SameProfileRetry`.
pub fn retries(events: &Collector) -> Vec<(String, u32, u32, u64)> {
    events
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::SameProfileRetry {
                reason,
                retry,
                of,
                delay_ms,
                ..
            } => Some((reason.as_str().to_string(), retry, of, delay_ms)),
            _ => None,
        })
        .collect()
}
