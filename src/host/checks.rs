//! Contradiction checks (pure): does this host's TCP dead-peer detection agree with the
//! breaker's probe timeout and `open_for`, and can its TCP timers resolve the scenario's
//! tolerances? Each finding carries the numbers it was computed from.
//!
//! # The model
//! - Kernel keepalive detects a peer that died on an *idle* connection after
//!   idle + interval × probes, but only on sockets with keepalive on (the harness's tuning, or
//!   macOS `always_keepalive`).
//! - A connection with *unacknowledged* data is dropped after the user timeout
//!   (Linux `TCP_USER_TIMEOUT`; macOS `TCP_RXT_CONNDROPTIME`, whole seconds).
//! - Dead-peer detection is the shorter of the two that apply.
//!
//! Longer than 400 lines on purpose: each contradiction check with the tests that pin its
//! thresholds.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::tcp::{HostInfo, LINUX_DEFAULT_HZ};
use crate::transport::sockopt::{TcpTuning, rxt_conndroptime_secs};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing the scenario expects is affected.
    Info,
    /// An expectation may be unobservable or flaky on this host.
    Warning,
    /// The scenario's timings contradict the host: what it expects cannot be observed.
    Error,
}

/// Which check produced a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The breaker's probe timeout is not shorter than the kernel's dead-peer detection.
    ProbeTimeoutVsDeadPeer,
    /// Kernel keepalive does not notice a dead pooled connection within `open_for`.
    OpenForVsDeadPeer,
    /// An expected-transition tolerance is finer than the TCP timer granularity.
    ToleranceVsTimerGranularity,
    /// A tuning value this OS cannot take as given (rounded or unsupported).
    TuningPrecision,
}

/// One flagged contradiction, for the report's host section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contradiction {
    /// The check.
    pub check: Check,
    /// One line with the numbers.
    pub detail: String,
    /// How serious.
    pub severity: Severity,
}

/// Dead-peer detection on the harness's sockets, as far as it is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct DeadPeer {
    /// idle + interval × probes, when keepalive is on; with its formula.
    keepalive: Option<(Duration, String)>,
    /// The user timeout as the kernel takes it, with its name.
    user_timeout: Option<(Duration, String)>,
}

impl DeadPeer {
    fn of(host: &HostInfo, tuning: &TcpTuning) -> Self {
        let tcp = &host.tcp;
        let on = tuning.keepalive_enabled() || tcp.always_keepalive == Some(true);
        let keepalive = on
            .then(|| {
                let idle = tuning
                    .keepalive_idle
                    .or(tcp.keepalive_idle_ms.map(Duration::from_millis))?;
                let intvl = tuning
                    .keepalive_interval
                    .or(tcp.keepalive_interval_ms.map(Duration::from_millis))?;
                let n = tuning.keepalive_retries.or(tcp.keepalive_probes)?;
                let total = idle.saturating_add(intvl.saturating_mul(n));
                let formula = format!(
                    "keepalive {} ms = idle {} ms + interval {} ms × {}",
                    total.as_millis(),
                    idle.as_millis(),
                    intvl.as_millis(),
                    crate::util::text::count(n as usize, "probe")
                );
                Some((total, formula))
            })
            .flatten();
        let user_timeout = tuning.user_timeout.and_then(|t| match host.os.as_str() {
            "linux" => Some((t, format!("TCP_USER_TIMEOUT {} ms", t.as_millis()))),
            "macos" => {
                let s = rxt_conndroptime_secs(t);
                Some((
                    Duration::from_secs(s),
                    format!("TCP_RXT_CONNDROPTIME {s} s"),
                ))
            }
            _ => None,
        });
        Self {
            keepalive,
            user_timeout,
        }
    }

    /// The shorter of the detections that apply, with its description.
    fn effective(&self) -> Option<&(Duration, String)> {
        match (&self.keepalive, &self.user_timeout) {
            (Some(k), Some(u)) => Some(if u.0 <= k.0 { u } else { k }),
            (Some(k), None) => Some(k),
            (None, Some(u)) => Some(u),
            (None, None) => None,
        }
    }
}

/// macOS `always_keepalive` as words (`always_keepalive off`); other systems have no such knob.
fn always_keepalive_text(host: &HostInfo) -> String {
    match host.tcp.always_keepalive {
        Some(true) => "always_keepalive on".into(),
        Some(false) => "always_keepalive off".into(),
        None if host.os == "macos" => "always_keepalive unreadable".into(),
        None => format!("{} has no always_keepalive", host.os),
    }
}

