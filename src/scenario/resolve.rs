//! Scenario name resolution (docs/cli.md). A PATH (anything with a separator or a `.toml`
//! suffix, or an existing file) is used as is. A NAME is looked up in the user's scenario
//! directories first — `--scenarios-dir DIR` (or `$REHEARSE_SCENARIOS`) when given, else
//! `./scenarios` and `./fixtures/scenarios` where they exist — then among the built-in scenarios
//! embedded in the binary (`crate::builtin`, extracted to the cache when used).
//! `builtin:NAME` names the built-in even when a user's file has that name. Nothing is looked
//! up through the place the binary was built in or installed to.

use std::path::{Path, PathBuf};

use crate::builtin;

/// The user's scenario directories looked at, relative to the working directory, in order,
/// when no `--scenarios-dir` is given.
const CWD_DIRS: [&str; 2] = ["scenarios", "fixtures/scenarios"];

/// A NAME or `--scenarios-dir` that could not be resolved.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NotFound {
    /// No user file and no built-in of that name.
    #[error(
        "no scenario named `{name}` (looked for {}{}){}",
        .tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        if .tried.is_empty() { "no user scenario directory; the built-in scenarios" } else { ", then the built-in scenarios" },
        .suggestion.as_ref().map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
    )]
    Name {
        /// The name given.
        name: String,
        /// Every user path tried, in order.
        tried: Vec<PathBuf>,
        /// The nearest scenario name, if one is near.
        suggestion: Option<String>,
    },
    /// `builtin:NAME` with no such built-in.
    #[error("no built-in scenario named `{name}` (`rehearse list` shows them){}",
        .suggestion.as_ref().map_or_else(String::new, |s| format!("; did you mean `builtin:{s}`?")))]
    NoBuiltin {
        /// The name after `builtin:`.
        name: String,
        /// The nearest built-in name, if one is near.
        suggestion: Option<String>,
    },
    /// `--scenarios-dir` (or `$REHEARSE_SCENARIOS`) that is not a directory.
    #[error("--scenarios-dir {} (or $REHEARSE_SCENARIOS): not a directory", .0.display())]
    NoDir(PathBuf),
    /// The built-ins could not be written to disk.
    #[error(transparent)]
    Extract(#[from] builtin::ExtractError),
}

/// A scenario argument resolved to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The file to read (a built-in's extracted copy in the cache).
    pub path: PathBuf,
    /// The built-in's name, when it is one.
    pub builtin: Option<String>,
    /// Said on stderr: a user's file that takes the place of a different built-in of its name.
    pub note: Option<String>,
}

impl Resolved {
    /// What a LaunchAgent passes for it: `builtin:NAME`, so the scheduled run takes the built-in
    /// of the binary it runs (its own version), else the file's path.
    pub fn argument(&self) -> PathBuf {
        match &self.builtin {
            Some(name) => PathBuf::from(format!("{}{name}", builtin::PREFIX)),
            None => self.path.clone(),
        }
    }
}

/// True when `arg` is a path rather than a scenario name.
pub(crate) fn is_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains(std::path::MAIN_SEPARATOR) || arg.ends_with(".toml")
}

/// The environment variable naming the user's scenario directory (`--scenarios-dir`).
const DIR_ENV: &str = "REHEARSE_SCENARIOS";

