//! A catalogue case (built in, `fixtures/catalogue/`) run through `--target` against a real
//! gateway's shipped target file (`fixtures/targets/KIND.toml`), with no config of the user's:
//! the run judged (a verdict of pass or fail with the exit code that goes with it, never a
//! harness error; every row with its witness, no row passed on nothing), the report naming the
//! target file and the gateway's kind, and no key in clear in any file the run kept (the
//! scenario's profile tokens and the gateway's own, all `sk-rehearse-…`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// One case's run: its output, report.json and run directory.
pub struct CaseRun {
    pub out: Output,
    pub report: Value,
    pub dir: PathBuf,
}

impl CaseRun {
    /// `builtin:CASE` against `fixtures/targets/TARGET.toml`, into a fresh directory under
    /// `tmp`, with `env` set (where the gateway is installed).
    pub fn run(tmp: &Path, case: &str, target: &str, env: &[(&str, &str)]) -> Self {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let reports = tmp.join(case);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rehearse"));
        cmd.args([
            "run",
            "--no-progress",
            "--scenario",
            &format!("builtin:{case}"),
        ])
        .arg("--target")
        .arg(repo.join(format!("fixtures/targets/{target}.toml")))
        .arg("--report-dir")
        .arg(&reports)
        .envs(env.iter().copied());
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let md = stdout
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("report: "))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("{case}: no `report: PATH` line\n{}", show(&out)));
        let dir = md.parent().unwrap().to_path_buf();
        let report =
            serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap())
                .unwrap();
        Self { out, report, dir }
    }

    /// The run was judged against `kind`, from its target file, with no key kept in clear;
    /// its verdict.
    pub fn judged(&self, case: &str, kind: &str) -> String {
        let r = &self.report;
        let ctx = format!("{case} against {kind}: {}", show(&self.out));
        let verdict = r["verdict"].as_str().unwrap_or_default().to_string();
        let code = self.out.status.code();
        match verdict.as_str() {
            "pass" => assert_eq!(code, Some(0), "{ctx}"),
            "fail" => assert_eq!(code, Some(1), "{ctx}"),
            _ => panic!("{case}: not judged ({verdict}): {}\n{ctx}", r["reason"]),
        }
        assert_eq!(r["target"]["kind"], kind, "{ctx}");
        let file = r["target_file"]["path"].as_str().unwrap_or_default();
        assert!(
            file.ends_with(&format!("fixtures/targets/{kind}.toml")),
            "{file}"
        );
        let rows = r["policies"][0]["expectations"].as_array().unwrap();
        assert!(!rows.is_empty(), "{ctx}");
        for e in rows {
            // A witness is counts of what the row was judged on; a pass needs some.
            let seen = e["witness"]
                .as_object()
                .is_some_and(|w| w.values().any(|n| n.as_u64().is_some_and(|n| n > 0)));
            assert!(
                e["status"] != "pass" || seen,
                "{case}: a row passed on nothing: {e}"
            );
        }
        self.no_key_in_clear(case);
        verdict
    }
}

impl CaseRun {
    /// The failed rows of its first policy, as (kind, expected).
    pub fn failed_rows(&self) -> Vec<(String, String)> {
        self.report["policies"][0]["expectations"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter(|e| e["status"] == "fail")
                    .map(|e| {
                        (
                            e["kind"].as_str().unwrap_or_default().to_string(),
                            e["expected"].as_str().unwrap_or_default().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The turns as the gateway's client saw them (report.json `target.turns`).
    pub fn turns(&self) -> Vec<Value> {
        self.report["target"]["turns"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// No key in clear in anything the run kept at its top: the reports, the record, the
    /// gateway's log and config (every key of the catalogue and every master key the harness
    /// makes is `sk-rehearse-…`).
    pub fn no_key_in_clear(&self, case: &str) {
        for f in std::fs::read_dir(&self.dir).unwrap().flatten() {
            let p = f.path();
            if !p.is_file() {
                continue;
            }
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            assert!(
                !text.contains("sk-rehearse-"),
                "{case}: a key in clear in {}",
                p.display()
            );
        }
    }
}

pub fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
