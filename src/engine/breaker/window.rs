//! The sliding time window of the 5xx-ratio trip rule: every call recorded in the last `window`
//! (a call recorded exactly `window` ago has left it), and how many of them were 5xx.
//!
//! Each call is kept as one `i64`: its nanoseconds from the first instant the window saw (signed:
//! workers' results can arrive slightly out of order), shifted left once, with the low bit set
//! for a 5xx. A window of 30 s at 10 000 calls/s holds 300 000 calls; at 8 bytes each instead of
//! an `(Instant, bool)`'s 24, recording one and evicting the oldest stays in cache, and the age
//! test is one integer comparison instead of an `Instant` subtraction per call looked at.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// Calls of the last `length`, oldest first.
#[derive(Debug, Clone)]
pub struct Window {
    /// The window's length in nanoseconds (saturated: an absurd length keeps every call).
    length: i64,
    /// The instant offsets count from (the first one recorded or evicted at).
    origin: Option<Instant>,
    /// `offset << 1 | failed` per call, in the order recorded.
    calls: VecDeque<i64>,
    failures: u32,
}

/// Nanoseconds as an `i64`, saturated (±292 years).
fn nanos(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

impl Window {
    /// An empty window of the given length.
    pub fn new(length: Duration) -> Self {
        Self {
            length: nanos(length),
            origin: None,
            calls: VecDeque::new(),
            failures: 0,
        }
    }

    /// `now` as signed nanoseconds from the origin, halved in range so the shift cannot
    /// overflow (saturated at ±146 years).
    fn offset(&mut self, now: Instant) -> i64 {
        let origin = *self.origin.get_or_insert(now);
        let off = match now.checked_duration_since(origin) {
            Some(d) => nanos(d),
            None => -nanos(origin.duration_since(now)),
        };
        off.clamp(i64::MIN >> 1, i64::MAX >> 1)
    }

    /// Drops calls recorded at or before `now - length`.
    pub fn evict(&mut self, now: Instant) {
        let now = self.offset(now);
        self.evict_at(now);
    }

    fn evict_at(&mut self, now: i64) {
        while let Some(&call) = self.calls.front() {
            // `saturating_duration_since`: a call recorded after `now` is 0 old.
            let age = now.saturating_sub(call >> 1).max(0);
            if age < self.length {
                break;
            }
            self.calls.pop_front();
            if call & 1 == 1 {
                self.failures -= 1;
            }
        }
    }

    /// Records one call at `now` (`failed` = it was a 5xx) after evicting old ones.
    pub fn record(&mut self, now: Instant, failed: bool) {
        let now = self.offset(now);
        self.evict_at(now);
        self.calls.push_back(now << 1 | i64::from(failed));
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

    /// The packed window against the plain `(Instant, bool)` queue it replaced, over seeded
    /// random gaps (some zero, some backwards: results of several workers arrive out of order).
    #[tokio::test(start_paused = true)]
    async fn the_packed_window_counts_as_a_queue_of_instants_does() {
        use rand::{Rng, SeedableRng};
        let t0 = Instant::now() + Duration::from_secs(3600);
        let length = Duration::from_millis(1_500);
        for seed in 0..20 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut w = Window::new(length);
            let mut plain: VecDeque<(Instant, bool)> = VecDeque::new();
            let mut t = t0;
            for _ in 0..2_000 {
                let step = Duration::from_micros(rng.gen_range(0..400_000));
                t = if rng.gen_bool(0.1) {
                    t - step / 4
                } else {
                    t + step
                };
                let failed = rng.gen_bool(0.3);
                let evict_only = rng.gen_bool(0.1);
                while let Some(&(at, _)) = plain.front() {
                    if t.saturating_duration_since(at) < length {
                        break;
                    }
                    plain.pop_front();
                }
                if evict_only {
                    w.evict(t);
                } else {
                    w.record(t, failed);
                    plain.push_back((t, failed));
                }
                let want = (
                    plain.len() as u32,
                    plain.iter().filter(|(_, f)| *f).count() as u32,
                );
                assert_eq!((w.calls(), w.failures()), want, "seed {seed}");
            }
        }
    }
}
