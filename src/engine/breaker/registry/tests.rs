//! The registry's events: the trip reason in the transition and its log line, and a Retry-After
//! read against the wall time the caller passed in (not the system clock).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use super::*;
use crate::engine::breaker::TripReason;
use crate::engine::events::Collector;
use crate::engine::outcome::TransportFailure;

fn refused() -> AttemptResult {
    AttemptResult::Transport {
        failure: TransportFailure::Refused,
    }
}

fn registry(sink: Arc<Collector>, t0: Instant) -> Breakers {
    Breakers::new(BreakerConfig::default(), Speed::ONE, 7, sink, t0)
}

#[tokio::test(start_paused = true)]
async fn a_trip_names_its_rule_in_the_event_and_the_log_line() {
    let t0 = Instant::now();
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let sink = Arc::new(Collector::default());
    let b = registry(sink.clone(), t0);
    for i in 0..5 {
        let at = t0 + Duration::from_millis(10 * i);
        b.observe("crm_search", 0, false, &refused(), Now::new(at, wall));
    }
    let trips: Vec<_> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::BreakerTransition {
                to: BreakerState::Open,
                reason,
                ..
            } => Some((e.t_ms, reason, e.log)),
            _ => None,
        })
        .collect();
    assert_eq!(
        trips,
        [(
            40,
            Some(TripReason::ConsecutiveFailures),
            Some("Breaker crm_search: closed → open (consecutive_failures)".to_string())
        )]
    );
}

/// The breaker reads an HTTP-date Retry-After against the wall time of the `Now` it is handed:
/// a date 90 s after that wall time holds the breaker open for 90 s, whatever the system clock
/// says (it used to read `SystemTime::now()`, a second clock beside the executor's).
#[tokio::test(start_paused = true)]
async fn an_http_date_retry_after_is_read_against_the_callers_wall_clock() {
    let t0 = Instant::now();
    // A wall clock far from the system's: 2027-01-15.
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let sink = Arc::new(Collector::default());
    let b = registry(sink.clone(), t0);
    let date = httpdate::fmt_http_date(wall + Duration::from_secs(90));
    let busy = AttemptResult::Http {
        status: 503,
        retry_after: Some(date),
        provider_code: None,
        latency: Duration::from_millis(5),
    };
    b.observe("crm_search", 0, false, &busy, Now::new(t0, wall));
    for _ in 0..5 {
        b.observe("crm_search", 0, false, &refused(), Now::new(t0, wall));
    }
    // Open for 30 s, then held open by the Retry-After until 90 s.
    b.tick(t0 + Duration::from_secs(31));
    let skips: Vec<_> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::RetryAfterSkip { until_ms, .. } => Some((e.t_ms, until_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(skips, [(30_000, 90_000)]);
    assert!(b.open_at("crm_search", t0 + Duration::from_secs(89)));
    assert!(!b.open_at("crm_search", t0 + Duration::from_secs(90)));
}
