//! `adaptive-deadlines` at speed 1 (both arms, ~2 minutes): the fixture passes at the speed its
//! timings are written for, not only at the CI speed of `tests/run_scenarios.rs` (×4). It has no
//! `[prometheus]`; it is in this binary because this binary runs beside the real gateway's
//! suite (`.ci/test`), and like the runs here it mostly waits.

use super::rehearse;
use super::run::{report_json, reported_path, show};

/// Nominal latencies (ms) of `dep`'s attempts in `policy` that expired a deadline, with the
/// deadline (ms) and its source.
fn expiries(events: &str, policy: &str, dep: &str) -> Vec<(f64, u64, String)> {
    events
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["policy"] == policy && e["dep"] == dep && e["deadline"].is_object())
        .filter(|e| {
            !e["log"]
                .as_str()
                .unwrap_or("")
                .ends_with("(probe deadline)")
        })
        .map(|e| {
            (
                e["latency_ms"].as_f64().unwrap_or(0.0),
                e["deadline"]["ms"].as_u64().unwrap_or(0),
                e["deadline"]["source"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn adaptive_deadlines_pass_at_speed_one() {
    let tmp = crate::run::kept_on_failure("adaptive_deadlines_pass_at_speed_one");
    let started = tokio::time::Instant::now();
    let out = rehearse(&["run", "--scenario", "adaptive-deadlines"], tmp.path());
    let took = started.elapsed();
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(r["verdict"], "pass");
    let events =
        std::fs::read_to_string(reported_path(&out).parent().unwrap().join("events.jsonl"))
            .unwrap();
    let mut figures = Vec::new();
    for (dep, fixed_ms) in [("geo_lookup", 12_300), ("anthropic/default/154a23", 12_000)] {
        let fixed = expiries(&events, "legacy", dep);
        let adaptive = expiries(&events, "retry-gate", dep);
        assert!(
            fixed.len() >= 3 && adaptive.len() >= 3,
            "{dep}: {fixed:?} {adaptive:?}"
        );
        // Fixed: held the whole fixed deadline; adaptive: cut at the adapted one, well before.
        assert!(
            fixed
                .iter()
                .all(|(l, ms, s)| *ms == fixed_ms && s == "fixed" && *l >= fixed_ms as f64),
            "{dep}: {fixed:?}"
        );
        assert!(
            adaptive
                .iter()
                .all(|(l, ms, s)| *ms <= 4_000 && s == "adaptive" && *l < 6_000.0),
            "{dep}: {adaptive:?}"
        );
        let held = |v: &[(f64, u64, String)]| v.iter().map(|x| x.0).fold(0.0, f64::max);
        figures.push(format!(
            "{dep}: fixed {} expiries, held up to {:.0} ms; adaptive {} expiries at {} ms, held up to {:.0} ms",
            fixed.len(),
            held(&fixed),
            adaptive.len(),
            adaptive[0].1,
            held(&adaptive)
        ));
    }
    let d = &r["policies"][1]["summary"]["deadlines_by_dep"];
    println!(
        "adaptive-deadlines ×1: {took:?}; {}; report_build adaptive end {} ms",
        figures.join("; "),
        d["report_build"]["end_ms"]
    );
}
