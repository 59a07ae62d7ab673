//! Time from a fault end to end: an embedded run whose only primary key has an outage named
//! `outage` (429 from 5 s, which cools it at once) and an `opening` latency fault before it; "the fallback model's first
//! request came within 1 s of the outage's start" passes at ×2 and ×5 (the same verdict at every speed), and
//! its mutants fail — a bound past what happened, the same bound anchored at the wrong fault,
//! and an anchor at a fault that never applied (never anchored at 0). A misspelt fault name is
//! exit 2 at its `file:line:col`.

use std::path::{Path, PathBuf};

use crate::support::run::{
    assert_mutants, repo_root, report_json, reported_path, run_scenario, run_scenario_with_mutants,
    show,
};

const FAULTS: &str = "\
[[profile]]
provider = \"openai-codex\"
id = \"openai-codex:a\"
token = \"sk-anchor-a\"
[[profile]]
provider = \"anthropic\"
id = \"anthropic:f\"
token = \"sk-anchor-f\"

[engine.modelFailover]
fallbacks = [\"anthropic/claude-opus\"]

[[fault]]
name = \"opening\"
route = \"llm\"
profile = \"sk-anchor-a\"
kind = \"latency\"
delay = \"20ms\"
until = \"2s\"

[[fault]]
name = \"outage\"
route = \"llm\"
profile = \"sk-anchor-a\"
kind = \"rate_limit\"
retry_after = \"2s\"
from = \"5s\"

[[fault]]
name = \"spare\"
route = \"tool:nothing\"
kind = \"status\"
status = 500
optional = true
";

fn scenario(dir: &Path, tag: &str, expect: &str) -> PathBuf {
    let traffic = repo_root().join("fixtures/traffic/fleet-llm.jsonl");
    let text = format!(
        "name = \"anchor-{tag}\"\nduration = \"10s\"\ntraffic = {traffic:?}\nseed = 5\n\
         workers = 2\n\n{FAULTS}\n{expect}",
        traffic = traffic.display().to_string()
    );
    let path = dir.join(format!("{tag}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

const TRUE: &str = "\
[[expect.first_request]]
model = \"anthropic/claude-opus\"
since = { fault = \"outage\" }
at_most = \"1s\"

[[expect.attempts]]
model = \"anthropic/claude-opus\"
fault = \"none\"
since = { fault = \"outage\", edge = \"start\" }
until = \"3s\"
at_least = 5
";

fn rows(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["policies"][0]["expectations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn the_fallback_within_a_second_of_the_outage_passes_at_every_speed_and_its_mutants_fail() {
    let dir = tempfile::tempdir().unwrap();
    let pass = scenario(dir.path(), "true", TRUE);
    for speed in ["2", "5"] {
        // With the suite's own mutants: every anchored row re-judged after a change that should
        // fail it (`src/rehearsal/mutants/`) does fail.
        let out = run_scenario_with_mutants(&pass, speed, &dir.path().join(format!("r{speed}")));
        assert_eq!(out.status.code(), Some(0), "×{speed}: {}", show(&out));
        let (perturbed, _) = assert_mutants(reported_path(&out).parent().unwrap());
        assert!(perturbed >= 2, "×{speed}: {perturbed}");
        let r = report_json(&out);
        let anchored: Vec<_> = rows(&r)
            .into_iter()
            .filter(|x| {
                x["expected"]
                    .as_str()
                    .unwrap_or("")
                    .contains("since fault `outage`")
            })
            .collect();
        assert_eq!(anchored.len(), 2, "×{speed}: {r:#}");
        for x in &anchored {
            assert_eq!(x["status"], "pass", "×{speed}: {x:#}");
            // The witness says the anchor's instant: the outage's start, 5 s, at every speed.
            assert_eq!(x["witness"]["anchor_ms"], 5_000, "×{speed}: {x:#}");
            assert!(
                x["witness"]["fault_applications"].as_u64() > Some(0),
                "{x:#}"
            );
        }
        // Each 429 in upstream.jsonl keeps the wait its Retry-After said, in scenario time: 2 s
        // ÷ speed goes out rounded up to whole seconds (`1`), which is 1 s × speed of scenario.
        let jsonl = reported_path(&out).with_file_name("upstream.jsonl");
        let text = std::fs::read_to_string(&jsonl).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect();
        let limited: Vec<&serde_json::Value> = lines
            .iter()
            .filter(|v| v["fault"] == "rate_limit")
            .collect();
        assert!(
            !limited.is_empty(),
            "×{speed}: no 429 in {}",
            jsonl.display()
        );
        let want = 1_000 * speed.parse::<u64>().unwrap();
        for v in &limited {
            assert_eq!(v["retry_after_ms"], want, "×{speed}: {v}");
        }
        let healthy = lines.iter().filter(|v| v["fault"].is_null());
        assert!(healthy.clone().count() > 0);
        assert!(
            healthy
                .into_iter()
                .all(|v| v.get("retry_after_ms").is_none())
        );
    }

    let mutants = "\
[[expect.first_request]]
model = \"anthropic/claude-opus\"
since = { fault = \"outage\" }
at_least = \"2s\"

[[expect.first_request]]
model = \"anthropic/claude-opus\"
since = { fault = \"opening\" }
at_most = \"1s\"

[[expect.first_request]]
model = \"anthropic/claude-opus\"
since = { fault = 2 }
at_most = \"30s\"
";
    let fail = scenario(dir.path(), "mutants", mutants);
    let out = run_scenario(&fail, "2", &dir.path().join("m"));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let r = report_json(&out);
    let firsts: Vec<_> = rows(&r)
        .into_iter()
        .filter(|x| x["kind"] == "first_request")
        .collect();
    assert_eq!(firsts.len(), 3, "{r:#}");
    for x in &firsts {
        assert_eq!(x["status"], "fail", "{x:#}");
    }
    // Past what happened: the fallback's first request came well within 2 s of the outage's start.
    assert!(
        firsts[0]["observed_ms"].as_i64() < Some(2_000),
        "{:#}",
        firsts[0]
    );
    // The wrong fault: `opening` starts at 0 s, five seconds before the fallback was ever needed.
    assert_eq!(firsts[1]["witness"]["anchor_ms"], 0, "{:#}", firsts[1]);
    assert!(
        firsts[1]["observed_ms"].as_i64() > Some(4_000),
        "{:#}",
        firsts[1]
    );
    // A fault that never applied anchors nothing: not at 0, where 30 s would have held.
    assert!(
        firsts[2]["detail"]
            .as_str()
            .unwrap_or("")
            .contains("fault[2] never applied"),
        "{:#}",
        firsts[2]
    );
    assert!(
        firsts[2]["witness"].get("anchor_ms").is_none(),
        "{:#}",
        firsts[2]
    );
}

/// `LINE:COL` (1-based) of the first `needle` in the file at `path`.
fn line_col(path: &Path, needle: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let at = text.find(needle).unwrap();
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{line}:{col}")
}

fn validate(path: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["validate", path.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn a_misspelt_fault_name_is_exit_2_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = TRUE.replacen("fault = \"outage\" }", "fault = \"outgae\" }", 1);
    let path = scenario(dir.path(), "typo", &bad);
    let out = validate(&path);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    // At the value of `since = { fault = "outgae" }`.
    let at = line_col(&path, "\"outgae\"");
    let want = format!("typo.toml:{at}: expect.first_request[0].since.fault");
    assert!(err.contains(&want), "{want}: {err}");
    assert!(err.contains("did you mean `outage`?"), "{err}");
    let dup = FAULTS.replacen("name = \"spare\"", "name = \"outage\"", 1);
    let text = format!(
        "name = \"anchor-dup\"\nduration = \"10s\"\ntraffic = {:?}\n\n{dup}\n{TRUE}",
        repo_root()
            .join("fixtures/traffic/fleet-llm.jsonl")
            .display()
            .to_string()
    );
    let path = dir.path().join("dup.toml");
    std::fs::write(&path, text).unwrap();
    let out = validate(&path);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    // At the third fault's name, the second `"outage"`.
    let text = std::fs::read_to_string(&path).unwrap();
    let second = text.match_indices("name = \"outage\"").nth(1).unwrap().0;
    let line = text[..second].lines().count() + 1;
    assert!(
        err.contains(&format!("dup.toml:{line}:8: fault[2].name")),
        "{err}"
    );
    assert!(err.contains("already the name of fault[1]"), "{err}");
}
