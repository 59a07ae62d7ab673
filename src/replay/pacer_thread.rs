//! OS settings of the pacer thread of `rehearse replay` (see [`super::precise`]): what lets it
//! keep its instants on a machine whose cores are busy with other work.
//!
//! - **Timer slack 1 µs** (Linux `PR_SET_TIMERSLACK`): its naps end when asked, not up to 50 µs
//!   later.
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
pub(crate) const NICE: i32 = -10;

/// What the pacer thread got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PacerThread {
    /// Whether the timer slack was lowered.
    pub fine_timer_slack: bool,
    /// `Ok(what)` when the priority was raised, `Err(why not)` otherwise.
    pub priority: Result<String, String>,
}

impl PacerThread {
    /// One line for the replay summary.
    pub(crate) fn describe(&self) -> String {
        let slack = if self.fine_timer_slack {
            "timer slack 1 µs"
        } else {
            "default timer slack"
        };
        match &self.priority {
            Ok(p) => format!("{slack}, priority raised ({p})"),
            Err(why) => format!("{slack}, priority unchanged ({why})"),
        }
    }
}

/// Applies the settings to the calling thread and reports what was granted.
pub(crate) fn tune_current_thread() -> PacerThread {
    PacerThread {
        fine_timer_slack: fine_timer_slack(),
        priority: raise_priority(),
    }
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
            priority: Ok("nice -10".into()),
        };
        assert_eq!(
            granted.describe(),
            "timer slack 1 µs, priority raised (nice -10)"
        );
        let refused = PacerThread {
            fine_timer_slack: false,
            priority: Err("EPERM".into()),
        };
        assert_eq!(
            refused.describe(),
            "default timer slack, priority unchanged (EPERM)"
        );
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
