//! Whether an alert row's rule could have fired in the run, from its expression alone (pure):
//! every series selector names a family the system under test can export, with labels it has
//! and values the scenario can produce; every output of the expression keeps a label that ties
//! it to a scrape target of the run (`instance`, `job`, `arm`, `host`); its `for:` and the
//! elapsed-time bounds it needs fit in the run. Used before the run on the rules the scenario
//! names (exit 2 at the row, [`check_rows`]) and after it on the rules Prometheus reported
//! ([`rule_problem`], a failed row).

use std::collections::BTreeSet;
use std::time::Duration;

use super::alert::{ExpectAlert, ExpectDashboard};
use crate::engine::families::{self, check_selector};
use crate::monitoring::promql::{self, MatchKind, Parsed, Selector, Shape, TIE_LABELS};
use crate::monitoring::{AlertRule, RecordRule};
use crate::util::suggest::closest;

/// Series Prometheus makes itself for every target.
const SYNTHETIC: [&str; 5] = [
    "up",
    "scrape_duration_seconds",
    "scrape_samples_scraped",
    "scrape_samples_post_metric_relabeling",
    "scrape_series_added",
];
/// The rules' own series: any label.
const RULE_SERIES: [&str; 2] = ["ALERTS", "ALERTS_FOR_STATE"];

/// Gauges whose value is a time elapsed inside the run (a disagreement's length): never above
/// the run's duration.
const ELAPSED_GAUGES: [&str; 1] = [families::DISAGREEMENT.name];

/// How deep recorded series are followed into their recording rules.
const MAX_DEPTH: usize = 8;

/// Which families the system under test can export.
#[derive(Clone, Copy)]
pub enum Catalogue<'a> {
    /// The engine's (embedded, every fleet host): `engine::families`, a family known there with
    /// no series yet witnessing zero (its counters are created lazily).
    Engine,
    /// A foreign exporter (an `http` target's `metrics_url`): unknown before the run; after it,
    /// the families some scrape of the run held (`None`: not known).
    Foreign(Option<&'a dyn Fn(&str) -> bool>),
}

impl std::fmt::Debug for Catalogue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Engine => write!(f, "Engine"),
            Self::Foreign(Some(_)) => write!(f, "Foreign(scraped)"),
            Self::Foreign(None) => write!(f, "Foreign(unknown)"),
        }
    }
}

/// The label values a scenario can produce.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Domains<'a> {
    /// Deps (`dep`).
    pub deps: &'a BTreeSet<String>,
    /// Providers (`provider`).
    pub providers: &'a BTreeSet<String>,
    /// Runs (`arm`: policies, coordinations, target kind, versions).
    pub arms: &'a [String],
    /// Hosts (`host`: `sut`, a fleet's `h0`...).
    pub hosts: &'a [String],
}

/// What a rule's expression is checked against.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    /// The families the system under test can export.
    pub catalogue: Catalogue<'a>,
    /// The recording rules evaluated beside it (their series are known families).
    pub records: &'a [RecordRule],
    /// True when the target labels are exactly `job`, `instance`, `arm`, `host` (the harness's
    /// Prometheus); false for a Prometheus the user runs (its relabelling may add any).
    pub target_labels_known: bool,
    /// The values the scenario can produce, when known (before the run).
    pub domains: Option<Domains<'a>>,
}

/// One alerting rule with where it is written.
#[derive(Debug, Clone)]
pub(crate) struct RuleRef {
    /// `rules.yml:12` (or `the shipped rules:12`).
    pub at: String,
    /// The rule.
    pub rule: AlertRule,
}

fn engine_labels(name: &str) -> Option<Vec<&'static str>> {
    families::sample_names()
        .into_iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, _, l)| l)
}

