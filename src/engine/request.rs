//! What the harness asks the engine to do (`EngineRequest`) and what it gets back
//! (`EngineResponse`). [`RequestKind`] is the one request vocabulary: a traffic line's kind, the
//! engine's request, and (through [`RequestKind::endpoint`]) what each attempt calls. One request may take several attempts (same-profile retries, rotations,
//! model fallbacks); the response sums them up.

use serde::{Deserialize, Serialize};

use super::events::{AttemptOutcome, OpClass};
use super::transport::Endpoint;

/// The kind of work a request asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RequestKind {
    /// A model call (`POST /v1/chat/completions`).
    Llm {
        /// The model, `PROVIDER/NAME` (e.g. `openai-codex/gpt-5`).
        model: String,
        /// Whether the response is streamed (SSE).
        stream: bool,
        /// The requested maximum number of tokens.
        max_tokens: Option<u32>,
        /// The conversation to send (a traffic line's `messages`), e.g. ending with an
        /// assistant prefill; `None`: one user message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        messages: Option<Vec<ChatMessage>>,
    },
    /// A tool call (`POST /tools/NAME`).
    Tool {
        /// The tool's name (also its dependency name).
        name: String,
        /// The JSON body sent to the tool.
        body: serde_json::Value,
        /// Whether repeating the call is harmless.
        idempotent: bool,
        /// The idempotency key that makes retrying a non-idempotent call safe.
        idempotency_key: Option<String>,
    },
    /// A WebSocket session on a channel.
    Ws {
        /// The channel's name (also its dependency name).
        channel: String,
        /// How many messages the session exchanges.
        messages: u32,
    },
}

impl RequestKind {
    /// `llm`, `tool` or `ws` (the traffic format's `kind`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Llm { .. } => "llm",
            Self::Tool { .. } => "tool",
            Self::Ws { .. } => "ws",
        }
    }

    /// The operation class of this kind of request.
    pub fn class(&self) -> OpClass {
        match self {
            Self::Llm { .. } => OpClass::LlmInference,
            Self::Tool { .. } => OpClass::ToolCall,
            Self::Ws { .. } => OpClass::Session,
        }
    }

    /// What an attempt at this request calls — the one conversion from the request vocabulary
    /// to the transport's. A model call's attempts may go to a fallback model instead: the
    /// executor then swaps `model` (and the degradation ladder `max_tokens`).
    pub fn endpoint(&self) -> Endpoint {
        match self {
            Self::Llm {
                model,
                stream,
                max_tokens,
                messages,
            } => Endpoint::Llm {
                model: model.clone(),
                stream: *stream,
                max_tokens: *max_tokens,
                messages: messages.clone(),
            },
            Self::Tool { name, body, .. } => Endpoint::Tool {
                name: name.clone(),
                body: body.clone(),
            },
            Self::Ws { channel, messages } => Endpoint::Ws {
                channel: channel.clone(),
                messages: *messages,
            },
        }
    }
}

/// One message of a model call's conversation (defined beside the transport's endpoints, which
/// carry it).
pub use super::transport::ChatMessage;

/// One user request handed to the engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineRequest {
    /// The request's id (traffic line number or replay sequence); appears in events.
    pub id: u64,
    /// What to do.
    pub kind: RequestKind,
    /// The tenant, for per-tenant throttles.
    pub tenant: Option<String>,
    /// The request's token budget, bounding retries.
    pub budget_tokens: Option<u64>,
    /// A session id (sticky routing), if any.
    pub session: Option<String>,
    /// An explicit operation class overriding the kind's default.
    pub class: Option<OpClass>,
}

impl EngineRequest {
    /// The operation class: the explicit one, else the kind's.
    pub fn op_class(&self) -> OpClass {
        self.class.unwrap_or_else(|| self.kind.class())
    }
}

/// What the engine finally did with a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineResponse {
    /// The final outcome (of the last attempt, or `rejected`).
    pub outcome: AttemptOutcome,
    /// Attempts made, breaker rejections included.
    pub attempts: u32,
    /// The model that answered (or was last tried), for model calls.
    pub model: Option<String>,
    /// True when a fallback model was used.
    pub fallback: bool,
    /// The auth profile of the attempt that answered (or was last tried), for model calls;
    /// `None` when no profile was tried (a tool call, a model unavailable before any attempt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The error the user saw, when the request failed.
    pub user_error: Option<String>,
    /// Tokens received by the successful attempt (or, for a partial result, before the cut).
    pub tokens: u64,
    /// True when the answer is a partial result: every retry, fallback and the lighter model
    /// failed, and a stream had delivered `tokens` before it was cut (degradation ladder).
    /// `outcome` is then that attempt's (`stream_cut` or `timeout`) and `user_error` is `None`.
    #[serde(default)]
    pub partial: bool,
}

impl EngineResponse {
    /// True when the request succeeded.
    pub fn is_ok(&self) -> bool {
        self.outcome == AttemptOutcome::Ok
    }
}
