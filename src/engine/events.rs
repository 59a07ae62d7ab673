//! Structured engine events: every decision the engine takes, with its log line (docs/engine.md)
//! where one exists. They land in `events.jsonl` and feed the metrics registry, so this
//! enum is the one contract between the deciding code (failover, breakers, budgets) and whatever
//! observes it (metrics, the run harness, the report).
//!
//! Longer than 400 lines on purpose: the event vocabulary is one enum with its log lines; splitting
//! it would scatter one contract (docs/engine.md).

use crate::util::sync::Locked;
use serde::{Deserialize, Serialize};

use super::outcome::{Reason, TimeoutPhase};
pub use super::vocab::BreakerState;
pub use super::vocab::DeadlineSource;
use super::vocab::TripReason;

/// Operation classes (docs/engine.md, timeouts and `class` labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    /// A tool call (`POST /tools/NAME`).
    ToolCall,
    /// A model call (`POST /v1/chat/completions`).
    LlmInference,
    /// A WebSocket session.
    Session,
}

impl OpClass {
    /// Every class.
    pub const ALL: [Self; 3] = [Self::ToolCall, Self::LlmInference, Self::Session];

    /// The `class` label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolCall => "tool_call",
            Self::LlmInference => "llm_inference",
            Self::Session => "session",
        }
    }
}

/// The `outcome` label of `requests_total` (docs/metrics.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Success.
    Ok,
    /// One of our deadlines expired.
    Timeout,
    /// 429 or a provider rate-limit code.
    RateLimited,
    /// 5xx.
    Http5xx,
    /// Reset, refused, closed early.
    Transport,
    /// Reset after tokens arrived.
    StreamCut,
    /// Rejected locally by an open breaker (never reached the upstream).
    Rejected,
    /// Content failure (schema, refusal, other 4xx).
    Content,
    /// Context window exceeded.
    Context,
}

impl AttemptOutcome {
    /// Every outcome.
    pub const ALL: [Self; 9] = [
        Self::Ok,
        Self::Timeout,
        Self::RateLimited,
        Self::Http5xx,
        Self::Transport,
        Self::StreamCut,
        Self::Rejected,
        Self::Content,
        Self::Context,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Timeout => "timeout",
            Self::RateLimited => "rate_limited",
            Self::Http5xx => "http_5xx",
            Self::Transport => "transport",
            Self::StreamCut => "stream_cut",
            Self::Rejected => "rejected",
            Self::Content => "content",
            Self::Context => "context",
        }
    }
}

/// A rung of the degradation ladder (docs/engine.md), run once retries, failover and fallbacks are
/// exhausted: a lighter model, then a partial result, then fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LadderRung {
    /// Answer with the configured lighter model (`modelFailover.lighterModel`).
    LighterModel,
    /// Return the tokens a stream delivered before it was cut.
    PartialResult,
    /// Fail with the user-visible error.
    Fail,
}

