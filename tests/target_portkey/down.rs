//! A Portkey gateway that goes down mid-run is a harness failure (verdict `error`, exit 3) with
//! its last console lines in the report, and nothing of it is left running: one killed
//! (SIGKILL), and one whose process lives on but stops answering (SIGSTOP — as a gateway kept
//! alive by its `uncaughtException` handler while it no longer serves): the harness watches
//! its answers, not its pid.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

use super::{scenario, traffic};

/// The pid of the Portkey process of the run under `dir`, once there is one.
fn portkey_pid(dir: &Path, within: Duration) -> u32 {
    let t = Instant::now();
    loop {
        if let Some(p) = super::none_left_under(dir).first() {
            return *p;
        }
        assert!(
            t.elapsed() < within,
            "no Portkey process appeared under {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs a 30 s scenario, sends `signal` to its gateway once the run's clock started, and
/// returns the exit code and report.json.
fn down_with(signal: i32) -> (Option<i32>, serde_json::Value, String) {
    super::install();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("t.jsonl"), traffic(25, 1000)).unwrap();
    let path = scenario(
        dir,
        "pk-down",
        "30s",
        "",
        "[[expect.turn]]\noutcome = \"answered\"\nat_least = 20\n",
    );
    let stderr = dir.join("stderr.txt");
    let child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&path)
        .arg("--report-dir")
        .arg(dir.join("reports"))
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let pid = portkey_pid(dir, Duration::from_secs(60));
    // The run's clock has started once its turns are announced.
    let t = Instant::now();
    while !std::fs::read_to_string(&stderr)
        .unwrap_or_default()
        .contains("turns to")
    {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the run never started its turns"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    let sent = Instant::now();
    // SAFETY: kill(2) takes plain integers; the pid is the Portkey process found under our own
    // temporary directory.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    let ctx = format!("{stdout}\n{err}");
    let md = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no report line: {ctx}"));
    let r: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(md).with_file_name("report.json")).unwrap(),
    )
    .unwrap();
    assert!(
        took < Duration::from_secs(20),
        "the run ended {took:?} after the gateway went down, not at its 30 s: {ctx}"
    );
    assert!(
        super::none_left_under(dir).is_empty(),
        "a Portkey process was left running: {ctx}"
    );
    assert_eq!(r["target"]["left_running"], serde_json::json!([]), "{ctx}");
    let lines = r["target"]["last_lines"].to_string();
    assert!(
        lines.contains("Ready for connections"),
        "its last console lines: {lines}\n{ctx}"
    );
    (out.status.code(), r, ctx)
}

#[test]
fn a_portkey_killed_mid_run_is_exit_3_with_its_last_lines_and_nothing_left() {
    let (code, r, ctx) = down_with(libc::SIGKILL);
    assert_eq!(code, Some(3), "{ctx}");
    assert_eq!(r["verdict"], "error", "{ctx}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the Portkey gateway exited mid-run"),
        "{reason}"
    );
}

#[test]
fn a_portkey_that_stops_answering_while_its_process_lives_is_exit_3_and_is_stopped() {
    let (code, r, ctx) = down_with(libc::SIGSTOP);
    assert_eq!(code, Some(3), "{ctx}");
    assert_eq!(r["verdict"], "error", "{ctx}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("stopped answering mid-run"), "{reason}");
    assert!(reason.contains("still runs"), "{reason}");
}
