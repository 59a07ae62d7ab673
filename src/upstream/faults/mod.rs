//! Fault specs (docs/faults.md): one envelope of scoping keys shared by every fault
//! (`name`, `route`, `profile`, `model`, `from`, `until`, `probability`, `first`, `optional`,
//! `when` — [`when`], `headers` — [`headers`]) plus one kind, a
//! serde-tagged enum (`kind = "status"` ...) whose variants live one per file behind the
//! [`Fault`] trait. A fault only *describes* what to do; [`Fault::action`] turns it into an
//! [`Action`] the server executes, and [`FaultTable`] decides which fault (if any) a request hits.
//!
//! Unknown keys are rejected; durations are humantime strings (`"250ms"`, `"20s"`).
//!
//! ## Canaries
//! Faults apply to the engine's synthetic health checks (requests with `X-Rehearse-Canary`)
//! like to any request in scope, with two rules that keep user traffic's faults identical to a
//! run without canaries: a `first = N` fault is aimed at N user requests only (a canary never
//! sees it, armed or not, and never uses it up), and `probability` draws for canaries come from
//! a separate seeded stream.

mod down;
mod error_event;
mod first_token_delay;
pub(crate) mod headers;
mod latency;
mod malformed_chunk;
mod parse;
mod provider_error;
mod rate_limit;
mod reset;
mod reset_mid_stream;
mod scope;
mod slow_stream;
mod stall;
mod stall_stream;
mod status;
mod ws_close;
mod when;
mod ws_ping_timeout;

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::util::speed::Speed;

pub(crate) use down::DownFault;
pub use error_event::ErrorEventFault;
pub use first_token_delay::FirstTokenDelayFault;
pub use headers::FaultHeaders;
pub use malformed_chunk::{MalformedChunkFault, MalformedThen};
pub use provider_error::ProviderError;
pub use latency::LatencyFault;
pub use parse::{FaultFileError, parse_fault_file};
pub use rate_limit::{RateLimitFault, RetryAfterFormat};
pub use reset::ResetFault;
pub use reset_mid_stream::ResetMidStreamFault;
pub use scope::{FaultTable, InvalidRoute, RequestScope, RouteKind, RouteSel};
pub use slow_stream::SlowStreamFault;
pub use stall::StallFault;
pub use stall_stream::StallStreamFault;
pub use status::StatusFault;
pub use when::{RequestShape, When};
pub use ws_close::WsCloseFault;
pub use ws_ping_timeout::WsPingTimeoutFault;

/// The longest duration a fault may carry (`from`, `until`, `delay`, `jitter`, `retry_after`,
/// `token_interval`, `resume_after`, a duration header): 365 days. Longer ones are refused when the fault is read, so acting one
/// out (speed scaling, `now + Retry-After`, an HTTP date before year 9999) cannot overflow.
pub const MAX_FAULT_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// One `[[fault]]` table: where it applies (the envelope) and what it does (`kind`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultSpec {
    /// A name expectations can anchor their times at (`since = { fault = "NAME" }`), unique
    /// within a scenario; expectations may name a fault by its index instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `llm`, `tool:NAME`, `ws` or `*`.
    pub route: RouteSel,
    /// Only requests carrying this bearer token (a profile's token defaults to its id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Only model calls for this model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Window start, from the run start (default: the start).
    #[serde(with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub from: Option<Duration>,
    /// Window end, from the run start (default: never).
    #[serde(with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub until: Option<Duration>,
    /// Chance that a matching request is hit (seeded RNG), 0..=1.
    pub probability: f64,
    /// Only the first N matching user requests (canaries neither see nor count; see the module doc).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
    /// In a scenario, the fault may never apply: without it, a fault that applied to no
    /// request in any run of the scenario is a failed check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Only chat completions of this shape (streams, carries tools, ends with an assistant
    /// message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<When>,
    /// Extra response headers on every answer it makes over HTTP (duration headers scale with
    /// the speed factor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<FaultHeaders>,
    /// What the fault does.
    #[serde(flatten)]
    pub kind: FaultKind,
}

