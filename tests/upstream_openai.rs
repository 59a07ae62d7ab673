//! The mock upstream speaks OpenAI's shape exactly: the streamed chunks (role delta, content,
//! `finish_reason: "stop"`, optional usage, `[DONE]`) and the same text non-streamed; the three
//! stream cut points (`cut = "frame" | "mid_frame" | "no_terminal"`); a `Retry-After` http-date
//! never shorter than configured; the `--log` request log and `-v`; and the official OpenAI
//! Python SDK reading our stream with `finish_reason == "stop"`.

use std::time::{Duration, SystemTime};

use crate::support::upstream::{End, Got, UpstreamProcess, call, chat_body, exchange, raw, start};

/// The parsed JSON chunks of a stream and whether it ended with `[DONE]`.
fn chunks(got: &crate::support::upstream::Got) -> (Vec<serde_json::Value>, bool) {
    let events = got.sse_events();
    let done = events.last().is_some_and(|e| e == "[DONE]");
    let json = events
        .iter()
        .filter(|e| *e != "[DONE]")
        .map(|e| serde_json::from_str(e).unwrap_or_else(|err| panic!("{err}: {e}")))
        .collect();
    (json, done)
}

#[tokio::test]
async fn chat_stream_has_openais_shape_and_the_same_text_as_json() {
    let up = start("", 1).await;
    let stream = call(
        up.addr,
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body("mockai/m1", true, 4),
    )
    .await;
    let (c, done) = chunks(&stream);
    assert!(done, "ends with data: [DONE]: {}", stream.text());
    assert_eq!(c.len(), 6, "role, 4 content, finish: {c:?}");
    assert_eq!(
        c[0]["choices"][0]["delta"],
        serde_json::json!({"role": "assistant"})
    );
    assert!(c[0]["choices"][0]["finish_reason"].is_null());
    let last = &c[5]["choices"][0];
    assert_eq!(last["finish_reason"], "stop");
    assert_eq!(last["delta"], serde_json::json!({}));
    assert!(
        c.iter()
            .all(|x| x["object"] == "chat.completion.chunk" && x["model"] == "mockai/m1")
    );
    assert!(
        c.iter().all(|x| x.get("usage").is_none()),
        "no usage unless asked"
    );
    let text: String = c[1..5]
        .iter()
        .map(|x| {
            x["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let json = call(
        up.addr,
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body("mockai/m1", false, 4),
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&json.body()).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], text.as_str());
    assert_eq!(text, "t1 t2 t3 t4");
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_eq!(v["usage"]["completion_tokens"], 4);
    up.stop().await;
}

#[tokio::test]
async fn include_usage_adds_a_usage_chunk_before_done() {
    let up = start("", 1).await;
    let body = "{\"model\":\"mockai/m1\",\"stream\":true,\"max_tokens\":3,\
                \"stream_options\":{\"include_usage\":true},\"messages\":[]}";
    let got = call(up.addr, "POST", "/v1/chat/completions", &[], body).await;
    let (c, done) = chunks(&got);
    assert!(done);
    assert_eq!(c.len(), 6, "role, 3 content, finish, usage: {c:?}");
    assert_eq!(c[4]["choices"][0]["finish_reason"], "stop");
    let usage = &c[5];
    assert_eq!(usage["choices"], serde_json::json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 3);
    let total = usage["usage"]["total_tokens"].as_u64().unwrap();
    assert_eq!(total, usage["usage"]["prompt_tokens"].as_u64().unwrap() + 3);
    up.stop().await;
}

fn chat(model: &str, stream: bool, tokens: u32) -> Vec<u8> {
    raw(
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body(model, stream, tokens),
    )
}

#[tokio::test]
async fn a_frame_cut_ends_on_an_event_boundary_then_resets() {
    let up = start(
        "[[fault]]\nroute='llm'\nkind='reset_mid_stream'\nafter_fraction=0.5\ncut='frame'\n",
        1,
    )
    .await;
    let got = exchange(up.addr, &chat("m", true, 8), Duration::from_secs(10)).await;
    assert_eq!(got.end, End::Reset, "{}", got.text());
    let (c, done) = chunks(&got);
    assert!(!done);
    assert_eq!(c.len(), 5, "role + 4 of 8 tokens: {c:?}");
    let body = crate::support::upstream::dechunk(&got.body());
    assert!(body.ends_with("\n\n"), "whole events only: {body:?}");
    up.stop().await;
}

