//! The shipped Grafana dashboard (`monitoring/grafana/rehearse.json`) without Grafana: two
//! fixture rehearsals at their CI speed (a breaker held open by a Retry-After, probes closing
//! it; model timeouts cooling profiles, rotations, fallbacks), their `scrapes.prom` turned into
//! OpenMetrics with timestamps and loaded with `promtool tsdb create-blocks-from openmetrics`,
//! a real `prometheus` on that data — then every template variable's query is resolved (as
//! Grafana does, multi-values joined into a regex) and every panel and annotation query, with
//! the variables substituted, must run without error and return series over the data's time.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::prometheus::{Prometheus, run, tool};
use crate::support::run::{fixture, reported_path, run_scenario, show};

/// `$__rate_interval` over the CI-speed data (scrapes every 250 ms of scenario time).
const RATE_INTERVAL: &str = "10s";

/// Runs a fixture at `speed` into `dir`; its run directory (the verdict does not matter here,
/// only what was scraped; a harness failure does).
fn rehearse(name: &str, speed: &str, dir: &Path) -> PathBuf {
    let out = run_scenario(&fixture(name), speed, dir);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{name}: {}",
        show(&out)
    );
    reported_path(&out).parent().expect("run dir").to_path_buf()
}

/// The run's scrapes (plain, or gzipped by a retention policy).
fn scrapes(run_dir: &Path) -> String {
    let plain = run_dir.join("scrapes.prom");
    if plain.is_file() {
        return std::fs::read_to_string(plain).unwrap();
    }
    let gz = run_dir.join("scrapes.prom.gz");
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .unwrap_or_else(|e| panic!("gzip -dc {}: {e}", gz.display()));
    String::from_utf8(out.stdout).expect("utf-8 scrapes")
}

/// Splits a sample line into its name, its `{...}` label text (without braces) and its value.
fn split_sample(line: &str) -> Option<(&str, &str, &str)> {
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    if line[name_end..].starts_with('{') {
        // The closing brace outside quotes (values may hold `}`, `"` escaped, `\\`).
        let bytes = line.as_bytes();
        let (mut i, mut quoted) = (name_end + 1, false);
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if quoted => i += 1,
                b'"' => quoted = !quoted,
                b'}' if !quoted => break,
                _ => {}
            }
            i += 1;
        }
        let labels = &line[name_end + 1..i];
        Some((name, labels, line.get(i + 1..)?.trim()))
    } else {
        Some((name, "", line[name_end..].trim()))
    }
}

/// `scrapes.prom` (`# scrape t_ms=N` then the raw exposition, N restarting with each policy
/// run) as OpenMetrics samples at `base_s + N / 1000`, labelled `job="rehearse"` and
/// `instance="<scenario>-<policy run>"`. Returns the lines and the last sample time.
fn to_openmetrics(text: &str, scenario: &str, base_s: f64, out: &mut String) -> f64 {
    let (mut segment, mut last_t, mut t_s, mut max_t) = (0, 0u64, base_s, base_s);
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("# scrape t_ms=") {
            let t: u64 = t.trim().parse().expect("t_ms");
            if t < last_t {
                segment += 1;
            }
            last_t = t;
            t_s = base_s + t as f64 / 1000.0;
            max_t = max_t.max(t_s);
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (name, labels, value) =
            split_sample(line).unwrap_or_else(|| panic!("not a sample line: {line}"));
        let sep = if labels.is_empty() { "" } else { "," };
        writeln!(
            out,
            "{name}{{job=\"rehearse\",instance=\"{scenario}-{segment}\"{sep}{labels}}} {value} {t_s:.3}"
        )
        .unwrap();
    }
    max_t
}

/// Grafana's `${var}` / `$var` and `$__rate_interval` replaced.
fn substitute(expr: &str, vars: &[(String, String)]) -> String {
    let mut e = expr.replace("$__rate_interval", RATE_INTERVAL);
    // Longest names first, so `$dep` cannot eat a prefix of a longer name.
    let mut vars = vars.to_vec();
    vars.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    for (name, value) in &vars {
        e = e.replace(&format!("${{{name}}}"), value);
        e = e.replace(&format!("${name}"), value);
    }
    assert!(!e.contains('$'), "unresolved variable in {e}");
    e
}

