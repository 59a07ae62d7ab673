//! The section builder's tests: the every-host matching, through the builder's own diff.

use super::*;
use std::collections::BTreeMap;

use crate::rehearsal::observation::Hits;
use crate::upstream::FaultSpec;
use crate::util::speed::Speed;
use crate::verdict::ExpectKind;
use crate::verdict::anchor::Applied;
use crate::engine::events::BreakerState;
use crate::util::speed::sp;
use crate::verdict::ExpectNoTransition;
use crate::verdict::diff_until;

fn tr(t_ms: u64, dep: &str) -> Transition {
    Transition {
        t_ms,
        dep: dep.into(),
        from: BreakerState::Closed,
        to: BreakerState::Open,
        timing: crate::scrape::timeline::Timing::Event,
        reason: None,
    }
}

#[test]
fn a_transition_on_another_host_fails_the_row_h0_passed_and_names_the_host() {
    let expect = Expectations {
        no_transition: vec![ExpectNoTransition {
            dep: "calculator".into(),
            policy: None,
        }],
        ..Default::default()
    };
    let mut rows = diff_until(&expect, &[], None, &[], Speed::ONE, None);
    assert_eq!(rows[0].status, ExpectStatus::Pass);
    let quiet = [tr(100, "crm_search")];
    let noisy = [tr(5000, "calculator")];
    let others: Vec<(&str, &[Transition])> = vec![("h1", &quiet[..]), ("h3", &noisy[..])];
    every_host_transitions(&mut rows, &expect, &others, Speed::ONE, None, &FaultsSeen::none());
    assert_eq!(rows.len(), 1, "no extra rows");
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(!rows[0].ok);
    assert!(
        rows[0].detail.contains("on h3: observed 1"),
        "{}",
        rows[0].detail
    );
    assert!(!rows[0].detail.contains("h1"), "{}", rows[0].detail);
}

fn move_(t_ms: u64, dep: &str, from: BreakerState, to: BreakerState) -> Transition {
    Transition {
        from,
        to,
        ..tr(t_ms, dep)
    }
}

/// `crm` opens at 5 s, half-opens 2 s after it opened, closes 1 s after that.
fn after_table() -> Expectations {
    toml::from_str(
        r#"
[[transition]]
dep = "crm"
from = "closed"
to = "open"
at = "5s"
tolerance = "500ms"
[[transition]]
dep = "crm"
from = "open"
to = "half_open"
after = "2s"
tolerance = "200ms"
[[transition]]
dep = "crm"
from = "half_open"
to = "closed"
after = "1s"
tolerance = "200ms"
[[no_transition]]
dep = "calculator"
"#,
    )
    .unwrap()
}

fn lane(open: u64, half: u64, closed: u64) -> Vec<Transition> {
    use BreakerState::{Closed, HalfOpen, Open};
    vec![
        move_(open, "crm", Closed, Open),
        move_(half, "crm", Open, HalfOpen),
        move_(closed, "crm", HalfOpen, Closed),
    ]
}

#[test]
fn an_after_transition_another_host_misses_fails_though_its_expected_text_differs() {
    let expect = after_table();
    // h0 holds every row; h1 opens 300 ms later (its own anchor) and half-opens 4 s after.
    let mut rows = diff_until(&expect, &lane(5_000, 7_000, 8_000), None, &[], Speed::ONE, None);
    assert!(rows.iter().all(|r| r.status == ExpectStatus::Pass), "{rows:#?}");
    let h1 = lane(5_300, 9_300, 10_300);
    let theirs = diff_until(&expect, &h1, None, &[], Speed::ONE, None);
    assert_ne!(theirs[1].expected, rows[1].expected, "the anchors differ per host");
    let others: Vec<(&str, &[Transition])> = vec![("h1", &h1[..])];
    every_host_transitions(&mut rows, &expect, &others, Speed::ONE, None, &FaultsSeen::none());
    assert_eq!(rows.len(), 4, "{rows:#?}");
    assert_eq!(rows[0].status, ExpectStatus::Pass, "h1 opened within tolerance");
    assert_eq!(rows[1].status, ExpectStatus::Fail, "{}", rows[1].detail);
    assert!(!rows[1].ok);
    assert!(rows[1].detail.contains("on h1: observed 9.300s"), "{}", rows[1].detail);
    // Its close came 1 s after its own half-open: that row holds on h1 too.
    assert_eq!(rows[2].status, ExpectStatus::Pass, "{}", rows[2].detail);
    assert_eq!(rows[3].status, ExpectStatus::Pass);
}

