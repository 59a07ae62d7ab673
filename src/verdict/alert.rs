//! `[[expect.alert]]` and `[[expect.dashboard]]` as written in a scenario (docs/alerts.md): when
//! a Prometheus alert fires, resolves and reaches the receiver, and how soon a breaker
//! transition is queryable in Prometheus. Judged from Prometheus's own data and the receiver's
//! log ([`super::alert_eval`]), never from the harness's own scrapes.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::anchor::{Edge, FaultRef, Since};
use crate::upstream::FaultSpec;

/// The default bound of `[[expect.dashboard]]`: the rollout's "visible within 15 s".
pub(crate) const DASHBOARD_WITHIN: Duration = Duration::from_secs(15);

/// What `fires_within` counts from, besides a fault's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertAnchor {
    /// The first breaker transition to `open` (of the `dep` label when given) in the engine's
    /// events.
    Transition,
}

/// One `[[expect.alert]]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectAlert {
    /// The rule's alert name.
    pub alert: String,
    /// Labels the alert must carry (a subset of its labels), e.g. `{ dep = "crm_search" }`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// It starts firing within this after the anchor (the fault's start, or `after`).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub fires_within: Option<Duration>,
    /// Which `[[fault]]` anchors the times — its `name`, or its 0-based index as the report's
    /// `fault[N]`; default the first. Resolved where every anchor is ([`super::anchor`]): its
    /// start for `fires_within`, its end for `resolves_within`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultRef>,
    /// `"transition"`: `fires_within` counts from the first breaker transition to open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<AlertAnchor>,
    /// It resolves within this after the fault's end (its `until`, or its last application
    /// with `first = N` or no `until`).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub resolves_within: Option<Duration>,
    /// The firing notification reaches the harness's receiver within this after the alert
    /// started firing (needs `[prometheus] alertmanager = true`).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub notified_within: Option<Duration>,
    /// It must never fire (holds only while Prometheus scraped the system under test the whole
    /// run).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub never: bool,
    /// Only for this run (policy, coordination or target kind); all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// One `[[expect.dashboard]]`: every breaker transition (of `dep`, or of every dep) is
/// queryable in Prometheus (`breaker_transitions_total`) within `within` of the engine's event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectDashboard {
    /// The dep; every dep when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dep: Option<String>,
    /// The bound (default 15 s).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub within: Option<Duration>,
    /// Only for this run; all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

impl ExpectAlert {
    /// The fault its times count from: its `fault`, else the first.
    fn fault_ref(&self) -> FaultRef {
        self.fault.clone().unwrap_or(FaultRef::Index(0))
    }

    /// The anchor of its `fires_within` (the fault's start) or `resolves_within` (its end).
    pub(crate) fn since(&self, edge: Edge) -> Since {
        Since {
            fault: self.fault_ref(),
            edge,
        }
    }

    /// The row's `expected` text: `BreakerOpen{dep="crm"} fires ≤20s after fault[0] start, ...`.
    pub(crate) fn expected(&self) -> String {
        let mut parts = Vec::new();
        let anchor = match self.after {
            Some(AlertAnchor::Transition) => "the first transition to open".to_string(),
            None => self.since(Edge::Start).label(),
        };
        if self.never {
            parts.push("never fires".to_string());
        }
        if let Some(w) = self.fires_within {
            parts.push(format!("fires ≤{} after {anchor}", fmt(w)));
        }
        if let Some(w) = self.resolves_within {
            parts.push(format!(
                "resolves ≤{} after {}",
                fmt(w),
                self.since(Edge::End).label()
            ));
        }
        if let Some(w) = self.notified_within {
            parts.push(format!("notified ≤{}", fmt(w)));
        }
        parts.join(", ")
    }

    /// `BreakerOpen{dep="crm_search"}`.
    pub(crate) fn subject(&self) -> String {
        if self.labels.is_empty() {
            return self.alert.clone();
        }
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect();
        format!("{}{{{}}}", self.alert, labels.join(","))
    }
}

fn fmt(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// What the scenario offers the alert tables to be checked against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AlertContext<'a> {
    /// The `[[fault]]` tables.
    pub faults: &'a [FaultSpec],
    /// Whether the run has a `[prometheus]` table, and an Alertmanager in it.
    pub prometheus: bool,
    /// Whether an Alertmanager runs.
    pub alertmanager: bool,
    /// Whether the system under test has engine events (embedded, fleet).
    pub engine_events: bool,
    /// The alert names the rules define.
    pub names: &'a [String],
}

/// A problem in an alert table: the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AlertError {
    /// The field path (`expect.alert[0].alert`).
    pub field: String,
    /// What is wrong.
    pub msg: String,
}

