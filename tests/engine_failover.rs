//! The failover engine end to end on paused time: retry gate, cooldowns, rotation, fallbacks,
//! under both policies, with a scripted transport and a seeded RNG.
//!
//! Longer than 400 lines on purpose: the failover scenarios share one rig and are easiest to
//! compare side by side.

use std::sync::Arc;

use rehearse::engine::EngineResponse;
use rehearse::engine::RequestKind;
use rehearse::engine::events::Collector;
use rehearse::engine::failover::store::CooldownStore;
use rehearse::engine::{
    AlwaysAllow, Engine, EngineConfig, EngineOptions, EngineRequest, Policy, Profile,
};
use tokio::time::Instant;

use std::time::Duration;

use crate::support::engine::{Reply, Scripted, cooldowns, deadline_logs, logs, of_kind};

const PROVIDER: &str = "openai-codex";
const MODEL: &str = "openai-codex/gpt-5";

fn llm(id: u64) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Llm {
            model: MODEL.into(),
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

fn profiles(n: usize) -> Vec<Profile> {
    (1..=n)
        .map(|i| Profile::new(PROVIDER, &format!("{PROVIDER}:p{i}")))
        .collect()
}

fn engine(
    cfg: EngineConfig,
    n: usize,
    policy: Policy,
    t: Scripted,
) -> (Engine<Scripted>, Arc<Collector>) {
    let sink = Arc::new(Collector::default());
    let mut opts = EngineOptions::new(Instant::now());
    opts.policy = policy;
    opts.seed = 7;
    let e = Engine::new(
        cfg,
        profiles(n),
        opts,
        t,
        Arc::new(AlwaysAllow),
        sink.clone(),
    )
    .unwrap();
    (e, sink)
}

#[tokio::test(start_paused = true)]
async fn a_healthy_request_succeeds_on_the_first_profile() {
    let t = Scripted::new(|_, _| Reply::Ok);
    let (e, sink) = engine(EngineConfig::default(), 2, Policy::RetryGate, t.clone());
    let resp = e.handle(llm(1), 0).await;
    assert!(resp.is_ok(), "{resp:?}");
    assert_eq!(resp.attempts, 1);
    assert_eq!(t.profiles(), ["openai-codex:p1"]);
    assert!(logs(&sink).is_empty());
}

fn sent_gap_ms(t: &Scripted, i: usize) -> u128 {
    let s = t.sent();
    (s[i].at - s[i - 1].at).as_millis()
}

fn rotations(sink: &Collector) -> usize {
    of_kind(sink, "profile_rotated").len()
}

#[tokio::test(start_paused = true)]
async fn one_timeout_retries_the_same_profile_after_jitter_without_cooldown_or_rotation() {
    let t = Scripted::new(|_, n| if n == 1 { Reply::Timeout } else { Reply::Ok });
    let (e, sink) = engine(EngineConfig::default(), 2, Policy::RetryGate, t.clone());
    let resp = e.handle(llm(1), 0).await;
    assert!(resp.is_ok(), "{resp:?}");
    assert_eq!(
        t.profiles(),
        ["openai-codex:p1", "openai-codex:p1"],
        "same profile, no rotation"
    );
    // The retry follows the 30 s TTFB deadline plus a jitter inside [300, 1200] ms.
    let jitter = sent_gap_ms(&t, 1) - 30_000;
    assert!((300..=1200).contains(&jitter), "jitter {jitter} ms");
    assert!(cooldowns(&sink).is_empty(), "no cooldown written");
    assert_eq!(rotations(&sink), 0);
    assert_eq!(
        logs(&sink),
        [format!(
            "Profile openai-codex:p1 timed out. Retry 1/1 in {jitter}ms..."
        )]
    );
    // The timeout's own line names the deadline that expired: the fixed 30 s TTFB.
    let expired = deadline_logs(&sink);
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert!(
        expired[0].starts_with("Deadline expired: openai-codex/")
            && expired[0].ends_with(" llm_inference ttfb after 30000ms (fixed deadline)"),
        "{expired:?}"
    );
    let store = e.store_snapshot();
    let p1 = store.stats("openai-codex:p1").unwrap();
    assert_eq!((p1.cooldown_until, p1.error_count), (None, None));
    assert!(p1.failure_counts.is_empty());
}

#[tokio::test(start_paused = true)]
async fn timeouts_beyond_the_gate_cool_10s_then_20s_and_rotate() {
    let t = Scripted::new(|c, _| {
        if c.bearer.as_deref() == Some("openai-codex:p1") {
            Reply::Timeout
        } else {
            Reply::Ok
        }
    });
    let (e, sink) = engine(EngineConfig::default(), 2, Policy::RetryGate, t.clone());
    let first = e.handle(llm(1), 0).await;
    assert!(first.is_ok(), "{first:?}");
    assert_eq!(
        t.profiles(),
        ["openai-codex:p1", "openai-codex:p1", "openai-codex:p2"]
    );
    assert_eq!(
        cooldowns(&sink),
        [("openai-codex:p1".into(), "timeout".into(), 10_000)]
    );
    let lines = logs(&sink);
    assert!(
        lines.contains(
            &"Profile openai-codex:p1 timed out (1 retries exhausted). Trying next account..."
                .to_string()
        ),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"Cooldown applied: 10000ms for timeout reason".to_string()),
        "{lines:?}"
    );
    let stats = e
        .store_snapshot()
        .stats("openai-codex:p1")
        .cloned()
        .unwrap();
    assert_eq!(
        stats.cooldown_until.unwrap() - stats.last_failure_at.unwrap(),
        10_000
    );
    // While p1 cools, requests go straight to p2.
    let during = e.handle(llm(2), 0).await;
    assert_eq!(during.attempts, 1);
    assert_eq!(t.profiles().last().unwrap(), "openai-codex:p2");
    // After the cooldown p1 (least recently used) is tried again: the second cooldown is 20 s.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let second = e.handle(llm(3), 0).await;
    assert!(second.is_ok(), "{second:?}");
    assert_eq!(
        cooldowns(&sink),
        [
            ("openai-codex:p1".into(), "timeout".into(), 10_000),
            ("openai-codex:p1".into(), "timeout".into(), 20_000)
        ]
    );
    assert!(logs(&sink).contains(&"Cooldown applied: 20000ms for timeout reason".to_string()));
    let stats = e
        .store_snapshot()
        .stats("openai-codex:p1")
        .cloned()
        .unwrap();
    assert_eq!(
        stats.cooldown_until.unwrap() - stats.last_failure_at.unwrap(),
        20_000
    );
    assert_eq!(stats.failure_counts.get("timeout"), Some(&2));
    assert_eq!(rotations(&sink), 2);
}

