//! The monitoring shipped with the engine (docs/alerts.md): the Prometheus alerting rules over
//! the engine's series and the weekly job's batch-job series (`monitoring/rules.yml`), an example
//! Alertmanager config (`monitoring/alertmanager.yml`) and a Grafana dashboard
//! (`monitoring/grafana/rehearse.json`), embedded in the binary so that a run outside a checkout
//! (launchd's) finds them, and `rehearse monitoring rules|alertmanager|dashboard` prints them.
//!
//! # Layout
//! - [`rules`]: reading a Prometheus rule file: its alert names ([`alert_names`]), their rules,
//!   its recording rules, and the harness's copy with every alerting rule in a group of its own.
//! - [`promql`]: what an alerting rule's expression reads (its series selectors) and what its
//!   alerts can carry (the labels of each output; whether one ties them to a scrape target).
//! - `cmd`: the command (the CLI edge).

mod cmd;
pub mod promql;
pub mod rules;

pub(crate) use cmd::command;
pub use rules::{
    AlertRule, RecordRule, RulesError, alert_names, alert_rules, one_group_per_alert,
    record_rules,
};

/// `monitoring/rules.yml`: the shipped alerting rules.
const RULES: &str = include_str!("../../monitoring/rules.yml");
/// `monitoring/alertmanager.yml`: an example Alertmanager config with a webhook receiver.
const ALERTMANAGER: &str = include_str!("../../monitoring/alertmanager.yml");
/// `monitoring/grafana/rehearse.json`: the Grafana dashboard.
const DASHBOARD: &str = include_str!("../../monitoring/grafana/rehearse.json");

/// The shipped alerting rules (`monitoring/rules.yml`), a Prometheus rule file.
pub fn shipped_rules() -> &'static str {
    RULES
}

/// The example Alertmanager config (`monitoring/alertmanager.yml`).
pub fn shipped_alertmanager() -> &'static str {
    ALERTMANAGER
}

/// The Grafana dashboard (`monitoring/grafana/rehearse.json`).
pub fn shipped_dashboard() -> &'static str {
    DASHBOARD
}

/// The alert names of the shipped rules, in file order.
fn shipped_alert_names() -> Vec<String> {
    // The shipped file is checked by the tests: it always parses.
    alert_names(RULES).unwrap_or_default()
}

/// The shipped rule group on the weekly job's batch-job series.
const WEEKLY_GROUP: &str = "rehearse-weekly-job";

/// The shipped rules a rehearsal's own Prometheus evaluates: all but the weekly job's group.
/// Its series are written by the job after a run ends, never by the system under test, so its
/// `absent()` branch would hold (pending) in every rehearsal and judge nothing.
pub fn rehearsal_rules() -> String {
    without_group(RULES, WEEKLY_GROUP)
}

/// The alert names of [`rehearsal_rules`], in file order.
pub fn rehearsal_alert_names() -> Vec<String> {
    // Checked by the tests: it always parses.
    alert_names(&rehearsal_rules()).unwrap_or_default()
}

/// The alerts of the weekly job's group, which no rehearsal can produce.
pub fn weekly_alert_names() -> Vec<String> {
    let rehearsal = rehearsal_alert_names();
    shipped_alert_names()
        .into_iter()
        .filter(|n| !rehearsal.contains(n))
        .collect()
}

