//! One behavioural suite, two coordinators: every scenario runs against the in-process room (on
//! paused time) and a real redis-server (real time, generous tolerances), each with host clocks
//! in step and skewed by ±2 s. Several `Breakers` with distinct host ids share one backend.
//!
//! Longer than 400 lines on purpose: one behavioural suite written once and run against both
//! coordinators and with skewed clocks.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rehearse::engine::admission::{Admission, Admit};
use rehearse::engine::breaker::BreakerConfig;
use rehearse::engine::breaker::{Breakers, HostClock};
use rehearse::engine::coordinator::{CooldownWrite, HostId};
use rehearse::engine::events::{BreakerState, Collector, EventKind};
use rehearse::engine::outcome::{AttemptResult, Reason};
use tokio::time::Instant;

use crate::support::breaker::{DEP, ok, reset};
use crate::support::fleet::{Backend, Counting, Fleet, Probes, drive, gaps};
use crate::support::metrics::promtool_check;

const INTERVAL: Duration = Duration::from_millis(250);
const OPEN_FOR: Duration = Duration::from_secs(1);
/// Host clocks: one 2 s behind, one in step, one 2 s ahead (cycled over the hosts).
const SKEWS: &[i64] = &[-2000, 0, 2000];

fn cfg(successes: u32) -> BreakerConfig {
    BreakerConfig {
        open_for: OPEN_FOR,
        open_for_cap: Duration::from_secs(8),
        probe_interval: INTERVAL,
        probe_jitter: Duration::from_millis(50),
        probe_successes: successes,
        probe_distinct_workers: 2,
        ..BreakerConfig::default()
    }
}

/// How much earlier than the interval two probe starts may be measured: none in the room on
/// paused time; with Redis the lease is timed by Redis and the grant reaches each host after
/// its own round trip, so a busy 2-core machine may shift a start by a few ms.
fn slack(be: &Backend) -> Duration {
    if be.real_time() {
        Duration::from_millis(25)
    } else {
        Duration::ZERO
    }
}

/// Every host has seen `dep` (so its follower follows it), then host `by` trips it.
async fn known_then_tripped(fleet: &Fleet, by: usize) {
    for h in &fleet.hosts {
        h.call(DEP, 0, &ok(5)).await;
    }
    for _ in 0..5 {
        fleet.hosts[by].call(DEP, 0, &reset()).await;
    }
    assert_eq!(fleet.hosts[by].b.state(DEP), BreakerState::Open);
}

