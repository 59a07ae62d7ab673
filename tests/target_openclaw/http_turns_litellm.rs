//! The three LiteLLM cases of issue 37 written with `[[expect.cooldown]]` and
//! `[[expect.per_turn]]`, no fixed windows, against `fake_gateway.py`'s `litellm` mode (a
//! stand-in that routes like LiteLLM's router: gpt-4o on key-A then key-B, gpt-4o-mini on
//! key-C as the fallback, three tries of a deployment within ms, cooled on its second failing
//! turn for 5 s or its Retry-After). Turns every 700 ms. In each case the true rows pass, the
//! one mutant row written beside them fails (so the run exits 1), and the suite's own mutants
//! of the true rows (`mutants.json`) all fail too:
//! (a) 503 on key-A → key-A cooled ~5 s, its turns answered by key-B;
//! (b) 429 + Retry-After 3 s on key-A → cooled until the Retry-After, not the 5 s;
//! (c) 503 on both gpt-4o keys → answered by gpt-4o-mini, at most 7 requests per turn.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::scenarios::{report_json, rows, show};
use super::stand_in::{StandIn, free_port};

/// One case: its faults and expectations (the true rows first, the mutant row last). Returns
/// report.json and mutants.json.
fn run(name: &str, faults: &str, expect: &str) -> (Value, Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (gw, up) = (free_port(), free_port());
    let _router = StandIn::start(gw, up, "sk-ll-A,sk-ll-B,sk-ll-C", &["litellm"]);
    let traffic: String = (0..11)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"openai/gpt-4o\",\"stream\":false,\"max_tokens\":4,\"session\":\"s{i}\"}}\n",
                300 + i * 700
            )
        })
        .collect();
    std::fs::write(dir.join("t.jsonl"), traffic).unwrap();
    let text = format!(
        "name = \"{name}\"\nduration = \"8s\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\nturn_timeout = \"20s\"\n\n\
         [upstream]\nlisten = \"127.0.0.1:{up}\"\n\n\
         [models]\nprimary = \"openai/gpt-4o\"\nfallbacks = [\"openai/gpt-4o-mini\"]\n\n\
         [[profile]]\nprovider = \"openai\"\nid = \"key-a\"\ntoken = \"sk-ll-A\"\n\n\
         [[profile]]\nprovider = \"openai\"\nid = \"key-b\"\ntoken = \"sk-ll-B\"\n\n\
         [[profile]]\nprovider = \"openai\"\nid = \"key-c\"\ntoken = \"sk-ll-C\"\n\n\
         {faults}\n{expect}"
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&path)
        .arg("--report-dir")
        .arg(dir.join("reports"))
        .env("REHEARSE_MUTANTS", "1")
        .output()
        .unwrap();
    let r = report_json(&out);
    super::user_config::assert_schema(&r);
    let md = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .map(str::to_string)
        .unwrap();
    let mutants: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&md).with_file_name("mutants.json")).unwrap(),
    )
    .unwrap();
    let ctx = format!(
        "{}\n{}\n{}",
        rows(&r),
        show(&out),
        r["policies"][0]["turns"]
    );
    // The mutant row fails the run; nothing else does.
    assert_eq!(out.status.code(), Some(1), "{ctx}");
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
fn litellm_503_on_key_a_cools_it_for_its_cooldown_time_and_key_b_answers() {
    let (r, m, ctx) = run(
        "ll-503",
        "[[fault]]\nname = \"a-down\"\nroute = \"llm\"\nprofile = \"sk-ll-A\"\nuntil = \"3s\"\nkind = \"status\"\nstatus = 503\n",
        "[[expect.cooldown]]\nprofile = \"key-a\"\nmodel = \"openai/gpt-4o\"\ncooled = \"5s\"\ntolerance = \"1s\"\ncount = 1\n\n\
         [[expect.cooldown]]\nprofile = \"key-b\"\nnever = true\n\n\
         [[expect.per_turn]]\nanswered_by_profile = \"key-b\"\nturns_at_least = 7\n\n\
         [[expect.per_turn]]\nrequests_at_most = 4\nsame_profile_retries_at_most = 2\n\n\
         [[expect.cooldown]]\nprofile = \"key-a\"\ncooled = \"25s\"\ntolerance = \"2s\"\n",
    );
    let c = rows_of(&r, "cooldown");
    assert_eq!(c.len(), 3, "{ctx}");
    assert_eq!(c[0].0, "pass", "{ctx}");
    assert!(c[0].1.contains("turns elsewhere"), "{ctx}");
    assert_eq!(c[1].0, "pass", "{ctx}");
    assert_eq!(c[2].0, "fail", "the mutant (LiteLLM's default 25 s): {ctx}");
    let t = rows_of(&r, "per_turn");
    assert!(t.iter().all(|(s, _)| s == "pass"), "{ctx}");
    assert_mutants_fail(
        &m,
        &["cooldown[0]", "cooldown[1]", "per_turn[0]", "per_turn[1]"],
        &ctx,
    );
}

