//! Exported breaker state is the state at scrape time: an open breaker whose
//! open time ran out reads half-open in the next render with no call in between, stamped with
//! the instant it was due; and observing a breaker (renders at arbitrary instants) never changes
//! what its calls see — the same decisions, transitions and jitter draws as an unobserved twin.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rehearse::engine::breaker::BreakerConfig;
use rehearse::engine::breaker::Breakers;
use rehearse::engine::events::{BreakerState, Collector, EventKind, EventSink, FanOut};
use rehearse::engine::metrics::{AtScrape, Metrics};
use rehearse::engine::outcome::AttemptResult;
use rehearse::engine::{Admission, Admit};
use rehearse::scrape::{Exposition, Selector, parse};
use tokio::time::Instant;

use crate::support::breaker::{DEP, http, ms, ok, reset, transitions, trip};

const START_UNIX: f64 = 1_764_442_000.0;

/// Breakers whose events reach a collector and a registry that advances them at every render.
struct Rig {
    breakers: Arc<Breakers>,
    events: Arc<Collector>,
    metrics: Arc<Metrics>,
}

fn rig(cfg: BreakerConfig, seed: u64, t0: Instant) -> Rig {
    let events = Arc::new(Collector::default());
    let metrics = Arc::new(Metrics::new(START_UNIX).with_clock(t0));
    let sink: Arc<dyn EventSink> = Arc::new(FanOut(vec![events.clone(), metrics.clone()]));
    let breakers = Arc::new(Breakers::new(
        cfg,
        rehearse::util::speed::Speed::ONE,
        seed,
        sink,
        t0,
    ));
    let w: Weak<dyn AtScrape> = Arc::<Breakers>::downgrade(&breakers);
    metrics.advance_at_scrape(w);
    Rig {
        breakers,
        events,
        metrics,
    }
}

fn value(e: &Exposition, selector: &str) -> f64 {
    e.sum(&Selector::parse(selector).expect("selector"))
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_reads_half_open_in_the_next_scrape_without_any_call() {
    let t0 = Instant::now();
    let r = rig(BreakerConfig::default(), 1, t0);
    tokio::time::advance(Duration::from_secs(134)).await;
    trip(&r.breakers, DEP, Instant::now()); // at 134.000 s; open_for 30 s
    let state = format!("breaker_state{{dep=\"{DEP}\"}}");
    let half = format!("{{dep=\"{DEP}\",from=\"open\",to=\"half_open\"}}");

    // Just before the open time runs out: still open.
    tokio::time::advance(Duration::from_millis(29_999)).await;
    let e = parse(&r.metrics.render()).expect("exposition");
    assert_eq!(value(&e, &state), 2.0);
    assert_eq!(value(&e, &format!("breaker_transitions_total{half}")), 0.0);

    // 1.441 s after it ran out (the weekly run's gap), no call in between: the render reads
    // half-open, counted once, stamped at exactly 164.000 s.
    tokio::time::advance(Duration::from_millis(1 + 1_441)).await;
    let e = parse(&r.metrics.render()).expect("exposition");
    assert_eq!(
        value(&e, &state),
        1.0,
        "stale gauge: still open at scrape time"
    );
    assert_eq!(value(&e, &format!("breaker_transitions_total{half}")), 1.0);
    let stamp = value(
        &e,
        &format!("breaker_last_transition_timestamp_seconds{half}"),
    );
    assert!(
        (stamp - (START_UNIX + 164.0)).abs() < 1e-6,
        "transition stamped at {} s, not when due (164 s)",
        stamp - START_UNIX
    );
    let tr = transitions(&r.events);
    assert_eq!(tr.len(), 2, "{tr:?}");
    assert_eq!(
        (tr[1].0, tr[1].1, tr[1].2),
        (164_000, BreakerState::Open, BreakerState::HalfOpen)
    );
    assert_eq!(r.breakers.state(DEP), BreakerState::HalfOpen);

    // A second render changes nothing (no duplicate transition).
    let e = parse(&r.metrics.render()).expect("exposition");
    assert_eq!(value(&e, &format!("breaker_transitions_total{half}")), 1.0);
    assert_eq!(transitions(&r.events).len(), 2);
}

/// What a breaker's calls saw: every decision, then every transition and Retry-After skip with
/// its stamp, per dep in emission order.
type Trace = (Vec<(String, Admit)>, Vec<(String, String)>);

fn breaker_events(c: &Collector, dep: &str) -> Vec<(String, String)> {
    c.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::BreakerTransition {
                dep: d,
                from,
                to,
                open_for_ms,
                ..
            } if d == dep => Some((d, format!("{} {from:?}->{to:?} {open_for_ms:?}", e.t_ms))),
            EventKind::RetryAfterSkip { dep: d, until_ms } if d == dep => {
                Some((d, format!("{} skip until {until_ms}", e.t_ms)))
            }
            _ => None,
        })
        .collect()
}

