//! One circuit breaker per dependency (docs/engine.md), as a pure state machine.
//!
//! Classic vocabulary: **closed** lets traffic flow, **open** rejects at once, **half-open**
//! admits paced probes. The dependency key (`dep`) is a tool name, a WebSocket channel, or a
//! model endpoint `PROVIDER/REGION/FP` (FP = 6 hex digits of the credential's SHA-256).
//!
//! ## Trip conditions (closed → open)
//! - `consecutiveFailures` (5) connection failures in a row: reset, refused, closed early, or no
//!   response byte before the TTFB deadline (for classes without a TTFB deadline, before the total
//!   one). It trips *at* the 5th (not after it, as gobreaker does).
//! - With at least `minCalls` (20) calls in the `window` (30 s, sliding in time), a failure share
//!   strictly above `failureRatio` (60 %); failures are 5xx answers and connection failures.
//! - A WebSocket dependency: `wsPingTimeouts` (3) ping timeouts in a row. One lost pong is Wi-Fi.
//! - Never: a stream cut after tokens arrived, a slow read on a progressing stream (inter-token
//!   timeout), a 429 (it is remembered for its Retry-After instead).
//!
//! ## Open
//! Rejects every call for `openFor` (30 s), doubled on each re-open from half-open and capped at
//! `openForCap` (5 min). When that time is up but a Retry-After received from the dependency
//! reaches further, the half-open transition is deferred to it and the skip is noted
//! (`breaker_retry_after_skips_total`).
//!
//! ## Half-open
//! One probe in flight; probe starts at least `probeInterval` (250 ms) plus a seeded uniform
//! `probeJitter` (0–50 ms) apart; a probe's timeout is the observed p99 latency × 1.4, clamped to
//! [`probeTimeoutFloor`, `probeTimeoutCap`]. `probeSuccesses` (2) consecutive successes from
//! `probeDistinctWorkers` (2) distinct workers close it; a failed probe (5xx, 429, connection
//! failure) re-opens it. With a single engine worker set `probeDistinctWorkers = 1`.
//!
//! ## Trip reasons
//! Every transition to open carries a [`TripReason`]: `consecutive_failures`, `failure_ratio`,
//! `ping_timeouts` (closed → open, [`trip::should_trip`]), `probe_failed` (half-open → open; the
//! ping-timeout streak of a WebSocket probe is `ping_timeouts`), or `fleet` (a coordinated
//! breaker adopted another host's trip). It is in the `BreakerTransition` event, its log line and
//! the report's transition rows.
//!
//! # Layout
//!
//! - [`machine`]: the pure state machine ([`Machine`]: admit, record, advance, adopt).
//! - [`trip`]: the closed-state trip rules, [`TripReason`], and when a success cannot trip
//!   (`QuietSuccess`).
//! - [`probe`]: half-open pacing, the probe timeout and the closing rule.
//! - [`window`]: the sliding window of the failure-ratio rule.
//! - [`signal`]: what one attempt's result means to a breaker ([`Signal::of`]).
//! - [`config`]: `[engine.breaker]` and its speed scaling.
//! - [`registry`]: [`Breakers`], every dependency's breaker, each behind a lock of its own, a
//!   closed breaker admitting and a success that cannot trip it recorded with no lock (the
//!   engine's `Admission`), with fleet coordination in `registry/fleet.rs` and
//!   `registry/cooldowns.rs`.

pub mod config;
pub mod machine;
pub mod probe;
pub mod registry;
pub mod signal;
pub mod trip;
pub mod window;

pub use config::{BreakerConfig, BreakerConfigError};
pub use machine::{Machine, Note, Phase, Shared, open_for};
pub use registry::{Breakers, HostClock};
pub use signal::Signal;
pub use trip::TripReason;