/// A regex matching exactly `values` (Grafana's multi-value form).
fn regex_of(values: &[String]) -> String {
    let escaped: Vec<String> = values
        .iter()
        .map(|v| {
            v.chars()
                .flat_map(|c| {
                    let special = "\\.+*?()|[]{}^$".contains(c);
                    special.then_some('\\').into_iter().chain([c])
                })
                .collect()
        })
        .collect();
    format!("({})", escaped.join("|"))
}

/// `label_values(SELECTOR, LABEL)` → (selector, label).
fn label_values_query(q: &str) -> (String, String) {
    let inner = q
        .trim()
        .strip_prefix("label_values(")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not a label_values() query: {q}"));
    let (sel, label) = inner
        .rsplit_once(',')
        .expect("label_values(selector, label)");
    (sel.trim().to_string(), label.trim().to_string())
}

#[test]
fn every_dashboard_query_returns_series_from_a_rehearsal() {
    let dir = tempfile::tempdir().unwrap();
    // Both rehearsals at once (their verdicts do not matter, only their scrapes).
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| rehearse("retry-after-429", "8", &dir.path().join("a")));
        let b = s.spawn(|| rehearse("timeout-storm", "4", &dir.path().join("b")));
        (a.join().unwrap(), b.join().unwrap())
    });
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let base = (now - 900.0).floor();
    let mut om = String::new();
    let mut end = base;
    for (run, name) in [(&a, "retry-after-429"), (&b, "timeout-storm")] {
        end = end.max(to_openmetrics(&scrapes(run), name, base, &mut om));
    }
    om.push_str("# EOF\n");
    let work = dir.path();
    std::fs::write(work.join("scrapes.om"), &om).unwrap();
    let data = work.join("tsdb");
    let (ok, out) = run(
        &tool(&["promtool"]),
        &[
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "scrapes.om",
            data.to_str().unwrap(),
        ],
        work,
    );
    assert!(ok, "promtool tsdb create-blocks-from openmetrics:\n{out}");
    let prom = Prometheus::start(&data, work);
    let (start, end) = (format!("{base}"), format!("{}", end.ceil()));

    let dash: serde_json::Value = serde_json::from_str(rehearse::monitoring::shipped_dashboard())
        .expect("the dashboard is JSON");
    // Template variables, in order (later ones use earlier ones).
    let mut vars: Vec<(String, String)> = Vec::new();
    for v in dash["templating"]["list"]
        .as_array()
        .expect("templating.list")
    {
        let name = v["name"].as_str().expect("variable name").to_string();
        if v["type"] == "datasource" {
            vars.push((name, "prometheus".into()));
            continue;
        }
        assert_eq!(v["type"], "query", "{name}");
        let (sel, label) = label_values_query(v["query"]["query"].as_str().expect("query"));
        let sel = substitute(&sel, &vars);
        let r = prom.api(
            "series",
            &[("match[]", &sel), ("start", &start), ("end", &end)],
            &format!("variable {name}: {sel}"),
        );
        let mut values: Vec<String> = r["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s[&label].as_str().map(str::to_string))
            .collect();
        values.sort();
        values.dedup();
        assert!(!values.is_empty(), "variable {name} ({sel}) has no values");
        vars.push((name, regex_of(&values)));
    }
    let deps = &vars.iter().find(|(n, _)| n == "dep").expect("$dep").1;
    assert!(deps.contains("crm_search"), "{deps}");

    // Every panel's and annotation's query.
    let mut queries: Vec<(String, String)> = Vec::new();
    for p in dash["panels"].as_array().expect("panels") {
        for t in p["targets"].as_array().into_iter().flatten() {
            let title = format!("{} / {}", p["title"], t["refId"]);
            queries.push((title, t["expr"].as_str().expect("expr").to_string()));
        }
    }
    for a in dash["annotations"]["list"].as_array().into_iter().flatten() {
        if let Some(e) = a["expr"].as_str() {
            queries.push((format!("annotation {}", a["name"]), e.to_string()));
        }
    }
    assert!(queries.len() >= 15, "{}", queries.len());
    for (title, expr) in &queries {
        let q = substitute(expr, &vars);
        let r = prom.api(
            "query_range",
            &[
                ("query", &q),
                ("start", &start),
                ("end", &end),
                ("step", "1"),
            ],
            &format!("{title}: {q}"),
        );
        let series = r["data"]["result"].as_array().map_or(0, Vec::len);
        assert!(series > 0, "{title}: no series for {q}");
    }
    drop(prom);
}
