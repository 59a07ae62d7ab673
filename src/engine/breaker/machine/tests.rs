//! One probe per host per interval holds across the phase changes a fleet's shared state makes.

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

use super::*;

const MS: Duration = Duration::from_millis(1);

fn cfg() -> BreakerConfig {
    BreakerConfig {
        open_for: 2000 * MS,
        open_for_cap: 4000 * MS,
        probe_interval: 250 * MS,
        probe_jitter: Duration::ZERO,
        ..BreakerConfig::default()
    }
}

/// Half-open now for the whole fleet (another host's seed after a restarted coordinator).
fn half_open_now(now: Instant) -> Shared {
    Shared::Open {
        until: now,
        open_for: 2000 * MS,
        reopens: 1,
    }
}

fn admits_probe(m: &mut Machine, worker: usize, now: Instant, rng: &mut ChaCha8Rng) -> Admit {
    m.admit(&cfg(), worker, now, rng, &mut Vec::new())
}

/// A host's probe failed and re-opened its breaker for 4 s; 50 ms later the fleet's record (a
/// rejoin adopting another host's seed) half-opens it. The host waits out its own probe
/// interval before probing again; a host that had not probed probes at once.
#[tokio::test(start_paused = true)]
async fn a_shared_half_open_right_after_a_failed_probe_waits_out_the_interval() {
    let (c, t0, mut rng) = (cfg(), Instant::now(), ChaCha8Rng::seed_from_u64(7));
    let mut notes = Vec::new();
    let mut m = Machine::new(&c);
    m.adopt(half_open_now(t0), t0, &mut notes);
    assert_eq!(m.state(), BreakerState::HalfOpen);
    assert!(matches!(
        admits_probe(&mut m, 0, t0, &mut rng),
        Admit::Allow { probe: true, .. }
    ));
    m.record(
        &c,
        0,
        true,
        Signal::ConnectFailure,
        t0 + 10 * MS,
        &mut notes,
    );
    assert!(matches!(m.phase(), Phase::Open { until } if *until == t0 + 4010 * MS));

    let t1 = t0 + 60 * MS;
    m.adopt(half_open_now(t1), t1, &mut notes);
    assert_eq!(m.state(), BreakerState::HalfOpen);
    match admits_probe(&mut m, 1, t1, &mut rng) {
        Admit::Reject { until } => assert_eq!(until, t0 + 250 * MS),
        other => panic!("a second probe 60 ms after the first: {other:?}"),
    }
    assert!(matches!(
        admits_probe(&mut m, 1, t0 + 249 * MS, &mut rng),
        Admit::Reject { .. }
    ));
    assert!(matches!(
        admits_probe(&mut m, 1, t0 + 250 * MS, &mut rng),
        Admit::Allow { probe: true, .. }
    ));

    // A host that never probed is not held back.
    let mut fresh = Machine::new(&c);
    fresh.adopt(half_open_now(t1), t1, &mut notes);
    assert!(matches!(
        admits_probe(&mut fresh, 0, t1, &mut rng),
        Admit::Allow { probe: true, .. }
    ));
}
