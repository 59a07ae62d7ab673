//! The engine's shared vocabulary: the words the events and several parts (breaker, health,
//! metrics, coordinator, the report) all speak — a breaker's [`BreakerState`] and why it opened
//! ([`TripReason`]), and where an attempt's deadline came from ([`DeadlineSource`]). A leaf: it names no other part of the engine, so every part can name it
//! and the parts' dependencies run one way. Each type is re-exported where it was first
//! documented (`events::BreakerState`, `breaker::TripReason`).

use serde::{Deserialize, Serialize};

/// A breaker's state (classic vocabulary: closed = traffic flows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// Traffic flows.
    Closed,
    /// Paced probes are admitted.
    HalfOpen,
    /// Calls are rejected at once.
    Open,
}

impl BreakerState {
    /// Every state, in gauge order.
    pub const ALL: [Self; 3] = [Self::Closed, Self::HalfOpen, Self::Open];

    /// The label value (`closed`, `half_open`, `open`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::HalfOpen => "half_open",
            Self::Open => "open",
        }
    }

    /// The `breaker_state` gauge value (0 closed, 1 half_open, 2 open).
    pub fn gauge(self) -> f64 {
        match self {
            Self::Closed => 0.0,
            Self::HalfOpen => 1.0,
            Self::Open => 2.0,
        }
    }
}

/// Why a breaker opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TripReason {
    /// `consecutiveFailures` connection failures in a row (reset, refused, closed early, no
    /// response byte before the deadline).
    ConsecutiveFailures,
    /// With at least `minCalls` calls in the window, the failure share (5xx answers and
    /// connection failures) rose above `failureRatio`.
    FailureRatio,
    /// `wsPingTimeouts` WebSocket ping timeouts in a row.
    PingTimeouts,
    /// A half-open probe failed (5xx, 429, connection failure): re-opened.
    ProbeFailed,
    /// Another host of the fleet tripped it; this host adopted the shared state.
    Fleet,
}

impl TripReason {
    /// The snake_case name (as in `events.jsonl` and the report).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConsecutiveFailures => "consecutive_failures",
            Self::FailureRatio => "failure_ratio",
            Self::PingTimeouts => "ping_timeouts",
            Self::ProbeFailed => "probe_failed",
            Self::Fleet => "fleet",
        }
    }
}
/// Where an attempt's deadline came from (in the `timeouts_total` event and log line, and the
/// `timeout_deadline_seconds` gauge's story).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeadlineSource {
    /// The fixed value of `[engine.timeouts]` (adaptive off, or still warming up).
    Fixed,
    /// The dependency's observed p99 × `factor`, clamped to the class's `[floor, cap]`.
    Adaptive,
    /// A half-open probe's timeout (p99 × `probeTimeoutFactor`).
    Probe,
}

impl DeadlineSource {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Adaptive => "adaptive",
            Self::Probe => "probe",
        }
    }
}
