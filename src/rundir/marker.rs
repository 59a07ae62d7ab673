//! The ownership marker: `.rehearse-run.json`, written into every run directory when the run
//! starts (before anything else), naming the tool, the directory's own name, the retention key
//! (the scenario, or `suite:A,B` for a suite), the process and the start. A directory is a run
//! directory of its report dir only when the marker's `dir` is its own name
//! (`crate::history::list::run_dirs`, the one rule `history` and `--keep` share): a copy or a
//! renamed run carries the name of the directory it was copied from, and is left alone.

use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};


/// The marker's file name inside a run directory.
pub(crate) const MARKER_FILE: &str = ".rehearse-run.json";
/// The value of `tool`.
const TOOL: &str = "rehearse";

/// `.rehearse-run.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Marker {
    /// Always `rehearse`.
    pub tool: String,
    /// The run directory's own name (not a path: report dirs are moved, and macOS reaches
    /// `/var` as `/private/var`). Absent in markers written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// The version of rehearse that created the directory.
    pub version: String,
    /// What retention groups runs by: the scenario name, or `suite:A,B` for a suite.
    pub key: String,
    /// The scenarios the run executes.
    pub scenarios: Vec<String>,
    /// The run's process id.
    pub pid: u32,
    /// The run's host name.
    pub host: String,
    /// Run start, RFC 3339 UTC.
    pub started_at: String,
    /// Run start, ms since the Unix epoch (orders runs started in the same second).
    pub started_unix_ms: u64,
}

/// The retention key of a run of `scenarios` (one: its name; several: a suite).
pub(crate) fn key_of(scenarios: &[String]) -> String {
    match scenarios {
        [one] => one.clone(),
        many => format!("suite:{}", many.join(",")),
    }
}

impl Marker {
    /// The marker of a run of `scenarios` started at `now` by this process.
    pub(crate) fn now(scenarios: &[String], now: SystemTime) -> Self {
        Self {
            tool: TOOL.to_string(),
            dir: None,
            version: env!("CARGO_PKG_VERSION").to_string(),
            key: key_of(scenarios),
            scenarios: scenarios.to_vec(),
            pid: std::process::id(),
            host: crate::host::hostname().unwrap_or_else(|| "unknown".into()),
            started_at: humantime::format_rfc3339_millis(now).to_string(),
            started_unix_ms: now
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        }
    }
}

/// Whether a directory is ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Owner {
    /// Our marker, parsed.
    Ours(Marker),
    /// Not ours, and why (no marker, a symlink, a marker that does not parse…).
    NotOurs(String),
}

/// Writes the marker into `dir` unless one is there already, naming `dir` in it.
pub(crate) fn write(dir: &Path, marker: &Marker) -> io::Result<()> {
    let path = dir.join(MARKER_FILE);
    if path.exists() {
        return Ok(());
    }
    let mut marker = marker.clone();
    marker.dir = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let json = serde_json::to_string_pretty(&marker).map_err(io::Error::other)?;
    crate::util::write_atomic(&path, format!("{json}\n").as_bytes())
}

impl Marker {
    /// Whether this marker is the one of a run directory named `name`: the name it records, or
    /// — a marker written before it recorded one — a name that starts with the stamp of its
    /// start (a run directory's name and its marker come from the same instant). `Err` says
    /// which directory it belongs to.
    pub(crate) fn claims(&self, name: &str) -> Result<(), String> {
        match &self.dir {
            Some(d) if d == name => Ok(()),
            Some(d) => Err(d.clone()),
            None => {
                let t = UNIX_EPOCH + std::time::Duration::from_millis(self.started_unix_ms);
                let stamp = crate::rundir::stamp(t);
                if name.starts_with(&format!("{stamp}-")) {
                    Ok(())
                } else {
                    Err(format!("the run started {stamp}"))
                }
            }
        }
    }
}

/// Which run directory `dir`'s marker belongs to when it is not `dir` itself (`None`: no
/// marker of ours, or its own).
pub(crate) fn belongs_elsewhere(dir: &Path, name: &str) -> Option<String> {
    match read(dir) {
        Owner::Ours(m) => m.claims(name).err(),
        Owner::NotOurs(_) => None,
    }
}

/// Whose directory `dir` is, by its marker.
pub(crate) fn read(dir: &Path) -> Owner {
    let path = dir.join(MARKER_FILE);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Owner::NotOurs(format!("{MARKER_FILE} is not a regular file")),
        Err(_) => return Owner::NotOurs(format!("no {MARKER_FILE}")),
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return Owner::NotOurs(format!("{MARKER_FILE} unreadable: {e}")),
    };
    match serde_json::from_slice::<Marker>(&bytes) {
        Ok(m) if m.tool == TOOL && !m.key.is_empty() => Owner::Ours(m),
        Ok(_) => Owner::NotOurs(format!("{MARKER_FILE} names another tool")),
        Err(e) => Owner::NotOurs(format!("{MARKER_FILE} does not parse: {e}")),
    }
}
