//! One LiteLLM proxy process: its sandbox (a directory of its own holding its config, HOME,
//! TMPDIR and log; an environment built from nothing — no key, database, Redis or proxy
//! setting of the harness's environment reaches it — with its cost map read from the package,
//! `.env` files not read and telemetry off), started bound to 127.0.0.1 on a free port in its
//! own process group under a watchdog, its liveness path waited for, then watched
//! ([`super::watch`]) while it runs; stopped by pid (SIGTERM to its group, SIGCONT so a stopped
//! one hears it, SIGKILL after the grace), nothing left running.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::watch::{self, Watch};
use crate::gateway::openclaw::procs::{SeenProcess, descendants, signal_group};
use crate::gateway::{StartError, TurnClient};
use crate::replay::http::TargetError;
use crate::util::secrets::Scrubber;
use crate::util::sync::Locked;
use crate::util::watchdog::Watchdog;

/// The liveness path: `/health` would call every deployment (model requests the upstream
/// would record and fault).
const LIVENESS: &str = "/health/liveliness";
/// Its Prometheus exposition (`/metrics` answers 307 to it).
const METRICS: &str = "/metrics/";
/// How long it has after SIGTERM (it takes ~2 s).
const GRACE: Duration = Duration::from_secs(10);
/// How many log lines an error quotes.
const ERROR_LINES: usize = 20;

/// The environment of every process the harness runs from a LiteLLM venv, built from nothing
/// in `dir`: `PATH` (the system's directories), `HOME`, `TMPDIR`, `XDG_CACHE_HOME` inside it,
/// the cost map from the package (`LITELLM_LOCAL_MODEL_COST_MAP=True`, else the start fetches it
/// from GitHub three times), no `.env` read (`LITELLM_MODE=PRODUCTION`), no proxy for loopback.
pub(crate) fn sandbox_env(cmd: &mut Command, dir: &Path) {
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir)
        .env("TMPDIR", dir)
        .env("XDG_CACHE_HOME", dir)
        .env("LANG", "C.UTF-8")
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("LITELLM_MODE", "PRODUCTION")
        .env("LITELLM_TELEMETRY", "False")
        .env("LITELLM_DONT_SHOW_FEEDBACK_BOX", "True")
        .env("DISABLE_ADMIN_UI", "True")
        .env("NO_DOCS", "True")
        .env("NO_REDOC", "True")
        .env("NO_PROXY", "*");
}

/// The environment settings [`sandbox_env`] makes, for the report (values are not secrets).
pub(crate) const ENV_SET: &[&str] = &[
    "environment cleared (no key, DATABASE_URL, REDIS_*, proxy of the harness's reaches it)",
    "LITELLM_LOCAL_MODEL_COST_MAP=True (no cost-map fetch)",
    "LITELLM_MODE=PRODUCTION (no .env read)",
    "LITELLM_TELEMETRY=False, DISABLE_ADMIN_UI=True, NO_DOCS=True, NO_REDOC=True",
    "--host 127.0.0.1, --port free, --telemetry False",
];

/// A LiteLLM proxy the harness started.
#[derive(Debug)]
pub struct Proxy {
    child: Option<Child>,
    pid: u32,
    port: u16,
    master_key: String,
    log: PathBuf,
    seen: Vec<SeenProcess>,
    watch: Arc<Mutex<Watch>>,
    watcher: Option<tokio::task::JoinHandle<()>>,
    guard: Option<Watchdog>,
    secrets: Scrubber,
}

/// How a proxy stopped.
#[derive(Debug)]
pub struct Stopped {
    /// Exited within the grace after SIGTERM.
    pub graceful: bool,
    /// From SIGTERM to gone.
    pub took: Duration,
    /// Processes of its tree alive after the stop.
    pub survivors: Vec<u32>,
    /// Its log.
    pub log: PathBuf,
}

