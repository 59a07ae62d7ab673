//! Answers the client got, with a gateway by URL (`[target] kind = "http"`): the stand-in
//! `fake_gateway.py` in front of the mock upstream as `relay` (gpt-4o on key-A, else the
//! fallback gpt-4o-mini on key-C; it reads each stream whole and reports the model and usage
//! the upstream sent: honest), `truncate` (it stops reading after 3 content chunks and answers
//! 200 with them), `misreport` (it says gpt-4o whichever model answered) and the router that
//! strips the turn marker. The same expectations — no truncated turn, the reported model and
//! usage as served — pass the honest gateway, catch the truncation and the misreported model
//! naming the turn and both values, and are no pass where the upstream's record has no turn.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::scenarios::{report_json, rows, show};
use super::stand_in::{StandIn, free_port};

/// The expectations every run here is judged on.
const EXPECT: &str = "[[expect.turn]]\noutcome = \"truncated\"\nequals = 0\n\n\
                      [[expect.turn]]\nreported_model = \"served\"\nusage = \"served\"\n";

/// Three turns at 0.5 s, 1.5 s and 2.5 s; with `outage`, key-A answers 503 throughout (the
/// gateway falls back to gpt-4o-mini on key-C for every turn).
fn scenario(dir: &Path, gw: u16, up: u16, outage: bool) -> PathBuf {
    let line = |at: u64, session: &str| {
        format!(
            "{{\"at_ms\":{at},\"kind\":\"llm\",\"model\":\"gpt-4o\",\"stream\":false,\"max_tokens\":8,\"session\":\"{session}\"}}\n"
        )
    };
    let traffic = [line(500, "s1"), line(1500, "s2"), line(2500, "s3")].concat();
    std::fs::write(dir.join("t.jsonl"), traffic).unwrap();
    let fault = if outage {
        "[[fault]]\nroute = \"llm\"\nprofile = \"sk-answers-A\"\nkind = \"status\"\nstatus = 503\n\n"
    } else {
        ""
    };
    let text = format!(
        "name = \"http-answers\"\nduration = \"4s\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\nturn_timeout = \"20s\"\n\n\
         [target.warmup]\nprompt = \"5s\"\nturns = 2\ntimeout = \"30s\"\n\n\
         [upstream]\nlisten = \"127.0.0.1:{up}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-answers-A\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:c\"\ntoken = \"sk-answers-C\"\n\n\
         {fault}{EXPECT}"
    );
    let path = dir.join("http-answers.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the scenario against the stand-in in `mode`: report.json (report.md under `__md`) and
/// the process's output.
fn run(mode: &str, outage: bool) -> (Value, Output) {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let keys = match mode {
        "strip" => "sk-answers-A,sk-answers-A,sk-answers-C",
        _ => "sk-answers-A,sk-answers-C",
    };
    let _gw = StandIn::start(gw, up, keys, &[mode]);
    let path = scenario(tmp.path(), gw, up, outage);
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&path)
        .arg("--report-dir")
        .arg(tmp.path().join("reports"))
        .output()
        .unwrap();
    let mut r = report_json(&out);
    super::user_config::assert_schema(&r);
    let md_path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .map(str::to_string)
        .unwrap();
    r["__md"] = Value::String(std::fs::read_to_string(md_path).unwrap());
    (r, out)
}

/// The expectation row whose `expected` starts with `what` (and `dep` is `dep`).
fn row<'a>(r: &'a Value, dep: &str, what: &str) -> &'a Value {
    r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["dep"] == dep && e["expected"].as_str().is_some_and(|x| x.starts_with(what)))
        .unwrap_or_else(|| panic!("no row {dep} {what}:\n{}", rows(r)))
}

