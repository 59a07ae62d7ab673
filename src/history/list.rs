//! The run directories under a report dir, each read once: a run with its `report.json`, or a
//! note saying why it is not one (foreign, unfinished, broken, another schema version). Never
//! fails on what it finds: `rehearse history`, drift, `compare` and retention all list through
//! [`list_runs`].
//!
//! A run directory of a report dir is ([`run_dirs`], the one rule `rehearse history` and
//! `--keep` share) a directory — not a symlink — named `<UTC yyyymmddTHHMMSSZ>-<name>`
//! (optionally `-N`, `rundir`) whose ownership marker, when it records a name, records
//! its own: a copy of a run, or a renamed one, carries the name of the directory it came from
//! and is [`Note::Copy`]. A suite's (`…-suite` with an `index.json`) holds one run per scenario
//! subdirectory, each listed as its own entry. The files `rehearse` itself keeps in a report dir
//! (the run lock, the history's `index.html` / `index.md`) are left out; anything else is
//! [`Note::Foreign`].

use std::path::{Path, PathBuf};

use crate::report::model::{Report, SCHEMA_VERSION};

/// Files of our own at the top of a report dir, never listed.
const OWN_FILES: &[&str] = &[crate::rundir::lock::LOCK_FILE, "index.html", "index.md"];

/// One entry of a report dir.
#[derive(Debug, Clone)]
pub struct RunEntry {
    /// The entry's path.
    pub dir: PathBuf,
    /// Its path relative to the report dir (`20261202T060000Z-smoke`, or
    /// `20261202T060000Z-suite/smoke` for a suite's scenario), `/`-separated.
    pub rel: String,
    /// The `yyyymmddTHHMMSSZ` stamp its name starts with (`None` for a foreign entry).
    pub stamp: Option<String>,
    /// What it holds.
    pub kind: EntryKind,
}

/// What an entry holds.
#[derive(Debug, Clone)]
pub enum EntryKind {
    /// A run whose report.json was read.
    Run(Box<Report>),
    /// Not a readable run, and why.
    Note(Note),
}

/// Why an entry is not a readable run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// Not something `rehearse` wrote: a file, a symlink, or a directory whose name is not a
    /// run's.
    Foreign,
    /// A run directory's copy (or a renamed run): its marker names another directory.
    Copy(String),
    /// A run directory without a report.json: a run in progress, or one killed mid-way.
    Unfinished,
    /// A report.json that cannot be read or parsed (the error, with line:col where it has one).
    Broken(String),
    /// A report.json of another schema version (`schema_version`, `None` when it has none).
    Schema(Option<u64>),
}

impl Note {
    /// One line for the listing.
    pub fn text(&self) -> String {
        match self {
            Self::Foreign => "not a run directory of rehearse (left alone)".into(),
            Self::Copy(of) => format!(
                "a copy of {of} (its marker says so): not a run directory of this report dir \
                 (left alone)"
            ),
            Self::Unfinished => "no report.json: a run in progress or one that never finished".into(),
            Self::Broken(e) => format!("report.json unreadable: {e}"),
            Self::Schema(Some(v)) => {
                format!("report.json schema version {v}, this rehearse reads {SCHEMA_VERSION}")
            }
            Self::Schema(None) => "report.json without a schema_version".into(),
        }
    }
}

impl RunEntry {
    /// The report, when the entry is a readable run.
    pub fn report(&self) -> Option<&Report> {
        match &self.kind {
            EntryKind::Run(r) => Some(r),
            EntryKind::Note(_) => None,
        }
    }

    /// The note, when it is not.
    pub fn note(&self) -> Option<&Note> {
        match &self.kind {
            EntryKind::Run(_) => None,
            EntryKind::Note(n) => Some(n),
        }
    }
}

/// The `yyyymmddTHHMMSSZ` stamp a run directory's name starts with, when it is one
/// (`<stamp>-<name>`).
pub fn run_stamp(name: &str) -> Option<&str> {
    let stamp = name.get(..16)?;
    let b = stamp.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let ok = digits(0..8) && b[8] == b'T' && digits(9..15) && b[15] == b'Z';
    (ok && name.len() > 17 && name.as_bytes()[16] == b'-').then_some(stamp)
}

