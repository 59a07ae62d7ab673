//! `[[expect.metric]]` selectors of a run of the engine (embedded or a fleet), checked before
//! it starts so none sums to a vacuous 0 or reads a number no bound can be put on
//! (docs/scenario.md): the sample name and every label name against the engine's catalogue
//! ([`crate::engine::families`]); every label value against what this scenario can make the
//! engine export ([`Producible`]: its deps, models, providers, profiles and tenants, and the
//! engine's fixed words — states, outcomes, reasons, classes, phases, a histogram's `le`
//! bounds); and, at `--speed` ≠ 1, no selector of a quantity no conversion to scenario time
//! keeps: a histogram bucket of wall-clock bounds (`_bucket`) or a Unix timestamp. Each
//! problem is the field, a needle inside its value to point at, and what is wrong, with a
//! "did you mean" where a near name exists.

use std::collections::BTreeSet;

use super::format::ScenarioFile;
use crate::engine::RequestKind;
use crate::engine::failover::profiles::ProfileBook;
use crate::engine::families::{
    LabelValues, SampleTime, SelectorProblem, TimeBase, check_selector, family_of, le_values,
    sample_time,
};
use crate::replay::traffic::TrafficLine;
use crate::util::speed::Speed;
use crate::util::suggest::closest;
use crate::wire::dep::provider_of;

/// A selector the run cannot judge: its field, where in the value to point, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// `expect.metric[N].series`.
    pub field: String,
    /// The text inside the value the error points at (else the value's start).
    pub needle: String,
    /// What is wrong.
    pub msg: String,
}

fn field(i: usize) -> String {
    format!("expect.metric[{i}].series")
}

/// The sample names and label names of every selector, against the engine's catalogue.
pub(crate) fn catalogue(file: &ScenarioFile) -> Result<(), Refusal> {
    for (i, m) in file.expect.metric.iter().enumerate() {
        let sel = &m.series;
        if let Err(problem) = check_selector(&sel.name, sel.labels.keys().map(String::as_str)) {
            let needle = match &problem {
                SelectorProblem::UnknownLabel { label, .. } => format!("{label}="),
                SelectorProblem::UnknownSeries { name, .. } => name.clone(),
            };
            return Err(Refusal {
                field: field(i),
                needle,
                msg: problem.to_string(),
            });
        }
    }
    Ok(())
}

/// Every value a label of the engine's families can take in a run of one scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Producible {
    /// Tools, WebSocket channels and model endpoints the scenario reaches.
    pub deps: BTreeSet<String>,
    /// Models of the traffic and the engine configuration, as written (`PROVIDER/MODEL`).
    pub models: BTreeSet<String>,
    /// Providers of those models and of every `[[profile]]`.
    pub providers: BTreeSet<String>,
    /// Auth profile ids: every `[[profile]]`, and `PROVIDER:default` of a provider without one.
    pub profiles: BTreeSet<String>,
    /// Tenants of the traffic and of `[engine.throttle]`.
    pub tenants: BTreeSet<String>,
}

impl Producible {
    /// What `file` with `traffic` can make the engine export; `deps` as
    /// [`super::validate::exercised_deps`] found them.
    pub(crate) fn of(
        file: &ScenarioFile,
        book: &ProfileBook,
        traffic: &[TrafficLine],
        deps: BTreeSet<String>,
    ) -> Self {
        let mut p = Self {
            deps,
            ..Self::default()
        };
        for line in traffic {
            if let RequestKind::Llm { model, .. } = &line.kind {
                p.models.insert(model.clone());
            }
            if let Some(t) = &line.tenant {
                p.tenants.insert(t.clone());
            }
        }
        let mf = &file.engine.model_failover;
        let th = &file.engine.throttle;
        p.models.extend(
            file.all_fallbacks()
                .chain(mf.context_fallbacks.iter())
                .chain(mf.lighter_model.iter())
                .chain(th.cheaper_model.iter())
                .chain(th.pinned.values())
                .cloned(),
        );
        p.tenants.extend(th.tenants.keys().cloned());
        p.tenants.extend(th.pinned.keys().cloned());
        p.providers = p
            .models
            .iter()
            .map(|m| provider_of(m).to_string())
            .chain(file.profile.iter().map(|q| q.provider.clone()))
            .collect();
        for provider in &p.providers {
            for e in book.for_provider(provider) {
                p.profiles.insert(e.profile.id.clone());
            }
        }
        p
    }

