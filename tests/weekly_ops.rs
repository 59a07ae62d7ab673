//! The weekly job's housekeeping with the real binary (docs/weekly.md): retention (`--keep N`)
//! over real run directories — five runs leave two, a run killed mid-way is pruned only once N
//! newer runs finished, foreign and broken entries are left alone — and the batch-job series
//! read back from a real `prometheus-pushgateway` and a real `prometheus-node-exporter` with the
//! textfile collector (Debian packages: the tests fail, never skip, when they are missing), a
//! failing run that does not move `last_success`, a failed push that is only a warning, and
//! `--on-fail`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use tokio::time::Instant;

use crate::support::metrics::promtool_check;
use crate::support::run::show;

/// A scenario of 2 s (1 s at ×2, slow enough for a loaded machine) whose one expectation passes, or, with `fail`, cannot.
fn tiny(dir: &Path, name: &str, fail: bool, duration: &str) -> PathBuf {
    let at_least = if fail { 1_000_000 } else { 1 };
    let text = format!(
        "name = \"{name}\"\nduration = \"{duration}\"\ntraffic = \"tiny.jsonl\"\n\
         scrape_interval = \"100ms\"\nseed = 1\nworkers = 2\n\n\
         [[profile]]\nprovider = \"openai-codex\"\nid = \"openai-codex:p0\"\n\n\
         [[expect.attempts]]\nmodel = \"openai-codex/gpt-5.2\"\nat_least = {at_least}\n"
    );
    let traffic: String = (0..10)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"openai-codex/gpt-5.2\",\"max_tokens\":4}}\n",
                i * 100
            )
        })
        .collect();
    std::fs::write(dir.join("tiny.jsonl"), traffic).unwrap();
    let path = dir.join(format!(
        "{name}-{}.toml",
        if fail { "fail" } else { "pass" }
    ));
    std::fs::write(&path, text).unwrap();
    path
}

fn run(scenario: &Path, reports: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--speed", "2", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(reports)
        .args(extra)
        .output()
        .expect("spawn rehearse run")
}

fn names(reports: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(reports)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(".rehearse"))
        .collect();
    v.sort();
    v
}

fn run_dir_of(out: &Output) -> PathBuf {
    crate::support::run::reported_path(out)
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn keep_2_after_five_runs_leaves_two_and_foreign_entries_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny(tmp.path(), "tiny", false, "2s");
    let reports = tmp.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    // Foreign: a directory of notes, an older run without our marker (its name and report look
    // like ours), a directory with a marker that does not parse, a file, a symlink to a dir.
    std::fs::create_dir_all(reports.join("notes")).unwrap();
    std::fs::write(reports.join("notes/keep.txt"), "mine").unwrap();
    let legacy = reports.join("20200101T000000Z-tiny");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(
        legacy.join("report.json"),
        r#"{"schema_version":0,"scenario":"tiny","verdict":"pass"}"#,
    )
    .unwrap();
    let bad_marker = reports.join("20200102T000000Z-tiny");
    std::fs::create_dir_all(&bad_marker).unwrap();
    std::fs::write(bad_marker.join(".rehearse-run.json"), "{not json").unwrap();
    std::fs::write(reports.join("README.txt"), "hello").unwrap();
    std::os::unix::fs::symlink(reports.join("notes"), reports.join("link")).unwrap();
    let foreign = [
        "20200101T000000Z-tiny",
        "20200102T000000Z-tiny",
        "README.txt",
        "link",
        "notes",
    ];

    let mut dirs = Vec::new();
    let mut removed_said = 0;
    for i in 0..5 {
        let out = run(
            &scenario,
            &reports,
            &["--keep", "2", "--seed", &i.to_string()],
        );
        assert_eq!(out.status.code(), Some(0), "run {i}: {}", show(&out));
        let dir = run_dir_of(&out);
        assert!(
            dir.join(".rehearse-run.json").is_file(),
            "marker in {}",
            dir.display()
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr.matches("retention: removed ").count();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap())
                .unwrap();
        let hk = &json["housekeeping"];
        assert_eq!(hk["keep"], 2, "{json:#}");
        assert_eq!(
            hk["removed"].as_array().unwrap().len(),
            said,
            "stderr and report.json say the same: {stderr}"
        );
        // Runs 3, 4, 5 each remove one.
        assert_eq!(said, usize::from(i >= 2), "run {i}: {stderr}");
        if said == 1 {
            let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
            assert!(
                md.contains("## Housekeeping") && md.contains("removed `"),
                "{md}"
            );
        }
        removed_said += said;
        dirs.push(dir.file_name().unwrap().to_string_lossy().into_owned());
    }
    assert_eq!(removed_said, 3);
    let mut expected: Vec<String> = foreign.iter().map(|s| s.to_string()).collect();
    expected.extend(dirs[3..].iter().cloned());
    expected.sort();
    assert_eq!(
        names(&reports),
        expected,
        "the two newest runs and every foreign entry"
    );
    assert_eq!(
        std::fs::read_to_string(reports.join("notes/keep.txt")).unwrap(),
        "mine"
    );
    assert!(legacy.join("report.json").is_file());
}

