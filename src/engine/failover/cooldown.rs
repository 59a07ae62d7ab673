//! Cooldown schedules per failure reason, and the three presets.
//!
//! A schedule maps the failure number `n` (1 = first failure) to a cooldown length. Under the
//! `retry-gate` policy `n` is the profile's per-reason count (`failureCounts[reason]`), so a burst
//! of timeouts does not escalate a later rate-limit cooldown and vice versa; under `legacy` it is
//! the profile's shared `errorCount`, which is exactly how the old code escalated a timeout
//! cascade to 5 and 25 minutes. Durations here are nominal (speed 1).
//!
//! | reason | `default` | `openclaw-2026.9` | `legacy` |
//! |---|---|---|---|
//! | timeout | 10 s × 2ⁿ⁻¹, cap 5 min | 30 s, 60 s, then 300 s | 60 s × 5ⁿ⁻¹, cap 1 h |
//! | rate_limit | 60 s × 5ⁿ⁻¹, cap 1 h | 30 s × 2ⁿ⁻¹, cap 24 h | same |
//! | server_error | none (breaker's job) | none | same |
//! | transport | none (breaker's job) | 30 s, 60 s, then 300 s | same |
//! | stream_cut | none (breaker's job) | 30 s, 60 s, then 300 s | same |
//! | content | none | none | same |
//! | context_overflow | none | none | same |
//! | auth | 10 min × 2ⁿ⁻¹, cap 1 h | 10 min × 2ⁿ⁻¹, cap 1 h | same |
//! | billing | 10 min × 2ⁿ⁻¹, cap 24 h | 10 min × 2ⁿ⁻¹, cap 24 h | same |
//! | unknown | 10 s × 2ⁿ⁻¹, cap 5 min | 30 s, 60 s, then 300 s | same |
//!
//! "none" means the reason never cools a profile: 5xx, resets and stream cuts say something about
//! an endpoint, which its breaker tracks, not about the credential; content and context failures
//! say something about the request. `openclaw-2026.9` follows openclaw@2026.9.6 (its per-reason
//! schedules): the generic transient steps for timeouts and the network errors it files under timeout,
//! no cooldown for server errors, content or context overflow, and the `auth_permanent` lane for
//! auth.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::outcome::Reason;

/// Every reason, in table order.
pub const REASONS: [Reason; 10] = [
    Reason::Timeout,
    Reason::RateLimit,
    Reason::ServerError,
    Reason::Transport,
    Reason::StreamCut,
    Reason::Content,
    Reason::ContextOverflow,
    Reason::Auth,
    Reason::Billing,
    Reason::Unknown,
];

const SEC: u64 = 1_000;
const MIN: u64 = 60 * SEC;
const HOUR: u64 = 60 * MIN;

/// A cooldown schedule: failure number → cooldown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// `base × factorⁿ⁻¹`, capped.
    Exponential {
        /// The first cooldown, in ms.
        base_ms: u64,
        /// The growth factor per failure.
        factor: u64,
        /// The cap, in ms.
        cap_ms: u64,
    },
    /// Fixed steps; failures past the last step use the last step.
    Steps(Vec<u64>),
}

impl Schedule {
    /// The cooldown after failure number `n` (values below 1 count as 1).
    pub fn cooldown(&self, n: u32) -> Duration {
        let k = n.max(1) - 1;
        let ms = match self {
            Self::Exponential {
                base_ms,
                factor,
                cap_ms,
            } => {
                let mut ms = *base_ms;
                for _ in 0..k {
                    if ms >= *cap_ms {
                        break;
                    }
                    ms = ms.saturating_mul(*factor);
                }
                ms.min(*cap_ms)
            }
            Self::Steps(steps) => {
                let i = (k as usize).min(steps.len().saturating_sub(1));
                steps.get(i).copied().unwrap_or(0)
            }
        };
        Duration::from_millis(ms)
    }
}

/// A named set of schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Preset {
    /// The rehearsal's defaults.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// What openclaw@2026.9.6 ships.
    #[serde(rename = "openclaw-2026.9")]
    OpenClaw2026_9,
    /// The old formula for every reason.
    #[serde(rename = "legacy")]
    Legacy,
}

