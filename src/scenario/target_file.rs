//! `--target FILE` (docs/scenario.md, "A target of its own: `--target FILE`"): a file holding a
//! `[target]` table (and optionally `[upstream]`) that replaces the scenario's own, so one
//! scenario runs against any system under test. Read and checked on its own first — a syntax
//! error, an unknown key or a bad value is an error at FILE:line:col — with its relative paths
//! (`config`, a `command` with a `/`) resolved from FILE's directory; then [`TargetFile::apply`]
//! puts it in place of the scenario's `[target]`, and the scenario's own checks run on the
//! result (an error they find in the target's keys is located in FILE again:
//! [`TargetFile::relocate`]). The report records which file was used ([`TargetFile::used`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::format::{ScenarioError, ScenarioFile};
use super::locate::locate;
use super::target::{TargetSpec, UpstreamSpec};
use crate::util::textpos::line_col;

/// The file as written: `[target]` required, `[upstream]` optional; nothing else.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    target: TargetSpec,
    #[serde(default)]
    upstream: Option<UpstreamSpec>,
}

/// A target file, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetFile {
    /// The file as given.
    pub path: PathBuf,
    /// Its `[target]`, relative paths resolved from the file's directory.
    pub target: TargetSpec,
    /// Its `[upstream]`, when written (replaces the scenario's).
    pub upstream: Option<UpstreamSpec>,
    /// Its text (errors found later are located in it).
    text: String,
}

/// Which target file a run used (report.json `target_file`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetFileUsed {
    /// The file as given.
    pub path: String,
    /// `sha256:` and 64 hex digits over its bytes.
    pub digest: String,
}

impl TargetFile {
    /// Reads and checks `path`: its TOML shape (unknown keys refused at every level), then
    /// `[target]` and `[upstream]` as a scenario's are checked; every error at FILE:line:col.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: origin.clone(),
            source,
        })?;
        Self::parse(path, text)
    }

    fn parse(path: &Path, text: String) -> Result<Self, ScenarioError> {
        let origin = path.display().to_string();
        let raw = toml::from_str::<Raw>(&text).map_err(|e| {
            let (line, col) = e.span().map_or((1, 1), |s| line_col(&text, s.start));
            ScenarioError::Syntax {
                path: origin.clone(),
                line,
                col,
                msg: e.message().trim().to_string(),
            }
        })?;
        let invalid = |field: String, msg: String| {
            ScenarioError::invalid(&origin, &field, msg).located(&text)
        };
        raw.target
            .validate()
            .map_err(|e| invalid(format!("target.{}", e.field), e.message))?;
        if let Some(u) = &raw.upstream {
            u.validate()
                .map_err(|e| invalid(format!("upstream.{}", e.field), e.message))?;
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut target = raw.target;
        target.config = target.config.map(|c| dir.join(c));
        target.command = target.command.map(|c| {
            // A bare name is looked up on PATH as the scenario's is; a path is the file's.
            if c.components().count() > 1 {
                dir.join(c)
            } else {
                c
            }
        });
        Ok(Self {
            path: path.to_path_buf(),
            target,
            upstream: raw.upstream,
            text,
        })
    }

    /// `file` with this target in place of its own `[target]` (and `[upstream]`, when the
    /// target file writes one).
    pub(crate) fn apply(&self, file: &mut ScenarioFile) {
        file.target = self.target.clone();
        if let Some(u) = &self.upstream {
            file.upstream = u.clone();
        }
    }

    /// An error the scenario's checks found in a key this file wrote (`target.*`,
    /// `upstream.*`), named at FILE:line:col; any other error as it is.
    pub(crate) fn relocate(&self, e: ScenarioError) -> ScenarioError {
        match e {
            ScenarioError::Invalid {
                field, msg, at: _, ..
            } if self.answers_for(&field) => ScenarioError::Invalid {
                path: self.path.display().to_string(),
                // A key the file leaves to its default is pointed at its table (`locate`),
                // else at `[target]`.
                at: locate(&self.text, &field).or_else(|| locate(&self.text, "target")),
                field,
                msg,
            },
            other => other,
        }
    }

    /// `target.*` is this file's to fix, and `upstream.*` when it wrote `[upstream]` (else the
    /// scenario's stands).
    fn answers_for(&self, field: &str) -> bool {
        let top = field.split(['.', '[', ':']).next().unwrap_or("");
        top == "target" || (top == "upstream" && self.upstream.is_some())
    }

    /// Its bytes, for the scenario's digest.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    /// What the report records of it.
    pub(crate) fn used(&self) -> TargetFileUsed {
        TargetFileUsed {
            path: self.path.display().to_string(),
            digest: super::digest::of_bytes(self.bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TargetFile, ScenarioError> {
        TargetFile::parse(Path::new("/t/dir/target.toml"), text.to_string())
    }

    #[test]
    fn relative_paths_resolve_from_the_files_directory() {
        let t = parse("[target]\nkind = \"openclaw\"\nconfig = \"oc.json5\"\ncommand = \"bin/openclaw\"\n")
            .unwrap();
        assert_eq!(t.target.config, Some(PathBuf::from("/t/dir/oc.json5")));
        assert_eq!(t.target.command, Some(PathBuf::from("/t/dir/bin/openclaw")));
        let bare = parse("[target]\nkind = \"openclaw\"\ncommand = \"openclaw\"\n").unwrap();
        assert_eq!(bare.target.command, Some(PathBuf::from("openclaw")));
    }

    #[test]
    fn errors_are_located_in_the_target_file() {
        let e = parse("[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:1\"\nturn_timeot = \"5s\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/t/dir/target.toml:4:1:"), "{e}");
        let e = parse("[target]\nkind = \"embedded\"\nconfig = \"x.json\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/t/dir/target.toml:3:10: target.config"), "{e}");
        let e = parse("kind = \"http\"\n").unwrap_err().to_string();
        assert!(e.contains("/t/dir/target.toml:1:1"), "{e}");
        let e = parse("[target]\n[upstream]\nlisten = \"10.0.0.1:80\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/t/dir/target.toml:3:10: upstream.listen"), "{e}");
    }

    #[test]
    fn the_embedded_engine_is_a_target_too() {
        let t = parse("[target]\nkind = \"embedded\"\n").unwrap();
        assert_eq!(t.target, TargetSpec::default());
        assert!(t.used().digest.starts_with("sha256:"));
    }
}