fn outcomes(r: &Value) -> Vec<String> {
    r["target"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["outcome"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[test]
fn http_answers_an_honest_gateway_passes_the_rows_after_a_fallback() {
    let (r, out) = run("relay", true);
    let ctx = format!("{}\n{}", rows(&r), show(&out));
    assert_eq!(out.status.code(), Some(0), "{ctx}");
    assert_eq!(outcomes(&r), ["answered"; 3], "{ctx}");
    for t in r["target"]["turns"].as_array().unwrap() {
        let a = &t["answer"];
        assert_eq!(a["recorded"], true, "{t}");
        assert_eq!(a["reported_model"], "gpt-4o-mini", "{t}");
        assert_eq!(a["served"]["model"], "gpt-4o-mini", "{t}");
        assert_eq!(
            a["served"]["request"], 1,
            "the fallback after key-A's 503: {t}"
        );
        assert_eq!(a["content_tokens"], 8, "{t}");
        assert_eq!(a["served"]["tokens"], 8, "{t}");
        assert_eq!(a["usage"], a["served"]["usage"], "{t}");
        assert!(a["usage"]["total_tokens"].as_u64().is_some(), "{t}");
    }
    let model = row(&r, "turns answered or truncated", "reported model = served");
    assert_eq!(model["witness"]["turns_compared"], 3, "{model}");
    assert_eq!(model["witness"]["turns_differ"], 0, "{model}");
    let usage = row(&r, "turns answered or truncated", "usage = served");
    assert_eq!(usage["witness"]["turns_compared"], 3, "{usage}");
    assert_eq!(usage["witness"]["turns_unknown"], 0, "{usage}");
}

#[test]
fn http_answers_a_gateway_that_stops_reading_early_is_caught_as_truncated() {
    let (r, out) = run("truncate", false);
    let ctx = format!("{}\n{}", rows(&r), show(&out));
    assert_eq!(out.status.code(), Some(1), "{ctx}");
    assert_eq!(outcomes(&r), ["truncated"; 3], "{ctx}");
    for t in r["target"]["turns"].as_array().unwrap() {
        assert_eq!(t["status"], 200, "{t}");
        assert_eq!(t["ok"], false, "{t}");
        assert_eq!(t["answer"]["content_tokens"], 3, "{t}");
        assert_eq!(t["answer"]["served"]["tokens"], 8, "{t}");
    }
    let cut = row(&r, "turns truncated", "= 0");
    assert_eq!(cut["status"], "fail", "{cut}");
    assert_eq!(cut["observed"], "3 of 3 turns", "{cut}");
    // It answered on the model it was served, but without the usage the upstream sent.
    let model = row(&r, "turns answered or truncated", "reported model = served");
    assert_eq!(model["status"], "pass", "{ctx}");
    let usage = row(&r, "turns answered or truncated", "usage = served");
    assert_eq!(usage["status"], "fail", "{ctx}");
    assert!(
        usage["observed"]
            .as_str()
            .unwrap()
            .contains("turn 0: (none), served "),
        "{usage}"
    );
    let md = r["__md"].as_str().unwrap();
    assert!(md.contains("truncated"), "{md}");
}

#[test]
fn http_answers_a_gateway_that_misreports_the_fallback_model_is_caught() {
    let (r, out) = run("misreport", true);
    let ctx = format!("{}\n{}", rows(&r), show(&out));
    assert_eq!(out.status.code(), Some(1), "{ctx}");
    assert_eq!(outcomes(&r), ["answered"; 3], "{ctx}");
    let model = row(&r, "turns answered or truncated", "reported model = served");
    assert_eq!(model["status"], "fail", "{ctx}");
    let observed = model["observed"].as_str().unwrap();
    for line in 0..3 {
        assert!(
            observed.contains(&format!("turn {line}: gpt-4o, served gpt-4o-mini")),
            "{observed}"
        );
    }
    assert_eq!(model["witness"]["turns_differ"], 3, "{model}");
    // Its usage is the upstream's: that row holds.
    let usage = row(&r, "turns answered or truncated", "usage = served");
    assert_eq!(usage["status"], "pass", "{ctx}");
}

#[test]
fn http_answers_with_the_marker_stripped_are_not_judged_as_pass() {
    let (r, out) = run("strip", false);
    let ctx = format!("{}\n{}", rows(&r), show(&out));
    assert_eq!(out.status.code(), Some(1), "{ctx}");
    assert!(r["policies"][0]["turns"]["unreadable"].is_string(), "{ctx}");
    let cut = row(&r, "turns truncated", "= 0");
    assert_eq!(cut["status"], "fail", "{cut}");
    assert!(
        cut["observed"]
            .as_str()
            .unwrap()
            .contains("truncation not known"),
        "{cut}"
    );
    assert_eq!(cut["witness"]["turns_unrecorded"], 3, "{cut}");
    for what in ["reported model = served", "usage = served"] {
        let e = row(&r, "turns answered or truncated", what);
        assert_eq!(e["status"], "fail", "{e}");
        assert_eq!(e["witness"]["turns_unrecorded"], 3, "{e}");
        assert!(
            e["observed"]
                .as_str()
                .unwrap()
                .contains("the turn marker stripped?"),
            "{e}"
        );
    }
}

#[test]
fn http_answers_a_value_other_than_served_is_located_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario(tmp.path(), free_port(), free_port(), false);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("usage = \"served\"", "usage = \"gateway\"");
    std::fs::write(&path, &text).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"gateway\""))
        .unwrap()
        + 1;
    let col = text.lines().nth(line - 1).unwrap().find('"').unwrap() + 1;
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["validate", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let at = format!("{}:{line}:{col}: expect.turn[1].usage", path.display());
    assert!(err.contains(&at), "wants `{at}`:\n{err}");
    assert!(err.contains("the one value is \"served\""), "{err}");
}
