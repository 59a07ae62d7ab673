//! Every fixture scenario passes at the speed CI uses, the README's run
//! command works from the repository root, and the report files match docs/report.md, the JSON Schema
//! and the JUnit reader.

use std::thread;

use crate::support::reading::{
    assert_retry_delays_are_scenario_time, assert_rows_carry_both_times, fault,
};
use crate::support::run::{
    assert_canaries_reconcile, assert_mutants, fixture, repo_root, report_json, reported_path,
    run_in_with_mutants, run_scenario, show, without_prometheus,
};

/// The fixture scenarios and the `--speed` CI runs them at (wall time = duration / speed).
/// `smoke` runs exactly as the README says: by name, from the repo root, at speed 1.
pub const CI_SPEEDS: &[(&str, f64)] = &[
    ("crm-search-503-storm", 4.0),
    ("retry-after-429", 8.0),
    ("timeout-storm", 4.0),
    ("stream-resets", 4.0),
    ("websocket-ping", 4.0),
    ("budget-idempotency", 4.0),
    ("weekly", 10.0),
    ("adaptive-deadlines", 4.0),
];

/// The scenario's `duration` × its number of policies, in seconds at speed 1.
fn wall_secs(name: &str) -> f64 {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    let d = humantime::parse_duration(v["duration"].as_str().unwrap()).unwrap();
    let policies = v
        .get("policies")
        .and_then(|p| p.as_array())
        .map_or(1, |p| p.len());
    d.as_secs_f64() * policies as f64
}

fn assert_report_files(md: &std::path::Path) {
    let dir = md.parent().expect("run dir");
    for f in [
        "report.md",
        "report.json",
        "report.html",
        "report.junit.xml",
        "scrapes.prom.gz",
        "events.jsonl",
        "upstream.jsonl",
    ] {
        let p = dir.join(f);
        assert!(p.is_file(), "{} missing", p.display());
    }
    let scrapes = rehearse::scrape::read_scrapes(&dir.join("scrapes.prom.gz")).unwrap();
    assert_eq!(scrapes.torn, None, "a finished run's scrapes are whole");
    let prom = scrapes.text;
    let headers = prom
        .lines()
        .filter(|l| l.starts_with("# scrape t_ms="))
        .count();
    assert!(headers > 0, "scrapes.prom.gz has no `# scrape t_ms=N` line");
    assert!(
        scrapes.members >= headers,
        "one gzip member per scrape: {} members, {headers} scrapes",
        scrapes.members
    );
    for f in ["events.jsonl", "upstream.jsonl"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.lines().count() > 10, "{f} nearly empty");
        for line in text.lines() {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("{f}: {e}: {line}"));
        }
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<svg"), "report.html has no SVG timeline");
}

fn assert_design9_keys(r: &serde_json::Value) {
    for k in [
        "schema_version",
        "scenario",
        "verdict",
        "started_at",
        "speed",
        "seed",
        "host",
        "policies",
        "replay",
    ] {
        assert!(r.get(k).is_some(), "report.json lacks `{k}`");
    }
    assert!(r["replay"]["sent"].as_u64().unwrap() > 0);
    for q in ["p50", "p99", "max"] {
        assert!(r["replay"]["lag_ms"][q].is_number(), "replay.lag_ms.{q}");
    }
    let p = &r["policies"][0];
    assert!(p["transitions"].is_array());
    let e = &p["expectations"][0];
    for k in [
        "kind", "dep", "expected", "observed", "delta_ms", "ok", "detail",
    ] {
        assert!(e.get(k).is_some(), "expectations[] lacks `{k}`: {e}");
    }
}

/// How many scenario processes run at once. Eight at once on a 2-core machine (plus the rest of
/// the suite) starved the ×10 weekly run of CPU: its transitions came seconds late. Three lanes,
/// longest first, keep the wall time near a minute.
const LANES: usize = 3;

