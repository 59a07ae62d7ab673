//! The real HTTP/WebSocket transport against raw loopback sockets that misbehave on purpose:
//! each failure must come back as its typed `AttemptResult` and diagnostics class.

use std::sync::Arc;
use std::time::Duration;

use rehearse::engine::transport::{Call, Deadlines, Endpoint, Origin, Transport};
use rehearse::engine::{AttemptResult, OpClass, TimeoutPhase, TransportFailure};
use rehearse::transport::Diagnostics;
use rehearse::transport::HttpTransport;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the raw server does with each accepted connection after reading the request head.
#[derive(Clone, Copy)]
enum Misbehave {
    ResetAtOnce,
    CloseAtOnce,
    ShortBody,
    StreamThenReset,
    StreamThenStall,
    NeverAnswer,
    Ok,
    /// The head after 150 ms, a token, 250 ms of silence, a token, 50 ms, `[DONE]`.
    Paced,
}

async fn read_head(s: &mut TcpStream) {
    let mut buf = Vec::new();
    let mut b = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut b).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    }
}

async fn server(m: Misbehave) -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                read_head(&mut s).await;
                let sse = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                let chunk = |t: &str| format!("{:x}\r\n{t}\r\n", t.len());
                match m {
                    Misbehave::ResetAtOnce => {
                        socket2::SockRef::from(&s)
                            .set_linger(Some(Duration::ZERO))
                            .unwrap();
                        drop(s);
                    }
                    Misbehave::CloseAtOnce => drop(s),
                    Misbehave::ShortBody => {
                        let _ = s
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"a\":")
                            .await;
                        let _ = s.flush().await;
                        drop(s);
                    }
                    Misbehave::StreamThenReset | Misbehave::StreamThenStall => {
                        let mut out = sse.to_string();
                        out += &chunk("data: {\"t\":1}\n\n");
                        out += &chunk("data: {\"t\":2}\n\n");
                        let _ = s.write_all(out.as_bytes()).await;
                        let _ = s.flush().await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        if matches!(m, Misbehave::StreamThenReset) {
                            socket2::SockRef::from(&s)
                                .set_linger(Some(Duration::ZERO))
                                .unwrap();
                            drop(s);
                        } else {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                        }
                    }
                    Misbehave::NeverAnswer => tokio::time::sleep(Duration::from_secs(30)).await,
                    Misbehave::Paced => {
                        tokio::time::sleep(Duration::from_millis(150)).await;
                        let _ = s.write_all(sse.as_bytes()).await;
                        for (t, pause) in
                            [("data: {\"t\":1}\n\n", 250), ("data: {\"t\":2}\n\n", 50)]
                        {
                            let _ = s.write_all(chunk(t).as_bytes()).await;
                            let _ = s.flush().await;
                            tokio::time::sleep(Duration::from_millis(pause)).await;
                        }
                        let done = chunk("data: [DONE]\n\n") + "0\r\n\r\n";
                        let _ = s.write_all(done.as_bytes()).await;
                    }
                    Misbehave::Ok => {
                        let mut out = sse.to_string();
                        out += &chunk("data: {\"t\":1}\n\n");
                        out += &chunk("data: [DONE]\n\n");
                        out += "0\r\n\r\n";
                        let _ = s.write_all(out.as_bytes()).await;
                    }
                }
            });
        }
    });
    addr
}

fn llm_call() -> Call {
    Call {
        dep: "openai-codex/default/abc123".into(),
        class: OpClass::LlmInference,
        endpoint: Endpoint::Llm {
            model: "openai-codex/gpt-5.2".into(),
            stream: true,
            max_tokens: Some(8),
            messages: None,
        },
        bearer: Some("openai-codex:default".into()),
        idempotency_key: None,
        probe: None,
        origin: Origin::Worker(0),
        attempt: 1,
        request: None,
        deadlines: Deadlines {
            ttfb: Some(Duration::from_millis(400)),
            inter_token: Some(Duration::from_millis(300)),
            total: Duration::from_secs(5),
        },
    }
}

async fn send(m: Misbehave) -> (AttemptResult, Arc<Diagnostics>) {
    let addr = server(m).await;
    let diag = Arc::new(Diagnostics::default());
    let t = HttpTransport::new(addr, diag.clone());
    (t.send(llm_call()).await, diag)
}

fn diag_has(d: &Diagnostics, class: &str) -> bool {
    d.snapshot()
        .get("openai-codex/default/abc123")
        .is_some_and(|m| m.get(class) == Some(&1))
}

#[tokio::test]
async fn rst_before_any_byte_is_a_reset() {
    let (r, d) = send(Misbehave::ResetAtOnce).await;
    assert_eq!(
        r,
        AttemptResult::Transport {
            failure: TransportFailure::Reset
        }
    );
    assert!(diag_has(&d, "peer_reset"), "{:?}", d.snapshot());
}

#[tokio::test]
async fn clean_close_before_the_head_is_closed_early() {
    let (r, d) = send(Misbehave::CloseAtOnce).await;
    assert_eq!(
        r,
        AttemptResult::Transport {
            failure: TransportFailure::ClosedEarly
        }
    );
    assert!(diag_has(&d, "headers_never_arrived"));
}

