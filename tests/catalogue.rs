//! The catalogue (`fixtures/catalogue/`, built in): every case run by its NAME from a directory
//! with no scenarios of its own — so the built-in copy — against the embedded engine at a CI
//! speed, each *judged* (verdict pass or fail, every row with its witness, no pass on nothing)
//! with the verdict this table expects of the engine (its failures are findings:
//! fixtures/catalogue/README.md). Then two stand-in gateways by `--target` try to pass the
//! catalogue falsely: one that answers the run's turns itself (it sends the upstream nothing
//! after its warm-up) passes no case; one that relays each turn once to the primary (no retry,
//! no fallback, no cooldown) passes none: where not retrying is the right answer (a refusal) it fails
//! only the client-side `answered` row — a clean error, not a pass.
//! Two more cheat on what the client gets, which only the client-side rows (`[[expect.turn]]`)
//! see: one hands back the first half of each answer as a whole success (every case's
//! `truncated` row fails), one never answers a turn of the run (every case's `timed_out` row
//! fails). Cases run in parallel: each has its own report directory (and ports).

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

use crate::support::run::{repo_root, show};

/// Every case and the verdict the embedded engine gets (`true`: pass).
const EMBEDDED: [(&str, bool); 21] = [
    ("429-retry-after", true),
    // The wait said only in `retry-after-ms`: read, and honoured (a gateway reading only
    // Retry-After cools key-A for its own 2 s schedule and asks it again too soon).
    ("429-retry-after-ms", true),
    ("429-persistent", true),
    ("500-once", true),
    // The engine neither cools a profile on a 5xx nor falls back before its breaker opens.
    ("503-persistent", false),
    ("reset-before-headers", false),
    ("primary-flaps", false),
    ("silence", true),
    ("stream-cut-40-of-60", true),
    ("no-done", true),
    // The engine does not fall back on a 400 context_length_exceeded: its client gets a clean
    // error at once (every row but the client's `answered` passes: the scorecard's clean_error).
    ("context-length-exceeded", false),
    // The engine retries a 400 content_policy_violation on the same profile.
    ("content-policy", false),
    ("failover-accounting", true),
    ("time-to-first-fallback", true),
    // One fallback's 429 cools the shared profile: the healthy third is never asked.
    ("three-fallbacks-one-profile", false),
    ("every-fallback-serves", true),
    // The engine's inter-token timeout gives up on the stalled stream and answers elsewhere.
    ("stall-resumes", true),
    // The same timeout gives up on a first token 20 s late (its turn answered at ~10.8 s).
    ("first-token-late", true),
    // The first fallback's 400 on the prefill is a content failure to the engine: it retries it
    // on the same profile and ends the turn, never asking the healthy second fallback.
    ("fallback-rejects-prefill", false),
    // A broken 200 stream fails the attempt, but like a 5xx it cools no profile: both keys of
    // the primary are tried, then the turn fails — no fallback — and the engine hands the
    // client the tokens before the break as a partial result (a truncated success).
    ("malformed-chunk", false),
    ("error-event-in-200", false),
];

/// The cases where the embedded engine hands its client a truncated success (their
/// `truncated` row fails); in every other its client-side rows pass, and it never hangs.
const EMBEDDED_TRUNCATES: [&str; 2] = ["malformed-chunk", "error-event-in-200"];

/// The cases where a gateway that relays each turn once to the primary fails nothing but the
/// client-side `answered` row: a refusal is not retried, and the client gets it as it came, at
/// once — a clean error (the scorecard's `clean_error`), never a pass: it never asks the fallback.
const PASSTHROUGH_CLEAN_ERRORS: [&str; 2] = ["context-length-exceeded", "content-policy"];

/// At most this many embedded runs at once (a 2-core machine shared with others).
const PARALLEL: usize = 5;
/// At most this many runs against a stand-in at once: speed 1, mostly waiting for the turns'
/// recorded times.
const PARALLEL_STAND_IN: usize = 15;

fn rehearse(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .current_dir(cwd)
        .env_remove("REHEARSE_SCENARIOS")
        .output()
        .unwrap()
}

/// `f` over `items`, `width` at a time, results in order.
fn parallel<T: Sync, R: Send>(items: &[T], width: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = Mutex::new(0usize);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..width.min(items.len()) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    out.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

/// The one run directory under `dir` and its report.json.
fn report_under(dir: &Path) -> serde_json::Value {
    let run = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("report.json").is_file())
        .unwrap_or_else(|| panic!("no run directory under {}", dir.display()));
    serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap()
}

