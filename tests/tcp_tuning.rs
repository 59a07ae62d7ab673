//! A scenario's `[tcp]` tuning reaches the harness's own sockets: options read
//! back from real connections made through the harness's connector and transport, the
//! contradiction it causes flagged end to end, the report's host section showing it, and a bad
//! value rejected with file:line:col.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rehearse::engine::transport::{Call, Deadlines, Endpoint, Origin, Transport};
use rehearse::engine::{AttemptResult, OpClass};
use rehearse::transport::Diagnostics;
use rehearse::transport::HttpTransport;
use rehearse::transport::{TcpTuning, TunedConnector, sockopt};

use crate::support::rehearse;
use crate::support::run::{mutated_copy, repo_root, report_json, run_in, run_scenario, show};
use crate::support::upstream;

fn tuning() -> TcpTuning {
    TcpTuning {
        keepalive_idle: Some(Duration::from_secs(30)),
        keepalive_interval: Some(Duration::from_secs(5)),
        keepalive_retries: Some(4),
        user_timeout: Some(Duration::from_secs(12)),
    }
}

/// A first attempt of `class` at `endpoint` for `dep`, with 5 s / 5 s / 10 s deadlines.
fn call(dep: &str, class: OpClass, endpoint: Endpoint) -> Call {
    Call {
        dep: dep.into(),
        class,
        endpoint,
        bearer: None,
        idempotency_key: None,
        probe: None,
        origin: Origin::Worker(0),
        attempt: 1,
        request: None,
        deadlines: Deadlines {
            ttfb: Some(Duration::from_secs(5)),
            inter_token: Some(Duration::from_secs(5)),
            total: Duration::from_secs(10),
        },
    }
}

/// The options as the kernel should report them (macOS holds the user timeout in seconds).
fn assert_tuned(o: &sockopt::SocketTcpOptions) {
    assert!(o.keepalive, "{o:?}");
    assert_eq!(o.keepalive_idle, Some(Duration::from_secs(30)), "{o:?}");
    assert_eq!(o.keepalive_interval, Some(Duration::from_secs(5)), "{o:?}");
    assert_eq!(o.keepalive_retries, Some(4), "{o:?}");
    if cfg!(any(target_os = "linux", target_os = "macos")) {
        assert_eq!(o.user_timeout, Some(Duration::from_secs(12)), "{o:?}");
    }
}

#[tokio::test]
async fn a_connection_from_the_harness_connector_reads_back_the_tuning() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accept = tokio::spawn(async move { listener.accept().await.map(|(s, _)| s) });
    let conn = TunedConnector::new(tuning());
    let stream = conn.connect_tcp(addr).await.unwrap();
    let _server_side = accept.await.unwrap().unwrap();
    // Straight from the kernel, on the very socket the connector returned.
    let back = sockopt::read_back(&socket2::SockRef::from(&stream)).unwrap();
    assert_tuned(&back);
    #[cfg(target_os = "linux")]
    assert_eq!(back.user_timeout, Some(Duration::from_millis(12_000)));
    assert!(stream.nodelay().unwrap(), "TCP_NODELAY is kept on");
    let r = conn.report();
    assert_eq!(r.tuned_connections, 1);
    let applied = r.applied.expect("read back recorded");
    assert_eq!(applied.keepalive_idle_ms, Some(30_000));
    assert_eq!(applied.user_timeout_ms, Some(12_000));
    assert_eq!(applied.user_timeout_option, sockopt::USER_TIMEOUT_OPTION);

    // An untuned connector leaves the kernel defaults alone.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let plain = TunedConnector::new(TcpTuning::default());
    let stream = plain.connect_tcp(addr).await.unwrap();
    let back = sockopt::read_back(&socket2::SockRef::from(&stream)).unwrap();
    assert!(!back.keepalive, "{back:?}");
    assert_eq!(back.user_timeout, None, "{back:?}");
    assert_eq!(plain.report().tuned_connections, 1);
}

