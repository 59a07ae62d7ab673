//! `rehearse gateway install portkey [VERSION]`: what `scripts/install-portkey.sh` does, from the
//! binary alone. Portkey's gateway (npm `@portkey-ai/gateway`) and the pinned Node (npm
//! `node-OS-ARCH`, the same pin as OpenClaw's) into `CACHE/portkey-VERSION` — staged in a
//! temporary directory beside it and moved into place only when complete — then the gateway's
//! entry script (`build/start-server.js`) on stdout; a no-op when both versions are there.
//! `crate::gateway::portkey::Install` looks there.

use std::path::{Path, PathBuf};

use super::SetupError;
use super::openclaw::{installed_version, node_package, npm_install};
use super::tools::{NPM, need};
use crate::gateway::portkey::install::{PACKAGE, cached_entry};

/// The pinned packages at their versions (`locked`: what the release's own lock file pins
/// beside it), and the entry script there.
fn present(prefix: &Path, version: &str, node_pkg: &str, node: &str, locked: &[(String, String)]) -> bool {
    prefix
        .join("node_modules")
        .join(PACKAGE)
        .join("build/start-server.js")
        .is_file()
        && installed_version(prefix, PACKAGE).as_deref() == Some(version)
        && installed_version(prefix, node_pkg).as_deref() == Some(node)
        && locked
            .iter()
            .all(|(p, v)| installed_version(prefix, p).as_deref() == Some(v.as_str()))
        // Nothing nested under the gateway shadows them.
        && locked
            .iter()
            .all(|(p, _)| !prefix.join("node_modules").join(PACKAGE).join("node_modules").join(p).exists())
}

/// Installs Portkey `version` (with the pinned Node) into `cache`; returns the entry script.
/// `locked` is what the release's own lock file pins of its HTTP stack (for the pinned release:
/// the npm package's open ranges resolve today to a server that breaks its streams), installed
/// beside it as top-level packages npm dedupes the gateway's ranges onto.
pub(crate) fn install(
    cache: &Path,
    version: &str,
    node: &str,
    locked: &[(String, String)],
) -> Result<PathBuf, SetupError> {
    if let Some(why) = crate::scenario::target::version_problem(version) {
        return Err(SetupError::Usage(why.replace("OpenClaw", "Portkey").replace("2026.9.2", "1.15.2")));
    }
    let node_pkg = node_package(std::env::consts::OS, std::env::consts::ARCH).ok_or_else(|| {
        SetupError::Usage(format!(
            "no Node package known for {} {}",
            std::env::consts::OS,
            std::env::consts::ARCH
        ))
    })?;
    let dir = cache.join(format!("portkey-{version}"));
    if present(&dir, version, node_pkg, node, locked) {
        crate::errln!(
            "gateway install: {PACKAGE} {version} and {node_pkg} {node} already in {}",
            dir.display()
        );
        return Ok(cached_entry(cache, version));
    }
    let npm = need(&NPM, "`gateway install portkey` runs it")?;
    let io = |what: String| move |e: std::io::Error| SetupError::Io(format!("{what}: {e}"));
    std::fs::create_dir_all(cache).map_err(io(format!("creating {}", cache.display())))?;
    let stage = tempfile::Builder::new()
        .prefix(&format!(".portkey-{version}."))
        .tempdir_in(cache)
        .map_err(io(format!("a staging directory in {}", cache.display())))?;
    crate::errln!(
        "gateway install: installing {PACKAGE}@{version} and {node_pkg}@{node} into {}",
        stage.path().display()
    );
    let mut specs = vec![format!("{node_pkg}@{node}"), format!("{PACKAGE}@{version}")];
    specs.extend(locked.iter().map(|(p, v)| format!("{p}@{v}")));
    npm_install(&npm, stage.path(), &specs, None)?;
    if !present(stage.path(), version, node_pkg, node, locked) {
        return Err(SetupError::Failed(format!(
            "npm finished but {PACKAGE} {version} and {node_pkg} {node} are not in {}",
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
    Ok(cached_entry(cache, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_version_is_refused_before_anything_runs() {
        let cache = tempfile::tempdir().unwrap();
        for v in ["../x", "", "latest"] {
            let e = install(cache.path(), v, "24.22.3", &[]).unwrap_err();
            assert!(matches!(e, SetupError::Usage(_)), "{e}");
        }
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
    }
}
