//! A real LiteLLM proxy that fails mid-run is a harness failure (exit 3) whose report quotes its
//! last log lines, with nothing of it left running: one killed (SIGKILL: its process is gone),
//! and one stopped (SIGSTOP: its process lives, nothing answers — its liveness path is watched).
//! The proxy is found by the port the run names and signalled by pid; afterwards that pid and
//! every process naming its port are gone.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use tokio::time::Instant;

use super::support::{alive, command, one_at_a_time, processes_naming, scenario};

/// Runs the 503 fixture, sends `signal` to its proxy once the turns began, and returns the
/// run's exit code, stderr, the proxy's pid and how long the run took after the signal.
fn run_and_signal(signal: libc::c_int) -> (Option<i32>, String, u32, Duration) {
    let _one = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario(tmp.path(), "litellm-503-key-a", "", "");
    let mut child = command(&path, tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let port = loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "the run ended before its turns:\n{seen}"
        );
        seen.push_str(&line);
        if let Some(rest) = line.split(" turns to http://127.0.0.1:").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let needle = format!("--port\0{port}\0");
    let pids = processes_naming(&needle);
    assert_eq!(
        pids.len(),
        1,
        "one LiteLLM on port {port}: {pids:?}\n{seen}"
    );
    let pid = pids[0];
    std::thread::sleep(Duration::from_secs(3));
    let t = Instant::now();
    // SAFETY: a plain kill(2) of the proxy this test's run started, found by its port.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0);
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    seen.push_str(&rest);
    let status = child.wait().unwrap();
    let took = t.elapsed();
    let _ = out.join();
    assert!(!alive(pid), "pid {pid} still runs after the run:\n{seen}");
    assert_eq!(
        processes_naming(&needle),
        Vec::<u32>::new(),
        "left running:\n{seen}"
    );
    (status.code(), seen, pid, took)
}

#[test]
fn a_litellm_killed_mid_run_is_exit_3_with_its_last_lines_and_nothing_left() {
    let (code, err, _, _) = run_and_signal(libc::SIGKILL);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("the LiteLLM gateway exited mid-run"), "{err}");
    let lines = err
        .split("last log lines:")
        .nth(1)
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        lines.contains("Uvicorn") || lines.contains("LiteLLM") || lines.contains("INFO"),
        "{err}"
    );
}

#[test]
fn a_litellm_that_lives_but_stops_answering_is_exit_3_with_its_last_lines_and_nothing_left() {
    let (code, err, _, took) = run_and_signal(libc::SIGSTOP);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("the LiteLLM gateway stopped answering its liveness path"),
        "{err}"
    );
    assert!(err.contains("last log lines:"), "{err}");
    // Its silence is noticed after 10 s without an answer (3 probes), not at the run's end.
    assert!(took < Duration::from_secs(40), "{took:?}\n{err}");
}
