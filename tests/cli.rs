//! The command line: the exit-code contract, help texts (exit codes, `--policy` values,
//! `--speed` default), `--version` on every subcommand, `validate NAME` and its counts.

use crate::support::rehearse;

#[test]
fn no_command_is_bad_usage_exit_2() {
    let out = rehearse(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scenario"));
}

#[test]
fn unknown_flag_is_bad_usage_exit_2() {
    let out = rehearse(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--speed` is validated once, by its value parser, with the bounds `--help` states:
/// `1e-20` used to panic dividing durations, `1e9` ran with every expected time 0.000s.
#[test]
fn speed_outside_its_bounds_is_exit_2_naming_them_and_nothing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    for speed in [
        "1e-20", "0.009", "0", "-1", "100.5", "1e9", "NaN", "inf", "fast",
    ] {
        let flag = format!("--speed={speed}");
        let out = rehearse(&["--scenario", "smoke", &flag, "--report-dir", dir]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--speed {speed}: {err}");
        assert!(
            err.contains("0.01 to 100") && err.contains(&format!("`{speed}`")),
            "--speed {speed}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        let out = rehearse(&[
            "replay",
            "--traffic",
            "x.jsonl",
            "--target",
            "http://127.0.0.1:9",
            &flag,
        ]);
        assert_eq!(out.status.code(), Some(2), "replay --speed {speed}");
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "a run dir was made"
    );
    let help = String::from_utf8_lossy(&rehearse(&["run", "--help"]).stdout).into_owned();
    assert!(help.contains("0.01 to 100"), "{help}");
}

fn stdout(args: &[&str]) -> String {
    let out = rehearse(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn help_states_the_exit_codes_at_the_top_and_for_run() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["help", "run"],
        &["report", "--help"],
    ] {
        let help = stdout(args);
        for line in [
            "Exit codes:",
            "0  pass",
            "1  the rehearsal ran and an expectation failed",
            "2  bad usage or bad input",
            "3  the harness itself failed",
        ] {
            assert!(help.contains(line), "{args:?} lacks {line:?}:\n{help}");
        }
    }
}

#[test]
fn policy_lists_its_values_and_speed_shows_its_default() {
    let help = stdout(&["run", "--help"]);
    let policy = &help[help.find("--policy <P>").expect("--policy in help")..];
    assert!(
        policy.contains("Possible values:")
            && policy.contains("retry-gate")
            && policy.contains("legacy"),
        "{help}"
    );
    let speed = &help[help.find("--speed <F>").expect("--speed in help")..];
    let speed = &speed[..speed.find("--seed").unwrap_or(speed.len())];
    assert!(speed.contains("[default: 1]"), "{speed}");
    let out = rehearse(&["run", "--scenario", "smoke", "--policy", "fastest"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'fastest'")
            && err.contains("[possible values: retry-gate, legacy]"),
        "{err}"
    );
}

#[test]
fn policy_values_parse_into_the_engine_policies() {
    use clap::Parser;
    use rehearse::cli::{Cli, Command, PolicyArg};
    use rehearse::engine::Policy;
    let cli = Cli::try_parse_from([
        "rehearse",
        "run",
        "--policy",
        "legacy",
        "--policy",
        "retry-gate",
    ])
    .unwrap();
    let Some(Command::Run(run)) = cli.command else {
        panic!("not run")
    };
    assert_eq!(run.policies, [PolicyArg::Legacy, PolicyArg::RetryGate]);
    let engine: Vec<Policy> = run.policies.into_iter().map(Policy::from).collect();
    assert_eq!(engine, [Policy::Legacy, Policy::RetryGate]);
    assert_eq!(
        run.speed.map(|s| s.get()),
        Some(1.0),
        "the shown default is the one used"
    );
}

/// `run --version` was refused once; every subcommand, nested ones too, takes it now.
#[test]
fn version_is_accepted_by_every_subcommand() {
    use clap::{CommandFactory, Parser, error::ErrorKind};
    use rehearse::cli::Cli;
    fn paths(c: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in c.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = prefix.clone();
            p.push(sub.get_name().to_string());
            out.push(p.clone());
            paths(sub, p, out);
        }
    }
    let mut all = Vec::new();
    paths(&Cli::command(), vec![], &mut all);
    assert!(all.len() >= 12, "{all:?}");
    for p in all {
        let mut argv = vec!["rehearse".to_string()];
        argv.extend(p.iter().cloned());
        argv.push("--version".into());
        let err = rehearse::cli::Cli::try_parse_from(&argv).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::DisplayVersion, "{argv:?}: {err}");
    }
    let v = stdout(&["run", "--version"]);
    assert!(v.contains(env!("CARGO_PKG_VERSION")), "{v}");
}

#[test]
fn validate_resolves_a_scenario_name_like_scenario_does() {
    let out = rehearse(&["validate", "smoke", "timeout-storm"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("fixtures/scenarios/smoke.toml: scenario `smoke`"),
        "{text}"
    );
    assert!(
        text.contains("fixtures/scenarios/timeout-storm.toml"),
        "{text}"
    );
    let out = rehearse(&["validate", "no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no scenario named `no-such-scenario`")
            && err.contains("fixtures/scenarios/no-such-scenario.toml"),
        "{err}"
    );
    let out = rehearse(&["validate", "missing.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.jsonl: "));
}

/// The counts `validate` prints: singular nouns for one, and checks counted as the report
/// counts them (one expectation in one policy run: timeout-storm's 7 expectations are 8 checks
/// over its two policy runs).
#[test]
fn validate_counts_checks_per_policy_run_with_plurals() {
    let text = stdout(&["validate", "timeout-storm", "smoke"]);
    assert!(
        text.contains("100 requests, 3 faults, 7 expectations, 8 checks over 2 policy runs (legacy 4, retry-gate 4)"),
        "{text}"
    );
    assert!(
        text.contains("200 requests, 1 fault, 6 expectations, 6 checks in the retry-gate run"),
        "{text}"
    );
}

/// A stdout that cannot be written (a launchd log on a full disk) must not turn a finished run
/// into a panic (exit 101): the soak saw it. `/dev/full` fails every write with ENOSPC.
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_stdout_is_not_a_panic() {
    use std::process::{Command, Stdio};
    let full = || {
        Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
    };
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["validate", "smoke"])
        .stdout(full())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args([
            "--scenario",
            "smoke",
            "--speed",
            "8",
            "--no-progress",
            "--report-dir",
        ])
        .arg(tmp.path())
        .stdout(full())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    let runs: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    assert_eq!(runs.len(), 1, "one run directory");
    assert!(runs[0].path().join("report.json").is_file());
}
