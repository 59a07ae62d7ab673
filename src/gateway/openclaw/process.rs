//! The gateway's lifecycle: write `openclaw.json`, seed each profile's key with
//! `openclaw models auth paste-api-key` (stdin) and put `auth.order` back, start
//! `openclaw gateway run --port P --bind loopback --auth token --token T` in a process group of
//! its own, wait until `GET /health` says `"ok":true`, and stop it: SIGTERM to the group, a
//! bounded grace, SIGKILL (its drain otherwise waits up to 315 s for connected clients — the
//! [`TurnClient`] keeps none idle). Dropping a [`Gateway`] that was not stopped kills it.

use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::Duration;

use rand::RngCore;
use tokio::time::Instant;

use crate::gateway::client::TurnClient;
use super::config::{GatewayConfig, GatewaySettings, restore_order, write_config};
use super::overlay::{Overlaid, fingerprinted, overlay};
use super::errors::{GatewayError, GatewayOptions, io};
use super::install::Install;
use super::log::{LoggedDecision, last_messages, read_log};
use super::procs::{SeenProcess, descendants, signal_group};
use super::sandbox::{GatewayDirs, Sandbox, TmpIsolation, TmpRecord};
use super::seed::{seed_profiles, tail};
use super::state::{AuthState, StateError, database_path, read_auth_state};
use crate::util::watchdog::Watchdog;

/// A running OpenClaw gateway.
#[derive(Debug)]
pub struct Gateway {
    child: Option<Child>,
    pid: u32,
    port: u16,
    token: String,
    sandbox: Sandbox,
    node: PathBuf,
    tmp_before: Option<TmpRecord>,
    options: GatewayOptions,
    /// Every process seen in its tree while it ran (to check nothing is left).
    seen: Vec<SeenProcess>,
    /// Stops its process group if the run dies without stopping it (a SIGKILL of the run).
    guard: Option<Watchdog>,
    /// What was laid over the user's configuration, when it was the base.
    overlaid: Option<Overlaid>,
    /// The profile keys (for fingerprinting the effective configuration).
    keys: Keys,
}

/// Profile keys, shown by fingerprint only.
struct Keys(Vec<String>);

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|k| crate::util::fingerprint(k)))
            .finish()
    }
}

/// How a stop went, and what the gateway left.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// It exited within the grace after SIGTERM.
    pub graceful: bool,
    /// From SIGTERM until it was gone.
    pub took: Duration,
    /// Its exit status.
    pub status: Option<String>,
    /// Processes of its tree still alive after the stop (should be empty).
    pub survivors: Vec<u32>,
    /// `/tmp/openclaw*` entries it created, when it ran without a namespace.
    pub left_in_tmp: Vec<PathBuf>,
    /// Its directories.
    pub dirs: GatewayDirs,
    /// How `/tmp` was contained.
    pub isolation: TmpIsolation,
    node: PathBuf,
}

impl Stopped {
    /// Its decisions, from its log.
    pub fn decisions(&self) -> std::io::Result<Vec<LoggedDecision>> {
        read_log(&self.dirs.log)
    }

    /// How many lines its log holds: what its decisions were read from (a log that holds no
    /// line showed no decision because it showed nothing).
    pub fn log_lines(&self) -> std::io::Result<u64> {
        let bytes = std::fs::read(&self.dirs.log)?;
        Ok(bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count() as u64)
    }

    /// Its auth-profile state (read-only, after the stop).
    pub fn auth_state(&self) -> Result<AuthState, StateError> {
        read_auth_state(&self.node, &database_path(&self.dirs.state))
    }
}

/// A free loopback port (bound and released; the gateway binds it moments later).
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn random_token() -> String {
    let mut b = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut b);
    format!("rehearse-{}", hex::encode(b))
}