#[test]
fn an_unexpected_transition_on_another_host_is_a_failed_row_naming_the_host() {
    use BreakerState::{Closed, Open};
    let expect = after_table();
    let mut rows = diff_until(&expect, &lane(5_000, 7_000, 8_000), None, &[], Speed::ONE, None);
    let mut h2 = lane(5_000, 7_000, 8_000);
    h2.push(move_(12_000, "crm", Closed, Open));
    let quiet = lane(5_000, 7_000, 8_000);
    let others: Vec<(&str, &[Transition])> = vec![("h1", &quiet[..]), ("h2", &h2[..])];
    every_host_transitions(&mut rows, &expect, &others, Speed::ONE, None, &FaultsSeen::none());
    assert_eq!(rows.len(), 5, "one more row, for h2's extra open: {rows:#?}");
    let extra = &rows[4];
    assert!(extra.is_unexpected());
    assert_eq!(extra.status, ExpectStatus::Fail);
    assert!(extra.observed.ends_with("on h2"), "{}", extra.observed);
    assert!(extra.detail.starts_with("on h2: crm closed→open unexpected at 12.000s"), "{}", extra.detail);
    assert!(rows[..4].iter().all(|r| r.status == ExpectStatus::Pass));
}

#[test]
fn a_row_another_host_did_not_reach_before_the_stop_is_not_reached() {
    let expect = after_table();
    // Stopped at 8.3 s: h0 closed at 8 s; h3 half-opened at 7.4 s, so its close is due by
    // 8.6 s, after the stop.
    let stop = Some(8_300);
    let mut rows = diff_until(&expect, &lane(5_000, 7_000, 8_000), None, &[], Speed::ONE, stop);
    assert_eq!(rows[2].status, ExpectStatus::Pass);
    let mut h3 = lane(5_400, 7_400, 0);
    h3.pop();
    let others: Vec<(&str, &[Transition])> = vec![("h3", &h3[..])];
    every_host_transitions(&mut rows, &expect, &others, Speed::ONE, stop, &FaultsSeen::none());
    assert_eq!(rows[2].status, ExpectStatus::NotReached, "{}", rows[2].detail);
    assert!(rows[2].detail.contains("on h3: not reached"), "{}", rows[2].detail);
}

#[test]
fn every_host_counts_an_anchored_at_from_the_same_fault() {
    // The outage (from 3 s) applied on the fleet's one upstream: every host's open is due 2 s
    // after it, at 5 s, whatever each host's own timeline.
    let faults = crate::upstream::parse_fault_file(
        "[[fault]]\nname = \"outage\"\nroute = \"tool:crm\"\nkind = \"status\"\nstatus = 503\n\
         from = \"3s\"\nuntil = \"6s\"\n",
        "f.toml",
    )
    .unwrap();
    let applied: BTreeMap<usize, Applied> = [(0, Applied { count: 9, last_ms: Some(5_900) })].into();
    let seen = FaultsSeen { faults: &faults, applied: &applied };
    let mut expect = after_table();
    expect.transition[0].at = Some(std::time::Duration::from_secs(2));
    expect.transition[0].since = Some(crate::verdict::anchor::Since {
        fault: crate::verdict::anchor::FaultRef::Name("outage".into()),
        edge: crate::verdict::anchor::Edge::Start,
    });
    let only = Expectations { transition: expect.transition.clone(), ..Default::default() };
    let mut rows =
        crate::verdict::diff::diff_anchored(&only, &lane(5_000, 7_000, 8_000), None, &[], Speed::ONE, None, &seen);
    assert!(rows.iter().all(|r| r.status == ExpectStatus::Pass), "{rows:#?}");
    assert_eq!(rows[0].witness.get("anchor_ms"), 3_000);
    // h1 opened at 6 s: 3 s after the outage's start, outside the 500 ms tolerance.
    let h1 = lane(6_000, 8_000, 9_000);
    let others: Vec<(&str, &[Transition])> = vec![("h1", &h1[..])];
    every_host_transitions(&mut rows, &only, &others, Speed::ONE, None, &seen);
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
    assert!(rows[0].detail.contains("on h1: observed 6.000s"), "{}", rows[0].detail);
    // Without the applications the same row is anchored at nothing on every host: no pass.
    let mut rows =
        crate::verdict::diff::diff_anchored(&only, &lane(5_000, 7_000, 8_000), None, &[], Speed::ONE, None, &seen);
    every_host_transitions(&mut rows, &only, &others, Speed::ONE, None, &FaultsSeen::none());
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
}