#[tokio::test(start_paused = true)]
async fn a_429_with_retry_after_120_rotates_at_once_and_cools_at_least_120s() {
    let t = Scripted::new(|c, _| {
        if c.bearer.as_deref() == Some("openai-codex:p1") {
            Reply::RateLimit(Some("120".into()))
        } else {
            Reply::Ok
        }
    });
    let (e, sink) = engine(EngineConfig::default(), 2, Policy::RetryGate, t.clone());
    let resp = e.handle(llm(1), 0).await;
    assert!(resp.is_ok(), "{resp:?}");
    assert_eq!(
        t.profiles(),
        ["openai-codex:p1", "openai-codex:p2"],
        "no same-profile retry"
    );
    assert!(sent_gap_ms(&t, 1) < 100, "rotation is immediate");
    assert!(of_kind(&sink, "same_profile_retry").is_empty());
    let cds = cooldowns(&sink);
    assert_eq!(cds.len(), 1);
    assert_eq!(
        (cds[0].0.as_str(), cds[0].1.as_str()),
        ("openai-codex:p1", "rate_limit")
    );
    assert!(cds[0].2 >= 120_000, "{cds:?}");
    let stats = e
        .store_snapshot()
        .stats("openai-codex:p1")
        .cloned()
        .unwrap();
    assert!(stats.cooldown_until.unwrap() - stats.last_failure_at.unwrap() >= 120_000);
    assert!(
        logs(&sink).contains(
            &"Profile openai-codex:p1 rate limited (Retry-After 120s). Trying next account..."
                .to_string()
        )
    );
    // Still cooling after 100 s: the next request skips p1.
    tokio::time::sleep(Duration::from_secs(100)).await;
    e.handle(llm(2), 0).await;
    assert_eq!(t.profiles().last().unwrap(), "openai-codex:p2");
}

