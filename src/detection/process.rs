//! One program the detection path starts (Prometheus, Alertmanager): its stdout and stderr to
//! a log file in the run directory, its own process group (a Ctrl-C to the run stops the run,
//! which then stops it, rather than killing it first), a watchdog that stops it should the run
//! die (`crate::util::watchdog`), whether it exited, its last log lines, and its stop by pid:
//! SIGTERM, SIGKILL after a grace.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

use crate::util::watchdog::Watchdog;

/// How long a program has after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A started program.
#[derive(Debug)]
pub(crate) struct Supervised {
    name: &'static str,
    child: Option<Child>,
    guard: Option<Watchdog>,
    log: PathBuf,
}

impl Supervised {
    /// Starts `program` with `args`, logging into `log`.
    pub(crate) fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        log: &Path,
    ) -> std::io::Result<Self> {
        let out = std::fs::File::create(log)?;
        let err = out.try_clone()?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err));
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn()?;
        let guard = Watchdog::guard(child.id(), false)
            .map_err(|e| crate::errln!("warning: no watchdog over {name}: {e}"))
            .ok();
        Ok(Self {
            name,
            child: Some(child),
            guard,
            log: log.to_path_buf(),
        })
    }

    /// Its name (`prometheus`, `alertmanager`).
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Its pid while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// How it exited, once it has (reaped); `None` while it runs.
    pub(crate) fn exited(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("unknown ({e})")),
        }
    }

    /// The last `n` lines of its log.
    pub(crate) fn last_lines(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Its log file.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// Stops it by its pid (SIGTERM, then SIGKILL after a grace) and reaps it.
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if matches!(child.try_wait(), Ok(None)) {
                crate::util::proc::signal_pid(child.id(), libc::SIGTERM);
                let until = Instant::now() + STOP_GRACE;
                while Instant::now() < until && matches!(child.try_wait(), Ok(None)) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                let _ = child.kill();
            }
            let _ = child.wait();
        }
        if let Some(g) = self.guard.take() {
            g.release();
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop();
    }
}
