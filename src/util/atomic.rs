//! Atomic file replacement: write a temp file in the same directory, fsync it, rename it over the
//! target, fsync the directory. A crash at any point leaves either the old file or the new one,
//! never a torn mix.

use std::io::{self, Write};
use std::path::Path;

/// Replaces `path` with `bytes` atomically. On error the previous file (if any) is untouched.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".rehearse-tmp-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    // The temp file is created 0600; give the result the replaced file's permissions, or the
    // usual 0644 for a new file, so reports stay readable by whoever attaches them.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms = match std::fs::metadata(path) {
            Ok(m) => m.permissions(),
            Err(_) => std::fs::Permissions::from_mode(0o644),
        };
        tmp.as_file().set_permissions(perms)?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // Make the rename itself durable. Directories cannot be opened for sync on every OS; a
    // failure here does not undo the (already visible) rename, so it is not an error.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn new_files_are_0644_and_replaced_files_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.md");
        write_atomic(&p, b"one").unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn missing_directory_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/a.json");
        assert!(write_atomic(&p, b"x").is_err());
    }
}
