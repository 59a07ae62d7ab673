//! launchd LaunchAgent plists and `launchctl` (docs/launchd.md): `rehearse schedule
//! print|install|uninstall|status`.
//!
//! # Layout
//! - [`calendar`]: `StartCalendarInterval` entries from the flags, range checks, next run.
//! - [`plist`]: the plist model (serde, PascalCase keys) and its XML.
//! - [`launchctl`]: pure argv builders, the child-process runner, the `print` summary.
//! - [`migrate`]: the agent of the old label (`ai.openclaw.rehearse.NAME`) that `install`
//!   replaces.
//! - `cmd`: the command (the CLI edge).
//!
//! Flags are resolved here into an [`plist::AgentSpec`] by [`resolve`], a pure function of the
//! flags, an [`Env`] (HOME, working directory, this binary) and a scenario resolver, so the
//! checked-in example in `launchd/` is reproducible on any machine. [`check_paths`] then asks the
//! file system what a run at 03:00 would need: every scenario file valid now, the working
//! directory a directory, the program an executable file (exit 2 otherwise).
//!
//! Longer than 400 lines on purpose: the plist model, its rendering and the launchctl calls change
//! together.

pub(crate) mod calendar;
mod cmd;
pub(crate) mod launchctl;
pub(crate) mod migrate;
pub mod plist;
pub(crate) mod program;

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

pub(crate) use cmd::command;

use crate::cli::SchedulePlanArgs;
use crate::scenario::resolve::{NotFound, Resolved};
use calendar::CalendarError;
use plist::AgentSpec;

/// What the plan depends on outside the flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// The current directory.
    pub cwd: Option<PathBuf>,
    /// This binary.
    pub current_exe: Option<PathBuf>,
    /// `$PATH`, to find `launchctl`.
    pub path: Option<OsString>,
}

impl Env {
    /// The environment of this process.
    pub(crate) fn from_process() -> Self {
        Self {
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            cwd: std::env::current_dir().ok(),
            current_exe: std::env::current_exe().ok(),
            path: std::env::var_os("PATH"),
        }
    }
}

/// Flags that cannot make a valid LaunchAgent (exit 2).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// No `--scenario`.
    #[error("give at least one --scenario NAME|PATH for the scheduled run")]
    NoScenario,
    /// Bad calendar flags.
    #[error(transparent)]
    Calendar(#[from] CalendarError),
    /// A label launchd or the file system would not take.
    #[error(
        "--label {0:?}: use letters, digits, '.', '-' and '_' (reverse-DNS, e.g. dev.rehearse.weekly)"
    )]
    Label(String),
    /// `$HOME` unset.
    #[error("HOME is not set: the plist's log paths and ~/Library/LaunchAgents need it")]
    NoHome,
    /// A path that must be absolute is not (and there is no current directory to resolve it).
    #[error("{flag} {path:?} must be an absolute path")]
    NotAbsolute {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: PathBuf,
    },
    /// A `--scenario` that does not resolve now.
    #[error("--scenario {arg}: {why}")]
    Scenario {
        /// The argument as given.
        arg: String,
        /// What is wrong (the resolver's or the validator's message).
        why: String,
    },
    /// A scenario file that does not load or validate now (the message names file:line:col).
    #[error("{0}")]
    InvalidScenario(String),
    /// A path the scheduled run needs that is not there (or not what it must be).
    #[error("{flag} {}: {why}", path.display())]
    Missing {
        /// The flag (or the default it stands for).
        flag: &'static str,
        /// The absolute path.
        path: PathBuf,
        /// What it must be.
        why: &'static str,
    },
}

