//! Fault files and the control API body (`parse_fault_file`, TOML or JSON), fault actions and
//! `Retry-After`: no panic on any text, errors located inside it, `GET /_rehearse/faults`'s JSON
//! read back by `PUT` as the same faults, no panic acting out any fault that parses, and every
//! `Retry-After` the upstream writes read back by the engine as the wait it meant.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rehearse::engine::failover::retry_after::{MAX_RETRY_AFTER, parse_retry_after};
use rehearse::upstream::faults::{
    Action, ActionCtx, CutAt, ErrorEventFault, FaultKind, FirstTokenDelayFault, LatencyFault,
    MalformedChunkFault, MalformedThen, ProviderError, RateLimitFault, ResetFault,
    ResetMidStreamFault, RetryAfterFormat, RouteSel, SlowStreamFault, StallFault, StallStreamFault,
    StatusFault, When, WsCloseFault, WsPingTimeoutFault,
};
use rehearse::upstream::{FaultSpec, parse_fault_file};

use super::common::{apply, assert_inside, config, edits, fixture, noise};

/// Parses `text`; an error's position (when it has one) must lie inside it.
fn parse_located(text: &str) -> Option<Vec<FaultSpec>> {
    match parse_fault_file(text, "f.toml") {
        Ok(f) => Some(f),
        Err(e) => {
            if let (Some(line), Some(col)) = (e.line, e.col) {
                assert_inside(text, line, col, "fault file error");
            }
            None
        }
    }
}

