//! Rate points of a timeline, bounded: at most [`MAX_RATE_POINTS`], merged pairwise when full
//! (a merged point is the exact time-weighted mean of its intervals, so totals are kept).

use serde::{Deserialize, Serialize};

/// Most rate points a timeline keeps (a 300 s run scraped every 250 ms has 1 200); a longer run
/// gets points that each cover 2, 4, … scrape intervals.
pub const MAX_RATE_POINTS: usize = 2048;

/// Request and error rates over the scrape interval ending at `t_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatePoint {
    /// End of the interval, ms since the run start.
    pub t_ms: u64,
    /// `requests_total` increase per second (written rounded to 3 decimals).
    #[serde(serialize_with = "crate::util::round::ser3")]
    pub requests_per_s: f64,
    /// Increase per second of `requests_total` with an outcome other than `ok`.
    #[serde(serialize_with = "crate::util::round::ser3")]
    pub errors_per_s: f64,
}

/// Rate points, at most [`MAX_RATE_POINTS`]: when full, neighbours merge pairwise (a merged
/// point is the time-weighted mean of its two intervals, at the later end) and every later point
/// covers twice as many scrape intervals as before.
#[derive(Debug, Clone, Default)]
pub(super) struct Rates {
    /// Points with the length of their interval in ms.
    points: Vec<(RatePoint, u64)>,
    /// The scrape intervals not yet folded into a point, and how many they are.
    pending: Option<(RatePoint, u64, usize)>,
    /// Scrape intervals per point (a power of two; 0 counts as 1).
    stride: usize,
}

fn merge(a: (RatePoint, u64), b: (RatePoint, u64)) -> (RatePoint, u64) {
    let dt = a.1.saturating_add(b.1);
    let mean = |x: f64, y: f64| (x * a.1 as f64 + y * b.1 as f64) / dt as f64;
    let point = RatePoint {
        t_ms: b.0.t_ms,
        requests_per_s: mean(a.0.requests_per_s, b.0.requests_per_s),
        errors_per_s: mean(a.0.errors_per_s, b.0.errors_per_s),
    };
    (point, dt)
}

impl Rates {
    /// Adds the rates of the next scrape interval, `dt_ms` long.
    pub(super) fn push(&mut self, p: RatePoint, dt_ms: u64) {
        let (acc, n) = match self.pending.take() {
            Some((q, dq, n)) => (merge((q, dq), (p, dt_ms)), n + 1),
            None => ((p, dt_ms), 1),
        };
        if n < self.stride.max(1) {
            self.pending = Some((acc.0, acc.1, n));
            return;
        }
        self.points.push(acc);
        if self.points.len() >= MAX_RATE_POINTS {
            self.points = self
                .points
                .chunks(2)
                .map(|c| c.iter().copied().reduce(merge).unwrap_or(c[0]))
                .collect();
            self.stride = self.stride.max(1) * 2;
        }
    }

    /// The points so far (the unfinished one last).
    pub(super) fn points(&self) -> Vec<RatePoint> {
        self.with_intervals().map(|p| p.0).collect()
    }

    /// The points so far with the length of their interval in ms.
    pub(super) fn with_intervals(&self) -> impl Iterator<Item = (RatePoint, u64)> + '_ {
        let tail = self.pending.map(|(p, dt, _)| (p, dt));
        self.points.iter().copied().chain(tail)
    }
}
