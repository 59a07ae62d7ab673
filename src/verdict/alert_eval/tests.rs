//! The alert judge's tests: firing, resolving, paging, `never` and `up`, the rule that could
//! (not) have fired, the dashboards rule.

use super::*;

fn series(name: &str, state: &str, dep: &str, t: impl IntoIterator<Item = i64>) -> AlertSeries {
    AlertSeries {
        labels: [("alertname", name), ("alertstate", state), ("dep", dep)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        t_ms: t.into_iter().collect(),
    }
}

fn seen(alerts: Vec<AlertSeries>) -> AlertsSeen {
    AlertsSeen {
        eval_ms: 1000,
        scrape_ms: 1000,
        end_ms: 60_000,
        alerts,
        up: (1..60).map(|s| (s * 1000, 1.0)).collect(),
        notifications: Some(vec![Notification {
            t_ms: 14_500,
            status: "firing".into(),
            labels: [
                ("alertname".to_string(), "BreakerOpen".to_string()),
                ("dep".into(), "crm".into()),
            ]
            .into(),
        }]),
        transitions_total: Vec::new(),
        untied: BTreeMap::new(),
        run_targets: 1,
        rules: vec![rule("BreakerOpen", "max by (job, instance, dep) (breaker_state) > 0")],
        records: Vec::new(),
        target_labels_known: true,
    }
}

/// A rule evaluated 58 times during the arm, never failing.
fn rule(alert: &str, query: &str) -> RuleSeen {
    RuleSeen {
        alert: alert.into(),
        group: format!("/run/prometheus/rules-shipped.yml;rehearse-breaker/{alert}"),
        interval_ms: 1000,
        query: query.into(),
        labels: [("severity".to_string(), "warning".to_string())].into(),
        evaluations: Some(58),
        failures: Some(0),
        last_error: String::new(),
    }
}

fn never(alert: &str) -> ExpectAlert {
    ExpectAlert {
        alert: alert.into(),
        never: true,
        ..Default::default()
    }
}

fn expect(within: u64) -> ExpectAlert {
    ExpectAlert {
        alert: "BreakerOpen".into(),
        labels: [("dep".to_string(), "crm".to_string())].into(),
        fires_within: Some(Duration::from_secs(within)),
        resolves_within: Some(Duration::from_secs(10)),
        notified_within: Some(Duration::from_secs(5)),
        ..Default::default()
    }
}

/// `outage` [5 s, 30 s), that applied to 20 requests, the last at 29.9 s; `flap` from 8 s
/// with `first = 4` and no `until`, its fourth and last application at 24 s; `spare`, which
/// never applied.
fn faults() -> FaultsSeen<'static> {
    let specs = crate::upstream::parse_fault_file(
        "[[fault]]\nname = \"outage\"\nroute = \"tool:crm\"\nkind = \"status\"\nstatus = 503\n\
         from = \"5s\"\nuntil = \"30s\"\n\
         [[fault]]\nname = \"flap\"\nroute = \"tool:crm\"\nkind = \"reset\"\nfrom = \"8s\"\nfirst = 4\n\
         [[fault]]\nname = \"spare\"\nroute = \"tool:crm\"\nkind = \"reset\"\noptional = true\n",
        "f.toml",
    )
    .unwrap();
    let applied: BTreeMap<usize, crate::verdict::anchor::Applied> = [
        (
            0,
            crate::verdict::anchor::Applied {
                count: 20,
                last_ms: Some(29_900),
            },
        ),
        (
            1,
            crate::verdict::anchor::Applied {
                count: 4,
                last_ms: Some(24_000),
            },
        ),
    ]
    .into();
    FaultsSeen {
        faults: Box::leak(specs.into_boxed_slice()),
        applied: Box::leak(Box::new(applied)),
    }
}

fn facts() -> AlertFacts<'static> {
    AlertFacts {
        faults: faults(),
        transitions: &[],
        stop_ms: None,
        catalogue: Catalogue::Engine,
    }
}

