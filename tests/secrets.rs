//! Secrets never reach a file: recognisable fake keys — bearer tokens, `api-key`,
//! `x-api-key`, cookies, in headers and in bodies, and profile tokens — go through
//! `rehearse record` and through a `rehearse run`; every byte of the recording, of every file of
//! the run directory and of the run's stdout/stderr is searched for them. Fingerprints are fine.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::run::{repo_root, show};
use crate::support::upstream::start;

/// The fake keys, each recognisable and unique.
const BEARER: &str = "sk-live-FAKEbearer0000000001";
const API_KEY: &str = "ak-FAKEapikey000000000002";
const X_API_KEY: &str = "xk-FAKExapikey00000000003";
const COOKIE: &str = "ck-FAKEcookie000000000004";
const PROXY: &str = "px-FAKEproxyauth0000000005";
const BODY_API_KEY: &str = "sk-FAKEbodyapikey00000006";
const BODY_BEARER: &str = "sk-FAKEbodybearer00000007";
const BODY_PASSWORD: &str = "pw-FAKEpassword0000000008";
const PROFILE_TOKEN_1: &str = "sk-FAKEprofile1token00009";
const PROFILE_TOKEN_2: &str = "sk-FAKEprofile2token00010";

const ALL: &[&str] = &[
    BEARER,
    API_KEY,
    X_API_KEY,
    COOKIE,
    PROXY,
    BODY_API_KEY,
    BODY_BEARER,
    BODY_PASSWORD,
    PROFILE_TOKEN_1,
    PROFILE_TOKEN_2,
];

/// A tool body carrying keys the way clients do: under secret keys, in strings, nested.
fn tool_body() -> String {
    serde_json::json!({
        "q": "acme",
        "api_key": BODY_API_KEY,
        "x-api-key": X_API_KEY,
        "auth": { "authorization": format!("Bearer {BODY_BEARER}") },
        "note": format!("forwarding {BEARER} and {COOKIE}"),
        "headers": { "Cookie": format!("session={COOKIE}"), "api-key": API_KEY },
        "login": { "user": "sre", "password": BODY_PASSWORD },
    })
    .to_string()
}

/// Every place under `dir` (recursively) where a fake key appears, as `file: key`.
fn leaks_in_dir(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut files = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            files += 1;
            let bytes = std::fs::read(&p).expect("read file");
            out.extend(leaks(
                &String::from_utf8_lossy(&bytes),
                &p.display().to_string(),
            ));
        }
    }
    assert!(
        files >= 5,
        "expected a whole run directory in {}, found {files} files",
        dir.display()
    );
    out
}

fn leaks(text: &str, origin: &str) -> Vec<String> {
    ALL.iter()
        .filter(|k| text.contains(*k))
        .map(|k| format!("{origin}: {k}"))
        .collect()
}

