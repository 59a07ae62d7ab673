//! `rehearse gateway install openai-sdk [VERSION]`: what `scripts/install-openai-sdk.sh` does,
//! from the binary alone. The official OpenAI Python SDK into a virtualenv at
//! `CACHE/openai-python-VERSION` (built in place: a venv is not relocatable; a half-built one
//! fails the presence check and is rebuilt), then that venv's python on stdout. `$PYTHON` names
//! the interpreter (default `python3` on PATH).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::SetupError;
use super::tools::{PYTHON, executable, need};

/// `CACHE/openai-python-VERSION`.
pub(crate) fn dir_of(cache: &Path, version: &str) -> PathBuf {
    cache.join(format!("openai-python-{version}"))
}

/// The venv's python.
fn python_of(dir: &Path) -> PathBuf {
    dir.join("bin/python")
}

/// The SDK version the venv's python imports.
pub(crate) fn installed_version(dir: &Path) -> Option<String> {
    let py = python_of(dir);
    if !executable(&py) {
        return None;
    }
    let out = Command::new(py)
        .args(["-c", "import openai; print(openai.__version__)"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !v.is_empty()).then_some(v)
}

/// Installs SDK `version` into `cache`; returns the venv's python.
pub(crate) fn install(cache: &Path, version: &str) -> Result<PathBuf, SetupError> {
    if let Some(why) = crate::scenario::target::version_problem(version) {
        return Err(SetupError::Usage(why.replace("an OpenClaw", "an SDK")));
    }
    let dir = dir_of(cache, version);
    if installed_version(&dir).as_deref() == Some(version) {
        crate::errln!("gateway install: openai {version} already in {}", dir.display());
        return Ok(python_of(&dir));
    }
    let python = match std::env::var_os("PYTHON").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => need(&PYTHON, "`gateway install openai-sdk` makes a virtualenv with it")?,
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
            "`{} -m venv` failed: install the venv module (Homebrew's `python` has it; \
             Debian/Ubuntu: `apt-get install python3-venv`)",
            python.display()
        )));
    }
    crate::errln!(
        "gateway install: installing openai=={version} into {}",
        dir.display()
    );
    let pip = Command::new(python_of(&dir))
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .arg(format!("openai=={version}"))
        .stdout(std::io::stderr())
        .status()
        .map_err(io("running pip".into()))?;
    if !pip.success() || installed_version(&dir).as_deref() != Some(version) {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(SetupError::Failed(format!(
            "pip did not install openai {version}"
        )));
    }
    Ok(python_of(&dir))
}
