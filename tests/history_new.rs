//! Drift that sees what is new, end to end: the same scenario file (one digest) run against a
//! stand-in gateway (`[target] kind = "http"` with `metrics_url`, a loopback server this test
//! runs) whose breaker never opens for three runs, then — the system under test changed, as an
//! upgrade changes it — opens for the first time. That opening is flagged in the drift
//! section and in `rehearse history` (index.md, `--json`), and the `[[expect.drift]]` rows over
//! it fail the run (exit 1); before, a figure no run before had was "no baseline yet" and the
//! run passed. A fifth run whose breaker stays open longer fails on the moved open time.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use tokio::time::Instant;

use crate::support::loopback::{answer, free_port, read_request, relay};
use crate::support::run::{report_json, reported_path, show};

/// The stand-in's breaker never opens.
const NEVER_OPENS: u8 = 0;
/// It opens on a failed upstream answer and half-opens (then closes) on the next good one.
const OPENS: u8 = 1;
/// It opens alike, but half-opens only on a good answer at least 3 s after it opened.
const OPENS_LONGER: u8 = 2;

/// The stand-in's breaker over dep `model`, as its `/metrics` exports it.
#[derive(Default)]
struct Breaker {
    opened_at: Option<Instant>,
    to_open: u64,
    to_half_open: u64,
    to_closed: u64,
}

impl Breaker {
    fn exposition(&self) -> String {
        let state = if self.opened_at.is_some() { 2 } else { 0 };
        format!(
            "# TYPE breaker_state gauge\nbreaker_state{{dep=\"model\"}} {state}\n\
             # TYPE breaker_transitions_total counter\n\
             breaker_transitions_total{{dep=\"model\",from=\"closed\",to=\"open\"}} {}\n\
             breaker_transitions_total{{dep=\"model\",from=\"open\",to=\"half_open\"}} {}\n\
             breaker_transitions_total{{dep=\"model\",from=\"half_open\",to=\"closed\"}} {}\n",
            self.to_open, self.to_half_open, self.to_closed
        )
    }

    /// After an upstream answer of a run's turn: open on a failure, half-open and close on a
    /// success (in mode `OPENS_LONGER`, only 3 s after opening).
    fn saw(&mut self, mode: u8, ok: bool) {
        if mode == NEVER_OPENS {
            return;
        }
        match (self.opened_at, ok) {
            (None, false) => {
                self.opened_at = Some(Instant::now());
                self.to_open += 1;
            }
            (Some(t), true) if mode == OPENS || t.elapsed() >= Duration::from_secs(3) => {
                self.opened_at = None;
                self.to_half_open += 1;
                self.to_closed += 1;
            }
            _ => {}
        }
    }
}

/// The loopback gateway: relays each turn to the mock upstream with key A, keeps a breaker
/// the way its mode says, exports it at `/metrics`. Stopped on drop.
struct StandIn {
    port: u16,
    mode: Arc<AtomicU8>,
    breaker: Arc<Mutex<Breaker>>,
    stop: Arc<AtomicBool>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(mut s: TcpStream, upstream: u16, mode: u8, breaker: Arc<Mutex<Breaker>>) {
    let req = String::from_utf8_lossy(&read_request(&mut s)).into_owned();
    if req.starts_with("GET /metrics") {
        let text = breaker.lock().unwrap().exposition();
        return answer(&mut s, "200 OK", "text/plain; version=0.0.4", &text);
    }
    if !req.starts_with("POST") {
        return answer(&mut s, "200 OK", "application/json", r#"{"ok":true}"#);
    }
    let ok = relay(upstream, "sk-drift-key-A", "m1");
    // The harness's warm-up turns reach the upstream before the run's clock: not the run's.
    if !req.contains("rehearse-warmup") {
        breaker.lock().unwrap().saw(mode, ok);
    }
    if ok {
        answer(
            &mut s,
            "200 OK",
            "application/json",
            r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#,
        );
    } else {
        answer(
            &mut s,
            "502 Bad Gateway",
            "application/json",
            r#"{"error":{"message":"upstream failed"}}"#,
        );
    }
}

fn stand_in(upstream: u16) -> StandIn {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let g = StandIn {
        port,
        mode: Arc::new(AtomicU8::new(NEVER_OPENS)),
        breaker: Arc::new(Mutex::new(Breaker::default())),
        stop: Arc::new(AtomicBool::new(false)),
    };
    let (mode, breaker, stop) = (g.mode.clone(), g.breaker.clone(), g.stop.clone());
    thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let (m, b) = (mode.load(Ordering::SeqCst), breaker.clone());
                    thread::spawn(move || serve(s, upstream, m, b));
                }
                Err(_) => thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    g
}

/// 5 s of a turn every 250 ms against the stand-in, the upstream answering 503 from 1 s to
/// 1.5 s; the open time of the gateway's breaker must stay within 50 % of the runs before, and
/// its openings too (every breaker dep it shows).
fn scenario(dir: &Path, gw: u16, up: u16) -> PathBuf {
    let traffic = dir.join("turns.jsonl");
    let lines: String = (1..20)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":8,\"session\":\"s{i}\"}}\n",
                i * 250
            )
        })
        .collect();
    std::fs::write(&traffic, lines).unwrap();
    let text = format!(
        "name = \"drift-new\"\nduration = \"5s\"\ntraffic = {:?}\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\n\
         metrics_url = \"http://127.0.0.1:{gw}/metrics\"\nturn_timeout = \"5s\"\n\n\
         [upstream]\nlisten = \"127.0.0.1:{up}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-drift-key-A\"\n\n\
         [[fault]]\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\nfrom = \"1s\"\nuntil = \"1500ms\"\n\n\
         [[expect.attempts]]\nprofile = \"mockai:a\"\nat_least = 5\n\n\
         [[expect.drift]]\nfigure = \"open_ms\"\ndep = \"model\"\nwithin = \"50%\"\n\n\
         [[expect.drift]]\nfigure = \"openings\"\nwithin = \"50%\"\n",
        traffic.display().to_string()
    );
    let path = dir.join("drift-new.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(scenario: &Path, reports: &Path) -> (Output, serde_json::Value, PathBuf) {
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(reports)
        .output()
        .expect("run rehearse");
    let r = report_json(&out);
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    (out, r, dir)
}