/// Resolves `--scenario NAME|PATH` with `$REHEARSE_SCENARIOS`, else the user's directories of
/// this working directory.
pub fn resolve(arg: &str) -> Result<Resolved, NotFound> {
    let dir = std::env::var_os(DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    resolve_in(arg, dir.as_deref())
}

/// Resolves `--scenario NAME|PATH`; `dir` is `--scenarios-dir` (`$REHEARSE_SCENARIOS`).
pub fn resolve_in(arg: &str, dir: Option<&Path>) -> Result<Resolved, NotFound> {
    if let Some(name) = arg.strip_prefix(builtin::PREFIX) {
        let name = name.strip_suffix(".toml").unwrap_or(name);
        return builtin_named(name)?.ok_or_else(|| NotFound::NoBuiltin {
            name: name.to_string(),
            suggestion: crate::util::suggest::closest(name, builtin::names()).map(String::from),
        });
    }
    if is_path(arg) || Path::new(arg).is_file() {
        return Ok(Resolved {
            path: PathBuf::from(arg),
            builtin: None,
            note: None,
        });
    }
    let file = format!("{arg}.toml");
    let tried: Vec<PathBuf> = user_dirs(dir)?.iter().map(|d| d.join(&file)).collect();
    if let Some(p) = tried.iter().find(|p| p.is_file()) {
        let note = differs_from_builtin(arg, p).then(|| {
            format!(
                "{} takes the place of the built-in scenario `{arg}`, which differs from it \
                 (`--scenario {}{arg}` runs the built-in)",
                p.display(),
                builtin::PREFIX
            )
        });
        return Ok(Resolved {
            path: p.clone(),
            builtin: None,
            note,
        });
    }
    if let Some(found) = builtin_named(arg)? {
        return Ok(found);
    }
    let users: Vec<String> = tried
        .iter()
        .filter_map(|p| p.parent())
        .flat_map(stems_in)
        .collect();
    let suggestion = crate::util::suggest::closest(
        arg,
        users
            .iter()
            .map(String::as_str)
            .chain(builtin::names()),
    )
    .map(String::from);
    Err(NotFound::Name {
        name: arg.to_string(),
        tried,
        suggestion,
    })
}

/// The built-in `name`, extracted; `None` when there is none of that name.
fn builtin_named(name: &str) -> Result<Option<Resolved>, NotFound> {
    let Some(rel) = builtin::scenario_rel(name) else {
        return Ok(None);
    };
    let root = builtin::extract()?;
    Ok(Some(Resolved {
        path: root.join(rel),
        builtin: Some(name.to_string()),
        note: None,
    }))
}

/// True when a built-in of `name` exists and `user`'s text is not its text.
pub(crate) fn differs_from_builtin(name: &str, user: &Path) -> bool {
    builtin::scenario_text(name)
        .is_some_and(|b| std::fs::read_to_string(user).map_or(true, |u| u != b))
}

/// The user's scenario directories, in lookup order: `dir` alone when given (it must be a
/// directory), else those of [`CWD_DIRS`] that exist.
pub(crate) fn user_dirs(dir: Option<&Path>) -> Result<Vec<PathBuf>, NotFound> {
    match dir {
        Some(d) if d.is_dir() => Ok(vec![d.to_path_buf()]),
        Some(d) => Err(NotFound::NoDir(d.to_path_buf())),
        None => Ok(CWD_DIRS
            .iter()
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .collect()),
    }
}

/// The `*.toml` stems of `dir`, sorted.
pub(crate) fn stems_in(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_names_are_told_apart() {
        assert!(is_path("fixtures/scenarios/smoke.toml"));
        assert!(is_path("smoke.toml"));
        assert!(!is_path("smoke"));
        assert!(!is_path("builtin:smoke"));
    }

    #[test]
    fn a_user_dir_comes_before_the_built_ins_and_says_when_it_differs() {
        let dir = tempfile::tempdir().unwrap();
        let smoke = builtin::scenario_text("smoke").unwrap();
        std::fs::write(dir.path().join("smoke.toml"), smoke).unwrap();
        let r = resolve_in("smoke", Some(dir.path())).unwrap();
        assert_eq!(r.path, dir.path().join("smoke.toml"));
        assert_eq!((r.builtin, r.note), (None, None), "the same text: no note");
        std::fs::write(dir.path().join("smoke.toml"), format!("{smoke}\n# mine\n")).unwrap();
        let r = resolve_in("smoke", Some(dir.path())).unwrap();
        assert_eq!(r.path, dir.path().join("smoke.toml"));
        let note = r.note.expect("a differing file is said to");
        assert!(note.contains("`--scenario builtin:smoke`"), "{note}");
        // `builtin:` skips the user's file.
        let b = resolve_in("builtin:smoke", Some(dir.path())).unwrap();
        assert_eq!(b.builtin.as_deref(), Some("smoke"));
        assert_eq!(b.argument(), Path::new("builtin:smoke"));
        assert_eq!(std::fs::read_to_string(&b.path).unwrap(), smoke);
        // A name only the built-ins have.
        let w = resolve_in("weekly", Some(dir.path())).unwrap();
        assert_eq!(w.builtin.as_deref(), Some("weekly"));
        assert!(w.path.ends_with("scenarios/weekly.toml"), "{w:?}");
    }

    #[test]
    fn unknown_names_list_where_they_looked_and_suggest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.toml"), "").unwrap();
        let err = resolve_in("smokee", Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("smokee.toml"), "{err}");
        assert!(err.contains("then the built-in scenarios"), "{err}");
        assert!(err.ends_with("did you mean `smoke`?"), "{err}");
        let err = resolve_in("mne", Some(dir.path())).unwrap_err().to_string();
        assert!(err.ends_with("did you mean `mine`?"), "{err}");
        let err = resolve_in("builtin:mine", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("no built-in scenario named `mine`"), "{err}");
        let missing = dir.path().join("nope");
        assert!(matches!(
            resolve_in("smoke", Some(&missing)),
            Err(NotFound::NoDir(p)) if p == missing
        ));
    }
}