/// A free loopback port (bound and released: a start that loses the race exits and is tried
/// once more).
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Proxy {
    /// Starts `litellm` with `config` (JSON) in `dir`, waiting up to `ready_timeout` for its
    /// liveness path; `secrets` are scrubbed from every line it quotes.
    pub(crate) async fn start(
        litellm: &Path,
        config: &Value,
        master_key: &str,
        dir: &Path,
        ready_timeout: Duration,
        secrets: Scrubber,
    ) -> Result<Self, StartError> {
        let io = |what: &str, e: std::io::Error| StartError::new(format!("{what}: {e}"), Vec::new());
        std::fs::create_dir_all(dir).map_err(|e| io(&format!("creating {}", dir.display()), e))?;
        let config_path = dir.join("litellm-config.json");
        let text = serde_json::to_vec_pretty(config).map_err(|e| StartError::new(e, Vec::new()))?;
        std::fs::write(&config_path, text).map_err(|e| io("writing the LiteLLM config", e))?;
        let log = dir.join("litellm.log");
        let out = std::fs::File::create(&log).map_err(|e| io("creating its log", e))?;
        let err = out.try_clone().map_err(|e| io("creating its log", e))?;
        let port = free_port().map_err(|e| io("a free loopback port", e))?;
        let mut cmd = Command::new(litellm);
        cmd.arg("--config")
            .arg(&config_path)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--telemetry", "False"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        sandbox_env(&mut cmd, dir);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd
            .spawn()
            .map_err(|e| io(&format!("running {}", litellm.display()), e))?;
        let pid = child.id();
        let mut proxy = Self {
            child: Some(child),
            pid,
            port,
            master_key: master_key.to_string(),
            log,
            seen: Vec::new(),
            watch: Arc::new(Mutex::new(Watch::new(Instant::now()))),
            watcher: None,
            guard: None,
            secrets,
        };
        proxy.guard = Watchdog::guard(pid, true)
            .map_err(|e| eprintln!("warning: no watchdog over LiteLLM (pid {pid}): {e}"))
            .ok();
        proxy.wait_ready(ready_timeout).await?;
        proxy.watch_liveness();
        Ok(proxy)
    }

    /// Where its turns go.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A client with its master key.
    pub(crate) fn client(&self, timeout: Duration) -> Result<TurnClient, TargetError> {
        TurnClient::new(&self.base_url(), &self.master_key, timeout)
    }

    async fn wait_ready(&mut self, within: Duration) -> Result<(), StartError> {
        let client = self
            .client(Duration::from_secs(5))
            .map_err(|e| StartError::new(e, Vec::new()))?;
        let started = Instant::now();
        loop {
            self.note_tree();
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                let lines = self.last_lines();
                return Err(StartError::new(
                    format!("LiteLLM exited before it was ready ({status})"),
                    lines,
                )
                .exited());
            }
            if matches!(client.status_of(LIVENESS).await, Ok(s) if (200..300).contains(&s)) {
                return self.prime_metrics(within.saturating_sub(started.elapsed())).await;
            }
            if started.elapsed() >= within {
                let lines = self.last_lines();
                self.kill_now();
                return Err(StartError::new(
                    format!(
                        "LiteLLM's {LIVENESS} did not answer 2xx within {}",
                        humantime::format_duration(within)
                    ),
                    lines,
                ));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Asks for its `/metrics/` once, up to `within`: its first exposition takes seconds (2.5 s
    /// measured on a loaded 2-core machine: the prometheus callback builds its registry then),
    /// the next ones milliseconds; the run's scrapes, 2 s each, start after.
    async fn prime_metrics(&mut self, within: Duration) -> Result<(), StartError> {
        let client = self
            .client(within.max(Duration::from_secs(1)))
            .map_err(|e| StartError::new(e, Vec::new()))?;
        match client.status_of(METRICS).await {
            Ok(s) if (200..300).contains(&s) => Ok(()),
            answer => {
                let lines = self.last_lines();
                self.kill_now();
                let got = match answer {
                    Ok(s) => format!("HTTP {s}"),
                    Err(e) => crate::util::text::chain(&e),
                };
                Err(StartError::new(
                    format!("LiteLLM's {METRICS} did not answer 2xx once it was live: {got}"),
                    lines,
                ))
            }
        }
    }

    /// Asks its liveness path every [`watch::EVERY`] from now on.
    fn watch_liveness(&mut self) {
        let Ok(client) = self.client(watch::PROBE_TIMEOUT) else {
            return;
        };
        let watch = self.watch.clone();
        watch.locked().record(Instant::now(), Ok(()));
        self.watcher = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(watch::EVERY).await;
                let answer = match client.status_of(LIVENESS).await {
                    Ok(s) if (200..300).contains(&s) => Ok(()),
                    Ok(s) => Err(format!("HTTP {s}")),
                    Err(e) => Err(crate::util::text::chain(&e)),
                };
                let mut w = watch.locked();
                w.record(Instant::now(), answer);
                if w.silent().is_some() {
                    return;
                }
            }
        }));
    }

    /// Why it is no longer a working gateway: it exited, or it stopped answering.
    pub(crate) fn failure(&mut self) -> Option<String> {
        if let Some(c) = self.child.as_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            self.child = None;
            return Some(format!("exited mid-run ({status})"));
        }
        if self.child.is_none() {
            return Some("exited mid-run".into());
        }
        self.note_tree();
        self.watch.locked().silent().map(str::to_string)
    }

    /// Its last log lines, secrets scrubbed.
    pub(crate) fn last_lines(&self) -> Vec<String> {
        let text = std::fs::read(&self.log).unwrap_or_default();
        let text = self.secrets.scrub(&String::from_utf8_lossy(&text));
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(ERROR_LINES)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    /// Remembers its descendants (uvicorn workers), so the stop can check each is gone.
    fn note_tree(&mut self) {
        for pid in descendants(self.pid) {
            if !self.seen.iter().any(|s| s.pid == pid)
                && let Some(s) = SeenProcess::now(pid)
            {
                self.seen.push(s);
            }
        }
    }

    fn kill_now(&mut self) {
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
        signal_group(self.pid, libc::SIGKILL);
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for s in &self.seen {
            s.kill();
        }
        if let Some(g) = self.guard.take() {
            g.release();
        }
    }

    /// The master key its turns carry (a secret: kept files are scrubbed of it).
    pub(crate) fn master_key(&self) -> &str {
        &self.master_key
    }

    /// SIGTERM to its group (and SIGCONT: a stopped process hears nothing), up to the grace;
    /// then SIGKILL. What of its tree is still alive after is named.
    pub(crate) async fn stop(mut self) -> Stopped {
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
        self.note_tree();
        let t0 = Instant::now();
        signal_group(self.pid, libc::SIGTERM);
        signal_group(self.pid, libc::SIGCONT);
        let mut graceful = false;
        while t0.elapsed() < GRACE {
            match self.child.as_mut().map(Child::try_wait) {
                Some(Ok(Some(_))) | None | Some(Err(_)) => {
                    graceful = true;
                    break;
                }
                Some(Ok(None)) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        if !graceful {
            signal_group(self.pid, libc::SIGKILL);
        }
        if let Some(mut c) = self.child.take() {
            if !graceful {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
        // Its children get the same signals (one group); give them the same grace, then kill.
        let until = Instant::now() + Duration::from_secs(3);
        while self.seen.iter().any(SeenProcess::alive) && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for s in &self.seen {
            s.kill();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let survivors = self
            .seen
            .iter()
            .filter(|s| s.alive())
            .map(|s| s.pid)
            .collect();
        if let Some(g) = self.guard.take() {
            g.release();
        }
        Stopped {
            graceful,
            took: t0.elapsed(),
            survivors,
            log: self.log.clone(),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill_now();
        }
    }
}
