//! OpenClaw versions side by side (`[target] versions`, `--gateway-version`) with stand-in
//! gateways (`fake_openclaw.py`, one per "version", in the layout `scripts/install-openclaw.sh`
//! makes under `$REHEARSE_CACHE`): one arm per version with its own gateway, the version each
//! said it is, the behaviour-diff table in report.json, Markdown and HTML, and version-scoped
//! expectations; and the ways it must not pass: a version not installed (exit 2 naming the
//! install command), an install of another version (exit 2), an unknown version in an
//! expectation (exit 2 at its line and column), a version whose gateway never calls the
//! provider (not a pass), a run stopped during the second version (not a pass, the second
//! version not judged). The real two-version run is `real_versions`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::scenarios::{report_json, show};

/// `CACHE/openclaw-VERSION/node_modules/.bin/{openclaw,node,mode,version}`: a stand-in install
/// of `version` serving in `mode`, which says it is `says`.
fn fake_install(cache: &Path, version: &str, mode: &str, says: &str) {
    use std::os::unix::fs::PermissionsExt;
    let bin = cache.join(format!("openclaw-{version}/node_modules/.bin"));
    std::fs::create_dir_all(&bin).unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/target_openclaw/fake_openclaw.py"
    );
    std::fs::copy(src, bin.join("openclaw")).unwrap();
    std::fs::write(bin.join("node"), "#!/bin/sh\necho v24.22.3\n").unwrap();
    for f in ["openclaw", "node"] {
        std::fs::set_permissions(bin.join(f), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(bin.join("mode"), mode).unwrap();
    std::fs::write(bin.join("version"), says).unwrap();
}

/// A scenario of two turns (1 s and 3 s, 5 s long) against OpenClaw `versions`, `rest`
/// appended.
fn scenario(dir: &Path, versions: &str, rest: &str) -> PathBuf {
    let traffic = dir.join("two-turns.jsonl");
    std::fs::write(
        &traffic,
        "{\"at_ms\":1000,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s1\"}\n\
         {\"at_ms\":3000,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s2\"}\n",
    )
    .unwrap();
    let text = format!(
        "name = \"versions-fake\"\nduration = \"5s\"\ntraffic = \"{}\"\nseed = 1\n\n\
         [target]\nkind = \"openclaw\"\nversions = {versions}\nturn_timeout = \"20s\"\nready_timeout = \"60s\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-versions-key-A\"\n\n{rest}",
        traffic.display()
    );
    let path = dir.join("versions-fake.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn rehearse(cache: &Path, reports: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rehearse"));
    cmd.args(["run", "--no-progress"])
        .args(args)
        .arg("--report-dir")
        .arg(reports)
        .env("REHEARSE_CACHE", cache)
        .env_remove("REHEARSE_OPENCLAW");
    cmd
}

fn run(cache: &Path, reports: &Path, scenario: &Path, extra: &[&str]) -> Output {
    rehearse(cache, reports, extra)
        .arg("--scenario")
        .arg(scenario)
        .output()
        .unwrap()
}

/// Every turn answered, at each version.
const ANSWERED: &str = "[[expect.turn]]\noutcome = \"answered\"\nequals = 2\n";

