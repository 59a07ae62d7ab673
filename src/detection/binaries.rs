//! Where the monitoring programs are: `prometheus`, `promtool` and Alertmanager, looked up on
//! `PATH` under the names Debian and Homebrew install them as (Debian: `prometheus-alertmanager`;
//! Homebrew: `alertmanager`). A missing one names the package to install.

use std::path::{Path, PathBuf};

/// One program the detection path runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// The Prometheus server.
    Prometheus,
    /// Its rule checker.
    Promtool,
    /// Alertmanager.
    Alertmanager,
}

impl Program {
    /// The names it is installed as, in the order they are looked up.
    pub(crate) fn names(self) -> &'static [&'static str] {
        match self {
            Self::Prometheus => &["prometheus"],
            Self::Promtool => &["promtool"],
            Self::Alertmanager => &["alertmanager", "prometheus-alertmanager"],
        }
    }

    /// How to install it.
    fn install(self) -> &'static str {
        match self {
            Self::Prometheus | Self::Promtool => {
                "Debian/Ubuntu: apt-get install prometheus; macOS: brew install prometheus"
            }
            Self::Alertmanager => {
                "Debian/Ubuntu: apt-get install prometheus-alertmanager; macOS: brew install alertmanager"
            }
        }
    }
}

/// A program is not on PATH.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "[prometheus] needs `{name}`, which is not on PATH (looked for {tried}); install it ({install})"
)]
pub struct Missing {
    name: &'static str,
    tried: String,
    install: &'static str,
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first of `program`'s names found on `path` (a `PATH` value).
pub(crate) fn find_in(program: Program, path: &std::ffi::OsStr) -> Result<PathBuf, Missing> {
    for name in program.names() {
        for dir in std::env::split_paths(path) {
            let candidate = dir.join(name);
            if executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(Missing {
        name: program.names()[0],
        tried: program
            .names()
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
        install: program.install(),
    })
}

/// The program on this process's `PATH`.
pub(crate) fn find(program: Program) -> Result<PathBuf, Missing> {
    find_in(program, &std::env::var_os("PATH").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_names_are_tried_and_a_missing_one_names_the_package() {
        let dir = tempfile::tempdir().unwrap();
        let am = dir.path().join("prometheus-alertmanager");
        std::fs::write(&am, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&am, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().as_os_str();
        assert_eq!(find_in(Program::Alertmanager, path).unwrap(), am);
        let e = find_in(Program::Prometheus, path).unwrap_err().to_string();
        assert!(e.contains("apt-get install prometheus"), "{e}");
        assert!(e.contains("brew install prometheus"), "{e}");
    }
}
