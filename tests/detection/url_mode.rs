//! `[prometheus] url = "…"`: a Prometheus the user runs (here one this test starts, with the
//! shipped rules and its own job name) finds the embedded engine through the `file_sd` targets
//! file the run rewrites (`targets_file`), and the run is judged on that Prometheus's alerts. A
//! Prometheus that does not read the run's targets file never scraped the run: its alert rows
//! fail (`never` is not reached), never pass. Without `targets_file` the embedded engine cannot
//! be found at all: exit 2 naming the key.

use std::path::Path;
use std::process::Command;

use super::prometheus::Prometheus;
use super::run::{mutated_copy, repo_root, report_json, reported_path, show};
use super::{detail_of, rehearse, require_tools, rows};

/// The user's Prometheus: the shipped rules (as `rehearse monitoring rules` prints them), a
/// scrape job of its own reading `dir/sd/rehearse.json`, 1 s intervals.
fn users_prometheus(dir: &Path) -> Prometheus {
    let work = dir.join("user-prometheus");
    std::fs::create_dir_all(work.join("data")).unwrap();
    std::fs::create_dir_all(dir.join("sd")).unwrap();
    let targets = dir.join("sd/rehearse.json");
    std::fs::write(&targets, "[]\n").unwrap();
    let rules = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["monitoring", "rules"])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(rules.status.success(), "{}", show(&rules));
    let rules_file = work.join("rules.yml");
    std::fs::write(&rules_file, &rules.stdout).unwrap();
    let config = format!(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {:?}\n\
         scrape_configs:\n  - job_name: my-services\n    file_sd_configs:\n      - files: [{:?}]\n        refresh_interval: 1s\n",
        rules_file.display().to_string(),
        targets.display().to_string()
    );
    Prometheus::start_with(&config, &work.join("data"), &work)
}

/// `prometheus-breaker-open` against the Prometheus on `port`, the run's targets written to
/// `targets_file` (relative to the scenario, which lands in `dir`); no Alertmanager (the
/// user's routes its own pages), so no `notified_within`.
fn url_scenario(dir: &Path, tag: &str, port: u16, targets_file: &str) -> std::path::PathBuf {
    mutated_copy("prometheus-breaker-open", dir, tag, |s| {
        let t = s
            .replace(
                "spawn = true\n",
                &format!("url = \"http://127.0.0.1:{port}\"\ntargets_file = \"{targets_file}\"\n"),
            )
            .replace("alertmanager = true\n", "")
            .replace("notified_within = \"10s\"\n", "");
        assert!(
            t.contains("targets_file") && !t.contains("alertmanager") && !t.contains("notified"),
            "the fixture's [prometheus] moved"
        );
        t
    })
}

#[test]
fn a_prometheus_the_user_runs_finds_the_engine_through_the_targets_file_and_judges_its_alerts() {
    require_tools();
    let tmp = tempfile::tempdir().unwrap();
    let prom = users_prometheus(tmp.path());
    let s = url_scenario(tmp.path(), "url", prom.port, "sd/rehearse.json");
    let out = rehearse(
        &["run", "--scenario", s.to_str().unwrap()],
        &tmp.path().join("r"),
    );
    let r = report_json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\nalerts: {:#?}\n{}",
        show(&out),
        detail_of(&r, "alert"),
        prom.log_text()
    );
    let table = r["policies"][0]["alerts"]["table"]
        .as_array()
        .expect("alert table");
    assert_eq!(table[0]["rule"], "BreakerOpen{dep=\"crm_search\"}");
    let fired = table[0]["fired_ms"].as_i64().expect("fired");
    let resolved = table[0]["resolved_ms"].as_i64().expect("resolved");
    assert!(fired > 5_000 && fired < resolved, "{table:?}");
    // `never` held: the user's Prometheus scraped the engine the whole run; the dashboards rule
    // was judged on its samples.
    for kind in ["alert", "dashboard"] {
        assert!(
            rows(&r)
                .iter()
                .filter(|e| e["kind"] == kind)
                .all(|e| e["status"] == "pass"),
            "{:#?}",
            detail_of(&r, kind)
        );
    }
    // Its own job, the run's labels; the file left empty after the run.
    let up = prom.api(
        "query",
        &[(
            "query",
            "count_over_time(up{job=\"my-services\",arm=\"retry-gate\",host=\"sut\"}[10m])",
        )],
        "up of the run",
    );
    let n: f64 = up["data"]["result"][0]["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no up series of the run: {up}"));
    assert!(n >= 50.0, "{n} scrapes of the 60 s run: {up}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("sd/rehearse.json")).unwrap(),
        "[]\n"
    );
    // Nothing of the run's own in the run directory: it started no Prometheus.
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    assert!(!run_dir.join("prometheus").exists());
    println!("user's Prometheus: fired {fired} ms, resolved {resolved} ms, {n} scrapes");
}

#[test]
fn a_prometheus_that_never_scraped_the_run_fails_its_alert_rows_and_no_targets_file_is_refused() {
    require_tools();
    let tmp = tempfile::tempdir().unwrap();
    let prom = users_prometheus(tmp.path());

    // No targets file: the engine's /metrics (a free port) cannot be in its scrape config.
    let s = mutated_copy("prometheus-breaker-open", tmp.path(), "no-sd", |s| {
        s.replace(
            "spawn = true\n",
            &format!("url = \"http://127.0.0.1:{}\"\n", prom.port),
        )
        .replace("alertmanager = true\n", "")
        .replace("notified_within = \"10s\"\n", "")
    });
    let text = std::fs::read_to_string(&s).unwrap();
    let line = text.lines().position(|l| l.starts_with("url = ")).unwrap() + 1;
    let out = rehearse(
        &["run", "--scenario", s.to_str().unwrap()],
        &tmp.path().join("r"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:{line}:", s.display())) && err.contains("targets_file"),
        "{err}"
    );

    // The run writes its targets where this Prometheus does not look: it scrapes nothing of it.
    let s = url_scenario(tmp.path(), "unseen", prom.port, "sd/elsewhere.json");
    let out = rehearse(
        &["run", "--scenario", s.to_str().unwrap()],
        &tmp.path().join("r"),
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "fail");
    let alerts: Vec<_> = rows(&r)
        .into_iter()
        .filter(|e| e["kind"] == "alert")
        .collect();
    assert_eq!(alerts.len(), 2, "{alerts:#?}");
    assert!(alerts.iter().all(|e| e["status"] != "pass"), "{alerts:#?}");
    let never = alerts
        .iter()
        .find(|e| {
            e["detail"]
                .as_str()
                .unwrap_or("")
                .contains("BreakerOpenTooLong")
        })
        .unwrap();
    assert_eq!(never["status"], "not_reached", "{never}");
    // The engine itself did what it should: its transition rows pass.
    assert!(
        rows(&r)
            .iter()
            .filter(|e| e["kind"] == "transition")
            .all(|e| e["status"] == "pass"),
        "{:#?}",
        rows(&r)
    );
}
