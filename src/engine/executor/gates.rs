//! The gates of the model-call loop (throttle and token budget): per-tenant throttle routing and pinned
//! plans before the first attempt, the token-budget gate before each further attempt, the content
//! self-correction retry, and the session ledger / tenant usage after the request.

use std::time::Duration;

use tokio::time::Instant;

use super::Engine;
use super::chain::ModelRun;
use crate::engine::budget::throttle::Route;
use crate::engine::budget::{
    ErrorClass, RetryDecision, RetryState, decide_retry, error_class, within_budget,
};
use crate::engine::events::{AttemptOutcome, EventKind, OpClass};
use crate::engine::outcome::Reason;
use crate::engine::request::{EngineRequest, EngineResponse};
use crate::engine::transport::Transport;
use crate::util::speed::Speed;
use crate::wire::dep::provider_of;

impl<T: Transport> Engine<T> {
    /// True when every endpoint of `model`'s provider has an open breaker.
    pub(super) fn model_open(&self, model: &str, now: Instant) -> bool {
        let entries = self.book.for_provider(provider_of(model));
        !entries.is_empty() && entries.iter().all(|e| self.admission.is_open(&e.dep, now))
    }

    /// The model this request goes to: the requested one, the cheaper one for a tenant over its
    /// tokens-per-minute budget (`Throttled` event), or — for a plan pinned to a model whose
    /// breaker is open — an immediate failure.
    pub(super) fn route_model(
        &self,
        req: &EngineRequest,
        requested: &str,
    ) -> Result<String, EngineResponse> {
        let now = Instant::now();
        let tenant = req.tenant.as_deref();
        match self
            .throttle
            .route(tenant, requested, now, |m| self.model_open(m, now))
        {
            Route::Model(m) => Ok(m),
            Route::Throttled { to } => {
                let kind = EventKind::Throttled {
                    tenant: tenant.unwrap_or_default().to_string(),
                    to_model: Some(to.clone()),
                };
                self.emit(now, kind, None);
                Ok(to)
            }
            Route::Unavailable { model } => {
                let resp = EngineResponse {
                    outcome: AttemptOutcome::Rejected,
                    attempts: 0,
                    model: Some(model.clone()),
                    fallback: false,
                    profile: None,
                    user_error: Some(format!("model {model} is unavailable (circuit open)")),
                    tokens: 0,
                    partial: false,
                };
                Err(self.finish(req, provider_of(&model), resp))
            }
        }
    }

    /// The budget gate before another attempt of a model request: a transient failure is not
    /// retried once the tokens spent (session + this request) reach `budget.transientRatio` of
    /// the request's budget (content: `contentRatio`); emits `RetryBudgetExhausted`.
    pub(super) fn budget_exhausted(
        &self,
        req: &EngineRequest,
        reason: Reason,
        spent: u64,
        class: OpClass,
        now: Instant,
    ) -> bool {
        let ratio = match error_class(reason) {
            ErrorClass::Transient => self.config.budget.transient_ratio,
            ErrorClass::Content => self.config.budget.content_ratio,
            ErrorClass::Context | ErrorClass::Permanent => return false,
        };
        let total = self.spent_total(req, spent);
        if within_budget(total, req.budget_tokens, ratio) {
            return false;
        }
        let kind = EventKind::RetryBudgetExhausted {
            class,
            spent: total,
            budget: req.budget_tokens.unwrap_or(0),
        };
        self.emit(now, kind, None);
        true
    }

    /// Tokens the request's session spent earlier plus `spent` (this request's attempts).
    pub(super) fn spent_total(&self, req: &EngineRequest, spent: u64) -> u64 {
        self.ledger
            .spent(req.session.as_deref())
            .saturating_add(spent)
    }

    /// The content self-correction retry of a model call (docs/engine.md "Error classes"): the same
    /// profile again after a full-jitter backoff (nominal; the caller scales it) while the tokens
    /// spent stay under `budget.contentRatio` (70 %) of the request's budget and the request has
    /// made fewer than `budget.maxAttempts` attempts (rotations included). A retry emits
    /// `SameProfileRetry` (reason `content`, counted in `profile_retries_total`); a refusal for
    /// budget emits `RetryBudgetExhausted`. Model calls are idempotent (no side effect), so the
    /// idempotency-key rule does not hold them back. `None`: no retry.
    pub(super) fn content_retry(
        &self,
        req: &EngineRequest,
        p: &mut ModelRun,
        reason: Reason,
        class: OpClass,
        now: Instant,
    ) -> Option<Duration> {
        let state = RetryState {
            reason,
            attempts: p.attempts,
            spent: self.spent_total(req, p.spent),
            budget: req.budget_tokens,
            idempotent: true,
            has_key: false,
        };
        let decision = {
            let mut core = self.core();
            decide_retry(&self.config.budget, &state, Speed::ONE, &mut core.rng)
        };
        match decision {
            RetryDecision::Retry { delay } => {
                p.content_retries += 1;
                let of = self.config.budget.max_attempts.saturating_sub(1);
                let (retry, delay_ms) = (p.content_retries, super::ms_of(delay));
                let profile = p.state.profile.clone();
                let log = format!(
                    "Profile {profile} returned a content error. Self-correction retry {retry}/{of} in {delay_ms}ms..."
                );
                let kind = EventKind::SameProfileRetry {
                    provider: p.state.provider.clone(),
                    profile,
                    reason,
                    retry,
                    of,
                    delay_ms,
                };
                self.emit(now, kind, Some(log));
                Some(delay)
            }
            RetryDecision::BudgetExhausted => {
                let kind = EventKind::RetryBudgetExhausted {
                    class,
                    spent: state.spent,
                    budget: state.budget.unwrap_or(0),
                };
                self.emit(now, kind, None);
                None
            }
            RetryDecision::NotIdempotent
            | RetryDecision::ContextFallback
            | RetryDecision::GiveUp => None,
        }
    }

    /// Books a finished request's tokens on its session and its tenant.
    pub(super) fn spend(&self, req: &EngineRequest, tokens: u64, now: Instant) {
        self.ledger.add(req.session.as_deref(), tokens);
        if let Some(t) = req.tenant.as_deref() {
            self.throttle.record(t, tokens, now);
        }
    }
}
