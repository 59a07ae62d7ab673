//! `--target FILE` (docs/scenario.md, "A target of its own"): a `[target]` table in a file of
//! its own replaces the scenario's. A bad one is exit 2 from `validate` and `run` at
//! FILE:line:col (nothing created); the scenario is then checked as if written with that table
//! (an expectation the new target cannot show is refused at the scenario's line); relative
//! paths resolve from FILE's directory; and a run records the file (path and digest) in
//! report.json, its digest part of the scenario digest.

use std::path::Path;
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

use crate::support::run::{repo_root, show};

fn rehearse(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap()
}

/// `validate SCENARIO --target T` and `run --scenario SCENARIO --target T` both exit 2 with
/// `loc` and every `wants` on stderr, and create no report directory.
fn refused(scenario: &str, target: &Path, loc: &str, wants: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let (t, r) = (target.to_str().unwrap(), reports.to_str().unwrap());
    for args in [
        vec!["validate", scenario, "--target", t],
        vec![
            "run",
            "--scenario",
            scenario,
            "--target",
            t,
            "--report-dir",
            r,
        ],
    ] {
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(loc),
            "{args:?}: stderr lacks `{loc}`: {stderr}"
        );
        for w in wants {
            assert!(stderr.contains(w), "{args:?}: stderr lacks `{w}`: {stderr}");
        }
        assert!(!reports.exists(), "{args:?}: created {}", reports.display());
    }
}

#[test]
fn a_bad_target_file_is_refused_at_its_own_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.toml");
    let at = |line: u32, col: u32| format!("{}:{line}:{col}: ", t.display());
    // An unknown key.
    std::fs::write(
        &t,
        "# mine\n[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\nturn_timout = \"5s\"\n",
    )
    .unwrap();
    refused(
        "fixtures/catalogue/500-once.toml",
        &t,
        &at(5, 1),
        &["turn_timout"],
    );
    // A key of another kind, and a value.
    std::fs::write(
        &t,
        "[target]\nkind = \"embedded\"\nurl = \"http://127.0.0.1:9\"\n",
    )
    .unwrap();
    refused(
        "fixtures/catalogue/500-once.toml",
        &t,
        &at(3, 7),
        &["target.url", "only for `kind = \"http\"`"],
    );
    std::fs::write(&t, "[target]\nkind = \"http\"\n").unwrap();
    refused(
        "fixtures/catalogue/500-once.toml",
        &t,
        &at(2, 8),
        &["needs `url`"],
    );
    // Anything but [target] and [upstream].
    std::fs::write(
        &t,
        "[target]\nkind = \"embedded\"\n\n[engine]\ntimeoutSeconds = 5\n",
    )
    .unwrap();
    refused(
        "fixtures/catalogue/500-once.toml",
        &t,
        &at(4, 2),
        &["engine"],
    );
    // An http target needs the upstream at a fixed address: the scenario's check, named in
    // the target file (the table it belongs to).
    std::fs::write(
        &t,
        "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\n",
    )
    .unwrap();
    refused(
        "fixtures/catalogue/500-once.toml",
        &t,
        &t.display().to_string(),
        &["listen"],
    );
    // More than one --target, for now.
    let out = rehearse(&[
        "validate",
        "smoke",
        "--target",
        t.to_str().unwrap(),
        "--target",
        t.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}

#[test]
fn the_scenario_is_checked_as_if_written_with_the_target_files_table() {
    let targets = repo_root().join("fixtures/targets");
    // smoke judges the engine's breakers, which OpenClaw does not expose.
    let smoke = repo_root().join("fixtures/scenarios/smoke.toml");
    let text = std::fs::read_to_string(&smoke).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("[[expect.transition]]"))
        .unwrap()
        + 1;
    refused(
        "fixtures/scenarios/smoke.toml",
        &targets.join("openclaw.toml"),
        &format!("fixtures/scenarios/smoke.toml:{line}:"),
        &["expect.transition[0]", "does not expose"],
    );
    // An OpenClaw scenario's own target replaced by the embedded engine: its OpenClaw rows
    // have nothing to read.
    refused(
        "fixtures/scenarios/openclaw-503-key-a.toml",
        &targets.join("embedded.toml"),
        "fixtures/scenarios/openclaw-503-key-a.toml:",
        &["expect.openclaw_decision[0]", "this target is `embedded`"],
    );
    // The one case a target cannot run is refused as not applicable, never failed.
    refused(
        "fixtures/catalogue/fallback-rejects-prefill.toml",
        &targets.join("openclaw.toml"),
        "catalogue-turns-prefill.jsonl:1:",
        &["not applicable", "keeps only the user message"],
    );
    // Every other catalogue case takes every shipped target file.
    for t in ["embedded", "openclaw", "http", "litellm", "portkey"] {
        let tf = targets.join(format!("{t}.toml"));
        let mut args = vec!["validate".to_string()];
        for e in std::fs::read_dir(repo_root().join("fixtures/catalogue")).unwrap() {
            let p = e.unwrap().path();
            // The prefill case is not applicable to OpenClaw (it keeps only a turn's user
            // message): refused on its own below.
            let prefill = p.ends_with("fallback-rejects-prefill.toml");
            if p.extension().is_some_and(|x| x == "toml") && !(prefill && t == "openclaw") {
                args.push(p.display().to_string());
            }
        }
        args.extend(["--target".into(), tf.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = rehearse(&args);
        // A gateway the harness installs needs its install to plan; without one every case
        // says so (naming how to install it), and nothing else.
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.code() == Some(0) {
            assert_eq!(
                stdout.matches(&format!("in the {t} run")).count()
                    + stdout.matches("checks in the retry-gate run").count(),
                args.len() - 3,
                "{t}: {stdout}"
            );
            assert!(
                stdout.contains(&format!("target from {}", tf.display())),
                "{stdout}"
            );
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                ["openclaw", "litellm", "portkey"].contains(&t),
                "{t}: {}",
                show(&out)
            );
            assert!(
                stderr
                    .lines()
                    .filter(|l| l.starts_with("error: ") && l.contains("fixtures/catalogue"))
                    .all(|l| l.contains("install")),
                "{stderr}"
            );
        }
    }
}

#[test]
fn relative_paths_resolve_from_the_target_files_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("targets");
    std::fs::create_dir_all(&sub).unwrap();
    let t = sub.join("oc.toml");
    std::fs::write(
        &t,
        "[target]\nkind = \"openclaw\"\nconfig = \"mine.json5\"\n",
    )
    .unwrap();
    let out = rehearse(&[
        "validate",
        "fixtures/catalogue/500-once.toml",
        "--target",
        t.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = sub.join("mine.json5");
    assert!(
        stderr.contains(&want.display().to_string()),
        "lacks {}: {stderr}",
        want.display()
    );
}

#[test]
fn a_run_records_the_target_file_and_its_digest_is_part_of_the_scenario_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let t = repo_root().join("fixtures/targets/embedded.toml");
    let mut digests = Vec::new();
    for (tag, extra) in [
        ("with", vec!["--target", t.to_str().unwrap()]),
        ("without", vec![]),
    ] {
        let reports = tmp.path().join(tag);
        let mut args = vec![
            "run",
            "--scenario",
            "fixtures/catalogue/500-once.toml",
            "--speed",
            "5",
            "--no-progress",
            "--report-dir",
            reports.to_str().unwrap(),
        ];
        args.extend(extra);
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(0), "{tag}: {}", show(&out));
        let r = crate::support::run::report_json(&out);
        if tag == "with" {
            let bytes = std::fs::read(&t).unwrap();
            let want = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
            assert_eq!(r["target_file"]["digest"], want.as_str());
            assert_eq!(r["target_file"]["path"], t.to_str().unwrap());
            let md_path = crate::support::run::reported_path(&out);
            // report.json with `target_file` holds to docs/report.schema.json.
            crate::report_contracts::assert_report_contracts(md_path.parent().unwrap());
            let md = std::fs::read_to_string(&md_path).unwrap();
            assert!(
                md.contains(&format!("target {}", t.display())),
                "report.md names the target file"
            );
        } else {
            assert!(r.get("target_file").is_none(), "{}", r["target_file"]);
        }
        digests.push(r["scenario_digest"].as_str().unwrap().to_string());
    }
    assert_ne!(
        digests[0], digests[1],
        "the target file is part of the scenario digest"
    );
}

