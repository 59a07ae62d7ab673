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
//! section of an arm that never ran `not_run.rs`. Its tests (the every-host matching, through
//! the section's own diff) are in `section/tests.rs`.

use std::collections::{BTreeMap, BTreeSet};

use crate::rehearsal::fault_scope::{assign_lanes, fault_windows};
use crate::rehearsal::observation::{Hits, Observation};
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::arm::recorder::KeptRecords;
use crate::report::build::{PolicyInput, build_policy};
use crate::report::judge::settle;
use crate::report::model::{PolicyReport, UpstreamCap};
use crate::scrape::{Disagreement, DisagreementKind, Transition};
use crate::upstream::FaultSpec;
use crate::upstream::faults::RouteSel;
use crate::util::speed::Speed;
use crate::verdict::anchor::{Applied, FaultsSeen};
use crate::verdict::answer_rows::AnswerSeen;
use crate::verdict::turn::TurnSeen;
use crate::verdict::{
    ExpectKind, ExpectStatus, ExpectationResult, Expectations,
};
use crate::verdict::diff::diff_anchored;

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

/// The faults that applied to no request in any run (`runs`: each run's fault hits) and do
/// not say `optional = true`:
/// a fault that never applied tested nothing, so the rows that hold despite it prove nothing
/// about it. A coordinator fault acts on the fleet's Redis, not on upstream requests (it is
/// judged by its effect on the hosts), so it is left out.
pub(crate) fn unapplied_faults(faults: &[FaultSpec], runs: &[&Hits]) -> BTreeSet<usize> {
    faults
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.optional && f.route != RouteSel::Coordinator)
        .filter(|(i, _)| runs.iter().all(|h| h.get(i).is_none_or(|(n, _)| *n == 0)))
        .map(|(i, _)| i)
        .collect()
}

