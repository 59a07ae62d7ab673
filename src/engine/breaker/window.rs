//! The sliding time window of the 5xx-ratio trip rule: every call recorded in the last `window`
//! (a call recorded exactly `window` ago has left it), and how many of them were 5xx.
//!
//! The calls are kept in order in runs of up to [`RUN`]: each run holds their instants, the
//! earliest and the latest of them, their 5xx flags as the bits of one word, and how many at
//! its front have left. A window of 30 s at 10 000 calls/s holds 300 000 calls, and the oldest
//! were written 30 s earlier: out of cache. Eviction looks at the oldest run's earliest and
//! latest instants first: a run whose latest has left is dropped whole, and one whose earliest
//! stays is left alone, without reading its calls (its buffer is kept for a next run: no
//! allocation once the window has filled); otherwise its calls are looked at from the front,
//! in the order recorded, until one stays. The evicted 5xx of a run are one population count.
//!
//! Recording a call computes the instant `window` before it once (a subtraction of the
//! standard library's, not inlined) and compares instants (inlined). The registry replays the
//! successes it logged without its lock in batches ([`Window::record_successes`]): copied into
//! the runs a slice at a time, and, when the last of them is the latest, evicted once at the
//! end, which is what recording them one by one evicts. (The calls used to be kept one `i64`
//! each — nanoseconds from the first instant, with the 5xx flag in the low bit — in one queue
//! evicted call by call: 8 bytes a call instead of 16, but two subtractions through the
//! standard library per record, and no batch without one per call.)

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// Calls per run (the bits of a `u64`).
const RUN: usize = 64;
/// Buffers of dropped runs kept for new ones (a batch can drop and open two or three runs).
const SPARES: usize = 4;

/// Up to [`RUN`] calls, in the order recorded.
#[derive(Debug, Clone)]
struct Run {
    /// When each call was recorded (capacity [`RUN`]).
    at: Vec<Instant>,
    /// The earliest of `at`.
    earliest: Instant,
    /// The latest of `at`.
    latest: Instant,
    /// Bit `i`: call `i` was a 5xx.
    failed: u64,
    /// Calls at the front that have left the window.
    gone: usize,
}

/// The first `n` bits (`n ≤ 64`).
fn low_bits(n: usize) -> u64 {
    if n >= RUN { u64::MAX } else { (1u64 << n) - 1 }
}

/// Calls of the last `length`, oldest first.
#[derive(Debug, Clone)]
pub struct Window {
    length: Duration,
    runs: VecDeque<Run>,
    /// Buffers of runs dropped, for the next runs (at most [`SPARES`]).
    spare: Vec<Vec<Instant>>,
    calls: u32,
    failures: u32,
}

/// Which calls have left the window at some instant.
#[derive(Debug, Clone, Copy)]
enum Gone {
    /// None: the window reaches back further than any instant (its length saturates).
    None,
    /// Those recorded at or before this instant.
    UpTo(Instant),
    /// Every call (a window of length zero: a call is at least 0 old, later ones included).
    All,
}

impl Gone {
    #[inline]
    fn covers(self, t: Instant) -> bool {
        match self {
            Gone::None => false,
            Gone::UpTo(edge) => t <= edge,
            Gone::All => true,
        }
    }
}

impl Window {
    /// An empty window of the given length.
    pub fn new(length: Duration) -> Self {
        Self {
            length,
            runs: VecDeque::new(),
            spare: Vec::new(),
            calls: 0,
            failures: 0,
        }
    }

    /// The calls gone from the window at `now`: those at least `length` old (a call recorded
    /// after `now` is 0 old).
    #[inline]
    fn gone_at(&self, now: Instant) -> Gone {
        if self.length.is_zero() {
            return Gone::All;
        }
        // The standard library's subtraction, without tokio's wrapper around it.
        match now.into_std().checked_sub(self.length) {
            Some(edge) => Gone::UpTo(Instant::from_std(edge)),
            None => Gone::None,
        }
    }

    /// Drops calls recorded at or before `now - length`.
    #[inline]
    pub fn evict(&mut self, now: Instant) {
        let gone = self.gone_at(now);
        self.evict_gone(gone);
    }

