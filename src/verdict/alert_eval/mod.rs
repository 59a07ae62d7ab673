//! The judge of `[[expect.alert]]` and `[[expect.dashboard]]` (pure): one arm's data from
//! Prometheus — its `ALERTS` samples, its `up` samples of the system under test, its samples of
//! `breaker_transitions_total` — and the receiver's log of Alertmanager notifications, all in
//! the arm's scenario ms, → one row per expectation, the report's alert table and its alerts
//! lane (pending and firing spells, notification arrivals).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::alert::{AlertAnchor, DASHBOARD_WITHIN, ExpectAlert, ExpectDashboard};
use super::alert_rules::Catalogue;
use super::anchor::{Edge, FaultsSeen, unanchored_row};
use super::{ExpectKind, ExpectStatus, ExpectationResult, secs};
use crate::engine::BreakerState;
use crate::scrape::Transition;
use std::collections::BTreeSet;

mod alert;
mod dashboard;
mod rules;

use alert::judge_alert;
use dashboard::judge_dashboard;
use rules::{check_rule, eval_ms_of};

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

/// One alerting rule as Prometheus reported it (`/api/v1/rules`), with what it did in the arm
/// (its group's evaluation counters, polled while the arm ran).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSeen {
    /// The alert's name.
    pub alert: String,
    /// Its group (`FILE;GROUP`, as Prometheus's `rule_group` label).
    pub group: String,
    /// Its group's evaluation interval, ms.
    pub interval_ms: i64,
    /// Its expression as Prometheus holds it.
    pub query: String,
    /// Its static labels.
    pub labels: BTreeMap<String, String>,
    /// Its evaluations during the arm (`None`: not read).
    pub evaluations: Option<u64>,
    /// Its failed evaluations during the arm (`None`: not read).
    pub failures: Option<u64>,
    /// The last error Prometheus kept for it (empty: none).
    pub last_error: String,
}

/// What Prometheus (and the receiver) held about one arm.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertsSeen {
    /// The rule evaluation interval, ms (the scenario's; a rule's own group interval wins).
    pub eval_ms: i64,
    /// The scrape interval, ms.
    pub scrape_ms: i64,
    /// Where the arm's data ends (its end, scenario ms).
    pub end_ms: i64,
    /// The `ALERTS` series tied to the arm's targets (by `instance`/`job`, or `arm`/`host`),
    /// from its start.
    pub alerts: Vec<AlertSeries>,
    /// `ALERTS` samples in the arm's time range that could not be tied to its targets (another
    /// job's, another arm's), by alert name: never credited to the arm.
    pub untied: BTreeMap<String, u64>,
    /// How many scrape targets of the arm Prometheus had.
    pub run_targets: u64,
    /// `up` of the arm's own targets: (scenario ms, value).
    pub up: Vec<(i64, f64)>,
    /// The receiver's notifications (when an Alertmanager ran).
    pub notifications: Option<Vec<Notification>>,
    /// `breaker_transitions_total` of the engine whose events the arm has.
    pub transitions_total: Vec<CounterSeries>,
    /// Every alerting rule Prometheus evaluates.
    pub rules: Vec<RuleSeen>,
    /// Every recording rule it evaluates: (recorded series, expression).
    pub records: Vec<(String, String)>,
    /// True when the targets' labels are exactly `job`, `instance`, `arm`, `host` (the
    /// harness's Prometheus); a Prometheus the user runs may relabel them.
    pub target_labels_known: bool,
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
    /// The scenario's faults and their applications: what an alert's `fault` resolves against
    /// ([`super::anchor`]: its start for `fires_within`, its end for `resolves_within`).
    pub faults: FaultsSeen<'a>,
    /// The engine's transitions of the arm (empty for a gateway).
    pub transitions: &'a [Transition],
    /// Where the arm was cut short (scenario ms), if it was.
    pub stop_ms: Option<i64>,
    /// The families the system under test can export.
    pub catalogue: Catalogue<'a>,
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

/// When a spell that ended at `last` resolved: the next evaluation (`eval_ms` apart), unless
/// the arm ended first (then it was still on at the end).
fn resolved(last: i64, eval_ms: i64, seen: &AlertsSeen) -> Option<i64> {
    (last + 2 * eval_ms <= seen.end_ms).then_some(last + eval_ms)
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
    let mut by: BTreeMap<(String, String), (i64, Vec<i64>)> = BTreeMap::new();
    for s in &seen.alerts {
        let state = s.labels.get("alertstate").cloned().unwrap_or_default();
        let name = s.labels.get("alertname").map_or("", String::as_str);
        by.entry((labels_text(&s.labels), state))
            .or_insert_with(|| (eval_ms_of(seen, name), Vec::new()))
            .1
            .extend(s.t_ms.iter().copied());
    }
    let mut spells = Vec::new();
    for ((alert, state), (eval_ms, t)) in by {
        for (from, last) in spells_of(t, eval_ms) {
            spells.push(AlertSpell {
                alert: alert.clone(),
                state: state.clone(),
                from_ms: from,
                to_ms: resolved(last, eval_ms, seen).unwrap_or(seen.end_ms.max(last)),
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
    // What an alert row was judged on: the samples that showed the arm's own targets scraped
    // up, its rule's evaluations and failures during the arm, the selectors of its expression
    // (and how many name a family the system under test cannot export), the `ALERTS` samples
    // of the alert it names tied to the arm, and those left out as another target's.
    let up = seen.up.iter().filter(|(_, v)| *v == 1.0).count() as u64;
    for e in alerts {
        let check = check_rule(e, seen, f);
        let (mut r, line) = judge_alert(e, seen, f, &check);
        let samples: usize = seen
            .alerts
            .iter()
            .filter(|s| matches(e, &s.labels))
            .map(|s| s.t_ms.len())
            .sum();
        // (Over what the judge put there: an anchored row's `anchor_ms`, ...)
        r.witness.add(&crate::verdict::Witness::of(&[
            ("target_up_samples", up),
            ("run_targets", seen.run_targets),
            ("rule_evaluations", check.evaluations),
            ("rule_failures", check.failures),
            ("rule_selectors", check.selectors),
            ("families_missing", check.families_missing),
            ("alert_samples", samples as u64),
            (
                "untied_alert_samples",
                seen.untied.get(&e.alert).copied().unwrap_or(0),
            ),
        ]));
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
mod tests;
