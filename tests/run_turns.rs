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

/// The embedded engine's model fallback inside one turn, judged by the per-turn kinds: both
/// primary keys throttled (429, Retry-After 2 s) from 1 s, the first throttled turn goes key-A →
/// key-B → the fallback model `backup/m2` — three requests with one turn — and every later turn
/// goes straight to the fallback while both keys cool. `[[expect.per_turn]]` and
/// `[[expect.cooldown]]` pass on that ground truth, each with its witness, and the suite's
/// mutants of each row fail.
#[test]
fn the_engines_fallback_carries_its_turn_and_the_per_turn_and_cooldown_rows_judge_it() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..14)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":4}}\n",
                200 + i * 400
            )
        })
        .collect();
    std::fs::write(dir.path().join("t.jsonl"), lines).unwrap();
    std::fs::write(
        dir.path().join("fallback.toml"),
        r#"name = "fallback-turns"
duration = "6s"
traffic = "t.jsonl"
seed = 5
policies = ["retry-gate"]

[engine.modelFailover]
fallbacks = ["backup/m2"]

[[profile]]
provider = "mockai"
id = "mockai:a"
[[profile]]
provider = "mockai"
id = "mockai:b"
[[profile]]
provider = "backup"
id = "backup:c"

[[fault]]
name = "throttle"
route = "llm"
model = "m1"
kind = "rate_limit"
retry_after = "2s"
from = "1s"
until = "5s"

[[expect.per_turn]]
answered_by_model = "backup/m2"
from = "1s"
turns_at_least = 10

[[expect.per_turn]]
requests_at_most = 3

[[expect.cooldown]]
profile = "mockai:a"
until_retry_after = true

[[expect.cooldown]]
profile = "backup:c"
never = true
"#,
    )
    .unwrap();
    let out = crate::support::run::run_in_with_mutants(
        dir.path(),
        &[
            "run",
            "--scenario",
            "fallback.toml",
            "--report-dir",
            dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("report.json")).unwrap())
            .unwrap();
    let p = &report["policies"][0];
    // The first throttled turn: key-A, key-B, then the fallback model answered — one turn.
    let rows = p["turns"]["rows"].as_array().cloned().unwrap_or_default();
    let three = rows
        .iter()
        .find(|r| r["requests"].as_array().is_some_and(|q| q.len() == 3))
        .unwrap_or_else(|| panic!("no turn with its fallback: {}", p["turns"]));
    let path: Vec<(String, String)> = three["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["profile"].as_str().unwrap_or_default().to_string(),
                q["model"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        path,
        [
            ("mockai:a".to_string(), "mockai/m1".to_string()),
            ("mockai:b".to_string(), "mockai/m1".to_string()),
            ("backup:c".to_string(), "backup/m2".to_string())
        ],
        "{three}"
    );
    assert_eq!(three["answered_by"], 2, "{three}");
    // Every row passed on its witness: turns judged, cooldowns seen.
    for e in p["expectations"].as_array().unwrap() {
        assert_eq!(e["status"], "pass", "{e}");
        assert!(
            e["witness"].as_object().is_some_and(|w| !w.is_empty()),
            "{e}"
        );
    }
    // The picture reads the same one rotation and one fallback inside that turn.
    assert_eq!(p["requests"]["rotations_total"], 1, "{}", p["requests"]);
    assert_eq!(p["requests"]["fallbacks_total"], 1, "{}", p["requests"]);
    let (entries, perturbations) = crate::support::run::assert_mutants(&run_dir);
    assert!(
        entries >= 4 && perturbations >= 4,
        "{entries} {perturbations}"
    );
}
