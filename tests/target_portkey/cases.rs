//! The three fault cases of issue 37 against the real Portkey gateway, its routing the cases'
//! config ([`super::CONFIG`]: gpt-4o on key-a then key-b, two retries each, then gpt-4o-mini on
//! key-c), turns every 800 ms. What Portkey does (1.15.2), read from the upstream's record:
//! every turn starts at key-a (no cooldown, no breaker), retries a failing target twice with a
//! backoff of about 1 s then 2 s, ignores Retry-After, then falls to the next target. The true
//! rows pass; the one mutant row written beside them — what LiteLLM did in the same case —
//! fails (so the run exits 1); the suite's own mutants of the true rows all fail too:
//! (a) 503 on key-a → key-a never cooled, tried 3 times a turn, key-b answers while it fails;
//! (b) 429 + Retry-After 3 s on key-a → the same: the Retry-After changes nothing;
//! (c) 503 on both gpt-4o keys → 7 requests a turn, gpt-4o-mini answers ~6 s after the outage.

use serde_json::Value;

use super::{report_json, report_md, run, scenario, show, traffic};

/// One case: its faults and expectations (the true rows first, the mutant row last). Returns
/// report.json, mutants.json and what to print on a failure.
fn case(name: &str, duration: &str, rest: &str) -> (Value, Value, String) {
    super::install();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("t.jsonl"), traffic(12, 800)).unwrap();
    std::fs::write(dir.join("portkey.json"), super::CONFIG).unwrap();
    let path = scenario(dir, name, duration, "config = \"portkey.json\"", rest);
    let out = run(&path);
    let r = report_json(&out);
    let mutants: Value = serde_json::from_str(
        &std::fs::read_to_string(report_md(&out).with_file_name("mutants.json")).unwrap(),
    )
    .unwrap();
    let ctx = format!("{}\n{}", show(&out), r["policies"][0]["turns"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the mutant row fails the run, nothing else: {ctx}"
    );
    assert!(
        super::none_left_under(dir).is_empty(),
        "a Portkey process was left running"
    );
    // What Portkey said of each turn is in the report beside the upstream's record.
    let said = r["target"]["turns"][0]["said"].clone();
    assert!(
        said["answered_by"]
            .as_str()
            .is_some_and(|o| o.starts_with("config.targets[")),
        "{said}\n{ctx}"
    );
    assert_eq!(r["target"]["routing"][2], "key-c gpt-4o-mini", "{ctx}");
    assert!(
        r["target"]["exports"]
            .as_str()
            .is_some_and(|e| e.contains("no /metrics")),
        "{ctx}"
    );
    (r, mutants, ctx)
}

