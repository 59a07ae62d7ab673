//! The contract between a transport and the engine: what one attempt at an upstream produced
//! (`AttemptResult`, reported by the transport from typed errors, never by matching strings),
//! and the failure reasons the engine classifies it into (`Reason`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which deadline of an operation expired (docs/engine.md, "Timeouts by operation class").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutPhase {
    /// No response headers (or first token) before the time-to-first-byte deadline.
    Ttfb,
    /// A progressing stream went silent longer than the inter-token deadline.
    InterToken,
    /// The whole operation exceeded its total deadline.
    Total,
}

impl TimeoutPhase {
    /// Every phase.
    pub const ALL: [Self; 3] = [Self::Ttfb, Self::InterToken, Self::Total];

    /// The `phase` label value of `timeouts_total`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ttfb => "ttfb",
            Self::InterToken => "inter_token",
            Self::Total => "total",
        }
    }
}

/// A connection-level failure, from the transport's typed errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportFailure {
    /// The peer reset the connection (ECONNRESET) before any response byte.
    Reset,
    /// Nobody listens (ECONNREFUSED).
    Refused,
    /// The peer closed the connection before a complete response head (clean EOF).
    ClosedEarly,
    /// The response body ended before its declared length (not a stream of tokens).
    BodyEndedEarly,
    /// Any other I/O or protocol error.
    Other,
}

/// What one attempt at an upstream produced, as the transport observed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum AttemptResult {
    /// A complete, successful response.
    Ok {
        /// Tokens received (streams) or reported in `usage` (non-streaming); 0 for tools.
        tokens: u32,
        /// Time from sending the request to the end of the response.
        latency: Duration,
        /// Time from sending the request to the response head, as the transport measured it
        /// (what the TTFB deadline bounds); `None` when not measured.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ttfb: Option<Duration>,
        /// A stream's longest wait for its next body frame after the head (what the
        /// inter-token deadline bounds); `None` for a response that is not a stream.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        longest_gap: Option<Duration>,
    },
    /// A complete non-2xx HTTP response.
    Http {
        /// The status code.
        status: u16,
        /// The raw `Retry-After` header, if any (seconds or HTTP-date; parsed by the engine).
        retry_after: Option<String>,
        /// The other headers a provider throttles with, as sent (name, raw value):
        /// `retry-after-ms`, `x-ms-retry-after-ms`, `x-ratelimit-reset-requests`
        /// (read by the engine's failover, `failover::throttle`); empty when it sent none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        throttle: Vec<(String, String)>,
        /// A provider error code from the body (`rate_limit_exceeded`, `context_length_exceeded`, ...).
        provider_code: Option<String>,
        /// Time from sending the request to the end of the response.
        latency: Duration,
    },
    /// One of our own deadlines expired (kept apart from kernel ETIMEDOUT, see.
    Timeout {
        /// Which deadline.
        phase: TimeoutPhase,
        /// Tokens that had arrived before the deadline.
        tokens_received: u32,
    },
    /// A connection-level failure before any token of the response body arrived.
    Transport {
        /// What kind.
        failure: TransportFailure,
    },
    /// The connection was reset or closed after some tokens of a stream had arrived.
    StreamCut {
        /// Tokens that arrived before the cut.
        tokens_received: u32,
    },
    /// A WebSocket ping got no pong within its deadline.
    WsPingTimeout,
    /// The request could not be built (a header value HTTP forbids), so nothing was sent. Not
    /// the upstream's failure: the breaker ignores it; failover reads it as reason `unknown`
    /// (a permanent error: never retried as is).
    Unsendable {
        /// What was wrong with the request.
        reason: String,
    },
    /// The WebSocket peer closed with an abnormal close code.
    WsClosed {
        /// The close code.
        code: u16,
    },
}

/// Why an attempt failed, as the failover engine classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// One of our deadlines expired (a weak signal).
    Timeout,
    /// HTTP 429 or a provider rate-limit code (a strong signal).
    RateLimit,
    /// HTTP 5xx.
    ServerError,
    /// Reset, refused, closed before the head.
    Transport,
    /// Reset after some tokens of a stream.
    StreamCut,
    /// Schema violation or refusal in an otherwise good response.
    Content,
    /// The prompt does not fit the model's context window.
    ContextOverflow,
    /// HTTP 401/403.
    Auth,
    /// HTTP 402.
    Billing,
    /// Anything else.
    Unknown,
}

impl Reason {
    /// Every reason.
    pub const ALL: [Self; 10] = [
        Self::Timeout,
        Self::RateLimit,
        Self::ServerError,
        Self::Transport,
        Self::StreamCut,
        Self::Content,
        Self::ContextOverflow,
        Self::Auth,
        Self::Billing,
        Self::Unknown,
    ];

    /// The `reason` label value used in metrics, events and the cooldown store.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::RateLimit => "rate_limit",
            Self::ServerError => "server_error",
            Self::Transport => "transport",
            Self::StreamCut => "stream_cut",
            Self::Content => "content",
            Self::ContextOverflow => "context_overflow",
            Self::Auth => "auth",
            Self::Billing => "billing",
            Self::Unknown => "unknown",
        }
    }
}
