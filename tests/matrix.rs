//! `rehearse matrix FILE` end to end, on real loopback sockets: two catalogue cases × the
//! embedded engine (×4) and the cheating stand-in gateways of tests/catalogue.rs as `http`
//! targets (×1) — the one answering from its cache without calling the upstream, the one
//! handing a truncated answer over as a success, and the honest relay that passes a 500 on as
//! a clean error — K = 2, each cell's class asserted, scorecard.json/md/html agreeing, exit 0
//! when the file expects the cheats' classes and 1 when it does not; a bad matrix file (exit 2
//! at file:line:col); `not_applicable` from a case refused for its target; a real SIGTERM
//! mid-matrix (finished cells kept, the rest `not_run`, exit 3, no child left); `compare` and
//! `history` over two scorecards; the per-cell textfile series.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::cheats;
use crate::support::run::show;

fn rehearse(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .current_dir(cwd)
        .env_remove("REHEARSE_SCENARIOS")
        .output()
        .unwrap()
}

/// The scorecard under `out`, checked against docs/scorecard.schema.json.
fn card(out: &Path) -> Value {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("scorecard.json")).unwrap())
            .unwrap();
    let schema: Value =
        serde_json::from_str(include_str!("../docs/scorecard.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    v
}

fn cell<'a>(card: &'a Value, case: &str, target: &str) -> &'a Value {
    card["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"] == case && c["target"] == target)
        .unwrap_or_else(|| panic!("no cell {case} × {target}"))
}

