//! The report's `fleet` section: per coordination run, every host's lane and tallies, the
//! fleet-wide probe arrivals at the upstream, and per dep the fleet checks of
//! [`crate::rehearsal::fleet::checks`]. Every time here is scenario time (wall ms × speed), as in the rest of
//! the report.

use std::collections::{BTreeMap, BTreeSet};

use crate::rehearsal::fleet::checks::{
    Agreement, CloseCheck, FleetProbe, Outage, Spacing, Spell, agreement, distinct_before_close,
    fleet_closes, outage, spacing, spells,
};
use crate::rehearsal::fleet::run::FleetRun;
use crate::rehearsal::fleet::spec::{HostDone, HostMode};
use crate::engine::breaker::BreakerConfig;
use crate::scrape::{StatePoint, Transition};
use crate::util::speed::Speed;

pub(crate) use crate::report::fleet_model::{
    CoordinatorUse, DepFleet, FleetRunReport, FleetSection, HostRow, MAX_PROBES_SHOWN,
};

fn lanes(transitions: &[Transition], speed: Speed) -> BTreeMap<String, Vec<StatePoint>> {
    let mut out: BTreeMap<String, Vec<StatePoint>> = BTreeMap::new();
    for t in transitions {
        let lane = out.entry(t.dep.clone()).or_insert_with(|| {
            vec![StatePoint {
                t_ms: 0,
                state: t.from,
            }]
        });
        lane.push(StatePoint {
            t_ms: speed.scenario_ms_u(t.t_ms),
            state: t.to,
        });
    }
    out
}

fn scen_probe(p: &FleetProbe, speed: Speed) -> FleetProbe {
    FleetProbe {
        t_ms: speed.scenario_ms_u(p.t_ms),
        ..p.clone()
    }
}

/// Which coordinator a `coordination` run's hosts used: each host's mode changes (engine ms)
/// and its mode at the end (`redis`, `local`, `alone`); times in scenario ms at `speed`.
fn coordinator_use(
    coordination: &str,
    hosts: &[(&[(u64, HostMode)], &str)],
    speed: Speed,
) -> CoordinatorUse {
    let fell: Vec<u64> = hosts
        .iter()
        .filter_map(|(modes, _)| {
            modes
                .iter()
                .find(|(_, m)| *m == HostMode::Local)
                .map(|(t, _)| *t)
        })
        .collect();
    CoordinatorUse {
        kind: coordination.to_string(),
        hosts_fell_back: fell.len() as u64,
        hosts_local_at_end: hosts.iter().filter(|(_, end)| *end == "local").count() as u64,
        first_fallback_ms: fell.iter().min().map(|&t| speed.scenario_ms_u(t)),
    }
}

