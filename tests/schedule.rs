//! `rehearse schedule` and the checked-in launchd example (issue 7.1–7.2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rehearse::schedule::plist::{self, CalendarInterval};

const WEEKLY: &str = "launchd/ai.openclaw.rehearse.weekly.plist";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The real binary with a controlled environment (HOME and PATH only).
fn schedule(args: &[&str], home: &Path, path: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .arg("schedule")
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .output()
        .expect("spawn rehearse")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The regenerating command written in launchd/README.md: `HOME=X cargo run -q -- ARGS > FILE`.
fn readme_command() -> (String, Vec<String>) {
    let readme = std::fs::read_to_string(repo().join("launchd/README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("HOME=") && l.contains("schedule print"))
        .expect("regenerating command in launchd/README.md");
    let (cmd, target) = line.split_once(" > ").unwrap();
    assert_eq!(target.trim(), WEEKLY);
    let mut words = cmd.split_whitespace();
    let home = words
        .next()
        .unwrap()
        .strip_prefix("HOME=")
        .unwrap()
        .to_string();
    let args: Vec<String> = words
        .skip_while(|w| *w != "--")
        .skip(1)
        .map(String::from)
        .collect();
    (home, args)
}

#[test]
fn weekly_plist_matches_its_generating_command() {
    let (home, args) = readme_command();
    assert_eq!(args[0], "schedule");
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(&args)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let checked_in = std::fs::read_to_string(repo().join(WEEKLY)).unwrap();
    assert!(
        text(&out.stdout) == checked_in,
        "{WEEKLY} drifted from `schedule print`; regenerate it with the command in \
         launchd/README.md\n--- generated ---\n{}",
        text(&out.stdout)
    );
}

#[test]
fn weekly_plist_program_arguments_parse_with_the_cli() {
    use clap::Parser;
    use rehearse::cli::{Cli, Command as Cmd};
    let agent = plist::from_bytes(&std::fs::read(repo().join(WEEKLY)).unwrap()).unwrap();
    let argv = &agent.program_arguments;
    assert!(Path::new(&argv[0]).is_absolute(), "{argv:?}");
    let mut cli_argv = vec!["rehearse".to_string()];
    cli_argv.extend(argv[1..].iter().cloned());
    let cli = Cli::try_parse_from(&cli_argv).unwrap_or_else(|e| panic!("{e}"));
    match cli.command {
        Some(Cmd::Run(run)) => {
            assert_eq!(run.scenarios, ["weekly"]);
            assert_eq!(
                run.report_dir.as_deref(),
                Some(Path::new("/Users/rehearse/rehearse/reports"))
            );
        }
        other => panic!("not a run command: {other:?}"),
    }
    assert_eq!(agent.process_type, "Interactive");
    assert_eq!(
        agent.start_calendar_interval.entries()[0].describe(),
        "Mon 03:00"
    );
}

const PYTHON_READER: &str = r#"
import json, plistlib, sys
with open(sys.argv[1], "rb") as f:
    p = plistlib.load(f)
print(json.dumps({k: p[k] for k in ["Label", "ProgramArguments", "StartCalendarInterval",
    "StandardOutPath", "WorkingDirectory", "ProcessType"]} | {"PATH": p["EnvironmentVariables"]["PATH"]}))
"#;

#[test]
fn python_plistlib_reads_what_we_write_including_xml_specials() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home of \"r\" & <co>");
    let awkward = "crm & <search> \"503\" storm.toml";
    let out = schedule(
        &[
            "print",
            "--scenario",
            "weekly",
            "--scenario",
            awkward,
            "--weekday",
            "1",
            "--weekday",
            "4",
            "--hour",
            "3",
            "--minute",
            "0",
            "--minute",
            "30",
            "--program",
            "/opt/re hearse/bin/rehearse",
            "--working-dir",
            "/Users/r/my <work> & dir",
        ],
        &home,
        "/usr/bin:/bin",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let file = tmp.path().join("agent.plist");
    std::fs::write(&file, &out.stdout).unwrap();
    // Our own parser first.
    let ours = plist::from_bytes(&out.stdout).unwrap();
    assert!(matches!(ours.start_calendar_interval, CalendarInterval::Many(ref v) if v.len() == 2));
    let py = match Command::new("python3")
        .args(["-c", PYTHON_READER])
        .arg(&file)
        .output()
    {
        Ok(o) => o,
        Err(_) => {
            println!("SKIPPED: python3 not found; the independent plistlib check did not run");
            return;
        }
    };
    assert!(py.status.success(), "python3: {}", text(&py.stderr));
    let v: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(v["Label"], "ai.openclaw.rehearse.weekly");
    assert_eq!(
        v["ProgramArguments"],
        serde_json::json!([
            "/opt/re hearse/bin/rehearse",
            "run",
            "--scenario",
            "weekly",
            "--scenario",
            awkward,
            "--report-dir",
            "/Users/r/my <work> & dir/reports"
        ])
    );
    assert_eq!(
        v["StartCalendarInterval"],
        serde_json::json!([
            {"Weekday": 1, "Hour": 3, "Minute": 0},
            {"Weekday": 4, "Hour": 3, "Minute": 30}
        ])
    );
    assert_eq!(
        v["StandardOutPath"],
        format!(
            "{}/Library/Logs/rehearse/ai.openclaw.rehearse.weekly.out.log",
            home.display()
        )
    );
    assert_eq!(
        v["PATH"],
        "/opt/re hearse/bin:/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    );
    assert_eq!(v["WorkingDirectory"], "/Users/r/my <work> & dir");
    assert_eq!(v["ProcessType"], "Interactive");
}

#[test]
fn bad_calendar_or_missing_scenario_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (
            vec![
                "print",
                "--scenario",
                "weekly",
                "--hour",
                "24",
                "--minute",
                "0",
            ],
            "--hour 24 is out of range 0-23",
        ),
        (
            vec![
                "print",
                "--scenario",
                "weekly",
                "--weekday",
                "1",
                "--hour",
                "3",
            ],
            "--minute is required",
        ),
        (vec!["print", "--hour", "3", "--minute", "0"], "--scenario"),
    ] {
        let out = schedule(&args, tmp.path(), "/usr/bin:/bin");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(needle),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[cfg(not(target_os = "macos"))]
mod without_launchctl {
    use super::*;

    const INSTALL: [&str; 9] = [
        "install",
        "--scenario",
        "weekly",
        "--weekday",
        "1",
        "--hour",
        "3",
        "--minute",
        "0",
    ];

    #[test]
    fn install_and_uninstall_with_dir_and_no_load_write_and_remove_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("agents");
        let d = dir.to_str().unwrap();
        let mut args = INSTALL.to_vec();
        args.extend(["--dir", d, "--no-load"]);
        let out = schedule(&args, tmp.path(), "/usr/bin:/bin");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let file = dir.join("ai.openclaw.rehearse.weekly.plist");
        let agent = plist::from_bytes(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(agent.label, "ai.openclaw.rehearse.weekly");
        assert_eq!(agent.program_arguments[0], env!("CARGO_BIN_EXE_rehearse"));
        let st = schedule(
            &["status", "--dir", d, "--no-load"],
            tmp.path(),
            "/usr/bin:/bin",
        );
        assert_eq!(st.status.code(), Some(0));
        let s = text(&st.stdout);
        assert!(
            s.contains("loaded: unknown (--no-load)") && s.contains("schedule: Mon 03:00"),
            "{s}"
        );
        assert!(s.contains("next run: Mon "), "{s}");
        let out = schedule(
            &["uninstall", "--dir", d, "--no-load"],
            tmp.path(),
            "/usr/bin:/bin",
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(!file.exists());
        assert!(text(&out.stdout).contains("removed"));
    }

    #[test]
    fn without_dir_and_no_load_every_action_exits_2_naming_launchctl() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("agents");
        let d = d.to_str().unwrap();
        let mut no_load_only = INSTALL.to_vec();
        no_load_only.push("--no-load");
        let mut dir_only = INSTALL.to_vec();
        dir_only.extend(["--dir", d]);
        for args in [
            INSTALL.to_vec(),
            no_load_only,
            dir_only,
            vec!["uninstall"],
            vec!["status"],
        ] {
            let out = schedule(&args, tmp.path(), "/usr/bin:/bin");
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let err = text(&out.stderr);
            assert!(
                err.contains("launchctl not found") && err.contains("--dir DIR --no-load"),
                "{err}"
            );
        }
        assert!(!tmp.path().join("Library").exists(), "nothing written");
    }

    #[test]
    fn a_fake_launchctl_receives_the_expected_argument_vectors() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let log = tmp.path().join("calls.log");
        let script = format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\" >> '{}'; done\necho >> '{}'\n\
             if [ \"$1\" = print ]; then printf '%s = {{\\n\\tstate = not running\\n\\truns = 2\\n\\tlast exit code = 1\\n}}\\n' \"$2\"; fi\n",
            log.display(),
            log.display()
        );
        let fake = bin.join("launchctl");
        std::fs::write(&fake, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("{}:/usr/bin:/bin", bin.display());
        let home = tmp.path().join("home dir");
        let out = schedule(&INSTALL, &home, &path);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let st = schedule(&["status"], &home, &path);
        let s = text(&st.stdout);
        assert!(
            s.contains("loaded: yes") && s.contains("runs: 2") && s.contains("last exit code: 1"),
            "{s}"
        );
        let un = schedule(&["uninstall"], &home, &path);
        assert_eq!(un.status.code(), Some(0), "{}", text(&un.stderr));
        let uid = unsafe { libc::getuid() };
        let plist = home.join("Library/LaunchAgents/ai.openclaw.rehearse.weekly.plist");
        assert!(!plist.exists());
        assert!(home.join("Library/Logs/rehearse").is_dir());
        let calls = std::fs::read_to_string(&log).unwrap();
        let label = format!("gui/{uid}/ai.openclaw.rehearse.weekly");
        assert_eq!(
            calls.lines().collect::<Vec<_>>(),
            [
                format!("[bootout][{label}]"),
                format!("[bootstrap][gui/{uid}][{}]", plist.display()),
                format!("[print][{label}]"),
                format!("[bootout][{label}]"),
            ]
        );
    }
}
