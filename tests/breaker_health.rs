//! Synthetic canaries: one per dep every 10 s (speed-scaled), marked with
//! `X-Breaker-Probe`, and the canary/breaker disagreement gauge.

use std::sync::Arc;
use std::time::Duration;

use crate::support::fake::{Answer, CountBy, FakeTransport};

use rehearse::engine::Origin;
use rehearse::engine::events::{BreakerState, Collector, Event, EventKind, EventSink, FanOut};
use rehearse::engine::health::canary::{Canary, run_canaries};
use rehearse::engine::metrics::Metrics;
use rehearse::engine::{AttemptResult, Call, EngineConfig};
use tokio::time::Instant;

/// `crm_search` answers 200, every other dep 503, at once.
fn recorder() -> FakeTransport {
    FakeTransport::new(CountBy::Dep, |call, _| {
        Answer::Now(if call.dep == "crm_search" {
            AttemptResult::Ok {
                tokens: 0,
                latency: Duration::from_millis(5),
                ttfb: None,
                longest_gap: None,
            }
        } else {
            AttemptResult::Http {
                status: 503,
                retry_after: None,
                throttle: Vec::new(),
                provider_code: None,
                latency: Duration::from_millis(5),
            }
        })
    })
}

/// Runs the canaries for `for_ms` of (paused) time. Stop times sit between ticks: a stop on a
/// tick's instant races with that tick and made the count flaky.
async fn run(speed: f64, for_ms: u64, sink: Arc<dyn EventSink>) -> Vec<(Instant, Call)> {
    let t0 = Instant::now();
    let rec = recorder();
    let canaries = vec![Canary::tool("crm_search"), Canary::ws("realtime")];
    let stop = tokio::time::sleep(Duration::from_millis(for_ms));
    run_canaries(
        Arc::new(rec.clone()),
        canaries,
        EngineConfig::default(),
        crate::support::speed(speed),
        sink,
        rehearse::engine::Clock::new(t0, crate::support::wall()),
        stop,
    )
    .await;
    rec.calls()
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
        assert_eq!(c.origin, Origin::Canary);
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
            reason: Some(rehearse::engine::TripReason::ConsecutiveFailures),
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

fn health(t_ms: u64, dep: &str, ok: bool) -> Event {
    Event {
        t_ms,
        kind: EventKind::HealthCheck {
            dep: dep.into(),
            ok,
        },
        log: None,
    }
}

/// `GET /metrics` over loopback, the body as text.
async fn scrape(addr: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    let (head, body) = out.split_once("\r\n\r\n").expect("a response head");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

/// The `health_breaker_disagreement_seconds{dep="DEP"}` sample of `text`.
fn disagreement(text: &str, dep: &str) -> f64 {
    let exp = rehearse::scrape::parse::parse(text).expect("parses");
    let sel = rehearse::scrape::selector::Selector::parse(&format!(
        "health_breaker_disagreement_seconds{{dep=\"{dep}\"}}"
    ))
    .expect("selector");
    let mut hits = exp.select(&sel).map(|s| s.value);
    let v = hits
        .next()
        .unwrap_or_else(|| panic!("no sample for {dep} in\n{text}"));
    assert!(hits.next().is_none(), "one sample per dep");
    v
}

#[tokio::test(start_paused = true)]
async fn disagreement_gauge_is_current_at_scrape_time_without_any_event() {
    let t0 = Instant::now();
    let metrics = Arc::new(Metrics::new(1_764_442_000.0).with_clock(t0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(rehearse::exporter::serve_metrics(
        listener,
        metrics.clone(),
        async move {
            let _ = stopped.await;
        },
    ));
    // The canary fails while the breaker (never transitioned) is closed: they disagree from 0 s.
    metrics.emit(&health(0, DEP_A, false));
    tokio::time::advance(Duration::from_secs(95)).await;
    let v = disagreement(&scrape(addr).await, DEP_A);
    assert!((v - 95.0).abs() < 0.5, "gauge {v}, want ≈ 95 s");
    // Rendering directly reads the same clock.
    tokio::time::advance(Duration::from_secs(5)).await;
    let v = disagreement(&metrics.render(), DEP_A);
    assert!((v - 100.0).abs() < 0.5, "gauge {v}, want ≈ 100 s");
    // Agreement returns (the canary succeeds again): 0, and it stays 0 as time passes.
    metrics.emit(&health(100_000, DEP_A, true));
    assert_eq!(disagreement(&scrape(addr).await, DEP_A), 0.0);
    tokio::time::advance(Duration::from_secs(60)).await;
    assert_eq!(disagreement(&scrape(addr).await, DEP_A), 0.0);
    // A breaker that opens while the canary is ok disagrees again, counted from its transition.
    metrics.emit(&Event {
        t_ms: 160_000,
        kind: EventKind::BreakerTransition {
            dep: DEP_A.into(),
            from: BreakerState::Closed,
            to: BreakerState::Open,
            open_for_ms: Some(30_000),
            reason: Some(rehearse::engine::TripReason::ConsecutiveFailures),
        },
        log: None,
    });
    tokio::time::advance(Duration::from_secs(20)).await;
    let v = disagreement(&scrape(addr).await, DEP_A);
    assert!((v - 20.0).abs() < 0.5, "gauge {v}, want ≈ 20 s");
    let _ = stop.send(());
    let _ = server.await;
}

#[tokio::test(start_paused = true)]
async fn without_a_clock_the_gauge_keeps_its_value_at_the_last_event() {
    // The registry-only behaviour the refresh replaces: documents why `with_clock` matters.
    let metrics = Metrics::new(0.0);
    metrics.emit(&health(0, DEP_A, false));
    tokio::time::advance(Duration::from_secs(95)).await;
    assert_eq!(disagreement(&metrics.render(), DEP_A), 0.0);
}

const DEP_A: &str = "crm_search";

/// `crm_search` answers at once; `stuck` takes 25 s to fail (a stalled call until its deadline).
fn one_stuck() -> FakeTransport {
    FakeTransport::new(CountBy::Dep, |call, _| {
        let ok = AttemptResult::Ok {
            tokens: 0,
            latency: Duration::from_millis(5),
            ttfb: None,
            longest_gap: None,
        };
        if call.dep == "stuck" {
            Answer::After(Duration::from_secs(25), ok)
        } else {
            Answer::Now(ok)
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_stuck_canary_delays_only_its_own_dep() {
    let t0 = Instant::now();
    let rec = one_stuck();
    let canaries = vec![Canary::tool("crm_search"), Canary::tool("stuck")];
    let stop = tokio::time::sleep(Duration::from_millis(45_000));
    let sink = Arc::new(Collector::default());
    run_canaries(
        Arc::new(rec.clone()),
        canaries,
        EngineConfig::default(),
        rehearse::util::speed::Speed::ONE,
        sink,
        rehearse::engine::Clock::new(t0, crate::support::wall()),
        stop,
    )
    .await;
    let at = |dep: &str| -> Vec<u64> {
        rec.calls()
            .iter()
            .filter(|(_, c)| c.dep == dep)
            .map(|(t, _)| (*t - t0).as_secs())
            .collect()
    };
    assert_eq!(at("crm_search"), [0, 10, 20, 30, 40]);
    assert_eq!(
        at("stuck"),
        [0, 25],
        "one in flight per dep, the next when it ends"
    );
}

/// A transport like an upstream that goes away with the run: each call stalls until the
/// shutdown flag flips, then fails with a reset (what a canary saw when the mock upstream
/// closed its connections at the end of a run).
fn dies_with_the_run(down: tokio::sync::watch::Receiver<bool>) -> FakeTransport {
    FakeTransport::new(CountBy::Dep, move |_, _| {
        Answer::When(
            down.clone(),
            AttemptResult::Transport {
                failure: rehearse::engine::TransportFailure::Reset,
            },
        )
    })
}

/// A canary cut by shutdown is not a failure — neither one still in flight nor
/// one whose call fails because the run is ending gets a `HealthCheck`, so the report counts it
/// neither as a call nor as a failure. (Twenty runs: the failing answer and the shutdown arrive
/// together, and the old loop let either win.)
#[tokio::test(start_paused = true)]
async fn a_canary_cut_by_shutdown_is_not_a_failure() {
    for round in 0..20 {
        let t0 = Instant::now();
        let events = Arc::new(Collector::default());
        let (tx, rx) = tokio::sync::watch::channel(false);
        let transport = dies_with_the_run(rx.clone());
        let mut stop = rx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(2_500)).await;
            let _ = tx.send(true);
        });
        run_canaries(
            Arc::new(transport.clone()),
            vec![Canary::tool("crm_search"), Canary::ws("realtime")],
            EngineConfig::default(),
            rehearse::util::speed::Speed::ONE,
            events.clone(),
            rehearse::engine::Clock::new(t0, crate::support::wall()),
            async move {
                let _ = stop.wait_for(|d| *d).await;
            },
        )
        .await;
        assert_eq!(transport.count(), 2, "round {round}: both sent");
        let checks: Vec<_> = events
            .events()
            .into_iter()
            .filter(|e| matches!(e.kind, EventKind::HealthCheck { .. }))
            .collect();
        assert!(
            checks.is_empty(),
            "round {round}: cut canaries counted: {checks:?}"
        );
    }
}