#[tokio::test]
async fn hyper_client_http_and_websocket_sessions_all_use_the_tuned_connector() {
    let up = upstream::start("", 1).await;
    // hyper-util's pooled client with the connector as its `Connect`.
    let conn = TunedConnector::new(tuning());
    let client =
        Client::builder(TokioExecutor::new()).build::<_, Empty<bytes::Bytes>>(conn.clone());
    let uri: http::Uri = format!("{}/_rehearse/faults", up.url()).parse().unwrap();
    let resp = client.get(uri).await.unwrap();
    assert!(resp.status().is_success());
    resp.into_body().collect().await.unwrap();
    assert_eq!(conn.report().tuned_connections, 1);

    // The run transport: a tool call over HTTP and a WebSocket session.
    let diag = Arc::new(Diagnostics::default());
    let t = HttpTransport::with_tcp(up.addr, diag, tuning());
    let tool = Endpoint::Tool {
        name: "calculator".into(),
        body: serde_json::json!({"expr": "1+1"}),
    };
    let r = t.send(call("calculator", OpClass::ToolCall, tool)).await;
    assert!(matches!(r, AttemptResult::Ok { .. }), "{r:?}");
    let ws = Endpoint::Ws {
        channel: "events".into(),
        messages: 2,
    };
    let r = t.send(call("events", OpClass::Session, ws)).await;
    assert!(matches!(r, AttemptResult::Ok { .. }), "{r:?}");
    let rep = t.connector().report();
    assert_eq!(
        rep.tuned_connections, 2,
        "one pooled HTTP + one WebSocket: {rep:?}"
    );
    assert_eq!(rep.requested, tuning());
    assert_eq!(rep.error, None);
    let a = rep.applied.unwrap();
    assert!(a.keepalive);
    assert_eq!(
        (
            a.keepalive_idle_ms,
            a.keepalive_interval_ms,
            a.keepalive_retries
        ),
        (Some(30_000), Some(5_000), Some(4))
    );
    up.stop().await;
}

/// The smoke scenario, faster, with a `[tcp]` table appended.
fn smoke_with_tcp(dir: &std::path::Path, tag: &str, tcp: &'static str) -> std::path::PathBuf {
    mutated_copy("smoke", dir, tag, move |t| format!("{t}\n[tcp]\n{tcp}"))
}