#[test]
fn every_fixture_scenario_passes_at_ci_speed_and_the_readme_command_works() {
    let tmp = tempfile::tempdir().unwrap();
    // (name, CI speed or None for the README's command, verbatim but for the report directory:
    // by NAME, from the root, at speed 1), longest wall time first.
    let mut jobs: Vec<(String, Option<f64>, f64)> = CI_SPEEDS
        .iter()
        .map(|(n, s)| (n.to_string(), Some(*s), wall_secs(n) / s))
        .collect();
    jobs.push(("smoke".into(), None, wall_secs("smoke")));
    jobs.sort_by(|a, b| b.2.total_cmp(&a.2));
    let queue = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::from(
        jobs,
    )));
    let mut lanes = Vec::new();
    for _ in 0..LANES {
        let queue = queue.clone();
        let root = tmp.path().to_path_buf();
        lanes.push(thread::spawn(move || {
            let mut done = Vec::new();
            loop {
                let Some((name, speed, _)) = queue.lock().unwrap().pop_front() else {
                    return done;
                };
                // The scenario file that ran (the count of checks is that file's).
                let (out, ran) = match speed {
                    None => {
                        let dir = root.join("readme");
                        let dir = dir.to_str().unwrap();
                        let out = run_in_with_mutants(
                            &repo_root(),
                            &["--scenario", "smoke", "--report-dir", dir],
                        );
                        (out, fixture("smoke"))
                    }
                    Some(speed) => {
                        let dir = root.join(&name);
                        // The detection path runs at speed 1 only (tests/detection).
                        let path = without_prometheus(&name, &root);
                        let out = run_in_with_mutants(
                            &repo_root(),
                            &[
                                "run",
                                "--scenario",
                                path.to_str().unwrap(),
                                "--speed",
                                &speed.to_string(),
                                "--report-dir",
                                dir.to_str().unwrap(),
                            ],
                        );
                        (out, path)
                    }
                };
                done.push((name, out, ran));
            }
        }));
    }
    let handles: Vec<_> = lanes.into_iter().flat_map(|l| l.join().unwrap()).collect();
    let mut failures = Vec::new();
    for (name, out, ran) in handles {
        if out.status.code() != Some(0) {
            failures.push(format!("== {name}\n{}", show(&out)));
            continue;
        }
        let r = report_json(&out);
        assert_eq!(r["verdict"], "pass", "{name}: {}", show(&out));
        assert_eq!(r["scenario"], name.as_str());
        let md = reported_path(&out);
        assert!(md.ends_with("report.md"), "{}", md.display());
        assert_report_files(&md);
        assert_design9_keys(&r);
        if name == "retry-after-429" {
            assert_429_reads_right(&r);
        }
        assert_canaries_reconcile(&md);
        let dir = md.parent().unwrap();
        crate::report_contracts::assert_report_contracts(dir);
        crate::report_contracts::assert_counts_match_validate(dir, &ran);
        let (entries, mutants) = assert_mutants(dir);
        assert!(mutants > 0, "{name}: no expectation was perturbed");
        eprintln!("{name}: {mutants} perturbations of {entries} expectations, none passed");
        if name == "smoke" {
            assert_eq!(r["speed"], 1.0);
            assert!(
                md.starts_with(tmp.path().join("readme")),
                "{}",
                md.display()
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The 429 with `first = 1` applied once, at 10 s of scenario time, on crm_search only; the
/// breaker held open to its Retry-After deadline (10 s + 120 s), which the report marks.
fn assert_429_reads_right(r: &serde_json::Value) {
    assert_eq!(r["time_base"], "scenario");
    let p = &r["policies"][0];
    let ra = fault(p, 0);
    assert_eq!(
        (ra["kind"].as_str(), ra["first"].as_u64()),
        (Some("rate_limit"), Some(1))
    );
    assert_eq!(ra["applied_count"], 1, "{ra}");
    let hit = ra["applied"][0]["t_ms"].as_u64().unwrap();
    assert!(
        (10_000..10_600).contains(&hit),
        "first crm_search call from 10 s: {hit}"
    );
    assert_eq!(ra["lanes"], serde_json::json!(["crm_search"]));
    let storm = fault(p, 1);
    assert_eq!(
        (storm["from_ms"].as_u64(), storm["until_ms"].as_u64()),
        (Some(10_000), Some(30_000))
    );
    assert_eq!(
        storm["lanes"],
        serde_json::json!(["crm_search"]),
        "not on calculator's lane"
    );
    // The engine holds the deadline from when it read the 429 (hit + 120 s of scenario time),
    // later by the answer's way back; within the scenario's own 2 s tolerance.
    let deadlines = p["marks"]["retry_after"].as_array().unwrap();
    assert!(
        deadlines.iter().any(|d| d["dep"] == "crm_search"
            && (hit + 120_000 - 8..=hit + 122_000).contains(&d["until_ms"].as_u64().unwrap())),
        "Retry-After deadline at the 429 ({hit} ms) + 120 s: {deadlines:?}"
    );
}

#[test]
fn timeout_storm_report_shows_both_policies_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_scenario(&fixture("timeout-storm"), "6", tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r = report_json(&out);
    let policies: Vec<&str> = r["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    assert_eq!(policies, ["legacy", "retry-gate"]);
    let legacy = &r["policies"][0]["summary"];
    let gate = &r["policies"][1]["summary"];
    assert!(legacy["cooldowns_by_reason"]["timeout"].as_u64().unwrap() >= 3);
    assert!(legacy["fallbacks"].as_u64().unwrap() >= 1);
    assert_eq!(
        gate["cooldowns_by_reason"]
            .get("timeout")
            .and_then(|v| v.as_u64())
            .unwrap_or(0),
        0
    );
    assert_eq!(gate["fallbacks"], 0);
    let md = std::fs::read_to_string(reported_path(&out)).unwrap();
    assert!(md.contains("| `legacy` | `retry-gate` |"), "{md}");

    // One time base: rows carry wall and scenario time; the retry gate's announced delays are
    // scenario time.
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    assert_rows_carry_both_times(&dir, 6.0);
    let (retries, unambiguous) = assert_retry_delays_are_scenario_time(&dir, &r, 6.0);
    assert_eq!(retries, 3);
    // The first retry falls in the traffic's quiet stretch (11–26 s): nothing else on its
    // profile, so its arrival alone shows the delay is scenario time.
    assert!(
        unambiguous >= 1,
        "no retry was the first request after its announcement"
    );
    // Each `first = 1` stall applied once, from 10 s of scenario time, on its profile's lane only.
    for p in r["policies"].as_array().unwrap() {
        for i in 0..3 {
            let f = fault(p, i);
            assert_eq!(f["applied_count"], 1, "{f}");
            assert!(f["applied"][0]["t_ms"].as_u64().unwrap() >= 10_000, "{f}");
            let profile = f["profile"].as_str().unwrap();
            let dep = r["profiles"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["id"] == profile)
                .unwrap()["dep"]
                .clone();
            assert_eq!(f["lanes"], serde_json::json!([dep]), "{f}");
        }
    }
    // The difference the picture draws: legacy cools and falls back, the gate retries.
    let (lm, gm) = (&r["policies"][0]["marks"], &r["policies"][1]["marks"]);
    assert!(lm["cooldowns"].as_array().unwrap().len() >= 3, "{lm}");
    assert_eq!(lm["fallbacks"].as_array().unwrap().len(), 15, "{lm}");
    assert_eq!(gm["retries"].as_array().unwrap().len(), 3, "{gm}");
    assert_eq!(gm["cooldowns"].as_array().unwrap().len(), 0, "{gm}");
    // Exact latencies in scenario time: a stalled call ends at the 3 s TTFB timeout (500 ms of
    // wall clock at ×6).
    let lat = &r["policies"][0]["summary"]["latency_by_dep"];
    let worst = lat
        .as_object()
        .unwrap()
        .values()
        .inspect(|l| assert_eq!(l["exact"], true, "{l}"))
        .map(|l| l["max_ms"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        (2_900.0..4_000.0).contains(&worst),
        "max latency {worst} ms: {lat}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let (legacy, gate) = html.split_at(html.find("Policy <code>retry-gate</code>").unwrap());
    assert_eq!(legacy.matches("class=\"retry\"").count(), 0);
    assert!(legacy.matches("class=\"cooldown\"").count() >= 3);
    assert_eq!(
        gate[..gate.find("</svg>").unwrap()]
            .matches("class=\"retry\"")
            .count(),
        3
    );
    // The `first = 1` stalls are aimed at user calls; canaries never see them
    // (they used to be stalled by them), and none is failed by the end of the run.
    let (calls, failures) = assert_canaries_reconcile(&reported_path(&out));
    assert!(calls >= 10, "{calls} canaries");
    assert_eq!(failures, 0, "a canary failed in timeout-storm");
}

/// `adaptive-deadlines` with each run's expectations given to the other run: every one of them
/// must fail (so each arm's pass in the fixture is earned), while what the runs observed — the
/// "Deadlines" table, the deadlines that expired — tells fixed from adaptive. At ×1 the fixture
/// takes 2 minutes: `cargo run -- run --scenario adaptive-deadlines`.
#[test]
fn adaptive_deadlines_arms_fail_each_others_expectations() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("adaptive-deadlines")).unwrap();
    let traffic = repo_root().join("fixtures/traffic/adaptive-deadlines.jsonl");
    let mutant = text
        .replace(
            "traffic = \"../traffic/adaptive-deadlines.jsonl\"",
            &format!("traffic = {:?}", traffic.to_str().unwrap()),
        )
        .replace("policy = \"legacy\"", "policy = \"SWAP\"")
        .replace("policy = \"retry-gate\"", "policy = \"legacy\"")
        .replace("policy = \"SWAP\"", "policy = \"retry-gate\"");
    assert_ne!(mutant, text);
    let path = tmp.path().join("adaptive-deadlines.toml");
    std::fs::write(&path, mutant).unwrap();
    let out = run_scenario(&path, "4", tmp.path());
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let r = report_json(&out);
    assert_eq!(r["verdict"], "fail");
    for p in r["policies"].as_array().unwrap() {
        let name = p["policy"].as_str().unwrap();
        let judged: Vec<&serde_json::Value> = p["expectations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                ["transition", "no_transition", "metric"].contains(&e["kind"].as_str().unwrap())
            })
            .collect();
        // The other run's rows (9 given to legacy, 7 to the retry gate), plus a row per
        // transition they do not expect: every one fails.
        let want = if name == "legacy" { 9 } else { 7 };
        assert!(judged.len() >= want, "{name}: {judged:?}");
        for e in judged {
            assert_eq!(e["status"], "fail", "{name}: the other arm's row held: {e}");
        }
        // What the arm observed, whatever it was asked.
        let d = &p["summary"]["deadlines_by_dep"];
        let (heavy, light) = (&d["report_build"], &d["geo_lookup"]);
        if name == "legacy" {
            for row in [heavy, light] {
                assert_eq!(
                    (
                        row["min_ms"].as_u64(),
                        row["max_ms"].as_u64(),
                        row["source"].as_str()
                    ),
                    (Some(12_300), Some(12_300), Some("fixed")),
                    "{d}"
                );
            }
        } else {
            assert_eq!(heavy["start_ms"], 12_300, "{d}");
            assert!(heavy["end_ms"].as_u64().unwrap() >= 18_000, "{d}");
            // Its 1 s floor, or a little more after a late answer on a loaded machine.
            assert!(
                (1_000..=5_000).contains(&light["end_ms"].as_u64().unwrap()),
                "{d}"
            );
            assert_eq!(light["source"], "adaptive", "{d}");
        }
    }
    // The expired deadlines in the events: 12.3 s fixed, the adapted one (≈ 1 s) for the hung tool.
    let light_end = r["policies"][1]["summary"]["deadlines_by_dep"]["geo_lookup"]["end_ms"]
        .as_u64()
        .unwrap();
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    let events = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let expired = |policy: &str, dep: &str| -> Vec<(u64, String)> {
        events
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|e| e["policy"] == policy && e["dep"] == dep && e["deadline"].is_object())
            .map(|e| {
                (
                    e["deadline"]["ms"].as_u64().unwrap(),
                    e["log"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let fixed = expired("legacy", "geo_lookup");
    // (The half-open probe's own expiry carries the probe timeout.)
    let adaptive: Vec<_> = expired("retry-gate", "geo_lookup")
        .into_iter()
        .filter(|(_, log)| !log.ends_with("(probe deadline)"))
        .collect();
    assert!(
        fixed.len() >= 5 && adaptive.len() >= 5,
        "{fixed:?} {adaptive:?}"
    );
    assert!(
        fixed
            .iter()
            .all(|(ms, log)| *ms == 12_300 && log.ends_with("after 12300ms (fixed deadline)")),
        "{fixed:?}"
    );
    let tail = format!("after {light_end}ms (adaptive deadline)");
    assert!(
        adaptive
            .iter()
            .all(|(ms, log)| *ms == light_end && log.ends_with(&tail)),
        "{adaptive:?}"
    );
    // The model's stalled streams: held for the fixed 12 s inter-token deadline, cut at the
    // adapted one (its 1 s floor, or a little more).
    let model = "anthropic/default/154a23";
    let stream_end = r["policies"][1]["summary"]["deadlines_by_dep"]
        [format!("{model} (inter_token)")]["end_ms"]
        .as_u64()
        .unwrap();
    assert!((1_000..=4_000).contains(&stream_end), "{stream_end}");
    let (fixed, adaptive) = (expired("legacy", model), expired("retry-gate", model));
    assert!(
        fixed.len() >= 3 && adaptive.len() >= 3,
        "{fixed:?} {adaptive:?}"
    );
    assert!(
        fixed
            .iter()
            .all(|(ms, log)| *ms == 12_000 && log.contains("inter_token after 12000ms (fixed")),
        "{fixed:?}"
    );
    // Each cut at the deadline adapted so far: its floor, or a little more once a late frame
    // on a loaded machine lifted the p99 (1000 then 1158 ms seen).
    assert!(
        adaptive.iter().all(|(ms, log)| (1_000..=4_000).contains(ms)
            && log.ends_with(&format!("inter_token after {ms}ms (adaptive deadline)"))),
        "{adaptive:?}"
    );
    assert!(
        adaptive.iter().any(|(ms, _)| *ms == stream_end),
        "{adaptive:?}"
    );
    assert!(expired("retry-gate", "report_build").is_empty());
    let md = std::fs::read_to_string(reported_path(&out)).unwrap();
    assert!(md.contains("### Deadlines"), "{md}");
}

#[test]
fn validate_accepts_every_fixture_and_list_names_them() {
    let root = repo_root();
    let mut args = vec!["validate".to_string()];
    for e in std::fs::read_dir(root.join("fixtures/scenarios")).unwrap() {
        args.push(e.unwrap().path().display().to_string());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(&refs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .arg("list")
        .current_dir(&root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    for (name, _) in CI_SPEEDS.iter().chain([("smoke", 1.0)].iter()) {
        assert!(
            stdout.lines().any(|l| l.starts_with(name)),
            "list lacks {name}: {stdout}"
        );
    }
}
