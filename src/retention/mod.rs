//! Retention (`--keep N`, docs/weekly.md): keep the last N completed run directories per
//! scenario (per scenario set for a suite) under the report directory, and prune older ones
//! after the new run's report is written.
//!
//! # Layout
//! - `marker` (`crate::rundir::marker`): the ownership marker `.rehearse-run.json` every run writes
//!   into its directory at its start, naming the directory; a directory without it is not ours
//!   and is never touched.
//! - `scan`: what the report directory holds, from the one listing of its run directories
//!   (`crate::history::list::run_dirs`, which `rehearse history` lists through too): a child
//!   that is not a run directory of this report dir (a copy, a renamed run, anything history
//!   calls "not a run directory") is not ours; a run directory is ours by its marker.
//! - `plan`: the pure decision of what to remove.
//!
//! Only directories are removed, never a symlink, never a directory without our marker, never
//! the run that is pruning, never a run whose process is still alive on this host.


mod plan;
mod scan;

use std::path::{Path, PathBuf};

pub(crate) use crate::rundir::marker::{self, Marker};
pub(crate) use plan::decide;
pub(crate) use scan::{Owner, scan};

/// One directory retention removed (or failed to remove).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Removed {
    /// The directory.
    pub dir: PathBuf,
    /// Why it went.
    pub reason: String,
}

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pruned {
    /// Directories removed.
    pub removed: Vec<Removed>,
    /// Directories that should have gone but could not be removed (the error).
    pub failed: Vec<(Removed, String)>,
    /// Children of the report directory left alone because they are not ours.
    pub foreign: usize,
}

/// Prunes the runs of `key` under `report_dir`, keeping the `keep` newest completed ones;
/// `current` (the run that is pruning, its report already written) is always kept.
pub(crate) fn prune(report_dir: &Path, key: &str, keep: usize, current: &Path) -> Pruned {
    let entries = scan(report_dir);
    let me = std::process::id();
    let host = crate::host::hostname();
    let alive = |m: &Marker| {
        m.pid != me && Some(m.host.as_str()) == host.as_deref() && crate::util::proc::pid_alive(m.pid)
    };
    let current_name = current.file_name().map(|n| n.to_string_lossy().into_owned());
    let decision = decide(&entries, key, keep, current_name.as_deref(), &alive);
    let mut out = Pruned {
        foreign: decision.foreign,
        ..Pruned::default()
    };
    for (name, reason) in decision.remove {
        let dir = report_dir.join(&name);
        let r = Removed { dir, reason };
        // Checked again just before: still a real directory (not replaced by a symlink) with our
        // marker.
        let still_ours = std::fs::symlink_metadata(&r.dir).is_ok_and(|m| m.is_dir())
            && matches!(&marker::read(&r.dir), Owner::Ours(m) if m.claims(&name).is_ok());
        if !still_ours {
            continue;
        }
        match std::fs::remove_dir_all(&r.dir) {
            Ok(()) => out.removed.push(r),
            Err(e) => out.failed.push((r, e.to_string())),
        }
    }
    out
}

