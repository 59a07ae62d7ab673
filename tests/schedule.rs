//! `rehearse schedule` and the checked-in launchd example.
//!
//! Longer than 400 lines on purpose: one suite for one command: plist rendering,
//! install/uninstall/status against a fake launchctl, and the checked-in example, which share their
//! fixtures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rehearse::schedule::plist::{self, CalendarInterval};

const WEEKLY: &str = "launchd/dev.rehearse.weekly.plist";

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

/// The generating command written in launchd/README.md:
/// `HOME=X rehearse schedule print ARGS > FILE` (run from the checkout X/rehearse on the Mac).
fn readme_command() -> (String, Vec<String>) {
    let readme = std::fs::read_to_string(repo().join("launchd/README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("HOME=") && l.contains("schedule print"))
        .expect("generating command in launchd/README.md");
    let (cmd, target) = line.split_once(" > ").unwrap();
    assert_eq!(target.trim(), WEEKLY);
    let mut words = cmd.split_whitespace();
    let home = words
        .next()
        .unwrap()
        .strip_prefix("HOME=")
        .unwrap()
        .to_string();
    assert_eq!(words.next(), Some("rehearse"), "{line}");
    (home, words.map(String::from).collect())
}

/// The example is what `schedule print` writes on the Mac it describes, whose paths do not exist
/// here: the same resolve → build → XML path the binary takes, with that Mac's environment
/// injected, and the scenario found by the real `--scenario` resolver from this checkout's root
/// (what it answers from the Mac's checkout root too). `UPDATE_GOLDEN=1` rewrites the file.
#[test]
fn weekly_plist_matches_its_generating_command() {
    use clap::Parser;
    use rehearse::cli::{Cli, Command as Cmd, ScheduleAction};
    use rehearse::schedule::{Env, resolve};
    let (home, args) = readme_command();
    let cli = Cli::try_parse_from(std::iter::once("rehearse".to_string()).chain(args))
        .unwrap_or_else(|e| panic!("{e}"));
    let Some(Cmd::Schedule(s)) = cli.command else {
        panic!("not a schedule command")
    };
    let ScheduleAction::Print(plan) = s.action else {
        panic!("not schedule print")
    };
    let checkout = plan
        .working_dir
        .clone()
        .expect("--working-dir in the command");
    let env = Env {
        home: Some(home.into()),
        cwd: Some(checkout),
        current_exe: None,
        path: None,
    };
    assert_eq!(
        std::env::current_dir().unwrap(),
        repo(),
        "integration tests run from the checkout root"
    );
    let spec = resolve(&plan, &env, &|s| rehearse::scenario::resolve::resolve(s))
        .unwrap_or_else(|e| panic!("{e}"));
    let generated = plist::to_xml(&plist::build(&spec)).unwrap();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(repo().join(WEEKLY), &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(repo().join(WEEKLY)).unwrap();
    assert!(
        generated == checked_in,
        "{WEEKLY} drifted from `schedule print`; regenerate it with \
         `UPDATE_GOLDEN=1 cargo test --test integration schedule::weekly_plist_matches`\n\
         --- generated ---\n{generated}"
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
            assert_eq!(
                run.scenarios,
                ["/Users/rehearse/rehearse/fixtures/scenarios/weekly.toml"],
                "an absolute scenario path, not a name resolved at 03:00"
            );
            assert_eq!(
                run.report_dir.as_deref(),
                Some(Path::new("/Users/rehearse/rehearse/reports"))
            );
            assert_eq!(run.keep, Some(12), "the schedule's default retention");
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

/// An executable file at `path` (its directories created).
fn fake_program(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A valid scenario at `path`: the smoke fixture with its traffic path made absolute.
fn scenario_copy(path: &Path) {
    let text = std::fs::read_to_string(repo().join("fixtures/scenarios/smoke.toml")).unwrap();
    let traffic = repo().join("fixtures/traffic/smoke.jsonl");
    let text = text.replace(
        "traffic = \"../traffic/smoke.jsonl\"",
        &format!("traffic = {:?}", traffic.display().to_string()),
    );
    std::fs::write(path, text).unwrap();
}

#[test]
fn python_plistlib_reads_what_we_write_including_xml_specials() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home of \"r\" & <co>");
    let awkward = tmp.path().join("crm & <search> \"503\" storm.toml");
    scenario_copy(&awkward);
    let program = tmp.path().join("re hearse/bin/rehearse");
    fake_program(&program);
    let work = tmp.path().join("my <work> & dir");
    std::fs::create_dir_all(&work).unwrap();
    let out = schedule(
        &[
            "print",
            "--scenario",
            "weekly",
            "--scenario",
            awkward.to_str().unwrap(),
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
            program.to_str().unwrap(),
            "--working-dir",
            work.to_str().unwrap(),
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
    let py = Command::new("python3")
        .args(["-c", PYTHON_READER])
        .arg(&file)
        .output()
        .expect(
            "python3 is not installed: `apt-get install -y python3` (.ci/test does it) — this \
             test reads the plist with Python's plistlib",
        );
    assert!(py.status.success(), "python3: {}", text(&py.stderr));
    let v: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(v["Label"], "dev.rehearse.weekly");
    assert_eq!(
        v["ProgramArguments"],
        serde_json::json!([
            program.to_str().unwrap(),
            "run",
            "--scenario",
            repo()
                .join("fixtures/scenarios/weekly.toml")
                .to_str()
                .unwrap(),
            "--scenario",
            awkward.to_str().unwrap(),
            "--report-dir",
            work.join("reports").to_str().unwrap(),
            "--keep",
            "12"
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
            "{}/Library/Logs/rehearse/dev.rehearse.weekly.out.log",
            home.display()
        )
    );
    assert_eq!(
        v["PATH"],
        format!(
            "{}:/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            program.parent().unwrap().display()
        )
    );
    assert_eq!(v["WorkingDirectory"], work.to_str().unwrap());
    assert_eq!(v["ProcessType"], "Interactive");
}

/// print/install used to take a scenario, working directory or program that does not exist
/// (exit 0), to fail at 03:00. Each is exit 2 now, naming what is wrong, and install writes
/// nothing.
#[test]
fn print_and_install_refuse_what_the_scheduled_run_could_not_use() {
    let tmp = tempfile::tempdir().unwrap();
    let program = tmp.path().join("bin/rehearse");
    fake_program(&program);
    let not_exec = tmp.path().join("bin/plain");
    std::fs::write(&not_exec, "").unwrap();
    let bad_toml = tmp.path().join("broken.toml");
    std::fs::write(&bad_toml, "name = \"x\"\nduration = [\n").unwrap();
    let missing_dir = tmp.path().join("no/such/dir");
    let agents = tmp.path().join("agents");
    let base = |scenario: &str, program: &Path, work: &Path| -> Vec<String> {
        [
            "--scenario",
            scenario,
            "--weekday",
            "1",
            "--hour",
            "3",
            "--minute",
            "0",
            "--program",
            program.to_str().unwrap(),
            "--working-dir",
            work.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            base("weekyl", &program, tmp.path()),
            "--scenario weekyl: no scenario named `weekyl` (looked for fixtures/scenarios/weekyl.toml"
                .into(),
        ),
        (
            base(tmp.path().join("gone.toml").to_str().unwrap(), &program, tmp.path()),
            "gone.toml".into(),
        ),
        (
            base(bad_toml.to_str().unwrap(), &program, tmp.path()),
            format!("error: {}:2:13: unclosed array", bad_toml.display()),
        ),
        (
            base("weekly", &program, &missing_dir),
            format!(
                "--working-dir {}: is not an existing directory",
                missing_dir.display()
            ),
        ),
        (
            base("weekly", &tmp.path().join("bin/nope"), tmp.path()),
            format!(
                "--program {}: is not an executable file",
                tmp.path().join("bin/nope").display()
            ),
        ),
        (
            base("weekly", &not_exec, tmp.path()),
            "is not an executable file".into(),
        ),
    ];
    for (args, needle) in cases {
        for action in ["print", "install"] {
            let mut argv = vec![action.to_string()];
            argv.extend(args.iter().cloned());
            if action == "install" {
                argv.extend(["--dir", agents.to_str().unwrap(), "--no-load"].map(String::from));
            }
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let out = schedule(&argv, tmp.path(), "/usr/bin:/bin");
            assert_eq!(
                out.status.code(),
                Some(2),
                "{argv:?}\n{}",
                text(&out.stderr)
            );
            assert!(
                text(&out.stderr).contains(&needle),
                "{argv:?}: wanted {needle:?} in\n{}",
                text(&out.stderr)
            );
            assert!(out.stdout.is_empty(), "nothing printed: {argv:?}");
        }
    }
    assert!(!agents.exists(), "install wrote nothing");
    assert!(!tmp.path().join("Library").exists(), "no log dir either");
}

#[test]
fn print_help_shows_only_the_flags_print_takes() {
    let tmp = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| {
        let out = schedule(args, tmp.path(), "/usr/bin:/bin");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        text(&out.stdout)
    };
    let print = help(&["print", "--help"]);
    assert!(
        print.contains("--scenario") && print.contains("--working-dir"),
        "{print}"
    );
    assert!(
        !print.contains("--dir ") && !print.contains("--no-load"),
        "{print}"
    );
    let install = help(&["install", "--help"]);
    assert!(
        install.contains("--dir <DIR>") && install.contains("--no-load"),
        "{install}"
    );
    let uninstall = help(&["uninstall", "--help"]);
    assert!(
        uninstall.contains("--no-load") && !uninstall.contains("--scenario"),
        "{uninstall}"
    );
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
        // An agent of an earlier version under the old label, and another one of someone else.
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join("ai.openclaw.rehearse.weekly.plist");
        std::fs::write(&old, "old").unwrap();
        std::fs::write(dir.join("com.example.other.plist"), "theirs").unwrap();
        let out = schedule(&args, tmp.path(), "/usr/bin:/bin");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(!old.exists(), "the old agent's plist is replaced");
        assert!(
            said.contains("replaced the old agent ai.openclaw.rehearse.weekly: removed")
                && said.contains("launchctl bootout gui/$(id -u)/ai.openclaw.rehearse.weekly"),
            "{said}"
        );
        assert!(dir.join("com.example.other.plist").exists());
        let file = dir.join("dev.rehearse.weekly.plist");
        let agent = plist::from_bytes(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(agent.label, "dev.rehearse.weekly");
        assert_eq!(
            agent.program_arguments[agent.program_arguments.len() - 2..],
            ["--keep", "12"]
        );
        assert_eq!(agent.program_arguments[0], env!("CARGO_BIN_EXE_rehearse"));
        // launchd will not create the log directory, and a --no-load plist may be loaded later.
        let logs = tmp.path().join("Library/Logs/rehearse");
        assert!(
            logs.is_dir(),
            "--no-load install creates {}",
            logs.display()
        );
        assert_eq!(
            Path::new(&agent.standard_out_path).parent(),
            Some(logs.as_path())
        );
        assert!(text(&out.stdout).contains(&format!("logs: {}", logs.display())));
        // The wake before Monday 03:00, printed for root to run, never run.
        assert!(
            said.contains("\n  sudo pmset repeat wakeorpoweron M 02:55:00\n")
                && said.contains("needs root")
                && said.contains("replaces any repeat schedule already set"),
            "{said}"
        );
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
        assert!(s.contains("last runs: none in "), "{s}");
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
        let agents = home.join("Library/LaunchAgents");
        std::fs::create_dir_all(&agents).unwrap();
        let old = agents.join("ai.openclaw.rehearse.weekly.plist");
        std::fs::write(&old, "old").unwrap();
        let out = schedule(&INSTALL, &home, &path);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(!old.exists());
        assert!(
            text(&out.stdout)
                .contains("replaced the old agent ai.openclaw.rehearse.weekly: unloaded"),
            "{}",
            text(&out.stdout)
        );
        let st = schedule(&["status"], &home, &path);
        let s = text(&st.stdout);
        assert!(
            s.contains("loaded: yes") && s.contains("runs: 2") && s.contains("last exit code: 1"),
            "{s}"
        );
        let un = schedule(&["uninstall"], &home, &path);
        assert_eq!(un.status.code(), Some(0), "{}", text(&un.stderr));
        let uid = unsafe { libc::getuid() };
        let plist = home.join("Library/LaunchAgents/dev.rehearse.weekly.plist");
        assert!(!plist.exists());
        assert!(home.join("Library/Logs/rehearse").is_dir());
        let calls = std::fs::read_to_string(&log).unwrap();
        let label = format!("gui/{uid}/dev.rehearse.weekly");
        let old_label = format!("gui/{uid}/ai.openclaw.rehearse.weekly");
        assert_eq!(
            calls.lines().collect::<Vec<_>>(),
            [
                format!("[print][{old_label}]"),
                format!("[bootout][{old_label}]"),
                format!("[bootout][{label}]"),
                format!("[bootstrap][gui/{uid}][{}]", plist.display()),
                format!("[print][{label}]"),
                format!("[bootout][{label}]"),
            ]
        );
    }
}
