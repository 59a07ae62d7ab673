//! What the fleet run tells each host process (`rehearse __fleet-host --spec FILE`, a JSON
//! file in the host's own directory), the line protocol on its stdio, and the split of the
//! traffic by session.
//!
//! Protocol: the host binds its `/metrics`, prints `metrics ADDR` and waits for a
//! `go UNIX_MICROS` line on stdin (the run's start on the machine's real wall clock: every host
//! counts from that instant, however late the line reached it); it replays its share until
//! `duration`, prints `done {json}` ([`HostDone`]) and exits 0. Stdin closing (the run
//! stopped, or died) stops it early.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::engine::Policy;
use crate::replay::traffic::TrafficLine;

/// One host's orders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HostSpec {
    /// The scenario file (the host checks and loads it, traffic included).
    pub scenario: PathBuf,
    /// This host's index, 0-based.
    pub index: usize,
    /// Hosts in the fleet.
    pub hosts: usize,
    /// This host's id (`h0`, `h1`, ...): the coordinator's host id and `X-Rehearse-Host`.
    pub id: String,
    /// The mock upstream every host calls.
    pub upstream: SocketAddr,
    /// The Redis of the `redis` coordination; `None`: this host decides alone.
    pub redis_url: Option<String>,
    /// The `--speed` divisor (a number in the JSON; read back through `Speed::new`).
    pub speed: crate::util::speed::Speed,
    /// The run's seed (the host mixes its index in).
    pub seed: u64,
    /// The policy.
    pub policy: Policy,
    /// This host's wall-clock offset, ms.
    pub skew_ms: i64,
    /// Where the host writes events.jsonl and its auth-profile store.
    pub dir: PathBuf,
    /// The run's label for events.jsonl lines (the coordination: `none`, `redis`).
    pub label: String,
    /// The Redis key prefix (one per run, so runs sharing a Redis never meet).
    #[serde(default)]
    pub redis_prefix: Option<String>,
}

/// What a host prints when it is done.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct HostDone {
    /// Requests it replayed.
    pub sent: u64,
    /// Of those, failed ones.
    pub failed: u64,
    /// Requests that ended in a user-visible error.
    pub user_errors: u64,
    /// Its coordinator mode at the end (`redis`, `local`, `alone`).
    pub mode: String,
    /// Wall time of its replay, ms.
    pub elapsed_ms: u64,
    /// Its breaker transitions (engine ms since `go`), time-ordered.
    #[serde(default)]
    pub transitions: Vec<crate::scrape::Transition>,
    /// `coordinator_errors_total` over every op.
    #[serde(default)]
    pub coordinator_errors: u64,
    /// Its coordinator mode changes: (engine ms, on the coordinator | fallen back).
    #[serde(default)]
    pub modes: Vec<(u64, HostMode)>,
    /// Its replay schedule lag (send time minus intended time).
    #[serde(default)]
    pub replay: crate::report::model::ReplayInfo,
}

/// Where a coordinated host's breaker decisions are made, as its `CoordinatorMode` events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HostMode {
    /// On the shared coordinator (its mode `redis`, `in_process`).
    Coordinated,
    /// Fallen back to its local breakers (mode `local`: the coordinator is unreachable).
    Local,
}

impl HostMode {
    /// The mode a `CoordinatorMode { mode }` event names.
    pub(crate) fn of(mode: &str) -> Self {
        if mode == "local" {
            Self::Local
        } else {
            Self::Coordinated
        }
    }
}

/// FNV-1a (64 bit): a stable hash for the session split (std's hasher is seeded per process).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Which of `hosts` hosts serves line `i` of the traffic: by its session (every request of
/// a session goes to one host), else by tenant, else round robin by position.
fn host_of(line: &TrafficLine, i: usize, hosts: usize) -> usize {
    let hosts = hosts.max(1);
    match line.session.as_deref().or(line.tenant.as_deref()) {
        Some(key) => (fnv1a(key) % hosts as u64) as usize,
        None => i % hosts,
    }
}

/// Host `index`'s share of `traffic`, in order.
pub(crate) fn share(traffic: &[TrafficLine], index: usize, hosts: usize) -> Vec<TrafficLine> {
    traffic
        .iter()
        .enumerate()
        .filter(|(i, l)| host_of(l, *i, hosts) == index)
        .map(|(_, l)| l.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(session: Option<&str>) -> TrafficLine {
        let mut l = crate::replay::traffic::parse_line(
            r#"{"at_ms":0,"kind":"tool","tool":"crm","body":{},"idempotent":true}"#,
            "t",
            1,
        )
        .unwrap();
        l.session = session.map(str::to_string);
        l
    }

    #[test]
    fn a_session_stays_on_one_host_and_every_line_has_one_host() {
        let t: Vec<TrafficLine> = (0..200)
            .map(|i| line(Some(&format!("s{}", i % 37))))
            .chain((0..30).map(|_| line(None)))
            .collect();
        let shares: Vec<Vec<TrafficLine>> = (0..12).map(|h| share(&t, h, 12)).collect();
        assert_eq!(shares.iter().map(Vec::len).sum::<usize>(), t.len());
        for (i, l) in t.iter().enumerate() {
            if l.session.as_deref() == Some("s5") {
                assert_eq!(host_of(l, i, 12), host_of(&t[5], 5, 12));
            }
        }
        assert!(shares.iter().filter(|s| !s.is_empty()).count() >= 10);
    }

    #[test]
    fn a_host_spec_holds_the_speed_as_a_number_and_a_host_reads_only_a_checked_one() {
        let spec = HostSpec {
            scenario: "s.toml".into(),
            index: 0,
            hosts: 2,
            id: "h0".into(),
            upstream: "127.0.0.1:9".parse().unwrap(),
            redis_url: None,
            speed: crate::util::speed::sp(4.0),
            seed: 1,
            policy: Policy::RetryGate,
            skew_ms: 0,
            dir: "d".into(),
            label: "none".into(),
            redis_prefix: None,
        };
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.contains(r#""speed":4.0,"#), "{json}");
        assert_eq!(serde_json::from_str::<HostSpec>(&json).unwrap(), spec);
        let fast = json.replace(r#""speed":4.0,"#, r#""speed":1000.0,"#);
        let e = serde_json::from_str::<HostSpec>(&fast).unwrap_err().to_string();
        assert!(e.contains("0.01 to 100"), "{e}");
    }
}
