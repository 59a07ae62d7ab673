//! The real transport the harness gives the engine: a pooled hyper-util HTTP/1 client for model
//! and tool calls (WebSocket sessions go to [`super::ws`]). Every connection, HTTP or
//! WebSocket, goes through one [`TunedConnector`] carrying the scenario's `[tcp]` tuning.
//!
//! Deadlines are enforced here with `tokio::time::timeout`, so our own `Elapsed` never mixes
//! with a kernel `ETIMEDOUT`: TTFB covers sending the request until the response
//! head, inter-token covers each wait for the next body frame of a stream, total covers the whole
//! exchange. Errors are mapped from types — hyper's predicates first, then the innermost
//! `io::Error` kind — never by matching strings.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::time::{Instant, timeout};

use super::diagnostics::{Diagnostics, ReadFailure};
use super::errors::{Phase, classify};
use super::request::{self, RequestSpec};
use super::sse::{drain_events, provider_code, usage_tokens};
use super::ws;
use super::{TcpTuning, TunedConnector};
use crate::engine::transport::{Call, Endpoint, Transport};
use crate::engine::{AttemptResult, TimeoutPhase, TransportFailure};

/// The HTTP (+ WebSocket) transport to one upstream base address.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    addr: SocketAddr,
    connector: TunedConnector,
    client: Client<TunedConnector, Full<Bytes>>,
    diag: Arc<Diagnostics>,
    pong_deadline: Duration,
    /// Fleet mode: this host's id, sent as `X-Rehearse-Host` on every HTTP request.
    host: Option<Arc<str>>,
}

impl HttpTransport {
    /// A transport to the upstream at `addr`, counting read failures into `diag`, on sockets
    /// with the kernel's default TCP options.
    pub fn new(addr: SocketAddr, diag: Arc<Diagnostics>) -> Self {
        Self::with_tcp(addr, diag, TcpTuning::default())
    }

    /// A transport whose HTTP and WebSocket connections all get `tuning` (a scenario's
    /// `[tcp]`, already validated).
    pub fn with_tcp(addr: SocketAddr, diag: Arc<Diagnostics>, tuning: TcpTuning) -> Self {
        let connector = TunedConnector::new(tuning);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector.clone());
        Self {
            addr,
            connector,
            client,
            diag,
            pong_deadline: ws::DEFAULT_PONG_DEADLINE,
            host: None,
        }
    }

    /// Names this transport's fleet host: every HTTP request and WebSocket handshake carries
    /// `X-Rehearse-Host: ID`.
    pub fn with_host(mut self, id: &str) -> Self {
        self.host = Some(Arc::from(id));
        self
    }

    /// The connector every connection of this transport goes through (for its report).
    pub fn connector(&self) -> &TunedConnector {
        &self.connector
    }

    /// Sets how long a WebSocket Pong may take when the engine gives no inter-token deadline
    /// (already divided by the run's speed).
    pub(crate) fn with_pong_deadline(mut self, d: Duration) -> Self {
        self.pong_deadline = d;
        self
    }

    /// One HTTP exchange with its deadlines, plus the read-failure class when it failed.
    async fn http(&self, call: &Call) -> (AttemptResult, Option<ReadFailure>) {
        let started = Instant::now();
        let base = format!("http://{}", self.addr);
        let spec = RequestSpec::of_call(call).with_host(self.host.as_deref());
        let req = match request::http(&base, &call.endpoint, &spec) {
            Ok(r) => r,
            // Nothing was sent: not the upstream's failure (the breaker does not count it).
            Err(e) => {
                let reason = e.to_string();
                return (AttemptResult::Unsendable { reason }, None);
            }
        };
        let tokens = AtomicU32::new(0);
        let mut headers_seen = false;
        let exchange = self.exchange(req, call, started, &tokens, &mut headers_seen);
        match timeout(call.deadlines.total, exchange).await {
            Ok(out) => out,
            Err(_elapsed) => {
                let failure = if headers_seen {
                    ReadFailure::DeadlineExceeded
                } else {
                    ReadFailure::HeadersNeverArrived
                };
                let result = AttemptResult::Timeout {
                    phase: TimeoutPhase::Total,
                    tokens_received: tokens.load(Ordering::Relaxed),
                };
                (result, Some(failure))
            }
        }
    }

    async fn exchange(
        &self,
        req: hyper::Request<Full<Bytes>>,
        call: &Call,
        started: Instant,
        tokens: &AtomicU32,
        headers_seen: &mut bool,
    ) -> (AttemptResult, Option<ReadFailure>) {
        let head = self.client.request(req);
        let head = match call.deadlines.ttfb {
            Some(ttfb) => match timeout(ttfb, head).await {
                Ok(r) => r,
                Err(_elapsed) => {
                    return (
                        AttemptResult::Timeout {
                            phase: TimeoutPhase::Ttfb,
                            tokens_received: 0,
                        },
                        Some(ReadFailure::HeadersNeverArrived),
                    );
                }
            },
            None => head.await,
        };
        let resp = match head {
            Ok(resp) => resp,
            Err(e) => {
                let (failure, diag) = classify(&e, Phase::Head);
                return (AttemptResult::Transport { failure }, Some(diag));
            }
        };
        *headers_seen = true;
        // What the TTFB deadline bounds: sending the request until the response head.
        let ttfb = started.elapsed();
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let throttle = super::throttle::headers(resp.headers());
        let is_sse = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let body = resp.into_body();
        if !status.is_success() {
            let provider_code = match body.collect().await {
                Ok(b) => provider_code(&b.to_bytes()),
                Err(_) => None,
            };
            let result = AttemptResult::Http {
                status: status.as_u16(),
                retry_after,
                throttle,
                provider_code,
                latency: started.elapsed(),
            };
            return (result, None);
        }
        if is_sse {
            read_stream(body, call.deadlines.inter_token, started, ttfb, tokens).await
        } else {
            match body.collect().await {
                Ok(b) => {
                    let n = usage_tokens(&b.to_bytes());
                    let latency = started.elapsed();
                    let result = AttemptResult::Ok {
                        tokens: n,
                        latency,
                        ttfb: Some(ttfb),
                        longest_gap: None,
                    };
                    (result, None)
                }
                Err(e) => {
                    let (failure, diag) = classify(&e, Phase::Body);
                    (AttemptResult::Transport { failure }, Some(diag))
                }
            }
        }
    }
}

