//! The detection path in a run (`[prometheus]`, docs/alerts.md) with a real Prometheus and
//! Alertmanager from PATH, at speed 1: the alert fixtures pass, a mutant expecting an alert that
//! cannot fire fails (exit 1), a run `kill -9`ed midway leaves no prometheus or alertmanager
//! behind, Prometheus dying mid-run is exit 3 with its last log lines, a fleet's every host is
//! scraped and alerted on, and bad input (a missing binary, a rule file promtool rejects, an
//! unknown alert name, another speed) is exit 2. `url_mode`: a Prometheus the user runs, finding
//! the run through its targets file; `http_target`: an `http` target's `metrics_url` scraped and
//! alerted on. `adaptive_x1`: the `adaptive-deadlines` fixture at speed 1 (no Prometheus; here
//! because this binary runs beside the real gateway's suite and mostly waits).
//!
//! A test binary of its own: its runs are real time (a minute; the disagreement fixture four),
//! so `.ci/test` runs it beside the other long real-time binaries (docs/testing.md). Needs
//! `prometheus`, `promtool` and `prometheus-alertmanager` (or `alertmanager`) on PATH.

/// The integration tests' run helpers (`tests/support/run.rs`).
#[allow(dead_code)]
#[path = "../support/run.rs"]
mod run;

/// A Prometheus the tests start themselves (`tests/support/prometheus.rs`).
#[allow(dead_code)]
#[path = "../support/prometheus.rs"]
mod prometheus;

mod adaptive_x1;
mod http_target;
mod url_mode;
mod witness;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use tokio::time::Instant;

use run::{fixture, mutated_copy, repo_root, report_json, reported_path, show};

/// Fails naming the tool when it is missing (`.ci/test` installs it).
fn require_tools() {
    for (names, package) in [
        (&["prometheus"][..], "prometheus"),
        (&["promtool"][..], "prometheus"),
        (
            &["prometheus-alertmanager", "alertmanager"][..],
            "prometheus-alertmanager",
        ),
    ] {
        let found = names.iter().any(|n| {
            Command::new("sh")
                .args(["-c", &format!("command -v {n}")])
                .output()
                .is_ok_and(|o| o.status.success())
        });
        assert!(
            found,
            "`{}` is not on PATH: install it (apt-get install {package})",
            names[0]
        );
    }
}

fn rehearse(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .args(["--no-progress", "--report-dir"])
        .arg(dir)
        .current_dir(repo_root())
        .output()
        .expect("spawn rehearse")
}

/// [`rehearse`] with `REHEARSE_MUTANTS=1`: the run also re-judges every expectation alone on
/// its own observation after a change that should fail it (`mutants.json`; these fixtures run
/// once, at ×1, so their mutants are judged on that one run).
fn rehearse_with_mutants(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .args(["--no-progress", "--report-dir"])
        .arg(dir)
        .env("REHEARSE_MUTANTS", "1")
        .current_dir(repo_root())
        .output()
        .expect("spawn rehearse")
}

/// No perturbation of the run's expectations passed (`tests/support/run.rs`); says how many.
fn mutants_hold(out: &Output, what: &str) {
    let run_dir = reported_path(out).parent().unwrap().to_path_buf();
    let (entries, perturbations) = run::assert_mutants(&run_dir);
    assert!(perturbations > 0, "{what}: no mutant judged");
    eprintln!("{what}: {perturbations} perturbations of {entries} expectations, none passed");
}

/// Every process whose command line names `dir` and whose program is Prometheus or
/// Alertmanager: (pid, command line).
fn monitoring_processes_under(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.to_string_lossy().to_string();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).to_string())
            .collect();
        let prog = args
            .first()
            .and_then(|a| Path::new(a).file_name())
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let ours = matches!(
            prog.as_str(),
            "prometheus" | "alertmanager" | "prometheus-alertmanager"
        );
        // A zombie has an empty command line: gone for our purpose.
        if ours && args.iter().any(|a| a.contains(&needle)) {
            out.push((pid, args.join(" ")));
        }
    }
    out
}

