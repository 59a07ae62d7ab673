//! Builders the run harness calls: the A/B [`Summary`] from the final scrape, and a whole
//! [`PolicyReport`] from what one policy run kept of its scrapes ([`CompactScrapes`]), its exact
//! latencies and marks. The diff runs on the wall clock the run was measured in; everything the
//! report holds is then converted to scenario time here (× speed), so the verdict cannot depend
//! on the base the report speaks in.

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::model::{
    FaultWindow, HealthRow, Latency, Marks, PolicyReport, PolicyStatus, ReplayInfo, ScrapeStats,
    Summary, TransitionTimes,
};
use crate::scrape::{CompactScrapes, Exposition, Transition, crosscheck, timeline};
use crate::util::speed::Speed;
use crate::verdict::{
    ExpectKind, ExpectationResult, Expectations, ProbeArrival,
};

fn count(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v.round() as u64
    } else {
        0
    }
}

fn total(e: &Exposition, name: &str) -> u64 {
    count(
        e.samples()
            .filter(|s| s.name == name)
            .map(|s| s.value)
            .sum(),
    )
}

fn by_label(e: &Exposition, name: &str, label: &str) -> BTreeMap<String, u64> {
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    for s in e.samples().filter(|s| s.name == name) {
        let key = s.labels.get(label).cloned().unwrap_or_default();
        *sums.entry(key).or_default() += s.value;
    }
    sums.into_iter().map(|(k, v)| (k, count(v))).collect()
}

/// The A/B numbers derivable from the final exposition. `failed_requests` and
/// `user_visible_errors` come from the replayer, so they are left `None` here, and latencies
/// from exact samples (the `request_latency_seconds` buckets only allow a guess), left empty.
pub fn summary_from(e: &Exposition) -> Summary {
    let mut outcomes_by_dep: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut failed = 0.0;
    for s in e.samples().filter(|s| s.name == "requests_total") {
        let dep = s.labels.get("dep").cloned().unwrap_or_default();
        let outcome = s.labels.get("outcome").cloned().unwrap_or_default();
        if outcome != "ok" {
            failed += s.value;
        }
        *outcomes_by_dep
            .entry(dep)
            .or_default()
            .entry(outcome)
            .or_default() += count(s.value);
    }
    Summary {
        cooldowns_by_reason: by_label(e, "profile_cooldowns_total", "reason"),
        rotations: total(e, "profile_rotations_total"),
        retries: total(e, "profile_retries_total"),
        fallbacks: total(e, "model_fallbacks_total"),
        failed_requests: None,
        user_visible_errors: None,
        failed_attempts: count(failed),
        breaker_rejections: total(e, "breaker_rejections_total"),
        retry_after_skips: total(e, "breaker_retry_after_skips_total"),
        idempotent_duplicates: total(e, "idempotent_duplicates_total"),
        outcomes_by_dep,
        latency_by_dep: BTreeMap::new(),
        deadlines_by_dep: BTreeMap::new(),
    }
}

impl From<&CompactScrapes> for ScrapeStats {
    fn from(l: &CompactScrapes) -> Self {
        ScrapeStats {
            ok: l.ok,
            failures: l.failures,
            last_error: l.last_error.clone(),
        }
    }
}

