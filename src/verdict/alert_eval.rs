//! The judge of `[[expect.alert]]` and `[[expect.dashboard]]` (pure): one arm's data from
//! Prometheus — its `ALERTS` samples, its `up` samples of the system under test, its samples of
//! `breaker_transitions_total` — and the receiver's log of Alertmanager notifications, all in
//! the arm's scenario ms, → one row per expectation, the report's alert table and its alerts
//! lane (pending and firing spells, notification arrivals).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::alert::{AlertAnchor, DASHBOARD_WITHIN, ExpectAlert, ExpectDashboard};
use super::{ExpectKind, ExpectStatus, ExpectationResult, secs};
use crate::engine::BreakerState;
use crate::scrape::Transition;

/// One `ALERTS` series of the arm: its labels (`alertname`, `alertstate`, the rule's) and the
/// times of its samples (scenario ms since the arm's start; one per rule evaluation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertSeries {
    /// Every label of the series.
    pub labels: BTreeMap<String, String>,
    /// Sample times, ascending.
    pub t_ms: Vec<i64>,
}

/// One alert of one notification the receiver got.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// When it arrived, scenario ms since the arm's start.
    pub t_ms: i64,
    /// `firing` or `resolved`.
    pub status: String,
    /// The alert's labels (`alertname` among them).
    pub labels: BTreeMap<String, String>,
}

/// A counter's samples as Prometheus stored them: labels, then (scenario ms, value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CounterSeries {
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its samples, ascending.
    pub points: Vec<(i64, f64)>,
}

/// What Prometheus (and the receiver) held about one arm.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertsSeen {
    /// The rule evaluation interval, ms.
    pub eval_ms: i64,
    /// The scrape interval, ms.
    pub scrape_ms: i64,
    /// Where the arm's data ends (its end, scenario ms).
    pub end_ms: i64,
    /// The `ALERTS` series.
    pub alerts: Vec<AlertSeries>,
    /// `up` of every target of the arm: (scenario ms, value).
    pub up: Vec<(i64, f64)>,
    /// The receiver's notifications (when an Alertmanager ran).
    pub notifications: Option<Vec<Notification>>,
    /// `breaker_transitions_total` of the engine whose events the arm has.
    pub transitions_total: Vec<CounterSeries>,
}

/// One row of the report's alert table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertRow {
    /// The alert and the labels asked for (`BreakerOpen{dep="crm_search"}`).
    pub rule: String,
    /// What was expected.
    pub expected: String,
    /// When it first fired in the judged spell (scenario ms), if it did.
    pub fired_ms: Option<i64>,
    /// When it resolved, if it did before the arm's end.
    pub resolved_ms: Option<i64>,
    /// When its firing notification arrived, if one did.
    pub notified_ms: Option<i64>,
    /// The row's status.
    pub status: ExpectStatus,
}

/// One spell of an alert in the alerts lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertSpell {
    /// The alert with its labels.
    pub alert: String,
    /// `pending` or `firing`.
    pub state: String,
    /// From (scenario ms).
    pub from_ms: i64,
    /// Until (scenario ms): the evaluation that no longer found it, or the arm's end.
    pub to_ms: i64,
}

/// A notification's arrival in the alerts lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertArrival {
    /// The alert with its labels.
    pub alert: String,
    /// `firing` or `resolved`.
    pub status: String,
    /// When it arrived (scenario ms).
    pub t_ms: i64,
}

/// The report's alert part of one arm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AlertsPart {
    /// One row per `[[expect.alert]]`.
    pub table: Vec<AlertRow>,
    /// Every pending and firing spell Prometheus recorded.
    pub spells: Vec<AlertSpell>,
    /// Every notification that reached the receiver.
    pub arrivals: Vec<AlertArrival>,
}

/// What the judge needs besides Prometheus's data.
#[derive(Debug, Clone, Copy)]
pub struct AlertFacts<'a> {
    /// Each `[[fault]]`'s window (from, until), scenario ms.
    pub faults: &'a [(i64, Option<i64>)],
    /// The engine's transitions of the arm (empty for a gateway).
    pub transitions: &'a [Transition],
    /// Where the arm was cut short (scenario ms), if it was.
    pub stop_ms: Option<i64>,
}

