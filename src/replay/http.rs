//! The dispatcher of `rehearse replay`: traffic lines as HTTP and WebSocket requests on the
//! routes of docs/faults.md, so a replay works against the mock upstream or any gateway speaking them.
//!
//! - `llm` → `POST {target}/v1/chat/completions`, OpenAI-shaped body (`model`, `stream`,
//!   `max_tokens`, one user message); a streamed body is read to the end.
//! - `tool` → `POST {target}/tools/NAME` (NAME percent-encoded) with the line's `body`;
//!   `Idempotency-Key` when keyed.
//! - `ws` → `GET {target}/ws?channel=NAME` (NAME percent-encoded) upgraded to a WebSocket; N text messages, each
//!   answered (echoed) before the next, then a close.
//!
//! The line's metadata travels as headers the recording proxy reads back, so a record → replay
//! → record cycle keeps it: `X-Rehearse-Tenant`, `X-Rehearse-Session`, `X-Rehearse-Budget-Tokens`,
//! `X-Rehearse-Class`, `X-Rehearse-Idempotent` (tool calls).
//!
//! Connections (HTTP, and WebSocket to an IP-literal target) come from the harness's
//! [`TunedConnector`] with no `[tcp]` tuning, since a replay has no scenario: the same connect
//! path as a run's upstream connections, kernel-default socket options.
//!
//! Requests are built by [`crate::transport::request`] from the line's kind through the one conversion
//! ([`RequestKind::endpoint`] → `Endpoint`), exactly as the run's transport builds them.
//!
//! Error kinds: `http_NNN` (non-2xx status), `connect` (refused / unreachable), `reset`
//! (connection reset), `incomplete` (closed before the response ended), `timeout` (our deadline),
//! `http` (other HTTP errors), all read from the error chain by [`crate::transport::errors::Failure`];
//! `bad_request` (the line's request could not be built: nothing was sent), `ws_connect`,
//! `ws_closed`, `ws_protocol`.

use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio_tungstenite::tungstenite::Message;

use super::replayer::{DispatchOutcome, Dispatcher};
use super::traffic::TrafficLine;
use crate::engine::RequestKind;
use crate::transport::errors::{Failure, Phase};
use crate::transport::request::{self, RequestSpec};
use crate::transport::{TcpTuning, TunedConnector};
use crate::wire::header;

/// The `--target` URL is unusable.
#[derive(Debug, thiserror::Error)]
#[error("target `{target}`: {reason}")]
pub struct TargetError {
    /// The URL as given.
    pub target: String,
    /// What is wrong.
    pub reason: String,
}

/// Sends traffic lines to an HTTP target over pooled keep-alive connections.
#[derive(Debug, Clone)]
pub struct HttpDispatcher {
    /// `http://host:port` plus an optional path prefix, without a trailing slash.
    base: String,
    /// `ws://host:port` plus the same prefix.
    ws_base: String,
    /// The target's socket address when its host is an IP literal (WebSocket sessions then
    /// skip name resolution, which tokio-tungstenite would do on a blocking thread).
    ws_addr: Option<std::net::SocketAddr>,
    client: Client<TunedConnector, Full<Bytes>>,
    /// The client's connector, for WebSocket sessions to an IP-literal target.
    connector: TunedConnector,
    timeout: Duration,
    /// Extra headers sent with every request (e.g. a gateway's `Authorization`).
    extra: Vec<(http::HeaderName, http::HeaderValue)>,
}

/// Why an [`HttpDispatcher::exchange`] got no answer; its text is the error kind of the module
/// doc (`bad_request`, `connect`, `reset`, `timeout`, …), the cause kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExchangeError {
    #[error("bad_request")]
    BadRequest(#[source] http::Error),
    #[error("{kind}")]
    Head {
        kind: String,
        #[source]
        source: hyper_util::client::legacy::Error,
    },
    #[error("{kind}")]
    Body {
        kind: String,
        #[source]
        source: hyper::Error,
    },
    #[error("timeout")]
    Timeout,
}

