//! The pacer: a pure function from a line's recorded offset to its absolute send instant.
//!
//! Every send time is computed from the run start, never from the previous send
//! (`start + at_ms / speed`), so oversleeping one request never shifts the next one: there is no
//! drift to accumulate (GoReplay sleeps relative gaps and drifts; vegeta and oha schedule from an
//! absolute start, as we do).

use std::time::Duration;

use tokio::time::Instant;

use crate::util::speed::Speed;

/// The offset from the start at which a line recorded at `at_ms` is sent at `speed`.
///
/// Computed in nanoseconds and rounded to the nearest one, so integer speeds compress exactly
/// (`at_ms = 100` at speed 10 is exactly 10 ms). The crate's one saturating scale: an absurd
/// offset saturates, never a panic.
pub(crate) fn offset(at_ms: u64, speed: Speed) -> Duration {
    speed.scale(Duration::from_millis(at_ms))
}

/// The absolute instant at which a line recorded at `at_ms` is sent: `start + at_ms / speed`.
pub(crate) fn send_at(start: Instant, at_ms: u64, speed: Speed) -> Instant {
    crate::util::speed::after(start, offset(at_ms, speed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(v: f64) -> Speed {
        Speed::new(v).unwrap()
    }

    #[test]
    fn ten_rps_for_sixty_seconds_is_exact() {
        let start = Instant::now();
        for i in 0..600u64 {
            let t = send_at(start, i * 100, sp(1.0));
            assert_eq!(t - start, Duration::from_millis(i * 100), "line {i}");
        }
    }

    #[test]
    fn speed_ten_compresses_exactly() {
        let start = Instant::now();
        for i in 0..600u64 {
            assert_eq!(
                send_at(start, i * 100, sp(10.0)) - start,
                Duration::from_millis(i * 10)
            );
        }
        // Non-integer results are kept to the nanosecond, not truncated to milliseconds.
        assert_eq!(offset(1, sp(3.0)), Duration::from_nanos(333_333));
        assert_eq!(offset(7, sp(0.5)), Duration::from_millis(14));
    }

    #[test]
    fn schedule_is_absolute_not_relative() {
        // The send time of line i depends only on its own at_ms, never on earlier lines.
        let start = Instant::now();
        assert_eq!(
            send_at(start, 86_400_000, sp(1.0)) - start,
            Duration::from_secs(86_400)
        );
    }

    #[test]
    fn bad_speeds_are_rejected_and_never_panic() {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e9] {
            assert!(Speed::new(s).is_err(), "{s}");
        }
        assert!(Speed::new(0.25).is_ok());
        // The slowest speed and the furthest offset: saturates, no panic.
        let _ = offset(u64::MAX, sp(crate::util::speed::MIN_SPEED));
    }
}