/// Every row of every arm: (status, kind, witness, detail).
fn rows(report: &serde_json::Value) -> Vec<(String, String, serde_json::Value, String)> {
    let mut out = Vec::new();
    for p in report["policies"].as_array().into_iter().flatten() {
        for e in p["expectations"].as_array().into_iter().flatten() {
            out.push((
                e["status"].as_str().unwrap_or("").to_string(),
                e["kind"].as_str().unwrap_or("").to_string(),
                e["witness"].clone(),
                e["detail"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out
}

fn has_witness(w: &serde_json::Value) -> bool {
    w.as_object().is_some_and(|o| !o.is_empty())
}

#[test]
fn every_case_is_judged_against_the_embedded_engine_with_the_verdict_it_gets() {
    let tmp = tempfile::tempdir().unwrap();
    let names: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
    // Every case of the catalogue is in the table, and nothing else.
    let mut on_disk: Vec<String> = std::fs::read_dir(repo_root().join("fixtures/catalogue"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "the table lists every catalogue case");

    let results = parallel(&EMBEDDED, PARALLEL, |(name, _)| {
        let dir = tmp.path().join(name);
        // From an empty directory a NAME is the built-in.
        let cwd = tmp.path().join(format!("{name}-cwd"));
        std::fs::create_dir_all(&cwd).unwrap();
        let out = rehearse(
            &cwd,
            &[
                "run",
                "--scenario",
                name,
                "--speed",
                "4",
                "--no-progress",
                "--report-dir",
                dir.to_str().unwrap(),
            ],
        );
        (out, dir)
    });
    let mut wrong = Vec::new();
    for ((name, pass), (out, dir)) in EMBEDDED.iter().zip(&results) {
        let want = if *pass { 0 } else { 1 };
        if out.status.code() != Some(want) {
            wrong.push(format!(
                "{name}: exit {:?}, want {want}: {}",
                out.status.code(),
                show(out)
            ));
            continue;
        }
        let r = report_under(dir);
        assert_eq!(r["verdict"], if *pass { "pass" } else { "fail" }, "{name}");
        let rows = rows(&r);
        assert!(!rows.is_empty(), "{name}: no row");
        for (status, kind, witness, detail) in &rows {
            assert!(
                ["pass", "fail"].contains(&status.as_str()),
                "{name}: a {kind} row is {status}: every row is judged"
            );
            assert!(has_witness(witness), "{name}: a {kind} row has no witness");
            assert!(!detail.is_empty(), "{name}: a {kind} row says nothing");
        }
        if !pass {
            assert!(
                rows.iter().any(|r| r.0 == "fail"),
                "{name}: failed with no failed row"
            );
        }
        // What the engine's client got: every model call a turn, judged.
        let turns = r["policies"][0]["client_turns"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(
            turns, 12,
            "{name}: the engine's 12 turns as its client saw them"
        );
        let truncated = turn_rows(&r, "turns truncated");
        let want = if EMBEDDED_TRUNCATES.contains(name) {
            "fail"
        } else {
            "pass"
        };
        assert!(
            truncated.len() == 1 && truncated[0].0 == want,
            "{name}: the truncated row should {want}: {truncated:?}"
        );
        let hangs = turn_rows(&r, "turns timed_out");
        assert!(
            hangs.len() == 1 && hangs[0].0 == "pass",
            "{name}: the engine never hangs: {hangs:?}"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Runs `name` against the stand-in gateway in `mode` by `--target`: the stand-in on its own
/// port, the mock upstream on another; the run's exit code and report.
fn against_stand_in(tmp: &Path, name: &str, mode: &str) -> (Option<i32>, serde_json::Value) {
    let dir = tmp.join(format!("{mode}-{name}"));
    let cheat = crate::support::cheats::start(&dir, mode);
    let reports = dir.join("reports");
    let out = rehearse(
        &dir,
        &[
            "run",
            "--scenario",
            name,
            "--target",
            cheat.target.to_str().unwrap(),
            "--no-progress",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
    );
    let code = out.status.code();
    assert!(reports.is_dir(), "{mode} {name}: no report: {}", show(&out));
    (code, report_under(&reports))
}

#[test]
fn gateways_that_cheat_pass_no_case_they_should_not() {
    let tmp = tempfile::tempdir().unwrap();
    let names: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
    let mut runs = Vec::new();
    for mode in ["warmup_only", "passthrough"] {
        for n in &names {
            runs.push((mode, *n));
        }
    }
    let results = parallel(&runs, PARALLEL_STAND_IN, |(mode, name)| {
        against_stand_in(tmp.path(), name, mode)
    });
    let mut wrong = Vec::new();
    for ((mode, name), (code, r)) in runs.iter().zip(&results) {
        let verdict = r["verdict"].as_str().unwrap_or("").to_string();
        let reason = r["reason"].as_str().unwrap_or("").to_string();
        // The target file's path and digest are in the report.
        assert!(
            r["target_file"]["digest"]
                .as_str()
                .is_some_and(|d| d.starts_with("sha256:")),
            "{mode} {name}: {}",
            r["target_file"]
        );
        let clean_error = *mode == "passthrough" && PASSTHROUGH_CLEAN_ERRORS.contains(name);
        let failed: Vec<String> = rows(r)
            .into_iter()
            .filter(|(status, ..)| status == "fail")
            .map(|(_, kind, _, detail)| format!("{kind}: {detail}"))
            .collect();
        let ok = match *mode {
            // Nothing reached the upstream in the run: nothing judged, never a pass.
            "warmup_only" => verdict != "pass" && *code != Some(0),
            _ if clean_error => {
                verdict == "fail"
                    && *code == Some(1)
                    && failed.len() == 1
                    && failed[0].starts_with("turn: turns answered")
            }
            _ => verdict == "fail" && *code == Some(1),
        };
        if !ok {
            wrong.push(format!(
                "{mode} {name}: {verdict} (exit {code:?}): {reason}; failed: {failed:?}"
            ));
        }
        for (status, kind, witness, detail) in rows(r) {
            // A gateway that sent the upstream nothing in the run passes not one row judged
            // there. What its client got is its own: it did answer every turn, at once (no
            // hang); its answers are never a pass of the `truncated` row (not one has a row in
            // the upstream's record to be compared with), and the run is never a pass.
            if *mode == "warmup_only" && status == "pass" && kind != "turn" {
                wrong.push(format!("warmup_only {name}: a {kind} row passed: {detail}"));
            }
            if status == "pass" {
                assert!(
                    has_witness(&witness),
                    "{mode} {name}: a passed {kind} row has no witness"
                );
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The rows of `r` of kind `turn` about `subject` (`turns truncated`, `turns timed_out`):
/// (status, detail, witness).
fn turn_rows(r: &serde_json::Value, subject: &str) -> Vec<(String, String, serde_json::Value)> {
    let mut out = Vec::new();
    for p in r["policies"].as_array().into_iter().flatten() {
        for e in p["expectations"].as_array().into_iter().flatten() {
            if e["kind"] == "turn" && e["dep"] == subject {
                out.push((
                    e["status"].as_str().unwrap_or("").to_string(),
                    e["detail"].as_str().unwrap_or("").to_string(),
                    e["witness"].clone(),
                ));
            }
        }
    }
    out
}

#[test]
fn a_gateway_that_truncates_or_hangs_fails_every_case_on_what_its_client_got() {
    let tmp = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for (mode, subject) in [("truncate", "turns truncated"), ("hang", "turns timed_out")] {
        for (n, _) in &EMBEDDED {
            runs.push((mode, subject, *n));
        }
    }
    let results = parallel(&runs, PARALLEL_STAND_IN, |(mode, _, name)| {
        against_stand_in(tmp.path(), name, mode)
    });
    let mut wrong = Vec::new();
    for ((mode, subject, name), (code, r)) in runs.iter().zip(&results) {
        if r["verdict"] != "fail" || *code != Some(1) {
            wrong.push(format!(
                "{mode} {name}: {} (exit {code:?}): {}",
                r["verdict"], r["reason"]
            ));
        }
        let rows = turn_rows(r, subject);
        if rows.len() != 1 {
            wrong.push(format!("{mode} {name}: {} `{subject}` rows", rows.len()));
            continue;
        }
        let (status, detail, witness) = &rows[0];
        // The row fails on turns it counted: the cheat's, not nothing.
        if status != "fail" || witness["matching"].as_u64().is_none_or(|m| m == 0) {
            wrong.push(format!(
                "{mode} {name}: `{subject}` is {status}: {detail} {witness}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