/// The section of one run; `cfg` the breakers' configuration, `speed` the run's.
pub(crate) fn run_report(run: &FleetRun, cfg: &BreakerConfig, speed: Speed) -> FleetRunReport {
    let interval = speed.scale(cfg.probe_interval);
    let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
    let open_ms = u64::try_from(speed.scale(cfg.open_for).as_millis())
        .unwrap_or(u64::MAX);
    let per_host: Vec<(String, Vec<Transition>)> = run
        .hosts
        .iter()
        .map(|h| {
            (
                h.id.clone(),
                h.done
                    .as_ref()
                    .map(|d| d.transitions.clone())
                    .unwrap_or_default(),
            )
        })
        .collect();
    let scen = |ms: u64| speed.scenario_ms_u(ms);
    let deps: BTreeSet<String> = run
        .probes
        .iter()
        .map(|p| p.dep.clone())
        .chain(
            per_host
                .iter()
                .flat_map(|(_, t)| t.iter().map(|t| t.dep.clone())),
        )
        .collect();
    // Spells split at half the open time: a re-open waits at least that long.
    let split = (open_ms / 2).max(interval_ms.saturating_mul(2));
    let deps = deps
        .into_iter()
        .map(|dep| {
            let s = spacing(&run.probes, &dep, interval_ms);
            let closes = fleet_closes(&per_host, &dep, interval_ms);
            let checks = distinct_before_close(&run.probes, &dep, &closes, interval_ms);
            let groups = agreement(&per_host, &dep, open_ms.max(interval_ms));
            let max_spread = groups
                .iter()
                .filter(|g| g.hosts > 1)
                .map(|g| scen(g.spread_ms))
                .max();
            DepFleet {
                spacing: Spacing {
                    min_gap_ms: s.min_gap_ms.map(scen),
                    ..s
                },
                spells: spells(&run.probes, &dep, split)
                    .into_iter()
                    .map(|sp| Spell {
                        from_ms: scen(sp.from_ms),
                        to_ms: scen(sp.to_ms),
                        ..sp
                    })
                    .collect(),
                closes: checks
                    .into_iter()
                    .map(|c| CloseCheck {
                        t_ms: scen(c.t_ms),
                        ..c
                    })
                    .collect(),
                agreement: groups
                    .into_iter()
                    .map(|g| Agreement {
                        first_ms: scen(g.first_ms),
                        spread_ms: scen(g.spread_ms),
                        ..g
                    })
                    .collect(),
                max_spread_ms: max_spread,
                dep,
            }
        })
        .collect();
    let hosts = run
        .hosts
        .iter()
        .map(|h| {
            let done = h.done.clone().unwrap_or_default();
            HostRow {
                id: h.id.clone(),
                skew_ms: h.skew_ms,
                sent: done.sent,
                failed: done.failed,
                coordinator_errors: done.coordinator_errors,
                fell_back: done
                    .modes
                    .iter()
                    .filter(|(_, m)| *m == HostMode::Local)
                    .count() as u64,
                mode: if done.mode.is_empty() {
                    "unknown".into()
                } else {
                    done.mode.clone()
                },
                transitions: done.transitions.len() as u64,
                lag_p99_ms: crate::util::round::round3(done.replay.lag_ms.p99),
                scrapes_ok: h.scrapes.ok,
                scrape_failures: h.scrapes.failures,
                exit: h.exit.clone(),
                lanes: lanes(&done.transitions, speed),
            }
        })
        .collect();
    let modes: Vec<(String, Vec<(u64, HostMode)>)> = run
        .hosts
        .iter()
        .map(|h| {
            (
                h.id.clone(),
                h.done.as_ref().map(|d| d.modes.clone()).unwrap_or_default(),
            )
        })
        .collect();
    let outages = run
        .outages
        .iter()
        .map(|&(down, up)| {
            let o = outage(down, up, &modes, &run.probes, interval_ms);
            Outage {
                down_ms: scen(o.down_ms),
                up_ms: o.up_ms.map(scen),
                rejoin_ms: o.rejoin_ms.map(scen),
                ..o
            }
        })
        .collect();
    let mut probes: Vec<FleetProbe> = run.probes.iter().map(|p| scen_probe(p, speed)).collect();
    probes.sort_by_key(|p| p.t_ms);
    let dropped = probes.len().saturating_sub(MAX_PROBES_SHOWN) as u64;
    probes.truncate(MAX_PROBES_SHOWN);
    let dones: Vec<HostDone> = run
        .hosts
        .iter()
        .map(|h| h.done.clone().unwrap_or_default())
        .collect();
    let used: Vec<(&[(u64, HostMode)], &str)> = dones
        .iter()
        .map(|d| (&d.modes[..], d.mode.as_str()))
        .collect();
    FleetRunReport {
        coordination: run.coordination.as_str().to_string(),
        coordinator: run.coordinator.clone(),
        coordinator_used: coordinator_use(run.coordination.as_str(), &used, speed),
        coordinator_faults: run
            .coordinator_log
            .iter()
            .map(|(t, w)| (scen(*t), w.clone()))
            .collect(),
        hosts,
        probes,
        probes_dropped: dropped,
        deps,
        outages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coordinator_use_says_which_hosts_fell_back_when_and_who_stayed_local() {
        let on = [(0, HostMode::Coordinated)];
        let fell = [(0, HostMode::Coordinated), (5_000, HostMode::Local), (8_000, HostMode::Coordinated)];
        let stuck = [(3_000, HostMode::Local)];
        let hosts: Vec<(&[(u64, HostMode)], &str)> =
            vec![(&on[..], "redis"), (&fell[..], "redis"), (&stuck[..], "local")];
        let u = coordinator_use("redis", &hosts, crate::util::speed::sp(2.0));
        assert_eq!(u.kind, "redis");
        assert_eq!((u.hosts_fell_back, u.hosts_local_at_end), (2, 1));
        assert_eq!(u.first_fallback_ms, Some(6_000), "scenario ms at speed 2");
        let alone: Vec<(&[(u64, HostMode)], &str)> = vec![(&[][..], "alone"); 3];
        let u = coordinator_use("none", &alone, Speed::ONE);
        assert_eq!((u.hosts_fell_back, u.hosts_local_at_end, u.first_fallback_ms), (0, 0, None));
    }
}
