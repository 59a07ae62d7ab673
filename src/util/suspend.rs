//! Sleep cannot cut a run short unseen (docs/launchd.md, "Sleep"):
//!
//! - [`Awake`]: on macOS a run holds a no-sleep assertion for its duration, `caffeinate -i -s -w
//!   PID` with the run's own pid (it ends with the run, also a killed one); a missing
//!   `caffeinate` is said on stderr and in the report's notes, and the run goes on.
//! - [`slept`]: whether the machine was suspended between two [`Reading`]s of two clocks, one
//!   that counts suspend and one that does not (Linux `CLOCK_BOOTTIME` and `CLOCK_MONOTONIC`;
//!   macOS `CLOCK_MONOTONIC`, which counts sleep there, and `CLOCK_UPTIME_RAW`). Their
//!   difference does not start at zero (the machine may have slept since boot): what counts is
//!   its growth between two readings, a second or more. Pure.
//! - [`Sampler`]: an arm's task reading the clocks every [`SleepWatch::every`] (about a second)
//!   from its `go`; the first gap requests the arm's stop with [`Slept::reason`] and keeps when
//!   the last reading before it was taken, so nothing after it is judged.
//!
//! The readings come through [`Clocks`], the machine's ([`MachineClocks`]) or a test's fake.

use std::ffi::OsStr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use super::shutdown::Shutdown;

/// The least growth of the clocks' difference between two readings that is a sleep.
const THRESHOLD: Duration = Duration::from_secs(1);

/// How often an arm reads the clocks.
const EVERY: Duration = Duration::from_secs(1);

/// One reading of both clocks (and of the wall clock, to say when).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// The clock that counts suspend (Linux `CLOCK_BOOTTIME`, macOS `CLOCK_MONOTONIC`).
    pub counting: Duration,
    /// The clock that does not (Linux `CLOCK_MONOTONIC`, macOS `CLOCK_UPTIME_RAW`).
    pub awake: Duration,
    /// The wall clock at the reading.
    pub wall: SystemTime,
}

/// A suspend seen between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slept {
    /// How long the machine was suspended.
    pub lasted: Duration,
    /// When it went to sleep, on the wall clock (the later reading's wall time less the sleep).
    pub at: SystemTime,
}

impl Slept {
    /// `the machine slept for 42 s at 2026-05-04T03:01:10Z`: the stop reason of the arm.
    pub(crate) fn reason(&self) -> String {
        format!(
            "the machine slept for {} s at {}",
            self.lasted.as_secs_f64().round() as u64,
            humantime::format_rfc3339_seconds(self.at)
        )
    }
}

/// Whether the machine slept between `prev` and `now`: the suspend-counting clock ran ahead of
/// the other by a second or more. Readings out of order (a fake's) are no sleep.
pub(crate) fn slept(prev: Reading, now: Reading) -> Option<Slept> {
    let counting = now.counting.checked_sub(prev.counting)?;
    let awake = now.awake.checked_sub(prev.awake)?;
    let gap = counting.checked_sub(awake)?;
    (gap >= THRESHOLD).then(|| Slept {
        lasted: gap,
        at: now.wall.checked_sub(gap).unwrap_or(now.wall),
    })
}

/// Where readings come from: the machine, or a test's fake.
pub trait Clocks: Send + Sync + std::fmt::Debug {
    /// Both clocks now; `None` when they cannot be read (then nothing is watched).
    fn read(&self) -> Option<Reading>;
}

/// The machine's clocks (Linux and macOS; elsewhere none).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MachineClocks;

#[cfg(any(target_os = "linux", target_os = "android"))]
const CLOCKS: Option<(libc::clockid_t, libc::clockid_t)> =
    Some((libc::CLOCK_BOOTTIME, libc::CLOCK_MONOTONIC));
#[cfg(target_os = "macos")]
const CLOCKS: Option<(libc::clockid_t, libc::clockid_t)> =
    Some((libc::CLOCK_MONOTONIC, libc::CLOCK_UPTIME_RAW));
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
const CLOCKS: Option<(libc::clockid_t, libc::clockid_t)> = None;

fn clock(id: libc::clockid_t) -> Option<Duration> {
    // SAFETY: `timespec` is plain old data; all-zero is a valid value for clock_gettime to fill.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a writable timespec; clock_gettime(2) writes only through it.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return None;
    }
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec).ok()?;
    Some(Duration::new(secs, nanos))
}

impl Clocks for MachineClocks {
    fn read(&self) -> Option<Reading> {
        let (counting, awake) = CLOCKS?;
        Some(Reading {
            counting: clock(counting)?,
            awake: clock(awake)?,
            wall: SystemTime::now(),
        })
    }
}

