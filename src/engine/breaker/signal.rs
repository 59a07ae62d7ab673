//! What one attempt's result means to a breaker ([`Signal::of`]). Written once here so the trip rules
//! of the module doc are visible in a single `match`.

use std::time::{Duration, SystemTime};

use crate::engine::outcome::{AttemptResult, TimeoutPhase};

/// One attempt's result, as the breaker sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Signal {
    /// The upstream answered (2xx, or a 4xx that is the caller's problem): resets the streaks.
    Success {
        /// Latency of the attempt, for the probe-timeout estimate.
        latency: Duration,
    },
    /// HTTP 429: the upstream answered; never trips, but its Retry-After is remembered.
    RateLimited {
        /// The parsed Retry-After, if any.
        retry_after: Option<Duration>,
        /// Latency of the attempt.
        latency: Duration,
    },
    /// HTTP 5xx: counts towards the window's ratio (a 503's Retry-After is remembered).
    ServerError {
        /// The parsed Retry-After, if any.
        retry_after: Option<Duration>,
        /// Latency of the attempt.
        latency: Duration,
    },
    /// Reset, refused, closed early, or no response byte before the TTFB (or, for classes with
    /// no TTFB deadline, the total) deadline: counts towards the consecutive streak.
    ConnectFailure,
    /// A stream cut after tokens arrived, or a slow read on a progressing stream: counted in the
    /// metrics, never trips, leaves the streaks alone.
    Neutral,
    /// A WebSocket ping got no pong: counts towards the WebSocket streak only.
    PingTimeout,
}

impl Signal {
    /// True for signals that make a half-open probe fail.
    pub fn is_probe_failure(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. } | Self::ServerError { .. } | Self::ConnectFailure
        )
    }
}

impl Signal {
    /// What `result` means to a breaker. `wall_now` is only used for an HTTP-date Retry-After.
    #[inline]
    pub fn of(result: &AttemptResult, wall_now: SystemTime) -> Signal {
        match result {
            AttemptResult::Ok { latency, .. } => Signal::Success { latency: *latency },
            AttemptResult::Http {
                status, latency, ..
            } => {
                let ra = crate::engine::failover::throttle::of_result(result, wall_now);
                match status {
                    429 => Signal::RateLimited {
                        retry_after: ra,
                        latency: *latency,
                    },
                    500..=599 => Signal::ServerError {
                        retry_after: ra,
                        latency: *latency,
                    },
                    _ => Signal::Success { latency: *latency },
                }
            }
            AttemptResult::Timeout {
                phase: TimeoutPhase::Ttfb,
                ..
            } => Signal::ConnectFailure,
            // A total deadline with nothing received is "no headers in time" for classes whose only
            // deadline is the total one (tool calls).
            AttemptResult::Timeout {
                phase: TimeoutPhase::Total,
                tokens_received: 0,
            } => Signal::ConnectFailure,
            AttemptResult::Timeout { .. } => Signal::Neutral,
            AttemptResult::Transport { .. } => Signal::ConnectFailure,
            AttemptResult::StreamCut { .. } => Signal::Neutral,
            AttemptResult::WsPingTimeout => Signal::PingTimeout,
            // Nothing reached the upstream: no evidence about it either way.
            AttemptResult::Unsendable { .. } => Signal::Neutral,
            AttemptResult::WsClosed { .. } => Signal::ConnectFailure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcome::TransportFailure;

    fn http(status: u16, ra: Option<&str>) -> AttemptResult {
        AttemptResult::Http {
            status,
            retry_after: ra.map(str::to_string),
            throttle: Vec::new(),
            provider_code: None,
            latency: Duration::from_millis(5),
        }
    }

    #[test]
    fn classification_table() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ms5 = Duration::from_millis(5);
        let cases: Vec<(AttemptResult, Signal)> = vec![
            (
                AttemptResult::Ok {
                    tokens: 3,
                    latency: ms5,
                    ttfb: None,
                    longest_gap: None,
                },
                Signal::Success { latency: ms5 },
            ),
            (http(404, None), Signal::Success { latency: ms5 }),
            (
                http(429, Some("120")),
                Signal::RateLimited {
                    retry_after: Some(Duration::from_secs(120)),
                    latency: ms5,
                },
            ),
            (
                http(503, Some("7")),
                Signal::ServerError {
                    retry_after: Some(Duration::from_secs(7)),
                    latency: ms5,
                },
            ),
            (
                AttemptResult::Transport {
                    failure: TransportFailure::Reset,
                },
                Signal::ConnectFailure,
            ),
            (
                AttemptResult::Unsendable {
                    reason: "header `idempotency-key`".into(),
                },
                Signal::Neutral,
            ),
            (
                AttemptResult::Timeout {
                    phase: TimeoutPhase::Ttfb,
                    tokens_received: 0,
                },
                Signal::ConnectFailure,
            ),
            (
                AttemptResult::Timeout {
                    phase: TimeoutPhase::Total,
                    tokens_received: 0,
                },
                Signal::ConnectFailure,
            ),
            (
                AttemptResult::Timeout {
                    phase: TimeoutPhase::Total,
                    tokens_received: 4,
                },
                Signal::Neutral,
            ),
            (
                AttemptResult::Timeout {
                    phase: TimeoutPhase::InterToken,
                    tokens_received: 4,
                },
                Signal::Neutral,
            ),
            (
                AttemptResult::StreamCut { tokens_received: 9 },
                Signal::Neutral,
            ),
            (AttemptResult::WsPingTimeout, Signal::PingTimeout),
        ];
        for (result, want) in cases {
            assert_eq!(Signal::of(&result, now), want, "{result:?}");
        }
    }
}
