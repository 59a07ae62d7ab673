//! The half-open rules: probe pacing and jitter, one probe in flight, the probe
//! timeout, closing on distinct workers, re-opening with a doubled open time.

use std::time::Duration;

use rehearse::engine::events::BreakerState;
use rehearse::engine::outcome::AttemptResult;
use rehearse::engine::{Admission, Admit};

use crate::support::breaker::{DEP, breakers, call, http, ms, ok, transitions, trip};

/// Hammers a half-open breaker from 4 workers every ms; each probe answers `answer` after
/// `probe_ms`. Returns the probe start times (ms since t0).
fn hammer(seed: u64, probe_ms: u64, answer: AttemptResult, run_ms: u64) -> Vec<u64> {
    let (b, _, t0) = breakers(seed);
    trip(&b, DEP, t0);
    let mut starts = Vec::new();
    let mut in_flight: Option<(usize, u64)> = None;
    for t in 30_000..30_000 + run_ms {
        let now = t0 + ms(t);
        if let Some((w, started)) = in_flight
            && t >= started + probe_ms
        {
            b.observe(DEP, w, true, &answer, crate::support::at(now));
            in_flight = None;
        }
        let worker = (t % 4) as usize;
        match b.admit(DEP, worker, now) {
            Admit::Allow { probe: true, .. } => {
                assert!(in_flight.is_none(), "two probes in flight at {t} ms");
                in_flight = Some((worker, t));
                starts.push(t);
            }
            Admit::Allow { probe: false, .. } => panic!("half-open admitted a non-probe"),
            Admit::Reject { .. } => {}
        }
        assert_eq!(b.state(DEP), BreakerState::HalfOpen);
    }
    starts
}

#[tokio::test(start_paused = true)]
async fn probes_are_paced_250ms_plus_seeded_jitter_and_never_two_in_flight() {
    let cut = AttemptResult::StreamCut { tokens_received: 3 };
    let starts = hammer(7, 100, cut.clone(), 20_000);
    assert_eq!(starts[0], 30_000, "first probe as soon as half-open");
    assert!(starts.len() > 60, "{} probes", starts.len());
    let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    for g in &gaps {
        // polled every 1 ms: a gap of 250 + jitter (0..=50) rounds up by at most 1 ms
        assert!((250..=301).contains(g), "gap {g} ms");
    }
    let spread = gaps.iter().max().unwrap() - gaps.iter().min().unwrap();
    assert!(
        spread >= 20,
        "jitter should vary the gaps, spread {spread} ms"
    );
    assert_eq!(
        starts,
        hammer(7, 100, cut.clone(), 20_000),
        "seeded: same times"
    );
    assert_ne!(
        starts,
        hammer(8, 100, cut.clone(), 20_000),
        "another seed, other jitter"
    );

    // A probe slower than the spacing: the next one waits for its answer.
    let slow = hammer(7, 400, cut, 5_000);
    for w in slow.windows(2) {
        assert!(w[1] - w[0] >= 400, "{slow:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn probe_timeout_is_p99_latency_times_1_4() {
    let (b, _, t0) = breakers(1);
    for k in 1..=100u64 {
        call(&b, DEP, t0 + ms(k), ok(k * 10));
    }
    trip(&b, DEP, t0 + ms(200));
    let d = b.admit(DEP, 1, t0 + ms(30_200));
    assert_eq!(
        d,
        Admit::Allow {
            probe: true,
            timeout: Some(ms(1386))
        }
    );
}

#[tokio::test(start_paused = true)]
async fn same_worker_succeeding_twice_does_not_close_two_distinct_workers_do() {
    let (b, events, t0) = breakers(1);
    trip(&b, DEP, t0);
    let mut t = 30_000;
    let mut probe = |worker: usize, result: AttemptResult| {
        let now = t0 + ms(t);
        assert!(matches!(
            b.admit(DEP, worker, now),
            Admit::Allow { probe: true, .. }
        ));
        b.observe(DEP, worker, true, &result, crate::support::at(now + ms(10)));
        t += 400;
        b.state(DEP)
    };
    assert_eq!(probe(1, ok(10)), BreakerState::HalfOpen);
    assert_eq!(
        probe(1, ok(10)),
        BreakerState::HalfOpen,
        "same worker twice"
    );
    assert_eq!(
        probe(1, ok(10)),
        BreakerState::HalfOpen,
        "same worker thrice"
    );
    assert_eq!(
        probe(2, ok(10)),
        BreakerState::Closed,
        "a second worker closes"
    );
    let last = *transitions(&events).last().unwrap();
    assert_eq!(
        (last.1, last.2),
        (BreakerState::HalfOpen, BreakerState::Closed)
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_probe_reopens_and_doubles_open_for_up_to_the_cap() {
    let (b, events, t0) = breakers(1);
    trip(&b, DEP, t0);
    let mut now = t0 + Duration::from_secs(30);
    let mut open_fors = Vec::new();
    for _ in 0..6 {
        assert!(matches!(
            b.admit(DEP, 1, now),
            Admit::Allow { probe: true, .. }
        ));
        b.observe(DEP, 1, true, &http(503, None), crate::support::at(now));
        assert_eq!(b.state(DEP), BreakerState::Open);
        let open_for = transitions(&events).last().unwrap().3.unwrap();
        open_fors.push(open_for);
        // still open 1 ms before the doubled time is up
        assert!(b.open_at(DEP, now + ms(open_for - 1)));
        now += ms(open_for);
    }
    assert_eq!(
        open_fors,
        [60_000, 120_000, 240_000, 300_000, 300_000, 300_000]
    );
    // Closing resets it to 30 s.
    for w in [1, 2] {
        assert!(matches!(
            b.admit(DEP, w, now),
            Admit::Allow { probe: true, .. }
        ));
        b.observe(DEP, w, true, &ok(5), crate::support::at(now));
        now += ms(300);
    }
    assert_eq!(b.state(DEP), BreakerState::Closed);
    assert_eq!(b.next_open_for(DEP), Duration::from_secs(30));
}
