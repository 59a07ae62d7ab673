//! A fleet scenario: every coordination run in order, each turned into a report section the
//! way a policy run is (named after its coordination: `none`, `redis`) plus the `fleet`
//! section. The sections' breaker lanes and transitions are host `h0`'s (every host's lanes
//! are in the fleet section), but `[[expect.transition]]` / `[[expect.no_transition]]` must
//! hold on every host, and `[[expect.metric]]` and the section's counters read every host's
//! final scrape summed; probe arrivals, so `[[expect.probe_spacing]]`, are fleet-wide, and
//! so are the expectations judged at the upstream (`[[expect.attempts]]`, ...): every host's
//! model requests.

use std::collections::BTreeMap;
use std::path::Path;

use super::run::{FleetRun, run_coordination};
use super::section::{FleetSection, run_report};
use crate::report::build::{PolicyRun as BuildInput, build_policy};
use crate::report::judge::{Ending, judge, settle};
use crate::report::model::{PolicyReport, Report};
use crate::run::assemble::{ReportContext, judge_at_upstream, report};
use crate::run::fault_scope::fault_windows;
use crate::run::harness::RunFiles;
use crate::run::plan::ScenarioPlan;
use crate::scrape::{CompactScrapes, Exposition, Transition};
use crate::util::shutdown::Shutdown;

