//! What the LiteLLM tests share: the install (found or the test fails), a fixture copied into a
//! scratch directory with rows added, a run through the binary, its report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// One real proxy at a time (a LiteLLM start is seconds of CPU; two starting together on a
/// 2-core machine would time each other's turns): every test holds this while it runs.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The checkout.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pinned LiteLLM's `litellm`: `$REHEARSE_LITELLM`, else the cache's pinned venv; a test
/// without one fails, naming the install command.
pub fn litellm() -> String {
    if let Some(p) = std::env::var_os("REHEARSE_LITELLM").filter(|p| !p.is_empty()) {
        return p.to_string_lossy().into_owned();
    }
    let pins = std::fs::read_to_string(repo().join("scripts/pins.env")).unwrap();
    let version = pins
        .lines()
        .find_map(|l| l.strip_prefix("LITELLM_VERSION="))
        .unwrap()
        .trim()
        .to_string();
    let cache = std::env::var_os("REHEARSE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|x| PathBuf::from(x).join("rehearse")))
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/rehearse")
        });
    let exe = cache.join(format!("litellm-{version}/bin/litellm"));
    assert!(
        exe.is_file(),
        "no LiteLLM {version} at {} and REHEARSE_LITELLM unset: install it with \
         `rehearse gateway install litellm` or `scripts/install-litellm.sh`",
        exe.display()
    );
    exe.to_string_lossy().into_owned()
}

/// The fixture `name` in `dir` with `target` added to its `[target]` table and `extra`
/// appended (its traffic named by absolute path); its path.
pub fn scenario(dir: &Path, name: &str, target: &str, extra: &str) -> PathBuf {
    let text =
        std::fs::read_to_string(repo().join(format!("fixtures/scenarios/{name}.toml"))).unwrap();
    let traffic = repo().join("fixtures/traffic/litellm-turns.jsonl");
    let text = text.replace(
        "\"../traffic/litellm-turns.jsonl\"",
        &format!("{:?}", traffic.display().to_string()),
    );
    let kind = "kind = \"litellm\"";
    assert!(text.contains(kind), "{name} is a litellm fixture");
    let text = text.replacen(kind, &format!("{kind}\n{target}"), 1);
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, format!("{text}\n{extra}")).unwrap();
    path
}

/// `rehearse run` of `scenario` into `dir/reports`, with the LiteLLM found.
pub fn command(scenario: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rehearse"));
    cmd.args(["run", "--no-progress", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(dir.join("reports"))
        .env("REHEARSE_LITELLM", litellm());
    cmd
}

/// The run's output, for failure messages.
pub fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// report.json of the run whose report.md the last stdout line names.
pub fn report_json(stdout: &str) -> Value {
    let md = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no `report: PATH` line in\n{stdout}"));
    let json = Path::new(md).with_file_name("report.json");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The expectation rows of the one arm (in the report's order: by kind): (kind, status,
/// expected, observed).
pub fn rows(r: &Value) -> Vec<(String, String, String, String)> {
    r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["kind"].as_str().unwrap_or("").to_string(),
                x["status"].as_str().unwrap_or("").to_string(),
                x["expected"].as_str().unwrap_or("").to_string(),
                x["observed"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// report.json against docs/report.schema.json.
pub fn assert_schema(report: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/report.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.json breaks its schema:\n{}",
        errors.join("\n")
    );
}

/// Whether `pid` runs (not a zombie).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// The processes (pid) whose command line names `needle`.
pub fn processes_naming(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .filter(|pid| alive(*pid))
        .collect()
}
