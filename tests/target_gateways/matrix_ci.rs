//! The scorecard CI runs (issue 40): `rehearse matrix fixtures/matrix/ci.toml` — three catalogue
//! cases × {the embedded engine, the real pinned LiteLLM, the real pinned Portkey} and one case ×
//! the real pinned OpenClaw, K = 1, at ×1 for the gateways — every cell what the matrix file
//! expects of it (the gateways' findings written there as expected classes, so a change in what
//! a gateway does is a flip that fails this test), each cell backed by its run's report, and
//! each column headed by the gateway and release its reports name.

use std::process::Command;

use serde_json::Value;

use super::support::{litellm, one_at_a_time, repo, show};

#[test]
fn the_ci_scorecard_every_cell_as_the_matrix_file_expects_each_backed_by_its_report() {
    // The LiteLLM and Portkey gateways of the matrix start beside no other test's proxy.
    let _one = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("scorecard");
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .arg("matrix")
        .arg(repo().join("fixtures/matrix/ci.toml"))
        .args(["--jobs", "2", "--out"])
        .arg(&out_dir)
        .env("REHEARSE_LITELLM", litellm())
        .env_remove("REHEARSE_SCENARIOS")
        .output()
        .unwrap();
    let ctx = show(&out);
    let card: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("scorecard.json"))
            .unwrap_or_else(|e| panic!("no scorecard.json ({e}): {ctx}")),
    )
    .unwrap();
    let cells = card["cells"].as_array().unwrap();
    let unmet: Vec<String> = cells
        .iter()
        .filter(|c| c["meets"] != true)
        .map(|c| {
            format!(
                "{} × {}: {} (expected {}): {}",
                c["case"], c["target"], c["class"], c["expected"], c["reason"]
            )
        })
        .collect();
    assert!(
        unmet.is_empty(),
        "cells not as expected:\n{}\n{ctx}",
        unmet.join("\n")
    );
    assert_eq!(out.status.code(), Some(0), "{ctx}");
    assert_eq!(card["ok"], true);
    // 3 cases × 3 targets + 1 × OpenClaw.
    assert_eq!(cells.len(), 10, "{ctx}");
    for target in ["embedded", "litellm", "portkey"] {
        for case in ["500-once", "503-persistent", "429-retry-after"] {
            assert!(
                cells
                    .iter()
                    .any(|c| c["case"] == case && c["target"] == target),
                "no cell {case} × {target}"
            );
        }
    }
    assert!(
        cells
            .iter()
            .any(|c| c["case"] == "500-once" && c["target"] == "openclaw")
    );
    // Every cell ran once, and its run's report is where the scorecard says.
    for c in cells {
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "{c}");
        let dir = runs[0]["report_dir"].as_str().unwrap_or_default();
        assert!(
            out_dir.join(dir).join("report.json").is_file(),
            "{} × {}: no report at {dir}",
            c["case"],
            c["target"]
        );
    }
    // Each column names the gateway and release its reports name.
    let version = |name: &str| -> (String, String) {
        let t = card["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no column {name}"));
        (
            t["kind"].as_str().unwrap_or_default().to_string(),
            t["version"].as_str().unwrap_or_default().to_string(),
        )
    };
    let pin = |key: &str| -> String {
        std::fs::read_to_string(repo().join("scripts/pins.env"))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")).map(str::to_string))
            .unwrap()
    };
    assert_eq!(
        version("litellm"),
        ("litellm".into(), pin("LITELLM_VERSION"))
    );
    assert_eq!(
        version("portkey"),
        ("portkey".into(), pin("PORTKEY_VERSION"))
    );
    assert_eq!(
        version("openclaw"),
        ("openclaw".into(), pin("OPENCLAW_VERSION"))
    );
    assert_eq!(version("embedded").0, "embedded");
    for f in ["scorecard.md", "scorecard.html"] {
        assert!(out_dir.join(f).is_file(), "no {f}");
    }
}
