//! `[[expect.turn]]`: outcomes, counts, latency bounds, answers and the checks of the table.

use super::*;

fn turn(outcome: TurnEnd, elapsed_ms: u64) -> TurnSeen {
    TurnSeen {
        outcome: Some(outcome),
        sent_ms: 0,
        elapsed_ms,
        unrecorded: false,
    }
}

fn turns() -> Vec<TurnSeen> {
    vec![
        turn(TurnEnd::Answered, 800),
        turn(TurnEnd::Answered, 1_200),
        turn(TurnEnd::ErrorEvent, 40_000),
    ]
}

#[test]
fn counts_per_outcome_pass_and_fail() {
    let answered = ExpectTurn {
        outcome: Some("answered".into()),
        at_least: Some(2),
        ..Default::default()
    };
    let got = evaluate(std::slice::from_ref(&answered), &turns(), false, &FaultsSeen::none());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].status, ExpectStatus::Pass, "{}", got[0].detail);
    assert_eq!(got[0].observed, "2 of 3 turns");
    let none_failed = ExpectTurn {
        outcome: Some("error_event".into()),
        equals: Some(0),
        ..Default::default()
    };
    let got = evaluate(&[none_failed], &turns(), false, &FaultsSeen::none());
    assert_eq!(got[0].status, ExpectStatus::Fail);
    assert!(
        got[0]
            .detail
            .contains("turns error_event = 0: observed 1 of 3"),
        "{}",
        got[0].detail
    );
    let all = ExpectTurn {
        equals: Some(3),
        ..Default::default()
    };
    assert_eq!(
        evaluate(&[all], &turns(), false, &FaultsSeen::none())[0].status,
        ExpectStatus::Pass
    );
}

#[test]
fn latency_bounds_every_turn_of_the_outcome_and_none_to_time_fails() {
    let quick = ExpectTurn {
        outcome: Some("answered".into()),
        latency_at_most: Some(Duration::from_secs(2)),
        ..Default::default()
    };
    assert_eq!(
        evaluate(std::slice::from_ref(&quick), &turns(), false, &FaultsSeen::none())[0].status,
        ExpectStatus::Pass
    );
    let every = ExpectTurn {
        outcome: None,
        ..quick.clone()
    };
    let got = evaluate(&[every], &turns(), false, &FaultsSeen::none());
    assert_eq!(got[0].status, ExpectStatus::Fail);
    assert!(got[0].observed.contains("40.000s"), "{}", got[0].observed);
    let timed_out = ExpectTurn {
        outcome: Some("timed_out".into()),
        ..quick
    };
    let got = evaluate(&[timed_out], &turns(), false, &FaultsSeen::none());
    assert_eq!(
        got[0].status,
        ExpectStatus::Fail,
        "no turn to time is no pass"
    );
    assert_eq!(got[0].observed, "no such turn to time");
}

/// Every turn cut at a 3 s `turn_timeout`, none answered: "observed 4 turns,
/// 3.000s..3.001s" used to pass `latency_at_most = 10s`. A cut turn has no latency.
#[test]
fn turns_cut_at_the_timeout_fail_any_latency_bound_over_them() {
    let cut: Vec<TurnSeen> = [3_000, 3_001, 3_000, 3_001]
        .map(|ms| turn(TurnEnd::TimedOut, ms))
        .to_vec();
    let slow_ok = ExpectTurn {
        latency_at_most: Some(Duration::from_secs(10)),
        ..Default::default()
    };
    let got = evaluate(std::slice::from_ref(&slow_ok), &cut, false, &FaultsSeen::none());
    assert_eq!(got[0].status, ExpectStatus::Fail, "{}", got[0].detail);
    assert!(
        got[0].observed.contains("4 cut at the turn timeout (no latency)"),
        "{}",
        got[0].observed
    );
    assert_eq!(got[0].witness.get("turns_cut"), 4);
    assert_eq!(got[0].witness.get("turns_timed"), 0);
    // One cut among answered turns fails the bound too; without it the bound holds.
    let mut mixed = turns();
    mixed.retain(|t| t.outcome == Some(TurnEnd::Answered));
    assert_eq!(
        evaluate(std::slice::from_ref(&slow_ok), &mixed, false, &FaultsSeen::none())[0].status,
        ExpectStatus::Pass
    );
    mixed.push(turn(TurnEnd::TimedOut, 3_000));
    assert_eq!(
        evaluate(&[slow_ok], &mixed, false, &FaultsSeen::none())[0].status,
        ExpectStatus::Fail
    );
}

/// A count of truncated turns over answers with no row in the upstream's record (the
/// marker stripped) is no pass: whether they were cut is not known.
#[test]
fn no_truncated_count_holds_over_unrecorded_answers() {
    let none = ExpectTurn {
        outcome: Some("truncated".into()),
        equals: Some(0),
        ..Default::default()
    };
    let mut seen = turns();
    assert_eq!(
        evaluate(std::slice::from_ref(&none), &seen, false, &FaultsSeen::none())[0].status,
        ExpectStatus::Pass
    );
    seen[0].unrecorded = true;
    let got = evaluate(std::slice::from_ref(&none), &seen, false, &FaultsSeen::none());
    assert_eq!(got[0].status, ExpectStatus::Fail, "{}", got[0].detail);
    assert!(got[0].observed.contains("truncation not known"), "{}", got[0].observed);
    assert_eq!(got[0].witness.get("turns_unrecorded"), 1);
    seen[0].outcome = Some(TurnEnd::Truncated);
    seen[0].unrecorded = false;
    assert_eq!(evaluate(&[none], &seen, false, &FaultsSeen::none())[0].status, ExpectStatus::Fail);
}

#[test]
fn a_stopped_run_leaves_unsettled_bounds_not_reached() {
    let at_least = ExpectTurn {
        outcome: Some("answered".into()),
        at_least: Some(3),
        ..Default::default()
    };
    let at_most = ExpectTurn {
        outcome: Some("answered".into()),
        at_most: Some(1),
        ..Default::default()
    };
    let got = evaluate(&[at_least, at_most], &turns(), true, &FaultsSeen::none());
    assert_eq!(got[0].status, ExpectStatus::NotReached);
    assert_eq!(got[1].status, ExpectStatus::Fail, "already above its bound");
}

#[test]
fn the_table_is_checked() {
    let ok = |t: ExpectTurn| check(&t, &|_| true);
    let (k, msg) = ok(ExpectTurn {
        outcome: Some("answerd".into()),
        at_least: Some(1),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(k, "outcome");
    assert!(msg.contains("did you mean `answered`?"), "{msg}");
    assert_eq!(ok(ExpectTurn::default()).unwrap_err().0, "");
    let e = ok(ExpectTurn {
        equals: Some(1),
        at_most: Some(2),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(e.0, "equals");
    let e = ok(ExpectTurn {
        latency_at_least: Some(Duration::from_secs(5)),
        latency_at_most: Some(Duration::from_secs(1)),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(e.0, "latency_at_most");
    assert!(
        ok(ExpectTurn {
            outcome: Some("timed_out".into()),
            equals: Some(0),
            ..Default::default()
        })
        .is_ok()
    );
    let other = ExpectTurn {
        policy: Some("legacy".into()),
        equals: Some(1),
        ..Default::default()
    };
    assert_eq!(check(&other, &|p| p.is_none()).unwrap_err().0, "policy");
    assert!(toml::from_str::<ExpectTurn>("outcome = \"answered\"\ncount = 1").is_err());
}
