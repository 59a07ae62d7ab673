//! The request lanes built from recorded sequences: lanes per profile and model, rotations and
//! fallbacks read right (and as the key figures count them), the warm-up apart, decisions on
//! the lanes they name, and a weekly-size run bounded.

use super::tape::RequestTape;
use super::*;
use crate::gateway::openclaw::log::profile_hash;
use crate::gateway::openclaw::{Decision, LoggedDecision};
use crate::report::target::TurnRow;
use crate::util::speed::Speed;
use crate::upstream::{RequestRoute, UpstreamRecord};
use crate::util::fingerprint;

/// The run clock starts at this Unix ms; the warm-up 20 s before.
const CLOCK: u64 = 1_800_000_000_000;

fn rec(t_ms: u64, token: &str, _provider: &str, model: &str, fault: Option<&str>) -> UpstreamRecord {
    let fp = fingerprint(token);
    // A gateway's model calls name the model in the dep (an engine's the provider).
    let dep = format!("{model}/default/{fp}");
    let mut r =
        UpstreamRecord::llm_for_test(t_ms, CLOCK + t_ms, dep, Some(model), Some(&fp), fault);
    r.fault_index = fault.map(|_| 0);
    r
}

/// `rec` sent for turn `turn`.
fn rec_t(turn: u64, t_ms: u64, token: &str, model: &str, fault: Option<&str>) -> UpstreamRecord {
    let mut r = rec(t_ms, token, "", model, fault);
    r.turn = Some(turn);
    r
}

fn warm(t_ms: u64, token: &str) -> UpstreamRecord {
    let mut r = rec(t_ms, token, "mockai", "m1", None);
    r.warmup = true;
    r.wall_ms = CLOCK - 20_000 + t_ms;
    r
}

fn profiles() -> Vec<LaneProfile> {
    [("key-A", "mockai:a"), ("key-B", "mockai:b"), ("key-F", "fallback:f")]
        .iter()
        .map(|(t, id)| LaneProfile {
            fp: fingerprint(t),
            id: id.to_string(),
            provider: id.split(':').next().unwrap_or_default().to_string(),
        })
        .collect()
}

/// The 503-on-key-A shape, then key-B failing over to the fallback model: warm-up on key-A,
/// key-A 503 four times, key-B ok, key-B 503, the fallback model ok.
fn recorded() -> RequestTape {
    let mut tape = RequestTape::new();
    for t in [0, 3_000, 6_000] {
        tape.push(&warm(t, "key-A"));
    }
    // Turn 0: key-A four times, then key-B answers; turn 1: key-B, then the fallback model.
    for t in [100, 5_100, 10_100, 15_100] {
        tape.push(&rec_t(0, t, "key-A", "m1", Some("status")));
    }
    tape.push(&rec_t(0, 40_000, "key-B", "m1", None));
    tape.push(&rec_t(1, 50_000, "key-B", "m1", Some("status")));
    tape.push(&rec_t(1, 51_000, "key-F", "m2", None));
    tape
}

fn built(tape: &RequestTape, turns: Option<&[TurnRow]>, decisions: &[LoggedDecision]) -> RequestLanes {
    build(&LaneInput {
        tape,
        speed: Speed::ONE,
        profiles: &profiles(),
        turns,
        decisions,
    })
}

#[test]
fn a_recorded_sequence_gives_a_lane_per_profile_and_model_with_every_request() {
    let q = built(&recorded(), None, &[]);
    let names: Vec<(&str, Option<&str>, u64, u64)> = q
        .lanes
        .iter()
        .map(|l| (l.name.as_str(), l.model.as_deref(), l.requests, l.faulted))
        .collect();
    assert_eq!(
        names,
        [
            ("mockai:a", Some("m1"), 4, 4),
            ("mockai:b", Some("m1"), 2, 1),
            ("fallback:f", Some("m2"), 1, 0)
        ]
    );
    assert_eq!(q.total, 7, "the warm-up's requests are not the run's");
    assert_eq!(q.requests.len(), 7, "every request drawn");
    assert!(q.bins.is_none());
    let lanes: Vec<usize> = q.requests.iter().map(|r| r.lane).collect();
    assert_eq!(lanes, [0, 0, 0, 0, 1, 1, 2]);
    assert_eq!(q.requests[0].outcome, "status");
    assert_eq!(q.requests[0].fault, Some(0));
    assert_eq!(q.requests[4].outcome, "ok");
}

