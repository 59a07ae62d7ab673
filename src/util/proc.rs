//! Processes by pid: signalling a process or a process group, whether it still runs, and the
//! executable that runs this program's hidden helper commands. Unix.

use std::path::PathBuf;

/// Sends `sig` to the process group `pgid`; false if there is no such group.
pub(crate) fn signal_group(pgid: u32, sig: libc::c_int) -> bool {
    let Ok(id) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    if id <= 1 {
        return false;
    }
    // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
    unsafe { libc::kill(-id, sig) == 0 }
}

/// Sends `sig` to the process `pid`; false if there is no such process.
pub(crate) fn signal_pid(pid: u32, sig: libc::c_int) -> bool {
    let Ok(id) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if id <= 1 {
        return false;
    }
    // SAFETY: kill(2) on one pid; no memory is involved.
    unsafe { libc::kill(id, sig) == 0 }
}

/// Whether a process group still has a member.
pub(crate) fn group_alive(pgid: u32) -> bool {
    signal_group(pgid, 0)
}

/// Whether a process still runs (or is a zombie not yet reaped).
pub(crate) fn pid_alive(pid: u32) -> bool {
    signal_pid(pid, 0)
}

/// The executable that runs the hidden `__fleet-host` and `__watchdog`: `REHEARSE_HOST_EXE`
/// when set (tests running the harness in-process), else this executable — on Linux through
/// `/proc/self/exe`, which still runs it after the file was replaced mid-run (a rebuild, an
/// upgrade).
pub(crate) fn self_exe() -> std::io::Result<PathBuf> {
    if let Some(p) = std::env::var_os("REHEARSE_HOST_EXE") {
        return Ok(PathBuf::from(p));
    }
    #[cfg(target_os = "linux")]
    {
        let proc_exe = PathBuf::from("/proc/self/exe");
        if proc_exe.exists() {
            return Ok(proc_exe);
        }
    }
    std::env::current_exe()
}
