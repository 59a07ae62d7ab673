//! What a replay did: one record per sent request and the summary the CLI prints, with
//! schedule-lag and latency percentiles from HDR histograms.
//!
//! - **lag** = actual send time − intended send time (how late the replayer was);
//! - **latency** = completion − *intended* send time, so a replayer that fell behind cannot hide
//!   the wait (no coordinated omission: wrk2's definition).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

/// One sent request. Times are milliseconds since the replay's start instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRecord {
    /// Index of the line in the traffic file (0-based, blank lines not counted).
    pub seq: u64,
    /// When the schedule said to send it (`at_ms / speed`).
    pub intended_ms: f64,
    /// When it was actually handed to the dispatcher.
    pub sent_ms: f64,
    /// When the dispatcher finished; `None` if the replay was stopped while it was in flight.
    pub done_ms: Option<f64>,
    /// The dispatcher's verdict (false while unfinished).
    pub ok: bool,
    /// The error class (`http_503`, `transport`, `timeout`, ...; `stopped` when unfinished).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// True when the in-flight limit was full at its intended time, so it waited for a slot.
    pub overflow: bool,
}

/// The outcome of a whole replay (complete or stopped early).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplaySummary {
    /// Lines in the traffic.
    pub total: u64,
    /// Requests handed to the dispatcher.
    pub sent: u64,
    /// Requests the dispatcher reported ok.
    pub ok: u64,
    /// Failed requests by error kind (unfinished ones are not errors; see `unfinished`).
    pub errors: BTreeMap<String, u64>,
    /// Requests that found the in-flight limit full at their intended time. They were still
    /// sent once a slot freed (never dropped), with the wait showing in their lag.
    pub overflow: u64,
    /// Requests still in flight when the replay was stopped.
    pub unfinished: u64,
    /// True when the stop future ended the replay before every line was sent and answered.
    pub stopped: bool,
    /// Schedule lag percentiles, in ms.
    pub lag_p50_ms: f64,
    /// 99th percentile of the schedule lag, in ms.
    pub lag_p99_ms: f64,
    /// Largest schedule lag, in ms.
    pub lag_max_ms: f64,
    /// Latency from the intended send time, median, in ms (finished requests only).
    pub latency_p50_ms: f64,
    /// 99th percentile of the latency from the intended send time, in ms.
    pub latency_p99_ms: f64,
    /// Largest latency from the intended send time, in ms.
    pub latency_max_ms: f64,
    /// One record per sent request, in `seq` order.
    pub records: Vec<RequestRecord>,
    /// The pacer thread's OS settings when it ran on one of its own (`rehearse replay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacer_thread: Option<String>,
}

/// Microsecond HDR histogram, 1 µs to 1 h, three significant digits (values above saturate),
/// plus the exact maximum (HDR reports the top of the maximum's bucket).
struct Hist(Option<Histogram<u64>>, f64);

impl Hist {
    fn new() -> Self {
        Self(
            Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).ok(),
            0.0,
        )
    }

    fn record_ms(&mut self, ms: f64) {
        let ms = ms.max(0.0);
        self.1 = self.1.max(ms);
        if let Some(h) = &mut self.0 {
            h.saturating_record((ms * 1000.0).round() as u64);
        }
    }

    fn quantile_ms(&self, q: f64) -> f64 {
        match &self.0 {
            // Never above the exact maximum (bucket tops can exceed it).
            Some(h) if !h.is_empty() => (h.value_at_quantile(q) as f64 / 1000.0).min(self.1),
            _ => 0.0,
        }
    }

    fn max_ms(&self) -> f64 {
        self.1
    }
}

