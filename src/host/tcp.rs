//! The host fingerprint model: OS, kernel, CPUs, the TCP stack's dead-peer settings (all in
//! milliseconds whatever unit the OS uses) and the granularity of the kernel's TCP timers.
//! The contradiction checks over this model live in `checks.rs`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a report records about the machine it ran on (`report.json` → `host`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// `std::env::consts::OS`: `linux`, `macos`, ...
    pub os: String,
    /// Distribution or product name (`/etc/os-release` PRETTY_NAME; `macOS`).
    #[serde(default)]
    pub os_name: Option<String>,
    /// OS version (`/etc/os-release` VERSION_ID; `sysctl kern.osproductversion`).
    #[serde(default)]
    pub os_version: Option<String>,
    /// `uname -sr`, e.g. `Linux 6.1.0-18-amd64` or `Darwin 24.3.0`.
    #[serde(default)]
    pub kernel: Option<String>,
    /// `uname -v` (build string).
    #[serde(default)]
    pub kernel_version: Option<String>,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// `uname -n`.
    #[serde(default)]
    pub hostname: Option<String>,
    /// Logical CPUs available to this process.
    pub cpus: usize,
    /// The TCP stack's dead-peer and port settings.
    pub tcp: TcpStack,
    /// Granularity of the kernel's TCP timers (documented constants).
    pub timers: TimerFacts,
}

/// TCP stack values, normalised to milliseconds. `None` = not exposed by this OS or unreadable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpStack {
    /// Where the values came from (`/proc/sys/net/ipv4` or `sysctlbyname`).
    pub source: String,
    /// Idle time before the first keepalive probe (Linux `tcp_keepalive_time` s; macOS
    /// `net.inet.tcp.keepidle` ms).
    #[serde(default)]
    pub keepalive_idle_ms: Option<u64>,
    /// Interval between keepalive probes (`tcp_keepalive_intvl` s; `keepintvl` ms).
    #[serde(default)]
    pub keepalive_interval_ms: Option<u64>,
    /// Unanswered probes before the connection is dropped (`tcp_keepalive_probes`; `keepcnt`).
    #[serde(default)]
    pub keepalive_probes: Option<u32>,
    /// macOS `net.inet.tcp.always_keepalive`: keepalive on every socket without `SO_KEEPALIVE`.
    #[serde(default)]
    pub always_keepalive: Option<bool>,
    /// macOS `net.inet.tcp.msl` (ms); TIME_WAIT lasts 2 × MSL.
    #[serde(default)]
    pub msl_ms: Option<u64>,
    /// macOS `net.inet.tcp.delayed_ack` mode (0 off … 3 auto-detect).
    #[serde(default)]
    pub delayed_ack: Option<u32>,
    /// Linux `tcp_retries2`: retransmissions before an established connection is dropped.
    #[serde(default)]
    pub retries2: Option<u32>,
    /// Linux `tcp_fin_timeout` (s → ms): how long an orphaned FIN_WAIT_2 lingers.
    #[serde(default)]
    pub fin_timeout_ms: Option<u64>,
    /// Ephemeral port range (Linux `ip_local_port_range`; macOS `net.inet.ip.portrange.first/last`).
    #[serde(default)]
    pub local_port_range: Option<PortRange>,
}

impl TcpStack {
    /// Kernel keepalive dead-peer detection with the host defaults:
    /// idle + interval × probes, or `None` if a value is missing.
    #[cfg(test)] // used by the tests only
    fn keepalive_detection(&self) -> Option<Duration> {
        let idle = self.keepalive_idle_ms?;
        let intvl = self.keepalive_interval_ms?;
        let probes = u64::from(self.keepalive_probes?);
        Some(Duration::from_millis(
            idle.saturating_add(intvl.saturating_mul(probes)),
        ))
    }
}

/// An inclusive port range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRange {
    /// First ephemeral port.
    pub first: u16,
    /// Last ephemeral port.
    pub last: u16,
}

/// XNU's TCP timer lists fire in three quanta; keepalive, persist and 2MSL timers run in the
/// 500 ms class, so a dead peer found by keepalive is noticed on a 500 ms grid.
/// (`apple-oss-distributions/xnu:bsd/netinet/tcp_var.h`:
/// `TCP_TIMER_500MS_QUANTUM (TCP_RETRANSHZ/2)`; `tcp_timer.c` `need_to_resched_timerlist`.)
#[cfg_attr(not(target_os = "macos"), allow(dead_code, reason = "read on macOS only"))]
const MACOS_KEEP_TIMER_MS: u64 = 500;
/// XNU retransmit and delayed-ACK timers run in the 100 ms class
/// (`xnu:bsd/netinet/tcp_var.h`: `TCP_TIMER_100MS_QUANTUM (TCP_RETRANSHZ/10)`).
#[cfg_attr(not(target_os = "macos"), allow(dead_code, reason = "read on macOS only"))]
const MACOS_REXMT_TIMER_MS: u64 = 100;
/// Linux timer wheel: each level is 8× coarser than the one below (`LVL_CLK_SHIFT` 3) and holds
/// 64 buckets (`LVL_BITS` 6), so a timer `d` jiffies away fires on a grid of 8^level jiffies
/// where level is the first with d < 64 × 8^level — up to ~12.5 % late.
/// (`torvalds/linux:kernel/time/timer.c`, "The timer wheel has LVL_DEPTH array levels".)
const LINUX_WHEEL_LEVEL_FACTOR: u64 = 8;
/// Buckets per Linux timer-wheel level (`LVL_SIZE`).
const LINUX_WHEEL_LEVEL_SIZE: u64 = 64;
/// The kernel tick assumed when `CONFIG_HZ` cannot be read: 250, Debian's and Ubuntu's default.
pub(crate) const LINUX_DEFAULT_HZ: u32 = 250;

