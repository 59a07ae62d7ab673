//! The replayer on paused time: exact instants, open model, overflow, stop.

use std::time::Duration;

use super::*;
use crate::engine::RequestKind;
use crate::util::speed::sp;

/// Records when each request was dispatched, then "answers" after `delay(seq)`.
struct Probe {
    sends: Mutex<Vec<(u64, Instant)>>,
    delay: fn(u64) -> Duration,
}

impl Probe {
    fn new(delay: fn(u64) -> Duration) -> Arc<Self> {
        Arc::new(Self {
            sends: Mutex::new(Vec::new()),
            delay,
        })
    }

    fn sends(&self) -> Vec<(u64, Instant)> {
        self.sends.lock().unwrap().clone()
    }
}

impl Dispatcher for Probe {
    fn dispatch(
        &self,
        seq: u64,
        _line: TrafficLine,
    ) -> impl Future<Output = DispatchOutcome> + Send {
        self.sends.lock().unwrap().push((seq, Instant::now()));
        let delay = (self.delay)(seq);
        async move {
            tokio::time::sleep(delay).await;
            if seq % 7 == 3 {
                DispatchOutcome::error("http_503")
            } else {
                DispatchOutcome::ok()
            }
        }
    }
}

fn uniform(n: u64, gap_ms: u64) -> Vec<TrafficLine> {
    (0..n)
        .map(|i| TrafficLine {
            at_ms: i * gap_ms,
            kind: RequestKind::Ws {
                channel: "c".into(),
                messages: 1,
            },
            tenant: None,
            budget_tokens: None,
            session: None,
            class: None,
        })
        .collect()
}

fn opts(speed: Speed, max_in_flight: usize) -> ReplayOptions {
    ReplayOptions {
        speed,
        max_in_flight,
        start: Instant::now(),
        pacing: Pacing::Timer,
        keep_records: true,
    }
}

#[tokio::test(start_paused = true)]
async fn ten_rps_for_sixty_seconds_sends_at_exactly_the_scheduled_instants() {
    let probe = Probe::new(|_| Duration::from_millis(30));
    let o = opts(Speed::ONE, 64);
    let s = replay(uniform(600, 100), probe.clone(), o, std::future::pending()).await;
    let sends = probe.sends();
    assert_eq!(sends.len(), 600);
    for (i, (seq, at)) in sends.iter().enumerate() {
        assert_eq!(*seq, i as u64);
        assert_eq!(
            *at - o.start,
            Duration::from_millis(100 * i as u64),
            "line {i}"
        );
    }
    assert_eq!(
        (s.sent, s.overflow, s.unfinished, s.stopped),
        (600, 0, 0, false)
    );
    assert_eq!(s.lag_max_ms, 0.0);
    assert_eq!(s.errors.get("http_503"), Some(&86));
    assert_eq!(s.ok, 600 - 86);
    assert_eq!(s.records[599].intended_ms, 59_900.0);
    assert_eq!(s.records[599].sent_ms, 59_900.0);
    assert_eq!(s.records[599].done_ms, Some(59_930.0));
}

#[tokio::test(start_paused = true)]
async fn speed_ten_compresses_exactly() {
    let probe = Probe::new(|_| Duration::from_millis(1));
    let o = opts(sp(10.0), 64);
    let s = replay(uniform(600, 100), probe.clone(), o, std::future::pending()).await;
    for (i, (_, at)) in probe.sends().iter().enumerate() {
        assert_eq!(
            *at - o.start,
            Duration::from_millis(10 * i as u64),
            "line {i}"
        );
    }
    assert_eq!(s.sent, 600);
    assert_eq!(s.lag_max_ms, 0.0);
}

#[tokio::test(start_paused = true)]
async fn slow_target_does_not_delay_later_sends() {
    // Every response takes 5 s (the first one 60 s): 50 more lines are sent meanwhile.
    let probe = Probe::new(|seq| Duration::from_secs(if seq == 0 { 60 } else { 5 }));
    let o = opts(Speed::ONE, 1024);
    let s = replay(uniform(100, 100), probe.clone(), o, std::future::pending()).await;
    for (i, (_, at)) in probe.sends().iter().enumerate() {
        assert_eq!(
            *at - o.start,
            Duration::from_millis(100 * i as u64),
            "line {i}"
        );
    }
    assert_eq!(s.lag_max_ms, 0.0);
    assert_eq!(s.overflow, 0);
    // Latency runs from the intended time: 5 s for most, 60 s for the first.
    assert_eq!(s.records[1].done_ms, Some(5_100.0));
    assert_eq!(s.latency_max_ms, 60_000.0);
    assert!(
        (s.latency_p50_ms - 5_000.0).abs() < 5.0,
        "{}",
        s.latency_p50_ms
    );
}

#[tokio::test(start_paused = true)]
async fn overflow_is_counted_and_still_sent_in_order() {
    // 2 slots, 250 ms responses, 100 ms gaps: the third line finds both slots busy.
    let probe = Probe::new(|_| Duration::from_millis(250));
    let o = opts(Speed::ONE, 2);
    let s = replay(uniform(10, 100), probe.clone(), o, std::future::pending()).await;
    assert_eq!(s.sent, 10, "nothing dropped");
    assert_eq!(s.ok + s.error_count(), 10);
    assert!(s.overflow >= 5, "overflow {}", s.overflow);
    assert!(!s.records[0].overflow && !s.records[1].overflow);
    assert!(s.records[2].overflow);
    // Line 2 (due at 200 ms) goes out when line 0 frees its slot at 250 ms.
    assert_eq!(s.records[2].sent_ms, 250.0);
    assert!(s.lag_max_ms > 0.0);
    let seqs: Vec<u64> = probe.sends().iter().map(|(seq, _)| *seq).collect();
    assert_eq!(seqs, (0..10).collect::<Vec<_>>(), "sent in schedule order");
    assert!(s.records.iter().all(|r| r.sent_ms >= r.intended_ms));
}

#[tokio::test(start_paused = true)]
async fn stop_ends_dispatching_and_returns_a_partial_summary() {
    let probe = Probe::new(|_| Duration::from_secs(5));
    let o = opts(Speed::ONE, 64);
    let stop = tokio::time::sleep(Duration::from_millis(1_050));
    let s = replay(uniform(100, 100), probe.clone(), o, stop).await;
    assert_eq!(
        Instant::now() - o.start,
        Duration::from_millis(1_050),
        "returns at once"
    );
    assert!(s.stopped);
    assert_eq!((s.total, s.sent, s.unfinished), (100, 11, 11));
    assert_eq!(s.ok, 0);
    assert!(s.records.iter().all(|r| r.done_ms.is_none()));
    assert_eq!(s.records[0].error_kind.as_deref(), Some("stopped"));
    assert_eq!(s.error_count(), 0, "unfinished requests are not errors");
}

#[tokio::test(start_paused = true)]
async fn stop_during_drain_cancels_in_flight_requests() {
    let probe = Probe::new(|seq| Duration::from_secs(if seq == 4 { 600 } else { 1 }));
    let o = opts(Speed::ONE, 64);
    let stop = tokio::time::sleep(Duration::from_secs(10));
    let s = replay(uniform(5, 100), probe.clone(), o, stop).await;
    assert_eq!(Instant::now() - o.start, Duration::from_secs(10));
    assert!(s.stopped);
    assert_eq!((s.sent, s.unfinished, s.ok, s.error_count()), (5, 1, 3, 1));
}
