//! The gauges the shipped alerts need (docs/alerts.md): a breaker's open period
//! (`breaker_open_seconds`, `breaker_open_since_timestamp_seconds`) folded from its events, and
//! each provider's profiles cooling at scrape time (`provider_profiles`,
//! `provider_profiles_cooling`) read from the engine.

use std::sync::Arc;
use std::time::Duration;

use rehearse::engine::events::{BreakerState, Collector, Event, EventKind, EventSink};
use rehearse::engine::metrics::{Metrics, ProfilesAtScrape, ProviderProfiles};
use rehearse::engine::{
    AlwaysAllow, Engine, EngineConfig, EngineOptions, EngineRequest, Policy, Profile, RequestKind,
};
use tokio::time::Instant;

use crate::support::engine::{Reply, Scripted};
use crate::support::metrics::{START_UNIX, populated, promtool_check};

fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn open(dep: &str, t_ms: u64, from: BreakerState, open_for_ms: u64) -> Event {
    Event {
        t_ms,
        kind: EventKind::BreakerTransition {
            dep: dep.into(),
            from,
            to: BreakerState::Open,
            open_for_ms: Some(open_for_ms),
            reason: None,
        },
        log: None,
    }
}

#[test]
fn an_open_period_is_its_start_and_its_open_time_extended_by_retry_after() {
    // populated(): opened at 1.234 s for 30 s, a Retry-After kept it open until 121.234 s.
    let text = populated().render();
    let d = r#"{dep="we\"ird,dep\\name"}"#;
    assert_eq!(
        sample(&text, &format!("breaker_open_since_timestamp_seconds{d}")),
        Some(START_UNIX + 1.234),
        "{text}"
    );
    assert_eq!(
        sample(&text, &format!("breaker_open_seconds{d}")),
        Some(120.0)
    );
    // A dep whose breaker never opened has neither.
    assert_eq!(
        sample(&text, "breaker_open_seconds{dep=\"crm_search\"}"),
        None
    );
    for name in [
        "breaker_open_seconds",
        "breaker_open_since_timestamp_seconds",
    ] {
        assert!(text.contains(&format!("# TYPE {name} gauge\n")), "{name}");
    }
    let (ok, report) = promtool_check(&text);
    assert!(ok, "{report}");
}

#[test]
fn a_re_open_starts_a_new_period_with_its_doubled_open_time() {
    let m = Metrics::new(START_UNIX);
    m.emit(&open("crm_search", 1_000, BreakerState::Closed, 30_000));
    m.emit(&open("crm_search", 31_500, BreakerState::HalfOpen, 60_000));
    let text = m.render();
    assert_eq!(
        sample(
            &text,
            "breaker_open_since_timestamp_seconds{dep=\"crm_search\"}"
        ),
        Some(START_UNIX + 31.5)
    );
    assert_eq!(
        sample(&text, "breaker_open_seconds{dep=\"crm_search\"}"),
        Some(60.0)
    );
    // A Retry-After shorter than the open time does not shorten it.
    m.emit(&Event {
        t_ms: 40_000,
        kind: EventKind::RetryAfterSkip {
            dep: "crm_search".into(),
            until_ms: 20_000,
        },
        log: None,
    });
    assert_eq!(
        sample(&m.render(), "breaker_open_seconds{dep=\"crm_search\"}"),
        Some(60.0)
    );
}

struct Fixed(Vec<ProviderProfiles>);

impl ProfilesAtScrape for Fixed {
    fn profiles_at(&self, _now: Instant) -> Vec<ProviderProfiles> {
        self.0.clone()
    }
}

#[test]
fn provider_gauges_come_from_the_registered_source_at_each_render() {
    let m = Metrics::new(START_UNIX);
    assert!(
        m.render()
            .contains("# TYPE provider_profiles_cooling gauge\n")
    );
    assert_eq!(
        sample(&m.render(), "provider_profiles{provider=\"a\"}"),
        None
    );
    let source: Arc<dyn ProfilesAtScrape> = Arc::new(Fixed(vec![ProviderProfiles {
        provider: "a".into(),
        profiles: 3,
        cooling: 2,
    }]));
    m.profiles_at_scrape(Arc::downgrade(&source));
    let text = m.render();
    assert_eq!(
        sample(&text, "provider_profiles{provider=\"a\"}"),
        Some(3.0)
    );
    assert_eq!(
        sample(&text, "provider_profiles_cooling{provider=\"a\"}"),
        Some(2.0)
    );
    // A dropped source is skipped: the last values stay.
    drop(source);
    assert_eq!(
        sample(&m.render(), "provider_profiles_cooling{provider=\"a\"}"),
        Some(2.0)
    );
}

fn llm(id: u64) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Llm {
            model: "openai-codex/gpt-5".into(),
            stream: false,
            max_tokens: Some(256),
            messages: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

#[tokio::test(start_paused = true)]
async fn the_engine_counts_profiles_cooling_at_the_scrape() {
    // Every answer a 429 with Retry-After 120: both profiles cool for at least 120 s.
    let t = Scripted::new(|_, _| Reply::RateLimit(Some("120".into())));
    let start = Instant::now();
    let mut cfg = EngineConfig::default();
    cfg.model_failover.fallbacks = vec!["anthropic/claude".into()];
    let engine = Arc::new(
        Engine::new(
            cfg,
            vec![
                Profile::new("openai-codex", "openai-codex:p1"),
                Profile::new("openai-codex", "openai-codex:p2"),
            ],
            EngineOptions {
                policy: Policy::RetryGate,
                ..EngineOptions::new(start)
            },
            t,
            Arc::new(AlwaysAllow),
            Arc::new(Collector::default()),
        )
        .unwrap(),
    );
    let metrics = Metrics::new(START_UNIX).with_clock(start);
    let source: Arc<dyn ProfilesAtScrape> = engine.clone();
    metrics.profiles_at_scrape(Arc::downgrade(&source));
    let counts = |text: &str, p: &str| {
        (
            sample(text, &format!("provider_profiles{{provider=\"{p}\"}}")),
            sample(
                text,
                &format!("provider_profiles_cooling{{provider=\"{p}\"}}"),
            ),
        )
    };
    let text = metrics.render();
    assert_eq!(counts(&text, "openai-codex"), (Some(2.0), Some(0.0)));
    // The fallback's provider has its implicit profile.
    assert_eq!(counts(&text, "anthropic"), (Some(1.0), Some(0.0)));
    let _ = engine.handle(llm(1), 0).await;
    let text = metrics.render();
    assert_eq!(
        counts(&text, "openai-codex"),
        (Some(2.0), Some(2.0)),
        "{text}"
    );
    // The cooldowns run out: none cooling at the next scrape, with no request in between.
    tokio::time::sleep(Duration::from_secs(3_700)).await;
    let text = metrics.render();
    assert_eq!(
        counts(&text, "openai-codex"),
        (Some(2.0), Some(0.0)),
        "{text}"
    );
}