/// Copies the directory tree `from` to `to` (files only: a run directory holds no links).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

#[test]
fn keep_1_never_removes_a_copy_or_a_renamed_run_that_history_calls_no_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tiny(tmp.path(), "tiny", false, "2s");
    let reports = tmp.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let first = run(&scenario, &reports, &["--seed", "1"]);
    assert_eq!(first.status.code(), Some(0), "{}", show(&first));
    let first_dir = run_dir_of(&first);
    let marker: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(first_dir.join(".rehearse-run.json")).unwrap(),
    )
    .unwrap();
    let first_name = first_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        marker["dir"],
        first_name.as_str(),
        "the marker names its directory"
    );
    // The user keeps copies of it: under a name of their own, and under an older run-like name
    // of the same scenario (a renamed run). Both carry the first run's marker.
    let saved = reports.join("saved-tiny");
    let renamed = reports.join("20200103T000000Z-tiny");
    copy_tree(&first_dir, &saved);
    copy_tree(&first_dir, &renamed);
    // history calls neither a run directory.
    let hist = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["history", "--json", "--report-dir"])
        .arg(&reports)
        .output()
        .unwrap();
    let hist_text = String::from_utf8_lossy(&hist.stdout);
    assert_eq!(hist.status.code(), Some(0), "{}", show(&hist));
    assert!(
        hist_text.contains("a copy of 20"),
        "history says the renamed run is a copy: {hist_text}"
    );
    // Two more runs with --keep 1: each prunes the older real run, never a copy.
    let second = run(&scenario, &reports, &["--keep", "1", "--seed", "2"]);
    assert_eq!(second.status.code(), Some(0), "{}", show(&second));
    let third = run(&scenario, &reports, &["--keep", "1", "--seed", "3"]);
    assert_eq!(third.status.code(), Some(0), "{}", show(&third));
    let third_name = run_dir_of(&third)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut expected = vec![
        "20200103T000000Z-tiny".to_string(),
        "saved-tiny".to_string(),
        // `rehearse history` writes its index pages.
        "index.html".to_string(),
        "index.md".to_string(),
        third_name,
    ];
    expected.sort();
    assert_eq!(
        names(&reports),
        expected,
        "the copies stay; the two older runs went"
    );
    for kept in [&saved, &renamed] {
        assert!(
            kept.join("report.json").is_file(),
            "{} intact",
            kept.display()
        );
    }
    assert!(!first_dir.exists(), "the first run itself was pruned");
}

