//! The engine's `/metrics`: every docs/metrics.md series, valid per `promtool check metrics`,
//! served by the exporter with the 0.0.4 Content-Type.

use std::sync::Arc;
use std::time::Duration;

use rehearse::engine::metrics::Metrics;

use crate::support::metrics::{START_UNIX, populated, promtool_check};

/// docs/metrics.md: (name, type, labels).
const DESIGN_SERIES: [(&str, &str, &[&str]); 17] = [
    ("breaker_state", "gauge", &["dep"]),
    (
        "breaker_transitions_total",
        "counter",
        &["dep", "from", "to"],
    ),
    (
        "breaker_last_transition_timestamp_seconds",
        "gauge",
        &["dep", "from", "to"],
    ),
    ("breaker_rejections_total", "counter", &["dep"]),
    ("breaker_probe_latency_seconds", "histogram", &["dep"]),
    ("breaker_retry_after_skips_total", "counter", &["dep"]),
    ("requests_total", "counter", &["dep", "outcome"]),
    ("request_latency_seconds", "histogram", &["dep"]),
    (
        "profile_cooldowns_total",
        "counter",
        &["provider", "profile", "reason"],
    ),
    ("profile_retries_total", "counter", &["provider", "reason"]),
    (
        "profile_rotations_total",
        "counter",
        &["provider", "reason"],
    ),
    (
        "model_fallbacks_total",
        "counter",
        &["from", "to", "reason"],
    ),
    ("retry_budget_exhausted_total", "counter", &["class"]),
    ("timeouts_total", "counter", &["class", "phase"]),
    ("idempotent_duplicates_total", "counter", &["dep"]),
    ("health_breaker_disagreement_seconds", "gauge", &["dep"]),
    ("throttled_total", "counter", &["tenant"]),
];

/// The label names of the first sample line of `name` (crude, enough for our own output).
fn first_sample_labels(text: &str, name: &str) -> Vec<String> {
    let prefix = format!("{name}{{");
    let line = text
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no sample of {name} in\n{text}"));
    let mut names = Vec::new();
    let mut rest = &line[prefix.len()..];
    while let Some(eq) = rest.find("=\"") {
        names.push(rest[..eq].trim_start_matches(',').to_string());
        // skip the quoted value, honouring escapes
        let bytes = rest.as_bytes();
        let mut i = eq + 2;
        while bytes[i] != b'"' {
            i += if bytes[i] == b'\\' { 2 } else { 1 };
        }
        rest = &rest[i + 1..];
    }
    names
}

#[test]
fn every_design_series_has_help_type_and_its_labels() {
    let text = populated().render();
    for (name, kind, labels) in DESIGN_SERIES {
        assert!(
            text.contains(&format!("\n# HELP {name} "))
                || text.starts_with(&format!("# HELP {name} ")),
            "HELP of {name}"
        );
        assert!(
            text.contains(&format!("# TYPE {name} {kind}\n")),
            "TYPE of {name}"
        );
        let sample = if kind == "histogram" {
            format!("{name}_bucket")
        } else {
            name.to_string()
        };
        let mut got = first_sample_labels(&text, &sample);
        got.retain(|l| l != "le");
        got.sort();
        let mut want: Vec<&str> = labels.to_vec();
        want.sort();
        assert_eq!(got, want, "labels of {name} (the encoder sorts them)");
    }
}

#[test]
fn an_empty_registry_still_names_every_family_and_passes_promtool() {
    let text = Metrics::new(0.0).render();
    for (name, kind, _) in DESIGN_SERIES {
        assert!(text.contains(&format!("# TYPE {name} {kind}\n")), "{name}");
    }
    let (ok, report) = promtool_check(&text);
    assert!(
        ok,
        "promtool check metrics failed:\n{report}\n--- input ---\n{text}"
    );
}