#[test]
fn fires_resolves_and_is_notified_in_bounds() {
    let s = seen(vec![
        series("BreakerOpen", "pending", "crm", 10_000..=12_000),
        series("BreakerOpen", "firing", "crm", (13..=35).map(|x| x * 1000)),
    ]);
    let (rows, part) = evaluate(&[expect(10)], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
    assert_eq!(part.table[0].fired_ms, Some(13_000));
    assert_eq!(part.table[0].resolved_ms, Some(36_000));
    assert_eq!(part.table[0].notified_ms, Some(14_500));
    assert_eq!(part.spells.len(), 2);
    assert_eq!(part.arrivals.len(), 1);
    // Too tight a bound fails, naming the delay.
    let (rows, _) = evaluate(&[expect(5)], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(
        rows[0].detail.contains("fired 8.000s after"),
        "{}",
        rows[0].detail
    );
}

#[test]
fn never_fired_fails_and_silence_needs_up_the_whole_run() {
    let s = seen(vec![]);
    let (rows, _) = evaluate(&[expect(10)], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    let never = ExpectAlert {
        alert: "BreakerOpen".into(),
        never: true,
        ..Default::default()
    };
    let (rows, _) = evaluate(std::slice::from_ref(&never), &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
    let mut down = seen(vec![]);
    down.up[20].1 = 0.0;
    let (rows, _) = evaluate(std::slice::from_ref(&never), &[], Ok(&down), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    let mut gap = seen(vec![]);
    gap.up.retain(|p| p.0 < 20_000 || p.0 > 40_000);
    let (rows, _) = evaluate(std::slice::from_ref(&never), &[], Ok(&gap), &facts());
    assert_eq!(
        rows[0].status,
        ExpectStatus::NotReached,
        "{}",
        rows[0].detail
    );
    let fired = seen(vec![series("BreakerOpen", "firing", "x", [9_000])]);
    let (rows, _) = evaluate(&[never], &[], Ok(&fired), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
}

#[test]
fn still_firing_at_the_end_fails_its_resolve_bound() {
    let s = seen(vec![series(
        "BreakerOpen",
        "firing",
        "crm",
        (13..=60).map(|x| x * 1000),
    )]);
    let (rows, part) = evaluate(&[expect(10)], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
    assert_eq!(part.table[0].resolved_ms, None);
}

#[test]
fn a_transition_is_queryable_once_the_counter_reaches_it() {
    let tr = Transition {
        t_ms: 10_000,
        dep: "crm".into(),
        from: BreakerState::Closed,
        to: BreakerState::Open,
        timing: crate::scrape::timeline::Timing::Event,
        reason: None,
    };
    let mut s = seen(vec![]);
    s.transitions_total = vec![CounterSeries {
        labels: [("dep", "crm"), ("from", "closed"), ("to", "open")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        points: vec![(9_000, 0.0), (11_000, 1.0)],
    }];
    let f = AlertFacts {
        faults: faults(),
        transitions: std::slice::from_ref(&tr),
        stop_ms: None,
        catalogue: Catalogue::Engine,
    };
    let d = ExpectDashboard::default();
    let (rows, _) = evaluate(&[], std::slice::from_ref(&d), Ok(&s), &f);
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
    let tight = ExpectDashboard {
        within: Some(Duration::from_millis(500)),
        ..d
    };
    let (rows, _) = evaluate(&[], &[tight], Ok(&s), &f);
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
}

#[test]
fn a_pass_carries_its_witness_and_the_floor_accepts_it() {
    let s = seen(vec![]);
    let (mut rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
    let w = &rows[0].witness;
    assert_eq!(w.get("rule_evaluations"), 58);
    assert_eq!(w.get("target_up_samples"), 59);
    assert_eq!(w.get("rule_selectors"), 1);
    assert!(w.has("families_missing") && w.has("rule_failures"));
    assert_eq!(crate::verdict::witness::enforce(&mut rows), 0);
}

#[test]
fn a_never_still_pending_at_the_end_is_not_reached() {
    // `for: 30s`, the breaker open to the end: pending from 7 s to the last evaluation.
    let s = seen(vec![series(
        "BreakerOpen",
        "pending",
        "crm",
        (7..=59).map(|x| x * 1000),
    )]);
    let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::NotReached, "{}", rows[0].detail);
    assert!(
        rows[0].detail.contains("still pending at the end (since 7.000s)"),
        "{}",
        rows[0].detail
    );
    // A pending spell that ended long before the end was judged: the alert did not fire.
    let s = seen(vec![series("BreakerOpen", "pending", "crm", 7_000..=9_000)]);
    let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
}

#[test]
fn a_rule_that_failed_to_evaluate_fails_the_row_with_its_error() {
    let mut s = seen(vec![]);
    s.rules[0].failures = Some(58);
    s.rules[0].last_error = "many-to-many matching not allowed".into();
    let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(
        rows[0].detail.contains("failed 58 of its 58 evaluations")
            && rows[0].detail.contains("many-to-many"),
        "{}",
        rows[0].detail
    );
    assert_eq!(rows[0].witness.get("rule_failures"), 58);
    // Never evaluated, or its counters never read: not a pass either.
    for (evals, fails, says) in [
        (Some(0), Some(0), "did not evaluate"),
        (None, None, "were not read"),
    ] {
        let mut s = seen(vec![]);
        s.rules[0].evaluations = evals;
        s.rules[0].failures = fails;
        let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &facts());
        assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
        assert!(rows[0].detail.contains(says), "{}", rows[0].detail);
    }
    // A rule Prometheus does not have.
    let (rows, _) = evaluate(&[never("Nope")], &[], Ok(&seen(vec![])), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(rows[0].detail.contains("no alerting rule `Nope`"));
}

#[test]
fn a_rule_that_reads_what_the_target_cannot_export_or_untied_fails() {
    let mut s = seen(vec![]);
    s.rules[0].query = "max by (job, instance, dep) (breaker_stat) > 0".into();
    let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(
        rows[0].detail.contains("did you mean `breaker_state`"),
        "{}",
        rows[0].detail
    );
    assert_eq!(rows[0].witness.get("families_missing"), 1);
    // A foreign exporter: the families some scrape held.
    let exported = |n: &str| n == "breaker_state";
    let foreign = AlertFacts {
        catalogue: Catalogue::Foreign(Some(&exported)),
        ..facts()
    };
    let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &foreign);
    assert!(rows[0].detail.contains("never exported"), "{}", rows[0].detail);
    s.rules[0].query = "max by (job, instance, dep) (breaker_state) > 0".into();
    let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &foreign);
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
    // A Prometheus the user runs holds a rule that aggregates the run's labels away.
    s.rules[0].query = "max by (dep) (breaker_state) > 0".into();
    s.target_labels_known = false;
    let (rows, _) = evaluate(&[never("BreakerOpen")], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail);
    assert!(rows[0].detail.contains("aggregates away"), "{}", rows[0].detail);
}

#[test]
fn spells_are_judged_on_the_rules_own_group_interval() {
    // Evaluated every 5 s (the group's interval): samples 5 s apart are one spell.
    let mut s = seen(vec![series(
        "BreakerOpen",
        "firing",
        "crm",
        (3..=7).map(|x| x * 5_000),
    )]);
    s.rules[0].interval_ms = 5_000;
    let (rows, part) = evaluate(&[expect(15)], &[], Ok(&s), &facts());
    assert_eq!(part.spells.len(), 1, "{:?}", part.spells);
    assert_eq!(part.table[0].resolved_ms, Some(40_000), "{}", rows[0].detail);
}

/// `fault = "NAME"`: the alert's times count from that fault, resolved where every anchor is —
/// `fires_within` from its start, `resolves_within` from its end (its last application for a
/// `first = N` fault with no `until`) — and a fault that never applied anchors nothing.
#[test]
fn an_alert_anchored_at_a_named_fault_counts_from_it() {
    use crate::verdict::anchor::FaultRef;
    let s = seen(vec![
        series("BreakerOpen", "pending", "crm", 10_000..=12_000),
        series("BreakerOpen", "firing", "crm", (13..=25).map(|x| x * 1000)),
    ]);
    let named = |name: &str, fires: u64, resolves: u64| ExpectAlert {
        fault: Some(FaultRef::Name(name.into())),
        fires_within: Some(Duration::from_secs(fires)),
        resolves_within: Some(Duration::from_secs(resolves)),
        notified_within: None,
        ..expect(0)
    };
    // `flap` starts at 8 s (fired 5 s later) and ends at its last application, 24 s (resolved
    // at 26 s, 2 s later).
    let (rows, _) = evaluate(&[named("flap", 6, 3)], &[], Ok(&s), &facts());
    let r = &rows[0];
    assert_eq!(r.status, ExpectStatus::Pass, "{}", r.detail);
    assert_eq!(r.expected, "fires ≤6s after fault `flap` start, resolves ≤3s after fault `flap` end");
    assert_eq!(r.witness.get("anchor_ms"), 8_000);
    assert_eq!(r.witness.get("anchor_end_ms"), 24_000);
    assert_eq!(r.witness.get("fault_applications"), 4);
    assert_eq!(r.witness.get("rule_evaluations"), 58, "the judge's witness kept");
    assert!(r.detail.contains("times from fault `flap` start (8.000s)"), "{}", r.detail);
    // Its mutants fail: a bound below what happened, each edge.
    let (rows, _) = evaluate(&[named("flap", 4, 3)], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
    let (rows, _) = evaluate(&[named("flap", 6, 1)], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
    // By name or by index: the same fault.
    let by_index = ExpectAlert {
        fault: Some(FaultRef::Index(1)),
        ..named("flap", 6, 3)
    };
    let (rows, _) = evaluate(&[by_index], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Pass, "{}", rows[0].detail);
    // A fault that never applied: no pass (at 0 + 13 s the alert fired within 20 s), and not
    // reached when the run was cut short.
    let (rows, part) = evaluate(&[named("spare", 20, 30)], &[], Ok(&s), &facts());
    assert_eq!(rows[0].status, ExpectStatus::Fail, "{}", rows[0].detail);
    assert_eq!(part.table[0].status, ExpectStatus::Fail);
    assert!(rows[0].detail.contains("fault 'spare' never applied"), "{}", rows[0].detail);
    assert_eq!(rows[0].witness.get("fault_applications"), 0);
    assert!(!rows[0].witness.has("anchor_ms"));
    let cut = AlertFacts {
        stop_ms: Some(40_000),
        ..facts()
    };
    let (rows, _) = evaluate(&[named("spare", 20, 30)], &[], Ok(&s), &cut);
    assert_eq!(rows[0].status, ExpectStatus::NotReached, "{}", rows[0].detail);
}
