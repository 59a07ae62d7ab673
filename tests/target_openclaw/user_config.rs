//! `[target] config`: the user's own OpenClaw configuration (JSON5) as the gateway's base.
//! With the stand-in `openclaw` (`fake_openclaw.py`, which prints `[CHANNEL] starting channel`
//! for every configured channel and validates like 2026.9, refusing `retired*` keys): a config
//! with a Telegram channel starts none, the report lists what was overridden and turned off,
//! and the effective config kept in the run directory holds fingerprints, never the secrets; a
//! key the release refuses, a provider the mock upstream does not speak and a JSON5 syntax error
//! are exit 2 naming the key and release, the provider, the file:line:col. With the real pinned
//! OpenClaw: the fallback list of a user config changes the outcome of `openclaw-401-generated`
//! (each of the twin fixtures passes its own expectations, fails the other's), and its
//! Telegram channel never starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::scenarios::{fixture, report_json, rows, run_overlapping, show};

/// A stand-in install (the fake `openclaw` in `serve` mode, a `node`, a `package.json`).
fn fake_install(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/target_openclaw/fake_openclaw.py"
    );
    let exe = dir.join("openclaw");
    std::fs::copy(src, &exe).unwrap();
    let node = dir.join("node");
    std::fs::write(&node, "#!/bin/sh\necho v24.22.3\n").unwrap();
    for p in [&exe, &node] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(dir.join("mode"), "serve").unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{"name": "openclaw", "version": "2026.9.6-fake"}"#,
    )
    .unwrap();
    exe
}

const USER: &str = r#"// mine
{
  models: {
    providers: {
      mockai: {
        baseUrl: "https://llm.internal.example/v1",
        api: "openai-completions",
        apiKey: "sk-live-user-secret-0001",
        timeoutSeconds: 7,
        models: [{ id: "m1", name: "m1", maxTokens: 4096 }],
      },
    },
  },
  agents: { defaults: { heartbeat: { every: "5m" } } },
  channels: { telegram: { enabled: true, botToken: "123:tg-secret-bot-token", dmPolicy: "open", allowFrom: ["*"] } },
  cron: { enabled: true },
  gateway: { port: 18789, bind: "lan", auth: { mode: "token", token: "user-gateway-secret" } },
}
"#;

/// A scenario against the fake install with `config = "user.json5"` holding `user`.
fn scenario(dir: &Path, user: &str) -> PathBuf {
    let exe = fake_install(dir);
    std::fs::write(dir.join("user.json5"), user).unwrap();
    std::fs::write(
        dir.join("t.jsonl"),
        "{\"at_ms\":500,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s1\"}\n",
    )
    .unwrap();
    let text = format!(
        "name = \"user-config-fake\"\nduration = \"2s\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
         [target]\nkind = \"openclaw\"\ncommand = \"{}\"\nconfig = \"user.json5\"\nready_timeout = \"60s\"\n\n\
         [target.warmup]\nprompt = \"10s\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-scenario-key-A\"\n\n\
         [[expect.turn]]\noutcome = \"answered\"\nequals = 1\n",
        exe.display()
    );
    let path = dir.join("user-config-fake.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `report` validates against docs/report.schema.json.
pub fn assert_schema(report: &Value) {
    let text = include_str!("../../docs/report.schema.json");
    let schema: Value = serde_json::from_str(text).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.json breaks its schema:\n{}",
        errors.join("\n")
    );
}

fn run(scenario: &Path, reports: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(reports)
        .env_remove("REHEARSE_OPENCLAW")
        .output()
        .unwrap()
}

fn run_dir(out: &Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let md = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("{}", show(out)));
    Path::new(md).parent().unwrap().to_path_buf()
}

