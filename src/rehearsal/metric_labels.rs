//! What a `[[expect.metric]]` row's selector could have matched, judged on what the run's
//! scrapes held: its family, and each of its label matchers (`name="value"`). The witness of
//! every metric row counts them — `label_values_seen` (a scrape held that value on that
//! sample), `label_values_expected` (none did yet, but the system under test can export it:
//! counters are created at their first event) and `label_values_unknown` (neither: the
//! selector sums nothing to 0, and the row is no pass).
//!
//! What the system under test can export: for the engine (embedded or a fleet), what the
//! scenario can produce ([`Producible`], which `validate` already enforced: an unknown value is
//! exit 2 there, and this is the judge's floor under it); for a foreign gateway scraped at its
//! `metrics_url`, the profiles, providers and models the target is configured with
//! ([`configured`]) — anything else must have been held by some scrape of the run. A label
//! name the gateway never exported on that sample, a value no scrape held and the target is
//! not configured with, and a family no scrape held fail the row with the reason and the
//! nearest name seen ("did you mean").

use std::collections::BTreeSet;

use crate::engine::failover::profiles::ProfileBook;
use crate::rehearsal::plan::ScenarioPlan;
use crate::scenario::ScenarioFile;
use crate::scenario::validate::exercised_deps;
use crate::scenario::validate_metrics::Producible;
use crate::scrape::{CompactScrapes, Exposition, Selector};
use crate::replay::traffic::TrafficLine;
use crate::util::suggest::closest;
use crate::verdict::{ExpectKind, ExpectStatus, ExpectationResult, Expectations};

/// Which values the system under test can export without a scrape having shown them yet.
pub(crate) enum Exportable {
    /// The engine: what the scenario can produce.
    Engine(Producible),
    /// A foreign gateway: the names the target is configured with.
    Foreign(BTreeSet<String>),
}

impl Exportable {
    /// What the system under test of `plan` can export.
    pub(crate) fn of(plan: &ScenarioPlan) -> Self {
        let (file, traffic) = (&plan.checked.file, &plan.checked.traffic[..]);
        if let Some(gw) = plan.gateways.first() {
            return Self::Foreign(configured(file, traffic, gw.model.as_deref()));
        }
        // The book was checked when the plan was made; a book that fails here holds nothing.
        let book = ProfileBook::new(file.profile.clone()).unwrap_or_default();
        let deps = exercised_deps(file, &book, traffic);
        Self::Engine(Producible::of(file, &book, traffic, deps))
    }

    fn can_export(&self, name: &str, label: &str, value: &str) -> bool {
        self.names(name, label).iter().any(|v| v == value)
    }

    /// The values of `label` on `name` it can export.
    fn names(&self, name: &str, label: &str) -> Vec<String> {
        match self {
            Self::Engine(p) => p.values(name, label).unwrap_or_default(),
            Self::Foreign(names) => names.iter().cloned().collect(),
        }
    }
}

/// The names a foreign gateway is configured with by the scenario: every `[[profile]]` id and
/// provider, every model of the traffic, of `[models]`, of `[engine.modelFailover]` and `target_model` (`[target]
/// model`, as planned), as written (`PROVIDER/MODEL`) and bare (`MODEL`). A label value among
/// them (a deployment whose series the gateway creates at its first request) witnesses zero.
pub(crate) fn configured(
    file: &ScenarioFile,
    traffic: &[TrafficLine],
    target_model: Option<&str>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in &file.profile {
        out.insert(p.id.clone());
        out.insert(p.provider.clone());
    }
    let models = traffic
        .iter()
        .filter_map(|l| match &l.kind {
            crate::engine::RequestKind::Llm { model, .. } => Some(model.clone()),
            _ => None,
        })
        .chain(file.all_fallbacks().cloned())
        .chain(target_model.map(str::to_string));
    for m in models {
        if let Some((provider, bare)) = m.split_once('/') {
            out.insert(provider.to_string());
            out.insert(bare.to_string());
        }
        out.insert(m);
    }
    out
}

/// How one label matcher stands.
enum Matcher {
    Seen,
    Expected,
    /// Why it can match nothing.
    Unknown(String),
}

/// Whether `e` holds a sample named `name` carrying `label` = `value`.
fn held(e: Option<&Exposition>, name: &str, label: &str, value: &str) -> bool {
    e.is_some_and(|e| {
        e.samples()
            .any(|s| s.name == name && s.labels.get(label).is_some_and(|v| v == value))
    })
}

fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

