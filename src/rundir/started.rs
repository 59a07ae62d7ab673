//! The mark a run leaves when its clock first starts, for the process that launched it:
//! `rehearse matrix` names a file in [`ENV`] for each child run and counts the child as
//! *starting* (a real gateway booting and warming up: the CPU-heavy part of a run) until the
//! file exists (`--starts`, docs/matrix.md). The first arm's clock writes it; a later arm of the
//! same run (a second version, a second target) leaves it as it is. Without [`ENV`] nothing is
//! written.

use std::io::Write;
use std::time::SystemTime;

/// The variable naming the file (set by `rehearse matrix` for its child runs only).
pub const ENV: &str = "REHEARSE_CLOCK_STARTED_FILE";

/// Writes the clock's wall start (RFC 3339, ms) to the file [`ENV`] names, unless it exists; a
/// failure to write is said on stderr and costs the launcher only its count.
pub(crate) fn mark(wall: SystemTime) {
    let Some(path) = std::env::var_os(ENV) else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match file {
        Ok(mut f) => {
            if let Err(e) = writeln!(f, "{}", humantime::format_rfc3339_millis(wall)) {
                crate::errln!("warning: {}: {e}", std::path::Path::new(&path).display());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => crate::errln!("warning: {}: {e}", std::path::Path::new(&path).display()),
    }
}