fn request(addr: &str, method: &str, path: &str, headers: &[(&str, String)], body: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect to the recorder");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).expect("send");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_keys_reach_no_recording_run_file_or_log() {
    let dir = tempfile::tempdir().expect("temp dir");

    // 1. `rehearse record` in front of a mock upstream.
    let upstream = start("", 1).await;
    let recording = dir.path().join("recorded.jsonl");
    let mut rec = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args([
            "record",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream.url(),
            "--out",
        ])
        .arg(&recording)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rehearse record");
    let mut first = String::new();
    let mut rec_out = BufReader::new(rec.stdout.take().expect("stdout"));
    rec_out.read_line(&mut first).expect("first line");
    let addr = first
        .trim()
        .strip_prefix("listening on http://")
        .expect(&first)
        .to_string();
    let headers = vec![
        ("Authorization", format!("Bearer {BEARER}")),
        ("api-key", API_KEY.to_string()),
        ("x-api-key", X_API_KEY.to_string()),
        ("Cookie", format!("session={COOKIE}; theme=dark")),
        ("Proxy-Authorization", format!("Basic {PROXY}")),
        ("X-Rehearse-Idempotent", "true".to_string()),
    ];
    let chat = serde_json::json!({
        "model": "openai-codex/gpt-5.2", "max_tokens": 8, "stream": false,
        "messages": [{"role": "user", "content": format!("my keys: {BEARER} {BODY_API_KEY}")}],
    })
    .to_string();
    let body = tool_body();
    let addr2 = addr.clone();
    tokio::task::spawn_blocking(move || {
        for (path, body) in [
            ("/tools/crm_search", body.as_str()),
            ("/v1/chat/completions", chat.as_str()),
        ] {
            let got = request(&addr2, "POST", path, &headers, body);
            assert!(got.starts_with("HTTP/1.1 200"), "{path}: {got}");
        }
        let mut keyed = headers.clone();
        keyed.push(("Idempotency-Key", format!("k-{BEARER}")));
        keyed.push(("X-Rehearse-Tenant", format!("team-{API_KEY}")));
        let got = request(&addr2, "POST", "/tools/ticket_create", &keyed, "{\"t\":1}");
        assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    })
    .await
    .expect("requests");
    unsafe { libc::kill(rec.id() as i32, libc::SIGTERM) };
    let status = tokio::task::spawn_blocking(move || rec.wait())
        .await
        .expect("join")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
    let mut rec_logs = String::new();
    let _ = rec_out.read_to_string(&mut rec_logs);
    let recorded = std::fs::read_to_string(&recording).expect("recording");
    assert_eq!(
        recorded.lines().count(),
        3,
        "every request recorded:\n{recorded}"
    );
    let mut found = leaks(&recorded, "recording");
    found.extend(leaks(&rec_logs, "record stdout"));
    upstream.stop().await;

    // 2. A run whose profiles carry tokens, whose faults are scoped to one, and whose traffic
    //    sends those bodies (the recorded lines, and more with keys in them).
    let mut traffic = String::new();
    for i in 0..30u64 {
        traffic.push_str(&format!(
            "{{\"at_ms\":{},\"kind\":\"tool\",\"tool\":\"crm_search\",\"idempotent\":true,\"body\":{}}}\n",
            i * 50,
            tool_body()
        ));
        traffic.push_str(&format!(
            "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"openai-codex/gpt-5.2\",\"max_tokens\":4}}\n",
            i * 50 + 25
        ));
    }
    for line in recorded.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).expect("recorded line");
        v["at_ms"] = serde_json::json!(1600);
        traffic.push_str(&format!("{v}\n"));
    }
    std::fs::write(dir.path().join("secrets.jsonl"), traffic).expect("traffic");
    let scenario = format!(
        r#"name = "secrets"
description = "fake keys everywhere: none may reach a file"
duration = "3s"
traffic = "secrets.jsonl"
scrape_interval = "100ms"
seed = 3

[[profile]]
provider = "openai-codex"
id = "openai-codex:default"
token = "{PROFILE_TOKEN_1}"
[[profile]]
provider = "openai-codex"
id = "openai-codex:backup"
token = "{PROFILE_TOKEN_2}"

[[fault]]
route = "llm"
profile = "{PROFILE_TOKEN_1}"
kind = "rate_limit"
retry_after = "1s"
first = 3
[[fault]]
route = "tool:crm_search"
kind = "status"
status = 503
from = "1s"
until = "2s"

[[expect.attempts]]
profile = "openai-codex:default"
at_least = 1
"#
    );
    let scenario_path = dir.path().join("secrets.toml");
    std::fs::write(&scenario_path, scenario).expect("scenario");
    let reports = dir.path().join("reports");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(["run", "--no-progress", "--speed", "2", "--scenario"])
            .arg(&scenario_path)
            .arg("--report-dir")
            .arg(&reports)
            .current_dir(repo_root())
            .output()
            .expect("rehearse run")
    })
    .await
    .expect("join");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "the run completed:\n{}",
        show(&out)
    );
    found.extend(leaks(&String::from_utf8_lossy(&out.stdout), "run stdout"));
    found.extend(leaks(&String::from_utf8_lossy(&out.stderr), "run stderr"));
    let reports = dir.path().join("reports");
    let run_dir = std::fs::read_dir(&reports)
        .expect("reports")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("a run directory");
    found.extend(leaks_in_dir(&run_dir));
    // The profile tokens did reach the upstream (as bearer tokens): the report knows them by
    // fingerprint.
    let upstream_log =
        std::fs::read_to_string(run_dir.join("upstream.jsonl")).expect("upstream.jsonl");
    let fp = rehearse::util::fingerprint(PROFILE_TOKEN_1);
    assert!(
        upstream_log.contains(&fp),
        "profile 1's fingerprint {fp} in upstream.jsonl"
    );
    assert!(found.is_empty(), "fake keys found:\n{}", found.join("\n"));
}
