//! The key figures' rules on hand-made inputs.

use super::*;
use crate::report::marks::{CooldownMark, FallbackMark, RotationMark};
use crate::scrape::Timing;

fn tr(dep: &str, from: BreakerState, to: BreakerState, t_ms: u64) -> Transition {
    Transition {
        dep: dep.into(),
        from,
        to,
        t_ms,
        timing: Timing::Event,
        reason: None,
    }
}

fn window(from_ms: u64, applied: u64) -> FaultWindow {
    serde_json::from_value(serde_json::json!({
        "route": "tool:crm_search", "kind": "status", "from_ms": from_ms,
        "until_ms": from_ms + 10_000, "applied_count": applied,
    }))
    .unwrap()
}

use BreakerState::{Closed, HalfOpen, Open};

#[test]
fn breaker_figures_come_from_the_first_spell_and_the_fault_before_it() {
    let ts = [
        tr("crm", Closed, Open, 12_500),
        tr("crm", Open, HalfOpen, 17_500),
        tr("crm", HalfOpen, Open, 18_000),
        tr("crm", Open, HalfOpen, 28_000),
        tr("crm", HalfOpen, Closed, 29_500),
    ];
    // An unapplied window at 11 s is not the fault that opened it.
    let windows = [window(10_000, 40), window(11_000, 0)];
    let probes = vec![
        ("crm".to_string(), 17_600),
        ("crm".to_string(), 28_100),
        ("crm".to_string(), 28_900),
        ("other".to_string(), 17_700),
    ];
    let k = compute(&FigureInput {
        transitions: &ts,
        fault_windows: &windows,
        probes,
        lag_p99_ms: 2.5,
        statuses: vec![ExpectStatus::Pass, ExpectStatus::Fail, ExpectStatus::Pass],
        ..Default::default()
    });
    let d = &k.deps["crm"];
    assert_eq!(d.time_to_open_ms, Some(2_500));
    assert_eq!(d.open_ms, Some(5_000));
    assert_eq!(d.half_open_to_closed_ms, Some(1_500));
    assert_eq!(d.openings, 2);
    assert_eq!(d.probes_per_half_open, Some(1.5));
    assert_eq!((k.expectations_passed, k.expectations_failed), (2, 1));
    assert_eq!(k.replay_lag_p99_ms, 2.5);
}

#[test]
fn what_the_run_watched_has_figures_at_zero_and_what_it_could_not_see_has_none() {
    let ts = [tr("crm", Closed, Open, 3_000)];
    let k = compute(&FigureInput {
        transitions: &ts,
        watched_deps: ["crm".to_string(), "calculator".to_string()].into(),
        providers: ["openai".to_string()].into(),
        marks: Some(&Marks::default()),
        ..Default::default()
    });
    // Watched, never opened: openings 0 (a value), no times (it never got there).
    let calm = &k.deps["calculator"];
    assert_eq!((calm.openings, calm.time_to_open_ms), (0, None));
    let flat = k.flat();
    assert_eq!(flat.get("openings{calculator}"), Some(&0.0));
    assert_eq!(flat.get("openings{crm}"), Some(&1.0));
    assert!(!flat.contains_key("open_ms{calculator}"));
    // A provider of the scenario that never rotated: counted, at 0.
    assert_eq!(flat.get("fallbacks{openai}"), Some(&0.0));
    assert_eq!(flat.get("cooldowns{openai}"), Some(&0.0));
    // A gateway whose auth state was not read: its cooldowns are unknown, not 0.
    let k = compute(&FigureInput {
        providers: ["mockai".to_string()].into(),
        ..Default::default()
    });
    assert_eq!(k.providers["mockai"].cooldowns, None);
    assert!(!k.flat().contains_key("cooldowns{mockai}"));
    assert_eq!(k.flat().get("rotations{mockai}"), Some(&0.0));
}

#[test]
fn a_breaker_that_never_closed_has_no_closing_figure() {
    let ts = [tr("crm", Closed, Open, 3_000)];
    let k = compute(&FigureInput {
        transitions: &ts,
        ..Default::default()
    });
    let d = &k.deps["crm"];
    assert_eq!((d.time_to_open_ms, d.open_ms, d.half_open_to_closed_ms), (None, None, None));
    assert_eq!(d.probes_per_half_open, None);
}

