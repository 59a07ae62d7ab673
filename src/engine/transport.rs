//! The seam between the engine and the network: the engine builds a `Call` and a `Transport`
//! turns it into an `AttemptResult`. The real hyper/tungstenite transport is
//! `crate::transport::HttpTransport`; tests use a scripted one. The transport enforces the deadlines itself (keeping its
//! own deadline expiry apart from kernel errors) and reports `AttemptResult::Timeout{phase}`.

use std::future::Future;
use std::time::Duration;

use super::events::OpClass;
use super::outcome::AttemptResult;

/// One message of a model call's conversation (OpenAI's `{role, content}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// What to call: the route and body of one attempt (the request's [`RequestKind`] with the
/// model of this attempt, see [`RequestKind::endpoint`]).
///
/// [`RequestKind`]: super::request::RequestKind
/// [`RequestKind::endpoint`]: super::request::RequestKind::endpoint
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// `POST /v1/chat/completions`.
    Llm {
        /// The model (`PROVIDER/NAME`).
        model: String,
        /// Stream the response (SSE).
        stream: bool,
        /// `max_tokens` of the request body.
        max_tokens: Option<u32>,
        /// The conversation to send; `None`: one user message.
        messages: Option<Vec<ChatMessage>>,
    },
    /// `POST /tools/NAME`.
    Tool {
        /// The tool name.
        name: String,
        /// The JSON body.
        body: serde_json::Value,
    },
    /// `GET /ws?channel=NAME`, then `messages` exchanges.
    Ws {
        /// The channel name.
        channel: String,
        /// Messages to exchange.
        messages: u32,
    },
}

/// Who makes a call: an engine worker, or the health-check loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Engine worker N, on behalf of a request.
    Worker(usize),
    /// A synthetic health check (canary); transports mark it with `X-Rehearse-Canary`.
    Canary,
}

/// The deadlines of one attempt, already divided by the run's speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// Response headers (or the first token) must arrive within this.
    pub ttfb: Option<Duration>,
    /// A stream may stay silent at most this long between tokens.
    pub inter_token: Option<Duration>,
    /// The whole attempt must finish within this.
    pub total: Duration,
}

/// One attempt at an upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The dependency (breaker key) this call goes to.
    pub dep: String,
    /// The operation class.
    pub class: OpClass,
    /// What to call.
    pub endpoint: Endpoint,
    /// The credential to send as `Authorization: Bearer` (never logged; model calls only).
    pub bearer: Option<String>,
    /// The `Idempotency-Key` header value.
    pub idempotency_key: Option<String>,
    /// The `X-Breaker-Probe` header value (the dep) when this call is a breaker probe.
    pub probe: Option<String>,
    /// Who makes the call.
    pub origin: Origin,
    /// The attempt number within its request (1-based).
    pub attempt: u32,
    /// The id of the request ([`super::request::EngineRequest::id`]) this call is an attempt of,
    /// the same for every retry, rotation and fallback of it; `None` for a canary. The
    /// harness's transport sends it as the request's turn (`X-Rehearse-Turn`).
    pub request: Option<u64>,
    /// The deadlines to enforce.
    pub deadlines: Deadlines,
}

/// Sends calls. Implementations must be cheap to share across workers.
pub trait Transport: Send + Sync + 'static {
    /// Performs one attempt and reports what happened (never panics, never errors: every failure
    /// is an `AttemptResult`).
    fn send(&self, call: Call) -> impl Future<Output = AttemptResult> + Send;
}