/// The rows of `kind`, in table order: (status, detail).
fn rows_of(r: &Value, kind: &str) -> Vec<(String, String)> {
    r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == kind)
        .map(|x| {
            (
                x["status"].as_str().unwrap().to_string(),
                x["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every true entry was perturbed and no perturbation survived.
fn assert_mutants_fail(m: &Value, entries: &[&str], ctx: &str) {
    let all = m["mutants"].as_array().unwrap();
    for e in entries {
        let of: Vec<&Value> = all.iter().filter(|x| x["entry"] == *e).collect();
        assert!(!of.is_empty(), "{e} was not perturbed: {m}\n{ctx}");
        for x in of {
            assert_eq!(x["survived"], false, "{e}: {x}\n{ctx}");
        }
    }
}

#[test]
fn portkey_503_on_key_a_retries_it_every_turn_and_key_b_answers_never_cooling_it() {
    let (r, m, ctx) = case(
        "pk-503",
        "10s",
        "[[fault]]\nname = \"a-down\"\nroute = \"llm\"\nprofile = \"key-a\"\nuntil = \"6s\"\nkind = \"status\"\nstatus = 503\n\n\
         [[expect.cooldown]]\nprofile = \"key-a\"\nnever = true\n\n\
         [[expect.per_turn]]\nrequests_at_most = 4\nsame_profile_retries_at_most = 2\n\n\
         [[expect.per_turn]]\nanswered_by_profile = \"key-b\"\nturns_at_least = 3\n\n\
         [[expect.cooldown]]\nprofile = \"key-a\"\ncooled = \"25s\"\ntolerance = \"2s\"\n",
    );
    let c = rows_of(&r, "cooldown");
    assert_eq!(c[0].0, "pass", "{ctx}");
    assert_eq!(
        c[1].0, "fail",
        "the mutant (LiteLLM's 25 s cooldown): {ctx}"
    );
    let t = rows_of(&r, "per_turn");
    assert!(t.iter().all(|(s, _)| s == "pass"), "{ctx}");
    assert!(
        t[0].1.contains("most requests 4"),
        "key-a three times, then key-b: {ctx}"
    );
    assert_mutants_fail(&m, &["cooldown[0]", "per_turn[0]", "per_turn[1]"], &ctx);
}

#[test]
fn portkey_429_with_retry_after_on_key_a_is_retried_as_a_503_is_the_retry_after_ignored() {
    let (r, m, ctx) = case(
        "pk-429",
        "10s",
        "[[fault]]\nroute = \"llm\"\nprofile = \"key-a\"\nuntil = \"6s\"\nkind = \"rate_limit\"\nretry_after = \"3s\"\n\n\
         [[expect.cooldown]]\nprofile = \"key-a\"\nnever = true\n\n\
         [[expect.per_turn]]\nsame_profile_retries_at_most = 2\nanswer_within = \"4500ms\"\n\n\
         [[expect.per_turn]]\nanswered_by_profile = \"key-b\"\nturns_at_least = 3\n\n\
         [[expect.cooldown]]\nprofile = \"key-a\"\nuntil_retry_after = true\n",
    );
    let c = rows_of(&r, "cooldown");
    assert_eq!(c[0].0, "pass", "{ctx}");
    assert_eq!(
        c[1].0, "fail",
        "the mutant (LiteLLM honoured the Retry-After): {ctx}"
    );
    let t = rows_of(&r, "per_turn");
    assert!(t.iter().all(|(s, _)| s == "pass"), "{ctx}");
    assert_mutants_fail(&m, &["cooldown[0]", "per_turn[0]", "per_turn[1]"], &ctx);
}

#[test]
fn portkey_503_on_both_gpt_4o_keys_costs_7_requests_a_turn_and_gpt_4o_mini_answers_seconds_later() {
    let (r, m, ctx) = case(
        "pk-double",
        "10s",
        "[[fault]]\nname = \"outage\"\nroute = \"llm\"\nprofile = \"key-a\"\nkind = \"status\"\nstatus = 503\n\n\
         [[fault]]\nroute = \"llm\"\nprofile = \"key-b\"\nkind = \"status\"\nstatus = 503\n\n\
         [[expect.per_turn]]\nanswered_by_model = \"mockai/gpt-4o-mini\"\nrequests_at_most = 7\n\n\
         [[expect.per_turn]]\nrequests_at_least = 7\nturns_at_least = 10\n\n\
         [[expect.first_request]]\nmodel = \"gpt-4o-mini\"\nsince = { fault = \"outage\" }\nat_most = \"9s\"\n\n\
         [[expect.cooldown]]\nprofile = \"key-b\"\nnever = true\n\n\
         [[expect.first_request]]\nmodel = \"gpt-4o-mini\"\nsince = { fault = \"outage\" }\nat_most = \"1s\"\n",
    );
    let t = rows_of(&r, "per_turn");
    assert!(t.iter().all(|(s, _)| s == "pass"), "{ctx}");
    let f = rows_of(&r, "first_request");
    assert_eq!(f[0].0, "pass", "{ctx}");
    assert_eq!(
        f[1].0, "fail",
        "the mutant (LiteLLM's fallback within 1 s): {ctx}"
    );
    assert_eq!(rows_of(&r, "cooldown")[0].0, "pass", "{ctx}");
    assert_mutants_fail(
        &m,
        &[
            "per_turn[0]",
            "per_turn[1]",
            "first_request[0]",
            "cooldown[0]",
        ],
        &ctx,
    );
}
