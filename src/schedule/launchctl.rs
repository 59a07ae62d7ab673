//! `launchctl` command lines (built by pure functions, run as a child process with an argument
//! vector — never through a shell) and a summary of `launchctl print`, whose output "is not
//! official": it is shown to a human, never parsed for pass/fail.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The per-user GUI domain `gui/UID` (active only while the user is logged in at the GUI).
pub(crate) fn gui_domain(uid: u32) -> String {
    format!("gui/{uid}")
}

/// `launchctl bootstrap gui/UID PLIST` (load).
pub(crate) fn bootstrap_argv(launchctl: &Path, uid: u32, plist: &Path) -> Vec<OsString> {
    vec![
        launchctl.into(),
        "bootstrap".into(),
        gui_domain(uid).into(),
        plist.into(),
    ]
}

/// `launchctl bootout gui/UID/LABEL` (unload this job only; a bare domain would unload all).
pub(crate) fn bootout_argv(launchctl: &Path, uid: u32, label: &str) -> Vec<OsString> {
    vec![
        launchctl.into(),
        "bootout".into(),
        format!("{}/{label}", gui_domain(uid)).into(),
    ]
}

/// `launchctl print gui/UID/LABEL`.
pub(crate) fn print_argv(launchctl: &Path, uid: u32, label: &str) -> Vec<OsString> {
    vec![
        launchctl.into(),
        "print".into(),
        format!("{}/{label}", gui_domain(uid)).into(),
    ]
}

/// Runs an argv built above as a child process (no shell) and collects its output.
pub(crate) fn run(argv: &[OsString]) -> io::Result<Output> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty argv"))?;
    Command::new(program).args(args).output()
}

/// `/bin/launchctl` if present, else the first `launchctl` on `path_env`.
pub(crate) fn find(path_env: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let system = Path::new("/bin/launchctl");
    if system.is_file() {
        return Some(system.to_path_buf());
    }
    std::env::split_paths(path_env?)
        .map(|d| d.join("launchctl"))
        .find(|p| p.is_file())
}

/// The current user's uid.
pub(crate) fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// What `status` shows from `launchctl print`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PrintSummary {
    /// `state = running` / `not running`.
    pub state: Option<String>,
    /// `last exit code = 0` or `(never exited)`.
    pub last_exit_code: Option<String>,
    /// `runs = N`.
    pub runs: Option<String>,
    /// `pid = N` while running.
    pub pid: Option<String>,
    /// `path = …` (the plist launchd loaded).
    pub path: Option<String>,
}

/// Picks the top-level `key = value` lines of a `launchctl print` service dump.
pub(crate) fn summarise_print(text: &str) -> PrintSummary {
    let mut s = PrintSummary::default();
    for line in text.lines() {
        // Top-level properties are indented by exactly one tab; nested blocks by more.
        let Some(rest) = line.strip_prefix('\t') else {
            continue;
        };
        if rest.starts_with('\t') {
            continue;
        }
        let Some((k, v)) = rest.split_once(" = ") else {
            continue;
        };
        let v = Some(v.trim().to_string());
        match k.trim() {
            "state" => s.state = v,
            "last exit code" => s.last_exit_code = v,
            "runs" => s.runs = v,
            "pid" => s.pid = v,
            "path" => s.path = v,
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines() {
        let l = Path::new("/bin/launchctl");
        let p = Path::new("/Users/r/Library/LaunchAgents/dev.rehearse.weekly.plist");
        assert_eq!(
            bootstrap_argv(l, 501, p),
            [
                "/bin/launchctl",
                "bootstrap",
                "gui/501",
                "/Users/r/Library/LaunchAgents/dev.rehearse.weekly.plist"
            ]
            .map(OsString::from)
        );
        assert_eq!(
            bootout_argv(l, 501, "dev.rehearse.weekly"),
            [
                "/bin/launchctl",
                "bootout",
                "gui/501/dev.rehearse.weekly"
            ]
            .map(OsString::from)
        );
        assert_eq!(
            print_argv(l, 0, "x.y"),
            ["/bin/launchctl", "print", "gui/0/x.y"].map(OsString::from)
        );
    }

    #[test]
    fn a_path_with_spaces_stays_one_argument() {
        let argv = bootstrap_argv(Path::new("launchctl"), 501, Path::new("/tmp/a b/x.plist"));
        assert_eq!(argv.len(), 4);
        assert_eq!(argv[3], "/tmp/a b/x.plist");
    }

    #[test]
    fn summarises_print_output() {
        let text = "gui/501/dev.rehearse.weekly = {\n\
            \tactive count = 0\n\
            \tpath = /Users/r/Library/LaunchAgents/dev.rehearse.weekly.plist\n\
            \tstate = not running\n\
            \n\
            \tprogram = /usr/local/bin/rehearse\n\
            \targuments = {\n\
            \t\tstate = nested-ignored\n\
            \t}\n\
            \truns = 3\n\
            \tlast exit code = 1\n\
            }\n";
        let s = summarise_print(text);
        assert_eq!(s.state.as_deref(), Some("not running"));
        assert_eq!(s.runs.as_deref(), Some("3"));
        assert_eq!(s.last_exit_code.as_deref(), Some("1"));
        assert_eq!(s.pid, None);
        assert!(s.path.unwrap().ends_with("weekly.plist"));
    }
}
