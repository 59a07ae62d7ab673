//! Per-turn rows and the routing read from them, on hand-made records.

use super::*;

fn names() -> Names {
    let fp = |s: &str| (format!("fp-{s}"), format!("mockai:{s}"));
    Names {
        profile_of_fp: [fp("a"), fp("b"), ("fp-c".into(), "backup:c".into())].into(),
        provider_of_fp: [
            ("fp-a".to_string(), "mockai".to_string()),
            ("fp-b".into(), "mockai".into()),
            ("fp-c".into(), "backup".into()),
        ]
        .into(),
    }
}

/// A model request at `t` for `turn` on key `key` naming `model`, faulted by `fault`.
fn rec(t: u64, turn: Option<u64>, key: &str, model: &str, fault: Option<&str>) -> UpstreamRecord {
    let mut r = UpstreamRecord::llm_for_test(
        t,
        0,
        format!("{model}/default/fp-{key}"),
        Some(model),
        Some(&format!("fp-{key}")),
        fault,
    );
    r.turn = turn;
    // Served at once (a test of when the upstream finished sets it apart).
    r.done_ms = Some(t);
    r
}

#[test]
fn each_turn_lists_its_requests_the_answer_retries_and_time_to_answer() {
    let mut warm = rec(0, Some(1), "a", "m1", None);
    warm.warmup = true;
    let mut canary = rec(5, None, "a", "m1", None);
    canary.canary = true;
    let records = vec![
        warm,
        canary,
        // Turn 3: key-A three times (two 503s, a retry each), then key-B answers.
        rec(1_000, Some(3), "a", "m1", Some("status")),
        // Turn 4 interleaves: one request, answered through a slow answer.
        rec(1_005, Some(4), "b", "m1", Some("latency")),
        rec(1_010, Some(3), "a", "m1", Some("status")),
        rec(1_020, Some(3), "a", "m1", Some("status")),
        rec(1_035, Some(3), "b", "m1", None),
        // A gateway's own call: no turn.
        rec(1_500, None, "b", "m1", None),
        // Turn 5: never answered.
        rec(2_000, Some(5), "a", "m1", Some("reset")),
    ];
    let part = rows(&records, &names(), Speed::ONE);
    assert_eq!((part.marked_requests, part.unmarked_requests), (6, 1));
    assert!(part.readable());
    let turns: Vec<u64> = part.rows.iter().map(|r| r.turn).collect();
    assert_eq!(turns, [3, 4, 5]);
    let t3 = &part.rows[0];
    let profiles: Vec<&str> = t3.requests.iter().filter_map(|q| q.profile.as_deref()).collect();
    assert_eq!(profiles, ["mockai:a", "mockai:a", "mockai:a", "mockai:b"]);
    assert_eq!(t3.answered_by, Some(3));
    assert_eq!(t3.answer().and_then(|q| q.profile.as_deref()), Some("mockai:b"));
    assert_eq!(t3.same_profile_retries, 2);
    assert_eq!(t3.answer_ms, Some(35));
    assert!(t3.eventful());
    let t4 = &part.rows[1];
    assert_eq!((t4.answered_by, t4.answer_ms, t4.eventful()), (Some(0), Some(0), false));
    let t5 = &part.rows[2];
    assert_eq!((t5.answered_by, t5.answer_ms, t5.eventful()), (None, None, true));
    // Scenario time at another speed.
    let fast = rows(&records, &names(), Speed::new(2.0).unwrap());
    assert_eq!(fast.rows[0].answer_ms, Some(70));
}