    /// The values `label` of the engine's sample `name` can take in this scenario's run
    /// (`None`: not a sample and label of the catalogue).
    pub(crate) fn values(&self, name: &str, label: &str) -> Option<Vec<String>> {
        let f = family_of(name)?;
        if label == "le" {
            return name.ends_with("_bucket").then(|| le_values(f));
        }
        let domain = f.values_of(label)?;
        let set = match domain {
            LabelValues::Dep => &self.deps,
            LabelValues::Model => &self.models,
            LabelValues::Provider => &self.providers,
            LabelValues::Profile => &self.profiles,
            LabelValues::Tenant => &self.tenants,
            fixed => {
                let words = fixed.fixed().unwrap_or_default();
                return Some(words.into_iter().map(str::to_string).collect());
            }
        };
        Some(set.iter().cloned().collect())
    }
}

/// Every label value of every selector is one the run can export (see [`Producible`]).
pub(crate) fn label_values(file: &ScenarioFile, producible: &Producible) -> Result<(), Refusal> {
    for (i, m) in file.expect.metric.iter().enumerate() {
        let sel = &m.series;
        for (label, value) in &sel.labels {
            let Some(values) = producible.values(&sel.name, label) else {
                continue;
            };
            if values.iter().any(|v| v == value) {
                continue;
            }
            let hint = closest(value, values.iter().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            let known = if values.is_empty() {
                "none in this scenario".to_string()
            } else {
                values.join(", ")
            };
            return Err(Refusal {
                field: field(i),
                needle: value.clone(),
                msg: format!(
                    "`{label}=\"{value}\"`: no run of this scenario can make the engine export \
                     `{}` with that {label}, so the selector would sum nothing to 0{hint} \
                     ({label} values: {known})",
                    sel.name
                ),
            });
        }
    }
    Ok(())
}

/// At `speed` ≠ 1, no selector of a wall-clock quantity that no conversion to scenario time
/// keeps: a histogram bucket (its `le` bounds are wall-clock seconds) or a Unix timestamp. A
/// wall-clock duration (`health_breaker_disagreement_seconds`, a histogram's `_sum`) is judged
/// in scenario time (× speed) and needs no check here.
pub(crate) fn at_speed(file: &ScenarioFile, speed: Speed) -> Result<(), Refusal> {
    if speed == Speed::ONE {
        return Ok(());
    }
    for (i, m) in file.expect.metric.iter().enumerate() {
        let name = &m.series.name;
        let why = match sample_time(name) {
            Some(SampleTime::WallBuckets) => format!(
                "`{name}` counts under bucket bounds (`le`) of wall-clock seconds: at --speed \
                 {speed} the bound `le=\"1\"` holds what took up to {speed} scenario seconds, so \
                 no bound on it means the same as at speed 1; bound `{}_count` or `{}_sum` \
                 (judged in scenario time), or run at speed 1",
                name.trim_end_matches("_bucket"),
                name.trim_end_matches("_bucket"),
            ),
            Some(SampleTime::Base(TimeBase::Unix)) => format!(
                "`{name}` is a Unix time of the wall clock, which --speed {speed} does not \
                 turn into scenario time: a bound on it means something else at every speed; \
                 run at speed 1"
            ),
            _ => continue,
        };
        return Err(Refusal {
            field: field(i),
            needle: name.clone(),
            msg: format!("refused at --speed {speed}: {why}"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "name = \"t\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n\
        [engine.modelFailover]\nfallbacks = [\"fallback/m2\"]\n\
        [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-a\"\n";

    fn traffic() -> Vec<TrafficLine> {
        crate::replay::traffic::parse_traffic(
            "{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":8,\"tenant\":\"team-a\"}\n\
             {\"at_ms\":5,\"kind\":\"tool\",\"tool\":\"crm_search\",\"idempotent\":true,\"body\":{}}\n",
            "t.jsonl",
        )
        .unwrap()
    }

    fn file(series: &str) -> ScenarioFile {
        let text = format!("{BASE}[[expect.metric]]\nseries = '{series}'\nat_most = 0\n");
        ScenarioFile::parse(&text, "t.toml").unwrap()
    }

    fn producible(f: &ScenarioFile) -> Producible {
        let book = ProfileBook::new(f.profile.clone()).unwrap();
        let deps = super::super::validate::exercised_deps(f, &book, &traffic());
        Producible::of(f, &book, &traffic(), deps)
    }

    fn values(series: &str) -> Result<(), Refusal> {
        let f = file(series);
        label_values(&f, &producible(&f))
    }

    #[test]
    fn the_scenario_decides_what_a_label_can_hold() {
        let p = producible(&file("requests_total"));
        assert!(p.deps.contains("crm_search"));
        assert_eq!(
            p.models,
            ["fallback/m2", "mockai/m1"].map(String::from).into()
        );
        assert_eq!(p.providers, ["fallback", "mockai"].map(String::from).into());
        // The fallback's provider has no profile: its implicit one.
        assert_eq!(
            p.profiles,
            ["fallback:default", "mockai:a"].map(String::from).into()
        );
        assert_eq!(p.tenants, ["team-a"].map(String::from).into());
        for ok in [
            "requests_total{dep=\"crm_search\",outcome=\"timeout\"}",
            "profile_cooldowns_total{provider=\"mockai\",profile=\"mockai:a\",reason=\"rate_limit\"}",
            "model_fallbacks_total{from=\"mockai/m1\",to=\"fallback/m2\"}",
            "breaker_transitions_total{to=\"half_open\"}",
            "timeouts_total{class=\"llm_inference\",phase=\"inter_token\"}",
            "throttled_total{tenant=\"team-a\"}",
            "request_latency_seconds_bucket{le=\"0.25\"}",
            "request_latency_seconds_bucket{le=\"+Inf\"}",
            "coordinator_mode{mode=\"local\"}",
        ] {
            assert_eq!(values(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn a_value_nothing_exports_is_refused_with_the_nearest() {
        for (series, needle, wants) in [
            ("requests_total{outcome=\"timout\"}", "timout", "did you mean `timeout`?"),
            (
                "profile_cooldowns_total{profile=\"mockai:b\"}",
                "mockai:b",
                "did you mean `mockai:a`?",
            ),
            (
                "profile_retries_total{reason=\"rate_limited\"}",
                "rate_limited",
                "did you mean `rate_limit`?",
            ),
            (
                "model_fallbacks_total{to=\"fallback/m3\"}",
                "fallback/m3",
                "did you mean `fallback/m2`?",
            ),
            ("breaker_state{dep=\"crm_serch\"}", "crm_serch", "did you mean `crm_search`?"),
            ("request_latency_seconds_bucket{le=\"0.3\"}", "0.3", "le values: 0.005"),
            ("throttled_total{tenant=\"team-b\"}", "team-b", "did you mean `team-a`?"),
            (
                "breaker_transitions_total{from=\"halfopen\"}",
                "halfopen",
                "did you mean `half_open`?",
            ),
        ] {
            let e = values(series).unwrap_err();
            assert_eq!(e.field, "expect.metric[0].series", "{series}");
            assert_eq!(e.needle, needle, "{series}");
            assert!(e.msg.contains(wants), "{series}: {}", e.msg);
            assert!(e.msg.contains("sum nothing to 0"), "{}", e.msg);
        }
    }

    #[test]
    fn buckets_and_timestamps_are_refused_off_speed_1_and_durations_are_not() {
        let sp = |v| Speed::new(v).unwrap();
        let bucket = file("request_latency_seconds_bucket{le=\"1\"}");
        assert_eq!(at_speed(&bucket, Speed::ONE), Ok(()));
        let e = at_speed(&bucket, sp(2.0)).unwrap_err();
        assert!(e.msg.starts_with("refused at --speed 2: "), "{}", e.msg);
        assert!(e.msg.contains("`request_latency_seconds_count`"), "{}", e.msg);
        let unix = file("breaker_open_since_timestamp_seconds");
        assert_eq!(at_speed(&unix, Speed::ONE), Ok(()));
        assert!(at_speed(&unix, sp(6.0)).unwrap_err().msg.contains("Unix time"));
        for fine in [
            "health_breaker_disagreement_seconds",
            "request_latency_seconds_sum",
            "request_latency_seconds_count",
            "timeout_deadline_seconds",
            "requests_total",
        ] {
            assert_eq!(at_speed(&file(fine), sp(6.0)), Ok(()), "{fine}");
        }
    }
}
