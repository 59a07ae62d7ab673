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
        throttle: Vec::new(),
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

/// One seeded random call's result, drawn from `results` (0–3 a success, 4–9 the failures and
/// the rest, 10 and above a success).
fn random_result(rng: &mut ChaCha8Rng, results: std::ops::Range<u32>) -> AttemptResult {
    let latency = Duration::from_millis(rng.gen_range(1..400));
    match rng.gen_range(results) {
        0..=3 | 10.. => AttemptResult::Ok {
            tokens: 3,
            latency,
            ttfb: None,
            longest_gap: None,
        },
        4 | 5 => AttemptResult::Http {
            status: 503,
            retry_after: rng.gen_bool(0.2).then(|| "2".to_string()),
            throttle: Vec::new(),
            provider_code: None,
            latency,
        },
        6 => AttemptResult::Http {
            status: 429,
            retry_after: Some("1".into()),
            throttle: Vec::new(),
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
    decides_as_the_bare_machine(1, false);
}

/// The same with the registry looked at (state, rejections) only every 97 calls, and healthy
/// stretches of 300 calls (nearly all successes) between the outages, so that quiet successes
/// pile up in the thread's log (up to a full log) and reach the machine in batches: a
/// non-closed admit, a failure's record or a look replays them first.
#[tokio::test(start_paused = true)]
async fn successes_logged_without_the_lock_reach_the_machine_before_any_decision() {
    decides_as_the_bare_machine(97, true);
}

/// Seeded random calls to three dependencies through the registry and through a bare machine
/// per dependency; the registry's state and rejection counts compared every `look_every`
/// calls; with `healthy`, every other stretch of 300 calls has 8 successes in 10 (and one
/// failure in 20) instead of [`random_result`]'s 4 in 10.
fn decides_as_the_bare_machine(look_every: usize, healthy: bool) {
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
            let results = if healthy && (step / 300) % 2 == 0 {
                0..40
            } else {
                0..10
            };
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
                let result = random_result(&mut calls, results.clone());
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
            if step % look_every == 0 {
                assert_eq!(b.state(dep), m.state(), "seed {seed} step {step}: {dep}");
                assert_eq!(b.rejections(dep), *rejections, "seed {seed} step {step}");
            }
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

/// Successes recorded by four threads at once, while a fifth keeps reading the state (which
/// replays the logs under the lock), all reach the window: none lost, none counted twice —
/// then five refusals in a row still trip the breaker at the fifth.
#[test]
fn successes_of_several_threads_at_once_are_each_counted_once() {
    let t0 = Instant::now();
    let sink = Arc::new(Collector::default());
    let b = Arc::new(registry(sink, t0));
    let wall = SystemTime::UNIX_EPOCH;
    let ok = AttemptResult::Ok {
        tokens: 1,
        latency: Duration::from_millis(3),
        ttfb: None,
        longest_gap: None,
    };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (b, stop) = (b.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(b.state("crm_search"), BreakerState::Closed);
                std::thread::yield_now();
            }
        })
    };
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let (b, ok) = (b.clone(), ok.clone());
            std::thread::spawn(move || {
                for i in 0..5_000u64 {
                    let at = t0 + Duration::from_micros(w * 5_000 + i);
                    b.record("crm_search", w as usize, false, &ok, Now::new(at, wall));
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    reader.join().expect("reader");
    let counts = b.core.peek("crm_search", |d| d.machine.window_counts());
    assert_eq!(counts, Some((20_000, 0)));
    let end = t0 + Duration::from_millis(25);
    for i in 0..5 {
        assert_eq!(b.state("crm_search"), BreakerState::Closed, "refusal {i}");
        b.record("crm_search", 0, false, &refused(), Now::new(end, wall));
    }
    assert_eq!(b.state("crm_search"), BreakerState::Open);
}
