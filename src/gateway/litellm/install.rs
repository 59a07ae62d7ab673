//! Finding a LiteLLM proxy install: `$REHEARSE_LITELLM` (its `litellm` executable), else the
//! pinned version's venv in the cache (`CACHE/litellm-VERSION/bin/litellm`, what
//! `rehearse gateway install litellm` and `scripts/install-litellm.sh` make); a version of
//! `[target] versions` is `$REHEARSE_LITELLM_<VERSION>` (`REHEARSE_LITELLM_1_108_7`), else its
//! venv in the cache. The python beside the executable runs it, and says its version (the
//! package's metadata, `importlib.metadata.version("litellm")`): no proxy is started to ask.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable naming the `litellm` executable.
const ENV_VAR: &str = "REHEARSE_LITELLM";

/// How to get the pinned install, named in every "not found" error.
fn how_to_install(version: Option<&str>) -> String {
    let v = version.map_or_else(
        || crate::util::pins::pins().map_or_else(|_| String::new(), |p| p.litellm),
        str::to_string,
    );
    format!(
        "install it with `rehearse gateway install litellm {v}` (a venv in the cache, \
         ~/.cache/rehearse/litellm-{v}/, where the run finds it; a checkout's \
         `scripts/install-litellm.sh {v}` does the same), or set REHEARSE_LITELLM to a \
         `litellm` executable"
    )
}

/// `CACHE/litellm-VERSION/bin/litellm`.
pub(crate) fn cached_executable(cache: &Path, version: &str) -> PathBuf {
    cache.join(format!("litellm-{version}")).join("bin/litellm")
}

/// `REHEARSE_LITELLM_<VERSION>`: the version upper-cased, every other character an `_`.
pub(crate) fn version_env_var(version: &str) -> String {
    let tail: String = version
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    format!("{ENV_VAR}_{tail}")
}

/// A LiteLLM install the supervisor can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// The `litellm` executable.
    pub litellm: PathBuf,
    /// The python beside it (its venv's), which runs it and the release's key check.
    pub python: PathBuf,
    /// The version its package metadata says.
    pub version: String,
}

/// No usable install.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    /// Nothing at any place looked at.
    #[error("no LiteLLM found (looked at {}); {}", .looked.join(", "), how_to_install(.version.as_deref()))]
    NotFound {
        /// Where it looked.
        looked: Vec<String>,
        /// The version asked for, if one was.
        version: Option<String>,
    },
    /// A named path without a python beside it that imports `litellm`.
    #[error("{path}: no python beside it says a litellm version ({reason}); {}", how_to_install(None))]
    Unreadable {
        /// The executable.
        path: String,
        /// Why.
        reason: String,
    },
    /// The install found for a version is another version.
    #[error("{path} is LiteLLM {found}, not {version}; {}", how_to_install(Some(.version)))]
    WrongVersion {
        /// Asked for.
        version: String,
        /// What it says.
        found: String,
        /// The executable.
        path: String,
    },
}

impl Install {
    /// `$REHEARSE_LITELLM`, else the pinned version in the cache.
    pub(crate) fn find() -> Result<Self, InstallError> {
        let pinned = crate::util::pins::pins().ok().map(|p| p.litellm);
        Self::find_in(
            std::env::var_os(ENV_VAR),
            crate::util::cache::root(),
            pinned.as_deref(),
            None,
        )
    }

    /// LiteLLM `version` (`[target] versions`): `$REHEARSE_LITELLM_<VERSION>`, else its venv
    /// in the cache; it must say it is that version.
    pub(crate) fn find_version(version: &str) -> Result<Self, InstallError> {
        Self::find_in(
            std::env::var_os(version_env_var(version)),
            crate::util::cache::root(),
            Some(version),
            Some(version),
        )
    }

    /// The search with the environment passed in (tests): `named` (a variable's value), else
    /// `cache`'s venv of `in_cache`; `must_be` the version it must say.
    pub(crate) fn find_in(
        named: Option<OsString>,
        cache: Option<PathBuf>,
        in_cache: Option<&str>,
        must_be: Option<&str>,
    ) -> Result<Self, InstallError> {
        let var = must_be.map_or_else(|| ENV_VAR.to_string(), version_env_var);
        let mut looked = Vec::new();
        let exe = match named.filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => {
                looked.push(format!("${var} (unset)"));
                let Some(p) = cache.zip(in_cache).map(|(c, v)| cached_executable(&c, v)) else {
                    return Err(InstallError::NotFound {
                        looked,
                        version: must_be.map(str::to_string),
                    });
                };
                if !p.is_file() {
                    looked.push(p.display().to_string());
                    return Err(InstallError::NotFound {
                        looked,
                        version: must_be.or(in_cache).map(str::to_string),
                    });
                }
                p
            }
        };
        let python = exe.with_file_name("python");
        let version = package_version(&python).map_err(|reason| InstallError::Unreadable {
            path: exe.display().to_string(),
            reason,
        })?;
        if let Some(v) = must_be
            && v != version
        {
            return Err(InstallError::WrongVersion {
                version: v.to_string(),
                found: version,
                path: exe.display().to_string(),
            });
        }
        Ok(Self {
            litellm: exe,
            python,
            version,
        })
    }
}

/// The `litellm` version `python`'s package metadata says (no import of litellm: fast).
pub(crate) fn package_version(python: &Path) -> Result<String, String> {
    let out = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('litellm'))",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", python.display()))?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !v.is_empty() {
        Ok(v)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err.lines().last().unwrap_or("no output").to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_found_names_the_places_and_the_install_command() {
        let tmp = tempfile::tempdir().unwrap();
        let e = Install::find_in(None, Some(tmp.path().into()), Some("1.108.7"), None).unwrap_err();
        let s = e.to_string();
        assert!(s.contains("$REHEARSE_LITELLM (unset)"), "{s}");
        assert!(s.contains("litellm-1.108.7/bin/litellm"), "{s}");
        assert!(s.contains("rehearse gateway install litellm 1.108.7"), "{s}");
        let e = Install::find_in(None, Some(tmp.path().into()), Some("1.2.3"), Some("1.2.3")).unwrap_err();
        assert!(e.to_string().contains("$REHEARSE_LITELLM_1_2_3 (unset)"), "{e}");
    }

    #[test]
    fn an_executable_without_its_venv_python_is_unreadable() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("litellm");
        std::fs::write(&exe, "").unwrap();
        let e = Install::find_in(Some(exe.into_os_string()), None, None, None).unwrap_err();
        assert!(matches!(e, InstallError::Unreadable { .. }), "{e}");
    }
}
