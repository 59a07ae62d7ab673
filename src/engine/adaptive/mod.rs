//! Adaptive deadlines (docs/engine.md, "Adaptive deadlines"): with `[engine.timeouts] adaptive`
//! on, a tool call's deadline is its dependency's observed p99 × `factor`, clamped to
//! `[toolCallFloor, toolCallCap]`, from a window of its `window` most recent successful
//! latencies; the fixed `toolCall` until `minSamples` successes were seen. The estimator is the
//! one the half-open probe timeout reads ([`crate::engine::latency`]). A model call's TTFB and
//! inter-token deadlines adapt the same way, each from its own window of what the transport
//! measured (time to the response head; a stream's longest wait for a frame), clamped to
//! `[llmTtfbFloor, llmTtfbCap]` and `[llmInterTokenFloor, llmInterTokenCap]`; its total stays
//! fixed.
//!
//! A deadline alone does not open a heavy tool's breaker: an expired deadline with nothing
//! received counts towards the breaker only when the dependency answered nothing since the
//! attempt started (a half-open probe's always counts).
//!
//! # Layout
//!
//! - [`deadline`]: the pure estimator, the deadline decision and the breaker rule (`now` passed in).
//! - [`table`]: [`AdaptiveDeadlines`], every dependency's estimator behind one lock.

pub mod deadline;
pub mod table;

pub use deadline::{Bounds, Estimator, adaptive_deadline, expiry_counts};
pub use table::{AdaptiveDeadlines, Chosen, ModelChosen};
