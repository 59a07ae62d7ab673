//! The agent of an older release: earlier versions labelled it `ai.openclaw.rehearse.NAME`, a domain
//! that is not ours. `schedule install` of `dev.rehearse.NAME` replaces it — boots it out and
//! removes its plist — so the job never runs twice a week.

use std::path::{Path, PathBuf};

use crate::cli::{LABEL_PREFIX, OLD_LABEL_PREFIX};

/// The old label a new one replaces: `dev.rehearse.NAME` → `ai.openclaw.rehearse.NAME`; none for
/// a label outside `dev.rehearse.`.
pub(crate) fn old_label(label: &str) -> Option<String> {
    let name = label.strip_prefix(LABEL_PREFIX)?;
    (!name.is_empty()).then(|| format!("{OLD_LABEL_PREFIX}{name}"))
}

/// What replacing the old agent did, one line each.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Replaced {
    /// Lines for stdout.
    pub lines: Vec<String>,
    /// A plist that could not be removed (the error).
    pub error: Option<String>,
}

/// Replaces the agent of `old` whose plist would be in `dir`: `bootout` (a closure so the caller
/// decides whether launchctl is called: `None` with `--no-load`) says whether one was loaded.
pub(crate) fn replace(
    old: &str,
    dir: &Path,
    bootout: Option<&dyn Fn(&str) -> bool>,
) -> Replaced {
    let mut out = Replaced::default();
    let plist: PathBuf = dir.join(format!("{old}.plist"));
    if let Some(bootout) = bootout
        && bootout(old)
    {
        out.lines
            .push(format!("replaced the old agent {old}: unloaded"));
    }
    match std::fs::remove_file(&plist) {
        Ok(()) => out.lines.push(format!(
            "replaced the old agent {old}: removed {}",
            plist.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => out.error = Some(format!("removing {}: {e}", plist.display())),
    }
    if bootout.is_none() && !out.lines.is_empty() {
        out.lines.push(format!(
            "(--no-load: if {old} is loaded, unload it with `launchctl bootout gui/$(id -u)/{old}`)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_old_label_of_ours_and_none_for_a_foreign_one() {
        assert_eq!(
            old_label("dev.rehearse.weekly").as_deref(),
            Some("ai.openclaw.rehearse.weekly")
        );
        assert_eq!(old_label("com.example.weekly"), None);
        assert_eq!(old_label("dev.rehearse."), None);
    }

    #[test]
    fn replacing_boots_out_and_removes_the_old_plist_only() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("ai.openclaw.rehearse.weekly.plist");
        let other = dir.path().join("ai.openclaw.rehearse.daily.plist");
        std::fs::write(&old, "x").unwrap();
        std::fs::write(&other, "x").unwrap();
        let seen = std::cell::RefCell::new(Vec::new());
        let bootout = |l: &str| {
            seen.borrow_mut().push(l.to_string());
            true
        };
        let r = replace("ai.openclaw.rehearse.weekly", dir.path(), Some(&bootout));
        assert_eq!(*seen.borrow(), ["ai.openclaw.rehearse.weekly"]);
        assert_eq!(r.lines.len(), 2, "{r:?}");
        assert!(!old.exists() && other.exists());
        // Nothing there: nothing said.
        let r = replace("ai.openclaw.rehearse.weekly", dir.path(), Some(&|_: &str| false));
        assert_eq!(r, Replaced::default());
    }
}
