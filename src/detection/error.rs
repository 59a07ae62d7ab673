//! Why the detection path could not be checked, started or read. Each variant keeps its cause
//! as its `source`; the message does not repeat it (anyhow's `{:#}` at the CLI edge and
//! `util::text::chain` in a report print the whole chain once).

use std::path::PathBuf;

use crate::util::speed::Speed;

/// A query of Prometheus's HTTP API that got no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The URL built from the base did not parse.
    #[error("bad URL")]
    Url(#[from] http::uri::InvalidUri),
    /// No response head within the limit.
    #[error("no answer within {0} s")]
    NoAnswer(u64),
    /// The connection failed.
    #[error("no answer")]
    Client(#[from] hyper_util::client::legacy::Error),
    /// The body did not arrive within the limit.
    #[error("the body did not arrive within {0} s")]
    NoBody(u64),
    /// The body broke off.
    #[error("reading the body")]
    Body(#[from] hyper::Error),
    /// The answer was not JSON.
    #[error("HTTP {status}, not JSON")]
    NotJson {
        /// The response status.
        status: u16,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// Prometheus answered with an error of its own.
    #[error("HTTP {status}: {text}")]
    Refused {
        /// The response status.
        status: u16,
        /// Prometheus's `error` text.
        text: String,
    },
}

/// The detection path failed.
#[derive(Debug, thiserror::Error)]
pub enum DetectionError {
    /// A `[prometheus]` run was asked for at a compressed speed.
    #[error(
        "--speed {0}: a scenario with [prometheus] runs at speed 1 only: Prometheus's own \
         timers (the rules' `for:`, the scrape and evaluation intervals) run on the wall clock \
         and cannot be compressed, so alerts at another speed would judge a different detection \
         path"
    )]
    Speed(Speed),
    /// A program is not on PATH.
    #[error(transparent)]
    Missing(#[from] super::binaries::Missing),
    /// promtool refused a rule file.
    #[error(transparent)]
    Rules(#[from] super::promtool::RulesRejected),
    /// A file or folder of the run's detection path could not be written.
    #[error("{what} {}", path.display())]
    File {
        /// `creating`, `writing`.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No loopback port was free.
    #[error("no free loopback port")]
    Port(#[source] std::io::Error),
    /// A program could not be started.
    #[error("starting {}", exe.display())]
    Spawn {
        /// The executable.
        exe: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The webhook receiver could not be started.
    #[error("starting the webhook receiver")]
    Receiver(#[source] std::io::Error),
    /// A started program exited before it was ready.
    #[error("{name} exited at start-up ({status}); its last log lines ({}):\n{lines}", log.display())]
    ExitedAtStart {
        /// `prometheus`, `alertmanager`.
        name: &'static str,
        /// How it exited.
        status: String,
        /// Its log.
        log: PathBuf,
        /// The log's last lines.
        lines: String,
    },
    /// A started program did not answer `/-/ready` in time.
    #[error("{name} did not answer {base}/-/ready within {secs} s; its last log lines:\n{lines}")]
    NotReady {
        /// `prometheus`, `alertmanager`.
        name: &'static str,
        /// Its base URL.
        base: String,
        /// The limit, s.
        secs: u64,
        /// The log's last lines.
        lines: String,
    },
    /// The user's Prometheus (`url`) is not ready.
    #[error("[prometheus] url {0}: /-/ready did not answer 200")]
    UrlNotReady(String),
    /// The targets file could not be written.
    #[error("writing the targets file {}", path.display())]
    Targets {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A rule file could not be copied with one group per alerting rule.
    #[error("copying the rules of {} for the run's Prometheus", path.display())]
    RulesCopy {
        /// The rule file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::monitoring::RulesError,
    },
    /// A query got no usable answer.
    #[error("querying {base} for {query}")]
    Query {
        /// Prometheus's base URL.
        base: String,
        /// The query.
        query: String,
        /// Why.
        #[source]
        source: QueryError,
    },
}
