//! The exit-code contract of the command line.

use crate::support::rehearse;

#[test]
fn no_command_is_bad_usage_exit_2() {
    let out = rehearse(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scenario"));
}

#[test]
fn unknown_flag_is_bad_usage_exit_2() {
    let out = rehearse(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--speed` is validated once, by its value parser, with the bounds `--help` states (issue 12
/// item 7): `1e-20` used to panic dividing durations, `1e9` ran with every expected time 0.000s.
#[test]
fn speed_outside_its_bounds_is_exit_2_naming_them_and_nothing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    for speed in [
        "1e-20", "0.009", "0", "-1", "100.5", "1e9", "NaN", "inf", "fast",
    ] {
        let flag = format!("--speed={speed}");
        let out = rehearse(&["--scenario", "smoke", &flag, "--report-dir", dir]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--speed {speed}: {err}");
        assert!(
            err.contains("0.01 to 100") && err.contains(&format!("`{speed}`")),
            "--speed {speed}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        let out = rehearse(&[
            "replay",
            "--traffic",
            "x.jsonl",
            "--target",
            "http://127.0.0.1:9",
            &flag,
        ]);
        assert_eq!(out.status.code(), Some(2), "replay --speed {speed}");
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "a run dir was made"
    );
    let help = String::from_utf8_lossy(&rehearse(&["run", "--help"]).stdout).into_owned();
    assert!(help.contains("0.01 to 100"), "{help}");
}
