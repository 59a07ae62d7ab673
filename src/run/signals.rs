//! SIGINT / SIGTERM (launchd's stop) → a stop request every part of the run can await: the
//! replay ends, a final scrape is taken and the report says `incomplete` with the reason.

use tokio::sync::watch;

/// A shared stop request: `None` while running, `Some(reason)` once stopped.
#[derive(Debug, Clone)]
pub struct Stop {
    rx: watch::Receiver<Option<String>>,
    tx: std::sync::Arc<watch::Sender<Option<String>>>,
}

impl Default for Stop {
    fn default() -> Self {
        Self::new()
    }
}

impl Stop {
    /// A stop request nobody has made yet.
    pub fn new() -> Self {
        let (tx, rx) = watch::channel(None);
        Self {
            rx,
            tx: std::sync::Arc::new(tx),
        }
    }

    /// Requests a stop (the first reason wins).
    pub fn request(&self, reason: &str) {
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
    pub fn reason(&self) -> Option<String> {
        self.rx.borrow().clone()
    }

    /// Resolves once a stop was requested.
    pub async fn stopped(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(Option::is_some).await;
    }

    /// Listens for SIGINT and SIGTERM on the current runtime and turns them into stop requests.
    /// Fails only when the signal handlers cannot be installed.
    pub fn listen_for_signals(&self) -> std::io::Result<()> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let stop = self.clone();
        tokio::spawn(async move {
            let name = tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            };
            stop.request(&format!("interrupted by {name}"));
        });
        Ok(())
    }
}

/// What a stop reason names as its cause: `SIGTERM` for `interrupted by SIGTERM`, else the whole
/// reason.
pub fn cause(reason: &str) -> &str {
    reason.strip_prefix("interrupted by ").unwrap_or(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn first_reason_wins_and_waiters_wake() {
        let stop = Stop::new();
        assert_eq!(stop.reason(), None);
        let waiter = {
            let s = stop.clone();
            tokio::spawn(async move { s.stopped().await })
        };
        stop.request("interrupted by SIGTERM");
        stop.request("second");
        waiter.await.unwrap();
        assert_eq!(stop.reason().as_deref(), Some("interrupted by SIGTERM"));
        assert_eq!(cause("interrupted by SIGTERM"), "SIGTERM");
        assert_eq!(cause("a deadline"), "a deadline");
    }
}
