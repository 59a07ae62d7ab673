//! The periodic `/metrics` scraper. It GETs the URL every `interval` on tokio's clock (missed
//! ticks are delayed, never bunched), stamps each scrape with ms since the run start, hands the
//! raw text and the parsed form to a [`ScrapeSink`], and takes one final scrape when the stop
//! future completes. Each GET is [`super::fetch::get`]: redirects followed on the same origin
//! only, a bearer token ([`Scraper::with_bearer`]) never sent anywhere else. A failed scrape (connection, timeout, status, parse) is recorded and
//! counted, never fatal: the run goes on and the report says how many scrapes failed.
//!
//! [`ScrapeLog`] is the sink that keeps every scrape (tests, and `scrapes.prom.gz` read back); a run
//! streams its scrapes to `scrapes.prom.gz` and keeps only a [`super::CompactScrapes`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::time::{Instant, MissedTickBehavior};

use super::parse::{Exposition, parse};

/// Where and how often to scrape.
#[derive(Debug, Clone)]
pub struct ScraperConfig {
    /// The full URL, e.g. `http://127.0.0.1:9100/metrics` (see [`metrics_url`]).
    pub url: http::Uri,
    /// Time between scrapes (already divided by speed, if the caller wants that).
    pub interval: Duration,
    /// The run start; `t_ms` counts from here.
    pub start: Instant,
    /// Per-scrape timeout.
    pub timeout: Duration,
}

/// `http://ADDR/metrics`.
pub fn metrics_url(addr: SocketAddr) -> http::Uri {
    // ok: a socket address always forms a valid authority.
    format!("http://{addr}/metrics")
        .parse()
        .unwrap_or_else(|_| http::Uri::from_static("http://127.0.0.1/metrics"))
}

/// One successful HTTP scrape.
#[derive(Debug, Clone)]
pub struct Scrape {
    /// Ms since the run start when the body was fully read.
    pub t_ms: u64,
    /// The raw body.
    pub text: String,
    /// The parsed exposition (None when it did not parse; the error is in the log).
    pub parsed: Option<Arc<Exposition>>,
}

/// Where a scraper puts what it fetched, one scrape at a time.
pub trait ScrapeSink: Send {
    /// A scrape that returned 200, `t_ms` after the run start: its raw text and, when it parsed,
    /// the exposition (a parse error is reported to [`ScrapeSink::failure`] as well).
    fn scrape(&mut self, t_ms: u64, text: &str, parsed: Option<&Arc<Exposition>>);
    /// A failed scrape (connection, timeout, status, body or parse error).
    fn failure(&mut self, t_ms: u64, error: &str);
}

/// Both sinks get every scrape and failure (e.g. `scrapes.prom` and the compact timeline).
impl<A: ScrapeSink, B: ScrapeSink> ScrapeSink for (A, B) {
    fn scrape(&mut self, t_ms: u64, text: &str, parsed: Option<&Arc<Exposition>>) {
        self.0.scrape(t_ms, text, parsed);
        self.1.scrape(t_ms, text, parsed);
    }

    fn failure(&mut self, t_ms: u64, error: &str) {
        self.0.failure(t_ms, error);
        self.1.failure(t_ms, error);
    }
}

/// Every scrape, kept whole (its memory grows with the run: for tests and files read back).
#[derive(Debug, Clone, Default)]
pub struct ScrapeLog {
    /// Scrapes that returned 200, in time order (including ones that failed to parse).
    pub scrapes: Vec<Scrape>,
    /// Scrapes that returned 200 and parsed.
    pub ok: u64,
    /// Failed scrapes (connection, timeout, status, body or parse errors).
    pub failures: u64,
    /// The last failure, prefixed with its `t_ms`.
    pub last_error: Option<String>,
}

impl ScrapeLog {
    /// The `scrapes.prom` text: each raw scrape after a `# scrape t_ms=N` line.
    pub fn to_prom(&self) -> String {
        let mut out = String::new();
        for s in &self.scrapes {
            out.push_str(&format!("# scrape t_ms={}\n", s.t_ms));
            out.push_str(&s.text);
            if !s.text.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }

    /// Reads a `scrapes.prom` text back (the inverse of [`ScrapeLog::to_prom`]). Every chunk
    /// must parse; errors name the line and column in the whole file. A header may carry extra
    /// tokens after the time (`# scrape t_ms=250 policy=legacy`); they are ignored.
    pub fn from_prom(text: &str) -> Result<ScrapeLog, super::ParseError> {
        let mut log = ScrapeLog::default();
        let mut chunk: Option<(u64, usize, String)> = None;
        let finish = |c: Option<(u64, usize, String)>,
                      log: &mut ScrapeLog|
         -> Result<(), super::ParseError> {
            if let Some((t_ms, first_line, text)) = c {
                let e = parse(&text).map_err(|mut e| {
                    e.line += first_line;
                    e
                })?;
                log.ok += 1;
                log.scrapes.push(Scrape {
                    t_ms,
                    text,
                    parsed: Some(Arc::new(e)),
                });
            }
            Ok(())
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(t) = line.strip_prefix("# scrape t_ms=") {
                finish(chunk.take(), &mut log)?;
                // Extra `key=value` tokens after the time (e.g. `policy=legacy`) are ignored.
                let t_ms = t
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .parse()
                    .map_err(|_| super::ParseError {
                        line: i + 1,
                        col: 15,
                        msg: "t_ms is not an integer".into(),
                    })?;
                chunk = Some((t_ms, i + 1, String::new()));
            } else if let Some((_, _, text)) = chunk.as_mut() {
                text.push_str(line);
                text.push('\n');
            } else if !line.trim().is_empty() {
                return Err(super::ParseError {
                    line: i + 1,
                    col: 1,
                    msg: "expected `# scrape t_ms=N` first".into(),
                });
            }
        }
        finish(chunk.take(), &mut log)?;
        Ok(log)
    }

    /// `(t_ms, exposition)` of every parsed scrape, for [`super::timeline::derive`].
    pub fn parsed(&self) -> Vec<(u64, &Exposition)> {
        self.scrapes
            .iter()
            .filter_map(|s| s.parsed.as_deref().map(|e| (s.t_ms, e)))
            .collect()
    }

    /// The last parsed scrape (the "final scrape" of the diff).
    pub fn last_parsed(&self) -> Option<&Exposition> {
        self.scrapes.iter().rev().find_map(|s| s.parsed.as_deref())
    }
}

impl ScrapeSink for ScrapeLog {
    fn scrape(&mut self, t_ms: u64, text: &str, parsed: Option<&Arc<Exposition>>) {
        self.ok += u64::from(parsed.is_some());
        self.scrapes.push(Scrape {
            t_ms,
            text: text.to_string(),
            parsed: parsed.cloned(),
        });
    }

