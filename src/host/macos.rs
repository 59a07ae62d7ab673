//! macOS readers: `sysctlbyname` for the TCP stack (XNU keeps keep*/msl in ms already) and
//! `kern.osproductversion` for the OS version. A missing sysctl is `None`.

use std::ffi::CStr;

use super::tcp::{PortRange, TcpStack};

/// (`macOS`, `kern.osproductversion`).
pub(super) fn os_release() -> (Option<String>, Option<String>) {
    (
        Some("macOS".to_string()),
        sysctl_string(c"kern.osproductversion"),
    )
}

/// Reads the TCP sysctls of.
pub(super) fn tcp_stack() -> TcpStack {
    let ms = |name: &CStr| sysctl_i32(name).and_then(|v| u64::try_from(v).ok());
    let port = |name: &CStr| sysctl_i32(name).and_then(|v| u16::try_from(v).ok());
    TcpStack {
        source: "sysctlbyname net.inet.tcp.*".to_string(),
        keepalive_idle_ms: ms(c"net.inet.tcp.keepidle"),
        keepalive_interval_ms: ms(c"net.inet.tcp.keepintvl"),
        keepalive_probes: sysctl_i32(c"net.inet.tcp.keepcnt").and_then(|v| u32::try_from(v).ok()),
        always_keepalive: sysctl_i32(c"net.inet.tcp.always_keepalive").map(|v| v != 0),
        msl_ms: ms(c"net.inet.tcp.msl"),
        delayed_ack: sysctl_i32(c"net.inet.tcp.delayed_ack").and_then(|v| u32::try_from(v).ok()),
        retries2: None,
        fin_timeout_ms: None,
        local_port_range: match (
            port(c"net.inet.ip.portrange.first"),
            port(c"net.inet.ip.portrange.last"),
        ) {
            (Some(first), Some(last)) => Some(PortRange { first, last }),
            _ => None,
        },
    }
}

/// An integer sysctl (`int` in XNU).
fn sysctl_i32(name: &CStr) -> Option<i32> {
    let mut value: libc::c_int = 0;
    let mut len: libc::size_t = std::mem::size_of::<libc::c_int>();
    // SAFETY: `name` is NUL-terminated; `value`/`len` point to a writable int and its size;
    // no new value is set (null, 0).
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && len == std::mem::size_of::<libc::c_int>()).then_some(value)
}

/// A string sysctl, up to 256 bytes.
fn sysctl_string(name: &CStr) -> Option<String> {
    let mut buf = [0u8; 256];
    let mut len: libc::size_t = buf.len();
    // SAFETY: `buf` is writable for `len` bytes; the kernel writes at most `len` and updates it.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    let bytes = buf.get(..len.min(buf.len()))?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
}
