//! `rehearse gateway install litellm [VERSION]`: what `scripts/install-litellm.sh` does, from
//! the binary alone. `litellm[proxy]==VERSION` and the pinned prometheus_client (its `/metrics`
//! needs it; the `proxy` extra lacks it) into a virtualenv at `CACHE/litellm-VERSION` (built in
//! place: a venv is not relocatable; a half-built one fails the presence check and is rebuilt),
//! then that venv's `litellm` on stdout. `$PYTHON` names the interpreter (default `python3`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::SetupError;
use super::tools::{PYTHON, need};

/// The version the venv holds, when it also imports prometheus_client.
fn installed_version(dir: &Path) -> Option<String> {
    let py = dir.join("bin/python");
    if !dir.join("bin/litellm").is_file() {
        return None;
    }
    let out = Command::new(py)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('litellm')); import prometheus_client",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !v.is_empty()).then_some(v)
}

/// Installs LiteLLM `version` into `cache` with prometheus_client `prom`; returns its `litellm`.
pub(crate) fn install(cache: &Path, version: &str, prom: &str) -> Result<PathBuf, SetupError> {
    if let Some(why) = crate::scenario::target::version_problem(version) {
        return Err(SetupError::Usage(why));
    }
    let dir = crate::gateway::litellm::install::cached_executable(cache, version);
    let dir = dir
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| cache.join(format!("litellm-{version}")));
    let exe = dir.join("bin/litellm");
    if installed_version(&dir).as_deref() == Some(version) {
        crate::errln!("gateway install: litellm {version} already in {}", dir.display());
        return Ok(exe);
    }
    let python = match std::env::var_os("PYTHON").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => need(&PYTHON, "`gateway install litellm` makes a virtualenv with it")?,
    };
    let io = |what: String| move |e: std::io::Error| SetupError::Io(format!("{what}: {e}"));
    std::fs::create_dir_all(cache).map_err(io(format!("creating {}", cache.display())))?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(format!("removing {}", dir.display())))?;
    }
    let venv = Command::new(&python)
        .args(["-m", "venv"])
        .arg(&dir)
        .stdout(std::io::stderr())
        .status()
        .map_err(io(format!("running {}", python.display())))?;
    if !venv.success() {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(SetupError::Usage(format!(
            "`{} -m venv` failed: install the venv module (Debian/Ubuntu: `apt-get install python3-venv`)",
            python.display()
        )));
    }
    crate::errln!(
        "gateway install: installing litellm[proxy]=={version} into {}",
        dir.display()
    );
    let pip = Command::new(dir.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .arg(format!("litellm[proxy]=={version}"))
        .arg(format!("prometheus_client=={prom}"))
        .stdout(std::io::stderr())
        .status()
        .map_err(io("running pip".into()))?;
    if !pip.success() || installed_version(&dir).as_deref() != Some(version) {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(SetupError::Failed(format!(
            "pip did not install litellm[proxy] {version}"
        )));
    }
    Ok(exe)
}
