//! One [`UpstreamRecord`] per request the upstream receives, handed to every subscribed
//! [`RecordSink`] (the run harness appends them to `upstream.jsonl`). Bearer tokens appear only
//! as fingerprints.

use crate::util::sync::Locked;
use serde::{Deserialize, Serialize};

/// One request as the upstream saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamRecord {
    /// Milliseconds since the run start (or the upstream's start).
    pub t_ms: u64,
    /// Wall-clock time of the request, milliseconds since the Unix epoch (to line records up
    /// with an external gateway's own log).
    #[serde(default)]
    pub wall_ms: u64,
    /// `llm`, `tool:NAME` or `ws`.
    pub route: String,
    /// The dependency: the `X-Breaker-Probe` value when present; else the tool name, the ws
    /// channel, or `PROVIDER/default/FP` for model calls.
    pub dep: String,
    /// The request's `model`, for model calls that named one.
    #[serde(default)]
    pub model: Option<String>,
    /// Fingerprint of the bearer token, if one was sent.
    pub profile_fp: Option<String>,
    /// Whether the request carried `X-Breaker-Probe` (a half-open probe or a canary).
    pub probe: bool,
    /// Whether the request carried `X-Rehearse-Canary`: a synthetic health check, not a breaker
    /// probe and not user traffic.
    #[serde(default)]
    pub canary: bool,
    /// The fault kind applied, if any.
    pub fault: Option<String>,
    /// Which `[[fault]]` table applied (0-based, in file order), if any.
    #[serde(default)]
    pub fault_index: Option<usize>,
    /// The `Idempotency-Key` header, if any.
    #[serde(default)]
    pub idempotency_key: Option<String>,
    /// Whether this request executed a key that had already been executed.
    #[serde(default)]
    pub duplicate: bool,
    /// Fleet mode: the gateway host that sent it (`X-Rehearse-Host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// Receives every [`UpstreamRecord`]. Called on the request path: keep it quick.
pub trait RecordSink: Send + Sync {
    /// Takes one record.
    fn record(&self, r: &UpstreamRecord);
}

/// A sink that keeps records in memory (tests, small runs).
#[derive(Debug, Default)]
pub struct MemoryRecords {
    records: std::sync::Mutex<Vec<UpstreamRecord>>,
}

impl MemoryRecords {
    /// Everything recorded so far.
    pub fn take(&self) -> Vec<UpstreamRecord> {
        std::mem::take(&mut *self.records.locked())
    }
}

impl RecordSink for MemoryRecords {
    fn record(&self, r: &UpstreamRecord) {
        self.records.locked().push(r.clone())
    }
}
