//! What a run did after its report was first written (docs/weekly.md): the run directories
//! retention (`--keep N`) removed, and the warnings of the batch-job metrics (`--textfile-dir`,
//! `--pushgateway`) and of `--on-fail`. None of it changes the verdict or the exit code; the
//! report is written again with this section once they are done.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// `housekeeping` in report.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Housekeeping {
    /// `--keep N` when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<u32>,
    /// Run directories retention removed.
    #[serde(default)]
    pub removed: Vec<RemovedRun>,
    /// Metrics writes or pushes that failed, an on-fail command that failed, a run directory
    /// retention could not remove.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One run directory retention removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemovedRun {
    /// Its name under the report directory.
    pub dir: String,
    /// Why it went.
    pub reason: String,
}

impl Housekeeping {
    /// True when there is nothing to say.
    pub fn is_empty(&self) -> bool {
        self.keep.is_none() && self.removed.is_empty() && self.warnings.is_empty()
    }

    /// The lines of the section, plain text (each a sentence).
    pub fn lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(k) = self.keep {
            v.push(match self.removed.len() {
                0 => format!("Retention: keeping the last {k} run(s); nothing removed."),
                n => format!("Retention: keeping the last {k} run(s); removed {n}:"),
            });
        }
        for r in &self.removed {
            v.push(format!("removed `{}` ({})", r.dir, r.reason));
        }
        for w in &self.warnings {
            v.push(format!("warning: {w}"));
        }
        v
    }
}

/// The Markdown section (nothing when there is nothing to say).
pub(crate) fn markdown(h: Option<&Housekeeping>, o: &mut String) {
    let Some(h) = h.filter(|h| !h.is_empty()) else {
        return;
    };
    o.push_str("\n## Housekeeping\n\n");
    for l in h.lines() {
        let _ = writeln!(o, "- {}", l.replace('\n', " "));
    }
}

/// The HTML section (nothing when there is nothing to say).
pub(crate) fn html(h: Option<&Housekeeping>, o: &mut String, esc: &dyn Fn(&str) -> String) {
    let Some(h) = h.filter(|h| !h.is_empty()) else {
        return;
    };
    o.push_str("<h2>Housekeeping</h2>\n<ul class=\"housekeeping\">");
    for l in h.lines() {
        let _ = write!(o, "<li>{}</li>", esc(&l));
    }
    o.push_str("</ul>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_was_removed_and_warns() {
        let h = Housekeeping {
            keep: Some(2),
            removed: vec![RemovedRun {
                dir: "20261130T030000Z-weekly".into(),
                reason: "older than the 2 kept run(s) of weekly".into(),
            }],
            warnings: vec!["pushgateway http://127.0.0.1:1: connection refused".into()],
        };
        let mut md = String::new();
        markdown(Some(&h), &mut md);
        assert!(md.contains("## Housekeeping"), "{md}");
        assert!(md.contains("removed 1:"), "{md}");
        assert!(md.contains("- removed `20261130T030000Z-weekly` (older than"), "{md}");
        assert!(md.contains("- warning: pushgateway"), "{md}");
        let mut none = String::new();
        markdown(Some(&Housekeeping::default()), &mut none);
        markdown(None, &mut none);
        assert!(none.is_empty());
    }
}
