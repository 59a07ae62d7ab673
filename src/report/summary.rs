//! The A/B numbers of one policy run in report.json (`policies[].summary`, `policies[].health`):
//! cooldowns, rotations, retries, fallbacks, failures and rejections, outcomes and exact attempt
//! latency per dep, each dep's deadline over the run, and its canaries. Re-exported by
//! [`super::model`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::util::round::ser3;

/// One dep's synthetic health checks (canaries) over a policy run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthRow {
    /// Canary calls that finished.
    pub canary_calls: u64,
    /// Of those, failed ones.
    pub canary_failures: u64,
    /// Largest `health_breaker_disagreement_seconds{dep}` seen in any scrape, in seconds of
    /// scenario time (the gauge counts wall seconds; × speed).
    #[serde(serialize_with = "ser3")]
    pub max_disagreement_s: f64,
}

/// The A/B comparison numbers of one policy run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// `profile_cooldowns_total` by reason.
    pub cooldowns_by_reason: BTreeMap<String, u64>,
    /// `profile_rotations_total`.
    pub rotations: u64,
    /// `profile_retries_total` (same-profile retries).
    pub retries: u64,
    /// `model_fallbacks_total`.
    pub fallbacks: u64,
    /// Requests the replayer saw fail (from the replay summary; null when not known).
    pub failed_requests: Option<u64>,
    /// Requests that returned a user-visible error (from the harness; null when not known).
    pub user_visible_errors: Option<u64>,
    /// `requests_total` attempts with an outcome other than ok.
    pub failed_attempts: u64,
    /// `breaker_rejections_total`.
    pub breaker_rejections: u64,
    /// `breaker_retry_after_skips_total`.
    pub retry_after_skips: u64,
    /// `idempotent_duplicates_total`.
    pub idempotent_duplicates: u64,
    /// `requests_total` by dep, then outcome.
    pub outcomes_by_dep: BTreeMap<String, BTreeMap<String, u64>>,
    /// Attempt latency by dep, from every attempt's exact latency (the engine's
    /// `attempt_finished` events into an HDR histogram; rejections left out).
    pub latency_by_dep: BTreeMap<String, Latency>,
    /// The tool-call deadline per dep, and a model call's TTFB and inter-token deadlines per
    /// dep as `DEP (ttfb)` and `DEP (inter_token)`, over the run (`DeadlineChanged` events; nominal ms):
    /// the report's "Deadlines" table. Absent in runs (and older reports) without any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub deadlines_by_dep: BTreeMap<String, DeadlineRange>,
}

/// One dependency's deadline over a run, nominal ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineRange {
    /// At its first call.
    pub start_ms: u64,
    /// At the end of the run.
    pub end_ms: u64,
    /// Lowest.
    pub min_ms: u64,
    /// Highest.
    pub max_ms: u64,
    /// Times it changed after the first call.
    pub changes: u64,
    /// Where the last one came from (`fixed`, `adaptive`).
    pub source: crate::engine::DeadlineSource,
}

impl DeadlineRange {
    /// A dependency's first deadline.
    pub fn new(ms: u64, source: crate::engine::DeadlineSource) -> Self {
        Self {
            start_ms: ms,
            end_ms: ms,
            min_ms: ms,
            max_ms: ms,
            changes: 0,
            source,
        }
    }

    /// A later deadline.
    pub fn change(&mut self, ms: u64, source: crate::engine::DeadlineSource) {
        self.end_ms = ms;
        self.min_ms = self.min_ms.min(ms);
        self.max_ms = self.max_ms.max(ms);
        self.changes += 1;
        self.source = source;
    }
}

/// Latency quantiles in ms (scenario time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median, ms.
    #[serde(serialize_with = "ser3")]
    pub p50_ms: f64,
    /// 99th percentile, ms.
    #[serde(serialize_with = "ser3")]
    pub p99_ms: f64,
    /// Largest, ms.
    #[serde(default, serialize_with = "ser3")]
    pub max_ms: f64,
    /// Samples (attempts measured).
    pub count: u64,
    /// True when computed from exact per-attempt samples (false: older reports, whose numbers
    /// were estimated from the Prometheus histogram's buckets).
    #[serde(default)]
    pub exact: bool,
}