#[test]
fn a_killed_run_is_pruned_only_once_keep_newer_runs_finished_and_a_broken_one_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let long = tiny(tmp.path(), "tiny", false, "600s");
    // A run killed mid-way: its directory has the marker and no report.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&long)
        .arg("--report-dir")
        .arg(&reports)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    let killed = loop {
        let found = names(&reports)
            .into_iter()
            .find(|n| reports.join(n).join(".rehearse-run.json").is_file());
        if let Some(n) = found {
            break n;
        }
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "no run dir appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!reports.join(&killed).join("report.json").exists());

    let scenario = tiny(tmp.path(), "tiny", false, "2s");
    let first = run(&scenario, &reports, &["--keep", "2"]);
    assert_eq!(first.status.code(), Some(0), "{}", show(&first));
    assert!(
        reports.join(&killed).is_dir(),
        "the next run must not prune the killed one: {}",
        show(&first)
    );
    // An older run of ours whose report.json is broken: ours, never finished as far as anyone
    // can tell, so it goes by the same rule.
    let first_dir = run_dir_of(&first);
    std::fs::write(first_dir.join("report.json"), "{\"verdict\": ").unwrap();
    let second = run(&scenario, &reports, &["--keep", "2"]);
    assert_eq!(second.status.code(), Some(0), "{}", show(&second));
    assert!(
        reports.join(&killed).is_dir(),
        "one finished run newer only"
    );
    assert!(
        first_dir.is_dir(),
        "the broken one has one finished run newer only"
    );
    let third = run(&scenario, &reports, &["--keep", "2"]);
    assert_eq!(third.status.code(), Some(0), "{}", show(&third));
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(
        !reports.join(&killed).exists(),
        "two finished runs are newer: pruned\n{}",
        show(&third)
    );
    assert!(stderr.contains("never finished"), "{stderr}");
    assert!(!first_dir.exists(), "{stderr}");
    assert!(stderr.contains("is broken"), "{stderr}");
    assert_eq!(names(&reports).len(), 2);
}

/// A free loopback port (bound, read, released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A started server, killed on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(program: &str, args: &[String], port: u16) -> Server {
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{program} is required for this test ({e}): install Debian's `{program}` package"
            )
        });
    let server = Server(child);
    let began = Instant::now();
    while get(port, "/metrics").is_none() {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "{program} did not answer on 127.0.0.1:{port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// GET http://127.0.0.1:PORT/PATH, the body (None when nothing answers).
fn get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    let (head, body) = buf.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then(|| body.to_string())
}

