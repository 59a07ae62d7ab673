//! What Prometheus says about the run while an arm runs, polled about once a second: its own
//! rule evaluation counters (`prometheus_rule_evaluations_total` and
//! `prometheus_rule_evaluation_failures_total` per `rule_group`, from its `/metrics`), each
//! rule's health (`/api/v1/rules`, which keeps only the last error), and which of its scrape
//! targets are the arm's (`/api/v1/targets`: the target whose scrape URL is an endpoint the arm
//! published, with the labels Prometheus gave it). Read per arm after the run
//! ([`super::stack::Detection::read`]). Polls that fail are counted, never fatal.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::api::Api;
use super::config::Target;
use super::targets::Targets;
use crate::util::sync::Locked;

/// How often Prometheus is polled while an arm runs.
const POLL: Duration = Duration::from_secs(1);

/// One scrape target of the run as Prometheus lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundTarget {
    /// Its labels after relabelling (`job`, `instance`, the targets file's `arm`, `host`).
    pub labels: BTreeMap<String, String>,
    /// Its scrape interval, ms, when Prometheus says it.
    pub scrape_ms: Option<i64>,
}

/// What the polls of one arm saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ArmPolls {
    /// Polls made.
    pub polls: u64,
    /// Polls that got no full answer.
    pub failed: u64,
    /// The last reason a poll failed.
    pub last_failure: Option<String>,
    /// `rule_group` → the first and the last (evaluations, failures) seen in the arm.
    pub groups: BTreeMap<String, [(f64, f64); 2]>,
    /// (`rule_group`, rule name) → (polls that found it unhealthy, its last error).
    pub rule_errors: BTreeMap<(String, String), (u64, String)>,
    /// The run's targets Prometheus listed.
    pub targets: Vec<FoundTarget>,
    /// Jobs of the run's targets that also held targets of something else.
    pub shared_jobs: BTreeSet<String>,
}

/// Every arm's polls, by the index of its window.
pub(crate) type PollLog = Arc<Mutex<BTreeMap<usize, ArmPolls>>>;

/// Starts polling `api` while an arm of `targets` runs.
pub(crate) fn start(api: Api, targets: Targets) -> (tokio::task::JoinHandle<()>, PollLog) {
    let log: PollLog = Arc::default();
    let out = log.clone();
    let task = tokio::spawn(async move {
        loop {
            if let Some((i, w)) = targets.current() {
                let seen = poll_once(&api, &w.targets).await;
                log.locked().entry(i).or_default().merge(seen);
            }
            tokio::time::sleep(POLL).await;
        }
    });
    (task, out)
}

/// One poll's findings.
#[derive(Debug, Default)]
struct Poll {
    failure: Option<String>,
    groups: BTreeMap<String, (f64, f64)>,
    unhealthy: Vec<((String, String), String)>,
    targets: Vec<FoundTarget>,
    shared_jobs: BTreeSet<String>,
}

impl ArmPolls {
    fn merge(&mut self, p: Poll) {
        self.polls += 1;
        if let Some(why) = p.failure {
            self.failed += 1;
            self.last_failure = Some(why);
        }
        for (g, v) in p.groups {
            self.groups
                .entry(g)
                .and_modify(|e| e[1] = v)
                .or_insert([v, v]);
        }
        for (k, err) in p.unhealthy {
            let e = self.rule_errors.entry(k).or_default();
            e.0 += 1;
            e.1 = err;
        }
        for t in p.targets {
            if !self.targets.contains(&t) {
                self.targets.push(t);
            }
        }
        self.shared_jobs.extend(p.shared_jobs);
    }
}

