//! `[prometheus] url = "…"`: a Prometheus the user runs (here one this test starts, with the
//! shipped rules and its own job name) finds the embedded engine through the `file_sd` targets
//! file the run rewrites (`targets_file`), and the run is judged on that Prometheus's alerts. A
//! Prometheus that does not read the run's targets file never scraped the run: its alert rows
//! fail (`never` is not reached), never pass. Without `targets_file` the embedded engine cannot
//! be found at all: exit 2 naming the key.

use std::path::Path;
use std::process::Command;

use super::http_target::{Gateway, free_port};
use super::prometheus::Prometheus;
use super::run::{mutated_copy, repo_root, report_json, reported_path, show};
use super::{detail_of, mutants_hold, rehearse, rehearse_with_mutants, require_tools, rows};

/// The user's Prometheus: the shipped rules (as `rehearse monitoring rules` prints them), a
/// scrape job of its own reading `dir/sd/rehearse.json`, 1 s intervals.
fn users_prometheus(dir: &Path) -> Prometheus {
    users_prometheus_with(dir, "")
}

/// [`users_prometheus`] with more scrape jobs (`extra`: YAML list items under
/// `scrape_configs`).
fn users_prometheus_with(dir: &Path, extra: &str) -> Prometheus {
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
         scrape_configs:\n  - job_name: my-services\n    file_sd_configs:\n      - files: [{:?}]\n        refresh_interval: 1s\n{extra}",
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
    let tmp = crate::run::kept_on_failure(
        "a_prometheus_the_user_runs_finds_the_engine_through_the_targets_file_and_judges_its_alerts",
    );
    let prom = users_prometheus(tmp.path());
    let s = url_scenario(tmp.path(), "url", prom.port, "sd/rehearse.json");
    let out = rehearse_with_mutants(
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
    mutants_hold(&out, "prometheus-breaker-open with the user's Prometheus");
    println!("user's Prometheus: fired {fired} ms, resolved {resolved} ms, {n} scrapes");
}

#[test]
fn a_prometheus_that_never_scraped_the_run_fails_its_alert_rows_and_no_targets_file_is_refused() {
    require_tools();
    let tmp = crate::run::kept_on_failure(
        "a_prometheus_that_never_scraped_the_run_fails_its_alert_rows_and_no_targets_file_is_refused",
    );
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

/// A production exporter on loopback: every scrape says its `calculator` breaker is open.
struct Production(u16);

impl Production {
    fn start() -> Self {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut c) = conn else { continue };
                use std::io::{Read as _, Write as _};
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf);
                let body = "# TYPE breaker_state gauge\nbreaker_state{dep=\"calculator\"} 2\n";
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Production(port)
    }

    /// Its scrape job for the user's Prometheus.
    fn job(&self) -> String {
        format!(
            "  - job_name: production\n    static_configs:\n      - targets: [\"127.0.0.1:{}\"]\n",
            self.0
        )
    }
}