/// One policy run's inputs, as the harness has them at the end of the run.
#[derive(Debug)]
pub struct PolicyInput<'a> {
    /// `legacy` or `retry-gate`.
    pub policy: &'a str,
    /// The expectations this run judges (already filtered to it:
    /// `ScenarioFile::expect_for`, `Expectations::for_policy`).
    pub expect: &'a Expectations,
    /// What the run kept of its scrapes (timeline, final scrape, breaker series, counts).
    pub scrapes: &'a CompactScrapes,
    /// The engine's breaker transitions from its event log (events.jsonl), time-ordered: when
    /// given, they time every transition and the scrapes are checked against them; `None`
    /// derives the transitions from the scrapes.
    pub events: Option<&'a [Transition]>,
    /// The scrape interval at the run's speed, ms (for the disagreement rows).
    pub scrape_interval_ms: u64,
    /// The upstream's breaker-probe arrivals (other arrivals may be left out).
    pub arrivals: &'a [ProbeArrival],
    /// The `--speed` divisor.
    pub speed: Speed,
    /// Fault windows, scenario time.
    pub fault_windows: Vec<FaultWindow>,
    /// Attempt latency per dep from exact samples, scenario time.
    pub latency: BTreeMap<String, Latency>,
    /// The picture's marks (Retry-After deadlines, cooldowns, ...), scenario time.
    pub marks: Marks,
    /// The replayer's schedule accuracy.
    pub replay: Option<ReplayInfo>,
    /// Requests the replayer saw fail.
    pub failed_requests: Option<u64>,
    /// Requests that returned a user-visible error.
    pub user_visible_errors: Option<u64>,
    /// How long the run actually lasted, ms of wall clock.
    pub elapsed_ms: u64,
    /// Canary calls and failures per dep (from the run's `HealthCheck` events).
    pub canaries: BTreeMap<String, (u64, u64)>,
    /// When a stop request cut the run short: run ms of the stop (`None`: it reached
    /// `duration`). Expectations the stop came before are `not_reached`.
    pub stopped_at_ms: Option<u64>,
    /// The exposition the end-of-run checks (`[[expect.metric]]`) and the summary's counters
    /// read: `None` for the last scrape of `scrapes`; a fleet gives every host's final scrape
    /// merged, so its metric rows are judged once on the whole fleet.
    pub final_exposition: Option<&'a Exposition>,
    /// True when the system under test is the engine (embedded or fleet hosts): a metric
    /// family of its catalogue witnesses zero before its first series exists (the engine
    /// creates counters lazily); a foreign gateway's family must have been seen in a scrape.
    pub engine_catalogue: bool,
    /// The scenario's faults and what the upstream's record says of their applications: what
    /// a transition's `at` with `since` counts from (`None`: not at hand, every such row is
    /// unanchored — never anchored at 0).
    pub faults: Option<crate::verdict::anchor::FaultsSeen<'a>>,
}

/// Per dep: the canary counts, and the largest `health_breaker_disagreement_seconds` of any
/// scrape (`max_disagreement`, see [`CompactScrapes::max_disagreement`]; a dep with a gauge but
/// no canary still gets a row).
fn health_rows(
    max_disagreement: &BTreeMap<String, f64>,
    canaries: &BTreeMap<String, (u64, u64)>,
) -> BTreeMap<String, HealthRow> {
    let mut rows: BTreeMap<String, HealthRow> = canaries
        .iter()
        .map(|(dep, &(calls, failures))| {
            let row = HealthRow {
                canary_calls: calls,
                canary_failures: failures,
                max_disagreement_s: 0.0,
            };
            (dep.clone(), row)
        })
        .collect();
    for (dep, &max) in max_disagreement {
        let row = rows.entry(dep.clone()).or_default();
        if max.is_finite() && max > row.max_disagreement_s {
            row.max_disagreement_s = max;
        }
    }
    rows
}