async fn poll_once(api: &Api, published: &[Target]) -> Poll {
    let (metrics, rules, found) = tokio::join!(
        api.own_metrics(),
        api.data("/api/v1/rules?type=alert"),
        api.data("/api/v1/targets?state=active"),
    );
    let mut p = Poll::default();
    match metrics {
        Ok(text) => p.groups = rule_counters(&text),
        Err(e) => p.failure = Some(crate::util::text::chain(&e)),
    }
    match rules {
        Ok(v) => p.unhealthy = unhealthy_rules(&v),
        Err(e) => p.failure = Some(crate::util::text::chain(&e)),
    }
    match found {
        Ok(v) => (p.targets, p.shared_jobs) = run_targets(&v, published),
        Err(e) => p.failure = Some(crate::util::text::chain(&e)),
    }
    p
}

/// The rule evaluation counters of Prometheus's own exposition: `rule_group` → (evaluations,
/// failures).
fn rule_counters(text: &str) -> BTreeMap<String, (f64, f64)> {
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for line in text.lines() {
        let (failures, rest) =
            if let Some(r) = line.strip_prefix("prometheus_rule_evaluation_failures_total{") {
                (true, r)
            } else if let Some(r) = line.strip_prefix("prometheus_rule_evaluations_total{") {
                (false, r)
            } else {
                continue;
            };
        let Some((group, value)) = group_and_value(rest) else {
            continue;
        };
        let e = out.entry(group).or_default();
        if failures {
            e.1 = value;
        } else {
            e.0 = value;
        }
    }
    out
}

/// `rule_group="FILE;GROUP"} 15` → (`FILE;GROUP`, 15).
fn group_and_value(rest: &str) -> Option<(String, f64)> {
    let start = rest.find("rule_group=\"")? + "rule_group=\"".len();
    let mut group = String::new();
    let mut chars = rest[start..].char_indices();
    let mut end = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next()?.1 {
                'n' => group.push('\n'),
                other => group.push(other),
            },
            '"' => {
                end = Some(start + i);
                break;
            }
            c => group.push(c),
        }
    }
    let after = &rest[end?..];
    let value = after.split_once('}')?.1.split_whitespace().next()?;
    Some((group, value.parse().ok()?))
}

/// The rules `/api/v1/rules` reports unhealthy: ((`FILE;GROUP`, name), last error).
fn unhealthy_rules(data: &serde_json::Value) -> Vec<((String, String), String)> {
    let mut out = Vec::new();
    for g in data["groups"].as_array().into_iter().flatten() {
        let key = format!(
            "{};{}",
            g["file"].as_str().unwrap_or_default(),
            g["name"].as_str().unwrap_or_default()
        );
        for r in g["rules"].as_array().into_iter().flatten() {
            if r["health"]
                .as_str()
                .is_some_and(|h| h != "ok" && h != "unknown")
            {
                out.push((
                    (
                        key.clone(),
                        r["name"].as_str().unwrap_or_default().to_string(),
                    ),
                    r["lastError"].as_str().unwrap_or_default().to_string(),
                ));
            }
        }
    }
    out
}

/// `localhost`, `127.0.0.1` and `::1` are one host.
fn host_key(h: &str) -> String {
    let h = h.trim_start_matches('[').trim_end_matches(']');
    match h {
        "localhost" | "127.0.0.1" | "::1" => "loopback".into(),
        other => other.to_ascii_lowercase(),
    }
}

/// (scheme, host, port, path) of a URL, for comparing a scrape URL with an endpoint.
fn url_key(u: &http::Uri) -> Option<(String, String, u16, String)> {
    let scheme = u.scheme_str().unwrap_or("http").to_ascii_lowercase();
    let port = u
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
    let path = match u.path() {
        "" => "/",
        p => p,
    };
    Some((scheme, host_key(u.host()?), port, path.to_string()))
}

/// Parses a `scrapeInterval` (`1s`, `1m`), ms.
fn interval_ms(s: &str) -> Option<i64> {
    humantime::parse_duration(s)
        .ok()
        .and_then(|d| i64::try_from(d.as_millis()).ok())
}

