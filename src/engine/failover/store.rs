//! The cooldown store, shaped like OpenClaw's `auth-profiles.json`
//! (`usageStats[profileId] = {lastUsed, cooldownUntil, disabledUntil, errorCount, failureCounts,
//! lastFailureAt}`, unix ms, camelCase). Other top-level keys (`version`, `profiles`, ...) and
//! unknown per-profile keys are kept as they are, so a real OpenClaw file can be loaded and
//! written back. Writes are atomic (`util::write_atomic`: temp file + fsync + rename), so a crash
//! leaves the previous file or the new one, never a torn mix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::engine::errors::StoreError;
use crate::engine::outcome::Reason;
use crate::util::write_atomic;

/// One profile's usage statistics (all times unix ms).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageStats {
    /// Last time the profile was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<u64>,
    /// The profile is skipped until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_until: Option<u64>,
    /// The billing lane: disabled until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled_until: Option<u64>,
    /// Why it is disabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<String>,
    /// Failures since the last success (all reasons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_count: Option<u32>,
    /// Failures since the last success, per reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failure_counts: BTreeMap<String, u32>,
    /// The last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure_at: Option<u64>,
    /// The reason of the current cooldown (a rehearse addition; OpenClaw ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_reason: Option<Reason>,
    /// Keys this version does not know, kept as they are.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl UsageStats {
    /// Unavailable until (max of cooldown and disabled), if any.
    pub fn unavailable_until(&self) -> Option<u64> {
        match (self.cooldown_until, self.disabled_until) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// `(errorCount, failureCounts[reason])` as they stand at `now_ms`: zero when the last
    /// failure is older than `window_ms`.
    pub fn counts(&self, reason: Reason, now_ms: u64, window_ms: u64) -> (u32, u32) {
        let stale = self
            .last_failure_at
            .is_some_and(|t| now_ms.saturating_sub(t) > window_ms);
        if stale {
            return (0, 0);
        }
        let per = self
            .failure_counts
            .get(reason.as_str())
            .copied()
            .unwrap_or(0);
        (self.error_count.unwrap_or(0), per)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoreFile {
    #[serde(default)]
    usage_stats: BTreeMap<String, UsageStats>,
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

/// The cooldown store (in memory, optionally backed by a file).
#[derive(Debug, Clone, Default)]
pub struct CooldownStore {
    path: Option<PathBuf>,
    file: StoreFile,
}

impl CooldownStore {
    /// A store that is never written to disk.
    pub fn in_memory() -> Self {
        Self::default()
    }

    /// Loads `path` (a missing file is an empty store that will be created on the first save).
    pub fn load(path: &Path) -> Result<Self, StoreError> {
        let file = match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                let (line, column) = crate::util::textpos::json_position(&text, &e);
                StoreError::Parse {
                    path: path.to_path_buf(),
                    line,
                    column,
                    message: crate::util::textpos::json_message(&e),
                }
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => StoreFile::default(),
            Err(source) => {
                return Err(StoreError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Ok(Self {
            path: Some(path.to_path_buf()),
            file,
        })
    }

    /// The backing file, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// One profile's statistics.
    pub fn stats(&self, id: &str) -> Option<&UsageStats> {
        self.file.usage_stats.get(id)
    }

    /// Every profile's statistics.
    pub fn all(&self) -> &BTreeMap<String, UsageStats> {
        &self.file.usage_stats
    }

    /// Records that `id` was picked at `now_ms`.
    pub fn mark_used(&mut self, id: &str, now_ms: u64) {
        self.file
            .usage_stats
            .entry(id.to_string())
            .or_default()
            .last_used = Some(now_ms);
    }

    /// A success: clears the error count, the per-reason counts and any cooldown (like
    /// OpenClaw's `markAuthProfileUsed`). Returns true if anything worth persisting changed.
    pub fn mark_success(&mut self, id: &str, now_ms: u64) -> bool {
        let s = self.file.usage_stats.entry(id.to_string()).or_default();
        let changed = s.error_count.unwrap_or(0) > 0
            || !s.failure_counts.is_empty()
            || s.cooldown_until.is_some()
            || s.disabled_until.is_some();
        s.last_used = Some(now_ms);
        s.error_count = None;
        s.failure_counts.clear();
        s.cooldown_until = None;
        s.disabled_until = None;
        s.disabled_reason = None;
        s.cooldown_reason = None;
        changed
    }

    /// A failure that cools the profile until `until_ms` (billing goes to `disabledUntil`).
    /// Counters restart when the previous failure is older than `window_ms`. An active window is
    /// never shortened (`max(existing, new)`).
    pub fn mark_failure(
        &mut self,
        id: &str,
        reason: Reason,
        until_ms: u64,
        now_ms: u64,
        window_ms: u64,
    ) {
        let s = self.file.usage_stats.entry(id.to_string()).or_default();
        if s.last_failure_at
            .is_some_and(|t| now_ms.saturating_sub(t) > window_ms)
        {
            s.error_count = None;
            s.failure_counts.clear();
        }
        s.error_count = Some(s.error_count.unwrap_or(0).saturating_add(1));
        let c = s
            .failure_counts
            .entry(reason.as_str().to_string())
            .or_insert(0);
        *c = c.saturating_add(1);
        s.last_failure_at = Some(now_ms);
        s.cooldown_reason = Some(reason);
        if reason == Reason::Billing {
            s.disabled_until = Some(s.disabled_until.unwrap_or(0).max(until_ms));
            s.disabled_reason = Some(reason.as_str().to_string());
        } else {
            s.cooldown_until = Some(s.cooldown_until.unwrap_or(0).max(until_ms));
        }
    }

    /// The JSON text of the store (pretty, stable key order).
    pub fn to_json(&self) -> String {
        // ok: a map of plain values always serialises.
        serde_json::to_string_pretty(&self.file).unwrap_or_else(|_| "{}".to_string()) + "\n"
    }

    /// Writes the store to its file atomically (no-op for in-memory stores).
    pub fn save(&self) -> Result<(), StoreError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        write_atomic(path, self.to_json().as_bytes()).map_err(|source| StoreError::Write {
            path: path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_count_per_reason_and_a_success_resets_everything() {
        let mut s = CooldownStore::in_memory();
        s.mark_used("p", 10);
        s.mark_failure("p", Reason::Timeout, 1_000, 100, 10_000);
        s.mark_failure("p", Reason::RateLimit, 500, 200, 10_000);
        let st = s.stats("p").unwrap();
        assert_eq!(st.counts(Reason::Timeout, 300, 10_000), (2, 1));
        assert_eq!(st.counts(Reason::RateLimit, 300, 10_000), (2, 1));
        assert_eq!(
            st.cooldown_until,
            Some(1_000),
            "an active window is never shortened"
        );
        assert_eq!(st.cooldown_reason, Some(Reason::RateLimit));
        assert!(s.mark_success("p", 400));
        let st = s.stats("p").unwrap();
        assert_eq!((st.error_count, st.cooldown_until), (None, None));
        assert!(st.failure_counts.is_empty());
        assert_eq!(st.last_used, Some(400));
        assert!(!s.mark_success("p", 500), "nothing left to reset");
    }

    #[test]
    fn counters_restart_after_the_failure_window() {
        let mut s = CooldownStore::in_memory();
        s.mark_failure("p", Reason::Timeout, 1_000, 100, 1_000);
        assert_eq!(
            s.stats("p").unwrap().counts(Reason::Timeout, 1_100, 1_000),
            (1, 1)
        );
        assert_eq!(
            s.stats("p").unwrap().counts(Reason::Timeout, 1_101, 1_000),
            (0, 0)
        );
        s.mark_failure("p", Reason::Timeout, 5_000, 2_000, 1_000);
        assert_eq!(
            s.stats("p").unwrap().failure_counts.get("timeout"),
            Some(&1)
        );
    }

    #[test]
    fn billing_goes_to_the_disabled_lane() {
        let mut s = CooldownStore::in_memory();
        s.mark_failure("p", Reason::Billing, 9_000, 100, 1_000);
        let st = s.stats("p").unwrap();
        assert_eq!((st.cooldown_until, st.disabled_until), (None, Some(9_000)));
        assert_eq!(st.disabled_reason.as_deref(), Some("billing"));
        assert_eq!(st.unavailable_until(), Some(9_000));
    }
}
