//! Linux readers: `/etc/os-release`, `/proc/sys/net/ipv4/*` (seconds → ms) and `CONFIG_HZ`.
//! Every reader returns `None` for a missing or malformed file.

use std::path::Path;

use super::tcp::{PortRange, TcpStack};

/// Where the IPv4 TCP sysctls live.
pub(super) const PROC_IPV4: &str = "/proc/sys/net/ipv4";

/// (PRETTY_NAME or NAME, VERSION_ID) from `/etc/os-release` (or `/usr/lib/os-release`).
pub(super) fn os_release() -> (Option<String>, Option<String>) {
    let text = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .unwrap_or_default();
    let name = os_release_value(&text, "PRETTY_NAME").or_else(|| os_release_value(&text, "NAME"));
    (name, os_release_value(&text, "VERSION_ID"))
}

/// The value of `KEY=value` or `KEY="value"` in an os-release text.
fn os_release_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// Reads the TCP stack from a `/proc/sys/net/ipv4`-shaped directory.
pub(super) fn tcp_stack(dir: &Path) -> TcpStack {
    let secs_ms = |name: &str| read_u64(dir, name).map(|s| s.saturating_mul(1000));
    TcpStack {
        source: dir.display().to_string(),
        keepalive_idle_ms: secs_ms("tcp_keepalive_time"),
        keepalive_interval_ms: secs_ms("tcp_keepalive_intvl"),
        keepalive_probes: read_u64(dir, "tcp_keepalive_probes").and_then(|v| u32::try_from(v).ok()),
        always_keepalive: None,
        msl_ms: None,
        delayed_ack: None,
        retries2: read_u64(dir, "tcp_retries2").and_then(|v| u32::try_from(v).ok()),
        fin_timeout_ms: secs_ms("tcp_fin_timeout"),
        local_port_range: std::fs::read_to_string(dir.join("ip_local_port_range"))
            .ok()
            .and_then(|t| parse_port_range(&t)),
    }
}

fn read_u64(dir: &Path, name: &str) -> Option<u64> {
    std::fs::read_to_string(dir.join(name))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `"32768\t60999\n"` → 32768..=60999.
fn parse_port_range(text: &str) -> Option<PortRange> {
    let mut it = text.split_whitespace().map(str::parse::<u16>);
    let first = it.next()?.ok()?;
    let last = it.next()?.ok()?;
    Some(PortRange { first, last })
}

/// `CONFIG_HZ` from `/boot/config-RELEASE`, if the distribution ships it.
pub(super) fn kernel_hz(release: &str) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/boot/config-{release}")).ok()?;
    config_hz(&text)
}

/// `CONFIG_HZ=250` in a kernel config text.
fn config_hz(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_seconds_as_ms_and_missing_files_as_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tcp_keepalive_time"), "60\n").unwrap();
        std::fs::write(dir.path().join("tcp_keepalive_intvl"), "5\n").unwrap();
        std::fs::write(dir.path().join("tcp_keepalive_probes"), "garbage").unwrap();
        std::fs::write(dir.path().join("ip_local_port_range"), "1024\t65000\n").unwrap();
        let s = tcp_stack(dir.path());
        assert_eq!(s.keepalive_idle_ms, Some(60_000));
        assert_eq!(s.keepalive_interval_ms, Some(5_000));
        assert_eq!(s.keepalive_probes, None);
        assert_eq!(s.retries2, None);
        assert_eq!(
            s.local_port_range,
            Some(PortRange {
                first: 1024,
                last: 65000
            })
        );
    }

    #[test]
    fn os_release_and_config_hz_parsing() {
        let t = "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            os_release_value(t, "PRETTY_NAME").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(os_release_value(t, "VERSION_ID").as_deref(), Some("12"));
        assert_eq!(os_release_value(t, "NOPE"), None);
        assert_eq!(
            config_hz("# CONFIG_HZ_100 is not set\nCONFIG_HZ=250\n"),
            Some(250)
        );
        assert_eq!(config_hz("CONFIG_HZ_1000=y\n"), None);
    }
}