/// The main matrix: every class a cheat earns, with what the file expects of it.
fn main_matrix(dir: &Path, cache: &Path, truncate: &Path, relay: &Path, expect: bool) -> PathBuf {
    let mut text = format!(
        "description = \"the cheats\"\ncases = [\"context-length-exceeded\", \"500-once\"]\n\
         repeats = 2\nspeed = 4\n\
         [[target]]\nname = \"engine\"\nembedded = true\n\
         [[target]]\nname = \"cache\"\nfile = {cache:?}\nspeed = 1\ncases = [\"500-once\"]\n\
         [[target]]\nname = \"truncate\"\nfile = {truncate:?}\nspeed = 1\ncases = [\"context-length-exceeded\"]\n\
         [[target]]\nname = \"relay\"\nfile = {relay:?}\nspeed = 1\ncases = [\"500-once\"]\n"
    );
    if expect {
        text.push_str(
            "[[expect]]\ntarget = \"engine\"\ncase = \"context-length-exceeded\"\nis = \"clean_error\"\n\
             [[expect]]\ntarget = \"cache\"\nis = \"fail\"\n\
             [[expect]]\ntarget = \"truncate\"\ncase = \"context-length-exceeded\"\nis = \"fail\"\n\
             [[expect]]\ntarget = \"relay\"\nis = [\"clean_error\", \"fail\"]\n",
        );
    }
    let p = dir.join(if expect { "expects.toml" } else { "naive.toml" });
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_cheats_fail_the_cells_they_should_and_the_three_scorecards_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = cheats::start(&tmp.path().join("cache"), "warmup_only");
    let truncate = cheats::start(&tmp.path().join("truncate"), "truncate");
    let relay = cheats::start(&tmp.path().join("relay"), "passthrough");
    let file = main_matrix(
        tmp.path(),
        &cache.target,
        &truncate.target,
        &relay.target,
        true,
    );
    // The same cheat against a file that expects every cell to pass: its own stand-in, run
    // beside the main matrix.
    let naive_dir = tmp.path().join("naive");
    let naive_cache = cheats::start(&naive_dir, "warmup_only");
    std::fs::write(
        naive_dir.join("m.toml"),
        format!(
            "cases = [\"500-once\"]\n[[target]]\nname = \"cache\"\nfile = {:?}\n",
            naive_cache.target
        ),
    )
    .unwrap();
    let naive = std::thread::spawn({
        let d = naive_dir.clone();
        move || rehearse(&d, &["matrix", "m.toml", "--out", "out"])
    });
    let out = tmp.path().join("out");
    let textfiles = tmp.path().join("textfiles");
    let o = rehearse(
        tmp.path(),
        &[
            "matrix",
            file.to_str().unwrap(),
            "--jobs",
            "4",
            "--out",
            out.to_str().unwrap(),
            "--textfile-dir",
            textfiles.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let c = card(&out);
    assert_eq!(c["schema_version"], 1);
    assert_eq!(c["ok"], true);
    assert_eq!(c["stopped"], Value::Null);
    let want = [
        // No fallback on a 400 context_length_exceeded: 4 turns end in a clean error at once.
        ("context-length-exceeded", "engine", "clean_error"),
        ("500-once", "engine", "pass"),
        // It never asks the upstream: no turn has an answer at the upstream.
        ("500-once", "cache", "fail"),
        // The upstream served whole answers; the client got half of each, finished: a
        // passthrough that did not cut passes this case (tests/catalogue.rs).
        ("context-length-exceeded", "truncate", "fail"),
        // One request a turn: the 500 reaches the client as it came, at once.
        ("500-once", "relay", "clean_error"),
    ];
    assert_eq!(c["cells"].as_array().unwrap().len(), want.len(), "{c}");
    for (case, target, class) in want {
        let x = cell(&c, case, target);
        assert_eq!(x["class"], class, "{case} × {target}: {x}");
        assert_eq!(x["counts"][class], 2, "{case} × {target}: K of K");
        assert_eq!(x["meets"], true, "{case} × {target}");
        let runs = x["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for r in runs {
            let dir = out.join(r["report_dir"].as_str().unwrap());
            assert!(dir.join("report.json").is_file(), "{}", dir.display());
            assert!(dir.join("report.html").is_file(), "{}", dir.display());
        }
        if class != "pass" {
            assert!(x["reason"].as_str().is_some_and(|r| !r.is_empty()), "{x}");
        }
    }
    let reason = |case, target| {
        cell(&c, case, target)["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The case's own client-side row (`truncated` equals 0) fails it; without that row the
    // scorecard's rule would (src/matrix/class.rs, `a_truncated_success_is_never_a_pass`).
    assert!(
        reason("context-length-exceeded", "truncate").contains("truncated"),
        "{}",
        reason("context-length-exceeded", "truncate")
    );
    assert!(
        reason("500-once", "cache").contains("no turn in the window sent a model request"),
        "{}",
        reason("500-once", "cache")
    );
    let engine_up = &cell(&c, "500-once", "engine")["figures"]["upstream_requests"];
    assert!(engine_up["min"].as_u64().unwrap() >= 12, "{engine_up}");
    assert_eq!(
        cell(&c, "500-once", "cache")["figures"]["upstream_requests"]["max"],
        0
    );
    // The column headers: the kind from the reports, a config digest for the targets.
    let cols = c["targets"].as_array().unwrap();
    assert_eq!(cols[0]["kind"], "embedded");
    assert_eq!(cols[1]["kind"], "http");
    assert!(
        cols[1]["config_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_ne!(cols[1]["config_digest"], cols[2]["config_digest"]);

    // scorecard.md and .html say the same cells.
    let md = std::fs::read_to_string(out.join("scorecard.md")).unwrap();
    let html = std::fs::read_to_string(out.join("scorecard.html")).unwrap();
    let classes_in_html: Vec<&str> = html
        .split("data-class=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    let classes_in_json: Vec<&str> = c["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["class"].as_str().unwrap())
        .collect();
    assert_eq!(
        classes_in_html, classes_in_json,
        "html cells in the json's order"
    );
    for (case, target, class) in want {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {case} |")))
            .unwrap_or_else(|| panic!("{md}"));
        assert!(
            row.contains(&format!("✓ **{class}** 2/2 {class}")),
            "{case} × {target}: {row}"
        );
        for r in cell(&c, case, target)["runs"].as_array().unwrap() {
            let d = r["report_dir"].as_str().unwrap();
            assert!(row.contains(&format!("({d}/report.md)")), "{row}");
            assert!(html.contains(&format!("href=\"{d}/report.html\"")), "{d}");
        }
    }
    assert!(
        md.contains("| case | engine (embedded · ×4) | cache (http · config "),
        "{md}"
    );

    // The per-cell series.
    let prom = std::fs::read_to_string(textfiles.join("rehearse_matrix.prom")).unwrap();
    assert!(
        prom.contains(
            "rehearse_matrix_cell{case=\"500-once\",class=\"fail\",matrix=\"expects\",target=\"cache\"} 1\n"
        ),
        "{prom}"
    );
    assert!(prom.contains(
        "rehearse_matrix_cell{case=\"500-once\",class=\"pass\",matrix=\"expects\",target=\"cache\"} 0\n"
    ));
    assert!(
        prom.contains("rehearse_matrix_ok{matrix=\"expects\"} 1\n"),
        "{prom}"
    );

    // The file that expects a pass of the cheat: exit 1, the cell named.
    let n = naive.join().unwrap();
    assert_eq!(n.status.code(), Some(1), "{}", show(&n));
    let stdout = String::from_utf8_lossy(&n.stdout);
    assert!(
        stdout.contains("500-once × cache: fail 1/1 fail"),
        "{stdout}"
    );
    assert_eq!(card(&naive_dir.join("out"))["ok"], false);

    // compare: the same scorecard against itself, then against one where a cell flipped.
    let same = rehearse(
        tmp.path(),
        &["compare", out.to_str().unwrap(), out.to_str().unwrap()],
    );
    assert_eq!(same.status.code(), Some(0), "{}", show(&same));
    assert!(String::from_utf8_lossy(&same.stdout).contains("no cell flipped"));
    let history = tmp.path().join("history");
    let (a, b) = (history.join("matrix-a"), history.join("matrix-b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(out.join("scorecard.json"), a.join("scorecard.json")).unwrap();
    let mut later = c.clone();
    later["started_at"] = "2099-01-01T00:00:00Z".into();
    for x in later["cells"].as_array_mut().unwrap() {
        if x["case"] == "500-once" && x["target"] == "engine" {
            x["class"] = "fail".into();
            x["counts"] = serde_json::json!({"fail": 2});
            x["meets"] = false.into();
            x["figures"]["upstream_requests"] = serde_json::json!({"min": 40, "max": 44});
        }
    }
    std::fs::write(b.join("scorecard.json"), later.to_string()).unwrap();
    let cmp = rehearse(
        tmp.path(),
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert_eq!(cmp.status.code(), Some(0), "{}", show(&cmp));
    let text = String::from_utf8_lossy(&cmp.stdout);
    assert!(
        text.contains(
            "flipped  500-once × engine: 2/2 pass (as expected) → 2/2 fail (NOT as expected)"
        ),
        "{text}"
    );
    assert!(
        text.contains("drifted  500-once × engine: upstream_requests"),
        "{text}"
    );
    let h = rehearse(
        tmp.path(),
        &[
            "history",
            "--report-dir",
            history.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(h.status.code(), Some(0), "{}", show(&h));
    let j: Value = serde_json::from_slice(&h.stdout).unwrap();
    let cards = j["scorecards"].as_array().unwrap();
    assert_eq!(cards.len(), 2, "{j}");
    assert_eq!(
        j["notes"].as_array().unwrap().len(),
        0,
        "a scorecard is no foreign note: {j}"
    );
    assert_eq!(cards[1]["dir"], "matrix-b");
    assert_eq!(cards[1]["since_previous"]["flipped"][0]["case"], "500-once");
    // A run and a scorecard cannot be compared.
    let mixed = rehearse(
        tmp.path(),
        &["compare", a.to_str().unwrap(), tmp.path().to_str().unwrap()],
    );
    assert_eq!(mixed.status.code(), Some(2), "{}", show(&mixed));
}

#[test]
fn a_bad_matrix_file_is_refused_at_its_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("bad.toml");
    std::fs::write(
        &p,
        "cases = [\"500-once\"]\n[[target]]\nname = \"engine\"\nembedded = true\n\
         [[expect]]\ntarget = \"engnie\"\nis = \"fail\"\n",
    )
    .unwrap();
    let o = rehearse(tmp.path(), &["matrix", "bad.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml:6:10: unknown target `engnie` (did you mean `engine`?)"),
        "{err}"
    );
    std::fs::write(
        &p,
        "cases = [\"500-onse\"]\n[[target]]\nname = \"e\"\nembedded = true\n",
    )
    .unwrap();
    let o = rehearse(tmp.path(), &["matrix", "bad.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.toml:1:10: "), "{err}");
    assert!(err.contains("500-once"), "the suggestion: {err}");
    assert!(!tmp.path().join("out").exists(), "nothing ran");
}

/// A catalogue case whose traffic sends its own `messages` (an assistant prefill), against an
/// OpenClaw target: refused before the run as not applicable — a finding the file can expect.
#[test]
fn a_case_refused_for_its_target_is_not_applicable() {
    let tmp = tempfile::tempdir().unwrap();
    let traffic = tmp.path().join("prefill.jsonl");
    std::fs::write(
        &traffic,
        "{\"at_ms\":1000,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":4,\"messages\":\
         [{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"Sure,\"}]}\n",
    )
    .unwrap();
    let root = crate::support::run::repo_root();
    let text = std::fs::read_to_string(root.join("fixtures/catalogue/500-once.toml")).unwrap();
    let scenario = tmp.path().join("500-once-prefill.toml");
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("traffic = ") {
                format!("traffic = {:?}\n", traffic.display().to_string())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&scenario, text).unwrap();
    let openclaw = root.join("fixtures/targets/openclaw.toml");
    let m = tmp.path().join("m.toml");
    std::fs::write(
        &m,
        format!(
            "cases = [{:?}]\n[[target]]\nname = \"openclaw\"\nfile = {:?}\n\
             [[expect]]\ntarget = \"openclaw\"\nis = \"not_applicable\"\n",
            scenario.display().to_string(),
            openclaw
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = rehearse(
        tmp.path(),
        &["matrix", "m.toml", "--out", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let c = card(&out);
    let x = &c["cells"][0];
    assert_eq!(x["class"], "not_applicable", "{x}");
    assert_eq!(x["runs"][0]["exit"], 2);
    assert!(
        x["reason"].as_str().unwrap().contains("not applicable: "),
        "{x}"
    );
}

/// A real SIGTERM mid-matrix: the running run is stopped by its pid (its report written,
/// `incomplete`), the finished one kept, the rest `not_run`; exit 3 and no run left behind.
#[test]
fn a_stopped_matrix_keeps_its_finished_cells_and_says_which_did_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("m.toml"),
        "cases = [\"500-once\"]\nrepeats = 3\nspeed = 4\n[[target]]\nname = \"engine\"\nembedded = true\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["matrix", "m.toml", "--out"])
        .arg(tmp.path().join("out"))
        .current_dir(tmp.path())
        .env_remove("REHEARSE_SCENARIOS")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    // The first run's line, then two seconds into the second.
    for l in lines.by_ref() {
        let l = l.unwrap();
        seen.push(l.clone());
        if l.contains("500-once × engine r1: ") {
            break;
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill(2) on the pid of the child this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    seen.extend(lines.map_while(Result::ok));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "{}", seen.join("\n"));
    let c = card(&tmp.path().join("out"));
    assert!(c["stopped"].as_str().unwrap().contains("SIGTERM"), "{c}");
    assert_eq!(c["ok"], false);
    let runs = c["cells"][0]["runs"].as_array().unwrap();
    assert_eq!(runs[0]["class"], "pass", "{c}");
    assert_eq!(
        runs[1]["class"], "incomplete",
        "the running run, stopped: {c}"
    );
    assert_eq!(runs[1]["stopped"], true);
    assert_eq!(runs[1]["exit"], 3);
    assert_eq!(runs[2]["class"], "not_run", "{c}");
    assert_eq!(runs[2]["report_dir"], Value::Null);
    assert!(
        seen.iter()
            .any(|l| l.contains("500-once × engine r2: incomplete")),
        "{}",
        seen.join("\n")
    );
    // No run of this matrix is left: no process has its output directory on its command line.
    let out = tmp.path().join("out").display().to_string();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .filter(|c| c.contains(&out))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `--starts 1`: a run is launched only once the run before it has started its clock (its
/// mark in its cell directory, written by the run itself), even with a free `--jobs` slot.
#[test]
fn a_run_is_launched_only_when_the_starts_allow_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("m.toml"),
        "cases = [\"500-once\", \"429-retry-after\"]\nspeed = 4\n[[target]]\nname = \"engine\"\nembedded = true\n",
    )
    .unwrap();
    let out = rehearse(
        tmp.path(),
        &[
            "matrix", "m.toml", "--jobs", "2", "--starts", "1", "--out", "o",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--jobs 2 --starts 1"),
        "{}",
        show(&out)
    );
    let card = card(&tmp.path().join("o"));
    assert_eq!(card["starts"], 1);
    // When each run was launched (its run directory's marker) and when its clock started (the
    // mark it left for the matrix).
    let times = |case: &str| -> (u64, u64) {
        let cell = tmp.path().join("o/cells").join(case).join("engine/r1");
        let mark = std::fs::read_to_string(cell.join(".clock-started")).unwrap();
        let mark = humantime::parse_rfc3339(mark.trim()).unwrap();
        let mark_ms = mark
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let run_dir = std::fs::read_dir(&cell)
            .unwrap()
            .flatten()
            .find(|e| e.path().is_dir())
            .unwrap()
            .path();
        let marker: Value = serde_json::from_str(
            &std::fs::read_to_string(run_dir.join(".rehearse-run.json")).unwrap(),
        )
        .unwrap();
        let launched_ms = marker["started_unix_ms"].as_u64().unwrap();
        assert!(
            mark_ms >= launched_ms,
            "{case}: clock {mark_ms} before launch {launched_ms}"
        );
        (launched_ms, mark_ms)
    };
    let (_, first_clock) = times("500-once");
    let (second_launch, _) = times("429-retry-after");
    assert!(
        second_launch >= first_clock,
        "the second run was launched at {second_launch}, before the first's clock started at {first_clock}"
    );
}