/// Resolves the flags of `schedule print|install` into a spec. `find_scenario` is the
/// `--scenario` resolver (`scenario::resolve::resolve_in` in the binary); a user's file it returns
/// is made absolute against the current directory, so the plist never holds a bare name; a
/// built-in goes in as `builtin:NAME`, the scheduled binary's own built-in (never its copy in a
/// versioned cache directory). The program is [`program::stable`]'s: a Homebrew install's
/// `bin/rehearse`, never its versioned `Cellar/` path.
pub fn resolve(
    args: &SchedulePlanArgs,
    env: &Env,
    find_scenario: &dyn Fn(&str) -> Result<Resolved, NotFound>,
) -> Result<AgentSpec, PlanError> {
    check_label(&args.label)?;
    if args.scenarios.is_empty() {
        return Err(PlanError::NoScenario);
    }
    let calendar = calendar::entries_from_flags(&args.weekday, &args.hour, &args.minute)?;
    let home = env.home.clone().ok_or(PlanError::NoHome)?;
    if !home.is_absolute() {
        return Err(PlanError::NotAbsolute {
            flag: "HOME",
            path: home,
        });
    }
    let cwd = env.cwd.as_deref();
    let mut scenarios = Vec::new();
    for arg in &args.scenarios {
        let found = find_scenario(arg).map_err(|e| PlanError::Scenario {
            arg: arg.clone(),
            why: e.to_string(),
        })?;
        scenarios.push(match found.builtin {
            Some(_) => found.argument(),
            None => absolute("--scenario", &found.path, cwd)?,
        });
    }
    let program = match (&args.program, &env.current_exe) {
        (Some(p), _) => absolute("--program", p, cwd)?,
        (None, Some(exe)) => program::stable(&absolute("--program", exe, cwd)?, &|p| {
            is_executable_file(p)
        }),
        (None, None) => {
            return Err(PlanError::NotAbsolute {
                flag: "--program",
                path: PathBuf::new(),
            });
        }
    };
    let working_dir = match (&args.working_dir, cwd) {
        (Some(w), _) => absolute("--working-dir", w, cwd)?,
        (None, Some(c)) => normalize(c),
        (None, None) => {
            return Err(PlanError::NotAbsolute {
                flag: "--working-dir",
                path: PathBuf::new(),
            });
        }
    };
    let report_dir = match &args.report_dir {
        Some(r) => normalize(&working_dir.join(r)),
        None => working_dir.join("reports"),
    };
    let textfile_dir = args
        .textfile_dir
        .as_ref()
        .map(|d| normalize(&working_dir.join(d)));
    Ok(AgentSpec {
        label: args.label.clone(),
        program,
        scenarios,
        report_dir,
        working_dir,
        home,
        calendar,
        keep: (!args.keep_all).then_some(args.keep),
        textfile_dir,
        pushgateway: args.pushgateway.clone(),
        on_fail: args.on_fail.clone(),
    })
}

/// What the scheduled run needs from the file system, checked now: each scenario loads and
/// validates (as `rehearse validate` would), the working directory exists, the program is an
/// executable file. The report directory is not checked: the run creates it.
pub(crate) fn check_paths(spec: &AgentSpec) -> Result<(), PlanError> {
    for s in &spec.scenarios {
        let file = match s.to_str().filter(|a| a.starts_with(crate::builtin::PREFIX)) {
            Some(arg) => {
                crate::scenario::resolve::resolve_in(arg, None)
                    .map_err(|e| PlanError::Scenario {
                        arg: arg.to_string(),
                        why: e.to_string(),
                    })?
                    .path
            }
            None => s.clone(),
        };
        crate::scenario::validate::check(&file)
            .map_err(|e| PlanError::InvalidScenario(e.to_string()))?;
    }
    if !spec.working_dir.is_dir() {
        return Err(PlanError::Missing {
            flag: "--working-dir",
            path: spec.working_dir.clone(),
            why: "is not an existing directory (launchd starts the run there)",
        });
    }
    if !is_executable_file(&spec.program) {
        return Err(PlanError::Missing {
            flag: "--program",
            path: spec.program.clone(),
            why: "is not an executable file",
        });
    }
    Ok(())
}

#[cfg(unix)]
fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(p: &Path) -> bool {
    p.is_file()
}

/// Where install writes the plist: `--dir` or `~/Library/LaunchAgents`, then `<label>.plist`.
pub(crate) fn plist_path(label: &str, dir: Option<&Path>, env: &Env) -> Result<PathBuf, PlanError> {
    check_label(label)?;
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => env
            .home
            .as_ref()
            .ok_or(PlanError::NoHome)?
            .join("Library/LaunchAgents"),
    };
    Ok(dir.join(format!("{label}.plist")))
}

fn check_label(label: &str) -> Result<(), PlanError> {
    let ok = !label.is_empty()
        && !label.starts_with('.')
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if ok {
        Ok(())
    } else {
        Err(PlanError::Label(label.to_string()))
    }
}

