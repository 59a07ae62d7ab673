//! The real Prometheus tools for the monitoring tests: finding `promtool`, `amtool` and
//! `prometheus` on PATH (a test fails, saying how to install them, when one is missing), a
//! `prometheus` server on a free loopback port stopped by pid on drop, and its HTTP API.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How to install each tool, for the failure message.
fn install_hint(name: &str) -> &'static str {
    match name {
        "amtool" | "prometheus-alertmanager" | "alertmanager" => {
            "install Alertmanager: `apt-get install prometheus-alertmanager` (Debian, ships amtool) \
             or `brew install alertmanager`"
        }
        _ => {
            "install Prometheus: `apt-get install prometheus` (Debian, ships promtool) or \
             `brew install prometheus`"
        }
    }
}

/// The first of `names` found on PATH; panics (the test fails, it does not skip) naming how to
/// install it.
pub fn tool(names: &[&str]) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in names {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "`{}` not found on PATH: {} (.ci/test installs it)",
        names[0],
        install_hint(names[0])
    )
}

/// Runs `program args` in `cwd`; (success, stdout + stderr).
pub fn run(program: &Path, args: &[&str], cwd: &Path) -> (bool, String) {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("spawning {}: {e}", program.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A `prometheus` serving `data` (a TSDB directory) on a free loopback port; stopped by pid
/// (SIGTERM, then SIGKILL) when dropped.
pub struct Prometheus {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    log: PathBuf,
}

impl Prometheus {
    /// Starts Prometheus on `data` with an empty scrape config and waits until `/-/ready`.
    pub fn start(data: &Path, work: &Path) -> Self {
        Self::start_with("global:\n  evaluation_interval: 1m\n", data, work)
    }

    /// Starts Prometheus on `data` with `config` (its text, written to `work/prometheus.yml`)
    /// and waits until `/-/ready`.
    pub fn start_with(config_text: &str, data: &Path, work: &Path) -> Self {
        Self::start_on_port(|_| config_text.to_string(), data, work)
    }

    /// [`Prometheus::start_with`] with the config made from the port it will listen on (a
    /// Prometheus that scrapes itself).
    pub fn start_on_port(config: impl FnOnce(u16) -> String, data: &Path, work: &Path) -> Self {
        let bin = tool(&["prometheus"]);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let config_text = config(port);
        let config = work.join("prometheus.yml");
        std::fs::write(&config, config_text).expect("config");
        let log = work.join("prometheus.log");
        let log_file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg("--storage.tsdb.retention.time=10y")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .expect("spawn prometheus");
        let mut p = Self { child, port, log };
        // Up to 60 s (300 × 200 ms).
        for _ in 0..300 {
            if let Ok(Some(status)) = p.child.try_wait() {
                panic!("prometheus exited at start ({status}):\n{}", p.log_text());
            }
            if p.get("/-/ready").is_some_and(|(s, _)| s == 200) {
                return p;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("prometheus not ready in 60 s:\n{}", p.log_text())
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `GET path` (HTTP/1.0: the body ends at EOF); (status, body), `None` when unreachable.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut raw = String::new();
        s.read_to_string(&mut raw).ok()?;
        let (head, body) = raw.split_once("\r\n\r\n")?;
        let status = head.split(' ').nth(1)?.parse().ok()?;
        Some((status, body.to_string()))
    }

    /// `GET /api/v1/{endpoint}?{params}` (values percent-encoded), the JSON answer; panics on
    /// an HTTP or API error, naming `what`.
    pub fn api(&self, endpoint: &str, params: &[(&str, &str)], what: &str) -> serde_json::Value {
        use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
        let query: Vec<String> = params
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    utf8_percent_encode(k, NON_ALPHANUMERIC),
                    utf8_percent_encode(v, NON_ALPHANUMERIC)
                )
            })
            .collect();
        let path = format!("/api/v1/{endpoint}?{}", query.join("&"));
        let (status, body) = self
            .get(&path)
            .unwrap_or_else(|| panic!("{what}: prometheus unreachable\n{}", self.log_text()));
        let v: serde_json::Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {body}"));
        assert!(
            status == 200 && v["status"] == "success",
            "{what}: HTTP {status}: {body}"
        );
        v
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: `pid` is our own child, not yet reaped (it cannot have been reused).
        unsafe { libc::kill(pid, libc::SIGTERM) };
        // Up to 10 s (200 × 50 ms) for it to stop, then SIGKILL.
        for _ in 0..200 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
