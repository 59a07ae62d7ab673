//! What a Portkey scenario refuses before anything starts (exit 2, file:line:col): a key of the
//! user's Portkey config the harness does not know (Portkey's own schema would drop it without
//! a word), a target naming no `[[profile]]`, and a metric row — Portkey exports no metrics, so
//! it could never be judged. `rehearse validate` says the same as `run`; nothing is started.

use std::process::Command;

use super::{scenario, show, traffic};

fn both(dir: &std::path::Path, path: &std::path::Path) -> Vec<(String, std::process::Output)> {
    let mut outs = Vec::new();
    for verb in ["run", "validate"] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rehearse"));
        c.arg(verb);
        if verb == "run" {
            c.args(["--no-progress", "--report-dir"])
                .arg(dir.join("reports"));
        }
        if verb == "run" {
            c.arg("--scenario");
        }
        let out = c.arg(path).output().unwrap();
        outs.push((verb.to_string(), out));
    }
    outs
}

const TURN: &str = "[[expect.turn]]\noutcome = \"answered\"\nat_least = 1\n";

#[test]
fn a_portkey_config_key_the_harness_does_not_know_is_exit_2_at_its_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("t.jsonl"), traffic(2, 500)).unwrap();
    let config = "{\n  \"strategy\": {\"mode\": \"fallback\"},\n  \"targets\": [\n    {\"profile\": \"key-a\"},\n    {\"profile\": \"key-b\", \"retry\": {\"atempts\": 2}}\n  ]\n}\n";
    std::fs::write(dir.join("portkey.json"), config).unwrap();
    let path = scenario(dir, "pk-bad-key", "2s", "config = \"portkey.json\"", TURN);
    for (verb, out) in both(dir, &path) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{verb}: {}", show(&out));
        assert!(
            err.contains(
                "portkey.json:5:36: config.targets[1].retry.atempts: not a key the harness knows"
            ),
            "{verb}: {err}"
        );
        assert!(err.contains("did you mean `attempts`"), "{verb}: {err}");
    }
    assert!(super::none_left_under(dir).is_empty());

    // A target naming a profile the scenario does not have.
    std::fs::write(
        dir.join("portkey.json"),
        "{\"targets\": [{\"profile\": \"key-z\"}]}\n",
    )
    .unwrap();
    for (verb, out) in both(dir, &path) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{verb}: {}", show(&out));
        assert!(err.contains("portkey.json:1:26: config.targets[0].profile: `key-z` is not the id of a [[profile]]"), "{verb}: {err}");
    }
}

#[test]
fn a_metric_row_against_portkey_is_exit_2_it_exports_no_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("t.jsonl"), traffic(2, 500)).unwrap();
    let rest =
        format!("{TURN}\n[[expect.metric]]\nseries = \"rehearse_requests_total\"\nat_least = 1\n");
    let path = scenario(dir, "pk-metric", "2s", "", &rest);
    for (verb, out) in both(dir, &path) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{verb}: {}", show(&out));
        assert!(err.contains("expect.metric[0]"), "{verb}: {err}");
        assert!(
            err.contains("Portkey's open-source gateway exports no metrics"),
            "{verb}: {err}"
        );
    }
}
