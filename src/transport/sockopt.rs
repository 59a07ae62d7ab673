//! Socket options the harness applies to its client sockets, set the same way on Linux and
//! macOS: keepalive time / interval / retries through socket2's `TcpKeepalive` (socket2 maps
//! idle time to `TCP_KEEPIDLE` on Linux and `TCP_KEEPALIVE` on macOS), and one "give up on an
//! unacknowledged connection" timeout: `TCP_USER_TIMEOUT` (ms) on Linux, `TCP_RXT_CONNDROPTIME`
//! (whole seconds, rounded up) on macOS, where libc lacks the constant.

use std::io;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use socket2::{SockRef, TcpKeepalive};

/// XNU `bsd/netinet/tcp.h`: "time after which tcp retransmissions will be stopped and the
/// connection will be dropped" (seconds). Not in the `libc` crate for Apple targets.
#[cfg(target_os = "macos")]
pub const TCP_RXT_CONNDROPTIME: libc::c_int = 0x80;

/// The name of the "give up on unacknowledged data" option [`apply`] sets for `user_timeout`.
#[cfg(target_os = "macos")]
pub const USER_TIMEOUT_OPTION: &str = "TCP_RXT_CONNDROPTIME";
/// The name of the "give up on unacknowledged data" option [`apply`] sets for `user_timeout`.
#[cfg(not(target_os = "macos"))]
pub const USER_TIMEOUT_OPTION: &str = "TCP_USER_TIMEOUT";

/// TCP tuning for the harness's client sockets (a scenario's `[tcp]` table; durations as
/// humantime strings such as `"30s"`). Keepalive values are whole seconds on both systems.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpTuning {
    /// Idle time before the first keepalive probe.
    #[serde(
        default,
        serialize_with = "humantime_serde::serialize",
        deserialize_with = "de::whole_secs",
        skip_serializing_if = "Option::is_none"
    )]
    pub keepalive_idle: Option<Duration>,
    /// Interval between keepalive probes.
    #[serde(
        default,
        serialize_with = "humantime_serde::serialize",
        deserialize_with = "de::whole_secs",
        skip_serializing_if = "Option::is_none"
    )]
    pub keepalive_interval: Option<Duration>,
    /// Unanswered keepalive probes before the connection is dropped.
    #[serde(
        default,
        deserialize_with = "de::at_least_one",
        skip_serializing_if = "Option::is_none"
    )]
    pub keepalive_retries: Option<u32>,
    /// Drop a connection whose sent data stays unacknowledged this long
    /// (Linux `TCP_USER_TIMEOUT`; macOS `TCP_RXT_CONNDROPTIME`, rounded up to seconds).
    #[serde(
        default,
        serialize_with = "humantime_serde::serialize",
        deserialize_with = "de::non_zero",
        skip_serializing_if = "Option::is_none"
    )]
    pub user_timeout: Option<Duration>,
}

/// A tuning value the kernels cannot take.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("tcp.{field}: {reason}")]
pub struct TuningError {
    /// The offending key.
    pub field: &'static str,
    /// Why.
    pub reason: String,
}

impl TcpTuning {
    /// True when any keepalive value is set (applying it enables `SO_KEEPALIVE`).
    pub(crate) fn keepalive_enabled(&self) -> bool {
        self.keepalive_idle.is_some()
            || self.keepalive_interval.is_some()
            || self.keepalive_retries.is_some()
    }

    /// Keepalive times must be whole, non-zero seconds (both kernels take seconds); retries ≥ 1.
    pub fn validate(&self) -> Result<(), TuningError> {
        for (field, v) in [
            ("keepalive_idle", self.keepalive_idle),
            ("keepalive_interval", self.keepalive_interval),
        ] {
            if let Some(d) = v
                && (d.subsec_nanos() != 0 || d.is_zero())
            {
                return Err(TuningError {
                    field,
                    reason: format!("{d:?} is not a whole, non-zero number of seconds"),
                });
            }
        }
        if self.keepalive_retries == Some(0) {
            return Err(TuningError {
                field: "keepalive_retries",
                reason: "must be at least 1".into(),
            });
        }
        if self.user_timeout.is_some_and(|d| d.is_zero()) {
            return Err(TuningError {
                field: "user_timeout",
                reason: "must be greater than 0 (0 means the kernel default)".into(),
            });
        }
        Ok(())
    }
}

/// Deserializers that reject what [`TcpTuning::validate`] rejects, so a scenario's bad `[tcp]`
/// value is reported at its own line and column by the TOML parser.
mod de {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, de::Error};

    fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        humantime_serde::deserialize(d)
    }

    pub(super) fn whole_secs<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        let v = duration(d)?;
        if v.is_zero() || v.subsec_nanos() != 0 {
            return Err(D::Error::custom(format!(
                "{} is not a whole, non-zero number of seconds (both kernels take seconds)",
                humantime::format_duration(v)
            )));
        }
        Ok(Some(v))
    }

    pub(super) fn non_zero<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let v = duration(d)?;
        if v.is_zero() {
            return Err(D::Error::custom(
                "must be greater than 0 (0 means the kernel default: leave the key out)",
            ));
        }
        Ok(Some(v))
    }

    pub(super) fn at_least_one<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
        let v = u32::deserialize(d)?;
        if v == 0 {
            return Err(D::Error::custom("must be at least 1"));
        }
        Ok(Some(v))
    }
}

