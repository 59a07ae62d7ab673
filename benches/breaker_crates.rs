//! Our breaker's admit + record side by side with two published Rust circuit breakers,
//! `recloser` (lock-free ring buffer) and `failsafe` (mutex-guarded state machine), in one
//! criterion run. Each is measured on the same two paths:
//!
//! - **closed, ok**: ask for permission, then record a success (the path of almost every call);
//! - **open, reject**: ask for permission on a tripped breaker and be refused.
//!
//! Ours is measured through `Breakers` (the registry keyed by dep that the engine calls: the
//! lookup by name, the closed flag, result classification, the thread's log of successes and
//! its replay into the machine under the per-dep lock once per 64 records included) and on the
//! bare `Machine` (every record straight into its window). The two
//! crates do less: no per-dep map, no latency samples, no probe spacing or distinct workers, no
//! events; the comparison is "what one admit + record costs", not "same features".
//! Run: `cargo bench --features bench --bench breaker_crates -- --quick` (figures in docs/bench/capacity.md (c)).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rehearse::engine::AttemptResult;
use rehearse::engine::Now;
use rehearse::engine::admission::{Admission, Admit};
use rehearse::engine::breaker::probe::Latencies;
use rehearse::engine::breaker::window::Window;
use rehearse::engine::breaker::{BreakerConfig, Breakers, Machine, Signal};
use rehearse::engine::events::{Collector, EventSink};
use rehearse::engine::outcome::TransportFailure;
use rehearse::util::speed::Speed;
use tokio::time::Instant;

const OK: AttemptResult = AttemptResult::Ok {
    tokens: 12,
    latency: Duration::from_millis(40),
    ttfb: None,
    longest_gap: None,
};
const REFUSED: AttemptResult = AttemptResult::Transport {
    failure: TransportFailure::Refused,
};

/// `now` on both clocks (the wall clock only reads an HTTP-date Retry-After, which these results
/// do not carry).
fn at(now: Instant) -> Now {
    Now {
        at: now,
        wall: SystemTime::UNIX_EPOCH,
    }
}

/// A registry with a few other deps, so the map lookup is not trivially the only entry.
fn breakers(t0: Instant) -> Breakers {
    let sink: Arc<dyn EventSink> = Arc::new(Collector::default());
    let breakers = Breakers::new(BreakerConfig::default(), Speed::ONE, 7, sink, t0);
    for dep in ["calculator", "realtime", "openai-codex/default/ba7816"] {
        breakers.record(dep, 0, false, &OK, at(t0));
    }
    breakers
}

fn closed_ok(c: &mut Criterion) {
    let mut g = c.benchmark_group("admit+record, closed, ok");

    let t0 = Instant::now();
    let ours = breakers(t0);
    let mut step = 0u64;
    g.bench_function("rehearse Breakers", |b| {
        b.iter(|| {
            step += 1;
            let now = t0 + Duration::from_micros(step * 100);
            let d = ours.admit(black_box("crm_search"), 1, now);
            ours.record("crm_search", 1, false, black_box(&OK), at(now));
            d
        })
    });

    let cfg = BreakerConfig::default();
    let mut m = Machine::new(&cfg);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut notes = Vec::new();
    let signal = Signal::of(&OK, SystemTime::now());
    let mut step = 0u64;
    g.bench_function("rehearse Machine (bare)", |b| {
        b.iter(|| {
            step += 1;
            let now = t0 + Duration::from_micros(step * 100);
            let d = m.admit(&cfg, 1, now, &mut rng, &mut notes);
            m.record(&cfg, 1, false, black_box(signal), now, &mut notes);
            notes.clear();
            d
        })
    });

    let rc = recloser::Recloser::default();
    g.bench_function("recloser 1.4 call", |b| {
        b.iter(|| rc.call(|| black_box(Ok::<u32, ()>(1))))
    });

    let fs = failsafe::Config::new().build();
    g.bench_function("failsafe 1.3 is_call_permitted+on_success", |b| {
        b.iter(|| {
            let permitted = fs.is_call_permitted();
            fs.on_success();
            black_box(permitted)
        })
    });
    g.finish();
}

