//! The registry's events: the trip reason in the transition and its log line, a Retry-After
//! read against the wall time the caller passed in (not the system clock), and the registry
//! deciding exactly as the bare machine it wraps.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

use super::*;
use crate::engine::breaker::Machine;
use crate::engine::breaker::TripReason;
use crate::engine::events::{Collector, EventKind};
use crate::engine::outcome::TransportFailure;

fn refused() -> AttemptResult {
    AttemptResult::Transport {
        failure: TransportFailure::Refused,
    }
}

fn registry(sink: Arc<Collector>, t0: Instant) -> Breakers {
    Breakers::new(BreakerConfig::default(), Speed::ONE, 7, sink, t0)
}

#[tokio::test(start_paused = true)]
async fn a_trip_names_its_rule_in_the_event_and_the_log_line() {
    let t0 = Instant::now();
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let sink = Arc::new(Collector::default());
    let b = registry(sink.clone(), t0);
    for i in 0..5 {
        let at = t0 + Duration::from_millis(10 * i);
        b.observe("crm_search", 0, false, &refused(), Now::new(at, wall));
    }
    let trips: Vec<_> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::BreakerTransition {
                to: BreakerState::Open,
                reason,
                ..
            } => Some((e.t_ms, reason, e.log)),
            _ => None,
        })
        .collect();
    assert_eq!(
        trips,
        [(
            40,
            Some(TripReason::ConsecutiveFailures),
            Some("Breaker crm_search: closed → open (consecutive_failures)".to_string())
        )]
    );
}