#[test]
fn several_targets_are_each_checked_first_and_a_bad_one_is_named_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let good = repo_root().join("fixtures/targets/embedded.toml");
    let bad = tmp.path().join("second.toml");
    std::fs::write(
        &bad,
        "[target]\nkind = \"http\"\nurll = \"http://127.0.0.1:4000\"\n",
    )
    .unwrap();
    let reports = tmp.path().join("reports");
    let (g, b, r) = (
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
        reports.to_str().unwrap(),
    );
    let case = "fixtures/catalogue/500-once.toml";
    for args in [
        vec!["validate", case, "--target", g, "--target", b],
        vec![
            "run",
            "--scenario",
            case,
            "--target",
            g,
            "--target",
            b,
            "--report-dir",
            r,
        ],
    ] {
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("{b}:3:1")), "{args:?}: {stderr}");
        assert!(!stderr.contains(&format!("{g}:")), "{args:?}: {stderr}");
        assert!(!reports.exists(), "{args:?}: created {}", reports.display());
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("report:"),
            "{args:?}: {}",
            show(&out)
        );
    }
    // Two files with one stem would name their arms alike: refused, naming both.
    let again = tmp.path().join("embedded.toml");
    std::fs::write(&again, "[target]\nkind = \"embedded\"\n").unwrap();
    let out = rehearse(&[
        "validate",
        case,
        "--target",
        g,
        "--target",
        again.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`embedded`") && stderr.contains(g),
        "{stderr}"
    );
    // A scenario the second target cannot run: its error names that target file.
    let http = repo_root().join("fixtures/targets/http.toml");
    let smoke = "fixtures/scenarios/smoke.toml";
    let out = rehearse(&[
        "validate",
        smoke,
        "--target",
        g,
        "--target",
        http.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("with --target {}", http.display()))
            && stderr.contains("expect.transition[0]"),
        "{stderr}"
    );
    // Both good: validate names both.
    let out = rehearse(&[
        "validate",
        case,
        "--target",
        g,
        "--target",
        http.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("side by side against {g}, {}", http.display())),
        "{stdout}"
    );
}
