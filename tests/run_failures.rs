//! The harness says so when something is wrong: mutated expectations fail with a line naming
//! the mismatch (exit 1), a malformed scenario is exit 2 with file:line:col, SIGTERM ends a run
//! with an `incomplete` report (exit 3 within 5 s), a held lock is exit 3 naming the holder, a
//! suite exits with its worst scenario — and a correct scenario passes 10 times in a row.

use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use tokio::time::Instant;

use crate::support::run::{
    fixture, mutated_copy, repo_root, report_json, reported_path, run_in, run_scenario, show,
};

/// The speed the short smoke-based checks run at (20 s → 2.5 s).
const FAST: &str = "8";

fn run_fast(path: &Path, report_dir: &Path) -> std::process::Output {
    run_scenario(path, FAST, report_dir)
}

#[test]
fn mutated_expectations_fail_with_a_line_naming_the_mismatch() {
    let tmp = tempfile::tempdir().unwrap();
    // (tag, edit, text the report must contain)
    type Edit = fn(String) -> String;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "shifted",
            |s| {
                s.replace(
                    "at = \"5s\"\ntolerance = \"1s\"",
                    "at = \"8s\"\ntolerance = \"1s\"",
                )
            },
            // 8 s ± 1 s, said in scenario time whatever the speed (8 here).
            "crm_search closed→open at 8.000s ±1.000s, observed at",
        ),
        (
            "removed",
            |s| {
                let cut = "[[expect.transition]]\ndep = \"crm_search\"\nfrom = \"half_open\"";
                let i = s.find(cut).unwrap();
                let j = i + s[i..].find("\n\n").unwrap();
                format!("{}{}", &s[..i], &s[j..])
            },
            "crm_search half_open→closed unexpected",
        ),
        (
            "wrong-dep",
            |s| {
                s.replace(
                    "[[expect.no_transition]]\ndep = \"calculator\"",
                    "[[expect.no_transition]]\ndep = \"crm_search\"",
                )
            },
            "crm_search expected no transition, observed",
        ),
        (
            "off-by-one",
            |s| s.replace("at_least = 80", "at_least = 81"),
            "expected ≥ 81, observed 80",
        ),
    ];
    let handles: Vec<_> = cases
        .into_iter()
        .map(|(tag, edit, needle)| {
            let path = mutated_copy("smoke", tmp.path(), tag, edit);
            let dir = tmp.path().join(format!("reports-{tag}"));
            thread::spawn(move || (tag, needle, run_fast(&path, &dir)))
        })
        .collect();
    for h in handles {
        let (tag, needle, out) = h.join().unwrap();
        assert_eq!(out.status.code(), Some(1), "{tag}: {}", show(&out));
        let r = report_json(&out);
        assert_eq!(r["verdict"], "fail", "{tag}");
        let md = std::fs::read_to_string(reported_path(&out)).unwrap();
        assert!(
            md.contains(needle),
            "{tag}: report.md lacks `{needle}`:\n{md}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("FAIL"),
            "{tag}: no FAIL line on stdout: {stdout}"
        );
    }
}

#[test]
fn a_correct_scenario_passes_ten_times_in_a_row() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..10 {
        let out = run_fast(&fixture("smoke"), &tmp.path().join(format!("r{i}")));
        assert_eq!(out.status.code(), Some(0), "run {i}: {}", show(&out));
        assert_eq!(report_json(&out)["verdict"], "pass", "run {i}");
    }
}

#[test]
fn malformed_scenario_is_exit_2_with_file_line_col() {
    let tmp = tempfile::tempdir().unwrap();
    let path = mutated_copy("smoke", tmp.path(), "malformed", |s| {
        s.replacen("seed = 7\n", "seed = 7\nsurprise = true\n", 1)
    });
    let line = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("surprise"))
        .unwrap()
        + 1;
    for args in [vec!["validate"], vec!["run", "--scenario"]] {
        let mut all: Vec<&str> = args.clone();
        all.push(path.to_str().unwrap());
        let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(&all)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want = format!("{}:{line}:1:", path.display());
        assert!(stderr.contains(&want), "stderr lacks `{want}`: {stderr}");
        assert!(stderr.contains("surprise"), "{stderr}");
    }
}