#[test]
fn tcp_shorter_than_the_probe_timeout_is_flagged_and_the_host_section_shows_it() {
    let tmp = tempfile::tempdir().unwrap();
    // Dead-peer detection: keepalive 1 s + 1 s × 1 = 2 s, user timeout 1 s; the probe timeout
    // cap is 10 s, 1.25 s at speed 8: the kernel gives up first.
    let tcp = "keepalive_idle = \"1s\"\nkeepalive_interval = \"1s\"\nkeepalive_retries = 1\n\
               user_timeout = \"1s\"\n";
    let path = smoke_with_tcp(tmp.path(), "tcp", tcp);

    // Through the plan (what `run` builds) into the contradiction check.
    let args = rehearse::cli::RunArgs {
        scenarios: vec![path.display().to_string()],
        speed: Some(crate::support::speed(8.0)),
        ..Default::default()
    };
    let plan = rehearse::rehearsal::plan::build(&args).unwrap();
    let found = rehearse::rehearsal::contradictions::check(
        &plan.scenarios[0],
        &rehearse::host::fingerprint(),
    );
    let probe = found
        .iter()
        .find(|c| c["check"] == "probe_timeout_vs_dead_peer")
        .unwrap_or_else(|| panic!("not flagged: {found:#?}"));
    assert_eq!(probe["severity"], "error");
    let detail = probe["detail"].as_str().unwrap();
    assert!(detail.contains("probe timeout 1250 ms"), "{detail}");
    if cfg!(target_os = "linux") {
        assert!(detail.contains("TCP_USER_TIMEOUT 1000 ms"), "{detail}");
    }

    // The whole run: same contradiction in report.json, tuning applied to its sockets.
    let rd = tmp.path().join("reports");
    let out = run_scenario(&path, "8", &rd);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r = report_json(&out);
    let cs = r["contradictions"]
        .as_array()
        .expect("contradictions array");
    assert!(
        cs.iter()
            .any(|c| c["check"] == "probe_timeout_vs_dead_peer" && c["severity"] == "error"),
        "{cs:#?}"
    );
    let tt = &r["host"]["tcp_tuning"];
    assert_eq!(tt["requested"]["keepalive_idle"], "1s", "{tt:#}");
    assert!(tt["tuned_connections"].as_u64().unwrap() >= 1, "{tt:#}");
    assert_eq!(tt["applied"]["keepalive"], true, "{tt:#}");
    assert_eq!(tt["applied"]["keepalive_idle_ms"], 1000, "{tt:#}");
    assert_eq!(tt["applied"]["keepalive_retries"], 1, "{tt:#}");
    if cfg!(any(target_os = "linux", target_os = "macos")) {
        assert_eq!(tt["applied"]["user_timeout_ms"], 1000, "{tt:#}");
    }
    let md = std::fs::read_to_string(crate::support::run::reported_path(&out)).unwrap();
    let host = md
        .split("## Host and TCP stack")
        .nth(1)
        .expect("host section");
    assert!(
        host.contains("| tcp_tuning.applied.keepalive_idle_ms | 1000 |"),
        "{host}"
    );
    assert!(host.contains("probe_timeout_vs_dead_peer"), "{host}");
    println!("{}", host.split("\n## ").next().unwrap_or_default());
}

#[test]
fn a_bad_tcp_value_is_exit_2_naming_file_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let path = smoke_with_tcp(tmp.path(), "badtcp", "keepalive_idle = \"1500ms\"\n");
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("keepalive_idle"))
        .unwrap()
        + 1;
    let want = format!("{}:{line}:18:", path.display());
    let rd = tmp.path().join("reports");
    let p = path.to_str().unwrap();
    let run = run_in(
        &repo_root(),
        &["run", "--scenario", p, "--report-dir", rd.to_str().unwrap()],
    );
    let validate = rehearse(&["validate", p]);
    for (cmd, out) in [("run", run), ("validate", validate)] {
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&want), "{cmd}: want {want}\n{}", show(&out));
        assert!(
            stderr.contains("whole, non-zero number of seconds"),
            "{}",
            show(&out)
        );
    }
    assert!(
        !rd.exists(),
        "a rejected scenario creates no report directory"
    );
    // An unknown key in [tcp] is located too.
    let path = smoke_with_tcp(tmp.path(), "unknown", "keepidle = \"5s\"\n");
    let out = rehearse(&["validate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("keepidle"),
        "{}",
        show(&out)
    );
}

#[tokio::test]
async fn a_refused_connect_through_the_tuned_connector_stays_typed() {
    // A port nothing listens on any more.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let diag = Arc::new(Diagnostics::default());
    let t = HttpTransport::with_tcp(addr, diag.clone(), tuning());
    let endpoints = [
        (
            OpClass::ToolCall,
            Endpoint::Tool {
                name: "calculator".into(),
                body: serde_json::json!({}),
            },
        ),
        (
            OpClass::Session,
            Endpoint::Ws {
                channel: "events".into(),
                messages: 1,
            },
        ),
    ];
    for (class, endpoint) in endpoints {
        let r = t.send(call("dep", class, endpoint)).await;
        assert_eq!(
            r,
            AttemptResult::Transport {
                failure: rehearse::engine::TransportFailure::Refused
            },
            "{class:?}"
        );
    }
    assert_eq!(
        diag.snapshot()["dep"].get("refused"),
        Some(&2),
        "{:?}",
        diag.snapshot()
    );
    assert_eq!(t.connector().report().tuned_connections, 0);
}
