//! The replayer's `Dispatcher` for an in-process run: each traffic line becomes an
//! `EngineRequest` handled by `Engine::handle` on one of N workers (line `seq` → worker
//! `seq % N`, so consecutive requests — and half-open probes — spread over distinct workers).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::Engine;
use crate::engine::request::{EngineRequest, RequestKind};
use crate::engine::transport::Transport;
use crate::replay::replayer::{DispatchOutcome, Dispatcher};
use crate::replay::traffic::{TrafficKind, TrafficLine};

/// Live counters for the progress display and the A/B summary.
#[derive(Debug, Default)]
pub struct Counters {
    /// Requests handed to the engine.
    pub sent: AtomicU64,
    /// Requests that finished.
    pub done: AtomicU64,
    /// Requests whose final outcome was not ok.
    pub failed: AtomicU64,
    /// Requests that returned a user-visible error.
    pub user_errors: AtomicU64,
    /// Requests answered by a fallback model.
    pub fallbacks: AtomicU64,
}

impl Counters {
    fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// A counter's current value.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// Dispatches traffic lines into a shared engine.
#[derive(Debug)]
pub struct EngineDispatcher<T: Transport> {
    engine: Arc<Engine<T>>,
    workers: usize,
    counters: Arc<Counters>,
}

impl<T: Transport> EngineDispatcher<T> {
    /// A dispatcher over `workers` engine workers (at least 1).
    pub fn new(engine: Arc<Engine<T>>, workers: usize, counters: Arc<Counters>) -> Self {
        Self {
            engine,
            workers: workers.max(1),
            counters,
        }
    }
}

/// The engine request of a traffic line (`seq` becomes its id).
pub fn to_request(seq: u64, line: TrafficLine) -> EngineRequest {
    let kind = match line.kind {
        TrafficKind::Llm {
            model,
            stream,
            max_tokens,
        } => RequestKind::Llm {
            model,
            stream,
            max_tokens: Some(max_tokens),
        },
        TrafficKind::Tool {
            tool,
            body,
            idempotent,
            idempotency_key,
        } => RequestKind::Tool {
            name: tool,
            body,
            idempotent,
            idempotency_key,
        },
        TrafficKind::Ws { channel, messages } => RequestKind::Ws { channel, messages },
    };
    EngineRequest {
        id: seq,
        kind,
        tenant: line.tenant,
        budget_tokens: line.budget_tokens,
        session: line.session,
        class: line.class,
    }
}

impl<T: Transport> Dispatcher for EngineDispatcher<T> {
    async fn dispatch(&self, seq: u64, line: TrafficLine) -> DispatchOutcome {
        Counters::bump(&self.counters.sent);
        let worker = (seq % self.workers as u64) as usize;
        let resp = self.engine.handle(to_request(seq, line), worker).await;
        Counters::bump(&self.counters.done);
        if resp.fallback {
            Counters::bump(&self.counters.fallbacks);
        }
        if resp.user_error.is_some() {
            Counters::bump(&self.counters.user_errors);
        }
        if resp.is_ok() {
            DispatchOutcome::ok()
        } else {
            Counters::bump(&self.counters.failed);
            DispatchOutcome::error(resp.outcome.as_str())
        }
    }
}
