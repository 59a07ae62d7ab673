//! The scraper of an in-process run: GET the engine's `/metrics` every `scrape_interval`, append
//! every raw scrape to `scrapes.prom` after a `# scrape t_ms=N` line, parse it with the project's
//! strict parser, and take one final scrape when told to stop.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior, interval, timeout};

use crate::scrape::{Exposition, parse};

/// Longest a single scrape may take.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// Raw scrapes appended to `scrapes.prom`.
#[derive(Debug)]
pub struct ScrapeFile(Mutex<File>);

impl ScrapeFile {
    /// Opens (appending) `path`.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let f = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self(Mutex::new(f)))
    }

    fn append(&self, t_ms: u64, policy: &str, text: &str) -> std::io::Result<()> {
        let mut out = format!("# scrape t_ms={t_ms} policy={policy}\n");
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
        let mut f = match self.0.lock() {
            Ok(f) => f,
            Err(poisoned) => poisoned.into_inner(),
        };
        f.write_all(out.as_bytes())
    }
}

/// Every scrape of one policy run.
#[derive(Debug, Default)]
pub struct ScrapeLog {
    /// (ms since run start when the scrape arrived, parsed exposition), in time order.
    pub scrapes: Vec<(u64, Exposition)>,
    /// Successful scrapes.
    pub ok: u64,
    /// Failed scrapes (connection, status, parse).
    pub failures: u64,
    /// The last failure.
    pub last_error: Option<String>,
}

impl ScrapeLog {
    /// The last successful scrape.
    pub fn last(&self) -> Option<&Exposition> {
        self.scrapes.last().map(|s| &s.1)
    }
}

/// Scrapes `addr`'s `/metrics` from now until `stop` turns true, then once more.
pub async fn run(
    addr: SocketAddr,
    start: Instant,
    every: Duration,
    file: &ScrapeFile,
    policy: &str,
    mut stop: watch::Receiver<bool>,
) -> ScrapeLog {
    let client: Client<HttpConnector, Empty<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let mut log = ScrapeLog::default();
    let mut tick = interval(every);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => break,
        }
        once(&client, addr, start, file, policy, &mut log).await;
    }
    once(&client, addr, start, file, policy, &mut log).await;
    log
}

async fn once(
    client: &Client<HttpConnector, Empty<Bytes>>,
    addr: SocketAddr,
    start: Instant,
    file: &ScrapeFile,
    policy: &str,
    log: &mut ScrapeLog,
) {
    match fetch(client, addr).await {
        Ok(text) => {
            let t_ms = start.elapsed().as_millis() as u64;
            if let Err(e) = file.append(t_ms, policy, &text) {
                log.last_error = Some(format!("writing scrapes.prom: {e}"));
            }
            match parse(&text) {
                Ok(exp) => {
                    log.ok += 1;
                    log.scrapes.push((t_ms, exp));
                }
                Err(e) => {
                    log.failures += 1;
                    log.last_error = Some(format!("parse at t_ms={t_ms}: {e}"));
                }
            }
        }
        Err(e) => {
            log.failures += 1;
            log.last_error = Some(e);
        }
    }
}

async fn fetch(client: &Client<HttpConnector, Empty<Bytes>>, addr: SocketAddr) -> Result<String, String> {
    let uri: hyper::Uri = format!("http://{addr}/metrics")
        .parse()
        .map_err(|e| format!("bad metrics URL: {e}"))?;
    let fut = async {
        let resp = client.get(uri).await.map_err(|e| format!("GET /metrics: {e}"))?;
        let status = resp.status();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("GET /metrics body: {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("GET /metrics: status {status}"));
        }
        String::from_utf8(body.to_vec()).map_err(|_| "GET /metrics: body is not UTF-8".to_string())
    };
    timeout(SCRAPE_TIMEOUT, fut)
        .await
        .map_err(|_| "GET /metrics: timed out".to_string())?
}