/// The value of the one sample of `name` with `labels` (each `k="v"`) in an exposition text.
fn value(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .find(|l| labels.iter().all(|lab| l.contains(lab)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn batch_job_series_reach_node_exporter_and_the_pushgateway_and_a_failure_keeps_last_success() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let textfile = tmp.path().join("textfile");
    std::fs::create_dir_all(&textfile).unwrap();
    let pg_port = free_port();
    let _pg = start(
        "prometheus-pushgateway",
        &[format!("--web.listen-address=127.0.0.1:{pg_port}")],
        pg_port,
    );
    let ne_port = free_port();
    let _ne = start(
        "prometheus-node-exporter",
        &[
            format!("--web.listen-address=127.0.0.1:{ne_port}"),
            "--collector.disable-defaults".into(),
            "--collector.textfile".into(),
            format!("--collector.textfile.directory={}", textfile.display()),
        ],
        ne_port,
    );
    let pg = format!("http://127.0.0.1:{pg_port}");
    let flags = [
        "--textfile-dir",
        textfile.to_str().unwrap(),
        "--pushgateway",
        pg.as_str(),
    ];
    // Another scenario's series first: the tiny runs must keep them.
    let other = tiny(tmp.path(), "other", false, "2s");
    let out = run(&other, &reports, &flags);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));

    let pass = tiny(tmp.path(), "tiny", false, "2s");
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let out = run(&pass, &reports, &flags);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("warning: pushgateway") && !stderr.contains("warning: textfile"),
        "{}",
        show(&out)
    );
    let text = std::fs::read_to_string(textfile.join("rehearse.prom")).unwrap();
    let (ok, why) = promtool_check(&text);
    assert!(ok, "promtool check metrics: {why}\n{text}");

    let ne = get(ne_port, "/metrics").unwrap();
    let t = r#"scenario="tiny""#;
    let success = value(&ne, "rehearse_last_success_timestamp_seconds", &[t])
        .unwrap_or_else(|| panic!("node_exporter does not serve it:\n{ne}"));
    assert!(success >= before.floor(), "{success} < {before}");
    assert_eq!(
        value(&ne, "rehearse_run_verdict", &[t, r#"verdict="pass""#]),
        Some(1.0)
    );
    assert_eq!(
        value(&ne, "rehearse_expectations", &[t, r#"status="pass""#]),
        Some(1.0)
    );
    assert!(
        value(
            &ne,
            "rehearse_last_run_timestamp_seconds",
            &[r#"scenario="other""#]
        )
        .is_some()
    );
    let pushed = get(pg_port, "/metrics").unwrap();
    let job = r#"job="rehearse""#;
    assert_eq!(
        value(
            &pushed,
            "rehearse_last_success_timestamp_seconds",
            &[job, t]
        ),
        Some(success),
        "the Pushgateway holds the same group:\n{pushed}"
    );
    assert!(value(&pushed, "rehearse_run_duration_seconds", &[job, t]).unwrap() > 0.0);

    // A failing run: last_run moves, last_success stays, in both; exit 1 as always.
    std::thread::sleep(Duration::from_millis(1100));
    let fail = tiny(tmp.path(), "tiny", true, "2s");
    let hook_out = tmp.path().join("hook.txt");
    let hook = format!(
        "printf '%s %s' \"$1\" \"$REHEARSE_VERDICT\" > '{}'",
        hook_out.display()
    );
    let mut fail_flags = flags.to_vec();
    fail_flags.extend(["--on-fail", hook.as_str()]);
    let out = run(&fail, &reports, &fail_flags);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let ne = get(ne_port, "/metrics").unwrap();
    assert_eq!(
        value(&ne, "rehearse_last_success_timestamp_seconds", &[t]),
        Some(success),
        "a failing run must not move last_success:\n{ne}"
    );
    let last_run = value(&ne, "rehearse_last_run_timestamp_seconds", &[t]).unwrap();
    assert!(last_run > success, "{last_run} <= {success}");
    assert_eq!(
        value(&ne, "rehearse_run_verdict", &[t, r#"verdict="fail""#]),
        Some(1.0)
    );
    assert_eq!(
        value(&ne, "rehearse_expectations", &[t, r#"status="fail""#]),
        Some(1.0)
    );
    let pushed = get(pg_port, "/metrics").unwrap();
    assert_eq!(
        value(
            &pushed,
            "rehearse_last_success_timestamp_seconds",
            &[job, t]
        ),
        Some(success),
        "{pushed}"
    );
    assert_eq!(
        value(
            &pushed,
            "rehearse_run_verdict",
            &[job, t, r#"verdict="fail""#]
        ),
        Some(1.0)
    );
    // --on-fail got the report's path.
    let said = std::fs::read_to_string(&hook_out).unwrap();
    let md = crate::support::run::reported_path(&out);
    assert_eq!(said, format!("{} fail", md.display()));
    let (ok, why) =
        promtool_check(&std::fs::read_to_string(textfile.join("rehearse.prom")).unwrap());
    assert!(ok, "{why}");
}

#[test]
fn a_failed_push_or_write_is_a_warning_never_a_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let pass = tiny(tmp.path(), "tiny", false, "2s");
    // Nothing listens there; and the textfile "directory" is a file.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let not_a_dir = tmp.path().join("file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let out = run(
        &pass,
        &reports,
        &[
            "--pushgateway",
            &dead,
            "--textfile-dir",
            not_a_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: pushgateway"), "{stderr}");
    assert!(stderr.contains("warning: textfile"), "{stderr}");
    let json = crate::support::run::report_json(&out);
    assert_eq!(json["verdict"], "pass");
    let warnings = json["housekeeping"]["warnings"].as_array().unwrap();
    assert!(warnings.len() >= 2, "{warnings:?}");
}