#[test]
fn rotations_and_fallbacks_are_read_per_turn_by_the_key_figures_rule() {
    let q = built(&recorded(), None, &[]);
    assert!(!q.moves_unread);
    assert_eq!(q.rotations_total, 1);
    assert_eq!(
        q.rotations,
        [SequenceMark {
            from_ms: 15_100,
            from_lane: 0,
            to_ms: 40_000,
            to_lane: 1
        }]
    );
    // key-B to the fallback model on key-F: another model on another key is one fallback,
    // not also a rotation (as `verdict::turns::changes` counts it for the key figures).
    assert_eq!(q.fallbacks_total, 1);
    assert_eq!(
        q.fallbacks,
        [SequenceMark {
            from_ms: 50_000,
            from_lane: 1,
            to_ms: 51_000,
            to_lane: 2
        }]
    );
}

#[test]
fn concurrent_turns_are_never_mixed_into_a_move() {
    // Two turns interleave: turn 1 on key-A (503 then key-A again), turn 2 on key-B. In the one
    // arrival order key-A → key-B → key-A looks like two rotations; per turn there is none.
    let mut tape = RequestTape::new();
    tape.push(&rec_t(1, 0, "key-A", "m1", Some("status")));
    tape.push(&rec_t(2, 5, "key-B", "m1", None));
    tape.push(&rec_t(1, 10, "key-A", "m1", None));
    // Turn 3's fallback after turn 4's request on key-B: one fallback, from turn 3's own request.
    tape.push(&rec_t(3, 20, "key-A", "m1", Some("status")));
    tape.push(&rec_t(4, 25, "key-B", "m1", None));
    tape.push(&rec_t(3, 30, "key-F", "m2", None));
    let q = built(&tape, None, &[]);
    assert_eq!((q.rotations_total, q.fallbacks_total), (0, 1));
    assert_eq!((q.fallbacks[0].from_ms, q.fallbacks[0].to_ms), (20, 30));
    // The same requests for one fleet host each: two hosts' turn 1 are two turns.
    let mut tape = RequestTape::new();
    for (host, t, key) in [("h1", 0, "key-A"), ("h2", 5, "key-B"), ("h1", 10, "key-A")] {
        let mut r = rec_t(1, t, key, "m1", None);
        r.host = Some(host.into());
        tape.push(&r);
    }
    assert_eq!(built(&tape, None, &[]).rotations_total, 0);
}

#[test]
fn requests_without_their_turn_leave_the_moves_unknown_never_zero() {
    // A gateway that strips the marker (or a recording made before turns): key-A then key-B,
    // which the old one-sequence reading called a rotation; now unknown, and said so.
    let mut tape = RequestTape::new();
    tape.push(&rec(0, "key-A", "mockai", "m1", Some("status")));
    tape.push(&rec(10, "key-B", "mockai", "m1", None));
    let q = built(&tape, None, &[]);
    assert!(q.moves_unread);
    assert_eq!((q.rotations_total, q.fallbacks_total), (0, 0));
    assert!(q.rotations.is_empty() && q.fallbacks.is_empty());
    assert!(
        crate::report::request_summary::line(&q).contains("rotations and fallbacks unknown"),
        "{}",
        crate::report::request_summary::line(&q)
    );
    // No model request at all: nothing unknown.
    assert!(!built(&RequestTape::new(), None, &[]).moves_unread);
}

#[test]
fn a_probe_or_canary_never_counts_as_a_move() {
    let mut tape = RequestTape::new();
    tape.push(&rec_t(0, 0, "key-A", "m1", Some("status")));
    let mut probe = rec_t(0, 10, "key-B", "m1", Some("status"));
    probe.probe = true;
    tape.push(&probe);
    tape.push(&rec_t(0, 40, "key-A", "m1", None));
    let q = built(&tape, None, &[]);
    assert_eq!((q.rotations_total, q.fallbacks_total), (0, 0));
    assert!(q.requests.iter().any(|r| r.probe), "the probe is drawn, marked");
}

