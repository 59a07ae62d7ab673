//! The inline SVG timeline of one policy run: one lane per dep with its breaker state over
//! time (closed green, half-open amber, open red), fault windows shaded across every lane, and
//! a small chart of request and error rates per scrape interval underneath. A stopped run's
//! timeline ends at the stop, marked by a dashed line: nothing after it is drawn.

use std::fmt::Write;

use super::model::PolicyReport;
use crate::engine::events::BreakerState;
use crate::verdict::secs;

const W: f64 = 1100.0;
const LABEL_W: f64 = 190.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 26.0;
const LANE_H: f64 = 24.0;
const LANE_GAP: f64 = 6.0;
const CHART_H: f64 = 110.0;

/// Escapes text for XML/HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn color(s: BreakerState) -> &'static str {
    match s {
        BreakerState::Closed => "#2e9e44",
        BreakerState::HalfOpen => "#f0a800",
        BreakerState::Open => "#d9342b",
    }
}

fn tick_step(end_ms: u64) -> u64 {
    const STEPS: [u64; 14] = [
        100, 250, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
        600_000, 1_800_000,
    ];
    STEPS
        .iter()
        .copied()
        .find(|s| end_ms / s <= 10)
        .unwrap_or(3_600_000)
}

fn tick_label(t: u64, step: u64) -> String {
    if step.is_multiple_of(1000) {
        format!("{}s", t / 1000)
    } else {
        format!("{:.2}s", t as f64 / 1000.0)
    }
}

/// The time the timeline should span: the stop of a stopped run (nothing after it is drawn),
/// else the run length or the last thing it shows.
pub fn end_of(p: &PolicyReport) -> u64 {
    if let Some(stop) = p.stopped_at_ms {
        return stop.max(1);
    }
    let states = p
        .breaker_states
        .values()
        .flat_map(|v| v.iter().map(|s| s.t_ms));
    let rates = p.rates.iter().map(|r| r.t_ms);
    let faults = p
        .fault_windows
        .iter()
        .map(|f| f.until_ms.unwrap_or(f.from_ms));
    states
        .chain(rates)
        .chain(faults)
        .chain([p.elapsed_ms, 1])
        .max()
        .unwrap_or(1)
}

/// Renders the timeline SVG for one policy run.
pub fn timeline(p: &PolicyReport) -> String {
    let end = end_of(p);
    let plot_w = W - LABEL_W - RIGHT;
    let x = |t: u64| LABEL_W + (t.min(end) as f64 / end as f64) * plot_w;
    let deps: Vec<&String> = p.breaker_states.keys().collect();
    let lanes_h = (deps.len().max(1) as f64) * (LANE_H + LANE_GAP);
    let axis_y = TOP + lanes_h + 4.0;
    let chart_top = axis_y + 34.0;
    let legend_y = chart_top + CHART_H + 30.0;
    let h = legend_y + 16.0;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" font-family="system-ui, sans-serif" font-size="12"><title>Breaker timeline, policy {}</title>"#,
        esc(&p.policy)
    );
    if deps.is_empty() {
        let _ = write!(
            o,
            r##"<text x="{LABEL_W}" y="{}" fill="#6b7280">no breaker activity scraped</text>"##,
            TOP + 16.0
        );
    }
    for (i, dep) in deps.iter().enumerate() {
        let y = TOP + i as f64 * (LANE_H + LANE_GAP);
        let _ = write!(
            o,
            r##"<text x="{}" y="{:.1}" text-anchor="end" fill="#111827">{}</text><rect x="{LABEL_W}" y="{y:.1}" width="{plot_w:.1}" height="{LANE_H}" fill="#f3f4f6"/>"##,
            LABEL_W - 8.0,
            y + LANE_H / 2.0 + 4.0,
            esc(dep)
        );
        let pts = &p.breaker_states[*dep];
        for (j, s) in pts.iter().enumerate() {
            if p.stopped_at_ms.is_some() && s.t_ms >= end {
                break; // at or after the stop: not drawn
            }
            let until = pts.get(j + 1).map_or(end, |n| n.t_ms.min(end));
            let (x0, x1) = (x(s.t_ms), x(until));
            let _ = write!(
                o,
                r#"<rect class="state state-{st}" x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{LANE_H}" fill="{}"><title>{} {st} {}–{}</title></rect>"#,
                (x1 - x0).max(0.8),
                color(s.state),
                esc(dep),
                secs(s.t_ms as i64),
                secs(until as i64),
                st = s.state.as_str(),
            );
        }
    }
    // Fault windows, shaded over the lanes and the chart (drawn last so they stay visible).
    for f in p.fault_windows.iter().filter(|f| f.from_ms < end) {
        let (x0, x1) = (x(f.from_ms), x(f.until_ms.unwrap_or(end)));
        let _ = write!(
            o,
            r##"<g class="fault"><rect x="{x0:.1}" y="{}" width="{:.1}" height="{:.1}" fill="#6b7280" fill-opacity="0.18" stroke="#6b7280" stroke-dasharray="3 3"><title>fault {} {} {}–{}</title></rect><text x="{:.1}" y="{}" fill="#374151" font-size="11">{} {}</text></g>"##,
            TOP - 4.0,
            (x1 - x0).max(1.0),
            chart_top + CHART_H - TOP + 4.0,
            esc(&f.route),
            esc(&f.kind),
            secs(f.from_ms as i64),
            f.until_ms
                .filter(|u| *u <= end || p.stopped_at_ms.is_none())
                .map_or("end".into(), |u| secs(u as i64)),
            x0 + 3.0,
            TOP - 10.0,
            esc(&f.route),
            esc(&f.kind),
        );
    }
    // Time axis.
    let step = tick_step(end);
    let _ = write!(
        o,
        r##"<line x1="{LABEL_W}" y1="{axis_y:.1}" x2="{:.1}" y2="{axis_y:.1}" stroke="#9ca3af"/>"##,
        LABEL_W + plot_w
    );
    let mut t = 0;
    while t <= end {
        let xt = x(t);
        let _ = write!(
            o,
            r##"<line x1="{xt:.1}" y1="{axis_y:.1}" x2="{xt:.1}" y2="{:.1}" stroke="#9ca3af"/><text x="{xt:.1}" y="{:.1}" text-anchor="middle" fill="#4b5563" font-size="11">{}</text>"##,
            axis_y + 5.0,
            axis_y + 18.0,
            tick_label(t, step)
        );
        t += step;
    }
    if let Some(stop) = p.stopped_at_ms {
        let xs = x(end);
        let _ = write!(
            o,
            r##"<g class="stop"><line x1="{xs:.1}" y1="{}" x2="{xs:.1}" y2="{:.1}" stroke="#111827" stroke-width="2" stroke-dasharray="6 3"/><text x="{:.1}" y="{}" text-anchor="end" fill="#111827" font-weight="600">stopped at {}</text></g>"##,
            TOP - 16.0,
            chart_top + CHART_H,
            xs - 4.0,
            TOP - 18.0,
            secs(stop as i64)
        );
    }
    rate_chart(&mut o, p, &x, chart_top, plot_w, end);
    legend(&mut o, legend_y);
    o.push_str("</svg>");
    o
}