/// A coordination run's section: h0's lanes and transitions; the metric rows and counters read
/// `merged`, every host's final scrape.
fn policy_report(plan: &ScenarioPlan, run: &FleetRun, merged: &Exposition) -> PolicyReport {
    let file = &plan.checked.file;
    let empty = CompactScrapes::new(0.0);
    let h0 = run.hosts.first();
    let transitions = h0
        .and_then(|h| h.done.as_ref())
        .map(|d| d.transitions.clone())
        .unwrap_or_default();
    let sum = |f: fn(&super::spec::HostDone) -> u64| {
        run.hosts
            .iter()
            .filter_map(|h| h.done.as_ref())
            .map(f)
            .sum::<u64>()
    };
    build_policy(BuildInput {
        policy: run.coordination.as_str(),
        expect: &file.expect,
        scrapes: h0.map_or(&empty, |h| &h.scrapes),
        events: Some(&transitions),
        scrape_interval_ms: run.scrape_interval_ms,
        arrivals: &run.arrivals,
        speed: plan.speed.get(),
        fault_windows: fault_windows(&file.fault, &file.profile, run.fault_hits.snapshot()),
        latency: BTreeMap::new(),
        marks: Default::default(),
        // The slowest host's lag: a fleet is as late as its latest host.
        replay: Some(crate::report::model::ReplayInfo::combine(
            &run.hosts
                .iter()
                .filter_map(|h| h.done.as_ref().map(|d| d.replay))
                .collect::<Vec<_>>(),
        )),
        failed_requests: Some(sum(|d| d.failed)),
        user_visible_errors: Some(sum(|d| d.user_errors)),
        elapsed_ms: run.elapsed_ms,
        canaries: BTreeMap::new(),
        stopped_at_ms: run.stopped.as_ref().map(|_| run.elapsed_ms),
        final_exposition: Some(merged),
    })
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

/// `[[expect.transition]]` and `[[expect.no_transition]]` hold on every host, not only on h0
/// whose lanes the section shows: each other host's transitions are diffed alike, and a row h0
/// passes fails when another host does not (its detail names the host and what it observed).
/// The row count stays one per expectation; h0's unexpected transitions keep their rows, the
/// other hosts' are in the fleet section's lanes.
fn every_host_transitions(
    rows: &mut [crate::verdict::ExpectationResult],
    expect: &crate::verdict::Expectations,
    others: &[(&str, &[Transition])],
    speed: f64,
    stop: Option<u64>,
) {
    let only = crate::verdict::Expectations {
        transition: expect.transition.clone(),
        no_transition: expect.no_transition.clone(),
        ..Default::default()
    };
    if only.is_empty() {
        return;
    }
    for (host, transitions) in others {
        let theirs = crate::verdict::diff::diff_until(&only, transitions, None, &[], speed, stop);
        for t in theirs.iter().filter(|t| !t.is_unexpected()) {
            let mine = rows.iter_mut().find(|r| {
                r.kind == t.kind && r.dep == t.dep && r.expected == t.expected && !r.is_unexpected()
            });
            if let Some(r) = mine
                && t.status == crate::verdict::ExpectStatus::Fail
                && r.status != crate::verdict::ExpectStatus::Fail
            {
                r.detail = format!("{}; on {host}: observed {}", r.detail, t.observed);
                r.ok = false;
                r.status = crate::verdict::ExpectStatus::Fail;
            }
        }
    }
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

/// Runs every coordination of `sp` into `dir`; the report (not yet written).
pub(crate) async fn run_fleet_scenario(
    sp: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
) -> Report {
    let host = crate::host::fingerprint();
    let ctx = ReportContext {
        started_at: crate::report::rfc3339(std::time::SystemTime::now()),
        host: serde_json::to_value(&host).unwrap_or_default(),
        contradictions: crate::run::contradictions::check(sp, &host),
        error: None,
    };
    let file = &sp.checked.file;
    let mut runs = Vec::new();
    let mut error = ctx.error.clone();
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
    let mut rep = report(
        sp,
        &[],
        ReportContext {
            error: error.clone(),
            ..ctx
        },
    );
    let fleet_runs: Vec<_> = runs
        .iter()
        .map(|r| run_report(r, &file.engine.breaker, sp.speed.get()))
        .collect();
    let mut sections: Vec<PolicyReport> = runs
        .iter()
        .zip(&fleet_runs)
        .map(|(r, fr)| {
            // Counters and the metric expectations: the whole fleet's, not h0's.
            let finals: Vec<&Exposition> = r
                .hosts
                .iter()
                .filter_map(|h| h.scrapes.last_parsed())
                .collect();
            let merged = fleet_exposition(&finals);
            let mut pr = policy_report(sp, r, &merged);
            let expect = file.expect.for_policy(r.coordination.as_str());
            for e in &expect.fleet {
                let dep = fr.deps.iter().find(|d| d.dep == e.dep);
                pr.expectations
                    .extend(super::expect::check(e, dep, &fr.outages));
            }
            // Judged at the upstream over every host's requests.
            let ground = judge_at_upstream(&mut pr, sp, &expect, &r.upstream_records);
            pr.expectations.extend(ground);
            let others: Vec<(&str, &[Transition])> = r
                .hosts
                .iter()
                .skip(1)
                .filter_map(|h| h.done.as_ref().map(|d| (h.id.as_str(), &d.transitions[..])))
                .collect();
            let stop = r.stopped.as_ref().map(|_| r.elapsed_ms);
            every_host_transitions(&mut pr.expectations, &expect, &others, sp.speed.get(), stop);
            settle(&mut pr);
            pr
        })
        .collect();
    for c in file.fleet.coordination.iter().skip(runs.len()) {
        let mut nr =
            crate::run::assemble::not_run_report(sp, sp.policies[0], "the run ended before it");
        nr.policy = c.as_str().to_string();
        sections.push(nr);
    }
    let stopped = runs.iter().find_map(|r| r.stopped.clone());
    let (verdict, reason) = judge(
        &sections,
        &Ending {
            error: error.as_deref(),
            stopped: stopped.as_deref(),
            not_started: file.fleet.coordination.len().saturating_sub(runs.len()),
            arm: "coordination",
        },
    );
    rep.verdict = verdict;
    rep.reason = reason;
    rep.replay = crate::report::model::ReplayInfo::combine(
        &sections.iter().filter_map(|s| s.replay).collect::<Vec<_>>(),
    );
    rep.policies = sections;
    if let Some(obj) = rep.config.as_object_mut() {
        obj.insert(
            "fleet".into(),
            serde_json::to_value(&file.fleet).unwrap_or_default(),
        );
        obj.insert(
            "policies".into(),
            serde_json::json!(
                file.fleet
                    .coordination
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
            ),
        );
    }
    rep.fleet = Some(FleetSection {
        hosts: file.fleet.hosts,
        clock_skew_ms: file
            .fleet
            .clock_skew
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        probe_interval_ms: u64::try_from(file.engine.breaker.probe_interval.as_millis())
            .unwrap_or(u64::MAX),
        runs: fleet_runs,
    });
    rep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::BreakerState;
    use crate::verdict::{ExpectNoTransition, ExpectStatus, Expectations};

    fn tr(t_ms: u64, dep: &str) -> Transition {
        Transition {
            t_ms,
            dep: dep.into(),
            from: BreakerState::Closed,
            to: BreakerState::Open,
            timing: crate::scrape::timeline::Timing::Event,
            reason: None,
        }
    }

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
        let section = build_policy(BuildInput {
            policy: "none",
            expect: &expect,
            scrapes: &h0,
            events: Some(&[]),
            scrape_interval_ms: 1000,
            arrivals: &[],
            speed: 1.0,
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

    #[test]
    fn a_transition_on_another_host_fails_the_row_h0_passed_and_names_the_host() {
        let expect = Expectations {
            no_transition: vec![ExpectNoTransition {
                dep: "calculator".into(),
                policy: None,
            }],
            ..Default::default()
        };
        let mut rows = crate::verdict::diff::diff_until(&expect, &[], None, &[], 1.0, None);
        assert_eq!(rows[0].status, ExpectStatus::Pass);
        let quiet = [tr(100, "crm_search")];
        let noisy = [tr(5000, "calculator")];
        let others: Vec<(&str, &[Transition])> = vec![("h1", &quiet[..]), ("h3", &noisy[..])];
        every_host_transitions(&mut rows, &expect, &others, 1.0, None);
        assert_eq!(rows.len(), 1, "no extra rows");
        assert_eq!(rows[0].status, ExpectStatus::Fail);
        assert!(!rows[0].ok);
        assert!(
            rows[0].detail.contains("on h3: observed 1"),
            "{}",
            rows[0].detail
        );
        assert!(!rows[0].detail.contains("h1"), "{}", rows[0].detail);
    }
}
