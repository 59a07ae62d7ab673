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
