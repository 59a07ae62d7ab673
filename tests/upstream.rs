//! The mock upstream's healthy routes, control API, stats, records and command line, driven by
//! real clients over loopback.
//!
//! Longer than 400 lines on purpose: the upstream's routes, control API and records are exercised
//! through one running server per test and shared helpers.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rehearse::upstream::{MemoryRecords, RecordSink};
use tokio_tungstenite::tungstenite::Message;

use crate::support::upstream::{End, call, chat_body, start};

#[tokio::test]
async fn chat_completion_json_has_choices_and_usage() {
    let up = start("", 1).await;
    let got = call(
        up.addr,
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body("openai/gpt", false, 5),
    )
    .await;
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(got.end, End::Eof);
    let v: serde_json::Value = serde_json::from_str(&got.body()).expect("json body");
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "openai/gpt");
    assert_eq!(v["choices"][0]["message"]["content"], "t1 t2 t3 t4 t5");
    assert_eq!(v["usage"]["completion_tokens"], 5);
    assert!(v["usage"]["total_tokens"].as_u64().unwrap() > 5);
    up.stop().await;
}

#[tokio::test]
async fn chat_completion_stream_sends_max_tokens_events_then_done() {
    let up = start("", 1).await;
    let got = call(
        up.addr,
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body("openai/gpt", true, 7),
    )
    .await;
    assert_eq!(got.status(), Some(200));
    assert_eq!(
        got.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    assert_eq!(got.sse_tokens(), 7, "{}", got.text());
    let body = got.body();
    assert!(body.contains("\"object\":\"chat.completion.chunk\""));
    assert!(body.contains("\"content\":\" t7\""));
    let done = body.find("data: [DONE]").expect("[DONE]");
    assert!(done > body.find(" t7").unwrap(), "[DONE] comes last");
    up.stop().await;
}

#[tokio::test]
async fn tool_route_echoes_the_call_and_bad_json_is_400() {
    let up = start("", 1).await;
    let got = call(
        up.addr,
        "POST",
        "/tools/crm_search",
        &[],
        "{\"q\":\"acme\"}",
    )
    .await;
    assert_eq!(got.status(), Some(200));
    let v: serde_json::Value = serde_json::from_str(&got.body()).unwrap();
    assert_eq!(v["tool"], "crm_search");
    assert_eq!(v["result"]["echo"]["q"], "acme");
    let bad = call(up.addr, "POST", "/tools/crm_search", &[], "{nope").await;
    assert_eq!(bad.status(), Some(400));
    let missing = call(up.addr, "GET", "/nowhere", &[], "").await;
    assert_eq!(missing.status(), Some(404));
    up.stop().await;
}

#[tokio::test]
async fn websocket_echoes_text_and_answers_pings() {
    let up = start("", 1).await;
    let url = format!("ws://{}/ws?channel=realtime", up.addr);
    let (mut ws, resp) = tokio_tungstenite::connect_async(url)
        .await
        .expect("ws connect");
    assert_eq!(resp.status(), 101);
    ws.send(Message::text("hello")).await.unwrap();
    let echoed = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap();
    assert_eq!(echoed.unwrap().unwrap(), Message::text("hello"));
    ws.send(Message::Ping(b"p1".to_vec().into())).await.unwrap();
    let pong = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap();
    assert_eq!(pong.unwrap().unwrap(), Message::Pong(b"p1".to_vec().into()));
    ws.close(None).await.unwrap();
    let stats = up.upstream.stats();
    assert_eq!(stats.routes["ws"].requests, 1);
    assert!(stats.deps.contains_key("realtime"));
    up.stop().await;
}

#[tokio::test]
async fn stats_and_records_fingerprint_tokens_and_count_duplicates() {
    let up = start(
        "[[fault]]\nroute='tool:ticket_create'\nkind='status'\nstatus=503\nfirst=1\n",
        1,
    )
    .await;
    let records = Arc::new(MemoryRecords::default());
    up.upstream
        .subscribe(records.clone() as Arc<dyn RecordSink>);
    let auth = [
        ("Authorization", "Bearer sk-secret-token"),
        ("Idempotency-Key", "k-17"),
    ];
    // 503 (not executed), then executed, then executed again: one duplicate.
    for want in [503, 200, 200] {
        let got = call(up.addr, "POST", "/tools/ticket_create", &auth, "{}").await;
        assert_eq!(got.status(), Some(want));
    }
    let probe = [("X-Breaker-Probe", "ticket_create")];
    assert_eq!(
        call(up.addr, "POST", "/tools/ticket_create", &probe, "{}")
            .await
            .status(),
        Some(200)
    );
    let model = [("Authorization", "Bearer sk-secret-token")];
    let body = chat_body("openai-codex/gpt-5.2", false, 2);
    assert_eq!(
        call(up.addr, "POST", "/v1/chat/completions", &model, &body)
            .await
            .status(),
        Some(200)
    );

    let got = call(up.addr, "GET", "/_rehearse/stats", &[], "").await;
    assert_eq!(got.status(), Some(200));
    let text = got.body();
    assert!(
        !text.contains("sk-secret-token"),
        "raw token in stats: {text}"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let fp = rehearse::util::fingerprint("sk-secret-token");
    let route = &v["routes"]["tool:ticket_create"];
    assert_eq!(route["requests"], 4);
    assert_eq!(route["faults"]["status"], 1);
    assert_eq!(route["idempotency_keys_seen"], 1);
    assert_eq!(route["duplicates_executed"], 1);
    assert_eq!(route["profiles"][fp.as_str()]["requests"], 3);
    assert_eq!(route["profiles"]["none"]["requests"], 1);
    let arrivals = v["deps"]["ticket_create"]["arrivals"].as_array().unwrap();
    let probes: Vec<bool> = arrivals
        .iter()
        .map(|a| a["probe"].as_bool().unwrap())
        .collect();
    assert_eq!(probes, [false, false, false, true]);
    let t: Vec<u64> = arrivals
        .iter()
        .map(|a| a["t_ms"].as_u64().unwrap())
        .collect();
    assert!(
        t.windows(2).all(|w| w[0] <= w[1]),
        "arrivals in order: {t:?}"
    );
    let model_dep = format!("openai-codex/default/{fp}");
    assert_eq!(
        v["deps"][model_dep.as_str()]["arrivals"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let recs = records.take();
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[0].fault.as_deref(), Some("status"));
    assert_eq!(recs[0].profile_fp.as_deref(), Some(fp.as_str()));
    assert!(!recs[1].duplicate && recs[2].duplicate);
    assert!(recs[3].probe);
    assert_eq!(recs[4].dep, model_dep);
    let line = serde_json::to_string(&recs).unwrap();
    assert!(!line.contains("sk-secret-token"));
    up.stop().await;
}

#[tokio::test]
async fn control_api_replaces_faults_live() {
    let up = start("", 1).await;
    let path = "/tools/calc";
    assert_eq!(
        call(up.addr, "POST", path, &[], "{}").await.status(),
        Some(200)
    );
    let toml = "[[fault]]\nroute = \"tool:calc\"\nkind = \"status\"\nstatus = 502\n";
    let put = call(
        up.addr,
        "PUT",
        "/_rehearse/faults",
        &[("Content-Type", "application/toml")],
        toml,
    )
    .await;
    assert_eq!(put.status(), Some(200), "{}", put.text());
    assert_eq!(
        call(up.addr, "POST", path, &[], "{}").await.status(),
        Some(502)
    );
    let listed = call(up.addr, "GET", "/_rehearse/faults", &[], "").await;
    let v: serde_json::Value = serde_json::from_str(&listed.body()).unwrap();
    assert_eq!(v[0]["kind"], "status");
    assert_eq!(v[0]["route"], "tool:calc");
    // JSON replaces again (with what GET returned, changed).
    let json = listed.body().replace("502", "504");
    let put = call(
        up.addr,
        "PUT",
        "/_rehearse/faults",
        &[("Content-Type", "application/json")],
        &json,
    )
    .await;
    assert_eq!(put.status(), Some(200), "{}", put.text());
    assert_eq!(
        call(up.addr, "POST", path, &[], "{}").await.status(),
        Some(504)
    );
    let put = call(up.addr, "PUT", "/_rehearse/faults", &[], "[]").await;
    assert_eq!(put.status(), Some(200));
    assert_eq!(
        call(up.addr, "POST", path, &[], "{}").await.status(),
        Some(200)
    );
    up.stop().await;
}

#[tokio::test]
async fn bad_fault_bodies_are_400_naming_the_field_and_the_server_keeps_serving() {
    let up = start(
        "[[fault]]\nroute='tool:calc'\nkind='status'\nstatus=503\n",
        1,
    )
    .await;
    let cases = [
        (
            "[[fault]]\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\nstatsu = 1\n",
            "statsu",
            Some(5),
        ),
        (
            "[[fault]]\nroute = \"llm\"\nkind = \"latency\"\ndelay = \"soon\"\n",
            "soon",
            Some(1),
        ),
        (
            "[{\"route\":\"llm\",\"kind\":\"reset_mid_stream\",\"after_fraction\":4}]",
            "after_fraction",
            Some(1),
        ),
        (
            "[{\"route\":\"llm\",\n\"kind\":\"rate_limit\"}]",
            "retry_after",
            Some(2),
        ),
        ("[[fault]\n", "", Some(1)),
        ("{\"fault\": 3}", "fault", Some(1)),
    ];
    for (body, field, line) in cases {
        let got = call(up.addr, "PUT", "/_rehearse/faults", &[], body).await;
        assert_eq!(got.status(), Some(400), "{body}: {}", got.text());
        let v: serde_json::Value = serde_json::from_str(&got.body()).unwrap();
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(field), "{body}: {msg}");
        assert!(msg.starts_with("PUT /_rehearse/faults:"), "{msg}");
        if let Some(line) = line {
            assert!(
                v["error"]["line"].as_u64().unwrap() >= line,
                "{body}: {msg}"
            );
        }
    }
    // The old faults are still live and the server still serves.
    assert_eq!(
        call(up.addr, "POST", "/tools/calc", &[], "{}")
            .await
            .status(),
        Some(503)
    );
    assert_eq!(
        call(up.addr, "POST", "/tools/other", &[], "{}")
            .await
            .status(),
        Some(200)
    );
    up.stop().await;
}

fn rehearse_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
}

#[test]
fn cli_prints_the_listening_line_first_serves_and_stops_on_sigterm() {
    let mut child = rehearse_bin()
        .args(["upstream", "--listen", "127.0.0.1:0", "--seed", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).expect("first line");
    let addr = line
        .trim_end()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("first line was {line:?}"))
        .to_string();
    assert!(
        addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"),
        "{addr}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let got = rt.block_on(call(
        addr.parse().unwrap(),
        "POST",
        "/tools/calc",
        &[],
        "{}",
    ));
    assert_eq!(got.status(), Some(200));
    // SIGTERM → clean exit 0.
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let mut waited = 0;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(waited < 200, "no exit within 10 s of SIGTERM");
        waited += 1;
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn cli_bad_fault_file_exits_2_naming_file_line_and_col() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("faults.toml");
    std::fs::write(
        &path,
        "[[fault]]\nroute = \"llm\"\nkind = \"status\"\n\nstatus = 503\nbogus = true\n",
    )
    .unwrap();
    let out = rehearse_bin()
        .args(["upstream", "--listen", "127.0.0.1:0", "--faults"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!("{}:6:1", path.display());
    assert!(err.contains(&want) && err.contains("bogus"), "{err}");
    assert!(out.stdout.is_empty(), "nothing printed before the error");
}

#[test]
fn cli_refuses_non_loopback_without_the_flag() {
    let out = rehearse_bin()
        .args(["upstream", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-non-loopback"));
}

/// The upstream times a request by when it reached the host, not by when its runtime got round
/// to it: two requests sent 150 ms apart while the server's runtime is blocked are recorded
/// ≈ 150 ms apart (kernel receive timestamps), not together when the runtime frees up. This is
/// what keeps probe spacing and replay offsets honest on a busy machine.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "current_thread")]
async fn arrival_times_are_when_requests_reached_the_host_not_when_the_handler_ran() {
    use std::io::{Read, Write};
    let up = start("", 1).await;
    let log = Arc::new(MemoryRecords::default());
    up.upstream.subscribe(log.clone());
    // Lets the server start; the kernel switches receive timestamps on from a work queue.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let addr = up.addr;
    let req = crate::support::upstream::raw("POST", "/tools/crm_search", &[], "{}");
    let sender = std::thread::spawn(move || {
        let mut a = std::net::TcpStream::connect(addr).unwrap();
        a.write_all(&req).unwrap();
        std::thread::sleep(Duration::from_millis(150));
        let mut b = std::net::TcpStream::connect(addr).unwrap();
        b.write_all(&req).unwrap();
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        a.read_to_end(&mut ra).unwrap();
        b.read_to_end(&mut rb).unwrap();
        (ra, rb)
    });
    // Blocks the only runtime thread: the upstream can neither accept nor read meanwhile.
    std::thread::sleep(Duration::from_millis(600));
    let (ra, rb) = tokio::task::spawn_blocking(move || sender.join().unwrap())
        .await
        .unwrap();
    for r in [ra, rb] {
        assert!(String::from_utf8_lossy(&r).starts_with("HTTP/1.1 200"));
    }
    let recs = log.take();
    assert_eq!(recs.len(), 2);
    let gap = recs[1].t_ms.abs_diff(recs[0].t_ms);
    assert!(
        gap >= 140,
        "recorded {gap} ms apart; the handler times would be ≈ 0 ms apart"
    );
    up.stop().await;
}