/// Derives the timeline, runs the diff (wall clock) and computes the summary for one policy run;
/// the result is in scenario time. With an event log, its transitions are the one source of
/// transition times for the timeline and the diff alike, and every disagreement of the scrapes
/// with it is listed; without one, both use the transitions derived from the scrapes.
pub fn build_policy(run: PolicyInput<'_>) -> PolicyReport {
    let speed = run.speed;
    let to_s = |ms: u64| speed.scenario_ms_u(ms);
    let mut tl = run.scrapes.timeline();
    let (transition_times, mut disagreements) = match run.events {
        Some(events) => {
            tl.transitions = events.to_vec();
            tl.states = timeline::states(&tl.transitions, run.scrapes.first_states());
            let rows = crosscheck(
                events,
                &run.scrapes.breaker_scrapes(),
                run.scrape_interval_ms,
                speed,
            );
            (TransitionTimes::EventLog, rows)
        }
        None => (TransitionTimes::Scrape, Vec::new()),
    };
    let mut health = health_rows(run.scrapes.max_disagreement(), &run.canaries);
    let final_scrape = run.final_exposition.or_else(|| run.scrapes.last_parsed());
    let expectations = crate::verdict::diff::diff_anchored(
        run.expect,
        &tl.transitions,
        final_scrape,
        run.arrivals,
        speed,
        run.stopped_at_ms,
        &run.faults.unwrap_or(crate::verdict::anchor::FaultsSeen::none()),
    );
    let mut expectations = expectations;
    witness_context(&mut expectations, &run, &tl.transitions);
    let mut summary = final_scrape.map(summary_from).unwrap_or_default();
    summary.failed_requests = run.failed_requests;
    summary.user_visible_errors = run.user_visible_errors;
    summary.latency_by_dep = run.latency;
    // From here on, scenario time.
    for t in &mut tl.transitions {
        t.t_ms = to_s(t.t_ms);
    }
    for p in tl.states.values_mut().flatten() {
        p.t_ms = to_s(p.t_ms);
    }
    for r in &mut tl.rates {
        r.t_ms = to_s(r.t_ms);
        r.requests_per_s = speed.per_scenario_second(r.requests_per_s);
        r.errors_per_s = speed.per_scenario_second(r.errors_per_s);
    }
    for h in health.values_mut() {
        h.max_disagreement_s = speed.to_scenario(h.max_disagreement_s);
    }
    for d in &mut disagreements {
        d.t_ms = to_s(d.t_ms);
    }
    let status = PolicyStatus::of(&expectations, run.stopped_at_ms.is_some());
    PolicyReport {
        policy: run.policy.to_string(),
        ok: status == PolicyStatus::Pass,
        status,
        expectations,
        transitions: tl.transitions,
        transition_times,
        disagreements,
        summary,
        breaker_states: tl.states,
        rates: tl.rates,
        fault_windows: run.fault_windows,
        replay: run.replay,
        scrapes: run.scrapes.into(),
        elapsed_ms: to_s(run.elapsed_ms),
        wall_elapsed_ms: run.elapsed_ms,
        marks: run.marks,
        stopped_at_ms: run.stopped_at_ms.map(to_s),
        health,
        upstream_cap: None,
        unjudged: None,
        figures: None,
        alerts: None,
        requests: None,
        turns: None,
        client_turns: Vec::new(),
    }
}

/// Adds to the diff's rows what they were judged in: the scrapes that held anything, the
/// events of the dep (an event log's transitions), whether a scrape ever showed the dep's
/// breaker (a `no_transition` row watched something), and whether a metric's family is one
/// the system under test exports (a lazily created counter with no series yet witnesses 0).
fn witness_context(rows: &mut [ExpectationResult], run: &PolicyInput<'_>, transitions: &[Transition]) {
    let scrapes = run.scrapes.ok;
    let engine_names = run
        .engine_catalogue
        .then(crate::engine::families::sample_names)
        .unwrap_or_default();
    for r in rows.iter_mut() {
        match r.kind {
            ExpectKind::Transition | ExpectKind::NoTransition => {
                let dep = r.dep.as_deref().unwrap_or_default();
                r.witness.set("scrapes", scrapes);
                if let Some(events) = run.events {
                    let n = events.iter().filter(|t| t.dep == dep).count() as u64;
                    r.witness.set("events", n);
                }
                if r.kind == ExpectKind::NoTransition {
                    let seen = run.scrapes.first_states().contains_key(dep)
                        || transitions.iter().any(|t| t.dep == dep);
                    r.witness.set("breaker_observed", u64::from(seen));
                }
            }
            ExpectKind::Metric => {
                r.witness.set("scrapes", scrapes);
                let name = r
                    .series
                    .as_deref()
                    .and_then(|s| crate::scrape::Selector::parse(s).ok())
                    .map(|s| s.name);
                let known = name.is_some_and(|n| {
                    run.scrapes.exported(&n) || engine_names.iter().any(|(e, _, _)| *e == n)
                });
                r.witness.set("known_family", u64::from(known));
            }
            _ => {}
        }
    }
}

/// RFC 3339 UTC with milliseconds (`2026-11-29T18:55:00.123Z`), for `started_at`.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}