impl ReplaySummary {
    /// Builds the summary from per-request records (`records` sorted by `seq` here).
    pub fn from_records(total: u64, mut records: Vec<RequestRecord>, stopped: bool) -> Self {
        records.sort_by_key(|r| r.seq);
        let mut lag = Hist::new();
        let mut latency = Hist::new();
        let mut errors = BTreeMap::new();
        let (mut ok, mut overflow, mut unfinished) = (0, 0, 0);
        for r in &records {
            lag.record_ms(r.sent_ms - r.intended_ms);
            overflow += u64::from(r.overflow);
            match r.done_ms {
                None => unfinished += 1,
                Some(done) => {
                    latency.record_ms(done - r.intended_ms);
                    if r.ok {
                        ok += 1;
                    } else {
                        let kind = r.error_kind.clone().unwrap_or_else(|| "error".into());
                        *errors.entry(kind).or_insert(0) += 1;
                    }
                }
            }
        }
        Self {
            total,
            sent: records.len() as u64,
            ok,
            errors,
            overflow,
            unfinished,
            stopped,
            lag_p50_ms: lag.quantile_ms(0.5),
            lag_p99_ms: lag.quantile_ms(0.99),
            lag_max_ms: lag.max_ms(),
            latency_p50_ms: latency.quantile_ms(0.5),
            latency_p99_ms: latency.quantile_ms(0.99),
            latency_max_ms: latency.max_ms(),
            records,
            pacer_thread: None,
        }
    }

    /// Failed requests of every kind.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// The human summary `rehearse replay` prints (several lines, no trailing newline).
    pub fn render(&self) -> String {
        let errors = if self.errors.is_empty() {
            "none".to_string()
        } else {
            self.errors
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut s = format!(
            "sent {} of {} · ok {} · errors {} ({errors}) · overflow {} · unfinished {}{}\n",
            self.sent,
            self.total,
            self.ok,
            self.error_count(),
            self.overflow,
            self.unfinished,
            if self.stopped {
                " · stopped early"
            } else {
                ""
            },
        );
        s.push_str(&format!(
            "lag ms: p50 {:.3} p99 {:.3} max {:.3}\n",
            self.lag_p50_ms, self.lag_p99_ms, self.lag_max_ms
        ));
        s.push_str(&format!(
            "latency ms (from intended send time): p50 {:.3} p99 {:.3} max {:.3}",
            self.latency_p50_ms, self.latency_p99_ms, self.latency_max_ms
        ));
        if let Some(p) = &self.pacer_thread {
            s.push_str(&format!("\npacer thread: {p}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, intended: f64, sent: f64, done: Option<f64>, ok: bool) -> RequestRecord {
        RequestRecord {
            seq,
            intended_ms: intended,
            sent_ms: sent,
            done_ms: done,
            ok,
            error_kind: (!ok && done.is_some()).then(|| "http_503".to_string()),
            overflow: sent > intended + 5.0,
        }
    }

    #[test]
    fn counts_and_percentiles() {
        let records = vec![
            rec(2, 200.0, 200.0, Some(300.0), false),
            rec(0, 0.0, 0.5, Some(10.0), true),
            rec(1, 100.0, 120.0, None, false),
        ];
        let s = ReplaySummary::from_records(5, records, true);
        assert_eq!(
            (s.total, s.sent, s.ok, s.unfinished, s.overflow),
            (5, 3, 1, 1, 1)
        );
        assert_eq!(s.errors.get("http_503"), Some(&1));
        assert_eq!(s.records[0].seq, 0);
        assert!((s.lag_max_ms - 20.0).abs() < 0.05, "{}", s.lag_max_ms);
        assert!((s.lag_p50_ms - 0.5).abs() < 0.01, "{}", s.lag_p50_ms);
        assert!((s.latency_max_ms - 100.0).abs() < 0.1);
        let text = s.render();
        assert!(text.contains("sent 3 of 5"), "{text}");
        assert!(text.contains("http_503=1"), "{text}");
        assert!(text.contains("stopped early"), "{text}");
    }

    #[test]
    fn empty_replay_is_all_zero() {
        let s = ReplaySummary::from_records(0, vec![], false);
        assert_eq!(s.lag_p99_ms, 0.0);
        assert_eq!(s.latency_p99_ms, 0.0);
        assert!(s.render().contains("errors 0 (none)"));
    }
}
