//! Against the real pinned Portkey gateway (`kind = "portkey"`: `$REHEARSE_PORTKEY`, else the
//! pinned install in the cache, which `.ci/test` fills with `scripts/install-portkey.sh`; a
//! missing install FAILS here, saying how to install it, never skips): the three fault cases of
//! issue 37 with what Portkey actually does — true rows pass, a mutant each fails (`cases`);
//! its bind forced to 127.0.0.1 (`loopback`); the user's own Portkey config with a key the
//! harness does not know refused with exit 2 at its file:line:col, and a metric row refused
//! because it exports none (`refused`); a gateway that dies mid-run and one whose process lives
//! on but stops answering (SIGSTOP), each exit 3 with its last lines, nothing left running
//! (`down`); a catalogue case through `--target fixtures/targets/portkey.toml`, and what Portkey
//! does with its streamed turns (`catalogue`). About 2 minutes of wall time on an idle 2-core machine.

mod cases;
mod catalogue;
mod down;
mod loopback;
mod refused;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The install every test runs, found as a run finds it; a panic naming the install command
/// when there is none.
pub fn install() -> rehearse::gateway::portkey::Install {
    rehearse::gateway::portkey::Install::find().unwrap_or_else(|e| {
        panic!(
            "the real Portkey gateway is needed here and was not found: {e}\n\
             (in a checkout: `export REHEARSE_PORTKEY=\"$(scripts/install-portkey.sh)\"`)"
        )
    })
}

/// The traffic: `n` model calls every `every_ms` from 300 ms, each its own session.
pub fn traffic(n: u64, every_ms: u64) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/gpt-4o\",\"stream\":false,\"max_tokens\":4,\"session\":\"s{i}\"}}\n",
                300 + i * every_ms
            )
        })
        .collect()
}

/// The cases' Portkey config: gpt-4o on key-a then key-b (two retries each on 429 and 5xx),
/// then gpt-4o-mini on key-c, in a `fallback` strategy.
pub const CONFIG: &str = r#"{
  "strategy": {"mode": "fallback"},
  "targets": [
    {"profile": "key-a", "override_params": {"model": "gpt-4o"},
     "retry": {"attempts": 2, "on_status_codes": [429, 500, 502, 503, 504]}},
    {"profile": "key-b", "override_params": {"model": "gpt-4o"},
     "retry": {"attempts": 2, "on_status_codes": [429, 500, 502, 503, 504]}},
    {"profile": "key-c", "override_params": {"model": "gpt-4o-mini"}}
  ]
}
"#;

/// A scenario `name` in `dir` against Portkey: `target` lines added to `[target]`, the three
/// keys, then `rest` (faults and expectations).
pub fn scenario(dir: &Path, name: &str, duration: &str, target: &str, rest: &str) -> PathBuf {
    let text = format!(
        "name = \"{name}\"\nduration = \"{duration}\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
         [target]\nkind = \"portkey\"\nturn_timeout = \"30s\"\n{target}\n\n\
         [models]\nprimary = \"mockai/gpt-4o\"\nfallbacks = [\"mockai/gpt-4o-mini\"]\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"key-a\"\ntoken = \"sk-pk-A\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"key-b\"\ntoken = \"sk-pk-B\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"key-c\"\ntoken = \"sk-pk-C\"\n\n{rest}"
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `rehearse run` of `scenario` (reports under its directory), with the suite's mutants.
pub fn run(scenario: &Path) -> Output {
    let reports = scenario.parent().unwrap().join("reports");
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(reports)
        .env("REHEARSE_MUTANTS", "1")
        .output()
        .unwrap()
}

pub fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The run's report.md path (its last stdout line).
pub fn report_md(out: &Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let md = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no `report: PATH` line\n{}", show(out)))
        .to_string();
    PathBuf::from(md)
}

/// report.json of the run, checked against its schema.
pub fn report_json(out: &Output) -> Value {
    let json = report_md(out).with_file_name("report.json");
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", json.display(), show(out)));
    let r: Value = serde_json::from_str(&text).expect("report.json parses");
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/report.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(&r)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.json breaks its schema:\n{}",
        errors.join("\n")
    );
    r
}

/// No process whose command line runs Portkey's entry from `dir`'s run is left: every
/// `start-server.js` process started with a `--require` preload under `dir`.
pub fn none_left_under(dir: &Path) -> Vec<u32> {
    let mut left = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        if !zombie && cmd.contains("start-server.js") && cmd.contains(&*dir.to_string_lossy()) {
            left.push(pid);
        }
    }
    left
}