impl HttpDispatcher {
    /// A dispatcher for `target` (`http://HOST:PORT[/prefix]`); each request (a whole WebSocket
    /// session included) is abandoned as `timeout` after `timeout`.
    pub fn new(target: &str, timeout: Duration) -> Result<Self, TargetError> {
        let bad = |reason: &str| TargetError {
            target: target.to_string(),
            reason: reason.to_string(),
        };
        let uri: Uri = target
            .parse()
            .map_err(|e| bad(&format!("not a URL ({e})")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => return Err(bad(&format!("scheme `{other}` unsupported (use http://)"))),
            None => return Err(bad("missing scheme (expected http://HOST:PORT)")),
        }
        let authority = uri
            .authority()
            .ok_or_else(|| bad("missing host (expected http://HOST:PORT)"))?;
        if uri.query().is_some() {
            return Err(bad("must not have a query string"));
        }
        let prefix = uri.path().trim_end_matches('/');
        // The harness's connector with no `[tcp]` tuning (a replay has no scenario): the same
        // connect path and read-back as a run's upstream connections.
        let connector =
            TunedConnector::new(TcpTuning::default()).with_connect_timeout(Some(timeout));
        let ws_addr = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .ok()
            .map(|ip| std::net::SocketAddr::new(ip, authority.port_u16().unwrap_or(80)));
        Ok(Self {
            ws_addr,
            base: format!("http://{authority}{prefix}"),
            ws_base: format!("ws://{authority}{prefix}"),
            client: Client::builder(TokioExecutor::new()).build(connector.clone()),
            connector,
            timeout,
            extra: Vec::new(),
        })
    }

    /// Keeps no idle connection: each request gets a fresh connection that closes when its
    /// response ends, so a gateway being stopped has no idle client holding its drain open.
    pub fn without_keep_alive(mut self) -> Self {
        self.client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(0)
            .build(self.connector.clone());
        self
    }

    /// One HTTP exchange with the target outside the traffic routes (a gateway's `/health`, an
    /// OpenAI-compatible turn): `method` on `path` (from the target's base) with an optional
    /// JSON body and the extra headers, the whole body read, bounded by the dispatcher's
    /// timeout. Errors are the kinds of the module doc.
    pub(crate) async fn exchange(
        &self,
        method: Method,
        path: &str,
        json_body: Option<Bytes>,
    ) -> Result<(http::StatusCode, Bytes), ExchangeError> {
        self.exchange_with_head(method, path, json_body)
            .await
            .map(|(status, _, body)| (status, body))
    }

    /// [`Self::exchange`], with the response's headers.
    pub(crate) async fn exchange_with_head(
        &self,
        method: Method,
        path: &str,
        json_body: Option<Bytes>,
    ) -> Result<(http::StatusCode, http::HeaderMap, Bytes), ExchangeError> {
        let mut b = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if json_body.is_some() {
            b = b.header(http::header::CONTENT_TYPE, "application/json");
        }
        for (name, value) in &self.extra {
            b = b.header(name, value);
        }
        let req = b
            .body(Full::new(json_body.unwrap_or_default()))
            .map_err(ExchangeError::BadRequest)?;
        let work = async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|source| ExchangeError::Head {
                    kind: Failure::of(&source, Phase::Head).kind().to_string(),
                    source,
                })?;
            let status = resp.status();
            let (head, body) = resp.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|source| ExchangeError::Body {
                    kind: Failure::of(&source, Phase::Body).kind().to_string(),
                    source,
                })?;
            Ok((status, head.headers, body.to_bytes()))
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .unwrap_or_else(|_elapsed| Err(ExchangeError::Timeout))
    }

    /// Adds a header sent with every HTTP request and WebSocket handshake.
    pub fn with_header(mut self, name: http::HeaderName, value: http::HeaderValue) -> Self {
        self.extra.push((name, value));
        self
    }

    /// The HTTP request a non-WebSocket line turns into: the line's kind through the one
    /// conversion to an endpoint ([`RequestKind::endpoint`]), then the one request builder
    /// (the run's transport builds its requests there too). `Ok(None)` for a WebSocket line.
    fn http_request(
        &self,
        line: &TrafficLine,
    ) -> Result<Option<Request<Full<Bytes>>>, request::BuildError> {
        if matches!(line.kind, RequestKind::Ws { .. }) {
            return Ok(None);
        }
        let spec = self.spec(line)?;
        request::http(&self.base, &line.kind.endpoint(), &spec).map(Some)
    }

    /// The headers of a line: its idempotency key, the `X-Rehearse-*` metadata and the
    /// dispatcher's extra headers.
    fn spec<'a>(&'a self, line: &'a TrafficLine) -> Result<RequestSpec<'a>, request::BuildError> {
        let mut spec = RequestSpec::default();
        if let RequestKind::Tool {
            idempotent,
            idempotency_key,
            ..
        } = &line.kind
        {
            spec.idempotency_key = idempotency_key.as_deref();
            let flag = if *idempotent { "true" } else { "false" };
            spec.with(http::HeaderName::from_static(header::IDEMPOTENT), flag)?;
        }
        for (name, value) in meta_headers(line) {
            spec.with(http::HeaderName::from_static(name), &value)?;
        }
        spec.extra.extend(self.extra.iter().cloned());
        Ok(spec)
    }

    async fn send_http(&self, req: Request<Full<Bytes>>) -> DispatchOutcome {
        let resp = match self.client.request(req).await {
            Ok(r) => r,
            Err(e) => return DispatchOutcome::error(Failure::of(&e, Phase::Head).kind()),
        };
        let status = resp.status();
        // Read the whole body (SSE streams included): a cut stream is a failure.
        match resp.into_body().collect().await {
            Err(e) => DispatchOutcome::error(Failure::of(&e, Phase::Body).kind()),
            Ok(_) if status.is_success() => DispatchOutcome::ok(),
            Ok(_) => DispatchOutcome::error(format!("http_{}", status.as_u16())),
        }
    }

    async fn send_ws(&self, line: &TrafficLine, messages: u32) -> DispatchOutcome {
        let built = self
            .spec(line)
            .and_then(|spec| request::ws(&self.ws_base, &line.kind.endpoint(), &spec));
        let Ok(req) = built else {
            return DispatchOutcome::error("bad_request");
        };
        let connected = match self.ws_addr {
            Some(addr) => match self.connector.connect_tcp(addr).await {
                Ok(tcp) => {
                    tokio_tungstenite::client_async(
                        req,
                        tokio_tungstenite::MaybeTlsStream::Plain(tcp),
                    )
                    .await
                }
                Err(_) => return DispatchOutcome::error("ws_connect"),
            },
            None => tokio_tungstenite::connect_async(req).await,
        };
        let Ok((mut ws, _)) = connected else {
            return DispatchOutcome::error("ws_connect");
        };
        for i in 0..messages {
            if ws
                .send(Message::text(format!("rehearse message {i}")))
                .await
                .is_err()
            {
                return DispatchOutcome::error("ws_closed");
            }
            loop {
                match ws.next().await {
                    Some(Ok(Message::Text(_) | Message::Binary(_))) => break,
                    Some(Ok(Message::Close(_))) | None => {
                        return DispatchOutcome::error("ws_closed");
                    }
                    Some(Ok(_)) => continue, // ping/pong/frame: tungstenite answers pings
                    Some(Err(_)) => return DispatchOutcome::error("ws_protocol"),
                }
            }
        }
        let _ = ws.close(None).await;
        DispatchOutcome::ok()
    }
}