#[test]
fn two_versions_run_side_by_side_each_its_own_gateway_with_a_diff_table_and_scoped_expectations() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    fake_install(&cache, "2026.9.2", "serve", "2026.9.2");
    fake_install(&cache, "2026.9.6", "serve", "2026.9.6");
    // One expectation for every version, one scoped to 2026.9.6 by `version`.
    let rest =
        format!("{ANSWERED}\n[[expect.turn]]\nversion = \"2026.9.6\"\nlatency_at_most = \"15s\"\n");
    let sc = scenario(tmp.path(), r#"["2026.9.2", "2026.9.6"]"#, &rest);
    let out = run(&cache, &tmp.path().join("reports"), &sc, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "pass");
    // report.json (its `versions` part included) holds to docs/report.schema.json.
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/report.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&r)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let arms: Vec<&str> = r["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    assert_eq!(arms, ["2026.9.2", "2026.9.6"]);
    // The scoped row is judged in 2026.9.6's section only.
    let rows = |i: usize| r["policies"][i]["expectations"].as_array().unwrap().len();
    assert_eq!((rows(0), rows(1)), (1, 2), "{}", show(&out));
    let v = &r["versions"];
    assert_eq!(v["arms"][0]["version"], "2026.9.2");
    assert_eq!(v["arms"][0]["reported"], "2026.9.2");
    assert_eq!(v["arms"][1]["reported"], "2026.9.6");
    assert_eq!(v["arms"][1]["target"]["version"], "2026.9.6");
    // Each version its own gateway and files.
    let files = |i: usize| v["arms"][i]["target"]["files"].to_string();
    assert!(
        files(0).contains("openclaw-console-2026.9.2.log"),
        "{}",
        files(0)
    );
    assert!(
        files(1).contains("openclaw-console-2026.9.6.log"),
        "{}",
        files(1)
    );
    assert_ne!(v["arms"][0]["target"]["url"], v["arms"][1]["target"]["url"]);
    // The diff table: the turns of each version, and the version each reported, which differs.
    let diff = v["diff"].as_array().unwrap();
    let row = |figure: &str, of: &str| {
        diff.iter()
            .find(|d| d["figure"] == figure && d["of"] == of)
            .unwrap_or_else(|| panic!("no {figure} {of} row in {}", v["diff"]))
    };
    assert_eq!(
        row("turns", "answered")["values"],
        serde_json::json!([2.0, 2.0])
    );
    assert_eq!(row("turns", "answered")["changed"], false);
    assert_eq!(row("version the gateway reported", "")["changed"], true);
    assert_eq!(
        row("status", "")["shown"],
        serde_json::json!(["pass", "pass"])
    );
    // The stand-in's model requests (one per turn) counted per profile: its own token, shown
    // by fingerprint.
    let attempts: Vec<&Value> = diff.iter().filter(|d| d["figure"] == "attempts").collect();
    assert_eq!(attempts.len(), 1, "{}", v["diff"]);
    assert_eq!(attempts[0]["values"], serde_json::json!([2.0, 2.0]));
    // Markdown and HTML show it.
    let dir = run_dir(&out);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Versions side by side"), "{md}");
    assert!(
        md.contains("| figure | of | 2026.9.2 | 2026.9.6 | changed |"),
        "{md}"
    );
    assert!(md.contains("## Target: OpenClaw 2026.9.2"), "{md}");
    assert!(md.contains("## Target: OpenClaw 2026.9.6"), "{md}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>Versions side by side</h2>"), "{html}");
    assert!(html.contains("Target: OpenClaw 2026.9.6"));
    // The upstream's record names each request's arm.
    let up = std::fs::read_to_string(dir.join("upstream.jsonl")).unwrap();
    assert!(
        up.contains("\"2026.9.2\"") && up.contains("\"2026.9.6\""),
        "{up}"
    );

    // --gateway-version picks the versions instead (here: one of them).
    let out = run(
        &cache,
        &tmp.path().join("reports"),
        &sc,
        &["--gateway-version", "2026.9.6"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["policies"].as_array().unwrap().len(), 1);
    assert_eq!(r["versions"]["arms"][0]["version"], "2026.9.6");
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
fn a_version_not_installed_or_another_version_is_bad_input_naming_the_install_command() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    fake_install(&cache, "2026.9.6", "serve", "2026.9.6");
    let sc = scenario(tmp.path(), r#"["2026.9.3", "2026.9.6"]"#, ANSWERED);
    let out = run(&cache, &tmp.path().join("reports"), &sc, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("OpenClaw 2026.9.3 is not installed")
            && err.contains("`scripts/install-openclaw.sh 2026.9.3`")
            && err.contains("REHEARSE_OPENCLAW_2026_9_3"),
        "{err}"
    );
    // An install in 2026.9.4's place that says it is 2026.9.6.
    fake_install(&cache, "2026.9.4", "serve", "2026.9.6");
    let out = run(
        &cache,
        &tmp.path().join("reports"),
        &sc,
        &["--gateway-version", "2026.9.4"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is OpenClaw 2026.9.6, not 2026.9.4"), "{err}");
    // --gateway-version on a target that is not OpenClaw's, or twice the same.
    let out = run(
        &cache,
        &tmp.path().join("reports"),
        &sc,
        &[
            "--gateway-version",
            "2026.9.6",
            "--gateway-version",
            "2026.9.6",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`2026.9.6` is given twice"));
    assert!(
        !tmp.path().join("reports").exists()
            || std::fs::read_dir(tmp.path().join("reports"))
                .unwrap()
                .next()
                .is_none()
    );
}

#[test]
fn an_expectation_scoped_to_an_unknown_version_is_refused_at_its_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let rest = format!("{ANSWERED}\n[[expect.turn]]\nequals = 2\nversion = \"2026.9.5\"\n");
    let sc = scenario(tmp.path(), r#"["2026.9.2", "2026.9.6"]"#, &rest);
    let text = std::fs::read_to_string(&sc).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("version = \"2026.9.5\""))
        .unwrap()
        + 1;
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .arg("validate")
        .arg(&sc)
        .env("REHEARSE_CACHE", &cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("versions-fake.toml:{line}:11")),
        "{err}"
    );
    assert!(err.contains("expect.turn[1].version"), "{err}");
    assert!(
        err.contains(
            "`2026.9.5` is not one of the scenario's `[target] versions` (2026.9.2, 2026.9.6)"
        ),
        "{err}"
    );
    // `versions` on a target that is not OpenClaw's; a version twice; not a version.
    for (versions, kind, needle) in [
        (
            r#"["2026.9.6"]"#,
            "http\"\nurl = \"http://127.0.0.1:9",
            "only for `kind = \"openclaw\", \"litellm\" or \"portkey\"`",
        ),
        (
            r#"["2026.9.6", "2026.9.6"]"#,
            "openclaw",
            "`2026.9.6` appears twice",
        ),
        (r#"["../etc"]"#, "openclaw", "is not an OpenClaw version"),
    ] {
        let t = text
            .replace(r#"["2026.9.2", "2026.9.6"]"#, versions)
            .replace("kind = \"openclaw\"", &format!("kind = \"{kind}\""))
            .replace("version = \"2026.9.5\"", "")
            .replace("ready_timeout = \"60s\"", "");
        std::fs::write(&sc, t).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .arg("validate")
            .arg(&sc)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{versions}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle) && err.contains("target.versions"),
            "{err}"
        );
    }
}

#[test]
fn a_version_whose_gateway_never_calls_the_provider_does_not_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    fake_install(&cache, "2026.9.2", "mute", "2026.9.2");
    fake_install(&cache, "2026.9.6", "serve", "2026.9.6");
    // Its turns are answered, so the turn expectation alone would hold.
    let sc = scenario(tmp.path(), r#"["2026.9.2", "2026.9.6"]"#, ANSWERED);
    let out = run(&cache, &tmp.path().join("reports"), &sc, &[]);
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "incomplete", "{}", show(&out));
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("`2026.9.2`") && reason.contains("sent no request to the upstream"),
        "{reason}"
    );
    assert_eq!(r["policies"][1]["status"], "pass");
}

#[test]
fn a_run_stopped_during_the_second_version_does_not_pass_and_leaves_it_unjudged() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    fake_install(&cache, "2026.9.2", "serve", "2026.9.2");
    fake_install(&cache, "2026.9.6", "serve", "2026.9.6");
    let sc = scenario(tmp.path(), r#"["2026.9.2", "2026.9.6"]"#, ANSWERED);
    let mut child = rehearse(&cache, &tmp.path().join("reports"), &[])
        .arg("--scenario")
        .arg(&sc)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // SIGTERM once the second version's turns are under way.
    let mut err_lines = Vec::new();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 0 {
        err_lines.push(line.clone());
        if line.contains("versions-fake/2026.9.6:") && line.contains("turns to") {
            let pid = child.id().to_string();
            Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        }
        line.clear();
    }
    let out = child.wait_with_output().unwrap();
    let out = Output {
        stderr: err_lines.concat().into_bytes(),
        ..out
    };
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "incomplete", "{}", show(&out));
    assert!(
        r["reason"].as_str().unwrap().contains("SIGTERM"),
        "{}",
        r["reason"]
    );
    assert_eq!(r["policies"][0]["status"], "pass");
    assert_ne!(r["policies"][1]["status"], "pass");
    assert_eq!(r["stopped"]["policy"], "2026.9.6");
}
