//! A Portkey gateway's process: its directory (`DIR/portkey.log` its console, `DIR/home` its
//! HOME, `DIR/tmp` its TMPDIR, `DIR/preload.cjs`), its environment cleared but for what it
//! needs (`PATH`, `HOME`, `TMPDIR`, `NODE_ENV=production`, `TRUSTED_CUSTOM_HOSTS` = loopback,
//! `NO_PROXY=*`), started as `node --require preload.cjs build/start-server.js --port=N
//! --headless` in a process group of its own (the preload binds it to 127.0.0.1), a watchdog
//! over the group; `GET /` (`AI Gateway says hey!`) waited for; then watched — a probe of
//! `GET /` every [`PROBE_EVERY`] — so a gateway whose process lives on but no longer answers
//! for [`UNANSWERED`] is down (its `uncaughtException` handler keeps a broken process alive);
//! stopped by its group's pid: SIGTERM (and SIGCONT, for a stopped one), a grace, SIGKILL.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::install::Install;
use crate::gateway::client::TurnClient;
use crate::gateway::openclaw::procs::{SeenProcess, descendants, signal_group};
use crate::util::watchdog::Watchdog;

/// How often a running gateway is probed.
const PROBE_EVERY: Duration = Duration::from_millis(500);
/// How long one probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// A gateway that answered no probe for this long is down.
const UNANSWERED: Duration = Duration::from_secs(5);
/// The stop's grace after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// The console lines quoted when it fails.
const LAST_LINES: usize = 20;

/// The preload that binds every server of the process to 127.0.0.1.
const PRELOAD: &str = include_str!("preload.cjs");

/// Why a Portkey gateway did not start.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// Its directory or files.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It could not be spawned.
    #[error("starting Portkey's gateway ({}): {source}", node.display())]
    Spawn {
        /// The node.
        node: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It exited before it answered.
    #[error("Portkey's gateway exited before it answered GET / ({status})")]
    Exited {
        /// Its exit status.
        status: String,
    },
    /// It never answered.
    #[error("Portkey's gateway did not answer GET / within {}", humantime::format_duration(*.0))]
    NeverReady(Duration),
}

/// Its files.
#[derive(Debug, Clone)]
pub struct Dirs {
    /// The arm's gateway directory.
    pub root: PathBuf,
    /// Its console (stdout and stderr).
    pub log: PathBuf,
}

/// A running Portkey gateway.
#[derive(Debug)]
pub struct Process {
    child: Option<Child>,
    pid: u32,
    port: u16,
    dirs: Dirs,
    guard: Option<Watchdog>,
    seen: Vec<SeenProcess>,
    /// Milliseconds since `t0` of the last answered probe.
    last_ok_ms: Arc<AtomicU64>,
    t0: Instant,
    watcher: Option<tokio::task::JoinHandle<()>>,
}

/// How a stop went.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// It exited within the grace after SIGTERM.
    pub graceful: bool,
    /// From SIGTERM until it was gone.
    pub took: Duration,
    /// Processes of its tree alive after the stop (should be none).
    pub survivors: Vec<u32>,
    /// Its files.
    pub dirs: Dirs,
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ProcessError {
    let path = path.to_path_buf();
    move |source| ProcessError::Io { what, path, source }
}

