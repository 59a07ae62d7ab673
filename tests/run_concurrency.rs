//! The run lock between real `rehearse run` processes: a second run on
//! the same report directory while the first holds the lock exits 3 naming the holder, the
//! first finishes normally, a third run afterwards takes the lock; a run killed with SIGKILL
//! leaves a stale lock the next run takes over.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use rehearse::rundir::lock::{LOCK_FILE, LockHolder};
use tokio::time::Instant;

use crate::support::run::{fixture, repo_root, show};

/// Longest any single process here may take before the test kills it and fails.
const BOUND: Duration = Duration::from_secs(60);

/// A spawned `rehearse run` that is killed if the test panics first.
struct Run(Option<Child>);

impl Run {
    fn spawn(report_dir: &Path, speed: &str) -> Run {
        let child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(["run", "--no-progress", "--speed", speed, "--scenario"])
            .arg(fixture("smoke"))
            .arg("--report-dir")
            .arg(report_dir)
            .current_dir(repo_root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rehearse run");
        Run(Some(child))
    }

    fn id(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    /// Waits (bounded) for the exit and returns the output.
    fn finish(mut self) -> std::process::Output {
        let mut child = self.0.take().expect("running");
        let began = Instant::now();
        while child.try_wait().expect("try_wait").is_none() {
            if began.elapsed() > BOUND {
                let _ = child.kill();
                let out = child.wait_with_output().expect("wait");
                panic!("rehearse run still running after {BOUND:?}\n{}", show(&out));
            }
            thread::sleep(Duration::from_millis(50));
        }
        child.wait_with_output().expect("wait")
    }

    /// SIGKILL: no cleanup at all, as when launchd or the OOM killer ends a run.
    fn kill(mut self) {
        if let Some(mut c) = self.0.take() {
            c.kill().expect("kill");
            c.wait().expect("reap");
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Polls the lock file until it names `pid` (the run holds the lock), bounded.
fn wait_for_holder(report_dir: &Path, pid: u32) -> LockHolder {
    let path = report_dir.join(LOCK_FILE);
    let began = Instant::now();
    loop {
        if let Some(h) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<LockHolder>(t.trim()).ok())
            .filter(|h| h.pid == pid)
        {
            return h;
        }
        assert!(
            began.elapsed() < BOUND,
            "pid {pid} never took the lock in {}",
            report_dir.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// A short run (smoke at speed 16, about 1.3 s), bounded like every run here.
fn run_fast(report_dir: &Path) -> std::process::Output {
    Run::spawn(report_dir, "16").finish()
}

#[test]
fn two_concurrent_runs_the_second_exits_3_naming_the_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let rd = tmp.path().join("reports");
    // smoke at speed 4: about 5 s, long enough to start a second run meanwhile.
    let first = Run::spawn(&rd, "4");
    let holder = wait_for_holder(&rd, first.id());
    assert_eq!(holder.scenarios, vec!["smoke".to_string()]);

    let second = run_fast(&rd);
    assert_eq!(second.status.code(), Some(3), "{}", show(&second));
    let stderr = String::from_utf8_lossy(&second.stderr);
    for part in [
        format!("pid {}", holder.pid),
        format!("on {}", holder.host),
        format!("since {}", holder.since),
        "smoke".to_string(),
    ] {
        assert!(
            stderr.contains(&part),
            "missing `{part}`\n{}",
            show(&second)
        );
    }
    assert!(
        !String::from_utf8_lossy(&second.stdout).contains("report: "),
        "the refused run wrote no report\n{}",
        show(&second)
    );

    let first = first.finish();
    assert!(
        matches!(first.status.code(), Some(0 | 1)),
        "the first run ends normally\n{}",
        show(&first)
    );
    let runs = std::fs::read_dir(&rd)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(runs, 1, "only the first run made a run directory");

    // Released: a third run takes the lock, and it is no stale takeover.
    let third = run_fast(&rd);
    assert!(
        matches!(third.status.code(), Some(0 | 1)),
        "{}",
        show(&third)
    );
    assert!(
        !String::from_utf8_lossy(&third.stderr).contains("took over"),
        "{}",
        show(&third)
    );
}

#[test]
fn a_killed_run_leaves_a_stale_lock_the_next_run_takes_over() {
    let tmp = tempfile::tempdir().unwrap();
    let rd = tmp.path().join("reports");
    let victim = Run::spawn(&rd, "1");
    let pid = victim.id();
    let holder = wait_for_holder(&rd, pid);
    victim.kill();
    // The kernel dropped the flock; the file still names the dead run.
    let left: LockHolder =
        serde_json::from_str(std::fs::read_to_string(rd.join(LOCK_FILE)).unwrap().trim()).unwrap();
    assert_eq!(left, holder);

    let next = run_fast(&rd);
    assert!(matches!(next.status.code(), Some(0 | 1)), "{}", show(&next));
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(
        stderr.contains("took over the stale run lock") && stderr.contains(&format!("pid {pid}")),
        "{}",
        show(&next)
    );
    // A clean release empties the file.
    let after = std::fs::read_to_string(rd.join(LOCK_FILE)).unwrap();
    assert!(
        after.trim().is_empty(),
        "lock file after release: {after:?}"
    );
}
