//! Report files: report.json carries every docs/report.md key, report.md leads with the verdict and
//! names mismatches, report.html is self-contained with the SVG timeline, `rehearse report`
//! re-renders from report.json (exit 2 naming file:line:col on bad JSON). Headless Chromium
//! renders the page in `report_render`.
//!
//! Longer than 400 lines on purpose: one sample report, read back through every report file;
//! splitting it would repeat the sample's set-up.

use rehearse::report::build::{PolicyInput, build_policy, summary_from};
use rehearse::report::model::{Report, SCHEMA_VERSION, Verdict};
use rehearse::report::write_all;
use rehearse::scrape::{CompactScrapes, ScrapeLog};
use rehearse::verdict::Expectations;

use crate::support::report_sample::EXPECT;
pub use crate::support::report_sample::sample_report;

fn keys(v: &serde_json::Value) -> Vec<&str> {
    v.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn report_builders_compute_the_ab_summary_and_verdict() {
    let r = sample_report();
    assert_eq!(
        r.verdict,
        Verdict::Fail,
        "retry-gate expects no timeout cooldowns; the fixture has 3"
    );
    let legacy = &r.policies[0];
    assert!(legacy.ok, "{:#?}", legacy.expectations);
    let s = &legacy.summary;
    assert_eq!(s.cooldowns_by_reason["timeout"], 3);
    assert_eq!(s.cooldowns_by_reason["rate_limit"], 1);
    assert_eq!(
        (s.rotations, s.fallbacks, s.failed_requests),
        (3, 1, Some(4))
    );
    assert_eq!(s.outcomes_by_dep["crm_search"]["http_5xx"], 8);
    // Latencies are the exact samples handed in, not the buckets' guess (75/500 ms here).
    let lat = s.latency_by_dep["crm_search"];
    assert!((lat.p50_ms - 0.3).abs() < 1e-12, "{lat:?}");
    assert_eq!((lat.p99_ms, lat.count), (0.48, 20), "{lat:?}");
    let gate = &r.policies[1];
    assert!(!gate.ok);
    let bad: Vec<_> = gate
        .expectations
        .iter()
        .filter(|e| !e.ok)
        .map(|e| e.detail.as_str())
        .collect();
    assert_eq!(
        bad,
        vec![
            "profile_cooldowns_total{reason=\"timeout\"} expected = 0, observed 3 (+3), outside the bound"
        ]
    );
    let e = rehearse::scrape::parse("").unwrap();
    assert_eq!(summary_from(&e).rotations, 0);
}

#[test]
fn report_files_are_written_and_report_json_has_the_design_keys() {
    let dir = tempfile::tempdir().unwrap();
    write_all(dir.path(), &sample_report()).unwrap();
    for f in ["report.json", "report.md", "report.html"] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    let top = keys(&v);
    for k in [
        "schema_version",
        "scenario",
        "verdict",
        "reason",
        "started_at",
        "speed",
        "seed",
        "host",
        "policies",
        "replay",
        "contradictions",
        "config",
    ] {
        assert!(top.contains(&k), "report.json lacks {k}: {top:?}");
    }
    assert_eq!(v["verdict"], "fail");
    assert_eq!(v["schema_version"], SCHEMA_VERSION);
    assert!(v["started_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(keys(&v["replay"]), vec!["lag_ms", "sent"]);
    assert_eq!(keys(&v["replay"]["lag_ms"]), vec!["max", "p50", "p99"]);
    let p = &v["policies"][0];
    for k in [
        "policy",
        "expectations",
        "transitions",
        "summary",
        "breaker_states",
        "rates",
        "fault_windows",
    ] {
        assert!(keys(p).contains(&k), "policies[] lacks {k}");
    }
    for e in p["expectations"].as_array().unwrap() {
        assert_eq!(
            keys(e),
            vec![
                "delta_ms",
                "dep",
                "detail",
                "expected",
                "expected_ms",
                "kind",
                "observed",
                "observed_ms",
                "ok",
                "series",
                "status",
                "tolerance_ms",
                "witness",
            ]
        );
        let want = if e["ok"] == true { "pass" } else { "fail" };
        assert_eq!(e["status"], want, "{e}");
    }
    assert_eq!(v["policies"][0]["status"], "pass");
    assert_eq!(v["policies"][1]["status"], "fail");
    assert!(v["stopped"].is_null());
    assert_eq!(
        keys(&p["transitions"][0]),
        vec!["dep", "from", "t_ms", "timing", "to"]
    );
    assert_eq!(p["transitions"][0]["from"], "closed");
    for k in [
        "cooldowns_by_reason",
        "rotations",
        "fallbacks",
        "failed_requests",
        "user_visible_errors",
        "outcomes_by_dep",
        "latency_by_dep",
    ] {
        assert!(keys(&p["summary"]).contains(&k), "summary lacks {k}");
    }
    // The model round-trips through its own JSON: what `rehearse report` reads back writes the
    // same JSON. (Not the same floats as in memory: measured floats are written rounded, e.g.
    // a p50 of 0.30000000000000004 ms as 0.3.)
    let back: Report = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), v);
    assert_eq!(
        back.policies[0].summary.latency_by_dep["crm_search"].p50_ms,
        0.3
    );
    let mut rounded = sample_report();
    for p in &mut rounded.policies {
        for l in p.summary.latency_by_dep.values_mut() {
            l.p50_ms = rehearse::util::round::round3(l.p50_ms);
        }
        for r in &mut p.rates {
            r.errors_per_s = rehearse::util::round::round3(r.errors_per_s);
        }
    }
    assert_eq!(back, rounded);
}

#[test]
fn report_markdown_leads_with_the_verdict_and_names_mismatches() {
    let md = rehearse::report::markdown::render(&sample_report());
    assert!(
        md.starts_with("# Rehearsal `crm-search-503-storm`: FAIL\n"),
        "{md}"
    );
    assert!(md.contains(
        "- ✗ [retry-gate] profile_cooldowns_total{reason=\"timeout\"} expected = 0, observed 3 (+3)"
    ));
    let order = [
        "## Expected vs observed",
        "## Policies side by side",
        "## Fault windows",
        "### Outcomes by dep",
        "### Latency",
        "## Replay schedule lag",
        "## Host and TCP stack",
        "## Config",
    ];
    let pos: Vec<usize> = order
        .iter()
        .map(|h| md.find(h).unwrap_or_else(|| panic!("{h} missing")))
        .collect();
    assert!(
        pos.windows(2).all(|w| w[0] < w[1]),
        "sections out of order: {pos:?}"
    );
    assert!(
        md.contains("| cooldowns written (timeout) | 3 | 3 |"),
        "{md}"
    );
    assert!(md.contains("| tcp.syn_retries | 6 |"));
}

#[test]
fn report_html_is_self_contained_with_the_timeline() {
    let html = rehearse::report::html::render(&sample_report());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("<script") && !html.contains("http://")
            || html.contains("xmlns=\"http://www.w3.org/2000/svg\"")
    );
    assert!(
        !html.contains("<link") && !html.contains("src="),
        "no external resources"
    );
    assert_eq!(html.matches("<svg").count(), 2, "one timeline per policy");
    // crm_search has 10 state segments per policy, calculator 1, ws_realtime 2.
    assert_eq!(html.matches("class=\"state state-").count(), 2 * 13);
    assert_eq!(
        html.matches("class=\"fault-label\"").count(),
        2 * 2,
        "two faults per timeline"
    );
    // The window fault shades its lane over 1.2–3.0 s; the `first = 1` fault only where it hit.
    assert_eq!(html.matches("class=\"fault-shade\"").count(), 2);
    assert_eq!(html.matches("class=\"fault-shade hit\"").count(), 2);
    assert!(html.contains("class=\"requests\"") && html.contains("class=\"errors\""));
    // A/B: legacy's cooldown, rotation and fallback against the retry gate's retry.
    let (legacy, gate) = html.split_at(html.find("Policy <code>retry-gate</code>").unwrap());
    assert_eq!(legacy.matches("class=\"cooldown\"").count(), 1);
    assert_eq!(legacy.matches("class=\"rotation\"").count(), 1);
    assert_eq!(legacy.matches("class=\"fallback\"").count(), 1);
    assert_eq!(legacy.matches("class=\"retry-after\"").count(), 1);
    assert_eq!(legacy.matches("class=\"retry\"").count(), 0);
    let gate_svg = &gate[..gate.find("</svg>").unwrap()];
    assert_eq!(gate_svg.matches("class=\"retry\"").count(), 1);
    assert_eq!(gate_svg.matches("class=\"cooldown\"").count(), 0);
    // The profile table maps the fingerprint to its profile id.
    assert!(html.contains("<td>openai-codex:default</td><td>openai-codex/default/06bfb5</td>"));
}

