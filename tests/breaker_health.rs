//! Synthetic canaries (issue 3 point 4): one per dep every 10 s (speed-scaled), marked with
//! `X-Breaker-Probe`, and the canary/breaker disagreement gauge.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rehearse::engine::canary::{CANARY_WORKER, Canary, run_canaries};
use rehearse::engine::events::{BreakerState, Collector, Event, EventKind, EventSink, FanOut};
use rehearse::engine::metrics::Metrics;
use rehearse::engine::{AttemptResult, Call, EngineConfig, Transport};
use tokio::time::Instant;

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(Instant, Call)>>>);

impl Transport for Recorder {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        let result = if call.dep == "crm_search" {
            AttemptResult::Ok {
                tokens: 0,
                latency: Duration::from_millis(5),
            }
        } else {
            AttemptResult::Http {
                status: 503,
                retry_after: None,
                provider_code: None,
                latency: Duration::from_millis(5),
            }
        };
        self.0.lock().unwrap().push((Instant::now(), call));
        async move { result }
    }
}

/// Runs the canaries for `for_ms` of (paused) time. Stop times sit between ticks: a stop on a
/// tick's instant races with that tick and made the count flaky.
async fn run(speed: f64, for_ms: u64, sink: Arc<dyn EventSink>) -> Vec<(Instant, Call)> {
    let t0 = Instant::now();
    let rec = Recorder::default();
    let canaries = vec![Canary::tool("crm_search"), Canary::ws("realtime")];
    let stop = tokio::time::sleep(Duration::from_millis(for_ms));
    run_canaries(
        Arc::new(rec.clone()),
        canaries,
        EngineConfig::default(),
        speed,
        sink,
        t0,
        stop,
    )
    .await;
    rec.0.lock().unwrap().clone()
}

#[tokio::test(start_paused = true)]
async fn a_canary_per_dep_every_10s_marked_with_the_probe_header() {
    let t0 = Instant::now();
    let events = Arc::new(Collector::default());
    let calls = run(1.0, 35_000, events.clone()).await;
    let crm: Vec<u64> = calls
        .iter()
        .filter(|(_, c)| c.dep == "crm_search")
        .map(|(at, _)| (*at - t0).as_secs())
        .collect();
    assert_eq!(crm, [0, 10, 20, 30]);
    for (_, c) in &calls {
        assert_eq!(
            c.probe.as_deref(),
            Some(c.dep.as_str()),
            "X-Breaker-Probe: DEP"
        );
        assert_eq!(c.worker, CANARY_WORKER);
    }
    let checks: Vec<(String, bool)> = events
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::HealthCheck { dep, ok } => Some((dep, ok)),
            _ => None,
        })
        .collect();
    assert_eq!(checks.len(), 8);
    assert!(checks.contains(&("crm_search".into(), true)));
    assert!(checks.contains(&("realtime".into(), false)));

    let fast = run(10.0, 3_500, Arc::new(Collector::default())).await;
    assert_eq!(
        fast.iter().filter(|(_, c)| c.dep == "crm_search").count(),
        4,
        "1 s apart at 10x"
    );
}

#[tokio::test(start_paused = true)]
async fn disagreement_gauge_grows_while_breaker_is_open_and_canary_is_ok() {
    let metrics = Arc::new(Metrics::new(0.0));
    // crm_search's breaker opened at t=0 and never recovers; realtime's stays closed while its
    // canary fails.
    metrics.emit(&Event {
        t_ms: 0,
        kind: EventKind::BreakerTransition {
            dep: "crm_search".into(),
            from: BreakerState::Closed,
            to: BreakerState::Open,
            open_for_ms: Some(30_000),
        },
        log: None,
    });
    let sink: Arc<dyn EventSink> = Arc::new(FanOut(vec![metrics.clone()]));
    run(1.0, 195_000, sink).await;
    let text = metrics.render();
    // last canary at 190 s: disagreeing since the first canary at 0 s
    assert!(
        text.contains("health_breaker_disagreement_seconds{dep=\"crm_search\"} 190\n"),
        "{text}"
    );
    assert!(
        text.contains("health_breaker_disagreement_seconds{dep=\"realtime\"} 190\n"),
        "{text}"
    );
}
