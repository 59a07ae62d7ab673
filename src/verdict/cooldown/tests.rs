//! `[[expect.cooldown]]` on hand-made turns: lengths, counts, `never`, Retry-After, and the
//! mutants that must fail.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::upstream::RequestRoute;
use crate::verdict::ExpectStatus;
use crate::verdict::anchor::FaultsSeen;
use crate::verdict::turns::{TurnRequest, TurnsPart, row};

fn q(t_ms: u64, profile: &str, model: &str, fault: Option<&str>, ra: Option<u64>) -> TurnRequest {
    TurnRequest {
        t_ms,
        route: RequestRoute::Llm,
        profile: Some(profile.into()),
        provider: Some("openai".into()),
        model: Some(model.into()),
        fault: fault.map(str::to_string),
        probe: false,
        retry_after_ms: ra,
        tokens: None,
        usage: None,
        // Served at once: a test of when the upstream finished sets it apart.
        done_ms: Some(t_ms),
        whole: None,
    }
}

/// Turns every 600 ms: key-a fails three times on turns 0 and 1 (its last failure at 1 010 ms,
/// with `ra` as its Retry-After), key-b answers; key-a is passed by until `back_ms`, where it
/// answers again; key-c never used.
fn part(back_ms: u64, ra: Option<u64>) -> TurnsPart {
    let mut rows = Vec::new();
    for (turn, t) in [(0u64, 300u64), (1, 1_000)] {
        rows.push(row(
            turn,
            None,
            vec![
                q(t, "key-a", "gpt-4o", Some("status"), ra),
                q(t + 5, "key-a", "gpt-4o", Some("status"), ra),
                q(t + 10, "key-a", "gpt-4o", Some("status"), ra),
                q(t + 15, "key-b", "gpt-4o", None, None),
            ],
        ));
    }
    let mut turn = 2;
    let mut t = 1_600;
    while t < 9_000 {
        let who = if t >= back_ms { "key-a" } else { "key-b" };
        rows.push(row(turn, None, vec![q(t, who, "gpt-4o", None, None)]));
        turn += 1;
        t += 600;
    }
    TurnsPart {
        marked_requests: 1,
        rows,
        ..TurnsPart::default()
    }
}

fn judge_on(e: &ExpectCooldown, p: &TurnsPart) -> ExpectationResult {
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

fn key_a() -> ExpectCooldown {
    ExpectCooldown {
        profile: "key-a".into(),
        ..Default::default()
    }
}

#[test]
fn a_cooldown_is_judged_on_its_length_and_count_with_its_witness() {
    // Back at 6 400 ms: quiet from 1 010 ms, 5.390 s.
    let p = part(6_400, None);
    let e = ExpectCooldown {
        cooled: Some(Duration::from_secs(5)),
        tolerance: Some(Duration::from_secs(1)),
        count: Some(1),
        ..key_a()
    };
    let r = judge_on(&e, &p);
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert_eq!(r.observed_ms, Some(5_390));
    assert_eq!(r.witness.get("cooldowns"), 1);
    assert!(r.witness.get("turns_elsewhere") >= 8, "{:?}", r.witness);
    assert!(r.observed.contains("turns elsewhere"), "{}", r.observed);
    // Mutants: a length past the observed one, a second cooldown, `never`.
    let long = ExpectCooldown {
        cooled: Some(Duration::from_secs(8)),
        ..e.clone()
    };
    assert_eq!(judge_on(&long, &p).status, ExpectStatus::Fail);
    let short = ExpectCooldown {
        at_most: Some(Duration::from_secs(5)),
        ..key_a()
    };
    assert_eq!(judge_on(&short, &p).status, ExpectStatus::Fail);
    let two = ExpectCooldown {
        count_at_least: Some(2),
        ..key_a()
    };
    assert_eq!(judge_on(&two, &p).status, ExpectStatus::Fail);
    let never = ExpectCooldown {
        never: true,
        ..key_a()
    };
    let r = judge_on(&never, &p);
    assert_eq!(r.status, ExpectStatus::Fail, "never on a profile that cooled");
    assert!(r.detail.contains("cooled 1 time"), "{}", r.detail);
}

#[test]
fn never_needs_turns_that_could_have_used_the_profile() {
    let p = part(6_400, None);
    let never_b = ExpectCooldown {
        profile: "key-b".into(),
        never: true,
        ..Default::default()
    };
    assert_eq!(judge_on(&never_b, &p).status, ExpectStatus::Pass);
    let empty = TurnsPart::default();
    let r = judge_on(&never_b, &empty);
    assert_eq!(r.status, ExpectStatus::Fail, "0 turns is not a pass");
    assert!(r.detail.contains("no turn could have used it"), "{}", r.detail);
}

#[test]
fn until_retry_after_reads_the_failing_responses_wait() {
    // Retry-After 3 s, back at 4 000 ms: 2.990 s, short of it by 10 ms.
    let e = ExpectCooldown {
        until_retry_after: true,
        tolerance: Some(Duration::from_secs(1)),
        ..key_a()
    };
    let early = part(4_000, Some(3_000));
    let r = judge_on(&e, &early);
    assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
    // Back at 4 600 ms: 3.590 s, within Retry-After + 1 s.
    let r = judge_on(&e, &part(4_600, Some(3_000)));
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert!(r.observed.contains("Retry-After 3.000s"), "{}", r.observed);
    // Back at 6 400 ms: past Retry-After + 1 s (cooled for its own time instead).
    assert_eq!(
        judge_on(&e, &part(6_400, Some(3_000))).status,
        ExpectStatus::Fail
    );
    // No Retry-After sent: nothing to hold it to.
    assert_eq!(judge_on(&e, &part(4_600, None)).status, ExpectStatus::Fail);
}

#[test]
fn a_model_on_a_profile_and_stripped_markers() {
    let p = part(6_400, None);
    let e = ExpectCooldown {
        model: Some("openai/gpt-4o".into()),
        ..key_a()
    };
    assert_eq!(judge_on(&e, &p).status, ExpectStatus::Pass);
    let other = ExpectCooldown {
        model: Some("openai/gpt-4o-mini".into()),
        ..key_a()
    };
    assert_eq!(judge_on(&other, &p).status, ExpectStatus::Fail);
    let stripped = TurnsPart {
        unmarked_requests: 9,
        unreadable: Some("none carried a marker".into()),
        ..TurnsPart::default()
    };
    let r = judge_on(&key_a(), &stripped);
    assert_eq!(r.status, ExpectStatus::Fail);
    assert!(r.detail.contains("stripped the turn marker"), "{}", r.detail);
}

#[test]
fn its_checks_refuse_contradictions() {
    let bad = ExpectCooldown {
        never: true,
        cooled: Some(Duration::from_secs(1)),
        ..key_a()
    };
    assert_eq!(bad.check().unwrap_err().0, "never");
    let tol = ExpectCooldown {
        tolerance: Some(Duration::from_secs(1)),
        ..key_a()
    };
    assert_eq!(tol.check().unwrap_err().0, "tolerance");
    let counts = ExpectCooldown {
        count: Some(1),
        count_at_least: Some(1),
        ..key_a()
    };
    assert!(counts.check().unwrap_err().1.contains("`count`"));
    assert!(key_a().check().is_ok());
}
