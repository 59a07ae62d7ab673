//! Synthetic health checks in a real `rehearse run`: a short scenario where
//! `crm_search` answers 503 for a window. Canaries reach the upstream marked as canaries at
//! about the configured interval, stay out of the probe-spacing check (they are closer together
//! than its minimum, so counting them would fail it), fail during the fault (`health_check`
//! events with `ok: false`), and the canary/breaker disagreement shows in the report.

use std::path::Path;

use crate::support::run::{repo_root, report_json, reported_path, run_scenario, show};

/// Scenario seconds; at speed 4 the run takes 15 s.
const SPEED: &str = "4";

fn scenario(dir: &Path) -> std::path::PathBuf {
    let traffic = repo_root().join("fixtures/traffic/tools-steady.jsonl");
    let text = format!(
        r#"name = "canary-503"
description = "crm_search 503 from 10 s to 25 s; canaries every 200 ms"
duration = "60s"
traffic = "{}"
scrape_interval = "250ms"
seed = 7
policies = ["retry-gate"]
workers = 4

[engine.health]
interval = "200ms"

[engine.breaker]
probeTimeoutFloor = "1s"

[[fault]]
route = "tool:crm_search"
kind = "status"
status = 503
from = "10s"
until = "25s"

[[expect.transition]]
dep = "crm_search"
from = "closed"
to = "open"
at = "15s"
tolerance = "3s"

[[expect.transition]]
dep = "crm_search"
from = "open"
to = "half_open"
after = "30s"
tolerance = "300ms"

[[expect.transition]]
dep = "crm_search"
from = "half_open"
to = "closed"
after = "700ms"
tolerance = "700ms"

[[expect.probe_spacing]]
dep = "crm_search"
min = "250ms"
"#,
        traffic.display()
    );
    let path = dir.join("canary-503.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn canaries_run_marked_stay_out_of_probe_spacing_and_show_the_disagreement() {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario(tmp.path());
    let reports = tmp.path().join("reports");
    let out = run_scenario(&path, SPEED, &reports);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let dir = reported_path(&out).parent().unwrap().to_path_buf();

    // Upstream: canaries of crm_search, marked, every 200 ms ÷ 4 = 50 ms for 15 s (~301).
    let up = jsonl(&dir.join("upstream.jsonl"));
    let crm = |canary: bool| -> Vec<&serde_json::Value> {
        up.iter()
            .filter(|r| r["dep"] == "crm_search" && r["canary"] == canary)
            .collect()
    };
    let canaries = crm(true);
    assert!(
        (150..=320).contains(&canaries.len()),
        "{} canaries of crm_search at a 50 ms interval over 15 s",
        canaries.len()
    );
    assert!(
        canaries.iter().all(|r| r["probe"] == true),
        "canaries carry X-Breaker-Probe"
    );
    let times: Vec<u64> = canaries
        .iter()
        .map(|r| r["t_ms"].as_u64().unwrap())
        .collect();
    let mut gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    assert!(
        (40..=80).contains(&median),
        "median canary gap {median} ms, want ~50"
    );
    assert!(
        gaps[0] < 250 / 4,
        "canaries are closer than the probe minimum, so counting them as probes would fail it"
    );
    // Real half-open probes reached the upstream too, and are not canaries.
    let probes = crm(false)
        .into_iter()
        .filter(|r| r["probe"] == true)
        .count();
    assert!(probes >= 2, "{probes} breaker probes");
    // Every fault also hit canaries inside the window (10 s..25 s ÷ 4).
    let faulted = canaries.iter().filter(|r| r["fault"] == "status").count();
    assert!(faulted >= 30, "{faulted} canaries saw the 503");

    // Events: failed health checks of crm_search during the fault, healthy ones before it.
    let events = jsonl(&dir.join("events.jsonl"));
    let checks: Vec<(u64, bool)> = events
        .iter()
        .filter(|e| e["event"] == "health_check" && e["dep"] == "crm_search")
        .map(|e| (e["t_ms"].as_u64().unwrap(), e["ok"].as_bool().unwrap()))
        .collect();
    let failed_in_window = checks
        .iter()
        .filter(|(t, ok)| !ok && (2_500..=6_500).contains(t))
        .count();
    assert!(
        failed_in_window >= 30,
        "{failed_in_window} failed checks in the fault window"
    );
    assert!(
        checks.iter().filter(|(t, _)| *t < 2_400).all(|(_, ok)| *ok),
        "checks before the fault succeed: {checks:?}"
    );

    // Report: the verdict held (probe spacing included) and the health table has the figures.
    let report = report_json(&out);
    let p = &report["policies"][0];
    let spacing = p["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e.to_string().contains("probe"))
        .expect("a probe-spacing result");
    assert_eq!(spacing["ok"], true, "{spacing}");
    let h = &p["health"]["crm_search"];
    let calls = h["canary_calls"].as_u64().unwrap();
    assert!((150..=320).contains(&calls), "{h}");
    assert!(h["canary_failures"].as_u64().unwrap() >= 30, "{h}");
    // Canary failing while the breaker is still closed (10 s → ~15 s), then healthy while it is
    // still open (25 s → ~45 s): the gauge counts wall seconds, so about 20 s ÷ 4.
    let max = h["max_disagreement_s"].as_f64().unwrap();
    assert!(max > 1.0, "max disagreement {max} s: {h}");
    assert_eq!(
        p["health"]["calculator"]["canary_failures"], 0,
        "{}",
        p["health"]
    );
    let md = std::fs::read_to_string(reported_path(&out)).unwrap();
    assert!(md.contains("### Health checks"), "{md}");
    assert!(md.contains("| crm_search |"), "{md}");
}
