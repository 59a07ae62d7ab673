//! A fleet scenario: every coordination run in order, each one [`Observation`] named after its
//! coordination (`none`, `redis`), and the `fleet` section as the kind's part of the report.
//! An observation's scrapes, breaker lanes and transitions are host `h0`'s (every host's lanes
//! are in the fleet section), and every other host's transitions go with them, since
//! `[[expect.transition]]` / `[[expect.no_transition]]` must hold on every host;
//! `[[expect.metric]]` and the section's counters read every host's final scrape merged; probe
//! arrivals, so `[[expect.probe_spacing]]`, are fleet-wide, and so is the upstream's record
//! (every host's model requests); the `[[expect.fleet]]` rows are judged here, from the fleet
//! section, and handed over with the rest.

use std::path::Path;

use crate::rehearsal::fleet::run::{FleetRun, run_coordination};
use crate::rehearsal::fleet::report::{FleetSection, run_report};
use crate::report::fleet_model::FleetRunReport;
use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::observation::{EngineObserved, KindPart, Observation, Observed};
use crate::rehearsal::plan::ScenarioPlan;
use crate::scenario::fleet::Coordination;
use crate::scrape::Exposition;
use crate::util::shutdown::Shutdown;

/// What one coordination run observed: h0's scrapes and transitions, every other host's
/// transitions, every host's final scrape merged, the fleet-wide upstream record and probes,
/// and the `[[expect.fleet]]` rows judged over `fr`, the run's fleet section.
fn observation(plan: &ScenarioPlan, run: FleetRun, fr: &FleetRunReport) -> Observation {
    let file = &plan.checked.file;
    let name = run.coordination.as_str();
    let finals: Vec<&Exposition> = run
        .hosts
        .iter()
        .filter_map(|h| h.scrapes.last_parsed())
        .collect();
    let merged = fleet_exposition(&finals);
    let sum = |f: fn(&crate::rehearsal::fleet::spec::HostDone) -> u64| {
        run.hosts
            .iter()
            .filter_map(|h| h.done.as_ref())
            .map(f)
            .sum::<u64>()
    };
    // The fleet rows' figures cover the run up to its stop (wall ms; the rows say it in
    // scenario time).
    let stop = (run.stopped.as_ref().map(|_| run.elapsed_ms), plan.speed);
    let kind_rows = file
        .expect_for(name)
        .fleet
        .iter()
        .flat_map(|e| {
            let dep = fr.deps.iter().find(|d| d.dep == e.dep);
            crate::rehearsal::fleet::expect::check(e, dep, &fr.outages, stop)
        })
        .collect();
    // The slowest host's lag: a fleet is as late as its latest host.
    let replay = crate::report::model::ReplayInfo::combine(
        &run.hosts
            .iter()
            .filter_map(|h| h.done.as_ref().map(|d| d.replay))
            .collect::<Vec<_>>(),
    );
    let failed_requests = sum(|d| d.failed);
    let user_visible_errors = sum(|d| d.user_errors);
    let mut hosts = run.hosts.into_iter();
    let h0 = hosts.next();
    let other_hosts = hosts
        .filter_map(|h| h.done.map(|d| (h.id, d.transitions)))
        .collect();
    let (scrapes, transitions) = match h0 {
        Some(h) => (h.scrapes, h.done.map(|d| d.transitions).unwrap_or_default()),
        None => (crate::scrape::CompactScrapes::new(0.0), Vec::new()),
    };
    Observation {
        arm: name.to_string(),
        elapsed_ms: run.elapsed_ms,
        speed: plan.speed,
        scrape_interval_ms: run.scrape_interval_ms,
        scrapes,
        final_exposition: Some(merged),
        engine: Some(EngineObserved {
            transitions,
            other_hosts,
            ..EngineObserved::default()
        }),
        arrivals: run.arrivals,
        fault_hits: run.fault_hits.snapshot(),
        replay,
        failed_requests,
        user_visible_errors,
        canaries: Default::default(),
        upstream: run.upstream_records,
        gateway: None,
        client_turns: None,
        kind_rows,
        read_failures: None,
        stopped: run.stopped,
        failed: None,
        alerts: None,
    }
}

/// Every host's final scrape as one exposition: each family's samples from all hosts, so a
/// selector's sum (what `[[expect.metric]]` and the report's counters read) is the fleet's.
fn fleet_exposition(finals: &[&Exposition]) -> Exposition {
    let mut out = Exposition::default();
    for e in finals {
        for f in &e.families {
            match out.families.iter_mut().find(|g| g.name == f.name) {
                Some(g) => g.samples.extend(f.samples.iter().cloned()),
                None => out.families.push(f.clone()),
            }
        }
    }
    out
}

/// Why a run's hosts make it a harness failure: one that never said `done` or exited badly.
fn host_failure(run: &FleetRun) -> Option<String> {
    run.hosts
        .iter()
        .find(|h| h.done.is_none() || h.exit.is_some())
        .map(|h| {
            format!(
                "{}: host {} {}",
                run.coordination.as_str(),
                h.id,
                h.exit.as_deref().unwrap_or("never reported done")
            )
        })
}

