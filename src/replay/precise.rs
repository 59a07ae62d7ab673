//! Precise waiting for the pacer: hit a send instant to well under a millisecond on the real
//! clock, without burning a core.
//!
//! tokio's timer wheel has 1 ms granularity and `sleep_until` rounds up, so a timer-only pacer
//! sends 1–2 ms late (plus the wake-up delay of a busy machine). [`Pacing::Precise`] waits in
//! three stages, each chosen by the pure [`wait_step`] from `now`:
//!
//! 1. **timer** — `sleep_until(deadline − spin − TIMER_SLOP)` on tokio's timer, which wakes the
//!    task 0.5–2.5 ms (+ wake-up delay) before the spin window;
//! 2. **nap** — `std::thread::sleep` in steps of at most [`NAP_MAX`] (the OS timer is
//!    microsecond-precise; on Linux the pacer thread's timer slack is 1 µs, see
//!    [`super::pacer_thread`]), yielding to the runtime between steps so responses keep flowing;
//! 3. **spin** — `yield_now` until the instant (each yield also polls the runtime's I/O), for
//!    at most the spin window: a quarter of the gap to the previous send, clamped to
//!    [`SPIN_MIN`]..=[`SPIN_MAX`] ([`spin_window`]). So a 10 RPS replay spins ≤ 1 ms per
//!    100 ms (1 % of a core) and a 1000 RPS replay ≤ 250 µs per ms.
//!
//! The spin window absorbs wake-up delays of the nap up to its length. Precise pacing needs the
//! real clock (it naps the OS thread); tests on tokio's paused clock use [`Pacing::Timer`].
//!
//!
//! The replays that run on a pacer thread of their own are [`super::threaded`].

use std::time::Duration;

use tokio::time::{Instant, sleep_until};

/// How the replayer waits for each send instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// tokio's `sleep_until` only: exact on the paused clock, 1–2 ms late on the real one.
    #[default]
    Timer,
    /// Timer, then OS naps, then a bounded yield-spin (real clock only; see the module docs).
    Precise,
    /// Timer, then OS naps to the instant, no spin (real clock only): a nap's wake-up delay
    /// late (tens of µs on a quiet host) at a small fraction of the CPU the spin takes. The run
    /// harness's pacer thread, whose engine needs the cores.
    Nap,
}

/// How far ahead of the spin window the timer is asked to wake the task: tokio's timer has 1 ms
/// granularity and rounds up, and its driver's park timeout is rounded to whole milliseconds
/// too, so it was seen firing up to ~2 ms late; the naps cover the rest. Measured on the twelve
/// pacer threads of `fleet-probe-storm` (release build, quiet 2-core machine): the median
/// host's pacer fired 152 µs late at p99 with 1.5 ms, 85–90 µs with 2.5 ms (the cost: two more
/// 500-µs naps per send; docs/bench/capacity.md (d)).
const TIMER_SLOP: Duration = Duration::from_micros(2_500);
/// Longest single OS nap, so the runtime's I/O is served at least this often.
const NAP_MAX: Duration = Duration::from_micros(500);
/// Shortest spin window.
const SPIN_MIN: Duration = Duration::from_micros(50);
/// Longest spin window.
const SPIN_MAX: Duration = Duration::from_millis(1);

/// What to do next to reach `deadline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitStep {
    /// The instant has come: send.
    Fire,
    /// Sleep on tokio's timer until this instant.
    Timer(Instant),
    /// Sleep the OS thread this long, then yield to the runtime.
    Nap(Duration),
    /// Yield to the runtime once and look again.
    Spin,
}

/// The spin window for a send that follows the previous one by `gap`: `gap / 4`, clamped to
/// [`SPIN_MIN`]..=[`SPIN_MAX`].
pub(crate) fn spin_window(gap: Duration) -> Duration {
    (gap / 4).clamp(SPIN_MIN, SPIN_MAX)
}

/// The next step towards `deadline` at `now` with spin window `spin` (pure).
fn wait_step(now: Instant, deadline: Instant, spin: Duration) -> WaitStep {
    let rem = deadline.saturating_duration_since(now);
    if rem.is_zero() {
        WaitStep::Fire
    } else if rem > spin + TIMER_SLOP {
        WaitStep::Timer(deadline - spin - TIMER_SLOP)
    } else if rem > spin {
        WaitStep::Nap((rem - spin).min(NAP_MAX))
    } else {
        WaitStep::Spin
    }
}