#[tokio::test(start_paused = true)]
async fn a_429_with_an_http_date_retry_after_is_honoured() {
    let wall = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let ra = httpdate::fmt_http_date(wall + Duration::from_secs(600));
    let t = Scripted::new(move |c, _| {
        if c.bearer.as_deref() == Some("openai-codex:p1") {
            Reply::RateLimit(Some(ra.clone()))
        } else {
            Reply::Ok
        }
    });
    let (e, sink) = engine(EngineConfig::default(), 2, Policy::RetryGate, t.clone());
    let e = e.with_wall_start(wall);
    assert!(e.handle(llm(1), 0).await.is_ok());
    assert_eq!(cooldowns(&sink)[0].2, 600_000);
}

const FALLBACK: &str = "anthropic/claude-opus";

/// Profile 2 always times out; profiles 1 and 3 time out on every third call; the fallback model
/// is healthy. Twenty requests, one a second, each awaited (deterministic order).
async fn intermittent_timeouts(
    policy: Policy,
) -> (Vec<EngineResponse>, Arc<Collector>, Scripted, CooldownStore) {
    let t = Scripted::new(|c, n| match c.bearer.as_deref() {
        Some("openai-codex:p2") => Reply::Timeout,
        Some("openai-codex:p1" | "openai-codex:p3") if n % 3 == 0 => Reply::Timeout,
        _ => Reply::Ok,
    });
    let cfg = EngineConfig::from_toml(
        &format!("timeoutSeconds = 2\n[modelFailover]\nfallbacks = [\"{FALLBACK}\"]\n"),
        "test",
    )
    .unwrap();
    let (e, sink) = engine(cfg, 3, policy, t.clone());
    let mut out = Vec::new();
    for id in 0..20 {
        out.push(e.handle(llm(id), 0).await);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    (out, sink, t, e.store_snapshot())
}

fn cooled_profiles(sink: &Collector) -> std::collections::BTreeSet<String> {
    cooldowns(sink).into_iter().map(|(p, _, _)| p).collect()
}

const NO_PROFILE: &str =
    "No available auth profile for openai-codex (all in cooldown or unavailable).";

#[tokio::test(start_paused = true)]
async fn retry_gate_survives_intermittent_timeouts_and_cools_only_profile_2() {
    let (out, sink, t, store) = intermittent_timeouts(Policy::RetryGate).await;
    assert!(out.iter().all(|r| r.is_ok()), "{out:?}");
    assert!(
        out.iter()
            .all(|r| !r.fallback && r.model.as_deref() == Some(MODEL))
    );
    assert_eq!(
        cooled_profiles(&sink),
        ["openai-codex:p2".to_string()].into()
    );
    assert!(!logs(&sink).contains(&NO_PROFILE.to_string()));
    assert!(
        of_kind(&sink, "model_fallback").is_empty(),
        "the fallback is not used"
    );
    assert!(t.sent().iter().all(|s| s.model.as_deref() == Some(MODEL)));
    // p1 and p3 really did time out (and were retried on the same profile).
    let retried: std::collections::BTreeSet<String> = of_kind(&sink, "same_profile_retry")
        .into_iter()
        .filter_map(|e| match e.kind {
            rehearse::engine::EventKind::SameProfileRetry { profile, .. } => Some(profile),
            _ => None,
        })
        .collect();
    assert!(
        retried.contains("openai-codex:p1") && retried.contains("openai-codex:p3"),
        "{retried:?}"
    );
    // In the store, only p2 carries a cooldown and timeout failures.
    for (id, stats) in store.all() {
        let cooled = stats.cooldown_until.is_some() || stats.failure_counts.contains_key("timeout");
        assert_eq!(cooled, id == "openai-codex:p2", "{id}: {stats:?}");
    }
    assert_eq!(e_store_cooling(&sink), ["openai-codex:p2"]);
}

/// Profiles with a `cooldown_applied` event and no later success (from the event stream).
fn e_store_cooling(sink: &Collector) -> Vec<String> {
    let mut cooling = std::collections::BTreeSet::new();
    for ev in sink.events() {
        match ev.kind {
            rehearse::engine::EventKind::CooldownApplied { profile, .. } => {
                cooling.insert(profile);
            }
            rehearse::engine::EventKind::AttemptFinished {
                profile: Some(p),
                outcome: rehearse::engine::AttemptOutcome::Ok,
                ..
            } => {
                cooling.remove(&p);
            }
            _ => {}
        }
    }
    cooling.into_iter().collect()
}

#[tokio::test(start_paused = true)]
async fn legacy_cools_every_profile_logs_no_profile_and_uses_the_fallback() {
    let (out, sink, t, store) = intermittent_timeouts(Policy::Legacy).await;
    assert_eq!(
        cooled_profiles(&sink),
        ["openai-codex:p1", "openai-codex:p2", "openai-codex:p3"]
            .map(String::from)
            .into()
    );
    assert!(
        logs(&sink).contains(&NO_PROFILE.to_string()),
        "{:#?}",
        logs(&sink)
    );
    assert!(
        logs(&sink).contains(
            &"Profile openai-codex:p2 timed out (possible rate limit). Trying next account..."
                .to_string()
        )
    );
    assert!(
        of_kind(&sink, "same_profile_retry").is_empty(),
        "legacy never retries the same profile"
    );
    let fell_back: Vec<_> = out.iter().filter(|r| r.fallback).collect();
    assert!(!fell_back.is_empty(), "{out:?}");
    assert!(
        fell_back
            .iter()
            .all(|r| r.is_ok() && r.model.as_deref() == Some(FALLBACK))
    );
    assert!(
        t.sent()
            .iter()
            .any(|s| s.profile.as_deref() == Some("anthropic:default"))
    );
    // Every timeout cooled at once with the legacy schedule (1 min for a first failure).
    assert!(
        cooldowns(&sink)
            .iter()
            .all(|(_, r, ms)| r == "timeout" && *ms == 60_000)
    );
    for id in ["openai-codex:p1", "openai-codex:p2", "openai-codex:p3"] {
        let s = store.stats(id).unwrap();
        assert_eq!(s.failure_counts.get("timeout"), Some(&1), "{id}");
        assert!(s.cooldown_until.is_some(), "{id}");
    }
}

#[tokio::test(start_paused = true)]
async fn legacy_cools_a_single_timeout_at_once_and_rotates_without_retrying() {
    let t = Scripted::new(|c, n| match c.bearer.as_deref() {
        Some("openai-codex:p1") if n == 1 => Reply::Timeout,
        _ => Reply::Ok,
    });
    let (e, sink) = engine(EngineConfig::default(), 2, Policy::Legacy, t.clone());
    assert!(e.handle(llm(1), 0).await.is_ok());
    assert_eq!(t.profiles(), ["openai-codex:p1", "openai-codex:p2"]);
    assert_eq!(
        cooldowns(&sink),
        [("openai-codex:p1".into(), "timeout".into(), 60_000)]
    );
    assert_eq!(
        logs(&sink),
        [
            "Cooldown applied: 60000ms for timeout reason",
            "Profile openai-codex:p1 timed out (possible rate limit). Trying next account...",
        ]
    );
}
