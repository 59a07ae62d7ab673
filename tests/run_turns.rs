//! The embedded engine marks each turn with the `X-Rehearse-Turn` header (its transport is
//! ours): every attempt of a traffic line — its retries and rotations — carries that line's turn, so upstream.jsonl holds as many turns as the traffic has
//! lines while it holds more requests, and report.json's per-turn rows show them.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::run::{reported_path, run_in, show};

#[test]
fn every_retry_rotation_and_fallback_of_a_line_carries_its_turn() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..6)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":4}}\n",
                200 + i * 300
            )
        })
        .collect();
    std::fs::write(dir.path().join("t.jsonl"), lines).unwrap();
    // Key-A answers 503 throughout: every turn rotates to key-B.
    std::fs::write(
        dir.path().join("turns.toml"),
        "name = \"turns\"\nduration = \"3s\"\ntraffic = \"t.jsonl\"\nseed = 5\npolicies = [\"retry-gate\"]\n\n\
         [engine.modelFailover]\nfallbacks = [\"backup/m2\"]\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:b\"\n\
         [[profile]]\nprovider = \"backup\"\nid = \"backup:c\"\n\n\
         [[fault]]\nroute = \"llm\"\nprofile = \"mockai:a\"\nkind = \"status\"\nstatus = 503\n\n\
         [[expect.attempts]]\nprofile = \"mockai:a\"\nat_least = 1\n",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--scenario",
            "turns.toml",
            "--report-dir",
            dir.path().to_str().unwrap(),
        ],
    );
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    let upstream = std::fs::read_to_string(run_dir.join("upstream.jsonl")).unwrap();
    let mut by_turn: BTreeMap<u64, Vec<(String, String)>> = BTreeMap::new();
    let mut requests = 0;
    for line in upstream.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["canary"] == true {
            assert!(v["turn"].is_null(), "a canary is no turn's: {v}");
            continue;
        }
        requests += 1;
        let turn = v["turn"]
            .as_u64()
            .unwrap_or_else(|| panic!("an engine request without its turn: {v}\n{}", show(&out)));
        by_turn.entry(turn).or_default().push((
            v["model"].as_str().unwrap_or_default().to_string(),
            v["profile_fp"].as_str().unwrap_or_default().to_string(),
        ));
    }
    assert_eq!(
        by_turn.keys().copied().collect::<Vec<_>>(),
        (0..6).collect::<Vec<u64>>(),
        "one turn per traffic line\n{upstream}"
    );
    assert!(
        requests > 6,
        "retries and fallbacks reached the upstream: {upstream}"
    );
    // Each turn's rotation away from the failing key-A kept the turn's marker: two keys per turn.
    for (turn, reqs) in &by_turn {
        let keys: BTreeSet<&str> = reqs.iter().map(|(_, fp)| fp.as_str()).collect();
        assert!(reqs.len() >= 2 && keys.len() >= 2, "turn {turn}: {reqs:?}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("report.json")).unwrap())
            .unwrap();
    let turns = &report["policies"][0]["turns"];
    assert_eq!(turns["rows"].as_array().map(Vec::len), Some(6), "{turns}");
    assert_eq!(turns["unmarked_requests"], 0, "{turns}");
    assert_eq!(turns["marked_requests"], requests, "{turns}");
    // The first turn: key-A failed, then another request of the same turn answered.
    let first = &turns["rows"][0];
    assert!(
        first["requests"].as_array().is_some_and(|r| r.len() >= 2),
        "{first}"
    );
    assert_eq!(first["requests"][0]["profile"], "mockai:a", "{first}");
    assert!(
        first["answered_by"].as_u64().is_some_and(|i| i >= 1),
        "{first}"
    );
}
