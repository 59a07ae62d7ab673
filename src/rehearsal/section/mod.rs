//! One arm's [`Observation`] → its report section, for every kind of run alike: the timeline and
//! the transition/metric rows from its scrapes and engine events (where it has them), the rows
//! judged at the upstream from the one recorder's record (and on its turns: cooldowns, per
//! turn), a gateway's decisions and auth state
//! (where it has them), the kind's own rows (a fleet's), every other host's transitions (a
//! fleet's), a failed row for each fault no run of the scenario applied ([`unapplied_faults`]);
//! then its status, once ([`crate::report::judge::settle`]). An arm that never ran is
//! [`not_run`].
//!
//! The per-turn rows and the picture's lanes read off the record are `from_record.rs`; the
//! section of an arm that never ran `not_run.rs`; what the faults applied to and the rows of
//! those that applied to nothing `unapplied.rs`; a fleet's other hosts judged on the transition
//! tables `every_host.rs`. Its tests (the every-host matching, through
//! the section's own diff) are in `section/tests.rs`.

use std::collections::BTreeSet;

use crate::rehearsal::fault_scope::{assign_lanes, fault_windows};
use crate::rehearsal::observation::Observation;
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::arm::recorder::KeptRecords;
use crate::report::build::{PolicyInput, build_policy};
use crate::report::judge::settle;
use crate::report::model::{PolicyReport, UpstreamCap};
use crate::scrape::{Disagreement, DisagreementKind, Transition};
use crate::verdict::anchor::FaultsSeen;
use crate::verdict::answer_rows::AnswerSeen;
use crate::verdict::turn::TurnSeen;
use crate::verdict::{
    ExpectStatus, ExpectationResult, Expectations,
};

/// The report section of one arm that ran. `never_applied`: the faults no run of the scenario
/// applied ([`unapplied_faults`]).
pub fn section(
    plan: &ScenarioPlan,
    o: &Observation,
    never_applied: &BTreeSet<usize>,
) -> PolicyReport {
    let file = &plan.checked.file;
    let engine = o.engine.as_ref();
    let stopped_at_ms = o.cut().then_some(o.elapsed_ms);
    let expect = file.expect_for(&o.arm);
    // What every `since` of the arm's rows resolves against (`verdict::anchor`).
    let applied = applications(&o.fault_hits);
    let faults = FaultsSeen {
        faults: &file.fault,
        applied: &applied,
    };
    let mut report = build_policy(PolicyInput {
        policy: &o.arm,
        expect: &expect,
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
        engine_catalogue: !plan.is_external(),
        faults: Some(faults),
    });
    report.expectations.extend(o.kind_rows.iter().cloned());
    report.summary.deadlines_by_dep = engine.map(|e| e.deadlines.clone()).unwrap_or_default();
    let ground = judge_at_upstream(&mut report, plan, &expect, &o.upstream, faults);
    report.expectations.extend(ground);
    let turns = turns_of(plan, o);
    let facts = crate::verdict::turn_facts::TurnFacts {
        part: &turns,
        faults: FaultsSeen {
            faults: &file.fault,
            applied: &applied,
        },
        stopped_at_ms,
    };
    report.expectations.extend(
        expect
            .cooldown
            .iter()
            .map(|x| crate::verdict::cooldown::judge(x, &facts))
            .chain(
                expect
                    .per_turn
                    .iter()
                    .map(|x| crate::verdict::per_turn::judge(x, &facts)),
            ),
    );
    if let Some(g) = &o.gateway {
        let log = match &g.log_error {
            Some(why) => Err(why.as_str()),
            None => Ok((&g.decisions[..], g.log_lines)),
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
        report
            .expectations
            .extend(client_turn_rows(&expect, &g.turns, o.cut(), &faults));
        // A failed row of a gateway run says what the upstream saw and what the gateway decided.
        // (An `http` target keeps no log or state: only the upstream's side.)
        let openclaw = plan.target_kind() == crate::scenario::target::TargetKind::Openclaw;
        let fps = crate::scenario::gateway::profile_fingerprints(file);
        let trace = crate::verdict::explain::GatewayTrace {
            records: &o.upstream.records,
            profile_fps: &fps,
            decisions: (openclaw && g.log_error.is_none()).then_some(&g.decisions[..]),
            auth: g.auth.as_ref().filter(|_| openclaw),
        };
        crate::verdict::explain::annotate(&mut report.expectations, &trace);
    }
    if let Some(t) = &o.client_turns {
        // The embedded engine's turns, as its client saw them: judged as a gateway's are.
        report
            .expectations
            .extend(client_turn_rows(&expect, t, o.cut(), &faults));
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
            &faults,
        );
    }
    if !expect.metric.is_empty() {
        let exportable = crate::rehearsal::metric_labels::Exportable::of(plan);
        let last = o.final_exposition.as_ref().or(o.scrapes.last_parsed());
        crate::rehearsal::metric_labels::judge(
            &mut report.expectations,
            &expect,
            &o.scrapes,
            last,
            &exportable,
        );
    }
    if file.prometheus.is_some() {
        let stop = o.cut().then(|| o.speed.scenario_ms_u(o.elapsed_ms) as i64);
        let seen = match &o.alerts {
            Some(Ok(s)) => Ok(s),
            Some(Err(why)) => Err(why.as_str()),
            None => Err("Prometheus was not read"),
        };
        let (rows, part) = alert_rows(
            plan,
            &expect,
            engine.map_or(&[][..], |e| &e.transitions),
            seen,
            stop,
            Some(&o.scrapes),
            faults,
        );
        report.expectations.extend(rows);
        report.alerts = Some(part);
    }
    let stop = o.cut().then(|| o.speed.scenario_ms_u(o.elapsed_ms));
    report
        .expectations
        .extend(unapplied_rows(&file.fault, never_applied, stop));
    report.unjudged = unjudged(o, &report.expectations);
    settle(&mut report);
    report.requests = Some(request_lanes(plan, o));
    report.turns = Some(turns);
    report.client_turns = o.client_turns.clone().unwrap_or_default();
    if let Some(ws) = engine.and_then(|e| e.lanes_of_faults.as_ref()) {
        let lanes: Vec<String> = report.breaker_states.keys().cloned().collect();
        assign_lanes(&mut report.fault_windows, &file.fault, &lanes, ws);
    }
    if let Some(e) = engine.filter(|e| e.transitions_dropped > 0) {
        report.disagreements.push(Disagreement {
            kind: DisagreementKind::Truncated,
            dep: String::new(),
            t_ms: o.speed.scenario_ms_u(e.transitions.last().map_or(0, |t| t.t_ms)),
            detail: format!(
                "events.jsonl holds {} more transitions than the report kept ({} kept)",
                e.transitions_dropped,
                e.transitions.len()
            ),
        });
    }
    report.figures = Some(crate::rehearsal::figures::of_section(o, &report, plan));
    report
}

