//! The pure part of adaptive deadlines: one dependency's [`Estimator`] (a bounded window of its
//! recent successful latencies, [`Latencies`], the estimator the half-open probe timeout reads),
//! the deadline it gives ([`Estimator::deadline`]), and the breaker rule for an expired deadline
//! ([`expiry_counts`]). Every input, `now` included, is passed in.

use std::time::Duration;

use tokio::time::Instant;

use crate::engine::latency::{Latencies, scaled_p99};
use crate::engine::vocab::DeadlineSource;

/// How a class's deadline adapts (nominal durations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Deadline = p99 × this.
    pub factor: f64,
    /// Never shorter than this.
    pub floor: Duration,
    /// Never longer than this.
    pub cap: Duration,
    /// Successes in the window before the deadline adapts.
    pub min_samples: usize,
}

/// One dependency's recent successes for one class.
#[derive(Debug, Clone)]
pub struct Estimator {
    latencies: Latencies,
    /// The adaptive deadline as of the last success, once `min_samples` were seen.
    current: Option<Duration>,
    /// When the latest success ended.
    last_success: Option<Instant>,
    /// The p99's working buffer (kept: one allocation per estimator, not per success).
    scratch: Vec<Duration>,
}

impl Estimator {
    /// An empty estimator keeping `window` successes.
    pub fn new(window: usize) -> Self {
        Self {
            latencies: Latencies::new(window),
            current: None,
            last_success: None,
            scratch: Vec::new(),
        }
    }

    /// Folds in a success of `latency` (nominal) that ended at `now`; the deadline is computed
    /// here, once per success, so reading it costs nothing.
    pub fn observe(&mut self, latency: Duration, now: Instant, b: &Bounds) {
        self.latencies.observe(latency);
        self.last_success = Some(self.last_success.map_or(now, |t| t.max(now)));
        // Below `min_samples` the fixed value applies: no p99 to compute.
        let p99 = if self.latencies.len() >= b.min_samples {
            self.latencies.p99_in(&mut self.scratch)
        } else {
            None
        };
        self.current = adaptive_deadline(p99, self.latencies.len(), b);
    }

    /// The deadline for the next call: the adaptive one once warmed up, else `fixed`.
    pub fn deadline(&self, fixed: Duration) -> (Duration, DeadlineSource) {
        match self.current {
            Some(d) => (d, DeadlineSource::Adaptive),
            None => (fixed, DeadlineSource::Fixed),
        }
    }

    /// When the latest success ended.
    pub fn last_success(&self) -> Option<Instant> {
        self.last_success
    }
}

/// p99 × factor clamped to `[floor, cap]`, or `None` (the fixed value applies) while fewer than
/// `min_samples` successes are in the window.
pub fn adaptive_deadline(p99: Option<Duration>, samples: usize, b: &Bounds) -> Option<Duration> {
    if samples < b.min_samples.max(1) {
        return None;
    }
    p99.map(|p| scaled_p99(p, b.factor, b.floor, b.cap))
}

