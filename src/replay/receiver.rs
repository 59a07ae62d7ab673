//! A minimal loopback receiver that timestamps every arrival: the target of the replay tests,
//! the upstream of the fixture recording when no mock upstream is at hand, and the receiver of
//! `scripts/bench-replay.sh` (via `examples/replay_receiver.rs`).
//!
//! It answers the docs/faults.md routes healthily and without delay: `POST /v1/chat/completions`
//! (JSON, or 3 SSE chunks and `data: [DONE]` when the body says `"stream": true`),
//! `POST /tools/NAME` (`{"ok":true}`), `GET /ws` (a WebSocket echo), anything else `200 ok`.
//! The arrival instant is when the request's first bytes reached the host (the kernel's receive
//! timestamp on Linux, see [`crate::transport::arrival`]), not when the handler ran.

use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::util::sync::Locked;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::transport::arrival::{ArrivalMark, Stamped};
use crate::wire::route;

/// One request as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// When its head arrived.
    pub at: Instant,
    /// `METHOD PATH[?QUERY]`, e.g. `POST /tools/crm_search`.
    pub route: String,
    /// Every request header as `(name, value)` (lossy UTF-8).
    pub headers: Vec<(String, String)>,
    /// The request body (empty for WebSocket upgrades).
    pub body: Bytes,
}

/// The arrivals seen so far, in arrival order.
#[derive(Debug, Default)]
pub struct Arrivals(Mutex<Vec<Arrival>>);

impl Arrivals {
    /// A copy of everything recorded so far.
    pub fn snapshot(&self) -> Vec<Arrival> {
        self.0.locked().clone()
    }

    fn push(&self, a: Arrival) {
        self.0.locked().push(a);
    }
}

/// Serves the receiver on `listener` until `shutdown` completes, recording into `arrivals`.
pub async fn serve_receiver(
    listener: TcpListener,
    arrivals: Arc<Arrivals>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    crate::transport::arrival::stamp_listener(&listener);
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => return Ok(()),
            r = listener.accept() => r?,
        };
        let _ = stream.set_nodelay(true);
        let (stream, mark) = Stamped::new(stream);
        let arrivals = arrivals.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| handle(req, arrivals.clone(), mark.clone()));
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(stream), svc)
                .await;
        });
    }
}

async fn handle(
    mut req: Request<Incoming>,
    arrivals: Arc<Arrivals>,
    mark: Arc<ArrivalMark>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let at = mark.take_or(Instant::now());
    let route = format!(
        "{} {}",
        req.method(),
        req.uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
    );
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    if req.uri().path() == route::WS
        && let Some(key) = req.headers().get("sec-websocket-key")
    {
        let accept = derive_accept_key(key.as_bytes());
        arrivals.push(Arrival {
            at,
            route,
            headers,
            body: Bytes::new(),
        });
        let upgrade = hyper::upgrade::on(&mut req);
        tokio::spawn(async move {
            if let Ok(upgraded) = upgrade.await {
                let mut ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None)
                        .await;
                while let Some(Ok(msg)) = ws.next().await {
                    if (msg.is_text() || msg.is_binary()) && ws.send(msg).await.is_err() {
                        break;
                    }
                }
            }
        });
        return Ok(Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header("connection", "Upgrade")
            .header("upgrade", "websocket")
            .header("sec-websocket-accept", accept)
            .body(Full::new(Bytes::new()))
            .unwrap_or_default());
    }
    let path = req.uri().path().to_string();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let stream = path == route::CHAT
        && serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("stream").and_then(|s| s.as_bool()))
            .unwrap_or(false);
    arrivals.push(Arrival {
        at,
        route,
        headers,
        body,
    });
    let (ctype, text) = if stream {
        let chunk = r#"{"choices":[{"delta":{"content":"ok"}}]}"#;
        (
            "text/event-stream",
            format!("data: {chunk}\n\ndata: {chunk}\n\ndata: {chunk}\n\ndata: [DONE]\n\n"),
        )
    } else if path == route::CHAT {
        (
            "application/json",
            r#"{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"total_tokens":3}}"#.to_string(),
        )
    } else if path.starts_with(route::TOOLS_PREFIX) {
        ("application/json", r#"{"ok":true}"#.to_string())
    } else {
        ("text/plain", "ok".to_string())
    };
    Ok(Response::builder()
        .header("content-type", ctype)
        .body(Full::new(Bytes::from(text)))
        .unwrap_or_default())
}