/// The breaker reads an HTTP-date Retry-After against the wall time of the `Now` it is handed:
/// a date 90 s after that wall time holds the breaker open for 90 s, whatever the system clock
/// says (it used to read `SystemTime::now()`, a second clock beside the executor's).
#[tokio::test(start_paused = true)]
async fn an_http_date_retry_after_is_read_against_the_callers_wall_clock() {
    let t0 = Instant::now();
    // A wall clock far from the system's: 2027-01-15.
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let sink = Arc::new(Collector::default());
    let b = registry(sink.clone(), t0);
    let date = httpdate::fmt_http_date(wall + Duration::from_secs(90));
    let busy = AttemptResult::Http {
        status: 503,
        retry_after: Some(date),
        provider_code: None,
        latency: Duration::from_millis(5),
    };
    b.observe("crm_search", 0, false, &busy, Now::new(t0, wall));
    for _ in 0..5 {
        b.observe("crm_search", 0, false, &refused(), Now::new(t0, wall));
    }
    // Open for 30 s, then held open by the Retry-After until 90 s.
    b.tick(t0 + Duration::from_secs(31));
    let skips: Vec<_> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::RetryAfterSkip { until_ms, .. } => Some((e.t_ms, until_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(skips, [(30_000, 90_000)]);
    assert!(b.open_at("crm_search", t0 + Duration::from_secs(89)));
    assert!(!b.open_at("crm_search", t0 + Duration::from_secs(90)));
}

/// One seeded random call: how long after the previous one, to which dependency, by which
/// worker, and what came back.
fn random_result(rng: &mut ChaCha8Rng) -> AttemptResult {
    let latency = Duration::from_millis(rng.gen_range(1..400));
    match rng.gen_range(0..10) {
        0..=3 => AttemptResult::Ok {
            tokens: 3,
            latency,
            ttfb: None,
            longest_gap: None,
        },
        4 | 5 => AttemptResult::Http {
            status: 503,
            retry_after: rng.gen_bool(0.2).then(|| "2".to_string()),
            provider_code: None,
            latency,
        },
        6 => AttemptResult::Http {
            status: 429,
            retry_after: Some("1".into()),
            provider_code: None,
            latency,
        },
        7 => refused(),
        8 => AttemptResult::StreamCut { tokens_received: 2 },
        _ => AttemptResult::WsPingTimeout,
    }
}

/// The registry (closed breakers admitting with no lock, per-dependency locks, the lock-free
/// table) decides exactly as the bare machine it wraps: over seeded random calls to three
/// dependencies — outages that trip them, probes from four workers, 429s and Retry-Afters,
/// with `is_open`, `state` and ticks looked at in between — every admit answer, every
/// transition with its stamp, and every rejection count match a plain `Machine` per dependency
/// driven with the same calls and the RNG the registry seeds for it.
#[tokio::test(start_paused = true)]
async fn the_registry_decides_as_the_bare_machine_over_random_calls() {
    let cfg = BreakerConfig {
        consecutive_failures: 3,
        min_calls: 6,
        window: Duration::from_secs(4),
        open_for: Duration::from_secs(2),
        open_for_cap: Duration::from_secs(16),
        probe_interval: Duration::from_millis(100),
        ..BreakerConfig::default()
    };
    let deps = ["crm_search", "vector_search", "openai-codex/default/ba7816"];
    for seed in 0..12u64 {
        let t0 = Instant::now();
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let sink = Arc::new(Collector::default());
        let b = Breakers::new(cfg.clone(), Speed::ONE, seed, sink.clone(), t0);
        let mut twins: Vec<(Machine, ChaCha8Rng, u64)> = deps
            .iter()
            .map(|d| {
                let rng = ChaCha8Rng::seed_from_u64(seed ^ state::fnv1a(d));
                (Machine::new(&cfg), rng, 0)
            })
            .collect();
        let mut want_events: Vec<(String, u64, BreakerState, BreakerState)> = Vec::new();
        let mut calls = ChaCha8Rng::seed_from_u64(1000 + seed);
        let mut t = t0;
        for step in 0..3_000 {
            t += Duration::from_millis(calls.gen_range(0..150));
            let i = calls.gen_range(0..deps.len());
            let (dep, worker) = (deps[i], calls.gen_range(0..4));
            let (m, rng, rejections) = &mut twins[i];
            let mut notes = Vec::new();
            let want = m.admit(&cfg, worker, t, rng, &mut notes);
            if matches!(want, Admit::Reject { .. }) {
                *rejections += 1;
            }
            let got = b.admit(dep, worker, t);
            assert_eq!(got, want, "seed {seed} step {step}: admit {dep}");
            if let Admit::Allow { probe, .. } = got {
                // The answer comes back a little later (sometimes after another call).
                let end = t + Duration::from_millis(calls.gen_range(0..60));
                let result = random_result(&mut calls);
                m.record(
                    &cfg,
                    worker,
                    probe,
                    Signal::of(&result, wall),
                    end,
                    &mut notes,
                );
                b.record(dep, worker, probe, &result, Now::new(end, wall));
            }
            // A look applies what is due (a half-open), as the twin's next call would.
            if calls.gen_bool(0.05) {
                let end = t + Duration::from_millis(60);
                m.advance(end, &mut notes);
                let open = match m.phase() {
                    Phase::Open { .. } => true,
                    Phase::HalfOpen(h) => end < h.since,
                    Phase::Closed => false,
                };
                assert_eq!(b.is_open(dep, end), open, "seed {seed} step {step}");
            }
            for n in notes {
                if let Note::Transition { at, from, to, .. } = n {
                    let ms = at.saturating_duration_since(t0).as_millis() as u64;
                    want_events.push((dep.to_string(), ms, from, to));
                }
            }
            assert_eq!(b.state(dep), m.state(), "seed {seed} step {step}: {dep}");
            assert_eq!(b.rejections(dep), *rejections, "seed {seed} step {step}");
        }
        let got_events: Vec<_> = sink
            .events()
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::BreakerTransition { dep, from, to, .. } => Some((dep, e.t_ms, from, to)),
                _ => None,
            })
            .collect();
        assert!(
            got_events.len() > 20,
            "seed {seed}: too few transitions to prove anything ({})",
            got_events.len()
        );
        assert_eq!(got_events, want_events, "seed {seed}");
    }
}
