//! Finding an OpenClaw install and the Node it runs on: an explicit path (`[target] command`),
//! else `$REHEARSE_OPENCLAW`, else `openclaw` on `PATH`, else the pinned version's install in the
//! cache (`rehearse gateway install openclaw`, `scripts/install-openclaw.sh`). The Node is the `node` next to the
//! executable (the npm layout `scripts/install-openclaw.sh` makes: `node_modules/.bin/node`
//! beside `node_modules/.bin/openclaw`), else `node` on `PATH`, and must satisfy OpenClaw
//! 2026.9.6's `engines`: `>=24.16.0 <25 || >=26.1.0`. The OpenClaw version comes from the
//! package's `package.json` (no process started), else from `openclaw --version`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable naming the `openclaw` executable.
const ENV_VAR: &str = "REHEARSE_OPENCLAW";

/// How to get the pinned install (named in every "not found" error), with the versions of
/// `scripts/pins.env`.
fn how_to_install() -> String {
    let pinned = crate::util::pins::pins().map_or_else(
        |_| "the pinned OpenClaw and its Node".to_string(),
        |p| format!("OpenClaw {} and Node {}", p.openclaw, p.node),
    );
    format!(
        "install the pinned version with `rehearse gateway install openclaw` ({pinned} into \
         the cache, ~/.cache/rehearse/, where the run finds it; a checkout's \
         `scripts/install-openclaw.sh` does the same), or set REHEARSE_OPENCLAW to an `openclaw` \
         executable, or name it in `[target] command`"
    )
}

/// The pinned version's executable in the cache (`None` without a cache root or pins).
fn pinned_in_cache() -> Option<PathBuf> {
    let cache = crate::util::cache::root()?;
    let pins = crate::util::pins::pins().ok()?;
    Some(cached_executable(&cache, &pins.openclaw))
}

/// `CACHE/openclaw-VERSION/node_modules/.bin/openclaw`, where the installs put it.
pub(crate) fn cached_executable(cache: &Path, version: &str) -> PathBuf {
    cache
        .join(format!("openclaw-{version}"))
        .join("node_modules/.bin/openclaw")
}

/// An OpenClaw install the supervisor can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// The `openclaw` executable, as found (not canonicalized: its directory holds `node`).
    pub openclaw: PathBuf,
    /// The `node` that runs it.
    pub node: PathBuf,
    /// `node --version` without the `v`.
    pub node_version: String,
    /// OpenClaw's version (`2026.9.6`), or `unknown` when neither source said.
    pub openclaw_version: String,
}

impl Install {
}

/// Why no usable install was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    /// Nothing at any place looked at.
    #[error("no OpenClaw executable found (looked at {}); {}", .looked.join(", "), how_to_install())]
    NotFound {
        /// Where it looked, in order.
        looked: Vec<String>,
    },
    /// A named path that is not an executable file.
    #[error("{path} is not an executable file; {}", how_to_install())]
    NotExecutable {
        /// The path as named.
        path: String,
    },
    /// No `node` next to it or on `PATH`.
    #[error(
        "no `node` next to {openclaw} or on PATH (OpenClaw needs Node >= 24.16); {}",
        how_to_install()
    )]
    NoNode {
        /// The executable found.
        openclaw: String,
    },
    /// `node --version` failed or printed something else.
    #[error("could not read the version of {node}: {reason}")]
    NodeVersionUnreadable {
        /// The node binary.
        node: String,
        /// What went wrong.
        reason: String,
    },
    /// A version of `[target] versions` with no install where the harness looks.
    #[error(
        "OpenClaw {version} is not installed (looked at {}); install it with \
         `rehearse gateway install openclaw {version}` (in a checkout: \
         `scripts/install-openclaw.sh {version}`), or set {env} to its `openclaw` executable",
        .looked.join(", ")
    )]
    VersionNotInstalled {
        /// The version asked for.
        version: String,
        /// Its environment variable (`REHEARSE_OPENCLAW_2026_9_2`).
        env: String,
        /// Where it looked, in order.
        looked: Vec<String>,
    },
    /// The install found for a version is another version.
    #[error(
        "{path} is OpenClaw {found}, not {version}; install {version} with \
         `rehearse gateway install openclaw {version}` (in a checkout: \
         `scripts/install-openclaw.sh {version}`)"
    )]
    WrongVersion {
        /// The version asked for.
        version: String,
        /// The version the install says it is.
        found: String,
        /// The executable.
        path: String,
    },
    /// A Node OpenClaw refuses.
    #[error(
        "{node} is Node {version}; OpenClaw 2026.9.6 needs >=24.16.0 <25 or >=26.1.0; {}",
        how_to_install()
    )]
    NodeTooOld {
        /// The node binary.
        node: String,
        /// Its version.
        version: String,
    },
}

