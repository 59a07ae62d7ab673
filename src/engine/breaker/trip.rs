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

/// When recording a success cannot trip a closed breaker, whatever else its window holds: a
/// success zeroes both streaks (so the streak rules cannot hold unless their threshold is 0),
/// and the ratio rule needs at least `m = max(minCalls, 1)` calls with a failure share above
/// `failureRatio`. A window holding `F` failures, with `F ≤ failureRatio × m`, never gets there
/// through successes: they add calls and evict old ones, never add failures, and
/// `f ≤ F ≤ ratio × m ≤ ratio × calls` for every `calls ≥ m` (a product of floats with a
/// non-negative factor is monotone). So any number of successes in a row leave it closed; the
/// registry records them without the breaker's lock while this holds
/// (`registry/successes.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuietSuccess {
    /// `failureRatio × max(minCalls, 1)`, or -1 when a streak rule trips on any record.
    max_failures: f64,
}

impl QuietSuccess {
    /// The bound for `cfg`.
    pub fn new(cfg: &BreakerConfig) -> Self {
        let streaks_hold = cfg.consecutive_failures > 0 && cfg.ws_ping_timeouts > 0;
        let max_failures = cfg.failure_ratio * f64::from(cfg.min_calls.max(1));
        Self {
            max_failures: if streaks_hold { max_failures } else { -1.0 },
        }
    }

    /// True when a closed breaker whose window holds `failures` cannot be tripped by successes.
    #[inline]
    pub fn holds(self, failures: u32) -> bool {
        f64::from(failures) <= self.max_failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound against the rules themselves: for configurations around the edges, whenever
    /// it holds for `F` failures, no counters a run of successes can reach from there (streaks
    /// zeroed, `f ≤ F` failures among any number of calls) trip; and it is tight — one failure
    /// more and some number of calls trips.
    #[test]
    fn a_quiet_success_never_trips_and_the_bound_is_tight() {
        for min_calls in [0, 1, 2, 5, 20] {
            for ratio in [0.0, 0.1, 0.5, 0.6, 0.75, 0.99] {
                for (consecutive_failures, ws_ping_timeouts) in [(5, 3), (1, 1), (0, 3), (5, 0)] {
                    let cfg = BreakerConfig {
                        min_calls,
                        failure_ratio: ratio,
                        consecutive_failures,
                        ws_ping_timeouts,
                        ..BreakerConfig::default()
                    };
                    let q = QuietSuccess::new(&cfg);
                    let streaks = consecutive_failures > 0 && ws_ping_timeouts > 0;
                    let case =
                        format!("{min_calls} {ratio} {consecutive_failures} {ws_ping_timeouts}");
                    for big_f in 0..=40u32 {
                        let trips_somewhere = (0..=big_f).any(|f| {
                            (f.max(1)..=120)
                                .any(|calls| should_trip(counters(0, 0, calls, f), &cfg).is_some())
                        });
                        assert_eq!(q.holds(big_f), !trips_somewhere, "{case}, F {big_f}");
                    }
                    assert_eq!(q.holds(0), streaks, "{case}");
                }
            }
        }
    }

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
