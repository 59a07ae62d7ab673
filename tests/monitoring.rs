//! The shipped monitoring (docs/alerts.md) checked by the real tools: `promtool check rules`,
//! the `promtool test rules` unit tests of every rule (and a mutant whose threshold is broken
//! failing them), `amtool check-config` on the example Alertmanager config, and the binary's
//! `rehearse monitoring` printing exactly the checked-in files. Missing tools fail the tests,
//! naming how to install them.

use std::path::Path;

use rehearse::monitoring::{alert_names, alert_rules, rehearsal_rules, shipped_rules};

use crate::support::prometheus::{run, tool};
use crate::support::rehearse;
use crate::support::run::{repo_root, show};

fn promtool() -> std::path::PathBuf {
    tool(&["promtool"])
}

/// `monitoring/tests/*.yml`, sorted.
fn rule_tests(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir.join("monitoring/tests"))
        .expect("monitoring/tests")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

#[test]
fn promtool_accepts_the_rules_and_every_rule_test_passes() {
    let root = repo_root();
    let (ok, out) = run(
        &promtool(),
        &["check", "rules", "monitoring/rules.yml"],
        &root,
    );
    let n = alert_rules(shipped_rules()).unwrap().len();
    assert!(ok, "promtool check rules:\n{out}");
    assert!(out.contains(&format!("SUCCESS: {n} rules found")), "{out}");
    let files = rule_tests(&root);
    assert!(files.len() >= 3, "{files:?}");
    let mut args = vec!["test", "rules"];
    args.extend(files.iter().map(String::as_str));
    let (ok, out) = run(&promtool(), &args, &root);
    assert!(ok, "promtool test rules:\n{out}");
    assert_eq!(out.matches("SUCCESS").count(), files.len(), "{out}");
    // What a rehearsal's own Prometheus evaluates: the same rules but the weekly job's.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rules-shipped.yml");
    std::fs::write(&f, rehearsal_rules()).unwrap();
    let (ok, out) = run(&promtool(), &["check", "rules", f.to_str().unwrap()], &root);
    assert!(ok, "promtool check rules (a rehearsal's):\n{out}");
    assert!(
        out.contains(&format!("SUCCESS: {} rules found", n - 1)),
        "{out}"
    );
}

#[test]
fn every_alert_is_tested_firing_not_firing_and_resolving() {
    let tests: String = rule_tests(&repo_root())
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    for name in alert_names(shipped_rules()).unwrap() {
        // Each check of an alert is one `alertname:` line; a firing one has its runbook in the
        // expected annotations.
        let checks = tests.matches(&format!("alertname: {name}\n")).count();
        assert!(
            checks >= 3,
            "{name}: {checks} checks (firing, not firing, resolving)"
        );
        let runbook = format!("runbook_url: \"docs/alerts.md#{}\"", name.to_lowercase());
        assert!(tests.contains(&runbook), "{name} is never expected to fire");
    }
}

#[test]
fn a_rule_with_a_broken_threshold_fails_its_promtool_test() {
    // The rules and tests copied, with the disagreement alert's 3 minutes made 30.
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    std::fs::create_dir_all(dir.path().join("monitoring/tests")).unwrap();
    let rules = shipped_rules().replace(
        "health_breaker_disagreement_seconds >= 180",
        "health_breaker_disagreement_seconds >= 30",
    );
    assert_ne!(rules, shipped_rules(), "the threshold to break is there");
    std::fs::write(dir.path().join("monitoring/rules.yml"), rules).unwrap();
    for f in rule_tests(&root) {
        let name = Path::new(&f).file_name().unwrap();
        std::fs::copy(&f, dir.path().join("monitoring/tests").join(name)).unwrap();
    }
    let (ok, out) = run(
        &promtool(),
        &["test", "rules", "monitoring/tests/breaker.yml"],
        dir.path(),
    );
    assert!(!ok, "the mutant passed:\n{out}");
    assert!(
        out.contains("FAILED") && out.contains("alertname: HealthBreakerDisagreement, time: 3m40s"),
        "{out}"
    );
}

#[test]
fn amtool_accepts_the_example_alertmanager_config() {
    let amtool = tool(&["amtool"]);
    let (ok, out) = run(
        &amtool,
        &["check-config", "monitoring/alertmanager.yml"],
        &repo_root(),
    );
    assert!(ok, "amtool check-config:\n{out}");
    assert!(out.contains("SUCCESS"), "{out}");
}

#[test]
fn the_binary_prints_the_checked_in_files() {
    let root = repo_root();
    for (what, file) in [
        ("rules", "monitoring/rules.yml"),
        ("alertmanager", "monitoring/alertmanager.yml"),
        ("dashboard", "monitoring/grafana/rehearse.json"),
    ] {
        let out = rehearse(&["monitoring", what]);
        assert!(out.status.success(), "{}", show(&out));
        let want = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout) == want,
            "`monitoring {what}` is not {file}"
        );
    }
    let out = rehearse(&[
        "monitoring",
        "rules",
        "--runbook-base",
        "https://git.example.com/ops/rehearse/blob/main",
    ]);
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "runbook_url: \"https://git.example.com/ops/rehearse/blob/main/docs/alerts.md#breakeropen\""
        ),
        "{text}"
    );
    // What it prints is still a rule file promtool accepts.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rules.yml"), text.as_bytes()).unwrap();
    let (ok, report) = run(&promtool(), &["check", "rules", "rules.yml"], dir.path());
    assert!(ok, "{report}");
    let out = rehearse(&["monitoring", "graphs"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}