/// A `redis` coordination arm of `fleet-cooldown-share` stopped at `wall_ms` of a run at
/// `speed`, its upstream record holding `records`.
fn stopped_fleet_arm(
    wall_ms: u64,
    speed: Speed,
    records: Vec<crate::upstream::UpstreamRecord>,
) -> (ScenarioPlan, Observation) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/scenarios/fleet-cooldown-share.toml");
    let checked = crate::scenario::validate::check(&path).unwrap();
    let plan = ScenarioPlan {
        versions: Vec::new(),
        gateways: Vec::new(),
        checked,
        speed,
        seed: 1,
        policies: Vec::new(),
        record_cap: 1000,
        sleep_watch: Default::default(),
        label: None,
        alongside: Vec::new(),
    };
    let o = Observation {
        arm: "redis".into(),
        elapsed_ms: wall_ms,
        speed,
        scrape_interval_ms: 250,
        scrapes: crate::scrape::CompactScrapes::new(0.0),
        final_exposition: None,
        engine: Some(Default::default()),
        arrivals: Vec::new(),
        fault_hits: Default::default(),
        replay: Default::default(),
        failed_requests: 0,
        user_visible_errors: 0,
        canaries: Default::default(),
        upstream: KeptRecords {
            records,
            cap: 1000,
            ..Default::default()
        },
        gateway: None,
        client_turns: None,
        kind_rows: Vec::new(),
        read_failures: None,
        stopped: Some("SIGTERM".into()),
        failed: None,
        alerts: None,
    };
    (plan, o)
}

#[test]
fn a_stopped_fleet_arm_judges_its_upstream_windows_against_the_stop_in_scenario_time() {
    // Stopped at 5 s of wall clock at speed 2: 10 s of scenario time, past the 7–8 s window,
    // in which the fleet sent profile b a request (3.7 s wall: 7.4 s of scenario time).
    let on_b = crate::upstream::UpstreamRecord::llm_for_test(
        3_700,
        3_700,
        "openai-codex/default/b".into(),
        Some("gpt-5"),
        Some(&crate::util::fingerprint("sk-fleet-profile-b")),
        None,
    );
    let (mut plan, o) = stopped_fleet_arm(5_000, sp(2.0), vec![on_b.clone()]);
    plan.checked.file.expect.no_request[0].until = std::time::Duration::from_secs(8);
    let rows = section(&plan, &o, &BTreeSet::new()).expectations;
    let row = rows
        .iter()
        .find(|r| r.kind == ExpectKind::NoRequest)
        .expect("the no_request row");
    assert_eq!(row.status, ExpectStatus::Pass, "{}", row.detail);
    // With nothing sent in the window, its silence shows nothing: not a pass.
    let (mut plan, o) = stopped_fleet_arm(5_000, sp(2.0), Vec::new());
    plan.checked.file.expect.no_request[0].until = std::time::Duration::from_secs(8);
    let rows = section(&plan, &o, &BTreeSet::new()).expectations;
    let row = rows.iter().find(|r| r.kind == ExpectKind::NoRequest).unwrap();
    assert_eq!(row.status, ExpectStatus::Fail, "{}", row.detail);
    assert!(row.detail.contains("requests observed = 0"), "{}", row.detail);
    // The 7–20 s window reaches past the stop: not reached, never pass.
    let (plan, o) = stopped_fleet_arm(5_000, sp(2.0), Vec::new());
    let rows = section(&plan, &o, &BTreeSet::new()).expectations;
    let row = rows.iter().find(|r| r.kind == ExpectKind::NoRequest).unwrap();
    assert_eq!(row.status, ExpectStatus::NotReached, "{}", row.detail);
}

fn faults(toml: &str) -> Vec<FaultSpec> {
    crate::upstream::parse_fault_file(toml, "f.toml").unwrap()
}

fn hits(pairs: &[(usize, u64)]) -> Hits {
    pairs.iter().map(|&(i, n)| (i, (n, Vec::new()))).collect()
}

#[test]
fn a_fault_no_run_applied_is_a_failed_row_unless_optional() {
    let f = faults(
        "[[fault]]\nroute = 'llm'\nkind = 'status'\nstatus = 503\nfrom = '0s'\nuntil = '15s'\n\
         [[fault]]\nroute = 'tool:crm_search'\nkind = 'reset'\n\
         [[fault]]\nroute = 'llm'\nkind = 'stall'\noptional = true\n\
         [[fault]]\nroute = 'llm'\nkind = 'status'\nstatus = 500\nprofile = 'sk-secret'\n",
    );
    // Fault 1 applied in the second run only: it applied.
    let (a, b) = (hits(&[]), hits(&[(1, 4)]));
    let never = unapplied_faults(&f, &[&a, &b]);
    assert_eq!(never, BTreeSet::from([0, 3]), "2 is optional");
    let rows = unapplied_rows(&f, &never, None);
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.status == ExpectStatus::Fail && !r.ok));
    assert_eq!(rows[0].kind, ExpectKind::FaultApplied);
    assert_eq!(rows[0].dep.as_deref(), Some("fault[0] status"));
    assert!(rows[0].expected.contains("route llm, [0.000s, 15.000s)"), "{}", rows[0].expected);
    assert!(rows[0].detail.contains("never applied in any run"), "{}", rows[0].detail);
    assert!(!rows[1].expected.contains("sk-secret"), "a token is shown by fingerprint");
    // A run stopped at 20 s saw fault 0's whole window: still a failure. Fault 3's window
    // was open at the stop: it might have applied later.
    let cut = unapplied_rows(&f, &never, Some(20_000));
    assert_eq!(cut[0].status, ExpectStatus::Fail);
    assert_eq!(cut[1].status, ExpectStatus::NotReached);
    // Stopped at 5 s: fault 0's window still open; a window not begun has no row.
    let late = faults("[[fault]]\nroute = 'llm'\nkind = 'reset'\nfrom = '30s'\n");
    assert!(unapplied_rows(&late, &BTreeSet::from([0]), Some(5_000)).is_empty());
    assert_eq!(
        unapplied_rows(&f, &never, Some(5_000))[0].status,
        ExpectStatus::NotReached
    );
    // Every fault applied somewhere: no row.
    let all = hits(&[(0, 1), (1, 1), (3, 2)]);
    assert!(unapplied_faults(&f, &[&all]).is_empty());
}

