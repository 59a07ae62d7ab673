//! Engine configuration (OpenClaw key names, unknown keys rejected, errors naming the key) and the
//! cooldown schedule tables of the three presets for failures 1–6.

use rehearse::engine::failover::cooldown::{Preset, REASONS, Schedules};
use rehearse::engine::{ConfigError, EngineConfig, Reason};

const S: u64 = 1_000;
const M: u64 = 60 * S;
const H: u64 = 60 * M;

fn table(p: Preset, r: Reason) -> Vec<Option<u64>> {
    let s = Schedules::preset(p);
    (1..=6)
        .map(|n| s.cooldown(r, n).map(|d| d.as_millis() as u64))
        .collect()
}

fn some(v: [u64; 6]) -> Vec<Option<u64>> {
    v.iter().copied().map(Some).collect()
}

#[test]
fn default_preset_schedule_table_for_failures_1_to_6() {
    let t = |r| table(Preset::Default, r);
    assert_eq!(
        t(Reason::Timeout),
        some([10 * S, 20 * S, 40 * S, 80 * S, 160 * S, 5 * M])
    );
    assert_eq!(t(Reason::RateLimit), some([M, 5 * M, 25 * M, H, H, H]));
    assert_eq!(
        t(Reason::Unknown),
        some([10 * S, 20 * S, 40 * S, 80 * S, 160 * S, 5 * M])
    );
    assert_eq!(t(Reason::Auth), some([10 * M, 20 * M, 40 * M, H, H, H]));
    assert_eq!(
        t(Reason::Billing),
        some([10 * M, 20 * M, 40 * M, 80 * M, 160 * M, 320 * M])
    );
    for r in [
        Reason::ServerError,
        Reason::Transport,
        Reason::StreamCut,
        Reason::Content,
        Reason::ContextOverflow,
    ] {
        assert_eq!(t(r), vec![None; 6], "{r:?} never cools under default");
    }
}

#[test]
fn openclaw_2026_9_preset_schedule_table_for_failures_1_to_6() {
    let t = |r| table(Preset::OpenClaw2026_9, r);
    let generic = some([30 * S, 60 * S, 300 * S, 300 * S, 300 * S, 300 * S]);
    for r in [
        Reason::Timeout,
        Reason::Transport,
        Reason::StreamCut,
        Reason::Unknown,
    ] {
        assert_eq!(t(r), generic, "{r:?}");
    }
    assert_eq!(
        t(Reason::RateLimit),
        some([30 * S, 60 * S, 120 * S, 240 * S, 480 * S, 960 * S])
    );
    assert_eq!(
        t(Reason::Billing),
        some([10 * M, 20 * M, 40 * M, 80 * M, 160 * M, 320 * M])
    );
    assert_eq!(t(Reason::Auth), some([10 * M, 20 * M, 40 * M, H, H, H]));
    for r in [
        Reason::ServerError,
        Reason::Content,
        Reason::ContextOverflow,
    ] {
        assert_eq!(
            t(r),
            vec![None; 6],
            "{r:?} never cools in openclaw@2026.9.6"
        );
    }
    // The caps: rate limits reach 24 h, billing stays at 24 h.
    let s = Schedules::preset(Preset::OpenClaw2026_9);
    assert_eq!(
        s.cooldown(Reason::RateLimit, 40).unwrap().as_millis() as u64,
        24 * H
    );
    assert_eq!(
        s.cooldown(Reason::Billing, 40).unwrap().as_millis() as u64,
        24 * H
    );
}

#[test]
fn legacy_preset_schedule_table_for_failures_1_to_6() {
    for r in REASONS {
        assert_eq!(
            table(Preset::Legacy, r),
            some([M, 5 * M, 25 * M, H, H, H]),
            "{r:?}"
        );
    }
}

