//! What a replay did: one record per sent request and the summary the CLI prints, with
//! schedule-lag and latency percentiles from HDR histograms. The replayer folds each request into
//! a [`Tally`] as it finishes, so a caller that does not need the records (the run harness) keeps
//! only the histograms and counts, whatever the traffic's length.
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
    /// One record per sent request, in `seq` order (empty when the replay kept none, see
    /// `ReplayOptions::keep_records`).
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

/// The summary's numbers, one request at a time: histograms and counts, and the records
/// themselves only when asked to keep them.
pub(crate) struct Tally {
    lag: Hist,
    latency: Hist,
    errors: BTreeMap<String, u64>,
    sent: u64,
    ok: u64,
    overflow: u64,
    unfinished: u64,
    records: Option<Vec<RequestRecord>>,
}

impl Tally {
    /// An empty tally; `keep_records` keeps every record for [`ReplaySummary::records`].
    pub(crate) fn new(keep_records: bool) -> Self {
        Self {
            lag: Hist::new(),
            latency: Hist::new(),
            errors: BTreeMap::new(),
            sent: 0,
            ok: 0,
            overflow: 0,
            unfinished: 0,
            records: keep_records.then(Vec::new),
        }
    }

    /// Adds one sent request (finished, or unfinished with `done_ms: None`).
    pub(crate) fn add(&mut self, r: RequestRecord) {
        self.sent += 1;
        self.lag.record_ms(r.sent_ms - r.intended_ms);
        self.overflow += u64::from(r.overflow);
        match r.done_ms {
            None => self.unfinished += 1,
            Some(done) => {
                self.latency.record_ms(done - r.intended_ms);
                if r.ok {
                    self.ok += 1;
                } else {
                    let kind = r.error_kind.as_deref().unwrap_or("error");
                    match self.errors.get_mut(kind) {
                        Some(n) => *n += 1,
                        None => {
                            self.errors.insert(kind.to_string(), 1);
                        }
                    }
                }
            }
        }
        if let Some(records) = &mut self.records {
            records.push(r);
        }
    }

    /// The summary of a replay of `total` lines (`stopped` early or not).
    pub(crate) fn finish(self, total: u64, stopped: bool) -> ReplaySummary {
        let mut records = self.records.unwrap_or_default();
        records.sort_by_key(|r| r.seq);
        ReplaySummary {
            total,
            sent: self.sent,
            ok: self.ok,
            errors: self.errors,
            overflow: self.overflow,
            unfinished: self.unfinished,
            stopped,
            lag_p50_ms: self.lag.quantile_ms(0.5),
            lag_p99_ms: self.lag.quantile_ms(0.99),
            lag_max_ms: self.lag.max_ms(),
            latency_p50_ms: self.latency.quantile_ms(0.5),
            latency_p99_ms: self.latency.quantile_ms(0.99),
            latency_max_ms: self.latency.max_ms(),
            records,
            pacer_thread: None,
        }
    }
}

impl ReplaySummary {
    /// Builds the summary from per-request records (`records` sorted by `seq` here).
    #[cfg(test)] // used by the tests only
    fn from_records(total: u64, records: Vec<RequestRecord>, stopped: bool) -> Self {
        let mut tally = Tally::new(true);
        for r in records {
            tally.add(r);
        }
        tally.finish(total, stopped)
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

    #[test]
    fn a_tally_without_records_has_the_same_numbers() {
        let records = vec![
            rec(0, 0.0, 0.5, Some(10.0), true),
            rec(1, 100.0, 120.0, None, false),
            rec(2, 200.0, 200.0, Some(300.0), false),
        ];
        let full = ReplaySummary::from_records(5, records.clone(), true);
        let mut tally = Tally::new(false);
        for r in records.into_iter().rev() {
            tally.add(r);
        }
        let lean = tally.finish(5, true);
        assert!(lean.records.is_empty());
        assert_eq!(
            lean,
            ReplaySummary {
                records: vec![],
                ..full
            }
        );
    }
}
