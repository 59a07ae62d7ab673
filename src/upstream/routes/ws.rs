//! `GET /ws?channel=NAME`: a WebSocket echo on the same listener (hyper upgrade, then
//! tokio-tungstenite). It answers pings unless `ws_ping_timeout` hits, in which case the socket
//! stays open and every frame is read and dropped unanswered (no pong, no echo); `ws_close`
//! sends a close frame with its code right after the handshake.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode, header};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

use super::{Body, BoxError, Meta, error_json, full, pre_response};
use crate::upstream::Upstream;
use crate::upstream::conn::{ConnCtl, Cut};
use crate::upstream::faults::{Action, RouteKind};

/// How long a faulted close waits for the client's close reply.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// What the session does after the handshake.
#[derive(Debug, Clone, Copy)]
enum Session {
    Echo,
    Silent,
    Close(u16),
}

/// Serves one WebSocket upgrade request.
pub(crate) async fn handle(
    mut req: Request<hyper::body::Incoming>,
    up: &Upstream,
    ctl: &Arc<ConnCtl>,
) -> Result<Response<Body>, BoxError> {
    let h = req.headers();
    let is_upgrade = h
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let Some(key) = h
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|k| k.as_bytes().to_vec())
    else {
        return Ok(error_json(
            StatusCode::BAD_REQUEST,
            "expected a WebSocket upgrade",
        ));
    };
    if !is_upgrade {
        return Ok(error_json(
            StatusCode::BAD_REQUEST,
            "expected a WebSocket upgrade",
        ));
    }
    let meta = Meta::from_headers(h);
    let channel = crate::wire::channel_of_query(req.uri().query());
    let decision = ctl.admit(
        up,
        &meta.incoming(RouteKind::Ws, None, channel.as_deref(), None),
    );
    let session = match decision.as_ref().map(|d| &d.action) {
        Some(Action::WsPingTimeout) => Session::Silent,
        Some(Action::WsClose(code)) => Session::Close(*code),
        _ => Session::Echo,
    };
    if let Err(r) = pre_response(decision, ctl).await? {
        return Ok(r);
    }
    let on_upgrade = hyper::upgrade::on(&mut req);
    let stop = ctl.stop();
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        run_session(TokioIo::new(upgraded), session, stop).await;
    });
    let mut r = Response::new(full(bytes::Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(
        header::UPGRADE,
        header::HeaderValue::from_static("websocket"),
    );
    h.insert(
        header::CONNECTION,
        header::HeaderValue::from_static("Upgrade"),
    );
    let accept = header::HeaderValue::from_str(&derive_accept_key(&key)).map_err(|_| Cut)?;
    h.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    Ok(r)
}

async fn run_session(
    io: TokioIo<Upgraded>,
    session: Session,
    stop: crate::util::shutdown::Shutdown,
) {
    match session {
        Session::Silent => {
            // Frame-level silence: read and drop every byte (pings included), answer nothing,
            // keep TCP open until the client leaves or the server stops.
            let mut io = io;
            let mut buf = [0u8; 4096];
            loop {
                tokio::select! {
                    n = io.read(&mut buf) => if !matches!(n, Ok(n) if n > 0) { return },
                    _ = stop.requested() => return,
                }
            }
        }
        Session::Echo => {
            let mut ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
            loop {
                let msg = tokio::select! {
                    m = ws.next() => m,
                    _ = stop.requested() => return,
                };
                let sent = match msg {
                    Some(Ok(m @ (Message::Text(_) | Message::Binary(_)))) => ws.send(m).await,
                    // tungstenite queued the pong; flush it now rather than on the next read.
                    Some(Ok(Message::Ping(_))) => ws.flush().await,
                    Some(Ok(_)) => Ok(()),
                    None | Some(Err(_)) => return,
                };
                if sent.is_err() {
                    return;
                }
            }
        }
        Session::Close(code) => {
            let mut ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
            let frame = CloseFrame {
                code: CloseCode::from(code),
                reason: "rehearse fault".into(),
            };
            if ws.send(Message::Close(Some(frame))).await.is_err() {
                return;
            }
            let _ = tokio::time::timeout(CLOSE_WAIT, async {
                while let Some(Ok(_)) = ws.next().await {}
            })
            .await;
        }
    }
}