impl Preset {
    /// The preset's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::OpenClaw2026_9 => "openclaw-2026.9",
            Self::Legacy => "legacy",
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Preset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(Self::Default),
            "openclaw-2026.9" => Ok(Self::OpenClaw2026_9),
            "legacy" => Ok(Self::Legacy),
            other => Err(format!(
                "unknown cooldown preset `{other}` (expected default, openclaw-2026.9 or legacy)"
            )),
        }
    }
}

fn exp(base_ms: u64, factor: u64, cap_ms: u64) -> Option<Schedule> {
    Some(Schedule::Exponential {
        base_ms,
        factor,
        cap_ms,
    })
}

/// The schedule of every reason (`None` = that reason never cools a profile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedules {
    by_reason: Vec<(Reason, Option<Schedule>)>,
}

impl Schedules {
    /// The schedules of a preset.
    pub fn preset(preset: Preset) -> Self {
        let generic = || Some(Schedule::Steps(vec![30 * SEC, 60 * SEC, 300 * SEC]));
        let by_reason = REASONS
            .iter()
            .map(|&r| {
                let s = match (preset, r) {
                    (Preset::Legacy, _) => exp(MIN, 5, HOUR),
                    (_, Reason::Auth) => exp(10 * MIN, 2, HOUR),
                    (_, Reason::Billing) => exp(10 * MIN, 2, 24 * HOUR),
                    (_, Reason::Content | Reason::ContextOverflow | Reason::ServerError) => None,
                    (Preset::Default, Reason::Timeout | Reason::Unknown) => {
                        exp(10 * SEC, 2, 5 * MIN)
                    }
                    (Preset::Default, Reason::RateLimit) => exp(MIN, 5, HOUR),
                    (Preset::Default, _) => None,
                    (Preset::OpenClaw2026_9, Reason::RateLimit) => exp(30 * SEC, 2, 24 * HOUR),
                    (Preset::OpenClaw2026_9, _) => generic(),
                };
                (r, s)
            })
            .collect();
        Self { by_reason }
    }

    /// The schedule of `reason`, if it cools at all.
    pub fn get(&self, reason: Reason) -> Option<&Schedule> {
        self.by_reason
            .iter()
            .find(|(r, _)| *r == reason)
            .and_then(|(_, s)| s.as_ref())
    }

    /// Replaces the schedule of `reason` (`None`: never cools).
    pub fn set(&mut self, reason: Reason, schedule: Option<Schedule>) {
        match self.by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some(slot) => slot.1 = schedule,
            None => self.by_reason.push((reason, schedule)),
        }
    }

    /// The cooldown for failure number `n` of `reason`, if that reason cools.
    pub fn cooldown(&self, reason: Reason, n: u32) -> Option<Duration> {
        self.get(reason).map(|s| s.cooldown(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(p: Preset, r: Reason) -> Vec<u64> {
        let s = Schedules::preset(p);
        (1..=6)
            .map(|n| s.cooldown(r, n).map_or(0, |d| d.as_millis() as u64))
            .collect()
    }

    #[test]
    fn exponential_caps_and_never_overflows() {
        let s = Schedule::Exponential {
            base_ms: u64::MAX / 2,
            factor: 1000,
            cap_ms: u64::MAX,
        };
        assert_eq!(s.cooldown(40), Duration::from_millis(u64::MAX));
        assert_eq!(s.cooldown(0), s.cooldown(1));
    }

    #[test]
    fn steps_repeat_the_last_step() {
        let s = Schedule::Steps(vec![1, 2]);
        assert_eq!(s.cooldown(5), Duration::from_millis(2));
        assert_eq!(Schedule::Steps(vec![]).cooldown(1), Duration::ZERO);
    }

    #[test]
    fn preset_names_round_trip() {
        for p in [Preset::Default, Preset::OpenClaw2026_9, Preset::Legacy] {
            assert_eq!(p.as_str().parse::<Preset>().unwrap(), p);
        }
        assert!("openclaw".parse::<Preset>().is_err());
        assert_eq!(table(Preset::Default, Reason::Content), vec![0; 6]);
    }
}
