//! The contract between the engine's real `/metrics` text and the timeline: transitions emitted
//! to `engine::metrics::Metrics` at known engine times come back from periodic scrapes with the
//! same times (to the ms), in causal order, even when several happen between two scrapes.

use rehearse::engine::events::BreakerState::{self, Closed, HalfOpen, Open};
use rehearse::engine::events::{Event, EventKind, EventSink};
use rehearse::engine::metrics::Metrics;
use rehearse::scrape::timeline::derive;
use rehearse::scrape::{Exposition, Timing, parse};

const START: f64 = 1_790_000_000.0;

fn transition(dep: &str, from: BreakerState, to: BreakerState, t_ms: u64) -> Event {
    Event {
        t_ms,
        kind: EventKind::BreakerTransition {
            dep: dep.into(),
            from,
            to,
            open_for_ms: None,
            reason: None,
        },
        log: None,
    }
}

#[test]
fn timeline_from_real_engine_metrics_keeps_exact_transition_times() {
    let m = Metrics::new(START);
    let events = [
        transition("crm_search", Closed, Open, 1_620),
        transition("crm_search", Open, HalfOpen, 3_210),
        transition("crm_search", HalfOpen, Open, 3_300),
        transition("crm_search", Open, HalfOpen, 3_560),
        transition("crm_search", HalfOpen, Closed, 3_900),
        transition("calculator", Closed, Open, 4_999),
    ];
    let mut scrapes: Vec<(u64, Exposition)> = Vec::new();
    let mut next = 0;
    for t in (250..=5_000).step_by(250) {
        while next < events.len() && events[next].t_ms <= t {
            m.emit(&events[next]);
            next += 1;
        }
        let text = m.render();
        scrapes.push((
            t,
            parse(&text).unwrap_or_else(|e| panic!("engine metrics do not parse: {e}\n{text}")),
        ));
    }
    let pairs: Vec<(u64, &Exposition)> = scrapes.iter().map(|(t, e)| (*t, e)).collect();
    let tl = derive(&pairs, START);
    let got: Vec<(&str, BreakerState, BreakerState, u64)> = tl
        .transitions
        .iter()
        .map(|t| (t.dep.as_str(), t.from, t.to, t.t_ms))
        .collect();
    // Every transition falls in its own 250 ms scrape interval, so every time is exact.
    assert_eq!(
        got,
        events
            .iter()
            .map(|e| match &e.kind {
                EventKind::BreakerTransition { dep, from, to, .. } =>
                    (dep.as_str(), *from, *to, e.t_ms),
                _ => unreachable!(),
            })
            .collect::<Vec<_>>()
    );
    assert!(tl.transitions.iter().all(|t| t.timing == Timing::Timestamp));
    let crm: Vec<BreakerState> = tl.states["crm_search"].iter().map(|p| p.state).collect();
    assert_eq!(crm, vec![Closed, Open, HalfOpen, Open, HalfOpen, Closed]);
}

#[test]
fn timeline_from_real_engine_metrics_orders_a_burst_inside_one_interval() {
    let m = Metrics::new(START);
    let first = parse(&m.render()).unwrap();
    for e in [
        transition("d", Closed, Open, 1_100),
        transition("d", Open, HalfOpen, 1_350),
        transition("d", HalfOpen, Open, 1_500),
        transition("d", Open, HalfOpen, 1_800),
        transition("d", HalfOpen, Closed, 1_900),
    ] {
        m.emit(&e);
    }
    let second = parse(&m.render()).unwrap();
    let tl = derive(&[(1_000, &first), (2_000, &second)], START);
    let got: Vec<(BreakerState, BreakerState, u64, Timing)> = tl
        .transitions
        .iter()
        .map(|t| (t.from, t.to, t.t_ms, t.timing))
        .collect();
    assert_eq!(
        got,
        vec![
            (Closed, Open, 1_100, Timing::Timestamp),
            // The first of two open→half_open in one interval has no timestamp of its own: it
            // happened at 1350 and is placed midway between the previous scrape and the last one.
            (Open, HalfOpen, 1_400, Timing::Interpolated),
            (HalfOpen, Open, 1_500, Timing::Timestamp),
            (Open, HalfOpen, 1_800, Timing::Timestamp),
            (HalfOpen, Closed, 1_900, Timing::Timestamp),
        ]
    );
}
