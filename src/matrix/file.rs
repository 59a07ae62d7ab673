//! The matrix file (`rehearse matrix FILE`, docs/matrix.md): which cases, which targets, how many
//! repeats at which speed, and what each cell is expected to be. Read and checked here, every
//! error at FILE:line:col (unknown keys refused; a misspelt case or target name with a "did you
//! mean"), exit 2 at the command's edge.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::class::Class;
use crate::scenario::locate::locate;
use crate::util::speed::Speed;
use crate::util::suggest::closest;
use crate::util::textpos::line_col;

/// Most repeats a matrix may ask for.
const MAX_REPEATS: u32 = 20;

/// Why a matrix file was refused (exit 2): always at FILE:line:col.
#[derive(Debug, thiserror::Error)]
pub enum MatrixFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A TOML or shape error, or a value the matrix cannot run.
    #[error("{path}:{line}:{col}: {msg}")]
    At {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong, with a suggestion where one is near.
        msg: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    cases: Option<Vec<String>>,
    #[serde(default)]
    repeats: Option<u32>,
    #[serde(default)]
    speed: Option<f64>,
    #[serde(default)]
    target: Vec<RawTarget>,
    #[serde(default)]
    expect: Vec<RawExpect>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    name: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    embedded: bool,
    #[serde(default)]
    speed: Option<f64>,
    #[serde(default)]
    cases: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    target: String,
    #[serde(default)]
    case: Option<String>,
    is: OneOrMany,
    #[serde(default)]
    flaky_ok: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// One column of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Its name (the column's, the cell directories', the series' `target` label).
    pub name: String,
    /// Its target file, resolved against the matrix file's directory; `None`: the embedded
    /// engine (the reference column).
    pub file: Option<PathBuf>,
    /// Its speed (the matrix's unless it sets its own).
    pub speed: Speed,
    /// The cases it runs (`None`: every case of the matrix).
    pub cases: Option<Vec<String>>,
}

impl Target {
    /// Whether it runs `case`.
    pub fn runs(&self, case: &str) -> bool {
        self.cases.as_ref().is_none_or(|c| c.iter().any(|n| n == case))
    }
}

/// What a cell is expected to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The classes it may be (every repeat of one of them).
    pub classes: Vec<Class>,
    /// Repeats that differ from one another still meet it (when each is one of `classes`).
    pub flaky_ok: bool,
}

impl Default for Expected {
    fn default() -> Self {
        Self {
            classes: vec![Class::Pass],
            flaky_ok: false,
        }
    }
}

/// A checked matrix file.
#[derive(Debug, Clone)]
pub struct MatrixFile {
    /// The file as given.
    pub path: PathBuf,
    /// Its description.
    pub description: Option<String>,
    /// The cases, as written (each resolves as `--scenario` does).
    pub cases: Vec<String>,
    /// The targets, columns in order.
    pub targets: Vec<Target>,
    /// Repeats of every cell.
    pub repeats: u32,
    /// `(target, case or every case, expected)` in file order; the last that matches a cell wins.
    expects: Vec<(String, Option<String>, Expected)>,
}

impl MatrixFile {
    /// What the cell `case` × `target` is expected to be (default: pass).
    pub fn expected(&self, case: &str, target: &str) -> Expected {
        self.expects
            .iter()
            .rev()
            .find(|(t, c, _)| t == target && c.as_deref().is_none_or(|c| c == case))
            .map(|(_, _, e)| e.clone())
            .unwrap_or_default()
    }