    /// Drops calls from the front while they are `gone`.
    #[inline]
    fn evict_gone(&mut self, gone: Gone) {
        if matches!(gone, Gone::None) {
            return;
        }
        while let Some(run) = self.runs.front_mut() {
            let from = run.gone;
            let n = match gone {
                _ if gone.covers(run.latest) => run.at.len() - from,
                // None gone, without reading a call (the first of a whole run is out of cache).
                Gone::UpTo(edge) if from == 0 && run.earliest > edge => 0,
                Gone::UpTo(edge) => run.at[from..].iter().take_while(|&&t| t <= edge).count(),
                Gone::None | Gone::All => 0, // `covers` answered for these
            };
            if n == 0 {
                return;
            }
            if run.failed != 0 {
                let left = run.failed & low_bits(from + n) & !low_bits(from);
                self.failures -= left.count_ones();
            }
            self.calls -= n as u32;
            run.gone += n;
            if run.gone < run.at.len() {
                return; // a call still in the window: every later one stays too
            }
            self.drop_front();
        }
    }

    /// Drops the front run, all of whose calls have left; keeps its buffer for a next run.
    #[cold]
    fn drop_front(&mut self) {
        if let Some(done) = self.runs.pop_front() {
            self.keep(done.at);
        }
    }

    fn keep(&mut self, mut buffer: Vec<Instant>) {
        if self.spare.len() < SPARES {
            buffer.clear();
            self.spare.push(buffer);
        }
    }

    /// Records one call at `now` (`failed` = it was a 5xx) after evicting old ones.
    #[inline]
    pub fn record(&mut self, now: Instant, failed: bool) {
        self.evict(now);
        let run = self.back_with_room(now);
        run.failed |= u64::from(failed) << run.at.len();
        run.latest = run.latest.max(now);
        run.earliest = run.earliest.min(now);
        run.at.push(now);
        self.calls += 1;
        self.failures += u32::from(failed);
    }

    /// The back run if it has room, else a new one (on the last dropped run's buffer when
    /// there is one); `first` is the instant of the first call it will take.
    #[inline]
    fn back_with_room(&mut self, first: Instant) -> &mut Run {
        if self.runs.back().is_none_or(|run| run.at.len() >= RUN) {
            self.open_run(first);
        }
        let last = self.runs.len() - 1;
        &mut self.runs[last]
    }

