//! Geometry shared by the timeline's parts: the time scale (scenario ms → x), axis ticks, a
//! text-width estimate, and the row packer that keeps labels from overprinting.

/// Width of the whole SVG.
pub(crate) const W: f64 = 1300.0;
/// Width of the lane labels on the left.
pub(crate) const LABEL_W: f64 = 230.0;
/// Right margin.
pub(crate) const RIGHT: f64 = 24.0;
/// Height of one state lane.
pub(crate) const LANE_H: f64 = 22.0;
/// Height of one annotation row (fault labels, failed expectations).
pub(crate) const ROW_H: f64 = 15.0;
/// Narrowest a drawn span may be, px (a 20 ms half-open spell in a 5 min run stays visible).
pub(crate) const MIN_SPAN: f64 = 3.0;

/// Maps scenario ms to x over `[0, end]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scale {
    /// The last ms the axis shows.
    pub end: u64,
}

impl Scale {
    /// Width of the plot area.
    pub(crate) fn plot_w(&self) -> f64 {
        W - LABEL_W - RIGHT
    }

    /// x of `t_ms` (clamped to the axis).
    pub(crate) fn x(&self, t_ms: u64) -> f64 {
        let end = self.end.max(1) as f64;
        LABEL_W + (t_ms.min(self.end) as f64 / end) * self.plot_w()
    }

    /// The x range of `[from, until]`, at least [`MIN_SPAN`] wide.
    pub(crate) fn span(&self, from: u64, until: u64) -> (f64, f64) {
        let (x0, x1) = (self.x(from), self.x(until.max(from)));
        (x0, (x1 - x0).max(MIN_SPAN))
    }

    /// Tick positions and labels: about ten, at a round step.
    pub(crate) fn ticks(&self) -> Vec<(u64, String)> {
        const STEPS: [u64; 15] = [
            100, 250, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
            600_000, 1_800_000, 3_600_000,
        ];
        let step = STEPS
            .iter()
            .copied()
            .find(|s| self.end / s <= 12)
            .unwrap_or(7_200_000);
        (0..=self.end / step)
            .map(|i| {
                let t = i * step;
                (t, tick_label(t, step))
            })
            .collect()
    }
}

/// `30s`, `1.25s`: seconds, like every time the report's text says.
fn tick_label(t: u64, step: u64) -> String {
    if step.is_multiple_of(1000) {
        format!("{}s", t / 1000)
    } else {
        format!("{:.2}s", t as f64 / 1000.0)
    }
}

/// Seconds with one decimal (`7.5 s`).
pub(crate) fn s1(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// Estimated width of `text` at font size `size` (system-ui averages ~0.58 em a character).
pub(crate) fn text_w(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.58
}

/// Packs horizontal extents into rows so none overlap: each goes into the first row where it
/// fits (with `gap` px between neighbours). Returns each extent's row, in input order.
pub(crate) fn pack_rows(extents: &[(f64, f64)], gap: f64) -> Vec<usize> {
    let mut ends: Vec<f64> = Vec::new();
    let mut order: Vec<usize> = (0..extents.len()).collect();
    order.sort_by(|a, b| extents[*a].0.total_cmp(&extents[*b].0));
    let mut rows = vec![0; extents.len()];
    for i in order {
        let (x0, x1) = extents[i];
        let row = match ends.iter().position(|&e| e + gap <= x0) {
            Some(r) => r,
            None => {
                ends.push(f64::NEG_INFINITY);
                ends.len() - 1
            }
        };
        ends[row] = x1;
        rows[i] = row;
    }
    rows
}

/// A "nice" upper bound for a y axis over values up to `max` and its tick step (1, 2, 5 × 10ⁿ).
pub(crate) fn nice_axis(max: f64) -> (f64, f64) {
    if !(max.is_finite() && max > 0.0) {
        return (1.0, 0.5);
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_labels_never_overlap() {
        let ext = [
            (0.0, 100.0),
            (50.0, 120.0),
            (101.0, 150.0),
            (60.0, 70.0),
            (130.0, 200.0),
        ];
        let rows = pack_rows(&ext, 4.0);
        for i in 0..ext.len() {
            for j in 0..i {
                if rows[i] == rows[j] {
                    let (a, b) = (ext[i], ext[j]);
                    assert!(
                        a.1 + 4.0 <= b.0 || b.1 + 4.0 <= a.0,
                        "{i} and {j} overlap in a row"
                    );
                }
            }
        }
        assert_eq!(rows[0], 0);
        assert_eq!(rows[1], 1);
        assert_eq!(rows[3], 2);
        assert_eq!(
            rows[2], 2,
            "101 is within the gap of row 0's end: the first free row"
        );
        assert_eq!(rows[4], 0);
    }

    #[test]
    fn axes_are_round_and_cover_the_data() {
        assert_eq!(nice_axis(12.0), (15.0, 5.0));
        let (top, step) = nice_axis(0.9);
        assert!(
            (top - 1.0).abs() < 1e-9 && (step - 0.25).abs() < 1e-9,
            "{top} {step}"
        );
        assert_eq!(nice_axis(0.0), (1.0, 0.5));
        let s = Scale { end: 300_000 };
        let ticks = s.ticks();
        assert_eq!(ticks.first().unwrap().1, "0s");
        assert_eq!(ticks.last().unwrap(), &(300_000, "300s".to_string()));
        assert!(ticks.len() <= 13);
        assert_eq!(Scale { end: 40_000 }.ticks()[1].1, "5s");
        assert!(s.span(1_000, 1_001).1 >= MIN_SPAN);
    }
}
