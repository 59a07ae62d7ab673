//! Whole-family checks run after a family is parsed: histogram buckets (`le` parses, ascending,
//! cumulative, `+Inf` present and equal to `_count`), sample names matching the family's type.

use std::collections::BTreeMap;

use super::exposition::{Family, MetricKind};
use super::lexer::parse_value;

/// A family whose samples do not fit its type (a histogram without `+Inf`, decreasing buckets).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InvalidFamily(pub String);

/// Checks one family; the error names the family and the broken rule.
pub(crate) fn check_family(f: &Family) -> Result<(), InvalidFamily> {
    match f.kind {
        MetricKind::Histogram => check_histogram(f),
        MetricKind::Summary => {
            for s in &f.samples {
                if let Some(q) = s.labels.get("quantile")
                    && s.name == f.name
                    && parse_value(q).is_none()
                {
                    return Err(InvalidFamily(format!(
                        "summary {}: quantile {q:?} is not a number",
                        f.name
                    )));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[derive(Default)]
struct Series {
    /// (le, cumulative count) in input order.
    buckets: Vec<(f64, f64)>,
    count: Option<f64>,
}

fn check_histogram(f: &Family) -> Result<(), InvalidFamily> {
    let name = &f.name;
    let mut series: BTreeMap<Vec<(String, String)>, Series> = BTreeMap::new();
    for s in &f.samples {
        let key: Vec<(String, String)> = s
            .labels
            .iter()
            .filter(|(k, _)| k.as_str() != "le")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let entry = series.entry(key).or_default();
        let suffix = s.name.strip_prefix(name.as_str()).unwrap_or("");
        match suffix {
            "_bucket" => {
                let le_text = s.labels.get("le").map(String::as_str).unwrap_or("");
                let le = parse_value(le_text)
                    .filter(|v| !v.is_nan())
                    .ok_or_else(|| {
                        InvalidFamily(format!("histogram {name}: le {le_text:?} is not a number"))
                    })?;
                entry.buckets.push((le, s.value));
            }
            "_count" => entry.count = Some(s.value),
            "_sum" => {}
            _ => {
                return Err(InvalidFamily(format!(
                    "histogram {name}: sample {} is not _bucket, _sum or _count",
                    s.name
                )));
            }
        }
    }
    for (labels, s) in &series {
        let at = || {
            let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
            format!("histogram {name}{{{}}}", l.join(","))
        };
        for w in s.buckets.windows(2) {
            if w[1].0 <= w[0].0 {
                return Err(InvalidFamily(format!(
                    "{}: buckets not in ascending le order",
                    at()
                )));
            }
            if w[1].1 < w[0].1 {
                return Err(InvalidFamily(format!(
                    "{}: bucket counts decrease (not cumulative)",
                    at()
                )));
            }
        }
        match s.buckets.last() {
            Some((le, inf)) if le.is_infinite() && *le > 0.0 => {
                if let Some(c) = s.count
                    && c != *inf
                {
                    return Err(InvalidFamily(format!(
                        "{}: le=\"+Inf\" bucket {inf} differs from _count {c}",
                        at()
                    )));
                }
            }
            _ => return Err(InvalidFamily(format!("{}: no le=\"+Inf\" bucket", at()))),
        }
    }
    Ok(())
}