/// Every `[[fault]]` table of the fixture scenarios, as one fault file.
fn fixture_faults() -> String {
    let mut out = String::new();
    for name in [
        "crm-search-503-storm",
        "retry-after-429",
        "stream-resets",
        "timeout-storm",
        "websocket-ping",
        "weekly",
    ] {
        let text = fixture(&format!("fixtures/scenarios/{name}.toml"));
        let mut inside = false;
        for line in text.lines() {
            if line.starts_with('[') {
                inside = line.trim() == "[[fault]]";
            }
            if inside {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Durations as users write them, plus the extremes of the type.
fn duration(max: Duration) -> impl Strategy<Value = Duration> {
    let max_ns = max.as_nanos().min(u64::MAX as u128) as u64;
    prop_oneof![
        4 => (0u64..=600_000).prop_map(Duration::from_millis),
        2 => (0u64..=max_ns).prop_map(Duration::from_nanos),
        1 => (0u64..=max.as_secs(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        1 => Just(max),
    ]
}

fn kind(max: Duration) -> impl Strategy<Value = FaultKind> {
    let frac = prop_oneof![Just(0.0), Just(1.0), 0.0..=1.0f64];
    prop_oneof![
        (100u16..=599, proptest::option::of(any::<String>()))
            .prop_filter("101 is not a response", |(s, _)| *s != 101)
            .prop_map(|(status, body)| FaultKind::Status(StatusFault {
                status: Some(status),
                body,
                error: None
            })),
        (proptest::option::of(400u16..=599), provider_error()).prop_map(|(status, error)| {
            FaultKind::Status(StatusFault {
                status,
                body: None,
                error: Some(error),
            })
        }),
        duration(max)
            .prop_filter("delay > 0", |d| !d.is_zero())
            .prop_map(|delay| FaultKind::FirstTokenDelay(FirstTokenDelayFault { delay })),
        (any::<u64>(), any::<bool>()).prop_map(|(after_chunks, end)| FaultKind::MalformedChunk(
            MalformedChunkFault {
                after_chunks,
                then: if end {
                    MalformedThen::End
                } else {
                    MalformedThen::Continue
                },
            }
        )),
        (any::<u64>(), proptest::option::of(provider_error())).prop_map(|(after_chunks, error)| {
            FaultKind::ErrorEvent(ErrorEventFault {
                after_chunks,
                error,
            })
        }),
        (duration(max), any::<bool>()).prop_map(|(retry_after, date)| FaultKind::RateLimit(
            RateLimitFault {
                retry_after,
                retry_after_format: if date {
                    RetryAfterFormat::HttpDate
                } else {
                    RetryAfterFormat::Seconds
                },
            }
        )),
        (duration(max), duration(max))
            .prop_map(|(delay, jitter)| FaultKind::Latency(LatencyFault { delay, jitter })),
        Just(FaultKind::Stall(StallFault {})),
        Just(FaultKind::Reset(ResetFault {})),
        (frac.clone(), cut()).prop_map(|(after_fraction, cut)| FaultKind::ResetMidStream(
            ResetMidStreamFault {
                after_fraction,
                cut
            }
        )),
        (frac, cut(), proptest::option::of(duration(max))).prop_map(
            |(after_fraction, cut, resume_after)| FaultKind::StallStream(StallStreamFault {
                after_fraction,
                cut,
                // A resume follows a cut that leaves the body open, and lasts a while.
                resume_after: resume_after.filter(|d| !d.is_zero() && cut != CutAt::NoTerminal),
            })
        ),
        duration(max)
            .prop_filter("token_interval > 0", |d| !d.is_zero())
            .prop_map(|token_interval| FaultKind::SlowStream(SlowStreamFault { token_interval })),
        Just(FaultKind::WsPingTimeout(WsPingTimeoutFault {})),
        (1000u16..=4999)
            .prop_filter("sendable", |c| !matches!(c, 1004..=1006 | 1015))
            .prop_map(|code| FaultKind::WsClose(WsCloseFault { code })),
    ]
}

fn provider_error() -> impl Strategy<Value = ProviderError> {
    proptest::sample::select(ProviderError::ALL.to_vec())
}

fn when() -> impl Strategy<Value = When> {
    let b = || proptest::option::of(any::<bool>());
    (b(), b(), b()).prop_map(|(stream, tools, prefill)| When {
        stream,
        tools,
        prefill,
    })
}

fn route() -> impl Strategy<Value = RouteSel> {
    prop_oneof![
        Just(RouteSel::Llm),
        Just(RouteSel::Ws),
        Just(RouteSel::Any),
        "[a-z_][a-z0-9_.-]{0,15}".prop_map(RouteSel::Tool),
    ]
}

/// Fault specs with durations up to `max`, made valid by construction (a window's ends in
/// order, a kind on a route it can act on, `model` only where it applies) rather than by
/// rejection, so long runs are not starved of cases. Only durations above
/// `MAX_FAULT_DURATION` (when `max` allows them) are left for the parser to refuse.
fn spec(max: Duration) -> impl Strategy<Value = FaultSpec> {
    (
        route(),
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<String>()),
        proptest::option::of(duration(max)),
        proptest::option::of(duration(max)),
        prop_oneof![Just(1.0), Just(0.0), 0.0..=1.0f64],
        proptest::option::of(any::<u64>()),
        kind(max),
        proptest::option::of(when()),
        proptest::option::of(0u64..=86_400_000),
    )
        .prop_map(
            |(route, profile, model, from, until, probability, first, kind, when, wait_ms)| {
                let (from, until) = match (from, until) {
                    (Some(a), Some(b)) if a > b => (Some(b), Some(a)),
                    (Some(a), Some(b)) if a == b => (Some(a), None),
                    window => window,
                };
                let route = match route.kind() {
                    Some(r) if !kind.as_fault().applies_to(r) => RouteSel::Any,
                    _ => route,
                };
                let model = model.filter(|_| matches!(route, RouteSel::Llm | RouteSel::Any));
                let when = when.filter(|_| matches!(route, RouteSel::Llm | RouteSel::Any));
                let http = kind.as_fault().answers_over_http()
                    && (route != RouteSel::Ws
                        || matches!(kind, FaultKind::Status(_) | FaultKind::RateLimit(_)));
                let headers = wait_ms.filter(|_| http).map(|ms| {
                    [
                        ("retry-after-ms".to_string(), ms.to_string()),
                        ("x-ms-throttle-reason".to_string(), "quota".to_string()),
                    ]
                    .into_iter()
                    .collect()
                });
                FaultSpec {
                    name: None,
                    route,
                    profile,
                    model,
                    from,
                    until,
                    probability,
                    first,
                    optional: false,
                    when,
                    headers,
                    kind,
                }
            },
        )
}

/// The largest duration a fault may carry (`FaultSpec::validate`).
const MAX: Duration = rehearse::upstream::faults::MAX_FAULT_DURATION;

fn wall_now() -> impl Strategy<Value = SystemTime> {
    // 1970 to ~2100: every clock a run can meet.
    (0u64..4_102_444_800, 0u32..1_000_000_000).prop_map(|(s, n)| UNIX_EPOCH + Duration::new(s, n))
}

fn act(spec: &FaultSpec, speed: f64, now: SystemTime, seed: u64) -> Action {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ctx = ActionCtx {
        speed: rehearse::util::speed::Speed::new(speed)
            .expect("a property speed within 0.01..=100"),
        wall_now: now,
        rng: &mut rng,
    };
    spec.kind.as_fault().action(&mut ctx)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn noise_never_panics_and_errors_are_located(text in noise()) {
        parse_located(&text);
        parse_located(&format!("[{text}"));
        parse_located(&format!("[[fault]]\n{text}"));
    }

    #[test]
    fn mutated_fault_files_fail_located(edits in edits(), json in any::<bool>()) {
        let toml = fixture_faults();
        let text = if json {
            let faults = parse_fault_file(&toml, "fixtures").expect("fixture faults parse");
            serde_json::to_string_pretty(&faults).expect("faults serialise")
        } else {
            toml
        };
        parse_located(&apply(&text, &edits));
    }

    #[test]
    fn get_faults_json_is_read_back_by_put(faults in prop::collection::vec(spec(MAX), 0..6)) {
        for f in &faults {
            prop_assert!(f.validate().is_ok(), "the generator makes valid faults: {:?}", f);
        }
        // What `GET /_rehearse/faults` answers, given to `PUT /_rehearse/faults`.
        let text = serde_json::to_string(&faults).expect("faults serialise");
        let back = parse_fault_file(&text, "PUT")
            .unwrap_or_else(|e| panic!("{e}\n--- written ---\n{text}"));
        prop_assert_eq!(back, faults);
    }

    #[test]
    fn any_fault_that_parses_acts_without_panic(
        spec in spec(Duration::MAX),
        speed in prop_oneof![Just(1.0), 1.0..=100.0f64],
        now in wall_now(),
        seed in any::<u64>(),
    ) {
        // Written with any durations, even ones the parser must refuse...
        let text = serde_json::to_string(&[&spec]).expect("serialises");
        // ...and whatever it accepts, the upstream can act out.
        if let Some(parsed) = parse_located(&text) {
            for f in &parsed {
                act(f, speed, now, seed);
            }
        }
    }

    #[test]
    fn retry_after_written_is_the_wait_read(
        wait in duration(MAX),
        date in any::<bool>(),
        speed in prop_oneof![Just(1.0), 1.0..=100.0f64],
        now in wall_now(),
    ) {
        let spec = FaultSpec {
            name: None, route: RouteSel::Any, profile: None, model: None, from: None, until: None,
            probability: 1.0, first: None, optional: false, when: None, headers: None,
            kind: FaultKind::RateLimit(RateLimitFault {
                retry_after: wait,
                retry_after_format: if date { RetryAfterFormat::HttpDate } else { RetryAfterFormat::Seconds },
            }),
        };
        let Action::Respond { status: 429, headers, .. } = act(&spec, speed, now, 0) else {
            panic!("rate_limit answers 429");
        };
        let value = &headers.iter().find(|(k, _)| *k == "retry-after").expect("Retry-After").1;
        let read = parse_retry_after(value, now).expect("the engine reads what the upstream writes");
        // Whole seconds, rounded up from the scaled wait, clamped by the engine.
        let scaled = wait.div_f64(speed);
        let want = Duration::from_secs(scaled.as_secs() + u64::from(scaled.subsec_nanos() > 0));
        let want = want.min(MAX_RETRY_AFTER);
        if date {
            // An HTTP date names the instant `now + wait` rounded up to a whole second, so read
            // against the same `now` it is never shorter than the wait and less than 1 s longer.
            let lo = scaled.min(MAX_RETRY_AFTER);
            let hi = scaled.saturating_add(Duration::from_secs(1)).min(MAX_RETRY_AFTER);
            prop_assert!(read >= lo && read <= hi, "{value}: read {read:?}, want {lo:?}..={hi:?}");
        } else {
            prop_assert_eq!(read, want, "{}", value);
        }
    }

    #[test]
    fn retry_after_never_panics_and_stays_bounded(raw in noise(), now in wall_now()) {
        if let Some(d) = parse_retry_after(&raw, now) {
            prop_assert!(d <= MAX_RETRY_AFTER);
        }
    }
}

/// Every stream cut point.
fn cut() -> impl Strategy<Value = CutAt> {
    prop::sample::select(vec![CutAt::Frame, CutAt::MidFrame, CutAt::NoTerminal])
}
