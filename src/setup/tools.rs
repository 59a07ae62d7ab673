//! The programs a run or an install may need from PATH: where each is, under the names Debian and
//! Homebrew install it as, the package to install when it is missing, and its version.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

/// A program looked up on PATH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tool {
    /// How it is named in listings.
    pub name: &'static str,
    /// The executable names, in lookup order.
    pub names: &'static [&'static str],
    /// The Homebrew formula.
    pub brew: &'static str,
    /// The Debian/Ubuntu package(s).
    pub debian: &'static str,
    /// The flag that prints its version.
    pub version_flag: &'static str,
}

impl Tool {
    /// `install it (Homebrew: brew install X; Debian/Ubuntu: apt-get install Y)`.
    pub(crate) fn install_hint(&self) -> String {
        format!(
            "Homebrew: `brew install {}`; Debian/Ubuntu: `apt-get install {}`",
            self.brew, self.debian
        )
    }
}

/// Every program `doctor` lists, in its order.
pub(crate) const TOOLS: [Tool; 7] = [PROMETHEUS, PROMTOOL, ALERTMANAGER, REDIS, NODE, NPM, PYTHON];

/// Prometheus (names as `crate::detection` looks them up).
pub(crate) const PROMETHEUS: Tool = Tool {
    name: "prometheus",
    names: &["prometheus"],
    brew: "prometheus",
    debian: "prometheus",
    version_flag: "--version",
};
/// promtool (Homebrew's `prometheus` formula ships it).
pub(crate) const PROMTOOL: Tool = Tool {
    name: "promtool",
    names: &["promtool"],
    brew: "prometheus",
    debian: "prometheus",
    version_flag: "--version",
};
/// Alertmanager: `alertmanager` (Homebrew) or `prometheus-alertmanager` (Debian).
pub(crate) const ALERTMANAGER: Tool = Tool {
    name: "alertmanager",
    names: &["alertmanager", "prometheus-alertmanager"],
    brew: "alertmanager",
    debian: "prometheus-alertmanager",
    version_flag: "--version",
};
/// The Redis a fleet run starts.
pub(crate) const REDIS: Tool = Tool {
    name: "redis-server",
    names: &["redis-server"],
    brew: "redis",
    debian: "redis-server",
    version_flag: "--version",
};
/// Node (an OpenClaw install brings its own; this is the one on PATH).
const NODE: Tool = Tool {
    name: "node",
    names: &["node"],
    brew: "node",
    debian: "nodejs",
    version_flag: "--version",
};
/// npm, which `gateway install openclaw` runs.
pub(crate) const NPM: Tool = Tool {
    name: "npm",
    names: &["npm"],
    brew: "node",
    debian: "npm",
    version_flag: "--version",
};
/// python3, which `gateway install openai-sdk` runs (with its venv module).
pub(crate) const PYTHON: Tool = Tool {
    name: "python3",
    names: &["python3"],
    brew: "python",
    debian: "python3 python3-venv",
    version_flag: "--version",
};

/// A program that is not on PATH.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` is not on PATH{}: install it ({})", .tool.name, .why.map_or_else(String::new, |w| format!(" ({w})")), .tool.install_hint())]
pub(crate) struct Missing {
    /// The program.
    pub tool: Tool,
    /// What needs it.
    pub why: Option<&'static str>,
}

/// The first of `tool`'s names that is an executable file in a directory of `path`.
pub(crate) fn find_in(tool: &Tool, path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path?;
    tool.names.iter().find_map(|n| {
        std::env::split_paths(path)
            .map(|d| d.join(n))
            .find(|p| executable(p))
    })
}

/// [`find_in`] on this process's PATH.
pub(crate) fn find(tool: &Tool) -> Option<PathBuf> {
    find_in(tool, std::env::var_os("PATH").as_deref())
}

/// `tool` on PATH, or the error naming its packages.
pub(crate) fn need(tool: &Tool, why: &'static str) -> Result<PathBuf, Missing> {
    find(tool).ok_or(Missing {
        tool: *tool,
        why: Some(why),
    })
}

/// True for an executable regular file.
pub(crate) fn executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The version `exe FLAG` prints (stdout, else stderr), within 10 s; `None` when it does not
/// say one.
pub(crate) fn version_of(exe: &Path, flag: &str) -> Option<String> {
    let mut child = Command::new(exe)
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    version_in(&String::from_utf8_lossy(&out.stdout))
        .or_else(|| version_in(&String::from_utf8_lossy(&out.stderr)))
}

/// The first `N.N[.N…]` in `text` (`prometheus, version 2.53.3 (branch…)` → `2.53.3`,
/// `Redis server v=7.0.15 sha=…` → `7.0.15`, `v24.22.3` → `24.22.3`).
fn version_in(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'v');
        if starts {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                j += 1;
            }
            let v = text[i..j].trim_end_matches('.');
            if v.contains('.') {
                return Some(v.to_string());
            }
            i = j;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_each_program_prints() {
        for (text, want) in [
            ("prometheus, version 2.53.3+ds1 (branch: debian/sid)", "2.53.3"),
            ("Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0", "7.0.15"),
            ("v24.22.3\n", "24.22.3"),
            ("10.9.2\n", "10.9.2"),
            ("Python 3.13.5\n", "3.13.5"),
            ("alertmanager, version 0.28.1 (branch: HEAD)", "0.28.1"),
        ] {
            assert_eq!(version_in(text).as_deref(), Some(want), "{text}");
        }
        assert_eq!(version_in("no version here 7 x"), None);
        assert_eq!(version_in("sha256 ab3.4"), None, "inside a word");
    }

    #[test]
    fn a_tool_is_found_under_any_of_its_names_and_a_missing_one_names_its_packages() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("prometheus-alertmanager");
        std::fs::write(&exe, "#!/bin/sh\necho 'alertmanager, version 0.28.1'\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = dir.path().as_os_str();
        assert_eq!(find_in(&ALERTMANAGER, Some(path)), Some(exe.clone()));
        assert_eq!(version_of(&exe, "--version").as_deref(), Some("0.28.1"));
        assert_eq!(find_in(&NPM, Some(path)), None);
        let msg = Missing {
            tool: NPM,
            why: Some("`gateway install openclaw` runs it"),
        }
        .to_string();
        assert!(msg.contains("`brew install node`") && msg.contains("`apt-get install npm`"), "{msg}");
        let msg = Missing { tool: PYTHON, why: None }.to_string();
        assert!(msg.contains("`brew install python`") && msg.contains("python3-venv"), "{msg}");
    }
}
