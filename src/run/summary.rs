//! The A/B numbers of one policy run (cooldowns per reason, rotations, retries, fallbacks,
//! failed requests, user-visible errors, outcomes and latency per dep), read from the final
//! scrape — what an operator's dashboard would show — plus the replayer's and engine's counts.

use std::collections::BTreeMap;

use super::dispatch::Counters;
use super::harness::PolicyRun;
use crate::report::model::{Latency, Summary};
use crate::scrape::Exposition;

fn sum(e: &Exposition, name: &str) -> f64 {
    e.samples().filter(|s| s.name == name).map(|s| s.value).sum()
}

fn by_label(e: &Exposition, name: &str, label: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for s in e.samples().filter(|s| s.name == name) {
        if let Some(v) = s.labels.get(label) {
            *out.entry(v.clone()).or_insert(0) += s.value.round() as u64;
        }
    }
    out
}

/// Estimates a quantile from cumulative histogram buckets `(le, count)` (sorted by `le`),
/// interpolating linearly inside the bucket (as PromQL's `histogram_quantile` does).
pub fn quantile(buckets: &[(f64, f64)], q: f64) -> f64 {
    let Some(&(_, total)) = buckets.last() else {
        return 0.0;
    };
    if total <= 0.0 {
        return 0.0;
    }
    let rank = q * total;
    let mut prev = (0.0, 0.0);
    for &(le, count) in buckets {
        if count >= rank {
            if le.is_infinite() {
                return prev.0;
            }
            let in_bucket = count - prev.1;
            if in_bucket <= 0.0 {
                return le;
            }
            return prev.0 + (le - prev.0) * (rank - prev.1) / in_bucket;
        }
        prev = (le, count);
    }
    prev.0
}

fn latency_by_dep(e: &Exposition) -> BTreeMap<String, Latency> {
    let mut buckets: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for s in e
        .samples()
        .filter(|s| s.name == "request_latency_seconds_bucket")
    {
        let (Some(dep), Some(le)) = (s.labels.get("dep"), s.labels.get("le")) else {
            continue;
        };
        let le = match le.as_str() {
            "+Inf" => f64::INFINITY,
            v => match v.parse::<f64>() {
                Ok(x) => x,
                Err(_) => continue,
            },
        };
        buckets.entry(dep.clone()).or_default().push((le, s.value));
    }
    buckets
        .into_iter()
        .map(|(dep, mut b)| {
            b.sort_by(|a, b| a.0.total_cmp(&b.0));
            let count = b.last().map_or(0, |x| x.1.round() as u64);
            let lat = Latency {
                p50_ms: quantile(&b, 0.5) * 1000.0,
                p99_ms: quantile(&b, 0.99) * 1000.0,
                count,
            };
            (dep, lat)
        })
        .collect()
}

/// The summary of one run.
pub fn summarize(run: &PolicyRun) -> Summary {
    let mut s = Summary {
        failed_requests: Some(run.replay.error_count()),
        user_visible_errors: Some(Counters::get(&run.counters.user_errors)),
        ..Summary::default()
    };
    let Some(e) = run.scrapes.last() else {
        return s;
    };
    s.cooldowns_by_reason = by_label(e, "profile_cooldowns_total", "reason");
    s.rotations = sum(e, "profile_rotations_total").round() as u64;
    s.retries = sum(e, "profile_retries_total").round() as u64;
    s.fallbacks = sum(e, "model_fallbacks_total").round() as u64;
    s.breaker_rejections = sum(e, "breaker_rejections_total").round() as u64;
    s.retry_after_skips = sum(e, "breaker_retry_after_skips_total").round() as u64;
    s.idempotent_duplicates = sum(e, "idempotent_duplicates_total").round() as u64;
    for x in e.samples().filter(|x| x.name == "requests_total") {
        let (Some(dep), Some(outcome)) = (x.labels.get("dep"), x.labels.get("outcome")) else {
            continue;
        };
        let n = x.value.round() as u64;
        if outcome != "ok" {
            s.failed_attempts += n;
        }
        *s.outcomes_by_dep
            .entry(dep.clone())
            .or_default()
            .entry(outcome.clone())
            .or_insert(0) += n;
    }
    s.latency_by_dep = latency_by_dep(e);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_inside_buckets() {
        let b = [(0.1, 50.0), (0.5, 100.0), (f64::INFINITY, 100.0)];
        assert!((quantile(&b, 0.5) - 0.1).abs() < 1e-9);
        assert!((quantile(&b, 0.75) - 0.3).abs() < 1e-9);
        assert_eq!(quantile(&[], 0.5), 0.0);
        // Everything above the last finite bound: the last finite bound.
        let b = [(0.1, 0.0), (f64::INFINITY, 10.0)];
        assert_eq!(quantile(&b, 0.99), 0.1);
    }
}