#[test]
fn defaults_match_openclaw_names_and_design_values() {
    let cfg = EngineConfig::from_toml("", "empty").unwrap();
    assert_eq!(cfg, EngineConfig::default());
    assert_eq!(cfg.timeout_seconds, 30.0);
    assert_eq!(cfg.same_profile_retries(), 1);
    assert_eq!(cfg.backoff_range().unwrap(), (300, 1200));
    let cfg = EngineConfig::from_toml(
        r#"
timeoutSeconds = 45
[modelFailover]
fallbacks = ["anthropic/claude-opus"]
contextFallbacks = ["google/gemini-long"]
retrySameProfileOnTimeout = 2
retryBackoffMs = [100, 200]
[cooldowns]
preset = "openclaw-2026.9"
failureWindowHours = 12
[cooldowns.schedules.timeout]
stepsMs = [1000, 2000]
[cooldowns.schedules.server_error]
baseMs = 5000
factor = 3
capMs = 60000
"#,
        "scenario.toml",
    )
    .unwrap();
    assert_eq!(cfg.model_failover.fallbacks, ["anthropic/claude-opus"]);
    assert_eq!(cfg.same_profile_retries(), 2);
    let s = cfg.schedules().unwrap();
    assert_eq!(s.cooldown(Reason::Timeout, 5).unwrap().as_millis(), 2000);
    assert_eq!(
        s.cooldown(Reason::ServerError, 3).unwrap().as_millis(),
        45_000
    );
    assert_eq!(
        s.cooldown(Reason::RateLimit, 1).unwrap().as_millis(),
        30_000
    );
    let json =
        EngineConfig::from_json(r#"{"modelFailover": {"retryBackoffMs": [0, 0]}}"#, "x.json")
            .unwrap();
    assert_eq!(json.backoff_range().unwrap(), (0, 0));
}

fn err(toml: &str) -> ConfigError {
    EngineConfig::from_toml(toml, "scenario.toml").unwrap_err()
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    let e = err("[modelFailover]\nretrySameProfileOnTimout = 1\n");
    let msg = e.to_string();
    assert!(msg.contains("retrySameProfileOnTimout"), "{msg}");
    assert!(
        msg.contains("scenario.toml") && msg.contains("line 2"),
        "{msg}"
    );
    let msg = err("timeout_seconds = 3").to_string();
    assert!(msg.contains("timeout_seconds"), "{msg}");
    let msg = err("[cooldowns.schedules.sometimes]\nbaseMs = 1").to_string();
    assert!(msg.contains("sometimes"), "{msg}");
    let msg = EngineConfig::from_json(r#"{"modelFailover": {"fallback": []}}"#, "x.json")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("fallback") && msg.contains("x.json"), "{msg}");
}

#[test]
fn a_negative_backoff_is_an_error_naming_the_key() {
    let e = err("[modelFailover]\nretryBackoffMs = [-5, 1200]\n");
    assert_eq!(e.key(), Some("modelFailover.retryBackoffMs"), "{e}");
    assert!(e.to_string().contains("-5"), "{e}");
}

#[test]
fn min_above_max_backoff_is_an_error_naming_the_key() {
    let e = err("[modelFailover]\nretryBackoffMs = [1200, 300]\n");
    assert_eq!(e.key(), Some("modelFailover.retryBackoffMs"));
    assert!(e.to_string().contains("min 1200 > max 300"), "{e}");
    let e = err("[modelFailover]\nretryBackoffMs = [300]\n");
    assert_eq!(e.key(), Some("modelFailover.retryBackoffMs"));
}

#[test]
fn other_bad_values_are_errors_naming_their_keys() {
    let cases = [
        (
            "[modelFailover]\nretrySameProfileOnTimeout = -1",
            "modelFailover.retrySameProfileOnTimeout",
        ),
        (
            "[modelFailover]\nretrySameProfileOnTimeout = 1000",
            "modelFailover.retrySameProfileOnTimeout",
        ),
        ("timeoutSeconds = 0", "timeoutSeconds"),
        ("timeoutSeconds = -3", "timeoutSeconds"),
        (
            "[modelFailover]\nfallbacks = [\"\"]",
            "modelFailover.fallbacks[0]",
        ),
        (
            "[cooldowns]\nfailureWindowHours = 0",
            "cooldowns.failureWindowHours",
        ),
        (
            "[cooldowns.schedules.timeout]\nbaseMs = -1",
            "cooldowns.schedules.timeout.baseMs",
        ),
        (
            "[cooldowns.schedules.timeout]\nbaseMs = 10\ncapMs = 5",
            "cooldowns.schedules.timeout.capMs",
        ),
        (
            "[cooldowns.schedules.timeout]\nbaseMs = 10\nfactor = 0",
            "cooldowns.schedules.timeout.factor",
        ),
        (
            "[cooldowns.schedules.rate_limit]\nstepsMs = []",
            "cooldowns.schedules.rate_limit.stepsMs",
        ),
        (
            "[cooldowns.schedules.rate_limit]\nfactor = 2",
            "cooldowns.schedules.rate_limit",
        ),
    ];
    for (text, key) in cases {
        let e = err(text);
        assert_eq!(e.key(), Some(key), "{text:?} → {e}");
    }
    // Wrong types and unknown presets are parse errors naming the key, never panics.
    let msg = err("timeoutSeconds = \"thirty\"").to_string();
    assert!(msg.contains("timeoutSeconds"), "{msg}");
    let msg = err("[cooldowns]\npreset = \"openclaw\"").to_string();
    assert!(msg.contains("preset") || msg.contains("openclaw"), "{msg}");
}