#[test]
fn litellm_429_with_retry_after_on_key_a_cools_it_until_the_retry_after() {
    let (r, m, ctx) = run(
        "ll-429",
        "[[fault]]\nroute = \"llm\"\nprofile = \"sk-ll-A\"\nuntil = \"3s\"\nkind = \"rate_limit\"\nretry_after = \"3s\"\n",
        "[[expect.cooldown]]\nprofile = \"key-a\"\nuntil_retry_after = true\ntolerance = \"1s\"\ncount = 1\n\n\
         [[expect.per_turn]]\nanswered_by_profile = \"key-b\"\nturns_at_least = 4\n\n\
         [[expect.cooldown]]\nprofile = \"key-a\"\ncooled = \"5s\"\ntolerance = \"500ms\"\n",
    );
    let c = rows_of(&r, "cooldown");
    assert_eq!(c[0].0, "pass", "{ctx}");
    assert!(c[0].1.contains("Retry-After 3.000s"), "{ctx}");
    assert_eq!(
        c[1].0, "fail",
        "the mutant (its cooldown_time, not the Retry-After): {ctx}"
    );
    assert_eq!(rows_of(&r, "per_turn")[0].0, "pass", "{ctx}");
    assert_mutants_fail(&m, &["cooldown[0]", "per_turn[0]"], &ctx);
}

#[test]
fn litellm_503_on_both_gpt_4o_keys_falls_back_to_gpt_4o_mini_at_most_7_requests_a_turn() {
    let (r, m, ctx) = run(
        "ll-double",
        "[[fault]]\nroute = \"llm\"\nprofile = \"sk-ll-A\"\nkind = \"status\"\nstatus = 503\n\n\
         [[fault]]\nroute = \"llm\"\nprofile = \"sk-ll-B\"\nkind = \"status\"\nstatus = 503\n",
        "[[expect.per_turn]]\nanswered_by_model = \"openai/gpt-4o-mini\"\nrequests_at_most = 7\n\n\
         [[expect.per_turn]]\nrequests_at_least = 7\nturns_at_least = 2\n\n\
         [[expect.cooldown]]\nprofile = \"key-b\"\nat_least = \"4s\"\n\n\
         [[expect.per_turn]]\nrequests_at_most = 6\n",
    );
    let t = rows_of(&r, "per_turn");
    assert_eq!(t[0].0, "pass", "{ctx}");
    assert_eq!(t[1].0, "pass", "{ctx}");
    assert_eq!(t[2].0, "fail", "the mutant (6 requests a turn): {ctx}");
    assert!(t[2].1.contains("7 requests"), "{ctx}");
    assert_eq!(rows_of(&r, "cooldown")[0].0, "pass", "{ctx}");
    assert_mutants_fail(&m, &["per_turn[0]", "per_turn[1]", "cooldown[0]"], &ctx);
}
