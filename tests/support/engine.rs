//! The engine tests' scripted transport (`support::fake`'s one fake, answering in a small
//! `Reply` vocabulary: every call is answered by a closure of (call, n-th call to the same
//! profile/dep), timeouts wait out the call's own deadline on tokio's paused clock) and readers
//! of the collected events.

use std::time::Duration;

use rehearse::engine::events::{Collector, Event, EventKind};
use rehearse::engine::{AttemptResult, Call, Transport, TransportFailure};
use tokio::time::Instant;

use super::fake::{Answer, CountBy, FakeTransport, model_of};

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

impl Reply {
    /// The one fake transport's answer for this reply.
    fn answer(self) -> Answer {
        // An HTTP answer is there at once; its latency is only what it reports.
        let http = |status, retry_after, provider_code| {
            Answer::Now(AttemptResult::Http {
                status,
                retry_after,
                throttle: Vec::new(),
                provider_code,
                latency: Duration::from_millis(20),
            })
        };
        match self {
            Reply::Ok => Answer::after_ms(
                50,
                AttemptResult::Ok {
                    tokens: 10,
                    latency: Duration::from_millis(50),
                    ttfb: None,
                    longest_gap: None,
                },
            ),
            Reply::Timeout => Answer::Stall,
            Reply::RateLimit(ra) => http(429, ra, Some("rate_limit_exceeded".into())),
            Reply::Status(status, code) => http(status, None, code),
            Reply::Reset => Answer::Now(AttemptResult::Transport {
                failure: TransportFailure::Reset,
            }),
        }
    }
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

/// The engine tests' transport: `support::fake`'s, answering in the `Reply` vocabulary.
#[derive(Clone)]
pub struct Scripted(FakeTransport);

impl Scripted {
    /// Answers with `script(call, n)` where n counts calls (1-based) to the same profile, or to
    /// the same dep for calls without a bearer.
    pub fn new(script: impl Fn(&Call, u32) -> Reply + Send + Sync + 'static) -> Self {
        Self(FakeTransport::new(CountBy::ProfileOrDep, move |call, n| {
            script(call, n).answer()
        }))
    }

    /// Every call so far.
    pub fn sent(&self) -> Vec<Sent> {
        self.0
            .calls()
            .into_iter()
            .map(|(at, call)| Sent {
                at,
                model: model_of(&call).map(str::to_string),
                dep: call.dep,
                profile: call.bearer,
                probe: call.probe,
            })
            .collect()
    }

    /// The profiles called, in order.
    pub fn profiles(&self) -> Vec<String> {
        self.sent().into_iter().filter_map(|s| s.profile).collect()
    }
}

impl Transport for Scripted {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        self.0.send(call)
    }
}

/// The failover and breaker log lines of the collected events, in order (the seed's wording);
/// the `Deadline expired: …` lines every timeout also logs are [`deadline_logs`].
pub fn logs(c: &Collector) -> Vec<String> {
    c.events()
        .into_iter()
        .filter_map(|e| e.log)
        .filter(|l| !l.starts_with("Deadline expired: "))
        .collect()
}

/// The `Deadline expired: DEP CLASS PHASE after MSms (SOURCE deadline)` lines, in order.
pub fn deadline_logs(c: &Collector) -> Vec<String> {
    c.events()
        .into_iter()
        .filter_map(|e| e.log)
        .filter(|l| l.starts_with("Deadline expired: "))
        .collect()
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
