//! What a report directory holds, for retention: one [`Entry`] per child directory — ours or
//! not (the marker), finished or not (a report that parses). Reads only the marker and whether
//! `report.json` (a suite: `index.json`) parses with a verdict; never fails (an unreadable
//! directory is an empty list, an unreadable child is not ours).

use std::path::Path;

pub(crate) use super::marker::Owner;
use super::marker::{self, Marker};

/// Whether the run finished (wrote its report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finished {
    /// Its report (report.json, or a suite's index.json) parses and has this verdict.
    Yes(String),
    /// It never finished (killed), or its report is broken: why.
    No(String),
}

/// One child of the report directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its file name.
    pub name: String,
    /// Ours or not.
    pub owner: Owner,
    /// Finished or not (meaningful for ours only).
    pub finished: Finished,
}

/// Every child of `report_dir` that is a directory or a symlink (files are not runs and are left
/// out), sorted by name.
pub(crate) fn scan(report_dir: &Path) -> Vec<Entry> {
    let Ok(rd) = std::fs::read_dir(report_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            out.push(Entry {
                name,
                owner: Owner::NotOurs("a symlink".into()),
                finished: Finished::No("not a run directory".into()),
            });
            continue;
        }
        if !meta.is_dir() {
            continue;
        }
        let owner = marker::read(&e.path());
        let finished = match &owner {
            Owner::Ours(m) => finished(&e.path(), m),
            Owner::NotOurs(_) => Finished::No("not ours".into()),
        };
        out.push(Entry {
            name,
            owner,
            finished,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn finished(dir: &Path, m: &Marker) -> Finished {
    let file = if m.scenarios.len() > 1 {
        "index.json"
    } else {
        "report.json"
    };
    let bytes = match std::fs::read(dir.join(file)) {
        Ok(b) => b,
        Err(_) => return Finished::No(format!("no {file} (the run never finished)")),
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(v) => match v.get("verdict").and_then(|v| v.as_str()) {
            Some(verdict) => Finished::Yes(verdict.to_string()),
            None => Finished::No(format!("{file} has no verdict")),
        },
        Err(e) => Finished::No(format!("{file} is broken ({e})")),
    }
}
