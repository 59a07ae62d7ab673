//! The weekly job at its real speed: `rehearse --scenario weekly` exactly as the
//! LaunchAgent runs it — by name, from the repository root, at speed 1, the full five minutes at
//! ~10 RPS — must pass with every expectation ok. `--speed` compresses time and hid a stale
//! breaker gauge that only real time showed, so this runs at ×1 and nothing else.
//!
//! The weekly job's own outputs are checked here at ×1 too, as the LaunchAgent passes them
//! (`--keep`, `--textfile-dir`): the batch-job series, the run's key figures and its place in
//! the history, the compressed scrapes.
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
    assert_canaries_reconcile, assert_mutants, repo_root, report_json, reported_path,
    run_in_with_mutants, show,
};

#[test]
fn weekly_scenario_passes_at_speed_1_with_every_expectation_ok() {
    let tmp = support::run::kept_on_failure(
        "weekly_scenario_passes_at_speed_1_with_every_expectation_ok",
    );
    let dir = tmp.path().join("reports");
    let textfile = tmp.path().join("textfile");
    std::fs::create_dir_all(&textfile).unwrap();
    let dir = dir.to_str().unwrap();
    let started = tokio::time::Instant::now();
    // Its mutants too: the ×1 run cannot be repeated, so they are judged on this one.
    let out = run_in_with_mutants(
        &repo_root(),
        &[
            "--scenario",
            "weekly",
            "--report-dir",
            dir,
            "--keep",
            "12",
            "--textfile-dir",
            textfile.to_str().unwrap(),
        ],
    );
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
    // The weekly job's outputs at ×1. Key figures from the one observation: crm_search opened
    // (its five transitions are expected above) and closed again.
    let crm = &p["figures"]["deps"]["crm_search"];
    assert!(
        crm["time_to_open_ms"].is_u64(),
        "figures: {:#}",
        p["figures"]
    );
    assert!(crm["openings"].as_u64().is_some_and(|n| n >= 1), "{crm:#}");
    assert!(crm["half_open_to_closed_ms"].is_u64(), "{crm:#}");
    // The batch-job series: this passing run moved last_success to its own end.
    let prom = std::fs::read_to_string(textfile.join("rehearse.prom")).unwrap();
    let value = |name: &str| -> f64 {
        prom.lines()
            .find(|l| l.starts_with(&format!("{name}{{scenario=\"weekly\"}}")))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} for weekly in:\n{prom}"))
    };
    let last_run = value("rehearse_last_run_timestamp_seconds");
    assert_eq!(
        value("rehearse_last_success_timestamp_seconds"),
        last_run,
        "{prom}"
    );
    assert!(value("rehearse_run_duration_seconds") >= 300.0, "{prom}");
    assert!(
        prom.contains("rehearse_run_verdict{scenario=\"weekly\",verdict=\"pass\"} 1"),
        "{prom}"
    );
    // Kept (one run, --keep 12), listed by the history with its figures, scrapes compressed.
    let run_dir = md.parent().unwrap();
    assert!(run_dir.join(".rehearse-run.json").is_file());
    let scrapes = run_dir.join("scrapes.prom.gz");
    let gz = std::fs::metadata(&scrapes).map(|m| m.len()).unwrap_or(0);
    assert!(gz > 0, "no {}", scrapes.display());
    let history = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["history", "--json", "--report-dir", dir])
        .output()
        .unwrap();
    assert_eq!(history.status.code(), Some(0), "{}", show(&history));
    let listed: serde_json::Value = serde_json::from_slice(&history.stdout).unwrap();
    let runs = listed["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{listed:#}");
    assert_eq!(runs[0]["scenario"], "weekly");
    assert_eq!(runs[0]["verdict"], "pass");
    assert!(
        runs[0]["figures"].to_string().contains("time_to_open_ms"),
        "{listed:#}"
    );
    assert!(std::path::Path::new(dir).join("index.html").is_file());
    let dir_bytes: u64 = std::fs::read_dir(run_dir)
        .unwrap()
        .flatten()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    assert!(calls >= 150, "{calls} canaries in five minutes");
    // Every alert row judged on its rule's evaluations and the run's own target.
    for e in p["expectations"].as_array().unwrap() {
        if e["kind"] == "alert" {
            assert!(
                e["witness"]["rule_evaluations"].as_u64().unwrap_or(0) >= 250,
                "{e:#}"
            );
            assert_eq!(e["witness"]["rule_failures"], 0, "{e:#}");
        }
    }
    let (entries, perturbations) = assert_mutants(run_dir);
    eprintln!("weekly: {perturbations} perturbations of {entries} expectations, none passed");
    // The figures, for the record (`cargo test --test weekly -- --nocapture`).
    for e in p["expectations"].as_array().unwrap() {
        println!("{}", e["detail"].as_str().unwrap_or_default());
    }
    println!(
        "took {took:?}; sent {}; lag p99 {} ms; canaries {calls}, failed {failures}; run dir \
         {dir_bytes} bytes, scrapes.prom.gz {gz} bytes",
        r["replay"]["sent"], r["replay"]["lag_ms"]["p99"]
    );
}
