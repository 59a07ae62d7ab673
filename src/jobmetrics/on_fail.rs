//! `--on-fail CMD`: when a run fails or errors (verdict fail, incomplete or error), CMD runs
//! through `/bin/sh -c` with the report's path as `$1` and in `REHEARSE_REPORT`, the verdict in
//! `REHEARSE_VERDICT` and the scenario in `REHEARSE_SCENARIO`; its output goes to the run's
//! stderr. It gets [`TIMEOUT`]; a command that fails, cannot start or overruns is a warning.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::report::model::Verdict;

/// Longest the command may run before it is killed.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(120);

/// Whether a verdict calls the command.
pub(crate) fn wanted(verdict: Verdict) -> bool {
    verdict != Verdict::Pass
}

/// Why the `--on-fail` command did not succeed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OnFailError {
    /// `/bin/sh` could not be started.
    #[error("--on-fail: starting /bin/sh")]
    Start(#[source] std::io::Error),
    /// The command exited unsuccessfully.
    #[error("--on-fail command exited with {0}")]
    Exited(std::process::ExitStatus),
    /// Waiting for it failed.
    #[error("--on-fail command")]
    Wait(#[source] std::io::Error),
    /// It ran past its time and was killed.
    #[error("--on-fail command killed after {0} s")]
    Killed(u64),
}

/// Runs `cmd` for the report at `report`; `Err` says why it did not succeed.
pub(crate) async fn run(
    cmd: &str,
    report: &Path,
    scenario: &str,
    verdict: Verdict,
    timeout: Duration,
) -> Result<(), OnFailError> {
    let mut child = tokio::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .arg("rehearse-on-fail")
        .arg(report)
        .env("REHEARSE_REPORT", report)
        .env("REHEARSE_VERDICT", verdict.as_str())
        .env("REHEARSE_SCENARIO", scenario)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(OnFailError::Start)?;
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(st)) if st.success() => Ok(()),
        Ok(Ok(st)) => Err(OnFailError::Exited(st)),
        Ok(Err(e)) => Err(OnFailError::Wait(e)),
        Err(_) => {
            let _ = child.kill().await;
            Err(OnFailError::Killed(timeout.as_secs()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_command_gets_the_report_path_and_its_failure_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let cmd = format!(
            "printf '%s %s %s %s' \"$1\" \"$REHEARSE_REPORT\" \"$REHEARSE_VERDICT\" \"$REHEARSE_SCENARIO\" > '{}'",
            out.display()
        );
        let report = Path::new("/r/report.md");
        run(&cmd, report, "weekly", Verdict::Fail, TIMEOUT).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "/r/report.md /r/report.md fail weekly"
        );
        let e = run("exit 7", report, "w", Verdict::Error, TIMEOUT)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("exit status: 7"), "{e}");
        let e = run("sleep 5", report, "w", Verdict::Error, Duration::from_millis(100))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("killed after"), "{e}");
        assert!(wanted(Verdict::Incomplete) && !wanted(Verdict::Pass));
    }
}
