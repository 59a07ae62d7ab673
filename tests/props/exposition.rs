//! The Prometheus exposition parser (`rehearse::scrape::parse`) and series selectors: no panic
//! on any text, errors located inside it, and what the engine's writer (the `prometheus` crate's
//! `TextEncoder`, which renders `/metrics`) emits parses back to the same samples, with any label
//! values and any float values.

use std::collections::BTreeMap;

use prometheus::{Encoder, GaugeVec, HistogramOpts, HistogramVec, Opts, Registry, TextEncoder};
use proptest::prelude::*;
use rehearse::scrape::{MetricKind, Selector, parse};

use super::common::{apply, assert_inside, config, edits, fixture, noise};

fn parse_located(text: &str) {
    if let Err(e) = parse(text) {
        assert_inside(text, e.line, e.col, "exposition error");
    }
}

/// One family to register: gauge (with values) or histogram (with buckets and observations).
#[derive(Debug, Clone)]
enum Fam {
    Gauge(Vec<(Vec<String>, f64)>),
    Histogram(Vec<f64>, Vec<(Vec<String>, Vec<f64>)>),
}

#[derive(Debug, Clone)]
struct Spec {
    help: String,
    labels: Vec<String>,
    fam: Fam,
}

/// Label names (distinct, valid, not reserved), then values for them.
fn spec() -> impl Strategy<Value = Spec> {
    let names = prop::collection::btree_set("[a-z][a-z0-9_]{0,6}", 0..4)
        .prop_map(|s| s.into_iter().filter(|n| n != "le").collect::<Vec<_>>());
    // Blanks after the name separate it from the text (Prometheus' own parser skips them too),
    // so a HELP text's leading blanks cannot survive any exposition round trip.
    let help = any::<String>()
        .prop_map(|h| h.trim_start_matches([' ', '\t']).to_string())
        .prop_filter("help is required", |h| !h.is_empty());
    (help, names).prop_flat_map(|(help, labels)| {
        let n = labels.len();
        // Any text, and the characters the format escapes or forbids on a line, more often.
        let value = prop_oneof![any::<String>(), "[\\r\\n\\t\\x00\\\\\"{},=a-z ]{0,6}"];
        let values = prop::collection::vec(value, n);
        let gauge =
            prop::collection::vec((values.clone(), any::<f64>()), 1..4).prop_map(Fam::Gauge);
        let buckets = prop::collection::btree_set(-1_000_000i64..1_000_000, 1..6)
            .prop_map(|s| s.into_iter().map(|b| b as f64 / 1000.0).collect::<Vec<_>>());
        let obs = prop::collection::vec(-2000.0..2000.0f64, 0..8);
        let hist = (buckets, prop::collection::vec((values, obs), 1..3))
            .prop_map(|(b, series)| Fam::Histogram(b, series));
        prop_oneof![gauge, hist].prop_map(move |fam| Spec {
            help: help.clone(),
            labels: labels.clone(),
            fam,
        })
    })
}

