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

/// [`run_in`] with `REHEARSE_MUTANTS=1`: the run also writes `mutants.json`, every expectation
/// re-judged on the run's own observation after a change that should fail it
/// (`src/run/mutants/`); [`assert_mutants`] reads it.
pub fn run_in_with_mutants(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .arg("--no-progress")
        .env("REHEARSE_MUTANTS", "1")
        .current_dir(cwd)
        .output()
        .expect("spawn rehearse")
}

/// The suite's own mutants of the run in `dir` (`mutants.json`): no perturbation may leave its
/// expectation passing, and every entry was perturbed — except those judged outside an arm's
/// section (drift, fleet), which say so. Returns (entries perturbed, perturbations judged).
pub fn assert_mutants(dir: &Path) -> (usize, usize) {
    let path = dir.join("mutants.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with REHEARSE_MUTANTS=1)", path.display()));
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mutants = m["mutants"].as_array().cloned().unwrap_or_default();
    let survivors: Vec<String> = mutants
        .iter()
        .filter(|x| x["survived"] == true)
        .map(|x| {
            format!(
                "{} {} `{}`: {}",
                x["arm"], x["entry"], x["change"], x["detail"]
            )
        })
        .collect();
    assert!(
        survivors.is_empty(),
        "{}: perturbations that still pass (a witness bug):\n{}",
        path.display(),
        survivors.join("\n")
    );
    let unexplained: Vec<String> = m["unperturbed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| {
            let entry = u["entry"].as_str().unwrap_or_default();
            !(entry.starts_with("drift[") || entry.starts_with("fleet["))
        })
        .map(|u| format!("{} {}: {}", u["arm"], u["entry"], u["why"]))
        .collect();
    assert!(
        unexplained.is_empty(),
        "{}: entries not perturbed:\n{}",
        path.display(),
        unexplained.join("\n")
    );
    let entries: std::collections::BTreeSet<String> = mutants
        .iter()
        .map(|x| format!("{}/{}", x["arm"], x["entry"]))
        .collect();
    (entries.len(), mutants.len())
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

/// A scenario's text without its detection path: the `[prometheus]` table and the
/// `[[expect.alert]]` / `[[expect.dashboard]]` tables dropped, so it runs at another speed
/// than 1 (the detection path itself is `tests/detection`).
pub fn strip_prometheus(text: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            skipping = matches!(
                t,
                "[prometheus]" | "[[expect.alert]]" | "[[expect.dashboard]]"
            );
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A copy of fixture `name` (see [`mutated_copy`]) without its detection path
/// ([`strip_prometheus`]).
pub fn without_prometheus(name: &str, dir: &Path) -> PathBuf {
    mutated_copy(name, dir, "no-prometheus", |text| strip_prometheus(&text))
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

/// [`run_scenario`] with the run's mutants written ([`run_in_with_mutants`]).
pub fn run_scenario_with_mutants(path: &Path, speed: &str, report_dir: &Path) -> Output {
    run_in_with_mutants(
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

/// The JSON lines of `path`.
fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display())))
        .collect()
}

/// Fault kinds that fail a canary (its call errs, stalls or is cut); `latency` and
/// `slow_stream` only slow it (the fixtures keep them far inside every deadline).
const FAILING_FAULTS: &[&str] = &[
    "status",
    "rate_limit",
    "stall",
    "reset",
    "reset_mid_stream",
    "stall_stream",
    "malformed_chunk",
    "error_event",
    "ws_close",
    "ws_ping_timeout",
];

