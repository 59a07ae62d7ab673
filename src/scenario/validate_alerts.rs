//! The alert and dashboard rows checked against the rules the run's Prometheus evaluates and
//! what the scenario can produce (docs/alerts.md, "What a `never` needs"): a rule that cannot
//! tie its alerts to the run, reads a family the engine does not export (or a label value the
//! scenario cannot produce), or cannot fire within the run; a row `labels` key no rule carries
//! or a value the scenario cannot produce; a dashboard dep that does not exist. Each is exit 2
//! at the row's file:line:col ([`crate::verdict::alert_rules::check_rows`]).

use std::collections::BTreeSet;
use std::path::Path;

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
