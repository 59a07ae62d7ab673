//! The one stop mechanism of every long-running part (the run and its tasks, the mock upstream,
//! the `/metrics` exporter, `replay` and `record`), after mini-redis's `shutdown.rs`:
//!
//! - [`Shutdown`] carries a stop request to everyone holding a clone: a watch channel (a late
//!   listener still sees a request made before it looked), the first reason wins
//!   (`interrupted by SIGTERM`, a deadline, the upstream dying). Signals are one source of it:
//!   [`Shutdown::listen_for_signals`] turns SIGINT and SIGTERM (launchd's stop) into a request.
//! - [`Drain`] waits for the work a stop cuts short: each task holds a [`DrainToken`] and drops
//!   it when done; [`Drain::wait`] resolves once every token is gone.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

/// A shared stop request: nothing while running, the first reason once stopped.
#[derive(Debug, Clone)]
pub struct Shutdown {
    tx: Arc<watch::Sender<Option<String>>>,
    rx: watch::Receiver<Option<String>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    /// A stop request nobody has made yet.
    pub fn new() -> Self {
        let (tx, rx) = watch::channel(None);
        Self {
            tx: Arc::new(tx),
            rx,
        }
    }

    /// Requests a stop (the first reason wins; later ones are ignored).
    pub(crate) fn request(&self, reason: &str) {
        self.tx.send_if_modified(|cur| {
            if cur.is_none() {
                *cur = Some(reason.to_string());
                true
            } else {
                false
            }
        });
    }

    /// The reason, once stopped.
    pub(crate) fn reason(&self) -> Option<String> {
        self.rx.borrow().clone()
    }

    /// True once a stop was requested.
    pub(crate) fn is_requested(&self) -> bool {
        self.rx.borrow().is_some()
    }

    /// Resolves once a stop is requested (at once if it already was). A `Shutdown` whose every
    /// requester is gone never resolves on its own.
    pub fn requested(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.rx.clone();
        async move {
            if rx.wait_for(Option::is_some).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Listens for SIGINT and SIGTERM on the current runtime and turns the first into a stop
    /// request (`interrupted by SIGINT` / `interrupted by SIGTERM`). Fails only when the signal
    /// handlers cannot be installed.
    pub(crate) fn listen_for_signals(&self) -> std::io::Result<()> {
        let stop = self.clone();
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut int = signal(SignalKind::interrupt())?;
            let mut term = signal(SignalKind::terminate())?;
            tokio::spawn(async move {
                let name = tokio::select! {
                    _ = int.recv() => "SIGINT",
                    _ = term.recv() => "SIGTERM",
                };
                stop.request(&format!("interrupted by {name}"));
            });
        }
        #[cfg(not(unix))]
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.request("interrupted by SIGINT");
            }
        });
        Ok(())
    }

    /// A stop request that SIGINT or SIGTERM makes (the long-running commands' stop).
    pub fn on_signals() -> std::io::Result<Self> {
        let stop = Self::new();
        stop.listen_for_signals()?;
        Ok(stop)
    }
}

/// What a stop reason names as its cause: `SIGTERM` for `interrupted by SIGTERM`, else the whole
/// reason.
pub(crate) fn cause(reason: &str) -> &str {
    reason.strip_prefix("interrupted by ").unwrap_or(reason)
}

/// Waits for the tasks a stop cuts short (drop-to-drain).
#[derive(Debug)]
pub(crate) struct Drain {
    tx: mpsc::Sender<()>,
    rx: mpsc::Receiver<()>,
}

/// Held by one task while it runs; dropping it tells the [`Drain`] the task is done.
#[derive(Debug, Clone)]
pub(crate) struct DrainToken {
    _tx: mpsc::Sender<()>,
}

impl Default for Drain {
    fn default() -> Self {
        Self::new()
    }
}

impl Drain {
    /// A drain with no task yet.
    pub(crate) fn new() -> Self {
        let (tx, rx) = mpsc::channel(1);
        Self { tx, rx }
    }

    /// A token for one more task.
    pub(crate) fn token(&self) -> DrainToken {
        DrainToken {
            _tx: self.tx.clone(),
        }
    }

    /// Resolves once every token handed out has been dropped.
    pub(crate) async fn wait(self) {
        let Self { tx, mut rx } = self;
        drop(tx);
        // Nothing is ever sent: `recv` returns `None` when the last sender (token) is dropped.
        let _ = rx.recv().await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn first_reason_wins_and_waiters_wake() {
        let stop = Shutdown::new();
        assert_eq!(stop.reason(), None);
        assert!(!stop.is_requested());
        let waiter = tokio::spawn(stop.requested());
        stop.request("interrupted by SIGTERM");
        stop.request("second");
        waiter.await.unwrap();
        assert_eq!(stop.reason().as_deref(), Some("interrupted by SIGTERM"));
        assert!(stop.is_requested());
        // A listener that looks after the request still sees it.
        stop.clone().requested().await;
        assert_eq!(cause("interrupted by SIGTERM"), "SIGTERM");
        assert_eq!(cause("a deadline"), "a deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn drain_waits_for_every_token() {
        let drain = Drain::new();
        let done = Arc::new(std::sync::atomic::AtomicU32::new(0));
        for i in 1..=3u64 {
            let (token, done) = (drain.token(), done.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(10 * i)).await;
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(token);
            });
        }
        let t0 = tokio::time::Instant::now();
        drain.wait().await;
        assert_eq!(done.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert_eq!(t0.elapsed(), Duration::from_millis(30));
        // With no task at all it resolves at once.
        Drain::new().wait().await;
    }
}
