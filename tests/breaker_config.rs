//! The `[engine.breaker]`, `[engine.timeouts]`, `[engine.budget]`, `[engine.health]` and
//! `[engine.throttle]` sub-tables: defaults, camelCase keys, unknown keys and bad values named.

use std::time::Duration;

use rehearse::engine::EngineConfig;
use rehearse::engine::events::OpClass;

#[test]
fn sub_tables_parse_with_defaults_and_override_deadlines() {
    let text = r#"
timeoutSeconds = 20
[breaker]
openFor = "10s"
consecutiveFailures = 3
[timeouts]
toolCall = "5s"
[budget]
maxAttempts = 2
[health]
interval = "2s"
[throttle]
tokensPerMinute = 5000
cheaperModel = "openai/gpt-5-mini"
"#;
    let cfg = EngineConfig::from_toml(text, "scenario.toml").expect("valid");
    assert_eq!(cfg.breaker.open_for, Duration::from_secs(10));
    assert_eq!(
        cfg.breaker.min_calls, 20,
        "untouched keys keep their defaults"
    );
    assert_eq!(cfg.budget.max_attempts, 2);
    assert_eq!(cfg.throttle.tokens_per_minute, Some(5000));
    let tool = cfg.deadlines(OpClass::ToolCall, rehearse::util::speed::Speed::ONE);
    assert_eq!(tool.total, Duration::from_secs(5));
    let llm = cfg.deadlines(OpClass::LlmInference, crate::support::speed(2.0));
    assert_eq!(
        llm.ttfb,
        Some(Duration::from_secs(10)),
        "timeoutSeconds / speed"
    );
    assert_eq!(llm.total, Duration::from_secs(60));
    assert_eq!(EngineConfig::default().breaker.consecutive_failures, 5);
}

#[test]
fn unknown_keys_and_bad_values_name_the_key() {
    let err = EngineConfig::from_toml("[breaker]\nopen_for = \"1s\"\n", "s.toml").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("open_for") && msg.contains("s.toml"), "{msg}");
    for (text, key) in [
        ("[breaker]\nfailureRatio = 1.5\n", "breaker.failureRatio"),
        (
            "[breaker]\nprobeDistinctWorkers = 3\n",
            "breaker.probeDistinctWorkers",
        ),
        ("[timeouts]\nllmTotal = \"0s\"\n", "timeouts.llmTotal"),
        ("[budget]\ntransientRatio = -0.1\n", "budget.transientRatio"),
        ("[health]\ninterval = \"0s\"\n", "health.interval"),
    ] {
        let err = EngineConfig::from_toml(text, "s.toml").unwrap_err();
        assert_eq!(err.key(), Some(key), "{text}: {err}");
    }
}
