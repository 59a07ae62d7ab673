//! The recording proxy of `rehearse record`: a hyper reverse proxy that forwards every request
//! to the upstream unchanged (credentials included: the upstream needs them) and writes each
//! recordable one to the traffic file (see [`super::redact`] for what is kept and scrubbed, and
//! [`super::journal`] for ordering and flushing).
//!
//! Recorded routes: `POST /v1/chat/completions`, `POST /tools/NAME`, and `GET /ws?channel=NAME`
//! WebSocket sessions, proxied message by message so the client's messages can be counted.
//! Anything else is forwarded and counted as skipped. A WebSocket whose upstream refuses the
//! handshake gets `502` and is not recorded.

use std::convert::Infallible;
use std::fs::File;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::util::sync::Locked;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{HeaderMap, Request, Response, StatusCode, Uri};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::journal::Journal;
pub use super::journal::RecordStats;
use super::redact::{http_line, ws_line};
use crate::transport::arrival::{ArrivalMark, Stamped};
use crate::transport::{TcpTuning, TunedConnector};

/// The recorder could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The `--upstream` URL is unusable.
    #[error("--upstream `{0}`: expected http://HOST:PORT[/prefix]")]
    Target(String),
    /// The output file could not be created.
    #[error("creating {path}: {source}")]
    Create {
        /// The `--out` path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// The proxy's state: where to forward, and the journal.
#[derive(Debug)]
pub struct Recorder {
    http_base: String,
    ws_base: String,
    client: Client<TunedConnector, Full<Bytes>>,
    journal: Mutex<Journal<File>>,
}

/// Headers a proxy must not forward (RFC 9110 §7.6.1), plus `host` (set from the upstream URL).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

impl Recorder {
    /// A recorder forwarding to `upstream`, writing (truncating) `out`.
    pub fn create(upstream: &str, out: &Path) -> Result<Self, RecordError> {
        let uri: Uri = upstream
            .parse()
            .map_err(|_| RecordError::Target(upstream.into()))?;
        let (Some("http"), Some(auth), None) = (uri.scheme_str(), uri.authority(), uri.query())
        else {
            return Err(RecordError::Target(upstream.into()));
        };
        let prefix = uri.path().trim_end_matches('/');
        let file = File::create(out).map_err(|source| RecordError::Create {
            path: out.display().to_string(),
            source,
        })?;
        // The harness's connector, kernel-default options (a recording has no scenario): the
        // same connect path as the run's and `rehearse replay`'s upstream connections.
        let connector = TunedConnector::new(TcpTuning::default());
        Ok(Self {
            http_base: format!("http://{auth}{prefix}"),
            ws_base: format!("ws://{auth}{prefix}"),
            client: Client::builder(TokioExecutor::new()).build(connector),
            journal: Mutex::new(Journal::new(file)),
        })
    }

    fn journal(&self) -> MutexGuard<'_, Journal<File>> {
        self.journal.locked()
    }
}

/// Serves the proxy on `listener` until `shutdown` completes, then writes what is pending and
/// returns the stats (or the first write error).
pub async fn serve_recorder(
    listener: TcpListener,
    recorder: Arc<Recorder>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<RecordStats> {
    crate::transport::arrival::stamp_listener(&listener);
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(_) => continue, // e.g. EMFILE: keep serving
            },
        };
        let _ = stream.set_nodelay(true);
        let (stream, mark) = Stamped::new(stream);
        let rec = recorder.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| handle(req, rec.clone(), mark.clone()));
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(stream), svc)
                .await;
        });
    }
    recorder.journal().finish()
}

fn text_response(status: StatusCode, text: String) -> Response<ProxyBody> {
    let mut r = Response::new(Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed());
    *r.status_mut() = status;
    r
}

fn forwardable(
    headers: &HeaderMap,
) -> impl Iterator<Item = (&http::HeaderName, &http::HeaderValue)> {
    headers
        .iter()
        .filter(|(k, _)| !HOP_BY_HOP.contains(&k.as_str()))
}