    fn failure(&mut self, t_ms: u64, error: &str) {
        self.failures += 1;
        self.last_error = Some(format!("t_ms={t_ms}: {error}"));
    }
}

/// The latest parsed scrape, shared with a progress display.
#[derive(Debug, Clone, Default)]
pub struct Latest(Arc<Mutex<Option<Arc<Exposition>>>>);

impl Latest {
    /// The most recent parsed exposition, if any.
    pub fn get(&self) -> Option<Arc<Exposition>> {
        self.0.lock().map(|g| g.clone()).unwrap_or(None)
    }

    fn set(&self, e: Arc<Exposition>) {
        if let Ok(mut g) = self.0.lock() {
            *g = Some(e);
        }
    }
}

/// A scraper; see the module docs.
#[derive(Debug)]
pub struct Scraper {
    cfg: ScraperConfig,
    client: Client<HttpConnector, Empty<Bytes>>,
    latest: Latest,
    /// Sent with every scrape (`[target] metrics_token_env`).
    bearer: Option<super::fetch::Bearer>,
}

impl Scraper {
    /// A scraper for `cfg` (no I/O until [`Scraper::run`]).
    pub fn new(cfg: ScraperConfig) -> Self {
        let client = Client::builder(TokioExecutor::new()).build_http();
        Self {
            cfg,
            client,
            latest: Latest::default(),
            bearer: None,
        }
    }

    /// The same scraper sending `bearer` (`Authorization: Bearer …`) with every scrape, to the
    /// URL's origin only.
    pub fn with_bearer(mut self, bearer: Option<super::fetch::Bearer>) -> Self {
        self.bearer = bearer;
        self
    }

    /// What it scrapes.
    pub(crate) fn url(&self) -> &http::Uri {
        &self.cfg.url
    }

    /// The same scraper with its `t_ms` counted from `start` (an external run's clock starts
    /// after its warm-up's baseline scrape).
    pub(crate) fn starting_at(mut self, start: Instant) -> Self {
        self.cfg.start = start;
        self
    }

    /// A handle on the latest parsed scrape.
    pub fn latest(&self) -> Latest {
        self.latest.clone()
    }

    /// Scrapes every interval until `stop` completes, then once more, and returns the log.
    pub async fn run(&self, stop: impl Future<Output = ()>) -> ScrapeLog {
        self.run_into(ScrapeLog::default(), stop).await
    }

    /// Scrapes every interval into `sink` until `stop` completes, then once more; returns it.
    pub(crate) async fn run_into<S: ScrapeSink>(&self, mut sink: S, stop: impl Future<Output = ()>) -> S {
        let mut ticker = tokio::time::interval(self.cfg.interval.max(Duration::from_millis(1)));
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                biased;
                _ = &mut stop => break,
                _ = ticker.tick() => self.scrape_into(&mut sink).await,
            }
        }
        self.scrape_into(&mut sink).await;
        sink
    }

    /// Takes one scrape now and hands it (or the failure) to `sink`.
    pub(crate) async fn scrape_into(&self, sink: &mut impl ScrapeSink) {
        let res = tokio::time::timeout(self.cfg.timeout, self.fetch()).await;
        let t_ms = Instant::now()
            .saturating_duration_since(self.cfg.start)
            .as_millis() as u64;
        let text = match res {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => return sink.failure(t_ms, &e.to_string()),
            Err(_) => {
                let e = format!("timed out after {:?}", self.cfg.timeout);
                return sink.failure(t_ms, &e);
            }
        };
        match parse(&text) {
            Ok(e) => {
                let e = Arc::new(e);
                self.latest.set(e.clone());
                sink.scrape(t_ms, &text, Some(&e));
            }
            Err(e) => {
                sink.scrape(t_ms, &text, None);
                sink.failure(t_ms, &format!("exposition parse error at {e}"));
            }
        }
    }

    async fn fetch(&self) -> Result<String, super::fetch::FetchError> {
        super::fetch::get(&self.client, &self.cfg.url, self.bearer.as_ref()).await
    }
}
