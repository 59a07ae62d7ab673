//! `promtool check rules` on a scenario's rule files before anything starts: a file promtool
//! rejects is bad input (exit 2) with promtool's own words, which name the file and line.

use std::path::{Path, PathBuf};
use std::process::Command;

/// promtool rejected a rule file, or could not be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesRejected {
    /// The file's problem as promtool states it (`rules.yml: 5:11: group "g", rule 1, ...`).
    #[error("{file}: promtool check rules rejected it: {why}")]
    Rejected {
        /// The file.
        file: String,
        /// promtool's message.
        why: String,
    },
    /// promtool did not run.
    #[error("running {promtool}: {why}")]
    NotRun {
        /// The promtool path.
        promtool: String,
        /// Why.
        why: String,
    },
}

/// The message of promtool's output: its `FAILED:` block, one line.
fn message(out: &str) -> String {
    let lines: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Checking ") && *l != "FAILED:")
        .collect();
    lines.join(" | ")
}

/// Checks every file in `files` with `promtool`.
pub(crate) fn check_rules(promtool: &Path, files: &[PathBuf]) -> Result<(), RulesRejected> {
    for f in files {
        let out = Command::new(promtool)
            .args(["check", "rules"])
            .arg(f)
            .output()
            .map_err(|e| RulesRejected::NotRun {
                promtool: promtool.display().to_string(),
                why: e.to_string(),
            })?;
        if !out.status.success() {
            let text = format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            );
            return Err(RulesRejected::Rejected {
                file: f.display().to_string(),
                why: message(&text),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failed_block_becomes_one_line() {
        let out = "Checking bad.yml\n  FAILED:\nbad.yml: 5:11: group \"g\", rule 1, \"A\": could not parse expression\n\n";
        assert_eq!(
            message(out),
            "bad.yml: 5:11: group \"g\", rule 1, \"A\": could not parse expression"
        );
    }
}
