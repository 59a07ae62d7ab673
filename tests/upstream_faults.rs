//! Every fault kind of docs/faults.md as a real client over loopback sees it, and the scoping rules
//! (windows, seeded probability, profile). Tolerances are generous: these run on a busy box.

use std::time::{Duration, SystemTime};

use futures_util::{SinkExt, StreamExt};
use rehearse::upstream::UpstreamConfig;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::support::upstream::{
    End, call, chat_body, exchange, raw, start, start_with, still_open,
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
