//! The gateway's process tree as the supervisor sees and stops it: descendants from `ps`
//! (Linux and macOS), processes remembered with their start time ([`SeenProcess`]) so a pid the
//! system has since reused is never signalled, zombies counted as gone, and `kill(2)` on a
//! process or a process group.

use std::process::Command;

pub(crate) use crate::util::proc::{signal_group, signal_pid};

/// Every descendant of `root` (not `root` itself), from `ps` (Linux and macOS).
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    let Ok(out) = Command::new("ps").args(["-A", "-o", "pid=,ppid="]).output() else {
        return Vec::new();
    };
    let pairs: Vec<(u32, u32)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<u32>().ok());
            Some((it.next()??, it.next()??))
        })
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (pid, ppid) in &pairs {
            if *ppid == p && !found.contains(pid) && *pid != root {
                found.push(*pid);
                frontier.push(*pid);
            }
        }
    }
    found
}

/// One process as seen at one moment: its pid and its start time, so a pid the system has
/// since handed to another process is never taken for it (or signalled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenProcess {
    /// The pid.
    pub pid: u32,
    start: Option<String>,
}

impl SeenProcess {
    /// `pid` as it is now (`None` if it does not run).
    pub(crate) fn now(pid: u32) -> Option<Self> {
        let start = start_time(pid);
        (start.is_some() && pid_alive(pid)).then_some(Self { pid, start })
    }

    /// Whether this very process still runs (same pid, same start, not a zombie).
    pub fn alive(&self) -> bool {
        pid_alive(self.pid) && start_time(self.pid) == self.start
    }

    /// SIGKILL, if it is still this process.
    pub(crate) fn kill(&self) {
        if self.alive() {
            signal_pid(self.pid, libc::SIGKILL);
        }
    }
}

/// A process's start time: `/proc/PID/stat` field 22 (clock ticks since boot) on Linux,
/// `ps -o lstart=` elsewhere.
#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after `(COMM)`: state is field 3, so starttime (22) is the 20th after it.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19).map(str::to_string)
}

#[cfg(not(target_os = "linux"))]
fn start_time(pid: u32) -> Option<String> {
    let out = Command::new("ps")
        .args(["-o", "lstart=", "-p", &pid.to_string()])
        .output()
        .ok()?;
    let t = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// Whether a process is still running (a zombie — dead, not yet reaped by whoever inherited
/// it — does not count).
pub(crate) fn pid_alive(pid: u32) -> bool {
    signal_pid(pid, 0) && !zombie(pid)
}

#[cfg(target_os = "linux")]
fn zombie(pid: u32) -> bool {
    // `/proc/PID/stat`: `PID (COMM) STATE …`; COMM may hold spaces and parentheses.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[cfg(not(target_os = "linux"))]
fn zombie(pid: u32) -> bool {
    Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim_start()
                .starts_with('Z')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_of_a_shell_include_its_children() {
        let mut child = Command::new("/bin/sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut found = Vec::new();
        for _ in 0..50 {
            found = descendants(pid);
            if found.len() >= 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(found.len() >= 2, "{found:?}");
        let seen: Vec<SeenProcess> = found.iter().filter_map(|p| SeenProcess::now(*p)).collect();
        assert!(seen.iter().all(SeenProcess::alive));
        for p in &seen {
            p.kill();
        }
        let _ = child.kill();
        let _ = child.wait();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(seen.iter().all(|p| !p.alive()), "{seen:?}");
    }
}
