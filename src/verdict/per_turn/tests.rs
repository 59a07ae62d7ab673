//! `[[expect.per_turn]]` on hand-made turns: every turn or a count of them, windows, the
//! stripped marker, and the mutants that must fail.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::upstream::RequestRoute;
use crate::verdict::ExpectStatus;
use crate::verdict::anchor::FaultsSeen;
use crate::verdict::turns::{TurnRequest, TurnsPart, row};

fn q(t_ms: u64, profile: &str, model: &str, fault: Option<&str>) -> TurnRequest {
    TurnRequest {
        t_ms,
        route: RequestRoute::Llm,
        profile: Some(profile.into()),
        provider: Some("openai".into()),
        model: Some(model.into()),
        fault: fault.map(str::to_string),
        probe: false,
        retry_after_ms: None,
        tokens: None,
        usage: None,
        // Served at once: a test of when the upstream finished sets it apart.
        done_ms: Some(t_ms),
        whole: None,
    }
}

/// A double outage: turns 0 and 1 cost 7 requests (key-a ×3, key-b ×3, key-c), then both
/// gpt-4o keys are cooled and turns 2..6 go to key-c's gpt-4o-mini at once.
fn part() -> TurnsPart {
    let mut rows = Vec::new();
    for (turn, t) in [(0u64, 300u64), (1, 900)] {
        let mut qs = Vec::new();
        for (i, k) in ["key-a", "key-a", "key-a", "key-b", "key-b", "key-b"].iter().enumerate() {
            qs.push(q(t + i as u64 * 5, k, "gpt-4o", Some("status")));
        }
        qs.push(q(t + 40, "key-c", "gpt-4o-mini", None));
        rows.push(row(turn, None, qs));
    }
    for turn in 2..7u64 {
        rows.push(row(turn, None, vec![q(turn * 600 + 300, "key-c", "gpt-4o-mini", None)]));
    }
    TurnsPart {
        marked_requests: 19,
        unmarked_requests: 2,
        rows,
        ..TurnsPart::default()
    }
}

fn judge_on(e: &ExpectPerTurn, p: &TurnsPart) -> ExpectationResult {
    let applied = BTreeMap::new();
    let f = TurnFacts {
        part: p,
        faults: FaultsSeen {
            faults: &[],
            applied: &applied,
        },
        stopped_at_ms: None,
    };
    judge(e, &f)
}

#[test]
fn requests_per_turn_bound_retry_amplification_on_every_turn() {
    let p = part();
    let e = ExpectPerTurn {
        requests_at_most: Some(7),
        same_profile_retries_at_most: Some(4),
        ..Default::default()
    };
    let r = judge_on(&e, &p);
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert_eq!(r.witness.get("turns_judged"), 7);
    assert_eq!(r.witness.get("most_requests"), 7);
    assert_eq!(r.witness.get("unmarked_requests"), 2);
    // Mutant: a bound below the observed most fails, naming the turn.
    let six = ExpectPerTurn {
        requests_at_most: Some(6),
        ..Default::default()
    };
    let r = judge_on(&six, &p);
    assert_eq!(r.status, ExpectStatus::Fail);
    assert!(r.detail.contains("turn 0 at 0.300s: 7 requests"), "{}", r.detail);
    let retries = ExpectPerTurn {
        same_profile_retries_at_most: Some(3),
        ..Default::default()
    };
    assert_eq!(judge_on(&retries, &p).status, ExpectStatus::Fail);
}

#[test]
fn who_answered_is_counted_over_turns_in_a_window() {
    let p = part();
    let mini = ExpectPerTurn {
        answered_by_model: Some("openai/gpt-4o-mini".into()),
        ..Default::default()
    };
    assert_eq!(judge_on(&mini, &p).status, ExpectStatus::Pass);
    let cheap = ExpectPerTurn {
        requests_at_most: Some(1),
        turns_at_least: Some(5),
        ..Default::default()
    };
    let r = judge_on(&cheap, &p);
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert!(r.observed.starts_with("5 of 7 turns"), "{}", r.observed);
    let six = ExpectPerTurn {
        turns_at_least: Some(6),
        ..cheap.clone()
    };
    assert_eq!(judge_on(&six, &p).status, ExpectStatus::Fail);
    // From 1.5 s on every turn is a single request.
    let late = ExpectPerTurn {
        requests_at_most: Some(1),
        from: Some(Duration::from_millis(1_500)),
        ..Default::default()
    };
    let r = judge_on(&late, &p);
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert_eq!(r.witness.get("turns_outside_window"), 2);
    let b = ExpectPerTurn {
        answered_by_profile: Some("key-b".into()),
        ..Default::default()
    };
    assert_eq!(judge_on(&b, &p).status, ExpectStatus::Fail);
    let fast = ExpectPerTurn {
        answer_within: Some(Duration::from_millis(39)),
        ..Default::default()
    };
    assert_eq!(judge_on(&fast, &p).status, ExpectStatus::Fail);
}