fn listed<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let v: Vec<&str> = items.into_iter().map(String::as_str).take(12).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// One matcher of `sel` against the scrapes (and a fleet's merged final exposition).
fn matcher(
    sel: &Selector,
    (label, value): (&String, &String),
    scrapes: &CompactScrapes,
    last: Option<&Exposition>,
    exportable: &Exportable,
) -> Matcher {
    let name = &sel.name;
    let labels = scrapes.label_values(name);
    let seen = labels.and_then(|l| l.get(label));
    if seen.is_some_and(|s| s.values.contains(value)) || held(last, name, label, value) {
        return Matcher::Seen;
    }
    let foreign = matches!(exportable, Exportable::Foreign(_));
    match (labels, seen) {
        // Samples of the name were held, none with this label: a label the family lacks.
        (Some(labels), None) if foreign => {
            let names: Vec<&String> = labels.keys().collect();
            return Matcher::Unknown(format!(
                "no scrape's `{name}` carried a label `{label}`{} (its labels: {})",
                hint(label, names.iter().map(|s| s.as_str())),
                listed(names)
            ));
        }
        // Only the family's header (or nothing) was held: its labels were never shown.
        (None, _) if foreign && !exportable.can_export(name, label, value) => {
            return Matcher::Unknown(format!(
                "no scrape held a sample of `{name}`, so no `{label}=\"{value}\"`, and the \
                 target is not configured with `{value}`"
            ));
        }
        _ => {}
    }
    if exportable.can_export(name, label, value) {
        return Matcher::Expected;
    }
    let empty = BTreeSet::new();
    let values = seen.map_or(&empty, |s| &s.values);
    let near = exportable.names(name, label);
    let candidates = values.iter().chain(near.iter()).map(String::as_str);
    let more = if seen.is_some_and(|s| s.full) {
        format!(" (more than {} values were exported; the first are kept)", values.len())
    } else {
        String::new()
    };
    let whose = if foreign {
        "the target is not configured with it"
    } else {
        "no run of this scenario can make the engine export it"
    };
    Matcher::Unknown(format!(
        "`{label}=\"{value}\"` was never exported on `{name}` (no scrape held it) and {whose}{} \
         ({label} values seen: {}){more}",
        hint(value, candidates),
        listed(values)
    ))
}

