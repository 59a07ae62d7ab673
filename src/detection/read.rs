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
const SPAWNED_JOB: &str = "rehearse";

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
    use super::*;
    use crate::detection::config::Target;
    use crate::detection::poll::FoundTarget;

    fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn window(arm: &str, port: u16) -> ArmWindow {
        ArmWindow {
            arm: arm.into(),
            start_unix_ms: 1_000_000,
            end_unix_ms: Some(1_060_000),
            targets: vec![Target {
                url: format!("http://127.0.0.1:{port}/metrics").parse().unwrap(),
                host: "sut".into(),
            }],
        }
    }

    #[test]
    fn an_alert_counts_for_the_arm_whose_target_it_names() {
        let polls = ArmPolls::default();
        let t = arm_targets(&window("legacy", 4100), &polls, true);
        let ex = exclusive_jobs(&t, &polls, true);
        // The shipped BreakerOpen keeps job and instance.
        let mine = labels(&[("alertname", "BreakerOpen"), ("job", "rehearse"), ("instance", "127.0.0.1:4100"), ("dep", "crm")]);
        assert!(tied(&mine, &t, &ex));
        // The other arm's engine (another port), or an A/B series carrying the other arm.
        let other = labels(&[("job", "rehearse"), ("instance", "127.0.0.1:4200")]);
        assert!(!tied(&other, &t, &ex));
        let other_arm = labels(&[("instance", "127.0.0.1:4100"), ("arm", "retry-gate")]);
        assert!(!tied(&other_arm, &t, &ex));
        // No tying label at all: never credited to every arm.
        assert!(!tied(&labels(&[("dep", "crm")]), &t, &ex));
        // `job` alone: only while that job scraped nothing but the run.
        let job_only = labels(&[("job", "rehearse")]);
        assert!(tied(&job_only, &t, &ex));
        let shared = ArmPolls {
            shared_jobs: ["rehearse".to_string()].into(),
            ..ArmPolls::default()
        };
        let ex = exclusive_jobs(&t, &shared, true);
        assert!(!tied(&job_only, &t, &ex));
    }

    #[test]
    fn with_a_users_prometheus_the_targets_are_those_it_listed() {
        // Nothing listed: nothing of the run, not every `up` it has.
        let t = arm_targets(&window("embedded", 4100), &ArmPolls::default(), false);
        assert!(t.is_empty());
        let polls = ArmPolls {
            targets: vec![FoundTarget {
                labels: labels(&[("job", "my-services"), ("instance", "127.0.0.1:4100"), ("arm", "retry-gate"), ("env", "x")]),
                scrape_ms: Some(1000),
            }],
            shared_jobs: ["my-services".to_string()].into(),
            ..ArmPolls::default()
        };
        let t = arm_targets(&window("retry-gate", 4100), &polls, false);
        assert_eq!(t.len(), 1);
        assert!(!t[0].contains_key("env"));
        let ex = exclusive_jobs(&t, &polls, false);
        assert!(ex.is_empty());
        // A production exporter in the same job, its breaker open: not the run's.
        let prod = labels(&[("alertname", "BreakerOpen"), ("job", "my-services"), ("instance", "10.0.0.7:9464"), ("dep", "crm")]);
        let mine = labels(&[("alertname", "BreakerOpen"), ("job", "my-services"), ("instance", "127.0.0.1:4100"), ("dep", "crm")]);
        let (kept, untied) = split_alerts(
            vec![
                (prod, vec![(1_010_000, 1.0), (1_011_000, 1.0)]),
                (mine, vec![(990_000, 1.0), (1_020_000, 1.0)]),
            ],
            &t,
            &ex,
            1_000_000,
        );
        assert_eq!(kept.len(), 1);
        // A sample before the arm's start (an earlier arm on the same port) is left out.
        assert_eq!(kept[0].t_ms, vec![20_000]);
        assert_eq!(untied["BreakerOpen"], 2);
    }

    #[test]
    fn each_rule_gets_its_groups_evaluations_and_failures() {
        let data: serde_json::Value = serde_json::from_str(
            r#"{"groups":[
              {"name":"g/A","file":"/r.yml","interval":2,"rules":[
                {"type":"alerting","name":"A","query":"up == 0","labels":{"severity":"x"},"health":"ok"}]},
              {"name":"shared","file":"/r.yml","interval":1,"rules":[
                {"type":"recording","name":"rec","query":"sum(up)"},
                {"type":"alerting","name":"B","query":"up > 1","health":"ok"},
                {"type":"alerting","name":"C","query":"up * on(job) up","health":"err","lastError":"many-to-many"}]}
            ]}"#,
        )
        .unwrap();
        let polls = ArmPolls {
            groups: [
                ("/r.yml;g/A".to_string(), [(10.0, 0.0), (40.0, 0.0)]),
                ("/r.yml;shared".to_string(), [(30.0, 0.0), (120.0, 30.0)]),
            ]
            .into(),
            rule_errors: [(("/r.yml;shared".to_string(), "C".to_string()), (30, "many-to-many".to_string()))].into(),
            ..ArmPolls::default()
        };
        let (rules, records) = rules_seen(&data, &polls);
        assert_eq!(records, vec![("rec".to_string(), "sum(up)".to_string())]);
        let a = &rules[0];
        assert_eq!((a.evaluations, a.failures, a.interval_ms), (Some(30), Some(0), 2000));
        assert_eq!(a.labels["severity"], "x");
        // Three rules share the group: 90 evaluations are 30 each; the failures are C's.
        assert_eq!((rules[1].evaluations, rules[1].failures), (Some(30), Some(0)));
        assert_eq!((rules[2].evaluations, rules[2].failures), (Some(30), Some(30)));
        assert_eq!(rules[2].last_error, "many-to-many");
        // No counters read: unknown, not zero.
        let (rules, _) = rules_seen(&data, &ArmPolls::default());
        assert_eq!(rules[0].evaluations, None);
    }
}
