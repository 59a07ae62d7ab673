//! An `http` target's `metrics_url` under `[prometheus] spawn = true`: a stand-in gateway
//! (`metrics_gateway.py`) exports `breaker_state{dep="model"}`, open while its upstream answers
//! 503; the run's Prometheus scrapes it (every `up` sample of the target is 1, read back from the
//! run's own TSDB afterwards by a Prometheus this test starts), the shipped BreakerOpen fires
//! and resolves on the gateway's own series, and a `never` row is judged on that scrape.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::prometheus::Prometheus;
use super::run::{report_json, reported_path, show};
use super::{
    detail_of, monitoring_processes_under, mutants_hold, rehearse_with_mutants, require_tools, rows,
};

pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The stand-in gateway, killed by pid on drop.
pub(super) struct Gateway(Child);

impl Gateway {
    pub(super) fn start(port: u16, upstream_port: u16) -> Self {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/detection/metrics_gateway.py"
        );
        let child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(format!("http://127.0.0.1:{upstream_port}"))
            .arg("sk-metrics-key-A")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the stand-in gateway");
        let t = tokio::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "the stand-in gateway never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Gateway(child)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// 45 s against the gateway on `gw`: a turn a second, the upstream (on `up`) answering 503
/// from 5 s to 30 s. BreakerOpen (`for: 15s`) fires ~16 s after the storm's start and resolves
/// at the first scrape after the first good answer.
fn scenario(dir: &Path, gw: u16, up: u16) -> std::path::PathBuf {
    let traffic = dir.join("turns.jsonl");
    let lines: String = (1..45)
        .map(|s| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":8,\"session\":\"s{s}\"}}\n",
                s * 1000
            )
        })
        .collect();
    std::fs::write(&traffic, lines).unwrap();
    let text = format!(
        "name = \"prometheus-http-target\"\nduration = \"45s\"\ntraffic = {:?}\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\n\
         metrics_url = \"http://127.0.0.1:{gw}/metrics\"\nturn_timeout = \"10s\"\n\n\
         [upstream]\nlisten = \"127.0.0.1:{up}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-metrics-key-A\"\n\n\
         [prometheus]\nspawn = true\n\n\
         [[fault]]\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\nfrom = \"5s\"\nuntil = \"30s\"\n\n\
         [[expect.alert]]\nalert = \"BreakerOpen\"\nlabels = {{ dep = \"model\" }}\n\
         fires_within = \"25s\"\nresolves_within = \"10s\"\n\n\
         [[expect.alert]]\nalert = \"BreakerFlapping\"\nnever = true\n",
        traffic.display().to_string()
    );
    let path = dir.join("prometheus-http-target.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The value of an instant `query` on `prom` (one series), as f64.
fn scalar(prom: &Prometheus, query: &str) -> f64 {
    let v = prom.api("query", &[("query", query)], query);
    v["data"]["result"][0]["value"][1]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{query}: no series: {v}"))
}

#[test]
fn an_http_targets_metrics_url_is_scraped_and_its_series_alerted_on() {
    require_tools();
    let tmp = crate::run::kept_on_failure(
        "an_http_targets_metrics_url_is_scraped_and_its_series_alerted_on",
    );
    let (gw, up) = (free_port(), free_port());
    let _gateway = Gateway::start(gw, up);
    let s = scenario(tmp.path(), gw, up);
    let reports = tmp.path().join("r");
    let out = rehearse_with_mutants(&["run", "--scenario", s.to_str().unwrap()], &reports);
    let r = report_json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\nalerts: {:#?}",
        show(&out),
        detail_of(&r, "alert")
    );
    let alerts: Vec<_> = rows(&r)
        .into_iter()
        .filter(|e| e["kind"] == "alert")
        .collect();
    assert_eq!(alerts.len(), 2, "{alerts:#?}");
    assert!(alerts.iter().all(|e| e["status"] == "pass"), "{alerts:#?}");
    let table = r["policies"][0]["alerts"]["table"]
        .as_array()
        .expect("alert table");
    let fired = table[0]["fired_ms"].as_i64().expect("fired");
    assert!((20_000..=30_000).contains(&fired), "{table:?}");
    assert!(monitoring_processes_under(&reports).is_empty());

    // The run's own TSDB, read back: the gateway's metrics_url was a target, up the whole run.
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    let work = tmp.path().join("reader");
    std::fs::create_dir_all(&work).unwrap();
    let prom = Prometheus::start(&run_dir.join("prometheus/data"), &work);
    let sel = "up{job=\"rehearse\",arm=\"http\",host=\"sut\"}";
    let scrapes = scalar(&prom, &format!("count_over_time({sel}[30m])"));
    let lowest = scalar(&prom, &format!("min_over_time({sel}[30m])"));
    // One a second over the 45 s arm, less the file_sd refresh and the first scrape's offset
    // at the start (40 seen on a loaded 2-core machine).
    assert!(scrapes >= 34.0, "{scrapes} scrapes of the 45 s run");
    assert_eq!(lowest, 1.0, "a scrape of the gateway failed");
    let last = format!("last_over_time({sel}[30m])");
    let instance = prom.api("query", &[("query", last.as_str())], "instance");
    assert_eq!(
        instance["data"]["result"][0]["metric"]["instance"],
        format!("127.0.0.1:{gw}"),
        "{instance}"
    );
    let open = scalar(
        &prom,
        "max_over_time(breaker_state{job=\"rehearse\",dep=\"model\"}[30m])",
    );
    assert_eq!(open, 2.0, "the gateway's own breaker series was scraped");
    mutants_hold(&out, "an http target's metrics_url");
    println!("http target: {scrapes} scrapes, BreakerOpen fired at {fired} ms");
}