#[test]
fn a_coordinator_fault_is_judged_by_its_effect_not_by_upstream_hits() {
    let f = faults("[[fault]]\nroute = 'coordinator'\nkind = 'down'\nfrom = '5s'\nuntil = '10s'\n");
    assert!(unapplied_faults(&f, &[&hits(&[])]).is_empty());
}

#[test]
fn a_family_the_gateway_never_exported_fails_its_metric_row() {
    let expect: Expectations = toml::from_str(
        "[[metric]]\nseries = 'gw_errors_total{code=\"503\"}'\nequals = 0\n\
         [[metric]]\nseries = 'gw_requests_total'\nat_least = 1\n",
    )
    .unwrap();
    let e = crate::scrape::parse(
        "# TYPE gw_requests_total counter\ngw_requests_total{code=\"200\"} 3\n",
    )
    .unwrap();
    let mut scrapes = crate::scrape::CompactScrapes::new(0.0);
    crate::scrape::ScrapeSink::scrape(&mut scrapes, 1000, "", Some(&std::sync::Arc::new(e.clone())));
    let mut rows = diff_until(&expect, &[], Some(&e), &[], Speed::ONE, None);
    // Before: the absent family sums to 0, and `equals = 0` passes.
    assert_eq!(rows[0].status, ExpectStatus::Pass);
    let foreign = crate::rehearsal::metric_labels::Exportable::Foreign(Default::default());
    crate::rehearsal::metric_labels::judge(&mut rows, &expect, &scrapes, Some(&e), &foreign);
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(!rows[0].ok);
    assert!(
        rows[0].detail.contains("family `gw_errors_total` never exported by the gateway"),
        "{}",
        rows[0].detail
    );
    assert_eq!(rows[1].status, ExpectStatus::Pass, "an exported family is judged");
}

/// An anchor at a fault's end reads its last application from the recorder's hits, in scenario
/// time: the same run at ×2 and ×6 (wall times ÷ speed) anchors at the same instant, also past
/// the cap of kept hits; its start is the configured `from` at every speed.
#[test]
fn an_anchor_falls_at_the_same_scenario_instant_at_every_speed() {
    use crate::rehearsal::observe::FaultHits;
    use crate::verdict::anchor::{Edge, FaultRef, FaultsSeen, Since, resolve};
    let f = faults(
        "[[fault]]\nname = \"outage\"\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\n\
         from = \"4s\"\nfirst = 2500\n",
    );
    let mut seen = Vec::new();
    for speed in [1.0, 2.0, 6.0] {
        let hits = FaultHits::new(sp(speed));
        // 2 500 applications every 6 ms of scenario time from 4 s: past the 2 000 kept.
        for k in 0..2_500u64 {
            let scenario_ms = 4_000 + k * 6;
            hits.record(0, (scenario_ms as f64 / speed).round() as u64, "d");
        }
        let applied = applications(&hits.snapshot());
        assert_eq!(applied[&0].count, 2_500);
        let at = |edge| {
            let s = Since {
                fault: FaultRef::Name("outage".into()),
                edge,
            };
            resolve(&s, &FaultsSeen { faults: &f, applied: &applied }).map(|a| a.at_ms)
        };
        seen.push((speed, at(Edge::Start), at(Edge::End)));
    }
    for (speed, start, end) in seen {
        assert_eq!(start, Ok(4_000), "×{speed}");
        // 4 000 + 2 499 × 6 = 18 994, give or take the wall clock's rounding at ×6 (≤ 3 ms).
        let end = end.unwrap_or_else(|e| panic!("×{speed}: {e}"));
        assert!(end.abs_diff(18_994) <= 3, "×{speed}: {end}");
    }
}
