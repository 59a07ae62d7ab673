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

pub use crate::engine::disagreement::Disagreement;

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
