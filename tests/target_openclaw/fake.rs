//! The supervisor's lifecycle with a stand-in `openclaw` (tests/target_openclaw/fake_openclaw.py):
//! key seeding through stdin, a gateway that exits or never gets healthy (typed errors quoting
//! its output, nothing left running), stopping a gateway that ignores SIGTERM and leaves a worker
//! in a process group of its own, Drop, and where its hard-coded `/tmp` writes go.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rehearse::gateway::openclaw::procs::SeenProcess;
use rehearse::gateway::openclaw::sandbox::openclaw_tmp_entries;
use rehearse::gateway::openclaw::{
    Gateway, GatewayConfig, GatewayError, GatewayOptions, Install, ModelSpec, ProfileSpec,
    ProviderSpec, TmpIsolation,
};

/// A directory with the fake `openclaw`, a `node` that prints a good version, and `mode`.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(mode: &str) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let src = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/target_openclaw/fake_openclaw.py"
        );
        let exe = dir.path().join("openclaw");
        std::fs::copy(src, &exe).unwrap();
        let node = dir.path().join("node");
        std::fs::write(&node, "#!/bin/sh\necho v24.22.3\n").unwrap();
        for p in [&exe, &node] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::write(dir.path().join("mode"), mode).unwrap();
        Self { dir }
    }

    fn stubborn(self) -> Self {
        std::fs::write(self.dir.path().join("stubborn"), "").unwrap();
        self
    }

    fn install(&self) -> Install {
        let found = Install::find_in(Some(&self.dir.path().join("openclaw")), None, None)
            .expect("the fake install is found");
        assert_eq!(found.node, self.dir.path().join("node"));
        found
    }
}

fn config() -> GatewayConfig {
    GatewayConfig {
        providers: vec![ProviderSpec {
            id: "mockai".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            timeout_seconds: 5,
            models: vec![ModelSpec::new("m1")],
        }],
        profiles: vec![
            ProfileSpec {
                id: "mockai:a".into(),
                provider: "mockai".into(),
                key: "fake-key-AAAA".into(),
            },
            ProfileSpec {
                id: "mockai:b".into(),
                provider: "mockai".into(),
                key: "fake-key-B".into(),
            },
        ],
        primary: "mockai/m1".into(),
        fallbacks: vec![],
        agent_timeout_seconds: 60,
    }
}

fn options(isolate_tmp: bool) -> GatewayOptions {
    GatewayOptions {
        ready_timeout: Duration::from_secs(20),
        stop_grace: Duration::from_millis(1500),
        seed_timeout: Duration::from_secs(20),
        isolate_tmp,
        ..GatewayOptions::default()
    }
}

/// Every file under `dir`, recursively, as text (for "no key written" checks).
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push_str(&String::from_utf8_lossy(
                    &std::fs::read(&p).unwrap_or_default(),
                ));
            }
        }
    }
    out
}

#[tokio::test]
async fn a_gateway_that_exits_is_an_error_quoting_its_output_after_the_keys_were_seeded() {
    let fake = Fake::new("exit");
    let run = tempfile::tempdir().unwrap();
    let err = Gateway::start(&fake.install(), &config(), run.path(), options(true))
        .await
        .expect_err("the fake exits");
    let msg = err.to_string();
    assert!(matches!(err, GatewayError::Exited { .. }), "{msg}");
    assert!(!err.is_bad_input());
    assert!(
        err.last_lines()
            .iter()
            .any(|l| l.contains("fatal: the fake was told to exit")),
        "{msg}"
    );
    let root = run.path().canonicalize().unwrap().join("openclaw");
    let pasted = std::fs::read_to_string(root.join("state/pasted.txt")).unwrap();
    assert_eq!(
        pasted, "mockai:a 13\nmockai:b 10\n",
        "each key through stdin, in order"
    );
    let cfg: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("openclaw.json")).unwrap()).unwrap();
    assert_eq!(
        cfg["auth"]["order"]["mockai"],
        serde_json::json!(["mockai:a", "mockai:b"])
    );
    let everything = all_text(run.path());
    assert!(!everything.contains("fake-key-AAAA") && !everything.contains("fake-key-B"));
}

#[tokio::test]
async fn a_gateway_that_never_gets_healthy_is_killed_and_its_output_quoted() {
    let fake = Fake::new("hang");
    let run = tempfile::tempdir().unwrap();
    // Long enough for the fake (a Python script) to start and print its line while the suite's
    // real gateways load the machine: with 3 s it was once killed before it had printed.
    let opts = GatewayOptions {
        ready_timeout: Duration::from_secs(10),
        ..options(true)
    };
    let err = Gateway::start(&fake.install(), &config(), run.path(), opts)
        .await
        .expect_err("never healthy");
    let msg = err.to_string();
    assert!(matches!(err, GatewayError::NeverHealthy { .. }), "{msg}");
    assert!(msg.contains("fake gateway starting on port"), "{msg}");
    assert!(
        !msg.contains("rehearse-"),
        "the gateway token is scrubbed: {msg}"
    );
}

