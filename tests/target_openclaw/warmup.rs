//! The warm-up before the run's clock starts (docs/openclaw.md, "Warm-up"), against a stand-in
//! gateway by URL (`fake_gateway.py`, no OpenClaw needed) and against the real pinned OpenClaw:
//! - a gateway whose first turn is cold (its model request 3 s late) is warmed up first, so a
//!   fault at 0–2 s with `first = 1` hits the first turn of the run — not a warm-up request, and
//!   not nothing (without the warm-up the cold request came after the window);
//! - a gateway that answers its turns without ever asking the upstream never reaches its steady
//!   state: verdict `error`, exit 3, the reason in the report;
//! - the real OpenClaw with 503 on key-A from 0 s to 15 s (`openclaw-503-window`): the first
//!   turn's requests after the warm-up are the ones the fault hits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::scenarios::{fixture, report_json, rows, run_overlapping, show};
use super::stand_in::{StandIn, free_port};

/// A scenario against the gateway at `gw_port` (two turns, at 1 s and 4 s), its upstream on
/// `up_port`, with `faults` and `expect` appended.
fn scenario(dir: &Path, gw_port: u16, up_port: u16, warmup: &str, rest: &str) -> PathBuf {
    let traffic = dir.join("two-turns.jsonl");
    std::fs::write(
        &traffic,
        "{\"at_ms\":1000,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s1\"}\n\
         {\"at_ms\":4000,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s2\"}\n",
    )
    .unwrap();
    let text = format!(
        "name = \"warmup-fake\"\nduration = \"6s\"\ntraffic = \"{}\"\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw_port}\"\nturn_timeout = \"20s\"\n\
         {warmup}\n\
         [upstream]\nlisten = \"127.0.0.1:{up_port}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-warm-key-A\"\n\n{rest}",
        traffic.display()
    );
    let path = dir.join("warmup-fake.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(scenario: &Path, reports: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(reports)
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

fn upstream_lines(out: &Output) -> Vec<Value> {
    std::fs::read_to_string(run_dir(out).join("upstream.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn warm_up_requests_are_neither_judged_nor_faulted_and_the_first_turn_of_the_run_meets_the_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let _gateway = StandIn::start(gw, up, "sk-warm-key-A", &["proxy", "3"]);
    // A 503 for the first request on key-A inside 0–2 s. The gateway's first turn asks the
    // upstream only after 3 s: without a warm-up that request is the run's and falls after the
    // window (the fault never applies); with it, the cold turn and the next (prompt) one are the
    // warm-up's, and the run's first turn gets the 503, its second is answered.
    let path = scenario(
        tmp.path(),
        gw,
        up,
        "[target.warmup]\nprompt = \"1s\"\nturns = 3\n",
        "[[fault]]\nroute = \"llm\"\nprofile = \"sk-warm-key-A\"\nuntil = \"2s\"\nfirst = 1\n\
         kind = \"status\"\nstatus = 503\n\n\
         [[expect.attempts]]\nprofile = \"mockai:a\"\nequals = 2\n\
         [[expect.attempts]]\nprofile = \"mockai:a\"\nfault = \"status\"\nequals = 1\n",
    );
    let out = run(&path, &tmp.path().join("reports"));
    let r = report_json(&out);
    eprintln!("{}\n{}", rows(&r), r["target"]["warmup"]);
    let w = &r["target"]["warmup"];
    assert_eq!(w["steady"], true, "{w}");
    let warm_turns = w["turns"].as_array().unwrap();
    assert_eq!(warm_turns.len(), 2, "a cold turn, then a prompt one: {w}");
    assert!(
        warm_turns[0]["first_request_ms"].as_u64().unwrap() >= 3_000,
        "{w}"
    );
    assert!(
        warm_turns[1]["first_request_ms"].as_u64().unwrap() < 1_000,
        "{w}"
    );
    assert_eq!(w["upstream_requests"], 2, "{w}");
    assert!(w["duration_ms"].as_u64().unwrap() >= 3_000, "{w}");
    // The run's turns: the first met the fault, the second was answered.
    let turns = r["target"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{}", show(&out));
    assert_eq!(
        turns[0]["status"], 502,
        "the first turn met the 503: {}",
        r["target"]
    );
    assert_eq!(turns[1]["ok"], true, "{}", r["target"]);
    // The judge counted the run's two requests only (the warm-up's two left out).
    assert_eq!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    assert_eq!(r["verdict"], "pass");
    // upstream.jsonl keeps every request, the warm-up's marked and never faulted.
    let lines = upstream_lines(&out);
    let warm: Vec<&Value> = lines.iter().filter(|l| l["warmup"] == true).collect();
    let judged: Vec<&Value> = lines.iter().filter(|l| l["warmup"] != true).collect();
    assert_eq!((warm.len(), judged.len()), (2, 2), "{lines:?}");
    assert!(warm.iter().all(|l| l["fault"].is_null()), "{warm:?}");
    assert_eq!(judged[0]["fault"], "status", "{judged:?}");
    assert!(judged[1]["fault"].is_null(), "{judged:?}");
    // And the reports say so.
    let md = std::fs::read_to_string(run_dir(&out).join("report.md")).unwrap();
    assert!(md.contains("### Warm-up"), "{md}");
    assert!(
        md.contains("2 warm-up turns in")
            && md.contains("2 upstream requests before the clock started"),
        "{md}"
    );
    let html = std::fs::read_to_string(run_dir(&out).join("report.html")).unwrap();
    assert!(
        html.contains("<h3>Warm-up</h3>"),
        "report.html has the warm-up"
    );
}

#[test]
fn a_gateway_that_never_asks_the_upstream_never_reaches_its_steady_state_and_is_not_rehearsed() {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let _gateway = StandIn::start(gw, up, "sk-warm-key-A", &["silent", "0"]);
    let path = scenario(
        tmp.path(),
        gw,
        up,
        "[target.warmup]\nprompt = \"1s\"\nturns = 2\n",
        "[[expect.attempts]]\nprofile = \"mockai:a\"\nat_most = 20\n",
    );
    let out = run(&path, &tmp.path().join("reports"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "error", "{r}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("never reached its steady state")
            && reason.contains("answered without a model request"),
        "{reason}"
    );
    let w = &r["target"]["warmup"];
    assert_eq!(w["steady"], false, "{w}");
    assert_eq!(w["turns"].as_array().map_or(0, Vec::len), 2, "{w}");
    assert_eq!(
        r["target"]["turns"].as_array().map_or(0, Vec::len),
        0,
        "no turn of the run was sent"
    );
}

/// The real OpenClaw with 503 on key-A from 0 s to 15 s: warmed up first, its first turn's
/// model requests reach the upstream inside the window and get the 503 (before the warm-up they
/// came at 17.67 s, after it, and the fault never applied).
#[test]
fn openclaw_warmed_up_meets_a_fault_window_at_the_start_of_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let name = "openclaw-503-window";
    let outputs = run_overlapping(vec![(
        name.to_string(),
        fixture(name),
        tmp.path().to_path_buf(),
        Vec::new(),
    )]);
    let (_, out) = &outputs[0];
    let r = report_json(out);
    eprintln!("{}\n{}", rows(&r), r["target"]);
    let w = &r["target"]["warmup"];
    assert_eq!(w["steady"], true, "{w}");
    assert!(w["upstream_requests"].as_u64().unwrap_or(0) >= 1, "{w}");
    let lines = upstream_lines(out);
    let faulted: Vec<&Value> = lines
        .iter()
        .filter(|l| l["warmup"] != true && l["fault"] == "status")
        .collect();
    assert!(
        faulted.len() >= 2,
        "the first turn's requests inside 0–15 s got the 503: {lines:?}"
    );
    assert!(
        faulted
            .iter()
            .all(|l| l["t_ms"].as_u64().unwrap_or(u64::MAX) < 15_000),
        "{faulted:?}"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l["warmup"] == true)
            .all(|l| l["fault"].is_null()),
        "no warm-up request was faulted"
    );
    assert_eq!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(out));
}