/// Granularity of the kernel's TCP timers on this host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerFacts {
    /// Granularity of the timer class running keepalive / connection-drop timers (ms), when it is
    /// a fixed constant (macOS: 500).
    #[serde(default)]
    pub keep_timer_ms: Option<u64>,
    /// Granularity of the retransmit / delayed-ACK timer class (ms) (macOS: 100).
    #[serde(default)]
    pub rexmt_timer_ms: Option<u64>,
    /// Linux kernel tick rate (`CONFIG_HZ` from `/boot/config-RELEASE`), if readable.
    #[serde(default)]
    pub hz: Option<u32>,
    /// Where these facts come from.
    pub source: String,
}

impl TimerFacts {
    /// The documented XNU timer classes.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code, reason = "read on macOS only"))]
    pub(crate) fn macos() -> Self {
        Self {
            keep_timer_ms: Some(MACOS_KEEP_TIMER_MS),
            rexmt_timer_ms: Some(MACOS_REXMT_TIMER_MS),
            hz: None,
            source: "xnu bsd/netinet/tcp_var.h TCP_TIMER_{500MS,100MS}_QUANTUM".into(),
        }
    }

    /// Linux: jiffies on a hierarchical timer wheel; `hz` if known.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code, reason = "built on Linux only"))]
    pub(crate) fn linux(hz: Option<u32>) -> Self {
        Self {
            keep_timer_ms: None,
            rexmt_timer_ms: None,
            hz,
            source: "linux kernel/time/timer.c wheel (8^level jiffies), CONFIG_HZ".into(),
        }
    }

    /// How coarsely a kernel TCP timer set `timeout` ahead fires on this host: the fixed keep
    /// class on macOS; on Linux the timer-wheel level granularity at that distance (with
    /// [`LINUX_DEFAULT_HZ`] if HZ is unknown). `None` when nothing is known (other OSes).
    pub(crate) fn keep_granularity(&self, timeout: Duration) -> Option<Duration> {
        if let Some(ms) = self.keep_timer_ms {
            return Some(Duration::from_millis(ms));
        }
        if self.source.starts_with("linux") {
            return Some(linux_wheel_granularity(
                timeout,
                self.hz.unwrap_or(LINUX_DEFAULT_HZ),
            ));
        }
        None
    }
}

/// Granularity of a Linux timer-wheel timer `timeout` ahead at `hz` ticks per second.
fn linux_wheel_granularity(timeout: Duration, hz: u32) -> Duration {
    let hz = u64::from(hz.max(1));
    let jiffies = (timeout.as_millis() as u64).saturating_mul(hz) / 1000;
    let mut gran: u64 = 1;
    let mut span = LINUX_WHEEL_LEVEL_SIZE;
    while jiffies >= span && gran < u64::MAX / 64 {
        gran *= LINUX_WHEEL_LEVEL_FACTOR;
        span = span.saturating_mul(LINUX_WHEEL_LEVEL_FACTOR);
    }
    Duration::from_micros(gran * 1_000_000 / hz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keepalive_detection_is_idle_plus_interval_times_probes() {
        let s = TcpStack {
            keepalive_idle_ms: Some(7_200_000),
            keepalive_interval_ms: Some(75_000),
            keepalive_probes: Some(8),
            ..TcpStack::default()
        };
        assert_eq!(
            s.keepalive_detection(),
            Some(Duration::from_millis(7_800_000))
        );
        let missing = TcpStack {
            keepalive_probes: None,
            ..s
        };
        assert_eq!(missing.keepalive_detection(), None);
    }

    #[test]
    fn linux_wheel_levels_at_hz_1000() {
        let g = |ms| linux_wheel_granularity(Duration::from_millis(ms), 1000).as_millis();
        assert_eq!(g(10), 1); // level 0: < 64 ms
        assert_eq!(g(100), 8); // level 1: < 512 ms
        assert_eq!(g(1_000), 64); // level 2: < 4.096 s
        assert_eq!(g(10_000), 512); // level 3: < 32.768 s
        assert_eq!(g(75_000), 4096); // level 4: the default keepalive interval
    }

    #[test]
    fn macos_keep_class_is_500ms_whatever_the_timeout() {
        let t = TimerFacts::macos();
        assert_eq!(
            t.keep_granularity(Duration::from_secs(1)),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            TimerFacts::linux(Some(250)).keep_granularity(Duration::from_millis(100)),
            Some(Duration::from_millis(4))
        );
    }
}
