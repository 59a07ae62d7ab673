//! Table tests of the pure failover decision.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

use super::*;
use crate::engine::events::AttemptOutcome;
use crate::engine::outcome::TimeoutPhase;

fn view(id: &str) -> ProfileView {
    ProfileView {
        id: id.into(),
        cooling_until: None,
        cooldown_reason: None,
        open: false,
        last_used_ms: 0,
    }
}

fn failed(reason: Reason, retry_after: Option<Duration>) -> Classified {
    Classified {
        reason: Some(reason),
        phase: (reason == Reason::Timeout).then_some(TimeoutPhase::Ttfb),
        retry_after,
        outcome: AttemptOutcome::Timeout,
    }
}

struct Fixture {
    schedules: Schedules,
    fallbacks: Vec<String>,
    context: Vec<String>,
    views: Vec<ProfileView>,
}

impl Fixture {
    fn new(n: usize) -> Self {
        Self {
            schedules: Schedules::preset(Preset::Default),
            fallbacks: vec!["anthropic/claude-opus".into()],
            context: vec!["google/gemini-long".into()],
            views: (1..=n).map(|i| view(&format!("p{i}"))).collect(),
        }
    }

    fn ctx(&self, policy: Policy, counts: (u32, u32)) -> FailoverCtx<'_> {
        FailoverCtx {
            policy,
            same_profile_retries: 1,
            backoff_ms: (300, 1200),
            schedules: &self.schedules,
            fallbacks: &self.fallbacks,
            context_fallbacks: &self.context,
            profiles: &self.views,
            counts,
        }
    }
}

fn state(profile: &str, retries: u32) -> RequestState {
    let mut s = RequestState::new("openai-codex/gpt-5", "openai-codex");
    s.profile = profile.into();
    s.tried = vec![profile.into()];
    s.same_profile_retries = retries;
    s
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(1)
}

#[test]
fn decision_table() {
    let now = Instant::now();
    let f = Fixture::new(2);
    let gate = Policy::RetryGate;
    let cases: Vec<(&str, Policy, Classified, u32, &str)> = vec![
        (
            "ok",
            gate,
            Classified {
                reason: None,
                phase: None,
                retry_after: None,
                outcome: AttemptOutcome::Ok,
            },
            0,
            "done",
        ),
        (
            "first timeout",
            gate,
            failed(Reason::Timeout, None),
            0,
            "retry",
        ),
        (
            "second timeout",
            gate,
            failed(Reason::Timeout, None),
            1,
            "rotate p2",
        ),
        (
            "legacy timeout",
            Policy::Legacy,
            failed(Reason::Timeout, None),
            0,
            "rotate p2",
        ),
        (
            "429",
            gate,
            failed(Reason::RateLimit, Some(Duration::from_secs(120))),
            0,
            "rotate p2",
        ),
        (
            "503",
            gate,
            failed(Reason::ServerError, None),
            0,
            "rotate p2",
        ),
        ("content", gate, failed(Reason::Content, None), 0, "fail"),
        (
            "context",
            gate,
            failed(Reason::ContextOverflow, None),
            0,
            "fallback google/gemini-long",
        ),
    ];
    for (name, policy, outcome, retries, want) in cases {
        let step = decide(
            &f.ctx(policy, (0, 0)),
            &state("p1", retries),
            &outcome,
            now,
            &mut rng(),
        );
        let got = match &step.choice {
            Choice::Done => "done".to_string(),
            Choice::RetrySame { .. } => "retry".to_string(),
            Choice::Rotate { to } => format!("rotate {to}"),
            Choice::Fallback { model } => format!("fallback {model}"),
            Choice::Fail => "fail".to_string(),
        };
        assert_eq!(got, want, "case {name}");
    }
}

#[test]
fn retry_gate_jitter_stays_inside_the_backoff_range_and_writes_nothing() {
    let f = Fixture::new(2);
    let mut r = rng();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..500 {
        let step = decide(
            &f.ctx(Policy::RetryGate, (0, 0)),
            &state("p1", 0),
            &failed(Reason::Timeout, None),
            Instant::now(),
            &mut r,
        );
        let Choice::RetrySame { delay } = step.choice else {
            panic!("expected a retry, got {:?}", step.choice);
        };
        assert!((300..=1200).contains(&delay.as_millis()), "{delay:?}");
        assert_eq!(step.cooldown, None);
        seen.insert(delay.as_millis() / 100);
    }
    assert!(
        seen.len() >= 9,
        "jitter should spread over the range: {seen:?}"
    );
}

