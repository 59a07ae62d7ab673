//! No false PASS from a scenario that can only pass vacuously: a metric
//! series the engine does not export, a label its family does not have, a dep nothing in the
//! scenario produces, an empty traffic file, traffic that lies wholly after `duration`. Each is
//! exit 2 from `validate` and from `run` (through the real binary), names file:line:col of the
//! offending value, and `run` creates no run directory. Every fixture scenario still validates.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::run::{fixture, mutated_copy, repo_root, show};

/// 1-based line and column of the first occurrence of `needle` in the file at `path`.
pub(crate) fn where_is(path: &Path, needle: &str) -> (usize, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in {}", path.display()));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// Runs `validate PATH` and `run --scenario PATH`; both must exit 2 with `PATH:LINE:COL: ` and
/// every `wants` fragment on stderr, and the run must leave its report dir uncreated.
pub(crate) fn assert_rejected(path: &Path, at: (usize, usize), wants: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let p = path.to_str().unwrap();
    let r = reports.to_str().unwrap();
    for args in [
        vec!["validate", p],
        vec!["run", "--scenario", p, "--speed", "8", "--report-dir", r],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(&args)
            .current_dir(repo_root())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let loc = format!("{p}:{}:{}: ", at.0, at.1);
        assert!(
            stderr.contains(&loc),
            "{args:?}: stderr lacks `{loc}`: {stderr}"
        );
        for w in wants {
            assert!(stderr.contains(w), "{args:?}: stderr lacks `{w}`: {stderr}");
        }
        assert!(
            !reports.exists(),
            "{args:?}: a rejected scenario created {}",
            reports.display()
        );
    }
}

/// The smoke fixture with `extra` appended.
pub(crate) fn smoke_plus(dir: &Path, tag: &str, extra: &'static str) -> PathBuf {
    mutated_copy("smoke", dir, tag, move |s| format!("{s}\n{extra}"))
}

/// `[engine.timeouts]` adaptive keys that cannot work are exit 2 at their value.
#[test]
fn bad_adaptive_deadline_keys_are_exit_2_at_their_value() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str, &[&str]); 4] = [
        (
            "factor",
            "factor = 1.5",
            "factor = 0.5",
            &["engine.timeouts.factor", "at least 1"],
        ),
        (
            "min",
            "minSamples = 10",
            "minSamples = 100",
            &["engine.timeouts.minSamples", "between 1 and `window`"],
        ),
        (
            "cap",
            "toolCallCap = \"30s\"",
            "toolCallCap = \"500ms\"",
            &["engine.timeouts.toolCallCap", "not be below toolCallFloor"],
        ),
        (
            "policy",
            "adaptive = [\"retry-gate\"]",
            "adaptive = [\"retry-gat\"]",
            &[
                "engine.timeouts.adaptive",
                "`retry-gat` is not one of this scenario's policies",
            ],
        ),
    ];
    for (tag, from, to, wants) in cases {
        let path = mutated_copy("adaptive-deadlines", tmp.path(), tag, |s| {
            assert!(s.contains(from), "{from}");
            s.replacen(from, to, 1)
        });
        let (line, col) = where_is(&path, to);
        let value_col = col + to.find('=').unwrap() + 2;
        assert_rejected(&path, (line, value_col), wants);
    }
}

#[test]
fn a_misspelt_series_is_exit_2_at_its_value_with_a_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    let path = smoke_plus(
        tmp.path(),
        "series",
        "[[expect.metric]]\nseries = 'request_total'\nequals = 0\n",
    );
    let (line, col) = where_is(&path, "'request_total'");
    assert_rejected(
        &path,
        (line, col + 1),
        &[
            "expect.metric[1].series",
            "`request_total` is not a series the engine exports",
            "did you mean `requests_total`?",
            "profile_cooldowns_total",
        ],
    );
}

#[test]
fn a_misspelt_label_is_exit_2_at_the_label_naming_the_family_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let path = smoke_plus(
        tmp.path(),
        "label",
        "[[expect.metric]]\nseries = 'requests_total{dep=\"calculator\",outcom=\"ok\"}'\nat_most = 0\n",
    );
    let at = where_is(&path, "outcom=\"ok\"");
    assert_rejected(
        &path,
        at,
        &[
            "`requests_total` has no label `outcom`",
            "did you mean `outcome`?",
            "(its labels: dep, outcome)",
        ],
    );
}

