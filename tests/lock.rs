//! The run lock: a second run is refused naming the holder; stale locks are taken
//! over.

use std::process::{Child, Command, Stdio};

use rehearse::rundir::lock::{LOCK_FILE, LockError, LockHolder, RunLock};

fn scen(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| s.to_string()).collect()
}

/// A pid that surely existed and is gone: a reaped child.
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().expect("spawn true");
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn second_holder_gets_held_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let first = RunLock::acquire_for(dir.path(), &scen(&["weekly"])).unwrap();
    assert!(first.took_over().is_none());
    let err = RunLock::acquire_for(dir.path(), &scen(&["smoke"])).unwrap_err();
    match &err {
        LockError::Held {
            pid,
            scenarios,
            host,
            since,
            path,
        } => {
            assert_eq!(*pid, std::process::id());
            assert_eq!(scenarios, &scen(&["weekly"]));
            assert_eq!(host, &first.holder().host);
            assert_eq!(since, &first.holder().since);
            assert_eq!(path, &dir.path().join(LOCK_FILE));
        }
        other => panic!("expected Held, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("pid {}", std::process::id())),
        "{msg}"
    );
    assert!(msg.contains("weekly"), "{msg}");
    drop(first);
    // A clean release is not reported as a stale takeover.
    let again = RunLock::acquire(dir.path()).unwrap();
    assert!(again.took_over().is_none());
}

#[test]
fn unlocked_file_left_by_a_killed_run_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let stale = LockHolder {
        pid: dead_pid(),
        since: "2026-11-23T03:00:00Z".into(),
        host: "mac-mini".into(),
        scenarios: scen(&["weekly"]),
    };
    std::fs::write(
        dir.path().join(LOCK_FILE),
        serde_json::to_string(&stale).unwrap(),
    )
    .unwrap();
    let lock = RunLock::acquire_for(dir.path(), &scen(&["smoke"])).unwrap();
    assert_eq!(lock.took_over(), Some(&stale));
    let on_disk: LockHolder =
        serde_json::from_str(&std::fs::read_to_string(lock.path()).unwrap()).unwrap();
    assert_eq!(on_disk, *lock.holder());
}

#[test]
fn lock_still_held_by_a_dead_pid_on_this_host_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LOCK_FILE);
    // A descriptor that leaked the lock: locked here, but naming a dead process.
    let leaked = std::fs::File::create(&path).unwrap();
    leaked.try_lock().unwrap();
    let stale = LockHolder {
        pid: dead_pid(),
        since: "2026-11-23T03:00:00Z".into(),
        host: rehearse::host::hostname().unwrap(),
        scenarios: scen(&["weekly"]),
    };
    std::fs::write(&path, serde_json::to_string(&stale).unwrap()).unwrap();
    let lock = RunLock::acquire(dir.path()).unwrap();
    assert_eq!(
        lock.took_over(),
        None,
        "a fresh file replaced the leaked one"
    );
    assert_eq!(lock.holder().pid, std::process::id());
    // The live process on another host is never taken over.
    let other = tempfile::tempdir().unwrap();
    let p2 = other.path().join(LOCK_FILE);
    let f2 = std::fs::File::create(&p2).unwrap();
    f2.try_lock().unwrap();
    let remote = LockHolder {
        host: "some-other-host".into(),
        ..stale
    };
    std::fs::write(&p2, serde_json::to_string(&remote).unwrap()).unwrap();
    assert!(matches!(
        RunLock::acquire(other.path()),
        Err(LockError::Held { host, .. }) if host == "some-other-host"
    ));
    drop(leaked);
}

/// A separate process holding the lock with `flock` (python3), writing holder JSON.
fn python_holder(dir: &std::path::Path) -> Child {
    let script = r#"
import fcntl, json, os, sys, time
f = open(sys.argv[1], "a+")
fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
f.truncate(0)
f.write(json.dumps({"pid": os.getpid(), "since": "2026-11-29T03:00:00Z", "host": sys.argv[2], "scenarios": ["weekly"]}))
f.flush()
print("locked", flush=True)
time.sleep(60)
"#;
    let host = rehearse::host::hostname().unwrap();
    let mut child = match Command::new("python3")
        .args(["-c", script])
        .arg(dir.join(LOCK_FILE))
        .arg(host)
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!(
            "this test needs python3 (an independent process holding the lock): {e}; \
             `.ci/test` installs it with apt-get"
        ),
    };
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked");
    child
}

#[test]
fn another_process_holding_the_lock_is_named_then_its_kill_frees_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path()).unwrap();
    let mut child = python_holder(dir.path());
    let err = RunLock::acquire(dir.path()).unwrap_err();
    match err {
        LockError::Held { pid, scenarios, .. } => {
            assert_eq!(pid, child.id());
            assert_eq!(scenarios, scen(&["weekly"]));
        }
        other => panic!("expected Held, got {other:?}"),
    }
    child.kill().unwrap(); // SIGKILL: no cleanup, the kernel drops the flock
    child.wait().unwrap();
    let lock = RunLock::acquire(dir.path()).unwrap();
    assert_eq!(lock.took_over().map(|h| h.pid), Some(child.id()));
}
