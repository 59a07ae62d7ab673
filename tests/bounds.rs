//! Bounds over what happened (issue 35, points 5–7): a `latency_at_most` no turn can exceed
//! is refused; a wall-clock quantity gives the same verdict at every speed the scenario accepts
//! (a seconds gauge converted to scenario time, a `_bucket{le}` refused off speed 1); a selector
//! label value nothing can export is refused (the engine) or fails (a foreign gateway's
//! `metrics_url`, judged on what its scrapes held); and `validate` refuses what the run's
//! preflight refuses: a rule file promtool rejects, a `[prometheus] url` without a port.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use crate::scenario_validate::{assert_rejected, smoke_plus, where_is};
use crate::support::loopback::{answer, free_port, read_request, relay};
use crate::support::run::{mutated_copy, repo_root, report_json, run_scenario, show};

fn rehearse(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap()
}

/// Every expectation row of every arm of a report.json.
fn rows(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["policies"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["expectations"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn a_latency_bound_at_or_over_turn_timeout_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = http_scenario(
        tmp.path(),
        "latency-over",
        1,
        free_port(),
        "[[expect.turn]]\nlatency_at_most = \"6s\"\n",
    );
    let (l, c) = where_is(&p, "\"6s\"\n");
    let (l2, c2) = where_is(&p, "latency_at_most");
    assert!(l2 == l && c == c2 + "latency_at_most = ".len(), "{l}:{c}");
    assert_rejected(&p, (l, c), &["could never fail", "turn_timeout"]);
    // Under the timeout it is a bound.
    let p = http_scenario(
        tmp.path(),
        "latency-under",
        1,
        free_port(),
        "[[expect.turn]]\nlatency_at_most = \"4s\"\n",
    );
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

/// A foreign gateway's `dep` label is its own: `breaker_state{dep="model"}` of an `http`
/// target's `metrics_url` is judged on its scrapes, not refused as an engine dep.
#[test]
fn a_gateway_selectors_dep_label_is_not_checked_against_the_engines_deps() {
    let tmp = tempfile::tempdir().unwrap();
    let p = http_scenario(
        tmp.path(),
        "gateway-dep",
        1,
        free_port(),
        "[[expect.metric]]\nseries = 'breaker_state{dep=\"model\"}'\nequals = 0\n",
    );
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn an_engine_label_value_no_run_can_export_is_refused_with_the_nearest() {
    let tmp = tempfile::tempdir().unwrap();
    let p = smoke_plus(
        tmp.path(),
        "crm-serch",
        "[[expect.metric]]\nseries = 'breaker_transitions_total{dep=\"crm_serch\",to=\"open\"}'\nequals = 0\n",
    );
    let (l, c) = where_is(&p, "crm_serch");
    assert_rejected(&p, (l, c), &["`crm_serch`", "did you mean `crm_search`?"]);
    // A value of the engine's own words (an outcome) nothing exports.
    let p = smoke_plus(
        tmp.path(),
        "timout",
        "[[expect.metric]]\nseries = 'requests_total{dep=\"crm_search\",outcome=\"timout\"}'\nequals = 0\n",
    );
    let (l, c) = where_is(&p, "timout\"");
    assert_rejected(&p, (l, c), &["did you mean `timeout`?", "sum nothing to 0"]);
}

#[test]
fn a_bucket_selector_is_refused_off_speed_1_and_judged_at_1() {
    let tmp = tempfile::tempdir().unwrap();
    let p = smoke_plus(
        tmp.path(),
        "bucket",
        "[[expect.metric]]\nseries = 'request_latency_seconds_bucket{dep=\"calculator\",le=\"+Inf\"}'\nat_least = 1\n",
    );
    let s = p.to_str().unwrap();
    let (l, c) = where_is(&p, "request_latency_seconds_bucket");
    let loc = format!("{s}:{l}:{c}: ");
    let reports = tmp.path().join("reports");
    for args in [
        vec!["validate", "--speed", "2", s],
        vec![
            "run",
            "--scenario",
            s,
            "--speed",
            "2",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
    ] {
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&loc), "{args:?}: want {loc}: {err}");
        assert!(err.contains("refused at --speed 2"), "{err}");
        assert!(!reports.exists(), "a refused run made its report dir");
    }
    // At speed 1 (the weekly job's) the same file is fine.
    let out = rehearse(&["validate", s]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

/// crm_search fails every user request from 5 s (never a canary): its breaker opens ~7 s in
/// and stays open, the canaries (every 10 s) keep succeeding, and the disagreement gauge counts
/// from the first canary after the trip to the end (~50 s of 70).
fn disagreement(dir: &Path) -> PathBuf {
    mutated_copy("prometheus-disagreement", dir, "gauge", |s| {
        let cut = s.find("[prometheus]").expect("the [prometheus] table");
        let faults = s.find("# `first` counts").expect("the fault block");
        let rows = s.find("[[expect.alert]]").expect("the alert rows");
        format!(
            "{}{}\
             [[expect.metric]]\nseries = 'health_breaker_disagreement_seconds{{dep=\"crm_search\"}}'\n\
             at_least = 35\nat_most = 70\n\n\
             [[expect.metric]]\nseries = 'health_breaker_disagreement_seconds{{dep=\"crm_search\"}}'\n\
             at_most = 20\n",
            &s[..cut],
            &s[faults..rows]
        )
        .replace("duration = \"230s\"", "duration = \"70s\"")
    })
}

/// The same scenario, one verdict at ×2 and ×6: the seconds gauge is read in scenario time (at
/// ×6 the run's clock counts a sixth of the ~55 s: the old judge read ~9 s and passed the
/// `at_most = 20` row).
#[test]
fn a_seconds_gauge_gives_the_same_verdict_at_x2_and_x6() {
    let tmp = tempfile::tempdir().unwrap();
    let p = disagreement(tmp.path());
    for speed in ["2", "6"] {
        let out = run_scenario(&p, speed, &tmp.path().join(format!("r{speed}")));
        assert_eq!(out.status.code(), Some(1), "×{speed}: {}", show(&out));
        let r = report_json(&out);
        let m: Vec<_> = rows(&r)
            .into_iter()
            .filter(|e| e["kind"] == "metric")
            .collect();
        let statuses: Vec<_> = m.iter().map(|e| e["status"].clone()).collect();
        assert_eq!(statuses, ["pass", "fail"], "×{speed}: {m:#?}");
        for e in &m {
            let d = e["detail"].as_str().unwrap();
            assert!(d.contains("scenario time"), "×{speed}: {d}");
            assert!(e["witness"]["series"].as_u64() >= Some(1), "{e:#}");
        }
        let t: Vec<_> = rows(&r)
            .into_iter()
            .filter(|e| e["kind"] == "transition")
            .map(|e| e["status"].clone())
            .collect();
        assert_eq!(t, ["pass"], "×{speed}");
    }
}

/// Transitions are judged in scenario time at every speed: the breaker fixture passes alike at
/// ×2 and ×6, row for row.
#[test]
fn a_transition_fixture_gives_the_same_verdict_at_x2_and_x6() {
    let tmp = tempfile::tempdir().unwrap();
    let p = crate::support::run::fixture("crm-search-503-storm");
    let mut verdicts = Vec::new();
    for speed in ["2", "6"] {
        let out = run_scenario(&p, speed, &tmp.path().join(format!("r{speed}")));
        assert_eq!(out.status.code(), Some(0), "×{speed}: {}", show(&out));
        let r = report_json(&out);
        verdicts.push(
            rows(&r)
                .into_iter()
                .map(|e| (e["kind"].clone(), e["status"].clone()))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(verdicts[0], verdicts[1]);
    assert!(verdicts[0].len() >= 5, "{:?}", verdicts[0]);
}

/// 3 s of a turn every 200 ms against an `http` target on `port` (its `metrics_url` at
/// `/metrics`, `turn_timeout` 5 s), one profile `gpt-4o-key-B`, and `rows` appended.
fn http_scenario(dir: &Path, tag: &str, port: u16, upstream: u16, rows: &str) -> PathBuf {
    let traffic = dir.join(format!("{tag}.jsonl"));
    let lines: String = (1..12)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/gpt-4o\",\"stream\":false,\"max_tokens\":8,\"session\":\"s{i}\"}}\n",
                i * 200
            )
        })
        .collect();
    std::fs::write(&traffic, lines).unwrap();
    let text = format!(
        "name = \"{tag}\"\nduration = \"3s\"\ntraffic = {traffic:?}\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{port}\"\n\
         metrics_url = \"http://127.0.0.1:{port}/metrics\"\nturn_timeout = \"5s\"\n\n\
         [upstream]\nlisten = \"127.0.0.1:{upstream}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"gpt-4o-key-B\"\ntoken = \"sk-labels-B\"\n\n{rows}",
        traffic = traffic.display().to_string(),
    );
    let p = dir.join(format!("{tag}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// A LiteLLM-like gateway on loopback: relays every turn to the mock upstream, answers 200 and exports per-deployment
/// series that appear at their first request (`model_id="gpt-4o-key-A"`), as LiteLLM does.
struct Gateway {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(mut s: TcpStream, upstream: u16, turns: &AtomicU64) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let buf = read_request(&mut s);
    let req = String::from_utf8_lossy(&buf);
    let (ctype, body) = if req.starts_with("GET /metrics") {
        let n = turns.load(Ordering::SeqCst);
        let mut t = String::from("# TYPE litellm_deployment_success_responses_total counter\n");
        if n > 0 {
            t.push_str(&format!(
                "litellm_deployment_success_responses_total{{model_id=\"gpt-4o-key-A\",api_provider=\"mockai\"}} {n}\n"
            ));
        }
        t.push_str("# TYPE litellm_deployment_failure_responses_total counter\n");
        ("text/plain; version=0.0.4", t)
    } else {
        if req.starts_with("POST") && relay(upstream, "sk-labels-B", "gpt-4o") {
            turns.fetch_add(1, Ordering::SeqCst);
        }
        (
            "application/json",
            r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#.to_string(),
        )
    };
    answer(&mut s, "200 OK", ctype, &body);
}

fn gateway(upstream: u16) -> Gateway {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let turns = Arc::new(AtomicU64::new(0));
    let flag = stop.clone();
    thread::spawn(move || {
        while !flag.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let t = turns.clone();
                    thread::spawn(move || serve(s, upstream, &t));
                }
                Err(_) => thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    Gateway { port, stop }
}

/// A `metrics_url` selector is judged on what the gateway's scrapes held: a misspelt label
/// name or value sums nothing and fails with the nearest name seen (it used to pass
/// `equals = 0`); a deployment the target is configured with and that has no series yet (its
/// first failure never came) witnesses zero and passes; a value seen passes.
#[test]
fn a_gateway_selector_label_nobody_exported_fails_with_the_nearest() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = free_port();
    let gw = gateway(upstream);
    let p = http_scenario(
        tmp.path(),
        "labels",
        gw.port,
        upstream,
        "[[expect.metric]]\nseries = 'litellm_deployment_success_responses_total{model_id=\"gpt-4o-key-A\"}'\nat_least = 1\n\n\
         [[expect.metric]]\nseries = 'litellm_deployment_failure_responses_total{model_id=\"gpt-4o-key-B\"}'\nequals = 0\n\n\
         [[expect.metric]]\nseries = 'litellm_deployment_success_responses_total{model_id=\"gpt-4o-key-Z\"}'\nequals = 0\n\n\
         [[expect.metric]]\nseries = 'litellm_deployment_success_responses_total{modelid=\"gpt-4o-key-A\"}'\nequals = 0\n",
    );
    let out = rehearse(&[
        "run",
        "--no-progress",
        "--scenario",
        p.to_str().unwrap(),
        "--report-dir",
        tmp.path().join("reports").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let r = report_json(&out);
    let m: Vec<_> = rows(&r)
        .into_iter()
        .filter(|e| e["kind"] == "metric")
        .collect();
    let status: Vec<_> = m.iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["pass", "pass", "fail", "fail"], "{m:#?}");
    assert_eq!(m[0]["witness"]["label_values_seen"], 1, "{:#}", m[0]);
    assert_eq!(m[1]["witness"]["label_values_expected"], 1, "{:#}", m[1]);
    let z = m[2]["detail"].as_str().unwrap();
    assert!(z.contains("did you mean `gpt-4o-key-A`?"), "{z}");
    assert_eq!(m[2]["witness"]["label_values_unknown"], 1, "{:#}", m[2]);
    let name = m[3]["detail"].as_str().unwrap();
    assert!(
        name.contains("label `modelid`") && name.contains("did you mean `model_id`?"),
        "{name}"
    );
}

/// `validate` is the run's preflight: a rule file promtool rejects and a `[prometheus] url`
/// whose port is not a number are exit 2 from `validate`, as from `run`, before anything
/// starts.
#[test]
fn validate_refuses_what_the_runs_preflight_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("broken-rules.yml");
    std::fs::write(
        &rules,
        "groups:\n  - name: g\n    rules:\n      - alert: Broken\n        expr: max by (instance (breaker_state) > 0\n",
    )
    .unwrap();
    let shipped = repo_root().join("monitoring/rules.yml");
    let rules_line = format!(
        "rules = [{:?}, {:?}]\n",
        shipped.display().to_string(),
        rules.display().to_string()
    );
    let p = mutated_copy("prometheus-breaker-open", tmp.path(), "broken", move |s| {
        s.replace(
            "alertmanager = true\n",
            &format!("alertmanager = true\n{rules_line}"),
        )
    });
    let reports = tmp.path().join("reports");
    for args in [
        vec!["validate", p.to_str().unwrap()],
        vec![
            "run",
            "--scenario",
            p.to_str().unwrap(),
            "--report-dir",
            reports.to_str().unwrap(),
        ],
    ] {
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("broken-rules.yml"), "{args:?}: {err}");
        assert!(!reports.exists());
    }
    let p = mutated_copy("prometheus-breaker-open", tmp.path(), "notaport", |s| {
        let start = s.find("[prometheus]").unwrap();
        let end = start + s[start..].find("\n\n").unwrap();
        format!(
            "{}[prometheus]\nurl = \"http://127.0.0.1:notaport\"\n{}",
            &s[..start],
            &s[end..]
        )
    });
    let (l, c) = where_is(&p, "\"http://127.0.0.1:notaport\"");
    assert_rejected(&p, (l, c), &["`notaport` is not a port"]);
}