fn hint(word: &str, known: &[String]) -> String {
    closest(word, known.iter().map(String::as_str))
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

impl Scope<'_> {
    fn record(&self, name: &str) -> Option<&RecordRule> {
        self.records.iter().find(|r| r.record == name)
    }

    /// The labels the series of `sel` may carry.
    fn series_shape(&self, sel: &Selector) -> Shape {
        self.shape_at(sel, 0)
    }

    fn shape_at(&self, sel: &Selector, depth: usize) -> Shape {
        let Some(name) = sel.name.as_deref() else {
            return Shape::unknown();
        };
        if RULE_SERIES.contains(&name) {
            return Shape::unknown();
        }
        if let Some(r) = self.record(name) {
            return match promql::parse(&r.expr) {
                Ok(p) if depth < MAX_DEPTH => {
                    let mut all = Shape::default();
                    for s in p.shapes(&|s: &Selector| self.shape_at(s, depth + 1)) {
                        all.any |= s.any;
                        all.labels.extend(s.labels);
                    }
                    all
                }
                _ => Shape::unknown(),
            };
        }
        let mut labels: Vec<&str> = TIE_LABELS.to_vec();
        match (self.catalogue, engine_labels(name)) {
            _ if SYNTHETIC.contains(&name) => {}
            (Catalogue::Engine, Some(l)) => labels.extend(l),
            _ => return Shape::unknown(),
        }
        let mut s = Shape::of(labels);
        s.any = !self.target_labels_known;
        s
    }

    /// Why `sel` cannot select anything the system under test exports (`None` when it can).
    pub(crate) fn selector_problem(&self, sel: &Selector) -> Option<String> {
        let name = sel.name.as_deref()?;
        if RULE_SERIES.contains(&name) || self.record(name).is_some() {
            return None;
        }
        let family_labels: Option<Vec<&str>> = if SYNTHETIC.contains(&name) {
            Some(Vec::new())
        } else {
            match self.catalogue {
                Catalogue::Engine => {
                    if let Err(e) = check_selector(name, []) {
                        return Some(e.to_string());
                    }
                    engine_labels(name)
                }
                Catalogue::Foreign(Some(exported)) if !exported(name) => {
                    return Some(format!(
                        "`{name}` was never exported by the system under test (no scrape of the \
                         run held it)"
                    ));
                }
                Catalogue::Foreign(_) => None,
            }
        };
        for m in sel.matchers.iter().filter(|m| m.requires_label()) {
            let target_label = TIE_LABELS.contains(&m.name.as_str());
            if let Some(own) = &family_labels
                && !target_label
                && !own.contains(&m.name.as_str())
                && self.target_labels_known
            {
                let mut known: Vec<String> = own.iter().map(|l| l.to_string()).collect();
                known.extend(TIE_LABELS.iter().map(|l| l.to_string()));
                return Some(format!(
                    "`{name}` has no label `{}`{} (its labels: {})",
                    m.name,
                    hint(&m.name, &known),
                    known.join(", ")
                ));
            }
            if m.kind != MatchKind::Eq {
                continue;
            }
            let family = family_labels.as_ref().map(|_| name);
            if let Some(why) = self.value_problem(&m.name, &m.value, family) {
                return Some(why);
            }
        }
        None
    }

    /// Why the scenario cannot produce `label="value"` (on series of `family`, when known).
    fn value_problem(
        &self,
        label: &str,
        value: &str,
        family: Option<&str>,
    ) -> Option<String> {
        let d = self.domains?;
        // A foreign exporter names its deps and providers its own way.
        let ours = matches!(self.catalogue, Catalogue::Engine);
        if !ours && !matches!(label, "arm" | "host") {
            return None;
        }
        let states = ["closed", "half_open", "open"].map(String::from);
        let (what, known): (&str, Vec<String>) = match label {
            "dep" => (
                "a dep this scenario can produce",
                d.deps.iter().cloned().collect(),
            ),
            "provider" => (
                "a provider of this scenario's profiles",
                d.providers.iter().cloned().collect(),
            ),
            "arm" => ("a run of this scenario", d.arms.to_vec()),
            "host" if self.target_labels_known => ("a host of this run", d.hosts.to_vec()),
            "from" | "to"
                if family.is_some_and(|f| {
                    f == families::TRANSITIONS.name || f == families::LAST_TRANSITION.name
                }) =>
            {
                ("a breaker state", states.to_vec())
            }
            _ => return None,
        };
        if known.iter().any(|k| k == value) {
            return None;
        }
        Some(format!(
            "`{label}=\"{value}\"` is not {what}{} ({label}: {})",
            hint(value, &known),
            known.join(", ")
        ))
    }
}

