//! Tests of a transition's `at` counted from a fault ([`super::diff_anchored`]): pure, over
//! transitions in wall-clock ms at a speed and fault applications in scenario ms.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::engine::events::BreakerState::{self, Closed, HalfOpen, Open};
use crate::scrape::timeline::Timing;
use crate::verdict::anchor::{Applied, Edge, FaultRef, Since};

/// `outage` on crm from 4 s (applied 30 times, the last at 9.8 s), `burst` from 2 s that
/// stops after 3 applications (the last at 2.4 s), `spare` that never applied.
fn specs() -> Vec<crate::upstream::FaultSpec> {
    crate::upstream::parse_fault_file(
        "[[fault]]\nname = \"outage\"\nroute = \"tool:crm\"\nkind = \"status\"\nstatus = 503\n\
         from = \"4s\"\nuntil = \"10s\"\n\
         [[fault]]\nname = \"burst\"\nroute = \"tool:crm\"\nkind = \"reset\"\nfrom = \"2s\"\nfirst = 3\n\
         [[fault]]\nname = \"spare\"\nroute = \"tool:nothing\"\nkind = \"reset\"\noptional = true\n",
        "f.toml",
    )
    .unwrap()
}

fn applied() -> BTreeMap<usize, Applied> {
    [
        (0, Applied { count: 30, last_ms: Some(9_800) }),
        (1, Applied { count: 3, last_ms: Some(2_400) }),
    ]
    .into()
}

/// crm's cycle in scenario ms: open at 5.2 s, half-open at 10.2 s, closed at 10.9 s.
fn cycle(speed: f64) -> Vec<Transition> {
    [(5_200, Closed, Open), (10_200, Open, HalfOpen), (10_900, HalfOpen, Closed)]
        .into_iter()
        .map(|(t, from, to)| Transition {
            t_ms: (t as f64 / speed).round() as u64,
            dep: "crm".into(),
            from,
            to,
            timing: Timing::Event,
            reason: None,
        })
        .collect()
}

fn since(name: &str, edge: Edge) -> Option<Since> {
    Some(Since {
        fault: FaultRef::Name(name.into()),
        edge,
    })
}

fn tr(
    from: BreakerState,
    to: BreakerState,
    at: Option<u64>,
    after: Option<u64>,
    anchor: Option<Since>,
) -> ExpectTransition {
    ExpectTransition {
        dep: "crm".into(),
        from,
        to,
        at: at.map(Duration::from_millis),
        since: anchor,
        after: after.map(Duration::from_millis),
        tolerance: Some(Duration::from_millis(500)),
        policy: None,
    }
}

/// Opens 1 s after the outage's start, half-opens 5 s later, closes 700 ms after that.
fn expect(open_at: u64, anchor: Option<Since>) -> Expectations {
    Expectations {
        transition: vec![
            tr(Closed, Open, Some(open_at), None, anchor),
            tr(Open, HalfOpen, None, Some(5_000), None),
            tr(HalfOpen, Closed, None, Some(700), None),
        ],
        ..Default::default()
    }
}

fn judge(e: &Expectations, speed: f64, stop: Option<u64>) -> Vec<ExpectationResult> {
    let (f, a) = (specs(), applied());
    let seen = FaultsSeen {
        faults: &f,
        applied: &a,
    };
    let sp = crate::util::speed::sp(speed);
    diff_anchored(e, &cycle(speed), None, &[], sp, stop, &seen)
}

fn statuses(rows: &[ExpectationResult]) -> Vec<ExpectStatus> {
    rows.iter().map(|r| r.status).collect()
}

#[test]
fn an_at_since_a_fault_passes_at_every_speed_and_says_its_anchor() {
    for speed in [1.0, 2.0, 8.0] {
        let rows = judge(&expect(1_000, since("outage", Edge::Start)), speed, None);
        assert_eq!(rows.len(), 3, "×{speed}: {rows:#?}");
        assert!(rows.iter().all(|r| r.status == ExpectStatus::Pass), "×{speed}: {rows:#?}");
        let open = &rows[0];
        // Due at 4 s + 1 s, said in scenario time at every speed.
        assert_eq!(open.expected_ms, Some(5_000), "×{speed}");
        assert_eq!(
            open.expected,
            "closed→open at 5.000s (1.000s since fault `outage` start) ±0.500s"
        );
        assert_eq!(open.witness.get("anchor_ms"), 4_000);
        assert_eq!(open.witness.get("fault_applications"), 30);
        assert_eq!(open.witness.get("transitions_matched"), 1);
        assert!(
            open.detail.ends_with("times from fault `outage` start (4.000s)"),
            "{}",
            open.detail
        );
        // The next `after` still counts from the transition the anchored one matched.
        assert_eq!(rows[1].expected_ms, Some(10_200), "×{speed}: {:#?}", rows[1]);
    }
}