#[test]
fn a_turn_is_answered_when_the_upstream_finished_serving_its_whole_answer() {
    // Turn 1: key-A's first token is 20 s late and the client goes away at 10 s (not whole);
    // key-B answers, its stream over 300 ms after it arrived.
    let mut late = rec(1_000, Some(1), "a", "m1", Some("first_token_delay"));
    late.done_ms = Some(11_000);
    late.whole = Some(false);
    let mut b = rec(11_010, Some(1), "b", "m1", None);
    b.done_ms = Some(11_310);
    b.whole = Some(true);
    // Turn 2: a stall that resumed after 30 s and completed: answered, 30.4 s after.
    let mut resumed = rec(3_000, Some(2), "a", "m1", Some("stall_stream"));
    resumed.done_ms = Some(33_400);
    resumed.whole = Some(true);
    // Turn 3: a recording made before `done_ms`: answered by its fault, end unknown.
    let old = rec(5_000, Some(3), "b", "m1", Some("latency"));
    let old = UpstreamRecord { done_ms: None, ..old };
    let part = rows(&[late, b, resumed, old], &names(), Speed::ONE);
    let [t1, t2, t3] = &part.rows[..] else { panic!("{:?}", part.rows) };
    assert_eq!((t1.answered_by, t1.answer_ms), (Some(1), Some(10_310)));
    assert_eq!((t1.requests[0].done_ms, t1.requests[0].whole), (Some(11_000), Some(false)));
    assert_eq!((t2.answered_by, t2.answer_ms), (Some(0), Some(30_400)));
    assert!(!t2.answer_end_unknown());
    assert_eq!((t3.answered_by, t3.answer_ms), (Some(0), None));
    assert!(t3.answer_end_unknown());
    // The ends in scenario time at another speed.
    let fast = rows(
        &[{
            let mut r = rec(1_000, Some(1), "a", "m1", None);
            r.done_ms = Some(6_000);
            r.whole = Some(true);
            r
        }],
        &names(),
        Speed::new(4.0).unwrap(),
    );
    assert_eq!(fast.rows[0].answer_ms, Some(20_000));
}

#[test]
fn the_same_turn_number_from_two_fleet_hosts_is_two_turns() {
    let mut a = rec(100, Some(0), "a", "m1", None);
    a.host = Some("h0".into());
    let mut b = rec(110, Some(0), "b", "m1", None);
    b.host = Some("h1".into());
    let part = rows(&[a, b], &names(), Speed::ONE);
    assert_eq!(part.rows.len(), 2);
    assert_eq!(part.rows[1].host.as_deref(), Some("h1"));
}

#[test]
fn a_record_without_any_marker_is_unreadable_not_a_turn_each() {
    let records = [
        rec(1_000, None, "a", "m1", Some("status")),
        rec(1_010, None, "b", "m1", None),
    ];
    let part = rows(&records, &names(), Speed::ONE);
    assert!(!part.readable());
    assert!(part.rows.is_empty());
    assert_eq!(part.unmarked_requests, 2);
    assert!(part.unreadable.as_deref().unwrap_or("").contains("2 requests"));
    // Nothing sent at all is readable: there was nothing to tell apart.
    assert!(rows(&[], &names(), Speed::ONE).readable());
}

#[test]
fn a_fallback_to_another_model_on_another_key_is_one_fallback_not_also_a_rotation() {
    let records = [
        // Turn 1: key-A fails, key-B (same model): a rotation.
        rec(1_000, Some(1), "a", "m1", Some("status")),
        rec(1_010, Some(1), "b", "m1", None),
        // Turn 2: key-A fails, then m2 on key-C of another provider: one fallback.
        rec(2_000, Some(2), "a", "m1", Some("status")),
        rec(2_020, Some(2), "c", "m2", None),
        // Turn 3 interleaves with turn 4: in the one arrival order, m1/A → m1/B → m1/A → m1/B
        // would read as three rotations; per turn there are none.
        rec(3_000, Some(3), "a", "m1", None),
        rec(3_001, Some(4), "b", "m1", None),
        rec(3_002, Some(3), "a", "m1", None),
        rec(3_003, Some(4), "b", "m1", None),
    ];
    let part = rows(&records, &names(), Speed::ONE);
    let c = changes(&part.rows);
    assert_eq!(c.rotations.len(), 1, "{:?}", c.rotations);
    assert_eq!(c.fallbacks.len(), 1, "{:?}", c.fallbacks);
    let f = &c.fallbacks[0];
    assert_eq!((f.turn, f.t_ms), (2, 2_020));
    assert_eq!(f.provider.as_deref(), Some("mockai"));
    assert_eq!(f.from_model.as_deref(), Some("mockai/m1"));
    assert_eq!(f.to_model.as_deref(), Some("backup/m2"));
    let r = &c.rotations[0];
    assert_eq!((r.from_profile.as_deref(), r.to_profile.as_deref()), (Some("mockai:a"), Some("mockai:b")));
    // The same model name on another provider's key is a fallback (another model), not a
    // rotation.
    let other = [
        rec(1_000, Some(1), "a", "m1", Some("status")),
        rec(1_010, Some(1), "c", "m1", None),
    ];
    let c = changes(&rows(&other, &names(), Speed::ONE).rows);
    assert_eq!((c.rotations.len(), c.fallbacks.len()), (0, 1));
}