fn rate_chart(
    o: &mut String,
    p: &PolicyReport,
    x: &dyn Fn(u64) -> f64,
    top: f64,
    plot_w: f64,
    end: u64,
) {
    let max = p
        .rates
        .iter()
        .map(|r| r.requests_per_s.max(r.errors_per_s))
        .fold(1.0_f64, f64::max)
        .ceil();
    let y = |v: f64| top + CHART_H - (v / max) * CHART_H;
    let _ = write!(
        o,
        r##"<g class="rates"><rect x="{LABEL_W}" y="{top:.1}" width="{plot_w:.1}" height="{CHART_H}" fill="none" stroke="#e5e7eb"/><text x="{}" y="{:.1}" text-anchor="end" fill="#111827">requests/s</text><text x="{}" y="{:.1}" text-anchor="end" fill="#6b7280" font-size="11">{max}</text><text x="{}" y="{:.1}" text-anchor="end" fill="#6b7280" font-size="11">0</text>"##,
        LABEL_W - 8.0,
        top + CHART_H / 2.0,
        LABEL_W - 8.0,
        top + 10.0,
        LABEL_W - 8.0,
        top + CHART_H,
    );
    for (class, color, get) in [
        (
            "requests",
            "#2563eb",
            (|r: &crate::scrape::RatePoint| r.requests_per_s)
                as fn(&crate::scrape::RatePoint) -> f64,
        ),
        ("errors", "#dc2626", |r| r.errors_per_s),
    ] {
        if p.rates.is_empty() {
            break;
        }
        let pts: Vec<String> = p
            .rates
            .iter()
            .filter(|r| r.t_ms <= end)
            .map(|r| format!("{:.1},{:.1}", x(r.t_ms), y(get(r))))
            .collect();
        let _ = write!(
            o,
            r#"<polyline class="{class}" fill="none" stroke="{color}" stroke-width="1.6" points="{}"/>"#,
            pts.join(" ")
        );
    }
    o.push_str("</g>");
}

fn legend(o: &mut String, y: f64) {
    let items = [
        ("#2e9e44", "closed"),
        ("#f0a800", "half_open"),
        ("#d9342b", "open"),
        ("#6b728055", "fault window"),
        ("#2563eb", "requests/s"),
        ("#dc2626", "errors/s"),
    ];
    let mut lx = LABEL_W;
    for (c, label) in items {
        let _ = write!(
            o,
            r##"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{c}"/><text x="{:.1}" y="{y:.1}" fill="#374151">{label}</text>"##,
            y - 10.0,
            lx + 16.0
        );
        lx += 26.0 + 7.5 * label.len() as f64;
    }
}