fn drift_rows(r: &serde_json::Value) -> Vec<&serde_json::Value> {
    r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "drift")
        .collect()
}

fn row<'a>(rows: &[&'a serde_json::Value], figure: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|e| e["series"] == figure)
        .unwrap_or_else(|| panic!("no drift row of {figure}: {rows:?}"))
}

fn section_row<'a>(r: &'a serde_json::Value, figure: &str) -> &'a serde_json::Value {
    r["drift"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["figure"] == figure)
        .unwrap_or_else(|| panic!("no drift section row of {figure}: {}", r["drift"]))
}

#[test]
fn a_breaker_that_opens_for_the_first_time_is_flagged_and_fails_its_drift_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let up = free_port();
    let gw = stand_in(up);
    let path = scenario(tmp.path(), gw.port, up);

    // Three runs in which the gateway's breaker never opened: watched (its series scraped),
    // openings 0, no open time.
    let mut digest = None;
    for n in 1..=3 {
        *gw.breaker.lock().unwrap() = Breaker::default();
        let (out, r, _) = run(&path, &reports);
        assert_eq!(out.status.code(), Some(0), "run {n}: {}", show(&out));
        let deps = &r["policies"][0]["figures"]["deps"];
        assert_eq!(deps["model"]["openings"], 0, "run {n}: {deps}");
        assert!(deps["model"]["open_ms"].is_null(), "run {n}: {deps}");
        let rows = drift_rows(&r);
        let want = if n < 3 { "no_baseline" } else { "pass" };
        for f in ["open_ms{model}", "openings{model}"] {
            let x = row(&rows, f);
            assert_eq!(x["status"], want, "run {n} {f}: {}", x["detail"]);
        }
        if n == 3 {
            // Never opened, nor in the two runs before, each of which watched it.
            let x = row(&rows, "open_ms{model}");
            assert!(
                x["detail"].as_str().unwrap().contains("did not happen"),
                "{x}"
            );
            assert_eq!(x["witness"]["baseline_runs"], 2, "{x}");
        }
        let d = r["scenario_digest"].as_str().unwrap().to_string();
        assert!(d.starts_with("sha256:"), "{d}");
        assert!(
            digest.get_or_insert(d.clone()) == &d,
            "one file, one digest"
        );
    }

    // The gateway changed: its breaker opens on the 503s, for the first time.
    gw.mode.store(OPENS, Ordering::SeqCst);
    *gw.breaker.lock().unwrap() = Breaker::default();
    let (out, r, fourth) = run(&path, &reports);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert_eq!(r["verdict"], "fail", "{}", show(&out));
    let rows = drift_rows(&r);
    let open = row(&rows, "open_ms{model}");
    assert_eq!(open["status"], "fail", "{open}");
    assert!(open["detail"].as_str().unwrap().contains("new"), "{open}");
    assert_eq!(open["witness"]["baseline_runs"], 3, "{open}");
    let openings = row(&rows, "openings{model}");
    assert_eq!(openings["status"], "fail", "{openings}");
    assert!(
        openings["detail"].as_str().unwrap().contains("from 0"),
        "{openings}"
    );
    let s = section_row(&r, "open_ms{model}");
    assert_eq!(s["flagged"], true, "{s}");
    assert!(
        s["median"].is_null() && s["value"].as_f64().is_some(),
        "{s}"
    );
    assert_eq!(section_row(&r, "openings{model}")["flagged"], true);
    let md = std::fs::read_to_string(fourth.join("report.md")).unwrap();
    assert!(
        md.contains("| open_ms{model} |") && md.contains("⚠ new"),
        "{md}"
    );

    // `rehearse history` flags it: index.md, and --json with the change and the witnesses.
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["history", "--json", "--report-dir"])
        .arg(&reports)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let h: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "{h}");
    assert!(
        runs[..3]
            .iter()
            .all(|x| x["drifted"].as_array().unwrap().is_empty()),
        "{h}"
    );
    let last = &runs[3];
    assert!(
        last["drifted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "http/open_ms{model}"),
        "{last}"
    );
    assert!(
        last["drift"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["figure"] == "open_ms{model}" && x["change"] == "new"),
        "{last}"
    );
    let check = last["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == "model" && c["status"] == "fail")
        .unwrap_or_else(|| panic!("{last}"));
    assert_eq!(check["witness"]["baseline_runs"], 3, "{check}");
    let index = std::fs::read_to_string(reports.join("index.md")).unwrap();
    assert!(index.contains("http/open_ms{model} (new)"), "{index}");
    assert!(
        index.contains("baseline runs 3"),
        "the witness is in the listing: {index}"
    );

    // It stays open longer the next time: the open time moved past 50 % of the runs before.
    gw.mode.store(OPENS_LONGER, Ordering::SeqCst);
    *gw.breaker.lock().unwrap() = Breaker::default();
    let (out, r, _) = run(&path, &reports);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let open = row(&drift_rows(&r), "open_ms{model}");
    assert_eq!(open["status"], "fail", "{open}");
    assert!(
        open["detail"]
            .as_str()
            .unwrap()
            .contains("against the median"),
        "{open}"
    );
}