/// The report's canary numbers reconcile with upstream.jsonl. Per policy and
/// dep, canaries run one at a time, so the k-th `health_check` event answers the k-th canary
/// record: every counted canary has its record (at most one more record: a canary cut by the end
/// of the run, which is not counted), each answer comes after its arrival and before the next
/// canary's, and a canary failed exactly when the upstream applied a failing fault to it.
/// Returns the (calls, failures) summed over every policy and dep.
pub fn assert_canaries_reconcile(report_md: &Path) -> (u64, u64) {
    let dir = report_md.parent().expect("run dir");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let events = jsonl(&dir.join("events.jsonl"));
    let upstream = jsonl(&dir.join("upstream.jsonl"));
    let mut totals = (0, 0);
    for p in report["policies"].as_array().expect("policies") {
        let policy = p["policy"].as_str().unwrap();
        let health = p["health"].as_object().cloned().unwrap_or_default();
        for (dep, row) in &health {
            let calls = row["canary_calls"].as_u64().unwrap();
            let failures = row["canary_failures"].as_u64().unwrap();
            totals.0 += calls;
            totals.1 += failures;
            let checks: Vec<(u64, bool)> = events
                .iter()
                .filter(|e| {
                    e["policy"] == policy
                        && e["event"] == "health_check"
                        && e["dep"] == dep.as_str()
                })
                .map(|e| (e["t_ms"].as_u64().unwrap(), e["ok"].as_bool().unwrap()))
                .collect();
            let records: Vec<(u64, Option<String>)> = upstream
                .iter()
                .filter(|r| {
                    r["policy"] == policy && r["canary"] == true && r["dep"] == dep.as_str()
                })
                .map(|r| {
                    (
                        r["t_ms"].as_u64().unwrap(),
                        r["fault"].as_str().map(String::from),
                    )
                })
                .collect();
            let at = format!("{policy}/{dep}");
            assert_eq!(checks.len() as u64, calls, "{at}: report vs events.jsonl");
            assert_eq!(
                checks.iter().filter(|c| !c.1).count() as u64,
                failures,
                "{at}: failures vs events.jsonl"
            );
            assert!(
                records.len() as u64 >= calls && records.len() as u64 <= calls + 1,
                "{at}: {calls} canaries counted, {} upstream records",
                records.len()
            );
            for (k, (check, record)) in checks.iter().zip(&records).enumerate() {
                assert!(check.0 >= record.0, "{at}: answer {k} before its arrival");
                if let Some(next) = records.get(k + 1) {
                    assert!(next.0 + 1 >= check.0, "{at}: canary {k} overlaps the next");
                }
                let faulted = record
                    .1
                    .as_deref()
                    .is_some_and(|f| FAILING_FAULTS.contains(&f));
                assert_eq!(
                    !check.1, faulted,
                    "{at}: canary {k} at {} ms ok={} but upstream applied {:?}",
                    record.0, check.1, record.1
                );
            }
        }
        // Every dep the upstream saw canaries for has its row.
        for r in upstream
            .iter()
            .filter(|r| r["policy"] == policy && r["canary"] == true)
        {
            let dep = r["dep"].as_str().unwrap();
            assert!(
                health.contains_key(dep),
                "{policy}/{dep}: canary records but no report row"
            );
        }
    }
    totals
}

/// A run's temporary directory that outlives a failing test: dropped while the test panics, it
/// is moved to `target/kept-runs/NAME-UNIXSECS` (or `$REHEARSE_KEEP_RUNS/…`) and every
/// `report.md` in it is printed to stderr, so a timing failure seen once (a real-time run that
/// cannot simply be re-run) keeps its evidence. A passing test's directory is removed as before.
pub struct KeptOnFailure {
    name: String,
    dir: Option<tempfile::TempDir>,
}

/// The kept-on-failure directory of the test `name`.
pub fn kept_on_failure(name: &str) -> KeptOnFailure {
    KeptOnFailure {
        name: name.to_string(),
        dir: Some(tempfile::tempdir().expect("a temporary directory")),
    }
}

impl KeptOnFailure {
    pub fn path(&self) -> &Path {
        self.dir.as_ref().expect("present until dropped").path()
    }
}

impl Drop for KeptOnFailure {
    fn drop(&mut self) {
        let Some(tmp) = self.dir.take() else { return };
        if !std::thread::panicking() {
            return;
        }
        let root = std::env::var_os("REHEARSE_KEEP_RUNS")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target").join("kept-runs"));
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let to = root.join(format!("{}-{secs}", self.name));
        let kept = tmp.keep();
        if std::fs::create_dir_all(&root).is_err() || std::fs::rename(&kept, &to).is_err() {
            eprintln!("kept the failing run's directory at {}", kept.display());
            return;
        }
        eprintln!("kept the failing run's directory at {}", to.display());
        for md in walk_reports(&to) {
            if let Ok(text) = std::fs::read_to_string(&md) {
                eprintln!("==== {}\n{text}", md.display());
            }
        }
    }
}

/// Every `report.md` under `dir`.
fn walk_reports(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_reports(&p));
        } else if p.file_name().is_some_and(|n| n == "report.md") {
            out.push(p);
        }
    }
    out.sort();
    out
}
