//! Turns in the upstream's record with a gateway by URL (`[target] kind = "http"`): the stand-in
//! `fake_gateway.py` as a router like LiteLLM's (m1 on key-A retried once, then key-B, then the
//! fallback m2 on key-C; the session's history sent with every request, as OpenClaw does; a
//! title call of its own on a session's first turn). Each turn's row lists its requests, their
//! profiles and models, the one that answered; a second turn of a session is read by its last
//! user message's marker, not the first turn's in its history; the title calls are counted
//! apart; the key figures count the move to m2 on key-C as one fallback, not also a rotation.
//! The same router stripping the marker: the report says so and its per-turn figures are
//! "unknown", never 0.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::scenarios::{report_json, rows, show};
use super::stand_in::{StandIn, free_port};

/// Three turns (s1 at 0.5 s and 1.5 s, s2 at 2.5 s); key-A answers 503 throughout, key-B from
/// 2 s to 3.5 s.
/// `extra`: more expectation tables.
fn scenario(dir: &Path, gw: u16, up: u16, extra: &str) -> PathBuf {
    let line = |at: u64, session: &str| {
        format!(
            "{{\"at_ms\":{at},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":4,\"session\":\"{session}\"}}\n"
        )
    };
    let traffic = [line(500, "s1"), line(1500, "s1"), line(2500, "s2")].concat();
    std::fs::write(dir.join("t.jsonl"), traffic).unwrap();
    let text = format!(
        "name = \"http-turns\"\nduration = \"4s\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\nturn_timeout = \"20s\"\n\n\
         [target.warmup]\nprompt = \"5s\"\nturns = 2\ntimeout = \"30s\"\n\n\
         [upstream]\nlisten = \"127.0.0.1:{up}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-turns-A\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:b\"\ntoken = \"sk-turns-B\"\n\n\
         [[profile]]\nprovider = \"backup\"\nid = \"backup:c\"\ntoken = \"sk-turns-C\"\n\n\
         [[fault]]\nroute = \"llm\"\nprofile = \"sk-turns-A\"\nkind = \"status\"\nstatus = 503\n\n\
         [[fault]]\nname = \"b-outage\"\nroute = \"llm\"\nprofile = \"sk-turns-B\"\nfrom = \"2s\"\nuntil = \"3500ms\"\nkind = \"status\"\nstatus = 503\n\n\
         [[expect.turn]]\noutcome = \"answered\"\nequals = 3\n{extra}"
    );
    let path = dir.join("http-turns.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Only the third turn (due 2.5 s) begins inside key-B's outage (2 s to 3.5 s): it alone is
/// answered by the fallback on key-C; the turns before it, answered by key-B, are outside the
/// window — an unanchored row would fail on them.
const WINDOWED: &str = "\n[[expect.per_turn]]\nanswered_by_profile = \"backup:c\"\nsince = { fault = \"b-outage\" }\nuntil = \"1500ms\"\nturns_at_least = 1\n\n\
     [[expect.turn]]\noutcome = \"answered\"\nsince = { fault = \"b-outage\" }\nuntil = \"1500ms\"\nequals = 1\n";

fn run(mode: &str) -> (Value, Output) {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let _router = StandIn::start(gw, up, "sk-turns-A,sk-turns-B,sk-turns-C", &[mode]);
    // Rows anchored at key-B's outage, judged on the turns that began in it (the router's only).
    let extra = if mode == "router" { WINDOWED } else { "" };
    let path = scenario(tmp.path(), gw, up, extra);
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&path)
        .arg("--report-dir")
        .arg(tmp.path().join("reports"))
        .output()
        .unwrap();
    let r = report_json(&out);
    super::user_config::assert_schema(&r);
    let md_path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .map(str::to_string)
        .unwrap();
    let md = std::fs::read_to_string(md_path).unwrap();
    let mut r = r;
    r["__md"] = Value::String(md);
    (r, out)
}

/// A row's requests as `profile model` strings.
fn path_of(row: &Value) -> Vec<String> {
    row["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            format!(
                "{} {}",
                q["profile"].as_str().unwrap_or("?"),
                q["model"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

#[test]
fn a_routers_turns_are_read_from_the_upstream_each_by_its_last_user_message() {
    let (r, out) = run("router");
    let ctx = format!("{}\n{}", rows(&r), show(&out));
    assert_eq!(out.status.code(), Some(0), "{ctx}");
    let turns = &r["policies"][0]["turns"];
    assert!(turns["unreadable"].is_null(), "{turns}");
    // The two title calls (one per session) carried no turn in their user message.
    assert_eq!(turns["unmarked_requests"], 2, "{turns}");
    assert_eq!(turns["marked_requests"], 10, "{turns}");
    let rows_ = turns["rows"].as_array().unwrap();
    let numbers: Vec<u64> = rows_.iter().map(|t| t["turn"].as_u64().unwrap()).collect();
    // Turn 1 of s1 sent turn 0's message (and marker) in its history: still turn 1.
    assert_eq!(numbers, [0, 1, 2], "{turns}");
    let ab = ["mockai:a m1", "mockai:a m1", "mockai:b m1"];
    assert_eq!(path_of(&rows_[0]), ab);
    assert_eq!(path_of(&rows_[1]), ab);
    assert_eq!(
        path_of(&rows_[2]),
        ["mockai:a m1", "mockai:a m1", "mockai:b m1", "backup:c m2"]
    );
    for (row, answered) in rows_.iter().zip([2, 2, 3]) {
        assert_eq!(row["answered_by"], answered, "{row}");
        assert_eq!(row["same_profile_retries"], 1, "{row}");
        assert!(row["answer_ms"].as_u64().is_some(), "{row}");
    }
    assert_eq!(rows_[2]["requests"][2]["fault"], "status");
    // The rows anchored at the named outage judged the one turn inside it, the two before it
    // outside the window (their witness says so).
    let exps = r["policies"][0]["expectations"].as_array().unwrap();
    let per_turn = exps
        .iter()
        .find(|e| e["kind"] == "per_turn")
        .unwrap_or_else(|| panic!("{ctx}"));
    assert_eq!(per_turn["status"], "pass", "{per_turn}");
    assert_eq!(per_turn["witness"]["turns_judged"], 1, "{per_turn}");
    assert_eq!(per_turn["witness"]["turns_outside_window"], 2, "{per_turn}");
    let windowed_turn = exps
        .iter()
        .filter(|e| e["kind"] == "turn")
        .nth(1)
        .unwrap_or_else(|| panic!("{ctx}"));
    assert_eq!(windowed_turn["status"], "pass", "{windowed_turn}");
    // Per turn: three rotations key-A → key-B; the move to m2 on key-C is one fallback, not
    // also a rotation.
    let m = &r["policies"][0]["figures"]["providers"]["mockai"];
    assert_eq!(
        (m["rotations"].as_u64(), m["fallbacks"].as_u64()),
        (Some(3), Some(1)),
        "{m}"
    );
    assert_eq!(m["cooldowns"], 0, "{m}");
    let md = r["__md"].as_str().unwrap();
    assert!(md.contains("## Turns"), "{md}");
    assert!(
        md.contains(
            "mockai:a m1 ✗status → mockai:a m1 ✗status → mockai:b m1 ✗status → backup:c m2 ✓"
        ),
        "{md}"
    );
}

#[test]
fn a_router_that_strips_the_marker_is_said_so_and_its_turn_figures_are_unknown() {
    let (r, out) = run("strip");
    let ctx = format!("{}\n{}", rows(&r), show(&out));
    // The gateway still answered every turn: its own rows judge as before.
    assert_eq!(out.status.code(), Some(0), "{ctx}");
    let turns = &r["policies"][0]["turns"];
    assert!(
        turns["unreadable"]
            .as_str()
            .is_some_and(|s| s.contains("turn marker")),
        "{turns}"
    );
    assert_eq!(turns["marked_requests"], 0, "{turns}");
    assert_eq!(turns["rows"].as_array().map(Vec::len), Some(0), "{turns}");
    let m = &r["policies"][0]["figures"]["providers"]["mockai"];
    for f in ["rotations", "fallbacks", "cooldowns"] {
        assert!(m[f].is_null(), "{f} is unknown, not 0: {m}");
    }
    let md = r["__md"].as_str().unwrap();
    assert!(md.contains("**Turns unknown**"), "{md}");
    assert!(md.contains("| rotations{mockai} | unknown |"), "{md}");
}
