//! OS settings of the pacer thread of `rehearse replay` (see [`super::precise`]): what lets it
//! keep its instants on a machine whose cores are busy with other work.
//!
//! - **Timer slack 1 µs** (Linux `PR_SET_TIMERSLACK`): its naps end when asked, not up to 50 µs
//!   later.
//! - **A short scheduler slice** (Linux ≥ 6.12, EEVDF's custom slice: `sched_setattr` with
//!   `sched_runtime` = [`SLICE`] on this thread, nice kept): a waking task with a shorter slice
//!   than the running one preempts it at once, where the default slice (a few ms) would let
//!   the running task finish it first — a late send of up to one slice. Any user may ask for
//!   it; older kernels refuse or ignore it.
//! - **Higher scheduling priority**: on Linux nice −10 for this thread only
//!   (`setpriority(PRIO_PROCESS, tid)`; needs `CAP_SYS_NICE` or an `RLIMIT_NICE` that allows
//!   it, so as an ordinary user it usually stays unchanged); on macOS the
//!   `QOS_CLASS_USER_INTERACTIVE` class, which any process may ask for. A sleeping thread with
//!   a higher weight is run sooner when it wakes while other runnable threads share the cores.
//!   The thread's CPU use stays bounded by the spin window (at most a quarter of each gap).
//!
//! Whatever was or was not granted is reported in the replay summary, so figures measured
//! without the priority say so.

/// The nice value asked for on Linux.
#[cfg(target_os = "linux")]
const NICE: i32 = -10;
/// The scheduler slice asked for on Linux (the kernel's lower bound).
#[cfg(target_os = "linux")]
const SLICE: std::time::Duration = std::time::Duration::from_micros(100);

/// What the pacer thread got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PacerThread {
    /// Whether the timer slack was lowered.
    pub fine_timer_slack: bool,
    /// Whether the short scheduler slice was granted.
    pub short_slice: bool,
    /// `Ok(what)` when the priority was raised, `Err(why not)` otherwise.
    pub priority: Result<String, String>,
}

impl PacerThread {
    /// One line for the replay summary.
    pub(crate) fn describe(&self) -> String {
        let slack = match (self.fine_timer_slack, self.short_slice) {
            (true, true) => "timer slack 1 µs, slice 0.1 ms",
            (true, false) => "timer slack 1 µs",
            (false, true) => "default timer slack, slice 0.1 ms",
            (false, false) => "default timer slack",
        };
        match &self.priority {
            Ok(p) => format!("{slack}, priority raised ({p})"),
            Err(why) => format!("{slack}, priority unchanged ({why})"),
        }
    }
}

/// Applies the settings to the calling thread and reports what was granted.
pub(crate) fn tune_current_thread() -> PacerThread {
    // The priority first: the slice is asked for with the nice value the thread then has.
    let priority = raise_priority();
    PacerThread {
        fine_timer_slack: fine_timer_slack(),
        short_slice: short_slice(),
        priority,
    }
}

/// Asks for the short scheduler slice on the calling thread; whether it was granted.
#[cfg(target_os = "linux")]
fn short_slice() -> bool {
    /// `struct sched_attr`, `SCHED_ATTR_SIZE_VER1` (linux/sched/types.h).
    #[repr(C)]
    struct SchedAttr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        runtime: u64,
        deadline: u64,
        period: u64,
        util_min: u32,
        util_max: u32,
    }
    // SAFETY: gettid has no preconditions; getpriority reads this thread's nice (errno reset
    // first, as man 2 getpriority says, since -1 is a valid nice); sched_setattr reads a fully
    // initialised `sched_attr` of the size it is told and changes only this thread (pid = tid).
    unsafe {
        let tid = libc::gettid();
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t);
        if nice == -1 && *libc::__errno_location() != 0 {
            return false;
        }
        let attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: libc::SCHED_OTHER as u32,
            flags: 0,
            nice,
            priority: 0,
            runtime: SLICE.as_nanos() as u64,
            deadline: 0,
            period: 0,
            util_min: 0,
            util_max: 0,
        };
        libc::syscall(libc::SYS_sched_setattr, tid, &attr as *const SchedAttr, 0u32) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn short_slice() -> bool {
    false
}