/// Checks a scenario's breaker timings and expectation tolerances against the host's TCP stack
/// (with the harness's `tuning` applied). Pure; the result is empty when nothing contradicts.
pub fn contradictions(
    host: &HostInfo,
    tuning: &TcpTuning,
    probe_timeout: Duration,
    open_for: Duration,
    tolerances: &[Duration],
) -> Vec<Contradiction> {
    let mut out = Vec::new();
    let dead = DeadPeer::of(host, tuning);
    let ms = |d: Duration| d.as_millis();

    if let Some((d, how)) = dead.effective()
        && probe_timeout >= *d
    {
        out.push(Contradiction {
            check: Check::ProbeTimeoutVsDeadPeer,
            severity: Severity::Error,
            detail: format!(
                "probe timeout {} ms ≥ dead-peer detection {} ms ({how}) on {}: the kernel drops \
                 a dead upstream's connection before the probe times out, so a probe to a dead \
                 peer fails as a transport error, never as a probe timeout",
                ms(probe_timeout),
                ms(*d),
                host.os
            ),
        });
    }

    match &dead.keepalive {
        Some((k, how)) if *k > open_for => out.push(Contradiction {
            check: Check::OpenForVsDeadPeer,
            severity: if tuning.keepalive_enabled() {
                Severity::Warning
            } else {
                Severity::Info
            },
            detail: format!(
                "dead-peer detection {} ms ({how}) > open_for {} ms: a pooled connection to a \
                 peer that died while the breaker was open is still considered alive when the \
                 half-open probe is sent; the probe then waits for its {} ms timeout",
                ms(*k),
                ms(open_for),
                ms(probe_timeout)
            ),
        }),
        Some(_) => {}
        None => out.push(Contradiction {
            check: Check::OpenForVsDeadPeer,
            severity: Severity::Info,
            detail: format!(
                "kernel keepalive is off on the harness's sockets (no keepalive tuning; {}): a \
                 peer that dies silently during open_for {} ms is noticed only by the probe \
                 timeout {} ms",
                always_keepalive_text(host),
                ms(open_for),
                ms(probe_timeout)
            ),
        }),
    }

    let scale = tuning
        .keepalive_interval
        .or(host.tcp.keepalive_interval_ms.map(Duration::from_millis))
        .or(tuning.user_timeout);
    // Only when kernel dead-peer detection is in play on the harness's sockets: otherwise no
    // transition is driven by a TCP timer and a coarse timer contradicts nothing.
    let granularity = scale
        .filter(|_| dead.effective().is_some())
        .and_then(|s| host.timers.keep_granularity(s));
    if let Some(g) = granularity {
        let mut fine: Vec<Duration> = tolerances.iter().copied().filter(|t| *t < g).collect();
        fine.sort();
        fine.dedup();
        let hz_note = if host.os == "linux" && host.timers.hz.is_none() {
            format!("; CONFIG_HZ unreadable, {LINUX_DEFAULT_HZ} assumed")
        } else {
            String::new()
        };
        for t in fine {
            out.push(Contradiction {
                check: Check::ToleranceVsTimerGranularity,
                severity: Severity::Warning,
                detail: format!(
                    "tolerance ±{} ms is finer than the {} TCP keep-timer granularity {} ms at a \
                     {} ms timer ({}{hz_note}): a transition driven by kernel dead-peer \
                     detection (in play on the harness's sockets) cannot be timed this finely",
                    ms(t),
                    host.os,
                    ms(g),
                    scale.map_or(0, ms),
                    host.timers.source
                ),
            });
        }
    }

    if host.os == "macos"
        && let Some(t) = tuning.user_timeout
        && t.subsec_nanos() != 0
    {
        out.push(Contradiction {
            check: Check::TuningPrecision,
            severity: Severity::Info,
            detail: format!(
                "user_timeout {} ms becomes TCP_RXT_CONNDROPTIME {} s (macOS takes whole seconds)",
                ms(t),
                rxt_conndroptime_secs(t)
            ),
        });
    }
    if !matches!(host.os.as_str(), "linux" | "macos") && tuning.user_timeout.is_some() {
        out.push(Contradiction {
            check: Check::TuningPrecision,
            severity: Severity::Warning,
            detail: format!("user_timeout is not supported on {}; ignored", host.os),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tcp::{TcpStack, TimerFacts};
    use super::*;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn macos_defaults() -> HostInfo {
        HostInfo {
            os: "macos".into(),
            tcp: TcpStack {
                keepalive_idle_ms: Some(7_200_000),
                keepalive_interval_ms: Some(75_000),
                keepalive_probes: Some(8),
                always_keepalive: Some(false),
                ..TcpStack::default()
            },
            timers: TimerFacts::macos(),
            ..HostInfo::default()
        }
    }

    fn linux_defaults() -> HostInfo {
        HostInfo {
            os: "linux".into(),
            tcp: TcpStack {
                keepalive_idle_ms: Some(7_200_000),
                keepalive_interval_ms: Some(75_000),
                keepalive_probes: Some(9),
                ..TcpStack::default()
            },
            timers: TimerFacts::linux(Some(1000)),
            ..HostInfo::default()
        }
    }

    fn of(v: &[Contradiction], c: Check) -> Vec<&Contradiction> {
        v.iter().filter(|x| x.check == c).collect()
    }

    #[test]
    fn probe_timeout_longer_than_tuned_keepalive_is_an_error_with_numbers() {
        let tuning = TcpTuning {
            keepalive_idle: Some(s(5)),
            keepalive_interval: Some(s(2)),
            keepalive_retries: Some(3),
            ..TcpTuning::default()
        };
        let v = contradictions(&linux_defaults(), &tuning, s(20), s(30), &[]);
        let e = of(&v, Check::ProbeTimeoutVsDeadPeer);
        assert_eq!(e.len(), 1, "{v:#?}");
        assert_eq!(e[0].severity, Severity::Error);
        assert!(
            e[0].detail.contains("probe timeout 20000 ms"),
            "{}",
            e[0].detail
        );
        assert!(
            e[0].detail
                .contains("keepalive 11000 ms = idle 5000 ms + interval 2000 ms × 3 probes"),
            "{}",
            e[0].detail
        );
        // A probe timeout shorter than detection is fine.
        let ok = contradictions(&linux_defaults(), &tuning, s(10), s(30), &[]);
        assert!(of(&ok, Check::ProbeTimeoutVsDeadPeer).is_empty());
    }

    #[test]
    fn user_timeout_is_conndroptime_in_whole_seconds_on_macos() {
        let tuning = TcpTuning {
            user_timeout: Some(Duration::from_millis(4_500)),
            ..TcpTuning::default()
        };
        let mac = contradictions(&macos_defaults(), &tuning, s(5), s(30), &[]);
        let e = of(&mac, Check::ProbeTimeoutVsDeadPeer);
        assert!(e[0].detail.contains("TCP_RXT_CONNDROPTIME 5 s"), "{mac:#?}");
        assert_eq!(of(&mac, Check::TuningPrecision).len(), 1);
        // Linux takes milliseconds: 4.5 s < 5 s too, but under its own name.
        let lin = contradictions(&linux_defaults(), &tuning, s(5), s(30), &[]);
        assert!(
            of(&lin, Check::ProbeTimeoutVsDeadPeer)[0]
                .detail
                .contains("TCP_USER_TIMEOUT 4500 ms")
        );
        assert!(of(&lin, Check::TuningPrecision).is_empty());
    }

    #[test]
    fn same_grace_contradicts_macos_but_not_linux_tolerances() {
        // keepalive tuned to 1 s intervals: Linux's wheel resolves 1 s timers to 64 ms
        // (HZ 1000), macOS's keep class stays at 500 ms.
        let tuning = TcpTuning {
            keepalive_idle: Some(s(10)),
            keepalive_interval: Some(s(1)),
            keepalive_retries: Some(3),
            ..TcpTuning::default()
        };
        let tol = [Duration::from_millis(200), Duration::from_millis(200), s(1)];
        let mac = contradictions(&macos_defaults(), &tuning, s(2), s(30), &tol);
        let t = of(&mac, Check::ToleranceVsTimerGranularity);
        assert_eq!(t.len(), 1, "one finding per distinct tolerance: {mac:#?}");
        assert!(t[0].detail.contains("±200 ms") && t[0].detail.contains("500 ms"));
        let lin = contradictions(&linux_defaults(), &tuning, s(2), s(30), &tol);
        assert!(
            of(&lin, Check::ToleranceVsTimerGranularity).is_empty(),
            "{lin:#?}"
        );
    }

    #[test]
    fn untuned_keepalive_off_is_info_only_and_long_keepalive_warns() {
        let tol = [Duration::from_millis(100), Duration::from_millis(200), s(1)];
        let v = contradictions(&macos_defaults(), &TcpTuning::default(), s(3), s(30), &tol);
        // No TCP timer drives a transition here: tolerances finer than it contradict nothing.
        assert!(
            of(&v, Check::ToleranceVsTimerGranularity).is_empty(),
            "{v:#?}"
        );
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!(v[0].severity, Severity::Info);
        assert!(
            v[0].detail
                .contains("(no keepalive tuning; always_keepalive off)"),
            "{}",
            v[0].detail
        );
        let v = contradictions(&linux_defaults(), &TcpTuning::default(), s(3), s(30), &tol);
        assert!(v.iter().all(|c| c.severity == Severity::Info), "{v:#?}");
        assert!(
            v.iter()
                .all(|c| !c.detail.contains("None") && !c.detail.contains("Some(")),
            "no Rust Option in text: {v:#?}"
        );
        assert!(
            v[0].detail.contains("linux has no always_keepalive"),
            "{v:#?}"
        );
        let tuning = TcpTuning {
            keepalive_idle: Some(s(60)),
            ..TcpTuning::default()
        };
        let v = contradictions(&linux_defaults(), &tuning, s(3), s(30), &[]);
        let w = of(&v, Check::OpenForVsDeadPeer);
        assert_eq!(w[0].severity, Severity::Warning);
        assert!(
            w[0].detail.contains("> open_for 30000 ms"),
            "{}",
            w[0].detail
        );
    }
}
