//! The one latency estimator of the engine: a bounded ring of recent latencies and its p99, and
//! "p99 × factor, clamped to [floor, cap]". The half-open probe timeout
//! ([`crate::engine::breaker::probe::probe_timeout`]) and the adaptive deadlines
//! ([`crate::engine::adaptive`]) both read it. Pure: no clock, no lock.

use std::time::Duration;

/// Latencies the breaker keeps for its probe timeout.
pub const BREAKER_SAMPLES: usize = 512;

/// The most recent latencies (at most `capacity`): a ring that overwrites its oldest sample once
/// full (the p99 sorts a copy, so the order kept is irrelevant).
#[derive(Debug, Clone)]
pub struct Latencies {
    recent: Vec<Duration>,
    /// Where the next sample goes once the ring is full.
    next: usize,
    capacity: usize,
}

impl Default for Latencies {
    /// The breaker's ring ([`BREAKER_SAMPLES`]).
    fn default() -> Self {
        Self::new(BREAKER_SAMPLES)
    }
}

impl Latencies {
    /// An empty ring keeping at most `capacity` samples (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            recent: Vec::new(),
            next: 0,
            capacity: capacity.max(1),
        }
    }

    /// Remembers one latency, forgetting the oldest beyond the capacity.
    #[inline]
    pub fn observe(&mut self, latency: Duration) {
        if self.recent.len() < self.capacity {
            self.recent.push(latency);
        } else {
            self.recent[self.next] = latency;
            // A branch, not `% capacity`: a division was most of a sample's cost.
            self.next += 1;
            if self.next >= self.capacity {
                self.next = 0;
            }
        }
    }

    /// [`Latencies::observe`] of each of `latencies`, in order, a slice at a time.
    pub fn observe_all(&mut self, mut latencies: &[Duration]) {
        let room = self.capacity - self.recent.len();
        if room > 0 {
            let (now, rest) = latencies.split_at(room.min(latencies.len()));
            self.recent.extend_from_slice(now);
            latencies = rest;
        }
        // Only the last `capacity` can stay.
        if latencies.len() > self.capacity {
            let skip = latencies.len() - self.capacity;
            self.next = (self.next + skip) % self.capacity;
            latencies = &latencies[skip..];
        }
        while !latencies.is_empty() {
            let take = latencies.len().min(self.capacity - self.next);
            let (now, rest) = latencies.split_at(take);
            self.recent[self.next..self.next + take].copy_from_slice(now);
            self.next = (self.next + take) % self.capacity;
            latencies = rest;
        }
    }

    /// Samples kept.
    pub fn len(&self) -> usize {
        self.recent.len()
    }

    /// True before the first sample.
    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }

    /// The 99th percentile (nearest rank) of the kept latencies, if any.
    pub fn p99(&self) -> Option<Duration> {
        self.p99_in(&mut Vec::new())
    }

    /// [`Latencies::p99`] computed in `scratch` (a buffer the caller keeps, so a p99 on every
    /// sample allocates nothing): a selection of the nearest rank, not a sort.
    pub fn p99_in(&self, scratch: &mut Vec<Duration>) -> Option<Duration> {
        if self.recent.is_empty() {
            return None;
        }
        scratch.clear();
        scratch.extend_from_slice(&self.recent);
        let rank = (scratch.len() * 99).div_ceil(100).max(1);
        let (_, nth, _) = scratch.select_nth_unstable(rank - 1);
        Some(*nth)
    }
}

/// `p99 × factor`, clamped to `[floor, cap]`; saturating: a huge factor (user input) times a
/// slow answer gives the cap instead of panicking.
pub fn scaled_p99(p99: Duration, factor: f64, floor: Duration, cap: Duration) -> Duration {
    Duration::try_from_secs_f64(p99.as_secs_f64() * factor)
        .unwrap_or(cap)
        .clamp(floor, cap.max(floor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn nearest_rank_p99_over_a_bounded_ring() {
        let mut l = Latencies::new(100);
        assert_eq!(l.p99(), None);
        for i in 1..=100 {
            l.observe(ms(i));
        }
        assert_eq!((l.len(), l.p99()), (100, Some(ms(99))));
        // 100 more fast samples push every earlier one out of the ring.
        for _ in 0..100 {
            l.observe(ms(5));
        }
        assert_eq!((l.len(), l.p99()), (100, Some(ms(5))));
    }

    #[test]
    fn the_selected_p99_is_the_sorted_nearest_rank_and_the_scratch_is_reused() {
        // Seeded data (a fixed LCG), rings of every fill level up to past their capacity.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut scratch = Vec::new();
        for capacity in [1, 7, 100, 512] {
            let mut l = Latencies::new(capacity);
            for _ in 0..(capacity * 2 + 3) {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                l.observe(ms(x >> 54));
                let mut sorted = l.recent.clone();
                sorted.sort_unstable();
                let rank = (sorted.len() * 99).div_ceil(100).max(1);
                assert_eq!(l.p99_in(&mut scratch), Some(sorted[rank - 1]));
                assert_eq!(l.p99(), Some(sorted[rank - 1]));
            }
        }
        assert!(scratch.capacity() >= 512, "one buffer, grown once");
    }

    /// A slice at a time keeps what one at a time keeps, in the same slots: rings of several
    /// capacities, slices shorter and longer than the ring, from every fill level.
    #[test]
    fn observing_a_slice_is_observing_each() {
        let mut x: u64 = 7;
        for capacity in [1, 3, 16, 512] {
            let (mut one, mut all) = (Latencies::new(capacity), Latencies::new(capacity));
            for _ in 0..60 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let n = (x >> 58) as usize * capacity / 16 + (x >> 60) as usize;
                let slice: Vec<Duration> = (0..n).map(|i| ms((x >> 40) % 997 + i as u64)).collect();
                for &l in &slice {
                    one.observe(l);
                }
                all.observe_all(&slice);
                assert_eq!(
                    (all.recent.clone(), all.next),
                    (one.recent.clone(), one.next),
                    "{capacity}"
                );
            }
        }
    }

    #[test]
    fn scaled_p99_clamps_and_saturates() {
        let (floor, cap) = (ms(100), ms(2000));
        assert_eq!(scaled_p99(ms(1000), 1.5, floor, cap), ms(1500));
        assert_eq!(scaled_p99(ms(10), 1.5, floor, cap), floor);
        assert_eq!(scaled_p99(ms(10_000), 1.5, floor, cap), cap);
        assert_eq!(scaled_p99(ms(10_000), f64::MAX, floor, cap), cap);
    }
}
