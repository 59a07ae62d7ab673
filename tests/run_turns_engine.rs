//! The embedded engine's turns as its client saw them (`policies[].client_turns`), judged by
//! `[[expect.turn]]` as a gateway's are: a real run on loopback with faults that make the engine
//! answer, give up with a clean error (a 400 it cannot get round: one profile, no fallback) and
//! hand back a partial result of a cut stream (`truncated`); each turn's outcome, status,
//! latency, model, profile and turn in report.json; rows over those outcomes that pass and
//! that fail, each with its witness; the same rows in report.md's turn table. Then the ways to
//! make the rows falsely green: a run stopped early leaves no turn `answered` that was not, and
//! its rows are `not_reached`; traffic with no model call is refused before the run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

use crate::support::run::{reported_path, run_in, show};

/// Six model calls 400 ms apart from 200 ms; line 3 (at 1.4 s) and later are streamed.
fn traffic(dir: &Path) {
    let lines: String = (0..6)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":{},\"max_tokens\":8,\"session\":\"s{i}\"}}\n",
                200 + i * 400,
                i >= 3
            )
        })
        .collect();
    std::fs::write(dir.join("t.jsonl"), lines).unwrap();
}

/// One key, no fallback: turns 0–1 answered; turn 2 (at 1.0 s) refused with a 400 the engine
/// cannot get round; turns 3–5 streamed and every stream cut after half its tokens from 1.3 s,
/// so the engine's ladder hands back the tokens it got (a partial result).
const SCENARIO: &str = r#"name = "engine-turns"
duration = "4s"
traffic = "t.jsonl"
seed = 11
policies = ["retry-gate"]

[[profile]]
provider = "mockai"
id = "mockai:a"

[[fault]]
name = "too-long"
route = "llm"
kind = "status"
error = "context_length_exceeded"
from = "800ms"
until = "1250ms"

[[fault]]
name = "cut"
route = "llm"
kind = "reset_mid_stream"
after_fraction = 0.5
from = "1300ms"
"#;

fn write_scenario(dir: &Path, rows: &str) -> std::path::PathBuf {
    traffic(dir);
    let path = dir.join("engine-turns.toml");
    std::fs::write(&path, format!("{SCENARIO}\n{rows}")).unwrap();
    path
}

