//! The alert and dashboard rows checked against the rules the run's Prometheus evaluates and
//! what the scenario can produce (docs/alerts.md, "What a `never` needs"): a rule that cannot
//! tie its alerts to the run, reads a family the engine does not export (or a label value the
//! scenario cannot produce), or cannot fire within the run; a row `labels` key no rule carries
//! or a value the scenario cannot produce; a dashboard dep that does not exist. Each is exit 2
//! at the row's file:line:col ([`crate::verdict::alert_rules::check_rows`]). Before those, the
//! `[prometheus]` table's own checks, its rule files read and every row naming an alert they
//! define ([`check_alerts`]).

use std::collections::BTreeSet;
use std::path::Path;

use super::field::FieldError;
use super::format::{ScenarioError, ScenarioFile};
use super::locate::locate_within;
use crate::verdict::alert_rules::{Catalogue, Domains, RowsCx, RuleRef, Scope, check_rows};

/// The 1-based line of the rule `alert` in a rule file's text (`- alert: NAME`).
fn rule_line(text: &str, alert: &str) -> Option<usize> {
    let i = text.lines().position(|l| {
        let l = l.trim_start().trim_start_matches('-').trim_start();
        l.strip_prefix("alert:")
            .is_some_and(|n| n.trim().trim_matches(['"', '\'']) == alert)
    })?;
    Some(i + 1)
}

/// Checks the scenario's alert and dashboard rows (see the module's opening). `deps`: the deps
/// the scenario can produce; `arms`: its runs' names.
pub(crate) fn check(
    path: &Path,
    text: &str,
    file: &ScenarioFile,
    deps: &BTreeSet<String>,
    arms: &[&str],
) -> Result<(), ScenarioError> {
    let Some(p) = &file.prometheus else {
        return Ok(());
    };
    if file.expect.alert.is_empty() && file.expect.dashboard.is_empty() {
        return Ok(());
    }
    // The rule texts the run's Prometheus evaluates: the scenario's, or the shipped ones.
    let mut texts: Vec<(String, String)> = Vec::new();
    if p.rules.is_empty() {
        texts.push((
            "the shipped rules".into(),
            crate::monitoring::rehearsal_rules(),
        ));
    }
    for f in p.rule_paths(path) {
        // Unreadable: the table's own checks said so already.
        if let Ok(t) = std::fs::read_to_string(&f) {
            texts.push((f.display().to_string(), t));
        }
    }
    let mut rules = Vec::new();
    let mut records = Vec::new();
    for (name, t) in &texts {
        // A file promtool would reject is promtool's to refuse (before the run).
        let (Ok(a), Ok(r)) = (
            crate::monitoring::alert_rules(t),
            crate::monitoring::record_rules(t),
        ) else {
            continue;
        };
        rules.extend(a.into_iter().map(|rule| RuleRef {
            at: match rule_line(t, &rule.alert) {
                Some(l) => format!("{name}:{l}"),
                None => name.clone(),
            },
            rule,
        }));
        records.extend(r);
    }
    let providers: BTreeSet<String> = file.profile.iter().map(|x| x.provider.clone()).collect();
    let arms: Vec<String> = arms.iter().map(|a| a.to_string()).collect();
    let hosts: Vec<String> = if file.fleet.is_fleet() {
        (0..file.fleet.hosts).map(|i| format!("h{i}")).collect()
    } else {
        vec!["sut".into()]
    };
    let cx = RowsCx {
        rules: &rules,
        scope: Scope {
            catalogue: if file.target.kind.is_external() {
                Catalogue::Foreign(None)
            } else {
                Catalogue::Engine
            },
            records: &records,
            target_labels_known: p.spawn,
            domains: Some(Domains {
                deps,
                providers: &providers,
                arms: &arms,
                hosts: &hosts,
            }),
        },
        duration: file.duration,
    };
    check_rows(&file.expect.alert, &file.expect.dashboard, &cx).map_err(|e| {
        ScenarioError::Invalid {
            path: path.display().to_string(),
            at: locate_within(text, &e.field, &e.needle),
            field: e.field,
            msg: e.msg,
        }
    })
}

/// `[prometheus]` and the alert tables: the table's own checks, its rule files readable, and
/// every `[[expect.alert]]` naming an alert those rules define (the shipped rules by default).
pub(super) fn check_alerts(path: &Path, file: &ScenarioFile) -> Result<(), FieldError> {
    let mut names = Vec::new();
    if let Some(p) = &file.prometheus {
        p.validate()
            .map_err(|e| FieldError::new(format!("prometheus.{}", e.field), e.message))?;
        // A Prometheus the user runs finds a target the run moves (the engine's `/metrics`, a
        // fleet host's: free ports each run) only through the targets file the run rewrites;
        // without one it scrapes nothing of the run, and only an external gateway's fixed
        // `metrics_url` can be in its own scrape config.
        let fixed_url = file.target.kind.is_external() && file.target.metrics_url.is_some();
        if p.url.is_some() && p.targets_file.is_none() && !fixed_url {
            return Err(FieldError::new(
                "prometheus.url",
                "your Prometheus cannot find the system under test: its metrics endpoints get \
                 free ports each run; give `targets_file = \"PATH\"` (rewritten arm by arm) and \
                 point your Prometheus's `file_sd_configs` at it (docs/alerts.md)"
                    .into(),
            ));
        }
        if p.rules.is_empty() {
            // The weekly job's rule watches series the job writes after a run: not in a run.
            let weekly = crate::monitoring::weekly_alert_names();
            if let Some((i, a)) = (file.expect.alert.iter().enumerate())
                .find(|(_, a)| weekly.contains(&a.alert))
            {
                return Err(FieldError::new(
                    format!("expect.alert[{i}].alert"),
                    format!(
                        "`{}` watches the weekly job's batch-job series, written after a run \
                         ends and never by the system under test: a rehearsal's Prometheus \
                         leaves that rule out (docs/alerts.md)",
                        a.alert
                    ),
                ));
            }
            names = crate::monitoring::rehearsal_alert_names();
        }
        for (i, rule_file) in p.rule_paths(path).iter().enumerate() {
            let text = std::fs::read_to_string(rule_file).map_err(|e| {
                FieldError::new(
                    format!("prometheus.rules[{i}]"),
                    format!("{}: {e}", rule_file.display()),
                )
            })?;
            // promtool judges the file's shape before a run; a file it would reject still names
            // what it can.
            names.extend(
                crate::monitoring::alert_names(&text)
                    .unwrap_or_else(|_| super::prometheus::alert_names_in(&text)),
            );
        }
    }
    let cx = crate::verdict::alert::AlertContext {
        faults: &file.fault,
        prometheus: file.prometheus.is_some(),
        alertmanager: file.prometheus.as_ref().is_some_and(|p| p.alertmanager),
        engine_events: !file.target.kind.is_external(),
        names: &names,
    };
    crate::verdict::alert::validate(&file.expect.alert, &file.expect.dashboard, &cx, &|_| None)
        .map_err(|e| FieldError::new(e.field, e.msg))
}