#[test]
fn a_bound_off_its_event_or_the_wrong_fault_fails() {
    // 3 s after the outage's start is 7 s: the breaker opened at 5.2 s.
    let rows = judge(&expect(3_000, since("outage", Edge::Start)), 4.0, None);
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
    assert!(rows[0].detail.contains("outside tolerance"), "{}", rows[0].detail);
    // The same 1 s counted from the outage's end (its `until`, 10 s) is 11 s.
    let rows = judge(&expect(1_000, since("outage", Edge::End)), 4.0, None);
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert_eq!(rows[0].witness.get("anchor_ms"), 10_000);
    // `burst` ends at its third and last application (2.4 s): 1 s later is 3.4 s, not 5.2 s;
    // 2.8 s later holds.
    let rows = judge(&expect(1_000, since("burst", Edge::End)), 4.0, None);
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert_eq!(rows[0].witness.get("anchor_ms"), 2_400);
    let rows = judge(&expect(2_800, since("burst", Edge::End)), 4.0, None);
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
    // Without `since` the same 1 s counts from the run start, and fails.
    let rows = judge(&expect(1_000, None), 4.0, None);
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(!rows[0].witness.has("anchor_ms"));
}

#[test]
fn a_fault_that_never_applied_fails_the_row_never_anchoring_at_zero() {
    // At 0 + 5.2 s this would hold: it must not.
    let rows = judge(&expect(5_200, since("spare", Edge::Start)), 2.0, None);
    assert_eq!(statuses(&rows)[0], ExpectStatus::Fail, "{rows:#?}");
    assert_eq!(rows[0].observed, "no anchor");
    assert!(
        rows[0].detail.contains("fault 'spare' never applied"),
        "{}",
        rows[0].detail
    );
    assert_eq!(rows[0].witness.get("fault_applications"), 0);
    assert!(!rows[0].witness.has("anchor_ms"));
    // Its dep's order holds: the next `after` counts from the transition it matched.
    assert_eq!(statuses(&rows)[1..], [ExpectStatus::Pass, ExpectStatus::Pass]);
    // In a run cut short it is not reached (the fault might still have applied).
    let rows = judge(&expect(5_200, since("spare", Edge::Start)), 2.0, Some(3_000));
    assert_eq!(rows[0].status, ExpectStatus::NotReached, "{}", rows[0].detail);
    // Without the run's applications (`diff_until`) an anchored row is unanchored too.
    let sp = crate::util::speed::sp(2.0);
    let e = expect(1_000, since("outage", Edge::Start));
    let rows = diff_until(&e, &cycle(2.0), None, &[], sp, None);
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert_eq!(rows[0].observed, "no anchor");
}

#[test]
fn an_after_with_nothing_to_count_from_is_no_pass() {
    // The anchored open is missing (no such transition) and its fault never applied: the
    // half-open `after` it would anchor has no time, so it does not pass at any time.
    let e = Expectations {
        transition: vec![
            tr(Open, Closed, Some(1_000), None, since("spare", Edge::Start)),
            tr(Open, HalfOpen, None, Some(5_000), None),
        ],
        ..Default::default()
    };
    let rows = judge(&e, 1.0, None);
    let mine: Vec<_> = rows.iter().filter(|r| !r.is_unexpected()).collect();
    assert_eq!(mine.len(), 2, "{rows:#?}");
    assert_eq!(mine[0].status, ExpectStatus::Fail);
    assert_eq!(mine[1].status, ExpectStatus::Fail, "{}", mine[1].detail);
    assert!(
        mine[1].detail.contains("no time to count from"),
        "{}",
        mine[1].detail
    );
}