/// The active targets of `/api/v1/targets` whose scrape URL is one of `published`, and the
/// jobs of those that also held other targets.
pub(crate) fn run_targets(
    data: &serde_json::Value,
    published: &[Target],
) -> (Vec<FoundTarget>, BTreeSet<String>) {
    let ours: Vec<_> = published.iter().filter_map(|t| url_key(&t.url)).collect();
    let mut found = Vec::new();
    let mut jobs_with_others = BTreeSet::new();
    for t in data["activeTargets"].as_array().into_iter().flatten() {
        let labels: BTreeMap<String, String> = t["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let key = t["scrapeUrl"]
            .as_str()
            .and_then(|u| u.parse::<http::Uri>().ok())
            .and_then(|u| url_key(&u));
        if key.is_some_and(|k| ours.contains(&k)) {
            found.push(FoundTarget {
                labels,
                scrape_ms: t["scrapeInterval"].as_str().and_then(interval_ms),
            });
        } else if let Some(job) = labels.get("job") {
            jobs_with_others.insert(job.clone());
        }
    }
    let shared = found
        .iter()
        .filter_map(|t| t.labels.get("job"))
        .filter(|j| jobs_with_others.contains(*j))
        .cloned()
        .collect();
    (found, shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_counters_are_read_per_group() {
        let text = "# HELP x\n\
            prometheus_rule_evaluation_failures_total{rule_group=\"/r/a.yml;g/A\"} 3\n\
            prometheus_rule_evaluations_total{rule_group=\"/r/a.yml;g/A\"} 15\n\
            prometheus_rule_evaluations_total{rule_group=\"/r/q\\\"x.yml;h\"} 2e+00\n\
            prometheus_rule_evaluation_duration_seconds_count 16\n";
        let c = rule_counters(text);
        assert_eq!(c["/r/a.yml;g/A"], (15.0, 3.0));
        assert_eq!(c["/r/q\"x.yml;h"], (2.0, 0.0));
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn the_run_targets_are_those_whose_scrape_url_it_published() {
        let data: serde_json::Value = serde_json::from_str(
            r#"{"activeTargets":[
              {"labels":{"instance":"127.0.0.1:4000","job":"mine","arm":"a"},"scrapeUrl":"http://localhost:4000/metrics","scrapeInterval":"2s"},
              {"labels":{"instance":"127.0.0.1:4001","job":"mine"},"scrapeUrl":"http://127.0.0.1:4001/metrics"},
              {"labels":{"instance":"127.0.0.1:9090","job":"prometheus"},"scrapeUrl":"http://127.0.0.1:9090/metrics"}
            ]}"#,
        )
        .unwrap();
        let published = [Target {
            url: "http://127.0.0.1:4000/metrics".parse().unwrap(),
            host: "sut".into(),
        }];
        let (found, shared) = run_targets(&data, &published);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].labels["arm"], "a");
        assert_eq!(found[0].scrape_ms, Some(2000));
        assert_eq!(shared, BTreeSet::from(["mine".to_string()]));
        // Another path on the same port is another endpoint.
        let other = [Target {
            url: "http://127.0.0.1:4000/other".parse().unwrap(),
            host: "sut".into(),
        }];
        assert!(run_targets(&data, &other).0.is_empty());
    }

    #[test]
    fn polls_keep_the_first_and_last_counters_and_count_failures() {
        let mut a = ArmPolls::default();
        let poll = |e: f64, f: f64| Poll {
            groups: BTreeMap::from([("g".to_string(), (e, f))]),
            ..Poll::default()
        };
        a.merge(poll(10.0, 0.0));
        a.merge(Poll {
            failure: Some("down".into()),
            ..Poll::default()
        });
        a.merge(poll(40.0, 2.0));
        assert_eq!(a.groups["g"], [(10.0, 0.0), (40.0, 2.0)]);
        assert_eq!((a.polls, a.failed), (3, 1));
    }
}