/// `p` if absolute, else joined onto `cwd`; `.` and `..` resolved lexically.
fn absolute(flag: &'static str, p: &Path, cwd: Option<&Path>) -> Result<PathBuf, PlanError> {
    if p.is_absolute() {
        return Ok(normalize(p));
    }
    match cwd {
        Some(c) => Ok(normalize(&c.join(p))),
        None => Err(PlanError::NotAbsolute {
            flag,
            path: p.to_path_buf(),
        }),
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> SchedulePlanArgs {
        SchedulePlanArgs {
            scenarios: vec!["weekly".into()],
            scenarios_dir: None,
            weekday: vec![1],
            hour: vec![3],
            minute: vec![0],
            label: "dev.rehearse.weekly".into(),
            report_dir: None,
            program: None,
            working_dir: None,
            keep: crate::cli::DEFAULT_KEEP,
            keep_all: false,
            textfile_dir: None,
            pushgateway: None,
            on_fail: None,
        }
    }

    fn env() -> Env {
        Env {
            home: Some("/Users/r".into()),
            cwd: Some("/Users/r/src/rehearse".into()),
            current_exe: Some("/Users/r/src/rehearse/target/release/rehearse".into()),
            path: None,
        }
    }

    /// The resolver as it answers from a checkout's root (`smoke`: only a built-in there).
    fn fixtures(name: &str) -> Result<Resolved, NotFound> {
        match name {
            "weekly" => Ok(Resolved {
                path: PathBuf::from("fixtures/scenarios/weekly.toml"),
                builtin: None,
                note: None,
            }),
            "smoke" => Ok(Resolved {
                path: PathBuf::from("/cache/builtin-x/scenarios/smoke.toml"),
                builtin: Some("smoke".into()),
                note: None,
            }),
            _ => Err(NotFound::Name {
                name: name.into(),
                tried: vec![PathBuf::from(format!("fixtures/scenarios/{name}.toml"))],
                suggestion: None,
            }),
        }
    }

    #[test]
    fn a_builtin_goes_in_by_name_not_by_its_cache_path() {
        let mut a = args();
        a.scenarios = vec!["smoke".into(), "weekly".into()];
        let s = resolve(&a, &env(), &fixtures).unwrap();
        assert_eq!(
            s.scenarios,
            [
                Path::new("builtin:smoke"),
                Path::new("/Users/r/src/rehearse/fixtures/scenarios/weekly.toml")
            ]
        );
    }

    #[test]
    fn defaults_come_from_the_environment() {
        let s = resolve(&args(), &env(), &fixtures).unwrap();
        assert_eq!(
            s.program,
            Path::new("/Users/r/src/rehearse/target/release/rehearse")
        );
        assert_eq!(s.working_dir, Path::new("/Users/r/src/rehearse"));
        assert_eq!(s.report_dir, Path::new("/Users/r/src/rehearse/reports"));
        assert_eq!(
            s.scenarios,
            [Path::new(
                "/Users/r/src/rehearse/fixtures/scenarios/weekly.toml"
            )]
        );
        assert_eq!(
            plist_path("dev.rehearse.weekly", None, &env()).unwrap(),
            Path::new("/Users/r/Library/LaunchAgents/dev.rehearse.weekly.plist")
        );
    }

    #[test]
    fn relative_flags_are_made_absolute() {
        let mut a = args();
        a.program = Some("./target/../bin/rehearse".into());
        a.working_dir = Some("/srv/reh".into());
        a.report_dir = Some("out/reports".into());
        let s = resolve(&a, &env(), &fixtures).unwrap();
        assert_eq!(s.program, Path::new("/Users/r/src/rehearse/bin/rehearse"));
        assert_eq!(s.report_dir, Path::new("/srv/reh/out/reports"));
        // The scenario resolves where the command runs, not under --working-dir.
        assert_eq!(
            s.scenarios,
            [Path::new(
                "/Users/r/src/rehearse/fixtures/scenarios/weekly.toml"
            )]
        );
    }

    #[test]
    fn bad_flags_are_plan_errors() {
        let mut a = args();
        a.scenarios.clear();
        assert_eq!(resolve(&a, &env(), &fixtures), Err(PlanError::NoScenario));
        let mut a = args();
        a.label = "../evil".into();
        assert!(matches!(
            resolve(&a, &env(), &fixtures),
            Err(PlanError::Label(_))
        ));
        let mut a = args();
        a.hour = vec![24];
        assert!(matches!(
            resolve(&a, &env(), &fixtures),
            Err(PlanError::Calendar(_))
        ));
        let e = Env {
            home: None,
            ..env()
        };
        assert_eq!(resolve(&args(), &e, &fixtures), Err(PlanError::NoHome));
        let mut a = args();
        a.scenarios.push("weekyl".into());
        let err = resolve(&a, &env(), &fixtures).unwrap_err().to_string();
        assert!(
            err.starts_with("--scenario weekyl: no scenario named `weekyl`")
                && err.contains("fixtures/scenarios/weekyl.toml"),
            "{err}"
        );
    }

    #[test]
    fn check_paths_wants_a_working_dir_and_an_executable_program() {
        let tmp = tempfile::tempdir().unwrap();
        let program = tmp.path().join("rehearse");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let spec = |working_dir: PathBuf, program: PathBuf| AgentSpec {
            label: "l".into(),
            program,
            scenarios: vec![],
            report_dir: tmp.path().join("reports"),
            working_dir,
            home: tmp.path().into(),
            calendar: vec![],
            keep: None,
            textfile_dir: None,
            pushgateway: None,
            on_fail: None,
        };
        let missing = tmp.path().join("no-such-dir");
        let err = check_paths(&spec(missing.clone(), program.clone())).unwrap_err();
        assert!(
            matches!(err, PlanError::Missing { flag: "--working-dir", ref path, .. } if *path == missing)
        );
        #[cfg(unix)]
        {
            let err = check_paths(&spec(tmp.path().into(), program.clone())).unwrap_err();
            assert!(
                err.to_string().contains("is not an executable file"),
                "not executable yet: {err}"
            );
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        check_paths(&spec(tmp.path().into(), program.clone())).unwrap();
        let err = check_paths(&spec(tmp.path().into(), tmp.path().into())).unwrap_err();
        assert!(err.to_string().contains("--program"), "a directory: {err}");
    }
}