fn labels_text(l: &BTreeMap<String, String>) -> String {
    let name = l.get("alertname").cloned().unwrap_or_default();
    let rest: Vec<String> = l
        .iter()
        // `__name__` (ALERTS) and `job` (every target's) say nothing about the alert.
        .filter(|(k, _)| !matches!(k.as_str(), "alertname" | "alertstate" | "__name__" | "job"))
        .map(|(k, v)| format!("{k}=\"{v}\""))
        .collect();
    if rest.is_empty() {
        name
    } else {
        format!("{name}{{{}}}", rest.join(","))
    }
}

fn matches(a: &ExpectAlert, l: &BTreeMap<String, String>) -> bool {
    l.get("alertname") == Some(&a.alert) && a.labels.iter().all(|(k, v)| l.get(k) == Some(v))
}

/// Spells (first sample, last sample) of the samples `t`: a gap of more than 2.5 evaluations
/// starts a new one.
fn spells_of(mut t: Vec<i64>, eval_ms: i64) -> Vec<(i64, i64)> {
    t.sort_unstable();
    t.dedup();
    let gap = (eval_ms * 5 / 2).max(1);
    let mut out: Vec<(i64, i64)> = Vec::new();
    for x in t {
        match out.last_mut() {
            Some(s) if x - s.1 <= gap => s.1 = x,
            _ => out.push((x, x)),
        }
    }
    out
}

/// When a spell that ended at `last` resolved: the next evaluation, unless the arm ended first
/// (then it was still on at the end).
fn resolved(last: i64, seen: &AlertsSeen) -> Option<i64> {
    (last + 2 * seen.eval_ms <= seen.end_ms).then_some(last + seen.eval_ms)
}

fn state_times(seen: &AlertsSeen, a: &ExpectAlert, state: &str) -> Vec<i64> {
    seen.alerts
        .iter()
        .filter(|s| {
            matches(a, &s.labels) && s.labels.get("alertstate").map(String::as_str) == Some(state)
        })
        .flat_map(|s| s.t_ms.iter().copied())
        .collect()
}

/// The lane: every series' spells and every notification.
fn lane(seen: &AlertsSeen) -> (Vec<AlertSpell>, Vec<AlertArrival>) {
    let mut by: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
    for s in &seen.alerts {
        let state = s.labels.get("alertstate").cloned().unwrap_or_default();
        by.entry((labels_text(&s.labels), state))
            .or_default()
            .extend(s.t_ms.iter().copied());
    }
    let mut spells = Vec::new();
    for ((alert, state), t) in by {
        for (from, last) in spells_of(t, seen.eval_ms) {
            spells.push(AlertSpell {
                alert: alert.clone(),
                state: state.clone(),
                from_ms: from,
                to_ms: resolved(last, seen).unwrap_or(seen.end_ms.max(last)),
            });
        }
    }
    spells.sort_by_key(|s| s.from_ms);
    let arrivals = seen
        .notifications
        .iter()
        .flatten()
        .map(|n| AlertArrival {
            alert: labels_text(&n.labels),
            status: n.status.clone(),
            t_ms: n.t_ms,
        })
        .collect();
    (spells, arrivals)
}

/// Why `up` did not hold for the whole arm, if it did not: (fail?, reason).
fn up_problem(seen: &AlertsSeen) -> Option<(bool, String)> {
    if let Some((t, v)) = seen.up.iter().find(|(_, v)| *v != 1.0) {
        return Some((
            true,
            format!(
                "Prometheus could not scrape the system under test at {} (up = {v}), so silence proves nothing",
                secs(*t)
            ),
        ));
    }
    let mut t: Vec<i64> = seen.up.iter().map(|p| p.0).collect();
    t.sort_unstable();
    t.dedup();
    let Some(&first) = t.first() else {
        return Some((
            false,
            "Prometheus never scraped the system under test (no `up` sample)".into(),
        ));
    };
    let slack = 2 * seen.scrape_ms + 5_000;
    if first > slack {
        return Some((
            false,
            format!(
                "Prometheus first scraped the system under test at {}, not from the start",
                secs(first)
            ),
        ));
    }
    let gap = (3 * seen.scrape_ms).max(seen.scrape_ms + 2_000);
    if let Some(w) = t.windows(2).find(|w| w[1] - w[0] > gap) {
        return Some((
            false,
            format!(
                "no scrape of the system under test between {} and {}",
                secs(w[0]),
                secs(w[1])
            ),
        ));
    }
    let last = t.last().copied().unwrap_or(first);
    if seen.end_ms - last > slack {
        return Some((
            false,
            format!(
                "the last scrape of the system under test was at {}",
                secs(last)
            ),
        ));
    }
    None
}

