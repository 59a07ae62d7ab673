//! The fleet's own checks, pure (arrivals and transitions in, figures out): probe spacing from
//! the upstream's arrivals across all hosts, probes per half-open spell, the distinct hosts
//! whose probes succeeded before each close, and how far apart the hosts entered the same state.
//! All times are ms since the run start on the harness's clock (the upstream's arrivals; each
//! host's transitions are since the run's `go` too). Over 400 lines: the five checks share
//! their helpers and are tested together.
//!
//! Longer than 400 lines on purpose: every fleet check folds the same arrivals and transitions, and
//! their unit tests (the last third of the file) sit with them.

use std::collections::{BTreeMap, BTreeSet};

use crate::rehearsal::fleet::spec::HostMode;
use crate::engine::BreakerState;
pub(crate) use crate::report::fleet_model::{Agreement, CloseCheck, FleetProbe, Outage, Spacing, Spell};
use crate::scrape::Transition;

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
pub(crate) fn spacing(probes: &[FleetProbe], dep: &str, interval_ms: u64) -> Spacing {
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

/// `dep`'s half-open spells as the upstream saw them (gaps over `split_ms` start a new one).
pub(crate) fn spells(probes: &[FleetProbe], dep: &str, split_ms: u64) -> Vec<Spell> {
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

/// The first close of each outage: the earliest `half_open → closed` of any host, ignoring
/// the other hosts' closes within `merge_ms` after it.
pub(crate) fn fleet_closes(hosts: &[(String, Vec<Transition>)], dep: &str, merge_ms: u64) -> Vec<u64> {
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
pub(crate) fn distinct_before_close(
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

/// Groups every host's entries into `dep`'s `to` states: entries within `window_ms` of a
/// group's first entry join it (each host once); the spread of each group.
pub(crate) fn agreement(hosts: &[(String, Vec<Transition>)], dep: &str, window_ms: u64) -> Vec<Agreement> {
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

/// The outage `[down_ms, up_ms)` from every host's mode changes and the probes; `interval_ms`
/// the probe interval.
pub(crate) fn outage(
    down_ms: u64,
    up_ms: Option<u64>,
    modes: &[(String, Vec<(u64, HostMode)>)],
    probes: &[FleetProbe],
    interval_ms: u64,
) -> Outage {
    let fell_back = modes
        .iter()
        .filter(|(_, m)| {
            m.iter().any(|(t, mode)| {
                *mode == HostMode::Local && *t >= down_ms && up_ms.is_none_or(|u| *t <= u)
            })
        })
        .count() as u64;
    let rejoins: Vec<Option<u64>> = up_ms.map_or_else(Vec::new, |up| {
        modes
            .iter()
            .map(|(_, m)| {
                // The host's mode at `up`: rejoined at once if it never left.
                let before = m.iter().rev().find(|(t, _)| *t < up).map(|(_, x)| *x);
                if before != Some(HostMode::Local) {
                    return Some(0);
                }
                m.iter()
                    .find(|(t, mode)| *t >= up && *mode != HostMode::Local)
                    .map(|(t, _)| t - up)
            })
            .collect()
    });
    let rejoin_ms = if up_ms.is_some() && rejoins.iter().all(Option::is_some) {
        rejoins.iter().flatten().copied().max()
    } else {
        None
    };
    let until = match (up_ms, rejoin_ms) {
        (Some(u), Some(r)) => u + r,
        _ => u64::MAX,
    };
    let during: Vec<FleetProbe> = probes
        .iter()
        .filter(|p| p.t_ms >= down_ms && p.t_ms <= until)
        .cloned()
        .collect();
    let deps: BTreeSet<&str> = during.iter().map(|p| p.dep.as_str()).collect();
    let per_host = deps
        .iter()
        .map(|d| spacing(&during, d, interval_ms).max_per_host_in_interval)
        .max()
        .unwrap_or(0);
    Outage {
        down_ms,
        up_ms,
        hosts_fell_back: fell_back,
        hosts_rejoined: rejoins.iter().filter(|r| r.is_some()).count() as u64,
        rejoin_ms,
        probes: during.len() as u64,
        max_per_host_in_interval: per_host,
    }
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
            reason: None,
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
    fn an_outage_counts_fallbacks_rejoin_lag_and_probes_per_host() {
        let m = |v: &[(u64, &str)]| {
            v.iter()
                .map(|(t, s)| (*t, HostMode::of(s)))
                .collect::<Vec<_>>()
        };
        let modes = vec![
            (
                "h0".to_string(),
                m(&[(0, "redis"), (1010, "local"), (3020, "redis")]),
            ),
            (
                "h1".to_string(),
                m(&[(0, "redis"), (1200, "local"), (3090, "redis")]),
            ),
            ("h2".to_string(), m(&[(0, "redis")])),
        ];
        let probes = vec![
            p(1500, "h0", false),
            p(1600, "h1", false),
            p(1800, "h0", false),
        ];
        let o = outage(1000, Some(3000), &modes, &probes, 250);
        assert_eq!(
            (o.hosts_fell_back, o.hosts_rejoined, o.rejoin_ms),
            (2, 3, Some(90))
        );
        assert_eq!((o.probes, o.max_per_host_in_interval), (3, 1));
        let never = vec![("h0".to_string(), m(&[(0, "redis"), (1010, "local")]))];
        let o = outage(1000, Some(3000), &never, &probes, 250);
        assert_eq!((o.hosts_rejoined, o.rejoin_ms), (0, None));
        let storm = vec![p(1500, "h0", false), p(1600, "h0", false)];
        assert_eq!(
            outage(1000, None, &modes, &storm, 250).max_per_host_in_interval,
            2
        );
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
