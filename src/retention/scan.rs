//! What a report directory holds, for retention: one [`Entry`] per child — ours or not, finished
//! or not — from the one listing of its run directories ([`crate::history::list::run_dirs`],
//! which `rehearse history` lists through too). A child that is not a run directory of this
//! report dir (a file, a symlink, a name that is not a run's, a copy or a renamed run whose
//! marker names another directory) is not ours, whatever marker it carries; a run directory is
//! ours by its marker. Reads only the marker and whether `report.json` (a suite: `index.json`)
//! parses with a verdict; never fails (an unreadable directory is an empty list, an unreadable
//! child is not ours).

use std::path::Path;

pub(crate) use crate::rundir::marker::Owner;
use crate::rundir::marker::{self, Marker};

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

/// Every child of `report_dir` that the one listing names, sorted by name; files are left out.
pub(crate) fn scan(report_dir: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for d in crate::history::list::run_dirs(report_dir) {
        let is_file = std::fs::symlink_metadata(&d.path).is_ok_and(|m| m.is_file());
        if is_file {
            continue;
        }
        let owner = match &d.run {
            Ok(()) => marker::read(&d.path),
            Err(note) => Owner::NotOurs(note.text()),
        };
        let finished = match &owner {
            Owner::Ours(m) => finished(&d.path, m),
            Owner::NotOurs(_) => Finished::No("not ours".into()),
        };
        out.push(Entry {
            name: d.name,
            owner,
            finished,
        });
    }
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
