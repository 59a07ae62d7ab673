//! A watchdog for a program the run starts and must not leave behind (its own redis-server, the
//! OpenClaw gateway): `rehearse __watchdog --pid N [--group]`, a small process in its own process
//! group whose stdin is a pipe the run holds. A run that ends normally stops the program itself
//! and then says `done` ([`Watchdog::release`], also on drop); a run that dies any other way —
//! SIGKILL included, where nothing of the run gets to clean up — closes the pipe, and the
//! watchdog stops the program: SIGTERM (to its process group with `--group`), SIGKILL after
//! [`GRACE`], then exits. The program's pid stays valid meanwhile: it is the dead run's child,
//! reparented and not reaped until it exits.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

use super::proc::{group_alive, pid_alive, self_exe, signal_group, signal_pid};

/// How long the program has after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// A running watchdog over one program.
#[derive(Debug)]
pub(crate) struct Watchdog {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts a watchdog over `pid` (its whole process group when `group`, for a program started
    /// with `process_group(0)` whose children must go too).
    pub(crate) fn guard(pid: u32, group: bool) -> std::io::Result<Self> {
        let mut cmd = Command::new(self_exe()?);
        cmd.arg("__watchdog").arg("--pid").arg(pid.to_string());
        if group {
            cmd.arg("--group");
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own group: a Ctrl-C to the run's group must not take the watchdog first.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        Ok(Self {
            child: Some(child),
            stdin,
        })
    }

    /// The run stopped the program itself: the watchdog exits without touching it.
    pub(crate) fn release(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.write_all(b"done\n");
        }
        // It exits at once on `done`; reap it off this thread, never blocking the caller (an
        // async task stopping its redis-server, say). Without a thread, init reaps it once this
        // process exits.
        if let Some(mut child) = self.child.take()
            && !matches!(child.try_wait(), Ok(Some(_)))
        {
            let _ = std::thread::Builder::new()
                .name("rehearse-watchdog-reaper".into())
                .spawn(move || {
                    let _ = child.wait();
                });
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            self.finish();
        }
    }
}

/// What the watchdog does when its stdin ends: `done` first means nothing.
fn released(input: impl BufRead) -> bool {
    input
        .lines()
        .map_while(Result::ok)
        .any(|l| l.trim() == "done")
}

/// The body of `rehearse __watchdog`: waits for `done` or the end of stdin, then (without
/// `done`) stops `pid` or its group. Always exits 0.
pub(crate) fn command(pid: u32, group: bool) {
    if released(BufReader::new(std::io::stdin())) {
        return;
    }
    let signal = |sig| {
        if group {
            signal_group(pid, sig)
        } else {
            signal_pid(pid, sig)
        }
    };
    let alive = || {
        if group {
            group_alive(pid)
        } else {
            pid_alive(pid)
        }
    };
    if !signal(libc::SIGTERM) {
        return;
    }
    let until = Instant::now() + GRACE;
    while Instant::now() < until {
        if !alive() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(libc::SIGKILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_done_line_releases() {
        assert!(released(&b"done\n"[..]));
        assert!(released(&b"noise\n done \n"[..]));
        assert!(!released(&b""[..]), "end of input without done");
        assert!(!released(&b"don\n"[..]));
    }
}
