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
use crate::engine::budget::{RetryDecision, RetryState, decide_retry};
use crate::engine::events::{AttemptOutcome, EventKind, OpClass};
use crate::engine::failover::classify::{classify, tokens_of};
use crate::engine::request::{EngineRequest, EngineResponse};
use crate::engine::transport::{Call, Endpoint, Origin, Transport};

/// What a tool or WebSocket request calls and whether it may be retried.
#[derive(Debug)]
pub(super) struct SimpleCall {
    /// The dependency (the tool's name or the channel).
    pub dep: String,
    /// The endpoint every attempt calls.
    pub endpoint: Endpoint,
    /// The idempotency key every attempt carries, if any.
    pub key: Option<String>,
    /// False for a call that must not run twice without a key.
    pub idempotent: bool,
    /// False for WebSocket sessions (never retried).
    pub retryable: bool,
}

impl SimpleCall {
    /// A tool call to `endpoint` (the request's [`RequestKind::endpoint`]).
    ///
    /// [`RequestKind::endpoint`]: crate::engine::request::RequestKind::endpoint
    pub fn tool(name: &str, endpoint: Endpoint, key: Option<&String>, idempotent: bool) -> Self {
        Self {
            dep: name.to_string(),
            endpoint,
            key: key.cloned(),
            idempotent,
            retryable: true,
        }
    }

    /// A WebSocket session to `endpoint` (the request's [`RequestKind::endpoint`]).
    ///
    /// [`RequestKind::endpoint`]: crate::engine::request::RequestKind::endpoint
    pub fn ws(channel: &str, endpoint: Endpoint) -> Self {
        Self {
            dep: channel.to_string(),
            endpoint,
            key: None,
            idempotent: true,
            retryable: false,
        }
    }
}

impl<T: Transport> Engine<T> {
    /// A tool call or a WebSocket session, as [`Engine::handle`] routed it.
    pub(super) async fn handle_simple(
        &self,
        req: &EngineRequest,
        worker: usize,
        plan: SimpleCall,
    ) -> EngineResponse {
        let class = req.op_class();
        let SimpleCall {
            dep,
            endpoint,
            key,
            idempotent,
            retryable,
        } = plan;
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
                    self.attempt_event(
                        now,
                        &dep,
                        worker,
                        class,
                        &c,
                        Duration::ZERO,
                        false,
                        None,
                        None,
                    );
                    break (AttemptOutcome::Rejected, format!("circuit open for {dep}"));
                }
            };
            let given = self.dep_deadlines(&dep, class, timeout, now);
            let call = Call {
                dep: dep.clone(),
                class,
                endpoint: endpoint.clone(),
                bearer: None,
                idempotency_key: key.clone(),
                probe: probe.then(|| dep.clone()),
                origin: Origin::Worker(worker),
                attempt: attempts,
                request: Some(req.id),
                deadlines: given.deadlines,
            };
            let result = self.transport.send(call).await;
            let end = Instant::now();
            // One instant on both clocks: the breaker and the classification read the same
            // Retry-After against it.
            let ended = self.clock.at(end);
            let tool = class == OpClass::ToolCall;
            if tool {
                self.adaptive
                    .observe(&dep, &result, self.nominal(end - now), end);
            }
            // A deadline alone does not open a heavy tool's breaker (docs/engine.md): with
            // adaptive deadlines on, an expiry while `dep` still answers others stays away from it.
            if !tool || self.adaptive.tell_breaker(&dep, &result, now, probe) {
                self.admission
                    .record_async(&dep, worker, probe, &result, ended)
                    .await;
            }
            let c = classify(&result, ended.wall);
            self.attempt_event(
                end,
                &dep,
                worker,
                class,
                &c,
                end - now,
                probe,
                None,
                Some(&given),
            );
            spent = spent.saturating_add(tokens_of(&result));
            let Some(reason) = c.reason else {
                self.spend(req, spent, end);
                let resp = EngineResponse {
                    outcome: c.outcome,
                    attempts,
                    model: None,
                    fallback: false,
                    profile: None,
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
                decide_retry(&self.config.budget, &state, self.opts.speed, &mut core.rng)
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
            profile: None,
            user_error: Some(failure.1),
            tokens: 0,
            partial: false,
        };
        self.finish(req, &dep, resp)
    }
}