#[test]
fn a_profile_cooled_is_one_that_failed_then_sat_out_turns_that_went_elsewhere() {
    // Turns every second: key-A fails at turn 0 (key-B answers), turns 1-5 go to key-B only,
    // key-A comes back at turn 6.
    let mut records = vec![
        rec(0, Some(0), "a", "m1", Some("status")),
        rec(10, Some(0), "b", "m1", None),
    ];
    for t in 1..=5 {
        records.push(rec(t * 1_000, Some(t), "b", "m1", None));
    }
    records.push(rec(6_000, Some(6), "a", "m1", None));
    let c = changes(&rows(&records, &names(), Speed::ONE).rows);
    assert_eq!(
        c.cooldowns,
        [Cooldown {
            profile: "mockai:a".into(),
            provider: Some("mockai".into()),
            from_ms: 0,
            until_ms: Some(6_000),
            turns_elsewhere: 5,
            last_elsewhere_ms: Some(5_000),
            retry_after_ms: None,
        }]
    );
    // A round robin over A and B that fails A once and comes back to it one turn later is no
    // cooldown: one turn elsewhere, the bar is two (two profiles).
    let rr = [
        rec(0, Some(0), "a", "m1", Some("status")),
        rec(10, Some(0), "b", "m1", None),
        rec(1_000, Some(1), "b", "m1", None),
        rec(2_000, Some(2), "a", "m1", None),
        rec(3_000, Some(3), "b", "m1", None),
    ];
    assert!(changes(&rows(&rr, &names(), Speed::ONE).rows).cooldowns.is_empty());
    // Failed and never asked again, while turns went on elsewhere: cooled to the record's end.
    let gone = [
        rec(0, Some(0), "a", "m1", Some("status")),
        rec(1_000, Some(1), "b", "m1", None),
        rec(2_000, Some(2), "b", "m1", None),
    ];
    let c = changes(&rows(&gone, &names(), Speed::ONE).rows);
    assert_eq!(c.cooldowns.len(), 1);
    assert_eq!((c.cooldowns[0].until_ms, c.cooldowns[0].turns_elsewhere), (None, 2));
    // The retries of one turn are not a cooldown: only the quiet after the last failure counts.
    let retried = [
        rec(0, Some(0), "a", "m1", Some("status")),
        rec(20, Some(0), "a", "m1", Some("status")),
        rec(40, Some(0), "a", "m1", None),
    ];
    assert!(changes(&rows(&retried, &names(), Speed::ONE).rows).cooldowns.is_empty());
}

#[test]
fn rows_written_to_report_json_leave_defaults_out_and_read_back() {
    let records = [
        rec(1_000, Some(3), "a", "m1", Some("status")),
        rec(1_010, Some(3), "b", "m1", None),
    ];
    let part = rows(&records, &names(), Speed::ONE);
    let text = serde_json::to_string(&part).unwrap();
    assert!(!text.contains("\"route\""), "{text}");
    assert!(!text.contains("\"probe\""), "{text}");
    let back: TurnsPart = serde_json::from_str(&text).unwrap();
    assert_eq!(back.rows[0].requests[1].profile.as_deref(), Some("mockai:b"));
    assert_eq!(back.rows[0].answered_by, Some(1));
}
