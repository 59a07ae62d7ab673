//! The real transport the harness gives the engine: a pooled hyper-util HTTP/1 client for model
//! and tool calls (WebSocket sessions go to [`super::transport_ws`]). Every connection, HTTP or
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
use super::transport_ws;
use crate::engine::canary::{CANARY_HEADER, CANARY_WORKER};
use crate::engine::transport::{Call, CallTarget, Transport};
use crate::engine::{AttemptResult, TimeoutPhase, TransportFailure};
use crate::host::{TcpTuning, TunedConnector};

/// The HTTP (+ WebSocket) transport to one upstream base address.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    addr: SocketAddr,
    connector: TunedConnector,
    client: Client<TunedConnector, Full<Bytes>>,
    diag: Arc<Diagnostics>,
    pong_deadline: Duration,
    /// Fleet mode: this host's id, sent as [`HOST_HEADER`] on every request.
    host: Option<Arc<str>>,
}

/// The header naming the fleet host a request came from (recorded by the upstream as `host`).
pub const HOST_HEADER: &str = "x-rehearse-host";

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
            pong_deadline: transport_ws::DEFAULT_PONG_DEADLINE,
            host: None,
        }
    }

    /// Names this transport's fleet host: every HTTP request carries `X-Rehearse-Host: ID`.
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
    pub fn with_pong_deadline(mut self, d: Duration) -> Self {
        self.pong_deadline = d;
        self
    }

    /// The shared diagnostics counters.
    pub fn diagnostics(&self) -> &Arc<Diagnostics> {
        &self.diag
    }

    /// One HTTP exchange with its deadlines, plus the read-failure class when it failed.
    async fn http(&self, call: &Call) -> (AttemptResult, Option<ReadFailure>) {
        let started = Instant::now();
        let req = match build_request(self.addr, call, self.host.as_deref()) {
            Ok(r) => r,
            Err(_) => {
                return (
                    AttemptResult::Transport {
                        failure: TransportFailure::Other,
                    },
                    Some(ReadFailure::Other),
                );
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
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
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
                provider_code,
                latency: started.elapsed(),
            };
            return (result, None);
        }
        if is_sse {
            read_stream(body, call.deadlines.inter_token, started, tokens).await
        } else {
            match body.collect().await {
                Ok(b) => {
                    let n = usage_tokens(&b.to_bytes());
                    let latency = started.elapsed();
                    (AttemptResult::Ok { tokens: n, latency }, None)
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
        let (result, failure) = match &call.target {
            CallTarget::Ws { channel, messages } => {
                let ws = transport_ws::WsTarget {
                    addr: self.addr,
                    connector: &self.connector,
                    pong_default: self.pong_deadline,
                };
                transport_ws::session(&ws, &call, channel, *messages).await
            }
            _ => self.http(&call).await,
        };
        if let Some(f) = failure {
            self.diag.record(&call.dep, f);
        }
        result
    }
}

/// Reads an SSE body frame by frame, each wait bounded by the inter-token deadline.
async fn read_stream(
    mut body: Incoming,
    inter_token: Option<Duration>,
    started: Instant,
    tokens: &AtomicU32,
) -> (AttemptResult, Option<ReadFailure>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut done = false;
    loop {
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
        match frame {
            None => break,
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    buf.extend_from_slice(&data);
                    let (n, finished) = drain_events(&mut buf);
                    tokens.fetch_add(n, Ordering::Relaxed);
                    done |= finished;
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

/// Consumes complete SSE lines from `buf`: returns the token events seen and whether
/// `data: [DONE]` was among them.
fn drain_events(buf: &mut Vec<u8>) -> (u32, bool) {
    let mut tokens = 0;
    let mut done = false;
    while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
        let line: Vec<u8> = buf.drain(..=pos).collect();
        let line = String::from_utf8_lossy(&line);
        let Some(data) = line.trim_end().strip_prefix("data:") else {
            continue;
        };
        if data.trim() == "[DONE]" {
            done = true;
        } else if carries_content(data) {
            tokens += 1;
        }
    }
    (tokens, done)
}

/// Whether an SSE event's data is a token: any event but an OpenAI chunk whose choices carry no
/// content (the role delta, the `finish_reason` chunk, the usage chunk with empty `choices`).
fn carries_content(data: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
        return true;
    };
    match v.get("choices").and_then(|c| c.as_array()) {
        None => true,
        Some(choices) => choices.iter().any(|c| {
            c.pointer("/delta/content")
                .and_then(|t| t.as_str())
                .is_some_and(|t| !t.is_empty())
        }),
    }
}

/// Builds the upstream request of a model or tool call.
fn build_request(
    addr: SocketAddr,
    call: &Call,
    host: Option<&str>,
) -> Result<hyper::Request<Full<Bytes>>, http::Error> {
    let (path, body) = match &call.target {
        CallTarget::Llm {
            model,
            stream,
            max_tokens,
        } => (
            "/v1/chat/completions".to_string(),
            serde_json::json!({
                "model": model,
                "stream": stream,
                "max_tokens": max_tokens,
                "messages": [{"role": "user", "content": "rehearse"}],
            }),
        ),
        CallTarget::Tool { name, body } => (format!("/tools/{name}"), body.clone()),
        CallTarget::Ws { channel, .. } => {
            (format!("/ws?channel={channel}"), serde_json::Value::Null)
        }
    };
    let mut b = hyper::Request::post(format!("http://{addr}{path}"))
        .header(http::header::CONTENT_TYPE, "application/json");
    if let Some(token) = &call.bearer {
        b = b.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
    }
    if let Some(key) = &call.idempotency_key {
        b = b.header("idempotency-key", key.as_str());
    }
    if let Some(dep) = &call.probe {
        b = b.header("x-breaker-probe", dep.as_str());
    }
    if call.worker == CANARY_WORKER {
        b = b.header(CANARY_HEADER, "1");
    }
    if let Some(h) = host {
        b = b.header(HOST_HEADER, h);
    }
    b.body(Full::new(Bytes::from(body.to_string())))
}

/// The provider error code of an OpenAI-shaped error body (`error.code`, else `error.type`).
fn provider_code(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let err = v.get("error")?;
    err.get("code")
        .and_then(|c| c.as_str())
        .or_else(|| err.get("type").and_then(|c| c.as_str()))
        .map(str::to_string)
}

/// `usage.completion_tokens` of a non-streaming completion, 0 when absent (tools).
fn usage_tokens(body: &[u8]) -> u32 {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/usage/completion_tokens")
                .and_then(|t| t.as_u64())
        })
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_lines_count_tokens_and_done_across_chunk_boundaries() {
        let mut buf = b"data: {\"a\":1}\n\ndata: {\"a\"".to_vec();
        assert_eq!(drain_events(&mut buf), (1, false));
        buf.extend_from_slice(b":2}\n\ndata: [DONE]\n\n");
        assert_eq!(drain_events(&mut buf), (1, true));
        assert!(buf.is_empty());
    }

    #[test]
    fn openai_chunks_without_content_are_not_tokens() {
        let mut buf = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t1\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" t2\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes()
        .to_vec();
        assert_eq!(drain_events(&mut buf), (2, true));
    }

    #[test]
    fn provider_codes_and_usage_come_from_json_bodies() {
        let b = br#"{"error":{"code":"context_length_exceeded","type":"invalid_request_error"}}"#;
        assert_eq!(provider_code(b).as_deref(), Some("context_length_exceeded"));
        let b = br#"{"error":{"type":"rate_limit_exceeded"}}"#;
        assert_eq!(provider_code(b).as_deref(), Some("rate_limit_exceeded"));
        assert_eq!(provider_code(b"not json"), None);
        assert_eq!(usage_tokens(br#"{"usage":{"completion_tokens":64}}"#), 64);
        assert_eq!(usage_tokens(b"{}"), 0);
    }
}