/// The `[[expect.turn]]` rows (counts, latencies, the answers' model and usage) over the turns
/// a client sent and what came back — a gateway's, or the embedded engine's — in scenario
/// time; `cut`: the arm was cut short (turns may still have been out).
fn client_turn_rows(
    expect: &Expectations,
    turns: &[crate::report::model::TurnRow],
    cut: bool,
    faults: &FaultsSeen<'_>,
) -> Vec<ExpectationResult> {
    let seen: Vec<TurnSeen> = turns
        .iter()
        .map(|t| TurnSeen {
            outcome: t.outcome,
            sent_ms: t.at_ms.saturating_add(t.lag_ms),
            elapsed_ms: t.elapsed_ms,
            unrecorded: t.answer.as_ref().is_some_and(|a| !a.recorded),
        })
        .collect();
    let mut rows = crate::verdict::turn::evaluate(&expect.turn, &seen, cut, faults);
    let answers: Vec<AnswerSeen<'_>> = turns
        .iter()
        .map(|t| AnswerSeen {
            line: t.line,
            outcome: t.outcome,
            answer: t.answer.as_ref(),
        })
        .collect();
    rows.extend(crate::verdict::answer_rows::evaluate(&expect.turn, &answers, cut));
    rows
}

/// The `[[expect.alert]]` and `[[expect.dashboard]]` rows of an arm and its alert part, from
/// what Prometheus held about it (`seen`, or why it could not be read).
fn alert_rows(
    plan: &ScenarioPlan,
    expect: &Expectations,
    transitions: &[Transition],
    seen: Result<&crate::verdict::alert_eval::AlertsSeen, &str>,
    stop_ms: Option<i64>,
    scrapes: Option<&crate::scrape::CompactScrapes>,
    faults: FaultsSeen<'_>,
) -> (
    Vec<ExpectationResult>,
    crate::verdict::alert_eval::AlertsPart,
) {
    // The engine's catalogue, or what some scrape of a foreign exporter held.
    let exported = |name: &str| scrapes.is_some_and(|s| s.exported(name));
    let catalogue = if plan.is_external() {
        crate::verdict::alert_rules::Catalogue::Foreign(Some(&exported))
    } else {
        crate::verdict::alert_rules::Catalogue::Engine
    };
    let facts = crate::verdict::alert_eval::AlertFacts {
        faults,
        transitions,
        stop_ms,
        catalogue,
    };
    crate::verdict::alert_eval::evaluate(&expect.alert, &expect.dashboard, seen, &facts)
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
    faults: FaultsSeen<'_>,
) -> Vec<ExpectationResult> {
    let speed = plan.speed;
    let truncated_at_ms = kept.truncated_at_ms.map(|t| speed.scenario_ms_u(t));
    section.upstream_cap = truncated_at_ms.map(|at_ms| UpstreamCap {
        kept: kept.records.len() as u64,
        dropped: kept.dropped,
        at_ms,
    });
    let fps = crate::scenario::gateway::profile_fingerprints(&plan.checked.file);
    let owners = crate::scenario::gateway::token_owners(&plan.checked.file);
    let duration_ms = u64::try_from(plan.checked.file.duration.as_millis()).unwrap_or(u64::MAX);
    let facts = crate::verdict::ground_eval::UpstreamFacts {
        records: &kept.records,
        profile_fps: &fps,
        owners: &owners,
        speed,
        // A run that was not cut observed at least up to `duration` (an external one until
        // its last turn returned, which can be later).
        end_ms: section.elapsed_ms.max(duration_ms),
        stopped_at_ms: section.stopped_at_ms,
        truncated_at_ms,
        faults,
    };
    crate::verdict::ground_eval::evaluate(expect, &facts)
}

mod every_host;
mod from_record;
mod not_run;
mod unapplied;

use every_host::every_host_transitions;
use from_record::{request_lanes, turns_of};
pub use not_run::not_run;
use unapplied::unapplied_rows;
pub(crate) use unapplied::{applications, unapplied_faults};

#[cfg(test)]
mod tests;
