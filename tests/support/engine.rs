//! A scripted `Transport` for engine tests: every call is answered by a closure of (call, n-th
//! call to the same profile/dep), timeouts wait out the call's own deadline on tokio's (paused)
//! clock, and every call is recorded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rehearse::engine::events::{Collector, Event, EventKind};
use rehearse::engine::{
    AttemptResult, Call, CallTarget, TimeoutPhase, Transport, TransportFailure,
};
use tokio::time::Instant;

/// What the script answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// 200 with 10 tokens after 50 ms.
    Ok,
    /// Nothing before the TTFB deadline.
    Timeout,
    /// 429 with this Retry-After.
    RateLimit(Option<String>),
    /// This status and provider code.
    Status(u16, Option<String>),
    /// Connection reset.
    Reset,
}

/// One recorded call.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// When it was sent (tokio clock).
    pub at: Instant,
    /// The dep.
    pub dep: String,
    /// The bearer (= the profile id in these tests).
    pub profile: Option<String>,
    /// The model, for model calls.
    pub model: Option<String>,
    /// The probe header.
    pub probe: Option<String>,
}

type Script = dyn Fn(&Call, u32) -> Reply + Send + Sync;

/// The scripted transport (cheap to clone; clones share the record).
#[derive(Clone)]
pub struct Scripted {
    script: Arc<Script>,
    sent: Arc<Mutex<Vec<Sent>>>,
    counts: Arc<Mutex<HashMap<String, u32>>>,
}

impl Scripted {
    /// Answers with `script(call, n)` where n counts calls (1-based) to the same profile, or to
    /// the same dep for calls without a bearer.
    pub fn new(script: impl Fn(&Call, u32) -> Reply + Send + Sync + 'static) -> Self {
        Self {
            script: Arc::new(script),
            sent: Arc::default(),
            counts: Arc::default(),
        }
    }

    /// Every call so far.
    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }

    /// The profiles called, in order.
    pub fn profiles(&self) -> Vec<String> {
        self.sent().into_iter().filter_map(|s| s.profile).collect()
    }
}

impl Transport for Scripted {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        let key = call.bearer.clone().unwrap_or_else(|| call.dep.clone());
        let n = {
            let mut c = self.counts.lock().unwrap();
            let e = c.entry(key).or_insert(0);
            *e += 1;
            *e
        };
        let reply = (self.script)(&call, n);
        let model = match &call.target {
            CallTarget::Llm { model, .. } => Some(model.clone()),
            _ => None,
        };
        self.sent.lock().unwrap().push(Sent {
            at: Instant::now(),
            dep: call.dep.clone(),
            profile: call.bearer.clone(),
            model,
            probe: call.probe.clone(),
        });
        let deadline = call.deadlines.ttfb.unwrap_or(call.deadlines.total);
        async move {
            match reply {
                Reply::Ok => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    AttemptResult::Ok {
                        tokens: 10,
                        latency: Duration::from_millis(50),
                    }
                }
                Reply::Timeout => {
                    tokio::time::sleep(deadline).await;
                    AttemptResult::Timeout {
                        phase: TimeoutPhase::Ttfb,
                        tokens_received: 0,
                    }
                }
                Reply::RateLimit(ra) => AttemptResult::Http {
                    status: 429,
                    retry_after: ra,
                    provider_code: Some("rate_limit_exceeded".into()),
                    latency: Duration::from_millis(20),
                },
                Reply::Status(status, code) => AttemptResult::Http {
                    status,
                    retry_after: None,
                    provider_code: code,
                    latency: Duration::from_millis(20),
                },
                Reply::Reset => AttemptResult::Transport {
                    failure: TransportFailure::Reset,
                },
            }
        }
    }
}

/// The log lines of the collected events, in order.
pub fn logs(c: &Collector) -> Vec<String> {
    c.events().into_iter().filter_map(|e| e.log).collect()
}

/// The events of one kind (by its serde tag, e.g. `cooldown_applied`).
pub fn of_kind(c: &Collector, tag: &str) -> Vec<Event> {
    c.events()
        .into_iter()
        .filter(|e| {
            serde_json::to_value(&e.kind)
                .ok()
                .and_then(|v| v.get("event").and_then(|t| t.as_str()).map(|t| t == tag))
                .unwrap_or(false)
        })
        .collect()
}

/// The cooldowns applied: (profile, reason label, ms).
pub fn cooldowns(c: &Collector) -> Vec<(String, String, u64)> {
    c.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::CooldownApplied {
                profile,
                reason,
                cooldown_ms,
                ..
            } => Some((profile, reason.as_str().to_string(), cooldown_ms)),
            _ => None,
        })
        .collect()
}