#[test]
fn an_engines_marks_give_rotations_fallbacks_and_cooldowns_per_provider() {
    let marks = Marks {
        rotations: vec![
            RotationMark {
                t_ms: 10_400,
                from: "openai:a".into(),
                to: Some("openai:b".into()),
                reason: "rate_limit".into(),
            },
            RotationMark {
                t_ms: 11_000,
                from: "openai:b".into(),
                to: None,
                reason: "rate_limit".into(),
            },
        ],
        fallbacks: vec![FallbackMark {
            t_ms: 11_200,
            from: "openai/gpt".into(),
            to: "anthropic/claude".into(),
        }],
        cooldowns: vec![CooldownMark {
            profile: "openai:a".into(),
            t_ms: 10_400,
            until_ms: 70_000,
            reason: "rate_limit".into(),
        }],
        ..Default::default()
    };
    let provider_of = [("openai:a", "openai"), ("openai:b", "openai")]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .into();
    let windows = [window(10_000, 5)];
    let k = compute(&FigureInput {
        fault_windows: &windows,
        marks: Some(&marks),
        provider_of,
        ..Default::default()
    });
    let p = &k.providers["openai"];
    assert_eq!((p.rotations, p.fallbacks, p.cooldowns), (2, 1, Some(1)));
    assert_eq!(p.time_to_first_rotation_ms, Some(400));
    assert_eq!(p.time_to_first_fallback_ms, Some(1_200));
}

fn sent(t_ms: u64, provider: &str, profile: &str, model: &str, faulted: bool) -> Sent {
    Sent {
        t_ms,
        provider: provider.into(),
        profile: Some(profile.into()),
        model: Some(model.into()),
        faulted,
    }
}

#[test]
fn a_gateways_rotations_and_fallbacks_are_read_from_what_it_sent() {
    let seq = vec![
        sent(1_000, "mockai", "A", "m1", false),
        sent(2_000, "mockai", "B", "m1", false), // round robin, not a rotation
        sent(5_000, "mockai", "B", "m1", true),
        sent(5_300, "mockai", "A", "m1", true), // rotation B → A
        sent(5_900, "backup", "C", "m2", false), // fallback away from mockai
        sent(7_000, "mockai", "A", "m1", false),
    ];
    let windows = [window(5_000, 2)];
    let k = compute(&FigureInput {
        fault_windows: &windows,
        sent: seq,
        cooled_providers: Some(vec!["mockai".into()]),
        ..Default::default()
    });
    let m = &k.providers["mockai"];
    assert_eq!((m.rotations, m.fallbacks, m.cooldowns), (1, 1, Some(1)));
    assert_eq!(m.time_to_first_rotation_ms, Some(300));
    assert_eq!(m.time_to_first_fallback_ms, Some(900));
    // Counted where nothing happened: 0, not unknown.
    assert_eq!(
        k.providers["backup"],
        ProviderFigures {
            cooldowns: Some(0),
            ..Default::default()
        }
    );
}

fn record(t_ms: u64, model: &str, fp: &str, fault: Option<&str>) -> UpstreamRecord {
    let dep = format!("{model}/default/{fp}");
    UpstreamRecord::llm_for_test(t_ms, 0, dep, Some(model), Some(fp), fault)
}

#[test]
fn a_model_named_without_its_provider_counts_for_its_profiles_provider() {
    // OpenClaw sends `model: "m1"`: the upstream's dep starts with the model, not `mockai`.
    let by_fp: BTreeMap<String, String> = [("fpA", "mockai"), ("fpB", "mockai")]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .into();
    let records = [
        record(1_000, "m1", "fpA", Some("status")),
        record(1_500, "m1", "fpB", None),
        record(2_000, "m1", "fpX", None),
    ];
    let sent = sent_of(&records, crate::util::speed::Speed::ONE, &by_fp);
    let providers: Vec<&str> = sent.iter().map(|s| s.provider.as_str()).collect();
    // A key no profile holds keeps the provider its model names.
    assert_eq!(providers, ["mockai", "mockai", "m1"]);
    let windows = [window(1_000, 1)];
    let k = compute(&FigureInput {
        fault_windows: &windows,
        sent,
        cooled_providers: Some(vec!["mockai".into()]),
        ..Default::default()
    });
    let m = &k.providers["mockai"];
    assert_eq!((m.rotations, m.cooldowns), (1, Some(1)));
    assert_eq!(m.time_to_first_rotation_ms, Some(500));
}
