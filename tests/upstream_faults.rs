//! Every fault kind of docs/faults.md as a real client over loopback sees it, and the scoping rules
//! (windows, seeded probability, profile). Tolerances are generous: these run on a busy box.

use std::time::{Duration, SystemTime};

use futures_util::{SinkExt, StreamExt};
use rehearse::upstream::UpstreamConfig;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::support::upstream::{
    End, Got, call, chat_body, exchange, raw, start, start_with, still_open,
};

const TOOL: &str = "/tools/crm_search";

fn chat(stream: bool, tokens: u32) -> Vec<u8> {
    raw(
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body("openai/gpt", stream, tokens),
    )
}

#[tokio::test]
async fn status_fault_returns_that_status_and_body() {
    let up = start(
        "[[fault]]\nroute='tool:crm_search'\nkind='status'\nstatus=503\nbody='down'\n",
        1,
    )
    .await;
    let got = call(up.addr, "POST", TOOL, &[], "{}").await;
    assert_eq!(got.status(), Some(503));
    assert_eq!(got.body(), "down");
    assert_eq!(got.end, End::Eof);
    up.stop().await;
}

#[tokio::test]
async fn rate_limit_sends_429_with_retry_after_seconds_and_http_date() {
    let up = start(
        "[[fault]]\nroute='tool:a'\nkind='rate_limit'\nretry_after='120s'\n\
         [[fault]]\nroute='tool:b'\nkind='rate_limit'\nretry_after='90s'\nretry_after_format='http-date'\n",
        1,
    )
    .await;
    let got = call(up.addr, "POST", "/tools/a", &[], "{}").await;
    assert_eq!(got.status(), Some(429));
    assert_eq!(got.header("retry-after").as_deref(), Some("120"));
    let before = SystemTime::now();
    let got = call(up.addr, "POST", "/tools/b", &[], "{}").await;
    assert_eq!(got.status(), Some(429));
    let date = got.header("retry-after").expect("Retry-After");
    let at = httpdate::parse_http_date(&date).expect("an HTTP date");
    let wait = at.duration_since(before).expect("in the future");
    assert!(
        wait >= Duration::from_secs(88) && wait <= Duration::from_secs(95),
        "{date} is {wait:?} away"
    );
    up.stop().await;
}

#[tokio::test]
async fn latency_delays_the_headers_within_tolerance() {
    let up = start(
        "[[fault]]\nroute='tool:crm_search'\nkind='latency'\ndelay='400ms'\n",
        1,
    )
    .await;
    let t0 = Instant::now();
    let got = call(up.addr, "POST", TOOL, &[], "{}").await;
    let took = t0.elapsed();
    assert_eq!(got.status(), Some(200));
    assert!(
        took >= Duration::from_millis(390) && took < Duration::from_secs(4),
        "{took:?}"
    );
    // Not faulted: no delay to speak of.
    let t0 = Instant::now();
    assert_eq!(
        call(up.addr, "POST", "/tools/other", &[], "{}")
            .await
            .status(),
        Some(200)
    );
    assert!(t0.elapsed() < Duration::from_millis(390));
    up.stop().await;
}

#[tokio::test]
async fn stall_sends_no_headers_inside_the_client_deadline() {
    let up = start("[[fault]]\nroute='llm'\nkind='stall'\n", 1).await;
    let got = exchange(up.addr, &chat(false, 4), Duration::from_millis(800)).await;
    assert_eq!(got.end, End::Deadline);
    assert!(got.bytes.is_empty(), "{}", got.text());
    assert!(still_open(got.stream.as_ref().unwrap()));
    // The request was read and counted.
    assert_eq!(up.upstream.stats().routes["llm"].faults["stall"], 1);
    up.stop().await;
}