impl Gateway {
    /// Sets up a fresh gateway in `run_dir/openclaw/`, seeds its keys, starts it and waits
    /// until it is healthy. On any error nothing is left running.
    pub async fn start(
        install: &Install,
        config: &GatewayConfig,
        run_dir: &Path,
        options: GatewayOptions,
    ) -> Result<Self, GatewayError> {
        config
            .validate()
            .map_err(|e| GatewayError::Config(e.into()))?;
        let dirs = GatewayDirs::create(run_dir).map_err(io("creating", run_dir))?;
        let isolation = TmpIsolation::detect(options.isolate_tmp);
        let sandbox = Sandbox::new(dirs.clone(), isolation, &install.openclaw, &install.node);
        let tmp_before = (isolation == TmpIsolation::None).then(TmpRecord::now);
        let port = match options.port {
            0 => free_port().map_err(io("finding a free port for", &dirs.root))?,
            p => p,
        };
        let settings = GatewaySettings {
            port,
            token: random_token(),
            log_file: dirs.log.clone(),
        };
        let generated = config.to_json(&settings);
        let (effective, overlaid) = match &options.base {
            Some(b) => {
                let o = overlay(&b.user.value, &generated, b.options);
                (o.config.clone(), Some(o))
            }
            None => (generated, None),
        };
        write_config(&dirs.config, &effective).map_err(io("writing", &dirs.config))?;
        let secrets: Vec<&str> = config.profiles.iter().map(|p| p.key.as_str()).collect();
        seed_profiles(&sandbox, &install.node, &config.profiles, &options, &secrets).await?;
        restore_order(&dirs.config, &config.order()).map_err(io("rewriting", &dirs.config))?;
        let console =
            std::fs::File::create(&dirs.console).map_err(io("creating", &dirs.console))?;
        let console2 = console.try_clone().map_err(io("opening", &dirs.console))?;
        let port_arg = port.to_string();
        let mut cmd = sandbox.command(&[
            "gateway",
            "run",
            "--port",
            &port_arg,
            "--bind",
            "loopback",
            "--auth",
            "token",
            "--token",
            &settings.token,
        ]);
        cmd.stdin(Stdio::null()).stdout(console).stderr(console2);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(|source| GatewayError::Spawn {
            what: "openclaw gateway run".into(),
            source,
        })?;
        let mut gw = Self {
            pid: child.id(),
            child: Some(child),
            port,
            token: settings.token,
            sandbox,
            node: install.node.clone(),
            tmp_before,
            options,
            seen: Vec::new(),
            guard: None,
            overlaid,
            keys: Keys(config.profiles.iter().map(|p| p.key.clone()).collect()),
        };
        gw.guard = Watchdog::guard(gw.pid, true)
            .map_err(|e| {
                eprintln!(
                    "warning: no watchdog over the gateway (pid {}): {e}",
                    gw.pid
                )
            })
            .ok();
        gw.wait_ready().await?;
        Ok(gw)
    }

