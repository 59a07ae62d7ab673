//! The rate panel: requests/s and errors/s (per second of scenario time) as rolling averages
//! over a window of a few seconds, with a round y axis, grid lines and colours no lane uses
//! (errors purple, not the "open" red). A rolling average weighs each scrape interval by its
//! length, and a point is drawn only once half a window of data is behind it, so the first
//! short interval (1 request in 3 ms = 333/s) can neither spike the line nor set the axis.

use std::fmt::Write;

use super::Ctx;
use super::geom::{LABEL_W, nice_axis};
use crate::report::requests::RequestLanes;
use crate::scrape::RatePoint;

/// Height of the panel.
pub(crate) const CHART_H: f64 = 120.0;
const REQUESTS: &str = "#2563eb";
const ERRORS: &str = "#9333ea";

/// The rolling window for a run of `end_ms`: about 1/30 of the run, 1 s at least, rounded
/// (2 s for a 40 s scenario, 10 s for the 5 min weekly one).
pub(crate) fn window_ms(end_ms: u64) -> u64 {
    [1_000, 2_000, 5_000, 10_000, 30_000, 60_000]
        .into_iter()
        .find(|w| end_ms / w <= 30)
        .unwrap_or(60_000)
}

/// Rolling (requests/s, errors/s) at each point from `window` ms of intervals before it.
/// Points with less than half a window behind them are left out.
fn rolling(points: &[RatePoint], window: u64) -> Vec<(u64, f64, f64)> {
    // Each point covers the interval since the previous one.
    let spans: Vec<(u64, u64, f64, f64)> = points
        .iter()
        .scan(0u64, |prev, p| {
            let from = (*prev).min(p.t_ms);
            *prev = p.t_ms;
            Some((from, p.t_ms, p.requests_per_s, p.errors_per_s))
        })
        .collect();
    let mut out = Vec::new();
    for (i, &(_, t, _, _)) in spans.iter().enumerate() {
        if t < window / 2 {
            continue;
        }
        let lo = t.saturating_sub(window);
        let (mut req, mut err, mut covered) = (0.0, 0.0, 0.0);
        for &(a, b, r, e) in spans[..=i].iter().rev() {
            if b <= lo {
                break;
            }
            let len = (b - a.max(lo)) as f64 / 1000.0;
            req += r * len;
            err += e * len;
            covered += len;
        }
        if covered > 0.0 {
            out.push((t, req / covered, err / covered));
        }
    }
    out
}

/// Rate points from what the upstream recorded (`q`), for a run whose engine was not scraped
/// (a gateway's): one point per second up to `end_ms` (per bin when the requests were binned),
/// errors being the requests the upstream faulted.
fn from_upstream(q: &RequestLanes, end_ms: u64) -> Vec<RatePoint> {
    let width = q.bins.as_ref().map_or(1_000, |b| b.width_ms.max(1));
    let n = usize::try_from(end_ms.div_ceil(width)).unwrap_or(0).min(100_000);
    let mut counts = vec![(0u64, 0u64); n];
    let mut add = |t_bin: u64, ok: bool, k: u64| {
        if let Some(c) = usize::try_from(t_bin).ok().and_then(|i| counts.get_mut(i)) {
            c.0 += k;
            if !ok {
                c.1 += k;
            }
        }
    };
    match &q.bins {
        Some(b) => b.counts.iter().for_each(|c| add(c.bin, c.outcome == "ok", c.n)),
        None => q
            .requests
            .iter()
            .for_each(|r| add(r.t_ms / width, r.outcome == "ok", 1)),
    }
    let per_s = width as f64 / 1000.0;
    (1u64..)
        .zip(counts)
        .map(|(i, (req, err))| RatePoint {
            t_ms: i.saturating_mul(width).min(end_ms.max(1)),
            requests_per_s: req as f64 / per_s,
            errors_per_s: err as f64 / per_s,
        })
        .collect()
}