/// Waits for a probe on `host` (every 5 ms, at most 3 s) and answers it with `r`.
async fn probe_on(fleet: &Fleet, host: usize, r: AttemptResult) {
    let h = &fleet.hosts[host];
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(3) {
        if let Admit::Allow { probe, .. } = h.admit(DEP, 0).await {
            assert!(probe, "{}: a half-open breaker admitted a non-probe", h.id);
            h.record(DEP, 0, true, &r).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{}: no probe admitted within 3 s", h.id);
}

async fn trip_by(h: &crate::support::fleet::Host) {
    for _ in 0..5 {
        h.call(DEP, 0, &reset()).await;
    }
}

fn epochs(fleet: &Fleet) -> Vec<u64> {
    fleet.hosts.iter().map(|h| h.b.epoch(DEP)).collect()
}

/// With coordination no two probes start closer than the interval, across six hosts.
async fn probes_are_spaced_fleet_wide(be: Backend, skews: &[i64]) {
    let fleet = Fleet::new(Some(&be), 6, &cfg(1000), skews);
    known_then_tripped(&fleet, 0).await;
    let seen = fleet.until(INTERVAL, |f| {
        f.states(DEP).iter().all(|s| *s == BreakerState::Open)
    });
    assert!(
        seen.await.is_some(),
        "not open everywhere: {:?}",
        fleet.states(DEP)
    );
    let probes: Probes = Arc::new(Mutex::new(Vec::new()));
    drive(
        &fleet,
        DEP,
        OPEN_FOR + Duration::from_millis(2500),
        ok(10),
        &probes,
    )
    .await;
    let g = gaps(&probes, None);
    assert!(g.len() >= 5, "too few probes for a spacing claim: {g:?}");
    let min = g.iter().min().copied().unwrap_or_default();
    assert!(min + slack(&be) >= INTERVAL, "probes {min:?} apart: {g:?}");
    // 2.5 s of half-open at one probe per 250-300 ms.
    assert!(g.len() <= 11, "more probes than intervals: {}", g.len() + 1);
}

/// Close only after probe successes from two distinct hosts; then closed on every host.
async fn close_needs_two_distinct_hosts(be: Backend, skews: &[i64]) {
    let fleet = Fleet::new(Some(&be), 3, &cfg(2), skews);
    known_then_tripped(&fleet, 0).await;
    tokio::time::sleep(OPEN_FOR + Duration::from_millis(50)).await;
    probe_on(&fleet, 0, ok(10)).await;
    probe_on(&fleet, 0, ok(10)).await;
    tokio::time::sleep(INTERVAL).await;
    assert!(
        fleet
            .states(DEP)
            .iter()
            .all(|s| *s == BreakerState::HalfOpen),
        "two successes of one host closed it: {:?}",
        fleet.states(DEP)
    );
    probe_on(&fleet, 1, ok(10)).await;
    assert_eq!(fleet.hosts[1].b.state(DEP), BreakerState::Closed);
    let all = fleet.until(INTERVAL, |f| {
        f.states(DEP).iter().all(|s| *s == BreakerState::Closed)
    });
    assert!(
        all.await.is_some(),
        "not closed everywhere: {:?}",
        fleet.states(DEP)
    );
    let e = epochs(&fleet);
    assert!(e.iter().all(|x| *x == e[0] && *x >= 2), "epochs {e:?}");
}

/// A trip on one host opens the dependency on every host within one probe interval; two hosts
/// tripping together make one epoch.
async fn a_trip_opens_every_host(be: Backend, skews: &[i64]) {
    let fleet = Fleet::new(Some(&be), 5, &cfg(2), skews);
    known_then_tripped(&fleet, 2).await;
    let took = fleet
        .until(INTERVAL, |f| {
            f.states(DEP).iter().all(|s| *s == BreakerState::Open)
        })
        .await;
    assert!(
        took.is_some(),
        "not open everywhere within {INTERVAL:?}: {:?}",
        fleet.states(DEP)
    );
    assert!(
        epochs(&fleet).iter().all(|e| *e == 1),
        "epochs {:?}",
        epochs(&fleet)
    );
    // Hosts 0 and 1, still following epoch 1 when it closes, trip again together.
    tokio::time::sleep(OPEN_FOR + Duration::from_millis(50)).await;
    probe_on(&fleet, 3, ok(10)).await;
    probe_on(&fleet, 4, ok(10)).await;
    let closed = fleet.until(INTERVAL, |f| {
        f.states(DEP).iter().all(|s| *s == BreakerState::Closed)
    });
    assert!(closed.await.is_some(), "{:?}", fleet.states(DEP));
    let (a, b) = (&fleet.hosts[0], &fleet.hosts[1]);
    futures_util::join!(trip_by(a), trip_by(b));
    let agreed = fleet.until(INTERVAL, |f| {
        f.states(DEP).iter().all(|s| *s == BreakerState::Open) && epochs(f).iter().all(|e| *e == 3)
    });
    assert!(
        agreed.await.is_some(),
        "{:?} {:?}",
        fleet.states(DEP),
        epochs(&fleet)
    );
}

/// The closed hot path makes no coordinator call; the trip makes exactly one.
async fn closed_hot_path_stays_local(be: Backend, skews: &[i64]) {
    let counting = Arc::new(Counting::new(be.coordinator()));
    let clock = HostClock::skewed(skews[0]);
    let b = Breakers::new(
        cfg(2),
        rehearse::util::speed::Speed::ONE,
        7,
        Arc::new(Collector::default()),
        clock.now(),
    )
    .with_coordinator(counting.clone(), HostId::new("h0").unwrap(), clock);
    for i in 0..1000u32 {
        let now = clock.now();
        let a = b.admit_async(DEP, (i % 4) as usize, now).await;
        assert!(matches!(a, Admit::Allow { probe: false, .. }));
        b.record_async(
            DEP,
            (i % 4) as usize,
            false,
            &ok(5),
            crate::support::at(now),
        )
        .await;
    }
    assert_eq!(counting.calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    for _ in 0..5 {
        b.record_async(DEP, 0, false, &reset(), clock.read()).await;
    }
    assert_eq!(counting.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!((b.state(DEP), b.epoch(DEP)), (BreakerState::Open, 1));
}

/// Coordinator down: every host falls back (mode local, errors counted, promtool-valid metrics),
/// keeps deciding with at most one probe per host per interval; back: rejoin within one interval,
/// the hosts agree again and the probes are spaced fleet-wide again.
async fn outage_falls_back_and_rejoins(mut be: Backend, skews: &[i64]) {
    let fleet = Fleet::new(Some(&be), 4, &cfg(1000), skews);
    known_then_tripped(&fleet, 0).await;
    let open = fleet.until(INTERVAL, |f| {
        f.states(DEP).iter().all(|s| *s == BreakerState::Open)
    });
    assert!(open.await.is_some(), "{:?}", fleet.states(DEP));
    be.down();
    let local = fleet.until(Duration::from_secs(1), |f| {
        f.hosts.iter().all(|h| h.mode() == "local")
    });
    assert!(
        local.await.is_some(),
        "modes {:?}",
        fleet.hosts.iter().map(|h| h.mode()).collect::<Vec<_>>()
    );

    let probes: Probes = Arc::new(Mutex::new(Vec::new()));
    drive(
        &fleet,
        DEP,
        OPEN_FOR + Duration::from_millis(1500),
        ok(10),
        &probes,
    )
    .await;
    for (i, h) in fleet.hosts.iter().enumerate() {
        let g = gaps(&probes, Some(i));
        assert!(!g.is_empty(), "{}: fewer than two local probes", h.id);
        let min = g.iter().min().copied().unwrap_or_default();
        assert!(
            min >= INTERVAL,
            "{}: local probes {min:?} apart: {g:?}",
            h.id
        );
        let kinds = h.coordinator_events();
        assert!(
            kinds
                .iter()
                .any(|k| matches!(k, EventKind::CoordinatorError { op, .. } if op == "read")),
            "{}: {kinds:?}",
            h.id
        );
        let text = h.metrics.render();
        assert!(
            text.contains("coordinator_mode{mode=\"local\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(&format!("coordinator_mode{{mode=\"{}\"}} 0", be.mode())),
            "{text}"
        );
        assert!(
            text.contains("coordinator_errors_total{op=\"read\"}"),
            "{text}"
        );
    }
    let (valid, report) = promtool_check(&fleet.hosts[0].metrics.render());
    assert!(valid, "promtool: {report}");
    // Without the coordinator the hosts probed alone: more than one probe per interval fleet-wide.
    let storm = gaps(&probes, None)
        .iter()
        .filter(|g| **g < INTERVAL)
        .count();
    assert!(storm > 0, "hosts deciding alone never probed together");

    be.restart();
    let back = fleet
        .until(INTERVAL, |f| f.hosts.iter().all(|h| h.mode() == be.mode()))
        .await;
    assert!(back.is_some(), "no rejoin within {INTERVAL:?}");
    let agreed = fleet.until(INTERVAL, |f| {
        let (s, e) = (f.states(DEP), epochs(f));
        s.iter().all(|x| *x == s[0]) && e.iter().all(|x| *x == e[0] && *x >= 1)
    });
    assert!(
        agreed.await.is_some(),
        "{:?} {:?}",
        fleet.states(DEP),
        epochs(&fleet)
    );
    let after: Probes = Arc::new(Mutex::new(Vec::new()));
    drive(&fleet, DEP, Duration::from_millis(1500), ok(10), &after).await;
    let g = gaps(&after, None);
    assert!(g.len() >= 3, "too few probes after the rejoin: {g:?}");
    let min = g.iter().min().copied().unwrap_or_default();
    assert!(
        min + slack(&be) >= INTERVAL,
        "after the rejoin probes {min:?} apart: {g:?}"
    );
}

/// Profile cooldowns in `usageStats` shape, shared, never shortened, gone at `cooldownUntil`.
async fn cooldowns_are_shared(be: Backend, skews: &[i64]) {
    let fleet = Fleet::new(Some(&be), 2, &cfg(2), skews);
    let write = CooldownWrite {
        cool_for: Duration::from_secs(1),
        reason: Some(Reason::Timeout),
        error_count: 2,
        failure_counts: [("timeout".to_string(), 2)].into(),
    };
    let p = "openai-codex:default";
    let left = fleet.hosts[0]
        .b
        .share_cooldown(p, &write)
        .await
        .expect("shared");
    assert!(
        left <= write.cool_for && left + slack(&be) >= write.cool_for,
        "{left:?}"
    );
    let (c, until) = fleet.hosts[1]
        .b
        .shared_cooldown(p)
        .await
        .expect("readable on h1");
    assert_eq!(c.stats.cooldown_reason, Some(Reason::Timeout));
    assert_eq!(
        (c.stats.error_count, c.stats.failure_counts.get("timeout")),
        (Some(2), Some(&2))
    );
    let (cu, lf) = (
        c.stats.cooldown_until.unwrap(),
        c.stats.last_failure_at.unwrap(),
    );
    assert_eq!(cu - lf, 1000, "cooldownUntil - lastFailureAt");
    let h1_now = fleet.hosts[1].clock.now();
    assert!(
        until > h1_now && until <= h1_now + write.cool_for,
        "ends on h1's clock"
    );
    let shorter = CooldownWrite {
        cool_for: Duration::from_millis(100),
        ..write.clone()
    };
    let kept = fleet.hosts[1]
        .b
        .share_cooldown(p, &shorter)
        .await
        .expect("shared");
    assert!(
        kept > Duration::from_millis(500),
        "a shorter write shortened it: {kept:?}"
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(
        fleet.hosts[0].b.shared_cooldown(p).await.is_none(),
        "outlived cooldownUntil"
    );
}

macro_rules! suite {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;

            #[tokio::test(start_paused = true)]
            async fn in_process() {
                super::$name(Backend::in_process(), &[0]).await
            }

            #[tokio::test(start_paused = true)]
            async fn in_process_skewed() {
                super::$name(Backend::in_process(), SKEWS).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis() {
                super::$name(Backend::redis(), &[0]).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis_skewed() {
                super::$name(Backend::redis(), SKEWS).await
            }
        }
    )*};
}

suite!(
    probes_are_spaced_fleet_wide,
    close_needs_two_distinct_hosts,
    a_trip_opens_every_host,
    closed_hot_path_stays_local,
    outage_falls_back_and_rejoins,
    cooldowns_are_shared,
);

/// The control: the same six hosts without a coordinator storm the recovering dependency.
#[tokio::test(start_paused = true)]
async fn without_coordination_the_hosts_storm() {
    let fleet = Fleet::new(None, 6, &cfg(1000), &[0]);
    for h in &fleet.hosts {
        for _ in 0..5 {
            h.call(DEP, 0, &reset()).await;
        }
    }
    let probes: Probes = Arc::new(Mutex::new(Vec::new()));
    drive(
        &fleet,
        DEP,
        OPEN_FOR + Duration::from_millis(1000),
        ok(10),
        &probes,
    )
    .await;
    let close = gaps(&probes, None)
        .iter()
        .filter(|g| **g < INTERVAL)
        .count();
    assert!(
        close >= 5,
        "expected a storm, {close} gaps under the interval"
    );
}
