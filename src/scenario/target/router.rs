//! `[target.router]`: what a generated gateway config's router does on failures (LiteLLM's
//! retries, allowed fails and cooldown; Portkey's retries), and which of them a kind takes.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::TargetKind;
use crate::scenario::field::FieldError;

/// `[target.router]`: what a generated gateway config's router does on failures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSpec {
    /// Retries after a first try (LiteLLM `num_retries` of a model group; Portkey each
    /// generated target's `retry.attempts` on 429 and 5xx, at most 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// Failures of a deployment in a minute before it cools (LiteLLM `allowed_fails`: it cools
    /// on one more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_fails: Option<u32>,
    /// How long a deployment cools (LiteLLM `cooldown_time`; a `Retry-After` wins).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub cooldown: Option<Duration>,
}

impl RouterSpec {
    /// Its values in range, and for a `portkey` target (no breaker, no cooldown) `retries` only,
    /// and only for the generated config (`has_config`: the user's says its own).
    pub(super) fn check(&self, kind: TargetKind, has_config: bool) -> Result<(), FieldError> {
        self.validate()?;
        if kind != TargetKind::Portkey {
            return Ok(());
        }
        if self.allowed_fails.is_some() || self.cooldown.is_some() {
            return Err(FieldError::new(
                "router",
                "a `portkey` target takes `retries` only: Portkey's open-source gateway has no \
                 breaker or cooldown"
                    .into(),
            ));
        }
        if has_config {
            return Err(FieldError::new(
                "router.retries",
                "is for the generated config: with `config`, each of its targets says its own \
                 `retry`"
                    .into(),
            ));
        }
        if let Some(n) = self.retries
            && n > MAX_RETRIES
        {
            return Err(FieldError::new(
                "router.retries",
                format!("must be 0..={MAX_RETRIES} for a `portkey` target"),
            ));
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), FieldError> {
        if let Some(n) = self.retries
            && n > 20
        {
            return Err(FieldError::new("router.retries", "must be 0..=20".into()));
        }
        if let Some(n) = self.allowed_fails
            && n > 1000
        {
            return Err(FieldError::new("router.allowed_fails", "must be 0..=1000".into()));
        }
        if let Some(d) = self.cooldown
            && (d < Duration::from_millis(100) || d > Duration::from_secs(24 * 3600))
        {
            return Err(FieldError::new("router.cooldown", "must be 100ms..=24h".into()));
        }
        Ok(())
    }
}

/// Most `retries` of a `portkey` target (Portkey's own limit is 5).
const MAX_RETRIES: u32 = 5;