#[test]
fn report_command_rerenders_and_rejects_bad_json_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write_all(dir.path(), &sample_report()).unwrap();
    std::fs::remove_file(dir.path().join("report.md")).unwrap();
    std::fs::remove_file(dir.path().join("report.html")).unwrap();
    let d = dir.path().to_str().unwrap();
    let out = crate::support::rehearse(&["report", d]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "re-rendering a failed report exits 1\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().last(),
        Some(format!("report: {d}/report.md").as_str())
    );
    assert!(dir.path().join("report.md").is_file() && dir.path().join("report.html").is_file());

    // A report.json written before `status` existed still re-renders (statuses from `ok`).
    let mut old: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    for p in old["policies"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("status");
        for e in p["expectations"].as_array_mut().unwrap() {
            e.as_object_mut().unwrap().remove("status");
        }
    }
    std::fs::write(dir.path().join("report.json"), old.to_string()).unwrap();
    let out = crate::support::rehearse(&["report", d]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "an old failed report re-renders and exits 1\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    std::fs::write(
        dir.path().join("report.json"),
        "{\n  \"schema_version\": 1,\n  \"scenario\": [\n",
    )
    .unwrap();
    let out = crate::support::rehearse(&["report", d]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{d}/report.json:3:")), "{err}");

    let empty = tempfile::tempdir().unwrap();
    let out = crate::support::rehearse(&["report", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("report.json"));
}

/// Reports the binary wrote before witnesses and scenario digests existed (main at 5eec9b0,
/// smoke at speed 5: `fixtures/reports/`): `rehearse report` re-renders each with its own
/// verdict and exit code — its rows are not judged again, so a pass without a witness stays
/// the pass it was — and says the witness was not recorded rather than inventing one;
/// `history` and `compare` read them.
#[test]
fn reports_written_before_witnesses_and_digests_rerender_with_their_verdict() {
    let reports = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for (file, stamp, verdict, code) in [
        ("before-witness-pass.json", "20261205T014628Z", "pass", 0),
        ("before-witness-fail.json", "20261205T014638Z", "fail", 1),
    ] {
        let src = crate::support::run::repo_root()
            .join("fixtures/reports")
            .join(file);
        let text = std::fs::read_to_string(&src).unwrap();
        let old: serde_json::Value = serde_json::from_str(&text).unwrap();
        // What the old binary wrote: no witness on any row, no digest.
        assert!(old.get("scenario_digest").is_none());
        assert!(
            old["policies"][0]["expectations"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e.get("witness").is_none())
        );
        let dir = reports.path().join(format!("{stamp}-smoke"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("report.json"), &text).unwrap();
        let d = dir.to_str().unwrap();
        let out = crate::support::rehearse(&["report", d]);
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(code), "{file}: {said}");
        assert!(
            said.contains(&format!("smoke: {verdict}")),
            "{file}: {said}"
        );
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(
            md.contains("not recorded"),
            "{file}: the witness cell\n{md}"
        );
        assert!(
            !md.contains("scenario digest"),
            "{file}: no digest invented\n{md}"
        );
        // The re-render leaves report.json as it was.
        assert_eq!(
            std::fs::read_to_string(dir.join("report.json")).unwrap(),
            text
        );
        dirs.push(dir);
    }
    let out = crate::support::rehearse(&[
        "history",
        "--json",
        "--report-dir",
        reports.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let h: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts: Vec<&str> = h["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["pass", "fail"], "{h}");
    assert!(h["runs"][0]["scenario_digest"].is_null(), "{h}");
    let out = crate::support::rehearse(&[
        "compare",
        dirs[0].to_str().unwrap(),
        dirs[1].to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &c["expectations"][0];
    assert_eq!(row["a_witness"], serde_json::json!({}), "{c}");
}

#[test]
fn report_html_escapes_untrusted_text() {
    let mut r = sample_report();
    r.scenario = "<script>alert(1)</script>".into();
    r.policies[0].transitions[0].dep = "a<b>&\"c".into();
    r.policies[0]
        .breaker_states
        .insert("<img src=x>".into(), vec![]);
    let html = rehearse::report::html::render(&r);
    assert!(
        !html.contains("<script>") && !html.contains("<img"),
        "unescaped text in HTML"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("a&lt;b&gt;&amp;&quot;c"));
}

#[test]
fn markdown_and_html_show_the_same_per_policy_tables() {
    let mut r = sample_report();
    r.policies[0].transitions[0].dep = "crm|search<x>".into();
    r.policies[0].health.insert(
        "crm_search".into(),
        rehearse::report::model::HealthRow {
            canary_calls: 31,
            canary_failures: 6,
            max_disagreement_s: 4.6,
        },
    );
    let p = &r.policies[0];
    let md = rehearse::report::markdown::render(&r);
    let html = rehearse::report::html::render(&r);
    let tr = rehearse::report::table::transitions(p);
    assert!(!tr.rows.is_empty(), "sample report has transitions");
    assert!(
        md.contains("| crm\\|search<x> |"),
        "pipe escaped in markdown"
    );
    assert!(html.contains("<td>crm|search&lt;x&gt;</td>"), "{html}");
    for t in [
        rehearse::report::table::transitions(p),
        rehearse::report::table::outcomes(p),
        rehearse::report::table::latency(p, rehearse::util::speed::Speed::ONE.into()),
        rehearse::report::table::health(p),
    ] {
        let head = format!("| {} |", t.head.join(" | "));
        assert!(md.contains(&head), "markdown lacks header {head}");
        let hhead: String = t.head.iter().map(|h| format!("<th>{h}</th>")).collect();
        assert!(html.contains(&hhead), "html lacks header {hhead}");
        for row in &t.rows {
            let last = row.last().map(String::as_str).unwrap_or_default();
            let cells = row.len();
            assert_eq!(cells, t.head.len(), "row width");
            assert!(md.contains(last) && html.contains(last), "{last} missing");
        }
    }
    // Like every time in the report, the disagreement is in scenario seconds.
    assert!(md.contains("| crm_search | 31 | 6 | 4.6 s |"), "{md}");
    assert!(md.contains("max disagreement |"));
    assert!(md.contains("- times: All times are scenario time"), "{md}");
}

/// With an event log the timeline and the diff take its times (the one source),
/// the report says so, and every place the scrapes disagree with it is a row.
#[test]
fn transitions_are_timed_by_the_event_log_and_scrape_disagreements_are_listed() {
    use rehearse::engine::events::BreakerState;
    use rehearse::report::model::TransitionTimes;
    use rehearse::scrape::{DisagreementKind, Timing, Transition};
    let log = ScrapeLog::from_prom(include_str!(
        "../fixtures/metrics/breaker-flap.scrapes.prom"
    ))
    .unwrap();
    let log = CompactScrapes::from_log(&log, 1_790_000_000.0);
    let expect: Expectations = toml::from_str(EXPECT).unwrap();
    // The engine says ws_realtime tripped at 5.900 s; the fixture's scrapes show it open (and
    // counted) at 5.000 s and hold crm_search transitions the log lacks.
    let events = [Transition {
        dep: "ws_realtime".into(),
        from: BreakerState::Closed,
        to: BreakerState::Open,
        t_ms: 5_900,
        timing: Timing::Event,
        reason: Some(rehearse::engine::TripReason::PingTimeouts),
    }];
    let build = |events: Option<&[Transition]>| {
        build_policy(PolicyInput {
            policy: "retry-gate",
            expect: &expect.for_policy("retry-gate"),
            scrapes: &log,
            events,
            scrape_interval_ms: 1_000,
            arrivals: &[],
            speed: rehearse::util::speed::Speed::ONE,
            fault_windows: vec![],
            latency: Default::default(),
            marks: Default::default(),
            replay: None,
            failed_requests: None,
            user_visible_errors: None,
            elapsed_ms: 6_000,
            canaries: Default::default(),
            stopped_at_ms: None,
            final_exposition: None,
            engine_catalogue: true,
            faults: None,
        })
    };
    let by_scrape = build(None);
    assert_eq!(by_scrape.transition_times, TransitionTimes::Scrape);
    assert!(by_scrape.disagreements.is_empty());
    let p = build(Some(&events));
    assert_eq!(p.transition_times, TransitionTimes::EventLog);
    assert_eq!(p.transitions, events, "the timeline is the event log's");
    let ws = p
        .expectations
        .iter()
        .find(|e| e.dep.as_deref() == Some("ws_realtime"))
        .unwrap();
    assert_eq!(
        ws.observed, "5.900s",
        "the diff uses the event time: {ws:?}"
    );
    assert!(!ws.ok);
    let kinds: Vec<_> = p.disagreements.iter().map(|d| d.kind).collect();
    assert!(kinds.contains(&DisagreementKind::State), "{kinds:?}");
    assert!(kinds.contains(&DisagreementKind::NotInEvents), "{kinds:?}");
    let ws_state = p
        .disagreements
        .iter()
        .find(|d| d.dep == "ws_realtime" && d.kind == DisagreementKind::State)
        .expect("ws_realtime state row");
    assert!(
        ws_state
            .detail
            .contains("show ws_realtime open; events.jsonl has it closed"),
        "{}",
        ws_state.detail
    );

    let mut r = sample_report();
    r.policies = vec![p, by_scrape];
    r.policies[1].policy = "legacy".into();
    let md = rehearse::report::markdown::render(&r);
    assert!(
        md.contains("[retry-gate] Transitions timed by events.jsonl")
            && md.contains("[legacy] Transitions timed by scrape"),
        "{md}"
    );
    assert!(md.contains("### Event log vs scrapes"), "{md}");
    assert!(md.contains("| not_in_events |"), "{md}");
    let html = rehearse::report::html::render(&r);
    assert!(html.contains("<h3>Event log vs scrapes</h3>"));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["policies"][0]["transition_times"], "events.jsonl");
    assert_eq!(json["policies"][0]["transitions"][0]["timing"], "event");
    assert_eq!(json["policies"][1]["transition_times"], "scrape");
}