/// Whether an expired deadline with nothing received counts towards the dependency's breaker
/// (docs/engine.md, "A deadline alone does not open a heavy tool's breaker"): a half-open probe's
/// always does; any other only when the dependency answered nothing since the attempt started
/// (`last_success` at or before `started`, or never). A hung dependency answers nothing, so its
/// expiries count; one still answering other calls is slow, not down.
pub fn expiry_counts(last_success: Option<Instant>, started: Instant, probe: bool) -> bool {
    probe || last_success.is_none_or(|t| t <= started)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn bounds() -> Bounds {
        Bounds {
            factor: 1.5,
            floor: ms(1_000),
            cap: ms(30_000),
            min_samples: 20,
        }
    }

    /// Seeded latencies uniform in `[lo, hi]` ms.
    fn seeded(rng: &mut ChaCha8Rng, n: usize, lo: u64, hi: u64) -> Vec<Duration> {
        (0..n).map(|_| ms(rng.gen_range(lo..=hi))).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn fixed_until_min_samples_then_p99_times_factor() {
        let b = bounds();
        let mut e = Estimator::new(100);
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        let fixed = ms(13_000);
        assert_eq!(e.deadline(fixed), (fixed, DeadlineSource::Fixed));
        let lat = seeded(&mut rng, 20, 8_000, 12_000);
        for (i, l) in lat.iter().enumerate() {
            tokio::time::advance(*l).await;
            e.observe(*l, Instant::now(), &b);
            let want = if i + 1 < 20 {
                DeadlineSource::Fixed
            } else {
                DeadlineSource::Adaptive
            };
            assert_eq!(e.deadline(fixed).1, want, "after {} successes", i + 1);
        }
        let mut sorted = lat.clone();
        sorted.sort();
        // Nearest-rank p99 of 20 samples is the largest; × 1.5.
        let want = Duration::from_secs_f64(sorted[19].as_secs_f64() * 1.5);
        assert_eq!(e.deadline(fixed), (want, DeadlineSource::Adaptive));
        assert!(want > ms(12_000) && want <= ms(18_000), "{want:?}");
    }

    #[test]
    fn clamped_at_floor_and_cap() {
        let b = bounds();
        let now = Instant::now();
        let mut fast = Estimator::new(50);
        let mut slow = Estimator::new(50);
        for _ in 0..20 {
            fast.observe(ms(40), now, &b); // 60 ms < floor
            slow.observe(ms(25_000), now, &b); // 37.5 s > cap
        }
        assert_eq!(
            fast.deadline(ms(30_000)),
            (b.floor, DeadlineSource::Adaptive)
        );
        assert_eq!(slow.deadline(ms(30_000)), (b.cap, DeadlineSource::Adaptive));
        assert_eq!(adaptive_deadline(Some(ms(40)), 19, &b), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slowdown_decays_once_it_leaves_the_window() {
        let b = bounds();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut e = Estimator::new(100);
        let feed = |e: &mut Estimator, lat: Vec<Duration>| {
            for l in lat {
                e.observe(l, Instant::now(), &b);
            }
        };
        feed(&mut e, seeded(&mut rng, 100, 800, 1_200));
        let healthy = e.deadline(ms(30_000)).0;
        assert!((ms(1_600)..=ms(1_800)).contains(&healthy), "{healthy:?}");
        // A slowdown: 10 successes at 4–5 s lift the p99 (10 % of the window > 1 %).
        tokio::time::advance(Duration::from_secs(60)).await;
        feed(&mut e, seeded(&mut rng, 10, 4_000, 5_000));
        let slowed = e.deadline(ms(30_000)).0;
        assert!((ms(6_000)..=ms(7_500)).contains(&slowed), "{slowed:?}");
        // 98 healthy successes later two slow samples are left: the p99 (rank 99 of 100) is
        // still one of them.
        feed(&mut e, seeded(&mut rng, 98, 800, 1_200));
        assert!(e.deadline(ms(30_000)).0 >= ms(6_000));
        // Two more, and the slowdown has left the window entirely.
        feed(&mut e, seeded(&mut rng, 2, 800, 1_200));
        let after = e.deadline(ms(30_000)).0;
        assert!((ms(1_600)..=ms(1_800)).contains(&after), "{after:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn expiry_counts_only_when_nothing_answered_since_the_start() {
        let t0 = Instant::now();
        tokio::time::advance(ms(500)).await;
        let t1 = Instant::now();
        // Never answered, or answered only before the attempt started: hung, counts.
        assert!(expiry_counts(None, t1, false));
        assert!(expiry_counts(Some(t0), t1, false));
        // An answer at the very instant the attempt started is not one since.
        assert!(expiry_counts(Some(t1), t1, false));
        // Another call answered while this one waited: slow, not down.
        assert!(!expiry_counts(Some(t1), t0, false));
        // A probe's expiry always counts.
        assert!(expiry_counts(Some(t1), t0, true));
    }
}
