//! Host fingerprint, socket options and contradiction checks.

use std::time::Duration;

use rehearse::host::{self, Check, Severity};
use rehearse::transport::TcpTuning;

#[cfg(target_os = "linux")]
fn proc_u64(name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn linux_fingerprint_matches_proc_and_uname() {
    let h = host::fingerprint();
    assert_eq!(h.os, "linux");
    let t = &h.tcp;
    assert_eq!(
        t.keepalive_idle_ms,
        Some(proc_u64("tcp_keepalive_time") * 1000)
    );
    assert_eq!(
        t.keepalive_interval_ms,
        Some(proc_u64("tcp_keepalive_intvl") * 1000)
    );
    assert_eq!(
        t.keepalive_probes,
        Some(proc_u64("tcp_keepalive_probes") as u32)
    );
    assert_eq!(t.retries2, Some(proc_u64("tcp_retries2") as u32));
    assert_eq!(t.fin_timeout_ms, Some(proc_u64("tcp_fin_timeout") * 1000));
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
    let r = t.local_port_range.expect("port range");
    assert_eq!(
        format!("{} {}", r.first, r.last),
        range.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(
        h.kernel.as_deref(),
        Some(format!("Linux {}", release.trim()).as_str())
    );
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(h.hostname.as_deref(), Some(hostname.trim()));
    assert!(h.cpus >= 1);
    if let Ok(osr) = std::fs::read_to_string("/etc/os-release")
        && let Some(v) = osr.lines().find_map(|l| l.strip_prefix("VERSION_ID="))
    {
        assert_eq!(h.os_version.as_deref(), Some(v.trim_matches('"')));
    }
    assert!(h.timers.source.starts_with("linux"));
    println!("{}", serde_json::to_string_pretty(&h).unwrap());
}

#[test]
fn host_info_round_trips_through_json() {
    let h = host::fingerprint();
    let json = serde_json::to_value(&h).unwrap();
    assert!(json["tcp"].get("keepalive_idle_ms").is_some());
    let back: host::HostInfo = serde_json::from_value(json).unwrap();
    assert_eq!(back, h);
}

#[cfg(target_os = "linux")]
#[test]
fn tuning_applied_to_a_real_loopback_socket_reads_back() {
    use rehearse::transport::sockopt;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let sock = socket2::SockRef::from(&stream);
    let before = sockopt::read_back(&sock).unwrap();
    assert!(!before.keepalive);
    assert_eq!(before.user_timeout, None);
    let tuning = TcpTuning {
        keepalive_idle: Some(Duration::from_secs(30)),
        keepalive_interval: Some(Duration::from_secs(5)),
        keepalive_retries: Some(4),
        user_timeout: Some(Duration::from_millis(12_500)),
    };
    tuning.validate().unwrap();
    sockopt::apply(&sock, &tuning).unwrap();
    let after = sockopt::read_back(&sock).unwrap();
    assert!(after.keepalive);
    assert_eq!(after.keepalive_idle, Some(Duration::from_secs(30)));
    assert_eq!(after.keepalive_interval, Some(Duration::from_secs(5)));
    assert_eq!(after.keepalive_retries, Some(4));
    assert_eq!(after.user_timeout, Some(Duration::from_millis(12_500)));
}

#[test]
fn tuning_built_to_contradict_is_flagged_on_this_host() {
    let h = host::fingerprint();
    // Dead-peer detection 5 s + 2 s × 3 = 11 s, but the breaker waits 20 s for a probe.
    let tuning = TcpTuning {
        keepalive_idle: Some(Duration::from_secs(5)),
        keepalive_interval: Some(Duration::from_secs(2)),
        keepalive_retries: Some(3),
        user_timeout: None,
    };
    let found = host::contradictions(
        &h,
        &tuning,
        Duration::from_secs(20),
        Duration::from_secs(30),
        &[Duration::from_millis(20)],
    );
    let c = found
        .iter()
        .find(|c| c.check == Check::ProbeTimeoutVsDeadPeer)
        .unwrap_or_else(|| panic!("not flagged: {found:#?}"));
    assert_eq!(c.severity, Severity::Error);
    assert!(
        c.detail.contains("20000 ms") && c.detail.contains("11000 ms"),
        "{}",
        c.detail
    );
    println!("{}", serde_json::to_string_pretty(&found).unwrap());
    // The same timings with a probe timeout under the detection time are not contradictory.
    let fine = host::contradictions(
        &h,
        &tuning,
        Duration::from_secs(5),
        Duration::from_secs(30),
        &[],
    );
    assert!(
        fine.iter()
            .all(|c| c.check != Check::ProbeTimeoutVsDeadPeer)
    );
}