/// The user's Prometheus also scrapes a production exporter whose `calculator` breaker is open:
/// its BreakerOpen fires, and it is not the rehearsal's. The engine's calculator never trips, so
/// a row expecting its BreakerOpen to fire fails and a `never` on it holds (on the old code the
/// production alert passed the first and failed the second).
#[test]
fn an_alert_of_another_job_the_same_prometheus_scrapes_is_not_the_runs() {
    require_tools();
    let tmp = crate::run::kept_on_failure(
        "an_alert_of_another_job_the_same_prometheus_scrapes_is_not_the_runs",
    );
    let prod = Production::start();
    let prom = users_prometheus_with(tmp.path(), &prod.job());
    let s = url_scenario(tmp.path(), "prod", prom.port, "sd/rehearse.json");
    let mut text = std::fs::read_to_string(&s).unwrap();
    text.push_str(
        "\n[[expect.alert]]\nalert = \"BreakerOpen\"\nlabels = { dep = \"calculator\" }\nfires_within = \"40s\"\n\
         \n[[expect.alert]]\nalert = \"BreakerOpen\"\nlabels = { dep = \"calculator\" }\nnever = true\n",
    );
    std::fs::write(&s, text).unwrap();
    let out = rehearse(
        &["run", "--scenario", s.to_str().unwrap()],
        &tmp.path().join("r"),
    );
    let r = report_json(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\nalerts: {:#?}\n{}",
        show(&out),
        detail_of(&r, "alert"),
        prom.log_text()
    );
    let alerts: Vec<_> = rows(&r)
        .into_iter()
        .filter(|e| e["kind"] == "alert")
        .collect();
    let calc: Vec<_> = alerts
        .iter()
        .filter(|e| e["dep"].as_str().unwrap_or_default().contains("calculator"))
        .collect();
    assert_eq!(calc.len(), 2, "{alerts:#?}");
    let (fires, never) = (calc[0], calc[1]);
    assert_eq!(fires["status"], "fail", "{fires:#}");
    assert!(
        fires["detail"].as_str().unwrap().contains("did not fire"),
        "{fires:#}"
    );
    assert_eq!(never["status"], "pass", "{never:#}");
    // The production alert was there, and left out.
    let untied = never["witness"]["untied_alert_samples"]
        .as_u64()
        .unwrap_or(0);
    assert!(untied > 0, "the production alert never fired: {never:#}");
    // The engine's own crm_search alert is still the run's.
    let crm = alerts
        .iter()
        .find(|e| e["dep"].as_str().unwrap_or_default().contains("crm_search"))
        .unwrap();
    assert_eq!(crm["status"], "pass", "{crm:#}");
    // `up` of the run's own target, never the production job's.
    let up = never["witness"]["target_up_samples"].as_u64().unwrap();
    assert!((40..=70).contains(&up), "{never:#}");
    println!("production alert samples left out: {untied}; run's up samples: {up}");
}

/// An `http` target's fixed `metrics_url`, and a user's Prometheus that scrapes only itself:
/// `up` of another job is not the system under test's, so `never` is not reached (on the old
/// code it passed, "up = 1 the whole run").
#[test]
fn a_prometheus_scraping_only_itself_did_not_watch_the_run() {
    require_tools();
    let tmp =
        crate::run::kept_on_failure("a_prometheus_scraping_only_itself_did_not_watch_the_run");
    let dir = tmp.path();
    let work = dir.join("self-only");
    std::fs::create_dir_all(work.join("data")).unwrap();
    let rules = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["monitoring", "rules"])
        .output()
        .unwrap();
    let rules_file = work.join("rules.yml");
    std::fs::write(&rules_file, &rules.stdout).unwrap();
    let prom = Prometheus::start_on_port(
        |port| {
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {:?}\n\
                 scrape_configs:\n  - job_name: prometheus\n    static_configs:\n      - targets: [\"127.0.0.1:{port}\"]\n",
                rules_file.display().to_string()
            )
        },
        &work.join("data"),
        &work,
    );
    let (gw, up) = (free_port(), free_port());
    let _gateway = Gateway::start(gw, up);
    let traffic = dir.join("turns.jsonl");
    let lines: String = (1..20)
        .map(|s| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":8,\"session\":\"s{s}\"}}\n",
                s * 1000
            )
        })
        .collect();
    std::fs::write(&traffic, lines).unwrap();
    let s = dir.join("self-only.toml");
    std::fs::write(
        &s,
        format!(
            "name = \"self-only\"\nduration = \"20s\"\ntraffic = {:?}\nseed = 1\n\n\
             [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\n\
             metrics_url = \"http://127.0.0.1:{gw}/metrics\"\nturn_timeout = \"10s\"\n\n\
             [upstream]\nlisten = \"127.0.0.1:{up}\"\n\n\
             [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-metrics-key-A\"\n\n\
             [prometheus]\nurl = \"http://127.0.0.1:{}\"\n\n\
             [[expect.alert]]\nalert = \"BreakerOpen\"\nnever = true\n",
            traffic.display().to_string(),
            prom.port
        ),
    )
    .unwrap();
    let out = rehearse(&["run", "--scenario", s.to_str().unwrap()], &dir.join("r"));
    let r = report_json(&out);
    let row = rows(&r)
        .into_iter()
        .find(|e| e["kind"] == "alert")
        .unwrap_or_else(|| panic!("no alert row\n{}", show(&out)));
    assert_eq!(row["status"], "not_reached", "{row:#}\n{}", show(&out));
    assert!(
        row["detail"]
            .as_str()
            .unwrap()
            .contains("never scraped the system under test"),
        "{row:#}"
    );
    assert_eq!(row["witness"]["target_up_samples"], 0, "{row:#}");
    assert_eq!(row["witness"]["run_targets"], 0, "{row:#}");
    // It did evaluate the rule the whole while: the row is not refused for that.
    assert!(
        row["witness"]["rule_evaluations"].as_u64().unwrap() > 5,
        "{row:#}"
    );
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
}
