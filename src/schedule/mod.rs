//! launchd LaunchAgent plists and `launchctl` (DESIGN section 10): `rehearse schedule
//! print|install|uninstall|status`.
//!
//! # Layout
//! - [`calendar`]: `StartCalendarInterval` entries from the flags, range checks, next run.
//! - [`plist`]: the plist model (serde, PascalCase keys) and its XML.
//! - [`launchctl`]: pure argv builders, the child-process runner, the `print` summary.
//! - `cmd`: the command (the CLI edge).
//!
//! Flags are resolved here into an [`plist::AgentSpec`] by [`resolve`], a pure function of the
//! flags and an [`Env`] (HOME, working directory, this binary), so the checked-in example in
//! `launchd/` is reproducible on any machine.

pub mod calendar;
mod cmd;
pub mod launchctl;
pub mod plist;

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

pub use cmd::command;

use crate::cli::ScheduleArgs;
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
    pub fn from_process() -> Self {
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
        "--label {0:?}: use letters, digits, '.', '-' and '_' (reverse-DNS, e.g. ai.openclaw.rehearse.weekly)"
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
}

/// Resolves the flags of `schedule print|install` into a spec.
pub fn resolve(args: &ScheduleArgs, env: &Env) -> Result<AgentSpec, PlanError> {
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
    let program = match (&args.program, &env.current_exe) {
        (Some(p), _) => absolute("--program", p, cwd)?,
        (None, Some(exe)) => absolute("--program", exe, cwd)?,
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
    Ok(AgentSpec {
        label: args.label.clone(),
        program,
        scenarios: args.scenarios.clone(),
        report_dir,
        working_dir,
        home,
        calendar,
    })
}

/// Where install writes the plist: `--dir` or `~/Library/LaunchAgents`, then `<label>.plist`.
pub fn plist_path(args: &ScheduleArgs, env: &Env) -> Result<PathBuf, PlanError> {
    check_label(&args.label)?;
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => env
            .home
            .as_ref()
            .ok_or(PlanError::NoHome)?
            .join("Library/LaunchAgents"),
    };
    Ok(dir.join(format!("{}.plist", args.label)))
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
    use crate::cli::ScheduleAction;

    fn args() -> ScheduleArgs {
        ScheduleArgs {
            action: ScheduleAction::Print,
            scenarios: vec!["weekly".into()],
            weekday: vec![1],
            hour: vec![3],
            minute: vec![0],
            label: "ai.openclaw.rehearse.weekly".into(),
            report_dir: None,
            dir: None,
            no_load: false,
            program: None,
            working_dir: None,
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

    #[test]
    fn defaults_come_from_the_environment() {
        let s = resolve(&args(), &env()).unwrap();
        assert_eq!(
            s.program,
            Path::new("/Users/r/src/rehearse/target/release/rehearse")
        );
        assert_eq!(s.working_dir, Path::new("/Users/r/src/rehearse"));
        assert_eq!(s.report_dir, Path::new("/Users/r/src/rehearse/reports"));
        assert_eq!(
            plist_path(&args(), &env()).unwrap(),
            Path::new("/Users/r/Library/LaunchAgents/ai.openclaw.rehearse.weekly.plist")
        );
    }

    #[test]
    fn relative_flags_are_made_absolute() {
        let mut a = args();
        a.program = Some("./target/../bin/rehearse".into());
        a.working_dir = Some("/srv/reh".into());
        a.report_dir = Some("out/reports".into());
        let s = resolve(&a, &env()).unwrap();
        assert_eq!(s.program, Path::new("/Users/r/src/rehearse/bin/rehearse"));
        assert_eq!(s.report_dir, Path::new("/srv/reh/out/reports"));
    }

    #[test]
    fn bad_flags_are_plan_errors() {
        let mut a = args();
        a.scenarios.clear();
        assert_eq!(resolve(&a, &env()), Err(PlanError::NoScenario));
        let mut a = args();
        a.label = "../evil".into();
        assert!(matches!(resolve(&a, &env()), Err(PlanError::Label(_))));
        let mut a = args();
        a.hour = vec![24];
        assert!(matches!(resolve(&a, &env()), Err(PlanError::Calendar(_))));
        let e = Env {
            home: None,
            ..env()
        };
        assert_eq!(resolve(&args(), &e), Err(PlanError::NoHome));
    }
}
