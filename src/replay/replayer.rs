//! The open-model replayer: every line is sent at its absolute scheduled instant, whatever
//! earlier requests are doing.
//!
//! ## How it paces
//! One pacer loop waits for `start + at_ms / speed` per line ([`super::pacer::send_at`]), then
//! `tokio::spawn`s the request and moves on, so a slow target never delays later sends. If the
//! pacer itself falls behind (a stalled runtime), late lines go out at once (catch-up, like
//! vegeta) and their lag is recorded. The wait is tokio's `sleep_until` ([`Pacing::Timer`], exact
//! on the paused clock, 0–1 ms late on the real one) or timer + OS naps + a bounded spin
//! ([`Pacing::Precise`], see [`super::precise`]); `rehearse replay` runs the precise pacer on a
//! thread of its own ([`super::precise::replay_on_own_thread`]).
//!
//! ## In-flight limit and overflow
//! A semaphore bounds requests in flight (`max_in_flight`). A line whose slot is not free at its
//! intended time is **counted as overflow and still sent** once a slot frees, in schedule order;
//! nothing is dropped. Its wait shows in its lag and (since latency runs from the intended time)
//! in its latency, so the summary cannot hide it (no coordinated omission).
//!
//! ## Stopping
//! When the `stop` future completes (SIGTERM in the run harness), no further line is sent;
//! requests still waiting for a slot are discarded (they were never sent), requests in flight are
//! cancelled and reported as `unfinished`, and the partial [`ReplaySummary`] is returned at once.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

use super::pacer::send_at;
pub use super::precise::Pacing;
use super::precise::{spin_window, wait_precisely};
use super::traffic::TrafficLine;

pub use super::summary::{ReplaySummary, RequestRecord};

/// What a dispatcher reports about one request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DispatchOutcome {
    /// The request succeeded (as the dispatcher defines success).
    pub ok: bool,
    /// Why it failed (`http_503`, `transport`, `timeout`, `breaker_open`, ...), counted by kind.
    pub error_kind: Option<String>,
}

impl DispatchOutcome {
    /// A success.
    pub fn ok() -> Self {
        Self {
            ok: true,
            error_kind: None,
        }
    }

    /// A failure of the given kind.
    pub fn error(kind: impl Into<String>) -> Self {
        Self {
            ok: false,
            error_kind: Some(kind.into()),
        }
    }
}

/// Sends one traffic line somewhere: over HTTP/WS (`rehearse replay`) or into the engine (run).
pub trait Dispatcher: Send + Sync + 'static {
    /// Sends line `seq` and resolves when its response is complete.
    fn dispatch(&self, seq: u64, line: TrafficLine)
    -> impl Future<Output = DispatchOutcome> + Send;
}

/// How to replay.
#[derive(Debug, Clone, Copy)]
pub struct ReplayOptions {
    /// Divides every `at_ms` (must be finite and > 0; see [`super::pacer::check_speed`]).
    pub speed: f64,
    /// Most requests in flight at once (0 is treated as 1).
    pub max_in_flight: usize,
    /// The instant `at_ms = 0` maps to; records are in ms since it.
    pub start: Instant,
    /// How to wait for each send instant ([`Pacing::Timer`] on the paused clock).
    pub pacing: Pacing,
}

/// Progress of one request, shared between the pacer and its task.
#[derive(Debug)]
struct Slot {
    seq: u64,
    intended: Instant,
    sent: Option<Instant>,
    overflow: bool,
    done: Option<(Instant, DispatchOutcome)>,
}

type Shared = Arc<Mutex<Slot>>;

fn lock(slot: &Shared) -> std::sync::MutexGuard<'_, Slot> {
    // A panicking dispatcher poisons only its own slot; its data is still usable.
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Replays `lines` through `dispatcher` on the absolute schedule of `opts` until every request
/// is answered or `stop` completes; returns what was done.
pub async fn replay<D: Dispatcher>(
    lines: Vec<TrafficLine>,
    dispatcher: Arc<D>,
    opts: ReplayOptions,
    stop: impl Future<Output = ()>,
) -> ReplaySummary {
    let total = lines.len() as u64;
    let semaphore = Arc::new(Semaphore::new(opts.max_in_flight.max(1)));
    let mut tasks = JoinSet::new();
    let mut slots: Vec<Shared> = Vec::with_capacity(lines.len());
    let mut stopped = false;
    tokio::pin!(stop);
    let mut previous: Option<Instant> = None;

    for (seq, line) in lines.into_iter().enumerate() {
        let intended = send_at(opts.start, line.at_ms, opts.speed);
        let wait = async {
            match opts.pacing {
                Pacing::Timer => sleep_until(intended).await,
                Pacing::Precise => {
                    let gap =
                        previous.map_or(Duration::MAX, |p| intended.saturating_duration_since(p));
                    wait_precisely(intended, spin_window(gap)).await;
                }
            }
        };
        tokio::select! {
            biased;
            () = &mut stop => { stopped = true; break; }
            () = wait => {}
        }
        previous = Some(intended);
        // Reap finished tasks so the JoinSet does not grow with the whole file.
        while tasks.try_join_next().is_some() {}
        let slot = Arc::new(Mutex::new(Slot {
            seq: seq as u64,
            intended,
            sent: None,
            overflow: false,
            done: None,
        }));
        slots.push(slot.clone());
        let semaphore = semaphore.clone();
        let dispatcher = dispatcher.clone();
        tasks.spawn(async move {
            let permit = match semaphore.clone().try_acquire_owned() {
                Ok(p) => p,
                Err(_) => {
                    lock(&slot).overflow = true;
                    match semaphore.acquire_owned().await {
                        Ok(p) => p,
                        Err(_) => return, // never closed
                    }
                }
            };
            lock(&slot).sent = Some(Instant::now());
            let outcome = dispatcher.dispatch(seq as u64, line).await;
            lock(&slot).done = Some((Instant::now(), outcome));
            drop(permit);
        });
    }

    if !stopped {
        let drain = async { while tasks.join_next().await.is_some() {} };
        tokio::select! {
            biased;
            () = &mut stop => stopped = true,
            () = drain => {}
        }
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}

    let ms = |t: Instant| t.saturating_duration_since(opts.start).as_secs_f64() * 1000.0;
    let records = slots
        .iter()
        .filter_map(|slot| {
            let s = lock(slot);
            let sent = s.sent?;
            let (done_ms, ok, error_kind) = match &s.done {
                Some((t, o)) => (Some(ms(*t)), o.ok, o.error_kind.clone()),
                None => (None, false, Some("stopped".to_string())),
            };
            Some(RequestRecord {
                seq: s.seq,
                intended_ms: ms(s.intended),
                sent_ms: ms(sent),
                done_ms,
                ok,
                error_kind,
                overflow: s.overflow,
            })
        })
        .collect();
    ReplaySummary::from_records(total, records, stopped)
}

#[cfg(test)]
#[path = "replayer_tests.rs"]
mod tests;
