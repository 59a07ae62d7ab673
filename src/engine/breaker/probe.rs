//! Half-open pacing: one probe in flight, probe starts at least `probe_interval` plus a seeded
//! uniform jitter apart, a probe timeout from the dependency's observed p99 latency, and the
//! closing rule (N consecutive successes from M distinct workers).

use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

use super::config::BreakerConfig;
pub use crate::engine::latency::Latencies;
use crate::engine::latency::scaled_p99;

/// Probe timeout = p99 × factor, clamped to [floor, cap] (the estimator the adaptive deadlines
/// share, [`crate::engine::latency`]); the cap when nothing was observed yet.
pub fn probe_timeout(p99: Option<Duration>, cfg: &BreakerConfig) -> Duration {
    match p99 {
        None => cfg.probe_timeout_cap,
        // Saturating: a huge factor (user input) times a slow answer must not panic.
        Some(p) => scaled_p99(
            p,
            cfg.probe_timeout_factor,
            cfg.probe_timeout_floor,
            cfg.probe_timeout_cap,
        ),
    }
}

/// A uniform jitter in `[0, max]` drawn from the (seeded) RNG, at millisecond-fraction precision.
pub fn jitter(rng: &mut impl Rng, max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    Duration::from_nanos(rng.gen_range(0..=max.as_nanos() as u64))
}

/// The probe currently admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// The worker running it.
    pub worker: usize,
    /// When it was admitted.
    pub started: Instant,
    /// Its timeout.
    pub timeout: Duration,
}

/// State of a half-open breaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HalfOpen {
    /// When the breaker became half-open.
    pub since: Instant,
    /// The earliest start of the next probe.
    pub next_probe_at: Instant,
    /// The probe in flight, if any.
    pub in_flight: Option<InFlight>,
    /// Workers of the consecutive probe successes so far.
    pub streak: Vec<usize>,
}

impl HalfOpen {
    /// A breaker that just became half-open at `since`; the first probe may start at once.
    pub fn new(since: Instant) -> Self {
        Self {
            since,
            next_probe_at: since,
            in_flight: None,
            streak: Vec::new(),
        }
    }

    /// Admits `worker`'s call as the probe if none is in flight and the pacing allows it.
    /// `Ok(())` when admitted (the caller gives it `timeout`), `Err(earliest)` otherwise.
    /// A probe whose result never came back is forgotten once its timeout plus one interval
    /// has passed, so a lost result cannot wedge the breaker.
    pub fn try_admit(
        &mut self,
        worker: usize,
        now: Instant,
        timeout: Duration,
        cfg: &BreakerConfig,
        rng: &mut impl Rng,
    ) -> Result<(), Instant> {
        if let Some(p) = self.in_flight {
            let lost_at = p.started + p.timeout + cfg.probe_interval;
            if now < lost_at {
                return Err(self.next_probe_at.max(now + cfg.probe_interval));
            }
            self.in_flight = None;
        }
        if now < self.next_probe_at {
            return Err(self.next_probe_at);
        }
        self.in_flight = Some(InFlight {
            worker,
            started: now,
            timeout,
        });
        self.next_probe_at = now + cfg.probe_interval + jitter(rng, cfg.probe_jitter);
        Ok(())
    }

    /// Takes the in-flight probe if it belongs to `worker` (a late result of a forgotten probe
    /// belongs to nobody and is ignored).
    pub fn finish(&mut self, worker: usize) -> bool {
        match self.in_flight {
            Some(p) if p.worker == worker => {
                self.in_flight = None;
                true
            }
            _ => false,
        }
    }

    /// Records a probe success by `worker`; true when the breaker should close.
    pub fn succeed(&mut self, worker: usize, cfg: &BreakerConfig) -> bool {
        self.streak.push(worker);
        closes(
            &self.streak,
            cfg.probe_successes,
            cfg.probe_distinct_workers,
        )
    }
}

/// The closing rule: at least `successes` consecutive successes from at least `distinct` workers.
pub fn closes(streak: &[usize], successes: u32, distinct: u32) -> bool {
    let mut workers: Vec<usize> = streak.to_vec();
    workers.sort_unstable();
    workers.dedup();
    streak.len() >= successes as usize && workers.len() >= distinct as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn closing_rule_table() {
        let table: [(&[usize], bool); 5] = [
            (&[1], false),
            (&[1, 1], false), // the same worker twice does not close
            (&[1, 2], true),  // two distinct workers do
            (&[1, 1, 2], true),
            (&[3, 3, 3, 3], false),
        ];
        for (streak, want) in table {
            assert_eq!(closes(streak, 2, 2), want, "{streak:?}");
        }
    }

    #[test]
    fn p99_and_timeout_clamp() {
        let cfg = BreakerConfig::default();
        let mut l = Latencies::default();
        assert_eq!(probe_timeout(l.p99(), &cfg), cfg.probe_timeout_cap);
        for ms in 1..=100 {
            l.observe(Duration::from_millis(ms * 10));
        }
        assert_eq!(l.p99(), Some(Duration::from_millis(990)));
        assert_eq!(probe_timeout(l.p99(), &cfg), Duration::from_millis(1386));
        assert_eq!(
            probe_timeout(Some(Duration::from_millis(1)), &cfg),
            cfg.probe_timeout_floor
        );
        assert_eq!(
            probe_timeout(Some(Duration::from_secs(60)), &cfg),
            cfg.probe_timeout_cap
        );
    }

    #[test]
    fn jitter_stays_inside_its_bound_and_is_seeded() {
        let max = Duration::from_millis(50);
        let mut a = ChaCha8Rng::seed_from_u64(7);
        let mut b = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..1000 {
            let j = jitter(&mut a, max);
            assert!(j <= max);
            assert_eq!(j, jitter(&mut b, max));
        }
    }
}
