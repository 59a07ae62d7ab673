//! Reading one arm back from Prometheus after the run: only what is tied to the targets the arm
//! published, inside its window. The arm's targets are the endpoints it published as
//! Prometheus labelled them (the harness's Prometheus: job `rehearse`, `instance` the endpoint,
//! `arm`, `host`; a Prometheus the user runs: the targets its `/api/v1/targets` listed with one
//! of those scrape URLs while the arm ran). `up` and `breaker_transitions_total` are read per
//! target; an `ALERTS` series counts for the arm only when every tying label it carries
//! (`instance`, `job`, `arm`, `host`) agrees with one of those targets — a `job` alone only when
//! that job scraped nothing else — and only from the arm's start (a later arm may reuse a
//! port). Each alerting rule comes with its evaluations and failures during the arm, from its
//! group's counters ([`super::poll`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::api::{Api, Series};
use super::error::DetectionError;
use super::poll::ArmPolls;
use super::targets::ArmWindow;
use crate::monitoring::promql::TIE_LABELS;
use crate::verdict::alert_eval::{AlertSeries, CounterSeries, RuleSeen};

/// The job of the harness's own Prometheus's scrape config.
pub(crate) const SPAWNED_JOB: &str = "rehearse";

/// One target of the arm: the labels Prometheus gave it that tie a series to it.
pub(crate) type RunTarget = BTreeMap<String, String>;

/// The arm's targets: with the harness's Prometheus, what its targets file said; with the
/// user's, what its `/api/v1/targets` listed (in both, every target the polls found).
pub(crate) fn arm_targets(window: &ArmWindow, polls: &ArmPolls, spawned: bool) -> Vec<RunTarget> {
    let mut out: Vec<RunTarget> = Vec::new();
    if spawned {
        for t in &window.targets {
            let Some(auth) = t.url.authority() else {
                continue;
            };
            out.push(BTreeMap::from([
                ("job".to_string(), SPAWNED_JOB.to_string()),
                ("instance".to_string(), auth.to_string()),
                ("arm".to_string(), window.arm.clone()),
                ("host".to_string(), t.host.clone()),
            ]));
        }
    }
    for f in &polls.targets {
        let tie: RunTarget = f
            .labels
            .iter()
            .filter(|(k, _)| TIE_LABELS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !out.contains(&tie) {
            out.push(tie);
        }
    }
    out
}

/// True when `labels` (a series') are tied to one of `targets`: every tying label it carries
/// agrees with that target, and it carries one besides a `job` that is not `exclusive` (a job
/// that scraped only the run's targets).
pub(crate) fn tied(
    labels: &BTreeMap<String, String>,
    targets: &[RunTarget],
    exclusive: &BTreeSet<String>,
) -> bool {
    let carried: Vec<&str> = TIE_LABELS
        .iter()
        .copied()
        .filter(|k| labels.contains_key(*k))
        .collect();
    if carried.is_empty() {
        return false;
    }
    let only_job = carried == ["job"];
    targets.iter().any(|t| {
        let agree = carried.iter().all(|k| t.get(*k) == labels.get(*k));
        agree && (!only_job || labels.get("job").is_some_and(|j| exclusive.contains(j)))
    })
}

/// The jobs that held only the run's targets while the arm ran.
pub(crate) fn exclusive_jobs(
    targets: &[RunTarget],
    polls: &ArmPolls,
    spawned: bool,
) -> BTreeSet<String> {
    let mut jobs: BTreeSet<String> = targets
        .iter()
        .filter_map(|t| t.get("job"))
        .cloned()
        .collect();
    if spawned {
        jobs.insert(SPAWNED_JOB.into());
    }
    jobs.retain(|j| !polls.shared_jobs.contains(j));
    jobs
}

/// A selector of `name` with these labels of `labels` (PromQL string escaping).
fn selector(name: &str, labels: &RunTarget, keys: &[&str]) -> String {
    let m: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            let v = labels.get(*k)?;
            let v = v.replace('\\', "\\\\").replace('"', "\\\"");
            Some(format!("{k}=\"{v}\""))
        })
        .collect();
    format!("{name}{{{}}}", m.join(","))
}

/// Every sample of `name` of each of `targets` (by its `job` and `instance`).
pub(crate) async fn per_target(
    api: &Api,
    name: &str,
    targets: &[RunTarget],
    range: Duration,
    end: i64,
) -> Result<Vec<Series>, DetectionError> {
    let mut out = Vec::new();
    for t in targets {
        if !t.contains_key("instance") {
            continue;
        }
        let sel = selector(name, t, &["job", "instance"]);
        out.extend(api.samples(&sel, range, end).await?);
    }
    Ok(out)
}