    async fn wait_ready(&mut self) -> Result<(), GatewayError> {
        let client = self.client().map_err(|e| GatewayError::Config(e.into()))?;
        let started = Instant::now();
        loop {
            self.note_tree();
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(GatewayError::Exited {
                    status: status.to_string(),
                    last_lines: self.last_lines(),
                });
            }
            if client.healthy().await {
                return Ok(());
            }
            if started.elapsed() >= self.options.ready_timeout {
                let last_lines = self.last_lines();
                self.kill_now();
                return Err(GatewayError::NeverHealthy {
                    waited: self.options.ready_timeout,
                    last_lines,
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The gateway's last log lines: its JSON log if it wrote one, else its console output.
    pub fn last_lines(&self) -> Vec<String> {
        let n = self.options.error_lines;
        let log = std::fs::read(&self.sandbox.dirs.log).unwrap_or_default();
        let mut lines = last_messages(&String::from_utf8_lossy(&log), n);
        if lines.is_empty() {
            lines = tail(&self.sandbox.dirs.console, n, &[]);
        }
        let scrubber = crate::util::secrets::Scrubber::fingerprinting([self.token.as_str()]);
        lines.iter().map(|l| scrubber.scrub(l)).collect()
    }

    /// Records the processes of its tree now (for [`Stopped::survivors`]).
    fn note_tree(&mut self) {
        for p in descendants(self.pid) {
            if let Some(sp) = SeenProcess::now(p)
                && !self.seen.contains(&sp)
            {
                self.seen.push(sp);
            }
        }
    }

    /// A client for turns and health checks (no keep-alive).
    pub fn client(&self) -> Result<TurnClient, crate::replay::http::TargetError> {
        TurnClient::new(&self.base_url(), &self.token, self.options.turn_timeout)
    }

    /// What the harness laid over the user's configuration (`[target] config`), if any.
    pub fn overlaid(&self) -> Option<&Overlaid> {
        self.overlaid.as_ref()
    }

    /// The configuration it runs with (`openclaw.json` after its keys were seeded), every
    /// token and key replaced by its fingerprint.
    pub fn effective_config(&self) -> std::io::Result<serde_json::Value> {
        let text = std::fs::read(&self.sandbox.dirs.config)?;
        let v: serde_json::Value = serde_json::from_slice(&text).map_err(std::io::Error::other)?;
        let mut secrets: Vec<&str> = self.keys.0.iter().map(String::as_str).collect();
        secrets.push(&self.token);
        Ok(fingerprinted(&v, &secrets))
    }

    /// Its bearer token (for a caller that drives it by URL, as a `kind = "http"` target).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How `/tmp` is contained.
    pub fn isolation(&self) -> TmpIsolation {
        self.sandbox.isolation
    }

    /// Every process of its tree seen so far, itself first (check them with
    /// [`SeenProcess::alive`], which a recycled pid does not fool).
    pub fn processes(&mut self) -> Vec<SeenProcess> {
        self.note_tree();
        SeenProcess::now(self.pid)
            .into_iter()
            .chain(self.seen.iter().cloned())
            .collect()
    }

    /// Whether it is still running.
    pub(crate) fn running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// SIGTERM to its group, up to the grace, then SIGKILL; then whatever of its tree is left.
    /// Close (drop) its clients first: OpenClaw's drain waits for connected ones.
    pub async fn stop(mut self) -> Stopped {
        self.note_tree();
        let started = Instant::now();
        let mut graceful = false;
        let mut status: Option<ExitStatus> = None;
        if let Some(mut child) = self.child.take() {
            signal_group(self.pid, libc::SIGTERM);
            while started.elapsed() < self.options.stop_grace {
                if let Ok(Some(s)) = child.try_wait() {
                    status = Some(s);
                    graceful = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if status.is_none() {
                signal_group(self.pid, libc::SIGKILL);
                status = child.wait().ok();
            }
        }
        let survivors = self.kill_tree_leftovers().await;
        if let Some(g) = self.guard.take() {
            g.release();
        }
        let left_in_tmp = self
            .tmp_before
            .as_ref()
            .map(TmpRecord::left_behind)
            .unwrap_or_default();
        Stopped {
            graceful,
            took: started.elapsed(),
            status: status.map(|s| s.to_string()),
            survivors,
            left_in_tmp,
            dirs: self.sandbox.dirs.clone(),
            isolation: self.sandbox.isolation,
            node: self.node.clone(),
        }
    }

    /// SIGKILLs what is left of its tree (workers in groups of their own, anything still in
    /// its group); returns what still runs five seconds later. The spawned process itself was
    /// reaped by [`Gateway::stop`].
    async fn kill_tree_leftovers(&mut self) -> Vec<u32> {
        let alive = |seen: &[SeenProcess]| -> Vec<u32> {
            seen.iter().filter(|p| p.alive()).map(|p| p.pid).collect()
        };
        signal_group(self.pid, libc::SIGKILL);
        for p in &self.seen {
            p.kill();
        }
        for _ in 0..50 {
            if alive(&self.seen).is_empty() {
                return Vec::new();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        alive(&self.seen)
    }

    fn kill_now(&mut self) {
        self.note_tree();
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

impl Drop for Gateway {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill_now();
        }
    }
}
