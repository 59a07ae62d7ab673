//! The alert judge's tests: firing, resolving, paging, `never` and `up`, the dashboards rule.

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

const FAULTS: &[(i64, Option<i64>)] = &[(5_000, Some(30_000))];

fn facts() -> AlertFacts<'static> {
    AlertFacts {
        faults: FAULTS,
        transitions: &[],
        stop_ms: None,
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
        faults: FAULTS,
        transitions: std::slice::from_ref(&tr),
        stop_ms: None,
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
