//! Where run directories go without `--report-dir`: `./reports`, or `~/rehearse/reports` when the
//! working directory cannot be written (a built-in scenario run from `/`, from a read-only
//! install's directory or a launchd job's default directory), said on stderr.

use std::path::{Path, PathBuf};


/// The default parent of run directories, relative to the working directory.
const DEFAULT_REPORT_DIR: &str = "reports";

/// The fallback under `$HOME`.
const HOME_REPORTS: &str = "rehearse/reports";

/// The report directory of a run without `--report-dir` (the fallback said on stderr).
pub(crate) fn report_dir() -> PathBuf {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let here = writable(Path::new(DEFAULT_REPORT_DIR));
    let (dir, note) = choose(here, home.as_deref());
    if let Some(note) = note {
        crate::errln!("note: {note}");
    }
    dir
}

/// `./reports` when `cwd_writable`, else `HOME/rehearse/reports` with the note saying so; with
/// no home, `./reports` (creating it fails with its own error).
pub(crate) fn choose(cwd_writable: bool, home: Option<&Path>) -> (PathBuf, Option<String>) {
    match home {
        Some(h) if !cwd_writable => {
            let dir = h.join(HOME_REPORTS);
            let note = format!(
                "the working directory cannot be written: reports go to {} (--report-dir DIR for another)",
                dir.display()
            );
            (dir, Some(note))
        }
        _ => (PathBuf::from(DEFAULT_REPORT_DIR), None),
    }
}

/// Can a file be created in `dir` (or, when it does not exist yet, in its parent)?
pub(crate) fn writable(dir: &Path) -> bool {
    let probe_in = if dir.exists() {
        dir.to_path_buf()
    } else {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    tempfile::Builder::new()
        .prefix(".rehearse-probe-")
        .tempfile_in(probe_in)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unwritable_working_directory_sends_reports_home_and_says_so() {
        let (dir, note) = choose(true, Some(Path::new("/h")));
        assert_eq!((dir, note), (PathBuf::from("reports"), None));
        let (dir, note) = choose(false, Some(Path::new("/h")));
        assert_eq!(dir, Path::new("/h/rehearse/reports"));
        assert!(note.unwrap().contains("/h/rehearse/reports"));
        assert_eq!(choose(false, None).0, PathBuf::from("reports"));
    }

    #[test]
    fn writability_is_probed_by_creating_a_file() {
        let d = tempfile::tempdir().unwrap();
        assert!(writable(&d.path().join("reports")), "parent is writable");
        assert!(writable(d.path()));
        assert!(!writable(&d.path().join("no/such/dir")));
    }
}
