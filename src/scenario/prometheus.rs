//! `[prometheus]` (docs/scenario.md, docs/alerts.md): a real Prometheus in the run — started by
//! the harness (`spawn = true`) or the user's (`url`) — its scrape and evaluation intervals, the
//! rule files it evaluates (the shipped rules by default) and whether an Alertmanager runs with
//! it. Pure data and checks; the processes are `crate::detection`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::field::FieldError;

/// `[prometheus]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrometheusSpec {
    /// Start `prometheus` from PATH on a free loopback port, its data in the run directory.
    #[serde(default)]
    pub spawn: bool,
    /// Or query a Prometheus the user runs (which must scrape the system under test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// How often the spawned Prometheus scrapes the system under test.
    #[serde(default = "one_second", with = "humantime_serde")]
    pub scrape_interval: Duration,
    /// How often it evaluates its rules.
    #[serde(default = "one_second", with = "humantime_serde")]
    pub evaluation_interval: Duration,
    /// Rule files, relative to the scenario file; empty: the rules shipped with rehearse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<PathBuf>,
    /// Also start Alertmanager, its webhook receiver served by the harness.
    #[serde(default)]
    pub alertmanager: bool,
    /// With `url`: the `file_sd` targets file the run rewrites arm by arm (relative to the
    /// scenario file), which the user's Prometheus reads through `file_sd_configs` to find the
    /// system under test (the engine's `/metrics` is on a free port each run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_file: Option<PathBuf>,
}

fn one_second() -> Duration {
    Duration::from_secs(1)
}

/// Why `u` is not the base URL of a Prometheus a run can query (`None` when it is): scheme
/// `http`, a host, and when a port is written, digits in 1..=65535 (`http::Uri` alone takes
/// `127.0.0.1:notaport`, which only fails when the run connects).
fn url_problem(u: &str) -> Option<String> {
    let uri = match u.parse::<http::Uri>() {
        Ok(uri) => uri,
        Err(e) => return Some(e.to_string()),
    };
    if uri.scheme_str() != Some("http") {
        return Some("the scheme must be `http`".into());
    }
    let Some(authority) = uri.authority().filter(|a| !a.host().is_empty()) else {
        return Some("it names no host".into());
    };
    let after_host = authority
        .as_str()
        .rsplit_once(authority.host())
        .map_or("", |(_, rest)| rest);
    if after_host.is_empty() {
        return None;
    }
    let Some(port) = after_host.strip_prefix(':') else {
        return Some(format!("`{after_host}` follows the host"));
    };
    match port.parse::<u16>() {
        Ok(p) if p > 0 => None,
        _ => Some(format!("`{port}` is not a port (1..=65535)")),
    }
}

impl PrometheusSpec {
    /// Checks what serde cannot: exactly one of `spawn` and `url`, intervals within bounds, a
    /// `url` that is http(s), `alertmanager` only with `spawn`. Fields relative to the table.
    pub(crate) fn validate(&self) -> Result<(), FieldError> {
        match (&self.url, self.spawn) {
            (Some(_), true) => {
                return Err(FieldError::new(
                    "spawn",
                    "give either `spawn = true` or `url`, not both".into(),
                ));
            }
            (None, false) => {
                return Err(FieldError::new(
                    "spawn",
                    "give `spawn = true` (start prometheus from PATH) or `url = \"http://HOST:PORT\"`"
                        .into(),
                ));
            }
            (Some(u), false) => {
                if let Some(why) = url_problem(u) {
                    return Err(FieldError::new(
                        "url",
                        format!("`{u}` is not an http://HOST:PORT URL: {why}"),
                    ));
                }
            }
            (None, true) => {}
        }
        for (key, d) in [
            ("scrape_interval", self.scrape_interval),
            ("evaluation_interval", self.evaluation_interval),
        ] {
            if d < Duration::from_millis(100) || d > Duration::from_secs(300) {
                return Err(FieldError::new(key, "must be 100ms..=5m".into()));
            }
        }
        if self.alertmanager && !self.spawn {
            return Err(FieldError::new(
                "alertmanager",
                "an Alertmanager runs beside a Prometheus the harness starts (`spawn = true`); \
                 with `url`, point your own Prometheus at your own Alertmanager"
                    .into(),
            ));
        }
        match &self.targets_file {
            Some(_) if self.spawn => {
                return Err(FieldError::new(
                    "targets_file",
                    "with `spawn = true` the harness writes its own Prometheus's targets file; \
                     `targets_file` is for a Prometheus you run (`url`)"
                        .into(),
                ));
            }
            Some(f) if f.as_os_str().is_empty() => {
                return Err(FieldError::new("targets_file", "must not be empty".into()));
            }
            _ => {}
        }
        for (i, r) in self.rules.iter().enumerate() {
            if r.as_os_str().is_empty() {
                return Err(FieldError::new(
                    format!("rules[{i}]"),
                    "must not be empty".into(),
                ));
            }
        }
        Ok(())
    }