impl LadderRung {
    /// The `rung` value (`lighter_model`, `partial_result`, `fail`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LighterModel => "lighter_model",
            Self::PartialResult => "partial_result",
            Self::Fail => "fail",
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The deadline that expired in a `timeout` attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expired {
    /// The deadline, nominal ms.
    pub ms: u64,
    /// Where it came from.
    pub source: DeadlineSource,
}

/// The log line of an expired deadline.
pub fn expired_log(dep: &str, class: OpClass, phase: TimeoutPhase, e: Expired) -> String {
    format!(
        "Deadline expired: {dep} {} {} after {}ms ({} deadline)",
        class.as_str(),
        phase.as_str(),
        e.ms,
        e.source.as_str()
    )
}

/// One engine event: when (ms since the engine started, on tokio's clock), what, and the
/// human log line where docs/engine.md defines one (word for word).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Milliseconds since the engine's start instant.
    pub t_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
    /// The log line, if this event has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// What happened. Profile *ids* (e.g. `openai-codex:default`) are not secrets; credentials never
/// appear here, only their fingerprints inside `dep` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// One attempt at a dependency finished (or was rejected by its breaker).
    AttemptFinished {
        /// The dependency (breaker key).
        dep: String,
        /// The engine worker that ran it.
        worker: usize,
        /// The operation class.
        class: OpClass,
        /// The outcome label.
        outcome: AttemptOutcome,
        /// The timeout phase, when `outcome` is `timeout`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<TimeoutPhase>,
        /// Latency from sending to the end of the attempt, in ms (0 for rejections).
        latency_ms: f64,
        /// True for half-open probes and canaries (they carry `X-Breaker-Probe`).
        probe: bool,
        /// The auth profile used, for model calls.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
        /// The model, for model calls.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// When `outcome` is `timeout`: the deadline that expired (nominal) and where it came
        /// from. Log: `Deadline expired: DEP tool_call total after 13000ms (fixed deadline)`
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline: Option<Expired>,
    },
    /// The deadline a dependency's calls of one class get changed (first use included): the
    /// `timeout_deadline_seconds{dep,class,phase}` gauge.
    DeadlineChanged {
        /// The dependency.
        dep: String,
        /// The operation class.
        class: OpClass,
        /// Which deadline of the class.
        phase: TimeoutPhase,
        /// The new deadline, nominal ms.
        deadline_ms: u64,
        /// Where it came from (`fixed` while warming up or with adaptive deadlines off).
        source: DeadlineSource,
    },
    /// A timeout is retried on the same profile (retry gate). Log: `Profile ID timed out. Retry 1/1 in 847ms...`
    SameProfileRetry {
        /// Provider of the profile.
        provider: String,
        /// Profile id.
        profile: String,
        /// Why (timeout).
        reason: Reason,
        /// This retry's number (1-based).
        retry: u32,
        /// Retries allowed.
        of: u32,
        /// The jittered delay before it.
        delay_ms: u64,
    },
    /// A cooldown was written. Log: `Cooldown applied: 10000ms for timeout reason`
    CooldownApplied {
        /// Provider of the profile.
        provider: String,
        /// Profile id.
        profile: String,
        /// Reason of the cooldown.
        reason: Reason,
        /// Its length in ms.
        cooldown_ms: u64,
        /// The profile's error count after this failure.
        error_count: u32,
    },
    /// Failover moved to the next profile. Log (retry gate):
    /// `Profile ID timed out (1 retries exhausted). Trying next account...`; (legacy):
    /// `Profile ID timed out (possible rate limit). Trying next account...`
    ProfileRotated {
        /// Provider.
        provider: String,
        /// The profile left.
        from: String,
        /// The profile chosen next, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        /// Why.
        reason: Reason,
    },
    /// Every profile of a provider is cooling or its endpoint's breaker is open. Log:
    /// `No available auth profile for PROVIDER (all in cooldown or unavailable).`
    NoProfileAvailable {
        /// Provider.
        provider: String,
    },
    /// The request moved to another model.
    ModelFallback {
        /// The model left.
        from: String,
        /// The model used instead.
        to: String,
        /// Why.
        reason: Reason,
    },
    /// A breaker changed state.
    BreakerTransition {
        /// The dependency.
        dep: String,
        /// Previous state.
        from: BreakerState,
        /// New state.
        to: BreakerState,
        /// For transitions to open: how long it stays open, in ms.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        open_for_ms: Option<u64>,
        /// For transitions to open: which rule tripped it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<TripReason>,
    },
    /// A half-open transition was deferred because a Retry-After reached further.
    RetryAfterSkip {
        /// The dependency.
        dep: String,
        /// Ms (engine clock) until which it stays open.
        until_ms: u64,
    },
    /// A transient or content retry was refused because the request's token budget is spent.
    RetryBudgetExhausted {
        /// Operation class.
        class: OpClass,
        /// Tokens spent so far.
        spent: u64,
        /// The request's budget.
        budget: u64,
    },
    /// A tenant over its tokens-per-minute budget was routed to the cheaper model.
    Throttled {
        /// The tenant.
        tenant: String,
        /// The model it was routed to, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to_model: Option<String>,
    },
    /// A synthetic health check (canary) finished.
    HealthCheck {
        /// The dependency.
        dep: String,
        /// Whether it succeeded.
        ok: bool,
    },
    /// The upstream executed a non-idempotent call twice under one `Idempotency-Key` (reported
    /// by whoever can see it, e.g. the harness from the mock upstream's records; must stay 0).
    IdempotentDuplicate {
        /// The dependency.
        dep: String,
    },
    /// A model request reached the degradation ladder: the rung taken, or (with `skipped`) the
    /// lighter model passed over. Logs: `Degradation: lighter model M (after REASON on FROM)`,
    /// `Degradation: lighter model M skipped (WHY)`, `Degradation: partial result of N tokens
    /// from M`; the `fail` rung has no log line (the request's own lines already tell it).
    Degraded {
        /// The request's id.
        request: u64,
        /// The rung.
        rung: LadderRung,
        /// The lighter model, or the model that delivered the partial result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Tokens of a partial result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
        /// Why the lighter model was passed over (`circuit_open`, `no_available_profile`,
        /// `pinned_plan`, `context_overflow`, `budget_spent`); absent when the rung was taken.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        skipped: Option<String>,
    },
    /// A call to the fleet coordinator failed; the host decides locally meanwhile.
    CoordinatorError {
        /// The call (`read`, `change`, `lease`, `probe_ok`, `seed`, `cooldown`).
        op: String,
        /// What went wrong (`redis: …`, `no answer within 100ms`, …).
        error: String,
    },
    /// Another host of the fleet cooled a profile this host uses: failover here skips it for
    /// the time left. Log: `Cooldown adopted from the fleet: PROFILE for 9950ms (rate_limit reason)`
    CooldownAdopted {
        /// Profile id.
        profile: String,
        /// The cooldown's reason, when the writer said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<Reason>,
        /// Cooldown left when this host read it.
        remaining_ms: u64,
    },
    /// The host's coordination mode changed: the coordinator's (`redis`, `in_process`) when it
    /// answers, `local` while the host falls back to its own breakers.
    CoordinatorMode {
        /// The new mode.
        mode: String,
    },
    /// A user request finished (after all retries, rotations and fallbacks).
    RequestFinished {
        /// The request's id (traffic line number or replay sequence).
        request: u64,
        /// The dependency first targeted.
        dep: String,
        /// Final outcome.
        outcome: AttemptOutcome,
        /// Attempts made, rejections included.
        attempts: u32,
        /// The model that finally answered, for model calls.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// True when a fallback model was used.
        fallback: bool,
        /// The error the user saw, if the request failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user_error: Option<String>,
        /// True when the answer is a partial result (a cut stream's tokens, degradation ladder).
        #[serde(default, skip_serializing_if = "is_false")]
        partial: bool,
    },
}

