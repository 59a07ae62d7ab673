//! Every client the harness has, and the socket plumbing under them: the engine's transport
//! (HTTP JSON, SSE, WebSocket) used by a run, the tuned connector and socket options it and
//! the dispatcher of `rehearse replay` go through, the one request builder, the one mapping of
//! typed errors, the read-failure diagnostics, and the kernel arrival stamps of the harness's
//! own servers.
//!
//! # Why one module
//! The run and `rehearse replay` talk to the same routes. When each built its own requests and
//! read its own error chains they drifted apart (a tool name percent-encoded in one and not the
//! other, a kernel `ETIMEDOUT` a `timeout` in one and `other` in the other). Now both build
//! requests with [`request`] and classify errors with [`errors`], so they cannot diverge.
//!
//! # Layout
//! - [`request`]: route → URI (percent-encoded), headers (probe, canary, idempotency,
//!   bearer), body; a request that cannot be built is [`request::BuildError`], never a
//!   transport failure.
//! - [`errors`]: one walk over a hyper/io error chain → [`errors::Failure`], and its two
//!   projections: the engine's `TransportFailure` + [`ReadFailure`], and replay's error kinds.
//! - [`http`]: [`HttpTransport`], the engine's `Transport` over a pooled hyper-util client;
//!   [`sse`]: reading a response body (SSE token events, usage, provider codes);
//!   [`ws`]: the engine's WebSocket session; [`throttle`]: the throttle headers besides
//!   `Retry-After` a failed response carried, which both hand the engine.
//! - `rehearse replay`'s `HttpDispatcher` sits with the replayer it serves
//!   ([`crate::replay::http`]) and builds and classifies through the same [`request`] and [`errors`].
//! - [`diagnostics`]: per-dependency read-failure counters for the report.
//! - [`connector`] / [`sockopt`]: [`TunedConnector`], hyper-util's connector plus a scenario's
//!   `[tcp]` options ([`TcpTuning`]) on every socket, and what the kernel read back.
//! - [`arrival`]: when a request reached this host (kernel receive timestamps on Linux), for
//!   the mock upstream, the recording proxy and the replay receiver.

pub(crate) mod arrival;
pub(crate) mod connector;
pub(crate) mod diagnostics;
pub(crate) mod errors;
pub(crate) mod http;
pub(crate) mod request;
pub mod sockopt;
pub(crate) mod sse;
pub(crate) mod throttle;
pub(crate) mod ws;

pub use connector::{SocketsReport, TunedConnector};
pub use diagnostics::{Diagnostics, ReadFailure};
pub use http::HttpTransport;
pub use sockopt::TcpTuning;
