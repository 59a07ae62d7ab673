//! A breaker transition timed from a fault end to end: the smoke scenario's crm_search outage
//! named `crm-outage` (503 from 4 s), its breaker expected open 1 s after the outage's start,
//! then half-open 5 s later and closed 700 ms after that (the `after`s counting from the
//! anchored transition as observed). The same verdict at ×2 and ×4, every row under the
//! suite's own mutants; its mutants fail — 4 s after the outage's start, and the true 5 s
//! counted from a fault that never applied (never anchored at 0, where it would hold).

use std::path::{Path, PathBuf};

use crate::support::run::{
    assert_mutants, repo_root, report_json, reported_path, run_scenario, run_scenario_with_mutants,
    show,
};

const HEAD: &str = "\
scrape_interval = \"250ms\"
seed = 7
policies = [\"retry-gate\"]
workers = 4

[engine.breaker]
probeTimeoutFloor = \"1s\"
window = \"3s\"
minCalls = 10
openFor = \"5s\"

[[fault]]
name = \"crm-outage\"
route = \"tool:crm_search\"
kind = \"status\"
status = 503
from = \"4s\"
until = \"10s\"

[[fault]]
name = \"spare\"
route = \"tool:nothing\"
kind = \"status\"
status = 500
optional = true
";

/// The open, anchored as `open` says; then half-open and closed, each `after` the previous.
fn cycle(open: &str) -> String {
    format!(
        "[[expect.transition]]\ndep = \"crm_search\"\nfrom = \"closed\"\nto = \"open\"\n{open}\n\
         tolerance = \"1s\"\n\
         [[expect.transition]]\ndep = \"crm_search\"\nfrom = \"open\"\nto = \"half_open\"\n\
         after = \"5s\"\ntolerance = \"300ms\"\n\
         [[expect.transition]]\ndep = \"crm_search\"\nfrom = \"half_open\"\nto = \"closed\"\n\
         after = \"700ms\"\ntolerance = \"700ms\"\n"
    )
}

fn scenario(dir: &Path, tag: &str, open: &str) -> PathBuf {
    let traffic = repo_root().join("fixtures/traffic/smoke.jsonl");
    let text = format!(
        "name = \"anchor-transition-{tag}\"\nduration = \"21s\"\ntraffic = {:?}\n{HEAD}\n{}",
        traffic.display().to_string(),
        cycle(open)
    );
    let path = dir.join(format!("{tag}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn transitions(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["policies"][0]["expectations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|x| x["kind"] == "transition")
        .cloned()
        .collect()
}

#[test]
fn a_breaker_opening_a_second_after_a_named_outage_passes_at_two_speeds_and_its_mutants_fail() {
    let dir = tempfile::tempdir().unwrap();
    let pass = scenario(
        dir.path(),
        "true",
        "since = { fault = \"crm-outage\" }\nat = \"1s\"",
    );
    let mut verdicts = Vec::new();
    for speed in ["2", "4"] {
        let out = run_scenario_with_mutants(&pass, speed, &dir.path().join(format!("r{speed}")));
        let r = report_json(&out);
        let rows = transitions(&r);
        verdicts.push((
            out.status.code(),
            rows.iter().map(|x| x["status"].clone()).collect::<Vec<_>>(),
        ));
        assert_eq!(out.status.code(), Some(0), "×{speed}: {}", show(&out));
        // Every row under the suite's own perturbations fails (a moved `at` among them).
        let (perturbed, _) = assert_mutants(reported_path(&out).parent().unwrap());
        assert!(perturbed >= 3, "×{speed}: {perturbed}");
        assert_eq!(rows.len(), 3, "×{speed}: {r:#}");
        let open = &rows[0];
        assert_eq!(open["status"], "pass", "×{speed}: {open:#}");
        // Due at the outage's start (4 s) + 1 s, in scenario time at every speed; the witness
        // says where the anchor fell and that the outage applied.
        assert_eq!(open["expected_ms"], 5_000, "×{speed}: {open:#}");
        assert_eq!(open["witness"]["anchor_ms"], 4_000, "×{speed}: {open:#}");
        assert!(
            open["witness"]["fault_applications"].as_u64() > Some(0),
            "{open:#}"
        );
        assert!(
            open["expected"]
                .as_str()
                .unwrap_or("")
                .contains("since fault `crm-outage` start"),
            "{open:#}"
        );
        // The `after`s count from the anchored open as observed.
        for x in &rows[1..] {
            assert_eq!(x["status"], "pass", "×{speed}: {x:#}");
        }
    }
    assert_eq!(verdicts[0], verdicts[1], "the same verdict at ×2 and ×4");

    // 4 s after the outage's start (8 s): the breaker opened about 5 s in.
    let late = scenario(
        dir.path(),
        "late",
        "since = { fault = \"crm-outage\" }\nat = \"4s\"",
    );
    let out = run_scenario(&late, "4", &dir.path().join("late"));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let rows = transitions(&report_json(&out));
    assert_eq!(rows[0]["status"], "fail", "{:#}", rows[0]);
    assert_eq!(rows[0]["witness"]["anchor_ms"], 4_000, "{:#}", rows[0]);
    assert!(
        rows[0]["observed_ms"].as_i64() < Some(7_000),
        "{:#}",
        rows[0]
    );

    // The true 5 s, counted from a fault that never applied: anchored at nothing, never at 0.
    let spare = scenario(
        dir.path(),
        "spare",
        "since = { fault = \"spare\" }\nat = \"5s\"",
    );
    let out = run_scenario(&spare, "4", &dir.path().join("spare"));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let rows = transitions(&report_json(&out));
    assert_eq!(rows[0]["status"], "fail", "{:#}", rows[0]);
    assert_eq!(rows[0]["observed"], "no anchor", "{:#}", rows[0]);
    assert!(
        rows[0]["detail"]
            .as_str()
            .unwrap_or("")
            .contains("fault 'spare' never applied"),
        "{:#}",
        rows[0]
    );
    assert!(
        rows[0]["witness"].get("anchor_ms").is_none(),
        "{:#}",
        rows[0]
    );
    // Its dep's order holds: the half-open still counts from the open it matched.
    assert_eq!(rows[1]["status"], "pass", "{:#}", rows[1]);
}
