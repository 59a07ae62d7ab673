//! Tool and WebSocket requests: admit → send → record, and for tool calls budget-bounded retries
//! (docs/engine.md "Error classes", "Idempotency"): a transient failure is retried after a full-jitter
//! backoff while the tokens spent stay under 90 % of the budget (content: 70 %), up to
//! `budget.maxAttempts`; a non-idempotent call without an idempotency key is attempted exactly
//! once, and with one every attempt carries the same key. A breaker rejection is never retried
//! (the dependency is known to be down). WebSocket sessions are not retried.

use std::time::Duration;

use tokio::time::Instant;

use super::{Engine, user_error};
use crate::engine::admission::Admit;
use crate::engine::budget::{RetryDecision, RetryState, decide};
use crate::engine::classify::{classify, tokens_of};
use crate::engine::events::{AttemptOutcome, EventKind};
use crate::engine::request::{EngineRequest, EngineResponse, RequestKind};
use crate::engine::transport::{Call, Origin, Transport};

impl<T: Transport> Engine<T> {
    pub(super) async fn handle_simple(&self, req: &EngineRequest, worker: usize) -> EngineResponse {
        let class = req.op_class();
        let (dep, target, key, idempotent, retryable) = match &req.kind {
            RequestKind::Tool {
                name,
                idempotency_key,
                idempotent,
                ..
            } => (
                name.clone(),
                req.kind.target(),
                idempotency_key.clone(),
                *idempotent,
                true,
            ),
            RequestKind::Ws { channel, .. } => {
                (channel.clone(), req.kind.target(), None, true, false)
            }
            RequestKind::Llm { model, .. } => (
                model.clone(),
                crate::engine::transport::CallTarget::Llm {
                    model: model.clone(),
                    stream: false,
                    max_tokens: None,
                },
                None,
                true,
                false,
            ),
        };
        let session = req.session.as_deref();
        let mut attempts = 0u32;
        let mut spent = 0u64;
        let failure = loop {
            attempts += 1;
            let now = Instant::now();
            let (probe, timeout) = match self.admission.admit_async(&dep, worker, now).await {
                Admit::Allow { probe, timeout } => (probe, timeout),
                Admit::Reject { .. } => {
                    let c = Self::rejected();
                    self.attempt_event(now, &dep, worker, class, &c, Duration::ZERO, false, None);
                    break (AttemptOutcome::Rejected, format!("circuit open for {dep}"));
                }
            };
            let call = Call {
                dep: dep.clone(),
                class,
                target: target.clone(),
                bearer: None,
                idempotency_key: key.clone(),
                probe: probe.then(|| dep.clone()),
                origin: Origin::Worker(worker),
                attempt: attempts,
                deadlines: self.deadlines(class, timeout),
            };
            let result = self.transport.send(call).await;
            let end = Instant::now();
            self.admission
                .record_async(&dep, worker, probe, &result, end)
                .await;
            let c = classify(&result, self.wall(end));
            self.attempt_event(end, &dep, worker, class, &c, end - now, probe, None);
            spent = spent.saturating_add(tokens_of(&result));
            let Some(reason) = c.reason else {
                self.spend(req, spent, end);
                let resp = EngineResponse {
                    outcome: c.outcome,
                    attempts,
                    model: None,
                    fallback: false,
                    user_error: None,
                    tokens: tokens_of(&result),
                    partial: false,
                };
                return self.finish(req, &dep, resp);
            };
            let failed = (c.outcome, user_error(reason));
            if !retryable {
                break failed;
            }
            let state = RetryState {
                reason,
                attempts,
                spent: self.ledger.spent(session).saturating_add(spent),
                budget: req.budget_tokens,
                idempotent,
                has_key: key.is_some(),
            };
            let decision = {
                let mut core = self.core();
                decide(&self.config.budget, &state, self.opts.speed, &mut core.rng)
            };
            match decision {
                RetryDecision::Retry { delay } => tokio::time::sleep(delay).await,
                RetryDecision::BudgetExhausted => {
                    let kind = EventKind::RetryBudgetExhausted {
                        class,
                        spent: state.spent,
                        budget: state.budget.unwrap_or(0),
                    };
                    self.emit(end, kind, None);
                    break failed;
                }
                RetryDecision::NotIdempotent
                | RetryDecision::ContextFallback
                | RetryDecision::GiveUp => break failed,
            }
        };
        self.spend(req, spent, Instant::now());
        let resp = EngineResponse {
            outcome: failure.0,
            attempts,
            model: None,
            fallback: false,
            user_error: Some(failure.1),
            tokens: 0,
            partial: false,
        };
        self.finish(req, &dep, resp)
    }
}
