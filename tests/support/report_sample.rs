//! The sample two-policy report the report tests render: built from the committed scrape
//! fixture through the real builders, with a window fault and a `first = 1` fault, exact
//! latencies, and marks that differ by policy (legacy cools, rotates and falls back; the retry
//! gate retries).

use rehearse::report::build::{PolicyInput, build_policy};
use rehearse::report::marks::{
    CooldownMark, DeadlineMark, FallbackMark, Marks, RetryMark, RotationMark,
};
use rehearse::report::model::{
    FaultHit, FaultWindow, Lag, Latency, ProfileInfo, ReplayInfo, Report, SCHEMA_VERSION, TimeBase,
};
use rehearse::scrape::{CompactScrapes, ScrapeLog};
use rehearse::verdict::{Expectations, ProbeArrival};

/// The expectations of the sample report.
pub const EXPECT: &str = r#"
[[transition]]
dep = "ws_realtime"
from = "closed"
to = "open"
at = "5s"
tolerance = "300ms"
[[metric]]
series = 'profile_cooldowns_total{reason="timeout"}'
equals = 0
policy = "retry-gate"
[[metric]]
series = 'profile_cooldowns_total{reason="timeout"}'
at_least = 3
policy = "legacy"
[[no_transition]]
dep = "calculator"
"#;

/// A window fault on crm_search and a `first = 1` fault that applied once.
fn sample_faults() -> Vec<FaultWindow> {
    vec![
        FaultWindow {
            index: 0,
            route: "tool:crm_search".into(),
            kind: "status".into(),
            from_ms: 1_200,
            until_ms: Some(3_000),
            detail: "status=503".into(),
            profile: None,
            model: None,
            first: None,
            probability: 1.0,
            lanes: vec!["crm_search".into()],
            applied: vec![],
            applied_count: 9,
        },
        FaultWindow {
            index: 1,
            route: "tool:crm_search".into(),
            kind: "rate_limit".into(),
            from_ms: 1_000,
            until_ms: None,
            detail: "retry_after=\"4s\"".into(),
            profile: None,
            model: None,
            first: Some(1),
            probability: 1.0,
            lanes: vec!["crm_search".into()],
            applied: vec![FaultHit {
                t_ms: 1_050,
                dep: "crm_search".into(),
            }],
            applied_count: 1,
        },
    ]
}

fn legacy_marks() -> Marks {
    Marks {
        retry_after: vec![DeadlineMark {
            dep: "crm_search".into(),
            t_ms: 2_000,
            until_ms: 5_050,
        }],
        cooldowns: vec![CooldownMark {
            profile: "openai-codex:default".into(),
            t_ms: 1_500,
            until_ms: 4_500,
            reason: "timeout".into(),
        }],
        rotations: vec![RotationMark {
            t_ms: 1_500,
            from: "openai-codex:default".into(),
            to: None,
            reason: "timeout".into(),
        }],
        retries: vec![],
        fallbacks: vec![FallbackMark {
            t_ms: 1_510,
            from: "openai-codex/gpt-5.2".into(),
            to: "anthropic/claude-opus".into(),
        }],
        dropped: 0,
    }
}

fn gate_marks() -> Marks {
    Marks {
        retries: vec![RetryMark {
            t_ms: 1_500,
            profile: "openai-codex:default".into(),
            delay_ms: 481,
        }],
        ..Marks::default()
    }
}

/// A two-policy report built from the committed scrape fixture.
pub fn sample_report() -> Report {
    let log = ScrapeLog::from_prom(include_str!(
        "../../fixtures/metrics/breaker-flap.scrapes.prom"
    ))
    .unwrap();
    let log = CompactScrapes::from_log(&log, 1_790_000_000.0);
    let expect: Expectations = toml::from_str(EXPECT).unwrap();
    let arrivals = vec![ProbeArrival {
        dep: "crm_search".into(),
        t_ms: 3_200,
        probe: true,
    }];
    let replay = ReplayInfo {
        sent: 60,
        lag_ms: Lag {
            p50: 0.4,
            p99: 2.1,
            max: 3.5,
        },
    };
    let policies: Vec<_> = ["legacy", "retry-gate"]
        .into_iter()
        .map(|policy| {
            build_policy(PolicyInput {
                policy,
                expect: &expect.for_policy(policy),
                scrapes: &log,
                events: None,
                scrape_interval_ms: 250,
                arrivals: &arrivals,
                speed: rehearse::util::speed::Speed::ONE,
                fault_windows: sample_faults(),
                latency: [(
                    "crm_search".to_string(),
                    Latency {
                        // 0.30000000000000004: report.json writes it rounded.
                        p50_ms: 0.1 + 0.2,
                        p99_ms: 0.48,
                        max_ms: 0.6,
                        count: 20,
                        exact: true,
                    },
                )]
                .into(),
                marks: if policy == "legacy" {
                    legacy_marks()
                } else {
                    gate_marks()
                },
                replay: Some(replay),
                failed_requests: Some(4),
                user_visible_errors: Some(1),
                elapsed_ms: 6_000,
                canaries: [("crm_search".to_string(), (3, 2))].into(),
                stopped_at_ms: None,
                final_exposition: None,
                engine_catalogue: true,
                faults: None,
            })
        })
        .collect();
    Report {
        schema_version: SCHEMA_VERSION,
        scenario: "crm-search-503-storm".into(),
        description: Some("fixture".into()),
        verdict: Report::verdict_from_policies(&policies),
        reason: None,
        stopped: None,
        started_at: "2026-11-29T18:55:00.000Z".into(),
        duration_ms: 6_000,
        time_base: TimeBase::Scenario,
        profiles: vec![ProfileInfo {
            id: "openai-codex:default".into(),
            dep: "openai-codex/default/06bfb5".into(),
            provider: "openai-codex".into(),
            region: "default".into(),
            implicit: false,
        }],
        speed: rehearse::util::speed::Speed::ONE.into(),
        seed: 7,
        host: serde_json::json!({"os": "linux", "tcp": {"syn_retries": 6}}),
        traffic: None,
        policies,
        replay: ReplayInfo::combine(&[replay]),
        contradictions: vec![],
        notes: vec![],
        config: serde_json::json!({"workers": 4}),
        fleet: None,
        target: None,
        rehearse_version: None,
        scenario_digest: None,
        target_file: None,
        versions: None,
        targets: None,
        drift: None,
        housekeeping: None,
    }
}
