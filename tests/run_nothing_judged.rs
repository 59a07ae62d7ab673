//! Nothing judged on nothing, end to end against a stand-in gateway (`[target] kind = "http"`,
//! a loopback server this test runs): a gateway that answers every turn itself and never calls
//! its provider is no pass although its expectations would hold (exit 3, the reason on the
//! report's first lines); a run SIGTERM'd after `duration` while its turn is still out is
//! `incomplete` (exit 3), not finished; `[[expect.turn]]` passes and fails on what came back; a
//! scenario with no expectations is refused (exit 2, naming the file).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use tokio::time::Instant;

use crate::support::loopback::read_request;
use crate::support::run::{repo_root, report_json, reported_path, show};

/// What the stand-in gateway does with a run's turn. Every mode answers the harness's warm-up
/// turns (session `rehearse-warmup-N`) by calling the mock upstream at its port first, so it
/// reaches its steady state and is rehearsed; only then does it do what the mode says.
#[derive(Clone, Copy)]
enum Mode {
    /// Answers at once itself: never calls its provider during the run.
    AnswerItself(u16),
    /// Calls the mock upstream at this port with key-B's token, then answers.
    Relay(u16),
    /// Never answers (the turn stays out until the client gives up).
    Hold(u16),
}

impl Mode {
    fn upstream(self) -> u16 {
        match self {
            Mode::AnswerItself(p) | Mode::Relay(p) | Mode::Hold(p) => p,
        }
    }
}

/// A loopback gateway stand-in, stopped on drop.
struct StandIn {
    url: String,
    stop: Arc<AtomicBool>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn call_upstream(port: u16) {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    let body = r#"{"model":"m1","stream":false,"messages":[{"role":"user","content":"hi"}]}"#;
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\
         authorization: Bearer sk-rehearse-key-B\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(req.as_bytes());
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
}

fn serve(mut s: TcpStream, mode: Mode, stop: Arc<AtomicBool>) {
    let req = read_request(&mut s);
    let head = String::from_utf8_lossy(&req);
    let body = if head.starts_with("GET /health") {
        r#"{"ok":true}"#.to_string()
    } else {
        match mode {
            _ if head.contains("rehearse-warmup") => call_upstream(mode.upstream()),
            Mode::AnswerItself(_) => {}
            Mode::Relay(port) => call_upstream(port),
            Mode::Hold(_) => {
                while !stop.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(50));
                }
                return;
            }
        }
        r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"answered by the gateway"},"finish_reason":"stop"}]}"#.to_string()
    };
    let resp = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(resp.as_bytes());
}

