//! The WebSocket half of the transport: one session = connect to `GET /ws?channel=NAME`, then for
//! each message send a Ping and the text, and wait for both the Pong and the echo within the
//! pong deadline. A missing Pong is `WsPingTimeout`; an abnormal close frame is `WsClosed`.
//!
//! The TCP connection comes from the transport's [`TunedConnector`], so a session's socket has
//! the scenario's `[tcp]` options like every HTTP connection; the handshake runs over it with
//! `tokio_tungstenite::client_async`.
//!
//! The read half is always polled while waiting (tungstenite writes queued Pongs and sees ours
//! only on reads — the "never-read half" false ping timeout of cannot happen here).

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::time::{Instant, timeout, timeout_at};
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::TunedConnector;
use super::connector::BoxError;
use super::diagnostics::ReadFailure;
use super::errors::{Failure, Phase, classify};
use super::request::{self, RequestSpec};
use crate::engine::transport::Call;
use crate::engine::{AttemptResult, TimeoutPhase, TransportFailure};

/// The pong deadline at speed 1 when the engine gives none (python-websockets uses 20 s; a
/// rehearsal wants a faster verdict).
pub(crate) const DEFAULT_PONG_DEADLINE: Duration = Duration::from_secs(5);

/// Where a session connects, and how.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WsTarget<'a> {
    /// The upstream.
    pub addr: SocketAddr,
    /// The tuned connector the TCP connection comes from.
    pub connector: &'a TunedConnector,
    /// The pong deadline when the engine gives no inter-token deadline.
    pub pong_default: Duration,
    /// The fleet host the handshake names (`X-Rehearse-Host`), if any.
    pub host: Option<&'a str>,
}

/// Runs one WebSocket session of `messages` echoes on the call's channel.
pub(crate) async fn session(
    target: &WsTarget<'_>,
    call: &Call,
    messages: u32,
) -> (AttemptResult, Option<ReadFailure>) {
    let started = Instant::now();
    let total_deadline = started + call.deadlines.total;
    let session = run(target, call, messages, started);
    match timeout_at(total_deadline, session).await {
        Ok(out) => out,
        Err(_elapsed) => (
            AttemptResult::Timeout {
                phase: TimeoutPhase::Total,
                tokens_received: 0,
            },
            Some(ReadFailure::DeadlineExceeded),
        ),
    }
}

async fn run(
    target: &WsTarget<'_>,
    call: &Call,
    messages: u32,
    started: Instant,
) -> (AttemptResult, Option<ReadFailure>) {
    let pong_deadline = call.deadlines.inter_token.unwrap_or(target.pong_default);
    let base = format!("ws://{}", target.addr);
    let spec = RequestSpec::of_call(call).with_host(target.host);
    let req = match request::ws(&base, &call.endpoint, &spec) {
        Ok(r) => r,
        // Nothing was sent: not the upstream's failure (the breaker does not count it).
        Err(e) => {
            let reason = e.to_string();
            return (AttemptResult::Unsendable { reason }, None);
        }
    };
    let connect = async {
        let stream = match target.connector.connect_tcp(target.addr).await {
            Ok(s) => s,
            Err(e) => return Err(Connect::Tcp(e)),
        };
        tokio_tungstenite::client_async(req, stream)
            .await
            .map_err(Connect::Ws)
    };
    let connected = match call.deadlines.ttfb {
        Some(d) => match timeout(d, connect).await {
            Ok(r) => r,
            Err(_elapsed) => {
                let result = AttemptResult::Timeout {
                    phase: TimeoutPhase::Ttfb,
                    tokens_received: 0,
                };
                return (result, Some(ReadFailure::HeadersNeverArrived));
            }
        },
        None => connect.await,
    };
    let mut ws = match connected {
        Ok((ws, _resp)) => ws,
        Err(Connect::Ws(e)) => return ws_error(e, Phase::Head),
        Err(Connect::Tcp(e)) => {
            let (failure, diag) = classify(&*e, Phase::Head);
            return transport(failure, diag);
        }
    };
    let rounds = messages.max(1);
    for i in 0..rounds {
        let payload = Bytes::from(i.to_be_bytes().to_vec());
        let text = format!("rehearse {i}");
        if let Err(e) = ws.send(Message::Ping(payload.clone())).await {
            return ws_error(e, Phase::Body);
        }
        let want_echo = i < messages;
        if want_echo && let Err(e) = ws.send(Message::text(text.clone())).await {
            return ws_error(e, Phase::Body);
        }
        let (mut got_pong, mut got_echo) = (false, !want_echo);
        let round_deadline = Instant::now() + pong_deadline;
        while !(got_pong && got_echo) {
            let msg = match timeout_at(round_deadline, ws.next()).await {
                Err(_elapsed) => {
                    return (
                        AttemptResult::WsPingTimeout,
                        Some(ReadFailure::WsPingTimeout),
                    );
                }
                Ok(None) => return transport(TransportFailure::ClosedEarly, ReadFailure::Other),
                Ok(Some(Err(e))) => return ws_error(e, Phase::Body),
                Ok(Some(Ok(m))) => m,
            };
            match msg {
                Message::Pong(p) if p == payload => got_pong = true,
                Message::Text(t) if t.as_str() == text => got_echo = true,
                Message::Close(frame) => return closed(frame),
                _ => {}
            }
        }
    }
    // A polite close; the answer is not waited for long.
    let _ = timeout(Duration::from_millis(200), ws.close(None)).await;
    let latency = started.elapsed();
    (
        AttemptResult::Ok {
            tokens: messages,
            latency, ttfb: None, longest_gap: None
        },
        None,
    )
}

/// Why a session could not start: the TCP connect (or its tuning), or the handshake.
enum Connect {
    Tcp(BoxError),
    Ws(WsError),
}

fn closed(frame: Option<CloseFrame>) -> (AttemptResult, Option<ReadFailure>) {
    let code = frame.map_or(1005, |f| u16::from(f.code));
    if code == u16::from(CloseCode::Normal) {
        return transport(TransportFailure::ClosedEarly, ReadFailure::Other);
    }
    (
        AttemptResult::WsClosed { code },
        Some(ReadFailure::WsClosed),
    )
}

fn transport(failure: TransportFailure, diag: ReadFailure) -> (AttemptResult, Option<ReadFailure>) {
    (AttemptResult::Transport { failure }, Some(diag))
}

/// Maps a tungstenite error by type: I/O by its kind, a handshake HTTP error as that status.
fn ws_error(e: WsError, phase: Phase) -> (AttemptResult, Option<ReadFailure>) {
    match e {
        WsError::Io(io) => {
            let (failure, diag) = Failure::of_io_kind(Some(io.kind()), phase).engine();
            transport(failure, diag)
        }
        WsError::Http(resp) => (
            AttemptResult::Http {
                status: resp.status().as_u16(),
                retry_after: resp
                    .headers()
                    .get(http::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string),
                throttle: super::throttle::headers(resp.headers()),
                provider_code: None,
                latency: Duration::ZERO,
            },
            None,
        ),
        WsError::ConnectionClosed | WsError::AlreadyClosed => {
            transport(TransportFailure::ClosedEarly, ReadFailure::Other)
        }
        WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            transport(TransportFailure::Reset, ReadFailure::PeerReset)
        }
        _ => transport(TransportFailure::Other, ReadFailure::Other),
    }
}
