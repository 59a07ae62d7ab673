//! Breaker thresholds (`[engine.breaker]` in a scenario). Every field has the docs/engine.md
//! default; durations are humantime strings (`"30s"`, `"250ms"`). [`BreakerConfig::scaled`]
//! divides every duration by the run's `--speed`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::util::speed::Speed;

/// Thresholds and timings of every dependency's breaker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct BreakerConfig {
    /// Consecutive connection failures (reset, refused, no headers before TTFB) that trip it.
    pub consecutive_failures: u32,
    /// Consecutive WebSocket ping timeouts that trip a WebSocket dependency.
    pub ws_ping_timeouts: u32,
    /// Length of the sliding time window of the 5xx ratio.
    #[serde(with = "humantime_serde")]
    pub window: Duration,
    /// Calls the window must hold before the ratio can trip.
    pub min_calls: u32,
    /// The ratio of 5xx in the window that trips, strictly exceeded (0.6 = "more than 60 %").
    pub failure_ratio: f64,
    /// How long a freshly tripped breaker stays open.
    #[serde(with = "humantime_serde")]
    pub open_for: Duration,
    /// Cap of `open_for` after doubling on each re-open from half-open.
    #[serde(with = "humantime_serde")]
    pub open_for_cap: Duration,
    /// Minimum spacing between the starts of two half-open probes.
    #[serde(with = "humantime_serde")]
    pub probe_interval: Duration,
    /// Upper bound of the uniform jitter added to `probe_interval`.
    #[serde(with = "humantime_serde")]
    pub probe_jitter: Duration,
    /// Consecutive probe successes that close a half-open breaker.
    pub probe_successes: u32,
    /// Distinct workers those successes must come from.
    pub probe_distinct_workers: u32,
    /// Probe timeout = observed p99 latency × this factor.
    pub probe_timeout_factor: f64,
    /// Lower bound of the probe timeout.
    #[serde(with = "humantime_serde")]
    pub probe_timeout_floor: Duration,
    /// Upper bound of the probe timeout (also used before any latency was observed).
    #[serde(with = "humantime_serde")]
    pub probe_timeout_cap: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self {
            consecutive_failures: 5,
            ws_ping_timeouts: 3,
            window: Duration::from_secs(30),
            min_calls: 20,
            failure_ratio: 0.6,
            open_for: Duration::from_secs(30),
            open_for_cap: Duration::from_secs(300),
            probe_interval: Duration::from_millis(250),
            probe_jitter: Duration::from_millis(50),
            probe_successes: 2,
            probe_distinct_workers: 2,
            probe_timeout_factor: 1.4,
            probe_timeout_floor: Duration::from_millis(100),
            probe_timeout_cap: Duration::from_secs(10),
        }
    }
}

/// A breaker setting that cannot work, naming its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("engine.breaker.{key}: {problem}")]
pub struct BreakerConfigError {
    /// The offending key (camelCase, as written in the scenario).
    pub key: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl BreakerConfig {
    /// Checks the values a breaker cannot work with (zero thresholds, ratios outside 0..1,
    /// a floor above its cap).
    pub fn validate(&self) -> Result<(), BreakerConfigError> {
        let err = |key, problem: &str| {
            Err(BreakerConfigError {
                key,
                problem: problem.to_string(),
            })
        };
        if self.consecutive_failures == 0 {
            return err("consecutiveFailures", "must be at least 1");
        }
        if self.ws_ping_timeouts == 0 {
            return err("wsPingTimeouts", "must be at least 1");
        }
        if self.window.is_zero() {
            return err("window", "must be longer than 0s");
        }
        if !(0.0..1.0).contains(&self.failure_ratio) {
            return err("failureRatio", "must be in [0, 1)");
        }
        if self.open_for.is_zero() {
            return err("openFor", "must be longer than 0s");
        }
        if self.open_for_cap < self.open_for {
            return err("openForCap", "must not be shorter than openFor");
        }
        if self.probe_successes == 0 {
            return err("probeSuccesses", "must be at least 1");
        }
        if self.probe_distinct_workers > self.probe_successes {
            return err("probeDistinctWorkers", "must not exceed probeSuccesses");
        }
        if !(self.probe_timeout_factor.is_finite() && self.probe_timeout_factor > 0.0) {
            return err("probeTimeoutFactor", "must be a positive number");
        }
        if self.probe_timeout_floor > self.probe_timeout_cap {
            return err("probeTimeoutFloor", "must not exceed probeTimeoutCap");
        }
        Ok(())
    }

    /// The same configuration with every duration divided by `speed` (≤ 0 or NaN counts as 1).
    pub fn scaled(&self, speed: Speed) -> Self {
        let s = |d: Duration| speed.scale(d);
        Self {
            window: s(self.window),
            open_for: s(self.open_for),
            open_for_cap: s(self.open_for_cap),
            probe_interval: s(self.probe_interval),
            probe_jitter: s(self.probe_jitter),
            probe_timeout_floor: s(self.probe_timeout_floor),
            probe_timeout_cap: s(self.probe_timeout_cap),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_design_section_7() {
        let c = BreakerConfig::default();
        assert_eq!(c.consecutive_failures, 5);
        assert_eq!(c.min_calls, 20);
        assert_eq!(c.window, Duration::from_secs(30));
        assert_eq!(c.open_for, Duration::from_secs(30));
        assert_eq!(c.open_for_cap, Duration::from_secs(300));
        assert_eq!(c.probe_interval, Duration::from_millis(250));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn toml_keys_are_camel_case_and_unknown_keys_are_rejected() {
        let c: BreakerConfig = toml::from_str("openFor = \"10s\"\nminCalls = 5").unwrap();
        assert_eq!(c.open_for, Duration::from_secs(10));
        assert_eq!(c.min_calls, 5);
        let e = toml::from_str::<BreakerConfig>("open_for = \"10s\"").unwrap_err();
        assert!(e.to_string().contains("open_for"), "{e}");
    }

    #[test]
    fn validation_names_the_key() {
        let c = BreakerConfig {
            probe_timeout_floor: Duration::from_secs(20),
            ..BreakerConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().key, "probeTimeoutFloor");
    }

    #[test]
    fn speed_divides_every_duration() {
        let c = BreakerConfig::default().scaled(crate::util::speed::sp(10.0));
        assert_eq!(c.open_for, Duration::from_secs(3));
        assert_eq!(c.probe_interval, Duration::from_millis(25));
        assert_eq!(c.consecutive_failures, 5);
        assert_eq!(
            BreakerConfig::default().scaled(Speed::ONE),
            BreakerConfig::default()
        );
    }
}