impl Install {
    /// Finds the install from `explicit`, else `$REHEARSE_OPENCLAW`, else `PATH`, else the
    /// pinned version's install in the cache.
    pub fn find(explicit: Option<&Path>) -> Result<Self, InstallError> {
        Self::find_or_cached(
            explicit,
            std::env::var_os(ENV_VAR),
            std::env::var_os("PATH"),
            pinned_in_cache(),
        )
    }

    /// Finds the install of OpenClaw `version` (`[target] versions`, `--gateway-version`):
    /// `$REHEARSE_OPENCLAW_<VERSION>` (the version upper-cased, every `.`, `-`, `+` an `_`:
    /// `REHEARSE_OPENCLAW_2026_9_2`), else `scripts/install-openclaw.sh VERSION`'s cache dir,
    /// `$REHEARSE_CACHE` else `${XDG_CACHE_HOME:-~/.cache}/rehearse`, then
    /// `openclaw-VERSION/node_modules/.bin/openclaw`. The install must say it is that version.
    pub fn find_version(version: &str) -> Result<Self, InstallError> {
        let env = version_env_var(version);
        let cache = crate::util::cache::root();
        Self::find_version_in(
            version,
            std::env::var_os(&env),
            cache,
            std::env::var_os("PATH"),
        )
    }

    /// [`Install::find_version`] with the environment passed in (tests).
    pub fn find_version_in(
        version: &str,
        env_value: Option<OsString>,
        cache: Option<PathBuf>,
        path_var: Option<OsString>,
    ) -> Result<Self, InstallError> {
        let env = version_env_var(version);
        let mut looked = Vec::new();
        let named = env_value.filter(|v| !v.is_empty()).map(PathBuf::from);
        let exe = match named {
            Some(p) => Some(p),
            None => {
                looked.push(format!("${env} (unset)"));
                let in_cache = cache.map(|c| cached_executable(&c, version));
                match in_cache {
                    Some(p) if is_executable(&p) => Some(p),
                    Some(p) => {
                        looked.push(p.display().to_string());
                        None
                    }
                    None => {
                        looked.push("the install cache (no $REHEARSE_CACHE, $XDG_CACHE_HOME or $HOME)".into());
                        None
                    }
                }
            }
        };
        let Some(exe) = exe else {
            return Err(InstallError::VersionNotInstalled {
                version: version.to_string(),
                env,
                looked,
            });
        };
        let found = Self::find_in(Some(&exe), None, path_var)?;
        if found.openclaw_version != version {
            return Err(InstallError::WrongVersion {
                version: version.to_string(),
                found: found.openclaw_version,
                path: exe.display().to_string(),
            });
        }
        Ok(found)
    }

    /// The version the executable itself says it is (`openclaw --version`, run with its node),
    /// when it says one.
    pub fn says(&self) -> Option<String> {
        version_from_cli(&self.openclaw, &self.node)
    }

    /// [`Install::find`] with the environment passed in (tests), without the cache.
    pub fn find_in(
        explicit: Option<&Path>,
        env_value: Option<OsString>,
        path_var: Option<OsString>,
    ) -> Result<Self, InstallError> {
        Self::find_or_cached(explicit, env_value, path_var, None)
    }

    /// [`Install::find`] with the environment passed in; `cached` is the pinned version's
    /// executable in the cache, looked at last.
    pub(crate) fn find_or_cached(
        explicit: Option<&Path>,
        env_value: Option<OsString>,
        path_var: Option<OsString>,
        cached: Option<PathBuf>,
    ) -> Result<Self, InstallError> {
        let named = explicit
            .map(Path::to_path_buf)
            .or_else(|| env_value.filter(|v| !v.is_empty()).map(PathBuf::from));
        let openclaw = match named {
            Some(p) => {
                if !is_executable(&p) {
                    return Err(InstallError::NotExecutable {
                        path: p.display().to_string(),
                    });
                }
                p
            }
            None => {
                let mut looked = vec![format!("${ENV_VAR} (unset)")];
                match search_path("openclaw", path_var.as_ref()) {
                    Some(p) => p,
                    None => {
                        looked.push("`openclaw` on PATH".into());
                        match cached {
                            Some(c) if is_executable(&c) => c,
                            Some(c) => {
                                looked.push(c.display().to_string());
                                return Err(InstallError::NotFound { looked });
                            }
                            None => return Err(InstallError::NotFound { looked }),
                        }
                    }
                }
            }
        };
        let beside = openclaw.parent().map(|d| d.join("node"));
        let node = match beside.filter(|n| is_executable(n)) {
            Some(n) => n,
            None => search_path("node", path_var.as_ref()).ok_or_else(|| InstallError::NoNode {
                openclaw: openclaw.display().to_string(),
            })?,
        };
        let node_version = node_version(&node)?;
        if !node_supported(&node_version) {
            return Err(InstallError::NodeTooOld {
                node: node.display().to_string(),
                version: node_version,
            });
        }
        let openclaw_version = package_version(&openclaw)
            .or_else(|| version_from_cli(&openclaw, &node))
            .unwrap_or_else(|| "unknown".into());
        Ok(Self {
            openclaw,
            node,
            node_version,
            openclaw_version,
        })
    }
}