#[tokio::test]
async fn a_bad_config_is_bad_input_and_starts_nothing() {
    let fake = Fake::new("serve:never");
    let run = tempfile::tempdir().unwrap();
    let mut c = config();
    c.primary = "nope/m9".into();
    let err = Gateway::start(&fake.install(), &c, run.path(), options(true))
        .await
        .expect_err("bad model");
    assert!(err.is_bad_input(), "{err}");
    assert!(!run.path().join("openclaw").exists());
}

/// Starts a serving fake, checks it, stops it; returns what the stop said.
async fn serve_and_stop(
    fake: &Fake,
    isolate_tmp: bool,
) -> (
    rehearse::gateway::openclaw::Stopped,
    Vec<SeenProcess>,
    PathBuf,
) {
    let run = tempfile::tempdir().unwrap();
    let mut gw = Gateway::start(&fake.install(), &config(), run.path(), options(isolate_tmp))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(gw.client().unwrap().healthy().await);
    // The worker is in a process group of its own: wait until the tree shows it.
    let mut procs = gw.processes();
    for _ in 0..50 {
        if procs.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        procs = gw.processes();
    }
    assert!(procs.len() >= 2, "gateway and worker: {procs:?}");
    let stopped = gw.stop().await;
    (stopped, procs, run.keep())
}

#[tokio::test]
async fn a_stubborn_gateway_is_killed_after_the_grace_with_its_workers_and_tmp_stays_private() {
    let fake = Fake::new("serve:ns").stubborn();
    let (stopped, procs, run) = serve_and_stop(&fake, true).await;
    assert!(!stopped.graceful, "SIGTERM was ignored");
    assert!(
        stopped.took >= Duration::from_millis(1400),
        "{:?}",
        stopped.took
    );
    assert!(stopped.survivors.is_empty(), "{:?}", stopped.survivors);
    let alive: Vec<&SeenProcess> = procs.iter().filter(|p| p.alive()).collect();
    assert!(alive.is_empty(), "still running: {alive:?}");
    if stopped.isolation == TmpIsolation::Namespace {
        assert!(
            !Path::new("/tmp/openclaw-fake-ns").exists(),
            "hard-coded /tmp write escaped"
        );
        assert!(stopped.dirs.tmp.join("openclaw-fake-ns").exists());
        assert!(stopped.left_in_tmp.is_empty());
    }
    let _ = std::fs::remove_dir_all(run);
}