/// Sets the label witness of every metric row of `expect` and fails those whose selector can
/// match nothing: a foreign family no scrape held, a label or value nothing exports.
pub(crate) fn judge(
    rows: &mut [ExpectationResult],
    expect: &Expectations,
    scrapes: &CompactScrapes,
    last: Option<&Exposition>,
    exportable: &Exportable,
) {
    let foreign = matches!(exportable, Exportable::Foreign(_));
    for m in &expect.metric {
        let sel = &m.series;
        let series = sel.to_string();
        let (mut seen, mut expected, mut unknown) = (0u64, 0u64, 0u64);
        let mut why = Vec::new();
        if foreign && !scrapes.exported(&sel.name) {
            unknown = (sel.labels.len() as u64).max(1);
            why.push(format!(
                "family `{}` never exported by the gateway (no scrape of its metrics_url held \
                 it), so the selector cannot be judged",
                sel.name
            ));
        } else {
            for pair in &sel.labels {
                match matcher(sel, pair, scrapes, last, exportable) {
                    Matcher::Seen => seen += 1,
                    Matcher::Expected => expected += 1,
                    Matcher::Unknown(w) => {
                        unknown += 1;
                        why.push(w);
                    }
                }
            }
        }
        for r in rows
            .iter_mut()
            .filter(|r| r.kind == ExpectKind::Metric && r.series.as_deref() == Some(&series))
        {
            r.witness.set("label_values_seen", seen);
            r.witness.set("label_values_expected", expected);
            r.witness.set("label_values_unknown", unknown);
            if why.is_empty() {
                continue;
            }
            r.ok = false;
            r.status = ExpectStatus::Fail;
            if foreign && !scrapes.exported(&sel.name) {
                r.observed = "never exported".into();
            }
            r.detail = format!("{series} expected {}: {}", r.expected, why.join("; "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scrape::ScrapeSink;

    /// A LiteLLM-like exporter's scrape: per-deployment series under `model_id`.
    const LITELLM: &str = "# TYPE litellm_deployment_failure_responses_total counter\n\
        litellm_deployment_failure_responses_total{model_id=\"gpt-4o-key-A\",api_provider=\"openai\"} 3\n\
        # TYPE litellm_requests_metric_total counter\n\
        # TYPE litellm_spend_metric_total counter\n";

    fn scrapes(text: &str) -> (CompactScrapes, Exposition) {
        let e = crate::scrape::parse(text).unwrap();
        let mut c = CompactScrapes::new(0.0);
        c.scrape(1000, text, Some(&std::sync::Arc::new(e.clone())));
        (c, e)
    }

    fn rows(expect: &Expectations, e: &Exposition) -> Vec<ExpectationResult> {
        crate::verdict::diff_until(expect, &[], Some(e), &[], crate::util::speed::Speed::ONE, None)
    }

    fn metric(series: &str) -> Expectations {
        toml::from_str(&format!("[[metric]]\nseries = '{series}'\nequals = 0\n")).unwrap()
    }

    fn foreign() -> Exportable {
        Exportable::Foreign(["gpt-4o-key-B", "gpt-4o", "openai"].map(String::from).into())
    }

    fn judged(series: &str, exportable: &Exportable) -> ExpectationResult {
        let (c, e) = scrapes(LITELLM);
        let expect = metric(series);
        let mut r = rows(&expect, &e);
        judge(&mut r, &expect, &c, Some(&e), exportable);
        r.remove(0)
    }

    #[test]
    fn a_misspelt_label_name_or_value_of_a_gateway_fails_with_the_nearest() {
        let r = judged(
            "litellm_deployment_failure_responses_total{modelid=\"gpt-4o-key-A\"}",
            &foreign(),
        );
        assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
        assert!(r.detail.contains("carried a label `modelid`; did you mean `model_id`?"), "{}", r.detail);
        assert_eq!(r.witness.get("label_values_unknown"), 1);
        let r = judged(
            "litellm_deployment_failure_responses_total{model_id=\"gpt-4o-key-Z\"}",
            &foreign(),
        );
        assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
        assert!(r.detail.contains("did you mean `gpt-4o-key-A`?"), "{}", r.detail);
        assert!(r.detail.contains("the target is not configured with it"), "{}", r.detail);
        // The floor says the same.
        assert!(ExpectKind::Metric.witness_rule().missing(&r.witness).is_some());
    }

    #[test]
    fn a_configured_deployment_without_series_yet_witnesses_zero() {
        let r = judged(
            "litellm_deployment_failure_responses_total{model_id=\"gpt-4o-key-B\"}",
            &foreign(),
        );
        assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
        assert_eq!(
            (r.witness.get("label_values_seen"), r.witness.get("label_values_expected")),
            (0, 1)
        );
        let r = judged(
            "litellm_deployment_failure_responses_total{model_id=\"gpt-4o-key-A\"}",
            &foreign(),
        );
        assert_eq!(r.status, ExpectStatus::Fail, "3 failures seen: {}", r.detail);
        assert_eq!(r.witness.get("label_values_seen"), 1);
        // A family shown only by its header: a configured value witnesses zero, another fails.
        let r = judged("litellm_requests_metric_total{model=\"gpt-4o\"}", &foreign());
        assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
        let r = judged("litellm_requests_metric_total{model=\"gpt-4\"}", &foreign());
        assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
        assert!(r.detail.contains("no scrape held a sample"), "{}", r.detail);
        // A family no scrape held, as before.
        let r = judged("litellm_spend_total{model=\"gpt-4o\"}", &foreign());
        assert_eq!(r.observed, "never exported");
        assert!(r.detail.contains("family `litellm_spend_total` never exported by the gateway"));
    }

    #[test]
    fn the_engine_lets_a_producible_value_witness_zero_and_nothing_else() {
        let p = Producible {
            deps: ["crm_search", "calculator"].map(String::from).into(),
            ..Producible::default()
        };
        let engine = Exportable::Engine(p);
        let text = "# TYPE requests_total counter\nrequests_total{dep=\"calculator\",outcome=\"ok\"} 5\n";
        let (c, e) = scrapes(text);
        for (series, status, seen, expected) in [
            ("requests_total{dep=\"crm_search\",outcome=\"timeout\"}", ExpectStatus::Pass, 0, 2),
            ("requests_total{dep=\"calculator\",outcome=\"timeout\"}", ExpectStatus::Pass, 1, 1),
            ("requests_total{dep=\"crm_serch\"}", ExpectStatus::Fail, 0, 0),
        ] {
            let expect = metric(series);
            let mut r = rows(&expect, &e);
            judge(&mut r, &expect, &c, Some(&e), &engine);
            assert_eq!(r[0].status, status, "{series}: {}", r[0].detail);
            assert_eq!(r[0].witness.get("label_values_seen"), seen, "{series}");
            assert_eq!(r[0].witness.get("label_values_expected"), expected, "{series}");
        }
        let expect = metric("requests_total{dep=\"crm_serch\"}");
        let mut r = rows(&expect, &e);
        judge(&mut r, &expect, &c, Some(&e), &engine);
        assert!(r[0].detail.contains("did you mean `crm_search`?"), "{}", r[0].detail);
        assert!(r[0].detail.contains("no run of this scenario can make the engine export it"));
    }
}
