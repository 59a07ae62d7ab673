//! The connector of the harness's own upstream sockets: hyper-util's
//! `HttpConnector` for resolution, connect timeout and `TCP_NODELAY`, then the scenario's
//! [`TcpTuning`] applied to every new connection with [`sockopt::apply`] (keepalive through
//! socket2 on both systems, `TCP_USER_TIMEOUT` on Linux, `TCP_RXT_CONNDROPTIME` on macOS).
//!
//! It is a `tower_service::Service<Uri>`, so hyper-util's pooled client takes it as its
//! `Connect`; [`TunedConnector::connect_tcp`] gives the WebSocket transport the same tuned
//! stream. The options read back from the kernel on the first connection, and the count of
//! tuned connections, are kept for the report's host section ([`TunedConnector::report`]).
//!
//! A tuning the kernel refuses fails that connection (a run never silently measures with other
//! options than it reports); the first such error is kept for the report too.

use crate::util::sync::Locked;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use socket2::SockRef;
use tokio::net::TcpStream;
use tower_service::Service;

use super::sockopt::{self, SocketTcpOptions, TcpTuning, USER_TIMEOUT_OPTION};

/// The connector's error: the inner `HttpConnector` error (its `io::Error` stays reachable
/// through `source()`), or the `io::Error` of a refused tuning.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the connector observed, shared by its clones.
#[derive(Debug, Default)]
struct Observed {
    connections: AtomicU64,
    first: Mutex<Option<SocketTcpOptions>>,
    error: Mutex<Option<String>>,
}

/// hyper-util's `HttpConnector` plus the scenario's TCP tuning on every socket it opens.
#[derive(Debug, Clone)]
pub struct TunedConnector {
    http: HttpConnector,
    tuning: Arc<TcpTuning>,
    observed: Arc<Observed>,
}

impl TunedConnector {
    /// A connector applying `tuning` (validated by the caller; the default applies nothing),
    /// with `TCP_NODELAY` on.
    pub fn new(tuning: TcpTuning) -> Self {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        Self {
            http,
            tuning: Arc::new(tuning),
            observed: Arc::default(),
        }
    }

    /// Bounds each TCP connect (`None`: the OS's own SYN timeout).
    pub(crate) fn with_connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.http.set_connect_timeout(timeout);
        self
    }

    /// A tuned TCP connection to `addr` (for the WebSocket transport).
    pub async fn connect_tcp(&self, addr: SocketAddr) -> Result<TcpStream, BoxError> {
        let uri: Uri = format!("http://{addr}/").parse()?;
        let mut svc = self.clone();
        std::future::poll_fn(|cx| svc.poll_ready(cx)).await?;
        Ok(svc.call(uri).await?.into_inner())
    }

    /// Applies the tuning to a freshly connected stream, reads it back, and records both.
    fn tune(&self, stream: &TcpStream) -> io::Result<()> {
        let sock = SockRef::from(stream);
        let result = sockopt::apply(&sock, &self.tuning).and_then(|()| sockopt::read_back(&sock));
        match result {
            Ok(opts) => {
                self.observed.connections.fetch_add(1, Ordering::Relaxed);
                let mut first = lock(&self.observed.first);
                if first.is_none() {
                    *first = Some(opts);
                }
                Ok(())
            }
            Err(e) => {
                let mut err = lock(&self.observed.error);
                if err.is_none() {
                    *err = Some(format!("applying the [tcp] tuning: {e}"));
                }
                Err(e)
            }
        }
    }

    /// The tuning asked for and what the kernel reports on the connections made so far.
    pub fn report(&self) -> SocketsReport {
        SocketsReport {
            requested: (*self.tuning).clone(),
            tuned_connections: self.observed.connections.load(Ordering::Relaxed),
            applied: lock(&self.observed.first)
                .as_ref()
                .map(AppliedOptions::from),
            error: lock(&self.observed.error).clone(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.locked()
}

impl Service<Uri> for TunedConnector {
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let connecting = self.http.call(dst);
        let this = self.clone();
        Box::pin(async move {
            let io = connecting.await?;
            this.tune(io.inner())?;
            Ok(io)
        })
    }
}

/// The harness's socket options for the report (`host.tcp_tuning`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketsReport {
    /// The scenario's `[tcp]` table (empty: kernel defaults).
    pub requested: TcpTuning,
    /// Upstream connections the tuning was applied to.
    pub tuned_connections: u64,
    /// The options read back from the kernel on the first of them.
    #[serde(default)]
    pub applied: Option<AppliedOptions>,
    /// The first error the kernel gave when applying the tuning, if any.
    #[serde(default)]
    pub error: Option<String>,
}

impl SocketsReport {
    /// The reports of several connectors (policy runs) as one: counts added, the first
    /// read-back and error kept.
    pub(crate) fn merge(reports: impl IntoIterator<Item = SocketsReport>) -> Option<SocketsReport> {
        reports.into_iter().reduce(|mut acc, r| {
            acc.tuned_connections += r.tuned_connections;
            acc.applied = acc.applied.or(r.applied);
            acc.error = acc.error.or(r.error);
            acc
        })
    }
}

/// [`SocketTcpOptions`] in milliseconds, as the host section shows the stack's own values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedOptions {
    /// `SO_KEEPALIVE`.
    pub keepalive: bool,
    /// Keepalive idle time.
    pub keepalive_idle_ms: Option<u64>,
    /// Keepalive interval.
    pub keepalive_interval_ms: Option<u64>,
    /// Keepalive probes.
    pub keepalive_retries: Option<u32>,
    /// The user timeout as the kernel holds it (`None`: unset, the kernel default).
    pub user_timeout_ms: Option<u64>,
    /// Which option holds it on this OS.
    pub user_timeout_option: String,
}

impl From<&SocketTcpOptions> for AppliedOptions {
    fn from(o: &SocketTcpOptions) -> Self {
        let ms = |d: Option<Duration>| d.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Self {
            keepalive: o.keepalive,
            keepalive_idle_ms: ms(o.keepalive_idle),
            keepalive_interval_ms: ms(o.keepalive_interval),
            keepalive_retries: o.keepalive_retries,
            user_timeout_ms: ms(o.user_timeout),
            user_timeout_option: USER_TIMEOUT_OPTION.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_reports_add_counts_and_keep_the_first_read_back() {
        let a = SocketsReport {
            tuned_connections: 2,
            ..SocketsReport::default()
        };
        let b = SocketsReport {
            tuned_connections: 3,
            applied: Some(AppliedOptions {
                keepalive: true,
                ..AppliedOptions::default()
            }),
            ..SocketsReport::default()
        };
        let m = SocketsReport::merge([a, b]).unwrap();
        assert_eq!(m.tuned_connections, 5);
        assert!(m.applied.unwrap().keepalive);
        assert_eq!(SocketsReport::merge([]), None);
    }
}