    /// The scenario's rule files resolved against the scenario file's directory (empty: the
    /// shipped rules).
    pub(crate) fn rule_paths(&self, scenario: &Path) -> Vec<PathBuf> {
        let dir = scenario.parent().unwrap_or(Path::new(""));
        self.rules.iter().map(|r| dir.join(r)).collect()
    }

    /// `targets_file` resolved against the scenario file's directory.
    pub(crate) fn targets_path(&self, scenario: &Path) -> Option<PathBuf> {
        let dir = scenario.parent().unwrap_or(Path::new(""));
        self.targets_file.as_ref().map(|f| dir.join(f))
    }
}

/// The alert names a rule file's text defines (`- alert: NAME` lines), in order. A line scan:
/// promtool has checked the file's shape before this is relied on.
pub(crate) fn alert_names_in(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start().trim_start_matches('-').trim_start();
            let rest = l.strip_prefix("alert:")?;
            let name = rest.split('#').next()?.trim().trim_matches(['"', '\'']);
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> PrometheusSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn spawn_or_url_and_bounds() {
        assert!(spec("spawn = true").validate().is_ok());
        assert_eq!(spec("spawn = true").scrape_interval, Duration::from_secs(1));
        assert_eq!(spec("").validate().unwrap_err().field, "spawn");
        assert_eq!(
            spec("spawn = true\nurl = \"http://127.0.0.1:9090\"")
                .validate()
                .unwrap_err()
                .field,
            "spawn"
        );
        assert_eq!(
            spec("url = \"redis://x\"").validate().unwrap_err().field,
            "url"
        );
        assert!(spec("url = \"http://127.0.0.1:9090\"").validate().is_ok());
        for ok in [
            "http://127.0.0.1:9090",
            "http://localhost",
            "http://[::1]:9090/prom",
            "http://prom.example:80/",
        ] {
            assert_eq!(url_problem(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("http://127.0.0.1:notaport", "`notaport` is not a port"),
            ("http://127.0.0.1:", "`` is not a port"),
            ("http://127.0.0.1:70000", "`70000` is not a port"),
            ("http://127.0.0.1:0", "`0` is not a port"),
            ("https://127.0.0.1:9090", "the scheme must be `http`"),
            ("127.0.0.1:9090", "the scheme must be `http`"),
        ] {
            let got = url_problem(bad).unwrap_or_default();
            assert!(got.contains(why), "{bad}: {got}");
        }
        let e = spec("url = \"http://127.0.0.1:notaport\"")
            .validate()
            .unwrap_err();
        assert_eq!(e.field, "url");
        assert!(e.message.contains("`notaport` is not a port (1..=65535)"), "{}", e.message);
        assert_eq!(
            spec("url = \"http://127.0.0.1:9090\"\nalertmanager = true")
                .validate()
                .unwrap_err()
                .field,
            "alertmanager"
        );
        assert_eq!(
            spec("spawn = true\nscrape_interval = \"10ms\"")
                .validate()
                .unwrap_err()
                .field,
            "scrape_interval"
        );
    }

    #[test]
    fn a_targets_file_is_for_a_prometheus_the_user_runs() {
        let s = spec("url = \"http://127.0.0.1:9090\"\ntargets_file = \"sd/rehearse.json\"");
        assert!(s.validate().is_ok());
        assert_eq!(
            s.targets_path(Path::new("/x/scenario.toml")),
            Some(PathBuf::from("/x/sd/rehearse.json"))
        );
        assert_eq!(
            spec("spawn = true\ntargets_file = \"t.json\"")
                .validate()
                .unwrap_err()
                .field,
            "targets_file"
        );
        assert_eq!(
            spec("url = \"http://127.0.0.1:9090\"\ntargets_file = \"\"")
                .validate()
                .unwrap_err()
                .field,
            "targets_file"
        );
    }

    #[test]
    fn alert_names_are_read_from_rule_lines() {
        let text = "groups:\n- name: g\n  rules:\n  - alert: BreakerOpen\n    expr: x\n  - record: r\n    expr: y\n  -   alert: \"Flapping\" # c\n";
        assert_eq!(alert_names_in(text), vec!["BreakerOpen", "Flapping"]);
    }
}
