//! The pure diff: a correct observation passes, and every mutation of the expectations (shifted
//! beyond tolerance, removed, wrong dep, metric bound off by one) fails with a one-line reason.
//!
//! Longer than 400 lines on purpose: one correct observation and every mutation of it, side by
//! side.

use std::time::Duration;

use rehearse::engine::events::BreakerState::{self, Closed, HalfOpen, Open};
use rehearse::scrape::{Selector, Timing, Transition, parse};
use rehearse::verdict::{
    ExpectKind, ExpectMetric, ExpectNoTransition, ExpectProbeSpacing, ExpectTransition,
    Expectations, ProbeArrival, diff,
};

fn t(dep: &str, from: BreakerState, to: BreakerState, t_ms: u64) -> Transition {
    Transition {
        dep: dep.into(),
        from,
        to,
        t_ms,
        timing: Timing::Timestamp,
        reason: None,
    }
}

fn observed() -> Vec<Transition> {
    vec![
        t("crm_search", Closed, Open, 22_480),
        t("crm_search", Open, HalfOpen, 52_500),
        t("crm_search", HalfOpen, Closed, 53_100),
    ]
}

const SCENARIO: &str = r#"
[[transition]]
dep = "crm_search"
from = "closed"
to = "open"
at = "22s"
tolerance = "3s"
[[transition]]
dep = "crm_search"
from = "open"
to = "half_open"
after = "30s"
tolerance = "300ms"
[[transition]]
dep = "crm_search"
from = "half_open"
to = "closed"
after = "500ms"
tolerance = "300ms"
[[metric]]
series = 'profile_cooldowns_total{reason="timeout"}'
equals = 0
[[metric]]
series = 'requests_total{dep="crm_search"}'
at_least = 10
at_most = 12
policy = "retry-gate"
[[no_transition]]
dep = "calculator"
[[probe_spacing]]
dep = "crm_search"
min = "250ms"
"#;

