//! Tests of the upstream ground-truth evaluators ([`super`]).

use super::*;
use std::time::Duration;

fn rec(t_ms: u64, fp: &str, model: &str, fault: Option<&str>) -> UpstreamRecord {
    let dep = format!("mockai/default/{fp}");
    UpstreamRecord::llm_for_test(t_ms, 0, dep, Some(model), Some(fp), fault)
}

fn fps() -> BTreeMap<String, String> {
    [
        ("mockai:a", "fpa"),
        ("mockai:b", "fpb"),
        ("fallback:f", "fpf"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

/// Key-A gets five stalls 1 s apart and more, key-B answers at 20 s, fallback is never used.
fn records() -> Vec<UpstreamRecord> {
    let mut v: Vec<UpstreamRecord> = (0..5)
        .map(|i| rec(1000 + i * 1000, "fpa", "m1", Some("stall")))
        .collect();
    v.push(rec(20_000, "fpb", "m1", None));
    let mut canary = rec(2500, "fpa", "m1", None);
    canary.canary = true;
    v.push(canary);
    v
}

static OWNERS: std::sync::LazyLock<crate::upstream::TokenOwners> = std::sync::LazyLock::new(|| {
    crate::upstream::TokenOwners::by_fingerprints([
        ("fpa", "mockai:a", "mockai"),
        ("fpb", "mockai:b", "mockai"),
        ("fpf", "fallback:f", "fallback"),
    ])
});

fn facts<'a>(r: &'a [UpstreamRecord], fps: &'a BTreeMap<String, String>) -> UpstreamFacts<'a> {
    UpstreamFacts {
        records: r,
        profile_fps: fps,
        owners: &OWNERS,
        speed: crate::util::speed::Speed::ONE,
        end_ms: 30_000,
        stopped_at_ms: None,
        truncated_at_ms: None,
        faults: crate::verdict::anchor::FaultsSeen {
            faults: &[],
            applied: &NO_APPLICATIONS,
        },
    }
}

static NO_APPLICATIONS: BTreeMap<usize, crate::verdict::anchor::Applied> = BTreeMap::new();

fn secs_d(s: u64) -> Option<Duration> {
    Some(Duration::from_secs(s))
}

#[test]
fn attempts_count_a_profiles_requests_in_a_window_without_canaries() {
    let (r, fps) = (records(), fps());
    let f = facts(&r, &fps);
    let e = ExpectAttempts {
        profile: Some("mockai:a".into()),
        equals: Some(5),
        ..Default::default()
    };
    assert_eq!(attempts(&e, &f).status, ExpectStatus::Pass);
    let wrong = ExpectAttempts {
        equals: Some(4),
        ..e.clone()
    };
    let got = attempts(&wrong, &f);
    assert_eq!(got.status, ExpectStatus::Fail);
    assert!(got.detail.contains("observed 5"), "{}", got.detail);
    let windowed = ExpectAttempts {
        from: secs_d(3),
        until: secs_d(5),
        equals: Some(2),
        ..e.clone()
    };
    assert!(attempts(&windowed, &f).ok);
    let clean = ExpectAttempts {
        fault: Some("none".into()),
        equals: Some(0),
        ..e
    };
    assert!(attempts(&clean, &f).ok);
    let by_model = ExpectAttempts {
        model: Some("mockai/m1".into()),
        equals: Some(6),
        ..Default::default()
    };
    assert!(attempts(&by_model, &f).ok);
}

#[test]
fn first_request_times_a_rotation_and_never_fails_when_one_came() {
    let (r, fps) = (records(), fps());
    let f = facts(&r, &fps);
    let b = ExpectFirstRequest {
        profile: Some("mockai:b".into()),
        at_most: secs_d(25),
        ..Default::default()
    };
    let got = first_request(&b, &f);
    assert!(got.ok, "{got:?}");
    assert_eq!(got.observed_ms, Some(20_000));
    let late = ExpectFirstRequest {
        at_most: secs_d(10),
        ..b.clone()
    };
    assert_eq!(first_request(&late, &f).status, ExpectStatus::Fail);
    let never_b = ExpectFirstRequest {
        never: true,
        ..b.clone()
    };
    assert_eq!(first_request(&never_b, &f).status, ExpectStatus::Fail);
    let after = ExpectFirstRequest {
        at_most: secs_d(19),
        after_first: true,
        ..b.clone()
    };
    let got = first_request(&after, &f);
    assert!(
        got.ok && got.observed_ms == Some(19_000),
        "20 s − the first at 1 s: {got:?}"
    );
    let too_soon = ExpectFirstRequest {
        at_most: secs_d(18),
        ..after
    };
    assert!(!first_request(&too_soon, &f).ok);
    let never_f = ExpectFirstRequest {
        profile: Some("fallback:f".into()),
        never: true,
        ..Default::default()
    };
    assert!(first_request(&never_f, &f).ok);
}

#[test]
fn no_request_fails_on_one_inside_the_span() {
    let (r, fps) = (records(), fps());
    let f = facts(&r, &fps);
    let quiet = ExpectNoRequest {
        profile: Some("mockai:a".into()),
        from: Duration::from_secs(6),
        until: Duration::from_secs(30),
        policy: None,
        model: None,
        since: None,
    };
    assert!(no_request(&quiet, &f).ok);
    let busy = ExpectNoRequest {
        from: Duration::from_secs(4),
        ..quiet
    };
    let got = no_request(&busy, &f);
    assert_eq!(got.status, ExpectStatus::Fail);
    assert!(got.observed.contains("first at 4.000s"), "{}", got.observed);
}

#[test]
fn retry_gaps_hold_every_gap_to_the_bounds() {
    let (r, fps) = (records(), fps());
    let f = facts(&r, &fps);
    let e = ExpectRetryGaps {
        profile: Some("mockai:a".into()),
        min: secs_d(1),
        max: secs_d(1),
        ..Default::default()
    };
    assert!(retry_gaps(&e, &f).ok);
    let wide = ExpectRetryGaps {
        min: secs_d(2),
        ..e.clone()
    };
    assert_eq!(retry_gaps(&wide, &f).status, ExpectStatus::Fail);
    let tol = ExpectRetryGaps {
        tolerance: Some(Duration::from_millis(1000)),
        ..wide
    };
    assert!(retry_gaps(&tol, &f).ok);
    let one = ExpectRetryGaps {
        profile: Some("mockai:b".into()),
        ..e
    };
    assert!(!retry_gaps(&one, &f).ok, "one request has no gap to judge");
}

#[test]
fn a_stop_leaves_open_windows_not_reached_but_keeps_certain_failures() {
    let (r, fps) = (records(), fps());
    let mut f = facts(&r, &fps);
    f.stopped_at_ms = Some(10_000);
    let e = ExpectAttempts {
        profile: Some("mockai:b".into()),
        at_least: Some(1),
        ..Default::default()
    };
    assert_eq!(attempts(&e, &f).status, ExpectStatus::NotReached);
    let over = ExpectAttempts {
        profile: Some("mockai:a".into()),
        at_most: Some(2),
        ..Default::default()
    };
    assert_eq!(attempts(&over, &f).status, ExpectStatus::Fail);
    let speedy = UpstreamFacts {
        speed: crate::util::speed::sp(2.0),
        stopped_at_ms: None,
        ..f
    };
    let b = ExpectFirstRequest {
        profile: Some("mockai:b".into()),
        at_least: secs_d(39),
        ..Default::default()
    };
    assert!(
        first_request(&b, &speedy).ok,
        "record ms × speed is scenario time"
    );
}

#[test]
fn a_record_cut_at_its_cap_leaves_windows_past_the_cut_not_reached_never_pass() {
    let (r, fps) = (records(), fps());
    let cut = UpstreamFacts {
        truncated_at_ms: Some(4_000),
        ..facts(&r, &fps)
    };
    // Holds on what was kept, but the window runs to the end of the run: not reached.
    let whole = ExpectAttempts {
        profile: Some("mockai:a".into()),
        at_least: Some(1),
        ..Default::default()
    };
    let got = attempts(&whole, &cut);
    assert_eq!(got.status, ExpectStatus::NotReached);
    assert!(!got.ok);
    let rows = evaluate(
        &crate::verdict::Expectations {
            attempts: vec![whole.clone()],
            ..Default::default()
        },
        &cut,
    );
    assert!(
        rows[0].detail.contains("kept only up to 4.000s (its cap)"),
        "{}",
        rows[0].detail
    );
    // A window that closed before the cut is judged as usual.
    let early = ExpectAttempts {
        until: secs_d(3),
        ..whole
    };
    assert_eq!(attempts(&early, &cut).status, ExpectStatus::Pass);
}

#[test]
fn a_model_subject_counts_its_providers_requests_only_by_the_token_behind_them() {
    // OpenClaw sends the bare id `gpt-4o` to both providers: the token says which is which.
    let r = vec![
        rec(1000, "fpo", "gpt-4o", None),
        rec(2000, "fpz", "gpt-4o", None),
        rec(3000, "fpz", "gpt-4o", None),
    ];
    let fps = fps();
    let owners = crate::upstream::TokenOwners::by_fingerprints([
        ("fpo", "openai:a", "openai"),
        ("fpz", "azure:a", "azure"),
    ]);
    let f = UpstreamFacts {
        owners: &owners,
        ..facts(&r, &fps)
    };
    let count = |model: &str| {
        let e = ExpectAttempts {
            model: Some(model.into()),
            equals: Some(0),
            ..Default::default()
        };
        attempts(&e, &f).observed
    };
    assert_eq!(
        count("openai/gpt-4o"),
        "1",
        "azure's requests are not openai's"
    );
    assert_eq!(count("azure/gpt-4o"), "2");
    assert_eq!(count("gpt-4o"), "3", "a bare id is any provider's");
}

#[test]
fn a_window_past_what_a_finished_run_observed_is_not_reached_never_pass() {
    // The run observed 30 s; `no_request` over [20 s, 500 s) holds on what was seen, and
    // `attempts` in [0, 60 s) at most 9 too, but neither window was seen to its end.
    let (r, fps) = (records(), fps());
    let f = facts(&r, &fps);
    let late = ExpectNoRequest {
        profile: Some("mockai:a".into()),
        from: Duration::from_secs(20),
        until: Duration::from_secs(500),
        ..Default::default()
    };
    let got = no_request(&late, &f);
    assert_eq!(got.status, ExpectStatus::NotReached, "{}", got.detail);
    assert!(!got.ok);
    let inside = ExpectNoRequest {
        until: Duration::from_secs(30),
        ..late
    };
    assert_eq!(no_request(&inside, &f).status, ExpectStatus::Pass);
    let long = ExpectAttempts {
        profile: Some("mockai:a".into()),
        until: secs_d(60),
        at_most: Some(9),
        ..Default::default()
    };
    assert_eq!(attempts(&long, &f).status, ExpectStatus::NotReached);
    // Already above its bound: a certain failure, whatever comes later.
    let over = ExpectAttempts {
        at_most: Some(2),
        ..long
    };
    assert_eq!(attempts(&over, &f).status, ExpectStatus::Fail);
    // A first request due by 400 s that had not come by 30 s: not reached, not failed.
    let fallback = ExpectFirstRequest {
        profile: Some("fallback:f".into()),
        at_most: secs_d(400),
        ..Default::default()
    };
    assert_eq!(
        first_request(&fallback, &f).status,
        ExpectStatus::NotReached
    );
}

#[test]
fn recovered_needs_fault_free_requests_after_the_faults_in_time() {
    let r = records();
    let fp = fps();
    let f = facts(&r, &fp);
    let e = |profile: Option<&str>, after: u64, requests: Option<u64>, within: Option<u64>| {
        ExpectRecovered {
            profile: profile.map(str::to_string),
            after: Duration::from_secs(after),
            requests,
            within: within.map(Duration::from_secs),
            ..Default::default()
        }
    };
    // Key-B answered at 20 s; the canary's fault-free request is not the system serving.
    assert_eq!(
        recovered(&e(None, 6, None, None), &f).status,
        ExpectStatus::Pass
    );
    assert_eq!(
        recovered(&e(None, 6, None, Some(10)), &f).status,
        ExpectStatus::Fail,
        "20 s is after 6 s + 10 s"
    );
    assert_eq!(
        recovered(&e(None, 6, None, Some(14)), &f).status,
        ExpectStatus::Pass
    );
    assert_eq!(
        recovered(&e(None, 6, Some(2), None), &f).status,
        ExpectStatus::Fail,
        "one fault-free request, two wanted"
    );
    let a = recovered(&e(Some("mockai:a"), 0, None, None), &f);
    assert_eq!(
        a.status,
        ExpectStatus::Fail,
        "key-A only ever stalled: {a:?}"
    );
    assert_eq!(a.observed, "none");
    // A run stopped before the deadline cannot tell yet.
    let stopped = UpstreamFacts {
        stopped_at_ms: Some(10_000),
        ..f
    };
    assert_eq!(
        recovered(&e(None, 6, None, Some(14)), &stopped).status,
        ExpectStatus::NotReached
    );
}

mod anchored;
mod hosts;