#[test]
fn probe_latency_buckets_are_the_design_ones() {
    let text = populated().render();
    let les: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("breaker_probe_latency_seconds_bucket{"))
        .filter(|l| l.contains("dep=\"crm_search\"") || l.contains("ird"))
        .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        les,
        ["0.025", "0.05", "0.1", "0.25", "0.5", "1", "2", "+Inf"]
    );
    // two probes of 120 ms: in the 0.25 bucket and above
    assert!(text.contains("le=\"0.1\"} 0\n"), "{text}");
    assert!(text.contains("le=\"0.25\"} 2\n"), "{text}");
}

#[test]
fn transitions_counts_skips_and_timestamps_are_folded_from_events() {
    let text = populated().render();
    let dep = r#"dep="we\"ird,dep\\name""#;
    for want in [
        format!("breaker_state{{{dep}}} 0\n"),
        format!("breaker_transitions_total{{{dep},from=\"closed\",to=\"open\"}} 1\n"),
        format!("breaker_rejections_total{{{dep}}} 1\n"),
        format!("breaker_retry_after_skips_total{{{dep}}} 1\n"),
        format!("requests_total{{{dep},outcome=\"stream_cut\"}} 1\n"),
        format!("requests_total{{{dep},outcome=\"rejected\"}} 1\n"),
        "timeouts_total{class=\"llm_inference\",phase=\"ttfb\"} 1\n".to_string(),
        "timeouts_total{class=\"llm_inference\",phase=\"inter_token\"} 1\n".to_string(),
        "retry_budget_exhausted_total{class=\"tool_call\"} 1\n".to_string(),
        "throttled_total{tenant=\"team-a\"} 1\n".to_string(),
        "idempotent_duplicates_total{dep=\"ticket_create\"} 1\n".to_string(),
        "breaker_rejections_total{dep=\"crm_search\"} 0\n".to_string(),
    ] {
        assert!(text.contains(&want), "missing {want:?} in\n{text}");
    }
    // start_unix + t_ms / 1000, ms precision: 1764442000.25 + 1.234
    let ts = format!(
        "breaker_last_transition_timestamp_seconds{{{dep},from=\"closed\",to=\"open\"}} {}\n",
        START_UNIX + 1.234
    );
    assert!(text.contains(&ts), "missing {ts:?}");
    assert!(text.contains("1764442001.484\n"), "{text}");
}

#[test]
fn populated_metrics_pass_promtool_check_metrics() {
    let text = populated().render();
    let (ok, report) = promtool_check(&text);
    assert!(
        ok,
        "promtool check metrics failed:\n{report}\n--- input ---\n{text}"
    );
}

