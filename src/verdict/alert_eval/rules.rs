//! Whether an alert row's rule could have fired during the arm, from what Prometheus reported:
//! the rule exists, it was evaluated and never failed to evaluate (its group's counters), and
//! its expression as Prometheus holds it ties its alerts to the run's targets and reads only
//! families the system under test exports. What only the run shows is a `fail` with the
//! reason; the counts are the row's witness.

use super::super::alert_rules::{Scope, rule_problem};
use super::*;
use crate::monitoring::promql;
use crate::monitoring::{AlertRule, RecordRule};

/// What the rule of one row did during the arm.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct RuleCheck {
    /// Its evaluations (summed over the rules of that name).
    pub evaluations: u64,
    /// Its failed evaluations.
    pub failures: u64,
    /// Series selectors in its expression.
    pub selectors: u64,
    /// Selectors naming a family the system under test cannot export.
    pub families_missing: u64,
    /// Why it could not have fired (a failed row), if it could not.
    pub problem: Option<String>,
    /// Its group's evaluation interval, ms (the scenario's when Prometheus did not say).
    pub eval_ms: i64,
}

/// The group interval of the rule `alert` (the scenario's when unknown).
pub(super) fn eval_ms_of(seen: &AlertsSeen, alert: &str) -> i64 {
    seen.rules
        .iter()
        .filter(|r| r.alert == alert && r.interval_ms > 0)
        .map(|r| r.interval_ms)
        .max()
        .unwrap_or(seen.eval_ms)
}

/// Checks the rule of `e` (see the module's opening).
pub(super) fn check_rule(e: &ExpectAlert, seen: &AlertsSeen, f: &AlertFacts<'_>) -> RuleCheck {
    let mut c = RuleCheck {
        eval_ms: eval_ms_of(seen, &e.alert),
        ..RuleCheck::default()
    };
    let rules: Vec<&RuleSeen> = seen.rules.iter().filter(|r| r.alert == e.alert).collect();
    if rules.is_empty() {
        let names: BTreeSet<&str> = seen.rules.iter().map(|r| r.alert.as_str()).collect();
        c.problem = Some(format!(
            "Prometheus evaluates no alerting rule `{}` (its alerting rules: {})",
            e.alert,
            names.into_iter().collect::<Vec<_>>().join(", ")
        ));
        return c;
    }
    let records: Vec<RecordRule> = seen
        .records
        .iter()
        .map(|(record, expr)| RecordRule {
            record: record.clone(),
            expr: expr.clone(),
        })
        .collect();
    let scope = Scope {
        catalogue: f.catalogue,
        records: &records,
        target_labels_known: seen.target_labels_known,
        domains: None,
    };
    let mut problems = Vec::new();
    let mut unread = false;
    for r in &rules {
        match (r.evaluations, r.failures) {
            (Some(n), Some(k)) => {
                c.evaluations += n;
                c.failures += k;
                if k > 0 {
                    let last = if r.last_error.is_empty() {
                        String::new()
                    } else {
                        format!(" (its last error: {})", r.last_error)
                    };
                    problems.push(format!(
                        "rule `{}` failed {k} of its {} evaluations during the run{last}: it \
                         could not have fired",
                        r.alert,
                        n.max(k)
                    ));
                }
            }
            _ => unread = true,
        }
        let parsed = match promql::parse(&r.query) {
            Ok(p) => p,
            Err(why) => {
                problems.push(format!(
                    "its expression as Prometheus holds it (`{}`) could not be read: {why}",
                    r.query
                ));
                continue;
            }
        };
        let selectors = parsed.selectors();
        c.selectors += selectors.len() as u64;
        c.families_missing += selectors
            .iter()
            .filter(|s| scope.selector_problem(s).is_some())
            .count() as u64;
        let as_rule = AlertRule {
            group: r.group.clone(),
            alert: r.alert.clone(),
            expr: r.query.clone(),
            for_: None,
            labels: r.labels.clone(),
            annotations: BTreeMap::new(),
        };
        if let Some(why) = rule_problem(&as_rule, &parsed, &scope, None) {
            problems.push(format!("rule `{}`: {why}", r.alert));
        }
    }
    if unread {
        problems.push(format!(
            "Prometheus's evaluation counters of rule `{}` were not read during the run: that it \
             was evaluated is not shown",
            e.alert
        ));
    } else if c.evaluations == 0 {
        problems.push(format!(
            "Prometheus did not evaluate rule `{}` during the run",
            e.alert
        ));
    }
    if !problems.is_empty() {
        c.problem = Some(problems.join("; "));
    }
    c
}