/// The fault kinds of docs/faults.md, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultKind {
    /// That HTTP status.
    Status(StatusFault),
    /// 429 with `Retry-After`.
    RateLimit(RateLimitFault),
    /// Headers late.
    Latency(LatencyFault),
    /// Request read, headers never come.
    Stall(StallFault),
    /// RST before any response byte.
    Reset(ResetFault),
    /// Headers and a fraction of the body or tokens, then RST.
    ResetMidStream(ResetMidStreamFault),
    /// The stream stops after a fraction; the connection stays open.
    StallStream(StallStreamFault),
    /// Tokens dribble.
    SlowStream(SlowStreamFault),
    /// The WebSocket stays open but pongs and data stop.
    WsPingTimeout(WsPingTimeoutFault),
    /// An abnormal close frame.
    WsClose(WsCloseFault),
    /// The coordinator stopped (route `coordinator` only).
    Down(DownFault),
    /// Headers and the role chunk at once, the first content token late.
    FirstTokenDelay(FirstTokenDelayFault),
    /// A `data:` line that is not JSON inside a stream.
    MalformedChunk(MalformedChunkFault),
    /// A `data: {"error": ...}` event inside a 200 stream, then the end.
    ErrorEvent(ErrorEventFault),
}

impl FaultKind {
    /// The kind as the trait object that knows how to act it out.
    pub fn as_fault(&self) -> &dyn Fault {
        match self {
            Self::Status(f) => f,
            Self::RateLimit(f) => f,
            Self::Latency(f) => f,
            Self::Stall(f) => f,
            Self::Reset(f) => f,
            Self::ResetMidStream(f) => f,
            Self::StallStream(f) => f,
            Self::SlowStream(f) => f,
            Self::WsPingTimeout(f) => f,
            Self::WsClose(f) => f,
            Self::Down(f) => f,
            Self::FirstTokenDelay(f) => f,
            Self::MalformedChunk(f) => f,
            Self::ErrorEvent(f) => f,
        }
    }

    /// The `kind` name (`status`, `rate_limit`, ...).
    pub(crate) fn name(&self) -> &'static str {
        self.as_fault().name()
    }
}

/// An attribute value a fault kind cannot take; the message names the attribute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidFault(pub String);

/// Why a `[[fault]]` table is not a fault: the message names the key.
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    /// The envelope (`route`, `profile`, `from`, …) did not decode.
    #[error("{0}")]
    Envelope(#[source] serde_json::Error),
    /// The kind and its attributes did not decode.
    #[error("{}{source}", kind.as_ref().map(|k| format!("fault kind `{k}`: ")).unwrap_or_default())]
    Kind {
        kind: Option<String>,
        #[source]
        source: serde_json::Error,
    },
    /// A kind's attribute is out of range.
    #[error("fault kind `{kind}`: {source}")]
    Attribute {
        kind: &'static str,
        #[source]
        source: InvalidFault,
    },
    /// The table as a whole is inconsistent (window, route, probability).
    #[error("{0}")]
    Table(String),
}

/// What every fault kind provides.
pub trait Fault {
    /// The `kind` name.
    fn name(&self) -> &'static str;
    /// Whether this kind can act on a request of that route kind.
    fn applies_to(&self, route: RouteKind) -> bool {
        let _ = route;
        true
    }
    /// Whether it acts on streaming chat completions only (a request that does not stream is
    /// out of its scope, as if it said `when = { stream = true }`).
    fn streams_only(&self) -> bool {
        false
    }
    /// Whether its answer goes out over HTTP, so `headers` can ride on it.
    fn answers_over_http(&self) -> bool {
        true
    }
    /// Checks attribute values; the error names the attribute.
    fn validate(&self) -> Result<(), InvalidFault> {
        Ok(())
    }
    /// What the server does for one request this fault hit.
    fn action(&self, ctx: &mut ActionCtx<'_>) -> Action;
}

/// Inputs of [`Fault::action`]: the speed factor, the wall clock (for HTTP dates) and the seeded
/// RNG (for jitter). Passed in so actions are pure functions of their inputs.
#[derive(Debug)]
pub struct ActionCtx<'a> {
    /// Divides every duration.
    pub speed: Speed,
    /// Wall-clock time of the request (for `Retry-After` HTTP dates).
    pub wall_now: SystemTime,
    /// The upstream's seeded RNG.
    pub rng: &'a mut ChaCha8Rng,
}

impl ActionCtx<'_> {
    /// `d` divided by the speed factor.
    pub(crate) fn scale(&self, d: Duration) -> Duration {
        self.speed.scale(d)
    }
}

