//! One arm's [`Observation`] → its report section, for every kind of run alike: the timeline and
//! the transition/metric rows from its scrapes and engine events (where it has them), the rows
//! judged at the upstream from the one recorder's record, a gateway's decisions and auth state
//! (where it has them), the kind's own rows (a fleet's), every other host's transitions (a
//! fleet's); then its status, once ([`crate::report::judge::settle`]). An arm that never ran
//! is [`not_run`].

use super::fault_scope::{assign_lanes, fault_windows};
use super::observation::Observation;
use super::plan::ScenarioPlan;
use super::recorder::KeptRecords;
use crate::report::build::{PolicyInput, build_policy};
use crate::report::judge::settle;
use crate::report::model::{PolicyReport, UpstreamCap};
use crate::scrape::{Disagreement, DisagreementKind, Transition};
use crate::verdict::turn::TurnSeen;
use crate::verdict::{ExpectStatus, ExpectationResult, Expectations, diff_until, scenario_ms_u};

/// The report section of one arm that ran.
pub fn section(plan: &ScenarioPlan, o: &Observation) -> PolicyReport {
    let file = &plan.checked.file;
    let engine = o.engine.as_ref();
    let stopped_at_ms = o.cut().then_some(o.elapsed_ms);
    let mut report = build_policy(PolicyInput {
        policy: &o.arm,
        expect: &file.expect,
        scrapes: &o.scrapes,
        events: engine.map(|e| &e.transitions[..]),
        scrape_interval_ms: o.scrape_interval_ms,
        arrivals: &o.arrivals,
        speed: o.speed,
        fault_windows: fault_windows(&file.fault, &file.profile, o.fault_hits.clone()),
        latency: engine.map(|e| e.latency.clone()).unwrap_or_default(),
        marks: engine.map(|e| e.marks.clone()).unwrap_or_default(),
        replay: Some(o.replay),
        failed_requests: Some(o.failed_requests),
        user_visible_errors: Some(o.user_visible_errors),
        elapsed_ms: o.elapsed_ms,
        canaries: o.canaries.clone(),
        // A run cut short vouches only for what came before the cut.
        stopped_at_ms,
        final_exposition: o.final_exposition.as_ref(),
    });
    let expect = file.expect.for_policy(&o.arm);
    report.expectations.extend(o.kind_rows.iter().cloned());
    let ground = judge_at_upstream(&mut report, plan, &expect, &o.upstream);
    report.expectations.extend(ground);
    if let Some(g) = &o.gateway {
        let log = match &g.log_error {
            Some(why) => Err(why.as_str()),
            None => Ok(&g.decisions[..]),
        };
        let unread = crate::gateway::openclaw::AuthState::default();
        let never_read = g.auth.is_none() && g.auth_error.is_none();
        let state = match (&g.auth, &g.auth_error) {
            (_, Some(why)) => Err(why.as_str()),
            (Some(s), None) => Ok(s),
            (None, None) => Ok(&unread),
        };
        let mut rows = crate::verdict::gateway_eval::evaluate(&expect, log, state, o.cut());
        if never_read {
            // The run ended (a harness failure) before the gateway's log and state were read:
            // nothing of them was observed, so nothing of them is judged.
            for r in &mut rows {
                r.ok = false;
                r.status = ExpectStatus::NotReached;
                r.observed = "not reached".into();
                r.detail = format!(
                    "{} {}: not reached (the run ended before the gateway's log and state were read)",
                    r.dep.as_deref().unwrap_or("openclaw"),
                    r.expected
                );
            }
        }
        report.expectations.extend(rows);
        let turns: Vec<TurnSeen> = g
            .turns
            .iter()
            .map(|t| TurnSeen {
                outcome: t.outcome,
                elapsed_ms: t.elapsed_ms,
            })
            .collect();
        report
            .expectations
            .extend(crate::verdict::turn::evaluate(&expect.turn, &turns, o.cut()));
    }
    if let Some(e) = engine {
        let others: Vec<(&str, &[Transition])> = e
            .other_hosts
            .iter()
            .map(|(h, t)| (h.as_str(), &t[..]))
            .collect();
        every_host_transitions(
            &mut report.expectations,
            &expect,
            &others,
            o.speed,
            stopped_at_ms,
        );
    }
    report.unjudged = unjudged(o, &report.expectations);
    settle(&mut report);
    if let Some(ws) = engine.and_then(|e| e.lanes_of_faults.as_ref()) {
        let lanes: Vec<String> = report.breaker_states.keys().cloned().collect();
        assign_lanes(&mut report.fault_windows, &file.fault, &lanes, ws);
    }
    if let Some(e) = engine.filter(|e| e.transitions_dropped > 0) {
        report.disagreements.push(Disagreement {
            kind: DisagreementKind::Truncated,
            dep: String::new(),
            t_ms: scenario_ms_u(e.transitions.last().map_or(0, |t| t.t_ms), o.speed),
            detail: format!(
                "events.jsonl holds {} more transitions than the report kept ({} kept)",
                e.transitions_dropped,
                e.transitions.len()
            ),
        });
    }
    report
}

