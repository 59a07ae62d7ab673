//! The mock upstream dying mid-run: a real `rehearse run` process prints where its
//! upstream listens; `POST /_rehearse/shutdown` there stops the upstream as a crash would (the
//! listener closes, connections drop). The run ends at once — not at `duration` — with exit 3, a
//! report whose verdict is `error` and says why and when, and nothing left listening.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tokio::time::Instant;

use crate::support::run::{repo_root, show};

/// The run's scenario: 60 s of smoke traffic, so an early end can only be the upstream's doing.
fn scenario(dir: &std::path::Path) -> std::path::PathBuf {
    let smoke = repo_root().join("fixtures/scenarios/smoke.toml");
    let text = std::fs::read_to_string(&smoke).expect("smoke fixture");
    let traffic = repo_root().join("fixtures/traffic/smoke.jsonl");
    let text = text
        .replace("duration = \"21s\"", "duration = \"60s\"")
        .replace("../traffic/smoke.jsonl", &traffic.display().to_string());
    let path = dir.join("upstream-dies.toml");
    std::fs::write(&path, text).expect("write scenario");
    path
}

/// `http://HOST:PORT` after `label` in a line, as an address.
fn addr_after(line: &str, label: &str) -> Option<SocketAddr> {
    let rest = line
        .split(label)
        .nth(1)?
        .trim_start()
        .strip_prefix("http://")?;
    rest.split(['/', ',', ' ']).next()?.parse().ok()
}

fn post(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn refused(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_err()
}

#[test]
fn upstream_shutdown_mid_run_is_exit_3_with_a_report_that_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let reports = dir.path().join("reports");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(scenario(dir.path()))
        .arg("--report-dir")
        .arg(&reports)
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rehearse run");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr");
    let reader = thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let mut upstream = None;
    let mut metrics = None;
    let began = Instant::now();
    while upstream.is_none() && began.elapsed() < Duration::from_secs(30) {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            upstream = addr_after(&line, "mock upstream");
            metrics = addr_after(&line, "engine metrics");
        }
    }
    let (Some(upstream), Some(metrics)) = (upstream, metrics) else {
        let _ = child.kill();
        let out = child.wait_with_output().expect("wait");
        panic!(
            "no `mock upstream http://...` line on stderr\n{}",
            show(&out)
        );
    };
    // Let traffic flow for a moment, then stop the upstream as a crash would.
    thread::sleep(Duration::from_millis(1500));
    let answer = post(upstream, "/_rehearse/shutdown");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let killed_at = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if killed_at.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the run kept going 20 s after its upstream stopped");
        }
        thread::sleep(Duration::from_millis(50));
    };
    let ended_after = killed_at.elapsed();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("stdout");
    let stderr = reader.join().expect("stderr reader");
    assert_eq!(
        status.code(),
        Some(3),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        ended_after < Duration::from_secs(10),
        "the run ended {ended_after:?} after its upstream stopped, not at once"
    );
    // Nothing left listening: the upstream and the engine's /metrics are gone with the process.
    assert!(
        refused(upstream),
        "the mock upstream still accepts connections"
    );
    assert!(
        refused(metrics),
        "the engine's /metrics still accepts connections"
    );
    // The report says what happened.
    let md_path = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no `report:` line:\n{stdout}"));
    let run_dir = std::path::Path::new(md_path).parent().expect("run dir");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("report.json")).expect("report.json"),
    )
    .expect("report.json parses");
    assert_eq!(json["verdict"], "error", "{json:#}");
    let reason = json["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the mock upstream stopped serving") && reason.contains("s of the run"),
        "{reason}"
    );
    let md = std::fs::read_to_string(md_path).expect("report.md");
    assert!(md.contains("the mock upstream stopped serving"), "{md}");
    assert!(stdout.contains("error"), "{stdout}");
}

#[test]
fn a_standalone_upstream_stops_on_post_shutdown_and_exits_0() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["upstream", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rehearse upstream");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("first line");
    let addr = addr_after(first.trim(), "listening on").expect(&first);
    let answer = post(addr, "/_rehearse/shutdown");
    assert!(answer.contains("\"stopping\":true"), "{answer}");
    let began = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if began.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("rehearse upstream still running 10 s after POST /_rehearse/shutdown");
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    assert!(refused(addr), "still listening");
}
