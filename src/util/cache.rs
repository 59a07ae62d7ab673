//! The cache directory the binary and `scripts/install-*.sh` share: `$REHEARSE_CACHE`, else
//! `${XDG_CACHE_HOME:-$HOME/.cache}/rehearse`. It holds the extracted built-in scenarios
//! (`builtin-VERSION-HASH/`), the OpenClaw installs (`openclaw-VERSION/`) and the OpenAI SDK's
//! venv (`openai-python-VERSION/`).

use std::ffi::OsString;
use std::path::PathBuf;

/// The cache root of this process's environment, `None` when none of the variables is set.
pub(crate) fn root() -> Option<PathBuf> {
    root_from(
        std::env::var_os("REHEARSE_CACHE"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`root`] with the environment passed in: `$REHEARSE_CACHE`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/rehearse` (empty values count as unset).
pub(crate) fn root_from(
    rehearse_cache: Option<OsString>,
    xdg: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    set(rehearse_cache).or_else(|| {
        set(xdg)
            .or_else(|| set(home).map(|h| h.join(".cache")))
            .map(|c| c.join("rehearse"))
    })
}

/// What to say when there is no cache root.
pub(crate) const NO_ROOT: &str =
    "no cache directory: set REHEARSE_CACHE (or HOME, for ~/.cache/rehearse)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_set_variable_wins() {
        let s = |v: &str| Some(OsString::from(v));
        assert_eq!(
            root_from(s("/c"), s("/x"), s("/h")),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            root_from(s(""), s("/x"), s("/h")),
            Some(PathBuf::from("/x/rehearse"))
        );
        assert_eq!(
            root_from(None, None, s("/h")),
            Some(PathBuf::from("/h/.cache/rehearse"))
        );
        assert_eq!(root_from(None, s(""), s("")), None);
    }
}
