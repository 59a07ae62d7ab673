//! Table tests of the retry decision (budget shares, idempotency, classes) and the backoff.

use super::*;
use crate::engine::outcome::Reason;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn state(reason: Reason, attempts: u32, spent: u64, budget: Option<u64>) -> RetryState {
    RetryState {
        reason,
        attempts,
        spent,
        budget,
        idempotent: true,
        has_key: false,
    }
}

fn kind(d: RetryDecision) -> &'static str {
    match d {
        RetryDecision::Retry { .. } => "retry",
        RetryDecision::BudgetExhausted => "exhausted",
        RetryDecision::NotIdempotent => "not_idempotent",
        RetryDecision::ContextFallback => "context_fallback",
        RetryDecision::GiveUp => "give_up",
    }
}

#[test]
fn retry_decision_table() {
    let cfg = BudgetConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let b = Some(1000);
    let table = [
        (state(Reason::ServerError, 1, 0, b), "retry"),
        (state(Reason::Timeout, 1, 899, b), "retry"),
        (state(Reason::Timeout, 1, 900, b), "exhausted"), // 90 % spent: no transient retry
        (state(Reason::RateLimit, 1, 950, b), "exhausted"),
        (state(Reason::Content, 1, 699, b), "retry"),
        (state(Reason::Content, 1, 700, b), "exhausted"), // 70 % for self-correction
        (state(Reason::ContextOverflow, 1, 0, b), "context_fallback"),
        (state(Reason::Auth, 1, 0, b), "give_up"),
        (state(Reason::Transport, 3, 0, b), "give_up"), // maxAttempts
        (state(Reason::Transport, 2, 5_000, None), "retry"), // no budget: attempts only
        (
            RetryState {
                idempotent: false,
                ..state(Reason::ServerError, 1, 0, b)
            },
            "not_idempotent",
        ),
        (
            RetryState {
                idempotent: false,
                has_key: true,
                ..state(Reason::ServerError, 1, 0, b)
            },
            "retry",
        ),
    ];
    for (s, want) in table {
        assert_eq!(
            kind(decide_retry(
                &cfg,
                &s,
                crate::util::speed::sp(1.0),
                &mut rng
            )),
            want,
            "{s:?}"
        );
    }
}

#[test]
fn full_jitter_backoff_stays_under_the_doubling_ceiling_and_is_seeded() {
    let cfg = BudgetConfig::default();
    let mut a = ChaCha8Rng::seed_from_u64(3);
    let mut b = ChaCha8Rng::seed_from_u64(3);
    for retry in 1..=8u32 {
        let ceiling = (Duration::from_millis(200) * 2u32.pow(retry - 1)).min(cfg.backoff_cap);
        let mut max_seen = Duration::ZERO;
        for _ in 0..200 {
            let d = backoff(&cfg, retry, crate::util::speed::sp(1.0), &mut a);
            assert!(d <= ceiling, "retry {retry}: {d:?} > {ceiling:?}");
            assert_eq!(d, backoff(&cfg, retry, crate::util::speed::sp(1.0), &mut b));
            max_seen = max_seen.max(d);
        }
        assert!(max_seen > ceiling / 2, "full jitter spans the range");
    }
    let fast = backoff(
        &cfg,
        1,
        crate::util::speed::sp(10.0),
        &mut ChaCha8Rng::seed_from_u64(3),
    );
    let slow = backoff(
        &cfg,
        1,
        crate::util::speed::sp(1.0),
        &mut ChaCha8Rng::seed_from_u64(3),
    );
    assert_eq!(fast, slow / 10);
}

#[test]
fn degradation_ladder_order() {
    assert_eq!(
        ladder(Some("openai/gpt-5-mini"), Some("openai/gpt-5.2"), 12),
        vec![
            Rung::LighterModel("openai/gpt-5-mini".into()),
            Rung::PartialResult { tokens: 12 },
            Rung::Fail
        ]
    );
    assert_eq!(ladder(Some("m"), Some("m"), 0), vec![Rung::Fail]);
    assert_eq!(ladder(None, None, 0), vec![Rung::Fail]);
}

#[test]
fn config_keys_and_validation() {
    let c: BudgetConfig = toml::from_str("transientRatio = 0.5\nbackoffBase = \"1s\"").unwrap();
    assert_eq!(c.transient_ratio, 0.5);
    assert!(c.validate().is_ok());
    let bad = BudgetConfig {
        content_ratio: 1.5,
        ..BudgetConfig::default()
    };
    assert_eq!(bad.validate().unwrap_err().key, "contentRatio");
    assert!(toml::from_str::<BudgetConfig>("maxRetries = 3").is_err());
}