#[tokio::test]
async fn short_body_is_body_ended_early() {
    let (r, d) = send(Misbehave::ShortBody).await;
    assert_eq!(
        r,
        AttemptResult::Transport {
            failure: TransportFailure::BodyEndedEarly
        }
    );
    assert!(diag_has(&d, "body_ended_early"));
}

#[tokio::test]
async fn reset_after_tokens_is_a_stream_cut() {
    let (r, d) = send(Misbehave::StreamThenReset).await;
    assert_eq!(r, AttemptResult::StreamCut { tokens_received: 2 });
    assert!(diag_has(&d, "peer_reset"), "{:?}", d.snapshot());
}

#[tokio::test]
async fn silent_stream_is_an_inter_token_timeout() {
    let (r, d) = send(Misbehave::StreamThenStall).await;
    assert_eq!(
        r,
        AttemptResult::Timeout {
            phase: TimeoutPhase::InterToken,
            tokens_received: 2
        }
    );
    assert!(diag_has(&d, "inter_token_stall"));
}

#[tokio::test]
async fn no_head_before_ttfb_is_a_ttfb_timeout() {
    let (r, d) = send(Misbehave::NeverAnswer).await;
    assert_eq!(
        r,
        AttemptResult::Timeout {
            phase: TimeoutPhase::Ttfb,
            tokens_received: 0
        }
    );
    assert!(diag_has(&d, "headers_never_arrived"));
}

#[tokio::test]
async fn complete_stream_is_ok_with_its_tokens() {
    let (r, d) = send(Misbehave::Ok).await;
    assert!(matches!(r, AttemptResult::Ok { tokens: 1, .. }), "{r:?}");
    assert!(d.snapshot().is_empty());
}

/// A complete stream reports what the deadlines bound: its time to the response head and its
/// longest wait for a frame (here at least the server's 150 ms and 250 ms; both within the
/// whole latency). A non-stream answer reports no gap.
#[tokio::test]
async fn a_complete_stream_reports_its_ttfb_and_longest_gap() {
    let addr = server(Misbehave::Paced).await;
    let t = HttpTransport::new(addr, Arc::new(Diagnostics::default()));
    let mut call = llm_call();
    call.deadlines = Deadlines {
        ttfb: Some(Duration::from_secs(5)),
        inter_token: Some(Duration::from_secs(5)),
        total: Duration::from_secs(20),
    };
    let r = t.send(call).await;
    let AttemptResult::Ok {
        tokens: 2,
        latency,
        ttfb: Some(ttfb),
        longest_gap: Some(gap),
    } = r
    else {
        panic!("{r:?}");
    };
    assert!(
        ttfb >= Duration::from_millis(150) && ttfb < latency,
        "{r:?}"
    );
    assert!(gap >= Duration::from_millis(250) && gap < latency, "{r:?}");
    assert!(latency >= Duration::from_millis(450), "{r:?}");
}

/// The engine's transport against the mock upstream's field faults: a stream broken inside its
/// 200 (an error event, a malformed line even when `[DONE]` follows it) is a failed attempt with
/// the tokens before the break, never `Ok`; a late first token is an inter-token stall (the
/// head came at once); a stall that resumes inside the deadline is a whole answer.
#[tokio::test]
async fn broken_200_streams_fail_and_a_late_first_token_is_an_inter_token_stall() {
    let up = crate::support::upstream::start(
        "[[fault]]\nroute='llm'\nmodel='e/m'\nkind='error_event'\nafter_chunks=2\n\
         [[fault]]\nroute='llm'\nmodel='b/m'\nkind='malformed_chunk'\nafter_chunks=2\nthen='end'\n\
         [[fault]]\nroute='llm'\nmodel='l/m'\nkind='first_token_delay'\ndelay='1200ms'\n\
         [[fault]]\nroute='llm'\nmodel='r/m'\nkind='stall_stream'\nafter_fraction=0.5\nresume_after='150ms'\n",
        1,
    )
    .await;
    let diag = Arc::new(Diagnostics::default());
    let t = HttpTransport::new(up.addr, diag.clone());
    let call = |model: &str| {
        let mut c = llm_call();
        c.endpoint = Endpoint::Llm {
            model: model.into(),
            stream: true,
            max_tokens: Some(6),
            messages: None,
        };
        c
    };
    for model in ["e/m", "b/m"] {
        let r = t.send(call(model)).await;
        assert!(
            matches!(r, AttemptResult::StreamCut { tokens_received: 2 }),
            "{model}: {r:?}"
        );
    }
    assert!(
        diag.snapshot()
            .values()
            .any(|m| m.get("stream_error") == Some(&2)),
        "{:?}",
        diag.snapshot()
    );
    let r = t.send(call("l/m")).await;
    assert!(
        matches!(
            r,
            AttemptResult::Timeout {
                phase: TimeoutPhase::InterToken,
                tokens_received: 0
            }
        ),
        "{r:?}"
    );
    let r = t.send(call("r/m")).await;
    assert!(matches!(r, AttemptResult::Ok { tokens: 6, .. }), "{r:?}");
    up.stop().await;
}
