//! Watching the in-process mock upstream: if its server task ends before the run shuts it down —
//! halted through its control API (`POST /_rehearse/shutdown`), an I/O error, a panic — that is
//! a harness failure. The run ends there, its report says why and when, and it exits 3.

use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::util::shutdown::Shutdown;
use crate::util::speed::Speed;

/// Wraps the upstream's server task: the returned task ends with it; the returned [`Shutdown`]
/// is requested with the reason if it ended before `shut_down` was (the run had not shut it
/// down). The reason names the scenario time of the death (`start` + `speed`).
pub(super) fn watch_upstream(
    server: JoinHandle<std::io::Result<()>>,
    shut_down: Shutdown,
    start: Instant,
    speed: Speed,
) -> (JoinHandle<()>, Shutdown) {
    let died = Shutdown::new();
    let tx = died.clone();
    let task = tokio::spawn(async move {
        let why = match server.await {
            _ if shut_down.is_requested() => return,
            Ok(Ok(())) => "stopped serving (POST /_rehearse/shutdown)".to_string(),
            Ok(Err(e)) => format!("failed: {e}"),
            Err(e) => format!("crashed: {e}"),
        };
        let at = speed.to_scenario(start.elapsed().as_secs_f64());
        tx.request(&format!("the mock upstream {why} at {at:.3}s of the run"));
    });
    (task, died)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::speed::sp;

    #[tokio::test(start_paused = true)]
    async fn an_early_end_is_a_death_a_shutdown_is_not() {
        let start = Instant::now();
        let server = tokio::spawn(async {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            Err(std::io::Error::other("accept failed"))
        });
        let (task, died) = watch_upstream(server, Shutdown::new(), start, sp(2.0));
        task.await.unwrap();
        assert_eq!(
            died.reason().as_deref(),
            Some("the mock upstream failed: accept failed at 3.000s of the run")
        );

        let shut_down = Shutdown::new();
        let server = tokio::spawn(async { Ok(()) });
        shut_down.request("the run ended");
        let (task, died) = watch_upstream(server, shut_down, start, Speed::ONE);
        task.await.unwrap();
        assert_eq!(died.reason(), None, "the run shut it down itself");

        let server = tokio::spawn(async { panic!("boom") });
        let (task, died) = watch_upstream(server, Shutdown::new(), start, Speed::ONE);
        task.await.unwrap();
        assert!(
            died.reason()
                .as_deref()
                .is_some_and(|w| w.contains("crashed"))
        );
    }
}
