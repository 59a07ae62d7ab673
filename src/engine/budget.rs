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

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::breaker::scale;
use super::outcome::Reason;

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

/// How a failure may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// 429, 5xx, timeout, transport, stream cut.
    Transient,
    /// Schema violation, refusal, other 4xx.
    Content,
    /// The prompt does not fit.
    Context,
    /// Auth, billing, unknown: retrying cannot help.
    Permanent,
}

/// The error class of a failure reason.
pub fn error_class(reason: Reason) -> ErrorClass {
    match reason {
        Reason::Timeout
        | Reason::RateLimit
        | Reason::ServerError
        | Reason::Transport
        | Reason::StreamCut => ErrorClass::Transient,
        Reason::Content => ErrorClass::Content,
        Reason::ContextOverflow => ErrorClass::Context,
        Reason::Auth | Reason::Billing | Reason::Unknown => ErrorClass::Permanent,
    }
}

/// What a request has done so far, for the retry decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryState {
    /// The last failure's reason.
    pub reason: Reason,
    /// Attempts made so far (≥ 1).
    pub attempts: u32,
    /// Tokens spent so far (all attempts).
    pub spent: u64,
    /// The request's token budget, if any.
    pub budget: Option<u64>,
    /// False for a call that must not run twice (a side effect).
    pub idempotent: bool,
    /// True when the call carries an idempotency key.
    pub has_key: bool,
}

/// The retry decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    /// Retry after `delay` (already speed-scaled).
    Retry {
        /// The full-jitter backoff.
        delay: Duration,
    },
    /// The budget share of this class is spent: stop (emit `RetryBudgetExhausted`).
    BudgetExhausted,
    /// A non-idempotent call without an idempotency key: never retried.
    NotIdempotent,
    /// Context overflow: no retry, go to the context fallback.
    ContextFallback,
    /// No retry: permanent failure or `maxAttempts` reached.
    GiveUp,
}

/// True while `spent` is strictly below `ratio` of `budget` (always true without a budget).
pub fn within_budget(spent: u64, budget: Option<u64>, ratio: f64) -> bool {
    budget.is_none_or(|b| (spent as f64) < ratio * b as f64)
}

/// Full-jitter exponential backoff before retry number `retry` (1-based), divided by `speed`.
pub fn backoff(cfg: &BudgetConfig, retry: u32, speed: f64, rng: &mut impl Rng) -> Duration {
    let exp = 2u32.saturating_pow(retry.saturating_sub(1).min(31));
    let ceiling = cfg
        .backoff_base
        .checked_mul(exp)
        .unwrap_or(cfg.backoff_cap)
        .min(cfg.backoff_cap);
    let nanos = ceiling.as_nanos() as u64;
    let d = if nanos == 0 {
        Duration::ZERO
    } else {
        Duration::from_nanos(rng.gen_range(0..=nanos))
    };
    scale(d, speed)
}

/// Decides whether a failed call is retried.
pub fn decide(cfg: &BudgetConfig, s: &RetryState, speed: f64, rng: &mut impl Rng) -> RetryDecision {
    let class = error_class(s.reason);
    if class == ErrorClass::Context {
        return RetryDecision::ContextFallback;
    }
    if class == ErrorClass::Permanent {
        return RetryDecision::GiveUp;
    }
    if !s.idempotent && !s.has_key {
        return RetryDecision::NotIdempotent;
    }
    let ratio = match class {
        ErrorClass::Content => cfg.content_ratio,
        _ => cfg.transient_ratio,
    };
    if !within_budget(s.spent, s.budget, ratio) {
        return RetryDecision::BudgetExhausted;
    }
    if s.attempts >= cfg.max_attempts {
        return RetryDecision::GiveUp;
    }
    RetryDecision::Retry {
        delay: backoff(cfg, s.attempts, speed, rng),
    }
}

/// A rung of the degradation ladder, tried in order once retries are over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rung {
    /// Answer with a lighter (cheaper, smaller) model.
    LighterModel(String),
    /// Return what arrived before the failure (tokens of a cut stream).
    PartialResult {
        /// Tokens received.
        tokens: u64,
    },
    /// Fail with the user-visible error.
    Fail,
}

/// The ladder for a request: a lighter model if one is configured and not the one that failed,
/// a partial result if tokens arrived, then fail.
pub fn ladder(lighter: Option<&str>, failed_model: Option<&str>, partial_tokens: u64) -> Vec<Rung> {
    let mut rungs = Vec::new();
    if let Some(m) = lighter.filter(|m| Some(*m) != failed_model) {
        rungs.push(Rung::LighterModel(m.to_string()));
    }
    if partial_tokens > 0 {
        rungs.push(Rung::PartialResult {
            tokens: partial_tokens,
        });
    }
    rungs.push(Rung::Fail);
    rungs
}

/// Tokens spent per session (an agent session's budget spans its requests). Requests without a
/// session only count their own attempts.
#[derive(Debug, Default)]
pub struct Ledger(Mutex<HashMap<String, u64>>);

impl Ledger {
    /// Tokens the session spent in earlier requests (0 without a session).
    pub fn spent(&self, session: Option<&str>) -> u64 {
        let Some(s) = session else { return 0 };
        match self.0.lock() {
            Ok(m) => m.get(s).copied().unwrap_or(0),
            Err(p) => p.into_inner().get(s).copied().unwrap_or(0),
        }
    }

    /// Adds a finished request's tokens to its session.
    pub fn add(&self, session: Option<&str>, tokens: u64) {
        let Some(s) = session else { return };
        if tokens == 0 {
            return;
        }
        let mut m = match self.0.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let v = m.entry(s.to_string()).or_insert(0);
        *v = v.saturating_add(tokens);
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