/// Why a rule's alerts could never be told to be the run's, or read what the system under test
/// cannot export, or could never fire in a run of `duration`. `None` when none of these.
pub(crate) fn rule_problem(
    rule: &AlertRule,
    parsed: &Parsed,
    scope: &Scope<'_>,
    duration: Option<Duration>,
) -> Option<String> {
    let shapes = parsed.shapes(&|s: &Selector| scope.series_shape(s));
    if shapes.iter().any(|s| !s.tied()) {
        return Some(format!(
            "its expression `{}` aggregates away every label that ties an alert to a target of \
             the run ({}): its alerts cannot be told from another target's or another run's; \
             keep `instance` (e.g. `max by (job, instance, dep) (...)`)",
            one_line(&rule.expr),
            TIE_LABELS.join(", ")
        ));
    }
    for sel in parsed.selectors() {
        if let Some(why) = scope.selector_problem(&sel) {
            return Some(format!("it reads `{}`: {why}", sel.text()));
        }
    }
    let d = duration?;
    if let Some(f) = rule.for_.as_deref().and_then(prom_duration)
        && f >= d
    {
        return Some(format!(
            "its `for: {}` is not shorter than the run ({}): it cannot fire in it",
            rule.for_.as_deref().unwrap_or_default(),
            humantime::format_duration(d)
        ));
    }
    for (family, n) in parsed.lower_bounds() {
        if ELAPSED_GAUGES.contains(&family.as_str()) && n >= d.as_secs_f64() {
            return Some(format!(
                "it needs `{family}` (a time elapsed inside the run) to reach {n}, and the run \
                 lasts {}: it cannot fire in it",
                humantime::format_duration(d)
            ));
        }
    }
    None
}

fn one_line(expr: &str) -> String {
    expr.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A Prometheus duration (`15s`, `1m30s`, `500ms`, `1h`, `2d`).
pub(crate) fn prom_duration(s: &str) -> Option<Duration> {
    humantime::parse_duration(s.trim()).ok()
}

/// A problem with an alert or dashboard row: its field, the text to point at, the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowError {
    /// `expect.alert[0].labels.dep`.
    pub field: String,
    /// The text inside the field's value to point at.
    pub needle: String,
    /// What is wrong.
    pub msg: String,
}

/// What the rows are checked against before the run.
#[derive(Clone, Copy)]
pub(crate) struct RowsCx<'a> {
    /// Every alerting rule the run's Prometheus evaluates.
    pub rules: &'a [RuleRef],
    /// Its expressions' scope.
    pub scope: Scope<'a>,
    /// The run's duration.
    pub duration: Duration,
}

/// Checks every `[[expect.alert]]` against its rules and the scenario, and every
/// `[[expect.dashboard]]`'s dep: what is known before the run is refused here.
pub(crate) fn check_rows(
    alerts: &[ExpectAlert],
    dashboards: &[ExpectDashboard],
    cx: &RowsCx<'_>,
) -> Result<(), RowError> {
    for (i, a) in alerts.iter().enumerate() {
        check_alert(i, a, cx)?;
    }
    if let Some(d) = cx.scope.domains {
        for (i, x) in dashboards.iter().enumerate() {
            let Some(dep) = &x.dep else { continue };
            if d.deps.contains(dep) {
                continue;
            }
            let known: Vec<String> = d.deps.iter().cloned().collect();
            return Err(RowError {
                field: format!("expect.dashboard[{i}].dep"),
                needle: dep.clone(),
                msg: format!(
                    "`{dep}` is not a dep this scenario can produce: no breaker of it can \
                     transition{} (deps: {})",
                    hint(dep, &known),
                    known.join(", ")
                ),
            });
        }
    }
    Ok(())
}

