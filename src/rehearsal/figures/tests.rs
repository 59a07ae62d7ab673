//! The key figures' rules on hand-made inputs.

use super::*;
use crate::report::marks::{CooldownMark, FallbackMark, RotationMark};
use crate::scrape::Timing;
use crate::upstream::UpstreamRecord;
use crate::verdict::turns::Names;

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
    // A gateway whose turns could not be read: its counts are unknown, not 0.
    let k = compute(&FigureInput {
        providers: ["mockai".to_string()].into(),
        ..Default::default()
    });
    assert_eq!(k.providers["mockai"], ProviderFigures::default());
    assert!(!k.flat().contains_key("cooldowns{mockai}"));
    assert!(!k.flat().contains_key("rotations{mockai}"));
    assert_eq!(
        k.unknown(),
        ["rotations{mockai}", "cooldowns{mockai}", "fallbacks{mockai}"]
    );
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
    assert_eq!((p.rotations, p.fallbacks, p.cooldowns), (Some(2), Some(1), Some(1)));
    assert_eq!(p.time_to_first_rotation_ms, Some(400));
    assert_eq!(p.time_to_first_fallback_ms, Some(1_200));
}

/// A model request at `t_ms` for `turn` with key `fp` naming `model`, faulted by `fault`.
fn record(turn: Option<u64>, t_ms: u64, model: &str, fp: &str, fault: Option<&str>) -> UpstreamRecord {
    let dep = format!("{model}/default/{fp}");
    let mut r = UpstreamRecord::llm_for_test(t_ms, 0, dep, Some(model), Some(fp), fault);
    r.turn = turn;
    r
}

fn names() -> Names {
    let pairs = [("fpA", "mockai:a", "mockai"), ("fpB", "mockai:b", "mockai"), ("fpC", "backup:c", "backup")];
    Names {
        profile_of_fp: pairs.iter().map(|(f, id, _)| (f.to_string(), id.to_string())).collect(),
        provider_of_fp: pairs.iter().map(|(f, _, p)| (f.to_string(), p.to_string())).collect(),
    }
}

#[test]
fn a_gateways_rotations_fallbacks_and_cooldowns_are_read_per_turn_from_the_record() {
    // OpenClaw sends `model: "m1"`: the provider is its key's profile's.
    let records = [
        record(Some(0), 1_000, "m1", "fpA", None),
        record(Some(1), 2_000, "m1", "fpB", None), // round robin, not a rotation
        // Turn 2: key-B fails, key-A (same model): a rotation at 5.3 s.
        record(Some(2), 5_000, "m1", "fpB", Some("status")),
        record(Some(3), 5_100, "m1", "fpB", None), // another turn, concurrent
        record(Some(2), 5_300, "m1", "fpA", Some("status")),
        // then m2 on key-C of another provider: one fallback away from mockai, no rotation.
        record(Some(2), 5_900, "m2", "fpC", None),
        // Key-A sits out two turns that went elsewhere: a cooldown.
        record(Some(4), 6_000, "m2", "fpC", None),
        record(Some(5), 6_500, "m1", "fpB", None),
        record(Some(6), 7_000, "m1", "fpA", None),
        // A compaction call of the gateway's own: no turn, no change.
        record(None, 7_100, "m2", "fpC", None),
    ];
    let part = crate::verdict::turns::rows(&records, &names(), crate::util::speed::Speed::ONE);
    let windows = [window(5_000, 2)];
    let k = compute(&FigureInput {
        fault_windows: &windows,
        turns: Some(&part),
        cooled_by_state: Some(vec!["mockai".into(), "mockai".into()]),
        ..Default::default()
    });
    let m = &k.providers["mockai"];
    assert_eq!((m.rotations, m.fallbacks, m.cooldowns), (Some(1), Some(1), Some(1)));
    assert_eq!(m.time_to_first_rotation_ms, Some(300));
    assert_eq!(m.time_to_first_fallback_ms, Some(900));
    // OpenClaw's auth state stays beside it, labelled.
    assert_eq!(m.cooldowns_auth_state, Some(2));
    // Counted where nothing happened: 0, not unknown.
    assert_eq!(
        k.providers["backup"],
        ProviderFigures {
            cooldowns_auth_state: Some(0),
            ..ProviderFigures::counted()
        }
    );
}

#[test]
fn a_gateway_that_strips_the_marker_has_its_counts_unknown_not_zero() {
    let records = [
        record(None, 5_000, "m1", "fpA", Some("status")),
        record(None, 5_300, "m1", "fpB", None),
        record(None, 5_900, "m2", "fpC", None),
    ];
    let part = crate::verdict::turns::rows(&records, &names(), crate::util::speed::Speed::ONE);
    assert!(!part.readable());
    let k = compute(&FigureInput {
        turns: Some(&part),
        providers: ["mockai".to_string()].into(),
        cooled_by_state: Some(vec!["mockai".into()]),
        ..Default::default()
    });
    let m = &k.providers["mockai"];
    assert_eq!((m.rotations, m.fallbacks, m.cooldowns), (None, None, None));
    assert_eq!(m.cooldowns_auth_state, Some(1));
    let flat = k.flat();
    assert!(!flat.contains_key("rotations{mockai}") && !flat.contains_key("fallbacks{mockai}"));
}
