//! Writing the embedded tree to disk: into `CACHE/builtin-VERSION-HASH/` (the cache root of
//! `util::cache`), else, when that cannot be written, into `rehearse-cache-UID` of the system temp
//! directory (only when it is this user's own directory). Once per
//! process; each file is compared with its embedded bytes and written (atomically: concurrent
//! runs write the same bytes) only when missing or different, so an edited or truncated copy in
//! the cache never runs.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{CHOSEN, files, root_in};

/// The built-ins could not be written anywhere.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the built-in scenarios could not be written to disk ({}); set REHEARSE_CACHE to a writable directory",
    .tried.join("; ")
)]
pub struct ExtractError {
    /// Each place tried, with why it failed.
    pub tried: Vec<String>,
}

/// The extraction root, the tree written there (once per process).
pub(crate) fn extract() -> Result<&'static Path, ExtractError> {
    static DONE: OnceLock<Result<PathBuf, ExtractError>> = OnceLock::new();
    let done = DONE.get_or_init(|| {
        let mut tried = Vec::new();
        let mut candidates = Vec::new();
        match crate::util::cache::root() {
            Some(c) => candidates.push(c),
            None => tried.push(crate::util::cache::NO_ROOT.to_string()),
        }
        let fallback = fallback_root();
        match owned_or_absent(&fallback) {
            Ok(()) => candidates.push(fallback),
            Err(why) => tried.push(format!("{}: {why}", fallback.display())),
        }
        for cache in candidates {
            let root = root_in(&cache);
            match write_tree(&root) {
                Ok(()) => {
                    let _ = CHOSEN.set(root.clone());
                    return Ok(root);
                }
                Err(e) => tried.push(format!("{}: {e}", root.display())),
            }
        }
        Err(ExtractError { tried })
    });
    done.as_ref().map(PathBuf::as_path).map_err(Clone::clone)
}

/// The cache root used when the usual one cannot be written: one per user in the temp directory.
fn fallback_root() -> PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    #[cfg(unix)]
    let uid = unsafe { libc::getuid() };
    #[cfg(not(unix))]
    let uid = 0;
    std::env::temp_dir().join(format!("rehearse-cache-{uid}"))
}

/// The shared temp directory is used only when it is a directory of this user's (or not there
/// yet): never one another user made, nor a symbolic link.
pub(crate) fn owned_or_absent(dir: &Path) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    if !meta.is_dir() {
        return Err("not a directory (a symbolic link is not followed)".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: getuid has no preconditions and cannot fail.
        let me = unsafe { libc::getuid() };
        if meta.uid() != me {
            return Err(format!("owned by uid {}, not by this user", meta.uid()));
        }
    }
    Ok(())
}

/// Writes every embedded file under `root` that is missing there or differs.
pub(crate) fn write_tree(root: &Path) -> std::io::Result<()> {
    for f in files() {
        let path = root.join(f.rel);
        if std::fs::read(&path).is_ok_and(|b| b == f.bytes) {
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::util::write_atomic(&path, f.bytes)?;
    }
    Ok(())
}
