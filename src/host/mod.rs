//! Host and TCP-stack fingerprint recorded in every report, and the pure contradiction checks
//! between the host's dead-peer detection and a scenario's breaker timings.
//!
//! # Why
//! The same half-open grace can be fine on Linux and contradict macOS's dead-peer detection:
//! macOS has other keepalive defaults, no `TCP_USER_TIMEOUT` and coarse (500 ms) keep timers.
//! A report therefore says what TCP stack it measured on ([`fingerprint`]) and flags
//! expectations the stack cannot meet ([`contradictions`]).
//!
//! # Layout
//! - [`tcp`]: the fingerprint model ([`HostInfo`], [`TcpStack`], [`TimerFacts`]) and the
//!   documented timer-granularity constants with their sources.
//! - `checks`: the pure contradiction checks ([`contradictions`], [`Contradiction`]).
//! - `linux` / `macos`: readers of `/proc/sys/net/ipv4/` and `sysctlbyname` (cfg by target).
//! - The socket options the harness applies to its own client sockets, and the connector that
//!   applies them, belong to the clients: [`crate::transport::sockopt`],
//!   [`crate::transport::connector`].
//!
//! Every value the host may not expose is an `Option`: a missing sysctl or `/proc` file is
//! `None`, never a panic.

mod checks;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
pub(crate) mod tcp;

pub use checks::{Check, Contradiction, Severity, contradictions};
pub use tcp::{HostInfo, PortRange, TcpStack, TimerFacts};

/// Reads the fingerprint of the machine this process runs on. Never fails: what cannot be read
/// is `None`.
pub fn fingerprint() -> HostInfo {
    let uts = uname();
    let (os_name, os_version) = os_release();
    HostInfo {
        os: std::env::consts::OS.to_string(),
        os_name,
        os_version,
        kernel: uts.as_ref().map(|u| format!("{} {}", u.sysname, u.release)),
        kernel_version: uts.as_ref().map(|u| u.version.clone()),
        arch: std::env::consts::ARCH.to_string(),
        hostname: uts.as_ref().map(|u| u.nodename.clone()),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        tcp: tcp_stack(),
        timers: timer_facts(uts.as_ref().map(|u| u.release.as_str())),
    }
}

/// The host name (uname nodename), used by the run lock to name its holder.
pub fn hostname() -> Option<String> {
    uname().map(|u| u.nodename)
}

#[cfg(target_os = "linux")]
fn os_release() -> (Option<String>, Option<String>) {
    linux::os_release()
}
#[cfg(target_os = "macos")]
fn os_release() -> (Option<String>, Option<String>) {
    macos::os_release()
}
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn os_release() -> (Option<String>, Option<String>) {
    (None, None)
}

#[cfg(target_os = "linux")]
fn tcp_stack() -> TcpStack {
    linux::tcp_stack(std::path::Path::new(linux::PROC_IPV4))
}
#[cfg(target_os = "macos")]
fn tcp_stack() -> TcpStack {
    macos::tcp_stack()
}
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn tcp_stack() -> TcpStack {
    TcpStack::default()
}

#[cfg(target_os = "linux")]
fn timer_facts(release: Option<&str>) -> TimerFacts {
    TimerFacts::linux(release.and_then(linux::kernel_hz))
}
#[cfg(target_os = "macos")]
fn timer_facts(_release: Option<&str>) -> TimerFacts {
    TimerFacts::macos()
}
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn timer_facts(_release: Option<&str>) -> TimerFacts {
    TimerFacts::default()
}

/// The fields of `uname(2)` we report.
#[derive(Debug, Clone)]
struct Uname {
    sysname: String,
    nodename: String,
    release: String,
    version: String,
}

fn uname() -> Option<Uname> {
    // SAFETY: `utsname` is plain old data; all-zero is a valid value and `uname` fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable `utsname`.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    Some(Uname {
        sysname: c_chars(&u.sysname),
        nodename: c_chars(&u.nodename),
        release: c_chars(&u.release),
        version: c_chars(&u.version),
    })
}

/// A NUL-terminated fixed-size C char array as a String (lossy, bounded by the array).
fn c_chars(chars: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
