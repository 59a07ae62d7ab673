//! The retry decision of a failed call, by error class and token budget share (pure; the
//! backoff draws from the caller's seeded RNG).

use std::time::Duration;

use rand::Rng;

use super::BudgetConfig;
use crate::engine::outcome::Reason;
use crate::util::speed::Speed;

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
pub fn backoff(cfg: &BudgetConfig, retry: u32, speed: Speed, rng: &mut impl Rng) -> Duration {
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
    speed.scale(d)
}

/// Decides whether a failed call is retried.
pub fn decide_retry(
    cfg: &BudgetConfig,
    s: &RetryState,
    speed: Speed,
    rng: &mut impl Rng,
) -> RetryDecision {
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
