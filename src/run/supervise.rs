//! Watching the in-process mock upstream: if its server task ends before the run shuts it down —
//! halted through its control API (`POST /_rehearse/shutdown`), an I/O error, a panic — that is
//! a harness failure. The run ends there, its report says why and when, and it exits 3.

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Wraps the upstream's server task: the returned task ends with it; the receiver turns
/// `Some(why)` if it ended while `running` was still false (the run had not shut it down).
/// `why` names the scenario time of the death (`start` + `speed`).
pub fn watch_upstream(
    server: JoinHandle<std::io::Result<()>>,
    shut_down: watch::Receiver<bool>,
    start: Instant,
    speed: f64,
) -> (JoinHandle<()>, watch::Receiver<Option<String>>) {
    let (tx, rx) = watch::channel(None::<String>);
    let task = tokio::spawn(async move {
        let why = match server.await {
            _ if *shut_down.borrow() => return,
            Ok(Ok(())) => "stopped serving (POST /_rehearse/shutdown)".to_string(),
            Ok(Err(e)) => format!("failed: {e}"),
            Err(e) => format!("crashed: {e}"),
        };
        let at = start.elapsed().as_secs_f64() * speed;
        tx.send_replace(Some(format!(
            "the mock upstream {why} at {at:.3}s of the run"
        )));
    });
    (task, rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_early_end_is_a_death_a_shutdown_is_not() {
        let (_tx, rx) = watch::channel(false);
        let start = Instant::now();
        let server = tokio::spawn(async {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            Err(std::io::Error::other("accept failed"))
        });
        let (task, died) = watch_upstream(server, rx, start, 2.0);
        task.await.unwrap();
        assert_eq!(
            died.borrow().as_deref(),
            Some("the mock upstream failed: accept failed at 3.000s of the run")
        );

        let (tx, rx) = watch::channel(false);
        let server = tokio::spawn(async { Ok(()) });
        tx.send_replace(true);
        let (task, died) = watch_upstream(server, rx, start, 1.0);
        task.await.unwrap();
        assert_eq!(*died.borrow(), None, "the run shut it down itself");

        let (_tx, rx) = watch::channel(false);
        let server = tokio::spawn(async { panic!("boom") });
        let (task, died) = watch_upstream(server, rx, start, 1.0);
        task.await.unwrap();
        assert!(
            died.borrow()
                .as_deref()
                .is_some_and(|w| w.contains("crashed"))
        );
    }
}