fn report_of(out: &std::process::Output) -> serde_json::Value {
    let path = reported_path(out).parent().unwrap().join("report.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn rows_of(report: &serde_json::Value) -> Vec<serde_json::Value> {
    report["policies"][0]["expectations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn the_engines_turns_are_answered_a_clean_error_or_truncated_and_expect_turn_judges_them() {
    let dir = tempfile::tempdir().unwrap();
    let rows = r#"
[[expect.turn]]
outcome = "answered"
equals = 2

[[expect.turn]]
outcome = "http_error"
equals = 1
latency_at_most = "2s"

# Fails: the engine hands back the cut streams as partial results.
[[expect.turn]]
outcome = "truncated"
equals = 0

[[expect.turn]]
outcome = "timed_out"
equals = 0

[[expect.turn]]
outcome = "answered"
reported_model = "served"
"#;
    let path = write_scenario(dir.path(), rows);
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--report-dir",
            dir.path().join("r").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let report = report_of(&out);
    let turns = report["policies"][0]["client_turns"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("no client_turns: {}", show(&out)));
    assert_eq!(turns.len(), 6, "{turns:#?}");
    let outcome = |i: usize| turns[i]["outcome"].as_str().unwrap_or("").to_string();
    for t in &turns[..2] {
        assert_eq!(t["outcome"], "answered", "{t:#}");
        assert_eq!(t["status"], 200);
        assert_eq!(t["model"], "mockai/m1");
        assert_eq!(t["profile"], "mockai:a");
        assert_eq!(t["answer"]["content_tokens"], 8, "{t:#}");
        assert_eq!(t["answer"]["recorded"], true, "{t:#}");
    }
    // The 400: the engine gave up at once and said so, a clean error with its status.
    assert_eq!(outcome(2), "http_error", "{:#}", turns[2]);
    assert_eq!(turns[2]["status"], 400);
    assert!(turns[2]["error"].as_str().is_some_and(|e| !e.is_empty()));
    assert!(turns[2]["elapsed_ms"].as_u64().is_some_and(|ms| ms < 2_000));
    // The cut streams: what the engine handed back is shorter than what was served.
    for t in &turns[3..] {
        assert_eq!(t["outcome"], "truncated", "{t:#}");
        let got = t["answer"]["content_tokens"].as_u64().unwrap_or(99);
        assert!((1..8).contains(&got), "{t:#}");
        assert_eq!(t["answer"]["served"]["tokens"], 8, "{t:#}");
    }
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["turn"], i as u64, "the turn its marker carried: {t}");
        assert_eq!(t["line"], i as u64);
        assert_eq!(t["at_ms"], 200 + 400 * i as u64);
    }
    let rows = rows_of(&report);
    let turn_rows: Vec<&serde_json::Value> = rows.iter().filter(|r| r["kind"] == "turn").collect();
    let status = |dep: &str, expected: &str| {
        turn_rows
            .iter()
            .find(|r| {
                r["dep"] == dep && r["expected"].as_str().is_some_and(|e| e.contains(expected))
            })
            .map(|r| {
                (
                    r["status"].as_str().unwrap_or("").to_string(),
                    r["witness"].clone(),
                )
            })
            .unwrap_or_else(|| panic!("no {dep} {expected} row: {turn_rows:#?}"))
    };
    let (s, w) = status("turns answered", "= 2");
    assert_eq!(s, "pass", "{w}");
    assert_eq!(
        (w["turns"].as_u64(), w["matching"].as_u64()),
        (Some(6), Some(2))
    );
    assert_eq!(status("turns http_error", "= 1").0, "pass");
    assert_eq!(status("turns http_error", "latency").0, "pass");
    let (s, w) = status("turns truncated", "= 0");
    assert_eq!(s, "fail", "the partial results are truncated answers: {w}");
    assert_eq!(w["matching"], 3, "{w}");
    assert_eq!(status("turns timed_out", "= 0").0, "pass");
    for r in &turn_rows {
        assert!(
            r["witness"].as_object().is_some_and(|o| !o.is_empty()),
            "a turn row without its witness: {r}"
        );
    }
    // The answers named the model the upstream served.
    let model_row = rows
        .iter()
        .find(|r| r["expected"].as_str().is_some_and(|e| e.contains("model")))
        .unwrap_or_else(|| panic!("no reported_model row: {rows:#?}"));
    assert_eq!(model_row["status"], "pass", "{model_row}");
    // report.json holds to docs/report.schema.json (client_turns in the shape of target.turns).
    crate::report_contracts::assert_report_contracts(reported_path(&out).parent().unwrap());
    // report.md shows the same turns in the gateway's turn table.
    let md = std::fs::read_to_string(reported_path(&out)).unwrap();
    assert!(md.contains("## Turns"), "{md}");
    assert!(md.contains("| http_error: error: "), "{md}");
    assert!(md.contains("mockai/m1 / mockai:a"), "{md}");
    assert!(md.contains("| truncated: error: a partial result"), "{md}");
}