/// One child of a report dir, judged by the one rule of what a run directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    /// Its file name.
    pub name: String,
    /// Its path.
    pub path: PathBuf,
    /// Its `yyyymmddTHHMMSSZ` stamp, when it is a run directory.
    pub stamp: Option<String>,
    /// `Ok` for a run directory of this report dir, else why it is not one ([`Note::Foreign`],
    /// [`Note::Copy`]).
    pub run: Result<(), Note>,
}

impl RunDir {
    /// True for a suite's run directory (it holds an `index.json`).
    fn is_suite(&self) -> bool {
        self.run.is_ok() && self.path.join("index.json").is_file()
    }
}

/// Every child of `report_dir` but the files `rehearse` keeps there, sorted by name, each
/// judged by the one rule (see the module's opening): `rehearse history` lists the runs
/// through it, and `--keep` prunes only what it calls a run directory. A report dir that does
/// not exist or cannot be read holds nothing.
pub fn run_dirs(report_dir: &Path) -> Vec<RunDir> {
    let Ok(read) = std::fs::read_dir(report_dir) else {
        return Vec::new();
    };
    let mut out: Vec<RunDir> = read
        .flatten()
        .map(|e| {
            // `file_type` does not follow a symlink: a link to a run is not one.
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let stamp = run_stamp(&name).map(str::to_string);
            let run = match (&stamp, is_dir) {
                (Some(_), true) => match crate::rundir::marker::belongs_elsewhere(&path, &name) {
                    Some(other) => Err(Note::Copy(other)),
                    None => Ok(()),
                },
                _ => Err(Note::Foreign),
            };
            RunDir {
                stamp: stamp.filter(|_| run.is_ok()),
                name,
                path,
                run,
            }
        })
        .filter(|d| !OWN_FILES.contains(&d.name.as_str()))
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every entry of `report_dir`, oldest first (by stamp, then name; entries that are not runs
/// last). A report dir that does not exist or cannot be read lists nothing.
pub fn list_runs(report_dir: &Path) -> Vec<RunEntry> {
    let mut out = Vec::new();
    for d in run_dirs(report_dir) {
        match d.run {
            Ok(()) if d.is_suite() => suite(&d.path, &d.name, d.stamp.as_deref(), &mut out),
            Ok(()) => out.push(RunEntry {
                kind: read_run(&d.path),
                dir: d.path,
                rel: d.name,
                stamp: d.stamp,
            }),
            Err(note) => out.push(RunEntry {
                dir: d.path,
                rel: d.name,
                stamp: None,
                kind: EntryKind::Note(note),
            }),
        }
    }
    out.sort_by(|a, b| {
        (a.stamp.is_none(), &a.stamp, &a.rel).cmp(&(b.stamp.is_none(), &b.stamp, &b.rel))
    });
    out
}

/// A suite directory: one entry per scenario subdirectory (index files left out).
fn suite(path: &Path, name: &str, stamp: Option<&str>, out: &mut Vec<RunEntry>) {
    let Ok(read) = std::fs::read_dir(path) else {
        return;
    };
    let mut subs: Vec<PathBuf> = read
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subs.sort();
    for sub in subs {
        let leaf = sub.file_name().map(|n| n.to_string_lossy().into_owned());
        out.push(RunEntry {
            kind: read_run(&sub),
            rel: format!("{name}/{}", leaf.unwrap_or_default()),
            dir: sub,
            stamp: stamp.map(str::to_string),
        });
    }
}

/// Reads one run directory's report.json.
pub fn read_run(dir: &Path) -> EntryKind {
    let path = dir.join("report.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return EntryKind::Note(Note::Unfinished);
        }
        Err(e) => return EntryKind::Note(Note::Broken(e.to_string())),
    };
    match parse_report(&text) {
        Ok(r) => EntryKind::Run(Box::new(r)),
        Err(n) => EntryKind::Note(n),
    }
}

/// A report.json's text → the report, or the note why not. Reports of this schema version
/// written before a field existed are upgraded as `rehearse report` does.
pub fn parse_report(text: &str) -> Result<Report, Note> {
    let mut v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Note::Broken(format!("{}:{}: {e}", e.line(), e.column())))?;
    match v.get("schema_version").map(serde_json::Value::as_u64) {
        Some(Some(n)) if n == u64::from(SCHEMA_VERSION) => {}
        Some(Some(n)) => return Err(Note::Schema(Some(n))),
        _ => return Err(Note::Schema(None)),
    }
    Report::upgrade_json(&mut v);
    serde_json::from_value(v).map_err(|e| Note::Broken(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_stamps_are_recognised() {
        assert_eq!(run_stamp("20261202T060000Z-smoke"), Some("20261202T060000Z"));
        assert_eq!(run_stamp("20261202T060000Z-smoke-2"), Some("20261202T060000Z"));
        assert_eq!(run_stamp("20261202T060000Z-"), None);
        assert_eq!(run_stamp("20261202T060000Zsmoke"), None);
        assert_eq!(run_stamp("2026120xT060000Z-smoke"), None);
        assert_eq!(run_stamp("notes.txt"), None);
        assert_eq!(run_stamp("é"), None);
    }

    #[test]
    fn bad_report_json_becomes_a_note() {
        assert!(matches!(parse_report("{"), Err(Note::Broken(e)) if e.starts_with("1:")));
        assert_eq!(
            parse_report(r#"{"schema_version": 99}"#).err(),
            Some(Note::Schema(Some(99)))
        );
        assert_eq!(parse_report(r#"{"x": 1}"#).err(), Some(Note::Schema(None)));
        assert!(matches!(
            parse_report(r#"{"schema_version": 1}"#),
            Err(Note::Broken(_))
        ));
    }

    fn marker(dir: &Path, recorded: Option<&str>) {
        // Started at 2026-12-01T06:00:00Z (the old marker's run below).
        let start = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_104_800);
        let mut m = crate::rundir::marker::Marker::now(&["smoke".into()], start);
        m.dir = recorded.map(str::to_string);
        std::fs::create_dir_all(dir).unwrap();
        let json = serde_json::to_string(&m).unwrap();
        std::fs::write(dir.join(crate::rundir::marker::MARKER_FILE), json).unwrap();
    }

    #[test]
    fn a_run_directory_is_one_whose_marker_names_it_and_a_copy_is_not() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        // Its marker names it: a run. An old marker without a name: a run when the name carries
        // the stamp of the marker's start; a copy of it under another stamp is not.
        marker(&p.join("20261202T060000Z-smoke"), Some("20261202T060000Z-smoke"));
        marker(&p.join("20261201T060000Z-smoke"), None);
        marker(&p.join("20261130T060000Z-smoke"), None);
        // A copy under a run-like name, and under a name of the user's: not runs.
        marker(&p.join("20200101T000000Z-smoke"), Some("20261202T060000Z-smoke"));
        marker(&p.join("saved-smoke"), Some("20261202T060000Z-smoke"));
        // A link to a run is not one.
        std::os::unix::fs::symlink(p.join("20261202T060000Z-smoke"), p.join("20261203T060000Z-smoke"))
            .unwrap();
        let dirs = run_dirs(p);
        let by: Vec<(&str, Result<(), Note>)> =
            dirs.iter().map(|d| (d.name.as_str(), d.run.clone())).collect();
        assert_eq!(
            by,
            [
                ("20200101T000000Z-smoke", Err(Note::Copy("20261202T060000Z-smoke".into()))),
                (
                    "20261130T060000Z-smoke",
                    Err(Note::Copy("the run started 20261201T060000Z".into()))
                ),
                ("20261201T060000Z-smoke", Ok(())),
                ("20261202T060000Z-smoke", Ok(())),
                ("20261203T060000Z-smoke", Err(Note::Foreign)),
                ("saved-smoke", Err(Note::Foreign)),
            ]
        );
        assert!(dirs[0].stamp.is_none(), "a copy has no run stamp");
        let listed = list_runs(p);
        assert!(
            listed.iter().any(|e| e.note() == Some(&Note::Copy("20261202T060000Z-smoke".into()))),
            "history lists the copy as such"
        );
    }

    #[test]
    fn an_old_report_with_a_speed_outside_todays_bounds_still_loads() {
        // Written before --speed had bounds (×1000 here), stopped at 500 s of scenario time.
        let old = |speed: &str| {
            format!(
                r#"{{"schema_version": 1, "scenario": "smoke", "verdict": "incomplete",
                "stopped": {{"reason": "SIGTERM", "at_ms": 500000, "of_ms": 2000000,
                    "policy": "p"}},
                "started_at": "2026-11-20T06:00:00.000Z", "speed": {speed}, "seed": 1,
                "host": {{}}, "policies": [],
                "replay": {{"sent": 0, "lag_ms": {{"p50": 0.0, "p99": 0.0, "max": 0.0}}}},
                "config": {{}}}}"#
            )
        };
        let fast = parse_report(&old("1000.0")).unwrap_or_else(|n| panic!("{n:?}"));
        assert_eq!(fast.speed.get(), 1000.0);
        let json = serde_json::to_value(&fast).unwrap_or_default();
        assert_eq!(json["speed"], 1000.0, "written back as read");
        let line = fast.stopped.as_ref().map(|s| s.line(fast.speed)).unwrap_or_default();
        let wall = "(scenario time; 0.5 s of 2.0 s of wall time at ×1000)";
        assert!(line.ends_with(wall), "{line}");
        let slow = parse_report(&old("0.001")).unwrap_or_else(|n| panic!("{n:?}"));
        let c = crate::history::compare::caveats(&fast, &slow);
        assert_eq!(c[0].what, "speed");
        assert_eq!((c[0].a.as_deref(), c[0].b.as_deref()), (Some("×1000"), Some("×0.001")));
        let zero = parse_report(&old("0")).unwrap_or_else(|n| panic!("{n:?}"));
        let line = zero.stopped.as_ref().map(|s| s.line(zero.speed)).unwrap_or_default();
        assert_eq!(line, "stopped by SIGTERM at 500.0 s of 2000 s", "no wall time at ×0");
    }

    #[test]
    fn a_report_dir_lists_runs_notes_and_suites_never_failing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::write(p.join("notes.txt"), "mine").unwrap();
        std::fs::write(p.join("index.html"), "ours").unwrap();
        std::fs::create_dir(p.join("photos")).unwrap();
        std::fs::create_dir(p.join("20261202T060000Z-smoke")).unwrap();
        std::fs::create_dir(p.join("20261201T060000Z-smoke")).unwrap();
        std::fs::write(p.join("20261201T060000Z-smoke/report.json"), "{oops").unwrap();
        std::fs::create_dir_all(p.join("20261203T060000Z-suite/a")).unwrap();
        std::fs::write(p.join("20261203T060000Z-suite/index.json"), "{}").unwrap();
        let l = list_runs(p);
        let rels: Vec<&str> = l.iter().map(|e| e.rel.as_str()).collect();
        assert_eq!(
            rels,
            [
                "20261201T060000Z-smoke",
                "20261202T060000Z-smoke",
                "20261203T060000Z-suite/a",
                "notes.txt",
                "photos"
            ]
        );
        assert!(matches!(l[0].note(), Some(Note::Broken(_))));
        assert_eq!(l[1].note(), Some(&Note::Unfinished));
        assert_eq!(l[2].note(), Some(&Note::Unfinished));
        assert_eq!(l[3].note(), Some(&Note::Foreign));
        assert_eq!(l[4].note(), Some(&Note::Foreign));
        assert!(list_runs(&p.join("missing")).is_empty());
    }
}
