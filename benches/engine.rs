//! Criterion benchmarks of the engine's hot decisions: one breaker decision (admit + record,
//! through `Breakers` and on the bare pure machine; through the async admission a coordinated
//! host uses, without and with a fleet coordinator on a closed breaker), one failover decision, and
//! one whole tool call through `Engine::handle` with fixed against adaptive deadlines.
//! Run: `cargo bench --features bench --bench engine -- --quick` (figures in docs/bench/engine.md).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rehearse::engine::admission::Admission;
use rehearse::engine::breaker::Breakers;
use rehearse::engine::breaker::{BreakerConfig, Machine, Signal};
use rehearse::engine::events::{Collector, EventSink};
use rehearse::engine::failover::classify::classify as classify_reason;
use rehearse::engine::failover::cooldown::{Preset, Schedules};
use rehearse::engine::failover::{FailoverCtx, ProfileView, RequestState, decide};
use rehearse::engine::{AttemptResult, Now, Policy, TimeoutPhase};
use tokio::time::Instant;

fn breaker_decision(c: &mut Criterion) {
    let sink: Arc<dyn EventSink> = Arc::new(Collector::default());
    let t0 = Instant::now();
    let breakers = Breakers::new(
        BreakerConfig::default(),
        rehearse::util::speed::Speed::ONE,
        7,
        sink,
        t0,
    );
    let ok = AttemptResult::Ok {
        tokens: 12,
        latency: Duration::from_millis(40),
        ttfb: None,
        longest_gap: None,
    };
    // A few other deps so the map lookup is not trivially the only entry.
    for dep in ["calculator", "realtime", "openai-codex/default/ba7816"] {
        breakers.record(dep, 0, false, &ok, Now::new(t0, SystemTime::now()));
    }
    let mut step = 0u64;
    let wall = SystemTime::now();
    c.bench_function("breaker admit+record (Breakers, closed, ok)", |b| {
        b.iter(|| {
            step += 1;
            let now = t0 + Duration::from_micros(step * 100);
            let d = breakers.admit(black_box("crm_search"), 1, now);
            breakers.record("crm_search", 1, false, black_box(&ok), Now::new(now, wall));
            d
        })
    });

    let cfg = BreakerConfig::default();
    let mut m = Machine::new(&cfg);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut notes = Vec::new();
    let signal = Signal::of(&ok, SystemTime::now());
    let mut step = 0u64;
    c.bench_function("breaker admit+record (pure Machine, closed, ok)", |b| {
        b.iter(|| {
            step += 1;
            let now = t0 + Duration::from_micros(step * 100);
            let d = m.admit(&cfg, 1, now, &mut rng, &mut notes);
            m.record(&cfg, 1, false, black_box(signal), now, &mut notes);
            notes.clear();
            d
        })
    });
}

