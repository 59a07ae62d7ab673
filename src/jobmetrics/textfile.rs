//! `--textfile-dir DIR`: `DIR/rehearse.prom` for node_exporter's textfile collector, one file for
//! every scenario. A run reads the file, keeps the other scenarios' series, replaces its own and
//! writes it back atomically (temp file + rename: node_exporter never reads half a file; the
//! temp file's name does not end in `.prom`, so the collector ignores it). Runs with different
//! report directories may share DIR: the read-modify-write holds an advisory lock on
//! `DIR/.rehearse.prom.lock`.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use super::series::{self, Outcome};

/// The file name inside `--textfile-dir`.
const TEXTFILE: &str = "rehearse.prom";
const LOCK: &str = ".rehearse.prom.lock";

/// Why the textfile was not written (a warning, never a verdict).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TextfileError {
    /// An I/O error on `path`.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// What reading the existing textfile gave: the last success to carry forward, the other
/// scenarios' samples, and a note when the file could not be used.
#[derive(Debug, Default)]
pub(crate) struct Previous {
    /// This scenario's last success in the file.
    pub last_success: Option<f64>,
    /// The other scenarios' samples.
    pub others: Vec<crate::scrape::Sample>,
    /// Why the old file was not kept (it did not parse): its other series are lost.
    pub note: Option<String>,
}

/// Reads `dir/rehearse.prom` (absent: nothing before).
pub(crate) fn read_previous(dir: &Path, scenario: &str) -> Previous {
    let path = dir.join(TEXTFILE);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Previous::default();
    };
    match crate::scrape::parse(&text) {
        Ok(e) => Previous {
            last_success: series::last_success_in(&e, scenario),
            others: series::others(&e, scenario),
            note: None,
        },
        Err(e) => Previous {
            note: Some(format!(
                "{}:{}:{}: {} (rewritten with this run's series only)",
                path.display(),
                e.line,
                e.col,
                e.msg
            )),
            ..Previous::default()
        },
    }
}

/// Rewrites `dir/rehearse.prom` with `outcome`'s series; `pushed_success` is a last success
/// the Pushgateway knew of (the larger of the two is carried forward). Returns the path and a
/// note when the old file was not kept.
pub(crate) fn write(
    dir: &Path,
    outcome: &Outcome,
    pushed_success: Option<f64>,
) -> Result<(PathBuf, Option<String>), TextfileError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TextfileError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let lock_path = dir.join(LOCK);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(&lock_path))?;
    lock.lock().map_err(io(&lock_path))?;
    let prev = read_previous(dir, &outcome.scenario);
    let carried = [prev.last_success, pushed_success]
        .into_iter()
        .flatten()
        .reduce(f64::max);
    let mut samples = prev.others;
    samples.extend(outcome.samples(carried, true));
    let path = dir.join(TEXTFILE);
    crate::util::write_atomic(&path, series::render(&samples).as_bytes()).map_err(io(&path))?;
    let _ = lock.unlock();
    Ok((path, prev.note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Verdict;

    fn outcome(scenario: &str, verdict: Verdict, ended: f64) -> Outcome {
        Outcome {
            scenario: scenario.into(),
            verdict,
            ended_unix_s: ended,
            duration_s: 1.0,
            pass: 1,
            fail: 0,
            not_reached: 0,
            no_baseline: 0,
        }
    }

    #[test]
    fn each_run_rewrites_its_own_series_and_keeps_the_others() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &outcome("weekly", Verdict::Pass, 100.0), None).unwrap();
        write(dir.path(), &outcome("smoke", Verdict::Pass, 150.0), None).unwrap();
        write(dir.path(), &outcome("weekly", Verdict::Fail, 200.0), None).unwrap();
        let p = read_previous(dir.path(), "weekly");
        assert_eq!(p.last_success, Some(100.0), "a failure carries it forward");
        assert_eq!(read_previous(dir.path(), "smoke").last_success, Some(150.0));
        let text = std::fs::read_to_string(dir.path().join(TEXTFILE)).unwrap();
        assert!(text.contains("rehearse_last_run_timestamp_seconds{scenario=\"weekly\"} 200\n"));
        assert!(text.contains("rehearse_last_run_timestamp_seconds{scenario=\"smoke\"} 150\n"));
        // A newer success the Pushgateway knew of wins over the file's.
        write(dir.path(), &outcome("weekly", Verdict::Fail, 300.0), Some(250.0)).unwrap();
        assert_eq!(read_previous(dir.path(), "weekly").last_success, Some(250.0));
        // Only the file and its lock: no temp file left.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [LOCK, TEXTFILE]);
    }

    #[test]
    fn a_broken_textfile_is_replaced_with_a_note_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(TEXTFILE), "ok 1\nbroken{ 2\n").unwrap();
        let (_, note) = write(dir.path(), &outcome("weekly", Verdict::Pass, 1.0), None).unwrap();
        let note = note.unwrap();
        assert!(note.contains("rehearse.prom:2:"), "{note}");
        crate::scrape::parse(&std::fs::read_to_string(dir.path().join(TEXTFILE)).unwrap())
            .unwrap();
    }
}