fn check_alert(i: usize, a: &ExpectAlert, cx: &RowsCx<'_>) -> Result<(), RowError> {
    let f = format!("expect.alert[{i}]");
    let rules: Vec<&RuleRef> = cx
        .rules
        .iter()
        .filter(|r| r.rule.alert == a.alert)
        .collect();
    let mut carried: Vec<Shape> = Vec::new();
    for r in &rules {
        // An expression the parser cannot read is promtool's to refuse.
        let Ok(parsed) = promql::parse(&r.rule.expr) else {
            carried.push(Shape::unknown());
            continue;
        };
        if let Some(why) = rule_problem(&r.rule, &parsed, &cx.scope, Some(cx.duration)) {
            return Err(RowError {
                field: format!("{f}.alert"),
                needle: a.alert.clone(),
                msg: format!("rule `{}` ({}): {why}", r.rule.alert, r.at),
            });
        }
        carried.extend(parsed.shapes(&|s: &Selector| cx.scope.series_shape(s)));
    }
    if rules.is_empty() {
        return Ok(());
    }
    for (k, v) in &a.labels {
        let field = format!("{f}.labels.{k}");
        let err = |needle: &str, msg: String| {
            Err(RowError {
                field: field.clone(),
                needle: needle.to_string(),
                msg,
            })
        };
        if matches!(k.as_str(), "alertname" | "alertstate") {
            return err(
                v,
                format!(
                    "`{k}` is not a label to match on: the alert is named by `alert`, and a row \
                     judges its firing spells"
                ),
            );
        }
        let fixed: Vec<&String> = rules.iter().filter_map(|r| r.rule.labels.get(k)).collect();
        if !fixed.is_empty() {
            if fixed.contains(&v) {
                continue;
            }
            let set: Vec<String> = fixed.iter().map(|x| format!("`{x}`")).collect();
            return err(
                v,
                format!(
                    "rule `{}` sets `{k}` to {}: `{k}=\"{v}\"` never matches its alerts",
                    a.alert,
                    set.join(" or ")
                ),
            );
        }
        if !carried.iter().any(|s| s.may_carry(k)) {
            let mut known: BTreeSet<String> = carried
                .iter()
                .flat_map(|s| s.labels.iter().cloned())
                .collect();
            known.extend(rules.iter().flat_map(|r| r.rule.labels.keys().cloned()));
            let known: Vec<String> = known.into_iter().collect();
            return err(
                v,
                format!(
                    "no rule `{}` carries a label `{k}`{}: its alerts carry {}",
                    a.alert,
                    hint(k, &known),
                    known.join(", ")
                ),
            );
        }
        if let Some(why) = cx.scope.value_problem(k, v, family_of(&rules, k)) {
            return err(v, why);
        }
    }
    Ok(())
}

/// The one engine family among the rules' selectors that carries `label`, if exactly one does
/// (then its values are that family's).
fn family_of(rules: &[&RuleRef], label: &str) -> Option<&'static str> {
    let mut found: BTreeSet<&'static str> = BTreeSet::new();
    for r in rules {
        let Ok(p) = promql::parse(&r.rule.expr) else {
            return None;
        };
        for s in p.selectors() {
            let name = s.name.unwrap_or_default();
            if let Some(f) = families::sample_names()
                .into_iter()
                .find(|(n, _, l)| *n == name && l.contains(&label))
            {
                found.insert(f.1.name);
            }
        }
    }
    if found.len() == 1 {
        found.into_iter().next()
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