const FINAL: &str = "\
profile_cooldowns_total{provider=\"p\",profile=\"a\",reason=\"timeout\"} 0
profile_cooldowns_total{provider=\"p\",profile=\"a\",reason=\"rate_limit\"} 4
requests_total{dep=\"crm_search\",outcome=\"ok\"} 7
requests_total{dep=\"crm_search\",outcome=\"http_5xx\"} 4
requests_total{dep=\"calculator\",outcome=\"ok\"} 50
";

fn probes() -> Vec<ProbeArrival> {
    let p = |t_ms, probe| ProbeArrival {
        dep: "crm_search".into(),
        t_ms,
        probe,
    };
    vec![
        p(52_510, true),
        p(52_600, false),
        p(52_800, true),
        p(53_090, true),
    ]
}

fn expectations() -> Expectations {
    toml::from_str(SCENARIO).expect("scenario expectations parse")
}

fn run(e: &Expectations) -> Vec<rehearse::verdict::ExpectationResult> {
    let fin = parse(FINAL).unwrap();
    diff(
        &e.for_policy("retry-gate"),
        &observed(),
        Some(&fin),
        &probes(),
        rehearse::util::speed::Speed::ONE,
    )
}

#[test]
fn diff_passes_a_matching_run() {
    let r = run(&expectations());
    assert_eq!(r.len(), 7, "{r:#?}");
    assert!(r.iter().all(|x| x.ok), "{r:#?}");
    assert_eq!(r[0].delta_ms, Some(480));
    assert_eq!(
        r[0].detail,
        "crm_search closed→open at 22.000s ±3.000s, observed at 22.480s (+0.480s, within tolerance)"
    );
    // `after` anchors on the observed time of the previous match: 22.480 + 30 = 52.480.
    assert_eq!(r[1].delta_ms, Some(20));
    assert_eq!(r[2].delta_ms, Some(100));
    assert_eq!(r[3].observed, "0");
    assert_eq!(r[4].observed, "11");
    assert_eq!(r[5].kind, ExpectKind::NoTransition);
    assert_eq!(r[6].kind, ExpectKind::ProbeSpacing);
    assert_eq!(r[6].delta_ms, Some(40), "min gap 290 ms vs 250 ms");
}

#[test]
fn diff_fails_a_transition_shifted_beyond_tolerance() {
    let mut e = expectations();
    e.transition[0].at = Some(Duration::from_millis(18_000));
    let r = run(&e);
    let bad: Vec<_> = r.iter().filter(|x| !x.ok).collect();
    assert_eq!(bad.len(), 1, "{r:#?}");
    assert_eq!(
        bad[0].detail,
        "crm_search closed→open at 18.000s ±3.000s, observed at 22.480s (+4.480s, outside tolerance)"
    );
    assert_eq!(bad[0].delta_ms, Some(4_480));
}

#[test]
fn diff_reports_an_observed_transition_whose_expectation_was_removed_as_unexpected() {
    let mut e = expectations();
    e.transition.remove(2);
    let r = run(&e);
    let bad: Vec<_> = r.iter().filter(|x| !x.ok).collect();
    assert_eq!(bad.len(), 1, "{r:#?}");
    assert_eq!(
        bad[0].detail,
        "crm_search half_open→closed unexpected at 53.100s (not in the expected sequence)"
    );
}

#[test]
fn diff_reports_missing_transitions_for_a_wrong_dep() {
    let mut e = expectations();
    for t in &mut e.transition {
        t.dep = "crm_lookup".into();
    }
    let r = run(&e);
    let bad: Vec<_> = r.iter().filter(|x| !x.ok).collect();
    assert_eq!(bad.len(), 3, "{r:#?}");
    assert!(bad.iter().all(|x| x.observed == "missing"));
    assert_eq!(
        bad[0].detail,
        "crm_lookup closed→open at 22.000s ±3.000s, missing (no closed→open observed in order)"
    );
}

#[test]
fn diff_fails_metric_bounds_off_by_one() {
    for (field, value, want) in [
        (
            "equals",
            1.0,
            "expected = 1, observed 0 (-1), outside the bound",
        ),
        (
            "at_least",
            12.0,
            "expected ≥ 12 and ≤ 12, observed 11 (-1), outside the bound",
        ),
        (
            "at_most",
            10.0,
            "expected ≥ 10 and ≤ 10, observed 11 (+1), outside the bound",
        ),
    ] {
        let mut e = expectations();
        match field {
            "equals" => e.metric[0].equals = Some(value),
            "at_least" => e.metric[1].at_least = Some(value),
            _ => e.metric[1].at_most = Some(value),
        }
        let r = run(&e);
        let bad: Vec<_> = r.iter().filter(|x| !x.ok).collect();
        assert_eq!(bad.len(), 1, "{field}: {r:#?}");
        assert!(bad[0].detail.ends_with(want), "{field}: {}", bad[0].detail);
    }
}

#[test]
fn diff_fails_no_transition_and_probe_spacing_when_violated() {
    let mut e = expectations();
    e.no_transition = vec![ExpectNoTransition {
        dep: "crm_search".into(),
        policy: None,
    }];
    e.probe_spacing = vec![ExpectProbeSpacing {
        dep: "crm_search".into(),
        min: Duration::from_millis(300),
        tolerance: None,
        policy: None,
    }];
    let r = run(&e);
    let bad: Vec<_> = r
        .iter()
        .filter(|x| !x.ok)
        .map(|x| x.detail.as_str())
        .collect();
    assert_eq!(
        bad,
        vec![
            "crm_search expected no transition, observed 3 (first closed→open at 22.480s)",
            "crm_search expected probes ≥ 0.300s apart, observed min gap 0.290s over 3 probes (between 52.510s and 52.800s; -0.010s), too close",
        ]
    );
}

#[test]
fn diff_scales_times_and_tolerances_by_speed_with_a_20ms_floor() {
    let e = Expectations {
        transition: vec![ExpectTransition {
            since: None,
            dep: "d".into(),
            from: Closed,
            to: Open,
            at: Some(Duration::from_secs(20)),
            after: None,
            tolerance: Some(Duration::from_millis(100)),
            policy: None,
        }],
        ..Default::default()
    };
    // speed 10: checked on the wall clock, expected at 2.000s, tolerance 100ms/10 = 10ms →
    // floored to 20ms; said in scenario time: at 20 s, ±200 ms (the floor × 10).
    let ok = diff(
        &e,
        &[t("d", Closed, Open, 2_019)],
        None,
        &[],
        crate::support::speed(10.0),
    );
    assert!(ok[0].ok, "{ok:#?}");
    assert_eq!(ok[0].expected, "closed→open at 20.000s ±0.200s");
    assert_eq!(ok[0].observed, "20.190s");
    assert_eq!(
        (
            ok[0].expected_ms,
            ok[0].observed_ms,
            ok[0].delta_ms,
            ok[0].tolerance_ms
        ),
        (Some(20_000), Some(20_190), Some(190), Some(200))
    );
    let late = diff(
        &e,
        &[t("d", Closed, Open, 2_021)],
        None,
        &[],
        crate::support::speed(10.0),
    );
    assert!(!late[0].ok);
    assert_eq!(late[0].delta_ms, Some(210), "scenario ms");
    // A tolerance above the floor is said as the scenario wrote it.
    let mut wide = e.clone();
    wide.transition[0].tolerance = Some(Duration::from_secs(3));
    let r = diff(
        &wide,
        &[t("d", Closed, Open, 2_250)],
        None,
        &[],
        crate::support::speed(4.0),
    );
    assert_eq!(r[0].expected, "closed→open at 20.000s ±3.000s");
    assert_eq!(r[0].observed_ms, Some(9_000));
    assert!(!r[0].ok, "9 s of scenario time is 11 s early");
}

#[test]
fn expectations_reject_unknown_keys_and_filter_by_policy() {
    let err = toml::from_str::<Expectations>(
        "[[transition]]\ndep = \"a\"\nfrom = \"closed\"\nto = \"open\"\nwhen = \"1s\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown field `when`"), "{err}");
    assert!(err.span().is_some());
    let e = expectations();
    assert_eq!(e.for_policy("legacy").metric.len(), 1);
    assert_eq!(e.for_policy("retry-gate").metric.len(), 2);
    assert!(e.validate(&["legacy", "retry-gate"]).is_ok());
    let bad = ExpectMetric {
        series: Selector::parse("x").unwrap(),
        equals: Some(1.0),
        at_least: Some(0.0),
        at_most: None,
        policy: None,
    };
    let e2 = Expectations {
        metric: vec![bad],
        ..Default::default()
    };
    assert_eq!(
        e2.validate(&["retry-gate"]).unwrap_err().field,
        "expect.metric[0].equals"
    );
    let sel =
        toml::from_str::<Expectations>("[[metric]]\nseries = 'x{a=b}'\nequals = 1\n").unwrap_err();
    assert!(sel.to_string().contains("bad series selector"), "{sel}");
}

#[test]
fn diff_anchors_after_on_the_expected_time_when_the_previous_is_missing() {
    let e: Expectations = toml::from_str(
        r#"
[[transition]]
dep = "d"
from = "closed"
to = "open"
at = "10s"
tolerance = "1s"
[[transition]]
dep = "d"
from = "open"
to = "half_open"
after = "30s"
tolerance = "1s"
[[transition]]
dep = "d"
from = "half_open"
to = "closed"
"#,
    )
    .unwrap();
    // closed→open never observed: open→half_open is expected 30 s after its expected 10 s.
    let r = diff(
        &e,
        &[
            t("d", Open, HalfOpen, 40_300),
            t("d", HalfOpen, Closed, 99_000),
        ],
        None,
        &[],
        rehearse::util::speed::Speed::ONE,
    );
    assert_eq!(r[0].observed, "missing");
    assert!(!r[0].ok);
    assert_eq!((r[1].ok, r[1].delta_ms), (true, Some(300)));
    assert_eq!(r[2].expected, "half_open→closed (any time)");
    assert!(r[2].ok && r[2].delta_ms.is_none());
    assert_eq!(rehearse::verdict::secs(-1_500), "-1.500s");
    assert_eq!(rehearse::verdict::signed_secs(4_120), "+4.120s");
}

/// An interrupted run: what the stop came before is `not_reached`, never a
/// failure; what was already observed keeps its outcome; end-of-run checks are never judged.
#[test]
fn a_stopped_run_leaves_what_it_never_reached_not_reached() {
    use rehearse::verdict::ExpectStatus::{Fail, NotReached, Pass};
    use rehearse::verdict::diff_until;
    let e = expectations().for_policy("retry-gate");
    let fin = parse(FINAL).unwrap();
    let statuses = |obs: &[Transition], arrivals: &[ProbeArrival], stop| {
        diff_until(
            &e,
            obs,
            Some(&fin),
            arrivals,
            rehearse::util::speed::Speed::ONE,
            stop,
        )
        .into_iter()
        .map(|r| (r.status, r.ok))
        .collect::<Vec<_>>()
    };
    // Stopped at 5 s: nothing was due yet (closed→open due by 25 s); nothing failed.
    let early = diff_until(
        &e,
        &[],
        Some(&fin),
        &[],
        rehearse::util::speed::Speed::ONE,
        Some(5_000),
    );
    assert!(
        early.iter().all(|r| r.status == NotReached && !r.ok),
        "{early:#?}"
    );
    assert!(
        early[0]
            .detail
            .contains("not reached (due by 25.000s; the run stopped at 5.000s")
    );
    assert_eq!(
        early[3].observed, "not reached",
        "metric checks are end-of-run checks"
    );

    // Stopped at 40 s with the open observed: that one passes, closed→open is settled, the
    // half-open due at 52.48 s ± 0.3 s and everything after is not reached.
    let obs = &observed()[..1];
    assert_eq!(
        statuses(obs, &[], Some(40_000)),
        vec![
            (Pass, true),
            (NotReached, false),
            (NotReached, false),
            (NotReached, false),
            (NotReached, false),
            (NotReached, false),
            (NotReached, false),
        ]
    );
    // Stopped at 40 s with no open at all: due by 25 s, so a real failure.
    assert_eq!(statuses(&[], &[], Some(40_000))[0], (Fail, false));

    // Certain failures stay failures: calculator transitioned, probes 100 ms apart.
    let mut obs = observed()[..1].to_vec();
    obs.push(t("calculator", Closed, Open, 3_000));
    let close = [
        ProbeArrival {
            dep: "crm_search".into(),
            t_ms: 1_000,
            probe: true,
        },
        ProbeArrival {
            dep: "crm_search".into(),
            t_ms: 1_100,
            probe: true,
        },
    ];
    let s = statuses(&obs, &close, Some(40_000));
    assert_eq!(s[5], (Fail, false), "no_transition violated");
    assert_eq!(s[6], (Fail, false), "probes too close");

    // Without a stop, `diff` is `diff_until(.., None)`: statuses follow `ok`.
    for r in run(&expectations()) {
        assert_eq!(r.status, Pass, "{r:?}");
    }
}
