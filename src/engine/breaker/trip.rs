//! What trips a breaker, as one pure decision: [`should_trip`] reads a closed breaker's counters
//! and answers with the [`TripReason`] of the first rule that holds (the "Trip conditions" of
//! [`super`]). A half-open breaker re-opens for its own two reasons (a failed probe, or the
//! WebSocket ping-timeout streak), and a coordinated breaker can open because another host
//! tripped it. The reason travels with the transition: the `BreakerTransition` event in
//! `events.jsonl`, the log line and the report's transition rows.

use super::config::BreakerConfig;
use super::window::ratio_trips;
pub use crate::engine::vocab::TripReason;

/// A closed breaker's counters, as the trip rules read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// Consecutive connection failures.
    pub consecutive: u32,
    /// Consecutive WebSocket ping timeouts.
    pub ping_streak: u32,
    /// Calls in the sliding window.
    pub calls: u32,
    /// Failures among them.
    pub failures: u32,
}

/// Whether a closed breaker with these counters trips, and why. When several rules hold at once
/// the first in this order names it: consecutive failures, ping timeouts, failure ratio.
pub fn should_trip(c: Counters, cfg: &BreakerConfig) -> Option<TripReason> {
    if c.consecutive >= cfg.consecutive_failures {
        Some(TripReason::ConsecutiveFailures)
    } else if c.ping_streak >= cfg.ws_ping_timeouts {
        Some(TripReason::PingTimeouts)
    } else if ratio_trips(c.calls, c.failures, cfg.min_calls, cfg.failure_ratio) {
        Some(TripReason::FailureRatio)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(consecutive: u32, ping_streak: u32, calls: u32, failures: u32) -> Counters {
        Counters {
            consecutive,
            ping_streak,
            calls,
            failures,
        }
    }

    #[test]
    fn each_rule_names_its_reason() {
        let cfg = BreakerConfig::default(); // 5 in a row, 3 pings, 20 calls, 60 %
        let cases = [
            (counters(0, 0, 0, 0), None),
            (counters(4, 2, 19, 19), None),
            (counters(5, 0, 5, 5), Some(TripReason::ConsecutiveFailures)),
            (counters(0, 3, 0, 0), Some(TripReason::PingTimeouts)),
            (counters(0, 0, 20, 13), Some(TripReason::FailureRatio)),
            (counters(0, 0, 20, 12), None), // exactly 60 % is not above it
            // Several at once: the first rule names it.
            (
                counters(5, 3, 20, 20),
                Some(TripReason::ConsecutiveFailures),
            ),
            (counters(1, 3, 20, 20), Some(TripReason::PingTimeouts)),
        ];
        for (c, want) in cases {
            assert_eq!(should_trip(c, &cfg), want, "{c:?}");
        }
    }

    #[test]
    fn names_are_the_serialized_form() {
        for r in [
            TripReason::ConsecutiveFailures,
            TripReason::FailureRatio,
            TripReason::PingTimeouts,
            TripReason::ProbeFailed,
            TripReason::Fleet,
        ] {
            assert_eq!(
                serde_json::to_value(r).unwrap(),
                serde_json::Value::String(r.as_str().to_string())
            );
        }
    }
}