/// The TCP options as read back from a socket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketTcpOptions {
    /// `SO_KEEPALIVE`.
    pub keepalive: bool,
    /// Keepalive idle time.
    pub keepalive_idle: Option<Duration>,
    /// Keepalive interval.
    pub keepalive_interval: Option<Duration>,
    /// Keepalive probe count.
    pub keepalive_retries: Option<u32>,
    /// `TCP_USER_TIMEOUT` (Linux) or `TCP_RXT_CONNDROPTIME` (macOS); `None` when 0 / unset.
    pub user_timeout: Option<Duration>,
}

/// Applies `tuning` to a TCP socket (validate it first; an invalid value surfaces as the
/// kernel's `EINVAL`).
pub fn apply(sock: &SockRef<'_>, tuning: &TcpTuning) -> io::Result<()> {
    if tuning.keepalive_enabled() {
        let mut ka = TcpKeepalive::new();
        if let Some(t) = tuning.keepalive_idle {
            ka = ka.with_time(t);
        }
        if let Some(i) = tuning.keepalive_interval {
            ka = ka.with_interval(i);
        }
        if let Some(r) = tuning.keepalive_retries {
            ka = ka.with_retries(r);
        }
        sock.set_tcp_keepalive(&ka)?;
    }
    if let Some(t) = tuning.user_timeout {
        set_user_timeout(sock, t)?;
    }
    Ok(())
}

/// Reads the options [`apply`] sets back from the kernel.
pub fn read_back(sock: &SockRef<'_>) -> io::Result<SocketTcpOptions> {
    Ok(SocketTcpOptions {
        keepalive: sock.keepalive()?,
        keepalive_idle: Some(sock.tcp_keepalive_time()?),
        keepalive_interval: Some(sock.tcp_keepalive_interval()?),
        keepalive_retries: Some(sock.tcp_keepalive_retries()?),
        user_timeout: user_timeout(sock)?,
    })
}

/// macOS rounds a user timeout up to whole seconds; this is the value it takes.
pub(crate) fn rxt_conndroptime_secs(timeout: Duration) -> u64 {
    timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0)
}

#[cfg(target_os = "linux")]
fn set_user_timeout(sock: &SockRef<'_>, t: Duration) -> io::Result<()> {
    sock.set_tcp_user_timeout(Some(t))
}

#[cfg(target_os = "linux")]
fn user_timeout(sock: &SockRef<'_>) -> io::Result<Option<Duration>> {
    sock.tcp_user_timeout()
}

#[cfg(target_os = "macos")]
fn set_user_timeout(sock: &SockRef<'_>, t: Duration) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let secs = libc::c_int::try_from(rxt_conndroptime_secs(t))
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "user_timeout too large"))?;
    // SAFETY: a valid socket fd, a pointer to a live c_int and its exact size.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            TCP_RXT_CONNDROPTIME,
            (&secs as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(target_os = "macos")]
fn user_timeout(sock: &SockRef<'_>) -> io::Result<Option<Duration>> {
    use std::os::fd::AsRawFd;
    let mut secs: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket fd, a writable c_int and its size.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            TCP_RXT_CONNDROPTIME,
            (&mut secs as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((secs > 0).then(|| Duration::from_secs(secs as u64)))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn set_user_timeout(_sock: &SockRef<'_>, _t: Duration) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "no TCP user timeout on this OS",
    ))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn user_timeout(_sock: &SockRef<'_>) -> io::Result<Option<Duration>> {
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_names_the_field() {
        let t = TcpTuning {
            keepalive_idle: Some(Duration::from_millis(1500)),
            ..TcpTuning::default()
        };
        assert_eq!(t.validate().unwrap_err().field, "keepalive_idle");
        let t = TcpTuning {
            keepalive_retries: Some(0),
            ..TcpTuning::default()
        };
        assert_eq!(t.validate().unwrap_err().field, "keepalive_retries");
        assert!(TcpTuning::default().validate().is_ok());
    }

    #[test]
    fn serde_takes_humantime_and_rejects_unknown_keys() {
        let t: TcpTuning = toml::from_str(
            "keepalive_idle = \"30s\"\nkeepalive_retries = 3\nuser_timeout = \"20s\"",
        )
        .unwrap();
        assert_eq!(t.keepalive_idle, Some(Duration::from_secs(30)));
        assert_eq!(t.user_timeout, Some(Duration::from_secs(20)));
        assert!(toml::from_str::<TcpTuning>("keepidle = \"30s\"").is_err());
    }

    #[test]
    fn deserializing_rejects_what_validate_rejects() {
        for bad in [
            "keepalive_idle = \"1500ms\"",
            "keepalive_interval = \"0s\"",
            "keepalive_retries = 0",
            "user_timeout = \"0s\"",
        ] {
            let err = toml::from_str::<TcpTuning>(bad).unwrap_err();
            assert!(err.span().is_some(), "{bad}: no span in {err}");
        }
        let t: TcpTuning = toml::from_str("user_timeout = \"1500ms\"").unwrap();
        assert_eq!(t.user_timeout, Some(Duration::from_millis(1500)));
        let back: TcpTuning = toml::from_str(&toml::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn conndroptime_rounds_up_to_seconds() {
        assert_eq!(rxt_conndroptime_secs(Duration::from_millis(1500)), 2);
        assert_eq!(rxt_conndroptime_secs(Duration::from_secs(20)), 20);
    }
}
