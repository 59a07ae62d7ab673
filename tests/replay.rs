//! `rehearse replay` and `rehearse record` as real processes: malformed traffic exits 2
//! naming the line, a replay prints its summary and per-request JSONL, an unreachable target is
//! counted as errors, and the recorder prints its address, strips secrets and flushes on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rehearse::replay::HttpDispatcher;
use rehearse::replay::{Dispatcher, TrafficLine, parse_traffic};

use crate::support::rehearse;
use crate::support::replay::{start_receiver, write_file};

const WS: &str = r#"{"at_ms":0,"kind":"ws","channel":"realtime","messages":2}"#;

#[test]
fn malformed_traffic_exits_2_naming_the_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "bad-json.jsonl",
            format!("{WS}\n{{\"at_ms\":5,\"kind\":\n"),
            ":2:",
            "invalid JSON",
        ),
        (
            "unsorted.jsonl",
            format!("{}\n{WS}\n", WS.replace("\"at_ms\":0", "\"at_ms\":9")),
            ":2: field `at_ms`",
            "sorted",
        ),
        (
            "unknown-kind.jsonl",
            format!("{WS}\n{WS}\n{{\"at_ms\":1,\"kind\":\"smtp\"}}\n"),
            ":3: field `kind`",
            "smtp",
        ),
        (
            "missing-field.jsonl",
            format!("{WS}\n{{\"at_ms\":1,\"kind\":\"tool\",\"tool\":\"x\",\"body\":{{}}}}\n"),
            ":2: field `idempotent`",
            "missing",
        ),
    ];
    for (name, text, at, what) in cases {
        let path = write_file(dir.path(), name, &text);
        let p = path.to_str().unwrap();
        let out = rehearse(&["replay", "--traffic", p, "--target", "http://127.0.0.1:9"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(&format!("{p}{at}")), "{name}: {stderr}");
        assert!(stderr.contains(what), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let out = rehearse(&[
        "replay",
        "--traffic",
        "/nonexistent.jsonl",
        "--target",
        "http://x:1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let p = write_file(dir.path(), "ok.jsonl", WS);
    let p = p.to_str().unwrap();
    for bad in [
        &["--speed", "0"][..],
        &["--max-in-flight", "0"],
        &["--target", "ftp://x"],
    ] {
        let mut args = vec!["replay", "--traffic", p, "--target", "http://127.0.0.1:9"];
        args.extend_from_slice(bad);
        assert_eq!(rehearse(&args).status.code(), Some(2), "{bad:?}");
    }
}

const MIXED: &str = r#"{"at_ms":0,"kind":"llm","model":"openai-codex/gpt-5.2","stream":true,"max_tokens":64,"tenant":"team-a"}
{"at_ms":40,"kind":"tool","tool":"crm_search","body":{"q":"acme"},"idempotent":true}
{"at_ms":80,"kind":"tool","tool":"ticket_create","body":{},"idempotent":false,"idempotency_key":"k-17"}
{"at_ms":120,"kind":"ws","channel":"realtime","messages":3}
{"at_ms":160,"kind":"llm","model":"anthropic/claude-opus","stream":false,"max_tokens":32}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_command_sends_every_route_and_prints_the_summary() {
    let receiver = start_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let traffic = write_file(dir.path(), "mixed.jsonl", MIXED);
    let out_file = dir.path().join("results.jsonl");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args([
            "replay",
            "--traffic",
            traffic.to_str().unwrap(),
            "--target",
            &receiver.url,
        ])
        .args(["--speed", "2", "--out", out_file.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("sent 5 of 5 · ok 5 · errors 0"), "{stdout}");
    assert!(stdout.contains("lag ms: p50"), "{stdout}");
    assert!(
        stdout.contains("latency ms (from intended send time): p50"),
        "{stdout}"
    );
    // Every route once (order is the round-trip test's business: this one runs at speed 2).
    let mut routes: Vec<String> = receiver.sorted().into_iter().map(|a| a.route).collect();
    routes.sort();
    assert_eq!(
        routes,
        [
            "GET /ws?channel=realtime",
            "POST /tools/crm_search",
            "POST /tools/ticket_create",
            "POST /v1/chat/completions",
            "POST /v1/chat/completions",
        ]
    );
    let results = std::fs::read_to_string(&out_file).unwrap();
    let recs: Vec<serde_json::Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[2]["seq"], 2);
    assert_eq!(recs[2]["intended_ms"], 40.0, "speed 2 halves at_ms 80");
    assert_eq!(recs[2]["ok"], true);
    assert!(recs[2]["sent_ms"].as_f64().unwrap() >= 40.0);
    assert!(recs[2]["done_ms"].as_f64().unwrap() >= recs[2]["sent_ms"].as_f64().unwrap());
}

#[test]
fn unreachable_target_is_counted_as_errors_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let traffic = write_file(dir.path(), "mixed.jsonl", MIXED);
    // Port 1 on loopback: connection refused.
    let out = rehearse(&[
        "replay",
        "--traffic",
        traffic.to_str().unwrap(),
        "--target",
        "http://127.0.0.1:1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("sent 5 of 5 · ok 0 · errors 5 (connect=4 ws_connect=1)"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_command_prints_address_strips_secrets_and_flushes_on_sigterm() {
    let upstream = start_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args([
            "record",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream.url,
        ])
        .args(["--out", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .expect(&first)
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{first}");

    let lines: Vec<TrafficLine> = parse_traffic(MIXED, "mixed").unwrap();
    let d = HttpDispatcher::new(&url, Duration::from_secs(10))
        .unwrap()
        .with_header(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static("Bearer sk-cli-SECRET-1"),
        )
        .with_header(
            http::HeaderName::from_static("api-key"),
            http::HeaderValue::from_static("ak-cli-SECRET-2"),
        );
    let d = Arc::new(d);
    for (i, l) in lines.into_iter().enumerate() {
        assert!(d.dispatch(i as u64, l).await.ok);
    }
    // SIGTERM: the recorder stops and the file holds every line.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    let recorded = parse_traffic(&text, "rec").unwrap();
    assert_eq!(recorded[0].at_ms, 0);
    assert_eq!(recorded[0].tenant.as_deref(), Some("team-a"));

    let out = rehearse(&[
        "record",
        "--listen",
        "0.0.0.0:0",
        "--upstream",
        &upstream.url,
        "--out",
        dir.path().join("x.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-non-loopback"));
}
