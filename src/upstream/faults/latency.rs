//! `kind = "latency"`: the normal response, but its headers come `delay ± jitter` late.

use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault};

/// Attributes of a `latency` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyFault {
    /// Added before the headers (divided by the speed factor).
    #[serde(with = "humantime_serde")]
    pub delay: Duration,
    /// Uniform jitter: the delay becomes `delay ± jitter` (never below 0), from the seeded RNG.
    #[serde(default, with = "humantime_serde")]
    pub jitter: Duration,
}

impl Fault for LatencyFault {
    fn name(&self) -> &'static str {
        "latency"
    }

    fn action(&self, ctx: &mut ActionCtx<'_>) -> Action {
        let delay = ctx.scale(self.delay);
        let jitter = ctx.scale(self.jitter);
        if jitter.is_zero() {
            return Action::Delay(delay);
        }
        let j = jitter.as_secs_f64();
        let offset = ctx.rng.gen_range(-j..=j);
        Action::Delay(
            Duration::try_from_secs_f64((delay.as_secs_f64() + offset).max(0.0))
                .unwrap_or(Duration::MAX),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn delays(seed: u64, n: usize) -> Vec<Duration> {
        let f = LatencyFault {
            delay: Duration::from_millis(200),
            jitter: Duration::from_millis(50),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let mut ctx = ActionCtx {
                    speed: crate::util::speed::sp(2.0),
                    wall_now: UNIX_EPOCH,
                    rng: &mut rng,
                };
                match f.action(&mut ctx) {
                    Action::Delay(d) => d,
                    other => panic!("unexpected {other:?}"),
                }
            })
            .collect()
    }

    #[test]
    fn jitter_stays_in_bounds_and_is_seeded() {
        let a = delays(7, 200);
        assert_eq!(a, delays(7, 200));
        assert_ne!(a, delays(8, 200));
        // speed 2: 100 ms ± 25 ms
        for d in &a {
            assert!(*d >= Duration::from_millis(75) && *d <= Duration::from_millis(125));
        }
    }
}
