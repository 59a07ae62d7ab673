//! The one request builder seen from the wire: the run's transport and `rehearse replay` send
//! the same bytes for the same request, names are percent-encoded, and the mock upstream
//! decodes them back into the dep the engine uses.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rehearse::engine::RequestKind;
use rehearse::engine::transport::{Call, Deadlines, Endpoint, Origin, Transport};
use rehearse::engine::{AttemptResult, OpClass};
use rehearse::replay::HttpDispatcher;
use rehearse::replay::{Dispatcher, TrafficLine};
use rehearse::transport::{Diagnostics, HttpTransport};
use rehearse::upstream::{MemoryRecords, RecordSink};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::upstream::start;

/// A loopback server that keeps every request's raw bytes (head and body) and answers
/// `200 {}` on a connection it then closes.
async fn capture() -> (std::net::SocketAddr, Arc<Mutex<Vec<Vec<u8>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let keep = keep.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let n = match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    if complete(&buf) {
                        break;
                    }
                }
                keep.lock().unwrap().push(buf);
                let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                              content-length: 2\r\nconnection: close\r\n\r\n{}";
                let _ = s.write_all(answer.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    (addr, seen)
}

/// Whether `buf` holds a whole request (head plus `content-length` bytes of body).
fn complete(buf: &[u8]) -> bool {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    buf.len() >= end + 4 + len
}

fn call(endpoint: Endpoint, key: Option<&str>) -> Call {
    Call {
        dep: "dep".into(),
        class: OpClass::ToolCall,
        endpoint,
        bearer: None,
        idempotency_key: key.map(str::to_string),
        probe: None,
        origin: Origin::Worker(0),
        attempt: 1,
        request: None,
        deadlines: Deadlines {
            ttfb: None,
            inter_token: None,
            total: Duration::from_secs(10),
        },
    }
}

fn line(kind: RequestKind) -> TrafficLine {
    TrafficLine {
        at_ms: 0,
        kind,
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

/// Sends `call` through the run's transport and `line` through replay's dispatcher to the
/// capture server; returns the two requests' bytes.
async fn both(call: Call, line: TrafficLine) -> (String, String) {
    let (addr, seen) = capture().await;
    let run = HttpTransport::new(addr, Arc::new(Diagnostics::default()));
    let got = run.send(call).await;
    assert!(matches!(got, AttemptResult::Ok { .. }), "run: {got:?}");
    let replay = HttpDispatcher::new(&format!("http://{addr}"), Duration::from_secs(10))
        .unwrap()
        .without_keep_alive();
    let got = replay.dispatch(1, line).await;
    assert!(got.ok, "replay: {got:?}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "one request each");
    let text = |b: &Vec<u8>| String::from_utf8_lossy(b).into_owned();
    (text(&seen[0]), text(&seen[1]))
}

#[tokio::test]
async fn run_and_replay_send_the_same_bytes_for_a_model_call() {
    let endpoint = Endpoint::Llm {
        model: "openai-codex/gpt-5.2".into(),
        stream: false,
        max_tokens: Some(64),
        messages: None,
    };
    let kind = RequestKind::Llm {
        model: "openai-codex/gpt-5.2".into(),
        stream: false,
        max_tokens: Some(64),
        messages: None,
    };
    let (run, replay) = both(call(endpoint, None), line(kind)).await;
    assert!(
        run.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
        "{run}"
    );
    assert_eq!(run, replay);
}

#[tokio::test]
async fn run_and_replay_send_the_same_tool_request_with_an_encoded_name() {
    let body = serde_json::json!({"q": "acme"});
    let endpoint = Endpoint::Tool {
        name: "crm search/v2".into(),
        body: body.clone(),
    };
    let kind = RequestKind::Tool {
        name: "crm search/v2".into(),
        body,
        idempotent: false,
        idempotency_key: Some("k-17".into()),
    };
    let (run, replay) = both(call(endpoint, Some("k-17")), line(kind)).await;
    assert!(
        run.starts_with("POST /tools/crm%20search%2Fv2 HTTP/1.1\r\n"),
        "{run}"
    );
    // Replay adds the line's `idempotent` flag for the recording proxy; the rest is the same.
    let flag = "x-rehearse-idempotent: false\r\n";
    assert!(replay.contains(flag), "{replay}");
    assert_eq!(run, replay.replacen(flag, "", 1));
}

#[tokio::test]
async fn the_upstream_decodes_an_encoded_tool_name_and_channel_into_their_deps() {
    let up = start("", 1).await;
    let records = Arc::new(MemoryRecords::default());
    up.upstream
        .subscribe(records.clone() as Arc<dyn RecordSink>);
    let t = HttpTransport::new(up.addr, Arc::new(Diagnostics::default()));
    let tool = Endpoint::Tool {
        name: "crm search/v2".into(),
        body: serde_json::json!({}),
    };
    let got = t.send(call(tool, None)).await;
    assert!(matches!(got, AttemptResult::Ok { .. }), "{got:?}");
    let ws = Endpoint::Ws {
        channel: "room 1/a".into(),
        messages: 1,
    };
    let got = t.send(call(ws, None)).await;
    assert!(matches!(got, AttemptResult::Ok { .. }), "{got:?}");
    let deps: Vec<String> = records.take().into_iter().map(|r| r.dep).collect();
    assert_eq!(deps, ["crm search/v2", "room 1/a"]);
}

#[tokio::test]
async fn a_fleet_host_names_itself_on_http_requests_and_websocket_handshakes() {
    let up = start("", 1).await;
    let records = Arc::new(MemoryRecords::default());
    up.upstream
        .subscribe(records.clone() as Arc<dyn RecordSink>);
    let t = HttpTransport::new(up.addr, Arc::new(Diagnostics::default())).with_host("h7");
    let tool = Endpoint::Tool {
        name: "crm".into(),
        body: serde_json::json!({}),
    };
    let ws = Endpoint::Ws {
        channel: "realtime".into(),
        messages: 1,
    };
    for endpoint in [tool, ws] {
        let got = t.send(call(endpoint, None)).await;
        assert!(matches!(got, AttemptResult::Ok { .. }), "{got:?}");
    }
    let hosts: Vec<(String, Option<String>)> = records
        .take()
        .into_iter()
        .map(|r| (r.route.to_string(), r.host))
        .collect();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert!(
        hosts.iter().all(|(_, h)| h.as_deref() == Some("h7")),
        "{hosts:?}"
    );
}

#[tokio::test]
async fn a_request_that_cannot_be_built_is_unsendable_and_sends_nothing() {
    let (addr, seen) = capture().await;
    let t = HttpTransport::new(addr, Arc::new(Diagnostics::default()));
    let tool = Endpoint::Tool {
        name: "crm".into(),
        body: serde_json::json!({}),
    };
    let got = t.send(call(tool, Some("k\n1"))).await;
    assert!(
        matches!(&got, AttemptResult::Unsendable { reason } if reason.contains("idempotency-key")),
        "{got:?}"
    );
    let replay = HttpDispatcher::new(&format!("http://{addr}"), Duration::from_secs(10)).unwrap();
    let kind = RequestKind::Tool {
        name: "crm".into(),
        body: serde_json::json!({}),
        idempotent: false,
        idempotency_key: Some("k\n1".into()),
    };
    let got = replay.dispatch(1, line(kind)).await;
    assert_eq!(got.error_kind.as_deref(), Some("bad_request"));
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the server"
    );
}
