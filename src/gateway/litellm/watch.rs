//! Whether a started proxy still answers: its liveness path (`/health/liveliness`) asked every
//! [`EVERY`] during the run, each answer or failure fed to [`Watch::record`] with its instant.
//! A proxy that has not answered 2xx for [`SILENT_FOR`] — at least [`MIN_MISSES`] probes in a row
//! — has stopped answering: a harness failure, whatever its process says (a process stopped by
//! SIGSTOP, a deadlocked event loop). Pure: `now` is passed in.

use std::time::Duration;

use tokio::time::Instant;

/// How often the liveness path is asked.
pub(crate) const EVERY: Duration = Duration::from_secs(1);
/// How long one probe may take.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long without a 2xx makes a proxy silent (a busy 2-core machine delays answers by seconds,
/// never by this).
const SILENT_FOR: Duration = Duration::from_secs(10);
/// Failed probes in a row, at least, before it is.
const MIN_MISSES: u32 = 3;

/// The liveness record of one proxy.
#[derive(Debug, Clone)]
pub struct Watch {
    last_ok: Instant,
    misses: u32,
    last_error: Option<String>,
    silent: Option<String>,
}

impl Watch {
    /// A proxy that answered at `ready` (its readiness).
    pub(crate) fn new(ready: Instant) -> Self {
        Self {
            last_ok: ready,
            misses: 0,
            last_error: None,
            silent: None,
        }
    }

    /// One probe's result at `now`: `Ok(())` a 2xx, else why not.
    pub(crate) fn record(&mut self, now: Instant, answer: Result<(), String>) {
        if self.silent.is_some() {
            return;
        }
        match answer {
            Ok(()) => {
                self.last_ok = now;
                self.misses = 0;
                self.last_error = None;
            }
            Err(e) => {
                self.misses = self.misses.saturating_add(1);
                self.last_error = Some(e);
                let quiet = now.saturating_duration_since(self.last_ok);
                if quiet >= SILENT_FOR && self.misses >= MIN_MISSES {
                    self.silent = Some(format!(
                        "stopped answering its liveness path: no 2xx for {:.1} s, {} probes in a row (last: {})",
                        quiet.as_secs_f64(),
                        self.misses,
                        self.last_error.as_deref().unwrap_or("?")
                    ));
                }
            }
        }
    }

    /// Why it is taken for silent, once it is (it stays so).
    pub(crate) fn silent(&self) -> Option<&str> {
        self.silent.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn silent_only_after_the_quiet_period_and_enough_misses() {
        let t0 = Instant::now();
        let mut w = Watch::new(t0);
        // Slow answers that fail a few times, then one comes: never silent.
        for s in 1..=4 {
            w.record(t0 + Duration::from_secs(s * 2), Err("timeout".into()));
        }
        assert!(w.silent().is_none(), "8 s of misses is not 10 s");
        w.record(t0 + Duration::from_secs(9), Ok(()));
        w.record(t0 + Duration::from_secs(19), Err("timeout".into()));
        w.record(t0 + Duration::from_secs(20), Err("timeout".into()));
        assert!(w.silent().is_none(), "10 s quiet but only 2 misses");
        w.record(t0 + Duration::from_secs(21), Err("connect: refused".into()));
        let why = w.silent().unwrap().to_string();
        assert!(why.contains("no 2xx for 12.0 s, 3 probes"), "{why}");
        assert!(why.contains("connect: refused"), "{why}");
        // It stays silent: a late answer does not undo a harness failure.
        w.record(t0 + Duration::from_secs(22), Ok(()));
        assert_eq!(w.silent(), Some(why.as_str()));
    }
}