#[cfg(target_os = "linux")]
fn fine_timer_slack() -> bool {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and only affects this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn fine_timer_slack() -> bool {
    false
}

#[cfg(target_os = "linux")]
fn raise_priority() -> Result<String, String> {
    // SAFETY: gettid has no preconditions; setpriority on PRIO_PROCESS with a thread id changes
    // only that thread's nice value.
    let rc = unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICE)
    };
    if rc == 0 {
        Ok(format!("nice {NICE}"))
    } else {
        let e = std::io::Error::last_os_error();
        Err(format!(
            "nice {NICE} refused: {e}; needs CAP_SYS_NICE or RLIMIT_NICE"
        ))
    }
}

#[cfg(target_os = "macos")]
fn raise_priority() -> Result<String, String> {
    // SAFETY: sets the calling thread's QoS class; no pointers involved.
    let rc = unsafe {
        libc::pthread_set_qos_class_self_np(libc::qos_class_t::QOS_CLASS_USER_INTERACTIVE, 0)
    };
    if rc == 0 {
        Ok("QoS user-interactive".into())
    } else {
        Err(format!(
            "QoS user-interactive refused: {}",
            std::io::Error::from_raw_os_error(rc)
        ))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn raise_priority() -> Result<String, String> {
    Err("not supported on this OS".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_says_what_was_and_was_not_granted() {
        let granted = PacerThread {
            fine_timer_slack: true,
            short_slice: false,
            priority: Ok("nice -10".into()),
        };
        assert_eq!(
            granted.describe(),
            "timer slack 1 µs, priority raised (nice -10)"
        );
        let refused = PacerThread {
            fine_timer_slack: false,
            short_slice: false,
            priority: Err("EPERM".into()),
        };
        assert_eq!(
            refused.describe(),
            "default timer slack, priority unchanged (EPERM)"
        );
    }

    /// On a thread of its own: when granted, the kernel reads back a slice of [`SLICE`]
    /// (`sched_getattr`'s `sched_runtime` of a fair task, Linux ≥ 6.12), and the nice value is
    /// the one the thread had; the caller's thread keeps the default slice.
    #[cfg(target_os = "linux")]
    #[test]
    fn linux_short_slice_is_read_back_from_the_thread() {
        fn slice_and_nice() -> Option<(u64, i32)> {
            let mut attr = [0u8; 56];
            // SAFETY: sched_getattr writes at most `size` (56) bytes into the buffer.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_sched_getattr,
                    libc::gettid(),
                    attr.as_mut_ptr(),
                    56u32,
                    0u32,
                )
            };
            (rc == 0).then(|| {
                let nice = i32::from_ne_bytes(attr[16..20].try_into().unwrap());
                let runtime = u64::from_ne_bytes(attr[24..32].try_into().unwrap());
                (runtime, nice)
            })
        }
        let (granted, after) = std::thread::spawn(|| {
            let before = slice_and_nice();
            (short_slice(), (before, slice_and_nice()))
        })
        .join()
        .unwrap();
        let (before, after) = after;
        if granted {
            let (before, after) = (before.unwrap(), after.unwrap());
            assert_eq!(after.0, SLICE.as_nanos() as u64, "slice read back");
            assert_eq!(after.1, before.1, "nice kept");
            let mine = slice_and_nice().unwrap();
            assert_ne!(mine.0, SLICE.as_nanos() as u64, "the caller's slice is untouched");
        } else {
            assert_eq!(before, after, "refused, yet the thread changed");
        }
    }

    /// On a thread of its own (the setting is per thread): the nice value read back is the one
    /// asked for when granted, and unchanged when refused.
    #[cfg(target_os = "linux")]
    #[test]
    fn linux_priority_is_read_back_from_the_thread() {
        let (granted, nice) = std::thread::spawn(|| {
            let t = tune_current_thread();
            // SAFETY: getpriority on this thread's id; errno is reset first as man 2 says.
            let nice = unsafe {
                *libc::__errno_location() = 0;
                libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
            };
            (t, nice)
        })
        .join()
        .unwrap();
        assert!(granted.fine_timer_slack);
        match granted.priority {
            Ok(_) => assert_eq!(nice, NICE),
            Err(_) => assert!(nice > NICE, "refused, yet nice is {nice}"),
        }
        // The caller's thread is untouched.
        // SAFETY: as above.
        let mine = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        assert!(mine > NICE);
    }
}
