//! The target suite's quick cases from a checkout under `/tmp`, where many CI runners and scratch
//! clones live. On Linux as root each gateway command runs in a private mount namespace whose
//! `/tmp` is the run's own: a working directory, scenario or report dir under the real `/tmp` is
//! hidden there unless the supervisor starts the gateway from a directory it bound back. Here:
//! the stand-in gateway's tests (`fake::`) re-run by this test binary with its working directory
//! in a checkout under `/tmp`, a stand-in target through the CLI, and the real gateway on the
//! quickest fixture — the scenario, its traffic, the report dir and the working directory all
//! under `/tmp`, named by relative paths.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::scenarios::{RunPermit, StartPermit, openclaw, repo, rows, show};

/// A scratch "checkout" under the real `/tmp` with the files a run needs, in the repo's layout.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("rehearse-checkout-")
        .tempdir_in("/tmp")
        .unwrap();
    for f in [
        "fixtures/scenarios/openclaw-401-every-profile.toml",
        "fixtures/scenarios/openclaw-503-key-a.toml",
        "fixtures/traffic/openclaw-one-turn.jsonl",
        "tests/target_openclaw/fake_openclaw.py",
    ] {
        let to = dir.path().join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(repo().join(f), &to).unwrap();
    }
    dir
}

/// `rehearse run --scenario SCENARIO --report-dir reports` with the working directory `cwd`;
/// `started` is called once its gateway is healthy (or the run is over).
fn run_in(cwd: &Path, scenario: &str, started: impl FnOnce()) -> std::process::Output {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .current_dir(cwd)
        .args([
            "run",
            "--no-progress",
            "--scenario",
            scenario,
            "--report-dir",
            "reports",
        ])
        .env("REHEARSE_OPENCLAW", openclaw())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut started = Some(started);
    let mut err = String::new();
    for line in std::io::BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        if line.contains(" turns to ")
            && let Some(f) = started.take()
        {
            f();
        }
        err.push_str(&line);
        err.push('\n');
    }
    if let Some(f) = started.take() {
        f();
    }
    let mut out = child.wait_with_output().unwrap();
    out.stderr = err.into_bytes();
    out
}

/// The report.md the run names (a relative one from `cwd`), and report.json beside it.
fn report_in(cwd: &Path, out: &std::process::Output) -> (PathBuf, serde_json::Value) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let md = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no report line\n{}", show(out)));
    let md = cwd.join(md);
    let json = std::fs::read_to_string(md.with_file_name("report.json"))
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", md.display(), show(out)));
    (md, serde_json::from_str(&json).unwrap())
}

#[test]
fn the_stand_in_gateway_tests_pass_from_a_working_directory_under_tmp() {
    let co = checkout();
    // `without_a_namespace…` writes the real `/tmp/openclaw-fake-nons` and removes it: run
    // beside its twin in this binary, the two would race on that one file.
    let out = Command::new(std::env::current_exe().unwrap())
        .current_dir(co.path())
        .args([
            "fake::",
            "--skip",
            "without_a_namespace",
            "--test-threads",
            "2",
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "from {}:\n{text}",
        co.path().display()
    );
    let passed = text
        .lines()
        .find_map(|l| l.strip_prefix("test result: ok. "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(0);
    assert!(passed >= 8, "the stand-in gateway's tests ran: {text}");

    // Through the CLI: a stand-in target named by a relative path, from the checkout.
    let scenario =
        std::fs::read_to_string(co.path().join("fixtures/scenarios/openclaw-503-key-a.toml"))
            .unwrap()
            .replace(
                "kind = \"openclaw\"\n",
                "kind = \"openclaw\"\ncommand = \"fake/openclaw\"\nready_timeout = \"30s\"\n",
            );
    std::fs::write(
        co.path().join("fixtures/scenarios/fake-target.toml"),
        scenario,
    )
    .unwrap();
    let fake = co.path().join("fake");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::copy(
        co.path().join("tests/target_openclaw/fake_openclaw.py"),
        fake.join("openclaw"),
    )
    .unwrap();
    std::fs::write(fake.join("node"), "#!/bin/sh\necho v24.22.3\n").unwrap();
    std::fs::write(fake.join("mode"), "serve:fromtmp").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["openclaw", "node"] {
            std::fs::set_permissions(fake.join(f), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let out = run_in(co.path(), "fixtures/scenarios/fake-target.toml", || ());
    let _ = std::fs::remove_file("/tmp/openclaw-fake-fromtmp");
    let (md, r) = report_in(co.path(), &out);
    assert!(
        md.starts_with(co.path().join("reports")),
        "{}",
        md.display()
    );
    // The stand-in answers every turn with one request on key-A and keeps no log or state: it
    // ran (a turn answered), and its verdict is the fixture's expectations failing on it.
    assert_eq!(
        r["target"]["turns"][0]["outcome"],
        "answered",
        "{}",
        show(&out)
    );
    assert_eq!(out.status.code(), Some(1), "{}\n{}", rows(&r), show(&out));
}

#[test]
fn the_real_gateway_runs_a_fixture_from_a_checkout_under_tmp() {
    let co = checkout();
    let running = RunPermit::take();
    let starting = StartPermit::take();
    let t0 = tokio::time::Instant::now();
    let out = run_in(
        co.path(),
        "fixtures/scenarios/openclaw-401-every-profile.toml",
        || drop(starting),
    );
    drop(running);
    eprintln!(
        "the 401 fixture from {} in {:?}",
        co.path().display(),
        t0.elapsed()
    );
    let (md, r) = report_in(co.path(), &out);
    assert!(md.starts_with(co.path().join("reports")), "{}", show(&out));
    assert_eq!(r["target"]["kind"], "openclaw");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("ENOENT") && !err.contains("cannot change"),
        "{err}"
    );
    assert_eq!(r["verdict"], "pass", "{}\n{}", rows(&r), show(&out));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(r["target"]["left_running"], serde_json::json!([]));
}
