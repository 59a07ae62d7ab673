//! Run directories: `<report-dir>/<UTC yyyymmddTHHMMSSZ>-<scenario>/` (docs/report.md), never reusing
//! an existing one (a second run in the same second gets a `-2` suffix).
//!
//! `marker`: the ownership marker `.rehearse-run.json` every run directory gets at its start;
//! `lock`: the run lock of a report dir; `started`: the mark a run leaves for its launcher
//! when its clock starts (`rehearse matrix --starts`).

pub mod lock;
pub(crate) mod marker;
pub mod started;

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// `yyyymmddTHHMMSSZ` of a wall-clock time (UTC).
pub(crate) fn stamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// RFC 3339 UTC (`2026-11-29T19:00:00Z`) of a wall-clock time, for `started_at` (a scorecard's).
pub(crate) fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A name safe as a path component: letters, digits, `.`, `_`, `-`; anything else becomes `_`.
pub(crate) fn safe_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match s.trim_matches('.') {
        "" => "scenario".to_string(),
        t => t.to_string(),
    }
}

/// Creates a fresh `<parent>/<stamp>-<name>/` (suffixing `-2`, `-3`, … when taken).
pub(crate) fn create(parent: &Path, name: &str, t: SystemTime) -> io::Result<PathBuf> {
    std::fs::create_dir_all(parent)?;
    let base = format!("{}-{}", stamp(t), safe_name(name));
    for n in 1..1000 {
        let dir = if n == 1 {
            parent.join(&base)
        } else {
            parent.join(format!("{base}-{n}"))
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "no free run directory name for {base} under {}",
            parent.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stamps_are_utc_and_sortable() {
        assert_eq!(stamp(UNIX_EPOCH), "19700101T000000Z");
        // 2026-11-29T19:04:05Z = 1795979045
        let t = UNIX_EPOCH + Duration::from_secs(1_795_979_045);
        assert_eq!(stamp(t), "20261129T190405Z");
        assert_eq!(rfc3339(t), "2026-11-29T19:04:05Z");
        // A leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(stamp(t), "20000229T000000Z");
    }

    #[test]
    fn names_are_sanitised_and_dirs_never_reused() {
        assert_eq!(safe_name("crm-search 503/storm"), "crm-search_503_storm");
        assert_eq!(safe_name(".."), "scenario");
        let dir = tempfile::tempdir().unwrap();
        let a = create(dir.path(), "smoke", UNIX_EPOCH).unwrap();
        let b = create(dir.path(), "smoke", UNIX_EPOCH).unwrap();
        assert!(a.ends_with("19700101T000000Z-smoke"));
        assert!(b.ends_with("19700101T000000Z-smoke-2"));
    }
}