#[tokio::test]
async fn a_mid_frame_cut_leaves_half_an_event_then_resets_or_stalls() {
    let up = start(
        "[[fault]]\nroute='llm'\nmodel='r'\nkind='reset_mid_stream'\nafter_fraction=0.5\ncut='mid_frame'\n\
         [[fault]]\nroute='llm'\nmodel='s'\nkind='stall_stream'\nafter_fraction=0.25\ncut='mid_frame'\n",
        1,
    )
    .await;
    let got = exchange(up.addr, &chat("r", true, 8), Duration::from_secs(10)).await;
    assert_eq!(got.end, End::Reset, "{}", got.text());
    let body = crate::support::upstream::dechunk(&got.body());
    let (whole, partial) = body.rsplit_once("\n\n").expect("whole events first");
    assert_eq!(
        whole.matches("data: ").count(),
        5,
        "role + 4 tokens: {body:?}"
    );
    assert!(
        partial.starts_with("data: {") && !partial.ends_with('}'),
        "half of the 5th token event: {partial:?}"
    );
    let got = exchange(up.addr, &chat("s", true, 8), Duration::from_millis(1200)).await;
    assert_eq!(got.end, End::Deadline, "{}", got.text());
    let body = crate::support::upstream::dechunk(&got.body());
    let (whole, partial) = body.rsplit_once("\n\n").unwrap();
    assert_eq!(
        whole.matches("data: ").count(),
        3,
        "role + 2 tokens: {body:?}"
    );
    assert!(
        partial.starts_with("data: {") && partial.len() > 10,
        "{partial:?}"
    );
    up.stop().await;
}

#[tokio::test]
async fn a_no_terminal_cut_ends_the_stream_cleanly_without_finish_or_done() {
    let up = start(
        "[[fault]]\nroute='llm'\nmodel='j'\nkind='stall_stream'\nafter_fraction=0.5\ncut='no_terminal'\n\
         [[fault]]\nroute='llm'\nkind='reset_mid_stream'\nafter_fraction=1.0\ncut='no_terminal'\n",
        1,
    )
    .await;
    let got = exchange(up.addr, &chat("m", true, 4), Duration::from_secs(10)).await;
    assert_eq!(got.status(), Some(200));
    assert_eq!(
        got.end,
        End::Eof,
        "a clean end, not a reset: {}",
        got.text()
    );
    assert!(got.body().ends_with("0\r\n\r\n"), "chunked body terminated");
    let (c, done) = chunks(&got);
    assert!(!done, "no [DONE]");
    assert_eq!(c.len(), 5, "role + all 4 tokens: {c:?}");
    assert!(c.iter().all(|x| x["choices"][0]["finish_reason"].is_null()));
    // A JSON body ends cleanly too, with a Content-Length of what was sent.
    let got = exchange(up.addr, &chat("j", false, 20), Duration::from_secs(10)).await;
    assert_eq!(got.end, End::Eof, "no stall either: {}", got.text());
    let announced: usize = got.header("content-length").unwrap().parse().unwrap();
    assert_eq!(announced, got.body().len());
    assert!(serde_json::from_str::<serde_json::Value>(&got.body()).is_err());
    up.stop().await;
}

#[tokio::test]
async fn an_unknown_cut_is_a_bad_fault_naming_the_choices() {
    let err = rehearse::upstream::parse_fault_file(
        "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\ncut='middle'\n",
        "f.toml",
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("f.toml:1:"), "{msg}");
    assert!(msg.contains("middle") && msg.contains("mid_frame"), "{msg}");
    // The default is left out when a fault is shown; a set cut is shown.
    let specs = rehearse::upstream::parse_fault_file(
        "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\n\
         [[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\ncut='no_terminal'\n",
        "f.toml",
    )
    .unwrap();
    let json = serde_json::to_value(&specs).unwrap();
    assert!(json[0].get("cut").is_none(), "{json}");
    assert_eq!(json[1]["cut"], "no_terminal");
}

#[tokio::test]
async fn a_retry_after_http_date_is_never_sooner_than_configured() {
    let up = start(
        "[[fault]]\nroute='llm'\nkind='rate_limit'\nretry_after='2s'\nretry_after_format='http-date'\n",
        1,
    )
    .await;
    for _ in 0..3 {
        let got = exchange(up.addr, &chat("m", false, 2), Duration::from_secs(10)).await;
        // The moment the client has the answer: its wait is the date minus this.
        let read_at = SystemTime::now();
        assert_eq!(got.status(), Some(429));
        let date = got.header("retry-after").expect("Retry-After");
        let at = httpdate::parse_http_date(&date).expect("an http-date");
        let wait = at.duration_since(read_at).unwrap_or_default();
        assert!(
            wait >= Duration::from_millis(1900),
            "{date}: {wait:?} left at the client, configured 2 s"
        );
        assert!(wait <= Duration::from_secs(3), "{wait:?}");
        tokio::time::sleep(Duration::from_millis(330)).await;
    }
    up.stop().await;
}

