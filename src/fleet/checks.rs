//! The fleet's own checks, pure (arrivals and transitions in, figures out): probe spacing from
//! the upstream's arrivals across all hosts, probes per half-open spell, the distinct hosts
//! whose probes succeeded before each close, and how far apart the hosts entered the same state.
//! All times are ms since the run start on the harness's clock (the upstream's arrivals; each
//! host's transitions are since its `go`, the same moment within a few ms).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::engine::BreakerState;
use crate::scrape::Transition;

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

fn times<'a>(probes: &'a [FleetProbe], dep: &'a str) -> impl Iterator<Item = &'a FleetProbe> {
    probes.iter().filter(move |p| p.dep == dep)
}

/// Most of `ts` (sorted) inside any half-open window `[t, t + width)`.
fn max_in_window(ts: &[u64], width: u64) -> u64 {
    let mut best = 0;
    let mut lo = 0;
    for hi in 0..ts.len() {
        while ts[hi].saturating_sub(ts[lo]) >= width {
            lo += 1;
        }
        best = best.max(hi + 1 - lo);
    }
    best as u64
}

/// Spacing of `dep`'s probes; `interval_ms` is the probe interval at the run's speed.
pub fn spacing(probes: &[FleetProbe], dep: &str, interval_ms: u64) -> Spacing {
    let mut ts: Vec<u64> = times(probes, dep).map(|p| p.t_ms).collect();
    ts.sort_unstable();
    let gaps: Vec<u64> = ts.windows(2).map(|w| w[1] - w[0]).collect();
    let mut per_host: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for p in times(probes, dep) {
        per_host.entry(&p.host).or_default().push(p.t_ms);
    }
    let max_per_host = per_host
        .values_mut()
        .map(|v| {
            v.sort_unstable();
            max_in_window(v, interval_ms.max(1))
        })
        .max()
        .unwrap_or(0);
    Spacing {
        probes: ts.len() as u64,
        min_gap_ms: gaps.iter().copied().min(),
        gaps_under_interval: gaps.iter().filter(|&&g| g < interval_ms).count() as u64,
        max_in_interval: max_in_window(&ts, interval_ms.max(1)),
        max_per_host_in_interval: max_per_host,
    }
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

/// `dep`'s half-open spells as the upstream saw them (gaps over `split_ms` start a new one).
pub fn spells(probes: &[FleetProbe], dep: &str, split_ms: u64) -> Vec<Spell> {
    let mut ps: Vec<&FleetProbe> = times(probes, dep).collect();
    ps.sort_by_key(|p| p.t_ms);
    let mut out: Vec<(Spell, BTreeSet<&str>)> = Vec::new();
    for p in ps {
        match out.last_mut() {
            Some((s, hosts)) if p.t_ms.saturating_sub(s.to_ms) <= split_ms => {
                s.to_ms = p.t_ms;
                s.probes += 1;
                hosts.insert(&p.host);
            }
            _ => out.push((
                Spell {
                    from_ms: p.t_ms,
                    to_ms: p.t_ms,
                    probes: 1,
                    hosts: 0,
                },
                BTreeSet::from([p.host.as_str()]),
            )),
        }
    }
    out.into_iter()
        .map(|(mut s, h)| {
            s.hosts = h.len() as u64;
            s
        })
        .collect()
}

/// One close of a dep by the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloseCheck {
    /// When the first host closed it.
    pub t_ms: u64,
    /// The distinct hosts whose probes succeeded since the last failed probe before it.
    pub ok_hosts: Vec<String>,
}

/// The first close of each outage: the earliest `half_open → closed` of any host, ignoring
/// the other hosts' closes within `merge_ms` after it.
pub fn fleet_closes(hosts: &[(String, Vec<Transition>)], dep: &str, merge_ms: u64) -> Vec<u64> {
    let mut ts: Vec<u64> = hosts
        .iter()
        .flat_map(|(_, tr)| tr.iter())
        .filter(|t| t.dep == dep && t.to == BreakerState::Closed)
        .map(|t| t.t_ms)
        .collect();
    ts.sort_unstable();
    let mut out: Vec<u64> = Vec::new();
    for t in ts {
        if out.last().is_none_or(|&l| t > l + merge_ms) {
            out.push(t);
        }
    }
    out
}

