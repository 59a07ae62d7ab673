//! The run lock: a scheduled run and an ad hoc run never overlap in one report directory.
//!
//! An advisory lock (`flock` via std `File::try_lock`) on `REPORT_DIR/.rehearse.lock`, held for
//! the life of a [`RunLock`]; the file holds the holder's pid, start time, host and scenarios as
//! JSON so the refused run can name it. The kernel drops the lock when its process dies, so a
//! killed run leaves an *unlocked* file with its JSON: the next run takes it over and reports
//! the stale holder. A file still locked but naming a pid that is gone on this host (the lock
//! leaked into a surviving child) is also stale: it is unlinked and replaced; after locking, the
//! path is checked to still name the locked file so two runs taking over at once cannot both
//! win. A clean release empties the file.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The lock file's name inside the report directory.
pub const LOCK_FILE: &str = ".rehearse.lock";

/// Who holds (or held) the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    /// Process id of the holder.
    pub pid: u32,
    /// When it took the lock (RFC 3339, UTC).
    pub since: String,
    /// Host name of the holder.
    pub host: String,
    /// Scenarios it runs.
    #[serde(default)]
    pub scenarios: Vec<String>,
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live run holds it (the run command maps this to exit 3).
    #[error(
        "another rehearsal is running: pid {pid} on {host} since {since} (scenarios: {}) holds {}",
        fmt_scenarios(scenarios),
        path.display()
    )]
    Held {
        /// Holder's pid (0 if the holder's file could not be read).
        pid: u32,
        /// When it took the lock.
        since: String,
        /// Its host.
        host: String,
        /// Its scenarios.
        scenarios: Vec<String>,
        /// The lock file.
        path: PathBuf,
    },
    /// The lock file or report directory could not be created, read or written.
    #[error("run lock {}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

fn fmt_scenarios(s: &[String]) -> String {
    if s.is_empty() {
        "unknown".into()
    } else {
        s.join(", ")
    }
}

/// A held run lock; released (file emptied, lock dropped) when this value is dropped.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    path: PathBuf,
    holder: LockHolder,
    took_over: Option<LockHolder>,
}

impl RunLock {
    /// Takes the lock for this process in `report_dir` (created if missing), naming no scenario.
    pub fn acquire(report_dir: &Path) -> Result<RunLock, LockError> {
        Self::acquire_for(report_dir, &[])
    }

    /// Takes the lock for this process, recording `scenarios` for a refused run's message.
    pub fn acquire_for(report_dir: &Path, scenarios: &[String]) -> Result<RunLock, LockError> {
        let holder = LockHolder {
            pid: std::process::id(),
            since: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            host: crate::host::hostname().unwrap_or_else(|| "unknown".into()),
            scenarios: scenarios.to_vec(),
        };
        Self::acquire_as(report_dir, holder)
    }

    /// Takes the lock recording `holder` (tests use this to impersonate other processes).
    fn acquire_as(report_dir: &Path, holder: LockHolder) -> Result<RunLock, LockError> {
        let path = report_dir.join(LOCK_FILE);
        let io_err = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(report_dir).map_err(io_err)?;
        let mut unreadable_held = 0;
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io_err)?;
            match file.try_lock() {
                Ok(()) => {
                    if !same_file(&file, &path) {
                        continue; // replaced between open and lock: lock the new one
                    }
                    let previous = read_holder(&mut file);
                    write_holder(&mut file, &holder).map_err(io_err)?;
                    return Ok(RunLock {
                        file,
                        path,
                        holder,
                        took_over: previous,
                    });
                }
                Err(TryLockError::WouldBlock) => match read_holder(&mut file) {
                    Some(h) if h.host == holder.host && !pid_alive(h.pid) => {
                        // Locked by a leaked descriptor of a dead run: replace the file.
                        match std::fs::remove_file(&path) {
                            Ok(()) => {}
                            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                            Err(e) => return Err(io_err(e)),
                        }
                    }
                    Some(h) => return Err(held(h, path)),
                    None if unreadable_held < 20 => {
                        // The holder has locked but not yet written its JSON.
                        unreadable_held += 1;
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    None => {
                        return Err(LockError::Held {
                            pid: 0,
                            since: "unknown".into(),
                            host: "unknown".into(),
                            scenarios: vec![],
                            path,
                        });
                    }
                },
                Err(TryLockError::Error(e)) => return Err(io_err(e)),
            }
        }
    }

    /// Who holds the lock now (this process).
    pub fn holder(&self) -> &LockHolder {
        &self.holder
    }

    /// The stale holder this lock was taken over from, if any (a killed run).
    pub fn took_over(&self) -> Option<&LockHolder> {
        self.took_over.as_ref()
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Empty the file while still holding the lock: an empty unlocked file is a clean
        // release, a non-empty one a killed run. The lock itself goes with the descriptor.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

fn held(h: LockHolder, path: PathBuf) -> LockError {
    LockError::Held {
        pid: h.pid,
        since: h.since,
        host: h.host,
        scenarios: h.scenarios,
        path,
    }
}

fn read_holder(file: &mut File) -> Option<LockHolder> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(text.trim()).ok()
}

fn write_holder(file: &mut File, holder: &LockHolder) -> io::Result<()> {
    let json = serde_json::to_string(holder).map_err(io::Error::other)?;
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(json.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_data()
}

/// True when `path` still names the open `file` (same device and inode).
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// True unless `kill(pid, 0)` says no such process (EPERM means it exists).
pub(crate) fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks for existence and permission; nothing is delivered.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}