async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, Option<String>, String) {
    use http_body_util::{BodyExt, Empty};
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut send, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let req = http::Request::get(path)
        .header("host", "127.0.0.1")
        .body(Empty::<bytes::Bytes>::new())
        .expect("request");
    let resp = send.send_request(req).await.expect("send");
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    (status, ct, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn exporter_serves_metrics_with_the_0_0_4_content_type_and_404s_elsewhere() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let metrics = Arc::new(populated());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(rehearse::exporter::serve_metrics(
        listener,
        metrics.clone(),
        async move {
            let _ = stopped.await;
        },
    ));
    let (status, ct, body) = get(addr, "/metrics").await;
    assert_eq!(status, 200);
    assert_eq!(
        ct.as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    assert_eq!(body, metrics.render());
    let (status, _, _) = get(addr, "/").await;
    assert_eq!(status, 404);
    let _ = stop.send(());
    let done = tokio::time::timeout(Duration::from_secs(10), server).await;
    assert!(
        matches!(done, Ok(Ok(Ok(())))),
        "server did not stop: {done:?}"
    );
}

#[test]
fn metrics_round_trip_through_the_project_scrape_parser_with_escaped_labels() {
    use rehearse::scrape::parse::{MetricKind, parse};
    use rehearse::scrape::selector::Selector;

    use crate::support::metrics::WEIRD_DEP;

    let text = populated().render();
    let exp = parse(&text).unwrap_or_else(|e| panic!("our /metrics does not parse: {e}\n{text}"));
    for (name, kind, _) in DESIGN_SERIES {
        let fam = exp
            .family(name)
            .unwrap_or_else(|| panic!("family {name} missing"));
        let want = match kind {
            "counter" => MetricKind::Counter,
            "gauge" => MetricKind::Gauge,
            _ => MetricKind::Histogram,
        };
        assert_eq!(fam.kind, want, "{name}");
        assert!(fam.help.as_deref().is_some_and(|h| !h.is_empty()), "{name}");
    }
    // The nasty dep name comes back byte for byte, with a comma, a quote and a backslash.
    let fam = exp.family("breaker_transitions_total").expect("family");
    let deps: Vec<&str> = fam
        .samples
        .iter()
        .map(|s| s.labels["dep"].as_str())
        .collect();
    assert!(deps.iter().all(|d| *d == WEIRD_DEP), "{deps:?}");
    assert_eq!(WEIRD_DEP, "we\"ird,dep\\name");
    let sel = |s: &str| Selector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    let d = r#"dep="we\"ird,dep\\name""#;
    for (series, want) in [
        (
            format!("breaker_transitions_total{{{d},from=\"closed\",to=\"open\"}}"),
            1.0,
        ),
        (format!("breaker_transitions_total{{{d}}}"), 3.0),
        (format!("breaker_rejections_total{{{d}}}"), 1.0),
        (format!("breaker_retry_after_skips_total{{{d}}}"), 1.0),
        (format!("breaker_probe_latency_seconds_count{{{d}}}"), 2.0),
        (format!("requests_total{{{d}}}"), 6.0),
        ("requests_total".to_string(), 7.0),
        ("timeouts_total{phase=\"ttfb\"}".to_string(), 1.0),
        ("retry_budget_exhausted_total".to_string(), 1.0),
    ] {
        assert_eq!(exp.sum(&sel(&series)), want, "{series}");
    }
    let ts = exp.sum(&sel(&format!(
        "breaker_last_transition_timestamp_seconds{{{d},from=\"closed\",to=\"open\"}}"
    )));
    assert!((ts - (START_UNIX + 1.234)).abs() < 1e-6, "{ts}");
    // Every sample line of the text is one parsed sample.
    let lines = text.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(exp.samples().count(), lines);
}

#[test]
fn coordinator_series_follow_mode_and_error_events() {
    use rehearse::engine::events::{Event, EventKind, EventSink};

    let m = rehearse::engine::metrics::Metrics::new(START_UNIX);
    let empty = m.render();
    assert!(
        empty.contains("# TYPE coordinator_errors_total counter\n"),
        "{empty}"
    );
    assert!(empty.contains("# TYPE coordinator_mode gauge\n"), "{empty}");
    let emit = |t_ms, kind| {
        m.emit(&Event {
            t_ms,
            kind,
            log: None,
        })
    };
    let mode = |m: &str| EventKind::CoordinatorMode { mode: m.into() };
    emit(0, mode("redis"));
    emit(
        5,
        EventKind::CoordinatorError {
            op: "lease".into(),
            error: "timeout".into(),
        },
    );
    emit(5, mode("local"));
    let text = m.render();
    for line in [
        "coordinator_mode{mode=\"local\"} 1\n",
        "coordinator_mode{mode=\"redis\"} 0\n",
        "coordinator_errors_total{op=\"lease\"} 1\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    let (ok, report) = promtool_check(&text);
    assert!(
        ok,
        "promtool check metrics failed:\n{report}\n--- input ---\n{text}"
    );
    emit(9, mode("redis"));
    let text = m.render();
    assert!(
        text.contains("coordinator_mode{mode=\"local\"} 0\n"),
        "{text}"
    );
    assert!(
        text.contains("coordinator_mode{mode=\"redis\"} 1\n"),
        "{text}"
    );
}