fn open_reject(c: &mut Criterion) {
    let mut g = c.benchmark_group("admit, open, rejected");

    let t0 = Instant::now();
    let ours = breakers(t0);
    let cfg = BreakerConfig::default();
    for _ in 0..cfg.consecutive_failures {
        ours.record("crm_search", 1, false, &REFUSED, at(t0));
    }
    // Stay well inside `open_for` (30 s) for every iteration.
    let now = t0 + Duration::from_millis(1);
    assert!(
        matches!(ours.admit("crm_search", 1, now), Admit::Reject { .. }),
        "our breaker did not trip"
    );
    g.bench_function("rehearse Breakers", |b| {
        b.iter(|| ours.admit(black_box("crm_search"), 1, now))
    });

    let mut m = Machine::new(&cfg);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut notes = Vec::new();
    let refused = Signal::of(&REFUSED, SystemTime::now());
    for _ in 0..cfg.consecutive_failures {
        m.record(&cfg, 1, false, refused, t0, &mut notes);
    }
    assert!(matches!(
        m.admit(&cfg, 1, now, &mut rng, &mut notes),
        Admit::Reject { .. }
    ));
    g.bench_function("rehearse Machine (bare)", |b| {
        b.iter(|| {
            let d = m.admit(&cfg, 1, black_box(now), &mut rng, &mut notes);
            notes.clear();
            d
        })
    });

    let rc = recloser::Recloser::custom()
        .closed_len(1)
        .open_wait(Duration::from_secs(30))
        .build();
    let _ = rc.call(|| Err::<(), ()>(()));
    let _ = rc.call(|| Err::<(), ()>(()));
    assert!(
        matches!(rc.call(|| Ok::<(), ()>(())), Err(recloser::Error::Rejected)),
        "recloser did not trip"
    );
    g.bench_function("recloser 1.4 call", |b| {
        b.iter(|| rc.call(|| black_box(Ok::<u32, ()>(1))))
    });

    let fs = failsafe::Config::new().build();
    while fs.is_call_permitted() {
        fs.on_error();
    }
    g.bench_function("failsafe 1.3 is_call_permitted", |b| {
        b.iter(|| black_box(fs.is_call_permitted()))
    });
    g.finish();
}

/// The parts of our closed admit + record, each alone, to show where the time goes against
/// `recloser` (which keeps a count-based ring of outcomes behind one atomic state and has no
/// per-dependency map, time window or latency samples).
fn parts(c: &mut Criterion) {
    let mut g = c.benchmark_group("closed path, part by part");
    let t0 = Instant::now();

    // The lock-free admit: the name lookup (the entry this thread found last, compared) and one
    // atomic load.
    let ours = breakers(t0);
    ours.record("crm_search", 1, false, &OK, at(t0));
    let now = t0 + Duration::from_millis(1);
    g.bench_function("Breakers admit (lookup by name + atomic load)", |b| {
        b.iter(|| ours.admit(black_box("crm_search"), 1, now))
    });

    // Classifying the attempt's result into the breaker's signal.
    g.bench_function("Signal::of (classify the result)", |b| {
        b.iter(|| Signal::of(black_box(&OK), SystemTime::UNIX_EPOCH))
    });

    // A std `Mutex`, uncontended: what the per-dependency lock was (a closed breaker's quiet
    // success now takes no lock; the lock it takes once per 64 is one `lock bts` and a store).
    let lock = std::sync::Mutex::new(0u64);
    g.bench_function("std Mutex lock + unlock (the per-dep lock before)", |b| {
        b.iter(|| {
            let mut n = lock.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            black_box(*n)
        })
    });

    // The 5xx-ratio rule's sliding time window: one success recorded (with eviction).
    let cfg = BreakerConfig::default();
    let mut w = Window::new(cfg.window);
    let mut step = 0u64;
    g.bench_function("Window::record (30 s time window, exact eviction)", |b| {
        b.iter(|| {
            step += 1;
            w.record(black_box(t0 + Duration::from_micros(step * 100)), false);
        })
    });

    // The replay of one thread's full log of successes: 64 calls in order, one eviction (the
    // instants are made outside the timing).
    let mut w = Window::new(cfg.window);
    let mut step = 0u64;
    g.bench_function("Window::record_successes (64 calls in order)", |b| {
        b.iter_batched_ref(
            || {
                let mut batch = [t0; 64];
                for at in &mut batch {
                    step += 1;
                    *at = t0 + Duration::from_micros(step * 100);
                }
                batch
            },
            |batch| w.record_successes(black_box(&[&batch[..]])),
            BatchSize::SmallInput,
        )
    });

    // The latency samples the half-open probe timeout is computed from.
    let mut l = Latencies::default();
    g.bench_function("Latencies::observe (probe timeout samples)", |b| {
        b.iter(|| l.observe(black_box(Duration::from_millis(40))))
    });
    g.finish();
}

criterion_group!(benches, closed_ok, open_reject, parts);
criterion_main!(benches);