#[test]
fn no_turn_or_a_stripped_marker_is_never_a_pass() {
    let e = ExpectPerTurn {
        requests_at_most: Some(7),
        ..Default::default()
    };
    assert_eq!(judge_on(&e, &TurnsPart::default()).status, ExpectStatus::Fail);
    let stripped = TurnsPart {
        unmarked_requests: 12,
        unreadable: Some("none of the 12 requests carried a turn marker".into()),
        ..TurnsPart::default()
    };
    let r = judge_on(&e, &stripped);
    assert_eq!(r.status, ExpectStatus::Fail);
    assert!(r.detail.contains("the gateway stripped the turn marker"), "{}", r.detail);
    assert_eq!(r.witness.get("unreadable"), 1);
    assert!(ExpectPerTurn::default().check().is_err());
}

/// One turn at `t` answered by key-c, the upstream finishing its answer at `done` (`None`: a
/// recording made before `done_ms`).
fn answered_at(turn: u64, t: u64, done: Option<u64>) -> TurnRow {
    let mut a = q(t, "key-c", "gpt-4o-mini", Some("first_token_delay"));
    a.done_ms = done;
    a.whole = done.map(|_| true);
    row(turn, None, vec![a])
}

fn part_of(rows: Vec<TurnRow>) -> TurnsPart {
    TurnsPart {
        marked_requests: rows.len() as u64,
        rows,
        ..TurnsPart::default()
    }
}

#[test]
fn the_time_to_answer_runs_to_when_the_upstream_finished_serving_not_to_the_arrival() {
    // The answer arrived at once but its first token came 20 s late: 20.3 s to answer.
    let p = part_of(vec![answered_at(0, 1_000, Some(21_300))]);
    let within = |s: u64| ExpectPerTurn {
        answer_within: Some(Duration::from_secs(s)),
        ..Default::default()
    };
    let r = judge_on(&within(12), &p);
    assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
    assert_eq!(r.witness.get("slowest_answer_ms"), 20_300);
    assert!(
        r.detail.contains("arrived at 1.000s, the upstream finished serving it at 21.300s"),
        "{}",
        r.detail
    );
    assert_eq!(judge_on(&within(21), &p).status, ExpectStatus::Pass);
}

#[test]
fn an_answer_with_no_recorded_end_is_never_a_pass_of_answer_within() {
    let p = part_of(vec![
        answered_at(0, 1_000, Some(1_400)),
        answered_at(1, 3_000, None),
    ]);
    let within = ExpectPerTurn {
        answer_within: Some(Duration::from_secs(5)),
        ..Default::default()
    };
    let r = judge_on(&within, &p);
    assert_eq!(r.status, ExpectStatus::NotReached, "{}", r.detail);
    assert!(!r.ok);
    assert!(r.detail.contains("no recorded end"), "{}", r.detail);
    assert_eq!(r.witness.get("answers_without_end"), 1);
    // Counted: the unknown turn may or may not match — undecided unless the count holds (or
    // fails) either way.
    let both = ExpectPerTurn {
        turns_at_least: Some(2),
        ..within.clone()
    };
    assert_eq!(judge_on(&both, &p).status, ExpectStatus::NotReached);
    let one = ExpectPerTurn {
        turns_at_least: Some(1),
        ..within.clone()
    };
    assert_eq!(judge_on(&one, &p).status, ExpectStatus::Pass, "1 matches whatever the other");
    let three = ExpectPerTurn {
        turns_at_least: Some(3),
        ..within.clone()
    };
    assert_eq!(judge_on(&three, &p).status, ExpectStatus::Fail, "3 cannot match");
    // A turn known to miss fails the row whatever the unknown one did.
    let slow = part_of(vec![answered_at(0, 1_000, Some(9_000)), answered_at(1, 3_000, None)]);
    assert_eq!(judge_on(&within, &slow).status, ExpectStatus::Fail);
    // A row without answer_within does not need the end.
    let cheap = ExpectPerTurn {
        requests_at_most: Some(1),
        ..Default::default()
    };
    assert_eq!(judge_on(&cheap, &p).status, ExpectStatus::Pass);
}
