//! The report's `fleet` section as report.json holds it: per coordination run, every host's
//! row, the fleet-wide probe arrivals at the upstream, per dep the fleet checks, and each
//! coordinator outage. Part of the report model (the fleet run computes it);
//! every time here is scenario time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::BreakerState;
use crate::scrape::StatePoint;

/// Probe arrivals kept in the report per run (all of them are in upstream.jsonl).
pub(crate) const MAX_PROBES_SHOWN: usize = 5000;

/// One probe as the upstream saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetProbe {
    /// Arrival, ms since the run start.
    pub t_ms: u64,
    /// The dep (`X-Breaker-Probe`).
    pub dep: String,
    /// The host that sent it (`X-Rehearse-Host`; empty if none).
    pub host: String,
    /// True when the upstream answered it without a fault.
    pub ok: bool,
}

/// Probe spacing of one dep over all hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spacing {
    /// Probes that arrived.
    pub probes: u64,
    /// The smallest gap between two consecutive arrivals (`None`: fewer than two).
    pub min_gap_ms: Option<u64>,
    /// Consecutive arrivals closer than one probe interval.
    pub gaps_under_interval: u64,
    /// The most arrivals inside any window one probe interval long (1 = perfectly paced).
    pub max_in_interval: u64,
    /// The largest number of arrivals one host sent inside any window one interval long.
    pub max_per_host_in_interval: u64,
}

/// A burst of probes: arrivals no more than `split_ms` apart (a half-open spell; the next one
/// comes after an open time at least that long).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spell {
    /// First probe.
    pub from_ms: u64,
    /// Last probe.
    pub to_ms: u64,
    /// Probes in it.
    pub probes: u64,
    /// Distinct hosts that sent them.
    pub hosts: u64,
}

/// One close of a dep by the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloseCheck {
    /// When the first host closed it.
    pub t_ms: u64,
    /// The distinct hosts whose probes succeeded since the last failed probe before it.
    pub ok_hosts: Vec<String>,
}

/// How far apart the hosts entered one state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agreement {
    /// The state entered.
    pub to: BreakerState,
    /// The first host's entry, ms.
    pub first_ms: u64,
    /// The last host's entry minus the first's, ms.
    pub spread_ms: u64,
    /// Hosts that entered it within the window.
    pub hosts: u64,
}

/// One coordinator outage as the fleet lived it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outage {
    /// When the coordinator went away (ms).
    pub down_ms: u64,
    /// When it was back (ms; `None`: not within the run).
    pub up_ms: Option<u64>,
    /// Hosts that fell back to their local breakers meanwhile.
    pub hosts_fell_back: u64,
    /// Hosts that were back on the coordinator after `up_ms`.
    pub hosts_rejoined: u64,
    /// The last host's rejoin after `up_ms`, ms (`None`: some host never rejoined).
    pub rejoin_ms: Option<u64>,
    /// Probes at the upstream from `down_ms` to the last rejoin.
    pub probes: u64,
    /// The most probes one host sent inside one probe interval in that time.
    pub max_per_host_in_interval: u64,
}

/// `report.json` → `fleet`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetSection {
    /// Hosts per run.
    pub hosts: usize,
    /// `[fleet] clock_skew`, ms (host i's offset is spread over ±it).
    pub clock_skew_ms: Option<u64>,
    /// The breakers' probe interval, ms.
    pub probe_interval_ms: u64,
    /// One per coordination, in run order.
    pub runs: Vec<FleetRunReport>,
}

/// One coordination run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetRunReport {
    /// `none` or `redis`.
    pub coordination: String,
    /// Where the coordinator was.
    pub coordinator: Option<String>,
    /// Which coordinator the hosts actually used: every host on it, or some fallen back to
    /// their local breakers (and when).
    #[serde(default)]
    pub coordinator_used: CoordinatorUse,
    /// Coordinator faults as applied: `(t_ms, what)`.
    pub coordinator_faults: Vec<(u64, String)>,
    /// Per host.
    pub hosts: Vec<HostRow>,
    /// Fleet-wide probe arrivals at the upstream (the first [`MAX_PROBES_SHOWN`]).
    pub probes: Vec<FleetProbe>,
    /// Probe arrivals left out of `probes`.
    pub probes_dropped: u64,
    /// Per dep that saw probes or transitions.
    pub deps: Vec<DepFleet>,
    /// Each coordinator outage (`down` fault): fallbacks, rejoin, probes meanwhile.
    pub outages: Vec<Outage>,
}

/// Which coordinator a run's hosts actually used, from their `coordinator_mode` changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordinatorUse {
    /// `none` (every host decided alone) or `redis` (the shared Redis, local fallback aside).
    pub kind: String,
    /// Hosts that fell back to their local breakers at some time in the run.
    pub hosts_fell_back: u64,
    /// Hosts still on their local breakers at the end.
    pub hosts_local_at_end: u64,
    /// When the first host fell back, ms (`None`: none did).
    pub first_fallback_ms: Option<u64>,
}

/// One host of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRow {
    /// `h0`, ...
    pub id: String,
    /// Its wall-clock offset, ms.
    pub skew_ms: i64,
    /// Requests it replayed.
    pub sent: u64,
    /// Of those, failed.
    pub failed: u64,
    /// Coordinator calls that failed (it fell back to its local breaker for them).
    pub coordinator_errors: u64,
    /// Times it switched to its local breakers (`coordinator_mode{mode="local"}`).
    pub fell_back: u64,
    /// Its coordinator mode at the end (`redis`, `local`, `alone`).
    pub mode: String,
    /// Its breaker transitions (from its events).
    pub transitions: u64,
    /// Its replay schedule lag p99, ms (send time minus intended time).
    #[serde(default)]
    pub lag_p99_ms: f64,
    /// Scrapes of its `/metrics` that worked / failed.
    pub scrapes_ok: u64,
    /// Failed scrapes.
    pub scrape_failures: u64,
    /// How it ended when not cleanly.
    pub exit: Option<String>,
    /// Its breaker lanes: per dep, the state from each transition on.
    pub lanes: BTreeMap<String, Vec<StatePoint>>,
}

/// The fleet checks of one dep in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepFleet {
    /// The dep.
    pub dep: String,
    /// Probe spacing over all hosts (gaps in scenario ms).
    pub spacing: Spacing,
    /// Half-open spells as the upstream saw them.
    pub spells: Vec<Spell>,
    /// Each fleet close, with the hosts whose probes succeeded before it.
    pub closes: Vec<CloseCheck>,
    /// Hosts entering the same state, grouped (each group within one open time).
    pub agreement: Vec<Agreement>,
    /// The largest spread of a group that more than one host entered, ms.
    pub max_spread_ms: Option<u64>,
}