/// A closed breaker through `admit_async` + `record_async` (what the engine calls): alone, with
/// the in-process coordinator and with the Redis one. A closed breaker makes no coordinator call,
/// so the Redis coordinator points at a port nothing listens on: a call would fail the check.
fn coordinated_decision(c: &mut Criterion) {
    use futures_util::FutureExt;
    use rehearse::engine::breaker::HostClock;
    use rehearse::engine::coordinator::{
        Coordinator, HostId, InProcess, RedisCoordinator, RedisOptions,
    };

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let _guard = rt.enter();
    let ok = AttemptResult::Ok {
        tokens: 12,
        latency: Duration::from_millis(40),
        ttfb: None,
        longest_gap: None,
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let redis = RedisCoordinator::new(RedisOptions {
        url: format!("redis://127.0.0.1:{port}"),
        ..RedisOptions::default()
    })
    .expect("lazy redis coordinator");
    let coordinators: [(&str, Option<Arc<dyn Coordinator>>); 3] = [
        ("alone", None),
        ("in-process coordinator", Some(Arc::new(InProcess::new()))),
        ("redis coordinator", Some(Arc::new(redis))),
    ];
    for (name, coordinator) in coordinators {
        let sink: Arc<dyn EventSink> = Arc::new(Collector::default());
        let t0 = Instant::now();
        let mut breakers = Breakers::new(
            BreakerConfig::default(),
            rehearse::util::speed::Speed::ONE,
            7,
            sink,
            t0,
        );
        if let Some(co) = coordinator {
            let host = HostId::new("h0").expect("host id");
            breakers = breakers.with_coordinator(co, host, HostClock::default());
        }
        for dep in ["calculator", "realtime", "openai-codex/default/ba7816"] {
            breakers.record(dep, 0, false, &ok, Now::new(t0, SystemTime::now()));
        }
        let mut step = 0u64;
        let wall = SystemTime::now();
        let label = format!("breaker admit_async+record_async (closed, ok, {name})");
        c.bench_function(&label, |b| {
            b.iter(|| {
                step += 1;
                let now = t0 + Duration::from_micros(step * 100);
                let d = breakers
                    .admit_async(black_box("crm_search"), 1, now)
                    .now_or_never();
                let r = breakers
                    .record_async("crm_search", 1, false, black_box(&ok), Now::new(now, wall))
                    .now_or_never();
                assert!(d.is_some() && r.is_some(), "a closed breaker waited");
                d
            })
        });
        // A coordinator call would have failed (nothing listens) and switched the host to local.
        assert_ne!(
            breakers.coordinator_mode(),
            Some("local"),
            "{name}: a call was made"
        );
    }
}

fn failover_decision(c: &mut Criterion) {
    let now = Instant::now();
    let schedules = Schedules::preset(Preset::Default);
    let fallbacks = vec!["anthropic/claude-opus".to_string()];
    let profiles = vec![
        ProfileView {
            id: "openai-codex:default".into(),
            cooling_until: None,
            cooldown_reason: None,
            open: false,
            last_used_ms: 10,
        },
        ProfileView {
            id: "openai-codex:backup".into(),
            cooling_until: None,
            cooldown_reason: None,
            open: false,
            last_used_ms: 5,
        },
    ];
    let ctx = FailoverCtx {
        policy: Policy::RetryGate,
        same_profile_retries: 1,
        backoff_ms: (300, 1200),
        schedules: &schedules,
        fallbacks: &fallbacks,
        context_fallbacks: &[],
        profiles: &profiles,
        counts: (0, 0),
    };
    let mut state = RequestState::new("openai-codex/gpt-5.2", "openai-codex");
    state.profile = "openai-codex:default".into();
    state.tried = vec![state.profile.clone()];
    let timeout = classify_reason(
        &AttemptResult::Timeout {
            phase: TimeoutPhase::Ttfb,
            tokens_received: 0,
        },
        SystemTime::now(),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    c.bench_function("failover decide (retry-gate, timeout)", |b| {
        b.iter(|| decide(black_box(&ctx), black_box(&state), &timeout, now, &mut rng))
    });
}

/// A transport whose every tool call answers at once (the cost measured is the engine's).
struct AnswersAtOnce;

impl rehearse::engine::Transport for AnswersAtOnce {
    fn send(
        &self,
        _call: rehearse::engine::Call,
    ) -> impl std::future::Future<Output = AttemptResult> + Send {
        std::future::ready(AttemptResult::Ok {
            tokens: 0,
            latency: Duration::from_millis(1),
            ttfb: None,
            longest_gap: None,
        })
    }
}

/// One tool call through `Engine::handle` (admit → deadline → send → observe → record → events),
/// with `[engine.timeouts] adaptive` off and on (warmed up: the window is full), same run.
fn adaptive_deadlines(c: &mut Criterion) {
    use rehearse::engine::timeouts::AdaptiveSwitch;
    use rehearse::engine::{Engine, EngineConfig, EngineOptions, EngineRequest, RequestKind};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let req = EngineRequest {
        id: 1,
        kind: RequestKind::Tool {
            name: "report_build".into(),
            body: serde_json::json!({"report": "weekly"}),
            idempotent: true,
            idempotency_key: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    };
    for on in [false, true] {
        let engine = rt.block_on(async {
            let mut cfg = EngineConfig::default();
            cfg.timeouts.adaptive = AdaptiveSwitch::All(on);
            let sink: Arc<dyn EventSink> = Arc::new(rehearse::engine::metrics::Metrics::new(0.0));
            let t0 = Instant::now();
            let breakers = Breakers::new(
                BreakerConfig::default(),
                rehearse::util::speed::Speed::ONE,
                7,
                sink.clone(),
                t0,
            );
            let opts = EngineOptions::new(t0);
            let admission: Arc<dyn Admission> = Arc::new(breakers);
            let e =
                Engine::new(cfg, Vec::new(), opts, AnswersAtOnce, admission, sink).expect("engine");
            for _ in 0..200 {
                e.handle(req.clone(), 0).await;
            }
            e
        });
        let label = format!(
            "tool call through Engine::handle (deadlines {})",
            if on { "adaptive" } else { "fixed" }
        );
        c.bench_function(&label, |b| {
            b.iter(|| rt.block_on(engine.handle(black_box(req.clone()), 0)))
        });
    }
}

criterion_group!(
    benches,
    breaker_decision,
    coordinated_decision,
    failover_decision,
    adaptive_deadlines
);
criterion_main!(benches);