fn stand_in(mode: Mode) -> StandIn {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    thread::spawn(move || {
        while !flag.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let flag = flag.clone();
                    thread::spawn(move || serve(s, mode, flag));
                }
                Err(_) => thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    StandIn { url, stop }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An `http`-target scenario at `url`, its upstream on `port`, `duration`, with `expect`.
fn scenario(dir: &Path, tag: &str, url: &str, port: u16, duration: &str, expect: &str) -> PathBuf {
    let traffic = repo_root().join("fixtures/traffic/openclaw-one-turn.jsonl");
    let text = format!(
        "name = \"nothing-judged-{tag}\"\nduration = \"{duration}\"\ntraffic = {traffic:?}\n\
         seed = 3\n\n[target]\nkind = \"http\"\nurl = \"{url}\"\nmodel = \"m1\"\n\
         turn_timeout = \"60s\"\n\n[upstream]\nlisten = \"127.0.0.1:{port}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-rehearse-key-A\"\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:b\"\ntoken = \"sk-rehearse-key-B\"\n\n\
         [[fault]]\nroute = \"llm\"\nprofile = \"sk-rehearse-key-A\"\nkind = \"status\"\n\
         status = 503\noptional = true\n\n{expect}",
        traffic = traffic.display().to_string()
    );
    let path = dir.join(format!("{tag}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The expectations of the measured case: they hold on a gateway that sends nothing.
const HOLD_ON_NOTHING: &str = "[[expect.first_request]]\nprofile = \"mockai:b\"\nnever = true\n\
     [[expect.attempts]]\nprofile = \"mockai:a\"\nat_most = 20\n";

fn spawn(scenario: &Path, reports: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(reports)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rehearse")
}

fn run(scenario: &Path, reports: &Path) -> Output {
    spawn(scenario, reports).wait_with_output().expect("wait")
}

#[test]
fn a_gateway_that_never_calls_its_provider_is_no_pass_though_its_expectations_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let gw = stand_in(Mode::AnswerItself(port));
    let path = scenario(tmp.path(), "silent", &gw.url, port, "3s", HOLD_ON_NOTHING);
    let out = run(&path, &tmp.path().join("reports"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "incomplete", "{}", show(&out));
    assert_eq!(
        r["reason"], "target `http`: the system under test sent no request to the upstream",
        "{r}"
    );
    let p = &r["policies"][0];
    assert_eq!(p["status"], "incomplete");
    assert_eq!(
        p["unjudged"],
        "the system under test sent no request to the upstream"
    );
    // Its rows held on nothing: they are there, and none failed.
    let rows = p["expectations"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{p}");
    assert!(rows.iter().all(|e| e["status"] == "pass"), "{p}");
    assert_eq!(r["target"]["turns"][0]["outcome"], "answered", "{r}");
    // The report's first lines say why.
    let md = std::fs::read_to_string(reported_path(&out)).unwrap();
    let head: String = md.lines().take(4).collect::<Vec<_>>().join("\n");
    assert!(head.contains("sent no request to the upstream"), "{md}");
}

#[test]
fn a_gateway_that_calls_its_provider_passes_and_turn_outcomes_are_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let gw = stand_in(Mode::Relay(port));
    let expect = format!(
        "{HOLD_ON_NOTHING}[[expect.attempts]]\nprofile = \"mockai:b\"\nequals = 1\n\
         [[expect.turn]]\noutcome = \"answered\"\nequals = 1\nlatency_at_most = \"30s\"\n"
    );
    let first_never = expect.replace("never = true\n", "at_most = \"60s\"\n");
    let path = scenario(tmp.path(), "relay", &gw.url, port, "2s", &first_never);
    let out = run(&path, &tmp.path().join("reports"));
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(0), "{r}\n{}", show(&out));
    assert_eq!(r["verdict"], "pass");
    let rows = r["policies"][0]["expectations"].as_array().unwrap();
    let turn: Vec<_> = rows.iter().filter(|e| e["kind"] == "turn").collect();
    assert_eq!(turn.len(), 2, "a count row and a latency row: {rows:?}");
    assert!(turn.iter().all(|e| e["status"] == "pass"), "{turn:?}");

    // The same run expecting a turn that timed out: fail, exit 1, saying what came back.
    let port = free_port();
    let gw = stand_in(Mode::Relay(port));
    let wrong = first_never.replace(
        "outcome = \"answered\"\nequals = 1\n",
        "outcome = \"timed_out\"\nat_least = 1\n",
    );
    let path = scenario(tmp.path(), "relay-wrong", &gw.url, port, "2s", &wrong);
    let out = run(&path, &tmp.path().join("reports-wrong"));
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(1), "{r}\n{}", show(&out));
    assert_eq!(r["verdict"], "fail");
    let failed: Vec<_> = r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == "fail")
        .collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(
        failed[0]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("turns timed_out >= 1: observed 0 of 1 turns"),
        "{failed:?}"
    );
    assert_eq!(
        failed[1]["observed"], "no such turn to time",
        "a latency bound with no turn to time is no pass"
    );
}

#[test]
fn a_run_stopped_after_duration_with_its_turn_still_out_is_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let gw = stand_in(Mode::Hold(port));
    let path = scenario(tmp.path(), "held", &gw.url, port, "2s", HOLD_ON_NOTHING);
    let mut child = spawn(&path, &tmp.path().join("reports"));
    // The turn goes out at 1 s of a 2 s scenario and never returns; the stop comes at ~6 s,
    // well past `duration`.
    thread::sleep(Duration::from_secs(6));
    // SAFETY: plain kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0, "kill(SIGTERM)");
    let sent = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if sent.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("still running 20 s after SIGTERM");
        }
        thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "incomplete", "{r}");
    assert_eq!(r["stopped"]["reason"], "SIGTERM", "{r}");
    assert!(
        r["stopped"]["at_ms"].as_u64().unwrap_or(0) > 2_000,
        "stopped after duration: {r}"
    );
    drop(gw);
}

#[test]
fn a_scenario_without_expectations_is_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario(
        tmp.path(),
        "empty",
        "http://127.0.0.1:9",
        free_port(),
        "2s",
        "",
    );
    for cmd in ["validate", "run"] {
        let reports = tmp.path().join("reports");
        let args = match cmd {
            "run" => vec![
                "run",
                "--scenario",
                path.to_str().unwrap(),
                "--report-dir",
                reports.to_str().unwrap(),
            ],
            _ => vec!["validate", path.to_str().unwrap()],
        };
        let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(path.to_str().unwrap()), "{cmd}: {err}");
        assert!(err.contains("has no expectations"), "{cmd}: {err}");
    }
}

#[test]
fn a_misspelt_turn_outcome_is_located_with_a_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario(
        tmp.path(),
        "misspelt",
        "http://127.0.0.1:9",
        free_port(),
        "2s",
        "[[expect.turn]]\noutcome = \"answerd\"\nat_least = 1\n",
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"answerd\""))
        .unwrap()
        + 1;
    let col = text.lines().nth(line - 1).unwrap().find('"').unwrap() + 1;
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["validate", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let at = format!("{}:{line}:{col}: expect.turn[0].outcome", path.display());
    assert!(err.contains(&at), "wants `{at}`:\n{err}");
    assert!(err.contains("did you mean `answered`?"), "{err}");

    // The embedded engine's turns are its traffic's model calls (smoke's has 20): the row is
    // accepted now, judged on the engine's turns as its client saw them (tests/run_turns_engine.rs).
    let smoke = crate::support::run::mutated_copy("smoke", tmp.path(), "turn", |s| {
        format!("{s}\n[[expect.turn]]\nat_least = 1\n")
    });
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["validate", smoke.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}