/// `REHEARSE_OPENCLAW_2026_9_2` for `2026.9.2`.
pub(crate) fn version_env_var(version: &str) -> String {
    let tail: String = version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{ENV_VAR}_{tail}")
}

fn is_executable(p: &Path) -> bool {
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

fn search_path(name: &str, path_var: Option<&OsString>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn node_version(node: &Path) -> Result<String, InstallError> {
    let unreadable = |reason: String| InstallError::NodeVersionUnreadable {
        node: node.display().to_string(),
        reason,
    };
    // A node written a moment ago can be busy (ETXTBSY: a process forked meanwhile still holds
    // the writer's descriptor until it execs): tried again for up to a second.
    let mut tries = 0;
    let out = loop {
        match Command::new(node).arg("--version").output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 20 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            r => break r.map_err(|e| unreadable(e.to_string()))?,
        }
    };
    if !out.status.success() {
        return Err(unreadable(format!(
            "`node --version` exited with {}",
            out.status
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.trim().trim_start_matches('v');
    if parse_version(v).is_none() {
        return Err(unreadable(format!("unexpected output {:?}", text.trim())));
    }
    Ok(v.to_string())
}

/// `MAJOR.MINOR.PATCH` (anything after a `-` or `+` ignored).
pub(crate) fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let core = v.split(['-', '+']).next()?;
    let mut it = core.split('.').map(|p| p.parse::<u64>().ok());
    let (a, b, c) = (it.next()??, it.next()??, it.next()??);
    it.next().is_none().then_some((a, b, c))
}

/// OpenClaw 2026.9.6's `engines.node`: `>=24.16.0 <25 || >=26.1.0`.
pub(crate) fn node_supported(version: &str) -> bool {
    match parse_version(version) {
        Some((24, minor, _)) => minor >= 16,
        Some((25, _, _)) => false,
        Some((26, minor, _)) => minor >= 1,
        Some((major, _, _)) => major > 26,
        None => false,
    }
}

/// The `version` of the npm package the executable belongs to: its real path is
/// `…/node_modules/openclaw/openclaw.mjs`, beside `package.json`.
fn package_version(openclaw: &Path) -> Option<String> {
    let real = std::fs::canonicalize(openclaw).ok()?;
    let manifest = real.parent()?.join("package.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(manifest).ok()?).ok()?;
    (v.get("name")?.as_str()? == "openclaw")
        .then(|| v.get("version")?.as_str().map(str::to_string))
        .flatten()
}

/// `OpenClaw 2026.9.6 (eb377ac)` → `2026.9.6`, from `openclaw --version` run with the node
/// found first on `PATH`.
fn version_from_cli(openclaw: &Path, node: &Path) -> Option<String> {
    let mut path = node
        .parent()
        .map(|d| vec![d.to_path_buf()])
        .unwrap_or_default();
    if let Some(p) = std::env::var_os("PATH") {
        path.extend(std::env::split_paths(&p));
    }
    let out = Command::new(openclaw)
        .arg("--version")
        .env("PATH", std::env::join_paths(path).ok()?)
        .env("OPENCLAW_NO_AUTO_UPDATE", "1")
        .output()
        .ok()?;
    version_from_banner(&String::from_utf8_lossy(&out.stdout))
}

/// The version in `OpenClaw 2026.9.6 (eb377ac)`.
pub(crate) fn version_from_banner(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("OpenClaw ")?;
        let v = rest.split_whitespace().next()?;
        v.chars()
            .all(|c| c.is_ascii_digit() || c == '.')
            .then(|| v.to_string())
    })
}

#[cfg(test)]
mod tests;