    /// Reads and checks `path`; `known_case` says whether a case name resolves (`Err`: why
    /// not, with its suggestion), `default_cases` the cases when the file names none.
    pub fn load(
        path: &Path,
        default_cases: &[String],
        known_case: &dyn Fn(&str) -> Result<(), String>,
    ) -> Result<Self, MatrixFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| MatrixFileError::Io {
            path: shown.clone(),
            source,
        })?;
        Self::parse(path, &text, default_cases, known_case)
    }

    /// [`Self::load`] over `text`.
    pub fn parse(
        path: &Path,
        text: &str,
        default_cases: &[String],
        known_case: &dyn Fn(&str) -> Result<(), String>,
    ) -> Result<Self, MatrixFileError> {
        let shown = path.display().to_string();
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let (line, col) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            MatrixFileError::At {
                path: shown.clone(),
                line,
                col,
                msg: e.message().trim().to_string(),
            }
        })?;
        let at = |field: &str, msg: String| {
            let (line, col) = locate(text, field).unwrap_or((1, 1));
            MatrixFileError::At {
                path: shown.clone(),
                line,
                col,
                msg,
            }
        };
        let repeats = raw.repeats.unwrap_or(1);
        if !(1..=MAX_REPEATS).contains(&repeats) {
            return Err(at(
                "repeats",
                format!("repeats = {repeats}: must be 1 to {MAX_REPEATS}"),
            ));
        }
        let speed_of = |v: f64, field: &str| {
            Speed::new(v).map_err(|e| at(field, format!("speed = {v}: {}", e.0)))
        };
        let speed = speed_of(raw.speed.unwrap_or(1.0), "speed")?;
        let cases = match &raw.cases {
            Some(c) if c.is_empty() => {
                return Err(at("cases", "cases = []: name at least one case (or leave it out for every case of the catalogue)".into()));
            }
            Some(c) => c.clone(),
            None => default_cases.to_vec(),
        };
        let mut seen = BTreeSet::new();
        for (i, c) in cases.iter().enumerate() {
            known_case(c).map_err(|why| at(&format!("cases[{i}]"), why))?;
            if !seen.insert(c.as_str()) {
                return Err(at(&format!("cases[{i}]"), format!("case `{c}` is named twice")));
            }
        }
        if raw.target.is_empty() {
            return Err(at(
                "description",
                "no [[target]]: name at least one (`embedded = true` for the embedded engine, `file = \"PATH\"` for a target file)".into(),
            ));
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut targets: Vec<Target> = Vec::new();
        for (i, t) in raw.target.iter().enumerate() {
            let f = |k: &str| format!("target[{i}].{k}");
            if t.name.is_empty()
                || !t
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            {
                return Err(at(
                    &f("name"),
                    format!("name = {:?}: letters, digits, `-`, `_` and `.` only (it names directories and series labels)", t.name),
                ));
            }
            if targets.iter().any(|o| o.name == t.name) {
                return Err(at(&f("name"), format!("target `{}` is named twice", t.name)));
            }
            let file = match (&t.file, t.embedded) {
                (Some(_), true) => {
                    return Err(at(&f("embedded"), "a target is `embedded = true` or a `file`, not both".into()));
                }
                (None, false) => {
                    return Err(at(&f("name"), format!("target `{}`: give `file = \"PATH\"` (a target file, relative to this file) or `embedded = true`", t.name)));
                }
                (None, true) => None,
                (Some(p), false) => {
                    let p = dir.join(p);
                    if !p.is_file() {
                        return Err(at(&f("file"), format!("{}: no such target file", p.display())));
                    }
                    Some(p)
                }
            };
            let speed = match t.speed {
                Some(v) => speed_of(v, &f("speed"))?,
                None => speed,
            };
            if let Some(cs) = &t.cases {
                for (j, c) in cs.iter().enumerate() {
                    if !cases.contains(c) {
                        return Err(at(&format!("target[{i}].cases[{j}]"), unknown("case", c, &cases)));
                    }
                }
            }
            targets.push(Target {
                name: t.name.clone(),
                file,
                speed,
                cases: t.cases.clone(),
            });
        }
        let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
        let mut expects = Vec::new();
        for (i, e) in raw.expect.iter().enumerate() {
            let f = |k: &str| format!("expect[{i}].{k}");
            let Some(target) = targets.iter().find(|t| t.name == e.target) else {
                return Err(at(&f("target"), unknown("target", &e.target, &names)));
            };
            if let Some(c) = &e.case {
                if !cases.contains(c) {
                    return Err(at(&f("case"), unknown("case", c, &cases)));
                }
                if !target.runs(c) {
                    return Err(at(&f("case"), format!("target `{}` does not run case `{c}` (its `cases`)", target.name)));
                }
            }
            let words = match &e.is {
                OneOrMany::One(s) => vec![s.clone()],
                OneOrMany::Many(v) => v.clone(),
            };
            if words.is_empty() {
                return Err(at(&f("is"), "is = []: name at least one class".into()));
            }
            let mut classes = Vec::new();
            for w in &words {
                match Class::parse(w).filter(|c| c.expectable()) {
                    Some(c) => classes.push(c),
                    None => {
                        let known: Vec<String> = Class::ALL
                            .iter()
                            .filter(|c| c.expectable())
                            .map(|c| c.as_str().to_string())
                            .collect();
                        return Err(at(&f("is"), unknown("class", w, &known)));
                    }
                }
            }
            expects.push((
                e.target.clone(),
                e.case.clone(),
                Expected {
                    classes,
                    flaky_ok: e.flaky_ok,
                },
            ));
        }
        Ok(Self {
            path: path.to_path_buf(),
            description: raw.description,
            cases,
            targets,
            repeats,
            expects,
        })
    }
}