/// A free loopback port (bound, read, released).
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Process {
    /// Starts `install` in `dir` (created) and waits up to `ready` for `GET /`. On an error
    /// nothing of it is left running; its last lines are [`last_lines_of`] `dir`.
    pub async fn start(install: &Install, dir: &Path, ready: Duration) -> Result<Self, ProcessError> {
        let home = dir.join("home");
        let tmp = dir.join("tmp");
        for d in [&home, &tmp] {
            std::fs::create_dir_all(d).map_err(io("creating", d))?;
        }
        let preload = dir.join("preload.cjs");
        std::fs::write(&preload, PRELOAD).map_err(io("writing", &preload))?;
        let log = dir.join("portkey.log");
        let console = std::fs::File::create(&log).map_err(io("creating", &log))?;
        let console2 = console.try_clone().map_err(io("opening", &log))?;
        let port = free_port().map_err(io("finding a free port for", dir))?;
        let mut cmd = std::process::Command::new(&install.node);
        cmd.arg("--require")
            .arg(&preload)
            .arg(&install.entry)
            .arg(format!("--port={port}"))
            .arg("--headless")
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("TMPDIR", &tmp)
            .env("NODE_ENV", "production")
            .env("TRUSTED_CUSTOM_HOSTS", "127.0.0.1,localhost")
            .env("NO_PROXY", "*")
            .stdin(Stdio::null())
            .stdout(console)
            .stderr(console2);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(|source| ProcessError::Spawn {
            node: install.node.clone(),
            source,
        })?;
        let pid = child.id();
        let mut p = Self {
            child: Some(child),
            pid,
            port,
            dirs: Dirs {
                root: dir.to_path_buf(),
                log,
            },
            guard: None,
            seen: Vec::new(),
            last_ok_ms: Arc::new(AtomicU64::new(0)),
            t0: Instant::now(),
            watcher: None,
        };
        p.guard = Watchdog::guard(pid, true)
            .map_err(|e| eprintln!("warning: no watchdog over Portkey's gateway (pid {pid}): {e}"))
            .ok();
        if let Err(e) = p.wait_ready(ready).await {
            p.kill_now();
            return Err(e);
        }
        p.watch();
        Ok(p)
    }

    async fn wait_ready(&mut self, within: Duration) -> Result<(), ProcessError> {
        let probe = self.probe_client();
        let started = Instant::now();
        loop {
            self.note_tree();
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                self.child = None;
                return Err(ProcessError::Exited {
                    status: status.to_string(),
                });
            }
            if let Some(c) = &probe
                && matches!(c.status_of("/").await, Ok(200))
            {
                return Ok(());
            }
            if started.elapsed() >= within {
                return Err(ProcessError::NeverReady(within));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn probe_client(&self) -> Option<TurnClient> {
        TurnClient::bare(&self.base_url(), PROBE_TIMEOUT, Vec::new()).ok()
    }

    /// Probes `GET /` every [`PROBE_EVERY`] from now on, noting each answer.
    fn watch(&mut self) {
        let Some(probe) = self.probe_client() else {
            return;
        };
        let (last, t0) = (self.last_ok_ms.clone(), self.t0);
        last.store(ms_since(t0), Ordering::Relaxed);
        self.watcher = Some(tokio::spawn(async move {
            loop {
                if matches!(probe.status_of("/").await, Ok(200)) {
                    last.store(ms_since(t0), Ordering::Relaxed);
                }
                tokio::time::sleep(PROBE_EVERY).await;
            }
        }));
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its pid (the leader of its process group).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Why it is down, if it is: it exited, or it answered no probe for [`UNANSWERED`].
    pub fn down(&mut self) -> Option<String> {
        match self.child.as_mut().map(|c| c.try_wait()) {
            None => return Some("exited mid-run".into()),
            Some(Ok(Some(status))) => return Some(format!("exited mid-run ({status})")),
            _ => {}
        }
        silent_for(ms_since(self.t0), self.last_ok_ms.load(Ordering::Relaxed)).map(|quiet| {
            format!(
                "stopped answering mid-run: no answer to GET / for {} while its process (pid {}) \
                 still runs",
                humantime::format_duration(quiet),
                self.pid
            )
        })
    }

    /// Its last console lines.
    pub fn last_lines(&self) -> Vec<String> {
        last_lines_of(&self.dirs.log)
    }

    fn note_tree(&mut self) {
        for p in std::iter::once(self.pid).chain(descendants(self.pid)) {
            if let Some(sp) = SeenProcess::now(p)
                && !self.seen.contains(&sp)
            {
                self.seen.push(sp);
            }
        }
    }

    /// SIGTERM (and SIGCONT) to its group, up to the grace, then SIGKILL; then whatever of its
    /// tree is left.
    pub async fn stop(mut self) -> Stopped {
        self.note_tree();
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
        let started = Instant::now();
        let mut graceful = false;
        if let Some(mut child) = self.child.take() {
            signal_group(self.pid, libc::SIGTERM);
            signal_group(self.pid, libc::SIGCONT);
            while started.elapsed() < STOP_GRACE {
                if let Ok(Some(_)) = child.try_wait() {
                    graceful = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if !graceful {
                signal_group(self.pid, libc::SIGKILL);
                let _ = child.wait();
            }
        }
        signal_group(self.pid, libc::SIGKILL);
        for p in &self.seen {
            p.kill();
        }
        let mut survivors: Vec<u32> = Vec::new();
        for _ in 0..50 {
            survivors = self.seen.iter().filter(|p| p.alive()).map(|p| p.pid).collect();
            if survivors.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if let Some(g) = self.guard.take() {
            g.release();
        }
        Stopped {
            graceful,
            took: started.elapsed(),
            survivors,
            dirs: self.dirs.clone(),
        }
    }

    fn kill_now(&mut self) {
        self.note_tree();
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
        signal_group(self.pid, libc::SIGKILL);
        for p in &self.seen {
            p.kill();
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
        if let Some(g) = self.guard.take() {
            g.release();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill_now();
        }
    }
}

fn ms_since(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// How long it has been silent at `now_ms` when its last answer was at `last_ok_ms`, once that
/// reaches [`UNANSWERED`] (pure).
fn silent_for(now_ms: u64, last_ok_ms: u64) -> Option<Duration> {
    let quiet = Duration::from_millis(now_ms.saturating_sub(last_ok_ms));
    (quiet >= UNANSWERED).then_some(quiet)
}

/// The last [`LAST_LINES`] non-empty lines of a console log, its spinner's carriage returns
/// and colour codes taken out.
pub fn last_lines_of(log: &Path) -> Vec<String> {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<String> = text
        .lines()
        .map(|l| strip_ansi(l.rsplit('\r').next().unwrap_or(l)).trim_end().to_string())
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(LAST_LINES)..].to_vec()
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_is_down_only_from_the_bound_on() {
        assert_eq!(silent_for(10_000, 9_000), None);
        assert_eq!(silent_for(10_000, 5_001), None);
        assert_eq!(silent_for(10_000, 5_000), Some(Duration::from_secs(5)));
        assert_eq!(silent_for(0, 5_000), None, "a probe after now is no silence");
    }

    #[test]
    fn the_console_loses_its_spinner_and_colours() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("portkey.log");
        std::fs::write(&p, "⠋ Starting…\r⠙ Starting…\r\u{1b}[1mReady\u{1b}[0m\n\nUnhandled exception boom\n").unwrap();
        assert_eq!(last_lines_of(&p), ["Ready", "Unhandled exception boom"]);
    }
}
