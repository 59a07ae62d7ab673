//! The sliding time window of the 5xx-ratio trip rule: every call recorded in the last `window`
//! (a call recorded exactly `window` ago has left it), and how many of them were 5xx.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// Calls of the last `length`, oldest first.
#[derive(Debug, Clone)]
pub struct Window {
    length: Duration,
    calls: VecDeque<(Instant, bool)>,
    failures: u32,
}

impl Window {
    /// An empty window of the given length.
    pub fn new(length: Duration) -> Self {
        Self {
            length,
            calls: VecDeque::new(),
            failures: 0,
        }
    }

    /// Drops calls recorded at or before `now - length`.
    pub fn evict(&mut self, now: Instant) {
        while let Some(&(at, failed)) = self.calls.front() {
            if now.saturating_duration_since(at) < self.length {
                break;
            }
            self.calls.pop_front();
            if failed {
                self.failures -= 1;
            }
        }
    }

    /// Records one call at `now` (`failed` = it was a 5xx) after evicting old ones.
    pub fn record(&mut self, now: Instant, failed: bool) {
        self.evict(now);
        self.calls.push_back((now, failed));
        if failed {
            self.failures += 1;
        }
    }

    /// Calls in the window (as of the last `record`/`evict`).
    pub fn calls(&self) -> u32 {
        self.calls.len() as u32
    }

    /// 5xx calls in the window.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Forgets everything (on close).
    pub fn clear(&mut self) {
        self.calls.clear();
        self.failures = 0;
    }
}

/// The ratio trip rule: at least `min_calls` calls and a 5xx share strictly above `ratio`.
pub fn ratio_trips(calls: u32, failures: u32, min_calls: u32, ratio: f64) -> bool {
    calls >= min_calls && calls > 0 && f64::from(failures) > ratio * f64::from(calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_rule_table() {
        // (calls, failures, trips)
        let table = [
            (19, 19, false), // not before 20 calls
            (20, 12, false), // exactly 60 % does not trip
            (20, 13, true),  // 65 %
            (30, 18, false), // exactly 60 %
            (30, 19, true),
            (0, 0, false),
        ];
        for (calls, failures, want) in table {
            assert_eq!(
                ratio_trips(calls, failures, 20, 0.6),
                want,
                "{calls}/{failures}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn calls_leave_the_window_after_its_length() {
        let t0 = Instant::now();
        let mut w = Window::new(Duration::from_secs(30));
        w.record(t0, true);
        w.record(t0 + Duration::from_secs(10), false);
        w.evict(t0 + Duration::from_millis(29_999));
        assert_eq!((w.calls(), w.failures()), (2, 1));
        w.evict(t0 + Duration::from_secs(30));
        assert_eq!((w.calls(), w.failures()), (1, 0));
        w.evict(t0 + Duration::from_secs(41));
        assert_eq!((w.calls(), w.failures()), (0, 0));
    }
}