/// What an arm watches for a sleep with: the clocks and how often they are read.
#[derive(Debug, Clone)]
pub struct SleepWatch {
    /// The readings' source.
    pub clocks: Arc<dyn Clocks>,
    /// Time between two readings (a second unless a test says otherwise).
    pub every: Duration,
}

impl Default for SleepWatch {
    fn default() -> Self {
        Self {
            clocks: Arc::new(MachineClocks),
            every: EVERY,
        }
    }
}

/// The first sleep a [`Sampler`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gap {
    /// The sleep.
    pub slept: Slept,
    /// When the last reading before it was taken (the run's monotonic clock): nothing after it
    /// is judged.
    pub before: Instant,
}

/// An arm's sleep watch: a task reading the clocks until the first gap (or until dropped).
#[derive(Debug)]
pub(crate) struct Sampler {
    task: JoinHandle<()>,
    gap: Arc<OnceLock<Gap>>,
}

impl Sampler {
    /// Starts reading `watch`'s clocks now and every `watch.every`; the first gap is kept and
    /// requests `found` with [`Slept::reason`]. Needs a tokio runtime.
    pub(crate) fn start(watch: &SleepWatch, found: Shutdown) -> Self {
        let gap = Arc::new(OnceLock::new());
        let task = tokio::spawn(sample(
            watch.clocks.clone(),
            watch.every,
            gap.clone(),
            found,
        ));
        Self { task, gap }
    }

