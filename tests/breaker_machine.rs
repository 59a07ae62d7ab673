//! The breaker's trip and open rules, table-tested through `Breakers` on paused time
//! with explicit instants.

use std::time::Duration;

use rehearse::engine::events::{BreakerState, EventKind};
use rehearse::engine::outcome::{AttemptResult, TimeoutPhase};
use rehearse::engine::{Admission, Admit};

use crate::support::breaker::{DEP, breakers, call, http, ms, ok, reset, transitions, trip};

#[tokio::test(start_paused = true)]
async fn consecutive_failures_trip_at_exactly_the_fifth() {
    let ttfb = AttemptResult::Timeout {
        phase: TimeoutPhase::Ttfb,
        tokens_received: 0,
    };
    // (results, state after the last one)
    let table: Vec<(Vec<AttemptResult>, BreakerState)> = vec![
        (vec![reset(); 4], BreakerState::Closed),
        (vec![reset(); 5], BreakerState::Open),
        (
            vec![reset(), reset(), ttfb.clone(), reset(), ttfb.clone()],
            BreakerState::Open,
        ),
        (
            vec![reset(), reset(), reset(), reset(), ok(5), reset()],
            BreakerState::Closed,
        ),
        (
            vec![reset(), reset(), http(503, None), reset(), reset(), reset()],
            BreakerState::Closed,
        ),
    ];
    for (i, (results, want)) in table.into_iter().enumerate() {
        let (b, _, t0) = breakers(1);
        let n = results.len();
        for (k, r) in results.into_iter().enumerate() {
            call(&b, DEP, t0 + ms(k as u64), r);
            if k + 1 < n && want == BreakerState::Open {
                assert_eq!(
                    b.state(DEP),
                    BreakerState::Closed,
                    "case {i}: tripped early at {k}"
                );
            }
        }
        assert_eq!(b.state(DEP), want, "case {i}");
    }
}

#[tokio::test(start_paused = true)]
async fn ratio_trip_needs_twenty_calls_and_strictly_more_than_sixty_percent() {
    // (ok calls, then 5xx calls, state after them)
    let table = [
        (0, 19, BreakerState::Closed),  // 100 % but only 19 calls
        (0, 20, BreakerState::Open),    // the 20th call trips
        (8, 12, BreakerState::Closed),  // exactly 60 % of 20
        (7, 13, BreakerState::Open),    // 65 %
        (12, 18, BreakerState::Closed), // exactly 60 % of 30
    ];
    for (oks, errors, want) in table {
        let (b, events, t0) = breakers(1);
        let mut t = t0;
        for _ in 0..oks {
            call(&b, DEP, t, ok(10));
            t += ms(100);
        }
        for _ in 0..errors {
            call(&b, DEP, t, http(503, None));
            t += ms(100);
        }
        assert_eq!(b.state(DEP), want, "{oks} ok + {errors} 5xx");
        let opened = transitions(&events).len();
        assert_eq!(opened, usize::from(want == BreakerState::Open));
    }
}

#[tokio::test(start_paused = true)]
async fn old_calls_leave_the_thirty_second_window() {
    let (b, _, t0) = breakers(1);
    for _ in 0..19 {
        call(&b, DEP, t0, http(500, None));
    }
    // 30 s later the 19 have left: the 20th 5xx is alone in the window.
    call(&b, DEP, t0 + Duration::from_secs(30), http(500, None));
    assert_eq!(b.state(DEP), BreakerState::Closed);

    let (b, _, t0) = breakers(1);
    for _ in 0..19 {
        call(&b, DEP, t0, http(500, None));
    }
    // 1 ms earlier they are all still inside it.
    call(&b, DEP, t0 + ms(29_999), http(500, None));
    assert_eq!(b.state(DEP), BreakerState::Open);
}

#[tokio::test(start_paused = true)]
async fn open_breaker_rejects_at_once_and_counts_rejections() {
    let (b, events, t0) = breakers(1);
    trip(&b, DEP, t0);
    assert_eq!(
        transitions(&events),
        vec![(0, BreakerState::Closed, BreakerState::Open, Some(30_000))]
    );
    for k in 0..10u64 {
        let d = b.admit(DEP, k as usize, t0 + Duration::from_secs(k * 2));
        assert_eq!(
            d,
            Admit::Reject {
                until: t0 + Duration::from_secs(30)
            }
        );
    }
    assert_eq!(b.rejections(DEP), 10);
    assert!(b.open_at(DEP, t0 + ms(29_999)));
    assert!(!b.open_at(DEP, t0 + Duration::from_secs(30)));
}