impl Dispatcher for HttpDispatcher {
    async fn dispatch(&self, _seq: u64, line: TrafficLine) -> DispatchOutcome {
        let work = async {
            match &line.kind {
                RequestKind::Ws { messages, .. } => self.send_ws(&line, *messages).await,
                _ => match self.http_request(&line) {
                    Ok(Some(req)) => self.send_http(req).await,
                    // A request that cannot be built was never sent: its own kind.
                    Ok(None) | Err(_) => DispatchOutcome::error("bad_request"),
                },
            }
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .unwrap_or_else(|_elapsed| DispatchOutcome::error("timeout"))
    }
}

/// The `X-Rehearse-*` metadata headers of a line.
fn meta_headers(line: &TrafficLine) -> Vec<(&'static str, String)> {
    let mut h = Vec::new();
    if let Some(t) = &line.tenant {
        h.push((header::TENANT, t.clone()));
    }
    if let Some(s) = &line.session {
        h.push((header::SESSION, s.clone()));
    }
    if let Some(b) = line.budget_tokens {
        h.push((header::BUDGET, b.to_string()));
    }
    if let Some(c) = line.class {
        h.push((header::CLASS, c.as_str().to_string()));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_must_be_plain_http() {
        assert!(HttpDispatcher::new("https://x:1", Duration::from_secs(1)).is_err());
        assert!(HttpDispatcher::new("127.0.0.1:80", Duration::from_secs(1)).is_err());
        assert!(HttpDispatcher::new("http://x:1/?a=b", Duration::from_secs(1)).is_err());
        let d = HttpDispatcher::new("http://127.0.0.1:9/gw/", Duration::from_secs(1)).unwrap();
        assert_eq!(d.base, "http://127.0.0.1:9/gw");
        assert_eq!(d.ws_base, "ws://127.0.0.1:9/gw");
    }
}
