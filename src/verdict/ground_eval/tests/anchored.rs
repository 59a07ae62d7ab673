//! Rows anchored at a fault's start or end (`since`), and at a fault that never applied.

use super::*;

/// Faults of the anchored rows: "outage" on key-A from 1 s (no `until`), "late" from 15 s,
/// "spare" that never applied.
fn anchor_faults() -> Vec<crate::upstream::FaultSpec> {
    crate::upstream::parse_fault_file(
        "[[fault]]\nname = \"outage\"\nroute = \"llm\"\nprofile = \"sk-a\"\nkind = \"stall\"\nfrom = \"1s\"\n\
         [[fault]]\nname = \"late\"\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\nfrom = \"15s\"\nuntil = \"16s\"\n\
         [[fault]]\nname = \"spare\"\nroute = \"llm\"\nkind = \"reset\"\noptional = true\n",
        "f.toml",
    )
    .unwrap()
}

fn anchor_applied() -> BTreeMap<usize, crate::verdict::anchor::Applied> {
    use crate::verdict::anchor::Applied;
    [
        (0, Applied { count: 5, last_ms: Some(5_000) }),
        (1, Applied { count: 1, last_ms: Some(15_200) }),
    ]
    .into()
}

fn since(fault: &str, end: bool) -> Option<crate::verdict::anchor::Since> {
    use crate::verdict::anchor::{Edge, FaultRef, Since};
    Some(Since {
        fault: FaultRef::Name(fault.into()),
        edge: if end { Edge::End } else { Edge::Start },
    })
}

#[test]
fn anchored_rows_count_from_the_faults_instant_and_say_it() {
    let (r, fps) = (records(), fps());
    let (faults, applied) = (anchor_faults(), anchor_applied());
    let f = UpstreamFacts {
        faults: crate::verdict::anchor::FaultsSeen {
            faults: &faults,
            applied: &applied,
        },
        ..facts(&r, &fps)
    };
    // Key-B's first request (20 s) came 5 s after "late" started (15 s): within 6 s, not 4 s.
    let b = |at_most: u64, fault: &str| ExpectFirstRequest {
        profile: Some("mockai:b".into()),
        at_most: secs_d(at_most),
        since: since(fault, false),
        ..Default::default()
    };
    let pass = first_request(&b(6, "late"), &f);
    assert_eq!(pass.status, ExpectStatus::Pass, "{}", pass.detail);
    assert_eq!(pass.observed, "5.000s");
    assert_eq!(pass.witness.get("anchor_ms"), 15_000);
    assert_eq!(pass.witness.get("fault_applications"), 1);
    assert!(pass.expected.ends_with("since fault `late` start"), "{}", pass.expected);
    assert!(pass.detail.ends_with("times from fault `late` start (15.000s)"), "{}", pass.detail);
    assert_eq!(first_request(&b(4, "late"), &f).status, ExpectStatus::Fail);
    // Anchored at the wrong fault ("outage" starts at 1 s): 19 s, past the bound.
    assert_eq!(first_request(&b(6, "outage"), &f).status, ExpectStatus::Fail);
    // Key-A's stalls at 1..5 s: the first since "outage"'s start at 1 s is at once.
    let a = ExpectFirstRequest {
        profile: Some("mockai:a".into()),
        at_most: Some(Duration::ZERO),
        since: since("outage", false),
        ..Default::default()
    };
    assert_eq!(first_request(&a, &f).status, ExpectStatus::Pass);
    // "outage" has no `until`: it ends at its last application (5 s); nothing of key-A since.
    let quiet = ExpectNoRequest {
        profile: Some("mockai:a".into()),
        from: Duration::from_millis(1),
        until: Duration::from_secs(20),
        since: since("outage", true),
        ..Default::default()
    };
    let row = no_request(&quiet, &f);
    assert_eq!(row.status, ExpectStatus::Pass, "{}", row.detail);
    assert_eq!(row.witness.get("anchor_ms"), 5_000);
    assert!(row.expected.starts_with("no request in [5.001s, 25.000s)"), "{}", row.expected);
    // Four stalls of key-A in the 3 s since "outage" started; key-B recovered 5 s after "late".
    let a3 = ExpectAttempts {
        profile: Some("mockai:a".into()),
        until: secs_d(3),
        equals: Some(3),
        since: since("outage", false),
        ..Default::default()
    };
    assert_eq!(attempts(&a3, &f).status, ExpectStatus::Pass, "{}", attempts(&a3, &f).detail);
    let rec_b = |within: u64| ExpectRecovered {
        profile: Some("mockai:b".into()),
        after: Duration::ZERO,
        within: secs_d(within),
        since: since("late", true),
        ..Default::default()
    };
    assert_eq!(recovered(&rec_b(5), &f).status, ExpectStatus::Pass);
    assert_eq!(recovered(&rec_b(3), &f).status, ExpectStatus::Fail);
}

#[test]
fn a_row_anchored_at_a_fault_that_never_applied_is_never_a_pass() {
    let (r, fps) = (records(), fps());
    let (faults, applied) = (anchor_faults(), anchor_applied());
    let f = UpstreamFacts {
        faults: crate::verdict::anchor::FaultsSeen {
            faults: &faults,
            applied: &applied,
        },
        ..facts(&r, &fps)
    };
    // Would hold from the run start (key-B's first request is by 30 s)...
    let e = ExpectFirstRequest {
        profile: Some("mockai:b".into()),
        at_most: secs_d(30),
        since: since("spare", false),
        ..Default::default()
    };
    let row = first_request(&e, &f);
    assert_eq!(row.status, ExpectStatus::Fail);
    assert!(row.detail.contains("fault 'spare' never applied"), "{}", row.detail);
    assert!(!row.witness.has("anchor_ms"), "{:?}", row.witness);
    // ... and the silence of nothing is no pass either.
    let never = ExpectNoRequest {
        profile: Some("mockai:a".into()),
        from: Duration::ZERO,
        until: secs_d(1).unwrap(),
        since: since("spare", true),
        ..Default::default()
    };
    assert_eq!(no_request(&never, &f).status, ExpectStatus::Fail);
    // In a run cut short the fault might still have come: not reached, with the reason.
    let cut = UpstreamFacts {
        stopped_at_ms: Some(10_000),
        ..f
    };
    let row = no_request(&never, &cut);
    assert_eq!(row.status, ExpectStatus::NotReached);
    assert!(row.detail.contains("never applied"), "{}", row.detail);
}