#[test]
fn the_warm_up_is_apart_on_its_own_clock() {
    let q = built(&recorded(), None, &[]);
    let w = q.warmup.expect("a warm-up band");
    assert_eq!(w.total, 3);
    assert_eq!(w.before_clock_ms, 20_000, "from the warm-up's start to the clock's");
    let t: Vec<u64> = w.requests.iter().map(|r| r.t_ms).collect();
    assert_eq!(t, [0, 3_000, 6_000]);
    assert!(w.requests.iter().all(|r| r.lane == "mockai:a" && r.outcome == "ok"));
    assert!(
        q.requests.iter().all(|r| r.t_ms >= 100),
        "no warm-up request on the run's lanes"
    );
    // A run with no warm-up has no band.
    let mut tape = RequestTape::new();
    tape.push(&rec(0, "key-A", "mockai", "m1", None));
    assert!(built(&tape, None, &[]).warmup.is_none());
}

#[test]
fn a_profile_no_request_used_still_has_its_lane_and_unknown_tokens_theirs() {
    let mut tape = RequestTape::new();
    tape.push(&rec(0, "key-A", "mockai", "m1", Some("status")));
    tape.push(&rec(10, "someone-else", "mockai", "m1", None));
    let q = built(&tape, None, &[]);
    let names: Vec<&str> = q.lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names[..3], ["mockai:a", "mockai:b", "fallback:f"]);
    assert_eq!(q.lanes[1].requests, 0);
    assert!(names[3].starts_with("m1/default/"), "{names:?}");
    assert!(!names.concat().contains("someone-else"), "no token in the picture");
}

fn decision(t_ms: u64, d: Decision) -> LoggedDecision {
    LoggedDecision {
        wall_ms: CLOCK + t_ms,
        decision: d,
    }
}

#[test]
fn the_gateways_decisions_land_on_the_lanes_they_name() {
    let ds = [
        decision(
            5_000,
            Decision::SameModelRetry {
                attempt: 1,
                of: 8,
                target: "mockai/m1".into(),
                reason: Some("server_error".into()),
                delay_ms: 5_000,
            },
        ),
        decision(
            39_000,
            Decision::Failover {
                decision: "rotate_profile".into(),
                reason: Some("server_error".into()),
                retry_count: Some(4),
                profile_hash: Some(profile_hash("mockai:a")),
                provider: Some("mockai".into()),
                model: Some("m1".into()),
            },
        ),
        decision(
            39_500,
            Decision::ProfileFailureState {
                profile_hash: Some(profile_hash("mockai:a")),
                reason: Some("rate_limit".into()),
                cooldown_until_ms: Some(CLOCK + 69_500),
            },
        ),
        decision(
            50_500,
            Decision::ModelFallback {
                decision: "candidate_succeeded".into(),
                candidate: Some("fallback/m2".into()),
                reason: None,
            },
        ),
        decision(60_000, Decision::FallbackChainStopped { reason: None }),
    ];
    let q = built(&recorded(), None, &ds);
    let placed: Vec<(&str, u64, Option<usize>)> = q
        .decisions
        .iter()
        .map(|d| (d.event.as_str(), d.t_ms, d.lane))
        .collect();
    assert_eq!(
        placed,
        [
            ("same_model_retry", 5_000, Some(0)),
            ("rotate_profile", 39_000, Some(0)),
            ("profile_failure_state", 39_500, Some(0)),
            ("candidate_succeeded", 50_500, Some(2)),
            ("chain_stopped", 60_000, None),
        ]
    );
    assert_eq!(q.decisions[2].until_ms, Some(69_500), "the cooldown's end on the run's clock");
    assert!(q.decisions[0].detail.contains("1/8"), "{}", q.decisions[0].detail);
}

