//! What the exposition parser reads a scrape into (families, samples, their kinds) and its
//! error: the model [`super::parse`], [`super::lexer`] and [`super::validate`] share.

use std::collections::BTreeMap;

/// A parsed exposition: the families in the order they appeared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    /// Metric families in input order.
    pub families: Vec<Family>,
}

/// One metric family: its `# HELP`, `# TYPE` and samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// The family name (for histograms and summaries, without `_bucket`/`_sum`/`_count`).
    pub name: String,
    /// The unescaped `# HELP` text, if any.
    pub help: Option<String>,
    /// The `# TYPE` (untyped when absent).
    pub kind: MetricKind,
    /// The samples in input order.
    pub samples: Vec<Sample>,
}

/// The metric type declared by `# TYPE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A monotonic counter.
    Counter,
    /// A gauge.
    Gauge,
    /// A histogram (`_bucket{le}`, `_sum`, `_count`).
    Histogram,
    /// A summary (`{quantile}`, `_sum`, `_count`).
    Summary,
    /// No `# TYPE`, or `untyped`.
    Untyped,
}

impl MetricKind {
    pub(super) fn from_token(s: &str) -> Option<Self> {
        Some(match s {
            "counter" => Self::Counter,
            "gauge" => Self::Gauge,
            "histogram" => Self::Histogram,
            "summary" => Self::Summary,
            "untyped" => Self::Untyped,
            _ => return None,
        })
    }
}

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The full sample name (e.g. `request_latency_seconds_bucket`).
    pub name: String,
    /// Unescaped label values by label name.
    pub labels: BTreeMap<String, String>,
    /// The value (may be NaN or ±Inf).
    pub value: f64,
    /// The optional timestamp in milliseconds since the Unix epoch.
    pub timestamp_ms: Option<i64>,
}

/// A parse error at a 1-based line and column (columns count characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {msg}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What was wrong.
    pub msg: String,
}

impl Exposition {
    /// This scrape with its counters as increases since `base` (an earlier scrape of the same
    /// endpoint): every sample of a counter family, and a histogram's or summary's buckets, sum
    /// and count, minus the same series in `base` (a series `base` lacks counts from 0; one that
    /// went down was reset and counts from 0, as Prometheus's `increase` does). Gauges, untyped
    /// families, summary quantiles and `_created` timestamps keep their value.
    pub fn increase_since(&self, base: &Exposition) -> Exposition {
        let before: BTreeMap<(&str, &BTreeMap<String, String>), f64> = base
            .families
            .iter()
            .flat_map(|f| f.samples.iter())
            .map(|s| ((s.name.as_str(), &s.labels), s.value))
            .collect();
        let mut out = self.clone();
        for f in &mut out.families {
            let monotonic = matches!(
                f.kind,
                MetricKind::Counter | MetricKind::Histogram | MetricKind::Summary
            );
            if !monotonic {
                continue;
            }
            for s in &mut f.samples {
                let quantile = f.kind == MetricKind::Summary && s.labels.contains_key("quantile");
                if quantile || s.name.ends_with("_created") {
                    continue;
                }
                if let Some(b) = before.get(&(s.name.as_str(), &s.labels))
                    && b.is_finite()
                    && s.value >= *b
                {
                    s.value -= b;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod increase_tests {
    use super::super::parse;

    #[test]
    fn counters_are_increases_since_the_baseline_and_gauges_keep_their_value() {
        let base = parse(
            "# TYPE calls_total counter\ncalls_total{p=\"a\"} 5\ncalls_total{p=\"b\"} 2\n\
             # TYPE up gauge\nup 1\n\
             # TYPE lat histogram\nlat_bucket{le=\"+Inf\"} 3\nlat_sum 1.5\nlat_count 3\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let last = parse(
            "# TYPE calls_total counter\ncalls_total{p=\"a\"} 9\ncalls_total{p=\"b\"} 1\ncalls_total{p=\"c\"} 4\n\
             # TYPE up gauge\nup 1\n\
             # TYPE lat histogram\nlat_bucket{le=\"+Inf\"} 7\nlat_sum 2.5\nlat_count 7\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let d = last.increase_since(&base);
        let v = |name: &str, label: Option<(&str, &str)>| -> f64 {
            d.samples()
                .find(|s| {
                    s.name == name
                        && label.is_none_or(|(k, v)| s.labels.get(k).map(String::as_str) == Some(v))
                })
                .map_or(f64::NAN, |s| s.value)
        };
        assert_eq!(v("calls_total", Some(("p", "a"))), 4.0, "9 − 5");
        assert_eq!(v("calls_total", Some(("p", "b"))), 1.0, "reset: counts from 0");
        assert_eq!(v("calls_total", Some(("p", "c"))), 4.0, "new series: from 0");
        assert_eq!(v("up", None), 1.0, "a gauge keeps its value");
        assert_eq!(v("lat_count", None), 4.0);
        assert_eq!(v("lat_sum", None), 1.0);
        assert_eq!(v("lat_bucket", None), 4.0);
    }
}
