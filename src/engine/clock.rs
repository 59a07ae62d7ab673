//! Time as the engine's decisions receive it. Every decision takes its `now` as an argument;
//! only the async edges (the executor's loop, the canary loop, the fleet follower) read tokio's
//! clock, and the wall time they pair with it comes from a [`Clock`], never from a second
//! reading of the system clock.
//!
//! - [`Now`]: one instant on both clocks — tokio's monotonic clock (paused in tests; breaker and
//!   cooldown times) and the wall clock it corresponds to (what an HTTP-date `Retry-After` and
//!   the cooldown store's unix ms are read against). An attempt's result is judged once against
//!   one `Now`, so the failover classification and the breaker read the same Retry-After.
//! - [`Clock`]: the wall clock pinned to a monotonic instant: `wall(at) = wall_start + (at −
//!   start)`, so a paused or speed-compressed run has a wall time that follows its own clock.

use std::time::{Duration, SystemTime};

use tokio::time::Instant;

/// One instant on both clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// The monotonic instant (tokio's clock).
    pub at: Instant,
    /// The wall-clock time at `at`.
    pub wall: SystemTime,
}

impl Now {
    /// `at`, which is `wall` on the wall clock.
    pub fn new(at: Instant, wall: SystemTime) -> Self {
        Self { at, wall }
    }

    /// `d` later on both clocks (saturating on the wall clock).
    pub fn after(self, d: Duration) -> Self {
        Self {
            at: crate::util::speed::after(self.at, d),
            wall: self.wall.checked_add(d).unwrap_or(self.wall),
        }
    }
}

/// The wall clock pinned to tokio's: `start` is `wall_start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    start: Instant,
    wall_start: SystemTime,
}

impl Clock {
    /// A clock on which `start` is `wall_start`.
    pub fn new(start: Instant, wall_start: SystemTime) -> Self {
        Self { start, wall_start }
    }

    /// The monotonic instant the clock is pinned at (event times count from it).
    pub fn start(&self) -> Instant {
        self.start
    }

    /// The wall-clock time at `at` (`at` before `start` reads as `start`).
    pub fn wall(&self, at: Instant) -> SystemTime {
        self.wall_start + at.saturating_duration_since(self.start)
    }

    /// `at` on both clocks.
    pub fn at(&self, at: Instant) -> Now {
        Now::new(at, self.wall(at))
    }

    /// Reads tokio's clock: the edge's one clock read.
    pub fn now(&self) -> Now {
        self.at(Instant::now())
    }

    /// Whole ms from `start` to `at` (0 before it, saturating).
    pub fn ms_since_start(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.start).as_millis()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn wall_follows_the_monotonic_clock_from_its_pin() {
        let start = Instant::now();
        let wall0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let c = Clock::new(start, wall0);
        tokio::time::advance(Duration::from_millis(1_500)).await;
        let now = c.now();
        assert_eq!(now.at, start + Duration::from_millis(1_500));
        assert_eq!(now.wall, wall0 + Duration::from_millis(1_500));
        assert_eq!(c.ms_since_start(now.at), 1_500);
        // Before the pin: the pin itself, never a panic.
        let early = start.checked_sub(Duration::from_secs(1)).unwrap_or(start);
        assert_eq!(c.wall(early), wall0);
        assert_eq!(c.ms_since_start(early), 0);
        let later = now.after(Duration::from_secs(2));
        assert_eq!(later.at - now.at, Duration::from_secs(2));
        assert_eq!(
            later.wall.duration_since(now.wall).ok(),
            Some(Duration::from_secs(2))
        );
    }
}