#[test]
fn a_user_config_with_a_telegram_channel_starts_none_and_the_report_says_what_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(&scenario(tmp.path(), USER), &tmp.path().join("reports"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let dir = run_dir(&out);
    // What the gateway printed: no channel, no heartbeat (the fake prints both when configured).
    let console = std::fs::read_to_string(dir.join("openclaw-console.log")).unwrap();
    assert!(console.contains("fake gateway starting"), "{console}");
    assert!(!console.contains("starting channel"), "{console}");
    assert!(!console.contains("[heartbeat] started"), "{console}");
    // The report lists what the harness overrode and turned off.
    let r = report_json(&out);
    assert_schema(&r);
    let u = &r["target"]["user_config"];
    let list = |k: &str| -> Vec<String> {
        u[k].as_array()
            .unwrap_or_else(|| panic!("{u}"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let (overridden, off) = (list("overridden"), list("turned_off"));
    assert!(u["path"].as_str().unwrap().ends_with("user.json5"), "{u}");
    for k in [
        "models.providers.mockai.baseUrl",
        "models.providers.mockai.apiKey",
        "gateway.bind",
        "gateway.auth",
    ] {
        assert!(
            overridden.iter().any(|o| o.starts_with(&format!("{k}:"))),
            "{k}: {overridden:#?}"
        );
    }
    for k in [
        "channels.telegram removed",
        "agents.defaults.heartbeat.every",
        "cron.enabled",
    ] {
        assert!(off.iter().any(|o| o.starts_with(k)), "{k}: {off:#?}");
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("### Your config: what the harness changed"),
        "{md}"
    );
    assert!(md.contains("channels.telegram removed"), "{md}");
    // The effective config is kept, fingerprinted; the user's own timeout is kept.
    let kept_text = std::fs::read_to_string(dir.join("openclaw-config.json")).unwrap();
    let kept: Value = serde_json::from_str(&kept_text).unwrap();
    assert!(kept.get("channels").is_none(), "{kept:#}");
    assert_eq!(kept["models"]["providers"]["mockai"]["timeoutSeconds"], 7);
    assert!(
        kept["gateway"]["auth"]["token"]
            .as_str()
            .unwrap()
            .starts_with("fingerprint:"),
        "{kept:#}"
    );
    let mut everything = String::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if e.path().is_file() {
            everything.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
        }
    }
    for secret in [
        "sk-live-user-secret-0001",
        "tg-secret-bot-token",
        "user-gateway-secret",
        "sk-scenario-key-A",
    ] {
        assert!(
            !everything.contains(secret),
            "{secret} is in the run directory"
        );
    }
    assert!(
        !dir.join(".gateway").exists(),
        "the gateway's working dir is removed"
    );
}

#[test]
fn a_key_the_release_refuses_is_exit_2_naming_the_key_and_the_release() {
    let tmp = tempfile::tempdir().unwrap();
    let user = USER.replace(
        "timeoutSeconds: 7,",
        "timeoutSeconds: 7, retiredRetryLimit: 3,",
    );
    let out = run(&scenario(tmp.path(), &user), &tmp.path().join("reports"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        err.contains("key `models.providers.mockai.retiredRetryLimit`"),
        "{err}"
    );
    assert!(err.contains("OpenClaw 2026.9.6-fake refuses"), "{err}");
    assert!(err.contains("user.json5"), "{err}");
    assert!(
        !tmp.path().join("reports").exists()
            || std::fs::read_dir(tmp.path().join("reports"))
                .unwrap()
                .next()
                .is_none(),
        "no run directory for bad input"
    );
}

#[test]
fn a_provider_the_upstream_does_not_speak_and_a_json5_error_are_exit_2_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let user = USER.replace("api: \"openai-completions\"", "api: \"anthropic-messages\"");
    let out = run(&scenario(tmp.path(), &user), &tmp.path().join("reports"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(err.contains("provider `mockai`"), "{err}");
    assert!(err.contains("models.providers.mockai.api"), "{err}");

    let broken = USER.replace(
        "      mockai: {",
        "      mockai: {\n        timeoutSeconds 7,",
    );
    let out = run(&scenario(tmp.path(), &broken), &tmp.path().join("reports"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(err.contains("user.json5:6:24:"), "{err}");
}

/// The twin fixtures with each other's expectations: the `[[expect.*]]` tables of `from`
/// appended to everything before the expectations of `to`.
fn swapped(dir: &Path, to: &str, from: &str) -> PathBuf {
    let text = |n: &str| std::fs::read_to_string(fixture(n)).unwrap();
    let (t, f) = (text(to), text(from));
    let head = &t[..t.find("[[expect.").unwrap()];
    let tail = &f[f.find("[[expect.").unwrap()..];
    let body = format!("{head}{tail}")
        .replace(
            "../traffic/",
            &format!(
                "{}/",
                super::scenarios::repo().join("fixtures/traffic").display()
            ),
        )
        .replace(
            "../openclaw/",
            &format!(
                "{}/",
                super::scenarios::repo().join("fixtures/openclaw").display()
            ),
        );
    let path = dir.join(format!("{to}-with-{from}-expectations.toml"));
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn real_the_user_configs_fallback_list_changes_the_outcome_and_its_channel_never_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let (generated, user) = ("openclaw-401-generated", "openclaw-401-user-config");
    let plan = |name: &str, path: PathBuf| {
        (
            name.to_string(),
            path,
            tmp.path().join(format!("reports-{name}")),
            Vec::new(),
        )
    };
    // Overlapping under the suite's permits (two gateways starting at once, a few running):
    // four starting together starved each other on a loaded 2-core machine (warm-up turns
    // 68–225 s late).
    let runs = run_overlapping(vec![
        plan(generated, fixture(generated)),
        plan(user, fixture(user)),
        plan("generated-swapped", swapped(tmp.path(), generated, user)),
        plan("user-swapped", swapped(tmp.path(), user, generated)),
    ]);
    let mut failures = Vec::new();
    for (name, out) in &runs {
        let r = report_json(out);
        eprintln!("== {name}: exit {:?}\n{}", out.status.code(), rows(&r));
        let want = if name.ends_with("swapped") { 1 } else { 0 };
        if out.status.code() != Some(want) {
            failures.push(format!(
                "{name}: exit {:?}, want {want}\n{}",
                out.status.code(),
                show(out)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The user config's Telegram channel never started; its heartbeats are off.
    let (_, out) = &runs[1];
    let dir = Path::new(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("report: "))
            .unwrap(),
    )
    .parent()
    .unwrap()
    .to_path_buf();
    let console = std::fs::read_to_string(dir.join("openclaw-console.log")).unwrap();
    let log = std::fs::read_to_string(dir.join("openclaw.log")).unwrap();
    for text in [&console, &log] {
        assert!(
            !text.to_lowercase().contains("telegram"),
            "a Telegram line:\n{text}"
        );
    }
    assert!(
        console.contains("[heartbeat]") && console.contains("disabled"),
        "{console}"
    );
    let r = report_json(out);
    let off = r["target"]["user_config"]["turned_off"].to_string();
    assert!(off.contains("channels.telegram removed"), "{off}");
}
