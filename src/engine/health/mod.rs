//! Synthetic health checks: a canary call per dependency every `interval` (10 s, speed-scaled),
//! marked with `X-Breaker-Probe: DEP` so the upstream and SLO series can tell it from user
//! traffic, and the disagreement between what the canary sees and what the breaker believes.
//!
//! ## Disagreement and its alert
//! Canary and breaker *disagree* while the last canary succeeded but the breaker is open (it
//! rejects traffic a healthy upstream could serve), or the last canary failed but the breaker is
//! closed (it lets users hit a sick upstream). Half-open never disagrees: it is already
//! re-checking. `health_breaker_disagreement_seconds{dep}` is how long the current disagreement
//! has lasted (0 while they agree), updated on every canary and every transition, and refreshed
//! from [`Disagreement::seconds_at`] with the scrape's `now` just before each render (so a scrape
//! between two canaries sees the current length, not the one of the last event). Alert when it
//! reaches 3 minutes:
//!
//! ```text
//! - alert: BreakerDisagreesWithHealthCheck
//!   expr: health_breaker_disagreement_seconds >= 180
//! ```

use serde::{Deserialize, Serialize};
use std::time::Duration;

pub mod canary;

use crate::engine::events::BreakerState;

/// `[engine.health]`: canary settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct HealthConfig {
    /// Whether canaries run at all.
    pub enabled: bool,
    /// Spacing of one dependency's canaries.
    #[serde(with = "humantime_serde")]
    pub interval: Duration,
    /// Disagreement that should page someone (documentation for the alert; the gauge itself is
    /// not capped).
    #[serde(with = "humantime_serde")]
    pub alert_after: Duration,
}

impl Default for HealthConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            interval: Duration::from_secs(10),
            alert_after: Duration::from_secs(180),
        }
    }
}

/// Tracks one dependency's canary/breaker (dis)agreement from events, in engine ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disagreement {
    canary_ok: Option<bool>,
    state: BreakerState,
    since_ms: Option<u64>,
}

impl Default for Disagreement {
    fn default() -> Self {
        Self {
            canary_ok: None,
            state: BreakerState::Closed,
            since_ms: None,
        }
    }
}

impl Disagreement {
    /// A canary finished at `t_ms`; returns the gauge value (seconds).
    pub fn canary(&mut self, ok: bool, t_ms: u64) -> f64 {
        self.canary_ok = Some(ok);
        self.update(t_ms)
    }

    /// The breaker moved to `state` at `t_ms`; returns the gauge value (seconds).
    pub fn breaker(&mut self, state: BreakerState, t_ms: u64) -> f64 {
        self.state = state;
        self.update(t_ms)
    }

    /// True while canary and breaker disagree.
    pub fn disagrees(&self) -> bool {
        matches!(
            (self.canary_ok, self.state),
            (Some(true), BreakerState::Open) | (Some(false), BreakerState::Closed)
        )
    }

    /// How long the current disagreement has lasted at `now_ms` (engine ms), in seconds; 0 while
    /// canary and breaker agree. Pure: the state is not changed.
    pub fn seconds_at(&self, now_ms: u64) -> f64 {
        match self.since_ms {
            Some(since) if self.disagrees() => now_ms.saturating_sub(since) as f64 / 1000.0,
            _ => 0.0,
        }
    }

    fn update(&mut self, t_ms: u64) -> f64 {
        if !self.disagrees() {
            self.since_ms = None;
            return 0.0;
        }
        let since = *self.since_ms.get_or_insert(t_ms);
        t_ms.saturating_sub(since) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disagreement_grows_while_canary_is_ok_and_breaker_open_and_resets_on_agreement() {
        let mut d = Disagreement::default();
        assert_eq!(d.canary(true, 0), 0.0);
        assert_eq!(d.breaker(BreakerState::Open, 1_000), 0.0);
        assert_eq!(d.canary(true, 11_000), 10.0);
        assert_eq!(d.canary(true, 181_000), 180.0);
        assert_eq!(d.breaker(BreakerState::HalfOpen, 182_000), 0.0);
        assert_eq!(d.breaker(BreakerState::Closed, 183_000), 0.0);
        assert_eq!(d.canary(false, 190_000), 0.0);
        assert_eq!(d.canary(false, 200_000), 10.0);
    }

    #[test]
    fn seconds_at_reads_the_current_length_without_an_event() {
        let mut d = Disagreement::default();
        assert_eq!(d.seconds_at(5_000), 0.0, "no canary yet: agree");
        d.canary(false, 10_000);
        assert_eq!(d.seconds_at(10_000), 0.0);
        assert_eq!(d.seconds_at(105_000), 95.0);
        assert_eq!(
            d.seconds_at(105_000),
            95.0,
            "pure: reading twice changes nothing"
        );
        assert_eq!(
            d.seconds_at(9_000),
            0.0,
            "a `now` before the start saturates"
        );
        d.breaker(BreakerState::Open, 106_000);
        assert_eq!(
            d.seconds_at(200_000),
            0.0,
            "canary failing and breaker open agree"
        );
    }
}