/// Why the run is refused before any coordination run starts: a `[coordinator] url` Redis that
/// does not answer `PING` (a `redis` run would silently be N hosts deciding alone).
async fn preflight(file: &crate::scenario::ScenarioFile) -> Option<String> {
    if !file.fleet.coordination.contains(&Coordination::Redis) {
        return None;
    }
    let url = file.coordinator.as_ref()?.url.as_deref()?;
    crate::rehearsal::fleet::coordinator_check::check_url(url)
        .await
        .err()
        .map(|e| e.to_string())
}

/// Runs every coordination of `sp` into `dir`; what they observed.
pub async fn run_fleet_scenario(
    sp: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
) -> Observed {
    let host = crate::host::fingerprint();
    let started_at = crate::report::rfc3339(std::time::SystemTime::now());
    let contradictions = crate::rehearsal::contradictions::check(sp, &host);
    let file = &sp.checked.file;
    let mut runs = Vec::new();
    let mut error = preflight(file).await;
    for &c in &file.fleet.coordination {
        if stop.reason().is_some() || error.is_some() {
            break;
        }
        match run_coordination(sp, c, dir, files, stop).await {
            Ok(run) => {
                error = host_failure(&run);
                runs.push(run);
            }
            Err(e) => error = Some(format!("{}: {e}", c.as_str())),
        }
    }
    let fleet_runs: Vec<FleetRunReport> = runs
        .iter()
        .map(|r| run_report(r, &file.engine.breaker, sp.speed))
        .collect();
    let observations = runs
        .into_iter()
        .zip(&fleet_runs)
        .map(|(r, fr)| observation(sp, r, fr))
        .collect();
    Observed {
        arm: "coordination",
        arms: file
            .fleet
            .coordination
            .iter()
            .map(|c| c.as_str().to_string())
            .collect(),
        observations,
        error,
        started_at,
        host: serde_json::to_value(&host).unwrap_or_default(),
        contradictions,
        speed: sp.speed,
        part: KindPart::Fleet(FleetSection {
            hosts: file.fleet.hosts,
            clock_skew_ms: file
                .fleet
                .clock_skew
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            probe_interval_ms: u64::try_from(file.engine.breaker.probe_interval.as_millis())
                .unwrap_or(u64::MAX),
            runs: fleet_runs,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::build::{PolicyInput, build_policy};
    use crate::scrape::CompactScrapes;
    use crate::verdict::ExpectStatus;
    use std::collections::BTreeMap;

    #[test]
    fn the_fleet_exposition_sums_a_counter_over_every_host() {
        let a = crate::scrape::parse(
            "# TYPE requests_total counter\nrequests_total{dep=\"x\",outcome=\"ok\"} 3\n",
        )
        .unwrap();
        let b = crate::scrape::parse(
            "# TYPE requests_total counter\nrequests_total{dep=\"x\",outcome=\"ok\"} 4\n\
             # TYPE profile_rotations_total counter\nprofile_rotations_total{provider=\"p\",reason=\"timeout\"} 2\n",
        )
        .unwrap();
        let m = fleet_exposition(&[&a, &b]);
        let s = crate::report::build::summary_from(&m);
        assert_eq!(s.outcomes_by_dep["x"]["ok"], 7);
        assert_eq!(s.rotations, 2);
    }

    #[test]
    fn the_fleet_metric_rows_are_judged_once_on_every_hosts_final_scrape() {
        let a = crate::scrape::parse(
            "# TYPE requests_total counter\nrequests_total{dep=\"x\",outcome=\"ok\"} 3\n",
        )
        .unwrap();
        let b = crate::scrape::parse(
            "# TYPE requests_total counter\nrequests_total{dep=\"x\",outcome=\"ok\"} 4\n",
        )
        .unwrap();
        let merged = fleet_exposition(&[&a, &b]);
        let expect: crate::verdict::Expectations =
            toml::from_str("[[metric]]\nseries = \"requests_total\"\nat_least = 5\n").unwrap();
        // h0's own scrapes hold nothing: only the merged exposition can settle the row.
        let h0 = CompactScrapes::new(0.0);
        let section = build_policy(PolicyInput {
            policy: "none",
            expect: &expect,
            scrapes: &h0,
            events: Some(&[]),
            scrape_interval_ms: 1000,
            arrivals: &[],
            speed: crate::util::speed::Speed::ONE,
            fault_windows: Vec::new(),
            latency: BTreeMap::new(),
            marks: Default::default(),
            replay: None,
            failed_requests: Some(0),
            user_visible_errors: Some(0),
            elapsed_ms: 10_000,
            canaries: BTreeMap::new(),
            stopped_at_ms: None,
            final_exposition: Some(&merged),
            engine_catalogue: true,
            faults: None,
        });
        let rows: Vec<_> = section
            .expectations
            .iter()
            .filter(|e| e.kind == crate::verdict::ExpectKind::Metric)
            .collect();
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
        assert!(rows[0].observed.contains('7'), "{}", rows[0].observed);
        assert_eq!(section.summary.outcomes_by_dep["x"]["ok"], 7);
    }
}