/// Splits `ALERTS` series into those tied to the arm (sample times from `start`, relative to it)
/// and the samples of the others by alert name.
pub(crate) fn split_alerts(
    all: Vec<Series>,
    targets: &[RunTarget],
    exclusive: &BTreeSet<String>,
    start: i64,
) -> (Vec<AlertSeries>, BTreeMap<String, u64>) {
    let mut mine = Vec::new();
    let mut untied: BTreeMap<String, u64> = BTreeMap::new();
    for (labels, pts) in all {
        let t_ms: Vec<i64> = pts
            .iter()
            .filter(|p| p.0 >= start)
            .map(|p| p.0 - start)
            .collect();
        if t_ms.is_empty() {
            continue;
        }
        if tied(&labels, targets, exclusive) {
            mine.push(AlertSeries { labels, t_ms });
        } else {
            let name = labels.get("alertname").cloned().unwrap_or_default();
            *untied.entry(name).or_default() += t_ms.len() as u64;
        }
    }
    (mine, untied)
}

/// Counter series from `start`, in ms relative to it.
pub(crate) fn counters(all: Vec<Series>, start: i64) -> Vec<CounterSeries> {
    all.into_iter()
        .map(|(labels, pts)| CounterSeries {
            labels,
            points: pts
                .into_iter()
                .filter(|p| p.0 >= start)
                .map(|(t, v)| (t - start, v))
                .collect(),
        })
        .collect()
}

/// Every alerting rule of `/api/v1/rules` (its `data`), with its evaluations and failures
/// during the arm from `polls`, and every recording rule (series, expression).
///
/// A group's counters count every rule of it: the harness's copy gives each alerting rule a
/// group of its own; in a shared group (a Prometheus the user runs) evaluations are divided
/// among its rules, and failures go to the rules the polls found unhealthy — to every rule of
/// the group when none was caught unhealthy (Prometheus does not say which failed).
pub(crate) fn rules_seen(
    data: &serde_json::Value,
    polls: &ArmPolls,
) -> (Vec<RuleSeen>, Vec<(String, String)>) {
    let mut rules = Vec::new();
    let mut records = Vec::new();
    for g in data["groups"].as_array().into_iter().flatten() {
        let key = format!(
            "{};{}",
            g["file"].as_str().unwrap_or_default(),
            g["name"].as_str().unwrap_or_default()
        );
        let interval_ms = g["interval"]
            .as_f64()
            .map_or(0, |s| (s * 1000.0).round() as i64);
        let list: Vec<&serde_json::Value> = g["rules"].as_array().into_iter().flatten().collect();
        let n = list.len().max(1) as f64;
        let counted = polls.groups.get(&key);
        let flagged: BTreeSet<&str> = polls
            .rule_errors
            .keys()
            .filter(|(k, _)| *k == key)
            .map(|(_, r)| r.as_str())
            .collect();
        for r in list {
            let name = r["name"].as_str().unwrap_or_default().to_string();
            let query = r["query"].as_str().unwrap_or_default().to_string();
            if r["type"] != "alerting" {
                records.push((name, query));
                continue;
            }
            let (evaluations, failures) = match counted {
                Some([first, last]) => {
                    let evals = ((last.0 - first.0).max(0.0) / n).floor() as u64;
                    let fails = (last.1 - first.1).max(0.0) as u64;
                    let mine = n <= 1.0 || flagged.is_empty() || flagged.contains(name.as_str());
                    (Some(evals), Some(if mine { fails } else { 0 }))
                }
                None => (None, None),
            };
            let polled = polls
                .rule_errors
                .get(&(key.clone(), name.clone()))
                .map(|e| e.1.clone());
            rules.push(RuleSeen {
                alert: name,
                group: key.clone(),
                interval_ms,
                query,
                labels: r["labels"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                            .collect()
                    })
                    .unwrap_or_default(),
                evaluations,
                failures,
                last_error: r["lastError"]
                    .as_str()
                    .filter(|e| !e.is_empty())
                    .map(String::from)
                    .or(polled)
                    .unwrap_or_default(),
            });
        }
    }
    (rules, records)
}

#[cfg(test)]
mod tests {
}