#[tokio::test]
async fn without_a_namespace_workers_in_their_own_group_are_killed_and_tmp_leftovers_reported() {
    let before = openclaw_tmp_entries();
    let fake = Fake::new("serve:nons");
    let (stopped, procs, run) = serve_and_stop(&fake, false).await;
    assert_eq!(stopped.isolation, TmpIsolation::None);
    assert!(stopped.graceful, "the fake exits on SIGTERM: {stopped:?}");
    assert!(stopped.survivors.is_empty(), "{:?}", stopped.survivors);
    let worker: u32 = std::fs::read_to_string(stopped.dirs.state.join("worker.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let w = procs.iter().find(|p| p.pid == worker);
    assert!(w.is_some(), "the tree saw the worker {worker}: {procs:?}");
    assert!(
        !w.unwrap().alive(),
        "the worker in its own group was killed"
    );
    let marker = PathBuf::from("/tmp/openclaw-fake-nons");
    if !before.contains(&marker) {
        assert!(
            stopped.left_in_tmp.contains(&marker),
            "{:?}",
            stopped.left_in_tmp
        );
        let _ = std::fs::remove_file(&marker);
    }
    let _ = std::fs::remove_dir_all(run);
}

#[tokio::test]
async fn dropping_a_running_gateway_kills_it() {
    let fake = Fake::new("serve:drop").stubborn();
    let run = tempfile::tempdir().unwrap();
    let mut gw = Gateway::start(&fake.install(), &config(), run.path(), options(true))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let procs = gw.processes();
    drop(gw);
    for _ in 0..30 {
        if procs.iter().all(|p| !p.alive()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("still running after drop: {procs:?}");
}

/// A scenario whose `[target]` is the fake at `exe`: one turn at 1 s, `duration` 10 s.
fn fake_scenario(dir: &Path, exe: &Path) -> PathBuf {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/scenarios/openclaw-503-key-a.toml"
    );
    let traffic = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/traffic/openclaw-one-turn.jsonl"
    );
    let text = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("../traffic/openclaw-one-turn.jsonl", traffic)
        .replace(
            "kind = \"openclaw\"\n",
            &format!(
                "kind = \"openclaw\"\ncommand = \"{}\"\nready_timeout = \"30s\"\n",
                exe.display()
            ),
        );
    let path = dir.join("fake-target.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `rehearse run` of the fake target: exit code, report.md, report.json.
fn run_fake(fake: &Fake) -> (Option<i32>, String, serde_json::Value) {
    let exe = fake.dir.path().join("openclaw");
    let reports = tempfile::tempdir().unwrap();
    let scenario = fake_scenario(reports.path(), &exe);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&scenario)
        .arg("--report-dir")
        .arg(reports.path().join("r"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let md = PathBuf::from(
        stdout
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("report: "))
            .unwrap_or_else(|| panic!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr))),
    );
    let json =
        serde_json::from_str(&std::fs::read_to_string(md.with_file_name("report.json")).unwrap())
            .unwrap();
    let gateway_dir = md.parent().unwrap().join(".gateway");
    assert!(
        !gateway_dir.exists(),
        "the gateway's state directory is removed"
    );
    (
        out.status.code(),
        std::fs::read_to_string(&md).unwrap(),
        json,
    )
}

#[test]
fn a_target_that_never_starts_or_crashes_mid_run_is_exit_3_with_its_last_log_lines_in_the_report() {
    let (code, md, json) = run_fake(&Fake::new("exit"));
    assert_eq!(code, Some(3), "{md}");
    assert_eq!(json["verdict"], "error");
    assert!(md.contains("fatal: the fake was told to exit"), "{md}");
    assert!(
        json["target"]["last_lines"]
            .to_string()
            .contains("fatal: the fake was told to exit")
    );

    let fake = Fake::new("crash:cli");
    let (code, md, json) = run_fake(&fake);
    assert_eq!(code, Some(3), "{md}");
    assert_eq!(json["verdict"], "error");
    assert!(
        json["reason"]
            .as_str()
            .unwrap_or("")
            .contains("exited mid-run"),
        "{json}"
    );
    assert!(md.contains("fatal: the fake crashed mid-run"), "{md}");
    assert_eq!(json["target"]["left_running"], serde_json::json!([]));
    let _ = std::fs::remove_file("/tmp/openclaw-fake-cli");
}

#[test]
fn a_gateway_that_leaves_no_log_or_state_fails_what_reads_them_saying_why() {
    // The fake serves /health and answers its turns (one model request each, so it warms up and
    // is rehearsed), but writes no log and keeps no state database: the fixture's
    // `openclaw_cooldown none = true` would hold on nothing, the decision count read zero
    // decisions from a log that is not there.
    let fake = Fake::new("serve:judge");
    let (code, md, json) = run_fake(&fake);
    let _ = std::fs::remove_file("/tmp/openclaw-fake-judge");
    assert_eq!(code, Some(1), "{md}");
    assert_eq!(json["verdict"], "fail", "{json}");
    let rows = json["policies"][0]["expectations"].as_array().unwrap();
    let row = |kind: &str| {
        rows.iter()
            .find(|e| e["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} row: {rows:?}"))
    };
    let cooldown = row("openclaw_cooldown");
    assert_eq!(cooldown["status"], "fail", "{cooldown}");
    assert_eq!(cooldown["observed"], "auth state unreadable", "{cooldown}");
    let why = cooldown["detail"].as_str().unwrap_or_default();
    assert!(why.contains("no auth state database at"), "{why}");
    let decision = row("openclaw_decision");
    assert_eq!(decision["status"], "fail", "{decision}");
    assert_eq!(decision["observed"], "log unreadable", "{decision}");
    let why = decision["detail"].as_str().unwrap_or_default();
    assert!(why.contains("reading OpenClaw's log"), "{why}");
    // Its turn is in the report with how it ended, and the warm-up that came before it.
    assert_eq!(json["target"]["turns"][0]["outcome"], "answered", "{json}");
    assert_eq!(json["target"]["warmup"]["steady"], true, "{json}");
}

/// The processes whose command line names `needle`, as "pid args".
fn processes_naming(needle: &str) -> Vec<String> {
    let ps = std::process::Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&ps.stdout)
        .lines()
        .filter(|l| l.contains(needle) && !l.contains(" ps -eo"))
        .map(str::to_string)
        .collect()
}

/// The first file named `name` under `dir`.
fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = find_file(&p, name) {
                return Some(f);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}

#[test]
fn a_run_killed_with_sigkill_leaves_no_gateway_running() {
    let fake = Fake::new("serve:kill9");
    let exe = fake.dir.path().join("openclaw");
    let reports = tempfile::tempdir().unwrap();
    let scenario = fake_scenario(reports.path(), &exe);
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(&scenario)
        .arg("--report-dir")
        .arg(reports.path().join("r"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The gateway serves once its worker's pid is written (inside the run's state dir). The
    // worker sits in a session of its own, so only a pid namespace (Linux with `unshare`) takes
    // it down with the gateway; the watchdog stops the gateway's process group. Its pid may be
    // the namespace's, so it is not checked here.
    let started = tokio::time::Instant::now();
    loop {
        if find_file(reports.path(), "worker.pid").is_some() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the fake gateway never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let needle = fake.dir.path().display().to_string();
    assert!(
        !processes_naming(&needle).is_empty(),
        "the gateway should run now"
    );
    run.kill().unwrap();
    let _ = run.wait();
    let t = tokio::time::Instant::now();
    while t.elapsed() < Duration::from_secs(15) && !processes_naming(&needle).is_empty() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = std::fs::remove_file("/tmp/openclaw-fake-kill9");
    let left = processes_naming(&needle);
    assert!(
        left.is_empty(),
        "left running after the run's SIGKILL: {left:?}"
    );
}