#[test]
fn rate_limit_cools_for_the_longer_of_schedule_and_retry_after() {
    let f = Fixture::new(2);
    let now = Instant::now();
    let long = decide(
        &f.ctx(Policy::RetryGate, (0, 0)),
        &state("p1", 0),
        &failed(Reason::RateLimit, Some(Duration::from_secs(120))),
        now,
        &mut rng(),
    );
    assert_eq!(long.cooldown.unwrap().duration, Duration::from_secs(120));
    let short = decide(
        &f.ctx(Policy::RetryGate, (0, 0)),
        &state("p1", 0),
        &failed(Reason::RateLimit, Some(Duration::from_secs(5))),
        now,
        &mut rng(),
    );
    assert_eq!(short.cooldown.unwrap().duration, Duration::from_secs(60));
}

#[test]
fn legacy_escalates_on_the_shared_error_count_retry_gate_per_reason() {
    let f = Fixture::new(2);
    let now = Instant::now();
    // Two earlier failures of another reason: legacy's third failure cools 25 min, the retry
    // gate's first timeout cools 10 s.
    let legacy = decide(
        &f.ctx(Policy::Legacy, (2, 0)),
        &state("p1", 0),
        &failed(Reason::Timeout, None),
        now,
        &mut rng(),
    );
    assert_eq!(
        legacy.cooldown.unwrap().duration,
        Duration::from_secs(25 * 60)
    );
    let gate = decide(
        &f.ctx(Policy::RetryGate, (2, 0)),
        &state("p1", 1),
        &failed(Reason::Timeout, None),
        now,
        &mut rng(),
    );
    assert_eq!(gate.cooldown.unwrap().duration, Duration::from_secs(10));
}

#[test]
fn all_profiles_cooling_logs_no_profile_and_falls_back() {
    let now = Instant::now();
    let mut f = Fixture::new(2);
    f.views[1].cooling_until = Some(now + Duration::from_secs(30));
    let step = decide(
        &f.ctx(Policy::Legacy, (0, 0)),
        &state("p1", 0),
        &failed(Reason::Timeout, None),
        now,
        &mut rng(),
    );
    assert_eq!(
        step.choice,
        Choice::Fallback {
            model: "anthropic/claude-opus".into()
        }
    );
    let logs: Vec<_> = step.events.iter().filter_map(|(_, l)| l.clone()).collect();
    assert_eq!(
        logs,
        [
            "Cooldown applied: 60000ms for timeout reason",
            "Profile p1 timed out (possible rate limit). Trying next account...",
            "No available auth profile for openai-codex (all in cooldown or unavailable).",
            "Model Fallback: anthropic/claude-opus (selected openai-codex/gpt-5; timeout)",
        ]
    );
}

#[test]
fn tried_but_healthy_profiles_fail_without_fallback() {
    let now = Instant::now();
    let f = Fixture::new(2);
    let mut s = state("p2", 0);
    s.tried = vec!["p1".into(), "p2".into()];
    let step = decide(
        &f.ctx(Policy::RetryGate, (0, 0)),
        &s,
        &failed(Reason::ServerError, None),
        now,
        &mut rng(),
    );
    assert_eq!(step.choice, Choice::Fail);
    assert_eq!(
        step.cooldown, None,
        "5xx is the breaker's business under the default preset"
    );
}

#[test]
fn open_breakers_count_as_unavailable_and_rotation_prefers_least_recently_used() {
    let now = Instant::now();
    let mut views = vec![view("a"), view("b"), view("c")];
    views[0].last_used_ms = 5;
    views[1].open = true;
    views[2].last_used_ms = 3;
    assert_eq!(pick_profile(&views, &[], now).as_deref(), Some("c"));
    assert_eq!(
        pick_profile(&views, &["c".into()], now).as_deref(),
        Some("a")
    );
    assert_eq!(pick_profile(&views, &["a".into(), "c".into()], now), None);
    views[2].cooling_until = Some(now);
    assert_eq!(
        pick_profile(&views, &[], now).as_deref(),
        Some("c"),
        "an expired cooldown is over"
    );
}
