//! The three LiteLLM cases of issue 37 against the real pinned proxy with `kind = "litellm"`: no
//! LiteLLM config written by hand — the harness generates it from the fixture (two `gpt-4o`
//! deployments on key-A then key-B, `gpt-4o-mini` on key-C as the fallback, `num_retries 2`,
//! `allowed_fails 1`, `cooldown_time 25`). Each run carries the fixture's true rows and one
//! mutant row: the true rows pass, the mutant fails, so the run exits 1. The 429 case runs over
//! a user config of its own, whose overrides and turned-off keys the report lists.

use super::support::{assert_schema, command, one_at_a_time, report_json, rows, scenario, show};

/// Runs fixture `name` with `target` added to its `[target]` and `extra` appended (the mutant row);
/// the rows and the report, after checking what every LiteLLM run must show.
fn run(
    name: &str,
    target: &str,
    extra: &str,
    setup: impl FnOnce(&std::path::Path),
) -> (Vec<(String, String, String, String)>, serde_json::Value) {
    let _one = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path());
    let path = scenario(tmp.path(), name, target, extra);
    let out = command(&path, tmp.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let ctx = show(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the mutant row fails the run: {ctx}"
    );
    let r = report_json(&stdout);
    assert_schema(&r);
    let t = &r["target"];
    assert_eq!(t["kind"], "litellm", "{t}");
    assert_eq!(t["version"], t["reported_version"], "{t}");
    assert!(
        t["version"].as_str().is_some_and(|v| v.starts_with('1')),
        "{t}"
    );
    assert!(
        t["url"].as_str().unwrap().starts_with("http://127.0.0.1:"),
        "{t}"
    );
    assert_eq!(t["left_running"], serde_json::json!([]), "{t}");
    assert!(t["stop"].as_str().unwrap().starts_with("SIGTERM"), "{t}");
    // The run directory: the effective config and the log kept, no key in any file.
    let md = stdout
        .lines()
        .last()
        .unwrap()
        .strip_prefix("report: ")
        .unwrap();
    let run_dir = std::path::Path::new(md).parent().unwrap();
    let config = std::fs::read_to_string(run_dir.join("litellm-config.json")).unwrap();
    assert!(config.contains("\"order\": 2"), "{config}");
    assert!(run_dir.join("litellm.log").is_file());
    assert!(
        !run_dir.join(".gateway").exists(),
        "its directory (keys inside) removed"
    );
    for e in std::fs::read_dir(run_dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "gz") {
            // Its /metrics was scraped: the run keeps the expositions.
            assert!(
                std::fs::metadata(&p).unwrap().len() > 100,
                "{}",
                p.display()
            );
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        for key in [
            "sk-rehearse-key-A",
            "sk-rehearse-key-B",
            "sk-rehearse-key-C",
        ] {
            assert!(!text.contains(key), "{key} in {}", p.display());
        }
    }
    (rows(&r), r)
}

/// Every row passed but one, the mutant: a `kind` row whose expectation says `mutant`; the
/// true rows counted.
fn only_the_mutant_fails(
    rows: &[(String, String, String, String)],
    kind: &str,
    mutant: &str,
    true_rows: usize,
) {
    let failed: Vec<_> = rows.iter().filter(|r| r.1 != "pass").collect();
    assert_eq!(failed.len(), 1, "{rows:#?}");
    assert_eq!(failed[0].1, "fail", "{rows:#?}");
    assert_eq!(failed[0].0, kind, "{rows:#?}");
    assert!(failed[0].2.contains(mutant), "{rows:#?}");
    assert_eq!(rows.len(), true_rows + 1, "{rows:#?}");
}

#[test]
fn litellm_503_on_key_a_cools_it_for_its_cooldown_time_once() {
    let (rows, _) = run(
        "litellm-503-key-a",
        "",
        "[[expect.cooldown]]   # the mutant: a 10 s cooldown\nprofile = \"mockai:a\"\ncooled = \"10s\"\ntolerance = \"2s\"\n",
        |_| {},
    );
    only_the_mutant_fails(&rows, "cooldown", "10.000s", 3);
    assert!(
        rows.iter()
            .any(|r| r.1 == "pass" && r.3.contains("1 cooldown: 2")),
        "{rows:#?}"
    );
}

#[test]
fn litellm_429_with_retry_after_cools_key_a_until_the_retry_after_over_a_user_config() {
    let user = "model_list:\n  - model_name: gpt-4o\n    litellm_params: {model: openai/gpt-4o, api_key: os.environ/OPENAI_API_KEY}\n\
                environment_variables:\n  OPENAI_API_KEY: sk-not-used\n\
                router_settings:\n  routing_strategy: simple-shuffle\n  redis_host: redis.invalid\n\
                litellm_settings:\n  drop_params: true\n  success_callback: [\"langfuse\"]\n\
                general_settings:\n  master_key: sk-users-own\n  database_url: postgresql://nobody@db.invalid/litellm\n";
    let (rows, r) = run(
        "litellm-429-key-a",
        "config = \"litellm.yaml\"",
        "[[expect.cooldown]]   # the mutant: its cooldown_time, not the Retry-After\nprofile = \"mockai:a\"\ncooled = \"25s\"\ntolerance = \"2s\"\n",
        |dir| std::fs::write(dir.join("litellm.yaml"), user).unwrap(),
    );
    only_the_mutant_fails(&rows, "cooldown", "25.000s", 2);
    assert!(
        rows.iter()
            .any(|r| r.1 == "pass" && r.3.contains("Retry-After 9.000s")),
        "{rows:#?}"
    );
    let uc = &r["target"]["user_config"];
    let list = |k: &str| {
        uc[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    for k in ["model_list", "general_settings.master_key"] {
        assert!(list("overridden").contains(&k.to_string()), "{uc}");
    }
    for k in [
        "environment_variables",
        "router_settings.redis_host",
        "litellm_settings.success_callback",
        "general_settings.database_url",
    ] {
        assert!(list("turned_off").contains(&k.to_string()), "{uc}");
    }
}

#[test]
fn litellm_503_on_both_gpt_4o_keys_falls_back_to_gpt_4o_mini_at_most_7_requests_a_turn() {
    let (rows, _) = run(
        "litellm-503-both",
        "",
        "[[expect.per_turn]]   # the mutant: 6 requests a turn\nrequests_at_most = 6\nsince = { fault = \"outage\" }\nfrom = \"0s\"\nuntil = \"15s\"\n",
        |_| {},
    );
    only_the_mutant_fails(&rows, "per_turn", "<= 6 requests", 2);
}
