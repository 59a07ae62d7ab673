//! What the picture marks besides breaker states, from the engine's events (not the scrapes):
//! Retry-After deadlines per dep, and per profile the cooldowns, rotations and same-profile
//! retries, plus model fallbacks. All times are scenario time (ms since the run start, × speed),
//! like everything else in the report. The lists are capped ([`MAX_MARKS`] each); `dropped`
//! counts what the cap left out, so a report never claims a count it does not hold.

use serde::{Deserialize, Serialize};

/// The most marks of one kind a policy run keeps.
pub(crate) const MAX_MARKS: usize = 2_000;

/// A Retry-After deadline the breaker of `dep` held to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineMark {
    /// The dep.
    pub dep: String,
    /// When the deadline was first seen (the first deferred half-open), ms.
    pub t_ms: u64,
    /// The deadline, ms.
    pub until_ms: u64,
}

/// A cooldown written for a profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CooldownMark {
    /// The profile id.
    pub profile: String,
    /// When, ms.
    pub t_ms: u64,
    /// Cooling until, ms.
    pub until_ms: u64,
    /// Why (`timeout`, `rate_limit`, ...).
    pub reason: String,
}

/// Failover left a profile for the next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RotationMark {
    /// When, ms.
    pub t_ms: u64,
    /// The profile left.
    pub from: String,
    /// The profile chosen next, if any.
    #[serde(default)]
    pub to: Option<String>,
    /// Why.
    pub reason: String,
}

/// A same-profile retry (the retry gate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryMark {
    /// When it was decided, ms.
    pub t_ms: u64,
    /// The profile retried.
    pub profile: String,
    /// The delay before it, ms.
    pub delay_ms: u64,
}

/// A request moved to another model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FallbackMark {
    /// When, ms.
    pub t_ms: u64,
    /// The model left.
    pub from: String,
    /// The model used instead.
    pub to: String,
}

/// Everything marked for one policy run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marks {
    /// Retry-After deadlines (one per dep and deadline).
    #[serde(default)]
    pub retry_after: Vec<DeadlineMark>,
    /// Cooldowns written.
    #[serde(default)]
    pub cooldowns: Vec<CooldownMark>,
    /// Profile rotations.
    #[serde(default)]
    pub rotations: Vec<RotationMark>,
    /// Same-profile retries.
    #[serde(default)]
    pub retries: Vec<RetryMark>,
    /// Model fallbacks.
    #[serde(default)]
    pub fallbacks: Vec<FallbackMark>,
    /// Marks left out by the cap.
    #[serde(default)]
    pub dropped: u64,
}

impl Marks {
    /// Pushes `m` onto `list` unless the cap is reached (then counts it as dropped).
    pub(crate) fn keep<T>(list: &mut Vec<T>, dropped: &mut u64, m: T) {
        if list.len() < MAX_MARKS {
            list.push(m);
        } else {
            *dropped += 1;
        }
    }
}
