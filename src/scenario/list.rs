//! `rehearse list`: the built-in scenarios and the user's (`--scenarios-dir`, else
//! `./scenarios` and `./fixtures/scenarios`), one row each, saying which is which; the
//! catalogue's cases (`fixtures/catalogue`) in a group of their own after them. A user's file
//! of a built-in's name is the one a run takes: its row says so, and whether its text differs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::format::ScenarioFile;
use super::resolve::{differs_from_builtin, stems_in, user_dirs};
use crate::cli::ListArgs;
use crate::exit::{CmdError, CmdResult, Status};

/// Where a listed scenario comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// Only in the binary.
    Builtin,
    /// A user's file; `shadows`: a built-in of the same name exists, `Some(true)` when it differs.
    User {
        /// The file.
        path: PathBuf,
        /// `None`: no built-in of this name; `Some(differs)` otherwise.
        shadows: Option<bool>,
    },
}

impl Source {
    /// The source column.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Builtin => "built-in".into(),
            Self::User {
                path,
                shadows: None,
            } => path.display().to_string(),
            Self::User {
                path,
                shadows: Some(false),
            } => format!("{} (same as the built-in)", path.display()),
            Self::User {
                path,
                shadows: Some(true),
            } => format!("{} (replaces the built-in, which differs)", path.display()),
        }
    }
}

/// Every scenario a NAME can reach, by name: the first user directory holding it wins over
/// later ones and over the built-in.
pub(crate) fn sources(
    dirs: &[PathBuf],
    builtins: &[&str],
    differs: &dyn Fn(&str, &std::path::Path) -> bool,
) -> BTreeMap<String, Source> {
    let mut out = BTreeMap::new();
    for dir in dirs {
        for stem in stems_in(dir) {
            if out.contains_key(&stem) {
                continue;
            }
            let path = dir.join(format!("{stem}.toml"));
            let shadows = builtins
                .contains(&stem.as_str())
                .then(|| differs(&stem, &path));
            out.insert(stem, Source::User { path, shadows });
        }
    }
    for b in builtins {
        out.entry(b.to_string()).or_insert(Source::Builtin);
    }
    out
}

/// The line above the catalogue's group.
const CATALOGUE_HEADING: &str = "catalogue: the field's failure cases, gateway-neutral (the embedded \
     engine by default; any system under test with --target FILE):";

/// Runs `rehearse list`.
pub(crate) fn list_command(args: ListArgs) -> CmdResult {
    let dirs = user_dirs(args.scenarios_dir.as_deref()).map_err(CmdError::bad_input)?;
    let builtins = crate::builtin::names();
    let rows: Vec<(String, String, String)> =
        sources(&dirs, &builtins, &differs_from_builtin)
            .into_iter()
            .map(|(name, source)| {
                let desc = match &source {
                    Source::Builtin => crate::builtin::scenario_text(&name)
                        .map(|t| ScenarioFile::parse(t, &format!("builtin:{name}.toml")))
                        .map_or_else(String::new, |r| {
                            r.map_or_else(|e| format!("(invalid: {e})"), |s| s.description)
                        }),
                    Source::User { path, .. } => match ScenarioFile::load(path) {
                        Ok(s) => s.description,
                        Err(e) => format!("(invalid: {e})"),
                    },
                };
                (name, source.describe(), desc)
            })
            .collect();
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    // The catalogue's cases (and a file of yours of a case's name) in a group of their own.
    let (catalogue, scenarios): (Vec<_>, Vec<_>) = rows
        .iter()
        .partition(|r| crate::builtin::group(&r.0) == Some("catalogue"));
    for (name, source, desc) in scenarios {
        crate::outln!("{name:w0$}  {source:w1$}  {desc}");
    }
    if !catalogue.is_empty() {
        crate::outln!("");
        crate::outln!("{CATALOGUE_HEADING}");
        for (name, source, desc) in catalogue {
            crate::outln!("{name:w0$}  {source:w1$}  {desc}");
        }
    }
    let user = rows.iter().filter(|r| r.1 != "built-in").count();
    let looked = if dirs.is_empty() {
        "no ./scenarios or ./fixtures/scenarios here".to_string()
    } else {
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    crate::outln!(
        "({} built-in, {user} of yours from {looked}; a file of yours takes the place of a \
         built-in of its name, `builtin:NAME` runs the built-in)",
        builtins.len()
    );
    Ok(Status::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_file_takes_a_builtins_place_and_says_whether_it_differs() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for (dir, name) in [(&a, "smoke"), (&a, "mine"), (&b, "mine"), (&b, "weekly")] {
            std::fs::write(dir.path().join(format!("{name}.toml")), name).unwrap();
        }
        let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
        let differs = |name: &str, _: &std::path::Path| name == "smoke";
        let got = sources(&dirs, &["smoke", "timeout-storm", "weekly"], &differs);
        assert_eq!(got["timeout-storm"], Source::Builtin);
        assert_eq!(
            got["mine"],
            Source::User {
                path: a.path().join("mine.toml"),
                shadows: None
            },
            "the first directory wins"
        );
        assert_eq!(
            got["smoke"].describe(),
            format!(
                "{} (replaces the built-in, which differs)",
                a.path().join("smoke.toml").display()
            )
        );
        assert!(got["weekly"].describe().ends_with("(same as the built-in)"));
        assert_eq!(got.len(), 4);
    }
}
