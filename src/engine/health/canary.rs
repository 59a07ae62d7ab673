//! The synthetic health-check loop: every `[engine.health] interval` (speed-scaled) each
//! dependency gets one canary call carrying `X-Breaker-Probe: DEP` (`Call::probe`), and a
//! `HealthCheck { dep, ok }` event. Canary calls have [`Origin::Canary`], which transports send
//! as `X-Rehearse-Canary` so the upstream can tell canaries from half-open breaker probes. Canaries bypass admission on purpose — they must see the
//! upstream while the breaker is open — and never feed the breaker, so the two can disagree
//! (see [`crate::engine::health`]).
//!
//! A canary cut by shutdown is not a failure: one still in flight when `shutdown` completes is
//! dropped, and one whose answer comes back after it (the upstream closing its connections as
//! the run ends) emits no `HealthCheck`. Neither is counted, as a call or as a failure.

use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt;

use crate::engine::breaker::Signal;
use crate::engine::clock::{Clock, Now};
use crate::engine::events::{Event, EventKind, EventSink, OpClass};
use crate::engine::failover::profiles::Profile;
use crate::engine::outcome::AttemptResult;
use crate::engine::transport::{Call, Deadlines, Endpoint, Origin, Transport};
use crate::util::speed::Speed;

use super::HealthConfig;

/// What the canaries read of the engine's configuration: `[engine.health]` and the deadlines of
/// a call of each class. `EngineConfig` implements it (in `config`, which aggregates every
/// part's settings), so the canaries need not name the whole configuration.
pub trait CanarySettings: Send + Sync {
    /// `[engine.health]`.
    fn health(&self) -> &HealthConfig;
    /// The deadlines of one call of `class` at `speed`.
    fn deadlines(&self, class: OpClass, speed: Speed) -> Deadlines;
}

/// One dependency's canary call.
#[derive(Debug, Clone, PartialEq)]
pub struct Canary {
    /// The dependency.
    pub dep: String,
    /// Its operation class (for the deadlines).
    pub class: OpClass,
    /// What to call.
    pub endpoint: Endpoint,
    /// The credential, for model endpoints.
    pub bearer: Option<String>,
}

impl Canary {
    /// A canary for a tool (an empty JSON body).
    pub fn tool(name: &str) -> Self {
        Self {
            dep: name.to_string(),
            class: OpClass::ToolCall,
            endpoint: Endpoint::Tool {
                name: name.to_string(),
                body: serde_json::json!({}),
            },
            bearer: None,
        }
    }

    /// A canary for a WebSocket channel (one message).
    pub fn ws(channel: &str) -> Self {
        Self {
            dep: channel.to_string(),
            class: OpClass::Session,
            endpoint: Endpoint::Ws {
                channel: channel.to_string(),
                messages: 1,
            },
            bearer: None,
        }
    }

    /// A canary for a model endpoint (one profile of `model`'s provider; a 1-token completion).
    pub fn model(model: &str, profile: &Profile) -> Self {
        Self {
            dep: profile.dep(),
            class: OpClass::LlmInference,
            endpoint: Endpoint::Llm {
                model: model.to_string(),
                stream: false,
                max_tokens: Some(1),
                messages: None,
            },
            bearer: Some(profile.credential().to_string()),
        }
    }
}

/// Whether a canary that ended at `now` with `result` saw a healthy dependency: what the breaker
/// would count as a success or as neither (a slow stream, a cut after tokens).
pub fn canary_ok(result: &AttemptResult, now: Now) -> bool {
    matches!(
        Signal::of(result, now.wall),
        Signal::Success { .. } | Signal::Neutral
    )
}

/// Runs the canaries until `shutdown`: each dep's first canary at once, then one every
/// interval. `clock` stamps each `HealthCheck` (event times count from its start). Every dep has its own loop with at most one canary in flight, so a canary stalled
/// on one dep (until its deadline) never delays another dep's.
pub async fn run_canaries<T: Transport, C: CanarySettings>(
    transport: Arc<T>,
    canaries: Vec<Canary>,
    config: C,
    speed: Speed,
    sink: Arc<dyn EventSink>,
    clock: Clock,
    shutdown: impl Future<Output = ()>,
) {
    if !config.health().enabled || canaries.is_empty() {
        shutdown.await;
        return;
    }
    let every = speed
        .scale(config.health().interval)
        .max(std::time::Duration::from_millis(1));
    let stop = shutdown.shared();
    let loops = canaries.iter().map(|c| {
        let (transport, sink, config) = (transport.clone(), sink.clone(), &config);
        let stop = stop.clone();
        async move {
            let mut interval = tokio::time::interval(every);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let call = Call {
                    dep: c.dep.clone(),
                    class: c.class,
                    endpoint: c.endpoint.clone(),
                    bearer: c.bearer.clone(),
                    idempotency_key: None,
                    probe: Some(c.dep.clone()),
                    origin: Origin::Canary,
                    attempt: 1,
                    request: None,
                    deadlines: config.deadlines(c.class, speed),
                };
                let result = tokio::select! {
                    biased;
                    _ = stop.clone() => return, // cut by shutdown: not a failure
                    r = transport.send(call) => r,
                };
                if stop.clone().now_or_never().is_some() {
                    return; // answered after shutdown began: cut, not counted
                }
                let now = clock.now();
                let t_ms = clock.ms_since_start(now.at);
                let ok = canary_ok(&result, now);
                let dep = c.dep.clone();
                sink.emit(&Event {
                    t_ms,
                    kind: EventKind::HealthCheck { dep, ok },
                    log: None,
                });
            }
        }
    });
    tokio::select! {
        _ = stop.clone() => {}
        _ = futures_util::future::join_all(loops) => {}
    }
}