fn rows(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["policies"][0]["expectations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn detail_of(r: &serde_json::Value, kind: &str) -> Vec<String> {
    rows(r)
        .iter()
        .filter(|e| e["kind"] == kind)
        .map(|e| {
            format!(
                "{} {}",
                e["status"],
                e["detail"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn the_breaker_open_fixture_fires_pages_and_resolves() {
    require_tools();
    let tmp = run::kept_on_failure("the_breaker_open_fixture_fires_pages_and_resolves");
    let started = Instant::now();
    let out = rehearse_with_mutants(&["--scenario", "prometheus-breaker-open"], tmp.path());
    let took = started.elapsed();
    let r = report_json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\nalerts: {:#?}",
        show(&out),
        detail_of(&r, "alert")
    );
    let p = &r["policies"][0];
    // BreakerOpen fired, resolved and was notified; the disagreement alert stayed silent.
    let table = p["alerts"]["table"].as_array().expect("alert table");
    assert_eq!(table.len(), 2);
    let open = &table[0];
    assert_eq!(open["rule"], "BreakerOpen{dep=\"crm_search\"}");
    let fired = open["fired_ms"].as_i64().expect("fired");
    let resolved = open["resolved_ms"].as_i64().expect("resolved");
    let notified = open["notified_ms"].as_i64().expect("notified");
    assert!(fired > 5_000 && fired < resolved, "{open}");
    assert!(notified >= fired - 1_000, "{open}");
    assert_eq!(table[1]["fired_ms"], serde_json::Value::Null);
    // The lane: pending before firing, and the page's arrival (firing, then resolved).
    let spells = p["alerts"]["spells"].as_array().unwrap();
    assert!(spells.iter().any(|s| s["state"] == "pending"), "{spells:?}");
    let arrivals = p["alerts"]["arrivals"].as_array().unwrap();
    assert!(
        arrivals.iter().any(|a| a["status"] == "firing"),
        "{arrivals:?}"
    );
    assert!(
        arrivals.iter().any(|a| a["status"] == "resolved"),
        "{arrivals:?}"
    );
    // The dashboards rule was judged and held.
    assert!(
        rows(&r)
            .iter()
            .any(|e| e["kind"] == "dashboard" && e["status"] == "pass"),
        "{:#?}",
        detail_of(&r, "dashboard")
    );
    // Everything in the run directory; nothing left running; the report shows it.
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    for f in [
        "prometheus/prometheus.yml",
        "prometheus/prometheus.log",
        "prometheus/targets.json",
        "alertmanager/alertmanager.yml",
        "alertmanager-notifications.jsonl",
    ] {
        assert!(run_dir.join(f).is_file(), "{f} missing");
    }
    assert!(monitoring_processes_under(tmp.path()).is_empty());
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    assert!(html.contains("<g class=\"alerts\">") && html.contains("<h2>Alerts</h2>"));
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        md.contains("| rule | expected | fired at | resolved at | notified at | ok |"),
        "{md}"
    );
    let junit = std::fs::read_to_string(run_dir.join("report.junit.xml")).unwrap();
    assert!(junit.contains("BreakerOpen"), "{junit}");
    // Every alert row was judged on its rule's evaluations and the run's own `up`.
    for e in rows(&r).iter().filter(|e| e["kind"] == "alert") {
        let w = &e["witness"];
        assert!(w["rule_evaluations"].as_u64().unwrap_or(0) >= 40, "{e:#}");
        assert_eq!(w["rule_failures"], 0, "{e:#}");
        assert_eq!(w["families_missing"], 0, "{e:#}");
        assert_eq!(w["run_targets"], 1, "{e:#}");
    }
    assert!(md.contains("rule evaluations"), "{md}");
    mutants_hold(&out, "prometheus-breaker-open");
    println!("took {took:?}; fired {fired} ms, resolved {resolved} ms, notified {notified} ms");
}

#[test]
fn a_mutant_expecting_an_alert_that_does_not_fire_fails() {
    require_tools();
    let tmp = run::kept_on_failure("a_mutant_expecting_an_alert_that_does_not_fire_fails");
    // The breaker half-opens on time: BreakerOpenTooLong could fire in the run, and does not.
    let mutant = mutated_copy("prometheus-breaker-open", tmp.path(), "mutant", |s| {
        let t = s.replace(
            "alert = \"BreakerOpenTooLong\"\nnever = true",
            "alert = \"BreakerOpenTooLong\"\nfires_within = \"20s\"",
        );
        assert_ne!(t, s, "the fixture's never row moved");
        t
    });
    let out = rehearse(&["run", "--scenario", mutant.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "fail");
    let failed: Vec<_> = rows(&r)
        .into_iter()
        .filter(|e| e["status"] == "fail")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0]["kind"], "alert");
    assert!(
        failed[0]["detail"]
            .as_str()
            .unwrap()
            .contains("BreakerOpenTooLong fires ≤20s after fault[0] start: did not fire"),
        "{}",
        failed[0]["detail"]
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL [retry-gate] BreakerOpenTooLong"));
}

#[test]
fn the_disagreement_fixture_fires_after_three_minutes() {
    require_tools();
    let tmp = run::kept_on_failure("the_disagreement_fixture_fires_after_three_minutes");
    let out = rehearse_with_mutants(&["--scenario", "prometheus-disagreement"], tmp.path());
    let r = report_json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{:#?}",
        show(&out),
        detail_of(&r, "alert")
    );
    let table = r["policies"][0]["alerts"]["table"]
        .as_array()
        .unwrap()
        .clone();
    let fired = table[0]["fired_ms"].as_i64().expect("fired");
    assert!(fired >= 180_000, "the 3-minute alert fired at {fired} ms");
    assert!(monitoring_processes_under(tmp.path()).is_empty());
    mutants_hold(&out, "prometheus-disagreement");
}

/// Waits until Prometheus of the run under `dir` runs; its pid.
fn wait_for_prometheus(dir: &Path, within: Duration) -> Vec<(u32, String)> {
    let until = Instant::now() + within;
    loop {
        let found = monitoring_processes_under(dir);
        if found.iter().any(|(_, c)| c.contains("--storage.tsdb.path")) || Instant::now() > until {
            return found;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_run_killed_with_sigkill_leaves_no_prometheus_or_alertmanager() {
    require_tools();
    let tmp =
        run::kept_on_failure("a_run_killed_with_sigkill_leaves_no_prometheus_or_alertmanager");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args([
            "--scenario",
            "prometheus-breaker-open",
            "--no-progress",
            "--report-dir",
        ])
        .arg(tmp.path())
        .current_dir(repo_root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = wait_for_prometheus(tmp.path(), Duration::from_secs(40));
    assert!(
        running.len() >= 2,
        "prometheus and alertmanager never ran: {running:?}"
    );
    std::thread::sleep(Duration::from_secs(5));
    child.kill().unwrap(); // SIGKILL: nothing of the run gets to clean up
    child.wait().unwrap();
    // The watchdogs: SIGTERM, SIGKILL after 3 s.
    let until = Instant::now() + Duration::from_secs(15);
    let mut left = monitoring_processes_under(tmp.path());
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
        left = monitoring_processes_under(tmp.path());
    }
    assert!(left.is_empty(), "left running after kill -9: {left:?}");
}

#[test]
fn prometheus_dying_mid_run_is_a_harness_failure_with_its_last_log_lines() {
    require_tools();
    let tmp = run::kept_on_failure(
        "prometheus_dying_mid_run_is_a_harness_failure_with_its_last_log_lines",
    );
    let dir = tmp.path().to_path_buf();
    let killer = std::thread::spawn(move || {
        let running = wait_for_prometheus(&dir, Duration::from_secs(40));
        std::thread::sleep(Duration::from_secs(5));
        let (pid, _) = running
            .iter()
            .find(|(_, c)| c.contains("--storage.tsdb.path"))
            .expect("prometheus running")
            .clone();
        // SAFETY: kill(2) on a pid this test found; no memory involved.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    });
    let out = rehearse(&["--scenario", "prometheus-breaker-open"], tmp.path());
    killer.join().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "error");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("prometheus exited mid-run"), "{reason}");
    assert!(reason.contains("last log lines"), "{reason}");
    assert!(monitoring_processes_under(tmp.path()).is_empty());
}

/// `rehearse validate PATH`.
fn validate(path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .arg("validate")
        .arg(path)
        .current_dir(repo_root())
        .output()
        .expect("spawn rehearse")
}

/// A scenario in `dir` from the breaker-open fixture with `edit` applied.
fn bad(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    mutated_copy("prometheus-breaker-open", dir, "bad", edit)
}

#[test]
fn bad_input_is_exit_2_saying_what_and_where() {
    require_tools();
    let tmp = run::kept_on_failure("bad_input_is_exit_2_saying_what_and_where");
    let dir = tmp.path();

    // Another speed.
    let out = rehearse(
        &[
            "run",
            "--scenario",
            fixture("prometheus-breaker-open").to_str().unwrap(),
            "--speed",
            "2",
        ],
        dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("speed 1 only") && err.contains("wall"),
        "{err}"
    );

    // No prometheus on PATH.
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--scenario"])
        .arg(fixture("prometheus-breaker-open"))
        .args(["--no-progress", "--report-dir"])
        .arg(dir)
        .env("PATH", dir)
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`prometheus`") && err.contains("apt-get install prometheus"),
        "{err}"
    );

    // A rule file promtool rejects: its file and line.
    std::fs::write(
        dir.join("broken.yml"),
        "groups:\n- name: g\n  rules:\n  - alert: BreakerOpen\n    expr: breaker_state >\n  \
         - alert: BreakerOpenTooLong\n    expr: breaker_state > 2\n",
    )
    .unwrap();
    let s = bad(dir, |t| {
        t.replace(
            "alertmanager = true",
            "alertmanager = true\nrules = [\"broken.yml\"]",
        )
    });
    let out = rehearse(&["run", "--scenario", s.to_str().unwrap()], dir);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.yml: 5:"), "{err}");
    assert!(err.contains("promtool check rules rejected it"), "{err}");

    // An unknown alert name: file:line:col, the nearest name and every name there is.
    let s = bad(dir, |t| {
        t.replace("alert = \"BreakerOpen\"", "alert = \"BreakerOpn\"")
    });
    let text = std::fs::read_to_string(&s).unwrap();
    let line = text.lines().position(|l| l.contains("BreakerOpn")).unwrap() + 1;
    for out in [
        validate(&s),
        rehearse(&["run", "--scenario", s.to_str().unwrap()], dir),
    ] {
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{}:{line}:9: ", s.display())),
            "{err}"
        );
        assert!(err.contains("did you mean `BreakerOpen`?"), "{err}");
        assert!(err.contains("BreakerOpenTooLong"), "{err}");
    }

    // The weekly job's rule: its series are written after a run, never by the system under
    // test, so a rehearsal's Prometheus leaves it out and an expectation on it is refused.
    let s = bad(dir, |t| {
        t.replace(
            "alert = \"BreakerOpenTooLong\"",
            "alert = \"RehearsalNotSucceeded\"",
        )
    });
    let out = validate(&s);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`RehearsalNotSucceeded` watches the weekly job's batch-job series"),
        "{err}"
    );

    // The scenario's own rule file defines the names its alerts may use.
    let rules = repo_root().join("fixtures/rules/breaker-fast.yml");
    let s = bad(dir, |t| {
        t.replace(
            "alertmanager = true",
            &format!(
                "alertmanager = true\nrules = [{:?}]",
                rules.display().to_string()
            ),
        )
    });
    let out = validate(&s);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("alerts: BreakerNotClosedFast)"));
}

/// Every fleet host is a target of the run's Prometheus: `prometheus-breaker-open` as a fleet of
/// two hosts (no coordination), judged on its alerts alone. Each host trips its own crm_search
/// breaker on the storm; BreakerOpen fires (one series per host), pages and resolves.
#[test]
fn a_fleet_runs_prometheus_over_every_host_and_is_judged_on_its_alerts() {
    require_tools();
    let tmp =
        run::kept_on_failure("a_fleet_runs_prometheus_over_every_host_and_is_judged_on_its_alerts");
    let fleet = mutated_copy("prometheus-breaker-open", tmp.path(), "fleet", |s| {
        let start = s.find("# The breaker trips").expect("transition block");
        let end = s.find("# BreakerOpen (").expect("alert block");
        let t = format!(
            "{}{}",
            s[..start]
                .replace(
                    "workers = 4\n",
                    "workers = 4\n\n[fleet]\nhosts = 2\ncoordination = [\"none\"]\n"
                )
                // Prometheus scrapes every 2 s, so each scrape of a host (a debug build, beside
                // the suite's real gateways) may take up to 2 s: with 1 s, one slow scrape under
                // CI load was `up = 0`, which rightly fails the `never fires` row.
                .replace(
                    "spawn = true\nscrape_interval = \"1s\"\n",
                    "spawn = true\nscrape_interval = \"2s\"\n"
                ),
            &s[end..]
        );
        assert!(t.contains("[fleet]"), "no workers line to follow");
        assert!(
            t.contains("scrape_interval = \"2s\""),
            "no [prometheus] scrape_interval"
        );
        t
    });
    let out = rehearse_with_mutants(&["run", "--scenario", fleet.to_str().unwrap()], tmp.path());
    let r = report_json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\nalerts: {:#?}",
        show(&out),
        detail_of(&r, "alert")
    );
    let p = &r["policies"][0];
    let table = p["alerts"]["table"].as_array().expect("alert table");
    assert!(table[0]["fired_ms"].is_i64(), "{table:#?}");
    assert!(table[0]["resolved_ms"].is_i64(), "{table:#?}");
    // Both hosts were Prometheus's targets: BreakerOpen fired once per host (its `instance`).
    let firing: std::collections::BTreeSet<String> = p["alerts"]["spells"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["state"] == "firing")
        .filter_map(|s| {
            let a = s["alert"].as_str()?;
            let i = a.find("instance=\"")? + "instance=\"".len();
            Some(a[i..].split('"').next()?.to_string())
        })
        .collect();
    assert_eq!(
        firing.len(),
        2,
        "one firing series per host: {:#}",
        p["alerts"]
    );
    // Both hosts were the run's targets.
    let w = &rows(&r)[0]["witness"];
    assert_eq!(w["run_targets"], 2, "{w}");
    assert!(monitoring_processes_under(tmp.path()).is_empty());
    mutants_hold(&out, "prometheus-breaker-open as a fleet");
}
