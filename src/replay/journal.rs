//! The recording's output file: lines written in arrival order, one `write` per line, so a
//! killed recorder leaves every completed line readable.
//!
//! Each request reserves a sequence number and its `at_ms` (offset of its arrival from the first
//! request's, rounded to the nearest ms) under one lock when its handler starts. Arrivals are the
//! kernel's receive times (see [`crate::transport::arrival`]), so two requests on different
//! connections can reach their handlers in the opposite order; the later handler's `at_ms` is
//! then raised to the earlier one's, so `at_ms` never decreases along the file (such a pair
//! arrived within one scheduler delay of each other). A line is written once it and every earlier one are complete; a WebSocket session stays
//! pending (its message count is still growing) until it closes. [`Journal::finish`] writes what
//! is left, counting sessions still open with the messages seen so far.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio::time::Instant;

use super::traffic::TrafficLine;
use crate::engine::RequestKind;

/// What the recorder wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordStats {
    /// Lines written.
    pub recorded: u64,
    /// Requests forwarded but not recordable (unknown route, non-JSON body, no message sent).
    pub skipped: u64,
}

#[derive(Debug)]
enum Entry {
    Ready(Option<TrafficLine>),
    Ws(TrafficLine, Arc<AtomicU32>),
}

/// The ordered, line-flushed writer.
#[derive(Debug)]
pub(crate) struct Journal<W: Write> {
    out: W,
    t0: Option<Instant>,
    last_at_ms: u64,
    next_seq: u64,
    next_write: u64,
    pending: BTreeMap<u64, Entry>,
    stats: RecordStats,
    error: Option<std::io::Error>,
}

impl<W: Write> Journal<W> {
    /// A journal writing into `out`.
    pub(crate) fn new(out: W) -> Self {
        Self {
            out,
            t0: None,
            last_at_ms: 0,
            next_seq: 0,
            next_write: 0,
            pending: BTreeMap::new(),
            stats: RecordStats::default(),
            error: None,
        }
    }

    /// Reserves the next sequence number for a request that arrived `now`; returns it and its
    /// `at_ms`. The first request defines `at_ms = 0`.
    pub(crate) fn reserve(&mut self, now: Instant) -> (u64, u64) {
        let t0 = *self.t0.get_or_insert(now);
        let nanos = now.saturating_duration_since(t0).as_nanos();
        let at_ms = u64::try_from((nanos + 500_000) / 1_000_000)
            .unwrap_or(u64::MAX)
            .max(self.last_at_ms);
        self.last_at_ms = at_ms;
        let seq = self.next_seq;
        self.next_seq += 1;
        (seq, at_ms)
    }

    /// Completes `seq` with its line (`None`: forwarded but not recorded).
    pub(crate) fn complete(&mut self, seq: u64, line: Option<TrafficLine>) {
        self.pending.insert(seq, Entry::Ready(line));
        self.flush_ready();
    }

    /// Marks `seq` as an open WebSocket session whose message count is `count`.
    pub(crate) fn ws_open(&mut self, seq: u64, line: TrafficLine, count: Arc<AtomicU32>) {
        self.pending.insert(seq, Entry::Ws(line, count));
    }

    /// The session `seq` closed: its line is final now.
    pub(crate) fn ws_closed(&mut self, seq: u64) {
        if let Some(Entry::Ws(line, count)) = self.pending.remove(&seq) {
            self.pending
                .insert(seq, Entry::Ready(ws_line(line, &count)));
        }
        self.flush_ready();
    }

    /// Writes everything still pending (open sessions with their count so far; requests whose
    /// body never completed are dropped) and returns the stats, or the first write error.
    pub(crate) fn finish(&mut self) -> Result<RecordStats, std::io::Error> {
        let pending = std::mem::take(&mut self.pending);
        for (_, entry) in pending {
            let line = match entry {
                Entry::Ready(line) => line,
                Entry::Ws(line, count) => ws_line(line, &count),
            };
            self.write(line);
        }
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert(e);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.stats),
        }
    }

    fn flush_ready(&mut self) {
        while let Some(entry) = self.pending.get(&self.next_write) {
            if matches!(entry, Entry::Ws(..)) {
                break;
            }
            if let Some(Entry::Ready(line)) = self.pending.remove(&self.next_write) {
                self.write(line);
            }
            self.next_write += 1;
        }
    }

    fn write(&mut self, line: Option<TrafficLine>) {
        let Some(line) = line else {
            self.stats.skipped += 1;
            return;
        };
        let mut text = line.to_json();
        text.push('\n');
        match self
            .out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
        {
            Ok(()) => self.stats.recorded += 1,
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }
}