/// Registers every spec under a distinct name and renders the registry as `/metrics` does.
fn render(specs: &[Spec]) -> (String, Registry) {
    let reg = Registry::new();
    for (i, s) in specs.iter().enumerate() {
        let names: Vec<&str> = s.labels.iter().map(String::as_str).collect();
        let name = format!("fam{i}_m");
        match &s.fam {
            Fam::Gauge(series) => {
                let g = GaugeVec::new(Opts::new(&name, &s.help), &names).expect("valid gauge");
                for (values, v) in series {
                    let vals: Vec<&str> = values.iter().map(String::as_str).collect();
                    g.with_label_values(&vals).set(*v);
                }
                reg.register(Box::new(g)).expect("register gauge");
            }
            Fam::Histogram(buckets, series) => {
                let h = HistogramVec::new(
                    HistogramOpts::new(&name, &s.help).buckets(buckets.clone()),
                    &names,
                )
                .expect("valid histogram");
                for (values, obs) in series {
                    let vals: Vec<&str> = values.iter().map(String::as_str).collect();
                    let m = h.with_label_values(&vals);
                    obs.iter().for_each(|o| m.observe(*o));
                }
                reg.register(Box::new(h)).expect("register histogram");
            }
        }
    }
    let mut buf = Vec::new();
    TextEncoder::new()
        .encode(&reg.gather(), &mut buf)
        .expect("encodes");
    (String::from_utf8(buf).expect("UTF-8"), reg)
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn noise_never_panics_and_errors_are_located(text in noise()) {
        parse_located(&text);
        parse_located(&format!("# TYPE x histogram\n{text}"));
        let _ = Selector::parse(&text);
    }

    #[test]
    fn mutated_scrapes_fail_located(edits in edits()) {
        // One scrape of the committed fixture (the text between two `# scrape` lines).
        let text = fixture("fixtures/metrics/breaker-flap.scrapes.prom");
        let scrape: String = text.split("# scrape ").nth(3).unwrap_or(&text).to_string();
        parse_located(&apply(&scrape, &edits));
    }

    #[test]
    fn what_the_engine_renders_parses_to_the_same_samples(
        specs in prop::collection::vec(spec(), 1..5),
    ) {
        let (text, reg) = render(&specs);
        let parsed = parse(&text).unwrap_or_else(|e| panic!("{e}\n--- rendered ---\n{text}"));
        let families = reg.gather();
        prop_assert_eq!(parsed.families.len(), families.len());
        for (mf, fam) in families.iter().zip(&parsed.families) {
            prop_assert_eq!(mf.name(), fam.name.as_str());
            prop_assert_eq!(Some(mf.help()), fam.help.as_deref());
            let hist = fam.kind == MetricKind::Histogram;
            for m in mf.get_metric() {
                let labels: BTreeMap<String, String> = m
                    .get_label()
                    .iter()
                    .map(|l| (l.name().to_string(), l.value().to_string()))
                    .collect();
                let find = |name: &str, extra: Option<f64>| {
                    fam.samples.iter().find(|s| {
                        s.name == name
                            && s.labels.iter().filter(|(k, _)| k.as_str() != "le").eq(labels.iter())
                            && extra.is_none_or(|le| {
                                s.labels.get("le").and_then(|v| rehearse::scrape::parse::parse_value(v))
                                    == Some(le)
                            })
                    })
                };
                if hist {
                    let h = m.get_histogram();
                    let count = find(&format!("{}_count", fam.name), None).expect("_count");
                    prop_assert_eq!(count.value, h.get_sample_count() as f64);
                    let sum = find(&format!("{}_sum", fam.name), None).expect("_sum");
                    prop_assert!(same(sum.value, h.get_sample_sum()), "{} vs {}", sum.value, h.get_sample_sum());
                    for b in h.get_bucket() {
                        let s = find(&format!("{}_bucket", fam.name), Some(b.upper_bound()))
                            .unwrap_or_else(|| panic!("bucket le={} missing\n{text}", b.upper_bound()));
                        prop_assert_eq!(s.value, b.cumulative_count() as f64);
                    }
                } else {
                    let s = find(&fam.name, None).unwrap_or_else(|| panic!("{labels:?} missing\n{text}"));
                    prop_assert!(same(s.value, m.get_gauge().get_value()), "{} vs {}", s.value, m.get_gauge().get_value());
                }
            }
        }
    }

    #[test]
    fn a_selector_written_back_parses_the_same(
        name in "[a-zA-Z_:][a-zA-Z0-9_:]{0,12}",
        labels in prop::collection::btree_map("[a-zA-Z_][a-zA-Z0-9_]{0,6}", any::<String>(), 0..4),
    ) {
        let sel = Selector { name, labels };
        let text = sel.to_string();
        prop_assert_eq!(Selector::parse(&text).unwrap_or_else(|e| panic!("{e}: {text}")), sel);
    }
}
