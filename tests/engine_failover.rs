//! The failover engine end to end on paused time: retry gate, cooldowns, rotation, fallbacks,
//! under both policies, with a scripted transport and a seeded RNG.

use std::sync::Arc;

use rehearse::engine::events::Collector;
use rehearse::engine::{
    AlwaysAllow, Engine, EngineConfig, EngineOptions, EngineRequest, Policy, Profile, RequestKind,
};
use tokio::time::Instant;

use crate::support::engine::{Reply, Scripted, logs};

const PROVIDER: &str = "openai-codex";
const MODEL: &str = "openai-codex/gpt-5";

fn llm(id: u64) -> EngineRequest {
    EngineRequest {
        id,
        kind: RequestKind::Llm {
            model: MODEL.into(),
            stream: false,
            max_tokens: Some(256),
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