/// For each close in `closes`, the hosts whose probes succeeded between the last failed probe
/// before it and the close (`slack_ms` later, for a probe answered just before the close that
/// arrived a moment before it was recorded).
pub fn distinct_before_close(
    probes: &[FleetProbe],
    dep: &str,
    closes: &[u64],
    slack_ms: u64,
) -> Vec<CloseCheck> {
    let mut ps: Vec<&FleetProbe> = times(probes, dep).collect();
    ps.sort_by_key(|p| p.t_ms);
    closes
        .iter()
        .map(|&c| {
            let before: Vec<&&FleetProbe> = ps.iter().filter(|p| p.t_ms <= c + slack_ms).collect();
            let since = before.iter().rposition(|p| !p.ok).map_or(0, |i| i + 1);
            let mut hosts: Vec<String> = Vec::new();
            for p in &before[since..] {
                if !hosts.contains(&p.host) {
                    hosts.push(p.host.clone());
                }
            }
            CloseCheck {
                t_ms: c,
                ok_hosts: hosts,
            }
        })
        .collect()
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

/// Groups every host's entries into `dep`'s `to` states: entries within `window_ms` of a
/// group's first entry join it (each host once); the spread of each group.
pub fn agreement(hosts: &[(String, Vec<Transition>)], dep: &str, window_ms: u64) -> Vec<Agreement> {
    let mut all: Vec<(u64, BreakerState, &str)> = hosts
        .iter()
        .flat_map(|(h, tr)| {
            tr.iter()
                .filter(|t| t.dep == dep)
                .map(move |t| (t.t_ms, t.to, h.as_str()))
        })
        .collect();
    all.sort_by_key(|a| a.0);
    let mut groups: Vec<(Agreement, BTreeSet<&str>)> = Vec::new();
    for (t, to, h) in all {
        let joined = groups
            .iter_mut()
            .rev()
            .find(|(g, seen)| g.to == to && t <= g.first_ms + window_ms && !seen.contains(h));
        match joined {
            Some((g, seen)) => {
                seen.insert(h);
                g.spread_ms = t - g.first_ms;
                g.hosts += 1;
            }
            None => groups.push((
                Agreement {
                    to,
                    first_ms: t,
                    spread_ms: 0,
                    hosts: 1,
                },
                BTreeSet::from([h]),
            )),
        }
    }
    groups.into_iter().map(|(g, _)| g).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scrape::Timing;

    fn p(t_ms: u64, host: &str, ok: bool) -> FleetProbe {
        FleetProbe {
            t_ms,
            dep: "crm".into(),
            host: host.into(),
            ok,
        }
    }

    fn tr(t_ms: u64, to: BreakerState) -> Transition {
        Transition {
            dep: "crm".into(),
            from: BreakerState::HalfOpen,
            to,
            t_ms,
            timing: Timing::Event,
        }
    }

    #[test]
    fn a_storm_shows_many_probes_in_one_interval_and_paced_probes_do_not() {
        let storm: Vec<FleetProbe> = (0..12)
            .map(|i| p(1000 + i * 3, &format!("h{i}"), false))
            .collect();
        let s = spacing(&storm, "crm", 250);
        assert_eq!(s.probes, 12);
        assert_eq!(s.min_gap_ms, Some(3));
        assert_eq!(s.max_in_interval, 12);
        assert_eq!(s.gaps_under_interval, 11);
        assert_eq!(s.max_per_host_in_interval, 1);
        let paced: Vec<FleetProbe> = (0..6)
            .map(|i| p(i * 260, &format!("h{}", i % 3), false))
            .collect();
        let s = spacing(&paced, "crm", 250);
        assert_eq!(
            (s.min_gap_ms, s.max_in_interval, s.gaps_under_interval),
            (Some(260), 1, 0)
        );
        assert_eq!(spacing(&[], "crm", 250).min_gap_ms, None);
        assert_eq!(spacing(&paced, "other", 250).probes, 0);
    }

    #[test]
    fn spells_split_on_long_gaps_and_count_hosts() {
        let ps = vec![
            p(0, "h0", false),
            p(10, "h1", false),
            p(5000, "h2", true),
            p(5300, "h2", true),
        ];
        let s = spells(&ps, "crm", 1000);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].probes, s[0].hosts, s[0].to_ms), (2, 2, 10));
        assert_eq!((s[1].probes, s[1].hosts, s[1].from_ms), (2, 1, 5000));
    }

    #[test]
    fn close_counts_only_successes_after_the_last_failure() {
        let ps = vec![
            p(0, "h0", true),
            p(300, "h1", false),
            p(600, "h2", true),
            p(900, "h3", true),
            p(5000, "h4", true),
        ];
        let c = distinct_before_close(&ps, "crm", &[950], 0);
        assert_eq!(c[0].ok_hosts, vec!["h2".to_string(), "h3".to_string()]);
        let c = distinct_before_close(&ps, "crm", &[610], 0);
        assert_eq!(c[0].ok_hosts, vec!["h2".to_string()]);
    }

    #[test]
    fn closes_merge_and_agreement_measures_the_spread() {
        let hosts = vec![
            (
                "h0".to_string(),
                vec![tr(100, BreakerState::Open), tr(2000, BreakerState::Closed)],
            ),
            (
                "h1".to_string(),
                vec![tr(120, BreakerState::Open), tr(2030, BreakerState::Closed)],
            ),
            (
                "h2".to_string(),
                vec![tr(900, BreakerState::Open), tr(9000, BreakerState::Closed)],
            ),
        ];
        assert_eq!(fleet_closes(&hosts, "crm", 250), vec![2000, 9000]);
        let a = agreement(&hosts, "crm", 250);
        let open = &a[0];
        assert_eq!(
            (open.to, open.first_ms, open.spread_ms, open.hosts),
            (BreakerState::Open, 100, 20, 2)
        );
        assert_eq!(a.iter().filter(|g| g.to == BreakerState::Closed).count(), 2);
        assert_eq!(a.iter().map(|g| g.spread_ms).max(), Some(30));
    }
}
