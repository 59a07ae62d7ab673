//! Tool and WebSocket requests: admit → send → record (the breaker helper adds budgets and
//! backoff retries here).

use std::time::Duration;

use tokio::time::Instant;

use super::{Engine, user_error};
use crate::engine::admission::Admit;
use crate::engine::classify::{classify, tokens_of};
use crate::engine::events::AttemptOutcome;
use crate::engine::request::{EngineRequest, EngineResponse, RequestKind};
use crate::engine::transport::{Call, CallTarget, Transport};

impl<T: Transport> Engine<T> {
    pub(super) async fn handle_simple(&self, req: &EngineRequest, worker: usize) -> EngineResponse {
        let class = req.op_class();
        let (dep, target, key) = match &req.kind {
            RequestKind::Tool {
                name,
                body,
                idempotency_key,
                ..
            } => (
                name.clone(),
                CallTarget::Tool {
                    name: name.clone(),
                    body: body.clone(),
                },
                idempotency_key.clone(),
            ),
            RequestKind::Ws { channel, messages } => (
                channel.clone(),
                CallTarget::Ws {
                    channel: channel.clone(),
                    messages: *messages,
                },
                None,
            ),
            RequestKind::Llm { model, .. } => (
                model.clone(),
                CallTarget::Llm {
                    model: model.clone(),
                    stream: false,
                    max_tokens: None,
                },
                None,
            ),
        };
        let now = Instant::now();
        let (probe, timeout) = match self.admission.admit(&dep, worker, now) {
            Admit::Allow { probe, timeout } => (probe, timeout),
            Admit::Reject { .. } => {
                let c = Self::rejected();
                self.attempt_event(now, &dep, worker, class, &c, Duration::ZERO, false, None);
                let resp = EngineResponse {
                    outcome: AttemptOutcome::Rejected,
                    attempts: 1,
                    model: None,
                    fallback: false,
                    user_error: Some(format!("circuit open for {dep}")),
                    tokens: 0,
                };
                return self.finish(req, &dep, resp);
            }
        };
        let call = Call {
            dep: dep.clone(),
            class,
            target,
            bearer: None,
            idempotency_key: key,
            probe: probe.then(|| dep.clone()),
            worker,
            attempt: 1,
            deadlines: self.deadlines(class, timeout),
        };
        let result = self.transport.send(call).await;
        let end = Instant::now();
        self.admission.record(&dep, worker, probe, &result, end);
        let c = classify(&result, self.wall(end));
        self.attempt_event(end, &dep, worker, class, &c, end - now, probe, None);
        let resp = EngineResponse {
            outcome: c.outcome,
            attempts: 1,
            model: None,
            fallback: false,
            user_error: c.reason.map(user_error),
            tokens: if c.reason.is_none() {
                tokens_of(&result)
            } else {
                0
            },
        };
        self.finish(req, &dep, resp)
    }
}
