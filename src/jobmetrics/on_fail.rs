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

/// Runs `cmd` for the report at `report`; `Err` says why it did not succeed.
pub(crate) async fn run(
    cmd: &str,
    report: &Path,
    scenario: &str,
    verdict: Verdict,
    timeout: Duration,
) -> Result<(), String> {
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
        .map_err(|e| format!("--on-fail: starting /bin/sh: {e}"))?;
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(st)) if st.success() => Ok(()),
        Ok(Ok(st)) => Err(format!("--on-fail command exited with {st}")),
        Ok(Err(e)) => Err(format!("--on-fail command: {e}")),
        Err(_) => {
            let _ = child.kill().await;
            Err(format!(
                "--on-fail command killed after {} s",
                timeout.as_secs()
            ))
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
            .unwrap_err();
        assert!(e.contains("exit status: 7"), "{e}");
        let e = run("sleep 5", report, "w", Verdict::Error, Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(e.contains("killed after"), "{e}");
        assert!(wanted(Verdict::Incomplete) && !wanted(Verdict::Pass));
    }
}