/// Why an arm that ran to its end gave nothing to judge, if it did not: its system under test
/// sent the upstream no request (whatever its rows say, they were judged on nothing), or not one
/// row was judged. An arm cut short says so through its stop or error instead.
fn unjudged(o: &Observation, rows: &[ExpectationResult]) -> Option<String> {
    if o.cut() {
        return None;
    }
    if o.upstream.served == 0 {
        return Some("the system under test sent no request to the upstream".into());
    }
    if rows.is_empty() {
        return Some("no expectation applies to it: nothing was judged".into());
    }
    None
}

/// The expectations judged at the upstream (`[[expect.attempts]]`, ...) over the model requests
/// the run's recorder kept, in the section's scenario time: its end, its stop, and — when the
/// recorder reached its cap — the cut, which ends what was observed there (windows past it are
/// `not_reached`) and is said in the section (`upstream_cap`). A window reaching past the end of
/// what the run observed is `not_reached` too.
fn judge_at_upstream(
    section: &mut PolicyReport,
    plan: &ScenarioPlan,
    expect: &Expectations,
    kept: &KeptRecords,
) -> Vec<ExpectationResult> {
    let speed = plan.speed.get();
    let truncated_at_ms = kept.truncated_at_ms.map(|t| scenario_ms_u(t, speed));
    section.upstream_cap = truncated_at_ms.map(|at_ms| UpstreamCap {
        kept: kept.records.len() as u64,
        dropped: kept.dropped,
        at_ms,
    });
    let fps = crate::scenario::gateway::profile_fingerprints(&plan.checked.file);
    let duration_ms = u64::try_from(plan.checked.file.duration.as_millis()).unwrap_or(u64::MAX);
    let facts = crate::verdict::ground_eval::UpstreamFacts {
        records: &kept.records,
        profile_fps: &fps,
        speed,
        // A run that was not cut observed at least up to `duration` (an external one until
        // its last turn returned, which can be later).
        end_ms: section.elapsed_ms.max(duration_ms),
        stopped_at_ms: section.stopped_at_ms,
        truncated_at_ms,
    };
    crate::verdict::ground_eval::evaluate(expect, &facts)
}

/// `[[expect.transition]]` and `[[expect.no_transition]]` hold on every host, not only on h0
/// whose lanes a fleet's section shows: each other host's transitions are diffed alike, and a
/// row h0 passes fails when another host does not (its detail names the host and what it
/// observed). The row count stays one per expectation; h0's unexpected transitions keep their
/// rows, the other hosts' are in the fleet section's lanes.
fn every_host_transitions(
    rows: &mut [ExpectationResult],
    expect: &Expectations,
    others: &[(&str, &[Transition])],
    speed: f64,
    stop: Option<u64>,
) {
    let only = Expectations {
        transition: expect.transition.clone(),
        no_transition: expect.no_transition.clone(),
        ..Default::default()
    };
    if only.is_empty() {
        return;
    }
    for (host, transitions) in others {
        let theirs = diff_until(&only, transitions, None, &[], speed, stop);
        for t in theirs.iter().filter(|t| !t.is_unexpected()) {
            let mine = rows.iter_mut().find(|r| {
                r.kind == t.kind && r.dep == t.dep && r.expected == t.expected && !r.is_unexpected()
            });
            if let Some(r) = mine
                && t.status == ExpectStatus::Fail
                && r.status != ExpectStatus::Fail
            {
                r.detail = format!("{}; on {host}: observed {}", r.detail, t.observed);
                r.ok = false;
                r.status = ExpectStatus::Fail;
            }
        }
    }
}

/// The section of an arm (a policy, coordination or gateway run) that never started (`why`):
/// listed with status `not_run`, every expectation `not_reached`, nothing observed.
pub fn not_run(plan: &ScenarioPlan, arm: &str, why: &str) -> PolicyReport {
    let file = &plan.checked.file;
    let mut expectations = diff_until(
        &file.expect.for_policy(arm),
        &[],
        None,
        &[],
        plan.speed.get(),
        Some(0),
    );
    for e in &mut expectations {
        let subject = e.dep.as_deref().map_or(String::new(), |d| format!("{d} "));
        e.detail = format!(
            "{subject}{}: not reached (policy `{arm}` never ran: {why})",
            e.expected
        );
    }
    PolicyReport {
        fault_windows: fault_windows(&file.fault, &file.profile, Default::default()),
        ..PolicyReport::empty(arm, expectations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::BreakerState;
    use crate::verdict::ExpectNoTransition;

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
    fn a_transition_on_another_host_fails_the_row_h0_passed_and_names_the_host() {
        let expect = Expectations {
            no_transition: vec![ExpectNoTransition {
                dep: "calculator".into(),
                policy: None,
            }],
            ..Default::default()
        };
        let mut rows = diff_until(&expect, &[], None, &[], 1.0, None);
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