/// What the server does for one faulted request.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Answer with this status, extra headers and body instead of the route's response.
    Respond {
        /// HTTP status.
        status: u16,
        /// Extra headers (e.g. `Retry-After`).
        headers: Vec<(&'static str, String)>,
        /// Response body.
        body: Bytes,
    },
    /// Send the normal response after this delay.
    Delay(Duration),
    /// Never send headers (until the client goes away or the server stops).
    Stall,
    /// RST before any response byte.
    Reset,
    /// Send headers and this fraction of the body or tokens, then cut the connection.
    Cut {
        /// Fraction of the body or tokens sent before the cut.
        after_fraction: f64,
        /// How the connection is cut.
        mode: CutMode,
        /// Where in the stream the cut falls.
        at: CutAt,
    },
    /// Send tokens (or body pieces) at this interval.
    SlowStream(Duration),
    /// WebSocket: stop answering pings and echoing data; keep TCP open.
    WsPingTimeout,
    /// WebSocket: send a close frame with this code.
    WsClose(u16),
    /// A stream's headers and role chunk at once, its first content token after this delay; a
    /// JSON answer whole after it.
    FirstToken(Duration),
    /// Send this fraction of the body or tokens, be silent for `resume`, then send the rest.
    Pause {
        /// Fraction of the body or tokens sent before the silence.
        after_fraction: f64,
        /// Where in the stream the silence falls (`frame` or `mid_frame`).
        at: CutAt,
        /// How long the silence lasts.
        resume: Duration,
    },
    /// After this many content chunks of a stream, send `event`; then as `then` says.
    Inject {
        /// Content chunks before the event.
        after_chunks: u64,
        /// The whole `data: ...\n\n` event.
        event: Bytes,
        /// What follows it.
        then: InjectThen,
    },
}

/// What follows an injected stream event ([`Action::Inject`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectThen {
    /// The rest of the stream as usual.
    Continue,
    /// `data: [DONE]`, then a clean end.
    Done,
    /// A clean end at once (no finish chunk, no `[DONE]`).
    Close,
}

impl Action {
    /// Whether the route's handler still runs (the request is "executed"), which matters for
    /// counting duplicate executions of idempotency keys.
    pub(crate) fn executes(&self) -> bool {
        !matches!(self, Self::Respond { .. } | Self::Stall | Self::Reset)
    }

    /// Whether the response it makes, once out to its last byte, is the route's whole answer:
    /// only delayed or paced (`latency`, `slow_stream`, `first_token_delay`, a `stall_stream`
    /// that resumes), never refused, cut, reset or broken by an injected event.
    pub(crate) fn answers_whole(&self) -> bool {
        matches!(
            self,
            Self::Delay(_) | Self::SlowStream(_) | Self::FirstToken(_) | Self::Pause { .. }
        )
    }
}

/// The wait a faulted answer announced, in scenario ms, whichever duration header said it
/// ([`headers::announced_wait`]): the fault's `headers` (`extra`, already scaled) first, as they
/// replace the kind's own, then the headers of a `Respond` action.
pub(crate) fn announced_wait(
    action: &Action,
    extra: &[(String, String)],
    wall_now: SystemTime,
    speed: Speed,
) -> Option<u64> {
    let own: &[(&'static str, String)] = match action {
        Action::Respond { headers, .. } => headers,
        _ => &[],
    };
    let all = extra
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(own.iter().map(|(k, v)| (*k, v.as_str())));
    headers::announced_wait(all, wall_now, speed)
}

/// How a [`Action::Cut`] ends the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutMode {
    /// TCP RST (zero linger).
    Reset,
    /// Silence with the socket open.
    Stall,
}

/// Where a stream cut falls: the `cut` attribute of `reset_mid_stream` and `stall_stream`.
///
/// On an SSE stream the fraction counts content chunks (the role chunk before them always goes
/// out). On a JSON body the fraction counts bytes, so `frame` and `mid_frame` cut the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutAt {
    /// After whole SSE events, then the kind's ending (RST or silence). The default.
    #[default]
    Frame,
    /// After whole SSE events plus the first half of the next one's bytes, then the kind's
    /// ending.
    MidFrame,
    /// After whole SSE events the body ends cleanly (a proper end of the chunked body, the
    /// connection intact): no `finish_reason` chunk, no usage chunk, no `data: [DONE]`. On a JSON
    /// body: the first bytes of the document with a `Content-Length` that matches them. The
    /// kind's ending does not happen.
    NoTerminal,
}

impl CutAt {
    /// Whether this is the default (left out when a fault is serialized).
    pub(crate) fn is_frame(&self) -> bool {
        *self == Self::Frame
    }
}

/// Checks a fraction attribute.
fn check_fraction(name: &str, v: f64) -> Result<(), InvalidFault> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(InvalidFault(format!(
            "`{name}` must be between 0 and 1, got {v}"
        )))
    }
}

/// Checks a duration attribute is not zero.
fn check_nonzero(name: &str, d: Duration) -> Result<(), InvalidFault> {
    if d.is_zero() {
        Err(InvalidFault(format!("`{name}` must be greater than 0")))
    } else {
        Ok(())
    }
}
