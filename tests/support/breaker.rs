//! Helpers for the breaker tests: a `Breakers` on paused time and canned attempt results.

use std::sync::Arc;
use std::time::Duration;

use rehearse::engine::breaker::BreakerConfig;
use rehearse::engine::breaker::Breakers;
use rehearse::engine::events::{BreakerState, Collector, EventKind};
use rehearse::engine::outcome::{AttemptResult, TransportFailure};
use rehearse::engine::{Admission, Admit};
use tokio::time::Instant;

pub const DEP: &str = "crm_search";

/// Test helper.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Test helper.
pub fn breakers(seed: u64) -> (Arc<Breakers>, Arc<Collector>, Instant) {
    let sink = Arc::new(Collector::default());
    let t0 = Instant::now();
    let b = Breakers::new(
        BreakerConfig::default(),
        rehearse::util::speed::Speed::ONE,
        seed,
        sink.clone(),
        t0,
    );
    (Arc::new(b), sink, t0)
}

/// Test helper.
pub fn reset() -> AttemptResult {
    AttemptResult::Transport {
        failure: TransportFailure::Reset,
    }
}

/// Test helper.
pub fn ok(latency_ms: u64) -> AttemptResult {
    AttemptResult::Ok {
        tokens: 0,
        latency: ms(latency_ms),
        ttfb: None,
        longest_gap: None,
    }
}

/// Test helper.
pub fn http(status: u16, retry_after: Option<&str>) -> AttemptResult {
    AttemptResult::Http {
        status,
        retry_after: retry_after.map(str::to_string),
        throttle: Vec::new(),
        provider_code: None,
        latency: ms(20),
    }
}

/// Admits and records one ordinary call of `dep` at `at`.
/// Test helper.
pub fn call(b: &Breakers, dep: &str, at: Instant, result: AttemptResult) -> Admit {
    let d = b.admit(dep, 0, at);
    if let Admit::Allow { probe, .. } = d {
        b.observe(dep, 0, probe, &result, crate::support::at(at));
    }
    d
}

/// Trips `dep` at `at` with five resets.
/// Test helper.
pub fn trip(b: &Breakers, dep: &str, at: Instant) {
    for _ in 0..5 {
        call(b, dep, at, reset());
    }
    assert_eq!(b.state(dep), BreakerState::Open);
}

/// Test helper.
pub fn transitions(c: &Collector) -> Vec<(u64, BreakerState, BreakerState, Option<u64>)> {
    c.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::BreakerTransition {
                from,
                to,
                open_for_ms,
                ..
            } => Some((e.t_ms, from, to, open_for_ms)),
            _ => None,
        })
        .collect()
}

/// An engine with real breakers whose events reach a collector and a metrics registry.
pub struct Observed<T: rehearse::engine::Transport> {
    pub engine: rehearse::engine::Engine<T>,
    pub events: Arc<Collector>,
    pub metrics: Arc<rehearse::engine::metrics::Metrics>,
    pub breakers: Arc<Breakers>,
}

/// `config` and `profiles` over `transport` at speed 1 with seed 7, its clock starting now.
pub fn observed_engine<T: rehearse::engine::Transport>(
    config: rehearse::engine::EngineConfig,
    profiles: Vec<rehearse::engine::Profile>,
    transport: T,
) -> Observed<T> {
    use rehearse::engine::events::{EventSink, FanOut};
    let t0 = Instant::now();
    let events = Arc::new(Collector::default());
    let metrics = Arc::new(rehearse::engine::metrics::Metrics::new(1_764_442_000.0));
    let sink: Arc<dyn EventSink> = Arc::new(FanOut(vec![events.clone(), metrics.clone()]));
    let breakers = Arc::new(Breakers::new(
        config.breaker.clone(),
        rehearse::util::speed::Speed::ONE,
        7,
        sink.clone(),
        t0,
    ));
    let at_scrape: std::sync::Weak<dyn rehearse::engine::metrics::AtScrape> =
        Arc::<Breakers>::downgrade(&breakers);
    metrics.advance_at_scrape(at_scrape);
    let mut opts = rehearse::engine::EngineOptions::new(t0);
    opts.seed = 7;
    let engine =
        rehearse::engine::Engine::new(config, profiles, opts, transport, breakers.clone(), sink)
            .expect("engine");
    Observed {
        engine,
        events,
        metrics,
        breakers,
    }
}

/// The (spent, budget) of every `RetryBudgetExhausted` event, in order.
pub fn exhausted(events: &Collector) -> Vec<(u64, u64)> {
    events
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::RetryBudgetExhausted { spent, budget, .. } => Some((spent, budget)),
            _ => None,
        })
        .collect()
}
