//! The replayer's `Dispatcher` for an in-process run: each traffic line becomes an
//! `EngineRequest` handled by `Engine::handle` on one of N workers. The worker is a seeded hash
//! of the line's sequence number, not `seq % N`: periodic traffic would otherwise pin every
//! half-open probe of a dep to the same worker (probes paced at 250 ms against requests every
//! 200 ms land on every other request), and "two successes from distinct workers" could never
//! close a breaker — an artefact no real gateway's request spread has.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::Engine;
use crate::engine::request::EngineRequest;
use crate::engine::transport::Transport;
use crate::replay::replayer::{DispatchOutcome, Dispatcher};
use crate::replay::traffic::TrafficLine;

use super::turns::TurnBook;

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
    pub(crate) fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// Dispatches traffic lines into a shared engine.
#[derive(Debug)]
pub(crate) struct EngineDispatcher<T: Transport> {
    engine: Arc<Engine<T>>,
    workers: usize,
    seed: u64,
    counters: Arc<Counters>,
    /// Where each model call's end is noted for its client-side turn row, when the arm keeps
    /// them (`super::turns`).
    turns: Option<Arc<TurnBook>>,
}

impl<T: Transport> EngineDispatcher<T> {
    /// A dispatcher over `workers` engine workers (at least 1).
    pub(crate) fn new(engine: Arc<Engine<T>>, workers: usize, seed: u64, counters: Arc<Counters>) -> Self {
        Self {
            engine,
            workers: workers.max(1),
            seed,
            counters,
            turns: None,
        }
    }

    /// The same dispatcher noting every model call's end in `book`.
    pub(crate) fn with_turns(mut self, book: Option<Arc<TurnBook>>) -> Self {
        self.turns = book;
        self
    }
}

/// The worker of request `seq`: SplitMix64 of `seed ^ seq`, modulo `workers` (pure, uniform,
/// reproducible for a given seed).
fn worker_of(seed: u64, seq: u64, workers: usize) -> usize {
    let mut z = (seed ^ seq).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % workers.max(1) as u64) as usize
}

/// The engine request of a traffic line (`seq` becomes its id).
fn to_request(seq: u64, line: TrafficLine) -> EngineRequest {
    EngineRequest {
        id: seq,
        kind: line.kind,
        tenant: line.tenant,
        budget_tokens: line.budget_tokens,
        session: line.session,
        class: line.class,
    }
}

impl<T: Transport> Dispatcher for EngineDispatcher<T> {
    async fn dispatch(&self, seq: u64, line: TrafficLine) -> DispatchOutcome {
        Counters::bump(&self.counters.sent);
        let worker = worker_of(self.seed, seq, self.workers);
        if let Some(b) = &self.turns {
            b.sent(seq, &line);
        }
        let resp = self.engine.handle(to_request(seq, line), worker).await;
        if let Some(b) = &self.turns {
            b.ended(seq, &resp);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_spread_evenly_and_reproducibly() {
        let mut counts = [0usize; 4];
        for seq in 0..4000 {
            counts[worker_of(7, seq, 4)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
        // Every other request (a 250 ms probe pace against 200 ms traffic) still reaches all.
        let mut seen = [false; 4];
        for seq in (0..400).step_by(4) {
            seen[worker_of(7, seq, 4)] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(worker_of(7, 42, 4), worker_of(7, 42, 4));
        assert_eq!(worker_of(7, 42, 0), 0);
    }
}
