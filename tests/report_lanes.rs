//! The picture's request lanes (`policies[].requests`), end to end: an embedded run's report
//! holds and draws one mark per request its upstream.jsonl recorded, in lanes per dep beside
//! the breaker lanes, and keeps its contracts (schema); a gateway-shaped model renders every
//! request, turn, decision, rotation and the warm-up apart, and headless Chromium paints them;
//! a weekly-size model renders bounded and says it was binned.

use std::collections::BTreeMap;

use rehearse::report::model::Report;
use rehearse::report::requests::{
    BinCount, DecisionMark, RequestBins, RequestLane, RequestLanes, RequestMark, SequenceMark,
    TurnLane, TurnSpan, WarmupBand, WarmupMark,
};

use crate::report::sample_report;
use crate::report_contracts::assert_report_contracts;
use crate::support::run::{fixture, reported_path, run_in, show};

/// The SVG of the first policy's timeline in `html`.
fn first_svg(html: &str) -> &str {
    let from = html.find("<svg").expect("a timeline");
    let to = html[from..].find("</svg>").expect("closed") + from;
    &html[from..to]
}

#[test]
fn an_embedded_run_draws_every_request_its_upstream_recorded_beside_the_breaker_lanes() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = fixture("smoke");
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--scenario",
            scenario.to_str().unwrap(),
            "--speed",
            "4",
            "--report-dir",
            dir.path().to_str().unwrap(),
        ],
    );
    // The verdict is the breaker's business (timing on a busy box); the lanes are this test's.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", show(&out));
    let run_dir = reported_path(&out).parent().unwrap().to_path_buf();
    let upstream = std::fs::read_to_string(run_dir.join("upstream.jsonl")).unwrap();
    let mut per_dep: BTreeMap<String, u64> = BTreeMap::new();
    for line in upstream.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v.get("warmup").is_none(), "an engine run has no warm-up");
        *per_dep
            .entry(v["dep"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let recorded: u64 = per_dep.values().sum();
    assert!(recorded > 100, "smoke sends ~200 requests: {recorded}");
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("report.json")).unwrap())
            .unwrap();
    let q = report.policies[0]
        .requests
        .as_ref()
        .expect("the report holds the request lanes");
    assert_eq!(q.total, recorded, "every request upstream.jsonl holds");
    assert_eq!(q.requests.len() as u64, recorded, "each one kept to draw");
    assert!(q.bins.is_none());
    for (dep, n) in &per_dep {
        let lane = q
            .lanes
            .iter()
            .find(|l| &l.dep == dep)
            .expect("a lane per dep");
        assert_eq!(lane.requests, *n, "{dep}");
    }
    let crm = q.lanes.iter().position(|l| l.dep == "crm_search").unwrap();
    assert!(
        q.requests
            .iter()
            .any(|r| r.lane == crm && r.outcome == "status" && r.fault == Some(0)),
        "the 503 storm's requests are marked by their fault"
    );
    // Drawn: one mark per request, under the breaker lanes.
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    let svg = first_svg(&html);
    let marks = svg.matches(r#"<rect class="request""#).count()
        + svg.matches(r#"<rect class="request canary""#).count();
    assert_eq!(marks as u64, recorded, "one mark per request");
    let breaker = svg.find(r#"class="state state-"#).expect("breaker lanes");
    let lanes = svg.find(r#"class="request-lane""#).expect("request lanes");
    assert!(
        breaker < lanes,
        "the request lanes beside (under) the breaker lanes"
    );
    assert!(svg.contains("every request drawn"));
    // report.md says it in words: the total and a row per lane with its requests.
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("{recorded} requests at the upstream")),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "| crm_search | tool:crm_search | - | {} |",
            per_dep["crm_search"]
        )),
        "{md}"
    );
    assert_report_contracts(&run_dir);
}

fn lane(name: &str, model: &str, requests: u64, faulted: u64) -> RequestLane {
    RequestLane {
        name: name.into(),
        route: "llm".into(),
        dep: format!("{model}/default/abc123"),
        provider: Some("mockai".into()),
        profile: Some(name.into()),
        model: Some(model.into()),
        requests,
        faulted,
    }
}

