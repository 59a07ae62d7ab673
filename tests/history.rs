//! The run history end to end, through the binary: five runs of smoke at speed 5 with different
//! seeds → `rehearse history` lists five with key figures and writes index.html (one plot per
//! figure) and index.md; `rehearse compare` on two, saying first that their seeds (then speeds,
//! then scenario digests) differ, each row with its witness; the first runs have no baseline yet
//! and still pass; a run of the scenario edited (another digest) is compared with none of them
//! and says how many it left out; foreign files and broken run directories are listed with a
//! note; a drift subject the scenario cannot produce is refused at file:line:col.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::run::mutated_copy;

fn rehearse(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .output()
        .expect("run rehearse")
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Smoke with `openFor` as given, judged on one end-of-run metric and `[[expect.drift]]` on the
/// open time only: this test is about the history, and smoke's transition timings do not all
/// hold on a loaded 2-core box at speed 5.
fn scenario(dir: &Path, tag: &str, open_for: &str) -> PathBuf {
    mutated_copy("smoke", dir, tag, |s| {
        let s = s.replace("openFor = \"5s\"", &format!("openFor = \"{open_for}\""));
        let cut = s.find("[[expect.").expect("smoke has expectations");
        format!(
            "{}[[expect.metric]]\nseries = 'requests_total{{dep=\"calculator\",outcome=\"ok\"}}'\n\
             at_least = 20\n\n[[expect.drift]]\nfigure = \"open_ms\"\ndep = \"crm_search\"\n\
             within = \"30%\"\n",
            &s[..cut]
        )
    })
}

fn run(scenario: &Path, reports: &Path, seed: u64) -> (Output, PathBuf) {
    run_at(scenario, reports, seed, "5")
}

fn run_at(scenario: &Path, reports: &Path, seed: u64, speed: &str) -> (Output, PathBuf) {
    let seed = seed.to_string();
    let out = rehearse(&[
        "run",
        "--scenario",
        &scenario.display().to_string(),
        "--speed",
        speed,
        "--seed",
        &seed,
        "--report-dir",
        &reports.display().to_string(),
        "--no-progress",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let md = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no report line\n{}", text(&out)));
    let dir = md.parent().unwrap().to_path_buf();
    (out, dir)
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

fn drift_rows(r: &serde_json::Value) -> Vec<&serde_json::Value> {
    r["policies"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["expectations"].as_array().unwrap())
        .filter(|e| e["kind"] == "drift")
        .collect()
}

#[test]
fn five_runs_make_a_history_a_comparison_with_caveats_and_an_edited_scenario_its_own_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let normal = scenario(tmp.path(), "normal", "5s");
    let mut dirs = Vec::new();
    for seed in 1..=5u64 {
        let (out, dir) = run(&normal, &reports, seed);
        assert_eq!(out.status.code(), Some(0), "run {seed}\n{}", text(&out));
        // Key figures, drift section and drift rows hold to docs/report.schema.json.
        crate::report_contracts::assert_report_contracts(&dir);
        let r = report(&dir);
        let rows = drift_rows(&r);
        assert_eq!(rows.len(), 1, "{rows:?}");
        // The first two runs have fewer than two runs before them: no baseline, and still a pass.
        let want = if seed <= 2 { "no_baseline" } else { "pass" };
        assert_eq!(rows[0]["status"], want, "run {seed}: {}", rows[0]["detail"]);
        let open = &r["policies"][0]["figures"]["deps"]["crm_search"];
        let open_ms = open["open_ms"].as_u64().unwrap_or_else(|| panic!("{open}"));
        assert!((4_500..=6_500).contains(&open_ms), "open_ms {open_ms}");
        assert!(open["time_to_open_ms"].as_u64().is_some(), "{open}");
        assert!(
            open["probes_per_half_open"].as_f64().unwrap() > 0.0,
            "{open}"
        );
        let drift = &r["drift"];
        assert_eq!(
            drift["baseline"].as_array().unwrap().len(),
            (seed as usize - 1).min(4)
        );
        if seed == 1 {
            assert!(
                drift["note"].as_str().unwrap().contains("No baseline yet"),
                "{drift}"
            );
        }
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("## Since the last runs"), "{md}");
        assert!(md.contains("## Key figures"), "{md}");
        dirs.push(dir);
    }

    // Foreign entries and a broken run directory are listed with a note, never a crash.
    std::fs::write(reports.join("notes.txt"), "mine").unwrap();
    let broken = reports.join("20200101T000000Z-smoke");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("report.json"), "{\"schema_version\": 1, \"scen").unwrap();
    let old = reports.join("20200102T000000Z-smoke");
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("report.json"), "{\"schema_version\": 0}").unwrap();
    std::fs::create_dir(reports.join("20200103T000000Z-smoke")).unwrap();

    let out = rehearse(&[
        "history",
        "--report-dir",
        &reports.display().to_string(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let h: serde_json::Value = serde_json::from_slice(&out.stdout).expect("history --json");
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5, "{h}");
    for r in runs {
        assert_eq!(r["scenario"], "smoke");
        assert_eq!(r["verdict"], "pass");
        assert!(
            r["system"]
                .as_str()
                .unwrap()
                .starts_with("rehearse engine "),
            "{r}"
        );
        assert!(
            r["figures"]["retry-gate"]["open_ms{crm_search}"]
                .as_f64()
                .is_some(),
            "{r}"
        );
        assert_eq!(r["expectations"]["failed"], 0);
    }
    let notes: Vec<(String, String)> = h["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["dir"].as_str().unwrap().into(),
                n["note"].as_str().unwrap().into(),
            )
        })
        .collect();
    let note = |d: &str| notes.iter().find(|(x, _)| x == d).map(|(_, n)| n.as_str());
    assert!(
        note("notes.txt").unwrap().contains("not a run directory"),
        "{notes:?}"
    );
    assert!(
        note("20200101T000000Z-smoke")
            .unwrap()
            .contains("unreadable: 1:"),
        "{notes:?}"
    );
    assert!(
        note("20200102T000000Z-smoke")
            .unwrap()
            .contains("schema version 0"),
        "{notes:?}"
    );
    assert!(
        note("20200103T000000Z-smoke")
            .unwrap()
            .contains("no report.json"),
        "{notes:?}"
    );

    let html = std::fs::read_to_string(reports.join("index.html")).unwrap();
    assert!(html.contains("open_ms{crm_search}"), "a plot per figure");
    assert!(html.matches("<svg").count() >= 8, "one plot per key figure");
    assert_eq!(
        html.matches("/report.html\"").count(),
        5,
        "each run links its report"
    );
    assert!(
        html.contains("20200101T000000Z-smoke"),
        "the broken dir is noted"
    );
    let md = std::fs::read_to_string(reports.join("index.md")).unwrap();
    assert!(md.contains("## Key figures: smoke"), "{md}");
    assert_eq!(md.matches("/report.md)").count(), 5, "{md}");
    // The plain listing too.
    let out = rehearse(&[
        "history",
        "--report-dir",
        &reports.display().to_string(),
        "--scenario",
        "other",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("rehearse engine"),
        "{}",
        text(&out)
    );

    // Compare two of them.
    let out = rehearse(&[
        "compare",
        &dirs[0].display().to_string(),
        &dirs[4].display().to_string(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["a"]["verdict"], "pass");
    assert!(c["system_change"].is_null());
    assert!(
        c["figures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["figure"] == "open_ms{crm_search}")
    );
    assert!(!c["expectations"].as_array().unwrap().is_empty());
    // Seeds 1 and 5: said first, as a caveat on every starred difference.
    let caveats: Vec<&str> = c["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["what"].as_str().unwrap())
        .collect();
    assert_eq!(caveats, ["seed"], "{c}");
    assert_eq!(c["caveats"][0]["a"], "1");
    assert_eq!(c["caveats"][0]["b"], "5");
    // Each row side by side with what it was judged on.
    let metric = c["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "metric")
        .unwrap_or_else(|| panic!("{c}"));
    for side in ["a_witness", "b_witness"] {
        assert!(
            metric[side]["scrapes"].as_u64().unwrap_or(0) > 0,
            "{metric}"
        );
    }
    let out = rehearse(&[
        "compare",
        &dirs[0].display().to_string(),
        &dirs[4].display().to_string(),
    ]);
    let plain = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        plain.starts_with("CAVEAT: the runs differ in seed (A 1, B 5)"),
        "{plain}"
    );
    assert!(
        plain
            .lines()
            .any(|l| l.trim_start().starts_with("witness: ") && l.contains("scrapes ")),
        "{plain}"
    );
    // The same file and seed at another speed: the speed is the caveat.
    let (out, fast) = run_at(&normal, &reports, 5, "4");
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    let out = rehearse(&[
        "compare",
        &dirs[4].display().to_string(),
        &fast.display().to_string(),
        "--json",
    ]);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["caveats"].as_array().unwrap().len(), 1, "{c}");
    assert_eq!(c["caveats"][0]["what"], "speed", "{c}");
    assert!(
        c["caveat"].as_str().unwrap().contains("speed (A ×5, B ×4)"),
        "{c}"
    );
    let out = rehearse(&[
        "compare",
        &dirs[0].display().to_string(),
        &broken.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("20200101T000000Z-smoke"),
        "{}",
        text(&out)
    );

    // The scenario edited (open for 9 s instead of 5 s): another digest, so another scenario
    // as far as drift goes — the six runs before are left out, counted, and the row waits for
    // a baseline of its own (a system that changed under the same file is
    // tests/history_new.rs).
    let longer = scenario(tmp.path(), "longer", "9s");
    let (out, dir) = run(&longer, &reports, 6);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    crate::report_contracts::assert_report_contracts(&dir);
    let r = report(&dir);
    assert_ne!(r["scenario_digest"], report(&dirs[0])["scenario_digest"]);
    let rows = drift_rows(&r);
    assert_eq!(rows[0]["status"], "no_baseline", "{}", rows[0]["detail"]);
    assert!(
        rows[0]["detail"]
            .as_str()
            .unwrap()
            .contains("6 runs of another scenario digest left out"),
        "{}",
        rows[0]["detail"]
    );
    assert_eq!(r["drift"]["left_out"][0]["runs"], 6, "{}", r["drift"]);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("Left out of the baseline"), "{md}");
    let out = rehearse(&[
        "compare",
        &dirs[0].display().to_string(),
        &dir.display().to_string(),
        "--json",
    ]);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let what: Vec<&str> = c["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["what"].as_str().unwrap())
        .collect();
    assert_eq!(what, ["seed", "scenario digest"], "{c}");
}

#[test]
fn a_missing_report_dir_is_bad_input_and_a_misspelt_drift_figure_names_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    let out = rehearse(&[
        "history",
        "--report-dir",
        &tmp.path().join("none").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = rehearse(&["history", "--report-dir", &empty.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(empty.join("index.html").is_file() && empty.join("index.md").is_file());

    let path = mutated_copy("smoke", tmp.path(), "typo", |s| {
        format!("{s}\n[[expect.drift]]\nfigure = \"opne_ms\"\nwithin = \"30%\"\n")
    });
    let out = rehearse(&["validate", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = text(&out);
    assert!(err.contains("did you mean `open_ms`?"), "{err}");
    let line = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .position(|l| l.contains("opne_ms"))
        .unwrap()
        + 1;
    assert!(err.contains(&format!("smoke-typo.toml:{line}:")), "{err}");

    // A dep the scenario cannot produce: its figure would never be counted, the row would
    // wait for a baseline forever. Refused by `validate` and by `run` alike, at its place.
    let path = mutated_copy("smoke", tmp.path(), "nodep", |s| {
        format!(
            "{s}\n[[expect.drift]]\nfigure = \"open_ms\"\ndep = \"crm_serch\"\nwithin = \"30%\"\n"
        )
    });
    let line = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .position(|l| l.contains("crm_serch"))
        .unwrap()
        + 1;
    let reports = tmp.path().join("reports");
    for args in [
        vec!["validate", path.to_str().unwrap()],
        vec![
            "run",
            "--scenario",
            path.to_str().unwrap(),
            "--report-dir",
            reports.to_str().unwrap(),
        ],
    ] {
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = text(&out);
        assert!(err.contains(&format!("smoke-nodep.toml:{line}:7")), "{err}");
        assert!(err.contains("did you mean `crm_search`?"), "{err}");
    }
    assert!(!reports.exists() || std::fs::read_dir(&reports).unwrap().next().is_none());
    // A time from the first fault in a scenario without one: never counted, refused.
    let path = mutated_copy("smoke", tmp.path(), "nofault", |s| {
        let s = s.replace("[[fault]]", "[[fault_removed]]");
        let cut = s.find("[[fault_removed]]").unwrap();
        let rest = &s[cut..];
        let end = rest.find("\n\n").map_or(s.len(), |e| cut + e);
        format!(
            "{}{}\n[[expect.drift]]\nfigure = \"time_to_open_ms\"\nwithin = \"30%\"\n",
            &s[..cut],
            &s[end..]
        )
    });
    let out = rehearse(&["validate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("has none"), "{}", text(&out));
}
