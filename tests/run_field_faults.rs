//! The field's faults (#38) through the embedded engine, end to end: an error event inside a
//! 200 stream is a failed attempt (the engine rotates to the next profile, the upstream's
//! record shows the broken request answering nothing), a wait announced in `headers` reaches the
//! record and `[[expect.cooldown]] until_retry_after` judges the engine's cooldown on it (the
//! engine cools longer than the wait: a judged fail), and a
//! traffic row's own `messages` (an assistant prefill) reaches the upstream, where a
//! `when = { prefill = true }` fault hits it and only it.

use std::path::Path;

use serde_json::Value;

use crate::support::run::{report_json, reported_path, run_in, show};

/// Writes `t.jsonl` and `s.toml` (the three profiles, `body` appended) into `dir` and runs it.
fn run(dir: &Path, traffic: &str, body: &str) -> (std::process::Output, Vec<Value>) {
    std::fs::write(dir.join("t.jsonl"), traffic).unwrap();
    std::fs::write(
        dir.join("s.toml"),
        format!(
            "name = \"field\"\nduration = \"4s\"\ntraffic = \"t.jsonl\"\nseed = 3\npolicies = [\"retry-gate\"]\n\n\
             [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\n\
             [[profile]]\nprovider = \"mockai\"\nid = \"mockai:b\"\n\
             [[profile]]\nprovider = \"mockai\"\nid = \"mockai:c\"\n\n{body}"
        ),
    )
    .unwrap();
    let out = run_in(
        dir,
        &[
            "run",
            "--scenario",
            "s.toml",
            "--report-dir",
            dir.to_str().unwrap(),
        ],
    );
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    let records = std::fs::read_to_string(run_dir.join("upstream.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["canary"] != true && v["warmup"] != true)
        .collect();
    (out, records)
}

fn rows(r: &Value, kind: &str) -> Vec<(String, String)> {
    r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == kind)
        .map(|x| {
            (
                x["status"].as_str().unwrap_or_default().to_string(),
                x["detail"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn llm_lines(n: u64, stream: bool, extra: &str) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":{stream},\"max_tokens\":4{extra}}}\n",
                200 + i * 400
            )
        })
        .collect()
}

#[test]
fn an_error_event_inside_a_200_stream_is_a_failed_attempt_and_the_turn_moves_on() {
    let dir = tempfile::tempdir().unwrap();
    let (out, records) = run(
        dir.path(),
        &llm_lines(5, true, ""),
        "[[fault]]\nroute = \"llm\"\nprofile = \"mockai:a\"\nkind = \"error_event\"\nafter_chunks = 2\n\n\
         [[expect.per_turn]]\nanswered_by_profile = \"mockai:b\"\nturns_at_least = 1\n",
    );
    let r = report_json(&out);
    let ctx = format!("{}\n{records:?}", show(&out));
    let a = rehearse::util::fingerprint("mockai:a");
    let broken: Vec<&Value> = records
        .iter()
        .filter(|v| v["fault"] == "error_event")
        .collect();
    assert!(!broken.is_empty(), "{ctx}");
    assert!(
        broken.iter().all(|v| v["profile_fp"] == a.as_str()),
        "{ctx}"
    );
    // Every turn whose request key-A broke went on to another profile: the engine did not take
    // the 200 for an answer.
    for b in &broken {
        let later = records.iter().any(|v| {
            v["turn"] == b["turn"] && v["profile_fp"] != a.as_str() && v["fault"].is_null()
        });
        assert!(
            later,
            "turn {} stopped at the error event: {ctx}",
            b["turn"]
        );
    }
    assert_eq!(rows(&r, "per_turn")[0].0, "pass", "{ctx}");
}

#[test]
fn a_retry_after_in_headers_is_recorded_and_judged_by_until_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let (out, records) = run(
        dir.path(),
        &llm_lines(8, false, ""),
        "[[fault]]\nroute = \"llm\"\nprofile = \"mockai:a\"\nuntil = \"1s\"\nkind = \"status\"\n\
         error = \"rate_limit_exceeded\"\nheaders = { retry-after = \"2\", x-ms-throttle-reason = \"quota\" }\n\n\
         [[expect.cooldown]]\nprofile = \"mockai:a\"\nuntil_retry_after = true\ntolerance = \"1s\"\n",
    );
    let r = report_json(&out);
    let ctx = format!("{}\n{records:?}", show(&out));
    // Key-A's 429s, each recorded with the wait its `retry-after` header announced.
    let a = rehearse::util::fingerprint("mockai:a");
    let faulted: Vec<&Value> = records
        .iter()
        .filter(|v| v["fault"] == "status" && v["profile_fp"] == a.as_str())
        .collect();
    assert!(!faulted.is_empty(), "{ctx}");
    assert!(faulted.iter().all(|v| v["retry_after_ms"] == 2000), "{ctx}");
    let c = rows(&r, "cooldown");
    assert_eq!(c.len(), 1, "{ctx}");
    assert!(
        c[0].1.contains("Retry-After 2.000s"),
        "judged on the announced wait: {ctx}"
    );
    // The embedded engine cools a rate-limited profile for max(its policy's cooldown, the
    // Retry-After) (engine/failover), longer than the 2 s: judged, and failed, not unjudged.
    assert_eq!(c[0].0, "fail", "{ctx}");
    assert!(c[0].1.contains("had not ended"), "{ctx}");
    assert_eq!(out.status.code(), Some(1), "{ctx}");
}

#[test]
fn a_prefill_row_reaches_the_upstream_and_only_it_meets_a_when_prefill_fault() {
    let dir = tempfile::tempdir().unwrap();
    let prefill = ",\"messages\":[{\"role\":\"user\",\"content\":\"write a haiku\"},\
                   {\"role\":\"assistant\",\"content\":\"Autumn\"}]";
    let traffic = format!(
        "{}{}",
        llm_lines(1, false, ""),
        llm_lines(1, false, prefill).replace("\"at_ms\":200", "\"at_ms\":900")
    );
    let (out, records) = run(
        dir.path(),
        &traffic,
        "[[fault]]\nroute = \"llm\"\nkind = \"status\"\nerror = \"context_length_exceeded\"\n\
         when = { prefill = true }\n\n\
         [[expect.attempts]]\nprofile = \"mockai:a\"\nat_least = 1\n",
    );
    let ctx = format!("{}\n{records:?}", show(&out));
    let turn_of = |t: u64| -> Vec<Option<&str>> {
        records
            .iter()
            .filter(|v| v["turn"] == t)
            .map(|v| v["fault"].as_str())
            .collect()
    };
    let (first, second) = (turn_of(0), turn_of(1));
    assert_eq!(first, [None], "the plain row: {ctx}");
    assert!(
        !second.is_empty() && second.iter().all(|f| *f == Some("status")),
        "{ctx}"
    );
}