#[test]
fn the_request_log_has_wall_time_route_model_fingerprint_and_fault_and_v_prints_lines() {
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults.toml");
    std::fs::write(
        &faults,
        "[[fault]]\nroute='llm'\nprofile='sk-key-A'\nkind='status'\nstatus=503\n",
    )
    .unwrap();
    let log = dir.path().join("requests.jsonl");
    let up = UpstreamProcess::start(&[
        "--faults",
        faults.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
        "-v",
    ]);
    let before = SystemTime::now();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let send = |token: &str, model: &str| -> Got {
        let auth = format!("Bearer {token}");
        let body = chat_body(model, false, 2);
        rt.block_on(call(
            up.addr,
            "POST",
            "/v1/chat/completions",
            &[("Authorization", auth.as_str())],
            &body,
        ))
    };
    assert_eq!(send("sk-key-A", "mockai/m1").status(), Some(503));
    assert_eq!(send("sk-key-B", "mockai/m1").status(), Some(200));
    assert_eq!(send("sk-key-B", "fallback/m2").status(), Some(200));
    let after = SystemTime::now();
    let stderr = up.stop();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("sk-key"), "a raw token in the log: {text}");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    let ms = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let (a, b) = (
        rehearse::util::fingerprint("sk-key-A"),
        rehearse::util::fingerprint("sk-key-B"),
    );
    let want = [
        (a.as_str(), "mockai/m1", Some("status")),
        (b.as_str(), "mockai/m1", None),
        (b.as_str(), "fallback/m2", None),
    ];
    for (l, (fp, model, fault)) in lines.iter().zip(want) {
        assert_eq!(l["route"], "llm");
        assert_eq!(l["model"], model);
        assert_eq!(l["profile_fp"], fp);
        assert_eq!(l["fault"].as_str(), fault);
        let wall = l["wall_ms"].as_u64().unwrap();
        assert!(ms(before) <= wall && wall <= ms(after), "{l}");
    }
    let verbose: Vec<&str> = stderr.lines().filter(|l| l.contains(" llm ")).collect();
    assert_eq!(verbose.len(), 3, "{stderr}");
    assert!(verbose[0].contains(&format!("model=mockai/m1 profile={a} fault=status")));
    assert!(verbose[2].contains(&format!("model=fallback/m2 profile={b} fault=none")));
    assert!(!stderr.contains("sk-key"));
}

