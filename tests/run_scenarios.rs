//! Every fixture scenario passes at the speed CI uses (issue 6, "Must show"), the README's run
//! command works from the repository root, and the report files match DESIGN 9.

use std::thread;

use crate::support::run::{fixture, repo_root, report_json, reported_path, run_in, show};

/// The fixture scenarios and the `--speed` CI runs them at (wall time = duration / speed).
/// `smoke` runs exactly as the README says: by name, from the repo root, at speed 1.
pub const CI_SPEEDS: &[(&str, f64)] = &[
    ("crm-search-503-storm", 4.0),
    ("retry-after-429", 8.0),
    ("timeout-storm", 2.0),
    ("stream-resets", 4.0),
    ("websocket-ping", 4.0),
    ("budget-idempotency", 4.0),
    ("weekly", 10.0),
];

fn assert_report_files(md: &std::path::Path) {
    let dir = md.parent().expect("run dir");
    for f in [
        "report.md",
        "report.json",
        "report.html",
        "scrapes.prom",
        "events.jsonl",
        "upstream.jsonl",
    ] {
        let p = dir.join(f);
        assert!(p.is_file(), "{} missing", p.display());
    }
    let prom = std::fs::read_to_string(dir.join("scrapes.prom")).unwrap();
    assert!(
        prom.lines().any(|l| l.starts_with("# scrape t_ms=")),
        "scrapes.prom has no `# scrape t_ms=N` line"
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

#[test]
fn every_fixture_scenario_passes_at_ci_speed_and_the_readme_command_works() {
    let tmp = tempfile::tempdir().unwrap();
    let mut handles = Vec::new();
    // The README's command, verbatim but for the report directory: by NAME, from the root.
    let readme_dir = tmp.path().join("readme");
    handles.push(thread::spawn(move || {
        let dir = readme_dir.to_str().unwrap().to_string();
        let out = run_in(&repo_root(), &["--scenario", "smoke", "--report-dir", &dir]);
        ("smoke".to_string(), out)
    }));
    for (name, speed) in CI_SPEEDS {
        let dir = tmp.path().join(name);
        let path = fixture(name);
        handles.push(thread::spawn(move || {
            let out = run_in(
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
            (name.to_string(), out)
        }));
    }
    let mut failures = Vec::new();
    for h in handles {
        let (name, out) = h.join().unwrap();
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

#[test]
fn timeout_storm_report_shows_both_policies_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_in(
        &repo_root(),
        &[
            "run",
            "--scenario",
            fixture("timeout-storm").to_str().unwrap(),
            "--speed",
            "6",
            "--report-dir",
            tmp.path().to_str().unwrap(),
        ],
    );
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