/// Drives `r` through a seeded sequence of calls on two deps over ten minutes (outages that trip
/// both breakers, 429s with Retry-After, probes from four workers); when `observe` is set, renders
/// the registry at seeded arbitrary instants between calls. Returns the trace and how many
/// renders found a breaker half-open before any call had noticed (proof the observer mattered).
fn drive(r: &Rig, t0: Instant, observe: bool) -> (Trace, usize) {
    let deps = ["crm_search", "vector_search"];
    let mut calls = ChaCha8Rng::seed_from_u64(12);
    let mut looks = ChaCha8Rng::seed_from_u64(99);
    let mut decisions = Vec::new();
    let mut early_half_open = 0;
    let mut t = t0;
    let end = t0 + Duration::from_secs(600);
    while t < end {
        let gap = ms(calls.gen_range(0..2_500));
        if observe {
            for _ in 0..looks.gen_range(0..3) {
                let at = t + gap.mul_f64(looks.gen_range(0.0..1.0));
                let before: Vec<_> = deps.iter().map(|d| r.breakers.state(d)).collect();
                r.metrics.render_at(at);
                let after: Vec<_> = deps.iter().map(|d| r.breakers.state(d)).collect();
                early_half_open += before
                    .iter()
                    .zip(&after)
                    .filter(|(b, a)| **b == BreakerState::Open && **a == BreakerState::HalfOpen)
                    .count();
            }
        }
        t += gap;
        let dep = deps[calls.gen_range(0..deps.len())];
        let worker = calls.gen_range(0..4);
        let secs = t.duration_since(t0).as_secs();
        // Outages: 60–150 s and 300–420 s everything resets or 503s; 429s now and then.
        let outage = (60..150).contains(&secs) || (300..420).contains(&secs);
        let result: AttemptResult = match calls.gen_range(0..10) {
            _ if !outage && calls.gen_bool(0.9) => ok(calls.gen_range(5..80)),
            0..=5 if outage => reset(),
            6..=8 if outage => http(503, None),
            _ => http(429, Some(["1", "5", "45"][calls.gen_range(0..3)])),
        };
        let d = r.breakers.admit(dep, worker, t);
        decisions.push((dep.to_string(), d));
        if let Admit::Allow { probe, .. } = d {
            let done = t + ms(calls.gen_range(1..50));
            r.breakers
                .observe(dep, worker, probe, &result, crate::support::at(done));
            t = done;
        }
    }
    r.breakers.tick(end);
    let mut evs = Vec::new();
    for dep in deps {
        evs.extend(breaker_events(&r.events, dep));
    }
    ((decisions, evs), early_half_open)
}

#[tokio::test(start_paused = true)]
async fn observing_a_breaker_never_changes_what_its_calls_see() {
    let t0 = Instant::now();
    let cfg = BreakerConfig {
        open_for: Duration::from_secs(20),
        ..BreakerConfig::default()
    };
    let plain = rig(cfg.clone(), 7, t0);
    let watched = rig(cfg, 7, t0);
    let ((want_decisions, want_events), _) = drive(&plain, t0, false);
    let ((decisions, events), early) = drive(&watched, t0, true);

    // The run is not vacuous: both deps tripped, half-opened, re-opened or closed, and some
    // renders applied a half-open before any call would have.
    for kind in ["Closed->Open", "Open->HalfOpen", "HalfOpen->Closed"] {
        assert!(
            want_events.iter().any(|(_, e)| e.contains(kind)),
            "no {kind} in {want_events:#?}"
        );
    }
    assert!(
        want_decisions
            .iter()
            .any(|(_, d)| matches!(d, Admit::Allow { probe: true, .. })),
        "no probe was admitted"
    );
    assert!(
        early >= 2,
        "the observer never got ahead of the calls ({early})"
    );

    assert_eq!(decisions.len(), want_decisions.len());
    for (i, (got, want)) in decisions.iter().zip(&want_decisions).enumerate() {
        assert_eq!(got, want, "decision {i} differs once observed");
    }
    assert_eq!(events, want_events, "transitions differ once observed");
    for dep in ["crm_search", "vector_search"] {
        assert_eq!(
            watched.breakers.rejections(dep),
            plain.breakers.rejections(dep)
        );
        assert_eq!(watched.breakers.state(dep), plain.breakers.state(dep));
    }
}
