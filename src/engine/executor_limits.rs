//! The breaker helper's hooks into the model-call loop: per-tenant throttle routing and pinned
//! plans before the first attempt, the token-budget gate before each further attempt, and the
//! session ledger / tenant usage after the request.

use tokio::time::Instant;

use super::Engine;
use crate::engine::budget::{ErrorClass, error_class, within_budget};
use crate::engine::dep::provider_of;
use crate::engine::events::{AttemptOutcome, EventKind, OpClass};
use crate::engine::outcome::Reason;
use crate::engine::request::{EngineRequest, EngineResponse};
use crate::engine::throttle::Route;
use crate::engine::transport::Transport;

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
                    user_error: Some(format!("model {model} is unavailable (circuit open)")),
                    tokens: 0,
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
        let total = self
            .ledger
            .spent(req.session.as_deref())
            .saturating_add(spent);
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

    /// Books a finished request's tokens on its session and its tenant.
    pub(super) fn spend(&self, req: &EngineRequest, tokens: u64, now: Instant) {
        self.ledger.add(req.session.as_deref(), tokens);
        if let Some(t) = req.tenant.as_deref() {
            self.throttle.record(t, tokens, now);
        }
    }
}