#[test]
fn sigterm_mid_run_writes_an_incomplete_report_and_exits_3_within_5s() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--scenario"])
        .arg(fixture("crm-search-503-storm"))
        .args(["--no-progress", "--report-dir"])
        .arg(tmp.path())
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_secs(3));
    // SAFETY: plain kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "still running 5 s after SIGTERM"
        );
        thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(3), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "incomplete");
    assert!(
        r["reason"].as_str().unwrap().contains("SIGTERM"),
        "{}",
        r["reason"]
    );
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    for f in ["events.jsonl", "upstream.jsonl"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.ends_with('\n'));
        for l in text.lines() {
            serde_json::from_str::<serde_json::Value>(l).unwrap();
        }
    }
}

#[test]
fn a_held_run_lock_is_exit_3_naming_the_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let _held = rehearse::rundir::lock::RunLock::acquire(tmp.path()).unwrap();
    let out = run_fast(&fixture("smoke"), tmp.path());
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&std::process::id().to_string()), "{stderr}");
}

#[test]
fn a_suite_writes_an_index_and_exits_with_its_worst_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = mutated_copy("smoke", tmp.path(), "bad", |s| {
        s.replace("name = \"smoke\"", "name = \"smoke-bad\"")
            .replace("at_least = 80", "at_least = 81")
    });
    let reports = tmp.path().join("reports");
    let out = run_in(
        &repo_root(),
        &[
            "run",
            "--scenario",
            fixture("smoke").to_str().unwrap(),
            "--scenario",
            bad.to_str().unwrap(),
            "--speed",
            FAST,
            "--report-dir",
            reports.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let index_md = reported_path(&out);
    assert!(index_md.ends_with("index.md"), "{}", index_md.display());
    let suite = index_md.parent().unwrap();
    assert!(
        suite
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("-suite")
    );
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(suite.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["verdict"], "fail");
    let rows = index["scenarios"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["verdict"], "pass");
    assert_eq!(rows[1]["verdict"], "fail");
    for row in rows {
        assert!(suite.join(row["report"].as_str().unwrap()).is_file());
    }
}

/// The `idempotent_duplicates_total == 0` expectation of budget-idempotency can fail: with
/// ticket_create answering after the tool deadline, the engine retries with the same key and the
/// upstream executes it again — the harness must count that duplicate in the engine's metrics.
#[test]
fn duplicate_executions_seen_by_the_upstream_reach_idempotent_duplicates_total() {
    let dir = tempfile::tempdir().unwrap();
    let path = mutated_copy("budget-idempotency", dir.path(), "dup", |t| {
        let t = t.replace(
            "series = 'idempotent_duplicates_total'\nequals = 0",
            "series = 'idempotent_duplicates_total'\nat_least = 1",
        );
        assert!(
            t.contains("at_least = 1"),
            "the fixture's duplicate expectation moved"
        );
        format!(
            "{t}\n[[fault]]\nroute = \"tool:ticket_create\"\nkind = \"latency\"\ndelay = \"3s\"\n\
             from = \"0s\"\nuntil = \"8s\"\n\n[engine.timeouts]\ntoolCall = \"1s\"\n"
        )
    });
    let reports = tempfile::tempdir().unwrap();
    let out = run_scenario(&path, "4", reports.path());
    let md = std::fs::read_to_string(reported_path(&out)).unwrap();
    let line = md
        .lines()
        .find(|l| l.contains("idempotent_duplicates_total expected"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains("✓"),
        "duplicates were not counted: {line}\n{}",
        show(&out)
    );
}