/// `rules` (a rule file's text, groups as `  - name: NAME` items) without the group `name`:
/// its lines up to the next group's.
fn without_group(rules: &str, name: &str) -> String {
    let start = format!("- name: {name}");
    let mut out = String::new();
    let mut indent: Option<usize> = None;
    for line in rules.lines() {
        let depth = line.len() - line.trim_start().len();
        match indent {
            Some(d) if depth == d && line.trim_start().starts_with("- name:") => indent = None,
            Some(_) => continue,
            None => {}
        }
        if line.trim_start() == start {
            indent = Some(depth);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `docs/alerts.md#<alert>`: the `runbook_url` every shipped rule carries, relative to where
/// the docs are kept (`--runbook-base` prefixes it). The tests check every shipped rule has it.
#[cfg(test)]
fn runbook_path(alert: &str) -> String {
    format!("docs/alerts.md#{}", alert.to_ascii_lowercase())
}

/// `rules` with every `runbook_url: "docs/alerts.md#…"` prefixed by `base` (a trailing `/` is
/// added when missing), for a Prometheus whose users read the docs at `base`.
pub fn with_runbook_base(rules: &str, base: &str) -> String {
    let base = if base.is_empty() || base.ends_with('/') {
        base.to_string()
    } else {
        format!("{base}/")
    };
    rules.replace(
        "runbook_url: \"docs/alerts.md#",
        &format!("runbook_url: \"{base}docs/alerts.md#"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_rules_name_their_alerts() {
        assert_eq!(
            shipped_alert_names(),
            [
                "BreakerOpen",
                "BreakerOpenTooLong",
                "BreakerFlapping",
                "HealthBreakerDisagreement",
                "BreakerRetryAfterSkips",
                "ModelFallbackActive",
                "ProviderAllProfilesCooling",
                "RehearsalNotSucceeded",
            ]
        );
    }

    #[test]
    fn every_shipped_rule_has_a_severity_and_its_runbook() {
        let rules = alert_rules(shipped_rules()).unwrap();
        assert_eq!(rules.len(), 8);
        for r in &rules {
            let severity = r.labels.get("severity").map(String::as_str);
            assert!(
                matches!(severity, Some("critical" | "warning" | "info")),
                "{}: severity {severity:?}",
                r.alert
            );
            assert_eq!(
                r.annotations.get("runbook_url"),
                Some(&runbook_path(&r.alert)),
                "{}",
                r.alert
            );
            for key in ["summary", "description"] {
                assert!(r.annotations.contains_key(key), "{}: no {key}", r.alert);
            }
        }
    }

    #[test]
    fn every_runbook_anchor_is_a_heading_of_docs_alerts_md() {
        let doc = include_str!("../../docs/alerts.md");
        for name in shipped_alert_names() {
            // A Markdown heading `### BreakerOpen` gets the anchor `#breakeropen`.
            assert!(
                doc.lines().any(|l| l.trim_start_matches('#').trim() == name
                    && l.starts_with("### ")),
                "docs/alerts.md has no `### {name}` heading"
            );
        }
    }

    #[test]
    fn a_runbook_base_prefixes_every_runbook_url() {
        let out = with_runbook_base(shipped_rules(), "https://wiki.example/ops");
        let rules = alert_rules(&out).unwrap();
        assert!(rules.iter().all(|r| r.annotations["runbook_url"]
            == format!("https://wiki.example/ops/{}", runbook_path(&r.alert))));
        assert_eq!(with_runbook_base(shipped_rules(), ""), shipped_rules());
    }

    #[test]
    fn a_rehearsal_evaluates_every_shipped_rule_but_the_weekly_jobs() {
        let rules = alert_rules(&rehearsal_rules()).unwrap();
        let names: Vec<&str> = rules.iter().map(|r| r.alert.as_str()).collect();
        assert_eq!(names.len(), shipped_alert_names().len() - 1, "{names:?}");
        assert!(!names.contains(&"RehearsalNotSucceeded"), "{names:?}");
        assert!(!rehearsal_rules().contains("absent("));
        assert_eq!(weekly_alert_names(), ["RehearsalNotSucceeded"]);
        // A group in the middle: the next one kept whole.
        let text = "groups:\n  - name: a\n    rules:\n      - alert: A\n        expr: x\n\n  - name: b\n    rules:\n      - alert: B\n        expr: y\n";
        assert_eq!(
            without_group(text, "a"),
            "groups:\n  - name: b\n    rules:\n      - alert: B\n        expr: y\n"
        );
    }
}