/// The python with the official OpenAI SDK: `$REHEARSE_OPENAI_PYTHON` (set by `.ci/test` from
/// `scripts/install-openai-sdk.sh`), else `python3`. Missing → the test fails saying how to get it.
fn sdk_python() -> String {
    let python = std::env::var("REHEARSE_OPENAI_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = std::process::Command::new(&python)
        .args(["-c", "import openai"])
        .output();
    match probe {
        Ok(o) if o.status.success() => python,
        Ok(o) => panic!(
            "`{python}` cannot import the OpenAI SDK ({}); run scripts/install-openai-sdk.sh \
             and set REHEARSE_OPENAI_PYTHON to the python it prints (.ci/test does)",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!(
            "no python `{python}` ({e}); run scripts/install-openai-sdk.sh and set \
             REHEARSE_OPENAI_PYTHON to the python it prints (.ci/test does)"
        ),
    }
}

#[test]
fn the_official_openai_python_sdk_reads_finish_reason_stop_streamed_and_not() {
    let python = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults.toml");
    std::fs::write(
        &faults,
        "[[fault]]\nroute='llm'\nmodel='mockai/cut'\nkind='reset_mid_stream'\n\
         after_fraction=1.0\ncut='no_terminal'\n",
    )
    .unwrap();
    let up = UpstreamProcess::start(&["--faults", faults.to_str().unwrap()]);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/py/openai_sdk_reads.py"
    );
    let out = std::process::Command::new(&python)
        .arg(script)
        .arg(format!("http://{}", up.addr))
        .output()
        .expect("run the SDK script");
    drop(up);
    assert!(
        out.status.success(),
        "SDK script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("script JSON");
    assert_eq!(v["json"]["text"], "t1 t2 t3 t4 t5", "{v}");
    assert_eq!(v["json"]["finish_reason"], "stop");
    assert_eq!(v["json"]["usage"], 5);
    let s = &v["stream"];
    assert_eq!(s["roles"], serde_json::json!(["assistant"]), "{v}");
    assert_eq!(s["text"], v["json"]["text"], "the same text streamed");
    assert_eq!(s["finish_reason"], "stop", "{v}");
    assert_eq!(s["usage"], 5);
    // The same SDK on a stream without its terminal chunk: no finish_reason at all.
    let c = &v["cut"];
    assert_eq!(c["text"], "t1 t2 t3 t4 t5", "{v}");
    assert!(c["finish_reason"].is_null(), "{v}");
    assert!(c["usage"].is_null(), "{v}");
}

/// The official OpenAI Python SDK against the field's faults (#38): what it returns or raises
/// for each (docs/faults.md, "The SDK's view").
#[test]
fn the_official_openai_python_sdk_on_the_fields_faults() {
    let python = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults.toml");
    std::fs::write(
        &faults,
        "[[fault]]\nroute='llm'\nmodel='f/late'\nkind='first_token_delay'\ndelay='1s'\n\
         [[fault]]\nroute='llm'\nmodel='f/late/json'\nkind='first_token_delay'\ndelay='1s'\n\
         [[fault]]\nroute='llm'\nmodel='f/bad'\nkind='malformed_chunk'\nafter_chunks=2\n\
         [[fault]]\nroute='llm'\nmodel='f/bad-end'\nkind='malformed_chunk'\nafter_chunks=2\nthen='end'\n\
         [[fault]]\nroute='llm'\nmodel='f/err'\nkind='error_event'\nafter_chunks=2\n\
         [[fault]]\nroute='llm'\nmodel='f/resume'\nkind='stall_stream'\nafter_fraction=0.5\nresume_after='1s'\n\
         [[fault]]\nroute='llm'\nmodel='f/ctx'\nkind='status'\nerror='context_length_exceeded'\n\
         [[fault]]\nroute='llm'\nmodel='f/quota'\nkind='status'\nerror='insufficient_quota'\n\
         headers={retry-after-ms='9000'}\n",
    )
    .unwrap();
    let up = UpstreamProcess::start(&["--faults", faults.to_str().unwrap()]);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/py/openai_sdk_field_faults.py"
    );
    let models = [
        "f/late",
        "f/late/json",
        "f/bad",
        "f/bad-end",
        "f/err",
        "f/resume",
        "f/ctx",
        "f/quota",
    ];
    let out = std::process::Command::new(&python)
        .arg(script)
        .arg(format!("http://{}", up.addr))
        .args(models)
        .output()
        .expect("run the SDK script");
    drop(up);
    assert!(
        out.status.success(),
        "SDK script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("script JSON");
    let r = &v["read"];
    // A late first token: the whole answer, the first token ≥ 1 s in.
    for m in ["f/late", "f/late/json", "f/resume"] {
        assert_eq!(r[m]["text"], "t1 t2 t3 t4", "{m}: {v}");
        assert_eq!(r[m]["finish_reason"], "stop", "{m}: {v}");
        assert!(r[m]["raised"].is_null(), "{m}: {v}");
    }
    assert!(
        r["f/late"]["first_token_s"].as_f64().unwrap() >= 0.95,
        "{v}"
    );
    // A malformed chunk: the SDK raises on the line (json.loads), whatever follows it.
    for m in ["f/bad", "f/bad-end"] {
        assert_eq!(r[m]["raised"], "JSONDecodeError", "{m}: {v}");
        assert_eq!(r[m]["text"], "t1 t2", "{m}: the tokens before it: {v}");
    }
    // An error event inside a 200 stream: APIError carrying the event's message.
    assert_eq!(r["f/err"]["raised"], "APIError", "{v}");
    assert_eq!(r["f/err"]["text"], "t1 t2", "{v}");
    assert!(
        r["f/err"]["message"]
            .as_str()
            .unwrap()
            .contains("The server had an error"),
        "{v}"
    );
    // Named provider errors: the SDK's own exception class per status, with the code.
    assert_eq!(r["f/ctx"]["raised"], "BadRequestError", "{v}");
    assert_eq!(r["f/ctx"]["status"], 400);
    assert_eq!(r["f/ctx"]["code"], "context_length_exceeded");
    assert_eq!(r["f/quota"]["raised"], "RateLimitError", "{v}");
    assert_eq!(r["f/quota"]["code"], "insufficient_quota");
}
