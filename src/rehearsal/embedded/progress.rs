//! Progress while a run goes: an indicatif bar on a terminal (elapsed / duration, sent, errors,
//! open breakers), plain lines otherwise (launchd logs, pipes, `--no-progress`).

use crate::util::sync::Locked;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::time::Instant;

/// How often plain progress lines are printed (wall time).
const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// What the progress display shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    /// Run time so far (wall, i.e. already divided by the speed).
    pub elapsed: Duration,
    /// Requests sent.
    pub sent: u64,
    /// Requests that failed.
    pub errors: u64,
    /// Deps whose breaker is open (or half-open) right now.
    pub open: Vec<String>,
}

/// One line of plain progress.
fn plain_line(label: &str, total: Duration, s: &Snapshot) -> String {
    let open = if s.open.is_empty() {
        "none".to_string()
    } else {
        s.open.join(",")
    };
    format!(
        "[{label}] {:.1}s/{:.1}s sent={} errors={} open={open}",
        s.elapsed.as_secs_f64(),
        total.as_secs_f64(),
        s.sent,
        s.errors
    )
}

/// The progress display of one policy run.
#[derive(Debug)]
pub(crate) struct Progress {
    label: String,
    total: Duration,
    bar: Option<ProgressBar>,
    last_plain: Mutex<Option<Instant>>,
}

impl Progress {
    /// A bar when stdout is a terminal and `plain` is false; plain lines otherwise.
    pub(crate) fn new(label: &str, total: Duration, plain: bool) -> Self {
        let bar = (!plain && std::io::stdout().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(total.as_millis() as u64),
                ProgressDrawTarget::stdout(),
            );
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {elapsed_precise} {pos}/{len} ms  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style.progress_chars("=> "));
            bar.set_prefix(label.to_string());
            bar
        });
        Self {
            label: label.to_string(),
            total,
            bar,
            last_plain: Mutex::new(None),
        }
    }

    /// Shows a new snapshot (plain lines at most every few seconds).
    pub(crate) fn update(&self, s: &Snapshot) {
        if let Some(bar) = &self.bar {
            bar.set_position(s.elapsed.as_millis() as u64);
            let open = if s.open.is_empty() {
                "none".into()
            } else {
                s.open.join(",")
            };
            bar.set_message(format!("sent {} errors {} open {open}", s.sent, s.errors));
            return;
        }
        let now = Instant::now();
        let mut last = self.last_plain.locked();
        if last.is_none_or(|t| now.duration_since(t) >= PLAIN_EVERY) {
            *last = Some(now);
            crate::outln!("{}", plain_line(&self.label, self.total, s));
        }
    }

    /// Ends the display with a last snapshot.
    pub(crate) fn finish(&self, s: &Snapshot) {
        match &self.bar {
            Some(bar) => {
                self.update(s);
                bar.finish();
            }
            None => crate::outln!("{}", plain_line(&self.label, self.total, s)),
        }
    }
}

/// A progress display kept up to date every 250 ms from `snapshot` until [`Ticking::finish`].
pub(crate) struct Ticking<F: Fn() -> Snapshot> {
    progress: std::sync::Arc<Progress>,
    snapshot: std::sync::Arc<F>,
    task: tokio::task::JoinHandle<()>,
}

impl<F: Fn() -> Snapshot> std::fmt::Debug for Ticking<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticking").field("progress", &self.progress).finish()
    }
}

impl<F: Fn() -> Snapshot + Send + Sync + 'static> Ticking<F> {
    /// Starts updating `progress` from `snapshot`.
    pub(crate) fn start(progress: Progress, snapshot: F) -> Self {
        let progress = std::sync::Arc::new(progress);
        let snapshot = std::sync::Arc::new(snapshot);
        let task = {
            let progress = progress.clone();
            let snapshot = snapshot.clone();
            tokio::spawn(async move {
                loop {
                    progress.update(&snapshot());
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            })
        };
        Self {
            progress,
            snapshot,
            task,
        }
    }

    /// Stops the updates and shows the last snapshot.
    pub(crate) fn finish(self) {
        self.task.abort();
        self.progress.finish(&(self.snapshot)());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_line_names_every_figure() {
        let s = Snapshot {
            elapsed: Duration::from_millis(1500),
            sent: 12,
            errors: 3,
            open: vec!["crm_search".into()],
        };
        assert_eq!(
            plain_line("smoke/retry-gate", Duration::from_secs(20), &s),
            "[smoke/retry-gate] 1.5s/20.0s sent=12 errors=3 open=crm_search"
        );
    }
}
