//! Replays on a pacer thread of their own.
//!
//! [`replay_on_own_thread`] runs a whole replay on a dedicated thread with a current-thread
//! runtime, so the pacer, the HTTP client and its connections share one thread: when the
//! instant comes the request is written without a cross-thread hand-off, and no other
//! runtime's tasks can sit in front of the pacer's wake-up. `rehearse replay` uses it.
//! [`replay_on_pacer_thread`] runs only the pacer loop there and spawns each request on another
//! runtime: the run harness, whose requests go through the engine on its multi-thread runtime.

use std::future::Future;
use std::sync::Arc;

use super::precise::Pacing;
use super::replayer::{Dispatcher, ReplayOptions, ReplaySummary, replay_spawning_on};
use super::traffic::TrafficLine;

/// Runs [`replay`](super::replayer::replay) with [`Pacing::Precise`] on a new thread
/// (`rehearse-pacer`) with its own current-thread runtime, tuned as [`super::pacer_thread`] says
/// (what was granted is in the summary's `pacer_thread`); `stop()` is called on that thread to
/// make the stop future.
///
/// `opts.start` should leave a few milliseconds for the thread and runtime to start (the CLI
/// uses 50 ms). The dispatcher's futures run on the new runtime, so anything they spawn
/// (hyper's connection tasks) lives there too. (A two-worker multi-thread runtime measured
/// worse at 1000 RPS on a busy 2-core machine; see `docs/bench/replay.md`.)
pub fn replay_on_own_thread<D, F, S>(
    lines: Vec<TrafficLine>,
    dispatcher: Arc<D>,
    opts: ReplayOptions,
    stop: F,
) -> std::io::Result<std::thread::JoinHandle<ReplaySummary>>
where
    D: Dispatcher,
    F: FnOnce() -> S + Send + 'static,
    S: Future<Output = ()>,
{
    pacer_thread(lines, dispatcher, opts, Pacing::Precise, stop, None)
}

/// Like [`replay_on_own_thread`], but only the pacer loop runs on the new thread, with
/// [`Pacing::Nap`] (no spin: the cores are the engine's), and every request task is spawned on
/// `requests_on` (the run harness's engine runtime): the naps never hold up the engine's
/// workers and the engine's work never delays a send instant. A request's send time is taken
/// when its task starts on `requests_on` (the hand-off counts as lag).
pub fn replay_on_pacer_thread<D, L, F, S>(
    lines: L,
    dispatcher: Arc<D>,
    opts: ReplayOptions,
    stop: F,
    requests_on: tokio::runtime::Handle,
) -> std::io::Result<std::thread::JoinHandle<ReplaySummary>>
where
    D: Dispatcher,
    L: IntoIterator<Item = TrafficLine> + Send + 'static,
    L::IntoIter: ExactSizeIterator,
    F: FnOnce() -> S + Send + 'static,
    S: Future<Output = ()>,
{
    pacer_thread(
        lines,
        dispatcher,
        opts,
        Pacing::Nap,
        stop,
        Some(requests_on),
    )
}

fn pacer_thread<D, L, F, S>(
    lines: L,
    dispatcher: Arc<D>,
    opts: ReplayOptions,
    pacing: Pacing,
    stop: F,
    requests_on: Option<tokio::runtime::Handle>,
) -> std::io::Result<std::thread::JoinHandle<ReplaySummary>>
where
    D: Dispatcher,
    L: IntoIterator<Item = TrafficLine> + Send + 'static,
    L::IntoIter: ExactSizeIterator,
    F: FnOnce() -> S + Send + 'static,
    S: Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let opts = ReplayOptions { pacing, ..opts };
    std::thread::Builder::new()
        .name("rehearse-pacer".into())
        .spawn(move || {
            let tuned = super::pacer_thread::tune_current_thread();
            let mut summary = runtime.block_on(async move {
                replay_spawning_on(lines, dispatcher, opts, stop(), requests_on.as_ref()).await
            });
            summary.pacer_thread = Some(tuned.describe());
            summary
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::Instant;

    const MS: std::time::Duration = std::time::Duration::from_millis(1);

    #[test]
    fn own_thread_replay_sends_everything_on_time() {
        // A real-clock smoke test of the thread runner: counts only, generous bounds.
        struct Count(std::sync::atomic::AtomicU64);
        impl Dispatcher for Count {
            async fn dispatch(
                &self,
                _seq: u64,
                _line: TrafficLine,
            ) -> super::super::DispatchOutcome {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                super::super::DispatchOutcome::ok()
            }
        }
        let text: String = (0..20)
            .map(|i| {
                format!(
                    "{{\"at_ms\":{},\"kind\":\"ws\",\"channel\":\"c\",\"messages\":1}}\n",
                    i * 5
                )
            })
            .collect();
        let lines = super::super::parse_traffic(&text, "test").unwrap();
        let d = Arc::new(Count(Default::default()));
        let opts = ReplayOptions {
            speed: crate::util::speed::Speed::ONE,
            max_in_flight: 4,
            start: Instant::now() + 20 * MS,
            pacing: Pacing::Timer, // replaced by Precise
            keep_records: true,
        };
        let s = replay_on_own_thread(lines, d.clone(), opts, std::future::pending::<()>)
            .unwrap()
            .join()
            .unwrap();
        assert_eq!((s.sent, s.ok, s.overflow), (20, 20, 0));
        assert_eq!(d.0.load(std::sync::atomic::Ordering::Relaxed), 20);
        assert!(s.records.iter().all(|r| r.sent_ms >= r.intended_ms));
    }
}