    #[cold]
    fn open_run(&mut self, first: Instant) {
        let at = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(RUN));
        self.runs.push_back(Run {
            at,
            earliest: first,
            latest: first,
            failed: 0,
            gone: 0,
        });
    }

    /// Records a call that was not a 5xx at each instant of `chunks`, in order: what as many
    /// [`Window::record`]s do. When the last of them is the latest (as a thread's own calls
    /// are) and the window is not of length zero, with one eviction at the end: each record
    /// evicts a front run of calls at or before its own edge, every edge is at or before the
    /// last one, and the last call is after it — so the calls gone after the last record are
    /// exactly the front run at or before the last edge, in whatever order the calls came.
    pub fn record_successes(&mut self, chunks: &[&[Instant]]) {
        // One pass: are they in order (the usual case: then each slice's latest is its last)?
        let mut prev: Option<Instant> = None;
        let mut in_order = true;
        for chunk in chunks {
            let (Some(&first), Some(&end)) = (chunk.first(), chunk.last()) else {
                continue;
            };
            in_order &= prev.is_none_or(|p| p <= first);
            in_order &= chunk.windows(2).all(|w| w[0] <= w[1]);
            prev = Some(end);
        }
        let Some(last) = prev else {
            return;
        };
        let latest = if in_order {
            last
        } else {
            let all = chunks.iter().flat_map(|c| c.iter());
            all.copied().max().unwrap_or(last)
        };
        if self.length.is_zero() || latest != last {
            for &t in chunks.iter().flat_map(|c| c.iter()) {
                self.record(t, false);
            }
            return;
        }
        for mut chunk in chunks.iter().copied() {
            while let Some(&first) = chunk.first() {
                let run = self.back_with_room(first);
                let take = chunk.len().min(RUN - run.at.len());
                let (now, rest) = chunk.split_at(take);
                run.at.extend_from_slice(now);
                let (least, most) = if in_order {
                    (now.first(), now.last())
                } else {
                    (now.iter().min(), now.iter().max())
                };
                if let (Some(&least), Some(&most)) = (least, most) {
                    run.earliest = run.earliest.min(least);
                    run.latest = run.latest.max(most);
                }
                self.calls += take as u32;
                chunk = rest;
            }
        }
        self.evict(last);
    }

    /// Calls in the window (as of the last `record`/`evict`).
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// 5xx calls in the window.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Forgets everything (on close).
    pub fn clear(&mut self) {
        while let Some(run) = self.runs.pop_back() {
            if self.spare.len() == SPARES {
                break;
            }
            self.keep(run.at);
        }
        self.runs.clear();
        self.calls = 0;
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

    /// The reference the window is checked against: a plain queue of `(instant, failed)`,
    /// evicting from the front every call at least `length` old (0 old when later than now).
    struct Plain {
        length: Duration,
        calls: VecDeque<(Instant, bool)>,
    }

    impl Plain {
        fn evict(&mut self, now: Instant) {
            while let Some(&(at, _)) = self.calls.front() {
                if now.saturating_duration_since(at) < self.length {
                    break;
                }
                self.calls.pop_front();
            }
        }
        fn record(&mut self, now: Instant, failed: bool) {
            self.evict(now);
            self.calls.push_back((now, failed));
        }
        fn counts(&self) -> (u32, u32) {
            let failures = self.calls.iter().filter(|(_, f)| *f).count();
            (self.calls.len() as u32, failures as u32)
        }
    }

    /// The window against the plain queue, over seeded random gaps (some zero, some backwards:
    /// results of several workers arrive out of order), with lengths including zero and gaps
    /// short enough for the window to hold hundreds of calls (many runs); every few steps a
    /// batch of successes through `record_successes` (in order, or not), which the plain queue
    /// records one by one.
    #[tokio::test(start_paused = true)]
    async fn the_window_counts_as_a_plain_queue_of_instants_does() {
        use rand::{Rng, SeedableRng};
        let t0 = Instant::now() + Duration::from_secs(3600);
        for (length_ms, max_gap_us) in [(1_500, 400_000), (1_500, 4_000), (0, 400_000), (1, 400)] {
            let length = Duration::from_millis(length_ms);
            for seed in 0..20 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let mut w = Window::new(length);
                let mut plain = Plain {
                    length,
                    calls: VecDeque::new(),
                };
                let mut t = t0;
                let step = |rng: &mut rand_chacha::ChaCha8Rng, t: &mut Instant| {
                    let step = Duration::from_micros(rng.gen_range(0..max_gap_us));
                    *t = if rng.gen_bool(0.1) {
                        *t - step / 4
                    } else {
                        *t + step
                    };
                };
                let mut most = 0;
                for i in 0..2_000 {
                    step(&mut rng, &mut t);
                    match rng.gen_range(0..10) {
                        0 => {
                            w.evict(t);
                            plain.evict(t);
                        }
                        1 => {
                            let mut batch = vec![t];
                            for _ in 0..rng.gen_range(0..70) {
                                step(&mut rng, &mut t);
                                batch.push(t);
                            }
                            let (a, b) = batch.split_at(rng.gen_range(0..=batch.len()));
                            w.record_successes(&[a, b]);
                            for &b in &batch {
                                plain.record(b, false);
                            }
                        }
                        _ => {
                            let failed = rng.gen_bool(0.3);
                            w.record(t, failed);
                            plain.record(t, failed);
                        }
                    }
                    let case = format!(
                        "length {length_ms} ms, gaps {max_gap_us} µs, seed {seed}, step {i}"
                    );
                    assert_eq!((w.calls(), w.failures()), plain.counts(), "{case}");
                    most = most.max(w.calls());
                }
                if max_gap_us == 4_000 {
                    assert!(
                        most > 4 * RUN as u32,
                        "seed {seed}: only {most} calls at most"
                    );
                }
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_batch_changes_nothing() {
        let t0 = Instant::now();
        let mut w = Window::new(Duration::from_secs(30));
        w.record(t0, true);
        w.record_successes(&[]);
        w.record_successes(&[&[], &[]]);
        assert_eq!((w.calls(), w.failures()), (1, 1));
    }
}