impl Transport for HttpTransport {
    async fn send(&self, call: Call) -> AttemptResult {
        let (result, failure) = match &call.endpoint {
            Endpoint::Ws { messages, .. } => {
                let ws = ws::WsTarget {
                    addr: self.addr,
                    connector: &self.connector,
                    pong_default: self.pong_deadline,
                    host: self.host.as_deref(),
                };
                ws::session(&ws, &call, *messages).await
            }
            _ => self.http(&call).await,
        };
        if let Some(f) = failure {
            self.diag.record(&call.dep, f);
        }
        result
    }
}

/// Reads an SSE body frame by frame, each wait bounded by the inter-token deadline; a complete
/// stream reports its `ttfb` and the longest of those waits (what the deadlines bound, so the
/// engine can adapt them).
async fn read_stream(
    mut body: Incoming,
    inter_token: Option<Duration>,
    started: Instant,
    ttfb: Duration,
    tokens: &AtomicU32,
) -> (AttemptResult, Option<ReadFailure>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut done = false;
    let mut longest_gap = Duration::ZERO;
    loop {
        let waiting = Instant::now();
        let next = body.frame();
        let frame = match inter_token {
            Some(d) => match timeout(d, next).await {
                Ok(f) => f,
                Err(_elapsed) => {
                    let result = AttemptResult::Timeout {
                        phase: TimeoutPhase::InterToken,
                        tokens_received: tokens.load(Ordering::Relaxed),
                    };
                    return (result, Some(ReadFailure::InterTokenStall));
                }
            },
            None => next.await,
        };
        longest_gap = longest_gap.max(waiting.elapsed());
        match frame {
            None => break,
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    buf.extend_from_slice(&data);
                    let drained = drain_events(&mut buf);
                    tokens.fetch_add(drained.tokens, Ordering::Relaxed);
                    done |= drained.done;
                    if drained.broken.is_some() {
                        // An error event or a line that is not JSON: the attempt failed, as
                        // the SDKs fail it, with the tokens that came before it.
                        let received = tokens.load(Ordering::Relaxed);
                        let result = if received > 0 {
                            AttemptResult::StreamCut {
                                tokens_received: received,
                            }
                        } else {
                            AttemptResult::Transport {
                                failure: TransportFailure::BodyEndedEarly,
                            }
                        };
                        return (result, Some(ReadFailure::StreamError));
                    }
                }
            }
            Some(Err(e)) => {
                let received = tokens.load(Ordering::Relaxed);
                let (failure, diag) = classify(&e, Phase::Body);
                if received > 0 {
                    let result = AttemptResult::StreamCut {
                        tokens_received: received,
                    };
                    return (result, Some(diag));
                }
                return (AttemptResult::Transport { failure }, Some(diag));
            }
        }
    }
    let received = tokens.load(Ordering::Relaxed);
    if done {
        let latency = started.elapsed();
        (
            AttemptResult::Ok {
                tokens: received,
                latency,
                ttfb: Some(ttfb),
                longest_gap: Some(longest_gap),
            },
            None,
        )
    } else if received > 0 {
        let result = AttemptResult::StreamCut {
            tokens_received: received,
        };
        (result, Some(ReadFailure::BodyEndedEarly))
    } else {
        let failure = TransportFailure::BodyEndedEarly;
        (
            AttemptResult::Transport { failure },
            Some(ReadFailure::BodyEndedEarly),
        )
    }
}