#[tokio::test(start_paused = true)]
async fn retry_after_120s_keeps_a_30s_breaker_open_120s_and_counts_the_skip() {
    let (b, events, t0) = breakers(1);
    call(&b, DEP, t0, http(429, Some("120")));
    trip(&b, DEP, t0);
    for s in [29, 30, 31, 60, 119] {
        let d = b.admit(DEP, 1, t0 + Duration::from_secs(s));
        assert!(matches!(d, Admit::Reject { .. }), "admitted at {s}s");
    }
    let d = b.admit(DEP, 1, t0 + ms(119_999));
    assert!(matches!(d, Admit::Reject { .. }));
    let d = b.admit(DEP, 1, t0 + Duration::from_secs(120));
    assert!(matches!(d, Admit::Allow { probe: true, .. }), "{d:?}");
    let skips: Vec<(u64, u64)> = events
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::RetryAfterSkip { until_ms, .. } => Some((e.t_ms, until_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(skips, vec![(30_000, 120_000)]);
    let half_open = transitions(&events)[1];
    assert_eq!(
        (half_open.0, half_open.2),
        (120_000, BreakerState::HalfOpen)
    );
}

#[tokio::test(start_paused = true)]
async fn one_dep_opening_leaves_another_untouched() {
    let (b, events, t0) = breakers(1);
    call(&b, "calculator", t0, ok(5));
    trip(&b, DEP, t0 + ms(1));
    assert_eq!(b.state("calculator"), BreakerState::Closed);
    assert!(matches!(
        call(&b, "calculator", t0 + ms(2), ok(5)),
        Admit::Allow { probe: false, .. }
    ));
    assert_eq!(
        b.states(),
        vec![
            ("calculator".to_string(), BreakerState::Closed),
            (DEP.to_string(), BreakerState::Open)
        ]
    );
    assert!(events.events().iter().all(|e| match &e.kind {
        EventKind::BreakerTransition { dep, .. } => dep == DEP,
        _ => true,
    }));
}

#[tokio::test(start_paused = true)]
async fn stream_cuts_slow_reads_and_one_lost_pong_never_trip() {
    let (b, events, t0) = breakers(1);
    for k in 0..200u64 {
        let r = match k % 3 {
            0 => AttemptResult::StreamCut { tokens_received: 4 },
            1 => AttemptResult::Timeout {
                phase: TimeoutPhase::InterToken,
                tokens_received: 9,
            },
            _ => AttemptResult::StreamCut { tokens_received: 1 },
        };
        call(&b, DEP, t0 + ms(k), r);
    }
    assert_eq!(b.state(DEP), BreakerState::Closed);
    // A WebSocket channel: lost pongs between good sessions, never 3 in a row.
    for k in 0..30u64 {
        let r = if k % 3 == 2 {
            ok(5)
        } else {
            AttemptResult::WsPingTimeout
        };
        call(&b, "realtime", t0 + ms(k), r);
    }
    assert_eq!(b.state("realtime"), BreakerState::Closed);
    assert!(transitions(&events).is_empty());
}

#[tokio::test(start_paused = true)]
async fn websocket_dep_trips_on_the_third_consecutive_ping_timeout() {
    let (b, _, t0) = breakers(1);
    call(&b, "realtime", t0, AttemptResult::WsPingTimeout);
    call(&b, "realtime", t0, AttemptResult::WsPingTimeout);
    assert_eq!(b.state("realtime"), BreakerState::Closed);
    call(&b, "realtime", t0, AttemptResult::WsPingTimeout);
    assert_eq!(b.state("realtime"), BreakerState::Open);
}

#[tokio::test(start_paused = true)]
async fn tick_moves_an_idle_open_breaker_to_half_open_at_its_due_time() {
    let (b, events, t0) = breakers(1);
    trip(&b, DEP, t0);
    b.tick(t0 + ms(30_500));
    assert_eq!(b.state(DEP), BreakerState::HalfOpen);
    assert_eq!(
        transitions(&events)[1].0,
        30_000,
        "stamped when due, not when noticed"
    );
}