#[tokio::test]
async fn reset_is_a_connection_reset_before_any_byte() {
    let up = start("[[fault]]\nroute='tool:crm_search'\nkind='reset'\n", 1).await;
    for _ in 0..3 {
        let got = exchange(
            up.addr,
            &raw("POST", TOOL, &[], "{}"),
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(got.end, End::Reset, "{}", got.text());
        assert!(got.bytes.is_empty());
    }
    // Other routes are untouched.
    assert_eq!(
        call(up.addr, "POST", "/tools/x", &[], "{}").await.status(),
        Some(200)
    );
    up.stop().await;
}

#[tokio::test]
async fn reset_mid_stream_at_0_4_sends_headers_and_40_percent_of_tokens_then_resets() {
    let up = start(
        "[[fault]]\nroute='llm'\nkind='reset_mid_stream'\nafter_fraction=0.4\n",
        1,
    )
    .await;
    let got = exchange(up.addr, &chat(true, 10), Duration::from_secs(10)).await;
    assert_eq!(got.status(), Some(200));
    assert_eq!(got.end, End::Reset, "{}", got.text());
    let n = got.sse_tokens();
    assert!((3..=5).contains(&n), "{n} of 10 tokens: {}", got.text());
    assert!(!got.text().contains("[DONE]"));
    // A JSON body is cut the same way: fewer bytes than Content-Length, then RST.
    let got = exchange(up.addr, &chat(false, 50), Duration::from_secs(10)).await;
    assert_eq!(got.status(), Some(200));
    assert_eq!(got.end, End::Reset);
    let announced: usize = got.header("content-length").unwrap().parse().unwrap();
    let body = got.body().len();
    assert!(
        body < announced && body * 10 >= announced * 3,
        "{body} of {announced}"
    );
    up.stop().await;
}

#[tokio::test]
async fn stall_stream_stops_the_tokens_and_keeps_the_socket_open() {
    let up = start(
        "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\n",
        1,
    )
    .await;
    let got = exchange(up.addr, &chat(true, 8), Duration::from_millis(1500)).await;
    assert_eq!(got.status(), Some(200));
    assert_eq!(got.end, End::Deadline, "{}", got.text());
    assert_eq!(got.sse_tokens(), 4, "{}", got.text());
    assert!(still_open(got.stream.as_ref().unwrap()));
    up.stop().await;
}

#[tokio::test]
async fn slow_stream_dribbles_tokens_at_the_interval() {
    let up = start(
        "[[fault]]\nroute='llm'\nkind='slow_stream'\ntoken_interval='150ms'\n",
        1,
    )
    .await;
    let t0 = Instant::now();
    let got = exchange(up.addr, &chat(true, 5), Duration::from_secs(10)).await;
    let took = t0.elapsed();
    assert_eq!(got.sse_tokens(), 5);
    assert!(got.text().contains("[DONE]"));
    assert!(took >= Duration::from_millis(740), "{took:?}");
    up.stop().await;
}

#[tokio::test]
async fn ws_ping_timeout_answers_no_ping_while_tcp_stays_up() {
    let up = start("[[fault]]\nroute='ws'\nkind='ws_ping_timeout'\n", 1).await;
    let url = format!("ws://{}/ws?channel=realtime", up.addr);
    let (mut ws, resp) = tokio_tungstenite::connect_async(url)
        .await
        .expect("handshake");
    assert_eq!(resp.status(), 101);
    ws.send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    ws.send(Message::text("echo?")).await.unwrap();
    let got = tokio::time::timeout(Duration::from_millis(800), ws.next()).await;
    assert!(got.is_err(), "expected silence, got {got:?}");
    let tcp = match ws.get_ref() {
        tokio_tungstenite::MaybeTlsStream::Plain(s) => s,
        _ => unreachable!(),
    };
    assert!(still_open(tcp), "TCP must stay up");
    up.stop().await;
}

#[tokio::test]
async fn ws_close_sends_that_close_code() {
    let up = start("[[fault]]\nroute='ws'\nkind='ws_close'\ncode=4001\n", 1).await;
    let url = format!("ws://{}/ws", up.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("handshake");
    let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .expect("a close frame in time");
    match msg {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::from(4001)),
        other => panic!("expected a close frame, got {other:?}"),
    }
    up.stop().await;
}

#[tokio::test]
async fn a_window_switches_the_fault_on_and_off() {
    // 1 s .. 2.4 s of the run: requests at ~0 s, ~1.7 s and ~3.1 s leave ≥ 0.7 s of margin.
    let up = start(
        "[[fault]]\nroute='tool:crm_search'\nkind='status'\nstatus=503\nfrom='1s'\nuntil='2400ms'\n",
        1,
    )
    .await;
    let start = Instant::now();
    up.upstream.set_run_start(start);
    let mut seen = Vec::new();
    for at in [0, 1700, 3100] {
        tokio::time::sleep_until(start + Duration::from_millis(at)).await;
        seen.push(call(up.addr, "POST", TOOL, &[], "{}").await.status());
    }
    assert_eq!(seen, [Some(200), Some(503), Some(200)]);
    up.stop().await;
}

#[tokio::test]
async fn speed_divides_the_window() {
    // speed 10: "10s".."24s" is 1 s .. 2.4 s.
    let faults = rehearse::upstream::parse_fault_file(
        "[[fault]]\nroute='*'\nkind='status'\nstatus=500\nfrom='10s'\nuntil='24s'\n",
        "t.toml",
    )
    .unwrap();
    let up = start_with(UpstreamConfig {
        faults,
        speed: crate::support::speed(10.0),
        ..UpstreamConfig::default()
    })
    .await;
    let start = Instant::now();
    up.upstream.set_run_start(start);
    let mut seen = Vec::new();
    for at in [0, 1700, 3100] {
        tokio::time::sleep_until(start + Duration::from_millis(at)).await;
        seen.push(call(up.addr, "POST", TOOL, &[], "{}").await.status());
    }
    assert_eq!(seen, [Some(200), Some(500), Some(200)]);
    up.stop().await;
}

async fn probability_sequence(seed: u64) -> Vec<u16> {
    let up = start(
        "[[fault]]\nroute='*'\nkind='status'\nstatus=503\nprobability=0.5\n",
        seed,
    )
    .await;
    let mut out = Vec::new();
    for _ in 0..24 {
        out.push(
            call(up.addr, "POST", TOOL, &[], "{}")
                .await
                .status()
                .unwrap(),
        );
    }
    up.stop().await;
    out
}

#[tokio::test]
async fn probability_with_a_fixed_seed_repeats_its_sequence() {
    let a = probability_sequence(7).await;
    let b = probability_sequence(7).await;
    assert_eq!(a, b);
    let hits = a.iter().filter(|s| **s == 503).count();
    assert!((4..=20).contains(&hits), "{a:?}");
    assert_ne!(a, probability_sequence(8).await);
}

#[tokio::test]
async fn profile_scoping_hits_only_that_bearer_token() {
    let up = start(
        "[[fault]]\nroute='llm'\nprofile='openai-codex:default'\nkind='status'\nstatus=500\n",
        1,
    )
    .await;
    let body = chat_body("openai-codex/gpt-5.2", false, 2);
    let path = "/v1/chat/completions";
    let hit = [("Authorization", "Bearer openai-codex:default")];
    let other = [("Authorization", "Bearer openai-codex:backup")];
    assert_eq!(
        call(up.addr, "POST", path, &hit, &body).await.status(),
        Some(500)
    );
    assert_eq!(
        call(up.addr, "POST", path, &other, &body).await.status(),
        Some(200)
    );
    assert_eq!(
        call(up.addr, "POST", path, &[], &body).await.status(),
        Some(200)
    );
    up.stop().await;
}

// ---- The field's faults (#38): a late first token, a malformed chunk, an error event inside a
// 200 stream, a stall that resumes, provider errors by name, extra headers, `when`.

/// Sends `request` and reads until `marker` arrives: how long that took, and what was read.
async fn until(
    s: &mut tokio::net::TcpStream,
    marker: &str,
    seen: &mut Vec<u8>,
    deadline: Duration,
) -> Option<Duration> {
    use tokio::io::AsyncReadExt;
    let t0 = Instant::now();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(seen).contains(marker) {
        match tokio::time::timeout_at(t0 + deadline, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    }
    Some(t0.elapsed())
}

fn chat_with(stream: bool, tokens: u32, messages: &str) -> Vec<u8> {
    let body = format!(
        "{{\"model\":\"openai/gpt\",\"stream\":{stream},\"max_tokens\":{tokens},\"messages\":{messages}}}"
    );
    raw("POST", "/v1/chat/completions", &[], &body)
}

#[tokio::test]
async fn first_token_delay_sends_headers_and_role_at_once_and_the_first_token_late() {
    use tokio::io::AsyncWriteExt;
    let up = start(
        "[[fault]]\nroute='llm'\nkind='first_token_delay'\ndelay='900ms'\n\
         headers={x-ms-throttle-reason='quota'}\n",
        1,
    )
    .await;
    let mut s = tokio::net::TcpStream::connect(up.addr).await.unwrap();
    s.write_all(&chat(true, 3)).await.unwrap();
    let mut seen = Vec::new();
    let d = Duration::from_secs(10);
    let role = until(&mut s, "\"role\":\"assistant\"", &mut seen, d)
        .await
        .expect("role chunk");
    assert!(
        role < Duration::from_millis(450),
        "headers and role at once: {role:?}"
    );
    let got = Got {
        bytes: seen.clone(),
        end: End::Eof,
        stream: None,
    };
    assert_eq!(got.status(), Some(200));
    assert_eq!(
        got.header("x-ms-throttle-reason").as_deref(),
        Some("quota"),
        "headers ride on the 200"
    );
    assert!(
        !String::from_utf8_lossy(&seen).contains("\"content\""),
        "no token yet"
    );
    let first = until(&mut s, "\"content\":\"t1\"", &mut seen, d)
        .await
        .expect("t1");
    assert!(
        role + first >= Duration::from_millis(880) && role + first < Duration::from_secs(5),
        "t1 {first:?} after the role chunk"
    );
    until(&mut s, "[DONE]", &mut seen, d)
        .await
        .expect("then the rest, whole");
    // Not streaming: the whole answer late.
    let t0 = Instant::now();
    let got = exchange(up.addr, &chat(false, 3), d).await;
    assert_eq!(got.status(), Some(200));
    assert!(got.body().contains("t1 t2 t3"));
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(880) && took < Duration::from_secs(5),
        "{took:?}"
    );
    up.stop().await;
}

#[tokio::test]
async fn malformed_chunk_sends_a_line_that_is_not_json_then_goes_on_or_ends_with_done() {
    let up = start(
        "[[fault]]\nroute='llm'\nmodel='openai/gpt'\nkind='malformed_chunk'\nafter_chunks=2\n\
         [[fault]]\nroute='llm'\nkind='malformed_chunk'\nafter_chunks=1\nthen='end'\n",
        1,
    )
    .await;
    let d = Duration::from_secs(10);
    let got = exchange(up.addr, &chat(true, 4), d).await;
    assert_eq!(got.end, End::Eof);
    let events = got.sse_events();
    let bad: Vec<usize> = (0..events.len())
        .filter(|&i| {
            events[i] != "[DONE]" && serde_json::from_str::<serde_json::Value>(&events[i]).is_err()
        })
        .collect();
    assert_eq!(bad, [3], "role, t1, t2, then the bad line: {events:?}");
    let tokens = got.body().matches("\"delta\":{\"content\":\"").count();
    assert_eq!(tokens, 4, "then every token: {}", got.text());
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    assert!(got.text().contains("\"finish_reason\":\"stop\""));
    // `then = "end"`: the bad line, `[DONE]`, a clean end; no finish chunk.
    let other = raw(
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body("other/m", true, 4),
    );
    let got = exchange(up.addr, &other, d).await;
    assert_eq!(got.end, End::Eof);
    let events = got.sse_events();
    assert_eq!(events.len(), 4, "role, t1, bad, [DONE]: {events:?}");
    assert_eq!(events[3], "[DONE]");
    assert!(!got.text().contains("finish_reason\":\"stop"));
    // A request that does not stream is out of its scope: a whole JSON answer.
    let got = exchange(up.addr, &chat(false, 4), d).await;
    let v: serde_json::Value = serde_json::from_str(&got.body()).expect("JSON");
    assert_eq!(v["choices"][0]["message"]["content"], "t1 t2 t3 t4");
    let stats = up.upstream.stats();
    assert_eq!(
        stats.routes["llm"].faults.get("malformed_chunk"),
        Some(&2),
        "{stats:?}"
    );
    up.stop().await;
}

#[tokio::test]
async fn error_event_sends_an_error_inside_the_200_stream_then_ends_cleanly() {
    let up = start(
        "[[fault]]\nroute='llm'\nkind='error_event'\nafter_chunks=2\nerror='rate_limit_exceeded'\n",
        1,
    )
    .await;
    let got = exchange(up.addr, &chat(true, 5), Duration::from_secs(10)).await;
    assert_eq!(got.status(), Some(200));
    assert_eq!(got.end, End::Eof, "a clean end: {}", got.text());
    let events = got.sse_events();
    assert_eq!(events.len(), 4, "role, t1, t2, the error: {events:?}");
    let err: serde_json::Value = serde_json::from_str(&events[3]).unwrap();
    assert_eq!(err["error"]["code"], "rate_limit_exceeded");
    assert_eq!(err["error"]["type"], "requests");
    assert!(!got.text().contains("[DONE]") && !got.text().contains("finish_reason\":\"stop"));
    up.stop().await;
}

#[tokio::test]
async fn stall_stream_with_resume_after_is_silent_that_long_then_completes() {
    use tokio::io::AsyncWriteExt;
    let up = start(
        "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\nresume_after='800ms'\n",
        1,
    )
    .await;
    let mut s = tokio::net::TcpStream::connect(up.addr).await.unwrap();
    s.write_all(&chat(true, 6)).await.unwrap();
    let (mut seen, d) = (Vec::new(), Duration::from_secs(10));
    let t0 = Instant::now();
    until(&mut s, "\"content\":\" t3\"", &mut seen, d)
        .await
        .expect("3 of 6 tokens");
    let third = t0.elapsed();
    let fourth = until(&mut s, "\"content\":\" t4\"", &mut seen, d)
        .await
        .expect("t4 after the silence");
    assert!(
        fourth >= Duration::from_millis(750) && fourth < Duration::from_secs(5),
        "silence {fourth:?} (t3 at {third:?})"
    );
    until(&mut s, "[DONE]", &mut seen, d)
        .await
        .expect("the stream completes");
    let got = Got {
        bytes: seen,
        end: End::Eof,
        stream: None,
    };
    assert_eq!(got.sse_tokens(), 6);
    // A JSON body: half of it, the silence, the rest, one Content-Length.
    let t0 = Instant::now();
    let got = exchange(up.addr, &chat(false, 6), d).await;
    assert!(
        t0.elapsed() >= Duration::from_millis(750),
        "{:?}",
        t0.elapsed()
    );
    let v: serde_json::Value = serde_json::from_str(&got.body()).expect("whole JSON");
    assert_eq!(v["choices"][0]["message"]["content"], "t1 t2 t3 t4 t5 t6");
    up.stop().await;
}

#[tokio::test]
async fn a_named_provider_error_with_duration_headers_scaled_and_recorded_in_scenario_time() {
    use rehearse::upstream::{MemoryRecords, parse_fault_file};
    use std::sync::Arc;
    let faults = parse_fault_file(
        "[[fault]]\nroute='llm'\nmodel='a/m'\nkind='status'\nerror='insufficient_quota'\n\
         headers={retry-after-ms='9000', x-ms-throttle-reason='quota'}\n\
         [[fault]]\nroute='llm'\nmodel='b/m'\nkind='status'\nerror='context_length_exceeded'\n\
         headers={x-ratelimit-reset-requests='6m0s'}\n\
         [[fault]]\nroute='llm'\nmodel='c/m'\nkind='rate_limit'\nretry_after='10s'\n\
         headers={x-ms-retry-after-ms='4000'}\n",
        "t.toml",
    )
    .unwrap();
    let up = start_with(UpstreamConfig {
        faults,
        seed: 1,
        speed: rehearse::util::speed::Speed::new(2.0).unwrap(),
        ..UpstreamConfig::default()
    })
    .await;
    let records = Arc::new(MemoryRecords::default());
    up.upstream.subscribe(records.clone());
    let send = |model: &str| {
        raw(
            "POST",
            "/v1/chat/completions",
            &[],
            &chat_body(model, false, 2),
        )
    };
    let d = Duration::from_secs(10);
    let a = exchange(up.addr, &send("a/m"), d).await;
    assert_eq!(a.status(), Some(429), "insufficient_quota's own status");
    let v: serde_json::Value = serde_json::from_str(&a.body()).unwrap();
    assert_eq!(v["error"]["code"], "insufficient_quota");
    assert_eq!(v["error"]["type"], "insufficient_quota");
    assert!(v["error"]["param"].is_null());
    assert_eq!(
        a.header("retry-after-ms").as_deref(),
        Some("4500"),
        "9 s at ×2"
    );
    assert_eq!(a.header("x-ms-throttle-reason").as_deref(), Some("quota"));
    let b = exchange(up.addr, &send("b/m"), d).await;
    assert_eq!(b.status(), Some(400));
    assert_eq!(
        b.header("x-ratelimit-reset-requests").as_deref(),
        Some("3m0s")
    );
    let c = exchange(up.addr, &send("c/m"), d).await;
    assert_eq!(c.status(), Some(429));
    assert_eq!(
        c.header("retry-after").as_deref(),
        Some("5"),
        "rate_limit's own, scaled"
    );
    assert_eq!(c.header("x-ms-retry-after-ms").as_deref(), Some("2000"));
    // The record carries the wait the response announced, whichever header said it, in
    // scenario time: what `[[expect.cooldown]] until_retry_after` reads.
    let waits: Vec<Option<u64>> = records.take().iter().map(|r| r.retry_after_ms).collect();
    assert_eq!(waits, [Some(9000), Some(360_000), Some(4000)]);
    up.stop().await;
}

#[tokio::test]
async fn when_prefill_hits_only_a_request_whose_last_message_is_the_assistants() {
    let up = start(
        "[[fault]]\nroute='llm'\nkind='status'\nerror='context_length_exceeded'\nwhen={prefill=true}\n",
        1,
    )
    .await;
    let d = Duration::from_secs(10);
    let plain = exchange(
        up.addr,
        &chat_with(false, 2, r#"[{"role":"user","content":"hi"}]"#),
        d,
    )
    .await;
    assert_eq!(plain.status(), Some(200));
    let prefill = r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"Sure,"}]"#;
    let got = exchange(up.addr, &chat_with(true, 2, prefill), d).await;
    assert_eq!(got.status(), Some(400), "{}", got.text());
    assert!(got.body().contains("context_length_exceeded"));
    up.stop().await;
}