/// Checks the alert and dashboard tables; errors name the field.
pub(crate) fn validate(
    alerts: &[ExpectAlert],
    dashboards: &[ExpectDashboard],
    cx: &AlertContext<'_>,
    policy_bad: &dyn Fn(&Option<String>) -> Option<String>,
) -> Result<(), AlertError> {
    let err = |field: String, msg: String| Err(AlertError { field, msg });
    if !cx.prometheus {
        if !alerts.is_empty() {
            return err(
                "expect.alert[0]".into(),
                "needs a [prometheus] table (spawn = true, or url)".into(),
            );
        }
        if !dashboards.is_empty() {
            return err(
                "expect.dashboard[0]".into(),
                "needs a [prometheus] table (spawn = true, or url)".into(),
            );
        }
    }
    for (i, a) in alerts.iter().enumerate() {
        let f = format!("expect.alert[{i}]");
        if cx.prometheus && !cx.names.iter().any(|n| n == &a.alert) {
            let hint = crate::util::suggest::closest(&a.alert, cx.names.iter().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return err(
                format!("{f}.alert"),
                format!(
                    "`{}` is not an alert of the rules this run evaluates{hint} (alerts: {})",
                    a.alert,
                    cx.names.join(", ")
                ),
            );
        }
        if a.never
            && (a.fires_within.is_some()
                || a.resolves_within.is_some()
                || a.notified_within.is_some())
        {
            return err(
                format!("{f}.never"),
                "`never` excludes fires_within, resolves_within and notified_within".into(),
            );
        }
        if !a.never && a.fires_within.is_none() {
            return err(
                format!("{f}.fires_within"),
                "give `fires_within` (or `never = true`)".into(),
            );
        }
        if a.after.is_some() && a.fault.is_some() {
            return err(
                format!("{f}.after"),
                "give either `after = \"transition\"` or `fault`, not both".into(),
            );
        }
        if a.after.is_some() && !cx.engine_events {
            return err(
                format!("{f}.after"),
                "`after = \"transition\"` needs the engine's events (an embedded or fleet run); \
                 an external gateway's transitions are not observed"
                    .into(),
            );
        }
        let needs_fault =
            (a.after.is_none() && a.fires_within.is_some()) || a.resolves_within.is_some();
        // A `fault` the alert names is checked where every anchor is
        // (`scenario::validate_anchors`: by name with the nearest, by index in range); the
        // default, the first, must exist and be one the upstream's record can place.
        if needs_fault && a.fault.is_none() {
            let key = if a.fires_within.is_some() && a.after.is_none() {
                "fires_within"
            } else {
                "resolves_within"
            };
            match cx.faults.first() {
                None => {
                    return err(
                        format!("{f}.{key}"),
                        "the times count from fault[0] (give `fault` to name another), and the \
                         scenario has no [[fault]] table"
                            .into(),
                    );
                }
                Some(x) if x.route == crate::upstream::faults::RouteSel::Coordinator => {
                    return err(
                        format!("{f}.{key}"),
                        "the times count from fault[0], which acts on the fleet's Redis, not on \
                         upstream requests: the upstream's record has no application of it to \
                         anchor at (give `fault` to name another)"
                            .into(),
                    );
                }
                Some(_) => {}
            }
        }
        if a.notified_within.is_some() && !cx.alertmanager {
            return err(
                format!("{f}.notified_within"),
                "needs `alertmanager = true` in [prometheus]".into(),
            );
        }
        for (d, key) in [
            (a.fires_within, "fires_within"),
            (a.resolves_within, "resolves_within"),
            (a.notified_within, "notified_within"),
        ] {
            if d.is_some_and(|d| d.is_zero()) {
                return err(format!("{f}.{key}"), "must be longer than 0".into());
            }
        }
        if let Some(msg) = policy_bad(&a.policy) {
            return err(format!("{f}.policy"), msg);
        }
    }
    for (i, d) in dashboards.iter().enumerate() {
        let f = format!("expect.dashboard[{i}]");
        if !cx.engine_events {
            return err(
                f,
                "needs the engine's transition events (an embedded or fleet run)".into(),
            );
        }
        if d.within.is_some_and(|w| w.is_zero()) {
            return err(format!("{f}.within"), "must be longer than 0".into());
        }
        if let Some(msg) = policy_bad(&d.policy) {
            return err(format!("{f}.policy"), msg);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["BreakerOpen".into(), "BreakerFlapping".into()]
    }

    fn check(a: ExpectAlert) -> Result<(), AlertError> {
        let n = names();
        let faults = crate::upstream::parse_fault_file(
            "[[fault]]\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\nfrom = \"5s\"\nuntil = \"20s\"\n",
            "f.toml",
        )
        .unwrap();
        let cx = AlertContext {
            faults: &faults,
            prometheus: true,
            alertmanager: false,
            engine_events: true,
            names: &n,
        };
        validate(&[a], &[], &cx, &|_| None)
    }

    #[test]
    fn unknown_names_list_the_rules_and_suggest() {
        let e = check(ExpectAlert {
            alert: "BreakerOpn".into(),
            fires_within: Some(Duration::from_secs(5)),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.field, "expect.alert[0].alert");
        assert!(e.msg.contains("did you mean `BreakerOpen`"), "{}", e.msg);
        assert!(e.msg.contains("BreakerOpen, BreakerFlapping"), "{}", e.msg);
    }

    #[test]
    fn shapes_are_checked() {
        let base = ExpectAlert {
            alert: "BreakerOpen".into(),
            fires_within: Some(Duration::from_secs(5)),
            ..Default::default()
        };
        assert!(check(base.clone()).is_ok());
        let never = ExpectAlert {
            never: true,
            ..base.clone()
        };
        assert_eq!(check(never).unwrap_err().field, "expect.alert[0].never");
        let notified = ExpectAlert {
            notified_within: Some(Duration::from_secs(5)),
            ..base.clone()
        };
        assert_eq!(
            check(notified).unwrap_err().field,
            "expect.alert[0].notified_within"
        );
        // A `fault` it names is checked with every anchor (`validate_anchors`); with none, the
        // first must exist.
        let n = names();
        let cx = AlertContext {
            faults: &[],
            prometheus: true,
            alertmanager: false,
            engine_events: true,
            names: &n,
        };
        let e = validate(std::slice::from_ref(&base), &[], &cx, &|_| None).unwrap_err();
        assert_eq!(e.field, "expect.alert[0].fires_within");
        assert!(e.msg.contains("no [[fault]] table"), "{}", e.msg);
        assert_eq!(
            base.expected(),
            "fires ≤5s after fault[0] start".to_string()
        );
    }
}
