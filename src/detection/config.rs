//! The files the harness writes for the programs it starts (pure text): Prometheus's config
//! (the system under test found through a `file_sd` targets file the run rewrites arm by arm,
//! the rule files, the Alertmanager), the targets file itself, and Alertmanager's config (every
//! alert its own group, sent at once to the harness's webhook receiver, resolved ones too).

use std::path::PathBuf;
use std::time::Duration;

/// `1500ms`: a duration as Prometheus and Alertmanager read it.
fn prom_duration(d: Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

/// A YAML double-quoted string (JSON's escaping is valid YAML).
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// What Prometheus's config says.
#[derive(Debug, Clone)]
pub(crate) struct PromConfig {
    pub scrape_interval: Duration,
    pub evaluation_interval: Duration,
    pub rules: Vec<PathBuf>,
    pub targets_file: PathBuf,
    pub alertmanager: Option<u16>,
}

/// `prometheus.yml`.
pub(crate) fn prometheus_yml(c: &PromConfig) -> String {
    let timeout = c.scrape_interval.min(Duration::from_secs(10));
    let mut out = format!(
        "# Written by rehearse for this run.\nglobal:\n  scrape_interval: {}\n  scrape_timeout: {}\n  evaluation_interval: {}\n",
        prom_duration(c.scrape_interval),
        prom_duration(timeout),
        prom_duration(c.evaluation_interval)
    );
    out.push_str("rule_files:\n");
    for r in &c.rules {
        out.push_str(&format!("  - {}\n", quoted(&r.display().to_string())));
    }
    if let Some(port) = c.alertmanager {
        out.push_str(&format!(
            "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [\"127.0.0.1:{port}\"]\n"
        ));
    }
    out.push_str(&format!(
        "scrape_configs:\n  - job_name: rehearse\n    file_sd_configs:\n      - files: [{}]\n        refresh_interval: 1s\n",
        quoted(&c.targets_file.display().to_string())
    ));
    out
}

/// One endpoint Prometheus scrapes: its URL and the labels it gets (`arm`, `host`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The metrics URL (`http://127.0.0.1:PORT/metrics`).
    pub url: http::Uri,
    /// `host` label (a fleet host's id; `sut` otherwise).
    pub host: String,
}

/// The `file_sd` targets file of `arm`'s targets (`[]` between arms).
pub(crate) fn targets_json(arm: Option<&str>, targets: &[Target]) -> String {
    let Some(arm) = arm else {
        return "[]\n".into();
    };
    let entries: Vec<serde_json::Value> = targets
        .iter()
        .filter_map(|t| {
            let auth = t.url.authority()?.to_string();
            let path = t.url.path_and_query().map_or("/metrics", |p| p.as_str());
            Some(serde_json::json!({
                "targets": [auth],
                "labels": {
                    "arm": arm,
                    "host": t.host,
                    "__metrics_path__": path,
                    "__scheme__": t.url.scheme_str().unwrap_or("http"),
                }
            }))
        })
        .collect();
    format!("{}\n", serde_json::Value::Array(entries))
}

/// `alertmanager.yml`: one receiver, the harness's webhook on `receiver_port`.
pub(crate) fn alertmanager_yml(receiver_port: u16) -> String {
    format!(
        "# Written by rehearse for this run: every alert its own group, sent at once.\n\
         route:\n  receiver: rehearse\n  group_by: ['...']\n  group_wait: 0s\n  group_interval: 1s\n  repeat_interval: 1h\n\
         receivers:\n  - name: rehearse\n    webhook_configs:\n      - url: http://127.0.0.1:{receiver_port}/alerts\n        send_resolved: true\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_config_names_rules_targets_and_alertmanager() {
        let y = prometheus_yml(&PromConfig {
            scrape_interval: Duration::from_millis(500),
            evaluation_interval: Duration::from_secs(1),
            rules: vec![PathBuf::from("/r/a b.yml")],
            targets_file: PathBuf::from("/d/targets.json"),
            alertmanager: Some(9093),
        });
        assert!(y.contains("scrape_interval: 500ms"), "{y}");
        assert!(y.contains("evaluation_interval: 1000ms"), "{y}");
        assert!(y.contains("- \"/r/a b.yml\""), "{y}");
        assert!(y.contains("127.0.0.1:9093"), "{y}");
        assert!(y.contains("files: [\"/d/targets.json\"]"), "{y}");
    }

    #[test]
    fn targets_carry_the_arm_host_and_path() {
        let t = Target {
            url: "http://127.0.0.1:4000/custom/metrics".parse().unwrap(),
            host: "h1".into(),
        };
        let j: serde_json::Value =
            serde_json::from_str(&targets_json(Some("redis"), &[t])).unwrap();
        assert_eq!(j[0]["targets"][0], "127.0.0.1:4000");
        assert_eq!(j[0]["labels"]["arm"], "redis");
        assert_eq!(j[0]["labels"]["__metrics_path__"], "/custom/metrics");
        assert_eq!(targets_json(None, &[]), "[]\n");
    }
}
