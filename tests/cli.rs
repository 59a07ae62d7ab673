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
