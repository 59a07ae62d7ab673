//! Several `--target` files side by side (docs/scenario.md, "Several targets side by side"): one
//! scenario against the embedded engine's target file and an `http` stand-in gateway's
//! (`fake_gateway.py` in `proxy` mode: every turn one request on key-A, no rotation) in one run
//! directory and one report. Key-A answers 503 throughout; the row asks for a request on key-B.
//! The engine rotates to key-B and passes; the stand-in never does and fails: the run's verdict
//! is the worst arm's (fail, exit 1), each arm's column and each arm's own verdict right, in
//! report.json, report.md and report.html, each arm's raw files in its own directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::scenarios::{report_json, show};
use super::stand_in::{StandIn, free_port};

/// Four turns over 5 s, key-A 503 throughout, one row: key-B got a request. No `[target]`:
/// each `--target` gives it one.
fn scenario(dir: &Path) -> PathBuf {
    let line = |at: u64| {
        format!(
            "{{\"at_ms\":{at},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":4,\"session\":\"s{at}\"}}\n"
        )
    };
    let traffic = [line(500), line(1500), line(2500), line(3500)].concat();
    std::fs::write(dir.join("t.jsonl"), traffic).unwrap();
    let text = "name = \"side-by-side\"\nduration = \"5s\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-sbs-A\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:b\"\ntoken = \"sk-sbs-B\"\n\n\
         [[fault]]\nroute = \"llm\"\nprofile = \"sk-sbs-A\"\nkind = \"status\"\nstatus = 503\n\n\
         [[expect.attempts]]\nprofile = \"mockai:b\"\nat_least = 1\n";
    let path = dir.join("side-by-side.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn targets(dir: &Path, gw: u16, up: u16) -> (PathBuf, PathBuf) {
    let embedded = dir.join("engine.toml");
    std::fs::write(&embedded, "[target]\nkind = \"embedded\"\n").unwrap();
    let http = dir.join("stand-in.toml");
    std::fs::write(
        &http,
        format!(
            "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\nhealth_path = \"/health\"\n\
             turn_timeout = \"20s\"\n\n[target.warmup]\nprompt = \"5s\"\nturns = 2\ntimeout = \"30s\"\n\n\
             [upstream]\nlisten = \"127.0.0.1:{up}\"\n"
        ),
    )
    .unwrap();
    (embedded, http)
}

/// The table's row `figure` `of`, its cells.
fn row<'a>(r: &'a Value, figure: &str, of: &str) -> Vec<&'a str> {
    r["targets"]["diff"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["figure"] == figure && d["of"] == of)
        .unwrap_or_else(|| panic!("no row {figure} {of}: {}", r["targets"]["diff"]))["shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn the_embedded_engine_and_a_gateway_by_url_side_by_side_each_judged_on_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let _gateway = StandIn::start(gw, up, "sk-sbs-A", &["proxy"]);
    let path = scenario(tmp.path());
    let (embedded, http) = targets(tmp.path(), gw, up);
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&path)
        .arg("--target")
        .arg(&embedded)
        .arg("--target")
        .arg(&http)
        .arg("--report-dir")
        .arg(tmp.path().join("reports"))
        .output()
        .unwrap();
    let r = report_json(&out);
    let ctx = show(&out);
    super::user_config::assert_schema(&r);
    // The worst arm's verdict, and the report says which arm it was.
    assert_eq!(out.status.code(), Some(1), "{ctx}");
    assert_eq!(r["verdict"], "fail", "{ctx}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("worst arm") && reason.contains("stand-in"),
        "{reason}"
    );
    assert!(
        r["targets"]["verdict_rule"]
            .as_str()
            .unwrap()
            .contains("worst arm"),
        "{}",
        r["targets"]
    );
    // One arm per target, named after its file, in the order given; each its own verdict.
    let arms: Vec<(&str, &str, &str)> = r["targets"]["arms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["arm"].as_str().unwrap(),
                a["kind"].as_str().unwrap(),
                a["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        arms,
        [("engine", "embedded", "pass"), ("stand-in", "http", "fail")],
        "{ctx}"
    );
    let sections: Vec<(&str, &str)> = r["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["policy"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    assert_eq!(sections, [("engine", "pass"), ("stand-in", "fail")]);
    // The row judged per arm, with its witness: the engine's requests on key-B, none from the
    // stand-in.
    for (i, (status, at_least_one)) in [("pass", true), ("fail", false)].iter().enumerate() {
        let e = &r["policies"][i]["expectations"][0];
        assert_eq!(e["status"], *status, "{e}");
        assert!(e["witness"].is_object(), "{e}");
        let b = r["targets"]["arms"][i]["attempts"]["mockai:b"]
            .as_u64()
            .unwrap_or(0);
        assert_eq!(
            b >= 1,
            *at_least_one,
            "arm {i}: {}",
            r["targets"]["arms"][i]
        );
    }
    assert_eq!(
        row(&r, "expect attempts", "mockai:b attempts >= 1"),
        ["pass", "fail"]
    );
    assert_eq!(row(&r, "kind", ""), ["embedded", "http"]);
    assert_eq!(row(&r, "verdict of its target", ""), ["pass", "fail"]);
    let files = row(&r, "target file", "");
    assert!(
        files[0].starts_with(&embedded.display().to_string()),
        "{files:?}"
    );
    assert!(
        files[1].starts_with(&http.display().to_string()),
        "{files:?}"
    );
    assert_eq!(
        row(&r, "gateway", ""),
        ["-", format!("http://127.0.0.1:{gw}").as_str()]
    );
    // `target` keeps its one-gateway meaning: the gateway arm's block.
    assert_eq!(r["target"]["kind"], "http");
    assert!(r.get("target_file").is_none(), "{}", r["target_file"]);
    // One run directory: the reports at its top, each arm's raw files in its own directory.
    let md_path = PathBuf::from(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("report: "))
            .unwrap(),
    );
    let dir = md_path.parent().unwrap();
    for arm in ["engine", "stand-in"] {
        let up = std::fs::read_to_string(dir.join(arm).join("upstream.jsonl")).unwrap();
        assert!(up.lines().count() >= 4, "{arm}: {up}");
        assert!(!up.contains("sk-sbs-"), "{arm}: a key in clear");
    }
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(md.contains("## Targets side by side"), "{md}");
    assert!(
        md.contains("| expect attempts | mockai:b attempts >= 1 | pass | fail | differs |"),
        "{md}"
    );
    assert!(md.contains("worst arm's"), "{md}");
    assert!(md.contains("## Target `stand-in` (http,"), "{md}");
    // The engine's own tables for its arm, none for the gateway's.
    assert!(md.contains("\n## Policy `engine`"), "{md}");
    assert!(!md.contains("\n## Policy `stand-in`"), "{md}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("<h2>Targets side by side</h2>"),
        "no table in report.html"
    );
    assert!(
        html.contains("<th>stand-in</th>"),
        "no column for the gateway arm in report.html"
    );
}
