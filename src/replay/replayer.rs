//! The open-model replayer: every line is sent at its absolute scheduled instant, whatever
//! earlier requests are doing.
//!
//! ## How it paces
//! One pacer loop waits for `start + at_ms / speed` per line ([`super::pacer::send_at`]), then
//! `tokio::spawn`s the request and moves on, so a slow target never delays later sends. If the
//! pacer itself falls behind (a stalled runtime), late lines go out at once (catch-up, like
//! vegeta) and their lag is recorded. The wait is tokio's `sleep_until` ([`Pacing::Timer`], exact
//! on the paused clock, 1–2 ms late on the real one), timer + OS naps + a bounded spin
//! ([`Pacing::Precise`], see [`super::precise`]) or timer + naps ([`Pacing::Nap`]). `rehearse
//! replay` runs the precise pacer on a thread of its own
//! ([`super::threaded::replay_on_own_thread`]); the run harness runs the napping pacer on a thread
//! of its own and each request on the engine's runtime
//! ([`super::threaded::replay_on_pacer_thread`]).
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

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::util::sync::Locked;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

use crate::util::speed::Speed;

use super::pacer::send_at;
pub(crate) use super::precise::Pacing;
use super::precise::{spin_window, wait_precisely};
use super::traffic::TrafficLine;

use super::summary::Tally;
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
    pub(crate) fn ok() -> Self {
        Self {
            ok: true,
            error_kind: None,
        }
    }

    /// A failure of the given kind.
    pub(crate) fn error(kind: impl Into<String>) -> Self {
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
    /// Divides every `at_ms`.
    pub speed: Speed,
    /// Most requests in flight at once (0 is treated as 1).
    pub max_in_flight: usize,
    /// The instant `at_ms = 0` maps to; records are in ms since it.
    pub start: Instant,
    /// How to wait for each send instant ([`Pacing::Timer`] on the paused clock).
    pub pacing: Pacing,
    /// Keep one [`RequestRecord`] per sent request in the summary. Without them only the
    /// histograms and counts are kept, so memory does not grow with the traffic (the run
    /// harness); `rehearse replay --out` needs them.
    pub keep_records: bool,
}

/// Progress of one request not yet finished.
#[derive(Debug)]
struct Slot {
    intended: Instant,
    sent: Option<Instant>,
    overflow: bool,
}

/// Shared between the pacer and the request tasks: the requests not yet finished (by `seq`)
/// and the tally each one joins when it finishes.
struct Book {
    pending: BTreeMap<u64, Slot>,
    tally: Tally,
    start: Instant,
}

impl Book {
    fn ms(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_secs_f64() * 1000.0
    }

    /// Moves request `seq` from pending into the tally; `done` is `None` when it was cut.
    fn close(&mut self, seq: u64, done: Option<(Instant, DispatchOutcome)>) {
        let Some(slot) = self.pending.remove(&seq) else {
            return;
        };
        // Never sent (waiting for a slot when the replay stopped): not a request at all.
        let Some(sent) = slot.sent else { return };
        let (done_ms, ok, error_kind) = match done {
            Some((t, o)) => (Some(self.ms(t)), o.ok, o.error_kind),
            None => (None, false, Some("stopped".to_string())),
        };
        let record = RequestRecord {
            seq,
            intended_ms: self.ms(slot.intended),
            sent_ms: self.ms(sent),
            done_ms,
            ok,
            error_kind,
            overflow: slot.overflow,
        };
        self.tally.add(record);
    }
}

type Shared = Arc<Mutex<Book>>;

fn lock(book: &Shared) -> std::sync::MutexGuard<'_, Book> {
    // A panicking dispatcher cannot poison the book: it is never locked across a dispatch.
    book.locked()
}

/// Replays `lines` through `dispatcher` on the absolute schedule of `opts` until every request
/// is answered or `stop` completes; returns what was done. Lines are taken from the iterator one
/// at a time (a run passes clones of its plan's lines, never a second copy of the file), and each
/// request joins the summary's tally when it finishes; only unfinished ones are held meanwhile.
pub async fn replay<D, L>(
    lines: L,
    dispatcher: Arc<D>,
    opts: ReplayOptions,
    stop: impl Future<Output = ()>,
) -> ReplaySummary
where
    D: Dispatcher,
    L: IntoIterator<Item = TrafficLine>,
    L::IntoIter: ExactSizeIterator,
{
    replay_spawning_on(lines, dispatcher, opts, stop, None).await
}

/// [`replay`], with every request task spawned on `requests_on` when given (the pacer loop stays
/// on the caller's runtime): a pacer on a thread of its own drives requests that run on another
/// runtime (the run harness's engine). A request's send time is still taken when its task starts
/// there and gets its slot, so the hand-off between the two runtimes counts as lag.
pub(crate) async fn replay_spawning_on<D, L>(
    lines: L,
    dispatcher: Arc<D>,
    opts: ReplayOptions,
    stop: impl Future<Output = ()>,
    requests_on: Option<&tokio::runtime::Handle>,
) -> ReplaySummary
where
    D: Dispatcher,
    L: IntoIterator<Item = TrafficLine>,
    L::IntoIter: ExactSizeIterator,
{
    let lines = lines.into_iter();
    let total = lines.len() as u64;
    let semaphore = Arc::new(Semaphore::new(opts.max_in_flight.max(1)));
    let mut tasks = JoinSet::new();
    let book: Shared = Arc::new(Mutex::new(Book {
        pending: BTreeMap::new(),
        tally: Tally::new(opts.keep_records),
        start: opts.start,
    }));
    let mut stopped = false;
    tokio::pin!(stop);
    let mut previous: Option<Instant> = None;

    for (seq, line) in lines.enumerate() {
        let seq = seq as u64;
        let intended = send_at(opts.start, line.at_ms, opts.speed);
        let wait = async {
            match opts.pacing {
                Pacing::Timer => sleep_until(intended).await,
                Pacing::Precise => {
                    let gap =
                        previous.map_or(Duration::MAX, |p| intended.saturating_duration_since(p));
                    wait_precisely(intended, spin_window(gap)).await;
                }
                Pacing::Nap => wait_precisely(intended, Duration::ZERO).await,
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
        let slot = Slot {
            intended,
            sent: None,
            overflow: false,
        };
        lock(&book).pending.insert(seq, slot);
        let semaphore = semaphore.clone();
        let dispatcher = dispatcher.clone();
        let book = book.clone();
        let task = async move {
            let permit = match semaphore.clone().try_acquire_owned() {
                Ok(p) => p,
                Err(_) => {
                    if let Some(s) = lock(&book).pending.get_mut(&seq) {
                        s.overflow = true;
                    }
                    match semaphore.acquire_owned().await {
                        Ok(p) => p,
                        Err(_) => return, // never closed
                    }
                }
            };
            if let Some(s) = lock(&book).pending.get_mut(&seq) {
                s.sent = Some(Instant::now());
            }
            let outcome = dispatcher.dispatch(seq, line).await;
            lock(&book).close(seq, Some((Instant::now(), outcome)));
            drop(permit);
        };
        match requests_on {
            Some(rt) => tasks.spawn_on(task, rt),
            None => tasks.spawn(task),
        };
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

    // What is still pending was cut by the stop (or never sent).
    let mut book = lock(&book);
    let cut: Vec<u64> = book.pending.keys().copied().collect();
    for seq in cut {
        book.close(seq, None);
    }
    let tally = std::mem::replace(&mut book.tally, Tally::new(false));
    drop(book);
    tally.finish(total, stopped)
}

#[cfg(test)]
mod tests;
