//! One `[[expect.alert]]` judged: when its alert fired, resolved and paged, against its bounds;
//! a rule that could not have fired ([`RuleCheck`]) fails the row whatever its alert did not
//! do, and a `never` whose alert was still pending at the end was not reached.

use super::rules::RuleCheck;
use super::*;

/// Judges one `[[expect.alert]]`: its row and its table line.
pub(super) fn judge_alert(
    e: &ExpectAlert,
    seen: &AlertsSeen,
    f: &AlertFacts<'_>,
    check: &RuleCheck,
) -> (ExpectationResult, AlertRow) {
    let (mut r, mut line) = judge_spells(e, seen, f, check.eval_ms);
    if let Some(why) = &check.problem {
        if r.status == ExpectStatus::Fail {
            r.detail = format!("{}; and {why}", r.detail);
        } else {
            r.status = ExpectStatus::Fail;
            r.ok = false;
            r.detail = format!("{} {}: {why}", e.subject(), e.expected());
            line.status = ExpectStatus::Fail;
        }
    }
    (r, line)
}

/// The row as the alert's spells and notifications judge it.
fn judge_spells(
    e: &ExpectAlert,
    seen: &AlertsSeen,
    f: &AlertFacts<'_>,
    eval_ms: i64,
) -> (ExpectationResult, AlertRow) {
    let firing = spells_of(state_times(seen, e, "firing"), eval_ms);
    let observed_until = f.stop_ms.unwrap_or(seen.end_ms).min(seen.end_ms);
    let mut line = AlertRow {
        rule: e.subject(),
        expected: e.expected(),
        fired_ms: None,
        resolved_ms: None,
        notified_ms: None,
        status: ExpectStatus::Fail,
    };
    let done = |status: ExpectStatus, observed: String, why: String, line: &mut AlertRow| {
        line.status = status;
        row(e, status, observed, why)
    };
    if e.never {
        if let Some(&(s, _)) = firing.first() {
            line.fired_ms = Some(s);
            return (
                done(
                    ExpectStatus::Fail,
                    format!("fired {}", secs(s)),
                    format!("fired at {}", secs(s)),
                    &mut line,
                ),
                line,
            );
        }
        let pending = spells_of(state_times(seen, e, "pending"), eval_ms)
            .last()
            .copied()
            .filter(|&(_, last)| resolved(last, eval_ms, seen).is_none());
        let (status, why) = match up_problem(seen) {
            Some((true, why)) => (ExpectStatus::Fail, why),
            Some((false, why)) => (ExpectStatus::NotReached, why),
            None if pending.is_some() => (
                ExpectStatus::NotReached,
                format!(
                    "still pending at the end (since {}): it would have fired had the run gone \
                     on long enough, so its silence is not shown",
                    secs(pending.map_or(0, |p| p.0))
                ),
            ),
            None if f.stop_ms.is_some() => (
                ExpectStatus::NotReached,
                "the run was cut short: silence until the end is not shown".into(),
            ),
            None => (
                ExpectStatus::Pass,
                "never fired; Prometheus scraped the system under test (up = 1) the whole run"
                    .into(),
            ),
        };
        return (done(status, "never fired".into(), why, &mut line), line);
    }
    // Its fault's start (`fires_within`, unless it counts from a transition) and end
    // (`resolves_within`), resolved where every anchor is: a fault that never applied anchors
    // nothing, and the row is never a pass (never anchored at 0).
    let start = match e.after {
        Some(_) => Ok(None),
        None => f.faults.anchor(Some(&e.since(Edge::Start))),
    };
    let end = match e.resolves_within {
        Some(_) => f.faults.anchor(Some(&e.since(Edge::End))),
        None => Ok(None),
    };
    let from_fault = match (start.as_ref(), end.as_ref()) {
        (Ok(s), Ok(_)) => s.clone(),
        (Err(why), _) | (Ok(_), Err(why)) => {
            let mut r = row(e, ExpectStatus::Fail, String::new(), String::new());
            unanchored_row(&mut r, &e.subject(), why, f.stop_ms.is_some());
            line.status = r.status;
            return (r, line);
        }
    };
    let end = end.ok().flatten();
    let anchor = match e.after {
        Some(AlertAnchor::Transition) => f
            .transitions
            .iter()
            .find(|t| t.to == BreakerState::Open && e.labels.get("dep").is_none_or(|d| d == &t.dep))
            .map(|t| t.t_ms as i64),
        None => from_fault
            .as_ref()
            .map(|a| i64::try_from(a.at_ms).unwrap_or(i64::MAX)),
    };
    let Some(anchor) = anchor else {
        let status = if f.stop_ms.is_some() {
            ExpectStatus::NotReached
        } else {
            ExpectStatus::Fail
        };
        return (
            done(
                status,
                "no anchor".into(),
                "no breaker transition to open happened to count from".into(),
                &mut line,
            ),
            line,
        );
    };
    let within = e.fires_within.map_or(0, dur_ms);
    // An alert already on before its anchor is not this anchor's alert.
    let Some(&(start, last)) = firing.iter().find(|s| s.0 >= anchor) else {
        let status = if observed_until < anchor + within {
            ExpectStatus::NotReached
        } else {
            ExpectStatus::Fail
        };
        let why = match firing.first() {
            Some(s) => format!(
                "its only firing began at {}, before its anchor at {}",
                secs(s.0),
                secs(anchor)
            ),
            None => format!(
                "did not fire (Prometheus's ALERTS has no firing sample after {})",
                secs(anchor)
            ),
        };
        return (done(status, "did not fire".into(), why, &mut line), line);
    };
    line.fired_ms = Some(start);
    let mut observed = vec![format!("fired {} (+{})", secs(start), secs(start - anchor))];
    let mut fails = Vec::new();
    let mut short = Vec::new();
    if start - anchor > within {
        fails.push(format!(
            "fired {} after its anchor, bound {}",
            secs(start - anchor),
            secs(within)
        ));
    }
    let res = resolved(last, eval_ms, seen);
    line.resolved_ms = res;
    if let Some(r) = res {
        observed.push(format!("resolved {}", secs(r)));
    }
    if let Some(bound) = e.resolves_within.map(dur_ms) {
        let end = end
            .as_ref()
            .map_or(i64::MAX, |a| i64::try_from(a.at_ms).unwrap_or(i64::MAX));
        match res {
            Some(r) if r - end > bound => fails.push(format!(
                "resolved {} after the fault's end, bound {}",
                secs(r - end),
                secs(bound)
            )),
            Some(_) => {}
            None if observed_until < end.saturating_add(bound) => {
                short.push("the run ended before it was due to resolve".to_string())
            }
            None => fails.push(format!(
                "still firing at the end ({}), {} after the fault's end",
                secs(seen.end_ms),
                secs(seen.end_ms - end)
            )),
        }
    }
    if let Some(bound) = e.notified_within.map(dur_ms) {
        let got = seen
            .notifications
            .iter()
            .flatten()
            .filter(|n| n.status == "firing" && matches(e, &n.labels) && n.t_ms >= start - 1_000)
            .map(|n| n.t_ms)
            .min();
        line.notified_ms = got;
        match got {
            Some(t) => {
                observed.push(format!("notified {}", secs(t)));
                if t - start > bound {
                    fails.push(format!(
                        "notified {} after it fired, bound {}",
                        secs(t - start),
                        secs(bound)
                    ));
                }
            }
            None if observed_until < start + bound => {
                short.push("the run ended before its notification was due".into())
            }
            None => fails.push("no firing notification reached the receiver".into()),
        }
    }
    let (status, why) = if !fails.is_empty() {
        (ExpectStatus::Fail, fails.join("; "))
    } else if !short.is_empty() {
        (ExpectStatus::NotReached, short.join("; "))
    } else {
        (ExpectStatus::Pass, "held".to_string())
    };
    let observed = observed.join(", ");
    let why = format!("{observed}: {why}");
    let mut r = done(status, observed, why, &mut line);
    if let Some(a) = &from_fault {
        a.mark(&mut r);
    }
    if let Some(a) = &end {
        // The fault's end its `resolves_within` counted from (`anchor_ms` is its start).
        r.witness.set("anchor_end_ms", a.at_ms);
        r.witness.set("fault_applications", a.applications);
        if from_fault.is_none() {
            r.detail = format!("{}; resolution counted from {}", r.detail, a.text);
        }
    }
    (r, line)
}