/// One failed row per fault of `never`. In a run stopped at `stop` (scenario ms) only the
/// faults whose window had begun: `fail` when the window ended before the stop, `not_reached`
/// while it was still open (the fault might have applied later); a window the stop never
/// reached says nothing and has no row (the run is incomplete anyway).
fn unapplied_rows(
    faults: &[FaultSpec],
    never: &BTreeSet<usize>,
    stop: Option<u64>,
) -> Vec<ExpectationResult> {
    let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    never
        .iter()
        .filter_map(|&i| faults.get(i).map(|f| (i, f)))
        .filter_map(|(i, f)| {
            let from = f.from.map_or(0, ms);
            let status = match stop {
                None => ExpectStatus::Fail,
                Some(s) if from >= s => return None,
                Some(s) if f.until.is_some_and(|u| ms(u) <= s) => ExpectStatus::Fail,
                Some(_) => ExpectStatus::NotReached,
            };
            Some((i, f, status))
        })
        .map(|(i, f, status)| {
            let mut scope = vec![format!("route {}", f.route)];
            if let Some(p) = &f.profile {
                let shown = crate::util::fingerprint(p);
                scope.push(format!("profile token {shown}"));
            }
            if let Some(m) = &f.model {
                scope.push(format!("model {m}"));
            }
            let from = f.from.map_or(0, |d| d.as_millis() as i64);
            let window = match f.until {
                Some(u) => format!(
                    "[{}, {})",
                    crate::verdict::secs(from),
                    crate::verdict::secs(u.as_millis() as i64)
                ),
                None => format!("from {}", crate::verdict::secs(from)),
            };
            let dep = format!("fault[{i}] {}", f.kind.name());
            let why = if status == ExpectStatus::NotReached {
                "not applied before the run was stopped, while its window was open".to_string()
            } else {
                "never applied in any run of the scenario: no request it scopes reached the \
                 upstream in its window, so nothing was rehearsed against it (say \
                 `optional = true` if it may not apply)"
                    .to_string()
            };
            ExpectationResult {
                witness: Default::default(),
                kind: ExpectKind::FaultApplied,
                dep: Some(dep.clone()),
                series: None,
                expected: format!("applies ({}, {window})", scope.join(", ")),
                observed: "0 requests".into(),
                expected_ms: None,
                observed_ms: None,
                delta_ms: None,
                tolerance_ms: None,
                ok: false,
                status,
                detail: format!("{dep}: {why}"),
            }
        })
        .collect()
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

/// What the upstream's record says of each fault of one arm: how many user requests it applied
/// to and the last of them (scenario ms), from the recorder's hits (every route; the latest
/// always kept) — where an anchor at a fault's end falls (`verdict::anchor`).
pub(crate) fn applications(hits: &Hits) -> BTreeMap<usize, Applied> {
    hits.iter()
        .map(|(&i, (count, kept))| {
            let last_ms = kept.iter().map(|h| h.t_ms).max();
            (
                i,
                Applied {
                    count: *count,
                    last_ms,
                },
            )
        })
        .collect()
}

/// Which expectation a transition-table row stands for: its kind, its dep and its place among
/// that dep's expectations of that kind (the diff gives each `[[expect.transition]]` and
/// `[[expect.no_transition]]` exactly one row, in table order per dep). `None` for the other
/// rows and for an unexpected transition (it stands for no expectation).
fn identities(rows: &[ExpectationResult]) -> Vec<Option<(ExpectKind, String, usize)>> {
    let mut seen: Vec<(ExpectKind, String, usize)> = Vec::new();
    rows.iter()
        .map(|r| {
            let table = matches!(r.kind, ExpectKind::Transition | ExpectKind::NoTransition);
            if !table || r.is_unexpected() {
                return None;
            }
            let dep = r.dep.clone().unwrap_or_default();
            let n = match seen.iter_mut().find(|s| s.0 == r.kind && s.1 == dep) {
                Some(s) => {
                    s.2 += 1;
                    s.2
                }
                None => {
                    seen.push((r.kind, dep.clone(), 0));
                    0
                }
            };
            Some((r.kind, dep, n))
        })
        .collect()
}

/// `[[expect.transition]]` and `[[expect.no_transition]]` hold on every host, not only on h0
/// whose lanes a fleet's section shows: each other host's transitions are diffed alike and
/// matched to h0's rows by the expectation they stand for ([`identities`]; never by their
/// `expected` text, which for an `after =` transition carries each host's own anchor time). A
/// row h0 passed fails when another host failed it (and is `not_reached` when another host did
/// not get that far); its detail names the host and what it observed. A transition another host
/// made that no expectation accounts for is a failed row of its own, naming the host, as h0's
/// are.
fn every_host_transitions(
    rows: &mut Vec<ExpectationResult>,
    expect: &Expectations,
    others: &[(&str, &[Transition])],
    speed: Speed,
    stop: Option<u64>,
    faults: &FaultsSeen<'_>,
) {
    let only = Expectations {
        transition: expect.transition.clone(),
        no_transition: expect.no_transition.clone(),
        ..Default::default()
    };
    if only.is_empty() {
        return;
    }
    let mine = identities(rows);
    let mut extra = Vec::new();
    for (host, transitions) in others {
        // The fleet's one upstream applied the faults: every host's `since` falls where h0's does.
        let theirs = diff_anchored(&only, transitions, None, &[], speed, stop, faults);
        let ids = identities(&theirs);
        for (t, id) in theirs.iter().zip(&ids) {
            let Some(id) = id else {
                if t.is_unexpected() {
                    let mut u = t.clone();
                    u.observed = format!("{} on {host}", t.observed);
                    u.detail = format!("on {host}: {}", t.detail);
                    extra.push(u);
                }
                continue;
            };
            let Some(i) = mine.iter().position(|m| m.as_ref() == Some(id)) else {
                continue;
            };
            let r = &mut rows[i];
            let worse = match (t.status, r.status) {
                (ExpectStatus::Fail, ExpectStatus::Fail) => false,
                (ExpectStatus::Fail, _) => true,
                (ExpectStatus::NotReached, ExpectStatus::Pass) => true,
                _ => false,
            };
            if worse {
                let what = match t.status {
                    ExpectStatus::Fail => format!("observed {}", t.observed),
                    _ => "not reached".to_string(),
                };
                r.detail = format!("{}; on {host}: {what}", r.detail);
                r.ok = false;
                r.status = t.status;
            }
        }
    }
    rows.extend(extra);
}

mod from_record;
mod not_run;

use from_record::{request_lanes, turns_of};
pub use not_run::not_run;

#[cfg(test)]
mod tests;