#[test]
fn host_bounds_of_an_attempts_table_are_checked_at_their_value() {
    let tmp = tempfile::tempdir().unwrap();
    let path = smoke_plus(
        tmp.path(),
        "hosts",
        "[[expect.attempts]]\nmodel = \"openai-codex/gpt-5.2\"\nhosts_at_least = 3\nhosts_at_most = 1\n",
    );
    let (line, col) = where_is(&path, "hosts_at_most = 1");
    assert_rejected(
        &path,
        (line, col + "hosts_at_most = ".len()),
        &[
            "expect.attempts[0].hosts_at_most",
            "is below `hosts_at_least`",
        ],
    );
}

#[test]
fn a_dep_nothing_produces_is_an_error_in_every_expectation_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &'static str, &str); 4] = [
        (
            "transition",
            "[[expect.transition]]\ndep = \"crm_serch\"\nfrom = \"closed\"\nto = \"open\"\n",
            "crm_serch",
        ),
        (
            "no-transition",
            "[[expect.no_transition]]\ndep = \"calculater\"\n",
            "calculater",
        ),
        (
            "probe-spacing",
            "[[expect.probe_spacing]]\ndep = \"ghost_tool\"\nmin = \"250ms\"\n",
            "ghost_tool",
        ),
        (
            "metric-dep",
            "[[expect.metric]]\nseries = 'requests_total{dep=\"calculater\"}'\nat_most = 0\n",
            "calculater",
        ),
    ];
    for (tag, extra, dep) in cases {
        let path = smoke_plus(tmp.path(), tag, extra);
        let at = where_is(&path, &format!("\"{dep}\""));
        let msg = format!("`{dep}` is not a dep this scenario can produce");
        let mut wants = vec![msg.as_str(), "(deps: calculator, crm_search, openai-codex/"];
        if dep != "ghost_tool" {
            wants.push("did you mean `c");
        }
        assert_rejected(&path, (at.0, at.1 + 1), &wants);
    }
}

#[test]
fn empty_traffic_and_traffic_after_duration_are_exit_2_naming_the_traffic_file() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.jsonl");
    std::fs::write(&empty, "\n").unwrap();
    // The smoke traffic moved 100 s later: every request after the 21 s duration.
    let smoke = std::fs::read_to_string(repo_root().join("fixtures/traffic/smoke.jsonl")).unwrap();
    let late_text: String = smoke
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["at_ms"] = (v["at_ms"].as_u64().unwrap() + 100_000).into();
            format!("{v}\n")
        })
        .collect();
    let late = tmp.path().join("late.jsonl");
    std::fs::write(&late, late_text).unwrap();
    for (tag, traffic, want) in [
        ("empty", &empty, "has no requests"),
        ("late", &late, "falls at or after `duration` (21s)"),
    ] {
        let t = traffic.display().to_string();
        let path = mutated_copy("smoke", tmp.path(), tag, |s| {
            let line = s.lines().find(|l| l.starts_with("traffic = ")).unwrap();
            s.replace(line, &format!("traffic = {t:?}"))
        });
        let (line, _) = where_is(&path, "traffic = ");
        assert_rejected(&path, (line, 11), &["traffic: ", &t, want]);
    }
    // A bare traffic file with no requests is refused too.
    let out = crate::support::rehearse(&["validate", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no requests"));
}

#[test]
fn every_fixture_scenario_validates_and_cut_traffic_is_counted() {
    let dir = repo_root().join("fixtures/scenarios");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for p in &names {
        let out = crate::support::rehearse(&["validate", p.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            p.display(),
            show(&out)
        );
    }
    // crm-search-503-storm replays 100 s of a 180 s recording: the cut is said, with its count.
    let path = fixture("crm-search-503-storm");
    let out = crate::support::rehearse(&["validate", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("1800 requests (800 after `duration`, left out)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("800 of 1800 requests fall at or after `duration` (1m 40s)"),
        "{stderr}"
    );
}