/// "unknown case `x` (did you mean `y`?; known: ...)".
fn unknown(what: &str, word: &str, known: &[String]) -> String {
    let hint = closest(word, known.iter().map(String::as_str))
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    format!("unknown {what} `{word}`{hint}; known: {}", known.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<MatrixFile, MatrixFileError> {
        let cases = vec!["500-once".to_string(), "silence".to_string()];
        let known = |c: &str| {
            if ["500-once", "silence", "503-persistent"].contains(&c) {
                Ok(())
            } else {
                Err(format!("no scenario `{c}`"))
            }
        };
        MatrixFile::parse(Path::new("m.toml"), text, &cases, &known)
    }

    #[test]
    fn defaults_every_case_pass_repeats_one_speed_one() {
        let m = parse("[[target]]\nname = \"engine\"\nembedded = true\n").unwrap();
        assert_eq!(m.cases, ["500-once", "silence"]);
        assert_eq!(m.repeats, 1);
        assert_eq!(m.targets[0].speed.get(), 1.0);
        assert_eq!(m.expected("silence", "engine"), Expected::default());
    }

    #[test]
    fn the_last_matching_expectation_wins() {
        let m = parse(
            "cases = [\"500-once\", \"silence\"]\n[[target]]\nname = \"gw\"\nembedded = true\nspeed = 4\n\
             [[expect]]\ntarget = \"gw\"\nis = \"fail\"\n\
             [[expect]]\ntarget = \"gw\"\ncase = \"silence\"\nis = [\"pass\", \"clean_error\"]\nflaky_ok = true\n",
        )
        .unwrap();
        assert_eq!(m.targets[0].speed.get(), 4.0);
        assert_eq!(m.expected("500-once", "gw").classes, [Class::Fail]);
        let s = m.expected("silence", "gw");
        assert_eq!(s.classes, [Class::Pass, Class::CleanError]);
        assert!(s.flaky_ok);
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn every_refusal_is_located_with_a_suggestion() {
        let e = err("[[target]]\nname = \"e\"\nembedded = true\n[[expect]]\ntarget = \"e\"\ncase = \"silense\"\nis = \"fail\"\n");
        assert!(e.starts_with("m.toml:6:8: unknown case `silense` (did you mean `silence`?)"), "{e}");
        let e = err("[[target]]\nname = \"e\"\nembedded = true\n[[expect]]\ntarget = \"f\"\nis = \"fail\"\n");
        assert!(e.starts_with("m.toml:5:10: unknown target `f` (did you mean `e`?)"), "{e}");
        let e = err("[[target]]\nname = \"e\"\nembedded = true\n[[expect]]\ntarget = \"e\"\nis = \"flaky\"\n");
        assert!(e.starts_with("m.toml:6:6: unknown class `flaky`"), "{e}");
        let e = err("cases = [\"500-once\", \"sillence\"]\n[[target]]\nname = \"e\"\nembedded = true\n");
        assert!(e.starts_with("m.toml:1:22: no scenario `sillence`"), "{e}");
        let e = err("repeat = 2\n[[target]]\nname = \"e\"\nembedded = true\n");
        assert!(e.starts_with("m.toml:1:1: unknown field `repeat`"), "{e}");
        let e = err("repeats = 0\n[[target]]\nname = \"e\"\nembedded = true\n");
        assert!(e.starts_with("m.toml:1:11: repeats = 0"), "{e}");
        let e = err("[[target]]\nname = \"e\"\nfile = \"nowhere.toml\"\n");
        assert!(e.starts_with("m.toml:3:8: nowhere.toml: no such target file"), "{e}");
        let e = err("[[target]]\nname = \"a b\"\nembedded = true\n");
        assert!(e.starts_with("m.toml:2:8: "), "{e}");
        let e = err("speed = 1000\n[[target]]\nname = \"e\"\nembedded = true\n");
        assert!(e.starts_with("m.toml:1:9: speed = 1000"), "{e}");
        // `not_run` and `error` are what a matrix says of a cell, never what one expects.
        let e = err("[[target]]\nname = \"e\"\nembedded = true\n[[expect]]\ntarget = \"e\"\nis = \"not_run\"\n");
        assert!(e.contains("unknown class `not_run`"), "{e}");
    }

    /// The shipped matrix files name catalogue cases and target files by the shape this reads
    /// (the target files stood in by empty files: litellm.toml and portkey.toml come with the
    /// several-targets work).
    #[test]
    fn the_shipped_matrix_files_read() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("matrix")).unwrap();
        std::fs::create_dir_all(tmp.path().join("targets")).unwrap();
        let catalogue = crate::matrix::catalogue_cases();
        assert!(catalogue.len() >= 18, "{catalogue:?}");
        let known = |c: &str| {
            if catalogue.iter().any(|k| k == c) {
                Ok(())
            } else {
                Err(format!("no case `{c}`"))
            }
        };
        for name in ["ci.toml", "field.toml", "gateways.toml", "openclaw.toml"] {
            let text = std::fs::read_to_string(root.join("matrix").join(name)).unwrap();
            for l in text.lines() {
                if let Some(f) = l.strip_prefix("file = \"../targets/") {
                    let f = f.trim_end_matches('"');
                    std::fs::write(tmp.path().join("targets").join(f), "").unwrap();
                }
            }
            let path = tmp.path().join("matrix").join(name);
            let m = MatrixFile::parse(&path, &text, &catalogue, &known)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(m.targets.iter().any(|t| t.file.is_none()), "{name}: the reference column");
        }
    }
}
