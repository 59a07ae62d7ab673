//! Helpers for the run-harness tests: spawn `rehearse` runs into temp report dirs, find the
//! report the last stdout line names, and copy fixture scenarios with edits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (where `fixtures/` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture scenario's path.
pub fn fixture(name: &str) -> PathBuf {
    repo_root()
        .join("fixtures/scenarios")
        .join(format!("{name}.toml"))
}

/// Runs `rehearse` with `args` in `cwd` (plain progress lines).
pub fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .arg("--no-progress")
        .current_dir(cwd)
        .output()
        .expect("spawn rehearse")
}

/// Stdout and stderr, for assertion messages.
pub fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The report path the last stdout line names (`report: PATH`).
pub fn reported_path(out: &Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let path = last
        .strip_prefix("report: ")
        .unwrap_or_else(|| panic!("last stdout line is not `report: PATH`\n{}", show(out)));
    PathBuf::from(path)
}

/// The report.json beside the reported report.md.
pub fn report_json(out: &Output) -> serde_json::Value {
    let md = reported_path(out);
    let json = md.with_file_name("report.json");
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", json.display(), show(out)));
    serde_json::from_str(&text).expect("report.json parses")
}

/// Copies fixture scenario `name` into `dir` with `traffic` pointing at the absolute fixture
/// traffic file, then applies `edit` to the text. Returns the new file's path.
pub fn mutated_copy(name: &str, dir: &Path, tag: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let src = fixture(name);
    let text = std::fs::read_to_string(&src).expect("read fixture");
    let mut out = String::new();
    for line in text.lines() {
        if let Some(rel) = line
            .strip_prefix("traffic = \"")
            .and_then(|r| r.strip_suffix('"'))
        {
            let abs = src.parent().unwrap().join(rel);
            out.push_str(&format!("traffic = {:?}\n", abs.display().to_string()));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    let path = dir.join(format!("{name}-{tag}.toml"));
    std::fs::write(&path, edit(out)).expect("write mutated scenario");
    path
}

/// `rehearse run --scenario PATH --speed SPEED --report-dir DIR` from the repository root.
pub fn run_scenario(path: &Path, speed: &str, report_dir: &Path) -> Output {
    run_in(
        &repo_root(),
        &[
            "run",
            "--scenario",
            path.to_str().expect("utf-8 path"),
            "--speed",
            speed,
            "--report-dir",
            report_dir.to_str().expect("utf-8 path"),
        ],
    )
}