/// A gateway run's lanes as the 503-on-key-A fixture leaves them: key-A faulted seven times,
/// key-B answering, the fallback never used; one turn; the gateway's retries and rotation;
/// three warm-up requests.
pub fn gateway_lanes() -> RequestLanes {
    let mut requests: Vec<RequestMark> = [500, 1_300, 2_000, 2_600, 3_300, 4_000, 4_600]
        .into_iter()
        .map(|t_ms| RequestMark {
            t_ms,
            lane: 0,
            outcome: "status".into(),
            fault: Some(0),
            probe: false,
            canary: false,
        })
        .collect();
    requests.push(RequestMark {
        t_ms: 5_400,
        lane: 1,
        outcome: "ok".into(),
        fault: None,
        probe: false,
        canary: false,
    });
    let retries = [600, 1_400, 2_100, 2_700, 3_400, 4_100].map(|t_ms| DecisionMark {
        t_ms,
        lane: Some(0),
        event: "same_model_retry".into(),
        detail: "server_error".into(),
        until_ms: None,
    });
    let mut decisions = retries.to_vec();
    decisions.push(DecisionMark {
        t_ms: 4_700,
        lane: Some(0),
        event: "rotate_profile".into(),
        detail: "server_error · retry 6".into(),
        until_ms: None,
    });
    decisions.push(DecisionMark {
        t_ms: 4_750,
        lane: Some(0),
        event: "profile_failure_state".into(),
        detail: "rate_limit".into(),
        until_ms: Some(5_900),
    });
    RequestLanes {
        lanes: vec![
            lane("mockai:a", "m1", 7, 7),
            lane("mockai:b", "m1", 1, 0),
            RequestLane {
                name: "fallback:f".into(),
                route: "llm".into(),
                profile: Some("fallback:f".into()),
                ..RequestLane::default()
            },
        ],
        total: 8,
        requests,
        rotations: vec![SequenceMark {
            from_ms: 4_600,
            from_lane: 0,
            to_ms: 5_400,
            to_lane: 1,
        }],
        rotations_total: 1,
        turns: Some(TurnLane {
            total: 1,
            spans: vec![TurnSpan {
                line: 0,
                due_ms: 100,
                end_ms: 5_500,
                outcome: "answered".into(),
                ok: true,
            }],
            bins: None,
        }),
        decisions,
        warmup: Some(WarmupBand {
            before_clock_ms: 30_000,
            total: 3,
            requests: [20_000, 25_000, 29_000]
                .map(|t_ms| WarmupMark {
                    t_ms,
                    lane: "mockai:a".into(),
                    outcome: "ok".into(),
                })
                .to_vec(),
        }),
        ..RequestLanes::default()
    }
}

#[test]
fn a_gateway_shaped_model_draws_every_request_turn_decision_and_the_warm_up_apart() {
    let mut r = sample_report();
    r.policies[0].requests = Some(gateway_lanes());
    let html = rehearse::report::html::render(&r);
    let svg = first_svg(&html);
    assert_eq!(svg.matches(r#"<rect class="request""#).count(), 8);
    assert_eq!(svg.matches(r#"data-outcome="status""#).count(), 7);
    assert_eq!(
        svg.matches(r#"class="request-lane""#).count(),
        3,
        "fallback:f too"
    );
    assert!(svg.contains("no request"), "the unused fallback says so");
    assert_eq!(svg.matches(r#"class="seq-rotation""#).count(), 1);
    assert_eq!(svg.matches(r#"class="turn""#).count(), 1);
    assert_eq!(svg.matches(r#"class="decision""#).count(), 8);
    assert_eq!(svg.matches(r#"class="gateway-cooldown""#).count(), 1);
    assert_eq!(svg.matches(r#"class="warmup-request""#).count(), 3);
    assert!(svg.contains("503 (fault #1)"), "the legend names the fault");
    assert!(svg.contains("before the run&#39;s clock") || svg.contains("before the run's clock"));
    // The warm-up is on its own scale, apart: none of its marks is a request of the run.
    let warm = svg.find(r#"class="warmup""#).unwrap();
    let lanes = svg.find(r#"class="request-lane""#).unwrap();
    assert!(warm < lanes);
    // The other policy has none: nothing drawn for it.
    let second = &html[html.find("Policy <code>retry-gate</code>").unwrap()..];
    assert!(!first_svg(second).contains(r#"class="upstream-requests""#));
}

#[test]
fn a_weekly_size_model_renders_bounded_and_says_it_was_binned() {
    // 300 s at 10 RPS, two to three requests a turn over four lanes: 150 bins of 2 s each.
    let mut counts = Vec::new();
    let mut total = 0;
    for lane in 0..4 {
        for bin in 0..150 {
            for (outcome, fault, n) in [
                ("ok", None, 14),
                ("status", Some(0), 3),
                ("reset", Some(1), 1),
            ] {
                counts.push(BinCount {
                    lane,
                    bin,
                    outcome: outcome.into(),
                    fault,
                    n,
                });
                total += n;
            }
        }
    }
    let q = RequestLanes {
        lanes: (0..4).map(|i| lane(&format!("p{i}"), "m1", 0, 0)).collect(),
        total,
        bins: Some(RequestBins {
            width_ms: 2_000,
            counts,
        }),
        turns: Some(TurnLane {
            total: 3_000,
            spans: Vec::new(),
            bins: Some(RequestBins {
                width_ms: 2_000,
                counts: (0..150)
                    .map(|bin| BinCount {
                        lane: 0,
                        bin,
                        outcome: "answered".into(),
                        fault: None,
                        n: 20,
                    })
                    .collect(),
            }),
        }),
        ..RequestLanes::default()
    };
    let mut r = sample_report();
    r.duration_ms = 300_000;
    r.policies[0].requests = Some(q);
    let html = rehearse::report::html::render(&r);
    let svg = first_svg(&html);
    assert!(svg.len() < 700_000, "the timeline is {} bytes", svg.len());
    assert_eq!(
        svg.matches(r#"<g class="bin">"#).count(),
        600,
        "one bar per lane and bin"
    );
    assert_eq!(svg.matches(r#"class="turn-bin""#).count(), 150);
    assert!(
        svg.contains("binned: too many to draw one by one"),
        "the picture says so"
    );
    assert!(svg.contains(&format!("{total} requests at the upstream")));
    assert_eq!(svg.matches(r#"<rect class="request""#).count(), 0);
}
