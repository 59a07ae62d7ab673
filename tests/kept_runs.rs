//! The real-time suites' run directories (`support::run::kept_on_failure`): a failing test's
//! directory is kept with its report printed, a passing test's is removed.

use crate::support::run::{kept_on_failure, repo_root};

fn kept_dirs(prefix: &str) -> Vec<std::path::PathBuf> {
    let root = repo_root().join("target").join("kept-runs");
    std::fs::read_dir(&root)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(prefix))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_failing_tests_run_directory_is_kept_and_a_passing_ones_removed() {
    let name = format!("kept-runs-selftest-{}", std::process::id());
    let passing = kept_on_failure(&name);
    let passing_path = passing.path().to_path_buf();
    drop(passing);
    assert!(
        !passing_path.exists(),
        "a passing test's directory is removed"
    );
    assert!(kept_dirs(&name).is_empty());

    let n = name.clone();
    let failed = std::thread::spawn(move || {
        let dir = kept_on_failure(&n);
        let run = dir.path().join("reports").join("20261205T000000Z-x");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("report.md"), "# the evidence\n").unwrap();
        panic!("a timing assertion failed");
    })
    .join();
    assert!(failed.is_err(), "the thread panicked");
    let kept = kept_dirs(&name);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let md = kept[0].join("reports/20261205T000000Z-x/report.md");
    assert_eq!(std::fs::read_to_string(&md).unwrap(), "# the evidence\n");
    std::fs::remove_dir_all(&kept[0]).unwrap();
}
