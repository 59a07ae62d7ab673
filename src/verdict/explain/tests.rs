//! Tests of a failed row's explanation ([`super`]).

use super::*;
use crate::gateway::openclaw::state::parse_state;

/// The run's clock started at wall 1_000_000 ms.
const T0: u64 = 1_000_000;

fn rec(t_ms: u64, fp: &str, fault: Option<&str>) -> UpstreamRecord {
    let dep = format!("mockai/default/{fp}");
    UpstreamRecord::llm_for_test(t_ms, T0 + t_ms, dep, Some("m1"), Some(fp), fault)
}

fn fps() -> BTreeMap<String, String> {
    [("mockai:a", "fpa"), ("mockai:b", "fpb")]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn decisions() -> Vec<LoggedDecision> {
    vec![
        LoggedDecision {
            wall_ms: T0 + 1_200,
            decision: Decision::SameModelRetry {
                attempt: 1,
                of: 8,
                target: "mockai/m1".into(),
                reason: Some("timeout".into()),
                delay_ms: 2_500,
            },
        },
        LoggedDecision {
            wall_ms: T0 + 14_000,
            decision: Decision::Failover {
                decision: "rotate_profile".into(),
                reason: Some("timeout".into()),
                retry_count: Some(8),
                profile_hash: Some(profile_hash("mockai:a")),
                provider: Some("mockai".into()),
                model: Some("m1".into()),
            },
        },
        LoggedDecision {
            wall_ms: T0 + 14_000,
            decision: Decision::ProfileFailureState {
                profile_hash: Some(profile_hash("mockai:a")),
                reason: Some("timeout".into()),
                cooldown_until_ms: Some(T0 + 44_000),
            },
        },
    ]
}

fn row(kind: ExpectKind, dep: &str, status: ExpectStatus) -> ExpectationResult {
    let mut r = ExpectationResult::counted(kind, dep.into(), "attempts in [4, 10]".into(), "15".into());
    r.status = status;
    r.ok = status == ExpectStatus::Pass;
    r.detail = format!("{dep} attempts in [4, 10]: observed 15");
    r
}

#[test]
fn a_failed_row_says_what_the_upstream_saw_for_its_profile_and_what_the_gateway_decided() {
    let records = vec![
        rec(1_000, "fpa", Some("reset")),
        rec(3_700, "fpa", Some("reset")),
        rec(14_100, "fpb", None),
    ];
    let fps = fps();
    let log = decisions();
    let state = parse_state(Some(
        format!(
        r#"{{"usageStats":{{"mockai:a":{{"cooldownUntil":{},"cooldownReason":"timeout","lastFailureAt":{},"errorCount":3}}}}}}"#,
        T0 + 44_000,
        T0 + 26_600
    )
    .as_str()))
    .unwrap();
    let trace = GatewayTrace {
        records: &records,
        profile_fps: &fps,
        decisions: Some(&log),
        auth: Some(&state),
    };
    let mut rows = vec![
        row(ExpectKind::Attempts, "mockai:a", ExpectStatus::Fail),
        row(ExpectKind::Attempts, "mockai:b", ExpectStatus::Pass),
        row(ExpectKind::Turn, "mockai:a", ExpectStatus::Fail),
    ];
    annotate(&mut rows, &trace);
    let d = &rows[0].detail;
    assert!(d.starts_with("mockai:a attempts in [4, 10]: observed 15 — "), "{d}");
    assert!(
        d.contains("the upstream saw for mockai:a (2 requests): 1.0s m1 reset, 3.7s m1 reset;"),
        "only key-A's requests, on the run's clock: {d}"
    );
    assert!(!d.contains("14.1s"), "key-B's request is not key-A's: {d}");
    assert!(
        d.contains("the gateway decided (3): 1.2s same_model_retry 1/8 mockai/m1 timeout wait 2.5s; 14.0s rotate_profile timeout from mockai:a mockai/m1 after 8 retries; 14.0s profile_failure_state mockai:a timeout cooldown until 44.0s"),
        "its decisions with the profile named, on the same clock: {d}"
    );
    assert!(
        d.contains("auth state: mockai:a: errors 3, last failure 26.6s, cooldown until 44.0s (17.4s timeout)"),
        "the cooldown measured from the last failure, not the rotation: {d}"
    );
    assert_eq!(rows[1].detail, "mockai:b attempts in [4, 10]: observed 15", "a pass is left alone");
    assert!(!rows[2].detail.contains("upstream saw"), "a turn row is not judged at the upstream");
}

#[test]
fn a_row_not_about_one_profile_lists_every_request_with_its_profile_and_caps_the_list() {
    let mut records: Vec<UpstreamRecord> = (0..45).map(|i| rec(i * 100, "fpa", Some("status"))).collect();
    records.push(rec(9_000, "fpb", None));
    records.push(rec(9_500, "fpz", None));
    let mut warm = rec(50, "fpb", None);
    warm.warmup = true;
    records.push(warm);
    let fps = fps();
    let trace = GatewayTrace {
        records: &records,
        profile_fps: &fps,
        decisions: Some(&[]),
        auth: None,
    };
    let text = explain(Some("all"), &trace);
    assert!(text.starts_with("the upstream saw for every profile (47 requests): 0.0s mockai:a m1 status"), "{text}");
    assert!(text.contains("… 7 more"), "capped at 40: {text}");
    assert!(text.ends_with("; the gateway decided (0): nothing"), "{text}");
    let text = explain(Some("mockai:b m1"), &trace);
    assert!(text.contains("for mockai:b (1 request): 9.0s m1 ok;"), "warm-up left out: {text}");
    // No log read (an http target): no decisions part.
    let trace = GatewayTrace { decisions: None, ..trace };
    assert!(!explain(Some("mockai:a"), &trace).contains("decided"));
}
