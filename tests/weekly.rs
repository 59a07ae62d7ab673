//! The weekly job at its real speed: `rehearse --scenario weekly` exactly as the
//! LaunchAgent runs it — by name, from the repository root, at speed 1, the full five minutes at
//! ~10 RPS — must pass with every expectation ok. `--speed` compresses time and hid a stale
//! breaker gauge that only real time showed, so this runs at ×1 and nothing else.
//!
//! A test binary of its own, so these five minutes never share the machine's two cores with the
//! CPU-bound binaries (`integration`'s parallel tests, `crash`, `props`): `.ci/test` runs it alone
//! (docs/testing.md).

/// The parts of the integration tests' `support` this test uses.
#[allow(dead_code)]
mod support {
    pub mod run;
}

use support::run::{
    assert_canaries_reconcile, repo_root, report_json, reported_path, run_in, show,
};

#[test]
fn weekly_scenario_passes_at_speed_1_with_every_expectation_ok() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let started = tokio::time::Instant::now();
    let out = run_in(&repo_root(), &["--scenario", "weekly", "--report-dir", dir]);
    let took = started.elapsed();
    let r = report_json(&out);
    let md = reported_path(&out);
    let p = &r["policies"][0];
    let failed: Vec<String> = p["expectations"]
        .as_array()
        .expect("expectations")
        .iter()
        .filter(|e| e["ok"] != true)
        .map(|e| e["detail"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "failed at ×1:\n{}\n{}",
        failed.join("\n"),
        show(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(r["verdict"], "pass");
    assert_eq!(r["scenario"], "weekly");
    assert_eq!(r["speed"], 1.0);
    assert!(took.as_secs() >= 300, "a ×1 weekly run took {took:?}");
    assert!(p["elapsed_ms"].as_u64().unwrap() >= 300_000);
    // Every expectation of the scenario was judged (5 transitions, probe spacing, 3 deps that must
    // not transition, 2 metrics, 2 alerts and the dashboards rule judged from a real Prometheus),
    // timed by the event log, and the scrapes agree with it: an open
    // breaker whose open time ran out read half-open in the next scrape.
    assert_eq!(p["expectations"].as_array().unwrap().len(), 14);
    assert_eq!(p["transition_times"], "events.jsonl");
    assert_eq!(
        p["disagreements"].as_array().map(Vec::len),
        Some(0),
        "event log vs scrapes: {:#}",
        p["disagreements"]
    );
    assert!(r["replay"]["sent"].as_u64().unwrap() > 2_500);
    // The detection path: the alert table, and the alerts lane in the timeline.
    assert_eq!(p["alerts"]["table"].as_array().map(Vec::len), Some(2));
    assert!(
        p["alerts"]["arrivals"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    );
    let html = std::fs::read_to_string(md.with_file_name("report.html")).unwrap();
    assert!(html.contains("<g class=\"alerts\">"), "no alerts lane");
    assert!(html.contains("<h2>Alerts</h2>"), "no alerts table");
    let (calls, failures) = assert_canaries_reconcile(&md);
    assert!(calls >= 150, "{calls} canaries in five minutes");
    // The figures, for the record (`cargo test --test weekly -- --nocapture`).
    for e in p["expectations"].as_array().unwrap() {
        println!("{}", e["detail"].as_str().unwrap_or_default());
    }
    println!(
        "took {took:?}; sent {}; lag p99 {} ms; canaries {calls}, failed {failures}",
        r["replay"]["sent"], r["replay"]["lag_ms"]["p99"]
    );
}