/// Receives engine events. Implemented by the metrics registry, the `events.jsonl` writer and
/// test collectors; must not block (called on the engine's hot path).
pub trait EventSink: Send + Sync {
    /// Handles one event.
    fn emit(&self, event: &Event);
}

/// Sends every event to several sinks in order.
#[derive(Default)]
pub struct FanOut(pub Vec<std::sync::Arc<dyn EventSink>>);

impl std::fmt::Debug for FanOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FanOut({} sinks)", self.0.len())
    }
}

impl EventSink for FanOut {
    fn emit(&self, event: &Event) {
        for sink in &self.0 {
            sink.emit(event);
        }
    }
}

/// Collects events in memory. Test and benchmark support (the integration tests and
/// `benches/engine.rs` need it from outside the crate), kept out of the documented API.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Collector(pub std::sync::Mutex<Vec<Event>>);

impl Collector {
    /// A copy of every event so far.
    pub fn events(&self) -> Vec<Event> {
        self.0.locked().clone()
    }
}

impl EventSink for Collector {
    fn emit(&self, event: &Event) {
        self.0.locked().push(event.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_flat_with_a_tag() {
        let e = Event {
            t_ms: 12,
            kind: EventKind::CooldownApplied {
                provider: "openai-codex".into(),
                profile: "openai-codex:default".into(),
                reason: Reason::Timeout,
                cooldown_ms: 10_000,
                error_count: 1,
            },
            log: Some("Cooldown applied: 10000ms for timeout reason".into()),
        };
        let json = serde_json::to_string(&e).unwrap();
        assert!(json.contains(r#""event":"cooldown_applied""#), "{json}");
        assert!(json.contains(r#""reason":"timeout""#), "{json}");
        let back: Event = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
    }
}
