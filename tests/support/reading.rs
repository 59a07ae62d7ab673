//! Checks on what a real run wrote that a reader relies on: one time base (every events.jsonl and
//! upstream.jsonl row carries wall `t_ms` and `scenario_ms`; a log line's delay is scenario time,
//! so the retry it announces reaches the upstream that much scenario time later), and the
//! report's fault scope, marks and exact latencies.

use std::path::Path;

use serde_json::Value;

/// Every line of a JSONL file.
pub fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Every row of events.jsonl and upstream.jsonl in `dir` has `t_ms` (wall) and `scenario_ms`
/// = t_ms × speed.
pub fn assert_rows_carry_both_times(dir: &Path, speed: f64) {
    for f in ["events.jsonl", "upstream.jsonl"] {
        let rows = jsonl(&dir.join(f));
        assert!(!rows.is_empty(), "{f} is empty");
        for row in &rows {
            let t = row["t_ms"]
                .as_u64()
                .unwrap_or_else(|| panic!("{f}: no t_ms in {row}"));
            let s = row["scenario_ms"]
                .as_u64()
                .unwrap_or_else(|| panic!("{f}: no scenario_ms in {row}"));
            assert_eq!(s, (t as f64 * speed).round() as u64, "{f}: {row}");
        }
    }
}

/// Each same-profile retry's announced delay ("Retry 1/1 in 481ms", `delay_ms`) is scenario
/// time: a request of that profile reaches the upstream about that much scenario time after the
/// announcement. Other traffic on the profile can arrive in between; where none does (the
/// retry is the first request after the announcement), the retry must not come earlier — a
/// wall-clock delay would arrive after `delay / speed`. Returns (retries, retries that were
/// the first request after their announcement).
pub fn assert_retry_delays_are_scenario_time(
    dir: &Path,
    report: &Value,
    speed: f64,
) -> (usize, usize) {
    let events = jsonl(&dir.join("events.jsonl"));
    let upstream = jsonl(&dir.join("upstream.jsonl"));
    let fp_of = |profile: &str| -> String {
        let dep = report["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == profile)
            .unwrap_or_else(|| panic!("{profile} not in the profile table"))["dep"]
            .as_str()
            .unwrap()
            .to_string();
        dep.rsplit('/').next().unwrap().to_string()
    };
    // A ms of wall clock either way; late by at most 2 s of scenario time on a busy machine.
    let early = speed.ceil() as u64;
    let (mut retries, mut first) = (0, 0);
    for e in events.iter().filter(|e| e["event"] == "same_profile_retry") {
        let delay = e["delay_ms"].as_u64().unwrap();
        let log = e["log"].as_str().unwrap();
        assert!(log.contains(&format!(" in {delay}ms")), "{log}");
        let at = e["scenario_ms"].as_u64().unwrap();
        let fp = fp_of(e["profile"].as_str().unwrap());
        let after: Vec<u64> = upstream
            .iter()
            .filter(|u| u["policy"] == e["policy"] && u["canary"] == false)
            .filter(|u| u["profile_fp"] == fp.as_str())
            .map(|u| u["scenario_ms"].as_u64().unwrap())
            .filter(|&t| t >= at)
            .collect();
        let in_window = |t: &u64| t - at + early >= delay && t - at <= delay + 2_000;
        assert!(
            after.iter().any(in_window),
            "retry announced at {at} in {delay} ms: no request of its profile that much later ({log}; {after:?})"
        );
        if after.first().is_some_and(in_window) {
            first += 1;
        }
        retries += 1;
    }
    (retries, first)
}

/// The fault window `index` of policy `p`.
pub fn fault(p: &Value, index: usize) -> &Value {
    p["fault_windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["index"] == index)
        .unwrap_or_else(|| panic!("no fault window {index}"))
}
