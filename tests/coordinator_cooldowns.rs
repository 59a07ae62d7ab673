//! Shared profile cooldowns through whole engines: two hosts' engines on one coordinator (the
//! in-process room on paused time, a real redis-server on real time). A rate limit that cools a
//! profile on one host keeps the other host off that profile; alone, the other host walks into
//! the same rate limit.

use std::sync::Arc;

use rehearse::engine::RequestKind;
use rehearse::engine::breaker::BreakerConfig;
use rehearse::engine::events::{Collector, EventKind, FanOut};
use rehearse::engine::{Engine, EngineConfig, EngineOptions, EngineRequest, Profile};
use tokio::time::Instant;

use crate::support::engine::{Reply, Scripted, of_kind};
use crate::support::fleet::{Backend, FOLLOW, Fleet};

const PROVIDER: &str = "openai-codex";
const P1: &str = "openai-codex:p1";
const P2: &str = "openai-codex:p2";

fn llm(id: u64) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Llm {
            model: format!("{PROVIDER}/gpt-5"),
            stream: false,
            max_tokens: Some(64),
            messages: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

/// p1 is rate limited (no Retry-After), p2 answers.
fn script() -> Scripted {
    Scripted::new(|call, _| {
        if call.bearer.as_deref() == Some(P1) {
            Reply::RateLimit(None)
        } else {
            Reply::Ok
        }
    })
}

/// One engine per host of `fleet`, each with its own transport and events (and the host's
/// breakers as admission, so the coordinated ones share cooldowns).
fn engines(fleet: &Fleet) -> Vec<(Engine<Scripted>, Scripted, Arc<Collector>)> {
    fleet
        .hosts
        .iter()
        .map(|h| {
            let t = script();
            let events = Arc::new(Collector::default());
            let sink = Arc::new(FanOut(vec![events.clone(), h.events.clone()]));
            let mut opts = EngineOptions::new(Instant::now());
            opts.seed = 11;
            let profiles = vec![Profile::new(PROVIDER, P1), Profile::new(PROVIDER, P2)];
            let e = Engine::new(
                EngineConfig::default(),
                profiles,
                opts,
                t.clone(),
                h.b.clone(),
                sink,
            )
            .expect("engine");
            (e, t, events)
        })
        .collect()
}

async fn cooled_on_one_host(be: Option<Backend>) -> (Vec<String>, usize) {
    let fleet = Fleet::new(be.as_ref(), 2, &BreakerConfig::default(), &[0]);
    let hosts = engines(&fleet);
    // h1 has sent nothing yet: it follows its configured profiles from its engine's start.
    let (e0, t0, _) = &hosts[0];
    let first = e0.handle(llm(1), 0).await;
    assert!(first.is_ok(), "{first:?}");
    assert_eq!(t0.profiles(), [P1, P2], "h0 cooled p1 and rotated");
    // A few follower rounds (real time with Redis).
    tokio::time::sleep(FOLLOW * 8).await;
    let (e1, t1, ev1) = &hosts[1];
    let before = t1.profiles().len();
    let resp = e1.handle(llm(2), 0).await;
    assert!(resp.is_ok(), "{resp:?}");
    let after: Vec<String> = t1.profiles().split_off(before);
    // The breakers' events (the engine's own collector never sees the follower's).
    let adopted = fleet.hosts[1]
        .events
        .events()
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::CooldownAdopted { profile, .. } if profile == P1))
        .count();
    assert!(of_kind(ev1, "cooldown_adopted").is_empty());
    (after, adopted)
}

async fn shared(be: Backend) {
    let (after, adopted) = cooled_on_one_host(Some(be)).await;
    assert_eq!(after, [P2], "h1 should skip the profile h0 cooled");
    assert!(adopted >= 1, "no cooldown_adopted event on h1");
}

#[tokio::test(start_paused = true)]
async fn a_cooldown_on_one_host_keeps_the_other_off_the_profile_in_process() {
    shared(Backend::in_process()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_on_one_host_keeps_the_other_off_the_profile_redis() {
    shared(Backend::redis()).await
}

/// The control: without a coordinator, h1 walks into p1's rate limit itself.
#[tokio::test(start_paused = true)]
async fn alone_the_other_host_hits_the_cooled_profile_again() {
    let (after, adopted) = cooled_on_one_host(None).await;
    assert_eq!(after, [P1, P2]);
    assert_eq!(adopted, 0);
}

/// A cooldown written while the coordinator is down is shared, with the time it has left, once
/// the host is back on it.
async fn held_while_down_then_shared(mut be: Backend) {
    use rehearse::engine::admission::Admission;
    use rehearse::engine::coordinator::CooldownWrite;
    use rehearse::engine::outcome::Reason;
    use std::time::Duration;

    let fleet = Fleet::new(Some(&be), 2, &BreakerConfig::default(), &[0]);
    fleet.hosts[1].b.follow_profiles(&[P1.to_string()]);
    // A dep both know, so their followers read (and notice the outage and the return).
    for h in &fleet.hosts {
        h.admit(crate::support::breaker::DEP, 0).await;
    }
    be.down();
    let local = fleet
        .until(Duration::from_secs(5), |f| {
            f.hosts[0].b.coordinator_mode() == Some("local")
        })
        .await;
    assert!(local.is_some(), "h0 never fell back");
    let write = CooldownWrite {
        cool_for: Duration::from_secs(30),
        reason: Some(Reason::RateLimit),
        error_count: 1,
        failure_counts: [("rate_limit".to_string(), 1)].into(),
    };
    assert_eq!(fleet.hosts[0].b.share_cooldown(P1, &write).await, None);
    be.restart();
    let seen = fleet
        .until(Duration::from_secs(5), |f| {
            let h = &f.hosts[1];
            h.b.mirrored_cooldown(P1, h.clock.now()).is_some()
        })
        .await;
    assert!(
        seen.is_some(),
        "h1 never saw the cooldown h0 wrote while it was down"
    );
    let (c, _) = fleet.hosts[1].b.shared_cooldown(P1).await.expect("shared");
    assert!(
        c.remaining <= write.cool_for && c.remaining > Duration::from_secs(20),
        "shared with {:?} left",
        c.remaining
    );
    assert_eq!(c.stats.cooldown_reason, Some(Reason::RateLimit));
}

#[tokio::test(start_paused = true)]
async fn a_cooldown_written_while_the_coordinator_is_down_is_shared_on_rejoin_in_process() {
    held_while_down_then_shared(Backend::in_process()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_written_while_the_coordinator_is_down_is_shared_on_rejoin_redis() {
    held_while_down_then_shared(Backend::redis()).await
}
