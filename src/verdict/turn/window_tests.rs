//! Tests of `[[expect.turn]]`'s window over when turns were sent, counted from the run start or
//! from a fault ([`super::evaluate`] with `from`, `until`, `since`).

use std::collections::BTreeMap;

use super::*;
use crate::verdict::anchor::{Applied, Edge, FaultRef};

/// `outage` from 30 s (applied 12 times), `spare`, which never applied.
fn specs() -> Vec<crate::upstream::FaultSpec> {
    crate::upstream::parse_fault_file(
        "[[fault]]\nname = \"outage\"\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\n\
         from = \"30s\"\nuntil = \"50s\"\n\
         [[fault]]\nname = \"spare\"\nroute = \"llm\"\nkind = \"reset\"\noptional = true\n",
        "f.toml",
    )
    .unwrap()
}

fn applied() -> BTreeMap<usize, Applied> {
    [(0, Applied { count: 12, last_ms: Some(49_500) })].into()
}

/// A turn every 2 s from 0 to 58 s: quick (400 ms) before the outage, slow (1.5 s, one of
/// them 3.5 s at 46 s) during it, quick again after.
fn turns() -> Vec<TurnSeen> {
    (0..30)
        .map(|i| {
            let sent_ms = i * 2_000;
            let elapsed_ms = match sent_ms {
                46_000 => 3_500,
                30_000..50_000 => 1_500,
                _ => 400,
            };
            TurnSeen {
                outcome: Some(TurnEnd::Answered),
                sent_ms,
                elapsed_ms,
                unrecorded: false,
            }
        })
        .collect()
}

fn since(name: &str) -> Option<Since> {
    Some(Since {
        fault: FaultRef::Name(name.into()),
        edge: Edge::Start,
    })
}

/// "Turns sent in the 10 s after the outage started were answered within `within` ms."
fn within(within_ms: u64, anchor: Option<Since>) -> ExpectTurn {
    ExpectTurn {
        outcome: Some("answered".into()),
        latency_at_most: Some(Duration::from_millis(within_ms)),
        until: Some(Duration::from_secs(10)),
        since: anchor,
        ..Default::default()
    }
}

fn judge(e: &ExpectTurn, stopped: bool) -> ExpectationResult {
    let (f, a) = (specs(), applied());
    let seen = FaultsSeen {
        faults: &f,
        applied: &a,
    };
    let mut rows = evaluate(std::slice::from_ref(e), &turns(), stopped, &seen);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    rows.remove(0)
}

#[test]
fn turns_sent_after_the_outage_started_answered_within_two_seconds() {
    let r = judge(&within(2_000, since("outage")), false);
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert_eq!(
        r.expected,
        "latency <= 2.000s sent in [30.000s, 40.000s) since fault `outage` start"
    );
    // 30, 32, …, 38 s: five turns in the window, each timed.
    assert_eq!(r.witness.get("turns_in_window"), 5);
    assert_eq!(r.witness.get("turns"), 5);
    assert_eq!(r.witness.get("anchor_ms"), 30_000);
    assert_eq!(r.witness.get("fault_applications"), 12);
    assert!(r.detail.ends_with("times from fault `outage` start (30.000s)"), "{}", r.detail);
    // Its mutants fail: a bound below what happened; the window moved onto the slow turn at
    // 46 s; the same window counted from the run start holds only quick turns, so a bound
    // below them fails there too.
    assert_eq!(judge(&within(1_000, since("outage")), false).status, ExpectStatus::Fail);
    let later = ExpectTurn {
        from: Some(Duration::from_secs(10)),
        until: Some(Duration::from_secs(20)),
        ..within(2_000, since("outage"))
    };
    let r = judge(&later, false);
    assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
    assert!(r.observed.contains("3.500s"), "{}", r.observed);
    let from_start = judge(&within(300, None), false);
    assert_eq!(from_start.status, ExpectStatus::Fail);
    assert!(!from_start.witness.has("anchor_ms"));
    assert_eq!(judge(&within(500, None), false).status, ExpectStatus::Pass);
}

#[test]
fn counts_over_a_window_and_a_window_with_no_turn_is_no_pass() {
    let count = ExpectTurn {
        outcome: Some("answered".into()),
        at_least: Some(5),
        until: Some(Duration::from_secs(10)),
        since: since("outage"),
        ..Default::default()
    };
    let r = judge(&count, false);
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert_eq!(r.observed, "5 of 5 turns sent in the window (30 in all)");
    assert_eq!(judge(&ExpectTurn { at_least: Some(6), ..count.clone() }, false).status, ExpectStatus::Fail);
    // "No turn failed" over a window past the last turn: nothing was sent there to judge.
    let none_failed = ExpectTurn {
        outcome: Some("error_event".into()),
        equals: Some(0),
        from: Some(Duration::from_secs(40)),
        until: Some(Duration::from_secs(60)),
        since: since("outage"),
        ..Default::default()
    };
    let r = judge(&none_failed, false);
    assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
    assert_eq!(r.witness.get("turns_in_window"), 0);
    assert!(r.detail.contains("no turn was sent in the window"), "{}", r.detail);
    // The same over [50 s, 60 s) from the run start holds: five turns were sent, none failed.
    let r = judge(
        &ExpectTurn {
            from: Some(Duration::from_secs(50)),
            since: None,
            ..none_failed
        },
        false,
    );
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert_eq!(r.witness.get("turns_in_window"), 5);
}

#[test]
fn a_window_since_a_fault_that_never_applied_is_never_a_pass() {
    // From 0 the window would hold quick turns only: it must not count from 0.
    let r = judge(&within(2_000, since("spare")), false);
    assert_eq!(r.status, ExpectStatus::Fail, "{}", r.detail);
    assert_eq!(r.observed, "no anchor");
    assert!(r.detail.contains("fault 'spare' never applied"), "{}", r.detail);
    assert!(!r.witness.has("anchor_ms"));
    let r = judge(&within(2_000, since("spare")), true);
    assert_eq!(r.status, ExpectStatus::NotReached, "{}", r.detail);
}

#[test]
fn a_window_is_checked() {
    let ok = |t: ExpectTurn| check(&t, &|_| true);
    let e = ok(ExpectTurn {
        from: Some(Duration::from_secs(5)),
        until: Some(Duration::from_secs(5)),
        equals: Some(1),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(e.0, "until");
    let t: ExpectTurn = toml::from_str(
        "latency_at_most = \"2s\"\nuntil = \"10s\"\nsince = { fault = \"outage\" }",
    )
    .unwrap();
    assert_eq!(t.since, since("outage"));
    assert!(ok(t).is_ok());
}