    /// The first gap, once seen.
    pub(crate) fn gap(&self) -> Option<Gap> {
        self.gap.get().copied()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn sample(
    clocks: Arc<dyn Clocks>,
    every: Duration,
    gap: Arc<OnceLock<Gap>>,
    found: Shutdown,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut prev: Option<(Instant, Reading)> = None;
    loop {
        tick.tick().await;
        let Some(now) = clocks.read() else {
            return;
        };
        let at = Instant::now();
        if let Some((before, p)) = prev
            && let Some(s) = slept(p, now)
        {
            let _ = gap.set(Gap { slept: s, before });
            found.request(&s.reason());
            return;
        }
        prev = Some((at, now));
    }
}

/// The no-sleep assertion a run holds for its duration (macOS: `caffeinate -i -s -w PID`; no
/// process elsewhere). Dropping it stops the process by its pid.
#[derive(Debug, Default)]
pub(crate) struct Awake {
    child: Option<Child>,
    note: Option<String>,
}

impl Awake {
    /// Holds the assertion for this process (macOS); says on stderr when it cannot.
    pub(crate) fn hold() -> Self {
        #[cfg(target_os = "macos")]
        {
            Self::with(OsStr::new("caffeinate"), std::process::id())
        }
        #[cfg(not(target_os = "macos"))]
        {
            Self::default()
        }
    }

    /// `program -i -s -w pid`: idle and system sleep prevented while `pid` runs.
    #[cfg_attr(
        not(target_os = "macos"),
        allow(dead_code, reason = "macOS only, and its tests on every OS")
    )]
    pub(crate) fn with(program: &OsStr, pid: u32) -> Self {
        let spawned = Command::new(program)
            .args(["-i", "-s", "-w", &pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match spawned {
            Ok(child) => Self {
                child: Some(child),
                note: None,
            },
            Err(e) => {
                let shown = program.to_string_lossy();
                let why = if e.kind() == std::io::ErrorKind::NotFound {
                    format!("`{shown}` not found")
                } else {
                    format!("`{shown}` could not be started: {e}")
                };
                let note = format!(
                    "no no-sleep assertion: {why}; the Mac may sleep during the run (a sleep \
                     is detected and leaves the run incomplete)"
                );
                crate::errln!("warning: {note}");
                Self {
                    child: None,
                    note: Some(note),
                }
            }
        }
    }

    /// The pid of the assertion's process, while held.
    #[cfg(test)]
    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// What the report's notes say when the assertion could not be held.
    pub(crate) fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

impl Drop for Awake {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SIGTERM by its pid, SIGKILL if it is still there after a second; reaped either way.
        super::proc::signal_pid(child.id(), libc::SIGTERM);
        for _ in 0..100 {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    const T0: Duration = Duration::from_secs(1_000);

    fn at(counting_s: f64, awake_s: f64, wall_s: u64) -> Reading {
        Reading {
            // Neither clock starts at zero, nor do they agree: a machine that slept before.
            counting: T0 + Duration::from_secs(500) + Duration::from_secs_f64(counting_s),
            awake: T0 + Duration::from_secs_f64(awake_s),
            wall: SystemTime::UNIX_EPOCH + Duration::from_secs(1_778_000_000 + wall_s),
        }
    }

    #[test]
    fn a_gap_of_a_second_or_more_is_a_sleep_and_says_when() {
        assert_eq!(slept(at(0.0, 0.0, 0), at(1.0, 1.0, 1)), None, "awake");
        assert_eq!(
            slept(at(0.0, 0.0, 0), at(1.9, 1.0, 1)),
            None,
            "0.9 s of drift is no sleep"
        );
        let s = slept(at(10.0, 10.0, 10), at(53.0, 11.0, 53)).expect("42 s asleep");
        assert_eq!(s.lasted, Duration::from_secs(42));
        assert_eq!(
            s.at,
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_778_000_011)
        );
        assert_eq!(
            s.reason(),
            "the machine slept for 42 s at 2026-05-05T16:53:31Z"
        );
        assert!(
            slept(at(0.0, 0.0, 0), at(2.0, 1.0, 2)).is_some(),
            "exactly 1 s"
        );
        // Out of order: no sleep, no panic.
        assert_eq!(slept(at(5.0, 5.0, 5), at(1.0, 1.0, 1)), None);
        assert_eq!(slept(at(0.0, 5.0, 5), at(1.0, 9.0, 9)), None);
    }

    /// Readings one second apart, awake; `jump` seconds of sleep before the `at`-th reading.
    #[derive(Debug)]
    struct Jumps {
        reads: Mutex<u32>,
        at: u32,
        jump: f64,
    }

    impl Clocks for Jumps {
        fn read(&self) -> Option<Reading> {
            let mut n = self.reads.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            let awake = f64::from(*n);
            let slept = if *n >= self.at { self.jump } else { 0.0 };
            Some(at(awake + slept, awake, (awake + slept) as u64))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_sampler_requests_the_stop_at_the_first_gap_and_keeps_the_reading_before() {
        let found = Shutdown::new();
        let watch = SleepWatch {
            clocks: Arc::new(Jumps {
                reads: Mutex::new(0),
                at: 4,
                jump: 42.0,
            }),
            every: EVERY,
        };
        let t0 = Instant::now();
        let sampler = Sampler::start(&watch, found.clone());
        found.requested().await;
        assert_eq!(
            t0.elapsed(),
            Duration::from_secs(3),
            "the 4th reading, at 3 s"
        );
        let gap = sampler.gap().expect("kept");
        assert_eq!(gap.before - t0, Duration::from_secs(2), "the 3rd reading");
        assert_eq!(gap.slept.lasted, Duration::from_secs(42));
        assert_eq!(found.reason(), Some(gap.slept.reason()));
    }

    #[tokio::test(start_paused = true)]
    async fn an_awake_machine_is_never_a_sleep() {
        let found = Shutdown::new();
        let watch = SleepWatch {
            clocks: Arc::new(Jumps {
                reads: Mutex::new(0),
                at: u32::MAX,
                jump: 0.0,
            }),
            every: EVERY,
        };
        let sampler = Sampler::start(&watch, found.clone());
        let waited = tokio::time::timeout(Duration::from_secs(600), found.requested()).await;
        assert!(waited.is_err(), "{:?}", found.reason());
        assert_eq!(sampler.gap(), None);
    }

    #[test]
    fn the_machine_clocks_read_where_the_os_has_both() {
        let (Some(a), Some(b)) = (MachineClocks.read(), MachineClocks.read()) else {
            assert!(CLOCKS.is_none(), "Linux and macOS have both clocks");
            return;
        };
        assert!(
            b.counting >= a.counting && b.awake >= a.awake,
            "{a:?} {b:?}"
        );
        assert_eq!(slept(a, b), None, "no sleep between two reads");
    }

    #[test]
    fn a_missing_assertion_program_is_a_note_and_a_present_one_is_stopped_by_pid() {
        let missing = Awake::with(
            OsStr::new("rehearse-no-such-caffeinate"),
            std::process::id(),
        );
        assert_eq!(missing.pid(), None);
        let note = missing.note().unwrap_or_default();
        assert!(
            note.contains("`rehearse-no-such-caffeinate` not found"),
            "{note}"
        );

        // A stand-in that waits like caffeinate does: the arguments it was given, then sleep.
        let dir = tempfile::tempdir().unwrap();
        let args = dir.path().join("args");
        let prog = dir.path().join("caffeinate");
        std::fs::write(
            &prog,
            format!(
                "#!/bin/sh\necho \"$@\" > {}\nexec sleep 600\n",
                args.display()
            ),
        )
        .unwrap();
        let mut perms = std::fs::metadata(&prog).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&prog, perms).unwrap();
        let held = Awake::with(prog.as_os_str(), 4242);
        assert_eq!(held.note(), None);
        let pid = held.pid().expect("running");
        assert!(super::super::proc::pid_alive(pid));
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read_to_string(&args)
            .unwrap_or_default()
            .is_empty()
        {
            assert!(Instant::now() < deadline, "the stand-in never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(std::fs::read_to_string(&args).unwrap(), "-i -s -w 4242\n");
        drop(held);
        assert!(!super::super::proc::pid_alive(pid), "stopped and reaped");
    }
}