/// A session line with its final count; a session that sent nothing is not recordable.
fn ws_line(mut line: TrafficLine, count: &AtomicU32) -> Option<TrafficLine> {
    let n = count.load(Ordering::SeqCst);
    if n == 0 {
        return None;
    }
    if let RequestKind::Ws { messages, .. } = &mut line.kind {
        *messages = n;
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn tool(at_ms: u64) -> Option<TrafficLine> {
        Some(TrafficLine {
            at_ms,
            kind: RequestKind::Tool {
                name: "t".into(),
                body: serde_json::json!({}),
                idempotent: true,
                idempotency_key: None,
            },
            tenant: None,
            budget_tokens: None,
            session: None,
            class: None,
        })
    }

    fn text(j: &Journal<Vec<u8>>) -> String {
        String::from_utf8(j.out.clone()).unwrap()
    }

    #[test]
    fn lines_are_written_in_arrival_order_as_soon_as_possible() {
        let t0 = Instant::now();
        let mut j = Journal::new(Vec::new());
        let (a, at_a) = j.reserve(t0 + Duration::from_millis(7));
        let (b, at_b) = j.reserve(t0 + Duration::from_micros(107_600));
        assert_eq!(
            (at_a, at_b),
            (0, 101),
            "offsets from the first request, rounded"
        );
        j.complete(b, tool(at_b));
        assert_eq!(text(&j), "", "b waits for a");
        j.complete(a, tool(at_a));
        assert_eq!(text(&j).lines().count(), 2);
        assert!(text(&j).starts_with("{\"at_ms\":0,"));
    }

    #[test]
    fn an_arrival_reserved_after_a_later_one_never_goes_back_in_time() {
        let t0 = Instant::now();
        let mut j = Journal::new(Vec::new());
        let (_, a) = j.reserve(t0 + Duration::from_millis(10));
        let (_, b) = j.reserve(t0 + Duration::from_millis(50));
        let (_, c) = j.reserve(t0 + Duration::from_millis(48));
        let (_, d) = j.reserve(t0 + Duration::from_millis(5));
        let (_, e) = j.reserve(t0 + Duration::from_millis(60));
        assert_eq!((a, b, c, d, e), (0, 40, 40, 40, 50));
    }

    #[test]
    fn open_sessions_hold_later_lines_until_closed_or_finished() {
        let t0 = Instant::now();
        let mut j = Journal::new(Vec::new());
        let (w, at) = j.reserve(t0);
        let count = Arc::new(AtomicU32::new(0));
        let ws = TrafficLine {
            kind: RequestKind::Ws {
                channel: "realtime".into(),
                messages: 1,
            },
            ..tool(at).unwrap()
        };
        j.ws_open(w, ws, count.clone());
        let (t, at_t) = j.reserve(t0 + Duration::from_millis(50));
        j.complete(t, tool(at_t));
        assert_eq!(text(&j), "");
        count.store(3, Ordering::SeqCst);
        j.ws_closed(w);
        let out = text(&j);
        assert!(
            out.lines().next().unwrap().contains("\"messages\":3"),
            "{out}"
        );
        assert_eq!(out.lines().count(), 2);
        let (u, _) = j.reserve(t0);
        j.ws_open(u, tool(0).unwrap(), Arc::new(AtomicU32::new(0)));
        let (v, _) = j.reserve(t0);
        j.complete(v, None);
        assert_eq!(
            j.finish().unwrap(),
            RecordStats {
                recorded: 2,
                skipped: 2
            }
        );
    }
}
