//! Budget-bounded retries (docs/engine.md, "Error classes" and "Idempotency"), as pure
//! functions of the request's state and a seeded RNG.
//!
//! - **transient** (429, 5xx, timeout, transport, stream cut) → exponential backoff with full
//!   jitter, `uniform(0, min(cap, base × 2ⁿ))`, while tokens spent < `transientRatio` (90 %) of
//!   the request's budget;
//! - **content** (schema violation, refusal, other 4xx) → a self-correction retry while spent <
//!   `contentRatio` (70 %);
//! - **context** (`context_length_exceeded`) → no retry: the context fallback;
//! - **permanent** (auth, billing, unknown) → no retry.
//!
//! After that the degradation ladder: a lighter model → a partial result → fail. A call marked
//! non-idempotent is never retried without an idempotency key; with one, every attempt carries it.
//! A request without a budget is bounded by `maxAttempts` alone.

//!
//! # Layout
//!
//! - [`retry`]: error classes, the budget share and the full-jitter backoff → [`RetryDecision`].
//! - [`ladder`]: the degradation ladder's rungs.
//! - [`ledger`]: tokens spent per session.
//! - [`throttle`]: the per-tenant tokens-per-minute throttle and pinned plans.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub mod ladder;
pub mod ledger;
pub mod retry;
pub mod throttle;

pub use ladder::{Rung, ladder};
pub use ledger::Ledger;
pub use retry::{
    ErrorClass, RetryDecision, RetryState, backoff, decide_retry, error_class, within_budget,
};

/// `[engine.budget]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct BudgetConfig {
    /// Transient retries stop once this share of the budget is spent.
    pub transient_ratio: f64,
    /// Self-correction retries stop once this share of the budget is spent.
    pub content_ratio: f64,
    /// Attempts per request at most (the first included); Google SRE's ≤ 3.
    pub max_attempts: u32,
    /// Backoff base (`base × 2ⁿ`, n = retries so far).
    #[serde(with = "humantime_serde")]
    pub backoff_base: Duration,
    /// Backoff cap.
    #[serde(with = "humantime_serde")]
    pub backoff_cap: Duration,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            transient_ratio: 0.9,
            content_ratio: 0.7,
            max_attempts: 3,
            backoff_base: Duration::from_millis(200),
            backoff_cap: Duration::from_secs(5),
        }
    }
}

/// A budget setting that cannot work, naming its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("engine.budget.{key}: {problem}")]
pub struct BudgetConfigError {
    /// The key (camelCase).
    pub key: &'static str,
    /// What is wrong.
    pub problem: &'static str,
}

impl BudgetConfig {
    /// Ratios in [0, 1], at least one attempt, base ≤ cap.
    pub fn validate(&self) -> Result<(), BudgetConfigError> {
        let ratio = |key, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(BudgetConfigError {
                    key,
                    problem: "must be in [0, 1]",
                })
            }
        };
        ratio("transientRatio", self.transient_ratio)?;
        ratio("contentRatio", self.content_ratio)?;
        if self.max_attempts == 0 {
            return Err(BudgetConfigError {
                key: "maxAttempts",
                problem: "must be at least 1",
            });
        }
        if self.backoff_base > self.backoff_cap {
            return Err(BudgetConfigError {
                key: "backoffBase",
                problem: "must not exceed backoffCap",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
