//! Scenario name resolution (docs/cli.md): a NAME resolves to
//! `fixtures/scenarios/NAME.toml` under the working directory, then under the project root found
//! by walking up from the running binary; a PATH (anything with a separator or a `.toml` suffix,
//! or an existing file) is used as is.

use std::path::{Path, PathBuf};

/// The fixtures directory of scenarios, relative to a project root.
pub(crate) const SCENARIO_DIR: &str = "fixtures/scenarios";

/// A NAME that matched no scenario file.
#[derive(Debug, thiserror::Error)]
#[error("no scenario named `{name}` (looked for {})", .tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
pub struct NotFound {
    /// The name given.
    pub name: String,
    /// Every path tried, in order.
    pub tried: Vec<PathBuf>,
}

/// True when `arg` is a path rather than a scenario name.
pub(crate) fn is_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains(std::path::MAIN_SEPARATOR) || arg.ends_with(".toml")
}

/// Resolves `--scenario NAME|PATH` to a file.
pub fn resolve(arg: &str) -> Result<PathBuf, NotFound> {
    if is_path(arg) || Path::new(arg).is_file() {
        return Ok(PathBuf::from(arg));
    }
    let file = format!("{arg}.toml");
    let tried: Vec<PathBuf> = scenario_dirs().into_iter().map(|d| d.join(&file)).collect();
    match tried.iter().find(|p| p.is_file()) {
        Some(p) => Ok(p.clone()),
        None => Err(NotFound {
            name: arg.to_string(),
            tried,
        }),
    }
}

/// The scenario directories searched, in order: `./fixtures/scenarios`, then the one under the
/// project root beside the binary, then the one of the checkout the binary was built from (a
/// `CARGO_TARGET_DIR` outside the tree hides the first); duplicates and missing ones dropped.
pub(crate) fn scenario_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from(SCENARIO_DIR)];
    let mut seen: Vec<PathBuf> = Path::new(SCENARIO_DIR).canonicalize().into_iter().collect();
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    for root in project_root_of_binary().into_iter().chain([built_from]) {
        let d = root.join(SCENARIO_DIR);
        if let Ok(canon) = d.canonicalize()
            && !seen.contains(&canon)
        {
            seen.push(canon);
            dirs.push(d);
        }
    }
    dirs
}

/// The nearest ancestor of the running binary holding `fixtures/scenarios`, if any.
pub(crate) fn project_root_of_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    find_root_from(&exe)
}

/// The nearest ancestor of `start` (itself excluded) holding `fixtures/scenarios`.
pub(crate) fn find_root_from(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .skip(1)
        .find(|dir| dir.join(SCENARIO_DIR).is_dir())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_names_are_told_apart() {
        assert!(is_path("fixtures/scenarios/smoke.toml"));
        assert!(is_path("smoke.toml"));
        assert!(!is_path("smoke"));
    }

    #[test]
    fn root_is_found_by_walking_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(SCENARIO_DIR)).unwrap();
        let bin = dir.path().join("target/debug/rehearse");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        assert_eq!(find_root_from(&bin).as_deref(), Some(dir.path()));
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(find_root_from(&elsewhere.path().join("x")), None);
    }

    #[test]
    fn unknown_name_lists_where_it_looked() {
        let err = resolve("no-such-scenario-xyz").unwrap_err().to_string();
        assert!(
            err.contains("fixtures/scenarios/no-such-scenario-xyz.toml"),
            "{err}"
        );
    }
}