/// Rows that pass on the engine's turns are judged on them, not on nothing: the suite's own
/// mutants (each bound moved just past what was observed) fail every one.
#[test]
fn the_rows_that_pass_on_the_engines_turns_fail_every_mutant() {
    let dir = tempfile::tempdir().unwrap();
    // Without the cut: five answers and the one clean 400.
    let uncut = SCENARIO
        .split("[[fault]]\nname = \"cut\"")
        .next()
        .unwrap()
        .to_string();
    traffic(dir.path());
    let rows = r#"
[[expect.turn]]
outcome = "answered"
equals = 5

[[expect.turn]]
outcome = "http_error"
equals = 1
latency_at_most = "2s"

[[expect.turn]]
outcome = "truncated"
equals = 0

[[expect.turn]]
outcome = "timed_out"
equals = 0
"#;
    let path = dir.path().join("uncut.toml");
    std::fs::write(&path, format!("{uncut}\n{rows}")).unwrap();
    let out = crate::support::run::run_in_with_mutants(
        dir.path(),
        &[
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--report-dir",
            dir.path().join("r").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    let (entries, judged) = crate::support::run::assert_mutants(&run_dir);
    let mutants = std::fs::read_to_string(run_dir.join("mutants.json")).unwrap_or_default();
    assert_eq!(entries, 4, "every turn entry perturbed: {mutants}");
    assert!(judged >= entries, "{judged} perturbations: {mutants}");
}

/// A run stopped early (SIGINT while the engine's calls hang on a silent upstream): no turn is
/// `answered` that was not, the calls in flight are `unfinished`, and the rows that could only
/// pass later are `not_reached` — never a pass.
#[test]
fn a_run_stopped_with_turns_in_flight_answers_none_of_them() {
    let dir = tempfile::tempdir().unwrap();
    traffic(dir.path());
    let scenario = r#"name = "engine-turns-stopped"
duration = "30s"
traffic = "t.jsonl"
seed = 11
policies = ["retry-gate"]

[[profile]]
provider = "mockai"
id = "mockai:a"

# Every request from 900 ms: headers never come.
[[fault]]
route = "llm"
kind = "stall"
from = "900ms"

[[expect.turn]]
outcome = "answered"
at_least = 6

[[expect.turn]]
outcome = "timed_out"
equals = 0
"#;
    let path = dir.path().join("stopped.toml");
    std::fs::write(&path, scenario).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args([
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--no-progress",
            "--report-dir",
            dir.path().join("r").to_str().unwrap(),
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Every line is sent by 2.2 s; the stalled ones are still out at 4 s.
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(4));
    let pid = child.id().to_string();
    let kill = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(25),
        "the stop cut the run short"
    );
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let report = report_of(&out);
    assert_eq!(report["verdict"], "incomplete", "{}", show(&out));
    let turns = report["policies"][0]["client_turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(turns.len(), 6, "{turns:#?}");
    let answered = turns.iter().filter(|t| t["outcome"] == "answered").count();
    let unfinished = turns
        .iter()
        .filter(|t| t["outcome"] == "unfinished")
        .count();
    assert!(
        answered <= 2,
        "only the turns before the stall were answered: {turns:#?}"
    );
    assert!(
        unfinished >= 4,
        "the stalled calls were in flight: {turns:#?}"
    );
    for t in turns.iter().filter(|t| t["outcome"] == "unfinished") {
        assert!(t["status"].is_null() && t["answer"].is_null(), "{t}");
    }
    for r in rows_of(&report).iter().filter(|r| r["kind"] == "turn") {
        assert_eq!(r["status"], "not_reached", "{r}");
    }
}

fn validate(path: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["validate", path.to_str().unwrap()])
        .output()
        .unwrap()
}

/// `[[expect.turn]]` over traffic with no model call before `duration` would judge nothing: the
/// check refuses it before the run, at the row; a fleet's hosts report no turns, and the
/// engine's answer has no usage block — each refused at its key.
#[test]
fn turn_rows_the_engine_cannot_judge_are_refused_at_their_row() {
    let dir = tempfile::tempdir().unwrap();
    traffic(dir.path());
    let base = "name = \"x\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n[[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\n";
    // Tool calls before `duration`, the one model call after it.
    std::fs::write(
        dir.path().join("tools.jsonl"),
        "{\"at_ms\":0,\"kind\":\"tool\",\"tool\":\"crm\",\"body\":{},\"idempotent\":true}\n\
         {\"at_ms\":300,\"kind\":\"tool\",\"tool\":\"crm\",\"body\":{},\"idempotent\":true}\n\
         {\"at_ms\":900,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":4}\n",
    )
    .unwrap();
    let cases = [
        // No model call falls before `duration` (tool calls do).
        (
            format!(
                "duration = \"600ms\"\nscrape_interval = \"50ms\"\n{}\n[[expect.turn]]\noutcome = \"timed_out\"\nequals = 0\n",
                base.replace("t.jsonl", "tools.jsonl")
            ),
            "expect.turn[0]",
            "none falls before `duration`",
        ),
        (
            format!("duration = \"4s\"\n{base}\n[[expect.turn]]\nusage = \"served\"\n"),
            "expect.turn[0].usage",
            "no usage block",
        ),
        (
            format!(
                "duration = \"4s\"\n{base}\n[fleet]\nhosts = 2\n\n[[expect.turn]]\nequals = 6\n"
            ),
            "expect.turn[0]",
            "a fleet's hosts do not report",
        ),
        (
            format!(
                "duration = \"4s\"\n{base}\n[target]\nturn_timeout = \"5s\"\n\n[[expect.turn]]\nlatency_at_most = \"5s\"\n"
            ),
            "expect.turn[0].latency_at_most",
            "could never fail",
        ),
    ];
    for (i, (text, at, says)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("refused-{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let out = validate(&path);
        assert_eq!(out.status.code(), Some(2), "case {i}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(path.to_str().unwrap()), "case {i}: {err}");
        assert!(
            err.contains(at) && err.contains(says),
            "case {i}: wants {at}: {says}\n{err}"
        );
    }
    // With model calls before `duration`, the same row is accepted.
    let path = dir.path().join("accepted.toml");
    std::fs::write(
        &path,
        format!(
            "duration = \"4s\"\n{base}\n[[expect.turn]]\noutcome = \"timed_out\"\nequals = 0\n"
        ),
    )
    .unwrap();
    let out = validate(&path);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}