async fn handle(
    mut req: Request<Incoming>,
    rec: Arc<Recorder>,
    mark: Arc<ArrivalMark>,
) -> Result<Response<ProxyBody>, Infallible> {
    // When the request reached this host, not when this task got to run (see `transport::arrival`).
    let (seq, at_ms) = rec.journal().reserve(mark.take_or(Instant::now()));
    let path_q = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    if req.uri().path() == crate::wire::route::WS && req.headers().contains_key("sec-websocket-key")
    {
        return Ok(proxy_ws(&mut req, rec, seq, at_ms, &path_q).await);
    }
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            rec.journal().complete(seq, None);
            return Ok(text_response(
                StatusCode::BAD_REQUEST,
                format!("reading body: {e}"),
            ));
        }
    };
    let line = http_line(
        at_ms,
        &parts.method,
        parts.uri.path(),
        &parts.headers,
        &body,
    );
    rec.journal().complete(seq, line.ok());

    let mut up = Request::builder()
        .method(parts.method.clone())
        .uri(format!("{}{path_q}", rec.http_base));
    for (k, v) in forwardable(&parts.headers) {
        up = up.header(k, v);
    }
    let Ok(up) = up.body(Full::new(body)) else {
        return Ok(text_response(StatusCode::BAD_REQUEST, "bad request".into()));
    };
    match rec.client.request(up).await {
        Ok(resp) => {
            let (mut parts, body) = resp.into_parts();
            for h in HOP_BY_HOP {
                parts.headers.remove(*h);
            }
            Ok(Response::from_parts(parts, body.boxed()))
        }
        Err(e) => Ok(text_response(
            StatusCode::BAD_GATEWAY,
            format!("upstream: {e}"),
        )),
    }
}

/// Proxies a WebSocket session message by message, counting the client's messages.
async fn proxy_ws(
    req: &mut Request<Incoming>,
    rec: Arc<Recorder>,
    seq: u64,
    at_ms: u64,
    path_q: &str,
) -> Response<ProxyBody> {
    let Some(line) = ws_line(at_ms, req.uri().query(), req.headers()) else {
        rec.journal().complete(seq, None);
        return text_response(StatusCode::BAD_REQUEST, "missing ?channel=NAME".into());
    };
    let key = req
        .headers()
        .get("sec-websocket-key")
        .map(|k| derive_accept_key(k.as_bytes()))
        .unwrap_or_default();
    let Ok(mut up_req) = format!("{}{path_q}", rec.ws_base).into_client_request() else {
        rec.journal().complete(seq, None);
        return text_response(StatusCode::BAD_REQUEST, "bad ws url".into());
    };
    for (k, v) in forwardable(req.headers()) {
        if !k.as_str().starts_with("sec-websocket-") {
            up_req.headers_mut().insert(k.clone(), v.clone());
        }
    }
    let upstream = match tokio_tungstenite::connect_async(up_req).await {
        Ok((ws, _)) => ws,
        Err(e) => {
            rec.journal().complete(seq, None);
            return text_response(StatusCode::BAD_GATEWAY, format!("upstream ws: {e}"));
        }
    };
    let count = Arc::new(AtomicU32::new(0));
    rec.journal().ws_open(seq, line, count.clone());
    let upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrade.await {
            let client =
                WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
            pump(client, upstream, &count).await;
        }
        rec.journal().ws_closed(seq);
    });
    let mut resp = text_response(StatusCode::SWITCHING_PROTOCOLS, String::new());
    let h = resp.headers_mut();
    h.insert("connection", http::HeaderValue::from_static("Upgrade"));
    h.insert("upgrade", http::HeaderValue::from_static("websocket"));
    if let Ok(v) = http::HeaderValue::from_str(&key) {
        h.insert("sec-websocket-accept", v);
    }
    resp
}

/// Copies messages both ways until either side closes; counts client data messages.
async fn pump<C, U>(client: WebSocketStream<C>, upstream: WebSocketStream<U>, count: &AtomicU32)
where
    C: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    U: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut c_tx, mut c_rx) = client.split();
    let (mut u_tx, mut u_rx) = upstream.split();
    loop {
        tokio::select! {
            m = c_rx.next() => match m {
                Some(Ok(msg)) => {
                    if msg.is_text() || msg.is_binary() {
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    let close = msg.is_close();
                    // Pings/pongs are answered by tungstenite on each side; forward data + close.
                    if (msg.is_text() || msg.is_binary() || close) && u_tx.send(msg).await.is_err() {
                        break;
                    }
                    if close { break; }
                }
                _ => break,
            },
            m = u_rx.next() => match m {
                Some(Ok(msg)) => {
                    let close = msg.is_close();
                    if (msg.is_text() || msg.is_binary() || close) && c_tx.send(msg).await.is_err() {
                        break;
                    }
                    if close { break; }
                }
                _ => break,
            },
        }
    }
    let _ = u_tx.close().await;
    let _ = c_tx.close().await;
}