#[test]
fn turns_are_spans_from_due_to_answer() {
    let rows = [TurnRow {
        line: 0,
        session: "s".into(),
        at_ms: 0,
        lag_ms: 30,
        stream: false,
        status: Some(200),
        ok: true,
        finish_reason: Some("stop".into()),
        error: None,
        outcome: Some(crate::gateway::TurnEnd::Answered),
        elapsed_ms: 40_500,
        answer: None,
        said: None,
        ..TurnRow::default()
    }];
    let q = built(&recorded(), Some(&rows), &[]);
    let t = q.turns.expect("a turns lane");
    assert_eq!(t.total, 1);
    assert_eq!(
        t.spans,
        [TurnSpan {
            line: 0,
            due_ms: 0,
            end_ms: 40_530,
            outcome: "answered".into(),
            ok: true
        }]
    );
    assert!(built(&recorded(), None, &[]).turns.is_none(), "an engine has no turns");
}

#[test]
fn a_weekly_size_run_is_binned_and_bounded() {
    // 10 turns a second for 300 s, each one to three model calls over two profiles, a tool
    // call besides: about 9,000 requests.
    let mut tape = RequestTape::new();
    let mut n = 0u64;
    for i in 0..3_000u64 {
        let t = i * 100;
        let faulted = (100_000..160_000).contains(&t);
        tape.push(&rec_t(i, t, "key-A", "m1", faulted.then_some("status")));
        if faulted {
            tape.push(&rec_t(i, t + 20, "key-B", "m1", None));
            n += 1;
        }
        let mut tool = rec(t + 5, "key-A", "mockai", "m1", None);
        tool.route = RequestRoute::Tool("crm_search".into());
        tool.dep = "crm_search".into();
        tool.model = None;
        tape.push(&tool);
        n += 2;
    }
    let rows: Vec<TurnRow> = (0..3_000)
        .map(|i| TurnRow {
            line: i,
            at_ms: i as u64 * 100,
            ok: i % 7 != 0,
            elapsed_ms: 800,
            ..TurnRow::default()
        })
        .collect();
    let q = built(&tape, Some(&rows), &[]);
    assert_eq!(q.total, n);
    assert!(q.requests.is_empty(), "too many to draw one by one");
    let bins = q.bins.as_ref().expect("binned");
    assert_eq!(bins.width_ms, 2_000, "a round width, at most {MAX_BINS} bins");
    let counted: u64 = bins.counts.iter().map(|c| c.n).sum();
    assert_eq!(counted, n, "every request counted in a bin");
    let per_lane_bins = bins.counts.iter().map(|c| c.bin).max().unwrap_or(0) + 1;
    assert!(per_lane_bins <= MAX_BINS, "{per_lane_bins}");
    assert_eq!(q.rotations_total, 600, "one rotation per faulted request");
    assert_eq!(q.rotations.len(), MAX_ARROWS, "arrows capped, the total exact");
    let turns = q.turns.as_ref().expect("turns");
    assert!(turns.spans.is_empty() && turns.bins.is_some(), "turns binned too");
    let json = serde_json::to_string(&q).unwrap_or_default();
    assert!(json.len() < 80_000, "report.json part of {} bytes", json.len());
}

#[test]
fn lanes_past_the_cap_share_one_and_the_tape_says_what_it_did_not_keep() {
    let mut tape = RequestTape::new().with_cap(30);
    for i in 0..40u64 {
        let mut r = rec(i, "key-A", "mockai", "m1", None);
        r.route = RequestRoute::Tool(format!("tool{i:02}"));
        r.dep = format!("tool{i:02}");
        tape.push(&r);
    }
    let q = built(&tape, None, &[]);
    assert_eq!(q.lanes.len(), MAX_LANES);
    assert_eq!(q.lanes[MAX_LANES - 1].name, "other (18 lanes)");
    assert_eq!(q.total, 40);
    assert_eq!((q.not_kept, q.not_kept_from_ms), (10, Some(30)));
    assert!(q.requests.iter().all(|r| r.lane < MAX_LANES));
}

#[test]
fn bin_widths_are_round() {
    assert_eq!(crate::report::requests::build::bin_width(1), 1);
    assert_eq!(crate::report::requests::build::bin_width(20_000), 100);
    assert_eq!(crate::report::requests::build::bin_width(300_000), 2_000);
    assert_eq!(crate::report::requests::build::bin_width(3_600_000), 20_000);
}