/// Draws the panel at `top`: the engine's scraped rates, else (a gateway's run) what the
/// upstream recorded, saying so.
pub(crate) fn panel(o: &mut String, cx: &Ctx<'_>, top: f64) {
    let sc = &cx.scale;
    let stop = cx.stop_ms.unwrap_or(u64::MAX);
    let window = window_ms(sc.end);
    let upstream = cx.policy.rates.is_empty() && cx.policy.requests.is_some();
    let source: Vec<RatePoint> = match &cx.policy.requests {
        Some(q) if upstream => from_upstream(q, sc.end),
        _ => cx.policy.rates.clone(),
    };
    let pts: Vec<RatePoint> = source.into_iter().filter(|r| r.t_ms <= stop).collect();
    let series = rolling(&pts, window);
    let max = series.iter().map(|p| p.1.max(p.2)).fold(0.0, f64::max);
    let (ymax, step) = nice_axis(max);
    let y = |v: f64| top + CHART_H - (v / ymax).min(1.0) * CHART_H;
    let _ = write!(
        o,
        r##"<g class="rates" data-window-ms="{window}" data-source="{}"><text x="{}" y="{:.1}" text-anchor="end" fill="#111827">per second</text><text x="{}" y="{:.1}" text-anchor="end" fill="#6b7280" font-size="10">rolling {} s{}</text>"##,
        if upstream { "upstream" } else { "scrapes" },
        LABEL_W - 40.0,
        top + CHART_H / 2.0,
        LABEL_W - 40.0,
        top + CHART_H / 2.0 + 13.0,
        window / 1000,
        if upstream { ", at the upstream" } else { "" }
    );
    let mut v = 0.0;
    while v <= ymax + step * 1e-9 {
        let yy = y(v);
        let _ = write!(
            o,
            r##"<line x1="{LABEL_W}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#e5e7eb"/><text class="ytick" x="{:.1}" y="{:.1}" text-anchor="end" fill="#6b7280" font-size="10">{}</text>"##,
            LABEL_W + sc.plot_w(),
            LABEL_W - 4.0,
            yy + 3.5,
            trim(v)
        );
        v += step;
    }
    for (class, color, pick) in [("requests", REQUESTS, 0usize), ("errors", ERRORS, 1usize)] {
        if series.is_empty() {
            break;
        }
        let line: Vec<String> = series
            .iter()
            .map(|p| {
                let val = if pick == 0 { p.1 } else { p.2 };
                format!("{:.1},{:.1}", sc.x(p.0), y(val))
            })
            .collect();
        let _ = write!(
            o,
            r#"<polyline class="{class}" fill="none" stroke="{color}" stroke-width="1.8" points="{}"/>"#,
            line.join(" ")
        );
    }
    let lx = LABEL_W + 8.0;
    let _ = write!(
        o,
        r##"<rect x="{lx:.1}" y="{:.1}" width="14" height="3" fill="{REQUESTS}"/><text x="{:.1}" y="{:.1}" fill="#374151" font-size="11">requests/s</text><rect x="{:.1}" y="{:.1}" width="14" height="3" fill="{ERRORS}"/><text x="{:.1}" y="{:.1}" fill="#374151" font-size="11">errors/s</text></g>"##,
        top + 6.0,
        lx + 18.0,
        top + 10.0,
        lx + 100.0,
        top + 6.0,
        lx + 118.0,
        top + 10.0,
    );
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(t_ms: u64, r: f64, e: f64) -> RatePoint {
        RatePoint {
            t_ms,
            requests_per_s: r,
            errors_per_s: e,
        }
    }

    #[test]
    fn a_gateways_rates_come_from_what_the_upstream_recorded() {
        use crate::report::requests::{BinCount, RequestBins, RequestMark};
        let mark = |t_ms: u64, outcome: &str| RequestMark {
            t_ms,
            lane: 0,
            outcome: outcome.into(),
            fault: None,
            probe: false,
            canary: false,
        };
        let q = RequestLanes {
            requests: vec![mark(100, "status"), mark(900, "status"), mark(2_500, "ok")],
            total: 3,
            ..RequestLanes::default()
        };
        let pts = from_upstream(&q, 3_000);
        let got: Vec<(u64, f64, f64)> = pts
            .iter()
            .map(|p| (p.t_ms, p.requests_per_s, p.errors_per_s))
            .collect();
        assert_eq!(got, [(1_000, 2.0, 2.0), (2_000, 0.0, 0.0), (3_000, 1.0, 0.0)]);
        // Binned: per bin of its width.
        let binned = RequestLanes {
            bins: Some(RequestBins {
                width_ms: 2_000,
                counts: vec![BinCount {
                    lane: 0,
                    bin: 1,
                    outcome: "reset".into(),
                    fault: Some(0),
                    n: 8,
                }],
            }),
            total: 8,
            ..RequestLanes::default()
        };
        let pts = from_upstream(&binned, 4_000);
        assert_eq!(pts.len(), 2);
        assert_eq!((pts[1].requests_per_s, pts[1].errors_per_s), (4.0, 4.0));
    }

    #[test]
    fn a_short_first_interval_neither_spikes_nor_sets_the_axis() {
        // 1 request in the first 3 ms (333/s), then a steady 10/s in 250 ms intervals.
        let mut pts = vec![pt(3, 333.0, 0.0)];
        pts.extend((1..=40).map(|i| pt(i * 250, 10.0, if i > 20 { 2.0 } else { 0.0 })));
        let s = rolling(&pts, 2_000);
        assert!(
            s.iter().all(|p| p.0 >= 1_000),
            "nothing before half a window"
        );
        let max = s.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(max < 11.0, "the 3 ms spike is averaged away: {max}");
        let last = s.last().unwrap();
        assert!(
            (last.1 - 10.0).abs() < 1e-9 && (last.2 - 2.0).abs() < 1e-9,
            "{last:?}"
        );
        assert_eq!(window_ms(20_000), 1_000);
        assert_eq!(window_ms(40_000), 2_000);
        assert_eq!(window_ms(300_000), 10_000);
    }
}