fn row(e: &ExpectAlert, status: ExpectStatus, observed: String, why: String) -> ExpectationResult {
    let mut r = ExpectationResult::counted(ExpectKind::Alert, e.subject(), e.expected(), observed);
    r.ok = status == ExpectStatus::Pass;
    r.status = status;
    r.detail = format!("{} {}: {why}", e.subject(), e.expected());
    r
}

fn dur_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Judges one `[[expect.alert]]`: its row and its table line.
fn judge_alert(
    e: &ExpectAlert,
    seen: &AlertsSeen,
    f: &AlertFacts<'_>,
) -> (ExpectationResult, AlertRow) {
    let firing = spells_of(state_times(seen, e, "firing"), seen.eval_ms);
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
        let (status, why) = match up_problem(seen) {
            Some((true, why)) => (ExpectStatus::Fail, why),
            Some((false, why)) => (ExpectStatus::NotReached, why),
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
    let fault = f.faults.get(e.fault.unwrap_or(0)).copied();
    let anchor = match e.after {
        Some(AlertAnchor::Transition) => f
            .transitions
            .iter()
            .find(|t| t.to == BreakerState::Open && e.labels.get("dep").is_none_or(|d| d == &t.dep))
            .map(|t| t.t_ms as i64),
        None => fault.map(|w| w.0),
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
    let res = resolved(last, seen);
    line.resolved_ms = res;
    if let Some(r) = res {
        observed.push(format!("resolved {}", secs(r)));
    }
    if let Some(bound) = e.resolves_within.map(dur_ms) {
        let end = fault.and_then(|w| w.1).unwrap_or(i64::MAX);
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
    (done(status, observed, why, &mut line), line)
}

/// Judges one `[[expect.dashboard]]`.
fn judge_dashboard(
    d: &ExpectDashboard,
    seen: &AlertsSeen,
    f: &AlertFacts<'_>,
) -> ExpectationResult {
    let within = dur_ms(d.within.unwrap_or(DASHBOARD_WITHIN));
    let subject = d.dep.clone().unwrap_or_else(|| "every dep".into());
    let expected = format!(
        "each breaker transition queryable in Prometheus ≤{}",
        secs(within)
    );
    let mut r = ExpectationResult::counted(
        ExpectKind::Dashboard,
        subject.clone(),
        expected.clone(),
        String::new(),
    );
    let mut count: BTreeMap<(String, &str, &str), usize> = BTreeMap::new();
    let (mut worst, mut judged, mut skipped) = (None::<(i64, String)>, 0usize, 0usize);
    let mut late = Vec::new();
    for t in f
        .transitions
        .iter()
        .filter(|t| d.dep.as_ref().is_none_or(|x| x == &t.dep))
    {
        let k = count
            .entry((t.dep.clone(), t.from.as_str(), t.to.as_str()))
            .or_default();
        *k += 1;
        let at = t.t_ms as i64;
        let seen_at = seen
            .transitions_total
            .iter()
            .filter(|s| {
                s.labels.get("dep") == Some(&t.dep)
                    && s.labels.get("from").map(String::as_str) == Some(t.from.as_str())
                    && s.labels.get("to").map(String::as_str) == Some(t.to.as_str())
            })
            .flat_map(|s| s.points.iter())
            .filter(|(_, v)| *v >= *k as f64)
            .map(|p| p.0)
            .min();
        let what = format!(
            "{} {}→{} at {}",
            t.dep,
            t.from.as_str(),
            t.to.as_str(),
            secs(at)
        );
        match seen_at {
            Some(v) => {
                judged += 1;
                let delay = (v - at).max(0);
                if delay > within {
                    late.push(format!(
                        "{what} queryable only at {} (+{})",
                        secs(v),
                        secs(delay)
                    ));
                }
                if worst.as_ref().is_none_or(|w| delay > w.0) {
                    worst = Some((delay, what));
                }
            }
            None if at + within > seen.end_ms.min(f.stop_ms.unwrap_or(i64::MAX)) => skipped += 1,
            None => late.push(format!("{what} never queryable")),
        }
    }
    let tail = if skipped > 0 {
        format!(
            " ({skipped} transition(s) in the last {} of the run not judged: the run ended before they were due)",
            secs(within)
        )
    } else {
        String::new()
    };
    let (status, observed, why) = if !late.is_empty() {
        (
            ExpectStatus::Fail,
            format!("{} late", late.len()),
            late.join("; "),
        )
    } else if let Some((delay, what)) = worst {
        (
            ExpectStatus::Pass,
            format!("max +{}", secs(delay)),
            format!(
                "{judged} transition(s), the slowest {what} +{}",
                secs(delay)
            ),
        )
    } else if skipped > 0 || f.stop_ms.is_some() {
        (
            ExpectStatus::NotReached,
            "none judged".into(),
            "no transition could be judged".into(),
        )
    } else {
        (
            ExpectStatus::Fail,
            "no transition".into(),
            "no breaker transition happened: nothing was shown queryable".into(),
        )
    };
    r.observed = observed;
    r.ok = status == ExpectStatus::Pass;
    r.status = status;
    r.detail = format!("{subject} {expected}: {why}{tail}");
    r
}

/// Every alert and dashboard row of one arm, and its report part. `seen` is `Err(why)` when
/// Prometheus's data could not be had (the rows are then `not_reached`, saying why).
pub fn evaluate(
    alerts: &[ExpectAlert],
    dashboards: &[ExpectDashboard],
    seen: Result<&AlertsSeen, &str>,
    f: &AlertFacts<'_>,
) -> (Vec<ExpectationResult>, AlertsPart) {
    let seen = match seen {
        Ok(s) => s,
        Err(why) => {
            let mut rows = Vec::new();
            let mut part = AlertsPart::default();
            for e in alerts {
                rows.push(row(
                    e,
                    ExpectStatus::NotReached,
                    "not reached".into(),
                    format!("not reached ({why})"),
                ));
                part.table.push(AlertRow {
                    rule: e.subject(),
                    expected: e.expected(),
                    fired_ms: None,
                    resolved_ms: None,
                    notified_ms: None,
                    status: ExpectStatus::NotReached,
                });
            }
            for d in dashboards {
                let mut r = judge_dashboard(
                    d,
                    &AlertsSeen::default(),
                    &AlertFacts {
                        stop_ms: Some(0),
                        ..*f
                    },
                );
                r.status = ExpectStatus::NotReached;
                r.ok = false;
                r.observed = "not reached".into();
                r.detail = format!("{}: not reached ({why})", r.expected);
                rows.push(r);
            }
            return (rows, part);
        }
    };
    let mut rows = Vec::new();
    let mut table = Vec::new();
    for e in alerts {
        let (r, line) = judge_alert(e, seen, f);
        rows.push(r);
        table.push(line);
    }
    rows.extend(dashboards.iter().map(|d| judge_dashboard(d, seen, f)));
    let (spells, arrivals) = lane(seen);
    (
        rows,
        AlertsPart {
            table,
            spells,
            arrivals,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, state: &str, dep: &str, t: impl IntoIterator<Item = i64>) -> AlertSeries {
        AlertSeries {
            labels: [("alertname", name), ("alertstate", state), ("dep", dep)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            t_ms: t.into_iter().collect(),
        }
    }

    fn seen(alerts: Vec<AlertSeries>) -> AlertsSeen {
        AlertsSeen {
            eval_ms: 1000,
            scrape_ms: 1000,
            end_ms: 60_000,
            alerts,
            up: (1..60).map(|s| (s * 1000, 1.0)).collect(),
            notifications: Some(vec![Notification {
                t_ms: 14_500,
                status: "firing".into(),
                labels: [
                    ("alertname".to_string(), "BreakerOpen".to_string()),
                    ("dep".into(), "crm".into()),
                ]
                .into(),
            }]),
            transitions_total: Vec::new(),
        }
    }

    fn expect(within: u64) -> ExpectAlert {
        ExpectAlert {
            alert: "BreakerOpen".into(),
            labels: [("dep".to_string(), "crm".to_string())].into(),
            fires_within: Some(Duration::from_secs(within)),
            resolves_within: Some(Duration::from_secs(10)),
            notified_within: Some(Duration::from_secs(5)),
            ..Default::default()
        }
    }

    const FAULTS: &[(i64, Option<i64>)] = &[(5_000, Some(30_000))];

    fn facts() -> AlertFacts<'static> {
        AlertFacts {
            faults: FAULTS,
            transitions: &[],
            stop_ms: None,
        }
    }

    #[test]
    fn fires_resolves_and_is_notified_in_bounds() {
        let s = seen(vec![
            series("BreakerOpen", "pending", "crm", 10_000..=12_000),
            series("BreakerOpen", "firing", "crm", (13..=35).map(|x| x * 1000)),
        ]);
        let (rows, part) = evaluate(&[expect(10)], &[], Ok(&s), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
        assert_eq!(part.table[0].fired_ms, Some(13_000));
        assert_eq!(part.table[0].resolved_ms, Some(36_000));
        assert_eq!(part.table[0].notified_ms, Some(14_500));
        assert_eq!(part.spells.len(), 2);
        assert_eq!(part.arrivals.len(), 1);
        // Too tight a bound fails, naming the delay.
        let (rows, _) = evaluate(&[expect(5)], &[], Ok(&s), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Fail);
        assert!(
            rows[0].detail.contains("fired 8.000s after"),
            "{}",
            rows[0].detail
        );
    }

    #[test]
    fn never_fired_fails_and_silence_needs_up_the_whole_run() {
        let s = seen(vec![]);
        let (rows, _) = evaluate(&[expect(10)], &[], Ok(&s), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Fail);
        let never = ExpectAlert {
            alert: "BreakerOpen".into(),
            never: true,
            ..Default::default()
        };
        let (rows, _) = evaluate(std::slice::from_ref(&never), &[], Ok(&s), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
        let mut down = seen(vec![]);
        down.up[20].1 = 0.0;
        let (rows, _) = evaluate(std::slice::from_ref(&never), &[], Ok(&down), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Fail);
        let mut gap = seen(vec![]);
        gap.up.retain(|p| p.0 < 20_000 || p.0 > 40_000);
        let (rows, _) = evaluate(std::slice::from_ref(&never), &[], Ok(&gap), &facts());
        assert_eq!(
            rows[0].status,
            ExpectStatus::NotReached,
            "{}",
            rows[0].detail
        );
        let fired = seen(vec![series("BreakerOpen", "firing", "x", [9_000])]);
        let (rows, _) = evaluate(&[never], &[], Ok(&fired), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Fail);
    }

    #[test]
    fn still_firing_at_the_end_fails_its_resolve_bound() {
        let s = seen(vec![series(
            "BreakerOpen",
            "firing",
            "crm",
            (13..=60).map(|x| x * 1000),
        )]);
        let (rows, part) = evaluate(&[expect(10)], &[], Ok(&s), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
        assert_eq!(part.table[0].resolved_ms, None);
    }

    #[test]
    fn a_transition_is_queryable_once_the_counter_reaches_it() {
        let tr = Transition {
            t_ms: 10_000,
            dep: "crm".into(),
            from: BreakerState::Closed,
            to: BreakerState::Open,
            timing: crate::scrape::timeline::Timing::Event,
            reason: None,
        };
        let mut s = seen(vec![]);
        s.transitions_total = vec![CounterSeries {
            labels: [("dep", "crm"), ("from", "closed"), ("to", "open")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            points: vec![(9_000, 0.0), (11_000, 1.0)],
        }];
        let f = AlertFacts {
            faults: FAULTS,
            transitions: std::slice::from_ref(&tr),
            stop_ms: None,
        };
        let d = ExpectDashboard::default();
        let (rows, _) = evaluate(&[], std::slice::from_ref(&d), Ok(&s), &f);
        assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
        let tight = ExpectDashboard {
            within: Some(Duration::from_millis(500)),
            ..d
        };
        let (rows, _) = evaluate(&[], &[tight], Ok(&s), &f);
        assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
    }
}