/// Waits until `deadline` as [`wait_step`] says. It first yields once, so a request spawned
/// just before (the previous send) is written before the thread naps.
pub(crate) async fn wait_precisely(deadline: Instant, spin: Duration) {
    tokio::task::yield_now().await;
    loop {
        match wait_step(Instant::now(), deadline, spin) {
            WaitStep::Fire => return,
            WaitStep::Timer(t) => sleep_until(t).await,
            WaitStep::Nap(d) => {
                std::thread::sleep(d);
                tokio::task::yield_now().await;
            }
            WaitStep::Spin => {
                std::hint::spin_loop();
                tokio::task::yield_now().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const US: Duration = Duration::from_micros(1);

    #[test]
    fn spin_window_is_a_quarter_of_the_gap_within_bounds() {
        assert_eq!(spin_window(100 * MS), SPIN_MAX, "10 RPS: 1 ms");
        assert_eq!(spin_window(MS), 250 * US, "1000 RPS: 250 µs");
        assert_eq!(spin_window(Duration::ZERO), SPIN_MIN, "burst");
        assert_eq!(spin_window(Duration::MAX), SPIN_MAX);
    }

    #[test]
    fn far_deadline_uses_the_timer_ahead_of_the_spin_window() {
        let now = Instant::now();
        let deadline = now + 100 * MS;
        assert_eq!(
            wait_step(now, deadline, MS),
            WaitStep::Timer(deadline - MS - TIMER_SLOP)
        );
        // Even if the timer fires 2 ms late, the thread still has ≥ 0.5 ms before the spin.
        let woke = deadline - MS - TIMER_SLOP + 2 * MS;
        assert!(matches!(wait_step(woke, deadline, MS), WaitStep::Nap(d) if d == 500 * US));
    }

    #[test]
    fn near_deadline_naps_in_bounded_steps_then_spins_then_fires() {
        let now = Instant::now();
        let deadline = now + 3 * MS;
        let spin = 250 * US;
        assert_eq!(
            wait_step(now, deadline, spin),
            WaitStep::Timer(deadline - spin - TIMER_SLOP)
        );
        assert_eq!(
            wait_step(deadline - 1_700 * US, deadline, spin),
            WaitStep::Nap(NAP_MAX)
        );
        assert_eq!(
            wait_step(deadline - 400 * US, deadline, spin),
            WaitStep::Nap(150 * US)
        );
        assert_eq!(
            wait_step(deadline - 250 * US, deadline, spin),
            WaitStep::Spin
        );
        assert_eq!(wait_step(deadline - US, deadline, spin), WaitStep::Spin);
        assert_eq!(wait_step(deadline, deadline, spin), WaitStep::Fire);
        assert_eq!(wait_step(deadline + MS, deadline, spin), WaitStep::Fire);
    }

    #[test]
    fn without_a_spin_window_it_naps_to_the_instant_and_never_spins() {
        let start = Instant::now();
        let deadline = start + 100 * MS;
        let mut now = start;
        let mut naps = 0;
        loop {
            match wait_step(now, deadline, Duration::ZERO) {
                WaitStep::Fire => break,
                WaitStep::Timer(t) => {
                    assert_eq!(t, deadline - TIMER_SLOP);
                    now = t + MS; // the timer fires 1 ms late
                }
                WaitStep::Nap(d) => {
                    assert!(d <= NAP_MAX && !d.is_zero());
                    naps += 1;
                    now += d;
                }
                WaitStep::Spin => panic!("spun without a spin window"),
            }
        }
        assert_eq!(now, deadline, "naps end on the instant");
        assert_eq!(naps, 3, "1.5 ms left after the late timer: three naps");
    }

    #[test]
    fn simulated_wait_spins_no_longer_than_the_window() {
        // Walk the steps with a simulated clock: naps end on time, timers fire 1 ms late.
        let start = Instant::now();
        let deadline = start + 100 * MS;
        let spin = spin_window(100 * MS);
        let (mut now, mut spun) = (start, Duration::ZERO);
        loop {
            match wait_step(now, deadline, spin) {
                WaitStep::Fire => break,
                WaitStep::Timer(t) => now = t + MS,
                WaitStep::Nap(d) => now += d,
                WaitStep::Spin => {
                    now += 10 * US;
                    spun += 10 * US;
                }
            }
        }
        assert!(now >= deadline && now - deadline < 10 * US);
        assert!(spun <= spin, "spun {spun:?}");
    }
}
